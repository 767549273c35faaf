/*
 * cl_host.c - see cl_host.h.
 */
#include "cl_host.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_log.h"
#include "ct_ocl.h"
#include "ct_ocl_selftest.h"
#include "ct_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void cpu_model(char *out, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, n, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(out, n, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void probe_devices(struct ct_host *h, int selftest)
{
	struct ct_ocl_devinfo *info = NULL;
	int n = 0;

	if (ct_ocl_enumerate(&info, &n) < 0 || n == 0)
		return;
	h->devices = calloc((size_t)n, sizeof(*h->devices));
	if (h->devices == NULL) {
		free(info);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct ct_host_device *d = &h->devices[i];
		char spec[32];
		int ok = 0, rc;

		snprintf(d->name, sizeof(d->name), "%s", info[i].name);
		snprintf(d->vendor, sizeof(d->vendor), "%s", info[i].vendor);
		snprintf(d->type, sizeof(d->type), "%s",
			 info[i].type == CT_OCL_TYPE_GPU ? "gpu" :
			 info[i].type == CT_OCL_TYPE_CPU ? "cpu" :
			 info[i].type == CT_OCL_TYPE_ACCEL ? "accelerator" : "other");
		d->global_mem = info[i].global_mem;
		d->compute_units = info[i].compute_units;
		snprintf(spec, sizeof(spec), "opencl:%d", i);
		if (selftest) {
			struct ct_conform_report rep;

			rc = ct_ocl_selftest_report(spec, &rep, &ok);
			if (rc < 0) {
				ct_log_warn("self-test of %s (%s) failed to run: %s", spec,
					    d->name, ct_errmsg(rc));
				ok = 0;
			}
			for (int c = 0; rc == 0 && c < rep.n; c++)
				if (!rep.check[c].ok)
					ct_log_warn("device %s: self-test check \"%s\" failed: %s",
						    spec, rep.check[c].name, rep.check[c].detail);
			ct_log_info("device %s (%s): %s", spec, d->name,
				    ok ? "conforming" : "NOT conforming (validated by tolerance)");
		}
		d->conforming = ok != 0;
	}
	h->ndevices = n;
	free(info);
}

int ct_host_probe(struct ct_host *h, int selftest)
{
	uint64_t ram;

	memset(h, 0, sizeof(*h));
	if (ct_os_hostname(h->hostname, sizeof(h->hostname)) < 0)
		snprintf(h->hostname, sizeof(h->hostname), "unknown");
	ct_os_describe(h->os, sizeof(h->os), &ram);
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	h->ncpus = ct_os_ncpus();
	h->ram_bytes = ram;
	probe_devices(h, selftest);
	snprintf(h->device, sizeof(h->device), "cpu");
	h->device_conforming = 1;
	return 0;
}

static int opencl_usable(void)
{
	const struct ct_backend_ops *ops;

	return ct_backend_find("opencl", &ops) == 0;
}

static void use_device(struct ct_host *h, int i)
{
	snprintf(h->device, sizeof(h->device), "opencl:%d", i);
	h->device_is_gpu = strcmp(h->devices[i].type, "gpu") == 0;
	h->device_conforming = h->devices[i].conforming;
}

int ct_host_choose(struct ct_host *h, const char *pref)
{
	int idx;

	snprintf(h->device, sizeof(h->device), "cpu");
	h->device_is_gpu = 0;
	h->device_conforming = 1;
	if (strcmp(pref, "cpu") == 0)
		return 0;
	if (strcmp(pref, "auto") == 0) {
		if (!opencl_usable())
			return 0;
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < h->ndevices; i++)
				if (h->devices[i].conforming &&
				    (pass == 1 || strcmp(h->devices[i].type, "gpu") == 0)) {
					use_device(h, i);
					return 0;
				}
		return 0;
	}
	if (ct_ocl_parse_spec(pref, &idx) < 0)
		return ct_error(CT_EINVAL, "bad device '%s'", pref);
	if (!opencl_usable())
		return ct_error(CT_ENOTFOUND, "this ctune has no OpenCL backend");
	if (idx < 0) {
		for (int i = 0; i < h->ndevices && idx < 0; i++)
			if (strcmp(h->devices[i].type, "gpu") == 0)
				idx = i;
		if (idx < 0 && h->ndevices > 0)
			idx = 0;
	}
	if (idx < 0 || idx >= h->ndevices)
		return ct_error(CT_ENOTFOUND, "no OpenCL device %s", pref);
	use_device(h, idx);
	return 0;
}

/* The index of the chosen OpenCL device, or -1 for the C reference. */
static int chosen_opencl(const struct ct_host *h)
{
	int idx;

	if (strncmp(h->device, "opencl:", 7) == 0 && ct_ocl_parse_spec(h->device, &idx) == 0 &&
	    idx >= 0 && idx < h->ndevices)
		return idx;
	return -1;
}

unsigned long long ct_host_work_mem(const struct ct_host *h)
{
	int idx = chosen_opencl(h);

	if (idx >= 0)
		return h->devices[idx].global_mem;
	return h->ram_bytes;	/* "cpu": the C reference computes in RAM */
}

const char *ct_host_work_backend(const struct ct_host *h)
{
	return chosen_opencl(h) >= 0 ? "opencl" : "cpu";
}

int ct_host_to_xml(const struct ct_host *h, struct ct_buf *b)
{
	int rc;

	rc = ct_xml_open(b, "host");
	if (rc == 0) rc = ct_xml_elem_str(b, "hostname", h->hostname);
	if (rc == 0) rc = ct_xml_elem_str(b, "os", h->os);
	if (rc == 0) rc = ct_xml_elem_str(b, "cpu_model", h->cpu_model);
	if (rc == 0) rc = ct_xml_elem_long(b, "ncpus", h->ncpus);
	if (rc == 0) rc = ct_xml_elem_int64(b, "ram_bytes", (int64_t)h->ram_bytes);
	if (rc == 0 && ct_host_work_mem(h) > 0)
		rc = ct_xml_elem_int64(b, "work_mem", (int64_t)ct_host_work_mem(h));
	if (rc == 0 && ct_host_work_mem(h) > 0)
		rc = ct_xml_elem_str(b, "work_backend", ct_host_work_backend(h));
	for (int i = 0; i < h->ndevices && i < 16 && rc == 0; i++) {
		const struct ct_host_device *d = &h->devices[i];

		rc = ct_xml_open(b, "device");
		if (rc == 0) rc = ct_xml_elem_str(b, "name", d->name);
		if (rc == 0) rc = ct_xml_elem_str(b, "vendor", d->vendor);
		if (rc == 0) rc = ct_xml_elem_str(b, "type", d->type);
		if (rc == 0) rc = ct_xml_elem_int64(b, "global_mem", (int64_t)d->global_mem);
		if (rc == 0) rc = ct_xml_elem_long(b, "compute_units", d->compute_units);
		if (rc == 0) rc = ct_xml_elem_long(b, "conforming", d->conforming);
		if (rc == 0) rc = ct_xml_close(b, "device");
	}
	if (rc == 0) rc = ct_xml_close(b, "host");
	return rc;
}

void ct_host_free(struct ct_host *h)
{
	free(h->devices);
	h->devices = NULL;
	h->ndevices = 0;
}
