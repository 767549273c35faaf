/*
 * cl_buffer.c - see cl_buffer.h.
 */
#include "config.h"
#include "cl_buffer.h"
#include "cl_task.h"

#include <math.h>

#define BUFFER_MAX_TASKS 16	/* the scheduler's CT_SCHED_MAX_WANT */

double ct_buffer_task_tokens(const struct ct_task *t)
{
	struct ct_wu_hparams hp;
	double left;

	if (t->state != CT_TASK_DOWNLOADING && t->state != CT_TASK_READY &&
	    t->state != CT_TASK_RUNNING)
		return 0;
	if (ct_task_hparams(t, &hp) < 0)
		return 0;
	left = (double)hp.steps - (t->live_step > t->step ? (double)t->live_step
							 : t->step > 0 ? (double)t->step : 0);
	return left > 0 ? left * hp.B * hp.T : 0;
}

void ct_buffer_queued(const struct ct_project *p, int *ntasks, double *tokens)
{
	*ntasks = 0;
	*tokens = 0;
	for (size_t i = 0; i < p->ntasks; i++) {
		const struct ct_task *t = &p->tasks[i];

		if (t->state != CT_TASK_DOWNLOADING && t->state != CT_TASK_READY &&
		    t->state != CT_TASK_RUNNING)
			continue;
		(*ntasks)++;
		*tokens += ct_buffer_task_tokens(t);
	}
}

int ct_buffer_want(const struct ct_prefs *pr, int ntasks, double tokens,
		   double sec_per_token, double wu_tokens)
{
	int want = pr->work_buffer - ntasks;

	if (ntasks == 0 && want < 1)
		want = 1;
	if (sec_per_token > 0 && wu_tokens > 0) {
		double queued_s = tokens * sec_per_token, wu_s = wu_tokens * sec_per_token;

		if (queued_s < pr->work_buf_min) {
			int n = (int)ceil((pr->work_buf_max - queued_s) / wu_s);

			if (n < 1)
				n = 1;
			if (n > want)
				want = n;
		}
	}
	if (want > BUFFER_MAX_TASKS - ntasks)
		want = BUFFER_MAX_TASKS - ntasks;
	return want > 0 ? want : 0;
}
