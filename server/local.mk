# server/ rules (included by the top-level Makefile.am).
# server/libctserver.a holds every server module but main.c, each compiled
# once; ctune-server is main.c + that library, and the tests link the same
# library. The folders are the layers, bottom first (doc/internals-server.md):
# data <- validate <- daemons <- rpc <- web <- cmd <- main.c. Includes name
# the folder ("data/db.h") except within one folder.
CT_SERVER_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS) \
	-I$(top_srcdir)/server
CT_SERVER_LIBS = server/libctserver.a $(CT_CORE_LIBS) $(MARIADBD_LIBS) $(MHD_LIBS) \
	$(CT_DEP_LIBS)

noinst_LIBRARIES += server/libctserver.a
server_libctserver_a_CFLAGS = $(CT_SERVER_CFLAGS)
server_libctserver_a_SOURCES =

# server/data/: the bottom layer: the database (db.c), the data layer (dl*.c),
# the state owners (*_state.c), the content store, the project directory
# (server.c) and the LoRA job spec every layer reads
server_libctserver_a_SOURCES += server/data/db.c server/data/db.h \
	server/data/db_profile.c server/data/db_profile.h \
	server/data/db_args.h server/data/db_url.c server/data/db_url.h \
	server/data/dl.c server/data/dl.h server/data/dl_account.c \
	server/data/dl_account.h server/data/dl_chain.c \
	server/data/dl_chain.h server/data/dl_check.c server/data/dl_check.h \
	server/data/dl_credit.c server/data/dl_credit.h server/data/dl_files.c \
	server/data/dl_files.h server/data/dl_heartbeat.c server/data/dl_heartbeat.h \
	server/data/dl_host.c server/data/dl_host.h \
	server/data/dl_job.c server/data/dl_job.h server/data/dl_purge.c \
	server/data/dl_purge.h server/data/dl_receipt.c server/data/dl_receipt.h \
	server/data/dl_robust.c server/data/dl_robust.h \
	server/data/dl_status.c server/data/dl_status.h \
	server/data/dl_result.c server/data/dl_result.h server/data/dl_round.c \
	server/data/dl_round.h server/data/dl_sched.c server/data/dl_sched.h \
	server/data/dl_text.c server/data/dl_text.h server/data/dl_trust.c \
	server/data/dl_trust.h server/data/dl_worklimit.c server/data/dl_worklimit.h \
	server/data/dl_workunit.c server/data/dl_workunit.h server/data/job_state.c \
	server/data/job_state.h server/data/lock_order.c server/data/lock_order.h \
	server/data/lora_job.c server/data/lora_job.h server/data/migrate_lock.c \
	server/data/migrate_lock.h server/data/project_key.c \
	server/data/project_key.h server/data/result_state.c \
	server/data/result_state.h server/data/server.c server/data/server.h \
	server/data/state_edge.h server/data/store.c server/data/store.h \
	server/data/wu_state.c server/data/wu_state.h

# server/validate/: the rules results and hosts are held to, with no loop of
# their own: the validator's checks, quorum and adaptive replication
# (quorum.c), the cross-shard and robust checks, LoRA round merges, host
# trust, credit, work limits and deadlines, the stall rule
server_libctserver_a_SOURCES += server/validate/credit.c \
	server/validate/bisect.c server/validate/bisect.h \
	server/validate/dispute.c server/validate/dispute.h \
	server/validate/credit.h server/validate/lora_robust.c \
	server/validate/lora_robust.h server/validate/lora_round.c \
	server/validate/lora_round.h server/validate/quorum.c \
	server/validate/quorum.h server/validate/robust.c server/validate/robust.h \
	server/validate/robust_aside.c server/validate/robust_aside.h \
	server/validate/stall.c server/validate/stall.h server/validate/trust.c \
	server/validate/trust.h server/validate/trust_rule.c \
	server/validate/vcheck.c server/validate/vcheck.h \
	server/validate/worklimit.c server/validate/worklimit.h

# server/daemons/: the daemons (daemon_pass.c's one pass) and what only they
# use: the transitioner, validator, assimilator (eval, the streamed mean,
# samples), work generator, file deleter, purge
server_libctserver_a_SOURCES += server/daemons/assimilator.c \
	server/daemons/daemon_pass.c server/daemons/daemon_pass.h \
	server/daemons/daemons.h server/daemons/eval.c server/daemons/eval.h \
	server/daemons/eval_handover.c server/daemons/file_deleter.c \
	server/daemons/instance.c server/daemons/instance.h \
	server/daemons/mean_stream.c server/daemons/mean_stream.h \
	server/daemons/purge.c server/daemons/receipt.c server/daemons/receipt.h \
	server/daemons/sample.c server/daemons/sample.h \
	server/daemons/submit_check.c server/daemons/submit_check.h \
	server/daemons/transitioner.c server/daemons/validator.c \
	server/daemons/wg.c server/daemons/wg.h

# server/rpc/: the HTTP front: the server, connection guards and rate limits,
# the scheduler RPC (sched*.c, eligibility), accounts, tokens, file upload and
# download
server_libctserver_a_SOURCES += server/rpc/account.c server/rpc/account.h \
	server/rpc/conn_guard.c server/rpc/conn_guard.h server/rpc/eligibility.c \
	server/rpc/eligibility.h server/rpc/feeder.c server/rpc/feeder.h \
	server/rpc/files.c server/rpc/files.h server/rpc/http.c server/rpc/http.h \
	server/rpc/proxy.c server/rpc/proxy.h server/rpc/ratelimit.c \
	server/rpc/ratelimit.h server/rpc/sched.c server/rpc/sched_report.c \
	server/rpc/sched_report.h server/rpc/sched_req.c \
	server/rpc/sched_req.h server/rpc/sched_rpc.h server/rpc/tls_cert.c \
	server/rpc/tls_cert.h server/rpc/token.c server/rpc/token.h

# server/cmd/: the operator's commands (job, run, admin, init), the role table
# that starts the daemons (roles.c), and what only they use: job import from
# Hugging Face, tokenizers, exports, chat submits
server_libctserver_a_SOURCES += server/cmd/admin.c server/cmd/admin.h \
	server/cmd/chat_submit.c server/cmd/chat_submit.h server/cmd/cmd_job.c \
	server/cmd/cmd_project.c server/cmd/cmd_run.c server/cmd/cmd_run.h \
	server/cmd/commands.h server/cmd/job_hf.c server/cmd/job_hf.h \
	server/cmd/job_peft.c server/cmd/job_peft.h server/cmd/job_tokenizer.c \
	server/cmd/job_tokenizer.h server/cmd/project_init.c \
	server/cmd/project_init.h server/cmd/roles.c server/cmd/roles.h \
	server/cmd/server_open.c server/cmd/server_open.h \
	server/cmd/text_args.h server/cmd/text_submit.c server/cmd/text_submit.h
nodist_server_libctserver_a_SOURCES = server/data/db_sql.c

bin_PROGRAMS += ctune-server
ctune_server_SOURCES = server/main.c
ctune_server_CFLAGS = $(CT_SERVER_CFLAGS)
ctune_server_LDADD = $(CT_SERVER_LIBS)
include server/web/local.mk

# Manual page.
dist_man_MANS += server/ctune-server.8
