/*
 * fuzz_tokenizer.c - Hugging Face tokenizer.json files (lib/ct_bpe_hf.c,
 * its post-processor templates lib/ct_bpe_post.c, the JSON reader
 * lib/ct_jv.c, the pre-tokenisers and BPE of lib/ct_bpe*.c): what an
 * operator names for a job and a client downloads with it. The input is
 * the file. A tokenizer that loads is then used as a job would use it:
 * fixed texts (ASCII, so NFC leaves them alone; added-token look-alikes,
 * white space, digits, invalid UTF-8) are encoded at once and in parts,
 * and each must decode back to its bytes with the same ids both ways
 * (ct_tokenizer.h's promises), every id under the vocabulary size.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_buf.h"
#include "ct_tokenizer.h"

#include <string.h>

static const char *const texts[] = {
	"Hello, world! The quick brown fox's 12345 jumps.\n\n  over\tthe lazy dog  ",
	"<|endoftext|><|x|>y<|begin_of_text|></s><s>[INST]<|im_start|>user\n",
	"a\r\n\r\n   b 'LL 've x'S 1 22 333 4444\xff\xfe\x80 \xc3(",
	"",
};

/* Encode text handed over 7 more bytes at a time, each call given what
 * the last left: the ids of one call (ct_tokenizer.h). */
static void encode_parts(const struct ct_tokenizer *tk, const char *text, size_t n,
			 const struct ct_tokvec *whole)
{
	struct ct_tokvec ids = { 0 };
	size_t done = 0, avail = 0, used;
	int final;

	do {
		avail = avail + 7 < n ? avail + 7 : n;
		final = avail == n;
		CT_FUZZ_CHECK(ct_tokenizer_encode_part(tk, text + done, avail - done, final,
						       &ids, &used) == 0);
		CT_FUZZ_CHECK(used <= avail - done);
		done += used;
	} while (!final);
	CT_FUZZ_CHECK(done == n);
	CT_FUZZ_CHECK(ids.n == whole->n);
	CT_FUZZ_CHECK(ids.n == 0 || memcmp(ids.v, whole->v, ids.n * sizeof(ids.v[0])) == 0);
	ct_tokvec_free(&ids);
}

/* The ids a document starts and ends with, all in the vocabulary. */
static void doc_ids(const struct ct_tokenizer *tk, int V)
{
	struct ct_tokvec ids = { 0 };

	CT_FUZZ_CHECK(ct_tokenizer_doc_open(tk, &ids) == 0);
	CT_FUZZ_CHECK(ct_tokenizer_doc_close(tk, &ids) == 0);
	for (size_t i = 0; i < ids.n; i++)
		CT_FUZZ_CHECK(ids.v[i] < (uint32_t)V);
	ct_tokvec_free(&ids);
}

static void use(const struct ct_tokenizer *tk)
{
	int V = ct_tokenizer_vocab(tk), eot = ct_tokenizer_eot(tk);
	struct ct_buf out;

	CT_FUZZ_CHECK(V > 0 && eot < V);
	ct_buf_init(&out, 0);
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		size_t n = strlen(texts[k]);
		struct ct_tokvec ids = { 0 };

		CT_FUZZ_CHECK(ct_tokenizer_encode(tk, texts[k], n, &ids) == 0);
		for (size_t i = 0; i < ids.n; i++)
			CT_FUZZ_CHECK(ids.v[i] < (uint32_t)V);
		ct_buf_reset(&out);
		CT_FUZZ_CHECK(ct_tokenizer_decode(tk, ids.v, ids.n, &out) == 0);
		CT_FUZZ_CHECK(out.len == n && (n == 0 || memcmp(out.data, texts[k], n) == 0));
		encode_parts(tk, texts[k], n, &ids);
		ct_tokvec_free(&ids);
	}
	doc_ids(tk, V);
	ct_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = ct_fuzz_file("tokenizer.json", data, size);
	struct ct_tokenizer *tk = NULL;

	if (ct_tokenizer_open(path, &tk) < 0) {
		CT_FUZZ_CHECK(tk == NULL);
		return 0;
	}
	use(tk);
	ct_tokenizer_free(tk);
	return 0;
}
