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

/* On a target id handed to a compute backend (never in a file, never on
 * an input): the row is not trained, the loss and its gradient skip it
 * (the mask of a version 3 token file, doc/workunit.md section 5). Ids
 * stay below CT_VOCAB_MAX, so the bit is free. kernels/layers.cl has the
 * same value. */
#define CT_TOK_UNTRAINED 0x80000000u
#define CT_TOK_ID(t) ((t) & ~CT_TOK_UNTRAINED)

#endif
