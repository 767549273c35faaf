/*
 * cmd_devices.c - `ctune devices`: list the OpenCL platforms and devices
 * with their properties and run the conformance self-test on each
 * (engine/ct_ocl_selftest.h), printing conforming / not conforming; then
 * the C reference's kernel path (engine/ct_isa.h).
 *
 *   ctune devices [--no-selftest] [--device opencl:N] [--digest]
 *
 * Exit status 0 when every tested device conforms (or nothing was tested),
 * 1 when one does not or the test could not run, 2 on a usage error.
 */
#include "config.h"
#include "commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_err.h"
#include "ct_os.h"
#include "ct_hash.h"
#include "ct_isa.h"
#include "ct_ocl.h"
#include "ct_ocl_selftest.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_device(const struct ct_ocl_devinfo *d)
{
	printf("opencl:%d  %s\n", d->index, d->name);
	printf("  platform:        %s (%s)\n", d->platform, d->platform_version);
	printf("  vendor:          %s\n", d->vendor);
	printf("  type:            %s\n", ct_ocl_type_name(d->type));
	printf("  version:         %s; %s; driver %s\n", d->version, d->c_version, d->driver);
	printf("  compute units:   %u at %u MHz\n", d->compute_units, d->clock_mhz);
	printf("  global memory:   %.2f GiB (largest buffer %.2f GiB)\n",
	       d->global_mem / 1073741824.0, d->max_alloc / 1073741824.0);
	printf("  work memory:     %.2f GiB (a WU needing more is not sent to a host "
	       "computing here)\n", (double)d->global_mem / (1 << 30));
	printf("  local memory:    %llu KiB\n", (unsigned long long)(d->local_mem >> 10));
	printf("  max work-group:  %zu\n", d->max_wg);
	printf("  double, fma:     %s, %s\n", d->fp64 ? "yes" : "no", d->fma ? "yes" : "no");
}

static void print_digest(const char *label, const char *spec)
{
	unsigned char dg[CT_SHA256_LEN];
	char hex[CT_SHA256_HEXLEN + 1];
	int rc = ct_ocl_selftest_digest(spec, dg);

	if (rc < 0) {
		printf("  %s digest: (failed: %s)\n", label, ct_errmsg(rc));
		return;
	}
	ct_hex_encode(dg, sizeof(dg), hex);
	printf("  %s digest: %s\n", label, hex);
}

/* Self-test one device; returns 1 if it conforms. */
static int selftest(const struct ct_ocl_devinfo *d, int digest)
{
	char spec[32];
	double t0 = now_s();
	int ok = 0, rc;

	struct ct_conform_report rep;

	snprintf(spec, sizeof(spec), "opencl:%d", d->index);
	rc = ct_ocl_selftest_report(spec, &rep, &ok);
	if (rc < 0)
		printf("  self-test:       could not run: %s\n", ct_errmsg(rc));
	else
		printf("  self-test:       %s (%.1f s)\n",
		       ok ? "conforming" : "NOT conforming (work units validated by tolerance "
		       "quorum only)", now_s() - t0);
	for (int i = 0; rc == 0 && i < rep.n; i++)
		printf("    %-52s %s%s%s\n", rep.check[i].name, rep.check[i].ok ? "ok" : "FAILED",
		       rep.check[i].ok ? "" : ": ", rep.check[i].detail);
	if (digest)
		print_digest("device", spec);
	return rc == 0 && ok;
}

static const struct option devices_long[] = {
	{ "no-selftest", no_argument, NULL, 'n' },
	{ "device", required_argument, NULL, 'd' },
	{ "digest", no_argument, NULL, 'g' },
	{ NULL, 0, NULL, 0 },
};

/* The C reference (--device cpu): which kernel path it runs (ct_isa.h). */
static void print_cpu(void)
{
	char os[256];
	uint64_t ram = 0;

	printf("cpu  C reference\n  kernels:         %s (this CPU runs:", ct_isa_name(ct_isa()));
	for (int i = 0; i < CT_ISA_N; i++)
		if (ct_isa_supported(i))
			printf(" %s", ct_isa_name(i));
	printf("; CTUNE_ISA=NAME forces one)\n");
	ct_os_describe(os, sizeof(os), &ram);
	printf("  work memory:     %.2f GiB of RAM (a WU needing more is not sent to a host "
	       "computing here)\n", (double)ram / (1 << 30));
}

static int cmd_devices(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_ocl_devinfo *devs = NULL;
	int n = 0, only = -1, test = 1, digest = 0, bad = 0, c, rc;

	(void)ctx;
	optind = 0;
	while ((c = getopt_long(argc, argv, "nd:", devices_long, NULL)) != -1) {
		switch (c) {
		case 'n': test = 0; break;
		case 'g': digest = 1; break;
		case 'd':
			if (ct_ocl_parse_spec(optarg, &only) < 0 || only < 0) {
				fprintf(stderr, "ctune devices: bad --device '%s' (want opencl:N)\n",
					optarg);
				return CT_EXIT_USAGE;
			}
			break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	if (optind < argc)
		return CT_EXIT_USAGE;
	rc = ct_ocl_enumerate(&devs, &n);
	if (rc < 0) {
		fprintf(stderr, "ctune devices: %s\n", ct_errmsg(rc));
		return CT_EXIT_FAIL;
	}
	if (n == 0)
		printf("no OpenCL devices found (training still works with --device cpu)\n");
	if (only >= n && n > 0) {
		fprintf(stderr, "ctune devices: no device opencl:%d (%d found)\n", only, n);
		free(devs);
		return CT_EXIT_FAIL;
	}
	if (digest) {
		printf("self-test digests\n  expected    digest: %s\n", CT_OCL_SELFTEST_SHA256);
		print_digest("C reference", "cpu");
	}
	for (int i = 0; i < n; i++) {
		if (only >= 0 && i != only)
			continue;
		print_device(&devs[i]);
		if (test && !selftest(&devs[i], digest))
			bad++;
	}
	if (only < 0)
		print_cpu();
	free(devs);
	return bad ? CT_EXIT_FAIL : CT_EXIT_OK;
}

const struct ct_cmd_def ct_devices_cmd = {
	.name = "devices", .fn = cmd_devices, .opts = devices_long, .shortopts = "nd:",
	.summary = "list OpenCL devices and their conformance",
	.usage = "[--no-selftest] [--device opencl:N] [--digest]",
	.help = "  -n, --no-selftest   list the devices only\n"
	"  -d, --device SPEC   only this device (opencl:N)\n"
	"      --digest        also print the self-test digest of the C\n"
	"                      reference and of each device\n",
};
