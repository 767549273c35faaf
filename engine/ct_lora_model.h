/*
 * ct_lora_model.h - LoRA in the C reference model: the adapter layer
 * (forward and backward of one adapter, the executable specification the
 * OpenCL backend matches bit for bit) and the hooks by which ct_model.c
 * runs adapters next to its frozen weight matrices (through the model's
 * lora_ops, struct ct_model_lora_ops, which ct_lora_attach sets).
 *
 * Arithmetic of one adapter on a target W (OC, C) with input x (BT, C),
 * A (r, C), B (OC, r), s = alpha / r, after the layer's own
 * ct_matmul_forward has written y = x W^T + bias:
 *   h  = ct_matmul_forward(x, A, no bias)       h[t,j] = fmaf chain over i
 *   hs[t,j] = h[t,j] * s                        (kept for backward)
 *   u  = ct_matmul_forward(hs, B, no bias)      u[t,o] = fmaf chain over j
 *   y[t,o] = y[t,o] + u[t,o]
 * Backward, given dy (BT, OC) and after the frozen matmul's own
 * dx += dy W (ct_matmul_backward with no dw, no dbias):
 *   dhs = 0; dhs += dy B; dB += dy^T hs          (ct_matmul_backward(dhs, dB, NULL, dy, hs, B))
 *   dh[t,j] = dhs[t,j] * s
 *   dx += dh A; dA += dh^T x                     (ct_matmul_backward(dx, dA, NULL, dh, x, A))
 * so every chain is the one ct_matmul_* states (fmaf, increasing index,
 * one add into the output). The adapter gradients are zeroed at the start
 * of the step; clipping and AdamW run over the whole adapter array exactly
 * as over the full parameters (ct_grad_clip, ct_adamw_update), weight
 * decay included. Base weights, biases, layernorms and embeddings get no
 * gradient and have no AdamW moments.
 */
#ifndef CT_LORA_MODEL_H
#define CT_LORA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ct_lora.h"
#include "ct_model.h"

/* One adapter forward (see above). out (BT,OC) +=; hs (BT,r) written;
 * u (BT,OC) scratch; inp (BT,C); A (r,C); Bm (OC,r). */
void ct_lora_layer_forward(float *out, float *hs, float *u, const float *inp,
			   const float *A, const float *Bm, float s,
			   int BT, int C, int OC, int r);

/* One adapter backward (see above). dinp (BT,C) +=, dA (r,C) +=,
 * dB (OC,r) +=; dh (BT,r) scratch (overwritten); dinp may be NULL (then
 * only dA, dB). */
void ct_lora_layer_backward(float *dinp, float *dA, float *dB, float *dh,
			    const float *dout, const float *inp, const float *hs,
			    const float *A, const float *Bm, float s,
			    int BT, int C, int OC, int r);

/* LoRA state of a model (opaque). */
struct ct_lora_state;

/* Attach adapters to a model opened with ct_model_init(..., training)
 * where training is CT_MODEL_FROZEN (train the adapters: gradients and
 * zeroed AdamW moments for them) or 0 (forward with adapters only).
 * adapters: ct_lora_nparams floats, copied (NULL: zeros). Returns 0,
 * CT_EINVAL (bad spec, rank 0, or a model opened with training 1) or
 * CT_ENOMEM. ct_model_free releases it. */
int ct_lora_attach(struct ct_model *m, const struct ct_lora_spec *spec,
		   const float *adapters);

/* Floats ct_lora_attach allocates for spec on cfg at B x T (train: with
 * the gradients, moments and backward scratch): the adapters, their
 * scaled hidden rows per slot and the widest output row (exact). */
size_t ct_lora_state_floats(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			    int B, int T, int train);

/* Release m's LoRA state (no-op without one). */
void ct_lora_detach(struct ct_model *m);

/* Adapter count, and the adapter array, its gradient and moments (NULL
 * when eval only); NULL/0 without LoRA. Borrowed. */
size_t ct_lora_model_nparams(const struct ct_model *m);
float *ct_lora_model_adapters(struct ct_model *m);
float *ct_lora_model_grads(struct ct_model *m);
float *ct_lora_model_m(struct ct_model *m);
float *ct_lora_model_v(struct ct_model *m);

/* Hooks of ct_model.c, no-ops when m has no LoRA or no adapter on (l, t):
 * after the target's ct_matmul_forward, out (BT,OC) gets the adapter term
 * of input inp (BT,C); after the target's ct_matmul_backward, dinp (BT,C)
 * gets the adapter's input gradient from dout (BT,OC), and the adapter
 * gradients theirs. */
void ct_lora_forward(struct ct_model *m, int l, enum ct_lora_target t,
		     float *out, const float *inp);
void ct_lora_backward(struct ct_model *m, int l, enum ct_lora_target t,
		      float *dinp, const float *dout, const float *inp);

/* One LoRA training step: zero adapter grads, forward, backward, clip
 * (grad_clip > 0) over the adapter gradients, AdamW over the adapters.
 * Returns 0 or CT_ESTATE (no trainable LoRA). */
int ct_lora_step(struct ct_model *m, const ct_tok *inputs, const ct_tok *targets,
		 const struct ct_adamw_args *a, float grad_clip, float *loss);

#endif
