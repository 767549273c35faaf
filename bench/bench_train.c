/*
 * bench_train.c - tokens per second of a training step (forward, backward,
 * AdamW) on the C reference ("cpu") and on the OpenCL backend, for a small
 * GPT-2 (L=4, C=256, NH=4), for GPT-2 124M's shape (L=12, C=768,
 * NH=12), both with GPT-2's vocabulary, and for the Llama-family
 * SmolLM2-135M shape (smol135m: L=30, C=576, 9 heads sharing 3 KV heads,
 * SwiGLU MLP 1536, V=49152, tied embeddings), random init. qwen3_06b
 * (Qwen3-0.6B: L=28, C=1024, 16 heads of head_dim 128 sharing 8 KV heads,
 * q/k norms, MLP 3072, V=151936, tied; 596M parameters) runs only when
 * named, and only its LoRA rows (rank 8 unless --lora-rank): full
 * fine-tuning needs ~9.5 GB for weights, gradients and moments alone.
 *
 *   bench/bench_train [--config small|124m|smol135m|qwen3_06b|llama32_1b|qwen3_17b|
 *                              llama31_8b|all] [--batch B] [--seq T]
 *                     [--steps N] [--device D]... [--check] [--lora-rank R]
 *                     [--base-format f32,bf16,q8,nf4] [--compare[=R]] [--long T2]
 *                     [--need] [--peak GFLOPS]
 *
 * --base-format LIST runs the LoRA rows once per frozen-base format
 * (engine/ct_base.h; default f32 only), side by side, then prints per
 * device each format's step time, peak OpenCL memory, largest buffer and
 * peak RSS over f32's (the compact-base goals: bf16 peak <= 0.55x, step <=
 * 1.15x). The base is converted once in the parent; a compact run never
 * touches the float32 weights. llama32_1b (Llama-3.2-1B: L=16, C=2048,
 * 32 heads / 8 KV heads, MLP 8192, V=128256, tied), qwen3_17b (Qwen3-1.7B:
 * L=28, C=2048, 16/8 heads of 128, q/k norms, MLP 6144, V=151936, tied)
 * and llama31_8b (Llama-3.1-8B: L=32, C=4096, 32/8 heads, MLP 14336,
 * V=128256, untied) run only when named, LoRA rows only, like qwen3_06b;
 * the float32 weights of 8B alone are 30 GiB, so without f32 in the list
 * the compact bases are made in place from random codes (random_image).
 * After the rows, per format, the scheduler's bound (ct_wu_mem_bytes: the
 * OpenCL device memory a WU needs) beside the measured OpenCL peak, and
 * each compact format's ratios with the goals' verdicts (step by the
 * process CPU time, the steadier figure on a shared machine). --need
 * prints, without running, that bound with the largest buffer
 * (ct_ocl_wu_bytes) per format, then the memory goals that apply
 * (README, compact bases).
 *
 * Prints one row per (config, device): ms per step (mean of N steps after
 * one warm-up step), tokens/s, the model's training GFLOP/s (by
 * ct_gpt2_flops_per_token), the process CPU time per step (all
 * threads: on a shared machine the wall clock depends on the neighbours),
 * the peak resident memory of the process that ran it (rssMiB: each run is
 * a child process; on PoCL the device memory is host memory, so this is
 * the device's peak plus the host copies and the OpenCL runtime), the
 * peak of the OpenCL buffers live at once (devMiB) and the largest single
 * OpenCL buffer (bufMiB; both 0 for cpu). --check also compares the
 * weights after the steps between the devices (bit for bit). Defaults: all configs, B=4,
 * T=64, 3 steps, devices cpu and opencl. --lora-rank R adds, after each
 * full row, a row for a LoRA step (rank R, alpha R, all four targets,
 * frozen weights: config shown as "small/rR"); --check then compares the
 * adapters (GFLOP/s still counts the full model's training FLOPs, the
 * credit formula, so it compares like tokens/s). Memory and upload size
 * of LoRA vs full: bench/bench_lora.
 *
 * Each row also prints the share of the CPU's peak float32 FLOP/s the
 * step sustained (peak%: the GFLOP/s column over --peak G, default
 * cpu_peak_gflops: the CPUs this process may run on x one core's FMA
 * throughput measured with AVX2, 32 flops a cycle at the clock the core
 * really runs at, which a VM's /proc/cpuinfo does not show; an AVX-512
 * CPU's peak is higher, pass --peak there), the same by CPU time (cpu%:
 * the FLOPs over the CPU-seconds the step took x one core's peak; on a
 * shared machine the wall clock also measures the neighbours) and the
 * 1-minute load average (what `uptime` prints first). The FLOPs of a
 * step are ct_gpt2_flops_per_token x B x T: for GPT-2,
 * 3 x (2 x (12 L C^2 + Vp C) + 2 L C (T + 1)) a token, i.e.
 * 6 x the matrices' parameters (forward 2, backward 4) plus causal
 * attention's two products over (T + 1) / 2 keys on average.
 *
 * --compare R (default 3 rounds) also runs PyTorch (bench/torch_train.py,
 * eager fp32; needs python3-torch, which nothing else needs) on the same
 * checkpoint and batches, written to a temporary directory: each round runs
 * every device, then PyTorch, back to back, and prints PyTorch's ms/step
 * over each device's (the ratio > 1: crowdtune faster), the same by CPU
 * time, OpenBLAS's kernel set (as $OPENBLAS_CORETYPE, passed through,
 * forces) and its last loss (it should match the devices' loss column). The interpreter: $BENCH_PYTHON,
 * else python3, else /usr/bin/python3, the first that imports torch.
 * $BENCH_TORCH_DEVICE runs PyTorch on another device ("cuda" on a GPU
 * machine; default "cpu"), $BENCH_TORCH_SCRIPT names the script when the
 * source tree has moved.
 *
 * --long T2 also runs, per device, T, T2 and T again, and prints T2's
 * tokens/s over T's (their mean) with T2's OpenCL memory: the long-sequence goals
 * for 124m, `--config 124m --device opencl --long 1024`, are >= 0.7x,
 * buffers peaking at <= 5 GiB and none over 1 GiB.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ct_base.h"
#include "ct_bench.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_llama.h"
#include "ct_time.h"
#include "ct_log.h"
#include "ct_ocl.h"
#include "ct_ocl_llama.h"
#include "ct_tokens.h"

struct bcfg {
	const char *name;
	struct ct_model_config cfg;
	int lora_only;	/* not in "all"; LoRA rows only */
};

static struct ct_lora_spec lora;	/* rank 0: full rows only */

static const struct bcfg configs[] = {
	{ "small", { .maxT = 1024, .V = 50257, .L = 4, .NH = 4, .C = 256, .Vp = 50304 }, 0 },
	{ "124m", { .maxT = 1024, .V = 50257, .L = 12, .NH = 12, .C = 768, .Vp = 50304 }, 0 },
	/* SmolLM2-135M's shape (ct_llama.h) */
	{ "smol135m", { .maxT = 2048, .V = 49152, .Vp = 49152, .L = 30, .NH = 9, .C = 576,
			.arch = CT_ARCH_LLAMA, .KVH = 3, .F = 1536, .flags = CT_LLAMA_TIED,
			.rope_theta = 100000.0, .rms_eps = 1e-5 }, 0 },
	/* Qwen3-0.6B's shape: head_dim 128 != C/NH, q/k norms */
	{ "qwen3_06b", { .maxT = 4096, .V = 151936, .Vp = 151936, .L = 28, .NH = 16,
			 .C = 1024, .arch = CT_ARCH_LLAMA, .KVH = 8, .F = 3072, .hd = 128,
			 .flags = CT_LLAMA_TIED | CT_LLAMA_QK_NORM, .rope_theta = 1e6,
			 .rms_eps = 1e-6 }, 1 },
	{ "llama32_1b", { .maxT = 4096, .V = 128256, .Vp = 128256, .L = 16, .NH = 32,
			  .C = 2048, .arch = CT_ARCH_LLAMA, .KVH = 8, .F = 8192,
			  .flags = CT_LLAMA_TIED, .rope_theta = 500000.0, .rms_eps = 1e-5 }, 1 },
	/* head_dim 128 = C/NH, which a config writes as 0 */
	{ "qwen3_17b", { .maxT = 4096, .V = 151936, .Vp = 151936, .L = 28, .NH = 16,
			 .C = 2048, .arch = CT_ARCH_LLAMA, .KVH = 8, .F = 6144,
			 .flags = CT_LLAMA_TIED | CT_LLAMA_QK_NORM, .rope_theta = 1e6,
			 .rms_eps = 1e-6 }, 1 },
	{ "llama31_8b", { .maxT = 4096, .V = 128256, .Vp = 128256, .L = 32, .NH = 32,
			  .C = 4096, .arch = CT_ARCH_LLAMA, .KVH = 8, .F = 14336,
			  .rope_theta = 500000.0, .rms_eps = 1e-5 }, 1 },
};

/* --base-format: the LoRA rows' frozen-base formats, and the compact base
 * of the config being run (converted once in the parent). */
static int fmts[CT_BASE_NFMT] = { CT_BASE_F32 };
static int nfmt = 1;
static const struct ct_gpt2 *cbase;

/* The CPU's peak float32 GFLOP/s (--peak, else cpu_peak_gflops) and the
 * share of it a GFLOP/s figure is, in percent. */
static double peak_gflops, core_gflops;

static double peak_pct(double gflops)
{
	return peak_gflops > 0.0 ? 100.0 * gflops / peak_gflops : 0.0;
}

/* The same for GFLOP per CPU-second, against one core's peak. */
static double core_pct(double gflops_per_cpu_s)
{
	return core_gflops > 0.0 ? 100.0 * gflops_per_cpu_s / core_gflops : 0.0;
}

/* The CPUs this process may run on. */
static int ncpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* The 1-minute load average (what `uptime` prints first); -1 if unknown. */
static double load1(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

#if defined(__x86_64__)
#include <immintrin.h>

/* GFLOP per CPU-second of one thread issuing only FMAs: 12 independent
 * chains of 8-float vectors (AVX2), enough to cover the FMA latency on
 * two units. CPU time (the process has one thread here), so a loaded
 * machine changes it little. */
#define FMA12(x) do { \
	a0 = _mm256_fmadd_ps(a0, x, c); a1 = _mm256_fmadd_ps(a1, x, c); \
	a2 = _mm256_fmadd_ps(a2, x, c); a3 = _mm256_fmadd_ps(a3, x, c); \
	a4 = _mm256_fmadd_ps(a4, x, c); a5 = _mm256_fmadd_ps(a5, x, c); \
	a6 = _mm256_fmadd_ps(a6, x, c); a7 = _mm256_fmadd_ps(a7, x, c); \
	a8 = _mm256_fmadd_ps(a8, x, c); a9 = _mm256_fmadd_ps(a9, x, c); \
	a10 = _mm256_fmadd_ps(a10, x, c); a11 = _mm256_fmadd_ps(a11, x, c); \
} while (0)
__attribute__((target("avx2,fma"))) static double fma_gflops_avx2(void)
{
	__m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
	/* different starts, so that the compiler cannot merge the chains */
	__m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(1.0f), a2 = _mm256_set1_ps(2.0f);
	__m256 a3 = _mm256_set1_ps(3.0f), a4 = _mm256_set1_ps(4.0f), a5 = _mm256_set1_ps(5.0f);
	__m256 a6 = _mm256_set1_ps(6.0f), a7 = _mm256_set1_ps(7.0f), a8 = _mm256_set1_ps(8.0f);
	__m256 a9 = _mm256_set1_ps(9.0f), a10 = _mm256_set1_ps(10.0f);
	__m256 a11 = _mm256_set1_ps(11.0f);
	const long n = 20000000;
	float sink[8];
	double t0;

	t0 = ct_time_cpu_s();
	for (long k = 0; k < n; k++)
		FMA12(b);
	t0 = ct_time_cpu_s() - t0;
	a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
			   _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
	a0 = _mm256_add_ps(a0, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
	_mm256_storeu_ps(sink, a0);
	return sink[0] != 0.0f && t0 > 0.0 ? n * 12 * 16.0 / t0 / 1e9 : 0.0;
}
#endif

/* The peak: the CPUs this process may run on x one core's measured FMA
 * throughput with AVX2 (2 FMA units x 8 floats x 2 flops = 32 a cycle at
 * the clock it runs at, boost included); 0 where AVX2 + FMA is missing or
 * not x86-64. An AVX-512 CPU's peak is higher: pass --peak there. */
static double cpu_peak_gflops(double *core)
{
	*core = 0.0;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		*core = fma_gflops_avx2();
#endif
	return ncpus() * *core;
}

/* The backend for dev (ct_backend_find), naming the OpenCL one directly: a
 * strong reference, so the static library links it in. */
static int backend(const char *dev, const struct ct_backend_ops **ops)
{
	int rc = ct_backend_find(dev, ops);

	if (rc == 0 && *ops != &ct_cpu_backend_ops)
		*ops = &ct_ocl_backend_ops;
	return rc;
}

/* What a run in a child process reports to the parent (shared memory). */
struct run_stats {
	double ms;		/* per step */
	double peak, largest;	/* bytes of OpenCL buffers: live at once, one buffer */
	double rss;		/* peak resident bytes of the child */
	double cpu_ms;		/* process CPU time per step */
};
static struct run_stats *last;

/* Run warm-up + steps on dev; params_out gets the final weights. */
static int run_here(const struct bcfg *c, const char *dev, const float *params,
	       const ct_tok *tok, int B, int T, int steps, float *params_out,
	       const struct ct_lora_spec *l)
{
	char name[32];
	float *ad = NULL;
	const struct ct_backend_ops *ops = NULL;
	struct ct_backend *be = NULL;
	struct ct_step_args a = { .grad_clip = 1.0f,
				  .opt = { .lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.999f,
					   .eps = 1e-8f, .weight_decay = 0.0f } };
	double t0 = 0.0, c0 = 0.0, dt, dc;
	float loss = 0.0f;
	int rc;

	rc = backend(dev, &ops);
	if (rc < 0)
		return rc;
	if (ct_backend_supports(ops, &c->cfg) < 0) {
		printf("%-9s %-8s (skipped: %s)\n", c->name, dev, ct_errmsg(CT_EUNSUPP));
		return 0;
	}
	if (l->base_fmt != CT_BASE_F32)
		snprintf(name, sizeof(name), "%s/r%d/%s", c->name, l->rank,
			 ct_base_fmt_name(l->base_fmt));
	else
		snprintf(name, sizeof(name), l->rank ? "%s/r%d" : "%s", c->name, l->rank);
	if (l->rank > 0) {
		ad = malloc(ct_lora_nparams(&c->cfg, l) * sizeof(float));
		rc = ad ? ct_lora_init(&c->cfg, l, 7, ad) : ct_error(CT_ENOMEM, "adapters");
		if (rc == 0)
			rc = ops->open_lora(dev, &c->cfg, B, T, l, &be);
	} else {
		rc = ops->open(dev, &c->cfg, B, T, 1, &be);
	}
	if (rc == 0 && l->base_fmt != CT_BASE_F32)
		rc = ops->load_base ? ops->load_base(be, cbase->fmt, cbase->base, cbase->base_bytes)
				    : ct_error(CT_EUNSUPP, "no compact bases on %s", dev);
	else if (rc == 0)
		rc = ops->load_state(be, params, NULL, NULL);
	if (rc == 0 && ad != NULL)
		rc = ops->lora_load(be, ad, NULL, NULL);
	for (int s = 0; rc == 0 && s <= steps; s++) {
		if (s == 1) {
			t0 = ct_time_mono_s();
			c0 = ct_time_cpu_s();
		}
		a.t = s + 1;
		ct_adamw_bias_corrections(a.opt.beta1, a.opt.beta2, a.t, &a.opt.bc1, &a.opt.bc2);
		rc = ops->step(be, tok + (size_t)s * B * T, tok + (size_t)s * B * T + 1, &a, &loss);
	}
	if (rc == 0) {
		struct rusage ru;
		size_t largest = 0, peak = 0;

		dt = (ct_time_mono_s() - t0) / steps;
		dc = (ct_time_cpu_s() - c0) / steps;
		getrusage(RUSAGE_SELF, &ru);
		ct_ocl_alloc_stats(&peak, &largest);
		if (last != NULL)
			*last = (struct run_stats){ dt * 1e3, (double)peak, (double)largest,
						    ru.ru_maxrss * 1024.0, dc * 1e3 };
		double gflop = ct_gpt2_flops_per_token(&c->cfg, T) * B * T / 1e9;

		printf("%-9s %-8s %3d %4d %10.1f %10.0f %9.1f %5.1f %10.1f %5.1f %8.4f %8.0f %8.0f "
		       "%8.0f %5.2f\n", name, dev, B, T, dt * 1e3, B * T / dt, gflop / dt,
		       peak_pct(gflop / dt), dc * 1e3, core_pct(gflop / dc), (double)loss,
		       ru.ru_maxrss / 1024.0, peak / 1048576.0, largest / 1048576.0, load1());
		fflush(stdout);
	}
	if (rc == 0 && params_out != NULL)
		rc = l->rank > 0 ? ops->lora_read(be, params_out, NULL, NULL)
				 : ops->read_state(be, params_out, NULL, NULL);
	free(ad);
	if (be != NULL)
		ops->close(be);
	return rc;
}

/* run_here in a child process, so that its peak RSS (the device memory,
 * for PoCL, plus the host copies) is its own; params_out is shared memory. */
static int run(const struct bcfg *c, const char *dev, const float *params,
	       const ct_tok *tok, int B, int T, int steps, float *params_out,
	       const struct ct_lora_spec *l)
{
	pid_t pid;
	int status = 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return ct_error(CT_EIO, "fork: %s", strerror(errno));
	if (pid == 0) {
		int rc = run_here(c, dev, params, tok, B, T, steps, params_out, l);

		if (rc < 0)
			fprintf(stderr, "bench_train: %s %s: %s\n", c->name, dev, ct_errmsg(rc));
		fflush(stdout);
		_exit(rc < 0 ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ct_error(CT_EIO, "%s on %s failed", c->name, dev);
	return 0;
}

static float *shared_floats(size_t n)
{
	void *p = mmap(NULL, n * sizeof(float), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The first Python that imports torch: $BENCH_PYTHON, python3 on the PATH,
 * then Debian's /usr/bin/python3 (python3-torch installs there; a pyenv or
 * venv python3 on the PATH does not see it). NULL when none does. */
static const char *torch_python(void)
{
	const char *cand[] = { getenv("BENCH_PYTHON"), "python3", "/usr/bin/python3" };
	char cmd[512];

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		if (cand[i] == NULL || strchr(cand[i], '\'') != NULL)
			continue;
		snprintf(cmd, sizeof(cmd), "'%s' -c 'import torch' >/dev/null 2>&1", cand[i]);
		if (system(cmd) == 0)
			return cand[i];
	}
	return NULL;
}

/* One PyTorch run on the checkpoint and tokens in dir; *ms its ms/step
 * (0 when it could not run), *loss its last step's loss (the sanity check:
 * it should match the devices' loss column), core[32] OpenBLAS's kernel
 * set ("-" for another BLAS, "?" when not said). */
static void torch_run(const char *py, const char *dir, int B, int T, int steps, double *ms,
		      double *cpu_ms, double *loss, char core[32])
{
	char cmd[8192], line[256];
	const char *b;
	FILE *f;

	const char *script = getenv("BENCH_TORCH_SCRIPT"), *tdev = getenv("BENCH_TORCH_DEVICE");

	*ms = 0.0;
	*cpu_ms = 0.0;
	*loss = 0.0;
	snprintf(core, 32, "?");
	if (script == NULL || strchr(script, '\'') != NULL)
		script = CT_TORCH_SCRIPT;
	if (tdev == NULL || strspn(tdev, "abcdefghijklmnopqrstuvwxyz0123456789:") != strlen(tdev))
		tdev = "cpu";
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s/model.bin' '%s/tokens.bin' %d %d %d %s 2>&1",
		 py, script, dir, dir, B, T, steps, tdev);
	f = popen(cmd, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "torch ms/step %lf loss %lf", ms, loss) < 1)
			fprintf(stderr, "torch: %s", line);
		else if ((b = strstr(line, " blas ")) != NULL)
			sscanf(b, " blas %31s cpu_ms %lf", core, cpu_ms);
	pclose(f);
}

/* --compare: rounds of (every device, then PyTorch), with the ratios. */
static int compare(const struct bcfg *c, const struct ct_gpt2 *m, const ct_tok *tok,
		   size_t ntok, char **devs, int ndev, int B, int T, int steps, int rounds)
{
	struct ct_lora_spec none = { 0 };
	char dir[] = "/tmp/bench_train.XXXXXX", path[64];
	double ms[8], cms[8], tms, tcms, tloss;
	char core[32];
	const char *py = torch_python();
	int rc = 0;

	if (py == NULL) {
		printf("%-9s torch    (not run: no python3 imports torch; install python3-torch "
		       "or set BENCH_PYTHON)\n", c->name);
		return 0;
	}
	if (mkdtemp(dir) == NULL)
		return ct_error(CT_EIO, "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/model.bin", dir);
	rc = ct_gpt2_save(path, &c->cfg, m->params);
	snprintf(path, sizeof(path), "%s/tokens.bin", dir);
	if (rc == 0)
		rc = ct_tokens_save(path, tok, ntok);
	for (int r = 0; rc == 0 && r < rounds; r++) {
		for (int d = 0; rc == 0 && d < ndev; d++) {
			rc = run(c, devs[d], m->params, tok, B, T, steps, NULL, &none);
			ms[d] = last->ms;
			cms[d] = last->cpu_ms;
		}
		double gflop = ct_gpt2_flops_per_token(&c->cfg, T) * B * T / 1e9;

		torch_run(py, dir, B, T, steps, &tms, &tcms, &tloss, core);
		printf("%-9s torch    %3d %4d %10.1f %10.0f %9.1f %5.1f %10.1f %5.1f %8.4f  load "
		       "%.2f  blas %s  round %d:", c->name, B, T, tms,
		       tms > 0 ? B * T / (tms / 1e3) : 0.0, tms > 0 ? gflop / (tms / 1e3) : 0.0,
		       tms > 0 ? peak_pct(gflop / (tms / 1e3)) : 0.0, tcms,
		       tcms > 0 ? core_pct(gflop / (tcms / 1e3)) : 0.0, tloss, load1(), core, r + 1);
		for (int d = 0; rc == 0 && d < ndev; d++)
			printf("  torch/%s %.2fx (cpu time %.2fx)", devs[d], tms / ms[d],
			       tcms / cms[d]);
		printf("\n");
		fflush(stdout);
	}
	snprintf(path, sizeof(path), "%s/model.bin", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/tokens.bin", dir);
	unlink(path);
	rmdir(dir);
	return rc;
}

/* --long T2: per device a run at T, one at T2, one at T again (so that a
 * drift in the machine's load shows in neither side alone), then T2's
 * tokens/s over the mean of T's and T2's OpenCL memory: the long-sequence goals
 * for 124m at T2 = 1024 against T = 64 are >= 0.7x, buffers peaking at
 * <= 5 GiB and none over 1 GiB. */
static int long_seq(const struct bcfg *c, const struct ct_gpt2 *m, const ct_tok *tok,
		    char **devs, int ndev, int B, int T, int T2, int steps)
{
	struct ct_lora_spec none = { 0 };
	int rc = 0;

	for (int d = 0; rc == 0 && d < ndev; d++) {
		struct run_stats a = { 0 }, l = { 0 };

		rc = run(c, devs[d], m->params, tok, B, T, steps, NULL, &none);
		if (rc == 0) {
			a = *last;
			rc = run(c, devs[d], m->params, tok, B, T2, steps, NULL, &none);
		}
		if (rc == 0) {
			l = *last;
			rc = run(c, devs[d], m->params, tok, B, T, steps, NULL, &none);
		}
		if (rc == 0 && l.ms > 0.0) {
			printf("%-9s %-8s tokens/s at T=%d over T=%d: %.2fx", c->name, devs[d], T2,
			       T, (double)T2 * (a.ms + last->ms) / 2.0 / ((double)T * l.ms));
			if (l.peak > 0.0)	/* an OpenCL device */
				printf("; at T=%d OpenCL buffers peak %.2f GiB, largest %.0f MiB",
				       T2, l.peak / 1073741824.0, l.largest / 1048576.0);
			printf(" (goals for 124m, 1024 over 64: >= 0.70x, <= 5 GiB, <= 1024 MiB)\n");
		}
	}
	return rc;
}

static int bench_mode(const struct bcfg *c, const struct ct_gpt2 *m, const ct_tok *tok,
		      char **devs, int ndev, int B, int T, int steps, int check,
		      const struct ct_lora_spec *l, struct run_stats *st)
{
	size_t n = l->rank > 0 ? ct_lora_nparams(&c->cfg, l) : m->lay.total;
	float *out[8] = { NULL };
	int rc = 0;

	for (int d = 0; rc == 0 && d < ndev; d++) {
		if (check) {
			out[d] = shared_floats(n);
			if (out[d] == NULL)
				rc = ct_error(CT_ENOMEM, "weights");
		}
		if (rc == 0)
			rc = run(c, devs[d], m->params, tok, B, T, steps, out[d], l);
		if (rc == 0 && st != NULL)
			st[d] = *last;
	}
	for (int d = 1; rc == 0 && check && d < ndev; d++)
		printf("%-6s %s %s vs %s: %s\n", c->name, l->rank ? "adapters" : "weights",
		       devs[0], devs[d],
		       memcmp(out[0], out[d], n * sizeof(float)) == 0 ? "bit-identical"
								     : "DIFFERENT");
	for (int d = 0; d < ndev; d++)
		if (out[d] != NULL)
			munmap(out[d], n * sizeof(float));
	return rc;
}

/* A compact base of random weights made in place, tensor by tensor,
 * never holding the float32 model (Llama-3.1-8B's is 30 GiB): matrices
 * of small random values (bf16 of +-0.02; q8 and nf4 blocks of random
 * codes with scales of 0.02), norm weights 1, biases 0. */
static int random_image(const struct ct_model_config *cfg, int fmt, struct ct_gpt2 *m)
{
	struct ct_base_layout bl;
	uint64_t s = 1337;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	ct_gpt2_layout(cfg, &m->lay);
	ct_base_layout(cfg, fmt, &bl);
	m->fmt = fmt;
	m->base_bytes = bl.bytes;
	m->base = calloc(bl.bytes, 1);
	if (m->base == NULL)
		return ct_error(CT_ENOMEM, "a %zu-byte base", bl.bytes);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		unsigned char *p = m->base + bl.off[t];
		size_t n = m->lay.size[t], blk = ct_base_block_elems(fmt);
		int tf = ct_base_tensor_fmt(fmt, t);
		float one = t == CT_LN1W || t == CT_LN2W || t == CT_LNFW ? 1.0f : 0.0f;

		for (size_t i = 0; tf == CT_BASE_F32 && i < n; i++)
			memcpy(p + 4 * i, &one, 4);
		for (size_t i = 0; tf == CT_BASE_BF16 && i < n; i++) {
			uint16_t h;

			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			h = ct_f32_to_bf16(((float)(s >> 41) / 8388608.0f - 1.0f) * 0.02f);
			memcpy(p + 2 * i, &h, 2);
		}
		for (size_t b = 0; ct_base_blocked(tf) && b < (n + blk - 1) / blk; b++) {
			float sc = tf == CT_BASE_NF4 ? 0.02f : 0.02f / 127.0f;
			unsigned char *q = p + b * CT_BASE_Q8_BYTES;

			memcpy(q, &sc, 4);
			for (int k = 4; k < CT_BASE_Q8_BYTES; k++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				q[k] = (unsigned char)(s >> 56);
			}
		}
	}
	return 0;
}

/* The LoRA rows, once per --base-format (float32 first), then each
 * format against f32. The compact bases are converted after the float32
 * rows and the float32 weights are released before the compact rows, so
 * that a child's RSS (which counts the parent's pages it maps) holds only
 * the base it runs on. A row that fails (a device that cannot take the
 * float32 base, say) is reported and the others still run. */
/* The scheduler's bound for format fmt (ct_wu_mem_bytes) beside each
 * OpenCL device's measured peak: an upper bound, and how far above. */
static void print_bound(const struct bcfg *c, int B, int T, const struct ct_lora_spec *l,
			int fmt, char **devs, int ndev, const struct run_stats *st, int ok)
{
	struct ct_wu_hparams hp;
	double bound;

	ct_wu_hparams_default(&hp);
	hp.B = B;
	hp.T = T;
	hp.lora = *l;
	hp.lora.base_fmt = fmt;
	bound = (double)ct_wu_mem_bytes(&c->cfg, &hp);
	for (int d = 0; ok && d < ndev; d++)
		if (st[d].peak > 0)
			printf("%-9s %-8s %-4s: OpenCL peak %.0f MiB, scheduler bound %.0f MiB "
			       "(ct_wu_mem_bytes, %.2fx the peak%s)\n", c->name, devs[d],
			       ct_base_fmt_name(fmt), st[d].peak / 1048576.0, bound / 1048576.0,
			       bound / st[d].peak, bound < st[d].peak ? ": UNDER IT" : "");
}

static int bench_formats(const struct bcfg *c, struct ct_gpt2 *m, const ct_tok *tok,
			 char **devs, int ndev, int B, int T, int steps, int check)
{
	struct ct_lora_spec r8 = { .rank = 8, .alpha = 8.0f, .targets = CT_LORA_ALL };
	struct ct_lora_spec l = lora.rank > 0 ? lora : r8;
	static struct run_stats st[CT_BASE_NFMT][8];
	struct ct_gpt2 cm[CT_BASE_NFMT];
	int rc = 0, f32 = -1, ok[CT_BASE_NFMT] = { 0 };

	memset(st, 0, sizeof(st));
	memset(cm, 0, sizeof(cm));
	for (int f = 0; f < nfmt; f++) {
		if (fmts[f] != CT_BASE_F32)
			continue;
		f32 = f;
		l.base_fmt = CT_BASE_F32;
		ok[f] = bench_mode(c, m, tok, devs, ndev, B, T, steps, check, &l, st[f]) == 0;
	}
	for (int f = 0; rc == 0 && f < nfmt; f++)
		if (fmts[f] != CT_BASE_F32)
			rc = m->params != NULL ? ct_base_convert(&c->cfg, m->params, fmts[f], &cm[f])
					       : random_image(&c->cfg, fmts[f], &cm[f]);
	free(m->params);	/* the compact rows never read it */
	m->params = NULL;
	for (int f = 0; rc == 0 && f < nfmt; f++) {
		if (fmts[f] == CT_BASE_F32)
			continue;
		l.base_fmt = fmts[f];
		cbase = &cm[f];
		ok[f] = bench_mode(c, m, tok, devs, ndev, B, T, steps, check, &l, st[f]) == 0;
		cbase = NULL;
	}
	for (int f = 0; rc == 0 && f < nfmt; f++)
		print_bound(c, B, T, &l, fmts[f], devs, ndev, st[f], ok[f]);
	for (int f = 0; rc == 0 && f32 >= 0 && f < nfmt; f++) {
		for (int d = 0; f != f32 && d < ndev; d++) {
			const struct run_stats *a = &st[f][d], *b = &st[f32][d];

			if (!ok[f] || !ok[f32]) {
				printf("%-9s %-8s %s/f32: no ratio (%s row failed)\n", c->name, devs[d],
				       ct_base_fmt_name(fmts[f]), ok[f] ? "f32" : "compact");
				continue;
			}
			printf("%-9s %-8s %s/f32: step %.2fx (cpu time %.2fx), rss %.2fx", c->name,
			       devs[d], ct_base_fmt_name(fmts[f]), a->ms / b->ms,
			       a->cpu_ms / b->cpu_ms, a->rss / b->rss);
			if (b->peak > 0)
				printf(", OpenCL peak %.2fx (%.0f of %.0f MiB), largest buffer "
				       "%.0f MiB", a->peak / b->peak, a->peak / 1048576.0,
				       b->peak / 1048576.0, a->largest / 1048576.0);
			printf("\n%-9s %-8s %s goals: step (cpu time) <= 1.15x f32's: %s", c->name,
			       devs[d], ct_base_fmt_name(fmts[f]),
			       a->cpu_ms <= 1.15 * b->cpu_ms ? "met" : "NOT met");
			if (fmts[f] == CT_BASE_BF16 && b->peak > 0)
				printf("; OpenCL peak <= 0.55x f32's: %s",
				       a->peak <= 0.55 * b->peak ? "met" : "NOT met");
			printf("\n");
		}
	}
	for (int f = 0; f < nfmt; f++)
		ct_gpt2_free(&cm[f]);
	return rc;
}

static int has_f32(void)
{
	for (int f = 0; f < nfmt; f++)
		if (fmts[f] == CT_BASE_F32)
			return 1;
	return 0;
}

static int bench_config(const struct bcfg *c, char **devs, int ndev, int B, int T,
			int steps, int check, int rounds, int T2)
{
	struct ct_gpt2 m;
	ct_tok *tok = NULL;
	size_t ntok = (size_t)(steps + 1) * B * (T2 > T ? T2 : T) + 1;
	int rc;

	memset(&m, 0, sizeof(m));
	if (c->lora_only && !has_f32()) {	/* compact rows only: random images */
		m.cfg = c->cfg;
		ct_gpt2_layout(&c->cfg, &m.lay);
		rc = 0;
	} else {
		rc = ct_gpt2_alloc(&m, &c->cfg);
		if (rc == 0)
			rc = ct_gpt2_init_random(&c->cfg, 1337, m.params);
	}
	tok = malloc(ntok * sizeof(ct_tok));
	if (rc == 0 && tok == NULL)
		rc = ct_error(CT_ENOMEM, "tokens");
	for (size_t i = 0; rc == 0 && i < ntok; i++)
		tok[i] = (ct_tok)((i * 2654435761u) % (unsigned)c->cfg.V);
	if (rc == 0 && !c->lora_only) {
		struct ct_lora_spec none = { 0 };

		rc = bench_mode(c, &m, tok, devs, ndev, B, T, steps, check, &none, NULL);
	}
	if (rc == 0 && T2 > 0 && !c->lora_only)
		rc = long_seq(c, &m, tok, devs, ndev, B, T, T2, steps);
	if (rc == 0 && rounds > 0 && c->cfg.arch == CT_ARCH_GPT2)	/* torch_train.py: GPT-2 */
		rc = compare(c, &m, tok, ntok, devs, ndev, B, T, steps, rounds);
	if (rc == 0 && (lora.rank > 0 || c->lora_only))
		rc = bench_formats(c, &m, tok, devs, ndev, B, T, steps, check);
	free(tok);
	ct_gpt2_free(&m);
	return rc;
}

/* "f32,bf16" into fmts / nfmt. */
static int parse_formats(const char *s)
{
	char buf[64];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	nfmt = 0;
	for (char *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		int f, rc = ct_base_fmt_parse(w, &f);

		if (rc < 0)
			return rc;
		if (nfmt == CT_BASE_NFMT)
			return ct_error(CT_EINVAL, "too many formats");
		fmts[nfmt++] = f;
	}
	return nfmt > 0 ? 0 : ct_error(CT_EINVAL, "no format");
}

/* --need: the memory bound the scheduler holds hosts to (ct_wu_mem_bytes,
 * doc/workunit.md §13 "Memory": the OpenCL device memory of the WU's
 * backend, with its largest buffer, ct_ocl_wu_bytes; Llama in lean mode
 * where the backend runs lean) for config c at B x T, per format (the
 * LoRA rows; full fine-tuning too when no --lora-rank), without running;
 * then the device-memory goals that apply. */
static void print_need(const struct bcfg *c, int B, int T)
{
	struct ct_wu_hparams hp;
	double dev[CT_BASE_NFMT] = { 0 };

	ct_wu_hparams_default(&hp);
	hp.B = B;
	hp.T = T;
	for (int f = 0; f < nfmt; f++) {
		uint64_t big;

		hp.lora = lora;
		hp.lora.base_fmt = lora.rank > 0 ? fmts[f] : CT_BASE_F32;
		ct_ocl_wu_bytes(&c->cfg, &hp, &big);
		dev[hp.lora.base_fmt] = (double)ct_wu_mem_bytes(&c->cfg, &hp) / 1048576.0;
		printf("%-10s B=%d T=%d %s %-4s: a WU needs %.0f MiB of device memory "
		       "(ct_wu_mem_bytes), largest buffer %.0f MiB%s\n", c->name, B, T,
		       lora.rank > 0 ? "LoRA" : "full", ct_base_fmt_name(hp.lora.base_fmt),
		       dev[hp.lora.base_fmt], (double)big / 1048576.0,
		       c->cfg.arch == CT_ARCH_LLAMA && ct_ocl_llama_lean(&c->cfg, B, T)
			       ? " (lean)" : "");
		if (lora.rank == 0)
			return;
	}
	if (dev[CT_BASE_NF4] > 0 && strcmp(c->name, "llama32_1b") == 0)
		printf("%-10s goal: nf4 device %.0f MiB <= 3072 at r=16 B=4 T=512 (here r=%d B=%d "
		       "T=%d): %s\n", c->name, dev[CT_BASE_NF4], lora.rank, B, T,
		       dev[CT_BASE_NF4] <= 3072 ? "met" : "NOT met");
	if (dev[CT_BASE_NF4] > 0 && strcmp(c->name, "llama31_8b") == 0)
		printf("%-10s goal: nf4 device %.0f MiB <= 8192 (here r=%d B=%d T=%d): %s\n",
		       c->name, dev[CT_BASE_NF4], lora.rank, B, T,
		       dev[CT_BASE_NF4] <= 8192 ? "met" : "NOT met");
	if (dev[CT_BASE_BF16] > 0 && dev[CT_BASE_F32] > 0)
		printf("%-10s goal: bf16 device %.2fx f32's <= 0.55x (here r=%d B=%d T=%d): %s\n",
		       c->name, dev[CT_BASE_BF16] / dev[CT_BASE_F32], lora.rank, B, T,
		       dev[CT_BASE_BF16] <= 0.55 * dev[CT_BASE_F32] ? "met" : "NOT met");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		CT_BENCH_RUN_OPTIONS,
		{ "check", no_argument, NULL, 'k' },
		{ "lora-rank", required_argument, NULL, 'r' },
		{ "compare", optional_argument, NULL, 'p' },
		{ "long", required_argument, NULL, 'L' },
		{ "base-format", required_argument, NULL, 'F' },
		{ "need", no_argument, NULL, 'N' },
		{ "peak", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ct_bench_run run = CT_BENCH_RUN_INIT;
	char *def[2] = { "cpu", "opencl" };
	int check = 0, rounds = 0, T2 = 0, need = 0, c, rc = 0;

	while ((c = getopt_long(argc, argv, "c:B:T:n:d:kr:L:h", opts, NULL)) != -1) {
		if (ct_bench_run_opt(&run, c, optarg))
			continue;
		switch (c) {
		case 'k': check = 1; break;
		case 'N': need = 1; break;
		case 'P': peak_gflops = atof(optarg); break;
		case 'r':
			lora = (struct ct_lora_spec){ .rank = atoi(optarg), .targets = CT_LORA_ALL };
			lora.alpha = (float)lora.rank;
			if (lora.rank < 1 || lora.rank > CT_LORA_MAX_RANK) {
				fprintf(stderr, "bad --lora-rank\n");
				return 2;
			}
			break;
		case 'p': rounds = optarg ? atoi(optarg) : 3; break;
		case 'F':
			if (parse_formats(optarg) < 0) {
				fprintf(stderr, "bad --base-format: %s\n", ct_errmsg(CT_EINVAL));
				return 2;
			}
			break;
		case 'L':
			T2 = atoi(optarg);
			if (T2 < 1) {
				fprintf(stderr, "bad --long\n");
				return 2;
			}
			break;
		case 'h':
			printf("usage: %s [--config small|124m|smol135m|qwen3_06b|llama32_1b|qwen3_17b|"
			       "llama31_8b|all] [--batch B] [--seq T] "
			       "[--steps N] [--device D]... [--check] [--lora-rank R] "
			       "[--base-format f32,bf16,q8,nf4] [--compare[=R]] [--long T2] [--need] "
			       "[--peak GFLOPS]\n", argv[0]);
			return 0;
		default:
			fprintf(stderr, "usage: %s [--config small|124m|smol135m|qwen3_06b|all] [--batch B] "
				"[--seq T] [--steps N] [--device D]... [--check] [--lora-rank R] "
				"[--compare[=R]] [--long T2]\n", argv[0]);
			return 2;
		}
	}
	if (run.ndev == 0) {
		run.devs[0] = def[0];
		run.devs[1] = def[1];
		run.ndev = 2;
	}
	last = mmap(NULL, sizeof(*last), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (last == MAP_FAILED) {
		fprintf(stderr, "bench_train: no shared memory\n");
		return 1;
	}
	if (ct_bench_run_bad(&run) || rounds < 0) {
		fprintf(stderr, "bad --batch/--seq/--steps\n");
		return 2;
	}
	if (need) {
		for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
			if (strcmp(run.which, "all") == 0 || strcmp(run.which, configs[i].name) == 0)
				print_need(&configs[i], run.B, run.T);
		return 0;
	}
	if (peak_gflops <= 0.0) {
		double core;

		peak_gflops = cpu_peak_gflops(&core);
		printf("peak%% of %.1f GFLOP/s: %ld CPUs x %.1f GFLOP/s each (an AVX2 FMA loop: "
		       "32 flops a cycle at %.2f GHz), load %.2f\n", peak_gflops,
		       core > 0 ? (long)(peak_gflops / core + 0.5) : 0L, core, core / 32.0, load1());
	} else {
		printf("peak%% of %.1f GFLOP/s (--peak)\n", peak_gflops);
	}
	core_gflops = peak_gflops / ncpus();
	printf("%-9s %-8s %3s %4s %10s %10s %9s %5s %10s %5s %8s %8s %8s %8s %5s\n", "config",
	       "device", "B", "T", "ms/step", "tokens/s", "GFLOP/s", "peak%", "cpu ms", "cpu%",
	       "loss", "rssMiB", "devMiB", "bufMiB", "load");
	for (size_t i = 0; rc == 0 && i < sizeof(configs) / sizeof(configs[0]); i++)
		if ((strcmp(run.which, "all") == 0 && !configs[i].lora_only) ||
		    strcmp(run.which, configs[i].name) == 0)
			rc = bench_config(&configs[i], run.devs, run.ndev, run.B, run.T, run.steps,
					  check, rounds, T2);
	if (rc < 0)
		fprintf(stderr, "bench_train: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
