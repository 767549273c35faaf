#ifdef CT_TEST_CONTRACT	/* tests only: prove the self-test sees contraction */
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/*
 * gradnorm_tiled.cl - the GPU-shaped variant of ct_gradnorm_part
 * (layers.cl): the same partial sums with the same bits.
 *
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
