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

/* ---- q8 and nf4: 36-byte blocks of one float scale, then 32 int8 values
 * (q8, 32 elements) or 64 four-bit NF4 codes (nf4, element 2i in the low
 * nibble of byte i); fmt is ct_base.h's code (2 q8, 3 nf4) ------------- */

/* QLoRA's NF4 values, the bits of ct_nf4_code. */
__constant float ct_nf4_v[16] = {
	-0x1p+0f, -0x1.647362p-1f, -0x1.0cd66p-1f, -0x1.94654p-2f,
	-0x1.23449ap-2f, -0x1.7a6a7ep-3f, -0x1.74f0e2p-4f, 0x0p+0f,
	0x1.45f5fep-4f, 0x1.4995c6p-3f, 0x1.f809bap-3f, 0x1.5a0674p-2f,
	0x1.c3497p-2f, 0x1.200f56p-1f, 0x1.722766p-1f, 0x1p+0f,
};

/* Element g of the block grid at in: (float)q * s (q8) or v[code] * s
 * (nf4), one rounded product. */
static inline float ct_blk(const __global uchar *in, size_t g, int fmt)
{
	if (fmt == 3) {
		const __global uchar *b = in + g / 64 * 36;
		uchar byte = b[4 + g % 64 / 2];

		return ct_nf4_v[(g & 1) ? byte >> 4 : byte & 15] * *(const __global float *)b;
	} else {
		const __global uchar *b = in + g / 32 * 36;

		return (float)(char)b[4 + g % 32] * *(const __global float *)b;
	}
}

/* out[i] = ct_blk(in, g0 + i) for i < n; 16 elements per work-item. */
__kernel void ct_q8_widen(__global float *out, ulong out_off, const __global uchar *in,
			  ulong g0, ulong n, int fmt)
{
	size_t i0 = (size_t)get_global_id(0) * 16, i1 = i0 + 16 < n ? i0 + 16 : n;

	for (size_t i = i0; i < i1; i++)
		out[out_off + i] = ct_blk(in, g0 + i, fmt);
}

/* out (rows, cols) = a block of the matrix from element g0, rows ld apart. */
__kernel void ct_q8_widen2(__global float *out, ulong out_off, const __global uchar *in,
			   ulong g0, int rows, int cols, int ld, int fmt)
{
	int c = get_global_id(0), r = get_global_id(1);

	if (c >= cols || r >= rows)
		return;
	out[out_off + (size_t)r * cols + c] = ct_blk(in, g0 + (size_t)r * ld + c, fmt);
}

/* ct_encoder_fwd with blocked wte and wpe. */
__kernel void ct_encoder_fwd_q8(__global float *out, ulong out_off, const __global ct_tok *inp,
				const __global uchar *wte, ulong wte_g,
				const __global uchar *wpe, ulong wpe_g, int BT, int T, int C,
				int fmt)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	out[out_off + (size_t)bt * C + c] = ct_blk(wte, wte_g + (size_t)inp[bt] * C + c, fmt) +
					    ct_blk(wpe, wpe_g + (size_t)(bt % T) * C + c, fmt);
}

/* ct_ll_embed_fwd with a blocked table. */
__kernel void ct_ll_embed_fwd_q8(__global float *out, ulong out_off, const __global ct_tok *inp,
				 const __global uchar *wte, ulong wte_g, int BT, int C, int fmt)
{
	int c = get_global_id(0), bt = get_global_id(1);

	if (c >= C || bt >= BT)
		return;
	out[out_off + (size_t)bt * C + c] = ct_blk(wte, wte_g + (size_t)inp[bt] * C + c, fmt);
}
