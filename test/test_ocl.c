/*
 * test_ocl.c - the OpenCL runtime (engine/ct_ocl.c): device specs, device
 * enumeration, error mapping, the embedded program source, and the
 * per-device program binary cache (hit, corrupt entry ignored and rebuilt).
 * Exits 77 (skip) when the machine has no OpenCL device.
 */
#include "ct_test_ocl.h"

#include <dirent.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_ocl.h"

static void test_parse_spec(void **state)
{
	int idx = 5;

	(void)state;
	assert_int_equal(ct_ocl_parse_spec("opencl", &idx), 0);
	assert_int_equal(idx, -1);
	assert_int_equal(ct_ocl_parse_spec("opencl:2", &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(ct_ocl_parse_spec("opencl:", &idx), CT_EINVAL);
	assert_int_equal(ct_ocl_parse_spec("opencl:x", &idx), CT_EINVAL);
	assert_int_equal(ct_ocl_parse_spec("opencl:1x", &idx), CT_EINVAL);
	assert_int_equal(ct_ocl_parse_spec("opencl:-1", &idx), CT_EINVAL);
	assert_int_equal(ct_ocl_parse_spec("opencl:99999", &idx), CT_EINVAL);
	assert_int_equal(ct_ocl_parse_spec("cuda", &idx), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "cuda"));
}

static void test_enumerate(void **state)
{
	struct ct_ocl_devinfo *d = NULL;
	int n = 0;

	(void)state;
	assert_int_equal(ct_ocl_enumerate(&d, &n), 0);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++) {
		assert_int_equal(d[i].index, i);
		assert_true(d[i].name[0] != '\0');
		assert_true(d[i].platform[0] != '\0');
		assert_true(d[i].compute_units >= 1);
		assert_true(d[i].global_mem > 0);
		assert_true(d[i].max_alloc > 0);
		assert_true(d[i].max_wg >= 1);
		assert_non_null(ct_ocl_type_name(d[i].type));
	}
	free(d);
}

static void test_errors(void **state)
{
	struct ct_ocl *ocl = NULL;

	(void)state;
	assert_int_equal(ct_ocl_check(CL_SUCCESS, "x"), 0);
	assert_int_equal(ct_ocl_check(CL_MEM_OBJECT_ALLOCATION_FAILURE, "alloc"), CT_EDEVNOMEM);
	assert_int_equal(ct_ocl_check(CL_OUT_OF_RESOURCES, "alloc"), CT_EDEVNOMEM);
	assert_int_equal(ct_ocl_check(CL_INVALID_KERNEL_ARGS, "launch"), CT_ECL);
	assert_non_null(strstr(ct_errmsg(CT_ECL), "CL_INVALID_KERNEL_ARGS"));
	assert_non_null(strstr(ct_errmsg(CT_ECL), "launch"));
	assert_int_equal(ct_ocl_open("opencl:63", "", &ocl), CT_ENOTFOUND);
	assert_null(ocl);
	assert_non_null(strstr(ct_errmsg(CT_ENOTFOUND), "63"));
	assert_int_equal(ct_ocl_open("gpu", "", &ocl), CT_EINVAL);
	assert_null(ocl);
}

static void test_alloc_limits(void **state)
{
	struct ct_ocl *ocl = NULL;
	cl_mem m = NULL;

	(void)state;
	assert_int_equal(ct_ocl_open("opencl", "", &ocl), 0);
	assert_int_equal(ct_ocl_alloc(ocl, 0, CL_MEM_READ_WRITE, &m), CT_EINVAL);
	assert_int_equal(ct_ocl_alloc(ocl, ocl->info.max_alloc + 4096, CL_MEM_READ_WRITE, &m),
			 CT_EDEVNOMEM);
	assert_null(m);
	assert_non_null(strstr(ct_errmsg(CT_EDEVNOMEM), ocl->info.name));
	assert_int_equal(ct_ocl_alloc(ocl, 4096, CL_MEM_READ_WRITE, &m), 0);
	clReleaseMemObject(m);
	ct_ocl_close(ocl);
}

/* The arithmetic contract, visible in the embedded source. */
static void test_embedded_source(void **state)
{
	const char *s = ct_ocl_kernel_source;

	(void)state;
	assert_int_equal(strlen(s), ct_ocl_kernel_source_len);
	assert_true(strncmp(s, "#pragma OPENCL FP_CONTRACT OFF", 30) == 0);
	assert_null(strstr(s, "native_"));
	assert_null(strstr(s, "half_"));
	assert_null(strstr(s, "mad("));
	assert_non_null(strstr(s, "ct_expf"));		/* ct_math.clh is in front */
	assert_non_null(strstr(s, "__kernel void ct_mm("));
	assert_non_null(strstr(CT_OCL_BUILD_OPTIONS, "-cl-fp32-correctly-rounded-divide-sqrt"));
	assert_null(strstr(CT_OCL_BUILD_OPTIONS, "relaxed"));
	assert_null(strstr(CT_OCL_BUILD_OPTIONS, "mad"));
}

/* The one *.bin file in dir, into path. */
static int cache_file(const char *dir, char *path, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0) {
			snprintf(path, cap, "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static int open_from(const char *dir)
{
	struct ct_ocl *ocl = NULL;
	cl_kernel k = NULL;
	int hit;

	assert_int_equal(ct_ocl_open("opencl", dir, &ocl), 0);
	/* the program is usable either way */
	assert_int_equal(ct_ocl_kernel(ocl, "ct_mm", &k), 0);
	clReleaseKernel(k);
	assert_int_equal(ct_ocl_kernel(ocl, "no_such_kernel", &k), CT_ECL);
	hit = ocl->from_cache;
	ct_ocl_close(ocl);
	return hit;
}

static void test_binary_cache(void **state)
{
	char *dir = ct_test_mkdtemp(), sub[4200], path[4400];
	unsigned char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);	/* created on demand */
	assert_int_equal(open_from(sub), 0);
	assert_int_equal(cache_file(sub, path, sizeof(path)), 1);
	assert_int_equal(open_from(sub), 1);		/* hit */

	/* flip one byte of the binary: detected, rebuilt, rewritten */
	assert_int_equal(ct_file_read_all(path, 0, &data, &len), 0);
	assert_true(len > 100);
	data[len - 7] ^= 0x5a;
	assert_int_equal(ct_file_write_atomic(path, data, len, 0600), 0);
	assert_int_equal(open_from(sub), 0);
	assert_int_equal(open_from(sub), 1);

	/* truncated and garbage entries too */
	assert_int_equal(ct_file_write_atomic(path, data, 20, 0600), 0);
	assert_int_equal(open_from(sub), 0);
	assert_int_equal(ct_file_write_atomic(path, "garbage", 7, 0600), 0);
	assert_int_equal(open_from(sub), 0);
	assert_int_equal(open_from(sub), 1);
	assert_int_equal(cache_file(sub, path, sizeof(path)), 1);
	free(data);
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN_OCL(NULL, NULL, test_parse_spec, test_enumerate, test_errors,
	test_alloc_limits, test_embedded_source, test_binary_cache)
