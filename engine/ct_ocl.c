/*
 * ct_ocl.c - OpenCL runtime: device enumeration, device selection, program
 * build with a per-device binary cache, error mapping. See ct_ocl.h.
 */
#include "ct_ocl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_options.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_model.h"

#define CT_OCL_MAX_PLATFORMS 16
#define CT_OCL_MAX_DEVICES 64
/* Largest program binary the cache accepts (a corrupt size field is
 * rejected before allocating). */
#define CT_OCL_MAX_BINARY (256u << 20)
static const char cache_magic[8] = { 'C', 'T', 'K', 'B', 'I', 'N', '1', '\n' };

/* ---- error names ---------------------------------------------------------- */

#define CT_CL_ERRORS(X) \
	X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE) \
	X(CL_COMPILER_NOT_AVAILABLE) X(CL_MEM_OBJECT_ALLOCATION_FAILURE) \
	X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY) \
	X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP) \
	X(CL_IMAGE_FORMAT_MISMATCH) X(CL_IMAGE_FORMAT_NOT_SUPPORTED) \
	X(CL_BUILD_PROGRAM_FAILURE) X(CL_MAP_FAILURE) \
	X(CL_MISALIGNED_SUB_BUFFER_OFFSET) \
	X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
	X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINKER_NOT_AVAILABLE) \
	X(CL_LINK_PROGRAM_FAILURE) X(CL_DEVICE_PARTITION_FAILED) \
	X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE) \
	X(CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE) \
	X(CL_INVALID_CONTEXT) X(CL_INVALID_QUEUE_PROPERTIES) \
	X(CL_INVALID_COMMAND_QUEUE) X(CL_INVALID_HOST_PTR) \
	X(CL_INVALID_MEM_OBJECT) X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) \
	X(CL_INVALID_IMAGE_SIZE) X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY) \
	X(CL_INVALID_BUILD_OPTIONS) X(CL_INVALID_PROGRAM) \
	X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME) \
	X(CL_INVALID_KERNEL_DEFINITION) X(CL_INVALID_KERNEL) \
	X(CL_INVALID_ARG_INDEX) X(CL_INVALID_ARG_VALUE) X(CL_INVALID_ARG_SIZE) \
	X(CL_INVALID_KERNEL_ARGS) X(CL_INVALID_WORK_DIMENSION) \
	X(CL_INVALID_WORK_GROUP_SIZE) X(CL_INVALID_WORK_ITEM_SIZE) \
	X(CL_INVALID_GLOBAL_OFFSET) X(CL_INVALID_EVENT_WAIT_LIST) \
	X(CL_INVALID_EVENT) X(CL_INVALID_OPERATION) X(CL_INVALID_GL_OBJECT) \
	X(CL_INVALID_BUFFER_SIZE) X(CL_INVALID_MIP_LEVEL) \
	X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY) \
	X(CL_INVALID_IMAGE_DESCRIPTOR) X(CL_INVALID_COMPILER_OPTIONS) \
	X(CL_INVALID_LINKER_OPTIONS) X(CL_INVALID_DEVICE_PARTITION_COUNT)

const char *ct_ocl_strerror(cl_int err)
{
	switch (err) {
#define CT_CL_ERR_CASE_(e) case e: return #e;
	CT_CL_ERRORS(CT_CL_ERR_CASE_)
#undef CT_CL_ERR_CASE_
	case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
	default: return "CL_UNKNOWN_ERROR";
	}
}

int ct_ocl_check(cl_int err, const char *what)
{
	if (err == CL_SUCCESS)
		return 0;
	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES)
		return ct_error(CT_EDEVNOMEM, "%s: out of device memory or resources (%s, %d)",
				what, ct_ocl_strerror(err), (int)err);
	return ct_error(CT_ECL, "%s: %s (%d)", what, ct_ocl_strerror(err), (int)err);
}

const char *ct_ocl_type_name(enum ct_ocl_devtype t)
{
	switch (t) {
	case CT_OCL_TYPE_CPU: return "CPU";
	case CT_OCL_TYPE_GPU: return "GPU";
	case CT_OCL_TYPE_ACCEL: return "accelerator";
	default: return "other";
	}
}

/* ---- enumeration ----------------------------------------------------------- */

static void dev_str(cl_device_id d, cl_device_info what, char *out, size_t cap)
{
	out[0] = '\0';
	if (clGetDeviceInfo(d, what, cap - 1, out, NULL) != CL_SUCCESS)
		snprintf(out, cap, "?");
	out[cap - 1] = '\0';
}

static void plat_str(cl_platform_id p, cl_platform_info what, char *out, size_t cap)
{
	out[0] = '\0';
	if (clGetPlatformInfo(p, what, cap - 1, out, NULL) != CL_SUCCESS)
		snprintf(out, cap, "?");
	out[cap - 1] = '\0';
}

static void fill_info(cl_platform_id p, cl_device_id d, struct ct_ocl_devinfo *in)
{
	cl_device_type type = 0;
	cl_ulong u = 0;
	cl_uint n = 0;
	size_t wg = 0;
	cl_device_fp_config fp = 0;

	plat_str(p, CL_PLATFORM_NAME, in->platform, sizeof(in->platform));
	plat_str(p, CL_PLATFORM_VERSION, in->platform_version, sizeof(in->platform_version));
	dev_str(d, CL_DEVICE_NAME, in->name, sizeof(in->name));
	dev_str(d, CL_DEVICE_VENDOR, in->vendor, sizeof(in->vendor));
	dev_str(d, CL_DEVICE_VERSION, in->version, sizeof(in->version));
	dev_str(d, CL_DRIVER_VERSION, in->driver, sizeof(in->driver));
	dev_str(d, CL_DEVICE_OPENCL_C_VERSION, in->c_version, sizeof(in->c_version));
	clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	in->type = (type & CL_DEVICE_TYPE_GPU) ? CT_OCL_TYPE_GPU :
		   (type & CL_DEVICE_TYPE_CPU) ? CT_OCL_TYPE_CPU :
		   (type & CL_DEVICE_TYPE_ACCELERATOR) ? CT_OCL_TYPE_ACCEL : CT_OCL_TYPE_OTHER;
	if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
		in->global_mem = u;
	if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
		in->local_mem = u;
	if (clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
		in->max_alloc = u;
	if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(n), &n, NULL) == CL_SUCCESS)
		in->compute_units = n;
	if (clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(n), &n, NULL) == CL_SUCCESS)
		in->clock_mhz = n;
	if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL) == CL_SUCCESS)
		in->max_wg = wg;
	fp = 0;
	if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp), &fp, NULL) == CL_SUCCESS)
		in->fp64 = fp != 0;
	fp = 0;
	if (clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL) == CL_SUCCESS) {
		in->correct_sqrt = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
		in->fma = (fp & CL_FP_FMA) != 0;
	}
}

/* Walk all platforms and their devices in order, filling infos[n] and the
 * platform/device handles (each array may be NULL) for at most cap
 * devices. Returns the number seen (0 when there is no ICD or platform). */
static int walk_devices(struct ct_ocl_devinfo *infos, int cap,
			cl_platform_id *plats_out, cl_device_id *devs_out)
{
	cl_platform_id plats[CT_OCL_MAX_PLATFORMS];
	cl_uint np = 0;
	int n = 0;

	if (clGetPlatformIDs(CT_OCL_MAX_PLATFORMS, plats, &np) != CL_SUCCESS)
		return 0;
	if (np > CT_OCL_MAX_PLATFORMS)
		np = CT_OCL_MAX_PLATFORMS;
	for (cl_uint p = 0; p < np && n < cap; p++) {
		cl_device_id devs[CT_OCL_MAX_DEVICES];
		cl_uint nd = 0;

		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, CT_OCL_MAX_DEVICES,
				   devs, &nd) != CL_SUCCESS)
			continue;
		if (nd > CT_OCL_MAX_DEVICES)
			nd = CT_OCL_MAX_DEVICES;
		for (cl_uint d = 0; d < nd && n < cap; d++, n++) {
			if (infos != NULL) {
				memset(&infos[n], 0, sizeof(infos[n]));
				infos[n].index = n;
				infos[n].platform_index = (int)p;
				fill_info(plats[p], devs[d], &infos[n]);
			}
			if (plats_out != NULL)
				plats_out[n] = plats[p];
			if (devs_out != NULL)
				devs_out[n] = devs[d];
		}
	}
	return n;
}

int ct_ocl_enumerate(struct ct_ocl_devinfo **out, int *count)
{
	struct ct_ocl_devinfo *infos;
	int n;

	*out = NULL;
	*count = 0;
	infos = calloc(CT_OCL_MAX_DEVICES, sizeof(*infos));
	if (infos == NULL)
		return ct_error(CT_ENOMEM, "device list");
	n = walk_devices(infos, CT_OCL_MAX_DEVICES, NULL, NULL);
	if (n == 0) {
		free(infos);
		return 0;
	}
	*out = infos;
	*count = n;
	return 0;
}

int ct_ocl_parse_spec(const char *spec, int *index)
{
	char *end = NULL;
	long v;

	*index = -1;
	if (spec == NULL || strcmp(spec, "opencl") == 0)
		return 0;
	if (strncmp(spec, "opencl:", 7) != 0 || spec[7] == '\0')
		return ct_error(CT_EINVAL, "bad device '%s' (want opencl or opencl:N)",
				spec);
	errno = 0;
	v = strtol(spec + 7, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v >= CT_OCL_MAX_DEVICES)
		return ct_error(CT_EINVAL, "bad device index in '%s'", spec);
	*index = (int)v;
	return 0;
}

/* ---- program cache --------------------------------------------------------- */

/* Default cache directory into out (cap bytes); "" when there is none. */
static void default_cache_dir(char *out, size_t cap)
{
	const char *e = ct_opt_str(CT_OPT_KERNEL_CACHE);
	const char *x = ct_opt_str(CT_OPT_XDG_CACHE_HOME);
	const char *h = ct_opt_str(CT_OPT_HOME);

	out[0] = '\0';
	if (e != NULL)
		snprintf(out, cap, "%s", e);
	else if (x != NULL && x[0] == '/')
		snprintf(out, cap, "%s/crowdtune/kernels", x);
	else if (h != NULL && h[0] == '/')
		snprintf(out, cap, "%s/.cache/crowdtune/kernels", h);
}

/* Cache key: SHA-256 over source, options and the device's identity. */
static void cache_key(const struct ct_ocl *ocl, const char *options, char hex[65])
{
	struct ct_sha256_ctx *c = NULL;
	unsigned char d[CT_SHA256_LEN];
	const char *parts[] = {
		options, ocl->info.platform, ocl->info.platform_version,
		ocl->info.name, ocl->info.vendor, ocl->info.version, ocl->info.driver,
	};

	if (ct_sha256_init(&c) < 0) {
		hex[0] = '\0';
		return;
	}
	ct_sha256_update(c, ct_ocl_kernel_source, ct_ocl_kernel_source_len);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		ct_sha256_update(c, parts[i], strlen(parts[i]) + 1);
	if (ct_sha256_final(c, d) < 0) {
		hex[0] = '\0';
		return;
	}
	ct_hex_encode(d, sizeof(d), hex);
}

/* Read a cached binary: magic, SHA-256 of the payload, payload. Returns 0
 * and a malloc'd payload, or <0 when absent or corrupt. */
static int cache_read(const char *path, unsigned char **bin, size_t *len)
{
	unsigned char *data = NULL, d[CT_SHA256_LEN];
	size_t n = 0;
	const size_t hdr = sizeof(cache_magic) + CT_SHA256_LEN;
	int rc;

	*bin = NULL;
	*len = 0;
	rc = ct_file_read_all(path, CT_OCL_MAX_BINARY, &data, &n);
	if (rc < 0)
		return rc;
	if (n <= hdr || memcmp(data, cache_magic, sizeof(cache_magic)) != 0)
		goto corrupt;
	ct_sha256(data + hdr, n - hdr, d);
	if (memcmp(d, data + sizeof(cache_magic), CT_SHA256_LEN) != 0)
		goto corrupt;
	memmove(data, data + hdr, n - hdr);
	*bin = data;
	*len = n - hdr;
	return 0;
corrupt:
	free(data);
	ct_log_warn("kernel cache %s is corrupt; rebuilding", path);
	return ct_error(CT_ECORRUPT, "%s: corrupt kernel cache entry", path);
}

/* Write the program's binary to the cache, atomically. Failures only warn:
 * the cache is an optimisation. */
static void cache_write(const struct ct_ocl *ocl, const char *dir, const char *path)
{
	size_t size = 0;
	unsigned char *bin = NULL, d[CT_SHA256_LEN];
	struct ct_afile af;
	int rc;

	memset(&af, 0, sizeof(af));
	if (clGetProgramInfo(ocl->program, CL_PROGRAM_BINARY_SIZES, sizeof(size),
			     &size, NULL) != CL_SUCCESS || size == 0 ||
	    size > CT_OCL_MAX_BINARY)
		return;
	bin = malloc(size);
	if (bin == NULL)
		return;
	if (clGetProgramInfo(ocl->program, CL_PROGRAM_BINARIES, sizeof(bin),
			     &bin, NULL) != CL_SUCCESS)
		goto out;
	ct_sha256(bin, size, d);
	rc = ct_mkdir_p(dir, 0700);
	if (rc == 0)
		rc = ct_afile_open(&af, path, 0600);
	if (rc == 0)
		rc = ct_afile_write(&af, cache_magic, sizeof(cache_magic));
	if (rc == 0)
		rc = ct_afile_write(&af, d, sizeof(d));
	if (rc == 0)
		rc = ct_afile_write(&af, bin, size);
	if (rc == 0)
		rc = ct_afile_commit(&af);
	else
		ct_afile_abort(&af);
	if (rc < 0)
		ct_log_debug("kernel cache not written: %s", ct_errmsg(rc));
out:
	free(bin);
}

/* ---- program build --------------------------------------------------------- */

/* Log the program's build log, if it says anything, at `level` (errors
 * after a failure; warnings of a good build only at debug level). */
static void log_build(struct ct_ocl *ocl, enum ct_log_level level)
{
	size_t n = 0;
	char *log;

	if (clGetProgramBuildInfo(ocl->program, ocl->device, CL_PROGRAM_BUILD_LOG,
				  0, NULL, &n) != CL_SUCCESS || n == 0)
		return;
	if (n > (1u << 20))
		n = 1u << 20;
	log = malloc(n + 1);
	if (log == NULL)
		return;
	if (clGetProgramBuildInfo(ocl->program, ocl->device, CL_PROGRAM_BUILD_LOG,
				  n, log, NULL) == CL_SUCCESS) {
		log[n] = '\0';
		if (log[strspn(log, " \t\r\n")] != '\0')
			ct_log(level, "OpenCL build log for %s:\n%s", ocl->info.name, log);
	}
	free(log);
}

/* Try the cached binary; 0 if ocl->program is built from it. */
static int build_from_cache(struct ct_ocl *ocl, const char *path, const char *options)
{
	unsigned char *bin = NULL;
	const unsigned char *cbin;
	size_t len = 0;
	cl_int err = CL_SUCCESS, st = CL_SUCCESS;
	int rc;

	rc = cache_read(path, &bin, &len);
	if (rc < 0)
		return rc;
	cbin = bin;
	ocl->program = clCreateProgramWithBinary(ocl->ctx, 1, &ocl->device, &len,
						 &cbin, &st, &err);
	free(bin);
	if (err == CL_SUCCESS && st == CL_SUCCESS)
		err = clBuildProgram(ocl->program, 1, &ocl->device, options, NULL, NULL);
	if (err != CL_SUCCESS || st != CL_SUCCESS) {
		if (ocl->program != NULL)
			clReleaseProgram(ocl->program);
		ocl->program = NULL;
		ct_log_warn("kernel cache %s unusable (%s); rebuilding", path,
			    ct_ocl_strerror(err != CL_SUCCESS ? err : st));
		return ct_error(CT_ECORRUPT, "kernel cache entry unusable");
	}
	return 0;
}

/* Matmul blocking for the device: register blocks of the CPU's vectors,
 * small ones elsewhere. With 16-float native vectors (AVX-512: 32 vector
 * registers) 6 rows x 4 float16 (24 accumulators, 10 loads per 24 fmas)
 * measured ~15% faster on the model's products than 8 x 2 (doc/results.md,
 * "CPU matmul blocking"). With 8-float ones (AVX2: 16 registers) 6 rows x
 * 2 float8 (12 accumulators, BLIS's Haswell shape): 8 x 2 of float16 needs
 * 32 registers, and PoCL built for Haswell ran it 20% slower per product
 * and 10% per 124M step (doc/results.md). Other CPUs keep 8 x 2
 * of float16 (not measured: without FMA hardware fma() is a library call).
 * CT_OCL_MM="R,VW,NV" overrides (tuning only; results never change).
 * Also the elementwise kernels' elements per work-item (ocl->ew) and the
 * attention kernels' rows (ocl->att_r). */

static int choose_blocking(struct ct_ocl *ocl)
{
	const char *env = ct_opt_str(CT_OPT_OCL_MM);
	cl_uint native = 0;
	int r, vw, nv, rc;

	/* CPUs: 16 elements per work-item of the elementwise kernels, run as
	 * vector loops (see kernels/ct_math.clh, CT_EW); CT_OCL_EW=N overrides */
	ocl->ew = ocl->info.type == CT_OCL_TYPE_CPU ? 16 : 1;
	/* attention.cl: 8 rows per work-item on CPUs (GPT-2 124M at T=1024 on
	 * PoCL, 2 cores: attention 3.05 s per step at 1 row, 1.29 s at 4, 1.04
	 * s at 8); 1 elsewhere, where 8 rows' private arrays would spill (GPUs
	 * run attn_tiled.cl for heads of up to 64 channels, these kernels for
	 * wider ones); CT_OCL_ATT_R=N overrides */
	ocl->att_r = ocl->info.type == CT_OCL_TYPE_CPU ? 8 : 1;
	rc = ct_options_check();	/* a value that does not parse is refused by name */
	if (rc < 0)
		return rc;
	ocl->ew = (int)ct_opt_int(CT_OPT_OCL_EW, ocl->ew);
	ocl->att_r = (int)ct_opt_int(CT_OPT_OCL_ATT_R, ocl->att_r);
	if (ocl->info.type == CT_OCL_TYPE_CPU &&
	    clGetDeviceInfo(ocl->device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof(native),
			    &native, NULL) == CL_SUCCESS && native >= 16) {
		ocl->mm_r = 6; ocl->mm_vw = 16; ocl->mm_nv = 4;
	} else if (ocl->info.type == CT_OCL_TYPE_CPU && native == 8) {
		ocl->mm_r = 6; ocl->mm_vw = 8; ocl->mm_nv = 2;
	} else if (ocl->info.type == CT_OCL_TYPE_CPU) {
		ocl->mm_r = 8; ocl->mm_vw = 16; ocl->mm_nv = 2;
	} else {
		ocl->mm_r = 4; ocl->mm_vw = 4; ocl->mm_nv = 2;
	}
	if (env == NULL || env[0] == '\0')
		return 0;
	if (sscanf(env, "%d,%d,%d", &r, &vw, &nv) != 3 || r < 1 || r > 16 ||
	    (vw != 2 && vw != 4 && vw != 8 && vw != 16) || nv < 1 || nv > 8)
		return ct_error(CT_EINVAL, "CT_OCL_MM='%s': want R,VW,NV "
				"(R 1..16, VW 2/4/8/16, NV 1..8)", env);
	ocl->mm_r = r; ocl->mm_vw = vw; ocl->mm_nv = nv;
	return 0;
}

/* Tiles of the local-memory matmul (mm_tiled.cl): on big devices (32 or
 * more compute units, groups of 256, 16 KiB of local memory) 128 x 64
 * outputs per group of 16 x 16 work-items (8 x 4 each); with groups of 256
 * and 16 KiB otherwise 64 x 64 (4 x 4 each); else 32 x 32 per group of
 * 8 x 8. CT_OCL_MMT="BM,BN,BK,RM,RN" overrides (tuning, tests; results
 * never change). */
static int choose_tiles(struct ct_ocl *ocl)
{
	const char *env = ct_opt_str(CT_OPT_OCL_MMT);
	int bm, bn, bk, rm, rn;

	if (ocl->info.max_wg >= 256 && ocl->info.local_mem >= 16384 &&
	    ocl->info.compute_units >= 32) {
		bm = 128; bn = 64; bk = 16; rm = 8; rn = 4;
	} else if (ocl->info.max_wg >= 256 && ocl->info.local_mem >= 16384) {
		bm = 64; bn = 64; bk = 16; rm = 4; rn = 4;
	} else {
		bm = 32; bn = 32; bk = 16; rm = 4; rn = 4;
	}
	if (env != NULL && env[0] != '\0' &&
	    (sscanf(env, "%d,%d,%d,%d,%d", &bm, &bn, &bk, &rm, &rn) != 5 ||
	     bm < 1 || bn < 1 || bk < 1 || bk > 64 || rm < 1 || rn < 1 || rm > 16 ||
	     rn > 16 || bm % rm != 0 || bn % rn != 0 || bm > 512 || bn > 512 ||
	     (bm / rm) * (bn / rn) > 1024))
		return ct_error(CT_EINVAL, "CT_OCL_MMT='%s': want BM,BN,BK,RM,RN (RM "
				"dividing BM, RN dividing BN, at most 1024 work-items, "
				"BK 1..64)", env);
	ocl->mmt_bm = bm; ocl->mmt_bn = bn; ocl->mmt_bk = bk;
	ocl->mmt_rm = rm; ocl->mmt_rn = rn;
	return 0;
}

static int build_program(struct ct_ocl *ocl, const char *cache_dir)
{
	char options[1024], dir[3072], path[3200], key[CT_SHA256_HEXLEN + 1];
	const char *src = ct_ocl_kernel_source;
	size_t len = ct_ocl_kernel_source_len;
	cl_int err;
	int rc;

	rc = choose_blocking(ocl);
	if (rc == 0)
		rc = choose_tiles(ocl);
	if (rc < 0)
		return rc;
	/* the reference's constants, exactly (hex float) */
	snprintf(options, sizeof(options), "%s -DCT_MM_R=%d -DCT_MM_VW=%d -DCT_MM_NV=%d "
		 "-DCT_MMT_BM=%d -DCT_MMT_BN=%d -DCT_MMT_BK=%d -DCT_MMT_RM=%d -DCT_MMT_RN=%d "
		 "-DCT_LN_EPS=%af -DCT_CLIP_CHUNK=%d -DCT_EW=%d -DCT_ATT_R=%d",
		 CT_OCL_BUILD_OPTIONS, ocl->mm_r, ocl->mm_vw, ocl->mm_nv,
		 ocl->mmt_bm, ocl->mmt_bn, ocl->mmt_bk, ocl->mmt_rm, ocl->mmt_rn,
		 (double)CT_LN_EPS, CT_CLIP_CHUNK, ocl->ew, ocl->att_r);
	if (ct_opt_str(CT_OPT_OCL_TEST_OPTIONS) != NULL) {	/* tests: wrong builds */
		size_t used = strlen(options);

		snprintf(options + used, sizeof(options) - used, " %s",
			 ct_opt_str(CT_OPT_OCL_TEST_OPTIONS));
	}
	if (cache_dir == NULL)
		default_cache_dir(dir, sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "%s", cache_dir);
	path[0] = '\0';
	if (dir[0] != '\0') {
		cache_key(ocl, options, key);
		if (key[0] != '\0')
			snprintf(path, sizeof(path), "%s/%s.bin", dir, key);
	}
	if (path[0] != '\0' && build_from_cache(ocl, path, options) == 0) {
		ocl->from_cache = 1;
		return 0;
	}
	ocl->program = clCreateProgramWithSource(ocl->ctx, 1, &src, &len, &err);
	if (err != CL_SUCCESS)
		return ct_ocl_check(err, "clCreateProgramWithSource");
	err = clBuildProgram(ocl->program, 1, &ocl->device, options, NULL, NULL);
	if (err != CL_SUCCESS) {
		log_build(ocl, CT_LOG_ERROR);
		return ct_error(CT_ECL, "building the kernels for %s failed (%s); "
				"see the build log above", ocl->info.name,
				ct_ocl_strerror(err));
	}
	log_build(ocl, CT_LOG_DEBUG);
	if (path[0] != '\0')
		cache_write(ocl, dir, path);
	return 0;
}

/* ---- open/close ------------------------------------------------------------ */

static int pick_device(int want, struct ct_ocl *ocl)
{
	struct ct_ocl_devinfo *infos = NULL;
	cl_platform_id plats[CT_OCL_MAX_DEVICES];
	cl_device_id devs[CT_OCL_MAX_DEVICES];
	int n, pick = -1;

	infos = calloc(CT_OCL_MAX_DEVICES, sizeof(*infos));
	if (infos == NULL)
		return ct_error(CT_ENOMEM, "device list");
	n = walk_devices(infos, CT_OCL_MAX_DEVICES, plats, devs);
	if (n == 0) {
		free(infos);
		return ct_error(CT_ENOTFOUND, "no OpenCL device found "
				"(is an OpenCL driver / ICD installed?)");
	}
	if (want >= 0) {
		if (want >= n) {
			free(infos);
			return ct_error(CT_ENOTFOUND, "no OpenCL device %d (%d found; "
					"see `ctune devices`)", want, n);
		}
		pick = want;
	} else {
		for (int i = 0; i < n && pick < 0; i++)
			if (infos[i].type == CT_OCL_TYPE_GPU)
				pick = i;
		if (pick < 0)
			pick = 0;
	}
	ocl->platform = plats[pick];
	ocl->device = devs[pick];
	ocl->info = infos[pick];
	free(infos);
	return 0;
}

int ct_ocl_open(const char *spec, const char *cache_dir, struct ct_ocl **out)
{
	struct ct_ocl *ocl;
	cl_context_properties props[3];
	cl_int err;
	int rc, want;

	*out = NULL;
	rc = ct_ocl_parse_spec(spec, &want);
	if (rc < 0)
		return rc;
	ocl = calloc(1, sizeof(*ocl));
	if (ocl == NULL)
		return ct_error(CT_ENOMEM, "OpenCL state");
	rc = pick_device(want, ocl);
	if (rc < 0)
		goto out;
	props[0] = CL_CONTEXT_PLATFORM;
	props[1] = (cl_context_properties)ocl->platform;
	props[2] = 0;
	ocl->ctx = clCreateContext(props, 1, &ocl->device, NULL, NULL, &err);
	rc = ct_ocl_check(err, "clCreateContext");
	if (rc < 0)
		goto out;
	ocl->queue = clCreateCommandQueue(ocl->ctx, ocl->device, 0, &err);
	rc = ct_ocl_check(err, "clCreateCommandQueue");
	if (rc < 0)
		goto out;
	rc = build_program(ocl, cache_dir);
out:
	if (rc < 0) {
		ct_ocl_close(ocl);
		return rc;
	}
	*out = ocl;
	return 0;
}

void ct_ocl_close(struct ct_ocl *ocl)
{
	if (ocl == NULL)
		return;
	if (ocl->queue != NULL)
		clFinish(ocl->queue);
	if (ocl->program != NULL)
		clReleaseProgram(ocl->program);
	if (ocl->queue != NULL)
		clReleaseCommandQueue(ocl->queue);
	if (ocl->ctx != NULL)
		clReleaseContext(ocl->ctx);
	free(ocl);
}

int ct_ocl_kernel(struct ct_ocl *ocl, const char *name, cl_kernel *out)
{
	cl_int err;

	*out = clCreateKernel(ocl->program, name, &err);
	if (err != CL_SUCCESS) {
		*out = NULL;
		return ct_error(CT_ECL, "kernel %s: %s (%d)", name,
				ct_ocl_strerror(err), (int)err);
	}
	return 0;
}

static size_t alloc_live, alloc_peak, alloc_largest;

void ct_ocl_alloc_stats(size_t *peak, size_t *largest)
{
	if (peak != NULL)
		*peak = __atomic_load_n(&alloc_peak, __ATOMIC_RELAXED);
	if (largest != NULL)
		*largest = __atomic_load_n(&alloc_largest, __ATOMIC_RELAXED);
}

size_t ct_ocl_alloc_mark(void)
{
	size_t live = __atomic_load_n(&alloc_live, __ATOMIC_RELAXED);

	__atomic_store_n(&alloc_peak, live, __ATOMIC_RELAXED);
	__atomic_store_n(&alloc_largest, 0, __ATOMIC_RELAXED);
	return live;
}

static void max_into(size_t *at, size_t v)
{
	size_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 0, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

static void alloc_count(size_t bytes)
{
	max_into(&alloc_peak, __atomic_add_fetch(&alloc_live, bytes, __ATOMIC_RELAXED));
	max_into(&alloc_largest, bytes);
}

void ct_ocl_free(cl_mem m)
{
	size_t bytes = 0;

	if (m == NULL)
		return;
	if (clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(bytes), &bytes, NULL) == CL_SUCCESS)
		__atomic_sub_fetch(&alloc_live, bytes, __ATOMIC_RELAXED);
	clReleaseMemObject(m);
}

void ct_ocl_unref(cl_mem *m)
{
	ct_ocl_free(*m);	/* nothing retains a buffer: this releases it */
	*m = NULL;
}

void ct_ocl_unref_n(cl_mem *const *bufs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ct_ocl_unref(bufs[i]);
}

static uint64_t alloc_total;

uint64_t ct_ocl_alloc_total(void)
{
	return __atomic_load_n(&alloc_total, __ATOMIC_RELAXED);
}

int ct_ocl_alloc(struct ct_ocl *ocl, size_t bytes, cl_mem_flags flags, cl_mem *out)
{
	cl_int err;

	*out = NULL;
	if (bytes == 0)
		return ct_error(CT_EINVAL, "zero-sized device buffer");
	if (ocl->info.max_alloc != 0 && bytes > ocl->info.max_alloc)
		return ct_error(CT_EDEVNOMEM, "%zu-byte buffer exceeds %s's largest "
				"allocation (%llu bytes)", bytes, ocl->info.name,
				(unsigned long long)ocl->info.max_alloc);
	*out = clCreateBuffer(ocl->ctx, flags, bytes, NULL, &err);
	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	    err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE) {
		*out = NULL;
		return ct_error(CT_EDEVNOMEM, "out of device memory allocating %zu bytes "
				"on %s (%s)", bytes, ocl->info.name, ct_ocl_strerror(err));
	}
	if (err != CL_SUCCESS) {
		*out = NULL;
		return ct_ocl_check(err, "clCreateBuffer");
	}
	alloc_count(bytes);
	__atomic_add_fetch(&alloc_total, (uint64_t)bytes, __ATOMIC_RELAXED);
	if (ct_opt_int(CT_OPT_OCL_ALLOC_LOG, 0))	/* per-buffer breakdowns (bench) */
		fprintf(stderr, "ct_ocl_alloc: %.2f MiB, live %.2f MiB\n", bytes / 1048576.0,
			__atomic_load_n(&alloc_live, __ATOMIC_RELAXED) / 1048576.0);
	return 0;
}
