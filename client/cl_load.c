/*
 * cl_load.c - see cl_load.h.
 */
#include "config.h"
#include "cl_load.h"
#include "ct_err.h"
#include "ct_os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ct_cpu_sampler_init(struct ct_cpu_sampler *s, const char *procroot)
{
	memset(s, 0, sizeof(*s));
	s->os_ticks = procroot == NULL;
	if (procroot == NULL)
		procroot = "/proc";
	if (asprintf(&s->stat_path, "%s/stat", procroot) < 0)
		s->stat_path = NULL;
	if (asprintf(&s->self_path, "%s/self/stat", procroot) < 0)
		s->self_path = NULL;
	if (s->stat_path == NULL || s->self_path == NULL) {
		ct_cpu_sampler_free(s);
		return CT_ENOMEM;
	}
	return 0;
}

void ct_cpu_sampler_free(struct ct_cpu_sampler *s)
{
	if (s == NULL)
		return;
	free(s->stat_path);
	free(s->self_path);
	s->stat_path = s->self_path = NULL;
}

/* The "cpu " line of /proc/stat: busy and total ticks. */
static int read_machine(const char *path, unsigned long long *busy,
			unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	char line[512];
	int n, rc = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return ct_error(CT_EIO, "%s: cannot open", path);
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	/* user nice system idle iowait irq softirq steal (guest is in user) */
	n = sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		rc = ct_error(CT_EFORMAT, "%s: no cpu line", path);
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total = *busy + v[3] + v[4];
	return rc;
}

/* utime + stime of /proc/self/stat (fields 14 and 15; the command name in
 * field 2 may hold spaces and parentheses, so parse after the last ')'). */
static int read_self(const char *path, unsigned long long *ticks)
{
	unsigned long long ut, st;
	char buf[2048], *p;
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return ct_error(CT_EIO, "%s: cannot open", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt(13) utime(14) stime(15) */
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) != 2)
		return ct_error(CT_EFORMAT, "%s: cannot parse", path);
	*ticks = ut + st;
	return 0;
}

int ct_cpu_other_percent(struct ct_cpu_sampler *s, double *pct)
{
	unsigned long long busy, total, self;
	double dbusy, dtotal, dself, other;
	int rc, primed = s->primed;

	rc = s->os_ticks ? ct_os_cpu_ticks(&busy, &total, &self) : CT_EUNSUPP;
	if (rc == CT_EUNSUPP) {
		rc = read_machine(s->stat_path, &busy, &total);
		if (rc == 0) rc = read_self(s->self_path, &self);
	}
	if (rc < 0)
		return rc;
	dbusy = (double)busy - (double)s->busy;
	dtotal = (double)total - (double)s->total;
	dself = (double)self - (double)s->self;
	s->busy = busy;
	s->total = total;
	s->self = self;
	s->primed = 1;
	if (!primed || dtotal <= 0)
		return CT_EAGAIN;
	other = dbusy - dself;
	if (other < 0)
		other = 0;	/* the two files are sampled at slightly different times */
	*pct = 100.0 * other / dtotal;
	if (*pct > 100)
		*pct = 100;
	return 0;
}
