/*
 * ct_xml.c - safe libxml2 parsing and an escaping XML writer (see ct_xml.h).
 *
 * Parsing uses a private parser context whose SAX handler is libxml2's
 * default tree builder with four hooks: element start/end count the depth
 * and stop the parser past the limit; a DOCTYPE or an entity declaration
 * stops it at once, so no DTD is read and no entity is ever expanded; and
 * the structured error hook swallows libxml2's messages (the last error is
 * read back from the context for our detail). Everything is per-context,
 * so parses in several threads do not interfere.
 */
#include "ct_xml.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

#define NUM_MAXLEN 64

/* Per-parse state hung on ctxt->_private. */
struct pstate {
	int depth;
	int max_depth;
	int too_deep;
	int has_dtd;
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init_once(void)
{
	xmlInitParser();
}

void ct_xml_init(void)
{
	pthread_once(&xml_once, xml_init_once);
}

/* ---- parsing ---- */

static void on_serror(void *data, xmlErrorPtr err)
{
	(void)data;
	(void)err;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		     const xmlChar *uri, int nb_ns, const xmlChar **ns, int nb_attr,
		     int nb_defaulted, const xmlChar **attrs)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	if (++st->depth > st->max_depth) {
		st->too_deep = 1;
		xmlStopParser(ctxt);
		return;
	}
	xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_ns, ns, nb_attr, nb_defaulted,
			      attrs);
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		   const xmlChar *uri)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	st->depth--;
	xmlSAX2EndElementNs(ctx, localname, prefix, uri);
}

static void on_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id,
		      const xmlChar *sys_id)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	(void)name;
	(void)ext_id;
	(void)sys_id;
	st->has_dtd = 1;
	xmlStopParser(ctxt);
}

static void on_entity(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
		      const xmlChar *system_id, xmlChar *content)
{
	(void)type;
	(void)public_id;
	(void)system_id;
	(void)content;
	on_subset(ctx, name, NULL, NULL);
}

static void install_hooks(xmlParserCtxtPtr ctxt, struct pstate *st)
{
	xmlSAXHandlerPtr sax = ctxt->sax;

	ctxt->_private = st;
	sax->startElementNs = on_start;
	sax->endElementNs = on_end;
	sax->internalSubset = on_subset;
	sax->externalSubset = on_subset;
	sax->entityDecl = on_entity;
	sax->serror = on_serror;
	sax->error = NULL;
	sax->warning = NULL;
	ctxt->vctxt.error = NULL;
	ctxt->vctxt.warning = NULL;
}

/* The CT_E* code and detail for a failed parse. */
static int parse_error(xmlParserCtxtPtr ctxt, const struct pstate *st, int max_depth)
{
	xmlErrorPtr err;
	char msg[256];
	size_t len;

	if (st->has_dtd)
		return ct_error(CT_EXML, "XML with a DOCTYPE or entity declaration refused");
	if (st->too_deep)
		return ct_error(CT_ETOOBIG, "XML nested deeper than %d elements", max_depth);
	err = xmlCtxtGetLastError(ctxt);
	if (err == NULL || err->message == NULL)
		return ct_error(CT_EXML, "malformed XML");
	if (err->code == XML_ERR_NO_MEMORY)
		return CT_ENOMEM;
	snprintf(msg, sizeof(msg), "%s", err->message);
	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	return ct_error(CT_EXML, "XML line %d: %s", err->line, msg);
}

int ct_xml_parse(const void *data, size_t n, size_t max_bytes, int max_depth,
		 xmlDocPtr *out)
{
	struct pstate st = { .max_depth = max_depth };
	xmlParserCtxtPtr ctxt;
	int rc = 0;

	*out = NULL;
	ct_xml_init();
	if (n > max_bytes || n > INT_MAX)
		return ct_error(CT_ETOOBIG, "XML document of %zu bytes over the limit of %zu",
				n, max_bytes);
	if (n == 0)
		return ct_error(CT_EXML, "empty XML document");
	ctxt = xmlCreateMemoryParserCtxt(data, (int)n);
	if (ctxt == NULL)
		return CT_ENOMEM;
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
	install_hooks(ctxt, &st);
	xmlParseDocument(ctxt);
	if (!ctxt->wellFormed || st.has_dtd || st.too_deep || ctxt->myDoc == NULL)
		rc = parse_error(ctxt, &st, max_depth);
	if (rc < 0)
		xmlFreeDoc(ctxt->myDoc);
	else
		*out = ctxt->myDoc;
	ctxt->myDoc = NULL;
	ctxt->_private = NULL;
	xmlFreeParserCtxt(ctxt);
	return rc;
}

/* ---- reading ---- */

static int name_is(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       (name == NULL || strcmp((const char *)n->name, name) == 0);
}

/* The first element named name (any element: NULL) from n on. */
static xmlNodePtr find_from(xmlNodePtr n, const char *name)
{
	for (; n != NULL; n = n->next)
		if (name_is(n, name))
			return n;
	return NULL;
}

xmlNodePtr ct_xml_child(xmlNodePtr parent, const char *name)
{
	return parent == NULL ? NULL : find_from(parent->children, name);
}

xmlNodePtr ct_xml_next(xmlNodePtr after, const char *name)
{
	return after == NULL ? NULL : find_from(after->next, name);
}

static int is_xml_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* *out = a copy of s[0..len); over maxlen -> CT_ETOOBIG (the caller words
 * the message), *out NULL. */
static int copy_capped(const char *s, size_t len, size_t maxlen, char **out)
{
	if (len > maxlen)
		return CT_ETOOBIG;
	*out = strndup(s, len);
	return *out == NULL ? CT_ENOMEM : 0;
}

int ct_xml_get_str(xmlNodePtr parent, const char *name, size_t maxlen, char **out)
{
	xmlNodePtr n = ct_xml_child(parent, name);
	xmlChar *content;
	const char *s;
	size_t len;
	int rc = 0;

	*out = NULL;
	if (n == NULL)
		return ct_error(CT_ENOTFOUND, "missing <%s>", name);
	content = xmlNodeGetContent(n);
	if (content == NULL)
		return CT_ENOMEM;
	s = (const char *)content;
	while (is_xml_space(*s))
		s++;
	len = strlen(s);
	while (len > 0 && is_xml_space(s[len - 1]))
		len--;
	rc = copy_capped(s, len, maxlen, out);
	if (rc == CT_ETOOBIG)
		ct_error(rc, "<%s> longer than %zu bytes", name, maxlen);
	xmlFree(content);
	return rc;
}

int ct_xml_get_attr(xmlNodePtr node, const char *name, size_t maxlen, char **out)
{
	xmlChar *v;
	int rc = 0;

	*out = NULL;
	if (node == NULL || node->type != XML_ELEMENT_NODE)
		return ct_error(CT_ENOTFOUND, "missing attribute %s", name);
	v = xmlGetNoNsProp(node, BAD_CAST name);
	if (v == NULL)
		return ct_error(CT_ENOTFOUND, "<%s>: missing attribute %s", (const char *)node->name,
				name);
	rc = copy_capped((const char *)v, strlen((const char *)v), maxlen, out);
	if (rc == CT_ETOOBIG)
		ct_error(rc, "<%s>: attribute %s longer than %zu bytes",
			 (const char *)node->name, name, maxlen);
	xmlFree(v);
	return rc;
}

/* Trimmed content of child `name` in a small buffer for number parsing. */
static int get_num_text(xmlNodePtr parent, const char *name, char buf[NUM_MAXLEN + 1])
{
	char *s = NULL;
	int rc = ct_xml_get_str(parent, name, NUM_MAXLEN, &s);

	if (rc == CT_ETOOBIG)
		return ct_error(CT_EFORMAT, "<%s>: not a number (too long)", name);
	if (rc < 0)
		return rc;
	snprintf(buf, NUM_MAXLEN + 1, "%s", s);
	free(s);
	if (buf[0] == '\0')
		return ct_error(CT_EFORMAT, "<%s>: empty, expected a number", name);
	return 0;
}

int ct_xml_get_int64(xmlNodePtr parent, const char *name, int64_t min, int64_t max,
		     int64_t *out)
{
	char buf[NUM_MAXLEN + 1];
	char *end;
	long long v;
	int rc = get_num_text(parent, name, buf);

	if (rc < 0)
		return rc;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (end == buf || *end != '\0')
		return ct_error(CT_EFORMAT, "<%s>: '%s' is not an integer", name, buf);
	if (errno == ERANGE || v < min || v > max)
		return ct_error(CT_ERANGE, "<%s>: %s not in [%" PRId64 ", %" PRId64 "]", name, buf,
				min, max);
	*out = (int64_t)v;
	return 0;
}

int ct_xml_get_long(xmlNodePtr parent, const char *name, long min, long max, long *out)
{
	int64_t v;
	int rc = ct_xml_get_int64(parent, name, min, max, &v);

	if (rc < 0)
		return rc;
	*out = (long)v;
	return 0;
}

int ct_xml_get_double(xmlNodePtr parent, const char *name, double min, double max,
		      double *out)
{
	char buf[NUM_MAXLEN + 1];
	char *end;
	double v;
	int rc = get_num_text(parent, name, buf);

	if (rc < 0)
		return rc;
	errno = 0;
	v = strtod(buf, &end);
	if (end == buf || *end != '\0')
		return ct_error(CT_EFORMAT, "<%s>: '%s' is not a number", name, buf);
	if (isnan(v) || isinf(v))
		return ct_error(errno == ERANGE ? CT_ERANGE : CT_ENONFINITE,
				"<%s>: '%s' is not a finite number", name, buf);
	if (v < min || v > max)
		return ct_error(CT_ERANGE, "<%s>: %s not in [%g, %g]", name, buf, min, max);
	*out = v;
	return 0;
}

/* ---- writing ---- */

static int valid_tag(const char *t)
{
	if (t == NULL || !((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || *t == '_'))
		return 0;
	for (t++; *t != '\0'; t++) {
		char c = *t;

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* The entity for c, or NULL to copy it as is. In attribute values TAB and
 * LF must be references too, or the parser normalises them to spaces. */
static const char *entity_for(unsigned char c, int in_attr)
{
	if (in_attr && c == '\t')
		return "&#9;";
	if (in_attr && c == '\n')
		return "&#10;";
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	case '\r':
		return "&#13;";	/* a raw CR would be read back as LF */
	default:
		return NULL;
	}
}

static int escape(struct ct_buf *b, const char *s, int in_attr)
{
	const char *run = s;
	int rc = 0;

	for (const char *p = s; *p != '\0' && rc == 0; p++) {
		unsigned char c = (unsigned char)*p;
		const char *ent = entity_for(c, in_attr);

		if (ent == NULL && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f))
			return ct_error(CT_EINVAL, "control character 0x%02x cannot go into XML", c);
		if (ent == NULL)
			continue;
		rc = ct_buf_append(b, run, (size_t)(p - run));
		if (rc == 0)
			rc = ct_buf_appends(b, ent);
		run = p + 1;
	}
	if (rc == 0)
		rc = ct_buf_appends(b, run);
	return rc;
}

int ct_xml_escape(struct ct_buf *b, const char *s)
{
	return escape(b, s, 0);
}

int ct_xml_open(struct ct_buf *b, const char *tag)
{
	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	return ct_buf_appendf(b, "<%s>\n", tag);
}

int ct_xml_close(struct ct_buf *b, const char *tag)
{
	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	return ct_buf_appendf(b, "</%s>\n", tag);
}

int ct_xml_open_attr(struct ct_buf *b, const char *tag, const char *attr, const char *value)
{
	size_t old = b->len;
	int rc;

	if (!valid_tag(tag) || !valid_tag(attr))
		return ct_error(CT_EINVAL, "bad XML tag or attribute name");
	rc = ct_buf_appendf(b, "<%s %s=\"", tag, attr);
	if (rc == 0)
		rc = escape(b, value, 1);
	if (rc == 0)
		rc = ct_buf_appends(b, "\">\n");
	if (rc < 0 && b->data != NULL) {
		b->len = old;
		b->data[old] = '\0';
	}
	return rc;
}

int ct_xml_elem_str(struct ct_buf *b, const char *tag, const char *value)
{
	size_t old = b->len;
	int rc;

	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	rc = ct_buf_appendf(b, "<%s>", tag);
	if (rc == 0)
		rc = ct_xml_escape(b, value);
	if (rc == 0)
		rc = ct_buf_appendf(b, "</%s>\n", tag);
	if (rc < 0 && b->data != NULL) {
		b->len = old;
		b->data[old] = '\0';
	}
	return rc;
}

int ct_xml_elem_long(struct ct_buf *b, const char *tag, long v)
{
	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	return ct_buf_appendf(b, "<%s>%ld</%s>\n", tag, v, tag);
}

int ct_xml_elem_int64(struct ct_buf *b, const char *tag, int64_t v)
{
	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	return ct_buf_appendf(b, "<%s>%" PRId64 "</%s>\n", tag, v, tag);
}

int ct_xml_elem_double(struct ct_buf *b, const char *tag, double v)
{
	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	if (!isfinite(v))
		return ct_error(CT_ENONFINITE, "<%s>: non-finite value", tag);
	return ct_buf_appendf(b, "<%s>%.17g</%s>\n", tag, v, tag);
}

int ct_xml_elem_hex(struct ct_buf *b, const char *tag, const unsigned char *p, size_t n)
{
	size_t old = b->len;
	int rc;

	if (!valid_tag(tag))
		return ct_error(CT_EINVAL, "bad XML tag name");
	if (n > (SIZE_MAX - 1) / 2)
		return ct_error(CT_ETOOBIG, "<%s>: too many bytes", tag);
	rc = ct_buf_appendf(b, "<%s>", tag);
	if (rc == 0)
		rc = ct_buf_reserve(b, 2 * n + 1);
	if (rc == 0) {
		ct_hex_encode(p, n, (char *)b->data + b->len);
		b->len += 2 * n;
		rc = ct_buf_appendf(b, "</%s>\n", tag);
	}
	if (rc < 0 && b->data != NULL) {
		b->len = old;
		b->data[old] = '\0';
	}
	return rc;
}
