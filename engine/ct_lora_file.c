/*
 * ct_lora_file.c - see ct_lora_file.h.
 */
#include "config.h"
#include "ct_lora_file.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_le.h"

#include <math.h>
#include <string.h>

void ct_lora_file_header(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			 unsigned char hdr[CT_LORA_FILE_HDR])
{
	memset(hdr, 0, CT_LORA_FILE_HDR);
	memcpy(hdr, CT_LORA_FILE_MAGIC, sizeof(CT_LORA_FILE_MAGIC));
	ct_le_put32(hdr + 8, (uint32_t)spec->rank);
	ct_le_put_f32(hdr + 12, spec->alpha);
	ct_le_put32(hdr + 16, spec->targets);
	ct_le_put32(hdr + 20, (uint32_t)cfg->arch);
	ct_le_put64(hdr + 24, (uint64_t)ct_lora_nparams(cfg, spec));
}

uint64_t ct_lora_file_size(const struct ct_model_config *cfg, const struct ct_lora_spec *spec)
{
	return CT_LORA_FILE_HDR + 4 * (uint64_t)ct_lora_nparams(cfg, spec);
}

int ct_lora_file_save(const char *path, const struct ct_model_config *cfg,
		      const struct ct_lora_spec *spec, const float *adapters)
{
	unsigned char hdr[CT_LORA_FILE_HDR];
	struct ct_afile af = { 0 };
	int rc;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "adapter file: big-endian hosts are not supported");
	ct_lora_file_header(cfg, spec, hdr);
	rc = ct_afile_open(&af, path, 0644);
	if (rc == 0)
		rc = ct_afile_write(&af, hdr, sizeof(hdr));
	if (rc == 0)
		rc = ct_afile_write(&af, adapters, ct_lora_nparams(cfg, spec) * sizeof(float));
	if (rc == 0)
		return ct_afile_commit(&af);
	ct_afile_abort(&af);
	return rc;
}

/* The header's fields against the WU's. */
static int check_header(const unsigned char *h, const struct ct_model_config *cfg,
			const struct ct_lora_spec *spec)
{
	float alpha = ct_le_get_f32(h + 12);
	uint64_t n = ct_le_get64(h + 24);

	if (memcmp(h, CT_LORA_FILE_MAGIC, sizeof(CT_LORA_FILE_MAGIC)) != 0)
		return ct_error(CT_EFORMAT, "not an adapter file (no %s magic)", CT_LORA_FILE_MAGIC);
	if (ct_le_get32(h + 8) != (uint32_t)spec->rank || ct_le_get32(h + 16) != spec->targets ||
	    memcmp(&alpha, &spec->alpha, sizeof(float)) != 0)
		return ct_error(CT_EMISMATCH, "adapter file of rank %u, alpha %g, targets 0x%x; "
				"the work unit has %d, %g, 0x%x", ct_le_get32(h + 8),
				(double)alpha, ct_le_get32(h + 16), spec->rank,
				(double)spec->alpha, spec->targets);
	if (ct_le_get32(h + 20) != (uint32_t)cfg->arch || n != ct_lora_nparams(cfg, spec))
		return ct_error(CT_EMISMATCH, "adapter file of %llu adapters for arch %u; the "
				"work unit has %zu for arch %d", (unsigned long long)n,
				ct_le_get32(h + 20), ct_lora_nparams(cfg, spec), (int)cfg->arch);
	return 0;
}

int ct_lora_file_parse(const void *data, size_t len, const struct ct_model_config *cfg,
		       const struct ct_lora_spec *spec, float *out)
{
	const unsigned char *p = data;
	size_t n;
	int rc;

	if (len < CT_LORA_FILE_HDR)
		return ct_error(CT_EFORMAT, "adapter file of %zu bytes: shorter than its header",
				len);
	rc = check_header(p, cfg, spec);
	if (rc < 0)
		return rc;
	n = ct_lora_nparams(cfg, spec);
	if ((uint64_t)len != ct_lora_file_size(cfg, spec))
		return ct_error(CT_EFORMAT, "adapter file of %zu bytes; %zu adapters make %llu",
				len, n, (unsigned long long)ct_lora_file_size(cfg, spec));
	for (size_t i = 0; i < n; i++)
		if (!isfinite(ct_le_get_f32(p + CT_LORA_FILE_HDR + 4 * i)))
			return ct_error(CT_ECORRUPT, "adapter file: adapter %zu is not finite", i);
	for (size_t i = 0; i < n; i++)
		out[i] = ct_le_get_f32(p + CT_LORA_FILE_HDR + 4 * i);
	return 0;
}

int ct_lora_file_load(const char *path, const struct ct_model_config *cfg,
		      const struct ct_lora_spec *spec, float *out)
{
	struct ct_mmap map = { 0 };
	int rc = ct_file_map(path, &map);	/* mapped: any size costs nothing */

	if (rc == 0)
		rc = ct_lora_file_parse(map.addr, map.len, cfg, spec, out);
	ct_file_unmap(&map);
	return rc;
}
