/*
 * ct_bpe.c - GPT-2's byte-level BPE (see ct_bpe.h). Not written yet: the
 * "gpt2" tokenizer reports CT_EUNSUPP until it is.
 */
#include "config.h"
#include "ct_bpe.h"
#include "ct_err.h"

int ct_bpe_open_gpt2(struct ct_bpe **out)
{
	*out = NULL;
	return ct_error(CT_EUNSUPP, "the gpt2 tokenizer is not built yet");
}

void ct_bpe_free(struct ct_bpe *b)
{
	(void)b;
}

int ct_bpe_vocab(const struct ct_bpe *b)
{
	(void)b;
	return 0;
}

int ct_bpe_eot(const struct ct_bpe *b)
{
	(void)b;
	return -1;
}

int ct_bpe_encode(const struct ct_bpe *b, const unsigned char *text, size_t n,
		  struct ct_tokvec *out)
{
	(void)b; (void)text; (void)n; (void)out;
	return CT_EUNSUPP;
}

const unsigned char *ct_bpe_token(const struct ct_bpe *b, int id, size_t *len)
{
	(void)b; (void)id;
	*len = 0;
	return 0;
}
