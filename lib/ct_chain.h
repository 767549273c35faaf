/*
 * ct_chain.h - a work unit's hash chain as results carry it
 * (doc/workunit.md §14, doc/validation.md "Disputes settled by
 * bisection"): which steps have links, how far apart they are, and the
 * chain's wire form.
 *
 * A WU of N steps with an interval S has links after steps S, 2S, ...
 * below N (digests of the whole training state, ct_wu_state_digest) and
 * a last one after step N, the result's hash: ceil(N / S) links. Link k
 * (0-based) is after step min((k + 1) S, N). On the wire and in the
 * database the chain is its links' SHA-256s in hex, back to back
 * (64 hex digits a link), at most CT_CHAIN_MAX_LINKS of them.
 *
 * Shared by the client (which records and reports the chain) and the
 * server (which chooses S, stores chains and bisects two of them). Pure
 * functions, no I/O.
 */
#ifndef CT_CHAIN_H
#define CT_CHAIN_H

#include <stddef.h>

#define CT_CHAIN_MAX_LINKS 128
#define CT_CHAIN_HEX_MAX (64 * CT_CHAIN_MAX_LINKS)

/* Hashing speed assumed against training speed when S is chosen: FLOPs a
 * training step does in the time SHA-256 takes for one byte of state.
 * Measured on this project's CPU (one 1.5 GB link in ~5.5 s; a 124M step
 * of 2 x 64 tokens, ~95 GFLOP, in ~9.3 s): ~38. A GPU trains faster
 * against the same hashing, so its share is larger there. */
#define CT_CHAIN_FLOPS_PER_BYTE 40.0

/* The interval S for a WU of `steps` steps that trains `ntrained` floats
 * (a link hashes them, their m and v: 12 bytes each) at `step_flops`
 * FLOPs a step: the smallest S whose links cost at most 1% of the
 * training by CT_CHAIN_FLOPS_PER_BYTE, and at least ceil(steps /
 * CT_CHAIN_MAX_LINKS); at most steps (then the chain is the result's
 * hash alone). 1 <= S <= steps; steps < 1 or a bad size gives 1. */
int ct_chain_every(int steps, double ntrained, double step_flops);

/* Links of a chain of interval every over steps steps: ceil(steps /
 * every); 0 when either is < 1. */
int ct_chain_nlinks(int steps, int every);

/* The step after which link k (0-based) lies: min((k + 1) every, steps). */
int ct_chain_link_step(int k, int steps, int every);

/* 1 if a link lies after step i (1-based) of a WU of steps steps. */
int ct_chain_due(int i, int steps, int every);

/* Check a chain's wire form: exactly ct_chain_nlinks(steps, every) links,
 * each 64 lower-case hex digits. Returns 0 or CT_EFORMAT with a detail. */
int ct_chain_check(const char *hex, int steps, int every);

/* First link (0-based) where the chains a and b (checked, n links each)
 * differ, or -1 when they are equal. */
int ct_chain_first_diff(const char *a, const char *b, int n);

/* Where two checked chains of a WU (steps, every) part: the first
 * differing link k, or -1 when they are equal. With k >= 0, *agreed is
 * the last step both chains vouch for (the step of link k-1; 0, the WU's
 * start, when k is 0) and *parted the step of link k: the runs part at
 * one of the steps *agreed + 1 .. *parted (that one step when every is
 * 1). With -1 both are steps. */
int ct_chain_parting(const char *a, const char *b, int steps, int every, int *agreed,
		     int *parted);

/* Link k of a checked chain into out (32 bytes). */
void ct_chain_link(const char *hex, int k, unsigned char out[32]);

#endif
