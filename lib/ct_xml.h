/*
 * ct_xml.h - safe XML for the network protocol: a libxml2 parser with size
 * and depth limits and no network, DTD or entity features, typed getters for
 * child elements, and an escaping writer on a capped ct_buf.
 *
 * Every XML document a peer sends goes through ct_xml_parse(). It refuses
 * documents with a DOCTYPE or entity declarations outright (so billion-laughs
 * and external-entity (XXE) documents fail and nothing is expanded or
 * fetched), documents over max_bytes and documents nested deeper than
 * max_depth. libxml2 prints nothing to stderr; the first error is kept as
 * the CT_EXML detail ("line 3: Opening and ending tag mismatch ...").
 *
 *   xmlDocPtr doc;
 *   rc = ct_xml_parse(body, len, 1 << 20, 32, &doc); if (rc < 0) goto out;
 *   root = xmlDocGetRootElement(doc);
 *   rc = ct_xml_get_long(root, "hostid", 1, LONG_MAX, &hostid);
 *   ...
 *   xmlFreeDoc(doc);
 *
 * Writer: the ct_xml_elem_* calls append "<tag>value</tag>\n"; ct_xml_open
 * and ct_xml_close append "<tag>\n" and "</tag>\n". Tags are not escaped
 * and must be valid names ([A-Za-z_][A-Za-z0-9_.-]*), else CT_EINVAL.
 * All writer calls return 0, CT_EINVAL or CT_ETOOBIG (the buffer's cap); on
 * failure the buffer may hold a partial element, so throw it away.
 */
#ifndef CT_XML_H
#define CT_XML_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "ct_buf.h"

/* Sensible defaults for protocol messages. */
#define CT_XML_DEFAULT_MAX_BYTES (4u << 20)
#define CT_XML_DEFAULT_MAX_DEPTH 32

/* Initialise libxml2 once per process (pthread_once). ct_xml_parse calls
 * it; call it yourself before using libxml2 directly from several threads. */
void ct_xml_init(void);

/* Parse n bytes. Returns 0 with *out a document the caller frees with
 * xmlFreeDoc(), or: CT_ETOOBIG (n > max_bytes, or depth > max_depth),
 * CT_EXML (malformed, DOCTYPE, entities, empty), CT_ENOMEM; *out = NULL on
 * failure. Thread-safe. */
int ct_xml_parse(const void *data, size_t n, size_t max_bytes, int max_depth,
		 xmlDocPtr *out);

/* What a parse may cost (ct_xml_parse_lim). A tree costs ~120 bytes a node
 * whatever the document's size, so a peer's document that is parsed
 * before anything is known about the peer wants max_nodes and max_text
 * too: 16 MiB of "<a/>" is 4 million nodes, ~500 MB of tree. */
struct ct_xml_limits {
	size_t max_bytes;	/* the document's bytes */
	int max_depth;		/* element nesting */
	long max_nodes;		/* elements + attributes + namespace declarations +
				 * text, CDATA, comment and PI nodes; 0: no cap */
	size_t max_text;	/* bytes of text, CDATA, comments, PIs and
				 * attribute values together; 0: no cap */
};

/* ct_xml_parse under all of *lim: past max_nodes or max_text the parser
 * stops where it is (the tree holds at most the limit's worth) and the
 * parse fails with CT_ETOOBIG naming the limit. With max_nodes, a
 * document with more than 2 * max_nodes '<' or more than max_nodes '='
 * bytes (text included) is refused before parsing: libxml2 reads a whole
 * start tag's attributes before any count can stop it. Otherwise as
 * ct_xml_parse. */
int ct_xml_parse_lim(const void *data, size_t n, const struct ct_xml_limits *lim,
		     xmlDocPtr *out);

/* First element child of parent named name (NULL name: any element), or
 * NULL. */
xmlNodePtr ct_xml_child(xmlNodePtr parent, const char *name);

/* Next element sibling after `after` named name (NULL: any), or NULL:
 *   for (n = ct_xml_child(p, "file"); n; n = ct_xml_next(n, "file")) */
xmlNodePtr ct_xml_next(xmlNodePtr after, const char *name);

/* Text content of child `name` of parent, whitespace-trimmed, as a malloc'd
 * string the caller free()s. CT_ENOTFOUND if no such child, CT_ETOOBIG if
 * longer than maxlen bytes (after trimming), CT_ENOMEM. *out = NULL on
 * failure. */
int ct_xml_get_str(xmlNodePtr parent, const char *name, size_t maxlen, char **out);

/* Attribute `name` of node (not trimmed), as a malloc'd string the caller
 * free()s. CT_ENOTFOUND if absent, CT_ETOOBIG if longer than maxlen bytes,
 * CT_ENOMEM. *out = NULL on failure. */
int ct_xml_get_attr(xmlNodePtr node, const char *name, size_t maxlen, char **out);

/* Numeric content of child `name`: whole string must parse (after trim),
 * within [min, max]. CT_ENOTFOUND if missing, CT_EFORMAT if not a number,
 * CT_ERANGE if outside the range; *out untouched on failure. The detail
 * names the element. ct_xml_get_double rejects NaN/Inf (CT_ENONFINITE). */
int ct_xml_get_long(xmlNodePtr parent, const char *name, long min, long max, long *out);
int ct_xml_get_int64(xmlNodePtr parent, const char *name, int64_t min, int64_t max,
		     int64_t *out);
int ct_xml_get_double(xmlNodePtr parent, const char *name, double min, double max,
		      double *out);

/* Append s with & < > " ' escaped as entities. Tab, LF, CR pass through;
 * other control characters (0x01-0x1f, 0x7f) -> CT_EINVAL (XML 1.0 cannot
 * carry them). Invalid UTF-8 is not checked here. */
int ct_xml_escape(struct ct_buf *b, const char *s);

/* "<tag>\n" and "</tag>\n". */
int ct_xml_open(struct ct_buf *b, const char *tag);
int ct_xml_close(struct ct_buf *b, const char *tag);

/* "<tag attr=\"escaped value\">\n" (attr must be a valid name too). */
int ct_xml_open_attr(struct ct_buf *b, const char *tag, const char *attr, const char *value);

/* "<tag>escaped value</tag>\n". */
int ct_xml_elem_str(struct ct_buf *b, const char *tag, const char *value);
int ct_xml_elem_long(struct ct_buf *b, const char *tag, long v);
int ct_xml_elem_int64(struct ct_buf *b, const char *tag, int64_t v);

/* v with "%.17g" so it reads back bit-identical; NaN/Inf -> CT_ENONFINITE. */
int ct_xml_elem_double(struct ct_buf *b, const char *tag, double v);

/* n bytes as lowercase hex (digests, nonces). */
int ct_xml_elem_hex(struct ct_buf *b, const char *tag, const unsigned char *p, size_t n);

#endif
