/*
 * fuzz_gpt2.c - model checkpoints (engine/ct_gpt2.c with the Llama header
 * of engine/ct_llama.c): the base model a client downloads for a work
 * unit, and what an operator submits. The input is the checkpoint image.
 * A loaded model's size must be the image's (the header cannot make the
 * loader allocate more than the file holds), and the finiteness check
 * must run over it without fault; reading only the header of the same
 * file must give the same verdict.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_gpt2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = ct_fuzz_file("model.bin", data, size);
	struct ct_model_config cfg;
	struct ct_gpt2 m = { 0 };
	int rc = ct_gpt2_load_mem(data, size, "fuzz.bin", &m);

	/* the header-only reader of a file judges as the whole load */
	CT_FUZZ_CHECK((ct_gpt2_read_config(path, &cfg) == 0) == (rc == 0));

	if (rc == 0) {
		CT_FUZZ_CHECK(m.params != NULL && m.lay.total * 4 < size);
		CT_FUZZ_CHECK(ct_gpt2_config_check(&m.cfg) == 0);
		(void)ct_gpt2_check_finite(m.params, m.lay.total, &m.lay);
	} else {
		CT_FUZZ_CHECK(m.params == NULL);
	}
	ct_gpt2_free(&m);
	return 0;
}
