/*
 * ct_test_ocl.h - what the OpenCL tests (test_ocl, test_ocl_kernels,
 * test_ocl_train) share: skipping, automake's way, on a machine without
 * any OpenCL device. Header-only (static inline).
 */
#ifndef CT_TEST_OCL_H
#define CT_TEST_OCL_H

#include "ct_test.h"
#include "ct_ocl.h"

/* 1 if this machine has no OpenCL device (after saying so on stderr), so
 * main() returns 77 and the test counts as skipped; else 0. */
static inline int ct_test_ocl_none(void)
{
	struct ct_ocl_devinfo *devs = NULL;
	int ndev = 0;

	ct_ocl_enumerate(&devs, &ndev);
	free(devs);
	if (ndev == 0) {
		fprintf(stderr, "SKIP: no OpenCL device on this machine\n");
		return 1;
	}
	return 0;
}

#endif
