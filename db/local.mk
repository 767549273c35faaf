# db/ rules (included by the top-level Makefile.am).
# db/schema.sql is schema version 1; each later change is a numbered
# migration db/migrations/NNN-name.sql, listed here in ascending order.
# Both are compiled into ctune-server (server/data/db_sql.c, generated).
CT_SQL_MIGRATIONS = db/migrations/002-text.sql
CT_SQL_MIGRATIONS += db/migrations/003-lora.sql db/migrations/004-server-scale.sql \
	db/migrations/005-hardening.sql db/migrations/007-instances.sql \
	db/migrations/008-trust.sql
CT_SQL_MIGRATIONS += db/migrations/021-job-tokenizer.sql db/migrations/022-status-counts.sql
CT_SQL_MIGRATIONS += db/migrations/023-sched-flat.sql
CT_SQL_MIGRATIONS += db/migrations/024-round-placement.sql
CT_SQL_MIGRATIONS += db/migrations/030-outer.sql
CT_SQL_MIGRATIONS += db/migrations/031-receipts.sql
CT_SQL_MIGRATIONS += db/migrations/032-sample-chat.sql
CT_SQL_MIGRATIONS += db/migrations/033-web-prefs.sql db/migrations/034-web-accounts.sql
CT_SQL_MIGRATIONS += db/migrations/035-base-format.sql
CT_SQL_MIGRATIONS += db/migrations/036-task-counts.sql
CT_SQL_MIGRATIONS += db/migrations/037-hash-chain.sql
CT_SQL_MIGRATIONS += db/migrations/038-result-triggers.sql
CT_SQL_MIGRATIONS += db/migrations/039-device-sig.sql
CT_SQL_MIGRATIONS += db/migrations/041-site-counts.sql
CT_SQL_MIGRATIONS += db/migrations/043-ref-mem.sql
CT_SQL_MIGRATIONS += db/migrations/044-result-trigger-values.sql
CT_SQL_MIGRATIONS += db/migrations/045-chain-settled.sql
CT_SQL_MIGRATIONS += db/migrations/046-lora-init.sql
CT_SQL_MIGRATIONS += db/migrations/047-result-counted.sql
CT_SQL_MIGRATIONS += db/migrations/048-result-indexes.sql
CT_SQL_MIGRATIONS += db/migrations/049-result-insert-counted.sql
CT_SQL_FILES = db/schema.sql $(CT_SQL_MIGRATIONS)
EXTRA_DIST += db/sql2c.sh $(CT_SQL_FILES)
dist_pkgdata_DATA += db/schema.sql

server/data/db_sql.c: $(srcdir)/db/sql2c.sh $(CT_SQL_FILES)
	@$(MKDIR_P) server/data
	$(AM_V_GEN)abs_out=`pwd`/$@; cd $(srcdir) && sh db/sql2c.sh "$$abs_out" $(CT_SQL_FILES)
BUILT_SOURCES += server/data/db_sql.c
CLEANFILES += server/data/db_sql.c
