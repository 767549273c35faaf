# html/ rules (included by the top-level Makefile.am): the web pages' CSS,
# layout template and icon, embedded into ctune-server at build time by
# html/embed.sh (server/web/local.mk compiles the generated server/web/web_assets.c).
CT_HTML_FILES = html/layout.html html/style.css html/icon.svg
EXTRA_DIST += $(CT_HTML_FILES) html/embed.sh
BUILT_SOURCES += server/web/web_assets.c
CLEANFILES += server/web/web_assets.c

server/web/web_assets.c: $(CT_HTML_FILES:%=$(srcdir)/%) $(srcdir)/html/embed.sh
	$(AM_V_GEN)$(MKDIR_P) server/web && \
	$(SHELL) $(srcdir)/html/embed.sh $@ $(srcdir) $(CT_HTML_FILES)
