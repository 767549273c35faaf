/*
 * ct_xml.c - safe libxml2 parsing and an escaping XML writer (see ct_xml.h).
 *
 * Parsing uses a private parser context whose SAX handler is libxml2's
 * default tree builder with hooks: element start/end count the depth and
 * the nodes (an element, its attributes), text, CDATA, comments and
 * processing instructions count nodes and text bytes, and each stops the
 * parser past its limit before the tree grows further, so a request of
 * millions of tiny elements costs the limit's worth of tree, not the
 * document's; a DOCTYPE or an entity declaration stops it at once, so no
 * DTD is read and no entity is ever expanded; and the structured error
 * hook swallows libxml2's messages (the last error is read back from the
 * context for our detail). Everything is per-context, so parses in
 * several threads do not interfere.
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
	struct ct_xml_limits lim;
	int depth;
	int too_deep;
	int has_dtd;
	long nodes;		/* elements, attributes, text, comments, PIs */
	size_t text;		/* bytes of text and attribute values */
	int too_many;		/* nodes or text past the limit */
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

/* Count nodes and text bytes; 0 to go on, -1 (parser stopped) past a
 * limit. A limit of 0 is no limit. */
static int count(xmlParserCtxtPtr ctxt, struct pstate *st, long nodes, size_t text)
{
	st->nodes += nodes;
	st->text += text;
	if ((st->lim.max_nodes > 0 && st->nodes > st->lim.max_nodes) ||
	    (st->lim.max_text > 0 && st->text > st->lim.max_text)) {
		st->too_many = 1;
		xmlStopParser(ctxt);
		return -1;
	}
	return 0;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		     const xmlChar *uri, int nb_ns, const xmlChar **ns, int nb_attr,
		     int nb_defaulted, const xmlChar **attrs)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;
	size_t text = 0;

	if (st->too_many || st->too_deep)
		return;
	if (++st->depth > st->lim.max_depth) {
		st->too_deep = 1;
		xmlStopParser(ctxt);
		return;
	}
	/* attrs: 5 pointers an attribute, the value from [3] to [4] */
	for (int i = 0; i < nb_attr; i++)
		text += (size_t)(attrs[5 * i + 4] - attrs[5 * i + 3]);
	if (count(ctxt, st, 1 + nb_attr + nb_ns, text) < 0)
		return;
	xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_ns, ns, nb_attr, nb_defaulted,
			      attrs);
}

/* Text joins the last child when that is text already: a new node only
 * otherwise (that is what xmlSAX2Characters does). */
static void on_text(void *ctx, const xmlChar *ch, int len)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;
	xmlNodePtr last = ctxt->node ? ctxt->node->last : NULL;
	int joins = last != NULL && last->type == XML_TEXT_NODE;

	if (st->too_many || count(ctxt, st, joins ? 0 : 1, (size_t)len) < 0)
		return;
	xmlSAX2Characters(ctx, ch, len);
}

static void on_cdata(void *ctx, const xmlChar *ch, int len)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	if (st->too_many || count(ctxt, st, 1, (size_t)len) < 0)
		return;
	xmlSAX2CDataBlock(ctx, ch, len);
}

static void on_comment(void *ctx, const xmlChar *value)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	if (st->too_many || count(ctxt, st, 1, strlen((const char *)value)) < 0)
		return;
	xmlSAX2Comment(ctx, value);
}

static void on_pi(void *ctx, const xmlChar *target, const xmlChar *data)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;
	size_t n = data ? strlen((const char *)data) : 0;

	if (st->too_many || count(ctxt, st, 1, n) < 0)
		return;
	xmlSAX2ProcessingInstruction(ctx, target, data);
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		   const xmlChar *uri)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct pstate *st = ctxt->_private;

	if (st->too_many || st->too_deep)
		return;
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
	sax->characters = on_text;
	sax->cdataBlock = on_cdata;
	sax->comment = on_comment;
	sax->processingInstruction = on_pi;
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
static int parse_error(xmlParserCtxtPtr ctxt, const struct pstate *st)
{
	xmlErrorPtr err;
	char msg[256];
	size_t len;

	if (st->has_dtd)
		return ct_error(CT_EXML, "XML with a DOCTYPE or entity declaration refused");
	if (st->too_deep)
		return ct_error(CT_ETOOBIG, "XML nested deeper than %d elements",
				st->lim.max_depth);
	if (st->too_many && st->nodes > st->lim.max_nodes && st->lim.max_nodes > 0)
		return ct_error(CT_ETOOBIG, "XML of more than %ld elements, attributes and "
				"text nodes", st->lim.max_nodes);
	if (st->too_many)
		return ct_error(CT_ETOOBIG, "XML with more than %zu bytes of text",
				st->lim.max_text);
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
	struct ct_xml_limits lim = { .max_bytes = max_bytes, .max_depth = max_depth };

	return ct_xml_parse_lim(data, n, &lim, out);
}

/* libxml2 reads all of a start tag's attributes into its own arrays before
 * any hook sees one (3 million attributes of one element: ~200 MB), so
 * the bytes that can open a node are counted first: a '<' opens at most
 * one node and a node has at most two, an '=' at most one attribute. */
static int prescan(const unsigned char *p, size_t n, long max_nodes)
{
	uint64_t lt = 0, eq = 0;

	for (size_t i = 0; i < n; i++) {
		lt += p[i] == '<';
		eq += p[i] == '=';
	}
	if (lt > 2 * (uint64_t)max_nodes + 2 || eq > (uint64_t)max_nodes)
		return ct_error(CT_ETOOBIG, "XML of more than %ld elements, attributes and "
				"text nodes", max_nodes);
	return 0;
}

int ct_xml_parse_lim(const void *data, size_t n, const struct ct_xml_limits *lim,
		     xmlDocPtr *out)
{
	struct pstate st = { .lim = *lim };
	xmlParserCtxtPtr ctxt;
	int rc = 0;

	*out = NULL;
	ct_xml_init();
	if (n > lim->max_bytes || n > INT_MAX)
		return ct_error(CT_ETOOBIG, "XML document of %zu bytes over the limit of %zu",
				n, lim->max_bytes);
	if (n == 0)
		return ct_error(CT_EXML, "empty XML document");
	rc = lim->max_nodes > 0 ? prescan(data, n, lim->max_nodes) : 0;
	if (rc < 0)
		return rc;
	ctxt = xmlCreateMemoryParserCtxt(data, (int)n);
	if (ctxt == NULL)
		return CT_ENOMEM;
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
	install_hooks(ctxt, &st);
	xmlParseDocument(ctxt);
	if (!ctxt->wellFormed || st.has_dtd || st.too_deep || st.too_many ||
	    ctxt->myDoc == NULL)
		rc = parse_error(ctxt, &st);
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
