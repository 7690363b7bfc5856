/* luthier-bench - benchmark tool of luthier.

   Build: make bench   (-> build/luthier-bench; links OpenBLAS / oneDNN when the Makefile finds
   them, which defines LUTHIER_HAVE_OPENBLAS / LUTHIER_HAVE_DNNL)

   Usage: luthier-bench <command> [options]      luthier-bench <command> --help
     kernels   list the microkernel registry
     peak      measure the single-thread fp32 FMA peak of every ISA of this CPU
     gemm      GFLOP/s of luthier's GEMM per shape and kernel, against OpenBLAS and oneDNN;
               --threads N runs luthier (a context of N threads, default ratios) and the anchors
               on N threads, --scaling adds luthier on 1 thread and the speedup
               --int8: the int8 GEMM vs luthier's fp32 GEMM and oneDNN u8s8s32 (bench_int8.h)
     threads   cost of a parallel region (luthier_parallel_for): empty and with a 10 us body,
               1 thread and all threads, RATIO and DYNAMIC, min / median us per region
     asym      emulated big.LITTLE: a pinned, time-bounded busy loop of the tool halves one CPU
               ("little", LUTHIER_CLUSTERS or --little-cpu); equal split, ratio_0..100, dynamic
               and big-only compared on DNN GEMMs and a parallel_for, in alternating rounds
     model     a zoo network (ResNet, VGG, GoogLeNet, MobileNetV2, BERT, GPT-2) planned with
               default configurations: min / median latency, per-layer breakdown, weights /
               arena / workspace memory, and PyTorch (tests/torch_ref.py --time) in the same run
     rnn       one GRU / LSTM layer (seq 100, input 64, hidden 128, batch 1 and 8) planned as a
               graph: min / median ms and GFLOP/s
     tune      luthier_tune on a zoo network: records, report, SVG heatmap; default, tuned,
               exhaustive, random, big-only and equal-split plans timed end to end
     conv      time of every valid (algorithm, microkernel) pair of luthier_conv2d per layer
               (ResNet-18, MobileNetV2, AlexNet, VGG-16 or --layer), batch 1, NHWC, against
               oneDNN's convolution primitive (format 'any', algorithm auto) in the same run;
               the best pair, AUTO's pick and the geomean over layers of best vs oneDNN.
               Pairs come from the API (every luthier_conv_algorithm below
               LUTHIER_CONV_ALGORITHM_COUNT x every kernel, filtered by
               luthier_conv2d_algorithm_valid), so new algorithms show up without edits here
               --int8: the int8 convolution vs luthier's fp32 one per ResNet-50 / MobileNetV2
               layer (bench_int8.h)

     convt     one transposed convolution (conv_transpose, default [1,64,56,56] -> 32 channels,
               k4 s2 p1) as a plan and as its step alone, against oneDNN's deconvolution

   Adding a command: write `static int cmd_NAME(int argc, char **argv)` (argv[0] is the command
   name, return an exit code: 0 ok, 1 failure, 2 usage error) and `static void usage_NAME(FILE *)`,
   and add a row to bench_commands[] at the end of this file. Shared helpers live in
   bench/bench_common.h (clock, buffers, data, statistics, option parsing), the FMA peak in
   bench/bench_peak.h and the reference libraries in bench/bench_anchors.h.

   Method: monotonic clock, deterministic data, 64-byte aligned buffers. Every contestant of a
   case (luthier kernels or conv pairs, OpenBLAS, oneDNN: same process, same data, same policy)
   first makes one untimed call whose result is checked (a wrong result posts no time and makes
   the exit status 1); then repetitions are timed one by one, in rounds
   that alternate the contestants (bench_run_round in bench_common.h), until each has run
   --min-time seconds (at least 3 repetitions unless they take over a second) or exactly --reps
   times. Reported: the fastest repetition (GF/s) and the median. Caches are neither flushed nor
   pre-touched beyond the warm-up calls.
*/
#define LUTHIER_IMPLEMENTATION
#include "luthier.h" /* first: it defines _GNU_SOURCE for the POSIX calls below */

#include "bench_common.h"
#include "bench_peak.h"
#include "bench_anchors.h"

/* ================================================================================================
   Shared pieces: context, CPU description, timing loop
   ================================================================================================ */

static const char *short_kernel_name(const char *full) {
    static const char prefix[] = "luthier_sgemm_ukernel_", qprefix[] = "luthier_qgemm_ukernel_";
    if (strncmp(full, prefix, sizeof prefix - 1) == 0) return full + sizeof prefix - 1;
    return strncmp(full, qprefix, sizeof qprefix - 1) == 0 ? full + sizeof qprefix - 1 : full;
}

static const char *kind_name(luthier_kernel_kind kind) {
    return kind == LUTHIER_KERNEL_HYBRID ? "hybrid" : "interleaved";
}

/* Context with defaults ($LUTHIER_KERNEL and $LUTHIER_CLUSTERS honoured), num_threads threads
   (0 = one per CPU, 1 = no workers) and optional cache blocking (NULL or {kc, mc, nc},
   0 = derived); prints why on failure. */
static luthier_context *open_context(const char *cmd, const size_t *blocking, int num_threads) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_status s;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = num_threads;
    if (blocking) {
        cd.kc = blocking[0];
        cd.mc = blocking[1];
        cd.nc = blocking[2];
    }
    s = luthier_context_create(&cd, &ctx);
    if (s != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: cannot create a luthier context: %s%s%s\n", bench_prog,
                cmd, luthier_status_string(s),
                getenv("LUTHIER_KERNEL") ? " (check $LUTHIER_KERNEL)" : "",
                getenv("LUTHIER_CLUSTERS") ? " (check $LUTHIER_CLUSTERS)" : "");
        return NULL;
    }
    return ctx;
}

static void print_features(FILE *out) {
    const unsigned f = luthier_cpu_features();
    fprintf(out, "%s%s%s%s%s%s%s%s%s%s", f & LUTHIER_CPU_AVX2_FMA ? " avx2+fma" : "",
            f & LUTHIER_CPU_AVX512F ? " avx512f" : "", f & LUTHIER_CPU_AVX512VNNI ? " avx512vnni" : "",
            f & LUTHIER_CPU_AVXVNNI ? " avxvnni" : "", f & LUTHIER_CPU_AVX512FP16 ? " avx512fp16" : "",
            f & LUTHIER_CPU_NEON ? " neon" : "",
            f & LUTHIER_CPU_DOTPROD ? " dotprod" : "", f & LUTHIER_CPU_FP16 ? " fp16" : "",
            f & LUTHIER_CPU_I8MM ? " i8mm" : "", f ? "" : " (baseline only)");
}

static void print_cpu(FILE *out) {
    const luthier_cache_info ci = luthier_cache_sizes();
    fprintf(out, "cpu      features:");
    print_features(out);
    fprintf(out, "; caches: L1d %zu KiB, L2 %zu KiB, L3 %zu KiB\n", ci.l1d >> 10, ci.l2 >> 10,
            ci.l3 >> 10);
}

static void print_peaks(FILE *out, const bench_peaks *p) {
    int i;
    fprintf(out, "peak     1 thread:");
    for (i = p->count - 1; i >= 0; i--)
        fprintf(out, " %s %.1f GF/s%s", p->peak[i].isa, p->peak[i].gflops,
                i ? "," : " (re-probed around each case; %peak uses the best of the run)\n");
}

/* Lets the worker threads of an anchor that just ran go idle before the next contestant is
   timed (only with --threads > 1): after a call OpenBLAS's workers keep polling (sched_yield)
   for up to 2^28 cycles (~0.1 s); libgomp's (oneDNN) spin up to 300000 pause loops (~20 ms). */
static void settle_after_anchor(int anchor, int threads) {
    struct timespec ts;
    if (threads <= 1 || anchor < 0) return;
    ts.tv_sec = 0;
    ts.tv_nsec = anchor == BENCH_ANCHOR_OPENBLAS ? 150000000L : 50000000L;
    nanosleep(&ts, NULL);
}

/* Same for luthier's own workers: after a region they spin (LUTHIER__SPIN pause loops, well
   under a millisecond) before they sleep on a condition variable. */
static void settle_after_luthier(int anchor, int threads) {
    struct timespec ts;
    if (threads <= 1 || anchor >= 0) return;
    ts.tv_sec = 0;
    ts.tv_nsec = 3000000L;
    nanosleep(&ts, NULL);
}

/* ================================================================================================
   kernels
   ================================================================================================ */

static void usage_kernels(FILE *out) {
    fprintf(out,
            "Usage: %s kernels [--csv]\n"
            "List luthier's microkernel registry: name, ISA, tile MR x NR, k-unroll, kind\n"
            "(interleaved = packed A panel, hybrid = A rows read in place), whether this CPU\n"
            "can run it, and '*' on the default kernel of a new context ($LUTHIER_KERNEL\n"
            "overrides it), then the other families of luthier_kernels_*: fp16 weights (f16w: what\n"
            "dense layers of LUTHIER_PRECISION_FP16 plans run), int8 (k-unroll = the K group) and fp16\n"
            "arithmetic (f16: Armv8.2 FP16, and a scalar emulation).\n"
            "  --csv    comma-separated with a header line (dtype column: f32, f16w, int8 or f16)\n",
            bench_prog);
}

static void print_kernel_row(int i, const luthier_kernel_info *ki, const char *def, int csv, const char *dtype) {
    const int is_def = strcmp(ki->name, def) == 0;
    if (csv)
        printf("%d,%s,%s,%d,%d,%d,%s,%d,%d,%s\n", i, ki->name, ki->isa, ki->mr, ki->nr, ki->k_unroll,
               kind_name(ki->kind), ki->available ? 1 : 0, is_def, dtype);
    else
        printf("%3d  %-50s %-10s %3d %3d %8d  %-11s  %-9s %s\n", i, ki->name, ki->isa, ki->mr, ki->nr, ki->k_unroll,
               kind_name(ki->kind), ki->available ? "yes" : "no", is_def ? "*" : "");
}

static int cmd_kernels(int argc, char **argv) {
    const char *cmd = argv[0];
    luthier_context *ctx;
    const char *def;
    int csv = 0, i, r, f;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_kernels(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            csv = 1;
        } else {
            bench_usage_error(cmd, "unknown option '%s'", argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    if (!(ctx = open_context(cmd, NULL, 1))) return BENCH_EXIT_FAIL;
    def = luthier_context_kernel(ctx);
    if (csv)
        printf("index,name,isa,mr,nr,k_unroll,kind,available,default,dtype\n");
    else
        printf("%3s  %-50s %-10s %3s %3s %8s  %-11s  %-9s %s\n", "#", "name", "isa", "MR", "NR",
               "k-unroll", "kind", "available", "default");
    /* every family's table (int8: k-unroll is the K group of the dot product) */
    for (f = 0; f < (int)LUTHIER_KERNELS_COUNT; f++) {
        static const char *const dtype[LUTHIER_KERNELS_COUNT] = {"f32", "f16w", "int8", "f16"};
        static const char *const title[LUTHIER_KERNELS_COUNT] = {
            "", "fp16-weight (f32 x f16 -> f32) kernels, dense layers of fp16 plans:\n", "int8 (u8 x s8 -> s32) kernels:\n",
            "fp16-arithmetic (f16 x f16 -> f16 per k block, f32 C) kernels, luthier_sgemm:\n"};
        const luthier_kernel_family fam = (luthier_kernel_family)f;
        const char *fdef = fam == LUTHIER_KERNELS_INT8 ? luthier__qkernels[luthier__qkernel_default(ctx, 256)].name
                           : fam == LUTHIER_KERNELS_F16W ? luthier__f16w_kernel(ctx, 256)->name
                           : fam == LUTHIER_KERNELS_F16 ? "" : def;
        if (!csv) printf("%s", title[f]);
        for (i = 0; i < luthier_kernels_count(fam); i++) {
            luthier_kernel_info ki;
            if (luthier_kernels_get(fam, i, &ki) == LUTHIER_STATUS_OK) print_kernel_row(i, &ki, fdef, csv, dtype[f]);
        }
    }
    if (!csv) {
        printf("cpu features:");
        print_features(stdout);
        printf("\n");
    }
    luthier_context_destroy(ctx);
    return BENCH_EXIT_OK;
}

/* ================================================================================================
   peak
   ================================================================================================ */

static void usage_peak(FILE *out) {
    fprintf(out,
            "Usage: %s peak [--min-time S] [--csv]\n"
            "Measure the single-thread fp32 peak of every ISA this CPU has with a register-only\n"
            "loop of independent multiply-add chains (FMA for SIMD ISAs); best of 10 runs.\n"
            "gemm reports its %%peak against the same loops, re-probed next to every case.\n"
            "With AVX-512, 'avx512mix' is the loop of the default 6x64 kernel (per step of k: 4\n"
            "loads of B, 6 broadcasts of A, 24 FMAs) on data in L1: the most that kernel can\n"
            "reach on this core, and what the loads cost against the register-only loop.\n"
            "  --min-time S   seconds spent per ISA (default 0.5)\n"
            "  --csv          comma-separated with a header line\n",
            bench_prog);
}

static int cmd_peak(int argc, char **argv) {
    const char *cmd = argv[0], *val;
    double min_time = 0.5;
    bench_peaks pk;
    int csv = 0, i, r;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_peak(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            csv = 1;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--min-time", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_double(val, 0.01, 60.0, &min_time)) {
                bench_usage_error(cmd, "--min-time wants seconds in [0.01, 60], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else {
            bench_usage_error(cmd, "unknown option '%s'", argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    bench_peaks_measure(&pk, min_time);
    if (csv) {
        printf("isa,loop,lanes,chains,gflops\n");
        for (i = 0; i < pk.count; i++)
            printf("%s,%s,%d,%d,%.2f\n", pk.peak[i].isa, pk.peak[i].what, pk.peak[i].lanes,
                   pk.peak[i].chains, pk.peak[i].gflops);
        return BENCH_EXIT_OK;
    }
    print_cpu(stdout);
    printf("single-thread fp32 peak (register-only loops, best of 10 runs of %.3f s)\n",
           min_time / 10);
    printf("%-10s %-18s %5s %6s %10s\n", "isa", "loop", "lanes", "chains", "GFLOP/s");
    for (i = pk.count - 1; i >= 0; i--)
        printf("%-10s %-18s %5d %6d %10.1f\n", pk.peak[i].isa, pk.peak[i].what, pk.peak[i].lanes,
               pk.peak[i].chains, pk.peak[i].gflops);
    printf("best: %.1f GF/s per thread\n", bench_peak_best(&pk));
    return BENCH_EXIT_OK;
}

/* ================================================================================================
   gemm
   ================================================================================================ */

enum { GROUP_DNN = 1, GROUP_SQUARES = 2, GROUP_CUSTOM = 4 };

typedef struct gemm_shape {
    char name[40];
    int64_t m, n, k;
    int group;
} gemm_shape;

/* im2col GEMMs of common layers: M = output pixels, N = output channels, K = Cin*kh*kw. */
static const struct {
    const char *name;
    int64_t m, n, k;
} gemm_dnn_shapes[] = {
    {"resnet18_conv2", 3136, 64, 576},  {"resnet18_conv3", 784, 128, 1152},
    {"resnet18_conv4", 196, 256, 2304}, {"resnet18_conv5", 49, 512, 4608},
    {"resnet18_conv1", 12544, 64, 147}, {"resnet50_1x1a", 3136, 256, 64},
    {"resnet50_1x1b", 3136, 64, 256},   {"resnet50_1x1c", 196, 1024, 256},
    {"resnet50_1x1d", 49, 2048, 512},   {"bert_qkv", 128, 768, 768},
    {"bert_ffn1", 128, 3072, 768},      {"bert_ffn2", 128, 768, 3072},
    {"fc_512", 1, 1000, 512},           {"fc_4096", 1, 4096, 4096},
};
static const int64_t gemm_square_sizes[] = {64, 128, 256, 512, 1024, 2048};
#define GEMM_N_DNN ((int)(sizeof gemm_dnn_shapes / sizeof gemm_dnn_shapes[0]))
#define GEMM_N_SQUARES ((int)(sizeof gemm_square_sizes / sizeof gemm_square_sizes[0]))

#define GEMM_TOL 1e-3          /* max |diff| / max |reference| a result may show */
/* ... for a kernel of this family: fp16 arithmetic (F16) rounds A and B to 11 bits and keeps
   the sums in fp16 over K blocks of at most LUTHIER__F16_MAX_KC steps: up to 0.6 % of max |C|
   was seen on the DNN shapes (AVX-512 FP16, 2026-11-26) */
/* fp16 weights (F16W) or arithmetic (F16): each product carries B's rounding to fp16 (2^-11
   relative), which against max |C| grows with the cancellation in the sums (2.5e-3 measured on
   cal=1152,1024,256 for every kernel rounding B, the scalar F16W one included) */
static double gemm_tol(const luthier_kernel_info *ki) {
    return ki->family == LUTHIER_KERNELS_F16 || ki->family == LUTHIER_KERNELS_F16W ? 1e-2 : GEMM_TOL;
}
#define GEMM_MAX_DIM 1000000   /* per dimension, for --shape */
#define GEMM_MAX_ELEMS (1ll << 30) /* per matrix (4 GiB of floats), for --shape */

static void usage_gemm(FILE *out) {
    fprintf(out,
            "Usage: %s gemm [options]\n"
            "GFLOP/s of luthier's fp32 GEMM (C = A*B, row-major) per shape and kernel, the %%\n"
            "of the measured FMA peak of the kernel's ISA, and the same GEMM in OpenBLAS\n"
            "(cblas_sgemm) and oneDNN (dnnl_sgemm) when linked. Every result is checked against\n"
            "an exact reference on sampled rows and against the anchors' full output; a kernel\n"
            "that disagrees by more than %.0e (relative to the largest |C|) is reported WRONG,\n"
            "gets no number, and the exit status is 1.\n"
            "\n"
            "Options:\n"
            "  --kernel K        default (the context's kernel; the default), all (every kernel this\n"
            "                    CPU runs), or names from '%s kernels' (full or short,\n"
            "                    comma-separated)\n"
            "  --shapes SET      dnn, squares or all (default: all; none when only --shape is given)\n"
            "                    squares: 64..2048; dnn: ResNet-18/50 im2col, BERT-base, FC layers\n"
            "  --shape [NAME=]M,N,K   a custom shape (repeatable)\n"
            "  --threads N       threads for luthier and the anchors (default 1). luthier: a context\n"
            "                    with num_threads = N (at most one per CPU of its clusters) and the\n"
            "                    default split (RATIO, ratios = capacity x threads per cluster);\n"
            "                    OpenBLAS: openblas_set_num_threads(N); oneDNN (OpenMP build):\n"
            "                    omp_set_num_threads(N)\n"
            "  --scaling         with --threads N > 1: also time luthier on 1 thread (a second\n"
            "                    context, same kernel, in the same rounds) and report the speedup\n"
            "                    N threads / 1 thread per shape and as a geometric mean\n"
            "  --no-prepack      time luthier_sgemm including the packing of B (default: B packed\n"
            "                    once outside the timed loop, luthier_sgemm_packed timed).\n"
            "                    The anchors always take B plain.\n"
            "  --cold-b          cycle through copies of B, about twice the last-level cache in\n"
            "                    all (2 to 64 copies, at most 1 GiB), so that every call reads B\n"
            "                    from memory as a layer's weights do in a network (luthier: packed\n"
            "                    copies; the anchors: plain copies). Default: one B, warm\n"
            "  --reps R          exactly R timed repetitions per case (default: auto)\n"
            "  --min-time S      auto repetitions: run each case >= S seconds (default 0.2)\n"
            "  --rounds N        split each case's repetitions into N rounds that alternate\n"
            "                    luthier and the anchors, so drifting machine load hits all of\n"
            "                    them alike (default 4)\n"
            "  --csv             one row per (shape, kernel) with a header; notes go to stderr\n"
            "  --kc N, --mc N, --nc N   luthier's cache blocking in elements (default 0: derived\n"
            "                    from the cache sizes), e.g. to try a blocking by hand\n"
            "\n"
            "Columns: GF/s = 2*M*N*K / fastest repetition; %%peak = luthier GF/s / (luthier's\n"
            "threads x the 1-thread FMA peak of its ISA: '%s peak'; re-probed around each case,\n"
            "best value of the run); 1T GF/s, x1T (--scaling) = luthier on 1 thread and the\n"
            "speedup N threads / 1 thread;\n"
            "vs OBLAS / vs DNNL = luthier GF/s / anchor GF/s (> 1: luthier faster);\n"
            "GB/s (M = 1 only) = bytes of B (K*N*4) / fastest repetition. Caches are warm\n"
            "(one warm-up call), so a B that fits in L2 is not streamed from DRAM (see --cold-b).\n"
            "The summary gives geometric means over the DNN shapes with M > 1 and over the\n"
            "squares >= 1024.\n"
            "CSV columns added at the end (after status): luthier_threads (threads luthier really\n"
            "ran), luthier_1t_gflops and speedup_vs_1t (empty without --scaling), b_copies (1, or\n"
            "the copies of B cycled with --cold-b).\n"
            "\n"
            "--int8 runs the int8 GEMM instead (against fp32 and oneDNN u8s8s32): see\n"
            "'%s gemm --int8 --help'.\n",
            bench_prog, GEMM_TOL, bench_prog, bench_prog, bench_prog);
}

typedef struct gemm_opts {
    const char *kernel_arg;
    int groups; /* GROUP_* selected by --shapes (0 = not given) */
    gemm_shape *custom;
    int ncustom;
    int threads;
    int lthreads; /* threads of luthier's context (min(threads, CPUs of its clusters)) */
    int scaling;  /* also time luthier on 1 thread */
    int prepack;
    int cold_b; /* --cold-b */
    int csv;
    size_t blocking[3]; /* --kc --mc --nc, 0 = derived from the caches */
    bench_policy policy;
} gemm_opts;

/* "[NAME=]M,N,K" -> shape. Returns 0 on success. */
static int parse_shape(const char *s, gemm_shape *out) {
    const char *eq = strchr(s, '='), *p;
    char buf[64], *tok[3], *save = NULL;
    int i;
    memset(out, 0, sizeof *out);
    p = eq ? eq + 1 : s;
    if (strlen(p) >= sizeof buf) return -1;
    strcpy(buf, p);
    tok[0] = strtok_r(buf, ",", &save);
    tok[1] = strtok_r(NULL, ",", &save);
    tok[2] = strtok_r(NULL, ",", &save);
    if (!tok[0] || !tok[1] || !tok[2] || strtok_r(NULL, ",", &save)) return -1;
    for (i = 0; i < 3; i++) {
        int64_t v;
        if (bench_parse_i64(tok[i], 1, GEMM_MAX_DIM, &v)) return -1;
        if (i == 0) out->m = v;
        else if (i == 1) out->n = v;
        else out->k = v;
    }
    if (out->m * out->k > GEMM_MAX_ELEMS || out->k * out->n > GEMM_MAX_ELEMS ||
        out->m * out->n > GEMM_MAX_ELEMS)
        return -2;
    if (eq) {
        const size_t len = (size_t)(eq - s);
        if (len == 0 || len >= sizeof out->name) return -1;
        memcpy(out->name, s, len);
        out->name[len] = 0;
    } else {
        snprintf(out->name, sizeof out->name, "%lldx%lldx%lld", (long long)out->m,
                 (long long)out->n, (long long)out->k);
    }
    out->group = GROUP_CUSTOM;
    return 0;
}

/* Parses the gemm options. Returns -1 to continue, else an exit code. */
/* The options every timed command shares: --threads N, --reps R, --rounds N, --min-time S.
   Returns 1 when argv[*i] was one of them (consumed), 0 when not, -1 on a bad value; sets
   *rounds_set / *min_time_set (either may be NULL) when those were given. */
static int bench_parse_run_option(int argc, char **argv, int *i, const char *cmd,
                                  bench_policy *policy, int *threads, int *rounds_set,
                                  int *min_time_set) {
    const char *val;
    int64_t v;
    int r;
    if ((r = bench_opt_value(argc, argv, i, cmd, "--threads", &val)) != 0) {
        if (r < 0) return -1;
        if (bench_parse_i64(val, 1, 1024, &v)) {
            bench_usage_error(cmd, "--threads wants an integer in [1, 1024], not '%s'", val);
            return -1;
        }
        *threads = (int)v;
    } else if ((r = bench_opt_value(argc, argv, i, cmd, "--reps", &val)) != 0) {
        if (r < 0) return -1;
        if (bench_parse_i64(val, 1, 1000000, &v)) {
            bench_usage_error(cmd, "--reps wants an integer in [1, 1000000], not '%s'", val);
            return -1;
        }
        policy->reps = (long)v;
    } else if ((r = bench_opt_value(argc, argv, i, cmd, "--rounds", &val)) != 0) {
        if (r < 0) return -1;
        if (bench_parse_i64(val, 1, 100, &v)) {
            bench_usage_error(cmd, "--rounds wants an integer in [1, 100], not '%s'", val);
            return -1;
        }
        policy->rounds = (int)v;
        if (rounds_set) *rounds_set = 1;
    } else if ((r = bench_opt_value(argc, argv, i, cmd, "--min-time", &val)) != 0) {
        if (r < 0) return -1;
        if (bench_parse_double(val, 0.0, 3600.0, &policy->min_time)) {
            bench_usage_error(cmd, "--min-time wants seconds in [0, 3600], not '%s'", val);
            return -1;
        }
        if (min_time_set) *min_time_set = 1;
    } else {
        return 0;
    }
    return 1;
}

static int gemm_parse(int argc, char **argv, gemm_opts *o) {
    const char *cmd = argv[0], *val;
    int i, r;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (bench_is_help(arg)) {
            usage_gemm(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--kernel", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (!*val) {
                bench_usage_error(cmd, "--kernel needs a name, 'all' or 'default'");
                return BENCH_EXIT_USAGE;
            }
            o->kernel_arg = val;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--shapes", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (strcmp(val, "dnn") == 0) o->groups |= GROUP_DNN;
            else if (strcmp(val, "squares") == 0) o->groups |= GROUP_SQUARES;
            else if (strcmp(val, "all") == 0) o->groups |= GROUP_DNN | GROUP_SQUARES;
            else {
                bench_usage_error(cmd, "--shapes wants dnn, squares or all, not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--shape", &val)) != 0) {
            gemm_shape sh, *ns;
            if (r < 0) return BENCH_EXIT_USAGE;
            if ((r = parse_shape(val, &sh)) != 0) {
                if (r == -2)
                    bench_usage_error(cmd, "--shape %s: a matrix would exceed 2^30 elements", val);
                else
                    bench_usage_error(cmd, "--shape wants [NAME=]M,N,K with 1 <= M,N,K <= %d, "
                                           "not '%s'", GEMM_MAX_DIM, val);
                return BENCH_EXIT_USAGE;
            }
            ns = (gemm_shape *)realloc(o->custom, (size_t)(o->ncustom + 1) * sizeof *ns);
            if (!ns) {
                fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
                return BENCH_EXIT_FAIL;
            }
            o->custom = ns;
            o->custom[o->ncustom++] = sh;
        } else if ((r = bench_parse_run_option(argc, argv, &i, cmd, &o->policy, &o->threads,
                                               NULL, NULL)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
        } else if ((r = bench_opt_flag(arg, cmd, "--scaling")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->scaling = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--no-prepack")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->prepack = 0;
        } else if ((r = bench_opt_flag(arg, cmd, "--cold-b")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->cold_b = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->csv = 1;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--kc", &val)) != 0 ||
                   (r = bench_opt_value(argc, argv, &i, cmd, "--mc", &val)) != 0 ||
                   (r = bench_opt_value(argc, argv, &i, cmd, "--nc", &val)) != 0) {
            const int which = strncmp(arg, "--kc", 4) == 0 ? 0 : strncmp(arg, "--mc", 4) == 0 ? 1 : 2;
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 0, 1 << 24, &v)) {
                bench_usage_error(cmd, "%.4s wants an integer in [0, 2^24], not '%s'", arg, val);
                return BENCH_EXIT_USAGE;
            }
            o->blocking[which] = (size_t)v;
        } else {
            bench_usage_error(cmd, "%s '%s'", arg[0] == '-' ? "unknown option" : "unexpected argument", arg);
            return BENCH_EXIT_USAGE;
        }
    }
    if (o->scaling && o->threads < 2) {
        bench_usage_error(cmd, "--scaling compares luthier on N threads with 1 thread: give "
                               "--threads N with N >= 2");
        return BENCH_EXIT_USAGE;
    }
    return -1;
}

/* The kernels luthier_sgemm runs, by one index: the F32 table, then F16W (fp16 weights), then
   F16 (fp16 arithmetic). */
static const luthier_kernel_family gemm_families[3] = {LUTHIER_KERNELS_F32, LUTHIER_KERNELS_F16W, LUTHIER_KERNELS_F16};

static int gemm_kernel_total(void) {
    int f, n = 0;
    for (f = 0; f < 3; f++) n += luthier_kernels_count(gemm_families[f]);
    return n;
}

static luthier_status gemm_kernel_get(int code, luthier_kernel_info *ki) {
    int f;
    for (f = 0; f < 3; f++) {
        if (code < luthier_kernels_count(gemm_families[f])) return luthier_kernels_get(gemm_families[f], code, ki);
        code -= luthier_kernels_count(gemm_families[f]);
    }
    return LUTHIER_STATUS_INVALID_ARGUMENT;
}

static luthier_status gemm_kernel_find(const char *name, int *code) {
    int f, base = 0, i;
    for (f = 0; f < 3; f++) {
        if (luthier_kernels_find(gemm_families[f], name, &i) == LUTHIER_STATUS_OK) {
            *code = base + i;
            return LUTHIER_STATUS_OK;
        }
        base += luthier_kernels_count(gemm_families[f]);
    }
    return LUTHIER_STATUS_NOT_FOUND;
}

/* Resolves --kernel into gemm_kernel_get indices (*out, malloc'ed): "all" is every fp32 and
   fp16-weight kernel this CPU runs and the fp16-arithmetic ones but their scalar emulation.
   Returns -1 or an exit code. */
static int gemm_resolve_kernels(const char *cmd, const char *arg, luthier_context *ctx, int **out,
                                int *count) {
    const int total = gemm_kernel_total();
    int *idx = (int *)malloc((size_t)(total > 0 ? total : 1) * sizeof *idx);
    int n = 0, i;
    *out = NULL;
    *count = 0;
    if (!idx) return BENCH_EXIT_FAIL;
    if (!arg || strcmp(arg, "default") == 0) {
        if (luthier_kernel_find(luthier_context_kernel(ctx), &idx[0]) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s %s: error: the context's kernel is not in the registry\n",
                    bench_prog, cmd);
            free(idx);
            return BENCH_EXIT_FAIL;
        }
        n = 1;
    } else if (strcmp(arg, "all") == 0) {
        for (i = 0; i < total; i++) {
            luthier_kernel_info ki;
            if (gemm_kernel_get(i, &ki) != LUTHIER_STATUS_OK) continue;
            if (ki.family == LUTHIER_KERNELS_F16 && !strcmp(ki.isa, "scalar")) continue;
            if (ki.available) idx[n++] = i;
            else fprintf(stderr, "note: skipping %s (needs CPU features this CPU lacks)\n", ki.name);
        }
    } else {
        char buf[512], *tok, *save = NULL;
        if (strlen(arg) >= sizeof buf) {
            bench_usage_error(cmd, "--kernel list too long");
            free(idx);
            return BENCH_EXIT_USAGE;
        }
        strcpy(buf, arg);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            luthier_kernel_info ki;
            int k, j, dup = 0;
            if (gemm_kernel_find(tok, &k) != LUTHIER_STATUS_OK || gemm_kernel_get(k, &ki) != LUTHIER_STATUS_OK) {
                bench_usage_error(cmd, "no kernel named '%s' (see '%s kernels')", tok, bench_prog);
                free(idx);
                return BENCH_EXIT_USAGE;
            }
            if (!ki.available) {
                bench_usage_error(cmd, "kernel %s needs CPU features this CPU lacks (isa %s)",
                                  ki.name, ki.isa);
                free(idx);
                return BENCH_EXIT_USAGE;
            }
            for (j = 0; j < n; j++) dup |= idx[j] == k;
            if (!dup && n < total) idx[n++] = k;
        }
    }
    if (n == 0) {
        bench_usage_error(cmd, "--kernel '%s' names no kernel this CPU can run", arg ? arg : "");
        free(idx);
        return BENCH_EXIT_USAGE;
    }
    *out = idx;
    *count = n;
    return -1;
}

/* One timed thing: luthier (anchor < 0) or an anchor, on fixed buffers. */
typedef struct gemm_call {
    int anchor;
    luthier_context *ctx;
    luthier_sgemm_desc desc;
    const float *a, *b;
    const luthier_packed_b *pb; /* NULL: luthier_sgemm (packs B inside) */
    float *c;
    luthier_status status;
    /* --cold-b: each call takes the next of ncopies equal copies of B (plain, or packed) */
    int ncopies, next;
    float **bs;
    luthier_packed_b **pbs;
} gemm_call;

static int gemm_call_run(void *arg) {
    gemm_call *g = (gemm_call *)arg;
    if (g->ncopies > 1) {
        g->next = (g->next + 1) % g->ncopies;
        if (g->pbs) g->pb = g->pbs[g->next];
        else g->b = g->bs[g->next];
    }
    if (g->anchor >= 0)
        return bench_anchor_sgemm(g->anchor, g->desc.m, g->desc.n, g->desc.k, g->a, g->b, g->c);
    g->status = g->pb ? luthier_sgemm_packed(g->ctx, &g->desc, g->a, g->pb, g->c)
                      : luthier_sgemm(g->ctx, &g->desc, g->a, g->b, g->c);
    return g->status == LUTHIER_STATUS_OK ? 0 : -1;
}

/* Exact (double) reference on a subset of rows of C. */
typedef struct gemm_ref {
    int64_t *rows;
    int64_t nrows;
    double *c;      /* nrows x n */
    double maxabs;  /* max |reference| */
} gemm_ref;

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Rows: all when all_rows, else the first 4, the last 16 (every edge tile of MR <= 16) and 12
   pseudo-random ones. Returns 0 or -1 (out of memory). */
static int gemm_ref_build(gemm_ref *r, const gemm_shape *s, const float *a, const float *b,
                          int all_rows) {
    const int64_t m = s->m, n = s->n, k = s->k;
    int64_t i, j, kk, cnt = 0;
    uint64_t seed = 12345;
    memset(r, 0, sizeof *r);
    if (all_rows || m <= 32) {
        r->rows = (int64_t *)malloc((size_t)m * sizeof *r->rows);
        if (!r->rows) return -1;
        for (i = 0; i < m; i++) r->rows[cnt++] = i;
    } else {
        r->rows = (int64_t *)malloc(32 * sizeof *r->rows);
        if (!r->rows) return -1;
        for (i = 0; i < 4; i++) r->rows[cnt++] = i;
        for (i = m - 16; i < m; i++) r->rows[cnt++] = i;
        for (i = 0; i < 12; i++) r->rows[cnt++] = (int64_t)(bench_rand_u64(&seed) % (uint64_t)m);
        qsort(r->rows, (size_t)cnt, sizeof *r->rows, cmp_i64);
        for (i = j = 0; i < cnt; i++)
            if (j == 0 || r->rows[i] != r->rows[j - 1]) r->rows[j++] = r->rows[i];
        cnt = j;
    }
    r->nrows = cnt;
    r->c = (double *)calloc((size_t)cnt * (size_t)n, sizeof *r->c);
    if (!r->c) {
        free(r->rows);
        r->rows = NULL;
        return -1;
    }
    for (i = 0; i < cnt; i++) {
        double *cr = r->c + i * n;
        const float *ar = a + r->rows[i] * k;
        for (kk = 0; kk < k; kk++) {
            const double av = ar[kk];
            const float *br = b + kk * n;
            for (j = 0; j < n; j++) cr[j] += av * (double)br[j];
        }
        for (j = 0; j < n; j++)
            if (fabs(cr[j]) > r->maxabs) r->maxabs = fabs(cr[j]);
    }
    return 0;
}

static void gemm_ref_free(gemm_ref *r) {
    free(r->rows);
    free(r->c);
}

/* max |c - ref| / max |ref| on the reference rows; +inf on NaN/inf in c. */
static double gemm_err_ref(const gemm_ref *r, const float *c, int64_t n) {
    const double denom = r->maxabs > 1e-30 ? r->maxabs : 1e-30;
    double worst = 0.0;
    int64_t i, j;
    for (i = 0; i < r->nrows; i++) {
        const float *cr = c + r->rows[i] * n;
        const double *rr = r->c + i * n;
        for (j = 0; j < n; j++) {
            const double d = fabs((double)cr[j] - rr[j]);
            if (!(d <= worst)) worst = d; /* NaN propagates */
        }
    }
    return worst == worst ? worst / denom : INFINITY;
}

/* max |x - y| / max |y| over whole matrices; +inf on NaN. */
static double gemm_err_full(const float *x, const float *y, size_t count) {
    double worst = 0.0, ymax = 0.0;
    size_t i;
    for (i = 0; i < count; i++) {
        const double d = fabs((double)x[i] - (double)y[i]);
        if (!(d <= worst)) worst = d;
        if (fabs((double)y[i]) > ymax) ymax = fabs((double)y[i]);
    }
    if (worst != worst) return INFINITY;
    return worst / (ymax > 1e-30 ? ymax : 1e-30);
}

/* Per-kernel geometric means: [group][metric]. */
enum { GM_LUTHIER, GM_OPENBLAS, GM_DNNL, GM_RATIO_OPENBLAS, GM_RATIO_DNNL, GM_PEAK, GM_ONE,
       GM_SPEEDUP, GM_COUNT };
enum { GMG_DNN, GMG_SQUARES, GMG_COUNT };
typedef struct gemm_summary {
    bench_geomean g[GMG_COUNT][GM_COUNT];
} gemm_summary;

/* A number or "-" in a column. */
static const char *cell(char *buf, size_t cap, double v, int decimals, int valid) {
    if (!valid) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.*f", decimals, v);
    return buf;
}

/* Decimals that keep ~3 significant digits of a time in ms. */
static int ms_decimals(double seconds) {
    const double ms = seconds * 1e3;
    return ms < 0.01 ? 5 : ms < 0.1 ? 4 : ms < 10.0 ? 3 : ms < 100.0 ? 2 : 1;
}

/* A number or nothing (CSV). */
static const char *csv_cell(char *buf, size_t cap, double v, int decimals, int valid) {
    if (!valid) buf[0] = 0;
    else snprintf(buf, cap, "%.*f", decimals, v);
    return buf;
}

static void gemm_print_summary(FILE *out, const gemm_summary *sum, const int *kernels, int nk,
                               int threads, int scaling) {
    static const char *const titles[GMG_COUNT] = {"DNN shapes with M > 1", "squares >= 1024"};
    int g, i, any = 0;
    for (g = 0; g < GMG_COUNT; g++) {
        for (i = 0; i < nk; i++) any |= sum[i].g[g][GM_LUTHIER].count > 0;
    }
    if (!any) return;
    fprintf(out, "\ngeometric means (luthier and anchors on %d thread%s%s)\n", threads,
            threads > 1 ? "s" : "", scaling ? "; 1T = luthier on 1 thread, x1T = speedup" : "");
    for (g = 0; g < GMG_COUNT; g++) {
        int shown = 0;
        for (i = 0; i < nk; i++) {
            const bench_geomean *m = sum[i].g[g];
            luthier_kernel_info ki;
            char b[6][32];
            if (m[GM_LUTHIER].count == 0) continue;
            if (!shown) {
                fprintf(out, "%-22s %-22s %7s %6s %8s %8s %8s %8s", titles[g], "kernel",
                        "GF/s", "%peak", "OpenBLAS", "oneDNN", "vs OBLAS", "vs DNNL");
                if (scaling) fprintf(out, " %8s %6s", "1T GF/s", "x1T");
                fprintf(out, "\n");
                shown = 1;
            }
            gemm_kernel_get(kernels[i], &ki);
            fprintf(out, "%-22s %-22s %7s %6s %8s %8s %8s %8s", "",
                    short_kernel_name(ki.name),
                    cell(b[0], 32, bench_geomean_get(&m[GM_LUTHIER]), 1, 1),
                    cell(b[1], 32, bench_geomean_get(&m[GM_PEAK]), 1, m[GM_PEAK].count > 0),
                    cell(b[2], 32, bench_geomean_get(&m[GM_OPENBLAS]), 1, m[GM_OPENBLAS].count > 0),
                    cell(b[3], 32, bench_geomean_get(&m[GM_DNNL]), 1, m[GM_DNNL].count > 0),
                    cell(b[4], 32, bench_geomean_get(&m[GM_RATIO_OPENBLAS]), 2,
                         m[GM_RATIO_OPENBLAS].count > 0),
                    cell(b[5], 32, bench_geomean_get(&m[GM_RATIO_DNNL]), 2,
                         m[GM_RATIO_DNNL].count > 0));
            if (scaling)
                fprintf(out, " %8s %6s", cell(b[0], 32, bench_geomean_get(&m[GM_ONE]), 1,
                                              m[GM_ONE].count > 0),
                        cell(b[1], 32, bench_geomean_get(&m[GM_SPEEDUP]), 2, m[GM_SPEEDUP].count > 0));
            fprintf(out, "   (%d shapes)\n", m[GM_LUTHIER].count);
        }
    }
}

/* One contestant of a shape: a luthier kernel or an anchor. */
typedef struct gemm_contestant {
    gemm_call call;
    int kernel;             /* index into the selected kernels (luthier), -1 for an anchor */
    int threads;            /* luthier: threads of its context (--scaling adds 1-thread twins) */
    luthier_kernel_info ki; /* luthier only */
    luthier_packed_b *pb;   /* luthier with pre-packing */
    float *own_c;           /* anchors: their own output, kept for the full comparison */
    int active;             /* checked and still being timed */
    const char *status;     /* "ok", "WRONG", "ERROR" */
    double err;             /* max relative error seen */
    bench_sampler smp;
    bench_stats st;
    double peak;            /* luthier: FMA peak of its ISA used for %peak */
} gemm_contestant;

static void gemm_table_header(int scaling) {
    printf("%-16s %6s %5s %5s  %-22s %7s %6s %8s %8s %8s %8s %9s %9s %6s", "name", "M", "N",
           "K", "kernel", "GF/s", "%peak", "OpenBLAS", "oneDNN", "vs OBLAS", "vs DNNL",
           "ms(min)", "ms(med)", "GB/s");
    if (scaling) printf(" %8s %6s", "1T GF/s", "x1T");
    printf("\n");
}

/* GF/s of a contestant, 0 if it has no valid time. */
static double gemm_gflops(const gemm_contestant *c, double flops) {
    return c && c->status && strcmp(c->status, "ok") == 0 && c->st.reps > 0 && c->st.min > 0.0
               ? flops / c->st.min * 1e-9
               : 0.0;
}

static void gemm_print_row(const gemm_opts *o, const gemm_shape *s, const gemm_contestant *k,
                           const gemm_contestant *const an[BENCH_NUM_ANCHORS],
                           const gemm_contestant *one) {
    const double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    const double gf = gemm_gflops(k, flops);
    const double ob = gemm_gflops(an[BENCH_ANCHOR_OPENBLAS], flops);
    const double dn = gemm_gflops(an[BENCH_ANCHOR_DNNL], flops);
    const double pct = gf > 0.0 && k->peak > 0.0 ? 100.0 * gf / k->peak : 0.0;
    const double gbps = gf > 0.0 && s->m == 1 ? (double)(s->k * s->n) * sizeof(float) / k->st.min * 1e-9 : 0.0;
    const double g1 = gemm_gflops(one, flops);
    const int ok = gf > 0.0;
    char b[12][40], b1[2][40];
    csv_cell(b1[0], 40, g1, 2, g1 > 0.0);
    csv_cell(b1[1], 40, g1 > 0.0 ? gf / g1 : 0.0, 3, ok && g1 > 0.0);
    if (o->csv) {
        printf("%s,%lld,%lld,%lld,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%ld,%s,%s,%s,%.3g,%s,%d,%s,%s,%d\n",
               s->name,
               (long long)s->m, (long long)s->n, (long long)s->k, o->threads, k->ki.name,
               csv_cell(b[0], 40, gf, 2, ok), csv_cell(b[1], 40, ob, 2, ob > 0.0),
               csv_cell(b[2], 40, dn, 2, dn > 0.0), csv_cell(b[3], 40, pct, 1, pct > 0.0),
               csv_cell(b[4], 40, k->st.min * 1e3, 4, ok),
               csv_cell(b[5], 40, k->st.median * 1e3, 4, ok), csv_cell(b[6], 40, gbps, 2, gbps > 0.0),
               k->ki.isa, o->prepack, k->st.reps,
               csv_cell(b[7], 40, ob > 0.0 ? an[BENCH_ANCHOR_OPENBLAS]->st.min * 1e3 : 0.0, 4, ob > 0.0),
               csv_cell(b[8], 40, dn > 0.0 ? an[BENCH_ANCHOR_DNNL]->st.min * 1e3 : 0.0, 4, dn > 0.0),
               csv_cell(b[9], 40, k->peak, 1, ok && k->peak > 0.0), k->err, k->status, k->threads,
               b1[0], b1[1], k->call.ncopies);
    } else {
        printf("%-16s %6lld %5lld %5lld  %-22s %7s %6s %8s %8s %8s %8s %9s %9s %6s", s->name,
               (long long)s->m, (long long)s->n, (long long)s->k, short_kernel_name(k->ki.name),
               ok ? cell(b[0], 40, gf, 1, 1) : k->status, cell(b[1], 40, pct, 1, pct > 0.0),
               cell(b[2], 40, ob, 1, ob > 0.0), cell(b[3], 40, dn, 1, dn > 0.0),
               cell(b[4], 40, ob > 0.0 ? gf / ob : 0.0, 2, ok && ob > 0.0),
               cell(b[5], 40, dn > 0.0 ? gf / dn : 0.0, 2, ok && dn > 0.0),
               cell(b[6], 40, k->st.min * 1e3, ms_decimals(k->st.min), ok),
               cell(b[7], 40, k->st.median * 1e3, ms_decimals(k->st.median), ok),
               cell(b[8], 40, gbps, 1, gbps > 0.0));
        if (o->scaling)
            printf(" %8s %6s", cell(b1[0], 40, g1, 1, g1 > 0.0),
                   cell(b1[1], 40, g1 > 0.0 ? gf / g1 : 0.0, 2, ok && g1 > 0.0));
        printf("\n");
    }
    fflush(stdout);
}

/* Adds a kernel's result on shape s to the geometric means. */
static void gemm_summary_add(gemm_summary *sum, const gemm_shape *s, const gemm_contestant *k,
                             const gemm_contestant *const an[BENCH_NUM_ANCHORS],
                             const gemm_contestant *one) {
    const double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    const double gf = gemm_gflops(k, flops);
    const double ob = gemm_gflops(an[BENCH_ANCHOR_OPENBLAS], flops);
    const double dn = gemm_gflops(an[BENCH_ANCHOR_DNNL], flops);
    const int g = s->group == GROUP_DNN && s->m > 1 ? GMG_DNN
                  : s->group == GROUP_SQUARES && s->m >= 1024 ? GMG_SQUARES : -1;
    bench_geomean *m;
    if (g < 0 || gf <= 0.0) return;
    m = sum->g[g];
    bench_geomean_add(&m[GM_LUTHIER], gf);
    if (k->peak > 0.0) bench_geomean_add(&m[GM_PEAK], 100.0 * gf / k->peak);
    if (ob > 0.0) {
        bench_geomean_add(&m[GM_OPENBLAS], ob);
        bench_geomean_add(&m[GM_RATIO_OPENBLAS], gf / ob);
    }
    if (dn > 0.0) {
        bench_geomean_add(&m[GM_DNNL], dn);
        bench_geomean_add(&m[GM_RATIO_DNNL], gf / dn);
    }
    if (one && gemm_gflops(one, flops) > 0.0) {
        bench_geomean_add(&m[GM_ONE], gemm_gflops(one, flops));
        bench_geomean_add(&m[GM_SPEEDUP], gf / gemm_gflops(one, flops));
    }
}

/* The buffers and contestants of one shape (gemm_run_shape). */
typedef struct gemm_case {
    const gemm_opts *o;
    const gemm_shape *s;
    size_t mk, kn, mn;
    float *a, *b, *c;
    float **bs;          /* --cold-b: the plain copies of B (bs[0] = b) */
    int ncopies;
    gemm_ref ref;
    int have_ref;
    gemm_contestant *ct; /* the anchors, the kernels, then (--scaling) their 1-thread twins */
    int ncont, nk, twins;
    const char *isas[BENCH_MAX_PEAKS]; /* the ISAs of the checked kernels: their peaks */
    int nisa;
} gemm_case;

/* --cold-b: copies of B, about twice the last-level cache in all (2 to 64 copies, at most
   1 GiB). Returns 0, or 1 when out of memory (said on stderr). */
static int gemm_cold_copies(gemm_case *g) {
    const luthier_cache_info ci = luthier_cache_sizes();
    const size_t bytes = g->kn * sizeof(float), llc = ci.l3 ? ci.l3 : ci.l2;
    size_t want = (2 * llc + bytes - 1) / bytes;
    want = want < 2 ? 2 : want > 64 ? 64 : want;
    if (want * bytes > ((size_t)1 << 30)) want = ((size_t)1 << 30) / bytes < 2 ? 2 : ((size_t)1 << 30) / bytes;
    if (!(g->bs = (float **)calloc(want, sizeof *g->bs))) {
        fprintf(stderr, "ERROR: %s: cannot allocate the copies of B\n", g->s->name);
        return 1;
    }
    g->bs[0] = g->b;
    for (g->ncopies = 1; g->ncopies < (int)want; g->ncopies++) {
        if (!(g->bs[g->ncopies] = bench_alloc_floats(g->kn))) {
            fprintf(stderr, "ERROR: %s: cannot allocate copy %d of B\n", g->s->name, g->ncopies);
            return 1;
        }
        memcpy(g->bs[g->ncopies], g->b, bytes);
    }
    return 0;
}

/* The matrices (A and B filled from the shape's index), the copies of B and the exact
   reference. Returns 0, or 1 when out of memory (said on stderr). */
static int gemm_case_alloc(gemm_case *g, int shape_index) {
    const gemm_shape *s = g->s;
    const double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    int i, any_anchor = 0;
    g->a = bench_alloc_floats(g->mk);
    g->b = bench_alloc_floats(g->kn);
    g->c = bench_alloc_floats(g->mn);
    g->ct = (gemm_contestant *)calloc((size_t)g->ncont, sizeof *g->ct);
    if (!g->a || !g->b || !g->c || !g->ct) {
        fprintf(stderr, "ERROR: %s: cannot allocate the matrices\n", s->name);
        return 1;
    }
    bench_fill_uniform(g->a, g->mk, 0x1000u + (uint64_t)shape_index);
    bench_fill_uniform(g->b, g->kn, 0x2000u + (uint64_t)shape_index);
    if (g->o->cold_b && gemm_cold_copies(g) != 0) return 1;
    for (i = 0; i < BENCH_NUM_ANCHORS; i++) any_anchor |= bench_anchor_linked(i);
    /* With no anchor to compare the whole of C against, check every row when affordable. */
    if (gemm_ref_build(&g->ref, s, g->a, g->b, !any_anchor && flops <= 5e8 && g->mn <= ((size_t)1 << 23))) {
        fprintf(stderr, "ERROR: %s: cannot allocate the reference\n", s->name);
        return 1;
    }
    g->have_ref = 1;
    return 0;
}

/* Contestants 0..BENCH_NUM_ANCHORS-1 are the anchors, then the kernels, then their twins on
   the 1-thread context ctx1 (--scaling). */
static void gemm_case_contestants(gemm_case *g, luthier_context *ctx, luthier_context *ctx1,
                                  const int *kernels) {
    const gemm_shape *s = g->s;
    const int nk = g->nk;
    int i;
    for (i = 0; i < g->ncont; i++) {
        gemm_contestant *x = &g->ct[i];
        x->call.anchor = i < BENCH_NUM_ANCHORS ? i : -1;
        x->kernel = i < BENCH_NUM_ANCHORS ? -1 : (i - BENCH_NUM_ANCHORS) % nk;
        x->threads = i < BENCH_NUM_ANCHORS + nk ? g->o->lthreads : 1;
        x->call.ctx = x->threads == 1 && ctx1 ? ctx1 : ctx;
        x->call.desc.m = s->m;
        x->call.desc.n = s->n;
        x->call.desc.k = s->k;
        x->call.a = g->a;
        x->call.b = g->b;
        x->call.c = g->c;
        x->call.ncopies = g->ncopies;
        x->call.bs = g->bs;
        x->status = "ok";
        if (x->kernel >= 0) {
            gemm_kernel_get(kernels[x->kernel], &x->ki);
            x->call.desc.kernel = x->ki.name;
        }
    }
}

/* --cold-b with B pre-packed: the packed copies of B for kernel contestant x (pbs[0] is x->pb).
   Returns 0, or -1 after marking x ERROR. */
static int gemm_pack_copies(gemm_case *g, gemm_contestant *x) {
    luthier_status ps = LUTHIER_STATUS_OK;
    int j;
    if (!(x->call.pbs = (luthier_packed_b **)calloc((size_t)g->ncopies, sizeof *x->call.pbs))) {
        fprintf(stderr, "ERROR: %s: cannot allocate the packed copies of B\n", g->s->name);
        x->status = "ERROR";
        return -1;
    }
    x->call.pbs[0] = x->pb;
    for (j = 1; j < g->ncopies && ps == LUTHIER_STATUS_OK; j++)
        ps = luthier_sgemm_pack_b(x->call.ctx, &x->call.desc, g->b, &x->call.pbs[j]);
    if (ps != LUTHIER_STATUS_OK) {
        fprintf(stderr, "ERROR: %s: packing copy %d of B: %s\n", g->s->name, j - 1,
                luthier_context_error(x->call.ctx));
        x->status = "ERROR";
        return -1;
    }
    return 0;
}

/* 1. Correctness of contestant i: one call into a NaN-filled C. The anchors must match the
   exact reference rows; luthier must match those and the anchors' whole output. Sets active
   when the contestant is to be timed. */
static void gemm_check(gemm_case *g, int i) {
    const gemm_shape *s = g->s;
    gemm_contestant *x = &g->ct[i];
    const char *what = x->kernel >= 0 ? x->ki.name : bench_anchor_names[i];
    double t0;
    int j, rc;
    if (x->kernel < 0) {
        if (!bench_anchor_linked(i)) return;
        if (!(x->own_c = bench_alloc_floats(g->mn))) {
            fprintf(stderr, "warning: %s: no memory for the %s output\n", s->name, what);
            return;
        }
        x->call.c = x->own_c;
    } else if (g->o->prepack) {
        luthier_status ps = luthier_sgemm_pack_b(x->call.ctx, &x->call.desc, g->b, &x->pb);
        if (ps != LUTHIER_STATUS_OK) {
            fprintf(stderr, "ERROR: %s: luthier_sgemm_pack_b(%s): %s: %s\n", s->name, what,
                    luthier_status_string(ps), luthier_context_error(x->call.ctx));
            x->status = "ERROR";
            return;
        }
        x->call.pb = x->pb;
    }
    bench_fill_value(x->call.c, g->mn, NAN);
    t0 = bench_now();
    rc = gemm_call_run(&x->call);
    x->smp.last = bench_now() - t0;
    settle_after_anchor(x->call.anchor, g->o->threads);
    settle_after_luthier(x->call.anchor, x->threads);
    if (rc != 0) {
        if (x->kernel < 0) {
            fprintf(stderr, "warning: %s: %s failed; its columns stay empty\n", s->name, what);
        } else {
            fprintf(stderr, "ERROR: %s: luthier with %s: %s: %s\n", s->name, what,
                    luthier_status_string(x->call.status), luthier_context_error(x->call.ctx));
            x->status = "ERROR";
        }
        return;
    }
    x->err = gemm_err_ref(&g->ref, x->call.c, s->n);
    if (x->kernel < 0) {
        if (!(x->err <= GEMM_TOL)) {
            fprintf(stderr, "WARNING: %s: %s disagrees with the exact reference (max relative "
                            "error %.3g); its columns stay empty\n", s->name, what, x->err);
            return;
        }
    } else {
        for (j = 0; j < BENCH_NUM_ANCHORS; j++)
            if (g->ct[j].active) {
                const double e = gemm_err_full(x->call.c, g->ct[j].own_c, g->mn);
                if (!(e <= x->err)) x->err = e;
            }
        if (!(x->err <= gemm_tol(&x->ki))) {
            fprintf(stderr, "ERROR: %s (%lldx%lldx%lld): kernel %s is WRONG: max relative "
                            "error %.3g > %.0e; no time reported\n", s->name, (long long)s->m,
                    (long long)s->n, (long long)s->k, what, x->err, gemm_tol(&x->ki));
            x->status = "WRONG";
            return;
        }
        for (j = 0; j < g->nisa && strcmp(g->isas[j], x->ki.isa) != 0; j++) continue;
        if (j == g->nisa && g->nisa < BENCH_MAX_PEAKS) g->isas[g->nisa++] = x->ki.isa;
        if (g->ncopies > 1 && x->pb && gemm_pack_copies(g, x) != 0) return; /* --cold-b */
    }
    x->active = 1;
}

/* 2. Timing, in rounds; the order alternates so no one always follows the same neighbour.
   The FMA peaks of the ISAs in use are re-probed every round and at the end. */
static void gemm_time_rounds(gemm_case *g, bench_peaks *peaks) {
    const gemm_opts *o = g->o;
    const gemm_shape *s = g->s;
    int i, j, r, rc;
    for (r = 0; r < o->policy.rounds; r++) {
        for (j = 0; j < g->nisa; j++) bench_peak_probe(peaks, g->isas[j], 2);
        for (i = 0; i < g->ncont; i++) {
            gemm_contestant *x = &g->ct[(r % 2) ? g->ncont - 1 - i : i];
            if (!x->active) continue;
            rc = bench_run_round(gemm_call_run, &x->call, &o->policy, r, &x->smp);
            settle_after_anchor(x->call.anchor, o->threads);
            settle_after_luthier(x->call.anchor, x->threads);
            if (rc != 0) {
                const char *what = x->kernel >= 0 ? x->ki.name : bench_anchor_names[x - g->ct];
                fprintf(stderr, "%s: %s: %s failed while timing: %s\n",
                        x->kernel >= 0 ? "ERROR" : "warning", s->name, what,
                        rc == -100 ? "out of memory"
                        : x->kernel >= 0 ? luthier_context_error(x->call.ctx) : "");
                x->active = 0;
                x->status = "ERROR";
                continue;
            }
            /* Still right after repeated calls (no stale workspace or packing state)? */
            if (x->kernel >= 0) {
                const double e = gemm_err_ref(&g->ref, x->call.c, s->n);
                if (!(e <= gemm_tol(&x->ki))) {
                    fprintf(stderr, "ERROR: %s: kernel %s is WRONG after repeated calls (max "
                                    "relative error %.3g)\n", s->name, x->ki.name, e);
                    x->active = 0;
                    x->status = "WRONG";
                    x->err = e;
                }
            }
        }
    }
    for (j = 0; j < g->nisa; j++) bench_peak_probe(peaks, g->isas[j], 2);
}

/* 3. Results: statistics and %peak, a row per kernel (with its 1-thread twin's numbers) and
   the geometric means. Returns 1 when a luthier contestant is not "ok", else 0. */
static int gemm_case_results(gemm_case *g, bench_peaks *peaks, gemm_summary *sum) {
    const gemm_contestant *an[BENCH_NUM_ANCHORS];
    gemm_contestant *ct = g->ct;
    const int nk = g->nk;
    int i, failed = 0;
    for (i = 0; i < g->ncont; i++) {
        gemm_contestant *x = &ct[i];
        if (x->active) x->st = bench_summarize(x->smp.t, x->smp.n);
        else if (x->kernel < 0) x->status = "off";
        if (x->kernel >= 0) x->peak = bench_peak_probe(peaks, x->ki.isa, 0) * x->threads;
    }
    for (i = 0; i < BENCH_NUM_ANCHORS; i++) an[i] = &ct[i];
    for (i = BENCH_NUM_ANCHORS; i < g->ncont; i++) {
        const gemm_contestant *one = g->twins ? &ct[i + nk] : NULL;
        if (strcmp(ct[i].status, "ok") != 0) failed = 1;
        if (i >= BENCH_NUM_ANCHORS + nk) continue; /* 1T twins: shown in their kernel's row */
        gemm_print_row(g->o, g->s, &ct[i], an, one);
        gemm_summary_add(&sum[ct[i].kernel], g->s, &ct[i], an, one);
    }
    return failed;
}

/* Frees what gemm_case_alloc and the checks allocated. */
static void gemm_case_free(gemm_case *g) {
    int i, j;
    if (g->ct)
        for (i = 0; i < g->ncont; i++) {
            if (g->ct[i].call.pbs)
                for (j = 1; j < g->ncopies; j++) luthier_packed_b_destroy(g->ct[i].call.pbs[j]);
            free(g->ct[i].call.pbs);
            luthier_packed_b_destroy(g->ct[i].pb);
            free(g->ct[i].own_c);
            bench_sampler_free(&g->ct[i].smp);
        }
    free(g->ct);
    if (g->have_ref) gemm_ref_free(&g->ref);
    if (g->bs)
        for (j = 1; j < g->ncopies; j++) free(g->bs[j]);
    free(g->bs);
    free(g->a);
    free(g->b);
    free(g->c);
}

/* Checks and times every kernel and anchor on one shape, prints its rows. Returns 0 when every
   luthier kernel was right, 1 otherwise (or on an allocation failure). */
static int gemm_run_shape(const gemm_opts *o, const gemm_shape *s, int shape_index,
                          luthier_context *ctx, luthier_context *ctx1, const int *kernels, int nk,
                          bench_peaks *peaks, gemm_summary *sum) {
    gemm_case g;
    int i, failed;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.s = s;
    g.mk = (size_t)(s->m * s->k);
    g.kn = (size_t)(s->k * s->n);
    g.mn = (size_t)(s->m * s->n);
    g.nk = nk;
    g.twins = ctx1 != NULL;
    g.ncont = BENCH_NUM_ANCHORS + nk * (ctx1 ? 2 : 1); /* anchors, kernels, 1T twins */
    g.ncopies = 1;
    failed = gemm_case_alloc(&g, shape_index);
    if (!failed) {
        gemm_case_contestants(&g, ctx, ctx1, kernels);
        for (i = 0; i < g.ncont; i++) gemm_check(&g, i);
        gemm_time_rounds(&g, peaks);
        failed = gemm_case_results(&g, peaks, sum);
    }
    gemm_case_free(&g);
    return failed;
}

#include "bench_int8.h" /* gemm --int8 */

/* The shapes of --shapes (dnn, squares) and --shape, in that order, into shapes (room for all).
   Returns their count. */
static int gemm_build_shapes(const gemm_opts *o, gemm_shape *shapes) {
    int si, nshapes = 0;
    if (o->groups & GROUP_DNN)
        for (si = 0; si < GEMM_N_DNN; si++) {
            gemm_shape *s = &shapes[nshapes++];
            snprintf(s->name, sizeof s->name, "%s", gemm_dnn_shapes[si].name);
            s->m = gemm_dnn_shapes[si].m;
            s->n = gemm_dnn_shapes[si].n;
            s->k = gemm_dnn_shapes[si].k;
            s->group = GROUP_DNN;
        }
    if (o->groups & GROUP_SQUARES)
        for (si = 0; si < GEMM_N_SQUARES; si++) {
            gemm_shape *s = &shapes[nshapes++];
            const int64_t d = gemm_square_sizes[si];
            snprintf(s->name, sizeof s->name, "square_%lld", (long long)d);
            s->m = s->n = s->k = d;
            s->group = GROUP_SQUARES;
        }
    for (si = 0; si < o->ncustom; si++) shapes[nshapes++] = o->custom[si];
    return nshapes;
}

/* The lines before the table on info (version, CPU, peaks, anchors, mode, clusters, timing),
   then the CSV header or the table's on stdout. */
static void gemm_print_header(FILE *info, const gemm_opts *o, const luthier_context *ctx,
                              const bench_peaks *peaks) {
    fprintf(info, "luthier-bench gemm: luthier v%d.%d.%d\n", LUTHIER_VERSION_MAJOR,
            LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH);
    print_cpu(info);
    print_peaks(info, peaks);
    bench_anchors_describe(info);
    if (o->blocking[0] || o->blocking[1] || o->blocking[2])
        fprintf(info, "blocking kc %zu, mc %zu, nc %zu (0 = derived from the caches)\n",
                o->blocking[0], o->blocking[1], o->blocking[2]);
    fprintf(info, "mode     %s; luthier %d thread(s)%s, anchors %d thread(s)\n",
            o->prepack ? "B pre-packed outside the timed loop (luthier_sgemm_packed)"
                       : "luthier_sgemm timed including the packing of B",
            o->lthreads, o->scaling ? " and 1 thread" : "", o->threads);
    if (o->cold_b)
        fprintf(info, "B        cold: every call takes the next of 2-64 copies (~2x the last-level "
                      "cache, <= 1 GiB), as weights in a network\n");
    if (o->lthreads > 1) {
        luthier_topology t;
        char buf[1024];
        if (luthier_context_topology(ctx, &t) == LUTHIER_STATUS_OK &&
            luthier_topology_format(&t, buf, sizeof buf) > 0) {
            char *line, *save = NULL;
            for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                fprintf(info, "clusters %s (source %s)\n", line, t.source);
        }
    }
    if (o->policy.reps > 0) fprintf(info, "timing   %ld repetitions per case", o->policy.reps);
    else fprintf(info, "timing   >= %.2f s per case", o->policy.min_time);
    fprintf(info, ", in %d rounds interleaving luthier and the anchors, after a checked call;\n"
                  "         GF/s from the fastest repetition\n", o->policy.rounds);
    if (o->csv)
        printf("name,M,N,K,threads,kernel,luthier_gflops,openblas_gflops,onednn_gflops,peak_pct,"
               "luthier_ms_min,luthier_ms_median,gbps,isa,prepack,reps,openblas_ms_min,"
               "onednn_ms_min,peak_gflops,max_rel_err,status,luthier_threads,luthier_1t_gflops,"
               "speedup_vs_1t,b_copies\n");
    else {
        printf("\n");
        gemm_table_header(o->scaling);
    }
    fflush(stdout);
}

static int cmd_gemm(int argc, char **argv) {
    const char *cmd = argv[0];
    gemm_opts o;
    gemm_shape *shapes = NULL;
    gemm_summary *sum = NULL;
    luthier_context *ctx = NULL, *ctx1 = NULL;
    bench_peaks peaks;
    int *kernels = NULL;
    int nk = 0, nshapes = 0, si, rc, exit_code = BENCH_EXIT_OK;
    FILE *info;

    if (gemm_wants_int8(argc, argv)) return cmd_gemm_int8(argc, argv);
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.prepack = 1;
    o.policy.min_time = 0.2;
    o.policy.rounds = 4;
    if ((rc = gemm_parse(argc, argv, &o)) >= 0) goto done;
    if (!o.groups && !o.ncustom) o.groups = GROUP_DNN | GROUP_SQUARES;
    info = o.csv ? stderr : stdout;

    if (!(ctx = open_context(cmd, o.blocking, o.threads)) ||
        (o.scaling && !(ctx1 = open_context(cmd, o.blocking, 1)))) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    o.lthreads = luthier_context_num_threads(ctx);
    if ((rc = gemm_resolve_kernels(cmd, o.kernel_arg, ctx, &kernels, &nk)) >= 0) goto done;

    /* The shape list: dnn, squares, custom. */
    shapes = (gemm_shape *)calloc((size_t)(GEMM_N_DNN + GEMM_N_SQUARES + o.ncustom), sizeof *shapes);
    sum = (gemm_summary *)calloc((size_t)nk, sizeof *sum);
    if (!shapes || !sum) {
        fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    nshapes = gemm_build_shapes(&o, shapes);

    bench_anchors_set_threads(o.threads, stderr);
    if (o.lthreads != o.threads)
        fprintf(stderr, "note: luthier runs %d thread(s), not %d: its context has one thread per "
                        "CPU of its clusters at most; the anchors run %d\n", o.lthreads, o.threads,
                o.threads);

    bench_peaks_measure(&peaks, 0.5);
    gemm_print_header(info, &o, ctx, &peaks);

    for (si = 0; si < nshapes; si++)
        if (gemm_run_shape(&o, &shapes[si], si, ctx, ctx1, kernels, nk, &peaks, sum) != 0)
            exit_code = BENCH_EXIT_FAIL;

    gemm_print_summary(info, sum, kernels, nk, o.threads, o.scaling);
    if (!o.csv)
        printf("\nvs OBLAS / vs DNNL = luthier GF/s / anchor GF/s (> 1: luthier is faster)\n");
    if (exit_code != BENCH_EXIT_OK)
        fprintf(stderr, "%s gemm: FAILED: a kernel gave a wrong result or an error (see above)\n",
                bench_prog);
    rc = exit_code;

done:
    luthier_context_destroy(ctx);
    luthier_context_destroy(ctx1);
    free(kernels);
    free(shapes);
    free(sum);
    free(o.custom);
    return rc;
}

/* ================================================================================================
   CPU affinity helpers (threads, asym)
   ================================================================================================ */

#if defined(__linux__)
#define BENCH_HAVE_AFFINITY 1
#include <pthread.h>
#include <sched.h>
#else
#define BENCH_HAVE_AFFINITY 0
#endif

/* The calling thread's affinity, saved to be restored. */
typedef struct bench_affinity {
#if BENCH_HAVE_AFFINITY
    cpu_set_t set;
#endif
    int saved;
} bench_affinity;

/* Pins the calling thread to `cpu` after saving its affinity in *old. Returns 1 when it runs
   there (verified with sched_getcpu), 0 otherwise (the affinity is then left as it was). */
static int bench_pin_caller(int cpu, bench_affinity *old) {
    memset(old, 0, sizeof *old);
#if BENCH_HAVE_AFFINITY
    {
        cpu_set_t set;
        if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
        if (sched_getaffinity(0, sizeof old->set, &old->set) != 0) return 0;
        old->saved = 1;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) return 0;
        return sched_getcpu() == cpu;
    }
#else
    (void)cpu;
    return 0;
#endif
}

static void bench_restore_caller(bench_affinity *old) {
#if BENCH_HAVE_AFFINITY
    if (old->saved) sched_setaffinity(0, sizeof old->set, &old->set);
#endif
    old->saved = 0;
}

/* CPUs this process may run on, ascending (at most cap). Returns the count (0 if unknown). */
static int bench_allowed_cpus(int *cpus, int cap) {
    int n = 0;
#if BENCH_HAVE_AFFINITY
    cpu_set_t set;
    int c;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    for (c = 0; c < CPU_SETSIZE && c < LUTHIER_MAX_CPUS && n < cap; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
#else
    (void)cpus;
    (void)cap;
#endif
    return n;
}

/* Busy spinning for `seconds` (the body of the synthetic regions). */
static void bench_spin_for(double seconds) {
    const double t0 = bench_now();
    while (bench_now() - t0 < seconds) continue;
}

/* ================================================================================================
   threads
   ================================================================================================ */

#define THREADS_DEFAULT_REGIONS 20000L
#define THREADS_ROUNDS 10

static void usage_threads(FILE *out) {
    fprintf(out,
            "Usage: %s threads [--regions N] [--body-us U] [--csv]\n"
            "Overhead of luthier's parallel regions (luthier_parallel_for): the time of one\n"
            "region, from the call to its return, on a context of 1 thread and on a context of\n"
            "all threads (one per CPU of its clusters; $LUTHIER_CLUSTERS honoured), with the\n"
            "RATIO (default ratios) and DYNAMIC schedules, over n = threads units:\n"
            "  empty     a no-op callback: the pure cost of waking the workers and waiting\n"
            "  bodyU     every unit spins U us (--body-us, default 10), so each thread works\n"
            "            about U us: overhead = region time - U us\n"
            "Regions run back to back (the workers spin between them, as between the layers of\n"
            "a network), timed one by one; the cases alternate in %d rounds so load drifts hit\n"
            "all alike. The calling thread (slot 0) is pinned to the first CPU of the first\n"
            "cluster for the measurement and restored afterwards.\n"
            "\n"
            "Options:\n"
            "  --regions N   timed regions per case (default %ld; 100..10000000)\n"
            "  --body-us U   work per unit of the 'body' cases in us (default 10; 0..100000)\n"
            "  --csv         one row per case: case,threads,schedule,us_min,us_median,\n"
            "                overhead_us_median,regions\n",
            bench_prog, THREADS_ROUNDS, THREADS_DEFAULT_REGIONS);
}

static void threads_noop(void *arg, size_t begin, size_t end, int thread, int cluster) {
    (void)arg;
    (void)begin;
    (void)end;
    (void)thread;
    (void)cluster;
}

static void threads_body(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const double per_unit = *(const double *)arg;
    (void)thread;
    (void)cluster;
    bench_spin_for(per_unit * (double)(end - begin));
}

typedef struct threads_case {
    const char *name;        /* "empty" or "body" */
    luthier_context *ctx;
    int threads;
    luthier_schedule schedule;
    int body;
    double *t;               /* seconds per region */
    long n;
    bench_stats st;
} threads_case;

/* The options of threads. */
typedef struct threads_opts {
    long regions;
    double body_us;
    int csv;
    double per_unit;   /* body_us in seconds: the work of one unit of the body cases */
    char bodyname[32]; /* the name of the body cases, "body<U>us" */
} threads_opts;

/* Parses the threads options. Returns -1 to continue, else an exit code. */
static int threads_parse(int argc, char **argv, threads_opts *o) {
    const char *cmd = argv[0], *val;
    int i, r;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_threads(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->csv = 1;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--regions", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 100, 10000000, &v)) {
                bench_usage_error(cmd, "--regions wants an integer in [100, 10000000], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->regions = (long)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--body-us", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_double(val, 0.0, 100000.0, &o->body_us)) {
                bench_usage_error(cmd, "--body-us wants microseconds in [0, 100000], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else {
            bench_usage_error(cmd, "%s '%s'", argv[i][0] == '-' ? "unknown option" : "unexpected argument",
                              argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    return -1;
}

/* The cases into cs[*nc]: {empty, body} x {1 thread, all threads (when more than one)} x
   {RATIO, DYNAMIC}, each with room for o->regions times. Returns 0, or -1 when out of memory. */
static int threads_make_cases(const threads_opts *o, luthier_context *ctx1, luthier_context *ctxn,
                              threads_case *cs, int *nc) {
    const int tn = luthier_context_num_threads(ctxn);
    luthier_context *cx[2];
    int k, body, sch;
    cx[0] = ctx1;
    cx[1] = ctxn;
    for (body = 0; body < 2; body++)
        for (k = 0; k < (tn > 1 ? 2 : 1); k++)
            for (sch = 0; sch < 2; sch++) {
                threads_case *c = &cs[(*nc)++];
                c->name = body ? o->bodyname : "empty";
                c->ctx = cx[k];
                c->threads = luthier_context_num_threads(c->ctx);
                c->schedule = sch ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
                c->body = body;
                if (!(c->t = (double *)malloc((size_t)o->regions * sizeof *c->t))) return -1;
            }
    return 0;
}

/* Pins the calling thread (slot 0) to the first CPU of ctxn's first cluster (*pin_cpu, -1 when
   unknown). Returns 1 when it runs there. */
static int threads_pin_caller(const luthier_context *ctxn, bench_affinity *aff, int *pin_cpu) {
    luthier_topology t;
    *pin_cpu = -1;
    if (luthier_context_topology(ctxn, &t) == LUTHIER_STATUS_OK && t.num_clusters > 0)
        *pin_cpu = t.clusters[0].cpus[0];
    return *pin_cpu >= 0 ? bench_pin_caller(*pin_cpu, aff) : 0;
}

/* The lines before the table: version, clusters, where the threads run, what is timed. */
static void threads_print_header(const threads_opts *o, const luthier_context *ctxn, int pinned,
                                 int pin_cpu) {
    luthier_topology t;
    char buf[1024];
    int i;
    printf("luthier-bench threads: luthier v%d.%d.%d, %d thread(s) in the full context\n",
           LUTHIER_VERSION_MAJOR, LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH,
           luthier_context_num_threads(ctxn));
    if (luthier_context_topology(ctxn, &t) == LUTHIER_STATUS_OK &&
        luthier_topology_format(&t, buf, sizeof buf) > 0)
        printf("clusters (source %s):\n%s", t.source, buf);
    for (i = 1; i < luthier_context_num_threads(ctxn); i++) {
        int cl = -1, cpu = -1; /* always set for a worker slot; initialized for -O2 warnings */
        const int ok = luthier_context_thread_info(ctxn, i, &cl, &cpu);
        printf("slot %d: cluster %d, CPU %d%s\n", i, cl, cpu, ok ? " (pinned)" : " (NOT pinned)");
    }
    printf("caller (slot 0): %s CPU %d\n", pinned ? "pinned to" : "could not be pinned to",
           pin_cpu);
    printf("%ld regions per case, back to back, in %d rounds alternating the cases\n\n",
           o->regions, THREADS_ROUNDS);
    fflush(stdout);
}

/* Times o->regions regions of every case, in THREADS_ROUNDS rounds that alternate the cases,
   then summarizes each. Returns 0, or -1 when a region failed (said on stderr). */
static int threads_measure(const char *cmd, const threads_opts *o, threads_case *cs, int nc) {
    double per_unit = o->per_unit;
    int i, r;
    for (r = 0; r < THREADS_ROUNDS; r++) {
        const long until = o->regions * (r + 1) / THREADS_ROUNDS;
        int k;
        for (k = 0; k < nc; k++) {
            threads_case *c = &cs[(r % 2) ? nc - 1 - k : k];
            luthier_parallel_desc pd;
            luthier_range_fn fn = c->body ? threads_body : threads_noop;
            int w;
            memset(&pd, 0, sizeof pd);
            pd.schedule = c->schedule;
            /* Untimed regions first: the workers may have gone to sleep meanwhile. */
            for (w = 0; w < 20; w++)
                if (luthier_parallel_for(c->ctx, (size_t)c->threads, &pd, fn, &per_unit) !=
                    LUTHIER_STATUS_OK) {
                    fprintf(stderr, "%s %s: error: luthier_parallel_for: %s\n", bench_prog, cmd,
                            luthier_context_error(c->ctx));
                    return -1;
                }
            while (c->n < until) {
                const double t0 = bench_now();
                luthier_parallel_for(c->ctx, (size_t)c->threads, &pd, fn, &per_unit);
                c->t[c->n++] = bench_now() - t0;
            }
        }
    }
    for (i = 0; i < nc; i++) cs[i].st = bench_summarize(cs[i].t, cs[i].n);
    return 0;
}

/* The table (or CSV rows) of the cases. */
static void threads_report(const threads_opts *o, const threads_case *cs, int nc) {
    int i;
    if (o->csv) {
        printf("case,threads,schedule,us_min,us_median,overhead_us_median,regions\n");
        for (i = 0; i < nc; i++) {
            const threads_case *c = &cs[i];
            printf("%s,%d,%s,%.3f,%.3f,%.3f,%ld\n", c->name, c->threads,
                   c->schedule == LUTHIER_SCHEDULE_DYNAMIC ? "dynamic" : "ratio", c->st.min * 1e6,
                   c->st.median * 1e6, c->st.median * 1e6 - (c->body ? o->body_us : 0.0), c->st.reps);
        }
    } else {
        printf("%-12s %7s %-8s %10s %10s %12s %10s\n", "case", "threads", "schedule", "us(min)",
               "us(med)", "overhead(med)", "us(p90)");
        for (i = 0; i < nc; i++) {
            const threads_case *c = &cs[i];
            const double p90 = c->t[(size_t)((double)(c->n - 1) * 0.9)];
            printf("%-12s %7d %-8s %10.3f %10.3f %12.3f %10.3f\n", c->name, c->threads,
                   c->schedule == LUTHIER_SCHEDULE_DYNAMIC ? "dynamic" : "ratio", c->st.min * 1e6,
                   c->st.median * 1e6, c->st.median * 1e6 - (c->body ? o->body_us : 0.0), p90 * 1e6);
        }
        printf("\nus = microseconds per region (call to return); overhead = us(med) - the %g us body\n"
               "of the body cases (each thread runs about one unit); p90 = 90th percentile.\n",
               o->body_us);
    }
}

static int cmd_threads(int argc, char **argv) {
    const char *cmd = argv[0];
    threads_opts o;
    int i, nc = 0, rc, pinned, pin_cpu;
    luthier_context *ctx1 = NULL, *ctxn = NULL;
    threads_case cs[8];
    bench_affinity aff;

    memset(cs, 0, sizeof cs);
    memset(&aff, 0, sizeof aff);
    memset(&o, 0, sizeof o);
    o.regions = THREADS_DEFAULT_REGIONS;
    o.body_us = 10.0;
    if ((rc = threads_parse(argc, argv, &o)) >= 0) return rc;
    o.per_unit = o.body_us * 1e-6;
    snprintf(o.bodyname, sizeof o.bodyname, "body%gus", o.body_us);

    rc = BENCH_EXIT_OK;
    if (!(ctx1 = open_context(cmd, NULL, 1)) || !(ctxn = open_context(cmd, NULL, 0))) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (threads_make_cases(&o, ctx1, ctxn, cs, &nc) != 0) {
        fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    pinned = threads_pin_caller(ctxn, &aff, &pin_cpu);
    if (!o.csv) threads_print_header(&o, ctxn, pinned, pin_cpu);
    if (threads_measure(cmd, &o, cs, nc) != 0) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    threads_report(&o, cs, nc);

done:
    bench_restore_caller(&aff);
    for (i = 0; i < nc; i++) free(cs[i].t);
    luthier_context_destroy(ctxn);
    luthier_context_destroy(ctx1);
    return rc;
}

/* ================================================================================================
   asym
   ================================================================================================ */

#define ASYM_MAX_LOADERS 16
#define ASYM_MAX_STRATEGIES 128

static void usage_asym(FILE *out) {
    fprintf(out,
            "Usage: %s asym [options]\n"
            "Emulates an asymmetric (big.LITTLE) pair on symmetric cores and compares the ways\n"
            "to split work between the two clusters. A busy loop of this tool, pinned to the\n"
            "'little' CPU(s), takes about half of it, so luthier's worker there runs at about\n"
            "half speed while the 'big' CPU(s) run at full speed. The clusters are\n"
            "$LUTHIER_CLUSTERS when set (exactly two clusters; the busy loop goes on every CPU\n"
            "of the second), else built from the CPUs this process may use: little = --little-cpu\n"
            "(default: the last one), big = the others, e.g. 'big:0,little:1'. The calling thread\n"
            "(slot 0, first cluster) is pinned to the first big CPU while measuring.\n"
            "\n"
            "Workloads: GEMMs of DNN layers (B pre-packed, default kernel; checked against an\n"
            "exact reference) and 'synthetic', a luthier_parallel_for over 4096 units of scalar\n"
            "compute. Strategies, timed in the same rounds (alternating order):\n"
            "  equal      RATIO with shares in proportion to the clusters' thread counts (what an\n"
            "             OpenMP static schedule does)\n"
            "  ratio_P    RATIO with ratios {P, 100-P}: P %% of the work to big (P = 0, step, .., 100)\n"
            "  dynamic    LUTHIER_SCHEDULE_DYNAMIC (chunks on demand, default chunk)\n"
            "  big_only   a context with only the big cluster's threads (little left idle)\n"
            "Reported per strategy: the fastest and the median repetition (ms); per workload the\n"
            "best ratio and the speedups best ratio / equal and best ratio / dynamic. Before the\n"
            "loaded table, a baseline without the busy loop (equal, dynamic, big_only).\n"
            "The busy loop stops by itself after --load-timeout seconds and is always joined.\n"
            "\n"
            "Options:\n"
            "  --little-cpu C    the CPU to load (without $LUTHIER_CLUSTERS; default: the last)\n"
            "  --no-load         run the whole table without the busy loop (no baseline)\n"
            "  --step P          ratio step in %% (default 10; 1..50)\n"
            "  --min-time S      seconds per strategy and workload (default 0.1)\n"
            "  --rounds N        rounds alternating the strategies (default 5)\n"
            "  --load-timeout S  the busy loop's deadline in seconds (default 300)\n"
            "  --csv             one row per (workload, load, strategy): workload,strategy,\n"
            "                    big_share,ms,ms_median,reps,load,gflops,vs_equal,max_rel_err\n"
            "                    (big_share empty for dynamic; load = busy or none;\n"
            "                    gflops empty for synthetic; vs_equal = equal ms / ms)\n",
            bench_prog);
}

/* ---- the busy loop ---------------------------------------------------------------------------- */

/* The busy loop's duty cycle on the little CPU: on / (on + off) of it is taken away. */
#define ASYM_ON_US 100
#define ASYM_OFF_US 100

typedef struct asym_loader {
    int cpu;
    int realtime;          /* SCHED_FIFO granted */
    double deadline;       /* bench_now() time at which it stops by itself */
    int stop;              /* atomic: set by the main thread */
    int state;             /* atomic: 0 starting, 1 spinning pinned, -1 could not pin */
    int expired;           /* atomic: stopped by the deadline */
#if BENCH_HAVE_AFFINITY
    pthread_t th;
#endif
    int joinable;
} asym_loader;

#if BENCH_HAVE_AFFINITY
static void *asym_loader_main(void *arg) {
    asym_loader *l = (asym_loader *)arg;
    cpu_set_t set;
    volatile double x = 1.0;
    CPU_ZERO(&set);
    CPU_SET(l->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0 || sched_getcpu() != l->cpu) {
        __atomic_store_n(&l->state, -1, __ATOMIC_RELEASE);
        return NULL;
    }
    {
        /* Real-time priority when allowed: the loop then takes the CPU back the moment its
           pause ends, so the worker sharing the CPU gets exactly the pauses. */
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = 1;
        l->realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
    }
    __atomic_store_n(&l->state, 1, __ATOMIC_RELEASE);
    /* Duty cycle: spin ASYM_ON_US, pause ASYM_OFF_US. A fine period (far below the scheduler's
       millisecond time slices) makes the CPU a steady half-speed core even for short calls. */
    while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
        const double t0 = bench_now();
        struct timespec pause;
        while (bench_now() - t0 < ASYM_ON_US * 1e-6) x = x * 0.999999 + 1e-6;
        pause.tv_sec = 0;
        pause.tv_nsec = ASYM_OFF_US * 1000L;
        nanosleep(&pause, NULL);
        if (bench_now() > l->deadline) {
            __atomic_store_n(&l->expired, 1, __ATOMIC_RELEASE);
            break;
        }
    }
    return NULL;
}
#endif

/* Starts one busy loop per CPU; returns 0 when all spin pinned, else stops them (-1). */
static int asym_load_start(asym_loader *ls, int n, const int *cpus, double timeout) {
    int i, ok = 1;
    memset(ls, 0, (size_t)n * sizeof *ls);
#if BENCH_HAVE_AFFINITY
    for (i = 0; i < n; i++) {
        ls[i].cpu = cpus[i];
        ls[i].deadline = bench_now() + timeout;
        if (pthread_create(&ls[i].th, NULL, asym_loader_main, &ls[i]) != 0) {
            ok = 0;
            break;
        }
        ls[i].joinable = 1;
    }
    for (i = 0; ok && i < n; i++) {
        int st;
        while ((st = __atomic_load_n(&ls[i].state, __ATOMIC_ACQUIRE)) == 0) sched_yield();
        if (st < 0) ok = 0;
    }
#else
    (void)cpus;
    (void)timeout;
    ok = 0;
    i = 0;
#endif
    return ok ? 0 : -1;
}

/* Stops and joins every busy loop; returns 1 if one stopped by its deadline. */
static int asym_load_stop(asym_loader *ls, int n) {
    int i, expired = 0;
    for (i = 0; i < n; i++) __atomic_store_n(&ls[i].stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < n; i++) {
#if BENCH_HAVE_AFFINITY
        if (ls[i].joinable) pthread_join(ls[i].th, NULL);
#endif
        ls[i].joinable = 0;
        expired |= __atomic_load_n(&ls[i].expired, __ATOMIC_ACQUIRE);
    }
    return expired;
}

/* The little CPU's speed under its busy loop, relative to a big CPU: the calling thread runs a
   fixed arithmetic loop pinned to each in turn, ASYM_PROBE_ROUNDS times alternating, and the
   ratio of the summed times is the little CPU's capacity (what a board's sysfs declares). How
   much the loop takes depends on the host's scheduler (real-time priority granted or not, timer
   slack, other tenants), so a declared 0.5 can be far from what the pair does. Returns the
   capacity in [0.05, 1], or -1 when pinning fails; the thread's affinity is restored. */
#define ASYM_PROBE_ROUNDS 24
#define ASYM_PROBE_ITERS 400000
static double asym_probe_capacity(int big_cpu, int little_cpu) {
#if BENCH_HAVE_AFFINITY
    cpu_set_t saved, one;
    double t[2] = {0, 0}, cap;
    volatile float sink = 0;
    int r, side;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0) return -1;
    for (r = 0; r < 2 * ASYM_PROBE_ROUNDS; r++) {
        float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        double t0;
        int i, j;
        side = r & 1;
        CPU_ZERO(&one);
        CPU_SET(side ? little_cpu : big_cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) {
            sched_setaffinity(0, sizeof saved, &saved);
            return -1;
        }
        sched_yield();
        t0 = bench_now();
        for (i = 0; i < ASYM_PROBE_ITERS; i++)
            for (j = 0; j < 8; j++) acc[j] = acc[j] * 0.9999f + 1e-4f;
        t[side] += bench_now() - t0;
        sink += acc[0] + acc[7];
    }
    sched_setaffinity(0, sizeof saved, &saved);
    (void)sink;
    cap = t[1] > 0 ? t[0] / t[1] : 1.0;
    return cap < 0.05 ? 0.05 : cap > 1.0 ? 1.0 : cap;
#else
    (void)big_cpu;
    (void)little_cpu;
    return -1;
#endif
}

/* ---- workloads and strategies ----------------------------------------------------------------- */

enum { ASYM_GEMM, ASYM_SYNTH };

static const struct {
    const char *name;
    int64_t m, n, k;
} asym_gemm_shapes[] = {
    {"resnet18_conv2", 3136, 64, 576},
    {"bert_qkv", 128, 768, 768},
    {"resnet50_1x1a", 3136, 256, 64},
    {"bert_ffn1", 128, 3072, 768},
};
#define ASYM_N_GEMM ((int)(sizeof asym_gemm_shapes / sizeof asym_gemm_shapes[0]))
#define ASYM_SYNTH_UNITS 4096
#define ASYM_SYNTH_ITERS 1000

typedef struct asym_workload {
    char name[40];
    int kind;
    gemm_shape shape;
    float *a, *b, *c;
    luthier_packed_b *pb;
    gemm_ref ref;
    int have_ref;
    float *out, *expect; /* synthetic: per unit */
} asym_workload;

typedef struct asym_strategy {
    char name[24];
    int share;           /* % of the work for big; -1 = dynamic */
    luthier_context *ctx;
    luthier_schedule schedule;
    float ratios[2];
    int use_ratios;
    int baseline;        /* part of the unloaded baseline */
} asym_strategy;

typedef struct asym_call {
    asym_workload *w;
    const asym_strategy *s;
    luthier_status status;
    bench_sampler smp;
    bench_stats st;
    double err;
    int active;
} asym_call;

static void asym_synth_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    float *out = (float *)arg;
    size_t u;
    (void)thread;
    (void)cluster;
    for (u = begin; u < end; u++) {
        float x = (float)u * 1e-3f, y = 1.0f;
        int i;
        for (i = 0; i < ASYM_SYNTH_ITERS; i++) {
            x = x * 0.999f + 0.5f;
            y = y * 0.998f + x;
        }
        out[u] = x + y;
    }
}

static int asym_call_run(void *arg) {
    asym_call *c = (asym_call *)arg;
    const asym_strategy *s = c->s;
    if (c->w->kind == ASYM_GEMM) {
        luthier_sgemm_desc d;
        memset(&d, 0, sizeof d);
        d.m = c->w->shape.m;
        d.n = c->w->shape.n;
        d.k = c->w->shape.k;
        d.schedule = s->schedule;
        if (s->use_ratios) {
            d.ratios = s->ratios;
            d.num_ratios = 2;
        }
        c->status = luthier_sgemm_packed(s->ctx, &d, c->w->a, c->w->pb, c->w->c);
    } else {
        luthier_parallel_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.schedule = s->schedule;
        if (s->use_ratios) {
            pd.ratios = s->ratios;
            pd.num_ratios = 2;
        }
        c->status = luthier_parallel_for(s->ctx, ASYM_SYNTH_UNITS, &pd, asym_synth_range, c->w->out);
    }
    return c->status == LUTHIER_STATUS_OK ? 0 : -1;
}

static void asym_workload_free(asym_workload *w) {
    free(w->a);
    free(w->b);
    free(w->c);
    free(w->out);
    free(w->expect);
    luthier_packed_b_destroy(w->pb);
    if (w->have_ref) gemm_ref_free(&w->ref);
    memset(w, 0, sizeof *w);
}

/* Checked call, then timing rounds, of the selected strategies on one workload. Returns 0, or 1
   when a strategy failed or computed a wrong result. */
static int asym_run_workload(const char *cmd, asym_workload *w, asym_strategy *st, int ns,
                             int baseline_only, const bench_policy *pol, asym_call *calls) {
    int i, r, failed = 0;
    for (i = 0; i < ns; i++) {
        asym_call *c = &calls[i];
        double t0;
        memset(c, 0, sizeof *c);
        c->w = w;
        c->s = &st[i];
        if (baseline_only && !st[i].baseline) continue;
        if (w->kind == ASYM_GEMM) bench_fill_value(w->c, (size_t)(w->shape.m * w->shape.n), NAN);
        else bench_fill_value(w->out, ASYM_SYNTH_UNITS, NAN);
        t0 = bench_now();
        if (asym_call_run(c) != 0) {
            fprintf(stderr, "ERROR: %s %s: %s on %s: %s: %s\n", bench_prog, cmd, st[i].name,
                    w->name, luthier_status_string(c->status), luthier_context_error(st[i].ctx));
            failed = 1;
            continue;
        }
        c->smp.last = bench_now() - t0;
        if (w->kind == ASYM_GEMM) {
            c->err = gemm_err_ref(&w->ref, w->c, w->shape.n);
        } else {
            size_t u;
            c->err = 0.0;
            for (u = 0; u < ASYM_SYNTH_UNITS; u++)
                if (!(w->out[u] == w->expect[u])) c->err = INFINITY;
        }
        if (!(c->err <= GEMM_TOL)) {
            fprintf(stderr, "ERROR: %s %s: %s on %s is WRONG (max relative error %.3g)\n",
                    bench_prog, cmd, st[i].name, w->name, c->err);
            failed = 1;
            continue;
        }
        c->active = 1;
    }
    for (r = 0; r < pol->rounds; r++)
        for (i = 0; i < ns; i++) {
            asym_call *c = &calls[(r % 2) ? ns - 1 - i : i];
            if (!c->active) continue;
            if (bench_run_round(asym_call_run, c, pol, r, &c->smp) != 0) {
                fprintf(stderr, "ERROR: %s %s: %s on %s failed while timing: %s\n", bench_prog,
                        cmd, c->s->name, w->name, luthier_context_error(c->s->ctx));
                c->active = 0;
                failed = 1;
            }
        }
    for (i = 0; i < ns; i++)
        if (calls[i].active) calls[i].st = bench_summarize(calls[i].smp.t, calls[i].smp.n);
    return failed;
}

/* Prints one workload's results (table or CSV rows) and fills the summary numbers. */
typedef struct asym_result {
    double equal, best, dynamic, big_only, all_big, all_little; /* min seconds, 0 = none */
    double equal_med, best_med, dynamic_med;
    int best_share;
    double bestm;        /* the lowest median of the ratio_P */
    int bestm_share;
} asym_result;

static void asym_report(int csv, const asym_workload *w, const asym_call *calls, int ns,
                        const char *load, asym_result *res) {
    const double flops = w->kind == ASYM_GEMM
                             ? 2.0 * (double)w->shape.m * (double)w->shape.n * (double)w->shape.k
                             : 0.0;
    int i;
    memset(res, 0, sizeof *res);
    res->best_share = res->bestm_share = -1;
    for (i = 0; i < ns; i++) {
        const asym_call *c = &calls[i];
        const asym_strategy *s = c->s;
        if (!c->active) continue;
        if (strcmp(s->name, "equal") == 0) {
            res->equal = c->st.min;
            res->equal_med = c->st.median;
        } else if (strcmp(s->name, "dynamic") == 0) {
            res->dynamic = c->st.min;
            res->dynamic_med = c->st.median;
        } else if (strcmp(s->name, "big_only") == 0) {
            res->big_only = c->st.min;
        } else if (s->share >= 0) {
            if (s->share == 100) res->all_big = c->st.min;
            if (s->share == 0) res->all_little = c->st.min;
            if (res->best_share < 0 || c->st.min < res->best) {
                res->best = c->st.min;
                res->best_med = c->st.median;
                res->best_share = s->share;
            }
            if (res->bestm_share < 0 || c->st.median < res->bestm) {
                res->bestm = c->st.median;
                res->bestm_share = s->share;
            }
        }
    }
    if (!csv) {
        printf("\n%s", w->name);
        if (w->kind == ASYM_GEMM)
            printf(" (GEMM %lldx%lldx%lld, B pre-packed)", (long long)w->shape.m,
                   (long long)w->shape.n, (long long)w->shape.k);
        else
            printf(" (parallel_for, %d units of scalar compute)", ASYM_SYNTH_UNITS);
        printf(", load: %s\n", load);
        printf("  %-10s %5s %10s %10s %8s %9s %5s\n", "strategy", "big%", "ms(min)", "ms(med)",
               "GF/s", "vs equal", "reps");
    }
    for (i = 0; i < ns; i++) {
        const asym_call *c = &calls[i];
        const asym_strategy *s = c->s;
        char share[16], gf[32], ve[32];
        if (!c->active) continue;
        if (s->share >= 0) snprintf(share, sizeof share, "%d", s->share);
        else share[0] = 0;
        if (flops > 0.0) snprintf(gf, sizeof gf, "%.1f", flops / c->st.min * 1e-9);
        else gf[0] = 0;
        if (res->equal > 0.0) snprintf(ve, sizeof ve, "%.2f", res->equal / c->st.min);
        else ve[0] = 0;
        if (csv) {
            printf("%s,%s,%s,%.4f,%.4f,%ld,%s,%s,%s,%.3g\n", w->name, s->name, share,
                   c->st.min * 1e3, c->st.median * 1e3, c->st.reps, load, gf, ve, c->err);
        } else {
            const int best = s->share >= 0 && strcmp(s->name, "equal") != 0 &&
                             s->share == res->best_share && strncmp(s->name, "ratio_", 6) == 0;
            printf("  %-10s %5s %10.3f %10.3f %8s %9s %5ld%s\n", s->name, share[0] ? share : "-",
                   c->st.min * 1e3, c->st.median * 1e3, gf[0] ? gf : "-", ve[0] ? ve : "-",
                   c->st.reps, best ? "  <- best ratio" : "");
        }
    }
    if (!csv && res->best_share >= 0) {
        printf("  best ratio: %d %% on big; best/equal %.2fx (median %.2fx), best/dynamic %.2fx "
               "(median %.2fx)",
               res->best_share, res->equal > 0.0 ? res->equal / res->best : 0.0,
               res->equal_med > 0.0 ? res->equal_med / res->best_med : 0.0,
               res->dynamic > 0.0 ? res->dynamic / res->best : 0.0,
               res->dynamic_med > 0.0 ? res->dynamic_med / res->best_med : 0.0);
        if (res->all_big > 0.0 && res->all_little > 0.0)
            printf("; little/big speed %.2f", res->all_big / res->all_little);
        printf("\n  by medians: best ratio %d %% on big; best/equal %.2fx, best/dynamic %.2fx\n",
               res->bestm_share, res->equal_med > 0.0 ? res->equal_med / res->bestm : 0.0,
               res->dynamic_med > 0.0 ? res->dynamic_med / res->bestm : 0.0);
    }
    fflush(stdout);
}

/* The options of asym. */
typedef struct asym_opts {
    int little_cpu; /* --little-cpu, -1 = the last CPU this process may run on */
    int no_load, csv, step;
    double load_timeout;
    bench_policy pol;
} asym_opts;

/* Parses the asym options. Returns -1 to continue, else an exit code. */
static int asym_parse(int argc, char **argv, asym_opts *o) {
    const char *cmd = argv[0], *val;
    int i, r;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (bench_is_help(arg)) {
            usage_asym(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_flag(arg, cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->csv = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--no-load")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->no_load = 1;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--little-cpu", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 0, LUTHIER_MAX_CPUS - 1, &v)) {
                bench_usage_error(cmd, "--little-cpu wants a CPU id in [0, %d], not '%s'",
                                  LUTHIER_MAX_CPUS - 1, val);
                return BENCH_EXIT_USAGE;
            }
            o->little_cpu = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--step", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 50, &v)) {
                bench_usage_error(cmd, "--step wants a percentage in [1, 50], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->step = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--min-time", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_double(val, 0.001, 60.0, &o->pol.min_time)) {
                bench_usage_error(cmd, "--min-time wants seconds in [0.001, 60], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--rounds", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 100, &v)) {
                bench_usage_error(cmd, "--rounds wants an integer in [1, 100], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->pol.rounds = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--load-timeout", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_double(val, 1.0, 86400.0, &o->load_timeout)) {
                bench_usage_error(cmd, "--load-timeout wants seconds in [1, 86400], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else {
            bench_usage_error(cmd, "%s '%s'", arg[0] == '-' ? "unknown option" : "unexpected argument",
                              arg);
            return BENCH_EXIT_USAGE;
        }
    }
    return -1;
}

/* What a run of asym sets up (clusters, contexts, strategies, workloads, busy loops); released
   by asym_teardown. */
typedef struct asym_run {
    const char *env;  /* $LUTHIER_CLUSTERS */
    char spec[1024];  /* the cluster spec: $LUTHIER_CLUSTERS or "big:...,little:C" */
    luthier_topology topo;
    int load_cpus[ASYM_MAX_LOADERS], nload; /* the little cluster's CPUs: one busy loop each */
    luthier_context *ctx, *ctx_big;         /* both clusters; the big one alone */
    asym_strategy st[ASYM_MAX_STRATEGIES];
    int ns;
    asym_workload ws[ASYM_N_GEMM + 1];
    int nw;
    asym_call *calls;      /* one per strategy, reused by every workload */
    asym_result (*res)[2]; /* per workload: unloaded, loaded */
    asym_loader loaders[ASYM_MAX_LOADERS];
    int load_running;
    bench_affinity aff;    /* the caller's affinity before it was pinned */
} asym_run;

/* Prints the out-of-memory error of asym and returns its exit code. */
static int asym_oom(const char *cmd) {
    fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
    return BENCH_EXIT_FAIL;
}

/* Step 1: the two clusters, from $LUTHIER_CLUSTERS or built around the little CPU, into a->spec
   and a->topo, and the little cluster's CPUs. Returns -1 to continue, else an exit code. */
static int asym_clusters(const char *cmd, const asym_opts *o, asym_run *a) {
    int cpus[LUTHIER_MAX_CPUS], ncpus, little_cpu = o->little_cpu, i, r;
    char err[256], *p;
    if (!BENCH_HAVE_AFFINITY) {
        fprintf(stderr, "%s %s: error: needs Linux CPU affinity (sched_setaffinity)\n", bench_prog, cmd);
        return BENCH_EXIT_FAIL;
    }
    ncpus = bench_allowed_cpus(cpus, LUTHIER_MAX_CPUS);
    a->env = getenv("LUTHIER_CLUSTERS");
    if (a->env && *a->env) {
        if (little_cpu >= 0) {
            bench_usage_error(cmd, "--little-cpu and $LUTHIER_CLUSTERS both choose the clusters: "
                                   "give one of them");
            return BENCH_EXIT_USAGE;
        }
        snprintf(a->spec, sizeof a->spec, "%s", a->env);
    } else {
        if (ncpus < 2) {
            fprintf(stderr, "%s %s: error: this process may run on %d CPU(s): emulating a big and a "
                            "little cluster needs at least 2\n", bench_prog, cmd, ncpus);
            return BENCH_EXIT_FAIL;
        }
        if (little_cpu < 0) little_cpu = cpus[ncpus - 1];
        for (i = 0; i < ncpus && cpus[i] != little_cpu; i++) continue;
        if (i == ncpus) {
            bench_usage_error(cmd, "--little-cpu %d is not a CPU this process may run on (%d..%d)",
                              little_cpu, cpus[0], cpus[ncpus - 1]);
            return BENCH_EXIT_USAGE;
        }
        p = a->spec;
        p += sprintf(p, "big:");
        for (i = 0, r = 0; i < ncpus && p < a->spec + sizeof a->spec - 32; i++)
            if (cpus[i] != little_cpu) p += sprintf(p, "%s%d", r++ ? "," : "", cpus[i]);
        sprintf(p, ",little:%d", little_cpu);
    }
    if (luthier_topology_detect(NULL, a->spec, &a->topo, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: cluster spec '%s': %s\n", bench_prog, cmd, a->spec, err);
        return a->env && *a->env ? BENCH_EXIT_USAGE : BENCH_EXIT_FAIL;
    }
    if (a->topo.num_clusters != 2) {
        fprintf(stderr, "%s %s: error: cluster spec '%s' gives %d cluster(s): asym needs exactly 2 "
                        "(big first, then little)\n", bench_prog, cmd, a->spec, a->topo.num_clusters);
        return BENCH_EXIT_USAGE;
    }
    for (i = 0; i < a->topo.clusters[1].num_cpus && a->nload < ASYM_MAX_LOADERS; i++)
        a->load_cpus[a->nload++] = a->topo.clusters[1].cpus[i];
    return -1;
}

/* Step 2: a context on both clusters (in the spec's order) and one on the big cluster alone.
   Returns -1 to continue, else an exit code. */
static int asym_contexts(const char *cmd, asym_run *a) {
    luthier_context_desc cd;
    luthier_topology ct;
    memset(&cd, 0, sizeof cd);
    cd.topology = &a->topo;
    if (luthier_context_create(&cd, &a->ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: cannot create a context on '%s'\n", bench_prog, cmd, a->spec);
        return BENCH_EXIT_FAIL;
    }
    cd.num_threads = a->topo.clusters[0].num_cpus;
    if (luthier_context_create(&cd, &a->ctx_big) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: cannot create the big-only context\n", bench_prog, cmd);
        return BENCH_EXIT_FAIL;
    }
    if (luthier_context_topology(a->ctx, &ct) != LUTHIER_STATUS_OK || ct.num_clusters != 2 ||
        strcmp(ct.clusters[0].name, a->topo.clusters[0].name) != 0) {
        fprintf(stderr, "%s %s: error: the context does not run the two clusters of '%s' in "
                        "that order\n", bench_prog, cmd, a->spec);
        return BENCH_EXIT_FAIL;
    }
    return -1;
}

/* Step 3: the strategies: equal, ratio_0..ratio_100 every `step` %, dynamic, big_only. */
static void asym_strategies(asym_run *a, int step) {
    const int tb = a->topo.clusters[0].num_cpus, tl = a->topo.clusters[1].num_cpus;
    asym_strategy *s = &a->st[a->ns++];
    int r;
    snprintf(s->name, sizeof s->name, "equal");
    s->share = (int)(100.0 * tb / (tb + tl) + 0.5);
    s->ctx = a->ctx;
    s->ratios[0] = (float)tb;
    s->ratios[1] = (float)tl;
    s->use_ratios = 1;
    s->baseline = 1;
    for (r = 0; r <= 100; r += step) {
        s = &a->st[a->ns++];
        snprintf(s->name, sizeof s->name, "ratio_%d", r);
        s->share = r;
        s->ctx = a->ctx;
        s->ratios[0] = (float)r;
        s->ratios[1] = (float)(100 - r);
        s->use_ratios = 1;
        if (r + step > 100 && r != 100) r = 100 - step; /* always end with 100 */
    }
    s = &a->st[a->ns++];
    snprintf(s->name, sizeof s->name, "dynamic");
    s->share = -1;
    s->ctx = a->ctx;
    s->schedule = LUTHIER_SCHEDULE_DYNAMIC;
    s->baseline = 1;
    s = &a->st[a->ns++];
    snprintf(s->name, sizeof s->name, "big_only");
    s->share = 100;
    s->ctx = a->ctx_big;
    s->baseline = 1;
}

/* The GEMM workload of asym_gemm_shapes[i]: data, exact reference, B packed on ctx. Returns -1
   to continue, else an exit code. */
static int asym_gemm_workload(const char *cmd, luthier_context *ctx, asym_workload *w, int i) {
    luthier_sgemm_desc d;
    size_t mk, kn, mn;
    luthier_status s;
    w->kind = ASYM_GEMM;
    snprintf(w->name, sizeof w->name, "%s", asym_gemm_shapes[i].name);
    snprintf(w->shape.name, sizeof w->shape.name, "%s", asym_gemm_shapes[i].name);
    w->shape.m = asym_gemm_shapes[i].m;
    w->shape.n = asym_gemm_shapes[i].n;
    w->shape.k = asym_gemm_shapes[i].k;
    mk = (size_t)(w->shape.m * w->shape.k);
    kn = (size_t)(w->shape.k * w->shape.n);
    mn = (size_t)(w->shape.m * w->shape.n);
    w->a = bench_alloc_floats(mk);
    w->b = bench_alloc_floats(kn);
    w->c = bench_alloc_floats(mn);
    if (!w->a || !w->b || !w->c) return asym_oom(cmd);
    bench_fill_uniform(w->a, mk, 0x3000u + (uint64_t)i);
    bench_fill_uniform(w->b, kn, 0x4000u + (uint64_t)i);
    if (gemm_ref_build(&w->ref, &w->shape, w->a, w->b, 0)) return asym_oom(cmd);
    w->have_ref = 1;
    memset(&d, 0, sizeof d);
    d.m = w->shape.m;
    d.n = w->shape.n;
    d.k = w->shape.k;
    if ((s = luthier_sgemm_pack_b(ctx, &d, w->b, &w->pb)) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: luthier_sgemm_pack_b(%s): %s: %s\n", bench_prog,
                cmd, w->name, luthier_status_string(s), luthier_context_error(ctx));
        return BENCH_EXIT_FAIL;
    }
    return -1;
}

/* Step 4: the workloads (the GEMMs, then the synthetic one), the calls and the result slots.
   Returns -1 to continue, else an exit code. */
static int asym_workloads(const char *cmd, asym_run *a) {
    int i, rc;
    for (i = 0; i < ASYM_N_GEMM + 1; i++) {
        asym_workload *w = &a->ws[a->nw++];
        if (i < ASYM_N_GEMM) {
            if ((rc = asym_gemm_workload(cmd, a->ctx, w, i)) >= 0) return rc;
        } else {
            w->kind = ASYM_SYNTH;
            snprintf(w->name, sizeof w->name, "synthetic");
            w->out = bench_alloc_floats(ASYM_SYNTH_UNITS);
            w->expect = bench_alloc_floats(ASYM_SYNTH_UNITS);
            if (!w->out || !w->expect) return asym_oom(cmd);
            asym_synth_range(w->expect, 0, ASYM_SYNTH_UNITS, 0, 0);
        }
    }
    a->calls = (asym_call *)calloc((size_t)a->ns, sizeof *a->calls);
    a->res = (asym_result(*)[2])calloc((size_t)a->nw, sizeof *a->res);
    if (!a->calls || !a->res) return asym_oom(cmd);
    return -1;
}

/* The lines before the tables (clusters, workers, caller, load, timing), or the CSV header. */
static void asym_print_header(const asym_opts *o, const asym_run *a, int pinned) {
    char buf[1024];
    int i;
    if (o->csv) {
        printf("workload,strategy,big_share,ms,ms_median,reps,load,gflops,vs_equal,max_rel_err\n");
        return;
    }
    printf("luthier-bench asym: luthier v%d.%d.%d\n", LUTHIER_VERSION_MAJOR,
           LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH);
    printf("clusters '%s'%s:\n", a->spec, a->env && *a->env ? " (from $LUTHIER_CLUSTERS)" : "");
    if (luthier_topology_format(&a->topo, buf, sizeof buf) > 0) printf("%s", buf);
    for (i = 1; i < luthier_context_num_threads(a->ctx); i++) {
        int cl, cpu;
        const int ok = luthier_context_thread_info(a->ctx, i, &cl, &cpu);
        printf("worker slot %d: cluster %s, CPU %d%s\n", i, a->topo.clusters[cl].name, cpu,
               ok ? " (pinned)" : " (NOT pinned)");
    }
    printf("caller (slot 0): %s CPU %d\n", pinned ? "pinned to" : "could NOT be pinned to",
           a->topo.clusters[0].cpus[0]);
    printf("load: %s", o->no_load ? "none (--no-load)" : "busy loop pinned to CPU");
    if (!o->no_load)
        for (i = 0; i < a->nload; i++) printf("%s%d", i ? "," : " ", a->load_cpus[i]);
    printf("%s\n", o->no_load ? "" : " (stops by itself after --load-timeout)");
    printf("equal = ratios {big threads, little threads}; ratio_P = {P, 100-P}\n");
    printf("timing: >= %.3f s per strategy and workload in %d rounds alternating the "
           "strategies; ms = fastest repetition\n", o->pol.min_time, o->pol.rounds);
    fflush(stdout);
}

/* One phase: every workload under the strategies of the phase, unloaded (phase 0: the baseline
   strategies, or all of them with --no-load) or loaded (phase 1: the busy loops run meanwhile).
   Returns 0, 1 when a strategy failed or the busy loop expired, -1 when it could not start. */
static int asym_phase(const char *cmd, const asym_opts *o, asym_run *a, int phase) {
    const int loaded = phase == 1;
    int i, k, failed = 0;
    if (!o->csv)
        printf("\n=== %s ===\n", loaded ? "LOADED: little CPU shares its core with a busy loop"
                                      : o->no_load ? "UNLOADED (--no-load)"
                                                   : "BASELINE: no busy loop");
    if (loaded) {
        if (asym_load_start(a->loaders, a->nload, a->load_cpus, o->load_timeout) != 0) {
            asym_load_stop(a->loaders, a->nload);
            fprintf(stderr, "%s %s: error: cannot start a busy loop pinned to the little CPU(s)\n",
                    bench_prog, cmd);
            return -1;
        }
        a->load_running = 1;
    }
    for (i = 0; i < a->nw; i++) {
        if (asym_run_workload(cmd, &a->ws[i], a->st, a->ns, !loaded && !o->no_load, &o->pol, a->calls))
            failed = 1;
        asym_report(o->csv, &a->ws[i], a->calls, a->ns, loaded ? "busy" : "none", &a->res[i][phase]);
        for (k = 0; k < a->ns; k++) bench_sampler_free(&a->calls[k].smp);
    }
    if (loaded) {
        a->load_running = 0;
        if (asym_load_stop(a->loaders, a->nload)) {
            fprintf(stderr, "%s %s: WARNING: the busy loop reached --load-timeout %.0f s before "
                            "the end: the last loaded numbers were partly unloaded\n",
                    bench_prog, cmd, o->load_timeout);
            failed = 1;
        }
    }
    return failed;
}

/* The summary table (loaded phase, or unloaded with --no-load) and the geometric means. */
static void asym_print_summary(const asym_opts *o, const asym_run *a) {
    const int ph = o->no_load ? 0 : 1;
    bench_geomean ge, gd, gem, gdm;
    int i;
    memset(&ge, 0, sizeof ge);
    memset(&gd, 0, sizeof gd);
    memset(&gem, 0, sizeof gem);
    memset(&gdm, 0, sizeof gdm);
    printf("\n=== SUMMARY (%s; ms = fastest repetition) ===\n", o->no_load ? "unloaded" : "loaded");
    printf("%-16s %9s %9s %9s %9s %5s %10s %10s %9s", "workload", "equal", "dynamic",
           "big_only", "best", "big%", "best/equal", "best/dyn", "lit/big");
    printf(" | %5s %8s %8s", "big%", "b/eq", "b/dyn");
    if (!o->no_load) printf(" %11s", "equal(unl.)");
    printf("\n");
    for (i = 0; i < a->nw; i++) {
        const asym_result *x = &a->res[i][ph];
        if (x->best_share < 0) continue;
        printf("%-16s %9.3f %9.3f %9.3f %9.3f %5d %10.2f %10.2f %9.2f", a->ws[i].name,
               x->equal * 1e3, x->dynamic * 1e3, x->big_only * 1e3, x->best * 1e3,
               x->best_share, x->equal > 0.0 ? x->equal / x->best : 0.0,
               x->dynamic > 0.0 ? x->dynamic / x->best : 0.0,
               x->all_little > 0.0 ? x->all_big / x->all_little : 0.0);
        printf(" | %5d %8.2f %8.2f", x->bestm_share,
               x->equal_med > 0.0 ? x->equal_med / x->bestm : 0.0,
               x->dynamic_med > 0.0 ? x->dynamic_med / x->bestm : 0.0);
        if (!o->no_load) printf(" %11.3f", a->res[i][0].equal * 1e3);
        printf("\n");
        if (x->equal > 0.0) bench_geomean_add(&ge, x->equal / x->best);
        if (x->dynamic > 0.0) bench_geomean_add(&gd, x->dynamic / x->best);
        if (x->equal_med > 0.0) bench_geomean_add(&gem, x->equal_med / x->bestm);
        if (x->dynamic_med > 0.0) bench_geomean_add(&gdm, x->dynamic_med / x->bestm);
    }
    printf("geomean best/equal %.2fx, best/dynamic %.2fx (medians: %.2fx, %.2fx); targets: "
           ">= 1.3x and >= 1.0x\n", bench_geomean_get(&ge), bench_geomean_get(&gd),
           bench_geomean_get(&gem), bench_geomean_get(&gdm));
    printf("best = the ratio_P with the fastest repetition (left) or the lowest median (right,\n"
           "after '|'); lit/big = ratio_100 ms / ratio_0 ms (little's speed relative to big).\n"
           "The busy loop spins 100 us and pauses 100 us (at real-time priority when allowed),\n"
           "so the little CPU runs luthier's worker about half of every 200 us.\n");
}

/* Stops the busy loops if they still run, restores the caller's affinity, frees everything. */
static void asym_teardown(asym_run *a) {
    int i;
    if (a->load_running) asym_load_stop(a->loaders, a->nload);
    bench_restore_caller(&a->aff);
    for (i = 0; i < a->nw; i++) asym_workload_free(&a->ws[i]);
    if (a->calls)
        for (i = 0; i < a->ns; i++) bench_sampler_free(&a->calls[i].smp);
    free(a->calls);
    free(a->res);
    luthier_context_destroy(a->ctx_big);
    luthier_context_destroy(a->ctx);
}

static int cmd_asym(int argc, char **argv) {
    const char *cmd = argv[0];
    asym_opts o;
    asym_run a;
    int phase, r, pinned, rc;

    memset(&o, 0, sizeof o);
    o.little_cpu = -1;
    o.step = 10;
    o.load_timeout = 300.0;
    o.pol.min_time = 0.1;
    o.pol.rounds = 5;
    if ((rc = asym_parse(argc, argv, &o)) >= 0) return rc;
    memset(&a, 0, sizeof a);
    if ((rc = asym_clusters(cmd, &o, &a)) >= 0) return rc;
    if ((rc = asym_contexts(cmd, &a)) >= 0) goto done;
    asym_strategies(&a, o.step);
    if ((rc = asym_workloads(cmd, &a)) >= 0) goto done;

    /* 5. Measure, the caller on the first big CPU. Phase 0: unloaded (the baseline, or the whole
       table with --no-load); phase 1: loaded. */
    rc = BENCH_EXIT_OK;
    pinned = bench_pin_caller(a.topo.clusters[0].cpus[0], &a.aff);
    asym_print_header(&o, &a, pinned);
    for (phase = 0; phase < (o.no_load ? 1 : 2); phase++) {
        if ((r = asym_phase(cmd, &o, &a, phase)) < 0) {
            rc = BENCH_EXIT_FAIL;
            goto done;
        }
        if (r) rc = BENCH_EXIT_FAIL;
    }
    bench_restore_caller(&a.aff);
    if (!o.csv) asym_print_summary(&o, &a);

done:
    asym_teardown(&a);
    return rc;
}

/* ================================================================================================
   conv
   ================================================================================================ */

enum { CSET_RESNET18 = 1, CSET_MOBILENETV2 = 2, CSET_ALEXNET = 4, CSET_VGG16 = 8, CSET_RESNET50 = 32,
       CSET_CUSTOM = 16, CSET_ALL = 1 | 2 | 4 | 8 | 32 };

typedef struct conv_spec {
    char name[40];
    int64_t cin, h, w, cout, k, stride, pad, groups;
    int set;   /* CSET_* */
    int large; /* left out by --quick unless its set is named */
} conv_spec;

/* Batch 1, NHWC; name, Cin, H, W, Cout, k, stride, pad, groups. */
static const conv_spec conv_builtin[] = {
    {"resnet18_conv1", 3, 224, 224, 64, 7, 2, 3, 1, CSET_RESNET18, 0},
    {"resnet18_layer1", 64, 56, 56, 64, 3, 1, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer2_down", 64, 56, 56, 128, 3, 2, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer2", 128, 28, 28, 128, 3, 1, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer3_down", 128, 28, 28, 256, 3, 2, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer3", 256, 14, 14, 256, 3, 1, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer4_down", 256, 14, 14, 512, 3, 2, 1, 1, CSET_RESNET18, 0},
    {"resnet18_layer4", 512, 7, 7, 512, 3, 1, 1, 1, CSET_RESNET18, 0},
    {"resnet18_down1x1", 64, 56, 56, 128, 1, 2, 0, 1, CSET_RESNET18, 0},
    {"resnet50_1x1_64_256", 64, 56, 56, 256, 1, 1, 0, 1, CSET_RESNET50, 0},
    {"resnet50_1x1_256_64", 256, 56, 56, 64, 1, 1, 0, 1, CSET_RESNET50, 0},
    {"resnet50_1x1_1024_256", 1024, 14, 14, 256, 1, 1, 0, 1, CSET_RESNET50, 0},
    {"vgg16_conv1_1", 3, 224, 224, 64, 3, 1, 1, 1, CSET_VGG16, 0},
    {"vgg16_conv1_2", 64, 224, 224, 64, 3, 1, 1, 1, CSET_VGG16, 1},
    {"vgg16_conv3", 256, 56, 56, 256, 3, 1, 1, 1, CSET_VGG16, 1},
    {"vgg16_conv5", 512, 14, 14, 512, 3, 1, 1, 1, CSET_VGG16, 0},
    {"mbv2_dw112", 32, 112, 112, 32, 3, 1, 1, 32, CSET_MOBILENETV2, 0},
    {"mbv2_dw56_s2", 144, 56, 56, 144, 3, 2, 1, 144, CSET_MOBILENETV2, 0},
    {"mbv2_dw7_960", 960, 7, 7, 960, 3, 1, 1, 960, CSET_MOBILENETV2, 0},
    {"mbv2_pw112", 32, 112, 112, 16, 1, 1, 0, 1, CSET_MOBILENETV2, 0},
    {"alexnet_conv1", 3, 224, 224, 64, 11, 4, 2, 1, CSET_ALEXNET, 0},
    {"alexnet_conv2_g2", 96, 27, 27, 256, 5, 1, 2, 2, CSET_ALEXNET, 0},
};
#define CONV_N_BUILTIN ((int)(sizeof conv_builtin / sizeof conv_builtin[0]))

#define CONV_TOL 1e-3     /* max |diff| / max |reference| a result may show */
#define CONV_MAX_DIM 100000

static void usage_conv(FILE *out) {
    fprintf(out,
            "Usage: %s conv [options]\n"
            "Time of luthier's 2-D convolution (fp32, batch 1, NHWC, OIHW weights, bias) per layer\n"
            "for every valid (algorithm, microkernel) pair, and of oneDNN's convolution primitive\n"
            "in the same run when linked. The pairs are found through the API: every algorithm\n"
            "of luthier_conv_algorithm (AUTO excepted) x every kernel this CPU runs, kept when\n"
            "luthier_conv2d_algorithm_valid accepts it; pairs that resolve to the same kernel (an\n"
            "algorithm without a microkernel, e.g. depthwise: kernel '-') are timed once.\n"
            "oneDNN: dnnl_convolution_forward (forward_inference) with source, weights and\n"
            "destination in format 'any' (its blocked layouts), algorithm auto (direct if auto\n"
            "is refused), bias; inputs are reordered outside the timed region, which holds the\n"
            "primitive execution only. Every result is checked against a naive double-precision\n"
            "convolution on sampled output pixels (all channels; every pixel when oneDNN is not\n"
            "linked and the layer is small) and against oneDNN's whole output reordered to NHWC;\n"
            "a pair off by more than %.0e (relative to the largest |output|) is reported WRONG,\n"
            "gets no time, and the exit status is 1.\n"
            "\n"
            "Options:\n"
            "  --layers SET      all, resnet18, resnet50, mobilenetv2, alexnet or vgg16 (repeatable;\n"
            "                    default all, none when only --layer is given)\n"
            "  --layer NAME=Cin,H,W,Cout,k,stride,pad,groups   a custom layer (repeatable; square\n"
            "                    kernel, stride and padding; NAME= may be left out)\n"
            "  --algorithm A     all (default) or names (comma-separated) of: im2col, 1x1, ...\n"
            "                    as luthier_conv_algorithm_name gives them ('auto' times AUTO's pick)\n"
            "  --kernel K        all (default: every kernel this CPU runs), default (desc.kernel =\n"
            "                    NULL: the context's kernel; implicit_gemm then takes the first\n"
            "                    hybrid one), or names from '%s kernels' (comma-separated)\n"
            "  --threads N       threads for luthier (a context of N threads) and oneDNN\n"
            "                    (omp_set_num_threads(N)); default 1\n"
            "  --reps R          exactly R timed repetitions per contestant (default: auto)\n"
            "  --min-time S      auto repetitions: >= S seconds per contestant (default 0.2;\n"
            "                    0.05 with --quick)\n"
            "  --rounds N        rounds alternating the contestants of a layer (default 4; 2 with\n"
            "                    --quick)\n"
            "  --quick           leave out the large vgg16 layers (unless --layers vgg16 names them)\n"
            "                    and time shorter\n"
            "  --residual        every layer with a fused residual add: output = conv + bias +\n"
            "                    output (luthier: desc.accumulate; oneDNN: a sum post-op); the check\n"
            "                    loads a generated residual into the output first\n"
            "  --csv             one row per (layer, algorithm, kernel) with a header line; notes\n"
            "                    go to stderr\n"
            "  --int8            the int8 convolution vs the fp32 one per ResNet-50 / MobileNetV2\n"
            "                    layer instead: see '%s conv --int8 --help'\n"
            "\n"
            "Columns: ms = fastest repetition (and median); GF/s = 2*N*OH*OW*Cout*(Cin/groups)*k^2\n"
            "/ fastest; vs oneDNN = oneDNN ms / luthier ms (> 1: luthier faster); best '*' = the\n"
            "fastest pair of the layer, auto 'a' = the pair AUTO picks (desc.kernel NULL). The\n"
            "summary gives per layer the best pair and AUTO's pick against oneDNN, and their\n"
            "geometric means over the layers.\n"
            "CSV columns: layer,Cin,H,W,Cout,k,stride,pad,groups,threads,algorithm,kernel,\n"
            "luthier_ms,luthier_gflops,onednn_ms,onednn_gflops,best,luthier_ms_median,reps,\n"
            "vs_onednn,auto,max_rel_err,status,onednn_impl (oneDNN columns empty when not\n"
            "linked or refused; luthier_ms and luthier_gflops empty unless status is ok).\n",
            bench_prog, CONV_TOL, bench_prog, bench_prog);
}

typedef struct conv_opts {
    int sets;        /* CSET_* from --layers (0 = not given) */
    conv_spec *custom;
    int ncustom;
    int algos[LUTHIER_CONV_ALGORITHM_COUNT]; /* selected algorithms */
    int nalgos;
    const char *kernel_arg; /* NULL = all */
    int threads, lthreads;
    int quick, csv, residual;
    int min_time_set, rounds_set;
    bench_policy policy;
} conv_opts;

/* "[NAME=]Cin,H,W,Cout,k,stride,pad,groups" -> spec. Returns 0, or -1 (syntax/range), -2
   (inconsistent shape, message in why). */
static int conv_parse_layer(const char *s, conv_spec *out, char *why, size_t cap) {
    const char *eq = strchr(s, '='), *p = eq ? eq + 1 : s;
    char buf[160], *tok, *save = NULL;
    int64_t v[8];
    int n = 0;
    memset(out, 0, sizeof *out);
    if (strlen(p) >= sizeof buf) return -1;
    strcpy(buf, p);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == 8 || bench_parse_i64(tok, n == 6 ? 0 : 1, CONV_MAX_DIM, &v[n])) return -1;
        n++;
    }
    if (n != 8) return -1;
    out->cin = v[0]; out->h = v[1]; out->w = v[2]; out->cout = v[3]; out->k = v[4];
    out->stride = v[5]; out->pad = v[6]; out->groups = v[7];
    if (out->cin % out->groups || out->cout % out->groups) {
        snprintf(why, cap, "groups %lld must divide Cin %lld and Cout %lld", (long long)v[7],
                 (long long)v[0], (long long)v[3]);
        return -2;
    }
    if (out->h + 2 * out->pad < out->k || out->w + 2 * out->pad < out->k) {
        snprintf(why, cap, "the %lldx%lld kernel is larger than the padded input", (long long)v[4],
                 (long long)v[4]);
        return -2;
    }
    if ((double)out->h * out->w * out->cin > 1e9 || (double)out->h * out->w * out->cout > 1e9 ||
        (double)out->k * out->k * out->cin * out->cout / out->groups > 1e9) {
        snprintf(why, cap, "a buffer would exceed 10^9 elements");
        return -2;
    }
    if (eq) {
        const size_t len = (size_t)(eq - s);
        if (len == 0 || len >= sizeof out->name) return -1;
        memcpy(out->name, s, len);
        out->name[len] = 0;
    } else {
        snprintf(out->name, sizeof out->name, "c%lld_%lldx%lld_o%lld_k%lld_s%lld_p%lld_g%lld",
                 (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3],
                 (long long)v[4], (long long)v[5], (long long)v[6], (long long)v[7]);
    }
    out->set = CSET_CUSTOM;
    return 0;
}

/* Parses --algorithm's list into o->algos. Returns 0 or -1. */
static int conv_parse_algos(const char *cmd, const char *arg, conv_opts *o) {
    char buf[256], *tok, *save = NULL;
    int a;
    o->nalgos = 0;
    if (strcmp(arg, "all") == 0) {
        for (a = 1; a < LUTHIER_CONV_ALGORITHM_COUNT; a++) o->algos[o->nalgos++] = a;
        return 0;
    }
    if (strlen(arg) >= sizeof buf || !*arg) {
        bench_usage_error(cmd, "--algorithm wants 'all' or algorithm names");
        return -1;
    }
    strcpy(buf, arg);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int j, dup = 0;
        for (a = 0; a < LUTHIER_CONV_ALGORITHM_COUNT; a++)
            if (strcmp(tok, luthier_conv_algorithm_name((luthier_conv_algorithm)a)) == 0) break;
        if (a == LUTHIER_CONV_ALGORITHM_COUNT) {
            char names[256];
            size_t len = 0;
            names[0] = 0;
            for (j = 0; j < LUTHIER_CONV_ALGORITHM_COUNT && len < sizeof names; j++)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", j ? ", " : "",
                                        luthier_conv_algorithm_name((luthier_conv_algorithm)j));
            bench_usage_error(cmd, "no algorithm named '%s' (known: %s, or all)", tok, names);
            return -1;
        }
        for (j = 0; j < o->nalgos; j++) dup |= o->algos[j] == a;
        if (!dup) o->algos[o->nalgos++] = a;
    }
    return 0;
}

/* Returns -1 to continue, else an exit code. */
static int conv_parse(int argc, char **argv, conv_opts *o) {
    const char *cmd = argv[0], *val;
    int i, r;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (bench_is_help(arg)) {
            usage_conv(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--layers", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (strcmp(val, "all") == 0) o->sets |= CSET_ALL;
            else if (strcmp(val, "resnet18") == 0) o->sets |= CSET_RESNET18;
            else if (strcmp(val, "mobilenetv2") == 0) o->sets |= CSET_MOBILENETV2;
            else if (strcmp(val, "alexnet") == 0) o->sets |= CSET_ALEXNET;
            else if (strcmp(val, "vgg16") == 0) o->sets |= CSET_VGG16;
            else if (strcmp(val, "resnet50") == 0) o->sets |= CSET_RESNET50;
            else {
                bench_usage_error(cmd, "--layers wants all, resnet18, resnet50, mobilenetv2, "
                                       "alexnet or vgg16, not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--layer", &val)) != 0) {
            conv_spec sp, *ns;
            char why[160];
            if (r < 0) return BENCH_EXIT_USAGE;
            if ((r = conv_parse_layer(val, &sp, why, sizeof why)) != 0) {
                if (r == -2) bench_usage_error(cmd, "--layer %s: %s", val, why);
                else
                    bench_usage_error(cmd, "--layer wants [NAME=]Cin,H,W,Cout,k,stride,pad,groups "
                                           "(integers in [1, %d], pad >= 0), not '%s'",
                                      CONV_MAX_DIM, val);
                return BENCH_EXIT_USAGE;
            }
            ns = (conv_spec *)realloc(o->custom, (size_t)(o->ncustom + 1) * sizeof *ns);
            if (!ns) {
                fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
                return BENCH_EXIT_FAIL;
            }
            o->custom = ns;
            o->custom[o->ncustom++] = sp;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--algorithm", &val)) != 0) {
            if (r < 0 || conv_parse_algos(cmd, val, o)) return BENCH_EXIT_USAGE;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--kernel", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (!*val) {
                bench_usage_error(cmd, "--kernel needs a name, 'all' or 'default'");
                return BENCH_EXIT_USAGE;
            }
            o->kernel_arg = val;
        } else if ((r = bench_parse_run_option(argc, argv, &i, cmd, &o->policy, &o->threads,
                                               &o->rounds_set, &o->min_time_set)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
        } else if ((r = bench_opt_flag(arg, cmd, "--quick")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->quick = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--residual")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->residual = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->csv = 1;
        } else {
            bench_usage_error(cmd, "%s '%s'", arg[0] == '-' ? "unknown option" : "unexpected argument", arg);
            return BENCH_EXIT_USAGE;
        }
    }
    return -1;
}

/* One timed luthier pair. */
typedef struct conv_call {
    luthier_context *ctx;
    luthier_conv2d_layer *layer;
    const float *in;
    float *out;
    luthier_status status;
} conv_call;

static int conv_call_run(void *arg) {
    conv_call *c = (conv_call *)arg;
    c->status = luthier_conv2d_run(c->ctx, c->layer, c->in, c->out);
    return c->status == LUTHIER_STATUS_OK ? 0 : -1;
}

/* A contestant of a layer: a luthier (algorithm, kernel) pair or oneDNN (algo < 0). */
typedef struct conv_contestant {
    int algo;
    char kernel[64];    /* full kernel name, "" when the algorithm has none */
    conv_call call;
    int active;         /* checked and still being timed */
    int is_auto;        /* the pair AUTO picks */
    const char *status; /* "ok", "WRONG", "ERROR", "off" */
    double err;
    bench_sampler smp;
    bench_stats st;
} conv_contestant;

/* Exact (double) reference on sampled output pixels, all channels. */
typedef struct conv_ref {
    int64_t *pix; /* linear output pixel indices (oh * OW + ow), sorted */
    int64_t npix;
    double *out;  /* npix x cout */
    double maxabs;
} conv_ref;

/* Pixels: all when all_pix, else the first 4 and the last 16 (edge tiles of MR <= 16 along
   the pixel dimension), the corners and edge midpoints, and 12 pseudo-random ones. */
static int conv_ref_build(conv_ref *r, const conv_spec *s, int64_t oh, int64_t ow,
                          const float *in, const float *wt, const float *bias, int all_pix) {
    const int64_t npx = oh * ow, cig = s->cin / s->groups, cog = s->cout / s->groups;
    int64_t i, j, cnt = 0;
    uint64_t seed = 777;
    memset(r, 0, sizeof *r);
    if (all_pix || npx <= 48) {
        if (!(r->pix = (int64_t *)malloc((size_t)npx * sizeof *r->pix))) return -1;
        for (i = 0; i < npx; i++) r->pix[cnt++] = i;
    } else {
        const int64_t extra[9] = {0, ow - 1, (oh - 1) * ow, npx - 1, (oh / 2) * ow + ow / 2,
                                  ow / 2, (oh / 2) * ow, (oh - 1) * ow + ow / 2,
                                  (oh / 2) * ow + ow - 1};
        if (!(r->pix = (int64_t *)malloc(48 * sizeof *r->pix))) return -1;
        for (i = 0; i < 4; i++) r->pix[cnt++] = i;
        for (i = npx - 16; i < npx; i++) r->pix[cnt++] = i;
        for (i = 0; i < 9; i++) r->pix[cnt++] = extra[i];
        for (i = 0; i < 12; i++) r->pix[cnt++] = (int64_t)(bench_rand_u64(&seed) % (uint64_t)npx);
        qsort(r->pix, (size_t)cnt, sizeof *r->pix, cmp_i64);
        for (i = j = 0; i < cnt; i++)
            if (j == 0 || r->pix[i] != r->pix[j - 1]) r->pix[j++] = r->pix[i];
        cnt = j;
    }
    r->npix = cnt;
    if (!(r->out = (double *)malloc((size_t)cnt * (size_t)s->cout * sizeof *r->out))) {
        free(r->pix);
        r->pix = NULL;
        return -1;
    }
    for (i = 0; i < cnt; i++) {
        const int64_t y = r->pix[i] / ow, x = r->pix[i] % ow;
        int64_t co;
        for (co = 0; co < s->cout; co++) {
            const int64_t g = co / cog;
            double acc = bias[co];
            int64_t kh, kw, ci;
            for (kh = 0; kh < s->k; kh++) {
                const int64_t iy = y * s->stride - s->pad + kh;
                if (iy < 0 || iy >= s->h) continue;
                for (kw = 0; kw < s->k; kw++) {
                    const int64_t ix = x * s->stride - s->pad + kw;
                    const float *ip, *wp;
                    if (ix < 0 || ix >= s->w) continue;
                    ip = in + (iy * s->w + ix) * s->cin + g * cig;
                    wp = wt + ((co * cig) * s->k + kh) * s->k + kw;
                    for (ci = 0; ci < cig; ci++)
                        acc += (double)ip[ci] * (double)wp[ci * s->k * s->k];
                }
            }
            r->out[i * s->cout + co] = acc;
            if (fabs(acc) > r->maxabs) r->maxabs = fabs(acc);
        }
    }
    return 0;
}

static void conv_ref_free(conv_ref *r) {
    free(r->pix);
    free(r->out);
    memset(r, 0, sizeof *r);
}

/* max |out - ref| / max |ref| on the reference pixels; +inf on NaN/inf. */
static double conv_err_ref(const conv_ref *r, const float *out, int64_t cout) {
    const double denom = r->maxabs > 1e-30 ? r->maxabs : 1e-30;
    double worst = 0.0;
    int64_t i, c;
    for (i = 0; i < r->npix; i++) {
        const float *o = out + r->pix[i] * cout;
        const double *e = r->out + i * cout;
        for (c = 0; c < cout; c++) {
            const double d = fabs((double)o[c] - e[c]);
            if (!(d <= worst)) worst = d;
        }
    }
    return worst == worst ? worst / denom : INFINITY;
}

/* Per-layer results kept for the summary. */
typedef struct conv_result {
    char name[40];
    char best_algo[24], best_kernel[64], auto_algo[24], auto_kernel[64];
    double best_ms, auto_ms, dnnl_ms;
} conv_result;

static const char *conv_kernel_label(const char *k, int csv) {
    return *k ? (csv ? k : short_kernel_name(k)) : (csv ? "" : "-");
}

/* Builds the contestants of one layer (oneDNN first). Returns the count, or -1 on OOM. */
static int conv_collect(const conv_opts *o, const conv_spec *s, luthier_context *ctx,
                        const luthier_conv2d_desc *base, const int *kernels, int nk,
                        const float *wt, const float *bias, conv_contestant **out, int *failed) {
    const int cap = 1 + o->nalgos * (nk > 0 ? nk : 1);
    conv_contestant *ct = (conv_contestant *)calloc((size_t)cap, sizeof *ct);
    int n = 1, ai, ki;
    *out = ct;
    if (!ct) return -1;
    ct[0].algo = -1;
    ct[0].status = "off";
    for (ai = 0; ai < o->nalgos; ai++) {
        const int algo = o->algos[ai];
        const int explicit_algo = o->nalgos < LUTHIER_CONV_ALGORITHM_COUNT - 1;
        for (ki = 0; ki < (nk > 0 ? nk : 1); ki++) {
            luthier_conv2d_desc d = *base;
            luthier_kernel_info kinfo;
            luthier_conv2d_info info;
            luthier_conv2d_layer *layer = NULL;
            luthier_status st;
            int j, dup = 0;
            d.algorithm = (luthier_conv_algorithm)algo;
            d.kernel = NULL;
            if (nk > 0 && gemm_kernel_get(kernels[ki], &kinfo) == LUTHIER_STATUS_OK)
                d.kernel = kinfo.name;
            if ((st = luthier_conv2d_algorithm_valid(ctx, &d, d.algorithm)) != LUTHIER_STATUS_OK) {
                if (explicit_algo && (nk <= 1 || ki == 0))
                    fprintf(stderr, "note: %s: %s%s%s not valid: %s\n", s->name,
                            luthier_conv_algorithm_name(d.algorithm), d.kernel ? " with " : "",
                            d.kernel ? short_kernel_name(d.kernel) : "", luthier_context_error(ctx));
                continue;
            }
            if ((st = luthier_conv2d_create(ctx, &d, wt, bias, &layer)) != LUTHIER_STATUS_OK) {
                fprintf(stderr, "ERROR: %s: luthier_conv2d_create(%s, %s) failed although "
                                "luthier_conv2d_algorithm_valid accepted it: %s: %s\n",
                        s->name, luthier_conv_algorithm_name(d.algorithm),
                        d.kernel ? d.kernel : "default kernel", luthier_status_string(st),
                        luthier_context_error(ctx));
                ct[n].algo = algo;
                snprintf(ct[n].kernel, sizeof ct[n].kernel, "%s", d.kernel ? d.kernel : "");
                ct[n].status = "ERROR";
                n++;
                *failed = 1;
                continue;
            }
            if (luthier_conv2d_get_info(layer, &info) != LUTHIER_STATUS_OK) memset(&info, 0, sizeof info);
            if (!info.kernel) info.kernel = "";
            if (info.algorithm != (luthier_conv_algorithm)algo)
                fprintf(stderr, "WARNING: %s: created %s but luthier_conv2d_get_info says %s\n",
                        s->name, luthier_conv_algorithm_name((luthier_conv_algorithm)algo),
                        luthier_conv_algorithm_name(info.algorithm));
            if (d.kernel && *info.kernel && strcmp(info.kernel, d.kernel) != 0)
                fprintf(stderr, "WARNING: %s: %s asked for kernel %s but got %s\n", s->name,
                        luthier_conv_algorithm_name(d.algorithm), d.kernel, info.kernel);
            for (j = 1; j < n; j++)
                dup |= ct[j].algo == algo && strcmp(ct[j].kernel, info.kernel) == 0;
            if (dup) { /* e.g. an algorithm without a microkernel */
                luthier_conv2d_destroy(layer);
                continue;
            }
            ct[n].algo = algo;
            snprintf(ct[n].kernel, sizeof ct[n].kernel, "%s", info.kernel);
            ct[n].call.ctx = ctx;
            ct[n].call.layer = layer;
            ct[n].status = "ok";
            n++;
        }
    }
    return n;
}

/* Before a checked call: the output holds the residual (--residual), else NaN (a value never
   written shows). After it, conv_unresid takes the residual off again, so that the check
   compares the convolution alone with the reference. */
static void conv_prefill(float *out, const float *resid, size_t n) {
    if (resid) memcpy(out, resid, n * sizeof(float));
    else bench_fill_value(out, n, NAN);
}

static void conv_unresid(float *out, const float *resid, size_t n) {
    size_t q;
    for (q = 0; resid && q < n; q++) out[q] -= resid[q];
}

/* The tensors and contestants of one layer (conv_run_layer). */
typedef struct conv_case {
    const conv_opts *o;
    const conv_spec *s;
    luthier_context *ctx;
    luthier_conv2d_desc base; /* the layer; each pair sets its algorithm and kernel */
    int64_t oh, ow;
    double flops;
    size_t nin, nout, nw;
    float *in, *wt, *bias, *out, *dout, *resid; /* dout: oneDNN's output in NHWC */
    bench_dnnl_conv dn;
    int have_dnnl;
    conv_ref ref;
    conv_contestant *ct; /* oneDNN, then the luthier pairs */
    int n;
    int failed;          /* a luthier pair failed or was wrong, or out of memory */
} conv_case;

/* The layer's descriptor (batch 1, NHWC, --residual: accumulate) and output size. Returns 0,
   or 1 when luthier refuses the shape (said on stderr). */
static int conv_case_desc(conv_case *c) {
    const conv_spec *s = c->s;
    luthier_conv2d_desc *base = &c->base;
    luthier_status st;
    base->batch = 1;
    base->in_channels = s->cin;
    base->in_h = s->h;
    base->in_w = s->w;
    base->out_channels = s->cout;
    base->kernel_h = base->kernel_w = s->k;
    base->stride_h = base->stride_w = s->stride;
    base->pad_top = base->pad_left = base->pad_bottom = base->pad_right = s->pad;
    base->groups = s->groups;
    base->layout = LUTHIER_LAYOUT_NHWC;
    base->accumulate = c->o->residual;
    if ((st = luthier_conv2d_output_size(base, &c->oh, &c->ow)) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "ERROR: %s: luthier_conv2d_output_size: %s\n", s->name, luthier_status_string(st));
        return 1;
    }
    c->flops = 2.0 * (double)c->oh * (double)c->ow * (double)s->cout * (double)(s->cin / s->groups) *
               (double)(s->k * s->k);
    return 0;
}

/* The tensors (filled from the layer's index li), oneDNN's primitive, the exact reference and
   the contestants. Returns 0, or 1 when out of memory (said on stderr). */
static int conv_case_setup(conv_case *c, int li, const int *kernels, int nk) {
    const conv_spec *s = c->s;
    c->nin = (size_t)(s->h * s->w * s->cin);
    c->nout = (size_t)(c->oh * c->ow * s->cout);
    c->nw = (size_t)(s->cout * (s->cin / s->groups) * s->k * s->k);
    c->in = bench_alloc_floats(c->nin);
    c->wt = bench_alloc_floats(c->nw);
    c->bias = bench_alloc_floats((size_t)s->cout);
    c->out = bench_alloc_floats(c->nout);
    c->dout = bench_alloc_floats(c->nout);
    if (c->o->residual) c->resid = bench_alloc_floats(c->nout);
    if (!c->in || !c->wt || !c->bias || !c->out || !c->dout || (c->o->residual && !c->resid)) {
        fprintf(stderr, "ERROR: %s: cannot allocate the tensors\n", s->name);
        return 1;
    }
    bench_fill_uniform(c->in, c->nin, 0x3000u + (uint64_t)li);
    bench_fill_uniform(c->wt, c->nw, 0x4000u + (uint64_t)li);
    bench_fill_uniform(c->bias, (size_t)s->cout, 0x5000u + (uint64_t)li);
    if (c->resid) bench_fill_uniform(c->resid, c->nout, 0x6000u + (uint64_t)li);

    if (bench_anchor_linked(BENCH_ANCHOR_DNNL)) {
        if (bench_dnnl_conv_setup(&c->dn, s->cin, s->h, s->w, s->cout, s->k, s->stride, s->pad,
                                  s->groups, c->oh, c->ow, c->in, c->wt, c->bias, c->o->residual, 0) != 0)
            fprintf(stderr, "warning: %s: %s; its columns stay empty\n", s->name, c->dn.error);
        else c->have_dnnl = 1;
    }
    if (conv_ref_build(&c->ref, s, c->oh, c->ow, c->in, c->wt, c->bias, !c->have_dnnl && c->flops <= 5e8) != 0) {
        fprintf(stderr, "ERROR: %s: cannot allocate the reference\n", s->name);
        return 1;
    }
    if ((c->n = conv_collect(c->o, s, c->ctx, &c->base, kernels, nk, c->wt, c->bias, &c->ct, &c->failed)) < 0) {
        fprintf(stderr, "ERROR: %s: out of memory\n", s->name);
        return 1;
    }
    return 0;
}

/* Marks the pair AUTO picks with the default kernel (is_auto) and names it in res. */
static void conv_mark_auto(conv_case *c, conv_result *res) {
    luthier_conv2d_desc d = c->base;
    luthier_conv2d_layer *layer = NULL;
    luthier_conv2d_info info;
    int i;
    if (luthier_conv2d_create(c->ctx, &d, c->wt, c->bias, &layer) == LUTHIER_STATUS_OK &&
        luthier_conv2d_get_info(layer, &info) == LUTHIER_STATUS_OK) {
        for (i = 1; i < c->n; i++)
            c->ct[i].is_auto = c->ct[i].algo == (int)info.algorithm &&
                               strcmp(c->ct[i].kernel, info.kernel ? info.kernel : "") == 0;
        snprintf(res->auto_algo, sizeof res->auto_algo, "%s",
                 luthier_conv_algorithm_name(info.algorithm));
        snprintf(res->auto_kernel, sizeof res->auto_kernel, "%s", info.kernel ? info.kernel : "");
    } else {
        fprintf(stderr, "ERROR: %s: luthier_conv2d_create with AUTO failed: %s\n", c->s->name,
                luthier_context_error(c->ctx));
        c->failed = 1;
    }
    luthier_conv2d_destroy(layer);
}

/* 1. Correctness of oneDNN: one untimed call into a NaN-filled output, reordered to NHWC into
   dout; timed only when it matches the reference. */
static void conv_check_dnnl(conv_case *c) {
    const conv_spec *s = c->s;
    conv_contestant *x = &c->ct[0];
    double t0;
    int rc;
    if (!c->have_dnnl) return;
    rc = c->resid ? bench_dnnl_conv_set_dst(&c->dn, s->cout, c->oh, c->ow, c->resid) : 0;
    bench_fill_value(c->dout, c->nout, NAN);
    t0 = bench_now();
    if (rc == 0) rc = bench_dnnl_conv_run(&c->dn);
    x->smp.last = bench_now() - t0;
    settle_after_anchor(BENCH_ANCHOR_DNNL, c->o->threads);
    if (rc == 0) rc = bench_dnnl_conv_output(&c->dn, s->cout, c->oh, c->ow, c->dout);
    conv_unresid(c->dout, c->resid, c->nout);
    if (rc != 0) {
        fprintf(stderr, "warning: %s: oneDNN execution failed; its columns stay empty\n", s->name);
    } else if (!((x->err = conv_err_ref(&c->ref, c->dout, s->cout)) <= CONV_TOL)) {
        fprintf(stderr, "WARNING: %s: oneDNN disagrees with the reference (max relative error "
                        "%.3g); its columns stay empty\n", s->name, x->err);
    } else {
        x->active = 1;
        x->status = "ok";
    }
}

/* 1. Correctness of a luthier pair: one untimed call, compared with the reference and with
   oneDNN's whole output; timed only when right. */
static void conv_check_pair(conv_case *c, conv_contestant *x) {
    const conv_spec *s = c->s;
    double t0;
    int rc;
    if (!x->call.layer) return;
    x->call.in = c->in;
    x->call.out = c->out;
    conv_prefill(c->out, c->resid, c->nout);
    t0 = bench_now();
    rc = conv_call_run(&x->call);
    x->smp.last = bench_now() - t0;
    settle_after_luthier(-1, c->o->lthreads);
    conv_unresid(c->out, c->resid, c->nout);
    if (rc != 0) {
        fprintf(stderr, "ERROR: %s: luthier_conv2d_run(%s, %s): %s: %s\n", s->name,
                luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo),
                conv_kernel_label(x->kernel, 0), luthier_status_string(x->call.status),
                luthier_context_error(c->ctx));
        x->status = "ERROR";
        return;
    }
    x->err = conv_err_ref(&c->ref, c->out, s->cout);
    if (c->ct[0].active) {
        const double e = gemm_err_full(c->out, c->dout, c->nout);
        if (!(e <= x->err)) x->err = e;
    }
    if (!(x->err <= CONV_TOL)) {
        fprintf(stderr, "ERROR: %s (%lld,%lld,%lld,%lld,k%lld,s%lld,p%lld,g%lld): %s with %s "
                        "is WRONG: max relative error %.3g > %.0e; no time reported\n",
                s->name, (long long)s->cin, (long long)s->h, (long long)s->w,
                (long long)s->cout, (long long)s->k, (long long)s->stride, (long long)s->pad,
                (long long)s->groups, luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo),
                conv_kernel_label(x->kernel, 0), x->err, CONV_TOL);
        x->status = "WRONG";
        return;
    }
    x->active = 1;
}

/* A luthier pair still right after its timed calls? (With --residual they accumulated onto
   the output: one checked call more.) A wrong one is marked WRONG and timed no more. */
static void conv_recheck(conv_case *c, conv_contestant *x) {
    double e;
    int rc = 0;
    if (c->resid) {
        conv_prefill(c->out, c->resid, c->nout);
        rc = conv_call_run(&x->call);
        conv_unresid(c->out, c->resid, c->nout);
    }
    e = rc == 0 ? conv_err_ref(&c->ref, c->out, c->s->cout) : HUGE_VAL;
    if (!(e <= CONV_TOL)) {
        fprintf(stderr, "ERROR: %s: %s with %s is WRONG after repeated calls (max "
                        "relative error %.3g)\n", c->s->name,
                luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo),
                conv_kernel_label(x->kernel, 0), e);
        x->active = 0;
        x->status = "WRONG";
        x->err = e;
    }
}

/* 2. Timing in alternating rounds; each pair is re-checked after its round. */
static void conv_time_rounds(conv_case *c) {
    const conv_opts *o = c->o;
    int i, r, rc;
    for (r = 0; r < o->policy.rounds; r++) {
        for (i = 0; i < c->n; i++) {
            conv_contestant *x = &c->ct[(r % 2) ? c->n - 1 - i : i];
            if (!x->active) continue;
            if (x->algo < 0) {
                rc = bench_run_round(bench_dnnl_conv_run, &c->dn, &o->policy, r, &x->smp);
                settle_after_anchor(BENCH_ANCHOR_DNNL, o->threads);
            } else {
                rc = bench_run_round(conv_call_run, &x->call, &o->policy, r, &x->smp);
                settle_after_luthier(-1, o->lthreads);
            }
            if (rc != 0) {
                fprintf(stderr, "%s: %s: %s failed while timing: %s\n",
                        x->algo >= 0 ? "ERROR" : "warning", c->s->name,
                        x->algo >= 0 ? luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo)
                                     : "oneDNN",
                        rc == -100 ? "out of memory" : x->algo >= 0 ? luthier_context_error(c->ctx) : "");
                x->active = 0;
                x->status = x->algo >= 0 ? "ERROR" : "off";
                continue;
            }
            if (x->algo >= 0) conv_recheck(c, x);
        }
    }
}

/* 3. Statistics; the fastest pair, AUTO's time and oneDNN's into res. Returns the fastest
   pair's index (-1: none); a pair that is not "ok" sets failed. */
static int conv_layer_results(conv_case *c, conv_result *res) {
    conv_contestant *ct = c->ct;
    int i, best = -1;
    for (i = 0; i < c->n; i++) {
        conv_contestant *x = &ct[i];
        if (x->active) x->st = bench_summarize(x->smp.t, x->smp.n);
        if (i > 0 && strcmp(x->status, "ok") != 0) c->failed = 1;
        if (i > 0 && x->active && x->st.reps > 0 && (best < 0 || x->st.min < ct[best].st.min)) best = i;
    }
    res->dnnl_ms = ct[0].active ? ct[0].st.min * 1e3 : 0.0;
    if (best > 0) {
        res->best_ms = ct[best].st.min * 1e3;
        snprintf(res->best_algo, sizeof res->best_algo, "%s",
                 luthier_conv_algorithm_name((luthier_conv_algorithm)ct[best].algo));
        snprintf(res->best_kernel, sizeof res->best_kernel, "%s", ct[best].kernel);
    }
    for (i = 1; i < c->n; i++)
        if (ct[i].is_auto && ct[i].active) res->auto_ms = ct[i].st.min * 1e3;
    return best;
}

/* The layer's rows: a title line, one row per pair and oneDNN's (table), or CSV rows. */
static void conv_print_layer(const conv_case *c, const conv_result *res, int best) {
    const conv_opts *o = c->o;
    const conv_spec *s = c->s;
    const conv_contestant *ct = c->ct;
    const double flops = c->flops;
    int i;
    if (!o->csv) {
        printf("%s: %lldx%lldx%lld -> %lldx%lldx%lld (HxWxC), k%lld s%lld p%lld g%lld, %.3f GFLOP; "
               "oneDNN %s\n", s->name, (long long)s->h, (long long)s->w, (long long)s->cin,
               (long long)c->oh, (long long)c->ow, (long long)s->cout, (long long)s->k,
               (long long)s->stride, (long long)s->pad, (long long)s->groups, flops * 1e-9,
               ct[0].active ? c->dn.impl : c->have_dnnl ? "(wrong or failed)" : "not linked/refused");
        if (ct[0].active && strcmp(c->dn.alg, "auto") != 0)
            printf("  (oneDNN algorithm %s: auto refused)\n", c->dn.alg);
    }
    for (i = 1; i < c->n; i++) {
        const conv_contestant *x = &ct[i];
        const int ok = x->active && x->st.reps > 0;
        const double ms = ok ? x->st.min * 1e3 : 0.0, gf = ok ? flops / x->st.min * 1e-9 : 0.0;
        const double dms = res->dnnl_ms, dgf = dms > 0.0 ? flops / dms * 1e-6 : 0.0;
        char b[8][48];
        if (o->csv) {
            printf("%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%d,%s,%s,%s,%s,%s,%s,%d,%s,%ld,%s,%d,"
                   "%.3g,%s,%s\n", s->name, (long long)s->cin, (long long)s->h, (long long)s->w,
                   (long long)s->cout, (long long)s->k, (long long)s->stride, (long long)s->pad,
                   (long long)s->groups, o->lthreads,
                   luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo), x->kernel,
                   csv_cell(b[0], 48, ms, 4, ok), csv_cell(b[1], 48, gf, 2, ok),
                   csv_cell(b[2], 48, dms, 4, dms > 0.0), csv_cell(b[3], 48, dgf, 2, dgf > 0.0),
                   i == best, csv_cell(b[4], 48, x->st.median * 1e3, 4, ok), x->st.reps,
                   csv_cell(b[5], 48, ok && dms > 0.0 ? dms / ms : 0.0, 3, ok && dms > 0.0),
                   x->is_auto, x->err, x->status, ct[0].active ? c->dn.impl : "");
        } else {
            printf("  %-14s %-24s %9s %9s %8s %9s %8s %-4s\n",
                   luthier_conv_algorithm_name((luthier_conv_algorithm)x->algo),
                   conv_kernel_label(x->kernel, 0),
                   ok ? cell(b[0], 48, ms, ms_decimals(x->st.min), 1) : x->status,
                   cell(b[1], 48, x->st.median * 1e3, ms_decimals(x->st.median), ok),
                   cell(b[2], 48, gf, 1, ok), cell(b[3], 48, dms, ms_decimals(dms * 1e-3), dms > 0.0),
                   cell(b[4], 48, ok && dms > 0.0 ? dms / ms : 0.0, 2, ok && dms > 0.0),
                   i == best ? (x->is_auto ? "* a" : "*") : x->is_auto ? "  a" : "");
        }
    }
    if (!o->csv) {
        if (c->n <= 1) printf("  (no valid algorithm/kernel pair selected)\n");
        if (ct[0].active) {
            char b[3][48];
            printf("  %-14s %-24s %9s %9s %8s\n", "oneDNN", c->dn.impl,
                   cell(b[0], 48, res->dnnl_ms, ms_decimals(ct[0].st.min), 1),
                   cell(b[1], 48, ct[0].st.median * 1e3, ms_decimals(ct[0].st.median), 1),
                   cell(b[2], 48, flops / ct[0].st.min * 1e-9, 1, 1));
        }
    }
    fflush(stdout);
}

/* Frees what conv_case_setup and the contestants allocated. */
static void conv_case_free(conv_case *c) {
    int i;
    if (c->ct)
        for (i = 0; i < c->n; i++) {
            luthier_conv2d_destroy(c->ct[i].call.layer);
            bench_sampler_free(&c->ct[i].smp);
        }
    free(c->ct);
    conv_ref_free(&c->ref);
    bench_dnnl_conv_destroy(&c->dn);
    free(c->in);
    free(c->wt);
    free(c->bias);
    free(c->out);
    free(c->dout);
    free(c->resid);
}

/* Checks and times every contestant of one layer, prints its rows. Returns 0 when every
   luthier pair was right, 1 otherwise. */
static int conv_run_layer(const conv_opts *o, const conv_spec *s, int li, luthier_context *ctx,
                          const int *kernels, int nk, conv_result *res) {
    conv_case c;
    int i, best;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.s = s;
    c.ctx = ctx;
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", s->name);
    if (conv_case_desc(&c) != 0) return 1;
    if (conv_case_setup(&c, li, kernels, nk) != 0) {
        c.failed = 1;
    } else {
        conv_mark_auto(&c, res);
        conv_check_dnnl(&c);
        for (i = 1; i < c.n; i++) conv_check_pair(&c, &c.ct[i]);
        conv_time_rounds(&c);
        best = conv_layer_results(&c, res);
        conv_print_layer(&c, res, best);
    }
    conv_case_free(&c);
    return c.failed;
}

static void conv_table_header(void) {
    printf("  %-14s %-24s %9s %9s %8s %9s %8s %-4s\n", "algorithm", "kernel", "ms(min)",
           "ms(med)", "GF/s", "oneDNN ms", "vs oneDNN", "best");
}

/* Per-layer summary and the geometric means over the layers. */
static void conv_print_summary(FILE *out, const conv_result *res, int nres, int threads) {
    bench_geomean gb, ga, gbest_auto;
    char b[4][48];
    int i, auto_is_best = 0, nauto = 0;
    memset(&gb, 0, sizeof gb);
    memset(&ga, 0, sizeof ga);
    memset(&gbest_auto, 0, sizeof gbest_auto);
    fprintf(out, "\nsummary (%d thread%s; vs oneDNN = oneDNN ms / luthier ms, > 1: luthier faster)\n",
            threads, threads > 1 ? "s" : "");
    fprintf(out, "%-22s %-14s %-24s %9s %9s %8s  %-30s %9s\n", "layer", "best algorithm",
            "best kernel", "best ms", "oneDNN ms", "vs oneDNN", "AUTO picks", "AUTO/best");
    for (i = 0; i < nres; i++) {
        const conv_result *r = &res[i];
        char pick[96];
        snprintf(pick, sizeof pick, "%s%s%s", r->auto_algo, *r->auto_kernel ? " " : "",
                 *r->auto_kernel ? short_kernel_name(r->auto_kernel) : "");
        fprintf(out, "%-22s %-14s %-24s %9s %9s %8s  %-30s %9s\n", r->name,
                r->best_ms > 0.0 ? r->best_algo : "-",
                r->best_ms > 0.0 ? conv_kernel_label(r->best_kernel, 0) : "-",
                cell(b[0], 48, r->best_ms, ms_decimals(r->best_ms * 1e-3), r->best_ms > 0.0),
                cell(b[1], 48, r->dnnl_ms, ms_decimals(r->dnnl_ms * 1e-3), r->dnnl_ms > 0.0),
                cell(b[2], 48, r->best_ms > 0.0 ? r->dnnl_ms / r->best_ms : 0.0, 2,
                     r->best_ms > 0.0 && r->dnnl_ms > 0.0),
                *r->auto_algo ? pick : "-",
                cell(b[3], 48, r->auto_ms > 0.0 ? r->auto_ms / r->best_ms : 0.0, 2,
                     r->auto_ms > 0.0 && r->best_ms > 0.0));
        if (r->best_ms > 0.0 && r->dnnl_ms > 0.0) bench_geomean_add(&gb, r->dnnl_ms / r->best_ms);
        if (r->auto_ms > 0.0 && r->dnnl_ms > 0.0) bench_geomean_add(&ga, r->dnnl_ms / r->auto_ms);
        if (r->auto_ms > 0.0 && r->best_ms > 0.0) {
            bench_geomean_add(&gbest_auto, r->auto_ms / r->best_ms);
            nauto++;
            auto_is_best += r->auto_ms <= r->best_ms;
        }
    }
    if (gb.count)
        fprintf(out, "geomean over %d layers: best luthier vs oneDNN = %.2f  (AUTO's pick vs "
                     "oneDNN = %s over %d layers)\n", gb.count, bench_geomean_get(&gb),
                cell(b[0], 48, bench_geomean_get(&ga), 2, ga.count > 0), ga.count);
    else
        fprintf(out, "geomean: no layer has both a luthier time and a oneDNN time\n");
    if (nauto)
        fprintf(out, "AUTO's pick: the fastest pair on %d of %d layers; geomean AUTO ms / best ms "
                     "= %.2f\n", auto_is_best, nauto, bench_geomean_get(&gbest_auto));
}

static int cmd_conv(int argc, char **argv) {
    const char *cmd = argv[0];
    conv_opts o;
    conv_spec *layers = NULL;
    conv_result *res = NULL;
    luthier_context *ctx = NULL;
    int *kernels = NULL;
    int nk = 0, nl = 0, i, rc, exit_code = BENCH_EXIT_OK;
    FILE *info;

    if (gemm_wants_int8(argc, argv)) return cmd_conv_int8(argc, argv);
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.policy.min_time = 0.2;
    o.policy.rounds = 4;
    if ((rc = conv_parse(argc, argv, &o)) >= 0) goto done;
    if (!o.nalgos) conv_parse_algos(cmd, "all", &o);
    if (o.quick) {
        if (!o.min_time_set) o.policy.min_time = 0.05;
        if (!o.rounds_set) o.policy.rounds = 2;
    }
    info = o.csv ? stderr : stdout;

    if (!(ctx = open_context(cmd, NULL, o.threads))) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    o.lthreads = luthier_context_num_threads(ctx);
    if (o.kernel_arg && strcmp(o.kernel_arg, "default") == 0) nk = 0; /* desc.kernel = NULL */
    else if ((rc = gemm_resolve_kernels(cmd, o.kernel_arg ? o.kernel_arg : "all", ctx, &kernels,
                                        &nk)) >= 0)
        goto done;

    /* The layer list. */
    if (!o.sets && !o.ncustom) o.sets = CSET_ALL;
    layers = (conv_spec *)calloc((size_t)(CONV_N_BUILTIN + o.ncustom), sizeof *layers);
    res = (conv_result *)calloc((size_t)(CONV_N_BUILTIN + o.ncustom), sizeof *res);
    if (!layers || !res) {
        fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    for (i = 0; i < CONV_N_BUILTIN; i++) {
        const conv_spec *sp = &conv_builtin[i];
        if (!(o.sets & sp->set)) continue;
        if (o.quick && sp->large && o.sets != sp->set && (o.sets & CSET_ALL) == CSET_ALL) {
            fprintf(stderr, "note: --quick leaves out %s (give --layers vgg16 to run it)\n", sp->name);
            continue;
        }
        layers[nl++] = *sp;
    }
    for (i = 0; i < o.ncustom; i++) layers[nl++] = o.custom[i];

    bench_anchors_set_threads(o.threads, stderr);
    if (o.lthreads != o.threads)
        fprintf(stderr, "note: luthier runs %d thread(s), not %d: its context has one thread per "
                        "CPU of its clusters at most; oneDNN runs %d\n", o.lthreads, o.threads,
                o.threads);
    fprintf(info, "luthier-bench conv: luthier v%d.%d.%d\n", LUTHIER_VERSION_MAJOR,
            LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH);
    print_cpu(info);
    bench_anchors_describe(info);
    fprintf(info, "mode     batch 1, NHWC, OIHW weights + bias, fp32; luthier %d thread(s) "
                  "(default kernel %s), oneDNN %d thread(s); algorithms:", o.lthreads,
            short_kernel_name(luthier_context_kernel(ctx)), o.threads);
    for (i = 0; i < o.nalgos; i++)
        fprintf(info, " %s", luthier_conv_algorithm_name((luthier_conv_algorithm)o.algos[i]));
    fprintf(info, "; kernels: %s\n", nk == 0 ? "default" : o.kernel_arg ? o.kernel_arg : "all");
    if (o.residual)
        fprintf(info, "residual every layer adds a residual to its output (luthier: accumulate; oneDNN: sum "
                      "post-op)\n");
    if (o.policy.reps > 0) fprintf(info, "timing   %ld repetitions per contestant", o.policy.reps);
    else fprintf(info, "timing   >= %.2f s per contestant", o.policy.min_time);
    fprintf(info, ", in %d rounds alternating the contestants, after a checked call\n",
            o.policy.rounds);
    if (o.csv)
        printf("layer,Cin,H,W,Cout,k,stride,pad,groups,threads,algo,kernel,luthier_ms,"
               "luthier_gflops,onednn_ms,onednn_gflops,best,luthier_ms_median,reps,vs_onednn,"
               "auto,max_rel_err,status,onednn_impl\n");
    else {
        printf("\n");
        conv_table_header();
    }
    fflush(stdout);

    for (i = 0; i < nl; i++)
        if (conv_run_layer(&o, &layers[i], i, ctx, kernels, nk, &res[i]) != 0)
            exit_code = BENCH_EXIT_FAIL;

    conv_print_summary(info, res, nl, o.lthreads);
    if (exit_code != BENCH_EXIT_OK)
        fprintf(stderr, "%s conv: FAILED: a pair gave a wrong result or an error (see above)\n",
                bench_prog);
    rc = exit_code;

done:
    luthier_context_destroy(ctx);
    free(kernels);
    free(layers);
    free(res);
    free(o.custom);
    return rc;
}

/* ================================================================================================
   command table and main
   ================================================================================================ */

#include "bench_model.h"
#include "bench_tune.h"
#include "bench_ops.h"

/* ================================================================================================
   convt: one transposed convolution (conv_transpose through the graph API) vs oneDNN
   ================================================================================================ */

static void usage_convt(FILE *out) {
    fprintf(out,
            "Usage: %s convt [options]\n"
            "Times one transposed convolution (ConvTranspose2d: an upsampling layer, batch 1) as a\n"
            "luthier plan of one conv_transpose node (GEMM on the packed weights + col2im, NHWC)\n"
            "against oneDNN's deconvolution primitive (dnnl_deconvolution_forward, direct,\n"
            "format 'any') in the same run, in alternating rounds. The plan is reported twice:\n"
            "the whole run (NCHW in and out: two layout conversions at the edges) and its\n"
            "conv_transpose step alone (profiling), which is what oneDNN's primitive does.\n"
            "Both results are checked against each other first (max relative error).\n\n"
            "  --layer CIN,H,W,COUT,K,S,P   the layer (default 64,56,56,32,4,2,1: [1,64,56,56] ->\n"
            "                    [1,32,112,112]); output (H-1)*S - 2P + K\n"
            "  --groups G        groups (default 1; G = CIN = COUT: depthwise, which luthier runs\n"
            "                    as a direct loop unless --algorithm im2col)\n"
            "  --algorithm A     the plan's algorithm knob: auto (default), im2col, depthwise\n"
            "  --threads N       luthier's context and oneDNN's OpenMP threads (default 1)\n"
            "  --reps N          timed repetitions per contestant (default: --min-time)\n"
            "  --min-time S      seconds per contestant (default 1)\n"
            "  --rounds N        rounds the repetitions are split into (default 5)\n",
            bench_prog);
}

typedef struct convt_run_arg {
    luthier_context *ctx;
    luthier_plan *p;
    const void *ins[1];
    void *outs[1];
} convt_run_arg;

static int convt_run(void *arg) {
    convt_run_arg *a = (convt_run_arg *)arg;
    return luthier_plan_run(a->ctx, a->p, a->ins, a->outs) != LUTHIER_STATUS_OK;
}

/* The plan's share of round r (as bench_run_round), with the time of its step `step` (profiling)
   of every run in ss. */
static int convt_round(convt_run_arg *a, const bench_policy *pol, int r, int step, bench_sampler *sp, bench_sampler *ss) {
    luthier_step_info si;
    while (!bench_round_done(pol, r, sp)) {
        const double t0 = bench_now();
        if (convt_run(a)) return -1;
        if (bench_sampler_push(sp, bench_now() - t0) || luthier_plan_step_info(a->p, step, &si) != LUTHIER_STATUS_OK ||
            bench_sampler_push(ss, si.last_seconds))
            return -100;
    }
    return 0;
}

/* The plan of one conv_transpose node on ctx ([1,cin,h,w] -> [1,cout,oh,ow], bias); NULL + message on failure. */
static luthier_plan *convt_plan(luthier_context *ctx, const int64_t *L, int64_t groups, luthier_conv_algorithm algo,
                                const float *wt, const float *bias) {
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc d;
    luthier_node_config cfg;
    luthier_plan_desc pd;
    int64_t xs[4] = {1, L[0], L[1], L[2]}, ws[4] = {L[0], L[3] / groups, L[4], L[4]}, bs[1] = {L[3]};
    int x, w, b, in[3], y;
    luthier_graph_create(&g);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONV_TRANSPOSE;
    d.name = "convt";
    d.typed = 1;
    luthier_node_attrs_default(d.op, &d.attr);
    d.attr.conv_transpose.stride[0] = d.attr.conv_transpose.stride[1] = L[5];
    d.attr.conv_transpose.pads[0] = d.attr.conv_transpose.pads[1] = d.attr.conv_transpose.pads[2] = d.attr.conv_transpose.pads[3] = L[6];
    d.attr.conv_transpose.groups = groups;
    memset(&cfg, 0, sizeof cfg);
    cfg.algorithm = algo;
    memset(&pd, 0, sizeof pd);
    pd.configs = &cfg;
    pd.num_configs = 1;
    d.inputs = in;
    d.num_inputs = 3;
    if (luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x) != LUTHIER_STATUS_OK ||
        luthier_graph_constant(g, "w", 4, ws, wt, 0, &w) != LUTHIER_STATUS_OK ||
        luthier_graph_constant(g, "b", 1, bs, bias, 0, &b) != LUTHIER_STATUS_OK || (in[0] = x, in[1] = w, in[2] = b, 0) ||
        luthier_graph_add_node(g, &d, &y) != LUTHIER_STATUS_OK || luthier_graph_output(g, y) != LUTHIER_STATUS_OK)
        fprintf(stderr, "ERROR: convt: graph: %s\n", luthier_graph_error(g));
    else if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK)
        fprintf(stderr, "ERROR: convt: plan: %s\n", luthier_context_error(ctx)), p = NULL;
    luthier_graph_destroy(g);
    return p;
}

static int cmd_convt(int argc, char **argv) {
    const char *cmd = "convt";
    int64_t L[7] = {64, 56, 56, 32, 4, 2, 1}, oh, ow;
    bench_policy pol = {0, 1.0, 5};
    int threads = 1, i, r, rc = BENCH_EXIT_OK, step = -1, have_dnnl = 0;
    int64_t groups = 1;
    luthier_conv_algorithm algo = LUTHIER_CONV_AUTO;
    luthier_context *ctx;
    convt_run_arg a;
    bench_dnnl_conv dn;
    bench_sampler sp = {0}, sd = {0}, ss = {0};
    double err = 0, mx = 1e-30, flops;
    float *x, *wt, *bias, *y, *x_nhwc, *y_dnnl;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) return usage_convt(stdout), BENCH_EXIT_OK;
        if (!strcmp(argv[i], "--layer") && i + 1 < argc &&
            sscanf(argv[++i], "%lld,%lld,%lld,%lld,%lld,%lld,%lld", (long long *)&L[0], (long long *)&L[1], (long long *)&L[2],
                   (long long *)&L[3], (long long *)&L[4], (long long *)&L[5], (long long *)&L[6]) == 7)
            continue;
        if (!strcmp(argv[i], "--threads") && i + 1 < argc && (threads = atoi(argv[++i])) >= 1) continue;
        if (!strcmp(argv[i], "--reps") && i + 1 < argc && (pol.reps = atol(argv[++i])) >= 1) continue;
        if (!strcmp(argv[i], "--min-time") && i + 1 < argc && (pol.min_time = atof(argv[++i])) > 0) continue;
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc && (pol.rounds = atoi(argv[++i])) >= 1) continue;
        if (!strcmp(argv[i], "--groups") && i + 1 < argc && (groups = atol(argv[++i])) >= 1) continue;
        if (!strcmp(argv[i], "--algorithm") && i + 1 < argc) {
            const char *n = argv[++i];
            for (algo = LUTHIER_CONV_AUTO; algo < LUTHIER_CONV_ALGORITHM_COUNT; algo = (luthier_conv_algorithm)(algo + 1))
                if (!strcmp(n, luthier_conv_algorithm_name(algo))) break;
            if (algo < LUTHIER_CONV_ALGORITHM_COUNT) continue;
        }
        bench_usage_error(cmd, "bad option '%s'", argv[i]);
        return BENCH_EXIT_USAGE;
    }
    if (L[0] % groups || L[3] % groups) return bench_usage_error(cmd, "--groups must divide CIN and COUT"), BENCH_EXIT_USAGE;
    oh = (L[1] - 1) * L[5] - 2 * L[6] + L[4];
    ow = (L[2] - 1) * L[5] - 2 * L[6] + L[4];
    for (i = 0; i < 7; i++)
        if (L[i] < (i == 6 ? 0 : 1) || L[i] > 4096) return bench_usage_error(cmd, "--layer values out of range"), BENCH_EXIT_USAGE;
    if (oh < 1 || ow < 1) return bench_usage_error(cmd, "the layer has no output"), BENCH_EXIT_USAGE;
    flops = 2.0 * (double)(L[0] * L[1] * L[2]) * (double)(L[3] / groups * L[4] * L[4]);
    bench_anchors_set_threads(threads, stderr);
    if (!(ctx = open_context(cmd, NULL, threads))) return BENCH_EXIT_FAIL;
    x = bench_alloc_floats((size_t)(L[0] * L[1] * L[2]));
    x_nhwc = bench_alloc_floats((size_t)(L[0] * L[1] * L[2]));
    wt = bench_alloc_floats((size_t)(L[0] * L[3] / groups * L[4] * L[4]));
    bias = bench_alloc_floats((size_t)L[3]);
    y = bench_alloc_floats((size_t)(L[3] * oh * ow));
    y_dnnl = bench_alloc_floats((size_t)(L[3] * oh * ow));
    bench_fill_uniform(x, (size_t)(L[0] * L[1] * L[2]), 1);
    bench_fill_uniform(wt, (size_t)(L[0] * L[3] / groups * L[4] * L[4]), 2);
    bench_fill_uniform(bias, (size_t)L[3], 3);
    for (i = 0; i < L[0] * L[1] * L[2]; i++) x_nhwc[(i % (L[1] * L[2])) * L[0] + i / (L[1] * L[2])] = x[i];
    memset(&a, 0, sizeof a);
    a.ctx = ctx;
    a.ins[0] = x;
    a.outs[0] = y;
    if (!(a.p = convt_plan(ctx, L, groups, algo, wt, bias)) || convt_run(&a)) {
        luthier_context_destroy(ctx);
        return BENCH_EXIT_FAIL;
    }
    luthier_plan_set_profiling(a.p, 1);
    {
        luthier_step_info si;
        for (i = 0; step < 0 && luthier_plan_step_info(a.p, i, &si) == LUTHIER_STATUS_OK; i++)
            if (si.op == LUTHIER_OP_CONV_TRANSPOSE && si.node >= 0) step = i;
    }
    if (bench_dnnl_conv_setup(&dn, L[0], L[1], L[2], L[3], L[4], L[5], L[6], groups, oh, ow, x_nhwc, wt, bias, 0, 1) != 0)
        fprintf(stderr, "warning: convt: %s; no oneDNN column\n", dn.error);
    else if (bench_dnnl_conv_run(&dn) == 0 && bench_dnnl_conv_output(&dn, L[3], oh, ow, y_dnnl) == 0) {
        int64_t c, pix;
        for (c = 0; c < L[3]; c++)
            for (pix = 0; pix < oh * ow; pix++) {
                double dv = fabs((double)y[c * oh * ow + pix] - y_dnnl[pix * L[3] + c]);
                if (!(dv <= err)) err = dv;
                if (fabs(y_dnnl[pix * L[3] + c]) > mx) mx = fabs(y_dnnl[pix * L[3] + c]);
            }
        have_dnnl = err / mx < 1e-4;
        if (!have_dnnl) fprintf(stderr, "ERROR: convt: luthier and oneDNN differ (max relative error %.3g)\n", err / mx), rc = BENCH_EXIT_FAIL;
    }
    for (r = 0; r < pol.rounds && rc == BENCH_EXIT_OK; r++) { /* alternating: A B, B A, ... */
        int k;
        for (k = 0; k < 2; k++) {
            const int which = (r & 1) ? 1 - k : k;
            if (which == 0) {
                if (convt_round(&a, &pol, r, step, &sp, &ss) != 0) rc = BENCH_EXIT_FAIL;
            } else if (have_dnnl) {
                if (bench_run_round(bench_dnnl_conv_run, &dn, &pol, r, &sd) != 0) rc = BENCH_EXIT_FAIL;
            }
        }
    }
    {
        const bench_stats ps = bench_summarize(sp.t, sp.n), ds = bench_summarize(sd.t, sd.n), st = bench_summarize(ss.t, ss.n);
        luthier_step_info si;
        memset(&si, 0, sizeof si);
        if (step >= 0) luthier_plan_step_info(a.p, step, &si);
        printf("luthier-bench convt: [1,%lld,%lld,%lld] -> [1,%lld,%lld,%lld], k%lld s%lld p%lld g%lld, %.3f GFLOP, %d thread%s\n",
               (long long)L[0], (long long)L[1], (long long)L[2], (long long)L[3], (long long)oh, (long long)ow, (long long)L[4],
               (long long)L[5], (long long)L[6], (long long)groups, flops * 1e-9, threads, threads > 1 ? "s" : "");
        printf("  %-34s %10s %10s %8s\n", "contestant", "min ms", "median ms", "GF/s");
        printf("  %-34s %10.3f %10.3f %8.1f\n", "luthier plan (NCHW in/out)", ps.min * 1e3, ps.median * 1e3, flops / ps.min * 1e-9);
        printf("  %-34s %10.3f %10.3f %8.1f   [%s %s] {%s}\n", "luthier conv_transpose step", st.min * 1e3, st.median * 1e3,
               flops / st.min * 1e-9, luthier_conv_algorithm_name(si.algorithm), si.kernel ? si.kernel : "?", si.isa ? si.isa : "?");
        if (have_dnnl)
            printf("  %-34s %10.3f %10.3f %8.1f   [%s]\n", "oneDNN deconvolution", ds.min * 1e3, ds.median * 1e3, flops / ds.min * 1e-9,
                   dn.impl);
        else
            printf("  %-34s %10s\n", "oneDNN deconvolution", "(not linked / refused / wrong)");
        if (have_dnnl && ps.min > 0)
            printf("  oneDNN min / luthier min: plan %.2f, step %.2f (> 1: luthier faster); max relative difference %.2g\n",
                   ds.min / ps.min, ds.min / st.min, err / mx);
    }
    bench_sampler_free(&sp);
    bench_sampler_free(&sd);
    bench_sampler_free(&ss);
    bench_dnnl_conv_destroy(&dn);
    luthier_plan_destroy(a.p);
    luthier_context_destroy(ctx);
    free(x), free(x_nhwc), free(wt), free(bias), free(y), free(y_dnnl);
    return rc;
}

/* ================================================================================================
   rnn: one LSTM / GRU layer planned as a graph (luthier_plan_run), time and GFLOP/s
   ================================================================================================ */

static void usage_rnn(FILE *out) {
    fprintf(out,
            "usage: %s rnn [--threads N] [--reps R] [--min-time S] [--seq S] [--input I] [--hidden H]\n"
            "  One recurrent layer (X [seq, batch, input] -> Y, Y_h) planned as a graph: GRU\n"
            "  (linear_before_reset 0 and 1) and LSTM, forward, at batch 1 and 8 (default seq 100,\n"
            "  input 64, hidden 128). Reports min / median ms per run and GFLOP/s from the fastest\n"
            "  (2 * seq * batch * gates * hidden * (input + hidden) per direction).\n",
            bench_prog);
}

typedef struct rnn_bench_case {
    luthier_op op;
    int lbr;
    int64_t seq, batch, input, hidden;
} rnn_bench_case;

/* Plans the layer on ctx; returns the plan (NULL on failure, message printed). */
static luthier_plan *rnn_bench_plan(luthier_context *ctx, const rnn_bench_case *c, luthier_graph **gout, float **wbuf) {
    const int64_t G = c->op == LUTHIER_OP_LSTM ? 4 : 3, H = c->hidden;
    int64_t xs[3], ws[3], rs[3], bs[2];
    int in[4], outs[3], k;
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_node_desc d;
    float *w;
    xs[0] = c->seq, xs[1] = c->batch, xs[2] = c->input;
    ws[0] = rs[0] = bs[0] = 1, ws[1] = rs[1] = G * H, ws[2] = c->input, rs[2] = H, bs[1] = 2 * G * H;
    w = bench_alloc_floats((size_t)(G * H * (c->input + H + 2)));
    if (!w) return NULL;
    bench_fill_uniform(w, (size_t)(G * H * (c->input + H + 2)), 7);
    for (k = 0; k < (int)(G * H * (c->input + H + 2)); k++) w[k] = (w[k] - 0.5f) * 0.2f;
    luthier_graph_create(&g);
    luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 3, xs, &in[0]);
    luthier_graph_constant(g, "W", 3, ws, w, 0, &in[1]);
    luthier_graph_constant(g, "R", 3, rs, w + G * H * c->input, 0, &in[2]);
    luthier_graph_constant(g, "B", 2, bs, w + G * H * (c->input + H), 0, &in[3]);
    memset(&d, 0, sizeof d);
    d.op = c->op;
    d.name = "layer";
    d.inputs = in;
    d.num_inputs = 4;
    d.typed = 1;
    luthier_node_attrs_default(c->op, &d.attr);
    if (c->op == LUTHIER_OP_LSTM) d.attr.lstm.hidden_size = H;
    else d.attr.gru.hidden_size = H, d.attr.gru.linear_before_reset = c->lbr;
    if (luthier_graph_add_node(g, &d, outs) != LUTHIER_STATUS_OK || luthier_graph_output(g, outs[0]) != LUTHIER_STATUS_OK ||
        luthier_graph_output(g, outs[1]) != LUTHIER_STATUS_OK || luthier_plan_create(ctx, g, NULL, &p) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "rnn: %s%s\n", luthier_graph_error(g), luthier_context_error(ctx));
        luthier_graph_destroy(g);
        free(w);
        return NULL;
    }
    *gout = g;
    *wbuf = w;
    return p;
}

static int rnn_bench_case_run(luthier_context *ctx, const rnn_bench_case *c, const bench_policy *pol, int threads) {
    const int64_t G = c->op == LUTHIER_OP_LSTM ? 4 : 3;
    const double flops = 2.0 * (double)c->seq * (double)c->batch * (double)(G * c->hidden) * (double)(c->input + c->hidden);
    luthier_graph *g = NULL;
    float *w = NULL, *x, *y, *yh;
    luthier_plan *p = rnn_bench_plan(ctx, c, &g, &w);
    double t[1000], t0, spent = 0;
    long n = 0;
    bench_stats st;
    const void *ins[1];
    void *outs[2];
    if (!p) return BENCH_EXIT_FAIL;
    x = bench_alloc_floats((size_t)(c->seq * c->batch * c->input));
    y = bench_alloc_floats((size_t)(c->seq * c->batch * c->hidden));
    yh = bench_alloc_floats((size_t)(c->batch * c->hidden));
    bench_fill_uniform(x, (size_t)(c->seq * c->batch * c->input), 11);
    ins[0] = x, outs[0] = y, outs[1] = yh;
    if (luthier_plan_run(ctx, p, ins, outs) != LUTHIER_STATUS_OK) { /* warm-up */
        fprintf(stderr, "rnn: %s\n", luthier_context_error(ctx));
        n = -1;
    }
    while (n >= 0 && n < 1000 && (pol->reps ? n < pol->reps : (spent < pol->min_time || n < 3))) {
        t0 = bench_now();
        luthier_plan_run(ctx, p, ins, outs);
        t[n] = bench_now() - t0;
        spent += t[n++];
    }
    if (n > 0) {
        st = bench_summarize(t, n);
        printf("%-5s%-5s %5lld %5lld %5lld %6lld %7d %9.3f %9.3f %8.2f\n", luthier_op_name(c->op), c->op == LUTHIER_OP_GRU ? (c->lbr ? " lbr" : "") : "",
               (long long)c->seq, (long long)c->batch, (long long)c->input, (long long)c->hidden, threads, st.min * 1e3,
               st.median * 1e3, flops / st.min * 1e-9);
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    free(w), free(x), free(y), free(yh);
    return n > 0 ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
}

static int cmd_rnn(int argc, char **argv) {
    const char *cmd = argv[0], *val;
    bench_policy pol;
    int threads = 1, i, r, rc = BENCH_EXIT_OK, k;
    int64_t seq = 100, input = 64, hidden = 128, v;
    luthier_context *ctx;
    memset(&pol, 0, sizeof pol);
    pol.min_time = 0.5;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_rnn(stdout);
            return BENCH_EXIT_OK;
        }
        if ((r = bench_parse_run_option(argc, argv, &i, cmd, &pol, &threads, NULL, NULL)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            continue;
        }
        if ((r = bench_opt_value(argc, argv, &i, cmd, "--seq", &val)) != 0 ||
            (r = bench_opt_value(argc, argv, &i, cmd, "--input", &val)) != 0 ||
            (r = bench_opt_value(argc, argv, &i, cmd, "--hidden", &val)) != 0) {
            const char *opt = argv[i - 1];
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 4096, &v)) {
                bench_usage_error(cmd, "%s wants an integer in [1, 4096], not '%s'", opt, val);
                return BENCH_EXIT_USAGE;
            }
            if (!strcmp(opt, "--seq")) seq = v;
            else if (!strcmp(opt, "--input")) input = v;
            else hidden = v;
            continue;
        }
        bench_usage_error(cmd, "unknown option '%s'", argv[i]);
        return BENCH_EXIT_USAGE;
    }
    if (!(ctx = open_context(cmd, NULL, threads))) return BENCH_EXIT_FAIL;
    printf("luthier-bench rnn: luthier v%d.%d.%d, kernel %s, %d thread(s); fastest of >= %.2f s per case\n", LUTHIER_VERSION_MAJOR,
           LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH, luthier_context_kernel(ctx), threads, pol.min_time);
    printf("op   var     seq batch input hidden threads    ms(min)   ms(med)   GF/s\n");
    for (k = 0; k < 6; k++) {
        rnn_bench_case c;
        c.op = k < 4 ? LUTHIER_OP_GRU : LUTHIER_OP_LSTM;
        c.lbr = k == 2 || k == 3;
        c.seq = seq, c.input = input, c.hidden = hidden, c.batch = k % 2 ? 8 : 1;
        if (rnn_bench_case_run(ctx, &c, &pol, threads) != BENCH_EXIT_OK) rc = BENCH_EXIT_FAIL;
    }
    luthier_context_destroy(ctx);
    return rc;
}

typedef struct bench_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] = the command's name */
    void (*usage)(FILE *out);
} bench_command;

static const bench_command bench_commands[] = {
    {"kernels", "list the microkernel registry (ISA, tile, kind, availability, default)",
     cmd_kernels, usage_kernels},
    {"peak", "measure the single-thread fp32 FMA peak of each ISA of this CPU", cmd_peak,
     usage_peak},
    {"gemm", "GEMM GFLOP/s per shape and kernel vs OpenBLAS and oneDNN", cmd_gemm, usage_gemm},
    {"threads", "cost of an empty (and a 10 us) parallel region, 1 thread and all threads",
     cmd_threads, usage_threads},
    {"asym", "emulated big.LITTLE (a busy loop on one CPU): equal, ratio, dynamic, big-only",
     cmd_asym, usage_asym},
    {"conv", "convolution per layer and (algorithm, kernel) pair vs oneDNN's primitive",
     cmd_conv, usage_conv},
    {"convt", "a transposed convolution (upsampling layer) vs oneDNN's deconvolution",
     cmd_convt, usage_convt},
    {"model", "whole networks of the zoo: latency, per-layer breakdown, memory, vs PyTorch",
     cmd_model, usage_model},
    {"tune", "tune a zoo network (records, report, heatmap) and time default vs tuned plans",
     cmd_tune, usage_tune},
    {"rnn", "one LSTM / GRU layer planned as a graph: ms and GFLOP/s at batch 1 and 8", cmd_rnn, usage_rnn},
    {"ops", "every memory-bound operator on tensors past the cache: GB/s and its ratio to memcpy", cmd_ops, usage_ops},
};
#define BENCH_NUM_COMMANDS ((int)(sizeof bench_commands / sizeof bench_commands[0]))

static void usage_main(FILE *out) {
    int i;
    fprintf(out,
            "Usage: %s <command> [options]\n"
            "       %s <command> --help | %s help [command] | %s --version\n"
            "Benchmarks of luthier v%d.%d.%d on this machine.\n\nCommands:\n",
            bench_prog, bench_prog, bench_prog, bench_prog, LUTHIER_VERSION_MAJOR,
            LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH);
    for (i = 0; i < BENCH_NUM_COMMANDS; i++)
        fprintf(out, "  %-9s %s\n", bench_commands[i].name, bench_commands[i].summary);
    fprintf(out,
            "\nExit status: 0 ok, 1 a failure (e.g. a kernel computed a wrong result),\n"
            "2 bad command line. Environment: LUTHIER_KERNEL sets the default kernel,\n"
            "LUTHIER_CLUSTERS the CPU clusters (gemm and conv --threads, threads, asym).\n");
}

static const bench_command *find_command(const char *name) {
    int i;
    for (i = 0; i < BENCH_NUM_COMMANDS; i++)
        if (strcmp(bench_commands[i].name, name) == 0) return &bench_commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    const bench_command *c;
    /* line by line even into a pipe: a run stopped by a time limit keeps what it printed */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage_main(stderr);
        return BENCH_EXIT_USAGE;
    }
    if (bench_is_help(argv[1])) {
        usage_main(stdout);
        return BENCH_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("luthier-bench (luthier %d.%d.%d)\n", LUTHIER_VERSION_MAJOR, LUTHIER_VERSION_MINOR,
               LUTHIER_VERSION_PATCH);
        return BENCH_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            usage_main(stdout);
            return BENCH_EXIT_OK;
        }
        if (!(c = find_command(argv[2]))) {
            bench_usage_error(NULL, "unknown command '%s'", argv[2]);
            return BENCH_EXIT_USAGE;
        }
        c->usage(stdout);
        return BENCH_EXIT_OK;
    }
    if (!(c = find_command(argv[1]))) {
        if (argv[1][0] == '-') bench_usage_error(NULL, "unknown option '%s'", argv[1]);
        else bench_usage_error(NULL, "unknown command '%s'", argv[1]);
        return BENCH_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
