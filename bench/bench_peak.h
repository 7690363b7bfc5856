/* bench_peak.h - measured single-thread fp32 FMA peak per ISA, for luthier-bench.

   Each ISA gets a register-only loop: ACC independent accumulator chains, each step
   acc = acc * x + y (one FMA, or a multiply and an add for plain C). With ACC >= latency x issue
   ports (AVX-512 on Sapphire Rapids: 4 cycles x 2 ports = 8) the loop is throughput bound, so
   its FLOP rate is the most any kernel of that ISA can reach on one core. x stays just below 1
   and y small, so the values converge to y / (1 - x) and never overflow or go denormal.

   ISAs, named as in the kernel registry (luthier_kernel_info.isa):
     scalar  the ceiling of plain C at -O2 without -march: the compiler may vectorize the scalar
             kernels with the baseline SIMD unit, without FMA (no contraction under -std=c99),
             so: SSE (x86-64) / Advanced SIMD (AArch64) multiply + add, 12 chains, 4 lanes
     avx2    ymm FMA, 12 chains (16 ymm registers: 12 + x + y, no spills), 8 lanes
     avx512  zmm FMA, 16 chains (32 zmm registers), 16 lanes
     neon    AArch64 q-register FMA, 16 chains (32 v registers), 4 lanes
   plus, with AVX-512, "avx512mix": the default 6x64 kernel's step of k on data in L1 (not an
   ISA of the registry: no %peak is taken against it; it shows what the kernel's loads cost)
   The x86 loops carry their own target attributes and only run when luthier_cpu_features()
   reports the ISA, so the file builds for baseline x86-64.
*/
#ifndef LUTHIER_BENCH_PEAK_H
#define LUTHIER_BENCH_PEAK_H

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define BENCH_PEAK_X86 1
#include <immintrin.h>
#else
#define BENCH_PEAK_X86 0
#endif
#if defined(__aarch64__)
#define BENCH_PEAK_NEON 1
#include <arm_neon.h>
#else
#define BENCH_PEAK_NEON 0
#endif

#define BENCH_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define BENCH_REP16(X) BENCH_REP12(X) X(12) X(13) X(14) X(15)

static volatile float bench_peak_sink;

typedef float (*bench_peak_loop_fn)(long iters);

/* ---- scalar: what plain C may become at -O2 for the baseline target ----------------------------
   The "scalar" kernels are plain C; GCC and Clang vectorize their loops with the baseline SIMD
   unit (SSE2 on x86-64, Advanced SIMD on AArch64), without FMA (no contraction under -std=c99).
   So their ceiling is 4-lane multiply + add, not scalar code. */
#if BENCH_PEAK_X86
static float bench_peak_loop_baseline(long iters) {
    const __m128 x = _mm_set1_ps(0.999f), y = _mm_set1_ps(0.001f);
    float out[4];
    __m128 sum;
    long it;
#define BENCH_B_DECL(i) __m128 v##i = _mm_set1_ps(0.01f * (float)(i));
#define BENCH_B_STEP(i) v##i = _mm_add_ps(_mm_mul_ps(v##i, x), y);
#define BENCH_B_SUM(i) sum = _mm_add_ps(sum, v##i);
    BENCH_REP12(BENCH_B_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP12(BENCH_B_STEP)
    }
    sum = _mm_setzero_ps();
    BENCH_REP12(BENCH_B_SUM)
    _mm_storeu_ps(out, sum);
    return out[0] + out[1] + out[2] + out[3];
#undef BENCH_B_DECL
#undef BENCH_B_STEP
#undef BENCH_B_SUM
}
#define BENCH_BASELINE_LANES 4
#define BENCH_BASELINE_WHAT "SSE mul+add (base)"
#elif BENCH_PEAK_NEON
static float bench_peak_loop_baseline(long iters) {
    const float32x4_t x = vdupq_n_f32(0.999f), y = vdupq_n_f32(0.001f);
    float32x4_t sum;
    long it;
#define BENCH_B_DECL(i) float32x4_t v##i = vdupq_n_f32(0.01f * (float)(i));
#define BENCH_B_STEP(i) v##i = vaddq_f32(vmulq_f32(v##i, x), y);
#define BENCH_B_SUM(i) sum = vaddq_f32(sum, v##i);
    BENCH_REP12(BENCH_B_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP12(BENCH_B_STEP)
    }
    sum = vdupq_n_f32(0.0f);
    BENCH_REP12(BENCH_B_SUM)
    return vaddvq_f32(sum);
#undef BENCH_B_DECL
#undef BENCH_B_STEP
#undef BENCH_B_SUM
}
#define BENCH_BASELINE_LANES 4
#define BENCH_BASELINE_WHAT "fmul+fadd (base)"
#else
static float bench_peak_loop_baseline(long iters) {
    const float x = 0.999f, y = 0.001f;
    long it;
#define BENCH_S_DECL(i) volatile float s##i = 0.01f * (float)(i);
#define BENCH_S_STEP(i) s##i = s##i * x + y;
#define BENCH_S_SUM(i) + s##i
    BENCH_REP12(BENCH_S_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP12(BENCH_S_STEP)
    }
    return 0.0f BENCH_REP12(BENCH_S_SUM);
#undef BENCH_S_DECL
#undef BENCH_S_STEP
#undef BENCH_S_SUM
}
#define BENCH_BASELINE_LANES 1
#define BENCH_BASELINE_WHAT "C mul+add"
#endif

/* ---- x86 AVX2 + FMA, AVX-512F ------------------------------------------------------------------ */
#if BENCH_PEAK_X86
__attribute__((target("avx2,fma"))) static float bench_peak_loop_avx2(long iters) {
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
    float out[8];
    __m256 sum;
    long it;
    int i;
#define BENCH_Y_DECL(i) __m256 v##i = _mm256_set1_ps(0.01f * (float)(i));
#define BENCH_Y_STEP(i) v##i = _mm256_fmadd_ps(v##i, x, y);
#define BENCH_Y_SUM(i) sum = _mm256_add_ps(sum, v##i);
    BENCH_REP12(BENCH_Y_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP12(BENCH_Y_STEP)
    }
    sum = _mm256_setzero_ps();
    BENCH_REP12(BENCH_Y_SUM)
    _mm256_storeu_ps(out, sum);
    for (i = 1; i < 8; i++) out[0] += out[i];
    return out[0];
#undef BENCH_Y_DECL
#undef BENCH_Y_STEP
#undef BENCH_Y_SUM
}

__attribute__((target("avx512f"))) static float bench_peak_loop_avx512(long iters) {
    const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
    __m512 sum;
    long it;
#define BENCH_Z_DECL(i) __m512 v##i = _mm512_set1_ps(0.01f * (float)(i));
#define BENCH_Z_STEP(i) v##i = _mm512_fmadd_ps(v##i, x, y);
#define BENCH_Z_SUM(i) sum = _mm512_add_ps(sum, v##i);
    BENCH_REP16(BENCH_Z_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP16(BENCH_Z_STEP)
    }
    sum = _mm512_setzero_ps();
    BENCH_REP16(BENCH_Z_SUM)
    return _mm512_reduce_add_ps(sum);
#undef BENCH_Z_DECL
#undef BENCH_Z_STEP
#undef BENCH_Z_SUM
}

/* The instruction mix of the default AVX-512 GEMM kernel (6x64 hybrid) per step of k: 4 zmm loads
   of B, 6 broadcast loads of A, 24 FMAs into 24 accumulators, all from L1 (a 16 KiB window of
   B, 64 steps of A). Nothing misses and nothing is stored, so this is the most that kernel's
   loop can reach on this core: the distance between it and the register-only peak is what the
   loads cost (a GEMM's %peak is still against the register-only loop). */
static float bench_mix_b[64 * 64] __attribute__((aligned(64)));
static float bench_mix_a[6][64] __attribute__((aligned(64)));

__attribute__((target("avx512f"))) static float bench_peak_loop_avx512_mix(long iters) {
    __m512 acc[6][4], sum = _mm512_setzero_ps();
    long it;
    int r, v;
    if (bench_mix_b[0] == 0.0f) {
        for (r = 0; r < 64 * 64; r++) bench_mix_b[r] = 1e-3f;
        for (r = 0; r < 6 * 64; r++) bench_mix_a[r / 64][r % 64] = 1e-3f;
    }
    for (r = 0; r < 6; r++)
        for (v = 0; v < 4; v++) acc[r][v] = _mm512_setzero_ps();
    for (it = 0; it < iters; it++) {
        const int k = (int)(it & 63);
        const float *b = bench_mix_b + k * 64;
        const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), b2 = _mm512_load_ps(b + 32),
                     b3 = _mm512_load_ps(b + 48);
#define BENCH_MIX_ROW(r)                                         \
    {                                                            \
        const __m512 av = _mm512_set1_ps(bench_mix_a[r][k]);     \
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);          \
        acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);          \
        acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);          \
        acc[r][3] = _mm512_fmadd_ps(av, b3, acc[r][3]);          \
    }
        BENCH_MIX_ROW(0) BENCH_MIX_ROW(1) BENCH_MIX_ROW(2) BENCH_MIX_ROW(3) BENCH_MIX_ROW(4) BENCH_MIX_ROW(5)
#undef BENCH_MIX_ROW
    }
    for (r = 0; r < 6; r++)
        for (v = 0; v < 4; v++) sum = _mm512_add_ps(sum, acc[r][v]);
    return _mm512_reduce_add_ps(sum);
}
#endif

/* ---- AArch64 NEON ----------------------------------------------------------------------------- */
#if BENCH_PEAK_NEON
static float bench_peak_loop_neon(long iters) {
    const float32x4_t x = vdupq_n_f32(0.999f), y = vdupq_n_f32(0.001f);
    float32x4_t sum;
    long it;
#define BENCH_N_DECL(i) float32x4_t v##i = vdupq_n_f32(0.01f * (float)(i));
#define BENCH_N_STEP(i) v##i = vfmaq_f32(y, v##i, x);
#define BENCH_N_SUM(i) sum = vaddq_f32(sum, v##i);
    BENCH_REP16(BENCH_N_DECL)
    for (it = 0; it < iters; it++) {
        BENCH_REP16(BENCH_N_STEP)
    }
    sum = vdupq_n_f32(0.0f);
    BENCH_REP16(BENCH_N_SUM)
    return vaddvq_f32(sum);
#undef BENCH_N_DECL
#undef BENCH_N_STEP
#undef BENCH_N_SUM
}
#endif

/* ---- measurement ------------------------------------------------------------------------------ */

typedef struct bench_peak {
    const char *isa;    /* registry ISA name */
    const char *what;   /* human description of the loop */
    int lanes, chains;  /* fp32 lanes per vector, independent accumulators */
    double gflops;      /* measured, 1 thread */
    bench_peak_loop_fn loop;
    double flops_per_iter;
    long probe_iters;   /* iterations of a ~10 ms probe */
} bench_peak;

#define BENCH_MAX_PEAKS 5
typedef struct bench_peaks {
    int count;
    bench_peak peak[BENCH_MAX_PEAKS];
} bench_peaks;

/* Best GFLOP/s of `trials` runs of `iters` iterations. */
static double bench_peak_run(const bench_peak *e, long iters, int trials) {
    double best = 0.0;
    int i;
    for (i = 0; i < trials; i++) {
        const double t0 = bench_now();
        double t, g;
        bench_peak_sink = e->loop(iters);
        t = bench_now() - t0;
        g = t > 0.0 ? e->flops_per_iter * (double)iters / t * 1e-9 : 0.0;
        if (g > best) best = g;
    }
    return best;
}

/* Calibrates a ~10 ms probe, then returns the best of 10 runs of ~total_time/10 seconds: the
   fastest run is the peak, slower ones met interference (a busy sibling hyperthread, the host). */
static void bench_peak_calibrate(bench_peak *e, double total_time) {
    long iters = 1000;
    double t;
    for (;;) {
        const double t0 = bench_now();
        bench_peak_sink = e->loop(iters);
        t = bench_now() - t0;
        if (t >= 0.01 || iters >= (1l << 40)) break;
        iters *= 2;
    }
    e->probe_iters = iters;
    if (t > 0.0 && t < total_time / 10) {
        const double scale = total_time / 10 / t;
        iters = (long)((double)iters * (scale < 1e6 ? scale : 1e6));
    }
    e->gflops = bench_peak_run(e, iters, 10);
}

static void bench_peak_add(bench_peaks *p, const char *isa, const char *what, int lanes,
                           int chains, bench_peak_loop_fn loop, double total_time) {
    bench_peak *e;
    if (p->count >= BENCH_MAX_PEAKS) return;
    e = &p->peak[p->count++];
    e->isa = isa;
    e->what = what;
    e->lanes = lanes;
    e->chains = chains;
    e->loop = loop;
    e->flops_per_iter = 2.0 * lanes * chains; /* multiply + add per lane per chain */
    bench_peak_calibrate(e, total_time);
}

/* Measures every ISA this CPU has; total_time is the budget per ISA (seconds). */
static void bench_peaks_measure(bench_peaks *p, double total_time) {
    unsigned f = luthier_cpu_features();
    memset(p, 0, sizeof *p);
    bench_peak_add(p, "scalar", BENCH_BASELINE_WHAT, BENCH_BASELINE_LANES, 12,
                   bench_peak_loop_baseline, total_time);
#if BENCH_PEAK_X86
    if (f & LUTHIER_CPU_AVX2_FMA)
        bench_peak_add(p, "avx2", "ymm vfmadd", 8, 12, bench_peak_loop_avx2, total_time);
    if (f & LUTHIER_CPU_AVX512F) {
        bench_peak_add(p, "avx512", "zmm vfmadd", 16, 16, bench_peak_loop_avx512, total_time);
        /* not an ISA of the registry: no kernel's %peak is taken against it */
        bench_peak_add(p, "avx512mix", "6x64 kernel, in L1", 16, 24,
                       bench_peak_loop_avx512_mix, total_time);
    }
#endif
#if BENCH_PEAK_NEON
    if (f & LUTHIER_CPU_NEON)
        bench_peak_add(p, "neon", "q-reg fmla", 4, 16, bench_peak_loop_neon, total_time);
#endif
    (void)f;
}

/* Re-measures one ISA's peak (trials x ~10 ms) and returns the best value seen so far, which it
   keeps. On a machine with a busy sibling hyperthread or a noisy host a single measurement can
   come out low; the peak is a constant of the machine, so the fastest run of the whole session
   is its best estimate, and probing around every case keeps catching quiet moments just as the
   fastest repetition of a case does. 0 if the ISA is unknown. */
static double bench_peak_probe(bench_peaks *p, const char *isa, int trials) {
    int i;
    for (i = 0; i < p->count; i++)
        if (isa && strcmp(p->peak[i].isa, isa) == 0) {
            const double g = bench_peak_run(&p->peak[i], p->peak[i].probe_iters, trials);
            if (g > p->peak[i].gflops) p->peak[i].gflops = g;
            return p->peak[i].gflops;
        }
    return 0.0;
}

/* The highest measured peak (the machine's single-thread fp32 peak). */
static double bench_peak_best(const bench_peaks *p) {
    double best = 0.0;
    int i;
    for (i = 0; i < p->count; i++)
        if (p->peak[i].gflops > best) best = p->peak[i].gflops;
    return best;
}

#endif /* LUTHIER_BENCH_PEAK_H */
