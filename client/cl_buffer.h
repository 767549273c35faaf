/*
 * cl_buffer.h - the work buffer: how many tasks to ask the scheduler for so
 * that between work_buf_min and work_buf_max seconds of computing are
 * queued (cl_prefs.h), estimated from the host's measured speed (seconds
 * per trained token, measured by the compute thread) and each WU's size
 * (steps x batch x seq tokens). Pure functions, tested without a network.
 */
#ifndef CT_CL_BUFFER_H
#define CT_CL_BUFFER_H

#include "cl_prefs.h"
#include "cl_state.h"

/* Tokens still to train in t (0 for a task past computing, or one whose
 * parameters do not parse). */
double ct_buffer_task_tokens(const struct ct_task *t);

/* What p has queued for the compute thread (DOWNLOADING, READY, RUNNING):
 * *ntasks tasks and *tokens tokens still to train. */
void ct_buffer_queued(const struct ct_project *p, int *ntasks, double *tokens);

/* Tasks to ask for. sec_per_token 0 means not measured yet; wu_tokens is
 * the size of a typical WU of the project (the newest one seen), 0 if
 * none. Rules: nothing queued -> at least 1; at least work_buffer tasks;
 * when the queued seconds fall below work_buf_min, enough WUs of
 * wu_tokens to reach work_buf_max; never more than 16 in all. */
int ct_buffer_want(const struct ct_prefs *pr, int ntasks, double tokens,
		   double sec_per_token, double wu_tokens);

#endif
