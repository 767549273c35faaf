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

/* One chain of a LoRA weight gradient over a block of rows (the row
 * blocks of a lean pass, engine/ct_ocl_lora.c): dw (OC, IC) gets
 * dw[o,i] = dw[o,i] + acc, acc = fma(dout[t,o], inp[t,i], acc) over the
 * rows t of every block in turn from 0.0f (first), parked between blocks
 * in park (OC, IC); the last block adds it. The chain is the whole-batch
 * product's (matmul.cl's ct_mm: one fma per row, rows ascending, added
 * once), so the bits are. One work-item per (i, o). */
__kernel void ct_lora_dw_chain(CT_BUF(__global, dw), CT_BUF(__global, park),
			       CT_BUF(__global, dout), CT_BUF(__global, inp),
			       int n, int IC, int OC, int first, int last)
{
	int i = (int)get_global_id(0), o = (int)get_global_id(1);
	size_t at = (size_t)o * IC + i;
	float acc;

	if (i >= IC || o >= OC)
		return;
	CT_AT(dw);
	CT_AT(park);
	CT_AT(dout);
	CT_AT(inp);
	acc = first ? 0.0f : park[at];
	for (int t = 0; t < n; t++)
		acc = fma(dout[(size_t)t * OC + o], inp[(size_t)t * IC + i], acc);
	if (last)
		dw[at] = dw[at] + acc;
	else
		park[at] = acc;
}
