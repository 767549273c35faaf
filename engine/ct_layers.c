/*
 * ct_layers.c - the C reference of every GPT-2 layer, forward and backward,
 * plus AdamW and gradient clipping (contracts and exact arithmetic in
 * ct_model.h; the same text in prose in doc/workunit.md).
 *
 * This is the specification the OpenCL kernels must match bit for bit, so
 * the code favours the obvious form. Each output's chain of operations is
 * the one ct_model.h states; loops may visit OUTPUTS in any order (the
 * matmuls are blocked across outputs for cache and SIMD), never reorder the
 * additions inside one output.
 *
 * Speed: fmaf() without hardware FMA is a libm call, so the hot loops are
 * CT_KERNELs, compiled for x86-64, AVX2 + FMA and AVX-512 and picked at
 * run time (ct_isa.h); the results are identical since fmaf is correctly
 * rounded either way.
 */
#include "config.h"
#include "ct_options.h"
#include "ct_model.h"
#include "ct_math.h"
#include "ct_os.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- encoder -------------------------------------------------------- */

void ct_encoder_forward(float *out, const ct_tok *inp, const float *wte,
			const float *wpe, int B, int T, int C)
{
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			float *o = out + ((size_t)b * T + t) * C;
			const float *we = wte + (size_t)inp[b * T + t] * C;
			const float *pe = wpe + (size_t)t * C;

			for (int c = 0; c < C; c++)
				o[c] = we[c] + pe[c];
		}
	}
}

void ct_encoder_forward_w(float *out, const ct_tok *inp, struct ct_wmat wte,
			  struct ct_wmat wpe, int B, int T, int C)
{
	if (wte.f != NULL && wpe.f != NULL) {
		ct_encoder_forward(out, inp, wte.f, wpe.f, B, T, C);
		return;
	}
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			float *o = out + ((size_t)b * T + t) * C;
			size_t we = (size_t)inp[b * T + t] * C, pe = (size_t)t * C;

			for (int c = 0; c < C; c++) {
				float x = ct_wmat_at(wte, we + c), y = ct_wmat_at(wpe, pe + c);

				o[c] = x + y;
			}
		}
	}
}

void ct_encoder_backward(float *dwte, float *dwpe, const float *dout,
			 const ct_tok *inp, int B, int T, int C)
{
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			const float *d = dout + ((size_t)b * T + t) * C;
			float *dwe = dwte + (size_t)inp[b * T + t] * C;
			float *dpe = dwpe + (size_t)t * C;

			for (int c = 0; c < C; c++) {
				dwe[c] = dwe[c] + d[c];
				dpe[c] = dpe[c] + d[c];
			}
		}
	}
}

/* ---- layernorm ------------------------------------------------------ */

CT_KERNEL(ct_layernorm_forward,
	  (float *out, float *mean, float *rstd, const float *inp, const float *w,
	   const float *b, int BT, int C),
	  (out, mean, rstd, inp, w, b, BT, C))
{
	for (int r = 0; r < BT; r++) {
		const float *x = inp + (size_t)r * C;
		float *o = out + (size_t)r * C;
		float sum = 0.0f, ss = 0.0f, mu, var, rs;

		for (int i = 0; i < C; i++)
			sum = sum + x[i];
		mu = sum / (float)C;
		for (int i = 0; i < C; i++) {
			float d = x[i] - mu;

			ss = fmaf(d, d, ss);
		}
		var = ss / (float)C;
		rs = 1.0f / sqrtf(var + CT_LN_EPS);
		for (int i = 0; i < C; i++) {
			float n = (x[i] - mu) * rs;
			float y = n * w[i];

			o[i] = y + b[i];
		}
		mean[r] = mu;
		rstd[r] = rs;
	}
}

/* dinp of one row of layernorm backward (see ct_model.h). */
CT_KERNEL_INLINE void layernorm_backward_row(float *dinp, const float *dout,
					     const float *x, const float *w,
					     float mu, float rs, int C)
{
	float s1 = 0.0f, s2 = 0.0f, m1, m2;

	for (int i = 0; i < C; i++) {
		float n = (x[i] - mu) * rs;
		float dn = w[i] * dout[i];

		s1 = s1 + dn;
		s2 = fmaf(dn, n, s2);
	}
	m1 = s1 / (float)C;
	m2 = s2 / (float)C;
	for (int i = 0; i < C; i++) {
		float n = (x[i] - mu) * rs;
		float dn = w[i] * dout[i];
		float dv = dn - m1;

		dv = fmaf(-n, m2, dv);
		dv = dv * rs;
		dinp[i] = dinp[i] + dv;
	}
}

CT_KERNEL(ct_layernorm_backward,
	  (float *dinp, float *dw, float *db, const float *dout, const float *inp,
	   const float *w, const float *mean, const float *rstd, int BT, int C),
	  (dinp, dw, db, dout, inp, w, mean, rstd, BT, C))
{
	for (int r = 0; r < BT; r++)
		layernorm_backward_row(dinp + (size_t)r * C, dout + (size_t)r * C,
				       inp + (size_t)r * C, w, mean[r], rstd[r], C);
	for (int i = 0; i < C && dw != NULL; i++) {
		float aw = 0.0f, ab = 0.0f;

		for (int r = 0; r < BT; r++) {
			float g = dout[(size_t)r * C + i];
			float n = (inp[(size_t)r * C + i] - mean[r]) * rstd[r];

			aw = fmaf(n, g, aw);
			ab = ab + g;
		}
		dw[i] = dw[i] + aw;
		db[i] = db[i] + ab;
	}
}

/* ---- matmul --------------------------------------------------------- */

/*
 * The one matmul core. For m < M, n < N:
 *   acc = init ? init[n] : 0.0f
 *   for k = 0..K-1: acc = fmaf(A[m*sam + k*sak], B(k, n), acc)
 *   out[m*ldo + n] = add ? out[m*ldo + n] + acc : acc
 * with B(k, n) = Bm[k*ldb + n], or Bm[n*ldb + k] when btrans (or the same
 * element of Bh widened from bfloat16, exact). Work is cut
 * into tiles of MB x NB outputs; a tile's accumulators advance k in lock
 * step (vectorised across n), each one still a single sequential chain over
 * k, so neither the tiling nor the threads change any result. For btrans,
 * and for a bfloat16 B, each column tile of B is first packed (widened)
 * into a K x NB buffer.
 */
#define MB 4
#define NB 64

struct gemm {
	float *out;
	size_t ldo;
	const float *A;
	size_t sam, sak;
	const float *Bm;
	const uint16_t *Bh;	/* bfloat16 B instead of Bm, or NULL */
	const unsigned char *Bq8;	/* q8/nf4 B instead (blocks of Bqfmt; B starts at
					 * element Bqe) */
	size_t Bqe;
	int Bqfmt;
	size_t ldb;
	int btrans;
	int M, N, K;
	const float *init;
	int add;
};

/* Full tile at (m0, n0); bp points at B(0, n0), rows ldbp apart. */
static CT_KERNEL(gemm_tile_full,
		 (const struct gemm *g, int m0, int n0, const float *bp, size_t ldbp),
		 (g, m0, n0, bp, ldbp))
{
	float acc[MB][NB];

	for (int mm = 0; mm < MB; mm++)
		for (int nn = 0; nn < NB; nn++)
			acc[mm][nn] = g->init ? g->init[n0 + nn] : 0.0f;
	for (int k = 0; k < g->K; k++) {
		const float *brow = bp + (size_t)k * ldbp;

		for (int mm = 0; mm < MB; mm++) {
			float a = g->A[(size_t)(m0 + mm) * g->sam + (size_t)k * g->sak];

			for (int nn = 0; nn < NB; nn++)
				acc[mm][nn] = fmaf(a, brow[nn], acc[mm][nn]);
		}
	}
	for (int mm = 0; mm < MB; mm++) {
		float *o = g->out + (size_t)(m0 + mm) * g->ldo + n0;

		for (int nn = 0; nn < NB; nn++)
			o[nn] = g->add ? o[nn] + acc[mm][nn] : acc[mm][nn];
	}
}

/* Same arithmetic for a partial tile (mb <= MB rows, nb <= NB columns). */
static CT_KERNEL(gemm_tile_edge,
		 (const struct gemm *g, int m0, int n0, int mb, int nb, const float *bp,
		  size_t ldbp),
		 (g, m0, n0, mb, nb, bp, ldbp))
{
	float acc[MB][NB];

	for (int mm = 0; mm < mb; mm++)
		for (int nn = 0; nn < nb; nn++)
			acc[mm][nn] = g->init ? g->init[n0 + nn] : 0.0f;
	for (int k = 0; k < g->K; k++) {
		const float *brow = bp + (size_t)k * ldbp;

		for (int mm = 0; mm < mb; mm++) {
			float a = g->A[(size_t)(m0 + mm) * g->sam + (size_t)k * g->sak];

			for (int nn = 0; nn < nb; nn++)
				acc[mm][nn] = fmaf(a, brow[nn], acc[mm][nn]);
		}
	}
	for (int mm = 0; mm < mb; mm++) {
		float *o = g->out + (size_t)(m0 + mm) * g->ldo + n0;

		for (int nn = 0; nn < nb; nn++)
			o[nn] = g->add ? o[nn] + acc[mm][nn] : acc[mm][nn];
	}
}

/* B(k, n), widened when B is bfloat16. */
static inline float gemm_b(const struct gemm *g, int k, int n)
{
	size_t i = g->btrans ? (size_t)n * g->ldb + k : (size_t)k * g->ldb + n;

	if (g->Bq8 != NULL)
		return ct_blk_at(g->Bqfmt, g->Bq8, g->Bqe + i);
	return g->Bh ? ct_bf16_to_f32(g->Bh[i]) : g->Bm[i];
}

/* Column block n0 one output at a time (same chains): a btrans or
 * bfloat16 product when there is no memory to pack. */
static CT_KERNEL(gemm_column_plain,
		 (const struct gemm *g, int n0, int nb),
		 (g, n0, nb))
{
	for (int m = 0; m < g->M; m++) {
		for (int n = n0; n < n0 + nb; n++) {
			float acc = g->init ? g->init[n] : 0.0f;
			float *o = g->out + (size_t)m * g->ldo + n;

			for (int k = 0; k < g->K; k++)
				acc = fmaf(g->A[(size_t)m * g->sam + (size_t)k * g->sak],
					   gemm_b(g, k, n), acc);
			*o = g->add ? *o + acc : acc;
		}
	}
}

/* Pack column block n0 (nb wide) of a bfloat16 B, widened, into pack
 * (K x NB). */
static void gemm_pack_bf16(const struct gemm *g, int n0, int nb, float *pack)
{
	if (g->Bq8 != NULL) {	/* q8: element by element (same values) */
		for (int k = 0; k < g->K; k++)
			for (int nn = 0; nn < nb; nn++)
				pack[(size_t)k * NB + nn] = gemm_b(g, k, n0 + nn);
		return;
	}
	if (g->btrans) {
		for (int nn = 0; nn < nb; nn++) {
			const uint16_t *src = g->Bh + (size_t)(n0 + nn) * g->ldb;

			for (int k = 0; k < g->K; k++)
				pack[(size_t)k * NB + nn] = ct_bf16_to_f32(src[k]);
		}
		return;
	}
	for (int k = 0; k < g->K; k++) {
		const uint16_t *src = g->Bh + (size_t)k * g->ldb + n0;
		float *dst = pack + (size_t)k * NB;

		for (int nn = 0; nn < nb; nn++)
			dst[nn] = ct_bf16_to_f32(src[nn]);
	}
}

/* Whether g packs B: btrans, bfloat16, or a long K of a float32 B read
 * in place (the input gradient through the vocabulary matrix: 64 floats
 * a row, rows ldb apart, streamed once per tile of A rows; packed, the
 * column block is contiguous. Measured with bench_train's LoRA rows, the
 * C reference: see doc/results.md). Packing copies, so no value changes. */
#define PACK_MIN_K 1024
static int gemm_packs(const struct gemm *g)
{
	return g->btrans || g->Bh != NULL || g->Bq8 != NULL ||
	       (g->K >= PACK_MIN_K && g->ldb > NB);
}

/* All tiles of column block n0 (nb columns wide). pack: K*NB floats of
 * scratch when gemm_packs (NULL: fall back to gemm_column_plain). */
static void gemm_column(const struct gemm *g, int n0, float *pack)
{
	int nb = g->N - n0 < NB ? g->N - n0 : NB;
	const float *bp = g->Bm + n0;
	size_t ldbp = g->ldb;

	if (gemm_packs(g) && pack == NULL) {	/* no memory to pack: plain loops */
		gemm_column_plain(g, n0, nb);
		return;
	}
	if (g->Bh != NULL || g->Bq8 != NULL) {
		gemm_pack_bf16(g, n0, nb, pack);
		bp = pack;
		ldbp = NB;
	} else if (g->btrans) {
		for (int nn = 0; nn < nb; nn++) {
			const float *src = g->Bm + (size_t)(n0 + nn) * g->ldb;

			for (int k = 0; k < g->K; k++)
				pack[(size_t)k * NB + nn] = src[k];
		}
		bp = pack;
		ldbp = NB;
	} else if (pack != NULL) {	/* a long K read in place: rows copied */
		for (int k = 0; k < g->K; k++)
			memcpy(pack + (size_t)k * NB, g->Bm + (size_t)k * g->ldb + n0,
			       (size_t)nb * sizeof(float));
		bp = pack;
		ldbp = NB;
	}
	for (int m0 = 0; m0 < g->M; m0 += MB) {
		int mb = g->M - m0 < MB ? g->M - m0 : MB;

		if (mb == MB && nb == NB)
			gemm_tile_full(g, m0, n0, bp, ldbp);
		else
			gemm_tile_edge(g, m0, n0, mb, nb, bp, ldbp);
	}
}

#define MAX_THREADS 64

struct gemm_job {
	const struct gemm *g;
	int first, step;	/* column blocks first, first+step, ... */
};

static void *gemm_worker(void *arg)
{
	struct gemm_job *j = arg;
	const struct gemm *g = j->g;
	float *pack = gemm_packs(g) ? malloc((size_t)g->K * NB * sizeof(float)) : NULL;

	for (int n0 = j->first * NB; n0 < g->N; n0 += j->step * NB)
		gemm_column(g, n0, pack);
	free(pack);
	return NULL;
}

static int nthreads_cfg;

/* Worker threads for the CPU reference: $CTUNE_THREADS, else the number of
 * online CPUs. Results never depend on it. */
static int ct_threads(void)
{
	if (nthreads_cfg == 0) {
		long n = ct_opt_int(CT_OPT_THREADS, ct_os_ncpus());

		nthreads_cfg = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
	}
	return nthreads_cfg;
}

/* Run g, on several threads when it is big enough; if a thread cannot be
 * started, the calling thread does that share too (same results). */
static void gemm_run(const struct gemm *g)
{
	struct gemm_job jobs[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int ok[MAX_THREADS] = { 0 };
	int ncols = (g->N + NB - 1) / NB, nt = ct_threads();

	if ((double)g->M * g->N * g->K < 4e6)
		nt = 1;
	if (nt > ncols)
		nt = ncols;
	for (int i = 0; i < nt; i++) {
		jobs[i] = (struct gemm_job){ .g = g, .first = i, .step = nt };
		if (i > 0)
			ok[i] = pthread_create(&tid[i], NULL, gemm_worker, &jobs[i]) == 0;
	}
	gemm_worker(&jobs[0]);
	for (int i = 1; i < nt; i++) {
		if (ok[i])
			pthread_join(tid[i], NULL);
		else
			gemm_worker(&jobs[i]);
	}
}

void ct_matmul_forward(float *out, const float *inp, const float *w,
		       const float *bias, int BT, int C, int OC)
{
	struct gemm g = { .out = out, .ldo = (size_t)OC, .A = inp, .sam = (size_t)C,
			  .sak = 1, .Bm = w, .ldb = (size_t)C, .btrans = 1,
			  .M = BT, .N = OC, .K = C, .init = bias, .add = 0 };

	gemm_run(&g);
}

void ct_matmul_forward_w(float *out, const float *inp, struct ct_wmat w,
			 const float *bias, int BT, int C, int OC)
{
	struct gemm g = { .out = out, .ldo = (size_t)OC, .A = inp, .sam = (size_t)C,
			  .sak = 1, .Bm = w.f, .Bh = w.h, .Bq8 = w.q8, .Bqe = w.qe,
			  .Bqfmt = w.qfmt, .ldb = (size_t)C, .btrans = 1,
			  .M = BT, .N = OC, .K = C, .init = bias, .add = 0 };

	gemm_run(&g);
}

void ct_matmul_backward_w(float *dinp, float *dw, float *dbias, const float *dout,
			  const float *inp, struct ct_wmat w, int BT, int C, int OC)
{
	struct gemm g;

	if (w.f != NULL) {
		ct_matmul_backward(dinp, dw, dbias, dout, inp, w.f, BT, C, OC);
		return;
	}
	if (dinp != NULL) {	/* the chain of ct_matmul_backward's dinp */
		g = (struct gemm){ .out = dinp, .ldo = (size_t)C, .A = dout,
				   .sam = (size_t)OC, .sak = 1, .Bh = w.h, .Bq8 = w.q8,
				   .Bqe = w.qe, .Bqfmt = w.qfmt,
				   .ldb = (size_t)C, .M = BT, .N = C, .K = OC,
				   .init = NULL, .add = 1 };
		gemm_run(&g);
	}
	/* a bf16 weight is frozen: dw and dbias are NULL, nothing else to do */
	(void)dw;
	(void)dbias;
	(void)inp;
}

static CT_KERNEL(bias_backward,
		 (float *dbias, const float *dout, int BT, int OC),
		 (dbias, dout, BT, OC))
{
	for (int o = 0; o < OC; o++) {
		float acc = 0.0f;

		for (int r = 0; r < BT; r++)
			acc = acc + dout[(size_t)r * OC + o];
		dbias[o] = dbias[o] + acc;
	}
}

void ct_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout,
			const float *inp, const float *w, int BT, int C, int OC)
{
	struct gemm g;

	if (dinp != NULL) {
		/* dinp[r,i] += sum_o dout[r,o] * w[o,i] */
		g = (struct gemm){ .out = dinp, .ldo = (size_t)C, .A = dout,
				   .sam = (size_t)OC, .sak = 1, .Bm = w,
				   .ldb = (size_t)C, .M = BT, .N = C, .K = OC,
				   .init = NULL, .add = 1 };
		gemm_run(&g);
	}
	/* dw[o,i] += sum_r dout[r,o] * inp[r,i] */
	if (dw == NULL)		/* frozen weights (LoRA) */
		return;
	g = (struct gemm){ .out = dw, .ldo = (size_t)C, .A = dout, .sam = 1,
			   .sak = (size_t)OC, .Bm = inp, .ldb = (size_t)C,
			   .M = OC, .N = C, .K = BT, .init = NULL, .add = 1 };
	gemm_run(&g);
	if (dbias != NULL)
		bias_backward(dbias, dout, BT, OC);
}

/* ---- attention ------------------------------------------------------ */

/* One (b, h, t) row of attention forward: att_row (T), out_row (hs). */
static CT_KERNEL(attention_row,
		 (float *out_row, float *att_row, const float *qkv_b, int t, int T,
		  int C, int hoff, int hs, float scale),
		 (out_row, att_row, qkv_b, t, T, C, hoff, hs, scale))
{
	const size_t C3 = (size_t)3 * C;
	const float *q = qkv_b + (size_t)t * C3 + hoff;
	float mx = 0.0f;

	for (int t2 = 0; t2 <= t; t2++) {
		const float *k = qkv_b + (size_t)t2 * C3 + C + hoff;
		float acc = 0.0f;

		for (int i = 0; i < hs; i++)
			acc = fmaf(q[i], k[i], acc);
		acc = acc * scale;
		att_row[t2] = acc;
		mx = (t2 == 0 || acc > mx) ? acc : mx;
	}
	ct_softmax_tail(att_row, t + 1, mx);
	for (int t2 = t + 1; t2 < T; t2++)
		att_row[t2] = 0.0f;
	for (int i = 0; i < hs; i++) {
		float acc = 0.0f;

		for (int t2 = 0; t2 <= t; t2++)
			acc = fmaf(att_row[t2], qkv_b[(size_t)t2 * C3 + 2 * C + hoff + i], acc);
		out_row[i] = acc;
	}
}

void ct_attention_forward(float *out, float *att, const float *qkv,
			  int B, int T, int C, int NH)
{
	int hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);

	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++)
			for (int t = 0; t < T; t++)
				attention_row(out + ((size_t)b * T + t) * C + h * hs,
					      att + (((size_t)b * NH + h) * T + t) * T,
					      qkv + (size_t)b * T * 3 * C, t, T, C,
					      h * hs, hs, scale);
}

/* g[t,t2] for one (b,h): datt_bh (T,T) gets the softmax-backward gradient
 * times scale, from dout_b (T,C) and the values. */
static CT_KERNEL(attention_backward_scores,
		 (float *datt_bh, const float *att_bh, const float *dout_b,
		  const float *qkv_b, int T, int C, int hoff, int hs, float scale),
		 (datt_bh, att_bh, dout_b, qkv_b, T, C, hoff, hs, scale))
{
	const size_t C3 = (size_t)3 * C;

	for (int t = 0; t < T; t++) {
		const float *dy = dout_b + (size_t)t * C + hoff;
		const float *a = att_bh + (size_t)t * T;
		float *g = datt_bh + (size_t)t * T;
		float dot = 0.0f;

		for (int t2 = 0; t2 <= t; t2++) {
			const float *v = qkv_b + (size_t)t2 * C3 + 2 * C + hoff;
			float acc = 0.0f;

			for (int i = 0; i < hs; i++)
				acc = fmaf(dy[i], v[i], acc);
			g[t2] = acc;			/* da[t,t2] */
		}
		for (int t2 = 0; t2 <= t; t2++)
			dot = fmaf(a[t2], g[t2], dot);
		for (int t2 = 0; t2 <= t; t2++) {
			float d = g[t2] - dot;

			d = a[t2] * d;
			g[t2] = d * scale;
		}
	}
}

/* dq, dk, dv of one (b,h) from g (in datt_bh) and att. */
static CT_KERNEL(attention_backward_qkv,
		 (float *dqkv_b, const float *datt_bh, const float *att_bh,
		  const float *dout_b, const float *qkv_b, int T, int C, int hoff,
		  int hs),
		 (dqkv_b, datt_bh, att_bh, dout_b, qkv_b, T, C, hoff, hs))
{
	const size_t C3 = (size_t)3 * C;

	for (int t = 0; t < T; t++) {
		for (int i = 0; i < hs; i++) {
			float aq = 0.0f, ak = 0.0f, av = 0.0f;

			for (int t2 = 0; t2 <= t; t2++)
				aq = fmaf(datt_bh[(size_t)t * T + t2],
					  qkv_b[(size_t)t2 * C3 + C + hoff + i], aq);
			/* here t plays the key/value index, tq the query */
			for (int tq = t; tq < T; tq++) {
				ak = fmaf(datt_bh[(size_t)tq * T + t],
					  qkv_b[(size_t)tq * C3 + hoff + i], ak);
				av = fmaf(att_bh[(size_t)tq * T + t],
					  dout_b[(size_t)tq * C + hoff + i], av);
			}
			float *d = dqkv_b + (size_t)t * C3 + hoff + i;

			d[0] = d[0] + aq;
			d[C] = d[C] + ak;
			d[2 * C] = d[2 * C] + av;
		}
	}
}

void ct_attention_backward(float *dqkv, float *datt, const float *dout,
			   const float *qkv, const float *att,
			   int B, int T, int C, int NH)
{
	int hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);

	for (int b = 0; b < B; b++) {
		for (int h = 0; h < NH; h++) {
			size_t bh = ((size_t)b * NH + h) * T * T;
			const float *qkv_b = qkv + (size_t)b * T * 3 * C;
			const float *dout_b = dout + (size_t)b * T * C;

			attention_backward_scores(datt + bh, att + bh, dout_b,
						  qkv_b, T, C, h * hs, hs, scale);
			attention_backward_qkv(dqkv + (size_t)b * T * 3 * C,
					       datt + bh, att + bh, dout_b, qkv_b,
					       T, C, h * hs, hs);
		}
	}
}

/* ---- elementwise ---------------------------------------------------- */

CT_KERNEL(ct_gelu_forward,
	  (float *out, const float *inp, size_t n),
	  (out, inp, n))
{
	for (size_t i = 0; i < n; i++)
		out[i] = ct_gelu_forward_elem(inp[i]);
}

CT_KERNEL(ct_gelu_backward,
	  (float *dinp, const float *inp, const float *dout, size_t n),
	  (dinp, inp, dout, n))
{
	for (size_t i = 0; i < n; i++) {
		float g = ct_gelu_grad_elem(inp[i]) * dout[i];

		dinp[i] = dinp[i] + g;
	}
}

void ct_residual_forward(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

void ct_residual_backward(float *da, float *db, const float *dout, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		da[i] = da[i] + dout[i];
		db[i] = db[i] + dout[i];
	}
}

/* ---- softmax + cross-entropy ---------------------------------------- */

CT_KERNEL(ct_crossentropy_forward,
	  (float *losses, float *probs, const float *logits, const ct_tok *targets,
	   int BT, int V, int Vp),
	  (losses, probs, logits, targets, BT, V, Vp))
{
	for (int r = 0; r < BT; r++) {
		const float *x = logits + (size_t)r * Vp;
		float *p = probs + (size_t)r * Vp;
		float mx = x[0], sum = 0.0f;

		for (int i = 1; i < V; i++)
			mx = x[i] > mx ? x[i] : mx;
		for (int i = 0; i < V; i++) {
			float e = ct_expf(x[i] - mx);

			p[i] = e;
			sum = sum + e;
		}
		for (int i = 0; i < V; i++)
			p[i] = p[i] / sum;
		for (int i = V; i < Vp; i++)
			p[i] = 0.0f;
		if (targets != NULL)
			losses[r] = -ct_logf(p[CT_TOK_ID(targets[r])]);
	}
}

float ct_mean_loss(const float *losses, int BT)
{
	float acc = 0.0f;

	for (int r = 0; r < BT; r++)
		acc = acc + losses[r];
	return acc / (float)BT;
}

int ct_trained_rows(const ct_tok *targets, int BT)
{
	int n = 0;

	for (int r = 0; r < BT; r++)
		n += (targets[r] & CT_TOK_UNTRAINED) == 0;
	return n;
}

float ct_masked_mean_loss(const float *losses, const ct_tok *targets, int BT)
{
	float acc = 0.0f;
	int n = 0;

	for (int r = 0; r < BT; r++) {
		if (targets[r] & CT_TOK_UNTRAINED)
			continue;
		acc = acc + losses[r];
		n++;
	}
	return n > 0 ? acc / (float)n : 0.0f;
}

void ct_crossentropy_backward(float *dlogits, const float *probs,
			      const ct_tok *targets, int BT, int V, int Vp)
{
	float n = (float)ct_trained_rows(targets, BT);

	for (int r = 0; r < BT; r++) {
		const float *p = probs + (size_t)r * Vp;
		float *d = dlogits + (size_t)r * Vp;

		if (targets[r] & CT_TOK_UNTRAINED) {
			for (int i = 0; i < Vp; i++)
				d[i] = 0.0f;
			continue;
		}
		for (int i = 0; i < V; i++) {
			float g = i == (int)targets[r] ? p[i] - 1.0f : p[i];

			d[i] = g / n;
		}
		for (int i = V; i < Vp; i++)
			d[i] = 0.0f;
	}
}

/* ---- optimizer ------------------------------------------------------ */

void ct_adamw_bias_corrections(float beta1, float beta2, int t, float *bc1, float *bc2)
{
	float b1 = 1.0f, b2 = 1.0f;

	for (int i = 0; i < t; i++) {
		b1 = b1 * beta1;
		b2 = b2 * beta2;
	}
	*bc1 = 1.0f - b1;
	*bc2 = 1.0f - b2;
}

CT_KERNEL(ct_adamw_update,
	  (float *p, const float *g, float *m, float *v, size_t n,
	   const struct ct_adamw_args *a),
	  (p, g, m, v, n, a))
{
	for (size_t j = 0; j < n; j++) {
		float mj = ct_adamw_m_elem(m[j], g[j], a->beta1);
		float vj = ct_adamw_v_elem(v[j], g[j], a->beta2);

		m[j] = mj;
		v[j] = vj;
		p[j] = ct_adamw_p_elem(p[j], mj, vj, a->lr, a->eps,
				       a->weight_decay, a->bc1, a->bc2);
	}
}

CT_KERNEL_RET(float, ct_grad_norm,
	      (const float *g, size_t n),
	      (g, n))
{
	float sumsq = 0.0f;

	for (size_t k0 = 0; k0 < n; k0 += CT_CLIP_CHUNK) {
		size_t k1 = n - k0 < CT_CLIP_CHUNK ? n : k0 + CT_CLIP_CHUNK;
		float part = 0.0f;

		for (size_t j = k0; j < k1; j++)
			part = fmaf(g[j], g[j], part);
		sumsq = sumsq + part;
	}
	return sqrtf(sumsq);
}

float ct_grad_clip(float *g, size_t n, float clip)
{
	float norm = ct_grad_norm(g, n);

	if (clip > 0.0f && norm > clip) {
		float s = clip / norm;

		for (size_t j = 0; j < n; j++)
			g[j] = g[j] * s;
	}
	return norm;
}
