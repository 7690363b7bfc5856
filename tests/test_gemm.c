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
            switch (g->act) {
            case LUTHIER_ACTIVATION_RELU: s = s < 0 ? 0 : s; break;
            case LUTHIER_ACTIVATION_RELU6: s = s < 0 ? 0 : (s > 6 ? 6 : s); break;
            case LUTHIER_ACTIVATION_CLAMP: s = s < cmin ? cmin : (s > cmax ? cmax : s); break;
            default: break;
            }
            ref[i * g->n + j] = s;
            mag[i * g->n + j] = ms;
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
    luthier_sgemm_desc d;
    luthier_status s;
    int64_t i, j;
    int bad = 0;
    test_fill(a, asz);
    test_fill(b, bsz);
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
                const double tol = 1e-6 + 8.0 * FLT_EPSILON * mag[i * g->n + j];
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
    const luthier__ukernel_entry *uk = &luthier__ukernels[idx];
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
    for (idx = 0; idx < LUTHIER__NUM_UKERNELS; idx++) {
        int bad = 0;
        if (!kernel_available(idx)) continue;
        for (t = 0; t < trials; t++) {
            gemm_case g = gemm_random_case(t < trials / 2 ? 40 : 150);
            bad += gemm_check(ctx, &g, luthier__ukernels[idx].name, t & 1) != 0;
        }
        CHECK(bad == 0, "%s: %d of %d random shapes wrong", luthier__ukernels[idx].name, bad, trials);
    }
    luthier_context_destroy(ctx);
}

/* Tiny forced blocks: several k-blocks (accumulate + epilogue only on the last), m-blocks and
   n-blocks, including blocks that do not divide the sizes. */
static void test_gemm_small_blocks(void) {
    int idx, t;
    for (idx = 0; idx < LUTHIER__NUM_UKERNELS; idx++) {
        const luthier__ukernel_entry *uk = &luthier__ukernels[idx];
        luthier_context *ctx;
        int bad = 0;
        if (!kernel_available(idx)) continue;
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

/* Degenerate sizes: m or n == 0 is a no-op, k == 0 gives act(C? + bias). */
static void test_gemm_degenerate(void) {
    luthier_context *ctx = test_context(0, 0, 0);
    gemm_case g;
    int acc;
    memset(&g, 0, sizeof g);
    for (acc = 0; acc < 2; acc++) {
        g.m = 5; g.n = 19; g.k = 0; g.lda = 1; g.ldb = 19; g.ldc = 21;
        g.with_bias = 1; g.accumulate = acc; g.act = LUTHIER_ACTIVATION_RELU6;
        CHECK(gemm_check(ctx, &g, NULL, 0) == 0, "k = 0, accumulate = %d", acc);
        CHECK(gemm_check(ctx, &g, NULL, 1) == 0, "k = 0 packed, accumulate = %d", acc);
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
