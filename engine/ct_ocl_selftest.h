/*
 * ct_ocl_selftest.h - the conformance self-test of an OpenCL device.
 *
 * A tiny fixed work unit (a small GPT-2 from a fixed seed, a fixed token
 * stream, a few AdamW steps with weight decay and gradient clipping) is run
 * on the device; the SHA-256 of the resulting weights and step losses must
 * equal CT_OCL_SELFTEST_SHA256, the digest the C reference produces (a unit
 * test checks that the reference still produces it). A device that matches
 * computes crowdtune's arithmetic bit for bit, so its results can be
 * validated by hash; one that does not is validated by tolerance.
 * Before it, arithmetic probes (ct_ocl_conform_probes) check what a small
 * work unit may not reach: subnormal results, contraction, long reductions.
 */
#ifndef CT_OCL_SELFTEST_H
#define CT_OCL_SELFTEST_H

#include "ct_hash.h"

/* SHA-256 (hex) of the self-test's weights + losses on the C reference. */
#define CT_OCL_SELFTEST_SHA256 \
	"8b21cdb78d462490e180e02faa17906d618cf3bce7b82402bc2c6f0563c889bb"

/* Run the self-test work unit on `device` ("cpu", "opencl", "opencl:N")
 * and put the SHA-256 of its weights and losses (float32 bytes, weights
 * first) into digest. Returns 0 or the backend's CT_E* code. */
int ct_ocl_selftest_digest(const char *device, unsigned char digest[CT_SHA256_LEN]);

/* The arithmetic probes (engine/ct_ocl_conform.c): the engine's kernels on
 * inputs that give subnormal results (exp, e/sum, g*g, attention weights),
 * products followed by additions (which differ if the compiler contracts
 * them into fmas) and long reductions, each compared with the C reference
 * bit for bit. One check per kind, with the first mismatch in detail. */
#define CT_CONFORM_MAX 8
#define CT_CONFORM_DETAIL 192
#define CT_CONFORM_CORRUPT_REF 1u	/* testing: spoil one bit of every reference */

struct ct_conform_check {
	const char *name;		/* static */
	int ok;
	char detail[CT_CONFORM_DETAIL];	/* first mismatch, "" when ok */
};

struct ct_conform_report {
	int n;
	struct ct_conform_check check[CT_CONFORM_MAX];
};

/* Run the probes on `device` ("opencl:N"); flags 0 (or
 * CT_CONFORM_CORRUPT_REF in tests, which must make every check fail).
 * Returns 0 with rep filled, or a CT_E* code when the device could not be
 * opened or a launch failed (rep zeroed). */
int ct_ocl_conform_probes(const char *device, unsigned flags, struct ct_conform_report *rep);

/* The full self-test: the probes, then the work unit's digest (one more
 * check, "work unit digest"); *conforming = 1 only if every check passed.
 * Returns 0 or a CT_E* code (see ct_ocl_selftest; *conforming = 0). */
int ct_ocl_selftest_report(const char *device, struct ct_conform_report *rep,
			   int *conforming);

/* Run the self-test on `device` (ct_ocl_selftest_report without the
 * report): *conforming = 1 if every probe matched and the digest equals
 * CT_OCL_SELFTEST_SHA256, else 0. Returns 0, or a CT_E* code when the
 * test could not run at all (no such device, build failure, out of
 * memory; *conforming = 0 then). */
int ct_ocl_selftest(const char *device, int *conforming);

#endif
