/*
 * fuzz_delta.c - result files (engine/ct_delta.c, engine/ct_lora_result.c):
 * what a volunteer uploads and the validator, the assimilator and the
 * round's mean decode. The input is the file.
 *
 * A full-weights file of up to CT_FUZZ_MAX_FULL weights is decoded as a work unit
 * of that many weights would be (the server's n is the WU's model; here
 * the header's, so that the fuzzer can reach every shape), against a
 * fixed base of awkward bit patterns (NaNs, infinities, subnormals), both
 * in memory (ct_delta_decode) and streamed from a file (ct_delta_reader,
 * what the validator uses): the two must agree on the verdict and, when
 * they accept, on every bit and the hash; so must the two inflaters
 * (ISA-L, zlib: CT_INFLATE, lib/ct_zin.c). A LoRA file is decoded for two
 * fixed work units, a GPT-2 and a Llama one, as lora_round.c does.
 */
#include "config.h"
#include "fuzz.h"
#include "fuzz_delta.h"
#include "ct_err.h"
#include "ct_lora_result.h"

#include <stdlib.h>
#include <string.h>

/* Decode streamed from the file; out receives n weights. */
static int stream(const uint8_t *data, size_t size, const float *base, size_t n,
		  float *out, struct ct_delta_info *info)
{
	const char *path = ct_fuzz_file("result.ctd", data, size);
	struct ct_delta_reader *rd = NULL;
	size_t pos = 0, first, m;
	int rc = ct_delta_reader_open(path, 0, n, &rd);

	if (rc < 0) {
		CT_FUZZ_CHECK(rd == NULL);
		return rc;
	}
	while ((rc = ct_delta_reader_next(rd, base + pos, out + pos, &first, &m)) == 1) {
		CT_FUZZ_CHECK(first == pos && m > 0 && m <= CT_DELTA_CHUNK && pos + m <= n);
		pos += m;
	}
	CT_FUZZ_CHECK(rc < 0 || pos == n);
	*info = *ct_delta_reader_info(rd);
	/* a reader that ended answers the same again */
	CT_FUZZ_CHECK(ct_delta_reader_next(rd, base, out, &first, &m) == (rc == 0 ? 0 : CT_ESTATE));
	ct_delta_reader_close(rd);
	return rc;
}

static void full(const uint8_t *data, size_t size, size_t n)
{
	float *base = malloc(n * sizeof(float)), *a = malloc(n * sizeof(float));
	float *b = malloc(n * sizeof(float));
	struct ct_delta_info ia, ib;
	int ra, rb;

	CT_FUZZ_CHECK(base != NULL && a != NULL && b != NULL);
	for (size_t i = 0; i < n; i++)
		base[i] = ct_fuzz_base(i);
	ra = ct_delta_decode(data, size, base, n, a, &ia);
	rb = stream(data, size, base, n, b, &ib);
	CT_FUZZ_CHECK((ra == 0) == (rb == 0));
	if (ra == 0) {
		CT_FUZZ_CHECK(memcmp(a, b, n * sizeof(float)) == 0);
		CT_FUZZ_CHECK(memcmp(ia.decoded_sha, ib.decoded_sha, 32) == 0);
		CT_FUZZ_CHECK(ia.encoding == CT_DELTA_INT8 ||
			      memcmp(ia.decoded_sha, ia.weights_sha, 32) == 0);
		CT_FUZZ_CHECK(ia.quant_error == ib.quant_error);
	}
	/* the other inflater (zlib where ISA-L is built in) judges alike */
	setenv("CT_INFLATE", "zlib", 1);
	rb = ct_delta_decode(data, size, base, n, b, &ib);
	unsetenv("CT_INFLATE");
	CT_FUZZ_CHECK((ra == 0) == (rb == 0));
	CT_FUZZ_CHECK(ra != 0 || memcmp(a, b, n * sizeof(float)) == 0);
	/* a work unit of another size refuses the file before decoding */
	CT_FUZZ_CHECK(ct_delta_decode(data, size, base, n - 1, a, &ia) < 0);
	free(base);
	free(a);
	free(b);
}

static void lora(const uint8_t *data, size_t size, const struct ct_fuzz_wu *w)
{
	size_t n = ct_lora_nparams(&w->cfg, &w->spec);
	float *out = malloc(n * sizeof(float));
	struct ct_delta_info info;
	int rc;

	CT_FUZZ_CHECK(out != NULL);
	rc = ct_lora_result_decode(&w->cfg, &w->spec, w->seed, NULL, data, size, out, &info);
	if (rc == 0)
		CT_FUZZ_CHECK(info.encoding == CT_DELTA_INT8 ||
			      memcmp(info.decoded_sha, info.weights_sha, 32) == 0);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_delta_info info;

	if (ct_delta_parse_header(data, size, &info) < 0)
		return 0;
	if (info.kind == CT_DELTA_FULL && info.nparams <= CT_FUZZ_MAX_FULL)
		full(data, size, (size_t)info.nparams);
	for (size_t k = 0; k < CT_FUZZ_NWUS; k++)
		lora(data, size, &ct_fuzz_wus[k]);
	return 0;
}
