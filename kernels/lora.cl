#pragma OPENCL FP_CONTRACT OFF
/*
 * lora.cl - the one kernel LoRA adds (engine/ct_ocl_lora.c): x[i] = x[i] * s,
 * the scaling of the adapter's rank-r activations and their gradient
 * (ct_lora_model.h). The products themselves run on matmul.cl's kernel and
 * the output add on ct_residual_fwd, so they are bit-identical to the C
 * reference by the same argument as every other matmul. Uses CT_BUF/CT_AT
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
