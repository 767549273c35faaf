#pragma OPENCL FP_CONTRACT OFF
/*
 * lora.cl - the kernels LoRA adds (engine/ct_ocl_lora.c): x[i] = x[i] * s,
 * the scaling of the adapter's rank-r activations and their gradient
 * (ct_lora_model.h). The products themselves run on matmul.cl's kernel and
 * the output add on ct_residual_fwd, so they are bit-identical to the C
 * reference by the same argument as every other matmul; ct_lora_dw_chain
 * runs a weight gradient's chains a block of rows at a time. Uses CT_BUF/CT_AT
 * from layers.cl (this file comes after it in the program).
 */
__kernel void ct_lora_scale(CT_BUF(__global, x), float s, ulong n)
{
	size_t i = get_global_id(0);

	if (i >= n)
		return;
	CT_AT(x);
	x[i] = x[i] * s;
}

/* The tile of ct_lora_dw_chain: CT_DW_TO rows of outputs (o) x CT_DW_TI
 * columns (i), a vector accumulator per row: TO independent chains of TI
 * lanes each, where one chain per work-item was bound by the fma's
 * latency. */
#define CT_DW_TO 8
#define CT_DW_TI 8

/* CT_DW_TI floats of the row at p from column i0 on; in a partial tile
 * (full 0) columns past IC read column IC-1, never stored. */
static inline __attribute__((always_inline)) float8
ct_dw_row(const __global float *p, int i0, int IC, int full)
{
	float v[CT_DW_TI];

	if (full)
		return vload8(0, p + i0);
#pragma unroll
	for (int j = 0; j < CT_DW_TI; j++)
		v[j] = p[i0 + j < IC ? i0 + j : IC - 1];
	return vload8(0, v);
}

/* rows t = 0 .. n-1 of the tile's chains: one fma per row per output */
static inline __attribute__((always_inline)) void
ct_dw_rows(float8 acc[CT_DW_TO], const int oo[CT_DW_TO], const __global float *dout,
	   const __global float *inp, int n, int i0, int IC, int OC, int full)
{
	for (int t = 0; t < n; t++) {
		float8 b = ct_dw_row(inp + (size_t)t * IC, i0, IC, full);
		const __global float *d = dout + (size_t)t * OC;

#pragma unroll
		for (int r = 0; r < CT_DW_TO; r++)
			acc[r] = fma((float8)(d[oo[r]]), b, acc[r]);
	}
}

/* One chain of a LoRA weight gradient over a block of rows (the row
 * blocks of a lean pass, engine/ct_ocl_lora.c): dw (OC, IC) gets
 * dw[o,i] = dw[o,i] + acc, acc = fma(dout[t,o], inp[t,i], acc) over the
 * rows t of every block in turn from 0.0f (first), parked between blocks
 * in park (OC, IC); the last block adds it. The chain is the whole-batch
 * product's (matmul.cl's ct_mm: one fma per row, rows ascending, added
 * once), so the bits are. One work-item per tile of CT_DW_TO x CT_DW_TI
 * outputs, global size (ceil(IC / CT_DW_TI), ceil(OC / CT_DW_TO)); rows
 * past OC recompute row OC-1 and are not stored. The tiling changes
 * which outputs a work-item owns, never an output's chain. */
__kernel void ct_lora_dw_chain(CT_BUF(__global, dw), CT_BUF(__global, park),
			       CT_BUF(__global, dout), CT_BUF(__global, inp),
			       int n, int IC, int OC, int first, int last)
{
	int i0 = (int)get_global_id(0) * CT_DW_TI, o0 = (int)get_global_id(1) * CT_DW_TO;
	int full = i0 + CT_DW_TI <= IC, oo[CT_DW_TO];
	float8 acc[CT_DW_TO];

	if (i0 >= IC || o0 >= OC)
		return;
	CT_AT(dw);
	CT_AT(park);
	CT_AT(dout);
	CT_AT(inp);
#pragma unroll
	for (int r = 0; r < CT_DW_TO; r++) {
		oo[r] = o0 + r < OC ? o0 + r : OC - 1;
		acc[r] = first ? (float8)(0.0f) : ct_dw_row(park + (size_t)oo[r] * IC, i0, IC, full);
	}
	if (full)
		ct_dw_rows(acc, oo, dout, inp, n, i0, IC, OC, 1);
	else
		ct_dw_rows(acc, oo, dout, inp, n, i0, IC, OC, 0);
	for (int r = 0; r < CT_DW_TO && o0 + r < OC; r++) {
		float a[CT_DW_TI];

		vstore8(acc[r], 0, a);
		for (int j = 0; j < CT_DW_TI && i0 + j < IC; j++) {
			size_t at = (size_t)(o0 + r) * IC + i0 + j;

			if (last)
				dw[at] = dw[at] + a[j];
			else
				park[at] = a[j];
		}
	}
}
