/*
 * cl_load.h - how busy the machine is with work that is not ours: the
 * input of the "suspend when non-crowdtune CPU usage is above X%"
 * preference (suspend_cpu_percent, cl_prefs.h).
 *
 * Between two samples: the CPU time the whole machine spent busy
 * (/proc/stat: user, nice, system, irq, softirq, steal) minus the CPU time
 * of this process, all its threads (/proc/self/stat: utime + stime), as a
 * percentage of the machine's total (busy + idle + iowait) time. Both files
 * count in the same USER_HZ ticks.
 */
#ifndef CT_CL_LOAD_H
#define CT_CL_LOAD_H

struct ct_cpu_sampler {
	char *stat_path, *self_path;	/* /proc/stat, /proc/self/stat */
	unsigned long long busy, total, self;	/* the previous sample */
	int primed;
	int os_ticks;			/* the OS's own counters (ct_os_cpu_ticks) */
};

/* Set up a sampler on procroot (NULL: the OS's counters, on Linux
 * "/proc"; tests pass a directory holding stat and self/stat). Returns 0 or
 * CT_ENOMEM. */
int ct_cpu_sampler_init(struct ct_cpu_sampler *s, const char *procroot);

/* Percent (0..100) of the machine used by other processes since the last
 * call into *pct. The first call only takes a sample and returns CT_EAGAIN
 * (no interval yet); so does a call with no time elapsed. CT_EIO/CT_EFORMAT
 * when the files cannot be read. */
int ct_cpu_other_percent(struct ct_cpu_sampler *s, double *pct);

/* Release the sampler's paths (NULL-safe). */
void ct_cpu_sampler_free(struct ct_cpu_sampler *s);

#endif
