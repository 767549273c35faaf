#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * reduce_tiled.cl - GPU-shaped variants of the long sequential reductions
 * of layers.cl and matmul.cl (ct_gradnorm_part, ct_layernorm_bwd_dwb,
 * ct_mm_dbias): the same chains with the same bits. The chains are fixed
 * by the reference (each one sequential); what a GPU needs is memory
 * reads that are contiguous across work-items and many of them in flight,
 * so a group of 256 work-items loads pieces of the data into local memory
 * together and a few of them continue the chains from there.
 *
 * Gradient norm:
 * part[k] = the fma chain of g*g over chunk k (CT_CLIP_CHUNK elements, in
 * increasing index, ct_grad_norm's chunks). The chains are what they are
 * (one per chunk, each sequential), so the speed to be had is in memory:
 * a group of 256 work-items owns CT_GN_W chunks and walks them in pieces
 * of CT_GN_TL elements; all 256 load each piece of every chunk into local
 * memory with reads contiguous across work-items, then CT_GN_W of them
 * each continue their chunk's chain over the piece. Launched with local
 * size 256 over ceil(nparts / CT_GN_W) groups.
 */
#define CT_GN_W 8
#define CT_GN_TL 512
#define CT_GN_LD (CT_GN_TL + 1)		/* local row stride (no bank conflicts) */

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void ct_gradnorm_tiled(CT_BUF(const __global, g), __global float *part, ulong n)
{
	__local float tile[CT_GN_W * CT_GN_LD];
	int lid = get_local_id(0);
	size_t c0 = get_group_id(0) * CT_GN_W;
	size_t nparts = (n + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK;
	float acc = 0.0f;

	CT_AT(g);
	for (size_t j0 = 0; j0 < CT_CLIP_CHUNK; j0 += CT_GN_TL) {
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int e = lid; e < CT_GN_W * CT_GN_TL; e += 256) {
			int w = e / CT_GN_TL, j = e % CT_GN_TL;
			size_t idx = (c0 + w) * CT_CLIP_CHUNK + j0 + j;

			tile[w * CT_GN_LD + j] = idx < n ? g[idx] : 0.0f;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid < CT_GN_W && c0 + lid < nparts) {
			size_t at = (c0 + lid) * CT_CLIP_CHUNK + j0;
			int m = at >= n ? 0 : (n - at < CT_GN_TL ? (int)(n - at) : CT_GN_TL);

			for (int j = 0; j < m; j++) {
				float x = tile[lid * CT_GN_LD + j];

				acc = fma(x, x, acc);
			}
		}
	}
	if (lid < CT_GN_W && c0 + lid < nparts)
		part[c0 + lid] = acc;
}

/* Column chains over rows (layernorm dw/db, matmul dbias): a group of 256
 * owns CT_COL_W consecutive columns and walks the rows in pieces of
 * CT_COL_R; all 256 load each piece (CT_COL_R x CT_COL_W, rows contiguous
 * across work-items), then CT_COL_W of them continue their column's chains
 * over the piece's rows in increasing order. Launched with local size 256
 * over ceil(C / CT_COL_W) groups. */
#define CT_COL_W 32
#define CT_COL_R 64
#define CT_COL_LD (CT_COL_W + 1)

/* tile[r][w] (R x W, row stride ldt) = src[(r0 + r) * ld + c0 + w] for
 * rows < nr, columns < nc, loaded by the group's 256 work-items. */
static inline void ct_tile_load(__local float *tile, int R, int W, int ldt,
				const __global float *src, int ld, int r0, int nr, int c0,
				int nc, int lid)
{
	for (int e = lid; e < R * W; e += 256) {
		int r = e / W, w = e % W;

		if (r < nr && w < nc)
			tile[r * ldt + w] = src[(size_t)(r0 + r) * ld + c0 + w];
	}
}

static inline void ct_col_load(__local float *tile, const __global float *src, int ld,
			       int r0, int nr, int c0, int nc, int lid)
{
	ct_tile_load(tile, CT_COL_R, CT_COL_W, CT_COL_LD, src, ld, r0, nr, c0, nc, lid);
}

/* ct_layernorm_bwd_dwb, tiled: dw[i] += chain of fma(n, d), db[i] +=
 * chain of d, rows in order (n = (inp - mean[r]) * rstd[r]). */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void ct_layernorm_dwb_tiled(CT_BUF(__global, dw), CT_BUF(__global, db),
			    CT_BUF(const __global, dout), CT_BUF(const __global, inp),
			    CT_BUF(const __global, mean), CT_BUF(const __global, rstd),
			    int BT, int C)
{
	__local float dt[CT_COL_R * CT_COL_LD], xt[CT_COL_R * CT_COL_LD];
	__local float mt[CT_COL_R], rt[CT_COL_R];
	int lid = get_local_id(0), c0 = get_group_id(0) * CT_COL_W;
	int nc = min(CT_COL_W, C - c0);
	float aw = 0.0f, ab = 0.0f;

	CT_AT(dw); CT_AT(db); CT_AT(dout); CT_AT(inp); CT_AT(mean); CT_AT(rstd);
	for (int r0 = 0; r0 < BT; r0 += CT_COL_R) {
		int nr = min(CT_COL_R, BT - r0);

		barrier(CLK_LOCAL_MEM_FENCE);
		ct_col_load(dt, dout, C, r0, nr, c0, nc, lid);
		ct_col_load(xt, inp, C, r0, nr, c0, nc, lid);
		if (lid < nr) {
			mt[lid] = mean[r0 + lid];
			rt[lid] = rstd[r0 + lid];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid < nc) {
			for (int r = 0; r < nr; r++) {
				float n = xt[r * CT_COL_LD + lid] - mt[r];
				float d = dt[r * CT_COL_LD + lid];

				n = n * rt[r];
				aw = fma(n, d, aw);
				ab = ab + d;
			}
		}
	}
	if (lid < nc) {
		dw[c0 + lid] = dw[c0 + lid] + aw;
		db[c0 + lid] = db[c0 + lid] + ab;
	}
}

/* ct_mm_dbias, tiled: dbias[o] += the chain of dout[bt, o], bt in order. */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void ct_mm_dbias_tiled(CT_BUF(const __global, dout), CT_BUF(__global, dbias), int BT, int OC)
{
	__local float dt[CT_COL_R * CT_COL_LD];
	int lid = get_local_id(0), c0 = get_group_id(0) * CT_COL_W;
	int nc = min(CT_COL_W, OC - c0);
	float acc = 0.0f;

	CT_AT(dout); CT_AT(dbias);
	for (int r0 = 0; r0 < BT; r0 += CT_COL_R) {
		int nr = min(CT_COL_R, BT - r0);

		barrier(CLK_LOCAL_MEM_FENCE);
		ct_col_load(dt, dout, OC, r0, nr, c0, nc, lid);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid < nc)
			for (int r = 0; r < nr; r++)
				acc = acc + dt[r * CT_COL_LD + lid];
	}
	if (lid < nc)
		dbias[c0 + lid] = dbias[c0 + lid] + acc;
}

/* Softmax row chains over the vocabulary (ct_ce_max, ct_ce_sum of
 * layers.cl), tiled: the same chains, one per row, each in increasing
 * column order, so the same bits. The plain kernels give each work-item a
 * row of up to 151,936 floats and walk it alone, so neighbouring
 * work-items read addresses a row apart; here a group of 256 owns
 * CT_CE_W rows and walks them in pieces of CT_CE_TL columns, all 256
 * loading each piece into local memory with reads contiguous along the
 * row, then CT_CE_W of them continue their row's chain over it. Launched
 * with local size 256 over ceil(BT / CT_CE_W) groups. */
#define CT_CE_W 32
#define CT_CE_TL 128
#define CT_CE_LD (CT_CE_TL + 1)

/* what 0: stat[r] = the max chain of ct_ce_max (x[r,0], then
 * x[r,i] > mx ? x[r,i] : mx); what 1: stat[BT + r] = the sum chain of
 * ct_ce_sum (0 + x[r,0] + x[r,1] + ...). */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void ct_ce_rows_tiled(CT_BUF(const __global, x), __global float *stat,
		      int BT, int V, int Vp, int what)
{
	__local float tile[CT_CE_W * CT_CE_LD];
	int lid = get_local_id(0), r0 = get_group_id(0) * CT_CE_W;
	int mine = lid < CT_CE_W && r0 + lid < BT;
	const __local float *row = tile + (mine ? lid : 0) * CT_CE_LD;
	float acc = 0.0f;

	CT_AT(x);
	for (int j0 = 0; j0 < V; j0 += CT_CE_TL) {
		int m = min(CT_CE_TL, V - j0);

		barrier(CLK_LOCAL_MEM_FENCE);
		ct_tile_load(tile, CT_CE_W, CT_CE_TL, CT_CE_LD, x, Vp, r0, min(CT_CE_W, BT - r0),
			     j0, m, lid);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (!mine)
			continue;
		if (what == 1) {
			for (int j = 0; j < m; j++)
				acc = acc + row[j];
			continue;
		}
		if (j0 == 0)
			acc = row[0];
		for (int j = j0 == 0 ? 1 : 0; j < m; j++)
			acc = row[j] > acc ? row[j] : acc;
	}
	if (mine)
		stat[(what == 1 ? BT : 0) + r0 + lid] = acc;
}
