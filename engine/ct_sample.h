/*
 * ct_sample.h - text generation from a GPT-2 checkpoint: forward passes on
 * an engine backend ("cpu" or "opencl[:N]", ct_engine.h) give the logits of
 * the next token; the choice of the token is made here, on the host, in
 * fixed-order float32 arithmetic (the rules of doc/workunit.md, "Sampling"),
 * so that one seed gives the same tokens on every device.
 *
 *   struct ct_sample_params sp;
 *   struct ct_buf text;
 *   ct_sample_params_default(&sp);
 *   sp.seed = 7;
 *   ct_buf_init(&text, 1 << 20);
 *   rc = ct_sample_text(&model, tk, "cpu", "Once upon", 9, &sp, &text);
 *
 * The pieces (generator, pick) are public so that tests and other
 * implementations can check them one by one.
 */
#ifndef CT_SAMPLE_H
#define CT_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_gpt2.h"
#include "ct_tokenizer.h"

#define CT_SAMPLE_MAX_TOKENS 65536

/* What to generate. */
struct ct_sample_params {
	int ntokens;		/* tokens to generate, 0..CT_SAMPLE_MAX_TOKENS */
	float temperature;	/* >= 0 and finite; 0 = greedy (argmax) */
	int top_k;		/* 0 = all V tokens, else 1..V */
	uint64_t seed;		/* seeds the uniform draws */
};

/* Defaults: 64 tokens, temperature 1.0, top-k 40, seed 1. */
void ct_sample_params_default(struct ct_sample_params *p);

/* 0, or CT_EINVAL naming the bad field (V is the model's vocabulary). */
int ct_sample_params_check(const struct ct_sample_params *p, int V);

/* The uniform generator: splitmix64. state starts at the seed; each draw
 * adds 0x9e3779b97f4a7c15, mixes (z ^= z>>30; z *= 0xbf58476d1ce4e5b9;
 * z ^= z>>27; z *= 0x94d049bb133111eb; z ^= z>>31) and returns
 * (float)(z >> 40) * 2^-24, a float in [0, 1) with 24 random bits. */
struct ct_sample_rng {
	uint64_t state;
};
void ct_sample_rng_seed(struct ct_sample_rng *r, uint64_t seed);
float ct_sample_uniform(struct ct_sample_rng *r);

/* Choose a token from the V logits x (float32) with uniform draw u in
 * [0, 1):
 *   temperature == 0: the index of the largest x (the lowest on ties).
 *   else z_i = x_i / temperature (NaN counts as -inf); the candidates are
 *   the top_k largest z (order: z descending, then index ascending; all V
 *   when top_k is 0 or >= V); mx = the largest z;
 *   e_i = ct_expf(z_i - mx) for candidates, 0 otherwise;
 *   sum = acc + e_i over i = 0..V-1; r = u * sum;
 *   acc = acc + e_i over i = 0..V-1, the answer is the first i with
 *   e_i > 0 and r < acc (the last candidate with e_i > 0 when rounding
 *   leaves none; the first candidate when every e_i is 0).
 * scratch: V floats and V ints of caller memory (NULL: allocated here;
 * then CT_ENOMEM is possible). Returns the id (>= 0) or a CT_E* code. */
int ct_sample_pick(const float *x, int V, float temperature, int top_k, float u,
		   float *zscratch, int *iscratch);

/* Generate p->ntokens tokens after the prompt (np >= 1 ids, each < V) with
 * `model` on `device`. Each step runs a forward pass of the last
 * min(maxT, ...) tokens of the context (a window of at most maxT: the
 * oldest tokens drop out) and picks with ct_sample_pick() and one
 * ct_sample_uniform() draw. The ids are appended to *out; on_token (may be
 * NULL) is called after each one and stops generation by returning
 * non-zero. Returns 0 or a CT_E* code (CT_EINVAL for bad params or an
 * empty prompt, CT_EMISMATCH for a prompt id >= V, backend errors). */
int ct_sample_generate(const struct ct_gpt2 *model, const char *device,
		       const ct_tok *prompt, size_t np,
		       const struct ct_sample_params *p,
		       int (*on_token)(void *arg, ct_tok id), void *arg,
		       struct ct_tokvec *out);

/* The prompt's ids: encode n bytes of prompt with tk, appending to *out;
 * an empty prompt gives the tokenizer's end-of-text token, or "\n" when it
 * has none. A tokenizer.json whose post_processor template adds tokens
 * gets those first (Llama 3: <|begin_of_text|>, as its training documents
 * and Hugging Face's encode). Returns like ct_tokenizer_encode(). */
int ct_sample_prompt(const struct ct_tokenizer *tk, const char *prompt, size_t n,
		     struct ct_tokvec *out);

/* Text in, text out: encode `prompt` (n bytes) with tk, generate with
 * ct_sample_generate() and append the decoded new tokens to *text (the
 * prompt itself is not copied; an empty one as in ct_sample_prompt()). The tokenizer's
 * vocabulary must not exceed the model's (CT_EMISMATCH); an id the
 * tokenizer has no text for (padding past its vocabulary) adds nothing. */
int ct_sample_text(const struct ct_gpt2 *model, const struct ct_tokenizer *tk,
		   const char *device, const char *prompt, size_t n,
		   const struct ct_sample_params *p, struct ct_buf *text);

#endif
