# client/ rules (included by the top-level Makefile.am): `ctune`, the
# volunteer client. Its modules go into client/libctclient.a so the unit tests
# (test/client.mk) link the same code, the cmd_*.c files (the subcommands)
# included; ctune is main.c, its command table, + that library.
noinst_LIBRARIES += client/libctclient.a
client_libctclient_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(CURL_CFLAGS) $(CT_X11_CFLAGS) $(LIBSYSTEMD_CFLAGS)
client_libctclient_a_SOURCES = \
	client/commands.h \
	client/cl_paths.c client/cl_paths.h \
	client/cl_jail.c client/cl_jail.h \
	client/cl_disk.c client/cl_disk.h \
	client/cl_backoff.c client/cl_backoff.h \
	client/cl_prefs.c client/cl_prefs.h \
	client/cl_load.c client/cl_load.h \
	client/cl_buffer.c client/cl_buffer.h \
	client/cl_cache.c client/cl_cache.h \
	client/cl_idle.c client/cl_idle.h client/cl_idle_logind.c \
	client/cl_state.c client/cl_state.h \
	client/cl_ctl.c client/cl_ctl.h \
	client/cl_http.c client/cl_http.h \
	client/cl_pin.c client/cl_pin.h \
	client/cl_rpc.c client/cl_rpc.h \
	client/cl_host.c client/cl_host.h \
	client/cl_task.c client/cl_task.h \
	client/cl_daemon.c client/cl_daemon.h client/cl_daemon_int.h \
	client/cl_net.c client/cl_compute.c \
	client/cl_status.c client/cl_status.h \
	client/cl_web.c client/cl_web.h client/cl_web_http.c client/cl_web_http.h \
	client/cl_web_json.c client/cl_web_page.c \
	client/cl_xsaver.c client/cl_xsaver.h
client_libctclient_a_SOURCES += client/cl_lora.c client/cl_lora.h
# The OS's idle source: Linux event devices and X11, or the Windows session.
if CT_WINDOWS
client_libctclient_a_SOURCES += client/cl_idle_win.c
EXTRA_DIST += client/cl_idle_evdev.c
# `ctune service`: a Windows service under the SCM
client_libctclient_a_SOURCES += client/service_win.c
EXTRA_DIST += client/service_posix.c
# ctunew.exe: starts ctune.exe with its arguments without a console window
# (the autostart's Run key and Startup shortcut)
noinst_PROGRAMS += ctunew
ctunew_SOURCES = client/win/launch_win.c
ctunew_LDFLAGS = -mwindows -municode
# ctune.scr, the Windows screensaver (a GUI program renamed .scr), and the
# installer's script (tools/build-windows runs makensis).
noinst_PROGRAMS += ctune-saver
ctune_saver_SOURCES = client/win/saver_win.c
ctune_saver_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/client $(CURL_CFLAGS)
ctune_saver_LDFLAGS = -mwindows
ctune_saver_LDADD = client/libctclient.a $(CT_CORE_LIBS) $(CURL_LIBS) $(CT_DEP_LIBS) -lgdi32
ctune.scr: ctune-saver$(EXEEXT)
	$(AM_V_GEN)cp ctune-saver$(EXEEXT) $@
CLEANFILES += ctune.scr
EXTRA_DIST += client/win/crowdtune.nsi
else
EXTRA_DIST += client/win/saver_win.c client/win/crowdtune.nsi
client_libctclient_a_SOURCES += client/cl_idle_evdev.c
EXTRA_DIST += client/cl_idle_win.c
client_libctclient_a_SOURCES += client/service_posix.c
EXTRA_DIST += client/service_win.c client/win/launch_win.c
endif

client_libctclient_a_SOURCES += \
	client/cl_attach.c client/cl_attach.h client/cmd_attach.c \
	client/cmd_run.c \
	client/cmd_status.c
client_libctclient_a_SOURCES += client/cmd_train.c
client_libctclient_a_SOURCES += client/cmd_lora.c client/cmd_lora.h
client_libctclient_a_SOURCES += client/cmd_model.c client/cmd_model.h
client_libctclient_a_SOURCES += client/cmd_devices.c
client_libctclient_a_SOURCES += client/cmd_tokens.c client/cmd_tokens_text.c \
	client/cmd_tokens_chat.c client/cmd_tokens_chat.h
client_libctclient_a_SOURCES += client/cmd_chat.c client/cmd_chat_talk.c client/cmd_chat_talk.h
client_libctclient_a_SOURCES += client/cmd_sample.c client/cmd_verify.c

bin_PROGRAMS += ctune
ctune_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(CURL_CFLAGS) $(CT_X11_CFLAGS)
ctune_SOURCES = client/main.c client/commands.h
ctune_LDADD = client/libctclient.a $(CT_CORE_LIBS) $(CURL_LIBS) $(CT_X11_LIBS) $(LIBSYSTEMD_LIBS) $(CT_DEP_LIBS)

# Optional X11 screensaver-extension idle source.
CT_X11_CFLAGS =
CT_X11_LIBS =
if HAVE_X11
CT_X11_CFLAGS += $(X11_CFLAGS)
CT_X11_LIBS += $(X11_LIBS)
endif

# Install files: man page, systemd user unit, XDG autostart entry. The unit
# is under the configured prefix (systemd reads /usr/local/lib/systemd/user
# too); `make distcheck` installs into a scratch prefix, where the autostart
# entry follows $(sysconfdir).
dist_man_MANS += client/ctune.1
systemduserunitdir = $(prefix)/lib/systemd/user
systemduserunit_DATA = client/ctune.service
# The autostart entry goes where desktops read it ($XDG_CONFIG_DIRS,
# /etc/xdg by default): configure picks /etc/xdg/autostart for the prefixes
# /usr/local and /usr, else $(sysconfdir)/xdg/autostart (--with-autostartdir
# overrides). Its Exec= line is the installed binary's absolute path.
autostartdir = $(CT_AUTOSTARTDIR)
autostart_DATA = client/ctune.desktop
EXTRA_DIST += client/ctune.service.in client/ctune.desktop.in
CLEANFILES += client/ctune.service client/ctune.desktop
client/ctune.desktop: client/ctune.desktop.in Makefile
	$(AM_V_GEN)$(MKDIR_P) client && \
	sed -e 's|@bindir[@]|$(bindir)|g' $(srcdir)/client/ctune.desktop.in >$@
client/ctune.service: client/ctune.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) client && \
	sed -e 's|@bindir[@]|$(bindir)|g' $(srcdir)/client/ctune.service.in >$@
