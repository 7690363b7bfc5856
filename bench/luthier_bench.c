/* luthier-bench - benchmark tool of luthier.

   Build: make bench   (-> build/luthier-bench; links OpenBLAS / oneDNN when the Makefile finds
   them, which defines LUTHIER_HAVE_OPENBLAS / LUTHIER_HAVE_DNNL)

   Usage: luthier-bench <command> [options]      luthier-bench <command> --help
     kernels   list the microkernel registry
     peak      measure the single-thread fp32 FMA peak of every ISA of this CPU
     gemm      GFLOP/s of luthier's GEMM per shape and kernel, against OpenBLAS and oneDNN

   Adding a command: write `static int cmd_NAME(int argc, char **argv)` (argv[0] is the command
   name, return an exit code: 0 ok, 1 failure, 2 usage error) and `static void usage_NAME(FILE *)`,
   and add a row to bench_commands[] at the end of this file. Shared helpers live in
   bench/bench_common.h (clock, buffers, data, statistics, option parsing), the FMA peak in
   bench/bench_peak.h and the reference libraries in bench/bench_anchors.h.

   Method: monotonic clock, deterministic data, 64-byte aligned buffers. Every contestant of a
   case (luthier kernels, OpenBLAS, oneDNN: same process, same data, same policy) first makes
   one untimed call whose result is checked; then repetitions are timed one by one, in rounds
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
    static const char prefix[] = "luthier_sgemm_ukernel_";
    return strncmp(full, prefix, sizeof prefix - 1) == 0 ? full + sizeof prefix - 1 : full;
}

static const char *kind_name(luthier_kernel_kind kind) {
    return kind == LUTHIER_KERNEL_HYBRID ? "hybrid" : "interleaved";
}

/* Context with defaults ($LUTHIER_KERNEL honoured) and optional cache blocking (NULL or
   {kc, mc, nc}, 0 = derived); prints why on failure. */
static luthier_context *open_context(const char *cmd, const size_t *blocking) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_status s;
    memset(&cd, 0, sizeof cd);
    if (blocking) {
        cd.kc = blocking[0];
        cd.mc = blocking[1];
        cd.nc = blocking[2];
    }
    s = luthier_context_create(&cd, &ctx);
    if (s != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s %s: error: cannot create a luthier context: %s%s\n", bench_prog, cmd,
                luthier_status_string(s),
                getenv("LUTHIER_KERNEL") ? " (check $LUTHIER_KERNEL)" : "");
        return NULL;
    }
    return ctx;
}

static void print_features(FILE *out) {
    const unsigned f = luthier_cpu_features();
    fprintf(out, "%s%s%s%s%s%s", f & LUTHIER_CPU_AVX2_FMA ? " avx2+fma" : "",
            f & LUTHIER_CPU_AVX512F ? " avx512f" : "", f & LUTHIER_CPU_NEON ? " neon" : "",
            f & LUTHIER_CPU_DOTPROD ? " dotprod" : "", f & LUTHIER_CPU_FP16 ? " fp16" : "",
            f ? "" : " (baseline only)");
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

/* ================================================================================================
   kernels
   ================================================================================================ */

static void usage_kernels(FILE *out) {
    fprintf(out,
            "Usage: %s kernels [--csv]\n"
            "List luthier's microkernel registry: name, ISA, tile MR x NR, k-unroll, kind\n"
            "(interleaved = packed A panel, hybrid = A rows read in place), whether this CPU\n"
            "can run it, and '*' on the default kernel of a new context ($LUTHIER_KERNEL\n"
            "overrides it).\n"
            "  --csv    comma-separated with a header line\n",
            bench_prog);
}

static int cmd_kernels(int argc, char **argv) {
    const char *cmd = argv[0];
    luthier_context *ctx;
    const char *def;
    int csv = 0, i, r;
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
    if (!(ctx = open_context(cmd, NULL))) return BENCH_EXIT_FAIL;
    def = luthier_context_kernel(ctx);
    if (csv)
        printf("index,name,isa,mr,nr,k_unroll,kind,available,default\n");
    else
        printf("%3s  %-44s %-7s %3s %3s %8s  %-11s  %-9s %s\n", "#", "name", "isa", "MR", "NR",
               "k-unroll", "kind", "available", "default");
    for (i = 0; i < luthier_kernel_count(); i++) {
        luthier_kernel_info ki;
        int is_def;
        if (luthier_kernel_get(i, &ki) != LUTHIER_STATUS_OK) continue;
        is_def = strcmp(ki.name, def) == 0;
        if (csv)
            printf("%d,%s,%s,%d,%d,%d,%s,%d,%d\n", i, ki.name, ki.isa, ki.mr, ki.nr, ki.k_unroll,
                   kind_name(ki.kind), ki.available ? 1 : 0, is_def);
        else
            printf("%3d  %-44s %-7s %3d %3d %8d  %-11s  %-9s %s\n", i, ki.name, ki.isa, ki.mr,
                   ki.nr, ki.k_unroll, kind_name(ki.kind), ki.available ? "yes" : "no",
                   is_def ? "*" : "");
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
    printf("%-8s %-18s %5s %6s %10s\n", "isa", "loop", "lanes", "chains", "GFLOP/s");
    for (i = pk.count - 1; i >= 0; i--)
        printf("%-8s %-18s %5d %6d %10.1f\n", pk.peak[i].isa, pk.peak[i].what, pk.peak[i].lanes,
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
            "  --threads N       threads for the anchors (default 1); luthier is single-threaded\n"
            "                    in this version. oneDNN (OpenMP build) gets omp_set_num_threads(N)\n"
            "  --no-prepack      time luthier_sgemm including the packing of B (default: B packed\n"
            "                    once outside the timed loop, luthier_sgemm_packed timed).\n"
            "                    The anchors always take B plain.\n"
            "  --reps R          exactly R timed repetitions per case (default: auto)\n"
            "  --min-time S      auto repetitions: run each case >= S seconds (default 0.2)\n"
            "  --rounds N        split each case's repetitions into N rounds that alternate\n"
            "                    luthier and the anchors, so drifting machine load hits all of\n"
            "                    them alike (default 4)\n"
            "  --csv             one row per (shape, kernel) with a header; notes go to stderr\n"
            "  --kc N, --mc N, --nc N   luthier's cache blocking in elements (default 0: derived\n"
            "                    from the cache sizes), e.g. to try a blocking by hand\n"
            "\n"
            "Columns: GF/s = 2*M*N*K / fastest repetition; %%peak = luthier GF/s / FMA peak of\n"
            "its ISA ('%s peak'; re-probed around each case, best value of the run);\n"
            "vs OBLAS / vs DNNL = luthier GF/s / anchor GF/s (> 1: luthier faster);\n"
            "GB/s (M = 1 only) = bytes of B (K*N*4) / fastest repetition. Caches are warm\n"
            "(one warm-up call), so a B that fits in L2 is not streamed from DRAM.\n"
            "The summary gives geometric means over the DNN shapes with M > 1 and over the\n"
            "squares >= 1024.\n",
            bench_prog, GEMM_TOL, bench_prog, bench_prog);
}

typedef struct gemm_opts {
    const char *kernel_arg;
    int groups; /* GROUP_* selected by --shapes (0 = not given) */
    gemm_shape *custom;
    int ncustom;
    int threads;
    int prepack;
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
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--threads", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 1024, &v)) {
                bench_usage_error(cmd, "--threads wants an integer in [1, 1024], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->threads = (int)v;
        } else if ((r = bench_opt_flag(arg, cmd, "--no-prepack")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            o->prepack = 0;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--reps", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 1000000, &v)) {
                bench_usage_error(cmd, "--reps wants an integer in [1, 1000000], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->policy.reps = (long)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--rounds", &val)) != 0) {
            int64_t v;
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_i64(val, 1, 100, &v)) {
                bench_usage_error(cmd, "--rounds wants an integer in [1, 100], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
            o->policy.rounds = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--min-time", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (bench_parse_double(val, 0.0, 3600.0, &o->policy.min_time)) {
                bench_usage_error(cmd, "--min-time wants seconds in [0, 3600], not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
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
    return -1;
}

/* Resolves --kernel into registry indices (*out, malloc'ed). Returns -1 or an exit code. */
static int gemm_resolve_kernels(const char *cmd, const char *arg, luthier_context *ctx, int **out,
                                int *count) {
    const int total = luthier_kernel_count();
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
            if (luthier_kernel_get(i, &ki) != LUTHIER_STATUS_OK) continue;
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
            if (luthier_kernel_find(tok, &k) != LUTHIER_STATUS_OK ||
                luthier_kernel_get(k, &ki) != LUTHIER_STATUS_OK) {
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
} gemm_call;

static int gemm_call_run(void *arg) {
    gemm_call *g = (gemm_call *)arg;
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
enum { GM_LUTHIER, GM_OPENBLAS, GM_DNNL, GM_RATIO_OPENBLAS, GM_RATIO_DNNL, GM_PEAK, GM_COUNT };
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
                               int threads) {
    static const char *const titles[GMG_COUNT] = {"DNN shapes with M > 1", "squares >= 1024"};
    int g, i, any = 0;
    for (g = 0; g < GMG_COUNT; g++) {
        for (i = 0; i < nk; i++) any |= sum[i].g[g][GM_LUTHIER].count > 0;
    }
    if (!any) return;
    fprintf(out, "\ngeometric means%s\n",
            threads > 1 ? " (luthier 1 thread, anchors --threads)" : "");
    for (g = 0; g < GMG_COUNT; g++) {
        int shown = 0;
        for (i = 0; i < nk; i++) {
            const bench_geomean *m = sum[i].g[g];
            luthier_kernel_info ki;
            char b[6][32];
            if (m[GM_LUTHIER].count == 0) continue;
            if (!shown) {
                fprintf(out, "%-22s %-22s %7s %6s %8s %8s %8s %8s\n", titles[g], "kernel",
                        "GF/s", "%peak", "OpenBLAS", "oneDNN", "vs OBLAS", "vs DNNL");
                shown = 1;
            }
            luthier_kernel_get(kernels[i], &ki);
            fprintf(out, "%-22s %-22s %7s %6s %8s %8s %8s %8s   (%d shapes)\n", "",
                    short_kernel_name(ki.name),
                    cell(b[0], 32, bench_geomean_get(&m[GM_LUTHIER]), 1, 1),
                    cell(b[1], 32, bench_geomean_get(&m[GM_PEAK]), 1, m[GM_PEAK].count > 0),
                    cell(b[2], 32, bench_geomean_get(&m[GM_OPENBLAS]), 1, m[GM_OPENBLAS].count > 0),
                    cell(b[3], 32, bench_geomean_get(&m[GM_DNNL]), 1, m[GM_DNNL].count > 0),
                    cell(b[4], 32, bench_geomean_get(&m[GM_RATIO_OPENBLAS]), 2,
                         m[GM_RATIO_OPENBLAS].count > 0),
                    cell(b[5], 32, bench_geomean_get(&m[GM_RATIO_DNNL]), 2,
                         m[GM_RATIO_DNNL].count > 0),
                    m[GM_LUTHIER].count);
        }
    }
}

/* One contestant of a shape: a luthier kernel or an anchor. */
typedef struct gemm_contestant {
    gemm_call call;
    int kernel;             /* index into the selected kernels (luthier), -1 for an anchor */
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

static void gemm_table_header(void) {
    printf("%-16s %6s %5s %5s  %-22s %7s %6s %8s %8s %8s %8s %9s %9s %6s\n", "name", "M", "N",
           "K", "kernel", "GF/s", "%peak", "OpenBLAS", "oneDNN", "vs OBLAS", "vs DNNL",
           "ms(min)", "ms(med)", "GB/s");
}

/* GF/s of a contestant, 0 if it has no valid time. */
static double gemm_gflops(const gemm_contestant *c, double flops) {
    return c && c->status && strcmp(c->status, "ok") == 0 && c->st.reps > 0 && c->st.min > 0.0
               ? flops / c->st.min * 1e-9
               : 0.0;
}

static void gemm_print_row(const gemm_opts *o, const gemm_shape *s, const gemm_contestant *k,
                           const gemm_contestant *const an[BENCH_NUM_ANCHORS]) {
    const double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    const double gf = gemm_gflops(k, flops);
    const double ob = gemm_gflops(an[BENCH_ANCHOR_OPENBLAS], flops);
    const double dn = gemm_gflops(an[BENCH_ANCHOR_DNNL], flops);
    const double pct = gf > 0.0 && k->peak > 0.0 ? 100.0 * gf / k->peak : 0.0;
    const double gbps = gf > 0.0 && s->m == 1 ? (double)(s->k * s->n) * sizeof(float) / k->st.min * 1e-9 : 0.0;
    const int ok = gf > 0.0;
    char b[12][40];
    if (o->csv) {
        printf("%s,%lld,%lld,%lld,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%ld,%s,%s,%s,%.3g,%s\n", s->name,
               (long long)s->m, (long long)s->n, (long long)s->k, o->threads, k->ki.name,
               csv_cell(b[0], 40, gf, 2, ok), csv_cell(b[1], 40, ob, 2, ob > 0.0),
               csv_cell(b[2], 40, dn, 2, dn > 0.0), csv_cell(b[3], 40, pct, 1, pct > 0.0),
               csv_cell(b[4], 40, k->st.min * 1e3, 4, ok),
               csv_cell(b[5], 40, k->st.median * 1e3, 4, ok), csv_cell(b[6], 40, gbps, 2, gbps > 0.0),
               k->ki.isa, o->prepack, k->st.reps,
               csv_cell(b[7], 40, ob > 0.0 ? an[BENCH_ANCHOR_OPENBLAS]->st.min * 1e3 : 0.0, 4, ob > 0.0),
               csv_cell(b[8], 40, dn > 0.0 ? an[BENCH_ANCHOR_DNNL]->st.min * 1e3 : 0.0, 4, dn > 0.0),
               csv_cell(b[9], 40, k->peak, 1, ok && k->peak > 0.0), k->err, k->status);
    } else {
        printf("%-16s %6lld %5lld %5lld  %-22s %7s %6s %8s %8s %8s %8s %9s %9s %6s\n", s->name,
               (long long)s->m, (long long)s->n, (long long)s->k, short_kernel_name(k->ki.name),
               ok ? cell(b[0], 40, gf, 1, 1) : k->status, cell(b[1], 40, pct, 1, pct > 0.0),
               cell(b[2], 40, ob, 1, ob > 0.0), cell(b[3], 40, dn, 1, dn > 0.0),
               cell(b[4], 40, ob > 0.0 ? gf / ob : 0.0, 2, ok && ob > 0.0),
               cell(b[5], 40, dn > 0.0 ? gf / dn : 0.0, 2, ok && dn > 0.0),
               cell(b[6], 40, k->st.min * 1e3, ms_decimals(k->st.min), ok),
               cell(b[7], 40, k->st.median * 1e3, ms_decimals(k->st.median), ok),
               cell(b[8], 40, gbps, 1, gbps > 0.0));
    }
    fflush(stdout);
}

/* Adds a kernel's result on shape s to the geometric means. */
static void gemm_summary_add(gemm_summary *sum, const gemm_shape *s, const gemm_contestant *k,
                             const gemm_contestant *const an[BENCH_NUM_ANCHORS]) {
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
}

/* Checks and times every kernel and anchor on one shape, prints its rows. Returns 0 when every
   luthier kernel was right, 1 otherwise (or on an allocation failure). */
static int gemm_run_shape(const gemm_opts *o, const gemm_shape *s, int shape_index,
                          luthier_context *ctx, const int *kernels, int nk, bench_peaks *peaks,
                          gemm_summary *sum) {
    const size_t mk = (size_t)(s->m * s->k), kn = (size_t)(s->k * s->n), mn = (size_t)(s->m * s->n);
    const double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    const int ncont = BENCH_NUM_ANCHORS + nk;
    float *a = bench_alloc_floats(mk), *b = bench_alloc_floats(kn), *c = bench_alloc_floats(mn);
    gemm_contestant *ct = (gemm_contestant *)calloc((size_t)ncont, sizeof *ct);
    const gemm_contestant *an[BENCH_NUM_ANCHORS];
    const char *isas[BENCH_MAX_PEAKS];
    gemm_ref ref;
    int i, j, r, rc, nisa = 0, any_anchor = 0, have_ref = 0, failed = 0;

    memset(&ref, 0, sizeof ref);
    if (!a || !b || !c || !ct) {
        fprintf(stderr, "ERROR: %s: cannot allocate the matrices\n", s->name);
        failed = 1;
        goto out;
    }
    bench_fill_uniform(a, mk, 0x1000u + (uint64_t)shape_index);
    bench_fill_uniform(b, kn, 0x2000u + (uint64_t)shape_index);
    for (i = 0; i < BENCH_NUM_ANCHORS; i++) any_anchor |= bench_anchor_linked(i);
    /* With no anchor to compare the whole of C against, check every row when affordable. */
    if (gemm_ref_build(&ref, s, a, b, !any_anchor && flops <= 5e8 && mn <= ((size_t)1 << 23))) {
        fprintf(stderr, "ERROR: %s: cannot allocate the reference\n", s->name);
        failed = 1;
        goto out;
    }
    have_ref = 1;

    /* Contestants 0..BENCH_NUM_ANCHORS-1 are the anchors, then the kernels. */
    for (i = 0; i < ncont; i++) {
        gemm_contestant *x = &ct[i];
        x->call.anchor = i < BENCH_NUM_ANCHORS ? i : -1;
        x->kernel = i < BENCH_NUM_ANCHORS ? -1 : i - BENCH_NUM_ANCHORS;
        x->call.ctx = ctx;
        x->call.desc.m = s->m;
        x->call.desc.n = s->n;
        x->call.desc.k = s->k;
        x->call.a = a;
        x->call.b = b;
        x->call.c = c;
        x->status = "ok";
        if (x->kernel >= 0) {
            luthier_kernel_get(kernels[x->kernel], &x->ki);
            x->call.desc.kernel = x->ki.name;
        }
    }

    /* 1. Correctness: every contestant once into a NaN-filled C. The anchors must match the
       exact reference rows; luthier must match those and the anchors' whole output. */
    for (i = 0; i < ncont; i++) {
        gemm_contestant *x = &ct[i];
        const char *what = x->kernel >= 0 ? x->ki.name : bench_anchor_names[i];
        double t0;
        if (x->kernel < 0) {
            if (!bench_anchor_linked(i)) continue;
            if (!(x->own_c = bench_alloc_floats(mn))) {
                fprintf(stderr, "warning: %s: no memory for the %s output\n", s->name, what);
                continue;
            }
            x->call.c = x->own_c;
        } else if (o->prepack) {
            luthier_status ps = luthier_sgemm_pack_b(ctx, &x->call.desc, b, &x->pb);
            if (ps != LUTHIER_STATUS_OK) {
                fprintf(stderr, "ERROR: %s: luthier_sgemm_pack_b(%s): %s: %s\n", s->name, what,
                        luthier_status_string(ps), luthier_context_error(ctx));
                x->status = "ERROR";
                continue;
            }
            x->call.pb = x->pb;
        }
        bench_fill_value(x->call.c, mn, NAN);
        t0 = bench_now();
        rc = gemm_call_run(&x->call);
        x->smp.last = bench_now() - t0;
        settle_after_anchor(x->call.anchor, o->threads);
        if (rc != 0) {
            if (x->kernel < 0) {
                fprintf(stderr, "warning: %s: %s failed; its columns stay empty\n", s->name, what);
            } else {
                fprintf(stderr, "ERROR: %s: luthier with %s: %s: %s\n", s->name, what,
                        luthier_status_string(x->call.status), luthier_context_error(ctx));
                x->status = "ERROR";
            }
            continue;
        }
        x->err = gemm_err_ref(&ref, x->call.c, s->n);
        if (x->kernel < 0) {
            if (!(x->err <= GEMM_TOL)) {
                fprintf(stderr, "WARNING: %s: %s disagrees with the exact reference (max relative "
                                "error %.3g); its columns stay empty\n", s->name, what, x->err);
                continue;
            }
        } else {
            for (j = 0; j < BENCH_NUM_ANCHORS; j++)
                if (ct[j].active) {
                    const double e = gemm_err_full(x->call.c, ct[j].own_c, mn);
                    if (!(e <= x->err)) x->err = e;
                }
            if (!(x->err <= GEMM_TOL)) {
                fprintf(stderr, "ERROR: %s (%lldx%lldx%lld): kernel %s is WRONG: max relative "
                                "error %.3g > %.0e; no time reported\n", s->name, (long long)s->m,
                        (long long)s->n, (long long)s->k, what, x->err, GEMM_TOL);
                x->status = "WRONG";
                continue;
            }
            for (j = 0; j < nisa && strcmp(isas[j], x->ki.isa) != 0; j++) continue;
            if (j == nisa && nisa < BENCH_MAX_PEAKS) isas[nisa++] = x->ki.isa;
        }
        x->active = 1;
    }

    /* 2. Timing, in rounds; the order alternates so no one always follows the same neighbour.
       The FMA peaks of the ISAs in use are re-probed every round and at the end. */
    for (r = 0; r < o->policy.rounds; r++) {
        for (j = 0; j < nisa; j++) bench_peak_probe(peaks, isas[j], 2);
        for (i = 0; i < ncont; i++) {
            gemm_contestant *x = &ct[(r % 2) ? ncont - 1 - i : i];
            if (!x->active) continue;
            rc = bench_run_round(gemm_call_run, &x->call, &o->policy, r, &x->smp);
            settle_after_anchor(x->call.anchor, o->threads);
            if (rc != 0) {
                const char *what = x->kernel >= 0 ? x->ki.name : bench_anchor_names[x - ct];
                fprintf(stderr, "%s: %s: %s failed while timing: %s\n",
                        x->kernel >= 0 ? "ERROR" : "warning", s->name, what,
                        rc == -100 ? "out of memory" : x->kernel >= 0 ? luthier_context_error(ctx) : "");
                x->active = 0;
                x->status = "ERROR";
                continue;
            }
            /* Still right after repeated calls (no stale workspace or packing state)? */
            if (x->kernel >= 0) {
                const double e = gemm_err_ref(&ref, x->call.c, s->n);
                if (!(e <= GEMM_TOL)) {
                    fprintf(stderr, "ERROR: %s: kernel %s is WRONG after repeated calls (max "
                                    "relative error %.3g)\n", s->name, x->ki.name, e);
                    x->active = 0;
                    x->status = "WRONG";
                    x->err = e;
                }
            }
        }
    }
    for (j = 0; j < nisa; j++) bench_peak_probe(peaks, isas[j], 2);

    /* 3. Results. */
    for (i = 0; i < ncont; i++) {
        gemm_contestant *x = &ct[i];
        if (x->active) x->st = bench_summarize(x->smp.t, x->smp.n);
        else if (x->kernel < 0) x->status = "off";
        if (x->kernel >= 0) x->peak = bench_peak_probe(peaks, x->ki.isa, 0);
    }
    for (i = 0; i < BENCH_NUM_ANCHORS; i++) an[i] = &ct[i];
    for (i = BENCH_NUM_ANCHORS; i < ncont; i++) {
        gemm_print_row(o, s, &ct[i], an);
        gemm_summary_add(&sum[ct[i].kernel], s, &ct[i], an);
        if (strcmp(ct[i].status, "ok") != 0) failed = 1;
    }

out:
    if (ct)
        for (i = 0; i < ncont; i++) {
            luthier_packed_b_destroy(ct[i].pb);
            free(ct[i].own_c);
            bench_sampler_free(&ct[i].smp);
        }
    free(ct);
    if (have_ref) gemm_ref_free(&ref);
    free(a);
    free(b);
    free(c);
    return failed;
}

static int cmd_gemm(int argc, char **argv) {
    const char *cmd = argv[0];
    gemm_opts o;
    gemm_shape *shapes = NULL;
    gemm_summary *sum = NULL;
    luthier_context *ctx = NULL;
    bench_peaks peaks;
    int *kernels = NULL;
    int nk = 0, nshapes = 0, si, rc, exit_code = BENCH_EXIT_OK;
    FILE *info;

    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.prepack = 1;
    o.policy.min_time = 0.2;
    o.policy.rounds = 4;
    if ((rc = gemm_parse(argc, argv, &o)) >= 0) goto done;
    if (!o.groups && !o.ncustom) o.groups = GROUP_DNN | GROUP_SQUARES;
    info = o.csv ? stderr : stdout;

    if (!(ctx = open_context(cmd, o.blocking))) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if ((rc = gemm_resolve_kernels(cmd, o.kernel_arg, ctx, &kernels, &nk)) >= 0) goto done;

    /* The shape list: dnn, squares, custom. */
    shapes = (gemm_shape *)calloc((size_t)(GEMM_N_DNN + GEMM_N_SQUARES + o.ncustom), sizeof *shapes);
    sum = (gemm_summary *)calloc((size_t)nk, sizeof *sum);
    if (!shapes || !sum) {
        fprintf(stderr, "%s %s: error: out of memory\n", bench_prog, cmd);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (o.groups & GROUP_DNN)
        for (si = 0; si < GEMM_N_DNN; si++) {
            gemm_shape *s = &shapes[nshapes++];
            snprintf(s->name, sizeof s->name, "%s", gemm_dnn_shapes[si].name);
            s->m = gemm_dnn_shapes[si].m;
            s->n = gemm_dnn_shapes[si].n;
            s->k = gemm_dnn_shapes[si].k;
            s->group = GROUP_DNN;
        }
    if (o.groups & GROUP_SQUARES)
        for (si = 0; si < GEMM_N_SQUARES; si++) {
            gemm_shape *s = &shapes[nshapes++];
            const int64_t d = gemm_square_sizes[si];
            snprintf(s->name, sizeof s->name, "square_%lld", (long long)d);
            s->m = s->n = s->k = d;
            s->group = GROUP_SQUARES;
        }
    for (si = 0; si < o.ncustom; si++) shapes[nshapes++] = o.custom[si];

    bench_anchors_set_threads(o.threads, stderr);
    if (o.threads > 1)
        fprintf(stderr, "note: luthier is single-threaded in this version: it runs on 1 thread, "
                        "the anchors on %d; ratios compare the two\n", o.threads);

    bench_peaks_measure(&peaks, 0.5);
    fprintf(info, "luthier-bench gemm: luthier v%d.%d.%d\n", LUTHIER_VERSION_MAJOR,
            LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH);
    print_cpu(info);
    print_peaks(info, &peaks);
    bench_anchors_describe(info);
    if (o.blocking[0] || o.blocking[1] || o.blocking[2])
        fprintf(info, "blocking kc %zu, mc %zu, nc %zu (0 = derived from the caches)\n",
                o.blocking[0], o.blocking[1], o.blocking[2]);
    fprintf(info, "mode     %s; luthier 1 thread, anchors %d thread(s)\n",
            o.prepack ? "B pre-packed outside the timed loop (luthier_sgemm_packed)"
                      : "luthier_sgemm timed including the packing of B",
            o.threads);
    if (o.policy.reps > 0) fprintf(info, "timing   %ld repetitions per case", o.policy.reps);
    else fprintf(info, "timing   >= %.2f s per case", o.policy.min_time);
    fprintf(info, ", in %d rounds interleaving luthier and the anchors, after a checked call;\n"
                  "         GF/s from the fastest repetition\n", o.policy.rounds);

    if (o.csv)
        printf("name,M,N,K,threads,kernel,luthier_gflops,openblas_gflops,onednn_gflops,peak_pct,"
               "luthier_ms_min,luthier_ms_median,gbps,isa,prepack,reps,openblas_ms_min,"
               "onednn_ms_min,peak_gflops,max_rel_err,status\n");
    else {
        printf("\n");
        gemm_table_header();
    }
    fflush(stdout);

    for (si = 0; si < nshapes; si++)
        if (gemm_run_shape(&o, &shapes[si], si, ctx, kernels, nk, &peaks, sum) != 0)
            exit_code = BENCH_EXIT_FAIL;

    gemm_print_summary(info, sum, kernels, nk, o.threads);
    if (!o.csv)
        printf("\nvs OBLAS / vs DNNL = luthier GF/s / anchor GF/s (> 1: luthier is faster)\n");
    if (exit_code != BENCH_EXIT_OK)
        fprintf(stderr, "%s gemm: FAILED: a kernel gave a wrong result or an error (see above)\n",
                bench_prog);
    rc = exit_code;

done:
    luthier_context_destroy(ctx);
    free(kernels);
    free(shapes);
    free(sum);
    free(o.custom);
    return rc;
}

/* ================================================================================================
   command table and main
   ================================================================================================ */

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
            "2 bad command line. Environment: LUTHIER_KERNEL sets the default kernel.\n");
}

static const bench_command *find_command(const char *name) {
    int i;
    for (i = 0; i < BENCH_NUM_COMMANDS; i++)
        if (strcmp(bench_commands[i].name, name) == 0) return &bench_commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    const bench_command *c;
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
