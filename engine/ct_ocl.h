/*
 * ct_ocl.h - the OpenCL runtime under crowdtune's opencl backend.
 *
 * Enumerates every device of every platform (with the properties the client
 * reports to the scheduler), opens one by a device spec ("opencl" = the
 * first GPU, else the first device; "opencl:N" = device N counted across
 * all platforms), and builds crowdtune's kernel program for it. The kernel
 * sources are embedded in the binary at build time (the kernels/ .cl files with
 * kernels/ct_math.clh in front, see tools/embed-cl); the program is always
 * built with CT_OCL_BUILD_OPTIONS (correctly rounded divide/sqrt, never
 * relaxed math) and its binary is cached per device under
 * $XDG_CACHE_HOME/crowdtune/kernels (or a directory the caller gives), keyed
 * by the SHA-256 of source, options, device and driver version. A cache
 * entry that is unreadable or corrupt is ignored and rebuilt.
 *
 * OpenCL errors map to CT_ECL with a detail naming the call and the CL
 * error, except allocation failures (CL_MEM_OBJECT_ALLOCATION_FAILURE,
 * CL_OUT_OF_RESOURCES on an allocation) which are CT_EDEVNOMEM.
 */
#ifndef CT_OCL_H
#define CT_OCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

/* Options every build of the program uses (the arithmetic contract). */
#define CT_OCL_BUILD_OPTIONS "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt"

enum ct_ocl_devtype {
	CT_OCL_TYPE_OTHER = 0,
	CT_OCL_TYPE_CPU = 1,
	CT_OCL_TYPE_GPU = 2,
	CT_OCL_TYPE_ACCEL = 3,
};

/* What the client knows and reports about one device. */
struct ct_ocl_devinfo {
	int index;			/* global index across platforms */
	int platform_index;
	char platform[128];		/* CL_PLATFORM_NAME */
	char platform_version[128];
	char name[128];			/* CL_DEVICE_NAME */
	char vendor[128];
	char version[128];		/* CL_DEVICE_VERSION */
	char driver[128];		/* CL_DRIVER_VERSION */
	char c_version[64];		/* CL_DEVICE_OPENCL_C_VERSION */
	enum ct_ocl_devtype type;
	uint64_t global_mem;		/* bytes */
	uint64_t local_mem;		/* bytes */
	uint64_t max_alloc;		/* bytes, largest single buffer */
	unsigned compute_units;
	unsigned clock_mhz;
	size_t max_wg;			/* max work-group size */
	int fp64;			/* 1 if doubles are supported */
	int correct_sqrt;		/* CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT */
	int fma;			/* CL_FP_FMA in single precision */
};

/* "GPU", "CPU", "accelerator" or "other". */
const char *ct_ocl_type_name(enum ct_ocl_devtype t);

/* List every device of every platform. *out is a malloc'd array of *count
 * entries that the caller free()s (NULL and 0 when there is none: no ICD,
 * no platform, or no device is not an error). Returns 0 or CT_ENOMEM. */
int ct_ocl_enumerate(struct ct_ocl_devinfo **out, int *count);

/* Parse a device spec: "opencl" -> *index = -1 (first GPU, else first
 * device), "opencl:N" -> N. Returns 0 or CT_EINVAL (detail says why). */
int ct_ocl_parse_spec(const char *spec, int *index);

/* An open device: context, in-order queue and built program. */
struct ct_ocl {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	cl_program program;
	struct ct_ocl_devinfo info;
	int from_cache;			/* 1 if the program came from the cache */
	/* matmul blocking: rows per work-item, vector width, vectors per row */
	int mm_r, mm_vw, mm_nv;
	int ew;				/* elements per work-item of elementwise kernels (CT_EW) */
	int att_r;			/* query (key) rows per attention work-item (CT_ATT_R) */
	/* tiled matmul (mm_tiled.cl): output tile, k slice, outputs per
	 * work-item; work-groups are (bn / rn) x (bm / rm) */
	int mmt_bm, mmt_bn, mmt_bk, mmt_rm, mmt_rn;
};

/* Open the device named by spec (see ct_ocl_parse_spec) and build the
 * kernel program with CT_OCL_BUILD_OPTIONS plus the blocking of the matmul
 * kernel chosen for the device's type (as -D options; the environment
 * variable CT_OCL_MM="R,VW,NV" overrides it for tuning, and
 * CT_OCL_MMT="BM,BN,BK,RM,RN" the tiled kernel's sizes: blocking never
 * changes results; CT_OCL_TEST_OPTIONS appends build options, for tests
 * that build deliberately non-conforming variants). cache_dir: directory for program binaries, NULL
 * for the default ($CTUNE_KERNEL_CACHE if set, else $XDG_CACHE_HOME or
 * ~/.cache, then /crowdtune/kernels), "" for no cache. On success *out is owned by the caller (ct_ocl_close).
 * Returns 0, CT_EINVAL (bad spec), CT_ENOTFOUND (no such device), CT_ECL
 * (context/queue/build failure; a build failure logs the build log), or
 * CT_ENOMEM; *out is NULL on failure. */
int ct_ocl_open(const char *spec, const char *cache_dir, struct ct_ocl **out);

/* Release everything ct_ocl_open created. NULL is a no-op. */
void ct_ocl_close(struct ct_ocl *ocl);

/* Create kernel `name` from the program into *out (caller releases with
 * clReleaseKernel). Returns 0 or CT_ECL. */
int ct_ocl_kernel(struct ct_ocl *ocl, const char *name, cl_kernel *out);

/* Allocate a device buffer of `bytes` (>0) with `flags`. Returns 0,
 * CT_EDEVNOMEM (naming the size and device) or CT_ECL; *out NULL on
 * failure. */
int ct_ocl_alloc(struct ct_ocl *ocl, size_t bytes, cl_mem_flags flags, cl_mem *out);

/* Release a buffer from ct_ocl_alloc, counting it off the statistics
 * below (clReleaseMemObject does the same without the counting). NULL: no-op. */
void ct_ocl_free(cl_mem m);

/* clReleaseMemObject(*m) when *m is not NULL, then *m = NULL (no
 * statistics: for buffers not from ct_ocl_alloc, or whose count the
 * caller does not want). */
void ct_ocl_unref(cl_mem *m);

/* ct_ocl_unref() on each of the n buffers; CT_OCL_UNREF_ALL(&a, &b, ...)
 * lists them in place. */
void ct_ocl_unref_n(cl_mem *const *bufs, size_t n);
#define CT_OCL_UNREF_ALL(...)						\
	ct_ocl_unref_n((cl_mem *const[]){ __VA_ARGS__ },		\
		       sizeof((cl_mem *const[]){ __VA_ARGS__ }) / sizeof(cl_mem *))

/* Statistics of this process's ct_ocl_alloc calls (for benchmarks): the
 * peak of the bytes live at once (buffers released with ct_ocl_free or
 * ct_ocl_unref are subtracted) and the largest single buffer. Either
 * pointer may be NULL. */
void ct_ocl_alloc_stats(size_t *peak, size_t *largest);

/* Start the peak over from the bytes live now, which it returns, and the
 * largest buffer from 0 (tests: the peak of one piece of work). */
size_t ct_ocl_alloc_mark(void);

/* CT_OCL_ALLOC_LOG=1: ct_ocl_alloc prints each buffer's size and the bytes
 * then live to stderr (where a peak goes: bench/bench_train). */

/* Bytes allocated by ct_ocl_alloc in this process so far, all devices,
 * never decremented (buffers grown on demand count each size they had):
 * an upper bound of the device memory a run used (bench/bench_lora). */
uint64_t ct_ocl_alloc_total(void);

/* Map a cl_int status to 0 (CL_SUCCESS) or a CT_E* code with a detail
 * "what: CL_ERROR_NAME (n)". Allocation failures give CT_EDEVNOMEM. */
int ct_ocl_check(cl_int err, const char *what);

/* Symbolic name of an OpenCL error ("CL_OUT_OF_RESOURCES"). Never NULL. */
const char *ct_ocl_strerror(cl_int err);

/* The embedded program source (generated at build time) and its length. */
extern const char ct_ocl_kernel_source[];
extern const size_t ct_ocl_kernel_source_len;

#endif
