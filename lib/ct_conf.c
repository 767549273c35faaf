/*
 * ct_conf.c - the key = value config format (see ct_conf.h).
 *
 * A ct_conf is a small array of (key, value, line) in file order; configs
 * have tens of keys, so lookups are linear. The parser works line by line on
 * a private copy of the text, and every syntax error is reported as
 * "name:line: what".
 */
#include "ct_conf.h"
#include "ct_array.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CONF_MAX_FILE (1u << 20)
#define CONF_MAX_KEY 128

struct entry {
	char *key;
	char *value;
	int line;		/* 0 when set by ct_conf_set() */
};

struct ct_conf {
	char *name;
	struct entry *e;
	size_t n, cap;
};

static int is_key_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

static int valid_key(const char *k, size_t n)
{
	if (n == 0 || n > CONF_MAX_KEY)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_key_char((unsigned char)k[i]))
			return 0;
	return 1;
}

static struct entry *find(const struct ct_conf *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->e[i].key, key) == 0)
			return &c->e[i];
	return NULL;
}

/* Append an entry taking ownership of key and value (freed on failure). */
static int add(struct ct_conf *c, char *key, char *value, int line)
{
	if (ct_array_grow(&c->e, &c->cap, c->n, sizeof(*c->e), 16) < 0) {
		free(key);
		free(value);
		return CT_ENOMEM;
	}
	c->e[c->n].key = key;
	c->e[c->n].value = value;
	c->e[c->n].line = line;
	c->n++;
	return 0;
}

static int conf_alloc(const char *name, struct ct_conf **out)
{
	struct ct_conf *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return CT_ENOMEM;
	c->name = strdup(name);
	if (c->name == NULL) {
		free(c);
		return CT_ENOMEM;
	}
	*out = c;
	return 0;
}

int ct_conf_new(struct ct_conf **out)
{
	return conf_alloc("(new)", out);
}

void ct_conf_free(struct ct_conf *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].key);
		free(c->e[i].value);
	}
	free(c->e);
	free(c->name);
	free(c);
}

/* ---- parser ---- */

struct parser {
	struct ct_conf *c;
	int line;
	char section[CONF_MAX_KEY + 1];
};

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Rest of a line after a value or header: only blanks or a comment. */
static int rest_is_empty(const char *s)
{
	s = skip_ws((char *)s);
	return *s == '\0' || *s == '#' || *s == ';';
}

static int perr(const struct parser *p, const char *what)
{
	return ct_error(CT_ECONFIG, "%s:%d: %s", p->c->name, p->line, what);
}

static int parse_section(struct parser *p, char *s)
{
	char *end = strchr(s, ']');
	size_t n;

	if (end == NULL || !rest_is_empty(end + 1))
		return perr(p, "expected '[section]'");
	n = (size_t)(end - s - 1);
	if (!valid_key(s + 1, n))
		return perr(p, "bad section name");
	memcpy(p->section, s + 1, n);
	p->section[n] = '\0';
	return 0;
}

/* Unescape a "quoted" value in place; s points after the opening quote. */
static int parse_quoted(struct parser *p, char *s, char **value)
{
	char *w = s;

	*value = s;
	for (char *r = s;; r++) {
		if (*r == '\0')
			return perr(p, "unterminated quoted value");
		if (*r == '"') {
			*w = '\0';
			return rest_is_empty(r + 1) ? 0 : perr(p, "text after the closing quote");
		}
		if (*r == '\\') {
			r++;
			if (*r != '"' && *r != '\\')
				return perr(p, "bad escape in quoted value (only \\\" and \\\\)");
		}
		*w++ = *r;
	}
}

/* Cut an unquoted value at a comment that follows whitespace, trim it. */
static void parse_plain(char *s)
{
	char *end;

	for (char *r = s; *r != '\0'; r++) {
		if ((*r == '#' || *r == ';') && (r == s || r[-1] == ' ' || r[-1] == '\t')) {
			*r = '\0';
			break;
		}
	}
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
}

static int add_pair(struct parser *p, const char *key, size_t klen, const char *value)
{
	char full[2 * CONF_MAX_KEY + 2];
	struct entry *old;
	char *k, *v;

	snprintf(full, sizeof(full), "%s%s%.*s", p->section, p->section[0] ? "." : "",
		 (int)klen, key);
	old = find(p->c, full);
	if (old != NULL)
		return ct_error(CT_ECONFIG, "%s:%d: duplicate key '%s' (first on line %d)",
				p->c->name, p->line, full, old->line);
	k = strdup(full);
	v = strdup(value);
	if (k == NULL || v == NULL) {
		free(k);
		free(v);
		return CT_ENOMEM;
	}
	return add(p->c, k, v, p->line);
}

static int parse_line(struct parser *p, char *s)
{
	char *key, *value;
	size_t klen;
	int rc;

	s = skip_ws(s);
	if (*s == '\0' || *s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return parse_section(p, s);
	key = s;
	while (is_key_char((unsigned char)*s))
		s++;
	klen = (size_t)(s - key);
	s = skip_ws(s);
	if (klen == 0 || *s != '=')
		return perr(p, "expected 'key = value'");
	if (klen > CONF_MAX_KEY)
		return perr(p, "key too long");
	s = skip_ws(s + 1);
	if (*s == '"') {
		rc = parse_quoted(p, s + 1, &value);
		if (rc < 0)
			return rc;
	} else {
		parse_plain(s);
		value = s;
	}
	return add_pair(p, key, klen, value);
}

/* Walk the lines of text (a NUL-terminated private copy). */
static int parse_text(struct parser *p, char *text)
{
	char *s = text;
	int rc = 0;

	while (s != NULL && rc == 0) {
		char *nl = strchr(s, '\n');

		if (nl != NULL)
			*nl = '\0';
		p->line++;
		if (nl != NULL && nl > s && nl[-1] == '\r')
			nl[-1] = '\0';
		for (char *q = s; *q != '\0'; q++)
			if ((unsigned char)*q < 0x20 && *q != '\t')
				return perr(p, "control character in line");
		rc = parse_line(p, s);
		s = nl ? nl + 1 : NULL;
	}
	return rc;
}

int ct_conf_parse(const char *text, size_t n, const char *name, struct ct_conf **out)
{
	struct parser p = { .line = 0 };
	char *copy = NULL;
	int rc;

	*out = NULL;
	rc = conf_alloc(name, &p.c);
	if (rc < 0)
		return rc;
	if (memchr(text, '\0', n) != NULL) {
		rc = ct_error(CT_ECONFIG, "%s: contains a NUL byte", name);
		goto out;
	}
	copy = strndup(text, n);
	if (copy == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	rc = parse_text(&p, copy);
out:
	free(copy);
	if (rc < 0) {
		ct_conf_free(p.c);
		return rc;
	}
	*out = p.c;
	return 0;
}

int ct_conf_load(const char *path, struct ct_conf **out)
{
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = ct_file_read_all(path, CONF_MAX_FILE, &data, &len);
	if (rc < 0)
		return rc;
	rc = ct_conf_parse((const char *)data, len, path, out);
	free(data);
	return rc;
}

/* ---- getters ---- */

/* Report a bad value of e as "name:line: key: 'value' what". */
static int verr(const struct ct_conf *c, const struct entry *e, const char *what)
{
	if (e->line > 0)
		return ct_error(CT_ECONFIG, "%s:%d: %s: '%s' %s", c->name, e->line, e->key,
				e->value, what);
	return ct_error(CT_ECONFIG, "%s: %s: '%s' %s", c->name, e->key, e->value, what);
}

const char *ct_conf_get(const struct ct_conf *c, const char *key)
{
	const struct entry *e = find(c, key);

	return e ? e->value : NULL;
}

int ct_conf_get_str(const struct ct_conf *c, const char *key, const char *def,
		    const char **out)
{
	const struct entry *e = find(c, key);

	*out = e ? e->value : def;
	return 0;
}

static int int_base(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int ct_conf_get_int(const struct ct_conf *c, const char *key, long def, long min,
		    long max, long *out)
{
	const struct entry *e = find(c, key);
	char *end;
	long v;

	if (e == NULL) {
		*out = def;
		return 0;
	}
	/* Base 10 unless 0x: a leading zero must not mean octal here. */
	errno = 0;
	v = strtol(e->value, &end, int_base(e->value));
	if (end == e->value || *end != '\0' || isspace((unsigned char)e->value[0]))
		return verr(c, e, "is not an integer");
	if (errno == ERANGE || v < min || v > max) {
		char what[96];

		snprintf(what, sizeof(what), "is out of range [%ld, %ld]", min, max);
		return verr(c, e, what);
	}
	*out = v;
	return 0;
}

int ct_conf_get_double(const struct ct_conf *c, const char *key, double def,
		       double min, double max, double *out)
{
	const struct entry *e = find(c, key);
	char *end;
	double v;

	if (e == NULL) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtod(e->value, &end);
	if (end == e->value || *end != '\0' || isspace((unsigned char)e->value[0]))
		return verr(c, e, "is not a number");
	if (!isfinite(v))
		return verr(c, e, "is not a finite number");
	if (errno == ERANGE || v < min || v > max) {
		char what[96];

		snprintf(what, sizeof(what), "is out of range [%g, %g]", min, max);
		return verr(c, e, what);
	}
	*out = v;
	return 0;
}

int ct_conf_get_bool(const struct ct_conf *c, const char *key, int def, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	const struct entry *e = find(c, key);

	if (e == NULL) {
		*out = def ? 1 : 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(e->value, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(e->value, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return verr(c, e, "is not a boolean (true/false, yes/no, on/off, 1/0)");
}

/* Multiplier for a size suffix, or 0 if unknown. */
static uint64_t size_unit(const char *s)
{
	static const struct {
		char c;
		unsigned shift;
	} units[] = { { 'k', 10 }, { 'm', 20 }, { 'g', 30 }, { 't', 40 } };

	if (*s == '\0')
		return 1;
	if ((s[0] == 'b' || s[0] == 'B') && s[1] == '\0')
		return 1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (tolower((unsigned char)s[0]) != units[i].c)
			continue;
		if (s[1] == '\0' || strcasecmp(s + 1, "b") == 0 || strcasecmp(s + 1, "ib") == 0)
			return (uint64_t)1 << units[i].shift;
	}
	return 0;
}

int ct_conf_get_size(const struct ct_conf *c, const char *key, uint64_t def,
		     uint64_t *out)
{
	const struct entry *e = find(c, key);
	unsigned long long v;
	uint64_t mult;
	char *end;

	if (e == NULL) {
		*out = def;
		return 0;
	}
	if (!isdigit((unsigned char)e->value[0]))
		return verr(c, e, "is not a size (like 512, 10k, 5M, 2G)");
	errno = 0;
	v = strtoull(e->value, &end, 10);
	mult = size_unit(skip_ws(end));
	if (mult == 0)
		return verr(c, e, "is not a size (like 512, 10k, 5M, 2G)");
	if (errno == ERANGE || v > UINT64_MAX / mult)
		return verr(c, e, "is too large");
	*out = (uint64_t)v * mult;
	return 0;
}

/* ---- set, save, iterate ---- */

int ct_conf_set(struct ct_conf *c, const char *key, const char *value)
{
	struct entry *e;
	char *v, *k;

	if (!valid_key(key, strlen(key)))
		return ct_error(CT_EINVAL, "bad config key '%s'", key);
	for (const char *q = value; *q != '\0'; q++)
		if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
			return ct_error(CT_EINVAL, "%s: control character in value", key);
	v = strdup(value);
	if (v == NULL)
		return CT_ENOMEM;
	e = find(c, key);
	if (e != NULL) {
		free(e->value);
		e->value = v;
		e->line = 0;
		return 0;
	}
	k = strdup(key);
	if (k == NULL) {
		free(v);
		return CT_ENOMEM;
	}
	return add(c, k, v, 0);
}

/* Does v need quotes to read back unchanged? */
static int needs_quotes(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || v[0] == ' ' || v[0] == '\t' || v[0] == '"')
		return 1;
	if (v[n - 1] == ' ' || v[n - 1] == '\t')
		return 1;
	return strpbrk(v, "#;\\\"") != NULL;
}

static int write_value(struct ct_buf *b, const char *v)
{
	int rc;

	if (!needs_quotes(v))
		return ct_buf_appends(b, v);
	rc = ct_buf_appends(b, "\"");
	for (const char *q = v; rc == 0 && *q != '\0'; q++) {
		if (*q == '"' || *q == '\\')
			rc = ct_buf_append(b, "\\", 1);
		if (rc == 0)
			rc = ct_buf_append(b, q, 1);
	}
	if (rc == 0)
		rc = ct_buf_appends(b, "\"");
	return rc;
}

int ct_conf_save(const struct ct_conf *c, const char *path)
{
	struct ct_buf b = CT_BUF_INIT(CONF_MAX_FILE);
	int rc = 0;

	for (size_t i = 0; i < c->n && rc == 0; i++) {
		rc = ct_buf_appendf(&b, "%s = ", c->e[i].key);
		if (rc == 0)
			rc = write_value(&b, c->e[i].value);
		if (rc == 0)
			rc = ct_buf_appends(&b, "\n");
	}
	if (rc == 0)
		rc = ct_file_write_atomic(path, b.data ? b.data : (unsigned char *)"", b.len, 0644);
	ct_buf_free(&b);
	return rc;
}

size_t ct_conf_count(const struct ct_conf *c)
{
	return c->n;
}

const char *ct_conf_key_at(const struct ct_conf *c, size_t i)
{
	return i < c->n ? c->e[i].key : NULL;
}
