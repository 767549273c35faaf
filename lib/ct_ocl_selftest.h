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

/* Run the self-test on `device`: *conforming = 1 if the digest equals
 * CT_OCL_SELFTEST_SHA256, else 0. Returns 0, or a CT_E* code when the
 * test could not run at all (no such device, build failure, out of
 * memory; *conforming = 0 then). */
int ct_ocl_selftest(const char *device, int *conforming);

#endif
