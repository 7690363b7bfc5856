/* bench_int8.h - `luthier-bench gemm --int8` and `luthier-bench conv --int8` (per-layer int8
   convolution against luthier's fp32 convolution, see the conv section below): int8 GEMM (luthier_qgemm_packed) against luthier's
   own fp32 GEMM (luthier_sgemm_packed, the context's kernel) and oneDNN's dnnl_gemm_u8s8s32
   when linked, on the DNN shapes of `gemm`, measured in the same run and in alternating
   rounds.

   Part of the single translation unit bench/luthier_bench.c (included before cmd_gemm, after
   the gemm helpers it reuses: gemm_dnn_shapes, open_context, bench_parse_run_option, cell).

   What is timed, per shape (A m x k uint8, B k x n int8 packed once outside the timed loop):
     int8      luthier_qgemm_packed, uint8 output requantized per column (per-channel
               multipliers and shifts), int32 bias, a_zero_point 128: a quantized layer
     int8_i32  the same with the raw int32 output (what oneDNN's gemm computes)
     fp32      luthier_sgemm_packed on float copies of the same data
     oneDNN    dnnl_gemm_u8s8s32('N', 'N', 'F', ..., ao = 128, bo = 0, co = 0): int32 output
   Every contestant's first result is checked: int8 and int8_i32 bit for bit against a naive
   int64 reference on sampled rows (and oneDNN against int8_i32 on the whole of C), fp32 against
   a double reference. GOP/s = 2*M*N*K / fastest repetition.
*/
#ifndef LUTHIER_BENCH_INT8_H
#define LUTHIER_BENCH_INT8_H

enum { Q8_INT8, Q8_INT8_I32, Q8_FP32, Q8_DNNL, Q8_COUNT };
static const char *const q8_names[Q8_COUNT] = {"int8", "int8_i32", "fp32", "oneDNN u8s8s32"};

static void usage_gemm_int8(FILE *out) {
    fprintf(out,
            "Usage: %s gemm --int8 [options]\n"
            "int8 GEMM (uint8 A x int8 B, requantized uint8 output, per-column scales) against\n"
            "luthier's fp32 GEMM and oneDNN's dnnl_gemm_u8s8s32 (when linked) on the DNN shapes\n"
            "of 'gemm', in one run with alternating rounds. Results are checked (int8 bit-exact).\n"
            "\n"
            "Options:\n"
            "  --kernel K     int8 kernel: default (the best this CPU runs), all, or names\n"
            "                 (full or short, comma-separated), e.g. 6x64__avx512vnni\n"
            "  --threads N    threads of luthier's context and oneDNN (default 1)\n"
            "  --reps R, --rounds N, --min-time S   as for 'gemm' (default: >= 0.2 s, 4 rounds)\n"
            "  --csv          one row per (shape, kernel) with a header; notes go to stderr\n"
            "\n"
            "Columns: int8 GOP/s (uint8 output), int8 i32 (int32 output), fp32 GF/s (the context's\n"
            "fp32 kernel), x fp32 = int8 / fp32, oneDNN = dnnl_gemm_u8s8s32 GOP/s, x DNNL = int8 i32 /\n"
            "oneDNN. The summary gives geometric means over all shapes and over those with M > 1.\n",
            bench_prog);
}

typedef struct q8_contestant {
    int active;
    const char *status;
    bench_sampler smp;
    bench_stats st;
} q8_contestant;

typedef struct q8_call {
    int which;
    luthier_context *ctx;
    luthier_qgemm_desc qd;
    luthier_sgemm_desc fd;
    const luthier_qpacked_b *qpb;
    const luthier_packed_b *fpb;
    const uint8_t *a;
    const int8_t *b;
    const float *af;
    void *c;
    float *cf;
    int32_t *ci;
} q8_call;

static int q8_call_run(void *arg) {
    q8_call *q = (q8_call *)arg;
    if (q->which == Q8_FP32) return luthier_sgemm_packed(q->ctx, &q->fd, q->af, q->fpb, q->cf) != LUTHIER_STATUS_OK;
    if (q->which == Q8_DNNL) {
#ifdef LUTHIER_HAVE_DNNL
        const int32_t co = 0;
        return dnnl_gemm_u8s8s32('N', 'N', 'F', q->qd.m, q->qd.n, q->qd.k, 1.0f, q->a, q->qd.k,
                                 (uint8_t)q->qd.a_zero_point, q->b, q->qd.n, 0, 0.0f, q->ci, q->qd.n,
                                 &co) != dnnl_success;
#else
        return -1;
#endif
    }
    return luthier_qgemm_packed(q->ctx, &q->qd, q->a, q->qpb, q->c) != LUTHIER_STATUS_OK;
}

typedef struct q8_summary {
    bench_geomean g[2][5]; /* [all, M > 1][int8, fp32, ratio, oneDNN, int8_i32 / oneDNN] */
} q8_summary;

/* The matrices of one shape: uint8 A / int8 B with their fp32 twins, the outputs, the
   requantization. */
typedef struct q8_bufs {
    int64_t m, n, k;
    uint8_t *a, *c8;
    int8_t *b;
    float *af, *bf, *cf;
    int32_t *ci, *cd, *bias, *mult, *shift;
} q8_bufs;

static int q8_bufs_alloc(q8_bufs *d, int64_t m, int64_t n, int64_t k, uint64_t *seed) {
    const size_t mk = (size_t)(m * k), kn = (size_t)(k * n), mn = (size_t)(m * n);
    size_t e;
    int i;
    memset(d, 0, sizeof *d);
    d->m = m, d->n = n, d->k = k;
    d->a = (uint8_t *)malloc(mk), d->c8 = (uint8_t *)malloc(mn), d->b = (int8_t *)malloc(kn);
    d->af = bench_alloc_floats(mk), d->bf = bench_alloc_floats(kn), d->cf = bench_alloc_floats(mn);
    d->ci = (int32_t *)malloc(mn * 4), d->cd = (int32_t *)malloc(mn * 4), d->bias = (int32_t *)malloc((size_t)n * 4);
    d->mult = (int32_t *)malloc((size_t)n * 4), d->shift = (int32_t *)malloc((size_t)n * 4);
    if (!d->a || !d->c8 || !d->b || !d->af || !d->bf || !d->cf || !d->ci || !d->cd || !d->bias || !d->mult || !d->shift)
        return 1;
    for (e = 0; e < mk; e++) d->a[e] = (uint8_t)(bench_rand_u64(seed) >> 56);
    for (e = 0; e < kn; e++) d->b[e] = (int8_t)((int)(bench_rand_u64(seed) % 255) - 127);
    for (e = 0; e < mk; e++) d->af[e] = ((float)d->a[e] - 128.0f) * (1.0f / 128.0f);
    for (e = 0; e < kn; e++) d->bf[e] = (float)d->b[e] * (1.0f / 127.0f);
    for (i = 0; i < (int)n; i++) {
        d->bias[i] = (int32_t)(bench_rand_u64(seed) % 20001) - 10000;
        luthier_quantize_multiplier(4.0 / sqrt((double)k) / (255.0 * 127.0) * (0.5 + (double)(i % 7) / 7.0), &d->mult[i],
                                    &d->shift[i]);
    }
    return 0;
}

static void q8_bufs_free(q8_bufs *d) {
    free(d->a); free(d->c8); free(d->b); free(d->af); free(d->bf); free(d->cf);
    free(d->ci); free(d->cd); free(d->bias); free(d->mult); free(d->shift);
}

/* The contestants' calls on d (the luthier ones with kernel). */
static void q8_calls_init(q8_call *calls, q8_contestant *ct, const q8_bufs *d, luthier_context *ctx, const char *kernel) {
    int i;
    for (i = 0; i < Q8_COUNT; i++) {
        q8_call *q = &calls[i];
        q->which = i;
        q->ctx = ctx;
        q->qd.m = d->m; q->qd.n = d->n; q->qd.k = d->k;
        q->qd.a_zero_point = 128;
        q->qd.bias = d->bias;
        q->qd.output = i == Q8_INT8 ? LUTHIER_QOUTPUT_UINT8 : LUTHIER_QOUTPUT_INT32;
        q->qd.output_zero_point = 100;
        q->qd.multipliers = d->mult;
        q->qd.shifts = d->shift;
        q->qd.kernel = kernel;
        q->fd.m = d->m; q->fd.n = d->n; q->fd.k = d->k;
        q->a = d->a; q->b = d->b; q->af = d->af;
        q->c = i == Q8_INT8 ? (void *)d->c8 : (void *)d->ci;
        q->cf = d->cf;
        q->ci = d->cd;
        ct[i].status = "ok";
    }
}

/* Row `row` of contestant i's result against the exact int8 / double references: the first
   wrong column, or -1. */
static int64_t q8_wrong_column(const q8_bufs *d, int i, int64_t row) {
    int64_t j, kk, n = d->n, k = d->k;
    for (j = 0; j < n; j++) {
        int64_t acc = d->bias[j];
        double ref = 0.0;
        int bad = 0;
        for (kk = 0; kk < k; kk++) {
            acc += ((int64_t)d->a[row * k + kk] - 128) * d->b[kk * n + j];
            ref += (double)d->af[row * k + kk] * (double)d->bf[kk * n + j];
        }
        if (i == Q8_INT8) bad = d->c8[row * n + j] != luthier_requantize((int32_t)acc, d->mult[j], d->shift[j], 100, 0, 255);
        else if (i == Q8_INT8_I32) bad = d->ci[row * n + j] != (int32_t)acc;
        else if (i == Q8_FP32) bad = !(fabs(d->cf[row * n + j] - ref) <= 1e-3 * (1.0 + sqrt((double)k)));
        if (bad) return j;
    }
    return -1;
}

/* One checked call of each contestant (sampled rows: first, last, pseudo-random; oneDNN
   against luthier's int32 output). Returns 1 when a luthier result was wrong or failed. */
static int q8_check(const char *name, const q8_bufs *d, q8_call *calls, q8_contestant *ct, luthier_context *ctx,
                    uint64_t *seed) {
    const size_t mn = (size_t)(d->m * d->n);
    int i, r, failed = 0;
    for (i = 0; i < Q8_COUNT; i++) {
        double t0;
        if (i == Q8_DNNL && !bench_anchor_linked(BENCH_ANCHOR_DNNL)) continue;
        memset(i == Q8_INT8 ? (void *)d->c8 : i == Q8_FP32 ? (void *)d->cf : i == Q8_DNNL ? (void *)d->cd : (void *)d->ci,
               0xee, i == Q8_INT8 ? mn : mn * 4);
        t0 = bench_now();
        if (q8_call_run(&calls[i]) != 0) {
            fprintf(stderr, "%s: %s: %s failed: %s\n", i == Q8_DNNL ? "warning" : "ERROR", name, q8_names[i],
                    i == Q8_DNNL ? "" : luthier_context_error(ctx));
            ct[i].status = "ERROR";
            failed |= i != Q8_DNNL;
            continue;
        }
        ct[i].smp.last = bench_now() - t0;
        for (r = 0; r < 24; r++) {
            const int64_t row = r < 4 ? r : r < 8 ? d->m - 1 - (r - 4) : (int64_t)(bench_rand_u64(seed) % (uint64_t)d->m);
            int64_t col;
            if (row < 0 || row >= d->m || (col = q8_wrong_column(d, i, row)) < 0) continue;
            fprintf(stderr, "ERROR: %s (%lldx%lldx%lld): %s is WRONG in row %lld column %lld\n", name, (long long)d->m,
                    (long long)d->n, (long long)d->k, q8_names[i], (long long)row, (long long)col);
            ct[i].status = "WRONG";
            failed = 1;
            break;
        }
        if (i == Q8_DNNL && memcmp(d->cd, d->ci, mn * 4) != 0) { /* bias differs: compare without it */
            size_t x;
            int bad = 0;
            for (x = 0; x < mn && !bad; x++) bad = d->cd[x] != (int32_t)((uint32_t)d->ci[x] - (uint32_t)d->bias[x % (size_t)d->n]);
            if (bad) {
                fprintf(stderr, "warning: %s: oneDNN disagrees with luthier's int32 output; its column stays empty\n", name);
                ct[i].status = "WRONG";
                continue;
            }
        }
        ct[i].active = strcmp(ct[i].status, "ok") == 0;
    }
    return failed;
}

/* The shape's line (table or CSV) and its share of the geometric means. */
static void q8_report(const char *name, const q8_bufs *d, const q8_contestant *ct, const luthier_kernel_info *ki,
                      luthier_context *ctx, int threads, int csv, int failed, q8_summary *sum) {
    const double ops = 2.0 * (double)d->m * (double)d->n * (double)d->k;
    double g[Q8_COUNT];
    char b0[32], b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    int i, s;
    for (i = 0; i < Q8_COUNT; i++) g[i] = ct[i].active && ct[i].st.min > 0.0 ? ops / ct[i].st.min * 1e-9 : 0.0;
    if (csv)
        printf("%s,%lld,%lld,%lld,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", name, (long long)d->m, (long long)d->n, (long long)d->k,
               threads, ki->name, csv_cell(b0, 32, g[Q8_INT8], 2, g[Q8_INT8] > 0), csv_cell(b1, 32, g[Q8_FP32], 2, g[Q8_FP32] > 0),
               csv_cell(b2, 32, g[Q8_FP32] > 0 ? g[Q8_INT8] / g[Q8_FP32] : 0, 3, g[Q8_INT8] > 0 && g[Q8_FP32] > 0),
               csv_cell(b3, 32, g[Q8_INT8_I32], 2, g[Q8_INT8_I32] > 0), csv_cell(b4, 32, g[Q8_DNNL], 2, g[Q8_DNNL] > 0),
               csv_cell(b5, 32, ct[Q8_INT8].st.min * 1e3, 4, g[Q8_INT8] > 0),
               csv_cell(b6, 32, ct[Q8_FP32].st.min * 1e3, 4, g[Q8_FP32] > 0), luthier_context_kernel(ctx),
               failed ? "FAILED" : "ok");
    else
        printf("%-16s %6lld %5lld %5lld  %-20s %8s %8s %7s %8s %8s %7s %9s\n", name, (long long)d->m, (long long)d->n,
               (long long)d->k, ki->name + strlen("luthier_qgemm_ukernel_"),
               g[Q8_INT8] > 0 ? cell(b0, 32, g[Q8_INT8], 1, 1) : ct[Q8_INT8].status, cell(b1, 32, g[Q8_INT8_I32], 1, g[Q8_INT8_I32] > 0),
               cell(b2, 32, g[Q8_FP32] > 0 && g[Q8_INT8] > 0 ? g[Q8_INT8] / g[Q8_FP32] : 0, 2, g[Q8_FP32] > 0 && g[Q8_INT8] > 0),
               cell(b3, 32, g[Q8_FP32], 1, g[Q8_FP32] > 0), cell(b4, 32, g[Q8_DNNL], 1, g[Q8_DNNL] > 0),
               cell(b5, 32, g[Q8_DNNL] > 0 ? g[Q8_INT8_I32] / g[Q8_DNNL] : 0, 2, g[Q8_DNNL] > 0 && g[Q8_INT8_I32] > 0),
               cell(b6, 32, ct[Q8_INT8].st.min * 1e3, ms_decimals(ct[Q8_INT8].st.min), g[Q8_INT8] > 0));
    fflush(stdout);
    for (s = 0; s < 2; s++) {
        if (s == 1 && d->m <= 1) continue;
        bench_geomean_add(&sum->g[s][0], g[Q8_INT8]);
        bench_geomean_add(&sum->g[s][1], g[Q8_FP32]);
        if (g[Q8_FP32] > 0) bench_geomean_add(&sum->g[s][2], g[Q8_INT8] / g[Q8_FP32]);
        bench_geomean_add(&sum->g[s][3], g[Q8_DNNL]);
        if (g[Q8_DNNL] > 0) bench_geomean_add(&sum->g[s][4], g[Q8_INT8_I32] / g[Q8_DNNL]);
    }
}

/* Checks, times and prints one (shape, kernel). Returns 0 when every luthier result was right. */
static int q8_run_shape(const char *name, int64_t m, int64_t n, int64_t k, int shape_index, luthier_context *ctx,
                        int kernel, const bench_policy *pol, int threads, int csv, q8_summary *sum) {
    luthier_qpacked_b *qpb = NULL, *qpb32 = NULL;
    luthier_packed_b *fpb = NULL;
    q8_call calls[Q8_COUNT];
    q8_contestant ct[Q8_COUNT];
    luthier_kernel_info ki;
    q8_bufs d;
    uint64_t seed = 0x8000u + (uint64_t)shape_index;
    int i, r, failed = 0;
    memset(ct, 0, sizeof ct);
    memset(calls, 0, sizeof calls);
    luthier_qkernel_get(kernel, &ki);
    if (q8_bufs_alloc(&d, m, n, k, &seed)) {
        fprintf(stderr, "ERROR: %s: cannot allocate the matrices\n", name);
        failed = 1;
        goto out;
    }
    q8_calls_init(calls, ct, &d, ctx, ki.name);
    /* packing (outside the timed loop) */
    if (luthier_qgemm_pack_b(ctx, &calls[Q8_INT8].qd, d.b, &qpb) != LUTHIER_STATUS_OK ||
        luthier_qgemm_pack_b(ctx, &calls[Q8_INT8_I32].qd, d.b, &qpb32) != LUTHIER_STATUS_OK ||
        luthier_sgemm_pack_b(ctx, &calls[Q8_FP32].fd, d.bf, &fpb) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "ERROR: %s: packing B: %s\n", name, luthier_context_error(ctx));
        failed = 1;
        goto out;
    }
    calls[Q8_INT8].qpb = qpb;
    calls[Q8_INT8_I32].qpb = qpb32;
    calls[Q8_FP32].fpb = fpb;
    failed = q8_check(name, &d, calls, ct, ctx, &seed);
    /* timing in alternating rounds */
    for (r = 0; r < pol->rounds; r++)
        for (i = 0; i < Q8_COUNT; i++) {
            const int w = (r % 2) ? Q8_COUNT - 1 - i : i;
            if (!ct[w].active) continue;
            if (bench_run_round(q8_call_run, &calls[w], pol, r, &ct[w].smp) != 0) {
                fprintf(stderr, "ERROR: %s: %s failed while timing\n", name, q8_names[w]);
                ct[w].active = 0;
                ct[w].status = "ERROR";
                failed |= w != Q8_DNNL;
            }
        }
    for (i = 0; i < Q8_COUNT; i++)
        if (ct[i].active) ct[i].st = bench_summarize(ct[i].smp.t, ct[i].smp.n);
    q8_report(name, &d, ct, &ki, ctx, threads, csv, failed, sum);
out:
    for (i = 0; i < Q8_COUNT; i++) bench_sampler_free(&ct[i].smp);
    luthier_qpacked_b_destroy(qpb);
    luthier_qpacked_b_destroy(qpb32);
    luthier_packed_b_destroy(fpb);
    q8_bufs_free(&d);
    return failed;
}

static int cmd_gemm_int8(int argc, char **argv) {
    const char *cmd = argv[0], *kernel_arg = NULL, *val;
    bench_policy pol;
    luthier_context *ctx = NULL;
    q8_summary *sum = NULL;
    int kernels[64], nk = 0, threads = 1, csv = 0, i, r, si, rc = BENCH_EXIT_OK;
    memset(&pol, 0, sizeof pol);
    pol.min_time = 0.2;
    pol.rounds = 4;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_gemm_int8(stdout);
            return BENCH_EXIT_OK;
        } else if (strcmp(argv[i], "--int8") == 0) {
            continue;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--kernel", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            kernel_arg = val;
        } else if ((r = bench_parse_run_option(argc, argv, &i, cmd, &pol, &threads, NULL, NULL)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            csv = 1;
        } else {
            bench_usage_error(cmd, "%s '%s' (with --int8: --kernel, --threads, --reps, --rounds, --min-time, --csv)",
                              argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    if (!(ctx = open_context(cmd, NULL, threads))) return BENCH_EXIT_FAIL;
    /* the int8 kernels to run */
    if (!kernel_arg || strcmp(kernel_arg, "default") == 0) {
        kernels[nk++] = luthier__qkernel_default(ctx, 256);
    } else {
        char buf[512], *tok, *save = NULL;
        snprintf(buf, sizeof buf, "%s", kernel_arg);
        for (i = 0; i < luthier_qkernel_count() && strcmp(kernel_arg, "all") == 0; i++) {
            luthier_kernel_info ki;
            if (luthier_qkernel_get(i, &ki) == LUTHIER_STATUS_OK && ki.available && nk < 64) kernels[nk++] = i;
        }
        for (tok = strcmp(kernel_arg, "all") == 0 ? NULL : strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            luthier_kernel_info ki;
            int idx;
            if (luthier_qkernel_find(tok, &idx) != LUTHIER_STATUS_OK || luthier_qkernel_get(idx, &ki) != LUTHIER_STATUS_OK ||
                !ki.available) {
                bench_usage_error(cmd, "no int8 kernel '%s' this CPU runs (--kernel all runs every one)", tok);
                luthier_context_destroy(ctx);
                return BENCH_EXIT_USAGE;
            }
            if (nk < 64) kernels[nk++] = idx;
        }
    }
    if (!(sum = (q8_summary *)calloc((size_t)(nk > 0 ? nk : 1), sizeof *sum))) {
        luthier_context_destroy(ctx);
        return BENCH_EXIT_FAIL;
    }
    bench_anchors_set_threads(threads, stderr);
    fprintf(csv ? stderr : stdout, "luthier-bench gemm --int8: luthier v%d.%d.%d, %d thread(s)\n", LUTHIER_VERSION_MAJOR,
            LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH, luthier_context_num_threads(ctx));
    print_cpu(csv ? stderr : stdout);
    fprintf(csv ? stderr : stdout, "int8 isa%s%s%s%s\n", luthier_cpu_features() & LUTHIER_CPU_AVX512VNNI ? " avx512vnni" : "",
            luthier_cpu_features() & LUTHIER_CPU_AVXVNNI ? " avxvnni" : "",
            luthier_cpu_features() & LUTHIER_CPU_DOTPROD ? " dotprod" : "",
            luthier_cpu_features() & (LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVXVNNI | LUTHIER_CPU_DOTPROD) ? "" : " (no dot product)");
    fprintf(csv ? stderr : stdout, "int8     uint8 A (za 128) x int8 B (packed), uint8 output, per-column requantization;"
                                   " fp32 kernel %s; oneDNN: %s\n", luthier_context_kernel(ctx),
            bench_anchor_linked(BENCH_ANCHOR_DNNL) ? "dnnl_gemm_u8s8s32" : "not linked");
    if (csv)
        printf("name,M,N,K,threads,kernel,int8_gops,fp32_gflops,int8_vs_fp32,int8_i32_gops,onednn_u8s8s32_gops,"
               "int8_ms_min,fp32_ms_min,fp32_kernel,status\n");
    else
        printf("\n%-16s %6s %5s %5s  %-20s %8s %8s %7s %8s %8s %7s %9s\n", "name", "M", "N", "K", "int8 kernel", "int8",
               "int8 i32", "x fp32", "fp32", "oneDNN", "x DNNL", "ms(min)");
    for (si = 0; si < GEMM_N_DNN; si++)
        for (i = 0; i < nk; i++)
            if (q8_run_shape(gemm_dnn_shapes[si].name, gemm_dnn_shapes[si].m, gemm_dnn_shapes[si].n, gemm_dnn_shapes[si].k,
                             si, ctx, kernels[i], &pol, luthier_context_num_threads(ctx), csv, &sum[i]) != 0)
                rc = BENCH_EXIT_FAIL;
    for (i = 0; i < nk; i++) {
        static const char *const titles[2] = {"all shapes", "M > 1"};
        luthier_kernel_info ki;
        int s;
        luthier_qkernel_get(kernels[i], &ki);
        for (s = 0; s < 2; s++)
            fprintf(csv ? stderr : stdout,
                    "%sgeomean %-10s %s: int8 %.1f GOP/s, fp32 %.1f GF/s, int8/fp32 %.2fx, oneDNN u8s8s32 %.1f GOP/s, "
                    "int8 i32/oneDNN %.2fx (%d shapes)\n", s == 0 && i == 0 ? "\n" : "", titles[s], ki.name,
                    bench_geomean_get(&sum[i].g[s][0]), bench_geomean_get(&sum[i].g[s][1]),
                    bench_geomean_get(&sum[i].g[s][2]), bench_geomean_get(&sum[i].g[s][3]),
                    bench_geomean_get(&sum[i].g[s][4]), sum[i].g[s][0].count);
    }
    if (rc != BENCH_EXIT_OK) fprintf(stderr, "%s gemm --int8: FAILED: a wrong result or an error (see above)\n", bench_prog);
    free(sum);
    luthier_context_destroy(ctx);
    return rc;
}

/* Whether `gemm` was asked for --int8. */
static int gemm_wants_int8(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--int8") == 0) return 1;
    return 0;
}

/* ---- conv --int8 -------------------------------------------------------------------------------
   `luthier-bench conv --int8`: per layer of ResNet-50 and MobileNetV2 (batch 1, NHWC), the int8
   convolution (luthier_qconv2d_run, AUTO algorithm, uint8 output requantized per channel, int32
   bias, input zero point 128) against luthier's fp32 convolution (luthier_conv2d_run, AUTO,
   bias) of the same layer, in the same run and in alternating rounds. The int8 result is checked
   bit for bit against a naive int64 convolution on sampled output pixels (all channels). */

typedef struct qc8_layer {
    const char *name;
    int64_t cin, hw, cout, k, stride, groups; /* square input and kernel, pad (k - 1) / 2 */
    int set;                                  /* 1 = ResNet-50, 2 = MobileNetV2 */
} qc8_layer;

static const qc8_layer qc8_layers[] = {
    {"r50_conv1_7x7s2", 3, 224, 64, 7, 2, 1, 1},
    {"r50_res2_1x1_64_64", 64, 56, 64, 1, 1, 1, 1},
    {"r50_res2_3x3_64", 64, 56, 64, 3, 1, 1, 1},
    {"r50_res2_1x1_64_256", 64, 56, 256, 1, 1, 1, 1},
    {"r50_res2_1x1_256_64", 256, 56, 64, 1, 1, 1, 1},
    {"r50_res3_1x1s2_256_512", 256, 56, 512, 1, 2, 1, 1},
    {"r50_res3_3x3_128", 128, 28, 128, 3, 1, 1, 1},
    {"r50_res3_1x1_512_128", 512, 28, 128, 1, 1, 1, 1},
    {"r50_res4_3x3_256", 256, 14, 256, 3, 1, 1, 1},
    {"r50_res4_1x1_256_1024", 256, 14, 1024, 1, 1, 1, 1},
    {"r50_res4_1x1_1024_256", 1024, 14, 256, 1, 1, 1, 1},
    {"r50_res5_3x3_512", 512, 7, 512, 3, 1, 1, 1},
    {"r50_res5_1x1_2048_512", 2048, 7, 512, 1, 1, 1, 1},
    {"mbv2_conv1_3x3s2", 3, 224, 32, 3, 2, 1, 2},
    {"mbv2_dw112_32", 32, 112, 32, 3, 1, 32, 2},
    {"mbv2_pw112_32_16", 32, 112, 16, 1, 1, 1, 2},
    {"mbv2_pw112_16_96", 16, 112, 96, 1, 1, 1, 2},
    {"mbv2_dw112s2_96", 96, 112, 96, 3, 2, 96, 2},
    {"mbv2_pw56_96_24", 96, 56, 24, 1, 1, 1, 2},
    {"mbv2_dw56_144", 144, 56, 144, 3, 1, 144, 2},
    {"mbv2_pw56_144_24", 144, 56, 24, 1, 1, 1, 2},
    {"mbv2_dw56s2_144", 144, 56, 144, 3, 2, 144, 2},
    {"mbv2_dw28_192", 192, 28, 192, 3, 1, 192, 2},
    {"mbv2_dw28s2_192", 192, 28, 192, 3, 2, 192, 2},
    {"mbv2_dw14_384", 384, 14, 384, 3, 1, 384, 2},
    {"mbv2_pw14_384_64", 384, 14, 64, 1, 1, 1, 2},
    {"mbv2_dw14_576", 576, 14, 576, 3, 1, 576, 2},
    {"mbv2_dw14s2_576", 576, 14, 576, 3, 2, 576, 2},
    {"mbv2_dw7_960", 960, 7, 960, 3, 1, 960, 2},
    {"mbv2_pw7_960_160", 960, 7, 160, 1, 1, 1, 2},
};
#define QC8_N_LAYERS ((int)(sizeof qc8_layers / sizeof qc8_layers[0]))

static void usage_conv_int8(FILE *out) {
    fprintf(out,
            "Usage: %s conv --int8 [options]\n"
            "int8 convolution (luthier_qconv2d: uint8 input, int8 weights, per-channel requantized\n"
            "uint8 output, AUTO algorithm) against luthier's fp32 convolution (luthier_conv2d, AUTO)\n"
            "of the same layer, per ResNet-50 / MobileNetV2 layer (batch 1, NHWC), in one run with\n"
            "alternating rounds. The int8 output is checked bit for bit on sampled pixels.\n"
            "\n"
            "Options:\n"
            "  --layers SET   all (default), resnet50 or mobilenetv2\n"
            "  --threads N    threads of the context (default 1)\n"
            "  --reps R, --rounds N, --min-time S   as for 'gemm' (default: >= 0.2 s, 4 rounds)\n"
            "  --quick        shorter timing (>= 0.05 s, 2 rounds) unless given\n"
            "  --csv          one row per layer with a header; notes go to stderr\n"
            "\n"
            "Columns: int8 and fp32 algorithm, best time in ms, x fp32 = fp32 time / int8 time,\n"
            "int8 GOP/s (2 * MACs / time). The summary gives geometric means per layer kind.\n",
            bench_prog);
}

typedef struct qc8_call {
    int fp32;
    luthier_context *ctx;
    const luthier_qconv2d_layer *q;
    const luthier_conv2d_layer *f;
    const uint8_t *in;
    const float *inf;
    void *out;
} qc8_call;

static int qc8_call_run(void *arg) {
    const qc8_call *c = (const qc8_call *)arg;
    if (c->fp32) return luthier_conv2d_run(c->ctx, c->f, c->inf, (float *)c->out) != LUTHIER_STATUS_OK;
    return luthier_qconv2d_run(c->ctx, c->q, c->in, c->out) != LUTHIER_STATUS_OK;
}

/* Output pixel (oy, ox) of the int8 layer by definition, compared with got (NHWC). */
static int qc8_check_pixel(const qc8_layer *l, int64_t oh, const uint8_t *in, const int8_t *w, const int32_t *bias,
                           const int32_t *mult, const int32_t *shift, int64_t oy, int64_t ox, const uint8_t *got) {
    const int64_t pad = (l->k - 1) / 2, cig = l->cin / l->groups, cog = l->cout / l->groups;
    int64_t co, ci, kh, kw;
    for (co = 0; co < l->cout; co++) {
        int64_t acc = bias[co];
        for (ci = 0; ci < cig; ci++)
            for (kh = 0; kh < l->k; kh++)
                for (kw = 0; kw < l->k; kw++) {
                    const int64_t iy = oy * l->stride - pad + kh, ix = ox * l->stride - pad + kw;
                    if (iy < 0 || iy >= l->hw || ix < 0 || ix >= l->hw) continue;
                    acc += ((int64_t)in[(iy * l->hw + ix) * l->cin + (co / cog) * cig + ci] - 128) *
                           w[((co * cig + ci) * l->k + kh) * l->k + kw];
                }
        if (got[(oy * oh + ox) * l->cout + co] != luthier_requantize((int32_t)acc, mult[co], shift[co], 100, 0, 255))
            return 1;
    }
    return 0;
}

typedef struct qc8_summary {
    bench_geomean g[3]; /* x fp32 of depthwise, 1x1, other */
} qc8_summary;

static int qc8_run_layer(const qc8_layer *l, luthier_context *ctx, const bench_policy *pol, int csv, qc8_summary *sum) {
    const int64_t pad = (l->k - 1) / 2, oh = (l->hw + 2 * pad - l->k) / l->stride + 1;
    const int64_t kdim = l->k * l->k * (l->cin / l->groups);
    const size_t in_n = (size_t)(l->hw * l->hw * l->cin), w_n = (size_t)(l->cout * kdim);
    const size_t out_n = (size_t)(oh * oh * l->cout);
    const double ops = 2.0 * (double)out_n * (double)kdim;
    uint8_t *in = (uint8_t *)malloc(in_n), *out8 = (uint8_t *)malloc(out_n);
    int8_t *w = (int8_t *)malloc(w_n);
    float *inf = bench_alloc_floats(in_n), *wf = bench_alloc_floats(w_n), *outf = bench_alloc_floats(out_n);
    float *biasf = bench_alloc_floats((size_t)l->cout);
    int32_t *bias = (int32_t *)malloc((size_t)l->cout * 4), *mult = (int32_t *)malloc((size_t)l->cout * 4);
    int32_t *shift = (int32_t *)malloc((size_t)l->cout * 4);
    luthier_qconv2d_desc qd;
    luthier_conv2d_desc fd;
    luthier_qconv2d_layer *q = NULL;
    luthier_conv2d_layer *f = NULL;
    luthier_conv2d_info qi, fi;
    qc8_call calls[2];
    bench_sampler smp[2];
    bench_stats st[2];
    uint64_t seed = 0xc0de8u + (uint64_t)l->cin * 131u + (uint64_t)l->cout;
    int failed = 0, r, i, active = 1;
    size_t e;
    memset(smp, 0, sizeof smp);
    memset(st, 0, sizeof st);
    if (!in || !out8 || !w || !inf || !wf || !outf || !biasf || !bias || !mult || !shift) {
        fprintf(stderr, "ERROR: %s: cannot allocate the tensors\n", l->name);
        failed = 1;
        goto out;
    }
    for (e = 0; e < in_n; e++) in[e] = (uint8_t)(bench_rand_u64(&seed) >> 56);
    for (e = 0; e < w_n; e++) w[e] = (int8_t)((int)(bench_rand_u64(&seed) % 255) - 127);
    for (e = 0; e < in_n; e++) inf[e] = ((float)in[e] - 128.0f) * (1.0f / 128.0f);
    for (e = 0; e < w_n; e++) wf[e] = (float)w[e] * (1.0f / 127.0f);
    for (i = 0; i < (int)l->cout; i++) {
        bias[i] = (int32_t)(bench_rand_u64(&seed) % 20001) - 10000;
        biasf[i] = (float)bias[i] * (1.0f / (128.0f * 127.0f));
        luthier_quantize_multiplier(4.0 / sqrt((double)kdim) / (255.0 * 127.0) * (0.5 + (double)(i % 7) / 7.0), &mult[i],
                                    &shift[i]);
    }
    memset(&qd, 0, sizeof qd);
    memset(&fd, 0, sizeof fd);
    qd.batch = fd.batch = 1;
    qd.in_channels = fd.in_channels = l->cin;
    qd.in_h = qd.in_w = fd.in_h = fd.in_w = l->hw;
    qd.out_channels = fd.out_channels = l->cout;
    qd.kernel_h = qd.kernel_w = fd.kernel_h = fd.kernel_w = l->k;
    qd.stride_h = qd.stride_w = fd.stride_h = fd.stride_w = l->stride;
    qd.pad_top = qd.pad_left = qd.pad_bottom = qd.pad_right = pad;
    fd.pad_top = fd.pad_left = fd.pad_bottom = fd.pad_right = pad;
    qd.groups = fd.groups = l->groups;
    qd.input_zero_point = 128;
    qd.output_zero_point = 100;
    qd.multipliers = mult;
    qd.shifts = shift;
    if (luthier_qconv2d_create(ctx, &qd, w, bias, &q) != LUTHIER_STATUS_OK ||
        luthier_qconv2d_get_info(q, &qi) != LUTHIER_STATUS_OK ||
        luthier_conv2d_create(ctx, &fd, wf, biasf, &f) != LUTHIER_STATUS_OK ||
        luthier_conv2d_get_info(f, &fi) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "ERROR: %s: create: %s\n", l->name, luthier_context_error(ctx));
        failed = 1;
        goto out;
    }
    for (i = 0; i < 2; i++) {
        calls[i].fp32 = i;
        calls[i].ctx = ctx;
        calls[i].q = q;
        calls[i].f = f;
        calls[i].in = in;
        calls[i].inf = inf;
        calls[i].out = i ? (void *)outf : (void *)out8;
    }
    /* 1. correctness of the int8 output: corners, edges and pseudo-random pixels */
    memset(out8, 0xee, out_n);
    if (qc8_call_run(&calls[0]) != 0 || qc8_call_run(&calls[1]) != 0) {
        fprintf(stderr, "ERROR: %s: run: %s\n", l->name, luthier_context_error(ctx));
        failed = 1;
        goto out;
    }
    for (r = 0; r < 24 && !failed; r++) {
        const int64_t oy = r < 4 ? (r & 1) * (oh - 1) : (int64_t)(bench_rand_u64(&seed) % (uint64_t)oh);
        const int64_t ox = r < 4 ? (r >> 1) * (oh - 1) : (int64_t)(bench_rand_u64(&seed) % (uint64_t)oh);
        if (qc8_check_pixel(l, oh, in, w, bias, mult, shift, oy, ox, out8)) {
            fprintf(stderr, "ERROR: %s: the int8 output is WRONG at pixel (%lld, %lld)\n", l->name, (long long)oy,
                    (long long)ox);
            failed = 1;
        }
    }
    /* 2. timing in alternating rounds */
    for (r = 0; r < pol->rounds && active && !failed; r++)
        for (i = 0; i < 2; i++) {
            const int which = r % 2 ? 1 - i : i;
            if (bench_run_round(qc8_call_run, &calls[which], pol, r, &smp[which]) != 0) {
                fprintf(stderr, "ERROR: %s: a timed run failed\n", l->name);
                active = 0;
                failed = 1;
                break;
            }
        }
    if (!failed) {
        char b0[32], b1[32], b2[32], b3[32];
        const int kind = l->groups == l->cin && l->groups > 1 ? 0 : l->k == 1 ? 1 : 2;
        double t8, t32;
        st[0] = bench_summarize(smp[0].t, smp[0].n);
        st[1] = bench_summarize(smp[1].t, smp[1].n);
        t8 = st[0].min;
        t32 = st[1].min;
        if (csv)
            printf("%s,%lld,%lld,%lld,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%s\n", l->name, (long long)l->cin, (long long)l->hw,
                   (long long)l->cout, (long long)l->k, (long long)l->stride, (long long)l->groups,
                   luthier_conv_algorithm_name(qi.algorithm), qi.kernel, luthier_conv_algorithm_name(fi.algorithm),
                   csv_cell(b0, 32, t8 * 1e3, 4, t8 > 0), csv_cell(b1, 32, t32 * 1e3, 4, t32 > 0),
                   csv_cell(b2, 32, t8 > 0 ? t32 / t8 : 0, 3, t8 > 0 && t32 > 0), csv_cell(b3, 32, ops / t8 * 1e-9, 2, t8 > 0));
        else
            printf("%-24s %5lld %4lld %5lld %2lldx%-2lld s%lld g%-4lld %-10s %-10s %-14s %9s %9s %6s %8s\n", l->name,
                   (long long)l->cin, (long long)l->hw, (long long)l->cout, (long long)l->k, (long long)l->k,
                   (long long)l->stride, (long long)l->groups, luthier_conv_algorithm_name(qi.algorithm),
                   *qi.kernel ? qi.kernel + strlen("luthier_qgemm_ukernel_") : "-", luthier_conv_algorithm_name(fi.algorithm),
                   cell(b0, 32, t8 * 1e3, ms_decimals(t8), t8 > 0), cell(b1, 32, t32 * 1e3, ms_decimals(t32), t32 > 0),
                   cell(b2, 32, t8 > 0 ? t32 / t8 : 0, 2, t8 > 0 && t32 > 0), cell(b3, 32, ops / t8 * 1e-9, 1, t8 > 0));
        fflush(stdout);
        if (t8 > 0 && t32 > 0) bench_geomean_add(&sum->g[kind], t32 / t8);
    }
out:
    bench_sampler_free(&smp[0]);
    bench_sampler_free(&smp[1]);
    luthier_qconv2d_destroy(q);
    luthier_conv2d_destroy(f);
    free(in); free(out8); free(w); free(inf); free(wf); free(outf); free(biasf); free(bias); free(mult); free(shift);
    return failed;
}

static int cmd_conv_int8(int argc, char **argv) {
    const char *cmd = argv[0], *val;
    bench_policy pol;
    luthier_context *ctx = NULL;
    qc8_summary sum;
    int threads = 1, csv = 0, quick = 0, sets = 3, rounds_set = 0, min_time_set = 0, i, r, rc = BENCH_EXIT_OK;
    memset(&pol, 0, sizeof pol);
    memset(&sum, 0, sizeof sum);
    pol.min_time = 0.2;
    pol.rounds = 4;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_conv_int8(stdout);
            return BENCH_EXIT_OK;
        } else if (strcmp(argv[i], "--int8") == 0) {
            continue;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--layers", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            if (strcmp(val, "all") == 0) sets = 3;
            else if (strcmp(val, "resnet50") == 0) sets = 1;
            else if (strcmp(val, "mobilenetv2") == 0) sets = 2;
            else {
                bench_usage_error(cmd, "--layers wants all, resnet50 or mobilenetv2 with --int8, not '%s'", val);
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_parse_run_option(argc, argv, &i, cmd, &pol, &threads, &rounds_set, &min_time_set)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            csv = 1;
        } else if ((r = bench_opt_flag(argv[i], cmd, "--quick")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            quick = 1;
        } else {
            bench_usage_error(cmd, "%s '%s' (with --int8: --layers, --threads, --reps, --rounds, --min-time, --quick, --csv)",
                              argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    if (quick) {
        if (!min_time_set) pol.min_time = 0.05;
        if (!rounds_set) pol.rounds = 2;
    }
    if (!(ctx = open_context(cmd, NULL, threads))) return BENCH_EXIT_FAIL;
    fprintf(csv ? stderr : stdout, "luthier-bench conv --int8: luthier v%d.%d.%d, %d thread(s), fp32 kernel %s\n",
            LUTHIER_VERSION_MAJOR, LUTHIER_VERSION_MINOR, LUTHIER_VERSION_PATCH, luthier_context_num_threads(ctx),
            luthier_context_kernel(ctx));
    print_cpu(csv ? stderr : stdout);
    if (csv)
        printf("name,cin,hw,cout,k,stride,groups,int8_algorithm,int8_kernel,fp32_algorithm,int8_ms_min,fp32_ms_min,"
               "int8_speedup,int8_gops\n");
    else
        printf("\n%-24s %5s %4s %5s %5s %2s %5s %-10s %-10s %-14s %9s %9s %6s %8s\n", "layer", "Cin", "HW", "Cout", "k",
               "s", "g", "int8 algo", "int8 kern", "fp32 algo", "int8 ms", "fp32 ms", "x fp32", "int8 GOP/s");
    for (i = 0; i < QC8_N_LAYERS; i++)
        if ((qc8_layers[i].set & sets) && qc8_run_layer(&qc8_layers[i], ctx, &pol, csv, &sum) != 0) rc = BENCH_EXIT_FAIL;
    fprintf(csv ? stderr : stdout, "\ngeomean int8 speedup over fp32: depthwise %.2fx (%d), 1x1 %.2fx (%d), other %.2fx (%d)\n",
            bench_geomean_get(&sum.g[0]), sum.g[0].count, bench_geomean_get(&sum.g[1]), sum.g[1].count,
            bench_geomean_get(&sum.g[2]), sum.g[2].count);
    if (rc != BENCH_EXIT_OK) fprintf(stderr, "%s conv --int8: FAILED: a wrong result or an error (see above)\n", bench_prog);
    luthier_context_destroy(ctx);
    return rc;
}

#endif /* LUTHIER_BENCH_INT8_H */
