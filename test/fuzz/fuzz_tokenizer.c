/*
 * fuzz_tokenizer.c - Hugging Face tokenizer.json files (lib/ct_bpe_hf.c,
 * its post-processor templates lib/ct_bpe_post.c, the JSON reader
 * lib/ct_jv.c, the pre-tokenisers and BPE of lib/ct_bpe*.c): what an
 * operator names for a job and a client downloads with it. The input is
 * the file. A tokenizer that loads is then used as a job would use it:
 * fixed texts (ASCII, so NFC leaves them alone; added-token look-alikes,
 * white space, digits, invalid UTF-8), and the input itself as text, are
 * encoded at once and in parts, with the same ids both ways, and decode
 * back to their bytes where NFC cannot change them (ct_tokenizer.h's
 * promises), every id under the vocabulary size.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_buf.h"
#include "ct_nfc.h"
#include "ct_tokenizer.h"

#include <string.h>

#define MAX_SELF 1024

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

/* Encode n bytes of text, decode them back (the same bytes unless NFC
 * may change them), and encode them in parts. */
static void round_trip(const struct ct_tokenizer *tk, int V, const char *text, size_t n,
		       struct ct_buf *out)
{
	struct ct_tokvec ids = { 0 };

	CT_FUZZ_CHECK(ct_tokenizer_encode(tk, text, n, &ids) == 0);
	for (size_t i = 0; i < ids.n; i++)
		CT_FUZZ_CHECK(ids.v[i] < (uint32_t)V);
	ct_buf_reset(out);
	CT_FUZZ_CHECK(ct_tokenizer_decode(tk, ids.v, ids.n, out) == 0);
	if (ct_nfc_is_inert((const unsigned char *)text, n))
		CT_FUZZ_CHECK(out->len == n && (n == 0 || memcmp(out->data, text, n) == 0));
	encode_parts(tk, text, n, &ids);
	ct_tokvec_free(&ids);
}

/* The fixed texts, then the input itself (its first MAX_SELF bytes) as
 * text: every mutation of the file is also new text for the
 * pre-tokeniser and the merges it describes. */
static void use(const struct ct_tokenizer *tk, const uint8_t *data, size_t size)
{
	int V = ct_tokenizer_vocab(tk), eot = ct_tokenizer_eot(tk);
	struct ct_buf out;

	CT_FUZZ_CHECK(V > 0 && eot < V);
	ct_buf_init(&out, 0);
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
		round_trip(tk, V, texts[k], strlen(texts[k]), &out);
	round_trip(tk, V, (const char *)data, size < MAX_SELF ? size : MAX_SELF, &out);
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
	/* the tables are sized by V: it must be bounded by the file */
	CT_FUZZ_CHECK((size_t)ct_tokenizer_vocab(tk) <= size);
	use(tk, data, size);
	ct_tokenizer_free(tk);
	return 0;
}
