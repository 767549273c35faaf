/*
 * fuzz_tokens.c - token files (lib/ct_tokens.c), the training and eval
 * data a client downloads for a work unit: the input is the file. Both
 * loaders must agree (the widening one and the mapping one: same verdict,
 * same ids), and a loaded file's ids must pass through the vocabulary
 * check and the digest without fault.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_tokens.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = ct_fuzz_file("tokens.bin", data, size);
	struct ct_tokens a, b;
	unsigned char sha[32];
	int ra = ct_tokens_load(path, &a), rb = ct_tokens_load_any(path, &b);

	CT_FUZZ_CHECK((ra == 0) == (rb == 0));
	if (ra == 0) {
		CT_FUZZ_CHECK(a.n == b.n && a.version == b.version && a.tok != NULL);
		CT_FUZZ_CHECK(size == CT_TOKENS_HEADER_BYTES + a.n * (a.version == 1 ? 2 : a.version == 2 ? 4 : 5));
		CT_FUZZ_CHECK((a.train == NULL) == (b.train == NULL));
		for (uint64_t i = 0; i < a.n; i++)
			CT_FUZZ_CHECK(a.tok[i] == ct_tokens_get(&b, i));
		(void)ct_tokens_check_vocab(&a, 50257);
		(void)ct_tokens_check_vocab(&b, 256);
		CT_FUZZ_CHECK(ct_tokens_sha256(&a, sha) == 0);
	}
	ct_tokens_free(&a);
	ct_tokens_free(&b);
	return 0;
}
