# server/ rules (included by the top-level Makefile.am).
# server/libctserver.a holds every server module but main.c (the scheduler,
# the daemons, the commands and, from server/web/local.mk, the web front
# end), each compiled once; ctune-server is main.c + that library, and the
# tests link the same library.
CT_SERVER_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS) \
	-I$(top_srcdir)/server -I$(top_srcdir)/server/web
CT_SERVER_LIBS = server/libctserver.a $(CT_CORE_LIBS) $(MARIADBD_LIBS) $(MHD_LIBS) \
	$(CT_DEP_LIBS)

noinst_LIBRARIES += server/libctserver.a
server_libctserver_a_CFLAGS = $(CT_SERVER_CFLAGS)
server_libctserver_a_SOURCES = \
	server/db.c server/db.h server/db_args.h server/migrate_lock.c server/migrate_lock.h \
	server/dl.c server/dl.h server/dl_job.c server/dl_job.h \
	server/dl_result.c server/dl_result.h server/dl_round.c server/dl_round.h \
	server/job_state.c server/job_state.h \
	server/result_state.c server/result_state.h \
	server/wu_state.c server/wu_state.h server/state_edge.h \
	server/db_url.c server/db_url.h \
	server/server.c server/server.h \
	server/http.c server/http.h \
	server/tls_cert.c server/tls_cert.h \
	server/token.c server/token.h \
	server/files.c server/files.h \
	server/account.c server/account.h \
	server/sched.c server/sched_rpc.h \
	server/sched_req.c server/sched_req.h \
	server/eligibility.c server/eligibility.h \
	server/feeder.c server/feeder.h \
	server/worklimit.c server/worklimit.h \
	server/ratelimit.c server/ratelimit.h \
	server/proxy.c server/proxy.h server/conn_guard.c server/conn_guard.h \
	server/stall.c server/stall.h \
	server/robust.c server/robust.h server/trust.c server/trust_rule.c server/trust.h \
	server/store.c server/store.h \
	server/wg.c server/wg.h \
	server/roles.c server/roles.h \
	server/instance.c server/instance.h \
	server/lock_order.c server/lock_order.h \
	server/admin.c server/admin.h \
	server/cmd_job.c server/commands.h server/job_hf.c server/job_hf.h \
	server/job_peft.c server/job_peft.h \
	server/job_tokenizer.c server/job_tokenizer.h \
	server/eval.c server/eval.h server/eval_handover.c \
	server/cmd_run.c server/cmd_run.h \
	server/project_init.c server/project_init.h
server_libctserver_a_SOURCES += server/sample.c server/sample.h \
	server/chat_submit.c server/chat_submit.h
# job submit's checks of inputs that cannot give a good model
server_libctserver_a_SOURCES += server/submit_check.c server/submit_check.h
# LoRA jobs: spec, scheduler elements, upload cap (lora_job.h)
server_libctserver_a_SOURCES += server/lora_job.c server/lora_job.h
# The assimilator's streamed mean of a round (threads over the results).
server_libctserver_a_SOURCES += server/mean_stream.c server/mean_stream.h
nodist_server_libctserver_a_SOURCES = server/db_sql.c

# The daemons (roles.c's role table, sched.c's adaptive replication)
server_libctserver_a_SOURCES += server/transitioner.c server/validator.c \
	server/assimilator.c server/file_deleter.c server/credit.c server/credit.h \
	server/quorum.c server/daemons.h \
	server/vcheck.c server/vcheck.h server/purge.c
server_libctserver_a_SOURCES += server/lora_round.c server/lora_round.h
server_libctserver_a_SOURCES += server/lora_robust.c server/lora_robust.h
server_libctserver_a_SOURCES += server/robust_aside.c server/robust_aside.h

bin_PROGRAMS += ctune-server
ctune_server_SOURCES = server/main.c
ctune_server_CFLAGS = $(CT_SERVER_CFLAGS)
ctune_server_LDADD = $(CT_SERVER_LIBS)
include server/web/local.mk

# Manual page.
dist_man_MANS += server/ctune-server.8
