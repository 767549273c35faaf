/*
 * seeds.c - writes the seed inputs of the fuzz corpora with the project's
 * own writers (ct_delta_encode, ct_lora_result_encode, ct_tokens_save_ids,
 * ct_gpt2_save, ct_st_write) and, for what no writer makes (other
 * safetensors dtypes, tokenizer.json), by hand:
 *
 *   test/fuzz/seeds DIR    writes DIR/<name>/seed-* for every harness
 *
 * tools/fuzz --seeds runs it into test/fuzz/corpus/. The seeds are valid
 * files of each format plus a few edge cases (empty, zero-sized tensors,
 * ids at the vocabulary's edge), so that the fuzzer starts deep inside
 * each parser rather than at its magic number.
 */
#include "config.h"
#include "fuzz_delta.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_lora_result.h"
#include "ct_safetensors.h"
#include "ct_tokens.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *top;

static void path_of(char *out, size_t cap, const char *name, const char *file)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/%s", top, name);
	if (ct_mkdir_p(dir, 0755) < 0) {
		fprintf(stderr, "seeds: %s: %s\n", dir, ct_errmsg(CT_EIO));
		exit(1);
	}
	snprintf(out, cap, "%s/%s", dir, file);
}

static void check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "seeds: %s: %s\n", what, ct_errmsg(rc));
		exit(1);
	}
}

static void put(const char *name, const char *file, const void *data, size_t n)
{
	char path[4200];

	path_of(path, sizeof(path), name, file);
	check(ct_file_write_atomic(path, data, n, 0644), path);
}

/* ---- result files ---- */

/* base + a sparse small update (compresses to little) */
static void trained(float *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		w[i] = ct_fuzz_base(i);
		if (i % 97 == 3)
			w[i] += 1e-3f * (float)(i % 13);
	}
}

static void delta_full(size_t n, int encoding, const char *file)
{
	float *base = malloc(n * sizeof(float)), *w = malloc(n * sizeof(float));
	struct ct_delta_model m = { 16, 64, 64, 2, 2, 16 };
	unsigned char sha[32] = { 1, 2, 3 };
	struct ct_buf out;

	if (base == NULL || w == NULL)
		check(CT_ENOMEM, file);
	trained(w, n);
	for (size_t i = 0; i < n; i++) {
		base[i] = ct_fuzz_base(i);
		/* int8 wants finite deltas: encode those weights against 0 (the
		 * decoder, against the real base, then makes NaNs of them) */
		if (encoding == CT_DELTA_INT8 && !(isfinite(base[i]) && isfinite(w[i])))
			base[i] = w[i] = 0.0f;
	}
	ct_buf_init(&out, 0);
	check(ct_delta_encode(base, w, n, &m, sha, encoding, -1, &out), file);
	put("delta", file, out.data, out.len);
	ct_buf_free(&out);
	free(base);
	free(w);
}

static void delta_lora(const struct ct_fuzz_wu *wu, int encoding, const char *file)
{
	size_t n = ct_lora_nparams(&wu->cfg, &wu->spec);
	float *ad = malloc(n * sizeof(float));
	unsigned char sha[32] = { 4, 5, 6 };
	struct ct_buf out;

	if (ad == NULL)
		check(CT_ENOMEM, file);
	check(ct_lora_init(&wu->cfg, &wu->spec, wu->seed, ad), file);
	for (size_t i = 0; i < n; i += 7)
		ad[i] += 0.01f * (float)(i % 5);
	ct_buf_init(&out, 0);
	check(ct_lora_result_encode(&wu->cfg, &wu->spec, wu->seed, sha, ad, encoding, &out), file);
	put("delta", file, out.data, out.len);
	ct_buf_free(&out);
	free(ad);
}

static void delta(void)
{
	delta_full(1, CT_DELTA_LOSSLESS, "seed-full-1");
	delta_full(1, CT_DELTA_INT8, "seed-full-1-int8");
	delta_full(1000, CT_DELTA_LOSSLESS, "seed-full-1000");
	delta_full(1000, CT_DELTA_INT8, "seed-full-1000-int8");
	delta_full(CT_DELTA_CHUNK + 7, CT_DELTA_LOSSLESS, "seed-full-2chunks");
	delta_full(CT_DELTA_CHUNK + 300, CT_DELTA_INT8, "seed-full-2chunks-int8");
	for (int k = 0; k < CT_FUZZ_NWUS; k++) {
		char f[64];

		snprintf(f, sizeof(f), "seed-lora-%d", k);
		delta_lora(&ct_fuzz_wus[k], CT_DELTA_LOSSLESS, f);
		snprintf(f, sizeof(f), "seed-lora-%d-int8", k);
		delta_lora(&ct_fuzz_wus[k], CT_DELTA_INT8, f);
	}
}

/* ---- token files ---- */

static void tokens(void)
{
	static const ct_tok ids[] = { 0, 1, 50256, 65535, 7, 300 };
	static const ct_tok wide[] = { 0, 70000, 128255, 65535, 7 };
	char path[4200];

	path_of(path, sizeof(path), "tokens", "seed-v1");
	check(ct_tokens_save_ids(path, ids, 6, 0), path);
	path_of(path, sizeof(path), "tokens", "seed-v1-empty");
	check(ct_tokens_save_ids(path, ids, 0, 0), path);
	path_of(path, sizeof(path), "tokens", "seed-v2");
	check(ct_tokens_save_ids(path, wide, 5, 1), path);
	path_of(path, sizeof(path), "tokens", "seed-v3");	/* a loss mask */
	check(ct_tokens_save_masked(path, wide, (const uint8_t[]){ 2, 0, 1, 1, 3 }, 5), path);
}

/* ---- model checkpoints ---- */

static void model(const struct ct_model_config *cfg, const char *file)
{
	struct ct_gpt2 m = { 0 };
	char path[4200];

	check(ct_gpt2_alloc(&m, cfg), file);
	check(ct_gpt2_init_random(cfg, 1, m.params), file);
	path_of(path, sizeof(path), "gpt2", file);
	check(ct_gpt2_save(path, cfg, m.params), path);
	ct_gpt2_free(&m);
}

static void gpt2(void)
{
	const struct ct_model_config g = { .maxT = 4, .V = 8, .Vp = 8, .L = 1, .NH = 1, .C = 4 };
	const struct ct_model_config l = { .maxT = 4, .V = 8, .Vp = 8, .L = 1, .NH = 2, .C = 8,
					  .arch = CT_ARCH_LLAMA, .KVH = 1, .F = 12,
					  .flags = CT_LLAMA_QKV_BIAS | CT_LLAMA_TIED,
					  .rope_theta = 10000.0, .rms_eps = 1e-5,
					  .rope_orig_maxT = 2, .rope_factor = 8.0,
					  .rope_low = 1.0, .rope_high = 4.0 };

	model(&g, "seed-gpt2");
	model(&l, "seed-llama");
}

/* ---- safetensors ---- */

/* A file of a hand-written header and raw data bytes. */
static void st_raw(const char *file, const char *json, const void *data, size_t n)
{
	struct ct_buf b;
	unsigned char hl[8];
	size_t jl = strlen(json);

	for (int i = 0; i < 8; i++)
		hl[i] = (unsigned char)((uint64_t)jl >> (8 * i));
	ct_buf_init(&b, 0);
	check(ct_buf_append(&b, hl, 8), file);
	check(ct_buf_append(&b, json, jl), file);
	check(ct_buf_append(&b, data, n), file);
	put("safetensors", file, b.data, b.len);
	ct_buf_free(&b);
}

static void safetensors(void)
{
	static const float a[6] = { 1, -2, 0.5f, 3e-40f, 1e30f, -0.0f };
	static const unsigned char raw[32] = { 0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c,
					       0x80, 0x3f, 0x00, 0xc0, 0x7f, 0x7f, 0x01, 0x00,
					       1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	const struct ct_st_out t[] = {
		{ .name = "model.embed_tokens.weight", .ndim = 2, .shape = { 2, 3 }, .data = a },
		{ .name = "model.norm.weight", .ndim = 1, .shape = { 6 }, .data = a },
		{ .name = "scalar", .ndim = 0, .data = a },
		{ .name = "empty", .ndim = 2, .shape = { 0, 3 }, .data = a },
	};
	char path[4200];

	path_of(path, sizeof(path), "safetensors", "seed-f32");
	check(ct_st_write(path, t, 4), path);
	st_raw("seed-dtypes", "{\"__metadata__\":{\"format\":\"pt\"},"
	       "\"h\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]},"
	       "\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[8,16]},"
	       "\"i\":{\"dtype\":\"I64\",\"shape\":[1,1,1,1,1,1,1,2],\"data_offsets\":[16,32]}}  ",
	       raw, sizeof(raw));
	st_raw("seed-empty", "{}", NULL, 0);
}

/* ---- tokenizer.json ---- */

/* The regular expressions ct_bpe_split.c implements, as JSON text. */
static const char LLAMA3_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}|"
	" ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+";
static const char QWEN2_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}|"
	" ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+";

/* GPT-2's byte alphabet: the code point that stands for byte c. */
static int alpha_cp(int c)
{
	int k = 0;

	if ((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)
		return c;
	for (int d = 0; d < c; d++)
		k += !((d >= 33 && d <= 126) || (d >= 161 && d <= 172) || d >= 174);
	return 256 + k;
}

/* The JSON string text of byte c's alphabet character. */
static void alpha_json(struct ct_buf *b, int c)
{
	int cp = alpha_cp(c);

	if (cp == '"' || cp == '\\')
		ct_buf_appendf(b, "\\%c", cp);
	else if (cp < 0x80)
		ct_buf_appendf(b, "%c", cp);
	else
		ct_buf_appendf(b, "%c%c", 0xC0 | cp >> 6, 0x80 | (cp & 0x3F));
}

/* bytes 0..255 -> ids 0..255 (id = byte), merges of "a b", "ab c", "Ġ t",
 * "Ġt h", "1 2" -> 256..260 (as "a b" strings, or [a, b] when arrays) */
static void vocab(struct ct_buf *b, const char *model_extra, int arrays)
{
	ct_buf_appendf(b, "\"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
		       "\"byte_fallback\": false%s, \"vocab\": {", model_extra);
	for (int c = 0; c < 256; c++) {
		ct_buf_appends(b, c ? ", \"" : "\"");
		alpha_json(b, c);
		ct_buf_appendf(b, "\": %d", c);
	}
	ct_buf_appends(b, ", \"ab\": 256, \"abc\": 257, \"");
	alpha_json(b, ' ');
	ct_buf_appends(b, "t\": 258, \"");
	alpha_json(b, ' ');
	ct_buf_appends(b, "th\": 259, \"12\": 260}, \"merges\": [");
	ct_buf_appends(b, arrays ? "[\"a\", \"b\"], [\"ab\", \"c\"], [\"" : "\"a b\", \"ab c\", \"");
	alpha_json(b, ' ');
	ct_buf_appends(b, arrays ? "\", \"t\"], [\"" : " t\", \"");
	alpha_json(b, ' ');
	ct_buf_appends(b, arrays ? "t\", \"h\"], [\"1\", \"2\"]]}}" : "t h\", \"1 2\"]}}");
}

static void tokenizer_json(const char *file, const char *head, const char *model_extra,
			   int arrays)
{
	struct ct_buf b;

	ct_buf_init(&b, 0);
	ct_buf_appendf(&b, "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, %s, ",
		       head);
	vocab(&b, model_extra, arrays);
	put("tokenizer", file, b.data, b.len);
	ct_buf_free(&b);
}

static void tokenizer(void)
{
	static const char added[] = "\"added_tokens\": [{\"id\": 261, \"content\": "
		"\"<|begin_of_text|>\", \"special\": true, \"lstrip\": false, \"rstrip\": false, "
		"\"normalized\": false, \"single_word\": false}, {\"id\": 262, \"content\": "
		"\"<|end_of_text|>\", \"special\": true}, {\"id\": 300, \"content\": \"<|x|>y\", "
		"\"special\": false}]";
	static const char tpl[] = "\"post_processor\": {\"type\": \"Sequence\", \"processors\": "
		"[{\"type\": \"ByteLevel\", \"trim_offsets\": false}, {\"type\": "
		"\"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": "
		"\"<|begin_of_text|>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", "
		"\"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"<|end_of_text|>\", \"type_id\": 0}}], "
		"\"special_tokens\": {\"<|begin_of_text|>\": {\"id\": \"<|begin_of_text|>\", "
		"\"ids\": [261], \"tokens\": [\"<|begin_of_text|>\"]}, \"<|end_of_text|>\": "
		"{\"id\": \"<|end_of_text|>\", \"ids\": [262, 261]}}}]}";
	char head[4096];

	tokenizer_json("seed-gpt2", "\"added_tokens\": [{\"id\": 300, \"content\": "
		       "\"<|endoftext|>\", \"special\": true}], \"normalizer\": null, "
		       "\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
		       "\"trim_offsets\": true, \"use_regex\": true}, \"post_processor\": "
		       "{\"type\": \"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}", "", 0);
	snprintf(head, sizeof(head), "%s, \"normalizer\": null, \"pre_tokenizer\": {\"type\": "
		 "\"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
		 "{\"Regex\": \"%s\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
		 "\"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]}, %s, "
		 "\"decoder\": {\"type\": \"ByteLevel\"}", added, LLAMA3_RE, tpl);
	tokenizer_json("seed-llama3", head, ", \"ignore_merges\": true", 0);
	snprintf(head, sizeof(head), "%s, \"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": "
		 "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
		 "{\"Regex\": \"%s\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
		 "\"ByteLevel\", \"use_regex\": false}]}, \"post_processor\": null", added, QWEN2_RE);
	tokenizer_json("seed-qwen2", head, "", 1);
	tokenizer_json("seed-digits", "\"added_tokens\": null, \"pre_tokenizer\": {\"type\": "
		       "\"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", "
		       "\"individual_digits\": true}, {\"type\": \"ByteLevel\", \"add_prefix_space\": "
		       "false, \"use_regex\": true}]}", ", \"continuing_subword_prefix\": \"\"", 1);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seeds DIR\n");
		return 2;
	}
	top = argv[1];
	delta();
	tokens();
	gpt2();
	safetensors();
	tokenizer();
	return 0;
}
