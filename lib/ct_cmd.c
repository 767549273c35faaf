/*
 * ct_cmd.c - the command-table resolver both programs dispatch with (see
 * ct_cmd.h): walk the words down the tree, answer help, check options and
 * argument counts with getopt_long on a copy of argv.
 */
#include "ct_cmd.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"

#define WORDS_CAP 128

static int is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static const struct ct_cmd_def *find(const struct ct_cmd_def *const *t, const char *name)
{
	for (; *t; t++)
		if (strcmp((*t)->name, name) == 0)
			return *t;
	return NULL;
}

void ct_cmd_list(FILE *f, const struct ct_cmd_def *const *table)
{
	size_t w = 0;

	for (const struct ct_cmd_def *const *t = table; *t; t++)
		if (strlen((*t)->name) > w)
			w = strlen((*t)->name);
	fprintf(f, "commands:\n");
	for (const struct ct_cmd_def *const *t = table; *t; t++)
		fprintf(f, "  %-*s  %s\n", (int)w, (*t)->name, (*t)->summary);
}

/* "usage: PROG WORDS USAGE", the summary, the help, a group's commands. */
static void print_usage(FILE *f, const char *prog, const char *words,
			const struct ct_cmd_def *d)
{
	if (d->fn)
		fprintf(f, "usage: %s %s%s%s\n", prog, words, d->usage[0] ? " " : "", d->usage);
	if (d->subs)
		fprintf(f, "%s %s %s COMMAND ...\n", d->fn ? "      " : "usage:", prog, words);
	fprintf(f, "%s\n", d->summary);
	if (d->help)
		fprintf(f, "\n%s", d->help);
	if (d->subs) {
		fprintf(f, "\n");
		ct_cmd_list(f, d->subs);
		fprintf(f, "\n'%s %s COMMAND --help' shows a command's usage.\n", prog, words);
	}
}

/* CT_EUSAGE with "WORDS: what (see 'PROG WORDS --help')". */
static int usage_error(const char *prog, const char *words, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int usage_error(const char *prog, const char *words, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ct_error(CT_EUSAGE, "%s: %s (see '%s %s --help')", words, what, prog, words);
}

/* The long option of opts whose val is c, or NULL. */
static const struct option *long_by_val(const struct option *opts, int c)
{
	for (; opts && opts->name; opts++)
		if (opts->val == c && opts->flag == NULL)
			return opts;
	return NULL;
}

/* The option a getopt error is about, into name (cap bytes): an unknown
 * long option leaves optopt 0; a long option with a bad value sets optopt
 * to its val; a short one to its letter (getopt may not have stepped past
 * a cluster yet, so the token before optind is checked against the val). */
static void bad_name(char **argv, const struct option *opts, char *name, size_t cap)
{
	const char *tok = argv[optind - 1];
	const struct option *o = long_by_val(opts, optopt);
	size_t n = strcspn(tok, "=");

	if (optopt == 0 || (o && strncmp(tok, "--", 2) == 0 && strlen(o->name) >= n - 2 &&
			    strncmp(tok + 2, o->name, n - 2) == 0))
		snprintf(name, cap, "%.*s", (int)n, tok);
	else
		snprintf(name, cap, "-%c", optopt);
}

/* 1 if tok is "--NAME=VALUE" and NAME (or an abbreviation only it has)
 * is a long option of opts without a value. getopt does not say so the
 * same way everywhere (glibc sets optopt, MinGW-w64 reports a missing
 * value). */
static int given_a_value(const char *tok, const struct option *opts)
{
	size_t n = strcspn(tok, "=");
	const struct option *hit = NULL;
	int nhit = 0;

	if (strncmp(tok, "--", 2) != 0 || tok[n] != '=')
		return 0;
	for (; opts && opts->name; opts++) {
		if (strncmp(opts->name, tok + 2, n - 2) != 0)
			continue;
		if (strlen(opts->name) == n - 2)
			return opts->has_arg == no_argument;
		hit = opts;
		nhit++;
	}
	return nhit == 1 && hit->has_arg == no_argument;
}

/* The first option of d->required whose val is not in seen[0..n), as
 * usage_error, or 0. */
static int check_required(const char *prog, const char *words, const struct ct_cmd_def *d,
			  const int *seen, int n)
{
	const char *p = d->required;

	while (p && *p) {
		size_t len = strcspn(p, " ");
		const struct option *o = d->opts;
		int found = 0;

		while (o && o->name && !(strlen(o->name) == len && strncmp(o->name, p, len) == 0))
			o++;
		for (int i = 0; o && o->name && i < n; i++)
			found |= seen[i] == o->val;
		if (!found)
			return usage_error(prog, words, "the required option '--%.*s' is missing",
					   (int)len, p);
		p += len;
		p += *p == ' ';
	}
	return 0;
}

/* One getopt_long pass over a copy of argv: 1 for --help, CT_EUSAGE for a
 * bad option or too many arguments, else 0 with *npos the positional
 * arguments. */
static int scan_opts(const char *prog, const char *words, const struct ct_cmd_def *d,
		     int argc, char **argv, int *npos)
{
	static const struct option none[] = { { NULL, 0, NULL, 0 } };
	const struct option *lo = d->opts ? d->opts : none;
	char so[64], name[80];
	char **copy;
	int seen[64], nseen = 0, c, rc = 0;

	if (snprintf(so, sizeof(so), ":%s", d->shortopts ? d->shortopts : "") >= (int)sizeof(so))
		return ct_error(CT_EUSAGE, "%s: option string too long", words);
	copy = malloc(((size_t)argc + 1) * sizeof(*copy));
	if (copy == NULL)
		return ct_error(CT_ENOMEM, "argv");
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	copy[argc] = NULL;
	optind = 0;
	while (rc == 0 && (c = getopt_long(argc, copy, so, lo, NULL)) != -1) {
		if (c != '?' && c != ':') {
			if (nseen < 64)
				seen[nseen++] = c;
			continue;
		}
		bad_name(copy, lo, name, sizeof(name));
		if (is_help(name))
			rc = 1;
		else if ((optopt != 0 || c == ':') && strncmp(name, "--", 2) == 0 &&
			 given_a_value(copy[optind - 1], lo))
			rc = usage_error(prog, words, "option '%s' takes no value", name);
		else if (c == ':')
			rc = usage_error(prog, words, "option '%s' needs a value", name);
		else if (optopt != 0 && strncmp(name, "--", 2) == 0)
			rc = usage_error(prog, words, "option '%s' takes no value", name);
		else
			rc = usage_error(prog, words, "unknown option '%s'", name);
	}
	*npos = argc - optind;
	if (rc == 0)
		rc = check_required(prog, words, d, seen, nseen);
	if (rc == 0 && d->max_args >= 0 && *npos > d->max_args)
		rc = usage_error(prog, words, "unexpected argument '%s'",
				 copy[optind + d->max_args]);
	free(copy);
	return rc;
}

/* Check the options and arguments of leaf d; argv[0] is its name. */
static int check_args(const char *prog, const char *words, const struct ct_cmd_def *d,
		      int argc, char **argv)
{
	int saved = opterr, npos = 0, rc = 0;

	if (d->own_opts) {
		for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
			if (is_help(argv[i]))
				rc = 1;
		npos = d->min_args;
	} else {
		opterr = 0;
		rc = scan_opts(prog, words, d, argc, argv, &npos);
		opterr = saved;
		optind = 0;	/* the handler parses from the start again */
	}
	if (rc == 1)
		print_usage(stdout, prog, words, d);
	else if (rc == 0 && npos < d->min_args)
		rc = ct_error(CT_EUSAGE, "%s: missing argument (usage: %s %s %.*s%s)", words,
			      prog, words, (int)strcspn(d->usage, "\n"), d->usage,
			      strchr(d->usage, '\n') ? " ..." : "");
	if (rc == 0 && d->check) {
		opterr = 0;
		rc = d->check(argc, argv);
		opterr = saved;
		optind = 0;
	}
	return rc;
}

static int append_word(char *words, const char *w)
{
	size_t n = strlen(words);

	if (n + strlen(w) + 2 > WORDS_CAP)
		return ct_error(CT_EUSAGE, "command too long");
	snprintf(words + n, WORDS_CAP - n, "%s%s", n ? " " : "", w);
	return 0;
}

int ct_cmd_resolve(const char *prog, const struct ct_cmd_def *const *table, int argc,
		   char **argv, const struct ct_cmd_def **def, int *nwords)
{
	const struct ct_cmd_def *d = NULL;
	char words[WORDS_CAP] = "";
	int help = 0, n = 0, rc;

	*def = NULL;
	*nwords = 0;
	if (argc > 0 && strcmp(argv[0], "help") == 0) {
		help = 1;
		argc--;
		argv++;
	}
	while (d == NULL || d->subs) {
		const struct ct_cmd_def *const *t = d ? d->subs : table;
		const struct ct_cmd_def *next;

		if (d && d->fn && n < argc && argv[n][0] == '-' && !is_help(argv[n]))
			break;	/* a group that runs itself on options ("chat --model") */
		if (d && (n >= argc || is_help(argv[n]))) {
			print_usage(help || n < argc ? stdout : stderr, prog, words, d);
			if (help || n < argc)
				return 1;
			return ct_error(CT_EUSAGE, "%s: missing command (one of the above)", words);
		}
		if (n >= argc)
			return ct_error(CT_EUSAGE, "missing command (see '%s --help')", prog);
		next = find(t, argv[n]);
		if (next == NULL && argv[n][0] == '-')
			return ct_error(CT_EUSAGE, "%s%sunknown option '%s' (see '%s%s%s --help')",
					words, words[0] ? ": " : "", argv[n], prog,
					words[0] ? " " : "", words);
		if (next == NULL)
			return ct_error(CT_EUSAGE, "unknown command '%s%s%s' (see '%s%s%s --help')",
					words, words[0] ? " " : "", argv[n], prog,
					words[0] ? " " : "", words);
		rc = append_word(words, argv[n]);
		if (rc < 0)
			return rc;
		d = next;
		n++;
	}
	if (help) {
		print_usage(stdout, prog, words, d);
		return 1;
	}
	rc = check_args(prog, words, d, argc - n + 1, argv + n - 1);
	if (rc != 0)
		return rc;
	*def = d;
	*nwords = n;
	return 0;
}

int ct_cmd_run(const char *prog, const struct ct_cmd_def *const *table,
	       struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const struct ct_cmd_def *def;
	int nw, rc;

	rc = ct_cmd_resolve(prog, table, argc, argv, &def, &nw);
	if (rc == 1)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, ct_errmsg(rc));
		return 2;
	}
	return def->fn(ctx, argc - nw + 1, argv + nw - 1);
}

const struct ct_cmd_def *ct_cmd_lookup(const struct ct_cmd_def *const *table, int argc,
				       char **argv, int *nwords)
{
	const struct ct_cmd_def *d = NULL;
	int n = 0;

	*nwords = 0;
	while (d == NULL || d->subs) {
		if (n >= argc)
			return NULL;
		d = find(d ? d->subs : table, argv[n]);
		if (d == NULL)
			return NULL;
		n++;
	}
	*nwords = n;
	return d;
}
