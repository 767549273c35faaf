/*
 * fuzz_safetensors.c - Hugging Face .safetensors files (lib/ct_safetensors.c
 * with its JSON reader lib/ct_jv.c), what an operator imports a model
 * from (ct_llama_hf_import). The input is the file. Every tensor the
 * reader lists must be found by its name, lie inside the data section,
 * and convert to float32 (or be refused as another dtype) without fault.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_err.h"
#include "ct_safetensors.h"

#include <stdlib.h>

#define MAX_CONVERT ((uint64_t)1 << 22)	/* elements converted per tensor */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = ct_fuzz_file("model.safetensors", data, size);
	struct ct_st_file f;
	int rc = ct_st_open(path, &f);

	if (rc < 0) {
		CT_FUZZ_CHECK(f.nt == 0 && f.t == NULL);
		return 0;
	}
	for (size_t i = 0; i < f.nt; i++) {
		const struct ct_st_tensor *t = &f.t[i];
		float *out;

		CT_FUZZ_CHECK(ct_st_find(&f, t->name) == t);
		CT_FUZZ_CHECK(t->begin <= t->end && t->end <= f.data_len);
		if (t->nelem > MAX_CONVERT)
			continue;
		out = malloc(t->nelem ? t->nelem * sizeof(float) : 1);
		CT_FUZZ_CHECK(out != NULL);
		rc = ct_st_read_f32(&f, t, out, (size_t)t->nelem);
		CT_FUZZ_CHECK(rc == 0 || (rc == CT_EUNSUPP && t->dtype == CT_ST_OTHER));
		free(out);
	}
	ct_st_close(&f);
	return 0;
}
