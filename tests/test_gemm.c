/* The GEMM driver and public SGEMM entry points against a naive double-precision reference:
   random shapes (odd sizes, padded leading dimensions, transposed B, every activation, bias,
   accumulate), DNN shapes, forced tiny cache blocks (every k/m/n block edge), the pre-packed B
   path, and OpenBLAS when it is linked. Included by test_main.c. */

typedef struct gemm_case {
    int64_t m, n, k, lda, ldb, ldc;
    int trans_b, accumulate, with_bias;
    luthier_activation act;
} gemm_case;

/* Reference: C_out = act((accumulate ? C_in : 0) + A*B + bias). Also returns per-element
   magnitude (sum of |terms|) for the tolerance. */
static void gemm_reference(const gemm_case *g, const float *a, const float *b, const float *bias,
                           const float *c_in, double *ref, double *mag, float cmin, float cmax) {
    int64_t i, j, kk;
    for (i = 0; i < g->m; i++)
        for (j = 0; j < g->n; j++) {
            double s = 0.0, ms = 0.0;
            if (g->accumulate) { s = c_in[i * g->ldc + j]; ms = fabs(s); }
            if (bias) { s += bias[j]; ms += fabs((double)bias[j]); }
            for (kk = 0; kk < g->k; kk++) {
                const double bv = g->trans_b ? b[j * g->ldb + kk] : b[kk * g->ldb + j];
                const double t = (double)a[i * g->lda + kk] * bv;
                s += t;
                ms += fabs(t);
            }
            ref[i * g->n + j] = test_act(g->act, cmin, cmax, s);
            mag[i * g->n + j] = ms * test_act_slope(g->act, cmin, cmax);
        }
}

/* Runs one case through luthier_sgemm (prepacked=0) or pack_b + sgemm_packed (1) with kernel
   `kernel` (NULL = context default). Returns the number of wrong elements. */
static int gemm_check(luthier_context *ctx, const gemm_case *g, const char *kernel, int prepacked) {
    const int64_t brows = g->trans_b ? g->n : g->k;
    const size_t asz = (size_t)(g->m > 0 ? (g->m - 1) * g->lda + g->k : 0);
    const size_t bsz = (size_t)(brows > 0 ? (brows - 1) * g->ldb + (g->trans_b ? g->k : g->n) : 0);
    const size_t csz = (size_t)(g->m * g->ldc);
    float *a = (float *)test_alloc(asz * sizeof(float));
    float *b = (float *)test_alloc(bsz * sizeof(float));
    float *bias = g->with_bias ? (float *)test_alloc((size_t)g->n * sizeof(float)) : NULL;
    float *c = (float *)test_alloc(csz * sizeof(float));
    float *c_in = (float *)test_alloc(csz * sizeof(float));
    double *ref = (double *)test_alloc((size_t)(g->m * g->n) * sizeof(double));
    double *mag = (double *)test_alloc((size_t)(g->m * g->n) * sizeof(double));
    const float cmin = -0.5f, cmax = 0.75f;
    const luthier__kernel_entry *uk = kernel ? luthier__kernel_named(kernel) : NULL;
    luthier_sgemm_desc d;
    luthier_status s;
    int64_t i, j;
    int bad = 0;
    test_fill(a, asz);
    test_fill(b, bsz);
    if (uk) { /* fp16 operands hold these values exactly */
        for (i = 0; i < (int64_t)bsz; i++) b[i] = operand_round(b[i], uk->b_bytes);
        for (i = 0; i < (int64_t)asz; i++) a[i] = operand_round(a[i], uk->a_bytes);
    }
    if (bias) test_fill(bias, (size_t)g->n);
    for (i = 0; i < (int64_t)csz; i++) c_in[i] = g->accumulate ? test_rand_float() : test_sentinel();
    memcpy(c, c_in, csz * sizeof(float));
    gemm_reference(g, a, b, bias, c_in, ref, mag, cmin, cmax);

    memset(&d, 0, sizeof d);
    d.m = g->m; d.n = g->n; d.k = g->k;
    d.lda = g->lda; d.ldb = g->ldb; d.ldc = g->ldc;
    d.trans_b = g->trans_b;
    d.bias = bias;
    d.activation = g->act;
    d.clamp_min = cmin;
    d.clamp_max = cmax;
    d.accumulate = g->accumulate;
    d.kernel = kernel;
    if (prepacked) {
        luthier_packed_b *pb = NULL;
        s = luthier_sgemm_pack_b(ctx, &d, b, &pb);
        if (s == LUTHIER_STATUS_OK) {
            memset(b, 0xff, bsz * sizeof(float)); /* the packed copy must be all that is used */
            s = luthier_sgemm_packed(ctx, &d, a, pb, c);
        }
        luthier_packed_b_destroy(pb);
    } else {
        s = luthier_sgemm(ctx, &d, a, b, c);
    }
    if (s != LUTHIER_STATUS_OK) {
        printf("    %s: status %s (%s)\n", kernel ? kernel : "default", luthier_status_string(s),
               luthier_context_error(ctx));
        bad = 1;
    }
    for (i = 0; i < g->m && !bad; i++)
        for (j = 0; j < g->ldc; j++) {
            const float got = c[i * g->ldc + j];
            if (j < g->n) {
                const double want = ref[i * g->n + j];
                const double tol = uk && uk->family == LUTHIER_KERNELS_F16 ? family_tol(uk, mag[i * g->n + j])
                                                                           : 1e-6 + 8.0 * FLT_EPSILON * mag[i * g->n + j];
                if (!(fabs((double)got - want) <= tol)) {
                    if (!bad)
                        printf("    %s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld tb=%d acc=%d "
                               "bias=%d act=%d prepacked=%d: C[%lld][%lld] = %.9g, want %.9g\n",
                               kernel ? kernel : "default", (long long)g->m, (long long)g->n,
                               (long long)g->k, (long long)g->lda, (long long)g->ldb,
                               (long long)g->ldc, g->trans_b, g->accumulate, g->with_bias,
                               (int)g->act, prepacked, (long long)i, (long long)j, (double)got, want);
                    bad++;
                }
            } else if (memcmp(&got, &c_in[i * g->ldc + j], sizeof got) != 0) {
                if (!bad)
                    printf("    %s: wrote C[%lld][%lld] past n=%lld\n", kernel ? kernel : "default",
                           (long long)i, (long long)j, (long long)g->n);
                bad++;
            }
        }
    free(a);
    free(b);
    free(bias);
    free(c);
    free(c_in);
    free(ref);
    free(mag);
    return bad;
}

static gemm_case gemm_random_case(int max_dim) {
    gemm_case g;
    g.m = test_rand_int(1, max_dim);
    g.n = test_rand_int(1, max_dim);
    g.k = test_rand_int(1, max_dim);
    g.trans_b = test_rand_int(0, 1);
    g.lda = g.k + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.ldb = (g.trans_b ? g.k : g.n) + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.ldc = g.n + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.accumulate = test_rand_int(0, 3) == 0;
    g.with_bias = test_rand_int(0, 1);
    g.act = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_COUNT - 1);
    return g;
}

static int kernel_available(int idx) {
    const luthier__kernel_entry *uk = &luthier__ukernels[idx];
    return (uk->required_cpu_features & luthier_cpu_features()) == uk->required_cpu_features;
}

static luthier_context *test_context(size_t kc, size_t mc, size_t nc) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.kc = kc;
    cd.mc = mc;
    cd.nc = nc;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
        printf("cannot create a context\n");
        exit(2);
    }
    return ctx;
}

/* Random shapes, every available kernel, both entry points. */
static void test_gemm_random_shapes(void) {
    luthier_context *ctx = test_context(0, 0, 0);
    int idx, t;
    const int trials = T.quick ? 6 : 25;
    for (idx = 0; idx < SGEMM_KERNELS; idx++) {
        const luthier__kernel_entry *uk = sgemm_kernel_at(idx);
        int bad = 0;
        if (!luthier__kernel_runs(uk, luthier_cpu_features())) continue;
        for (t = 0; t < trials; t++) {
            gemm_case g = gemm_random_case(t < trials / 2 ? 40 : 150);
            bad += gemm_check(ctx, &g, uk->name, t & 1) != 0;
        }
        CHECK(bad == 0, "%s: %d of %d random shapes wrong", uk->name, bad, trials);
    }
    luthier_context_destroy(ctx);
}

/* Tiny forced blocks: several k-blocks (accumulate + epilogue only on the last), m-blocks and
   n-blocks, including blocks that do not divide the sizes. */
static void test_gemm_small_blocks(void) {
    int idx, t;
    for (idx = 0; idx < SGEMM_KERNELS; idx++) {
        const luthier__kernel_entry *uk = sgemm_kernel_at(idx);
        luthier_context *ctx;
        int bad = 0;
        if (!luthier__kernel_runs(uk, luthier_cpu_features())) continue;
        ctx = test_context((size_t)test_rand_int(1, 13), (size_t)uk->mr * (size_t)test_rand_int(1, 3),
                           (size_t)uk->nr * (size_t)test_rand_int(1, 2));
        for (t = 0; t < (T.quick ? 3 : 8); t++) {
            gemm_case g = gemm_random_case(70);
            bad += gemm_check(ctx, &g, uk->name, t & 1) != 0;
        }
        CHECK(bad == 0, "%s with small blocks: %d wrong", uk->name, bad);
        luthier_context_destroy(ctx);
    }
}

/* The im2col GEMMs of real networks (M = output pixels, N = Cout, K = Cin*kh*kw), scaled down
   in M under --quick so that qemu and sanitizer runs stay short. */
static void test_gemm_dnn_shapes(void) {
    static const int shapes[][3] = {
        {3136, 64, 576}, {784, 128, 1152}, {196, 256, 2304}, {49, 512, 4608}, {12544, 64, 147},
        {3136, 256, 64}, {196, 1024, 256}, {49, 2048, 512},  {128, 768, 768}, {1, 1000, 512},
        {1, 4096, 4096}};
    luthier_context *ctx = test_context(0, 0, 0);
    size_t s;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        gemm_case g;
        memset(&g, 0, sizeof g);
        g.m = shapes[s][0];
        g.n = shapes[s][1];
        g.k = shapes[s][2];
        if (T.quick) { /* keep the reference cheap */
            while (g.m * g.n * g.k > 3000000 && g.m > 7) g.m = g.m / 4 + 1;
            if (g.m * g.n * g.k > 3000000) g.n = 96;
        }
        g.lda = g.k;
        g.ldb = g.n;
        g.ldc = g.n;
        g.with_bias = 1;
        g.act = LUTHIER_ACTIVATION_RELU;
        CHECK(gemm_check(ctx, &g, NULL, 1) == 0, "DNN shape %lldx%lldx%lld", (long long)g.m,
              (long long)g.n, (long long)g.k);
    }
    luthier_context_destroy(ctx);
}

/* One packed B serves every kernel with the same NR, and many runs. */
static void test_gemm_packed_reuse(void) {
    luthier_context *ctx = test_context(0, 0, 0);
    const int m = 53, n = 77, k = 131;
    float *a = (float *)test_alloc((size_t)m * k * sizeof(float));
    float *b = (float *)test_alloc((size_t)k * n * sizeof(float));
    float *c1 = (float *)test_alloc((size_t)m * n * sizeof(float));
    float *c2 = (float *)test_alloc((size_t)m * n * sizeof(float));
    int i, j, run;
    test_fill(b, (size_t)k * n);
    for (i = 0; i < LUTHIER__NUM_UKERNELS; i++) {
        luthier_sgemm_desc d;
        luthier_packed_b *pb = NULL;
        if (!kernel_available(i)) continue;
        memset(&d, 0, sizeof d);
        d.m = m; d.n = n; d.k = k;
        d.kernel = luthier__ukernels[i].name;
        CHECK(luthier_sgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_OK, "pack for %s", d.kernel);
        if (!pb) continue;
        CHECK(luthier_packed_b_bytes(pb) >= (size_t)k * n * sizeof(float), "packed bytes");
        for (run = 0; run < 3; run++) {
            test_fill(a, (size_t)m * k);
            d.kernel = NULL;
            CHECK(luthier_sgemm_packed(ctx, &d, a, pb, c1) == LUTHIER_STATUS_OK, "run %d", run);
            d.kernel = luthier__ukernels[i].name;
            CHECK(luthier_sgemm(ctx, &d, a, b, c2) == LUTHIER_STATUS_OK, "unpacked run");
            CHECK(memcmp(c1, c2, (size_t)m * n * sizeof(float)) == 0,
                  "%s: packed and one-shot results differ", d.kernel);
        }
        /* every other kernel with the same NR consumes the same packed B, bit-compatibly close */
        for (j = 0; j < LUTHIER__NUM_UKERNELS; j++) {
            luthier_status s;
            if (j == i || !kernel_available(j)) continue;
            d.kernel = luthier__ukernels[j].name;
            s = luthier_sgemm_packed(ctx, &d, a, pb, c2);
            if (luthier__ukernels[j].nr == luthier__ukernels[i].nr) {
                int e, bad = 0;
                CHECK(s == LUTHIER_STATUS_OK, "%s on B packed for %s: %s", d.kernel,
                      luthier__ukernels[i].name, luthier_context_error(ctx));
                for (e = 0; e < m * n; e++)
                    bad += !(fabsf(c1[e] - c2[e]) <= 1e-4f * (1.0f + fabsf(c1[e])));
                CHECK(bad == 0, "%s on B packed for %s: %d elements differ", d.kernel,
                      luthier__ukernels[i].name, bad);
            } else {
                CHECK(s == LUTHIER_STATUS_INCOMPATIBLE, "%s (NR %d) on B packed with NR %d: status %d",
                      d.kernel, luthier__ukernels[j].nr, luthier__ukernels[i].nr, (int)s);
                CHECK(strstr(luthier_context_error(ctx), "NR") != NULL, "message: %s",
                      luthier_context_error(ctx));
            }
        }
        luthier_packed_b_destroy(pb);
    }
    free(a);
    free(b);
    free(c1);
    free(c2);
    luthier_context_destroy(ctx);
}

/* Degenerate sizes: m or n == 0 is a no-op, k == 0 gives act(C? + bias) (a clamp, or an
   activation applied after the stores), hybrid and interleaved kernels. */
static void test_gemm_degenerate(void) {
    static const char *const kernels[2] = {NULL, "4x4__scalar"};
    static const luthier_activation acts[2] = {LUTHIER_ACTIVATION_RELU6, LUTHIER_ACTIVATION_GELU};
    luthier_context *ctx = test_context(0, 0, 0);
    gemm_case g;
    int acc, ki, ai;
    memset(&g, 0, sizeof g);
    for (acc = 0; acc < 2; acc++)
        for (ki = 0; ki < 2; ki++)
            for (ai = 0; ai < 2; ai++) {
                g.m = 5; g.n = 19; g.k = 0; g.lda = 1; g.ldb = 19; g.ldc = 21;
                g.with_bias = 1; g.accumulate = acc; g.act = acts[ai];
                CHECK(gemm_check(ctx, &g, kernels[ki], 0) == 0, "k = 0, accumulate = %d, act %d", acc, (int)g.act);
                CHECK(gemm_check(ctx, &g, kernels[ki], 1) == 0, "k = 0 packed, accumulate = %d, act %d", acc, (int)g.act);
            }
    {
        luthier_sgemm_desc d;
        float c = 42.0f;
        memset(&d, 0, sizeof d);
        d.m = 0; d.n = 3; d.k = 4;
        CHECK(luthier_sgemm(ctx, &d, NULL, NULL, NULL) == LUTHIER_STATUS_OK, "m = 0 with NULLs");
        d.m = 3; d.n = 0;
        CHECK(luthier_sgemm(ctx, &d, NULL, NULL, &c) == LUTHIER_STATUS_OK && c == 42.0f, "n = 0");
    }
    luthier_context_destroy(ctx);
}

/* Forcing a lower ISA through the context picks that ISA's default kernel and still computes
   right: the dispatch a machine without AVX-512 (or without AVX2) would take. */
static void test_gemm_dispatch_levels(void) {
    static const unsigned masks[] = {0, LUTHIER_CPU_AVX512F, LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA};
    size_t i;
    for (i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        luthier_context *ctx = NULL;
        luthier_context_desc cd;
        int idx = -1;
        memset(&cd, 0, sizeof cd);
        cd.disabled_cpu_features = masks[i];
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "create");
        if (!ctx) continue;
        luthier_kernel_find(luthier_context_kernel(ctx), &idx);
        CHECK(idx >= 0 && (luthier__ukernels[idx].required_cpu_features & masks[i]) == 0,
              "mask %#x chose %s", masks[i], luthier_context_kernel(ctx));
        {
            gemm_case g = gemm_random_case(60);
            CHECK(gemm_check(ctx, &g, NULL, 0) == 0, "mask %#x (%s)", masks[i], luthier_context_kernel(ctx));
        }
        luthier_context_destroy(ctx);
    }
}

#ifdef LUTHIER_HAVE_OPENBLAS
#include <cblas.h>
/* Independent check against OpenBLAS on larger shapes than the naive reference allows. */
static void test_gemm_vs_openblas(void) {
    static const int shapes[][3] = {{512, 512, 512}, {3136, 64, 576}, {128, 3072, 768}, {1, 4096, 4096}, {333, 517, 1025}};
    luthier_context *ctx = test_context(0, 0, 0);
    size_t s;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = (float *)test_alloc((size_t)m * k * sizeof(float));
        float *b = (float *)test_alloc((size_t)k * n * sizeof(float));
        float *c = (float *)test_alloc((size_t)m * n * sizeof(float));
        float *r = (float *)test_alloc((size_t)m * n * sizeof(float));
        luthier_sgemm_desc d;
        double num = 0, den = 0;
        size_t e;
        test_fill(a, (size_t)m * k);
        test_fill(b, (size_t)k * n);
        memset(&d, 0, sizeof d);
        d.m = m; d.n = n; d.k = k;
        CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_OK, "sgemm");
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, r, n);
        for (e = 0; e < (size_t)m * n; e++) {
            num += ((double)c[e] - r[e]) * ((double)c[e] - r[e]);
            den += (double)r[e] * r[e];
        }
        /* both sides round: allow a few ulps growing like sqrt(k) (random summation error) */
        CHECK(sqrt(num / (den + 1e-30)) < 4.0 * FLT_EPSILON * sqrt((double)k),
              "%dx%dx%d: relative error %g vs OpenBLAS", m, n, k, sqrt(num / (den + 1e-30)));
        free(a);
        free(b);
        free(c);
        free(r);
    }
    luthier_context_destroy(ctx);
}
#endif

/* With no kernel named, a narrow N picks a kernel that wastes fewer NR lanes; a named kernel
   is always kept. */
static void test_gemm_kernel_for_n(void) {
    luthier_context *ctx = test_context(0, 0, 0), *named = NULL;
    luthier_context_desc cd;
    size_t n;
    for (n = 1; n <= 200; n += 3) {
        const int k = luthier__kernel_for_n(ctx, n);
        CHECK(kernel_available(k), "n=%zu: %s not available", n, luthier__ukernels[k].name);
        CHECK(luthier__nr_waste(luthier__ukernels[k].nr, n) <= luthier__nr_waste(luthier__ukernels[ctx->kernel].nr, n),
              "n=%zu: %s wastes more than the default", n, luthier__ukernels[k].name);
        CHECK(luthier__ukernels[k].kind == luthier__ukernels[ctx->kernel].kind, "n=%zu: kind changed", n);
    }
    CHECK(luthier__kernel_for_n(ctx, (size_t)luthier__ukernels[ctx->kernel].nr * 3) == ctx->kernel,
          "a multiple of the default NR keeps the default");
    memset(&cd, 0, sizeof cd);
    cd.kernel = luthier__ukernels[ctx->kernel].name;
    CHECK(luthier_context_create(&cd, &named) == LUTHIER_STATUS_OK, "named context");
    if (named) CHECK(luthier__kernel_for_n(named, 5) == named->kernel, "a named kernel is kept");
    luthier_context_destroy(named);
    luthier_context_destroy(ctx);
}

/* Next-block prefetch: a recording kernel stands in for the microkernel, so the schedule the
   drivers hand out is checked on every platform. Per call: the B bytes it reads and the
   prefetch it was given. Every prefetch must point into the B block of the next block of calls
   (never the current one), no call of a range's first tile row prefetches, and the pieces
   handed out during a block cover the whole next block: at the base rate when the tile rows
   make enough calls, else at the dense rate (LUTHIER_UKERNEL_PREFETCH_DENSE). */
typedef struct pf_call {
    size_t b0, b1; /* bytes of B read: [b0, b1) from the packed start */
    size_t lines;  /* lines the real kernel prefetches: ks * (k / 2), twice that when dense */
    ptrdiff_t pf;  /* prefetch offset from the packed start, -1 = NULL */
    size_t row;    /* first row of the tile */
    size_t block;  /* 1, 2, ...: the driver's blocks in call order */
} pf_call;

static struct {
    pf_call calls[4096];
    int n, dense; /* calls, calls at the dense rate */
    const float *b, *c;
    size_t ldc;
    int nr;
} pf_rec;

static void pf_record_kernel(const luthier_sgemm_ukernel_args *u) {
    pf_call *c;
    if (pf_rec.n >= 4096) return;
    c = &pf_rec.calls[pf_rec.n++];
    c->b0 = (size_t)((const char *)u->b - (const char *)pf_rec.b);
    c->b1 = c->b0 + u->ks * u->k * (size_t)pf_rec.nr * sizeof(float);
    c->lines = u->ks * (u->k / 2) * (u->flags & LUTHIER_UKERNEL_PREFETCH_DENSE ? 2 : 1);
    pf_rec.dense += (u->flags & LUTHIER_UKERNEL_PREFETCH_DENSE) != 0;
    c->pf = u->prefetch ? (const char *)u->prefetch - (const char *)pf_rec.b : -1;
    c->row = (size_t)(u->c - pf_rec.c) / pf_rec.ldc;
    c->block = 0;
}

/* Checks the recorded calls of a range whose first tile starts at first_row. */
static int pf_check(size_t first_row, size_t b_bytes, const char *what) {
    int i, j, bad = 0, blocks = 0, prefetches = 0;
    unsigned char *want = (unsigned char *)test_alloc(b_bytes / 64 + 1);
    unsigned char *got = (unsigned char *)test_alloc(b_bytes / 64 + 1);
    /* within a block the driver walks the tile rows in order: a block starts where the row
       goes back to first_row */
    for (i = 0; i < pf_rec.n; i++) {
        const int start = i == 0 || (pf_rec.calls[i].row == first_row && pf_rec.calls[i - 1].row != first_row);
        pf_rec.calls[i].block = (size_t)(blocks += start);
    }
    for (i = 0; i < pf_rec.n; i++) {
        const pf_call *c = &pf_rec.calls[i];
        if (c->pf >= 0 && c->row == first_row) {
            if (!bad) printf("    %s: call %d (first tile row) prefetches\n", what, i);
            bad++;
        }
    }
    for (j = 1; j < blocks; j++) { /* block j prefetches block j + 1 */
        size_t l;
        int any = 0;
        memset(want, 0, b_bytes / 64 + 1);
        memset(got, 0, b_bytes / 64 + 1);
        for (i = 0; i < pf_rec.n; i++)
            if (pf_rec.calls[i].block == (size_t)j + 1)
                for (l = pf_rec.calls[i].b0 / 64; l * 64 < pf_rec.calls[i].b1; l++) want[l] = 1;
        for (i = 0; i < pf_rec.n; i++) {
            const pf_call *c = &pf_rec.calls[i];
            if (c->block != (size_t)j || c->pf < 0) continue;
            prefetches++;
            if (!want[(size_t)c->pf / 64]) {
                if (!bad) printf("    %s: call %d of block %d prefetches B+%td, not in the next block\n", what, i, j, c->pf);
                bad++;
                continue;
            }
            for (l = (size_t)c->pf / 64; l < (size_t)c->pf / 64 + c->lines && l <= b_bytes / 64; l++) got[l] = 1;
            any = 1;
        }
        for (l = 0; l <= b_bytes / 64; l++)
            if (want[l] && !got[l]) {
                if (!bad) printf("    %s: block %d left line %zu of the next block unprefetched%s\n", what, j, l, any ? "" : " (no prefetch at all)");
                bad++;
                break;
            }
    }
    free(want);
    free(got);
    return bad + (prefetches == 0); /* the schedule must have been exercised */
}

static void test_gemm_prefetch_schedule(void) {
    luthier__kernel_entry uk;
    luthier__packed_b_layout lay;
    luthier__gemm_blocking ov, blk;
    luthier__gemm_args g;
    luthier_cache_info ci;
    const size_t mr = 6, nr = 16, m = mr * 12 + 1, n = nr * 5 + 3, k = 3 * 40 + 9;
    float *a = (float *)test_alloc(m * k * sizeof(float)), *c = (float *)test_alloc(m * n * sizeof(float));
    float *b;
    memset(&uk, 0, sizeof uk);
    uk.name = "recording";
    uk.isa = "avx512";
    uk.mr = (int)mr;
    uk.nr = (int)nr;
    uk.k_unroll = 1;
    uk.kind = LUTHIER_KERNEL_HYBRID;
    uk.fn = pf_record_kernel;
    memset(&ci, 0, sizeof ci);
    ci.l1d = 32 << 10;
    ci.l2 = 1 << 20;
    ov.kc = 40;
    ov.mc = 0;
    ov.nc = 2 * nr;
    blk = luthier__gemm_blocking_for(&uk, &ci, &ov, m, n, k);
    CHECK(blk.prefetch, "a %zu-row hybrid GEMM prefetches", m);
    luthier__packed_b_layout_init(&lay, nr, k, n);
    b = (float *)test_alloc(lay.bytes);
    memset(&g, 0, sizeof g);
    g.m = m; g.n = n; g.k = k; g.a = a; g.lda = k; g.b = b; g.b_layout = &lay; g.c = c; g.ldc = n;
    pf_rec.b = b;
    pf_rec.c = c;
    pf_rec.ldc = n;
    pf_rec.nr = (int)nr;
    /* a whole GEMM, then a thread's range of tiles that does not start at row 0 */
    pf_rec.n = pf_rec.dense = 0;
    luthier__gemm_compute(&uk, &blk, &g, 0, luthier__div_up(m, mr), 0, lay.panels, NULL);
    CHECK(pf_check(0, lay.bytes, "gemm") == 0 && pf_rec.dense == 0, "GEMM prefetch schedule (%d calls, %d dense)",
          pf_rec.n, pf_rec.dense);
    pf_rec.n = pf_rec.dense = 0;
    luthier__gemm_compute(&uk, &blk, &g, 3, 11, 1, lay.panels, NULL);
    CHECK(pf_check(3 * mr, lay.bytes, "gemm range") == 0 && pf_rec.dense == 0,
          "GEMM range prefetch schedule (%d calls, %d dense)", pf_rec.n, pf_rec.dense);
    /* three tile rows and k-blocks of an even 32 steps: the two rows after the first make
       exactly the calls needed to cover the next block */
    g.k = 128;
    blk = luthier__gemm_blocking_for(&uk, &ci, &ov, m, n, g.k);
    luthier__packed_b_layout_init(&lay, nr, g.k, n);
    pf_rec.n = pf_rec.dense = 0;
    luthier__gemm_compute(&uk, &blk, &g, 0, 3, 0, lay.panels, NULL);
    CHECK(blk.kc == 32 && pf_check(0, lay.bytes, "gemm, 3 tiles") == 0 && pf_rec.dense == 0,
          "3-tile GEMM prefetch schedule (kc %zu, %d calls, %d dense)", blk.kc, pf_rec.n, pf_rec.dense);
    /* two tile rows: the second makes half the calls needed at the base rate, so the plan
       prefetches at the dense rate, and covers the next block all the same */
    pf_rec.n = pf_rec.dense = 0;
    luthier__gemm_compute(&uk, &blk, &g, 0, 2, 0, lay.panels, NULL);
    CHECK(pf_check(0, lay.bytes, "gemm, 2 tiles") == 0 && pf_rec.dense > 0,
          "2-tile GEMM prefetch schedule (%d calls, %d dense)", pf_rec.n, pf_rec.dense);
    /* a chain of two GEMMs (Winograd's positions): the first one's last block prefetches the
       first block of next_b, from the range's first panel on (panels 1-4: blocks of 2 panels,
       so that the last block makes as many calls as the first one needs) */
    {
        float *b2 = (float *)test_alloc(2 * lay.bytes);
        const size_t second = lay.bytes / sizeof(float);
        g.b = b2;
        pf_rec.b = b2;
        pf_rec.n = pf_rec.dense = 0;
        g.next_b = b2 + second;
        luthier__gemm_compute(&uk, &blk, &g, 0, 3, 1, 5, NULL);
        g.b = b2 + second;
        g.next_b = NULL;
        luthier__gemm_compute(&uk, &blk, &g, 0, 3, 1, 5, NULL);
        CHECK(pf_check(0, 2 * lay.bytes, "gemm chain") == 0, "chained GEMMs prefetch schedule (%d calls)", pf_rec.n);
        g.b = b;
        pf_rec.b = b;
        free(b2);
    }
    /* the next layer's first block (another layout: K 72 in blocks of 36 steps, panels 0-1),
       prefetched during the last block of this GEMM's range */
    {
        luthier__packed_b_layout lay2;
        luthier__prefetch_region nl;
        luthier__gemm_blocking blk2;
        float *b2;
        size_t first;
        luthier__packed_b_layout_init(&lay2, nr, 72, n);
        first = lay.bytes / sizeof(float);
        b2 = (float *)test_alloc(lay.bytes + lay2.bytes);
        blk2 = luthier__gemm_blocking_for(&uk, &ci, &ov, m, n, 72);
        nl.b = b2 + first;
        nl.panel_stride = lay2.panel_stride;
        nl.chunk = blk2.kc * nr;
        nl.panels = blk2.nc / nr;
        g.b = b2;
        g.next_layer = &nl;
        pf_rec.b = b2;
        pf_rec.n = pf_rec.dense = 0;
        luthier__gemm_compute(&uk, &blk, &g, 0, 3, 0, lay.panels, NULL);
        g.b = b2 + first;
        g.b_layout = &lay2;
        g.k = 72;
        g.next_layer = NULL;
        luthier__gemm_compute(&uk, &blk2, &g, 0, 3, 0, lay2.panels, NULL);
        CHECK(blk2.kc == 36 && pf_check(0, lay.bytes + lay2.bytes, "next layer") == 0,
              "next-layer prefetch schedule (%d calls)", pf_rec.n);
        g.b = b;
        g.b_layout = &lay;
        g.k = 128;
        pf_rec.b = b;
        free(b2);
    }
    /* implicit GEMM: 5 segments of 20 steps, blocks of 2 segments */
    {
        const size_t ks = 5, seg = 20, tiles = luthier__div_up(m, mr);
        const float **ind = (const float **)test_alloc(tiles * ks * mr * sizeof(float *));
        luthier__packed_b_layout lay2;
        float *b2;
        size_t q;
        for (q = 0; q < tiles * ks * mr; q++) ind[q] = a;
        ov.kc = 2 * seg + seg / 2; /* whole segments per block: 2 */
        blk = luthier__gemm_blocking_for(&uk, &ci, &ov, m, n, ks * seg);
        luthier__packed_b_layout_init(&lay2, nr, ks * seg, n);
        b2 = (float *)test_alloc(lay2.bytes);
        g.k = seg;
        g.b = b2;
        g.b_layout = &lay2;
        pf_rec.b = b2;
        pf_rec.n = pf_rec.dense = 0;
        luthier__gemm_compute_indirect(&uk, &blk, &g, ks, ind, 0, tiles, 0, lay2.panels);
        CHECK(blk.kc / seg == 2 && pf_check(0, lay2.bytes, "indirect") == 0 && pf_rec.dense == 0,
              "implicit-GEMM prefetch schedule (%d calls, %d dense)", pf_rec.n, pf_rec.dense);
        /* three tiles: blocks of 2 segments are covered at the base rate, the last block (one
           segment, half the lines per call) only at the dense rate */
        pf_rec.n = pf_rec.dense = 0;
        luthier__gemm_compute_indirect(&uk, &blk, &g, ks, ind, 0, 3, 0, lay2.panels);
        CHECK(pf_check(0, lay2.bytes, "indirect, 3 tiles") == 0 && pf_rec.dense > 0 && pf_rec.dense < pf_rec.n,
              "3-tile implicit-GEMM prefetch schedule (%d calls, %d dense)", pf_rec.n, pf_rec.dense);
        free(b2);
        free(ind);
    }
    /* the NEON and scalar kernels ignore the hint: their GEMMs keep the large B blocks */
    uk.isa = "scalar";
    CHECK(!luthier__gemm_blocking_for(&uk, &ci, &ov, m, n, k).prefetch, "a scalar kernel does not prefetch");
    uk.isa = "avx512";
    CHECK(!luthier__gemm_blocking_for(&uk, &ci, &ov, mr * (LUTHIER__PREFETCH_MAX_TILES + 1), n, k).prefetch,
          "a GEMM of more than %d tiles does not prefetch", LUTHIER__PREFETCH_MAX_TILES);
    free(b);
    free(a);
    free(c);
}
