/*
 * ct_tok.h - the type of a token id, everywhere from token files to the
 * OpenCL kernels (kernels/ct_math.clh declares the same type for them).
 *
 * Ids are 32-bit so that vocabularies over 65,536 (Llama 3: 128,256;
 * Qwen2.5/3: 151,936) train. A model's vocabulary is capped at
 * CT_VOCAB_MAX; every id is checked against the model's V where it enters
 * (ct_tokens_check_vocab, ct_sample's prompt check).
 */
#ifndef CT_TOK_H
#define CT_TOK_H

#include <stdint.h>

typedef uint32_t ct_tok;

#define CT_VOCAB_MAX (1 << 21)	/* largest vocabulary a model may have */

#endif
