/*
 * ct_llama.h - the second model type: the Llama architecture (Llama 2/3,
 * SmolLM2, Qwen2 with q/k/v biases) in crowdtune's engine. A Llama model is
 * a struct ct_model_config with arch = CT_ARCH_LLAMA and the same flat
 * parameter array of 16 tensor slots as GPT-2 (struct ct_gpt2_layout), so
 * work units, hashes, averaging, deltas and LoRA treat both types alike.
 * What each slot holds for Llama (empty slots have size 0; hd = head_dim,
 * A = NH*hd the attention width, A = C unless hd differs from C/NH):
 *   CT_WTE      embed_tokens (Vp, C)
 *   CT_WPE      lm_head (Vp, C); empty when tied (the logits use WTE)
 *   CT_LN1W     input_layernorm (L, C)
 *   CT_LN1B     (L, 2*hd) q_norm then k_norm (CT_LLAMA_QK_NORM, Qwen3)
 *   CT_QKVW     (L, QKV, C), QKV = (NH + 2*KVH) * hd: q_proj rows, then
 *               k_proj rows, then v_proj rows (HF's (out, in) layout)
 *   CT_QKVB     (L, QKV) q/k/v biases (CT_LLAMA_QKV_BIAS, Qwen2), else empty
 *   CT_ATTPROJW o_proj (L, C, A)
 *   CT_LN2W     post_attention_layernorm (L, C)
 *   CT_FCW      (L, 2F, C): gate_proj rows, then up_proj rows
 *   CT_FCPROJW  down_proj (L, C, F)
 *   CT_LNFW     norm (C)
 *   CT_ATTPROJB, CT_LN2B, CT_FCB, CT_FCPROJB, CT_LNFB: empty (and CT_LN1B
 *   without q/k norms).
 * hd = cfg.hd when set (Qwen3's head_dim), else C / NH.
 *
 * The arithmetic (RMSNorm, RoPE, SwiGLU, grouped-query attention) is
 * specified function by function below and in doc/workunit.md ("Llama");
 * it follows the GPT-2 rules of ct_model.h (fp32, explicit fmaf, sequential
 * chains, ct_expf, backward adds). sin and cos appear only in the RoPE
 * tables, computed once on the host in double by ct_llama_rope_table with
 * this file's own argument reduction and polynomials (no libm), then
 * rounded to float: the same bits on every IEEE-754 host.
 *
 * Checkpoint (crowdtune's own format for Llama, little-endian, the same
 * 1024-byte header size as llm.c's so params start at the same offset):
 *   i32 [0] magic 20261124  [1] version 1  [2] maxT [3] V [4] L [5] NH
 *       [6] C [7] Vp [8] KVH [9] F [10] flags [11] rope_orig_maxT
 *   f64 at byte 48 rope_theta, 56 rms_eps, 64 rope_factor, 72 rope_low,
 *       80 rope_high;  version 2 only: i32 at byte 88 head_dim;
 *   the remaining bytes up to 1023 zero.
 * Version 1 is written whenever it can say everything (head_dim = C/NH, no
 * q/k norms), so existing models keep their exact bytes; version 2 adds
 * head_dim and allows the CT_LLAMA_QK_NORM flag.
 *   float32 params[nparams] in the slot order above.
 * The file size must be exactly 1024 + 4*nparams. ct_gpt2_load() and
 * friends read and write both formats (the magic tells them apart).
 */
#ifndef CT_LLAMA_H
#define CT_LLAMA_H

#include <stddef.h>
#include <stdint.h>

#include "ct_gpt2.h"

#define CT_LLAMA_MAGIC 20261124
#define CT_LLAMA_VERSION 1
#define CT_LLAMA_VERSION_HD 2	/* carries head_dim; allows CT_LLAMA_QK_NORM */
#define CT_LLAMA_TIED 1		/* lm_head shares embed_tokens */
#define CT_LLAMA_QKV_BIAS 2	/* q/k/v projections have biases */
#define CT_LLAMA_QK_NORM 4	/* per-head RMSNorm of q and k (Qwen3) */
#define CT_LLAMA_MAX_HD 1024	/* cap on head_dim */
#define CT_LLAMA_MAX_F (1 << 18)

struct ct_model;

/* Extra checks of a Llama config (called by ct_gpt2_config_check after
 * the common fields): 1 <= KVH <= NH, NH % KVH == 0, hs even, 1 <= F <=
 * CT_LLAMA_MAX_F, known flags, rope_theta > 1, 0 < rms_eps < 1, scaling
 * either off (factor 0) or factor >= 1, 0 < low < high, orig_maxT >= 1,
 * hd 0 or an even 2..CT_LLAMA_MAX_HD other than C/NH (C/NH is written 0).
 * Returns 0 or CT_EFORMAT naming the field. */
int ct_llama_config_check(const struct ct_model_config *c);

/* Tensor sizes (floats) of the 16 slots above for a Llama config. */
void ct_llama_tensor_sizes(const struct ct_model_config *c, size_t s[CT_GPT2_NTENSORS]);

/* QKV = (NH + 2*KVH) * hd: rows of one layer's fused q/k/v matrix. */
int ct_llama_qkv_dim(const struct ct_model_config *c);

/* hd: cfg.hd when set, else C / NH. */
int ct_llama_head_dim(const struct ct_model_config *c);

/* A = NH * hd: the width of the attention output (o_proj's input). */
int ct_llama_att_dim(const struct ct_model_config *c);

/* Header of the Llama checkpoint (layout above) for cfg into hdr. */
void ct_llama_header(const struct ct_model_config *cfg, unsigned char hdr[CT_GPT2_HEADER_BYTES]);

/* Parse a Llama header (magic already seen) into cfg and check the total
 * image size n. Returns 0 or CT_EFORMAT naming `name`. */
int ct_llama_parse_header(const unsigned char *hdr, size_t n, const char *name,
			  struct ct_model_config *cfg);

/* Training FLOPs per token: 3 * (2*Nm + 2*L*A*(T+1)) with
 * Nm = L*(QKV*C + A*C + 3*F*C) + Vp*C (A = C when hd = C/NH). */
double ct_llama_flops_per_token(const struct ct_model_config *c, int T);

/* RoPE inverse frequencies (hs/2 doubles, hs = hd): f_i = theta^(-2i/hs),
 * computed as exp(-(2i/hs) * log(theta)) with this module's own exp and log; with
 * Llama-3 scaling (factor > 0), for wavelength w = 2*pi / f_i,
 * lo = orig/low, hi = orig/high:  w < hi: f_i;  w > lo: f_i / factor;
 * else with s = (orig/w - low) / (high - low): (1-s)*f_i/factor + s*f_i. */
void ct_llama_inv_freq(const struct ct_model_config *c, double *inv_freq);

/* RoPE table for positions 0..T-1: tab[(t*hs/2 + i)*2 + 0] = (float)cos(a),
 * [.. + 1] = (float)sin(a), a = t * f_i in double; cos/sin by this
 * module's own double routines. tab holds T*hs floats. Returns 0 or
 * CT_ENOMEM. */
int ct_llama_rope_table(const struct ct_model_config *c, int T, float *tab);

/* ---- layers (fp32, the rules of ct_model.h) ------------------------- */

/* RMSNorm per row r of inp (BT,C):
 *   ss = acc over i of fmaf(x[i], x[i], acc);  ms = ss / (float)C
 *   rs = 1.0f / sqrtf(ms + eps);  out[i] = (x[i] * rs) * w[i]
 * rstd (BT) saved for backward. */
void ct_rmsnorm_forward(float *out, float *rstd, const float *inp,
			const float *w, int BT, int C, float eps);

/* With n_i = x[i] * rstd[r], dn_i = w[i] * dout[r,i], per row:
 *   s = acc over i of fmaf(dn_i, n_i, acc);  m = s / (float)C
 *   dv = dn_i - (n_i * m); dv = dv * rstd[r];  dinp[r,i] = dinp[r,i] + dv
 *   dw[i]: acc over r of fmaf(n_i(r), dout[r,i], acc); dw[i] = dw[i] + acc
 * dw NULL: only dinp (frozen). */
void ct_rmsnorm_backward(float *dinp, float *dw, const float *dout,
			 const float *inp, const float *w, const float *rstd,
			 int BT, int C);

/* Per-head RMSNorm of queries and keys (CT_LLAMA_QK_NORM, before RoPE):
 * for row r of raw (BT rows of QKV) and head h < NH + KVH (q heads, then
 * k heads), x = the head's hd values, w = qkw (h < NH: q_norm) or qkw + hd
 * (k_norm), as ct_rmsnorm_forward with C = hd:
 *   ss = acc over i of fmaf(x[i], x[i], acc);  rs = 1.0f / sqrtf(ss /
 *   (float)hd + eps);  qkv[..i] = (x[i] * rs) * w[i];  rstd[r*(NH+KVH)+h] = rs
 * The v heads are copied unchanged into qkv. */
void ct_qknorm_forward(float *qkv, float *rstd, const float *raw, const float *qkw,
		       int BT, int NH, int KVH, int hd, float eps);

/* Backward, in place on dqkv's q and k heads (the gradient of the normed
 * values becomes that of raw; v heads untouched). First, if dqkw is not
 * NULL, for i < hd: dqkw[i] += (acc over r ascending, then q head h
 * ascending, of fmaf(x_i * rs, dy_i, acc)), and dqkw[hd + i] the same over
 * the k heads. Then per (r, h), with dn_i = w_i * dy_i, n_i = x_i * rs:
 *   s = acc over i of fmaf(dn_i, n_i, acc);  m = s / (float)hd
 *   dy_i = (dn_i - (n_i * m)) * rs   (replaced, not added) */
void ct_qknorm_backward(float *dqkv, float *dqkw, const float *raw, const float *qkw,
			const float *rstd, int BT, int NH, int KVH, int hd);

/* Rotary embedding in place on the q and k heads of qkv (BT rows of QKV,
 * positions t = r % T), HF's rotate-half pairing (i, i + hs/2), i < hs/2,
 * with c = tab[t][i].cos, s = tab[t][i].sin:
 *   x0' = (x0 * c) - (x1 * s);  x1' = (x1 * c) + (x0 * s)
 * (each product rounded, no fma). heads: NH q heads then KVH k heads. */
void ct_rope_forward(float *qkv, const float *tab, int BT, int T, int NH,
		     int KVH, int hs);

/* The transpose, in place on the gradient of the rotated q, k:
 *   g0' = (g0 * c) + (g1 * s);  g1' = (g1 * c) - (g0 * s) */
void ct_rope_backward(float *dqkv, const float *tab, int BT, int T, int NH,
		      int KVH, int hs);

/* SwiGLU: fch (BT, 2F) = [gate | up]; out (BT, F):
 *   sg = ct_expf(-g); sig = 1.0f / (1.0f + sg); out = ((g * sig) * u) */
void ct_swiglu_forward(float *out, const float *fch, int BT, int F);

/* dfch (BT,2F) +=:  a = g * sig;
 *   du = dout * a;  dg = (dout * u) * (sig * (1.0f + (g * (1.0f - sig))))
 *   dfch[gate] = dfch[gate] + dg;  dfch[up] = dfch[up] + du */
void ct_swiglu_backward(float *dfch, const float *fch, const float *dout, int BT, int F);

/* Grouped-query causal attention on rotated qkv (B,T,QKV): query head h
 * reads kv head h / (NH/KVH); every chain as ct_attention_forward in
 * ct_model.h (scale 1/sqrtf(hs), max, ct_expf, e/sum, fmaf sums), keeping
 * the row max and sum in stat (B,NH,T,2); row: T floats of scratch. */
void ct_gqa_forward(float *out, float *stat, float *row, const float *qkv,
		    int B, int T, int NH, int KVH, int hs);

/* Backward as ct_attention_backward_recompute, per (b, h) in increasing
 * order; the dk, dv chains of head h (over t = t2..T-1) are added into
 * dqkv's kv head once after head h, so a kv head shared by G query heads
 * receives G additions in increasing h. scratch: T*(2+2hs) floats. */
void ct_gqa_backward(float *dqkv, float *scratch, const float *dout,
		     const float *qkv, const float *stat,
		     int B, int T, int NH, int KVH, int hs);

/* ---- the model (struct ct_model with cfg.arch == CT_ARCH_LLAMA) ------ */

/* Forward (mean loss; targets NULL: logits only, returns 0) and backward,
 * the same contract as ct_model_forward / ct_model_backward. Backward
 * order: crossentropy -> lm_head (or tied embedding) -> final RMSNorm ->
 * layers L-1..0 (residual3 -> down -> SwiGLU -> gate/up -> ln2 ->
 * residual2 -> o_proj -> attention -> RoPE^T -> q/k norms -> qkv -> ln1)
 * -> embedding. */
float ct_llama_forward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets);
void ct_llama_backward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets);

#endif
