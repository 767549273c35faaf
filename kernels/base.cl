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

/* matmul.cl's element of an operand in format fmt (0 float32, 1 bf16,
 * 2 q8, 3 nf4): the value the widening kernels write. */
static float ct_mm_elem(const __global uchar *w, size_t i, int fmt)
{
	if (fmt == 0)
		return ((const __global float *)w)[i];
	if (fmt == 1)
		return CT_BF16(((const __global ushort *)w)[i]);
	return ct_blk(w, i, fmt);
}

/* v[code] for CT_MM_VW codes at once, the table's bits: one permute on
 * AVX-512 CPU devices, else a tree of 15 selects on the codes' bits (a
 * vector select each; OpenCL's shuffle with a variable mask compiles to
 * one element at a time on PoCL). At Qwen3-0.6B B=1 T=32 on PoCL the
 * permute took the nf4 step from 1.35-1.37 s of CPU to 1.13-1.29. */
static inline ct_mmvec ct_nf4_vec(CT_MM_CAT(int, CT_MM_VW) c)
{
#if defined(__AVX512F__) && CT_MM_VW == 16 && defined(__has_builtin)
#if __has_builtin(__builtin_ia32_permvarsf512)
	/* an x86 CPU device with 16 lanes: the table in one register, one
	 * permute (vpermps) */
	return __builtin_ia32_permvarsf512(vload16(0, ct_nf4_v), c);
#endif
#endif
	CT_MM_CAT(int, CT_MM_VW) m0 = c << 31, m1 = c << 30, m2 = c << 29, m3 = c << 28;
	ct_mmvec p[8], q[4];

#pragma unroll
	for (int i = 0; i < 8; i++)
		p[i] = select((ct_mmvec)(ct_nf4_v[2 * i]), (ct_mmvec)(ct_nf4_v[2 * i + 1]), m0);
#pragma unroll
	for (int i = 0; i < 4; i++)
		q[i] = select(p[2 * i], p[2 * i + 1], m1);
	return select(select(q[0], q[1], m2), select(q[2], q[3], m2), m3);
}

static ct_mmvec ct_mm_vec(const __global uchar *w, size_t g, int fmt, int inblock)
{
	float t[CT_MM_VW];

	if (fmt == 1) {
		CT_MM_CAT(ushort, CT_MM_VW) h = CT_MM_VLOAD(0, (const __global ushort *)w + g);

		return CT_MM_CAT(as_float, CT_MM_VW)(CT_MM_CAT(convert_uint, CT_MM_VW)(h) << 16);
	}
	if (fmt == 2 && inblock) {
		const __global uchar *b = w + g / 32 * 36;

		return CT_MM_CAT(convert_float, CT_MM_VW)(
			       CT_MM_VLOAD(0, (const __global char *)b + 4 + g % 32)) *
		       *(const __global float *)b;
	}
#if defined(__ENDIAN_LITTLE__) && CT_MM_VW >= 4
	if (fmt == 3 && inblock) {
		const __global uchar *b = w + g / 64 * 36;
		CT_MM_CAT(uchar, CT_MM_HW) by = CT_MM_CAT(vload, CT_MM_HW)(0, b + 4 + g % 64 / 2);
		/* byte i's low nibble then its high one: elements 2i, 2i + 1 */
		CT_MM_CAT(ushort, CT_MM_HW) u = CT_MM_CAT(convert_ushort, CT_MM_HW)(by & (uchar)15) |
			(CT_MM_CAT(convert_ushort, CT_MM_HW)(by >> (uchar)4) << (ushort)8);

		return ct_nf4_vec(CT_MM_CAT(convert_int, CT_MM_VW)(CT_MM_CAT(as_uchar, CT_MM_VW)(u))) *
		       *(const __global float *)b;
	}
#endif
	for (int j = 0; j < CT_MM_VW; j++)
		t[j] = ct_mm_elem(w, g + j, fmt);
	return CT_MM_VLOAD(0, t);
}

/* ct_mm_pack from a compact source (ct_mm_elem of format fmt): the panels
 * of a compact weight, widened as they are packed. */
__kernel void ct_mm_pack_c(const __global uchar *src, ulong soff, int sk, int sn, int fmt,
			   __global float *Bp, int K, int N)
{
	int k0, n0, kn, jn;
	size_t d, g;
	__global float *dst;

	if (!ct_mm_pack_tile(K, N, &k0, &n0, &kn, &jn, &d))
		return;
	dst = Bp + d;
	g = soff + (size_t)k0 * sk + (size_t)n0 * sn;
	for (int kk = 0; kk < kn; kk++)
		for (int j = 0; j < CT_MM_PW; j++)
			dst[kk * CT_MM_PW + j] = j < jn ? ct_mm_elem(src, g + (size_t)kk * sk +
								     (size_t)j * sn, fmt)
							: 0.0f;
}

/* out[i] = ct_blk(in, g0 + i) for i < n; 16 elements per work-item. */
__kernel void ct_q8_widen(__global float *out, ulong out_off, const __global uchar *in,
			  ulong g0, ulong n, int fmt)
{
	size_t i0 = (size_t)get_global_id(0) * 16, i1 = i0 + 16 < n ? i0 + 16 : n;

	if (i1 - i0 == 16 && (g0 + i0) % CT_MM_VW == 0) {	/* whole vectors, each in one block */
		for (int j = 0; j < 16; j += CT_MM_VW)
			CT_MM_VSTORE(ct_mm_vec(in, g0 + i0 + j, fmt, 1), 0, out + out_off + i0 + j);
		return;
	}
	for (size_t i = i0; i < i1; i++)
		out[out_off + i] = ct_blk(in, g0 + i, fmt);
}

/* out (rows, cols) = a block of the matrix from element g0, rows ld apart;
 * CT_MM_VW columns per work-item, a vector at a time where it lies in
 * one block (ct_mm_vec, in matmul.cl's order of definitions below). */
static ct_mmvec ct_mm_vec(const __global uchar *w, size_t g, int fmt, int inblock);

__kernel void ct_q8_widen2(__global float *out, ulong out_off, const __global uchar *in,
			   ulong g0, int rows, int cols, int ld, int fmt)
{
	int c0 = get_global_id(0) * CT_MM_VW, r = get_global_id(1);
	size_t g = g0 + (size_t)r * ld + c0;
	__global float *o = out + out_off + (size_t)r * cols + c0;

	if (c0 >= cols || r >= rows)
		return;
	if (c0 + CT_MM_VW <= cols && g % CT_MM_VW == 0) {
		CT_MM_VSTORE(ct_mm_vec(in, g, fmt, 1), 0, o);
		return;
	}
	for (int c = 0; c < CT_MM_VW && c0 + c < cols; c++)
		o[c] = ct_blk(in, g + c, fmt);
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
