/*
 * base.cl - compact frozen bases (engine/ct_base.h, doc/workunit.md §13):
 * bfloat16 weights widened to float32, exactly (the 16 stored bits become
 * the upper half of the float), for the float32 kernels that run on them;
 * and the embedding lookups read straight from bfloat16 tables. Same bits
 * as the C reference's ct_bf16_to_f32 everywhere.
 */

#define CT_BF16(h) as_float((uint)(h) << 16)

/* out[i] = widen(in[i]) for i < n; 16 elements per work-item. */
__kernel void ct_bf16_widen(__global float *out, ulong out_off,
			    const __global ushort *in, ulong in_off, ulong n)
{
	size_t i0 = (size_t)get_global_id(0) * 16;

	out += out_off;
	in += in_off;
	if (i0 + 16 <= n) {
		ushort16 h = vload16(0, in + i0);

		vstore16(as_float16(convert_uint16(h) << 16), 0, out + i0);
		return;
	}
	for (size_t i = i0; i < n; i++)
		out[i] = CT_BF16(in[i]);
}

/* out (rows, cols) = widen of a block of in: rows ld elements apart. */
__kernel void ct_bf16_widen2(__global float *out, ulong out_off,
			     const __global ushort *in, ulong in_off, int rows, int cols, int ld)
{
	int c = get_global_id(0), r = get_global_id(1);

	if (c >= cols || r >= rows)
		return;
	out[out_off + (size_t)r * cols + c] = CT_BF16(in[in_off + (size_t)r * ld + c]);
}

/* ct_encoder_fwd with bf16 wte and wpe: out = widen(wte) + widen(wpe). */
__kernel void ct_encoder_fwd_h(__global float *out, ulong out_off, const __global ct_tok *inp,
			       const __global ushort *wte, ulong wte_off,
			       const __global ushort *wpe, ulong wpe_off,
			       int BT, int T, int C)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	out += out_off;
	wte += wte_off;
	wpe += wpe_off;
	out[(size_t)bt * C + c] = CT_BF16(wte[(size_t)inp[bt] * C + c]) +
				  CT_BF16(wpe[(size_t)(bt % T) * C + c]);
}

/* ct_ll_embed_fwd with a bf16 table: out = widen(wte[inp[bt]]). */
__kernel void ct_ll_embed_fwd_h(__global float *out, ulong out_off, const __global ct_tok *inp,
				const __global ushort *wte, ulong wte_off, int BT, int C)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	out += out_off;
	wte += wte_off;
	out[(size_t)bt * C + c] = CT_BF16(wte[(size_t)inp[bt] * C + c]);
}
