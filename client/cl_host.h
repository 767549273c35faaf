/*
 * cl_host.h - what the client tells the scheduler about its machine, and
 * which device it computes on.
 *
 * At start-up the daemon lists the OpenCL devices (ct_ocl_enumerate), runs
 * the conformance self-test on each (OPENCL's ct_ocl_selftest: a few
 * training steps compared bit for bit with the C reference; without the
 * test, with --no-selftest, a device counts as not conforming), and
 * chooses the compute device: with device "auto", the first conforming
 * GPU, else the first conforming OpenCL device, else the C reference
 * ("cpu"). A non-conforming device is still used when asked for by name:
 * the server then validates its results by tolerance.
 */
#ifndef CT_CL_HOST_H
#define CT_CL_HOST_H

#include "ct_buf.h"

struct ct_host_device {
	char name[128];
	char vendor[128];
	char type[16];			/* "gpu", "cpu", "accelerator", "other" */
	unsigned long long global_mem;
	unsigned compute_units;
	int conforming;			/* 1 passed, 0 failed or not tested */
};

struct ct_host {
	char hostname[256];
	char os[256];
	char cpu_model[256];
	int ncpus;
	unsigned long long ram_bytes;
	struct ct_host_device *devices;	/* index = OpenCL index N of "opencl:N" */
	int ndevices;
	char device[32];		/* chosen: "cpu" or "opencl:N" */
	int device_is_gpu;
	int device_conforming;		/* the C reference conforms by definition */
};

/* Describe this machine. With selftest set, run the conformance test on
 * each OpenCL device (seconds on PoCL). Never fails for a missing OpenCL
 * runtime: no devices is a valid description. Returns 0 or CT_ENOMEM. */
int ct_host_probe(struct ct_host *h, int selftest);

/* The memory the chosen device offers one WU (reported as host/work_mem;
 * the server sends no WU that needs more, doc/workunit.md §13 "Memory"):
 * the OpenCL device's global memory, or RAM for "cpu". 0 if unknown. */
unsigned long long ct_host_work_mem(const struct ct_host *h);

/* The backend that memory is for (reported as host/work_backend: the
 * server holds "cpu" to the C reference's larger need): "opencl" or
 * "cpu". */
const char *ct_host_work_backend(const struct ct_host *h);

/* Choose h->device from a preference "auto", "cpu", "opencl", "opencl:N".
 * Returns 0, or CT_ENOTFOUND when an OpenCL device was named but does not
 * exist (the caller may fall back to "cpu"). */
int ct_host_choose(struct ct_host *h, const char *pref);

/* Append the <host>...</host> element of the scheduler request. */
int ct_host_to_xml(const struct ct_host *h, struct ct_buf *b);

void ct_host_free(struct ct_host *h);

#endif
