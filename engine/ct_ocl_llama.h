/*
 * ct_ocl_llama.h - the Llama model type (ct_llama.h) on the OpenCL
 * backend: launchers of the Llama layer kernels (kernels/llama.cl), each
 * bit-identical to its C reference in ct_llama_layers.c, and the Llama
 * forward/backward pass that ct_ocl_backend.c runs for a family whose row
 * has CT_MODEL_OCL_LLAMA_PASS (ct_model_ops.h), call for call the twin of
 * ct_llama_model.c.
 *
 * Grouped-query attention (KVH < NH) runs through the GPT-2 attention
 * kernels (ct_ocl_attention_*_recompute): the q/k/v rows are first expanded
 * to GPT-2's [q | k | v] with each query head's kv head copied beside it,
 * and the gradients of the copies are added back into their kv head in
 * increasing query head, the order of ct_gqa_backward, so the bits are
 * those of the C reference. With KVH == NH the rows are already GPT-2's.
 * Tensors are (buffer, offset) pairs as in ct_ocl_ops.h; launchers only
 * enqueue.
 */
#ifndef CT_OCL_LLAMA_H
#define CT_OCL_LLAMA_H

#include <stdint.h>

#include "ct_gpt2.h"
#include "ct_ocl_ops.h"

struct ct_ocl_lora;
struct ct_dweights;

enum ct_ocl_llama_kid {
	CT_LK_EMBED_FWD,
	CT_LK_EMBED_BWD,
	CT_LK_RMSNORM_FWD,
	CT_LK_RMSNORM_BWD_DINP,
	CT_LK_RMSNORM_BWD_DW,
	CT_LK_ROPE,
	CT_LK_SWIGLU_FWD,
	CT_LK_SWIGLU_BWD,
	CT_LK_GQA_EXPAND,
	CT_LK_GQA_REDUCE,
	CT_LK_QKNORM_FWD,
	CT_LK_QKNORM_BWD_DW,
	CT_LK_QKNORM_BWD_DX,
	CT_LK_COUNT
};

/* The Llama kernels of ops's program, launched on ops's queue. */
struct ct_ocl_llk {
	struct ct_ocl_ops *ops;		/* borrowed */
	cl_kernel k[CT_LK_COUNT];
	/* CT_OCL_PROFILE=1 (ops->profile): each launch waited for and timed;
	 * the table goes to stderr from ct_ocl_llk_free, before ops' own */
	double prof_s[CT_LK_COUNT], prof_cpu[CT_LK_COUNT];
	long prof_n[CT_LK_COUNT];
};

/* Create the kernels. Returns 0 or CT_ECL (everything created released).
 * Release with ct_ocl_llk_free (safe on a zeroed struct). */
int ct_ocl_llk_init(struct ct_ocl_llk *lk, struct ct_ocl_ops *ops);
void ct_ocl_llk_free(struct ct_ocl_llk *lk);

/* Device twins of the ct_llama.h layers (same shapes, same bits); tokens
 * are a cl_mem of BT ct_tok. ct_ocl_rmsnorm_backward with dw.mem NULL:
 * dinp only (frozen weights). Return 0 or CT_ECL. */
int ct_ocl_embed_forward(struct ct_ocl_llk *lk, struct ct_dten out, cl_mem inp,
			 struct ct_dten wte, int BT, int C);
int ct_ocl_embed_backward(struct ct_ocl_llk *lk, struct ct_dten dwte, struct ct_dten dout,
			  cl_mem inp, int BT, int C);
int ct_ocl_rmsnorm_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten rstd,
			   struct ct_dten inp, struct ct_dten w, int BT, int C, float eps);
int ct_ocl_rmsnorm_backward(struct ct_ocl_llk *lk, struct ct_dten dinp, struct ct_dten dw,
			    struct ct_dten dout, struct ct_dten inp, struct ct_dten w,
			    struct ct_dten rstd, int BT, int C);
/* dir > 0: ct_rope_forward, dir < 0: ct_rope_backward (tab: T*hs floats
 * of ct_llama_rope_table). */
int ct_ocl_rope(struct ct_ocl_llk *lk, struct ct_dten qkv, struct ct_dten tab, int BT,
		int T, int NH, int KVH, int hs, int dir);
/* ct_qknorm_forward / ct_qknorm_backward (Qwen3's per-head q/k RMSNorm);
 * dqkw.mem NULL: the input gradient only (frozen weights). */
int ct_ocl_qknorm_forward(struct ct_ocl_llk *lk, struct ct_dten qkv, struct ct_dten rstd,
			  struct ct_dten raw, struct ct_dten qkw, int BT, int NH, int KVH,
			  int hd, float eps);
int ct_ocl_qknorm_backward(struct ct_ocl_llk *lk, struct ct_dten dqkv, struct ct_dten dqkw,
			   struct ct_dten raw, struct ct_dten qkw, struct ct_dten rstd,
			   int BT, int NH, int KVH, int hd);
int ct_ocl_swiglu_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten fch,
			  int BT, int F);
int ct_ocl_swiglu_backward(struct ct_ocl_llk *lk, struct ct_dten dfch, struct ct_dten fch,
			   struct ct_dten dout, int BT, int F);

/* ct_gqa_forward / ct_gqa_backward. x3 and dx3 are scratch of B*T*3*NH*hs
 * floats (unused when KVH == NH), dot of B*NH*T; dqkv must hold what the
 * reference's holds on entry (zeros in the model). */
int ct_ocl_gqa_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten stat,
		       struct ct_dten qkv, struct ct_dten x3,
		       int B, int T, int NH, int KVH, int hs);
int ct_ocl_gqa_backward(struct ct_ocl_llk *lk, struct ct_dten dqkv, struct ct_dten dot,
			struct ct_dten dout, struct ct_dten qkv, struct ct_dten stat,
			struct ct_dten x3, struct ct_dten dx3,
			int B, int T, int NH, int KVH, int hs);

/* ---- the model on the backend ------------------------------------------ */

struct ct_ocl_llama;

/* ct_ocl_llama_open's flags. */
enum {
	CT_OCL_LL_GRADS = 1,	/* the backward scratch (training or LoRA) */
	CT_OCL_LL_LEAN = 2,	/* with GRADS: lean mode, below */
	CT_OCL_LL_FROZEN = 4,	/* with GRADS: frozen weights (LoRA), so the head may
				 * be held in pieces (ct_ocl_llama_head_rows) */
};

/* Activations (and, with CT_OCL_LL_GRADS, the gradient scratch) of a
 * Llama config (checked) at batch B x T, and the RoPE table, on ops's
 * device. Returns 0, CT_ENOMEM, CT_EDEVNOMEM or CT_ECL; *out freed with
 * ct_ocl_llama_close (NULL is fine).
 *
 * Lean mode keeps every layer's input (B*T*C floats a layer) in host
 * memory (L x B*T*C floats, malloc'd here, freed by close; one layer's on
 * the device) and the other activations of one layer only, the buffers
 * of a layer's temporaries that are never live at once sharing device
 * memory; backward uploads each layer's input and runs the layer's
 * forward again from it before the layer's backward. The same kernels on
 * the same values: the same bits as without it, for about one more
 * forward pass a step. A lean frozen pass (LoRA) also runs each layer's
 * MLP in blocks of ct_ocl_llama_mlp_rows rows, forward and backward, so
 * its gate/up, SwiGLU and their gradients are held for one block, and the
 * attention one batch row at a time: every output row is computed whole
 * and the adapters' weight-gradient chains run over the blocks in row
 * order, so the bits are still those of the whole batch. */
int ct_ocl_llama_open(struct ct_ocl_ops *ops, const struct ct_model_config *cfg,
		      int B, int T, int flags, struct ct_ocl_llama **out);

/* Whether a training backend of cfg at B x T runs lean by default: when
 * lean mode saves more than 1 GiB (Llama-3.2-1B's shape at B=4 T=512:
 * 4.3 GiB of its 5.9). */
int ct_ocl_llama_lean(const struct ct_model_config *cfg, int B, int T);

/* Rows of a layer's MLP activations a pass with these flags holds at
 * once: all B*T, but in a lean frozen pass those that keep gate/up at
 * 2^21 floats (8 MiB; 128 rows of Llama-3.2-1B). CT_OCL_LEAN_ROWS=N
 * forces N in a lean frozen pass (tests). */
int ct_ocl_llama_mlp_rows(const struct ct_model_config *cfg, int B, int T, int flags);

/* Rows of logits a backend holds at once: all B*T, but with a frozen
 * head (LoRA) where they pass 2^23 floats (32 MiB), 2^23 / Vp rows, a
 * multiple of 64 where that is at least 64 (64 at Llama's vocabulary):
 * the forward pass keeps the losses only, and backward runs each piece's
 * head and softmax again before its gradient (the same kernels on the
 * same rows: the same bits, for one more pass through the head a step).
 * CT_OCL_HEAD_ROWS=N forces N (frozen heads; tests). */
int ct_ocl_llama_head_rows(const struct ct_model_config *cfg, int B, int T, int frozen);

/* Bytes of the device buffers ct_ocl_llama_open allocates for these
 * arguments (cfg valid), *largest (NULL: not wanted) the largest one. */
uint64_t ct_ocl_llama_bytes(const struct ct_model_config *cfg, int B, int T, int flags,
			    uint64_t *largest);

void ct_ocl_llama_close(struct ct_ocl_llama *ll);

/* Zero the Llama kernels' profile (the backend keeps the last step's, as
 * for its own kernels). NULL is fine. */
void ct_ocl_llama_prof_reset(struct ct_ocl_llama *ll);

/* ct_llama_forward up to the per-row losses, reading the weights params
 * (float32 or a compact base, ct_ocl_weights.h; the tokens already
 * uploaded to inputs and targets; targets NULL: up to the final norm) / ct_llama_backward (params's gradients added into
 * grads; grads NULL: frozen weights, input gradients and lora only). lora
 * NULL: no adapters. Enqueued. Return 0 or CT_E*. */
int ct_ocl_llama_forward(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			 cl_mem inputs,
			 cl_mem targets, struct ct_ocl_lora *lora);
int ct_ocl_llama_backward(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			  cl_mem grads,
			  cl_mem inputs, cl_mem targets, struct ct_ocl_lora *lora);

/* The logits of row pos (0 .. B*T - 1) of the last forward into the first
 * row of the logits buffer (ct_ocl_llama_logits), as in the whole batch.
 * Enqueued. Returns 0 or CT_E*. */
int ct_ocl_llama_logits_row(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			    int pos);

/* The losses (BT) of the last forward; the logits buffer. */
struct ct_dten ct_ocl_llama_losses(const struct ct_ocl_llama *ll);
struct ct_dten ct_ocl_llama_logits(const struct ct_ocl_llama *ll);

#endif
