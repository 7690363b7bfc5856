/* int8 GEMM (luthier_int8.h): the requantization arithmetic against an independent
   formulation, the quantization helpers, every int8 kernel against the scalar reference kernel
   (bit-exact, every m and n edge, k around the K group), the whole GEMM against a naive int64
   reference (random shapes, strides, transposed B, zero points 0/128/255, extreme values,
   every output kind, 1 and 2 threads, ratios, dynamic schedule, per-cluster kernels), the
   packed-B rules, the kernel dispatch per CPU features and bad arguments.
   Included by test_main.c (after test_threads.c: threads_context). */

/* floor(a / b) for b > 0 */
static int64_t q8_floor_div(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Output (a) of the scheme from its mathematical description, independently of the library's
   gemmlowp transcription: x = round_half_up(acc * M / 2^31) (INT32_MAX for the one overflow
   case), y = round_half_away(x / 2^s), clamp(zo + y). */
static int q8_requant_model(int32_t acc, int32_t mult, int32_t shift, int32_t zo, int32_t qmin, int32_t qmax) {
    int64_t x, y;
    if (acc == INT32_MIN && mult == INT32_MIN) x = INT32_MAX;
    else x = q8_floor_div((int64_t)acc * mult + ((int64_t)1 << 30), (int64_t)1 << 31);
    if (shift == 0) y = x;
    else {
        const int64_t ax = x < 0 ? -x : x;
        y = q8_floor_div(ax + ((int64_t)1 << (shift - 1)), (int64_t)1 << shift);
        if (x < 0) y = -y;
    }
    y += zo;
    return (int)(y < qmin ? qmin : y > qmax ? qmax : y);
}

static void test_int8_requantize(void) {
    static const int32_t accs[] = {0, 1, -1, 2, -2, 3, -3, 100, 101, -101, 1 << 20, -(1 << 20), 123456789,
                                   -123456789, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1};
    static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, INT32_MAX - 1, 1518500250, 1073741823};
    size_t a, mi;
    int s, t, bad = 0;
    /* bounds and zero points outside 0..255 (API misuse) stay defined: clamped to uint8 */
    CHECK(luthier_requantize(5, 1 << 30, 0, 1, INT32_MIN, INT32_MAX) == 4, "INT32_MIN bound with zero point 1");
    CHECK(luthier_requantize(INT32_MAX, INT32_MAX, 0, INT32_MAX, INT32_MIN, INT32_MAX) == 255, "everything at the edge");
    CHECK(luthier_requantize(-1000, 1 << 30, 0, INT32_MIN, INT32_MIN, 0) == 0, "negative result clamps to 0");
    /* hand-checked values */
    CHECK(luthier_requantize(101, 1 << 30, 0, 0, 0, 255) == 51, "50.5 rounds half up in SRDHM");
    CHECK(luthier_requantize(-101, 1 << 30, 0, 128, 0, 255) == 78, "-50.5 -> -50 (half up) + 128");
    CHECK(luthier_requantize(3 << 1, 1 << 30, 1, 0, 0, 255) == 2, "3/2 = 1.5 -> 2 (ties away)");
    CHECK(luthier_requantize(-(3 << 1), 1 << 30, 1, 10, 0, 255) == 8, "-1.5 -> -2 (ties away) + 10");
    CHECK(luthier_requantize(10, 1 << 30, 2, 0, 0, 255) == 1, "5/4 = 1.25 -> 1");
    CHECK(luthier_requantize(12, 1 << 30, 2, 0, 0, 255) == 2, "6/4 = 1.5 -> 2");
    CHECK(luthier_requantize(INT32_MAX, INT32_MAX, 0, 0, 0, 255) == 255, "saturates high");
    CHECK(luthier_requantize(INT32_MIN, INT32_MAX, 0, 255, 0, 255) == 0, "saturates low, no overflow");
    CHECK(luthier_requantize(INT32_MAX, INT32_MAX, 0, 255, 0, 255) == 255, "zo 255 near INT32_MAX");
    CHECK(luthier_requantize(1000, INT32_MAX, 31, 7, 0, 255) == 7, "shift 31");
    CHECK(luthier_requantize(-1000, 1 << 30, 0, 100, 60, 90) == 60, "clamp to qmin");
    for (a = 0; a < sizeof accs / sizeof accs[0]; a++)
        for (mi = 0; mi < sizeof mults / sizeof mults[0]; mi++)
            for (s = 0; s < 32; s++) {
                const int zo = (s * 37) % 256;
                bad += luthier_requantize(accs[a], mults[mi], s, zo, 0, 255) !=
                       q8_requant_model(accs[a], mults[mi], s, zo, 0, 255);
            }
    for (t = 0; t < (T.quick ? 20000 : 200000); t++) {
        const int32_t acc = (int32_t)(uint32_t)test_rand_u64() >> test_rand_int(0, 31);
        const int32_t mult = test_rand_int(0, 3) ? (int32_t)((1u << 30) + (uint32_t)(test_rand_u64() & 0x3fffffff))
                                                 : (int32_t)(test_rand_u64() & 0x7fffffff);
        const int32_t shift = test_rand_int(0, 31), zo = test_rand_int(0, 255);
        const int32_t qmin = test_rand_int(0, 128), qmax = test_rand_int(qmin, 255);
        const int got = luthier_requantize(acc, mult, shift, zo, qmin, qmax);
        const int want = q8_requant_model(acc, mult, shift, zo, qmin, qmax);
        if (got != want && bad++ < 3)
            printf("    acc %d mult %d shift %d zo %d [%d,%d]: %d, want %d\n", (int)acc, (int)mult, (int)shift,
                   (int)zo, (int)qmin, (int)qmax, got, want);
    }
    CHECK(bad == 0, "%d requantizations differ from the model", bad);
}

static void test_int8_quantize_helpers(void) {
    static const double reals[] = {0.5, 0.75, 0.999, 0.9999999999, 1e-3, 3.7e-5, 2.0e-9, 1e-12, 0.25, 0.123456789};
    size_t i;
    int32_t m, s, zp, lo, hi;
    float scale;
    for (i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        double eff;
        CHECK(luthier_quantize_multiplier(reals[i], &m, &s) == LUTHIER_STATUS_OK, "real %g", reals[i]);
        eff = ldexp((double)m, -31 - s);
        CHECK(s >= 0 && s <= 31 && m >= 0, "real %g: M %d s %d", reals[i], (int)m, (int)s);
        CHECK(fabs(eff - reals[i]) <= reals[i] * 1e-9 + ldexp(1.0, -62), "real %g: M %d s %d is %g", reals[i],
              (int)m, (int)s, eff);
        if (reals[i] >= ldexp(1.0, -32)) CHECK(m >= (1 << 30), "real %g: M %d not normalized", reals[i], (int)m);
    }
    CHECK(luthier_quantize_multiplier(0.0, &m, &s) == LUTHIER_STATUS_OK && m == 0 && s == 0, "0");
    CHECK(luthier_quantize_multiplier(1.0, &m, &s) == LUTHIER_STATUS_INVALID_ARGUMENT, "1.0 refused");
    CHECK(luthier_quantize_multiplier(-0.1, &m, &s) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative refused");
    CHECK(luthier_quantize_multiplier(NAN, &m, &s) == LUTHIER_STATUS_INVALID_ARGUMENT, "NaN refused");
    CHECK(luthier_quantize_multiplier(0.5, NULL, &s) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL refused");
    CHECK(luthier_quantize_multiplier(1e-300, &m, &s) == LUTHIER_STATUS_OK && m == 0, "underflow gives 0");

    CHECK(luthier_quantize_range(-1.0f, 3.0f, 0, &scale, &zp) == LUTHIER_STATUS_OK, "range");
    CHECK(fabsf(scale - 4.0f / 255.0f) < 1e-9f && zp == 64, "[-1, 3]: scale %g zp %d", (double)scale, (int)zp);
    CHECK(luthier_quantize_range(0.5f, 2.0f, 0, &scale, &zp) == LUTHIER_STATUS_OK && zp == 0 &&
          fabsf(scale - 2.0f / 255.0f) < 1e-9f, "a positive range includes 0");
    CHECK(luthier_quantize_range(-2.0f, -1.0f, 0, &scale, &zp) == LUTHIER_STATUS_OK && zp == 255, "negative range");
    CHECK(luthier_quantize_range(-0.5f, 2.54f, 1, &scale, &zp) == LUTHIER_STATUS_OK && zp == 0 &&
          fabsf(scale - 0.02f) < 1e-7f, "symmetric: scale %g", (double)scale);
    CHECK(luthier_quantize_range(0.0f, 0.0f, 0, &scale, &zp) == LUTHIER_STATUS_OK && scale == 1.0f && zp == 0, "empty");
    CHECK(luthier_quantize_range(2.0f, 1.0f, 0, &scale, &zp) == LUTHIER_STATUS_INVALID_ARGUMENT, "min > max");
    CHECK(luthier_quantize_range(-INFINITY, 1.0f, 0, &scale, &zp) == LUTHIER_STATUS_INVALID_ARGUMENT, "infinite");
    /* a range of one denormal: its scale rounds to 0, and the zero point was 0/0 (found by
       tests/fuzz_graph.c) */
    zp = -1;
    CHECK(luthier_quantize_range(0.0f, 1e-45f, 0, &scale, &zp) == LUTHIER_STATUS_OK && scale > 0.0f && zp >= 0 && zp <= 255,
          "denormal range: scale %g zp %d", (double)scale, (int)zp);
    zp = -1;
    CHECK(luthier_quantize_range(-1e-45f, 0.0f, 0, &scale, &zp) == LUTHIER_STATUS_OK && scale > 0.0f && zp >= 0 && zp <= 255,
          "negative denormal range: scale %g zp %d", (double)scale, (int)zp);

    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_NONE, 0, 0, 0.1f, 20, &lo, &hi) == LUTHIER_STATUS_OK &&
          lo == 0 && hi == 255, "none");
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_RELU, 0, 0, 0.1f, 20, &lo, &hi) == LUTHIER_STATUS_OK &&
          lo == 20 && hi == 255, "relu");
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_RELU6, 0, 0, 0.1f, 20, &lo, &hi) == LUTHIER_STATUS_OK &&
          lo == 20 && hi == 80, "relu6: [%d, %d]", (int)lo, (int)hi);
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_RELU6, 0, 0, 0.01f, 20, &lo, &hi) == LUTHIER_STATUS_OK &&
          hi == 255, "relu6 past the range clips to 255");
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_CLAMP, -1.0f, 1.0f, 0.1f, 100, &lo, &hi) == LUTHIER_STATUS_OK &&
          lo == 90 && hi == 110, "clamp: [%d, %d]", (int)lo, (int)hi);
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_CLAMP, 1.0f, -1.0f, 0.1f, 100, &lo, &hi) ==
          LUTHIER_STATUS_INVALID_ARGUMENT, "reversed clamp");
    CHECK(luthier_quantize_activation(LUTHIER_ACTIVATION_RELU, 0, 0, 0.0f, 100, &lo, &hi) ==
          LUTHIER_STATUS_INVALID_ARGUMENT, "scale 0");
}

/* Random parameters of an output stage for n columns; arrays owned by the caller (n each). */
typedef struct q8_output {
    luthier_qoutput kind;
    int32_t *mult, *shift;
    float *bscale, *fbias;
    int32_t zo, qmin, qmax;
    float a_scale, fmin, fmax;
    int clamp;
} q8_output;

static void q8_output_random(q8_output *o, size_t n, luthier_qoutput kind, size_t k) {
    size_t j;
    o->kind = kind;
    o->zo = test_rand_int(0, 3) == 0 ? 255 * test_rand_int(0, 1) : test_rand_int(0, 255);
    o->qmin = test_rand_int(0, 1) ? 0 : test_rand_int(0, 100);
    o->qmax = test_rand_int(0, 1) ? 255 : test_rand_int(o->qmin > 0 ? o->qmin : 1, 255); /* (0, 0) means none */
    o->a_scale = 0.01f + 0.1f * (float)test_rand_int(0, 100) / 100.0f;
    o->clamp = test_rand_int(0, 1);
    o->fmin = -50.0f;
    o->fmax = 40.0f;
    for (j = 0; j < n; j++) {
        /* multipliers that put the outputs around 0..255 (k*255*127 range), sometimes extreme */
        double real = 200.0 / (100.0 + 255.0 * 64.0 * (double)k) * (0.5 + (double)test_rand_int(0, 100) / 50.0);
        int32_t m, s;
        if (test_rand_int(0, 9) == 0) real = test_rand_int(0, 1) ? 0.9999 : 1e-7;
        if (real >= 1.0) real = 0.999;
        luthier_quantize_multiplier(real, &m, &s);
        o->mult[j] = m;
        o->shift[j] = s;
        o->bscale[j] = 0.001f * (float)test_rand_int(1, 100);
        o->fbias[j] = (float)test_rand_int(-1000, 1000) / 10.0f;
    }
}

static void q8_output_apply(const q8_output *o, luthier_qgemm_ukernel_args *p, size_t col0) {
    p->output = o->kind;
    p->multiplier = o->mult + col0;
    p->shift = o->shift + col0;
    p->zero_point = o->zo;
    p->qmin = o->qmin;
    p->qmax = o->qmax;
    p->a_scale = o->a_scale;
    p->b_scale = o->bscale + col0;
    p->bias = o->fbias + col0;
    p->min = o->fmin;
    p->max = o->fmax;
    p->clamp = o->clamp;
}

static int q8_kernel_available(const luthier__kernel_entry *e) {
    return (e->required_cpu_features & luthier_cpu_features()) == e->required_cpu_features;
}

#define Q8_EXTREME 1 /* A = 255, B = -128/127 */
#define Q8_GUARDED 2 /* the packed A and B (or the A rows) end at an inaccessible page */

/* One kernel call against the reference kernel with the same layout parameters: bit-exact,
   nothing written outside the m x n tile. flags: Q8_EXTREME, Q8_GUARDED. Returns the number of
   mismatches. */
static int q8_ukernel_check(const luthier__kernel_entry *uk, size_t m, size_t n, size_t k, luthier_qoutput kind,
                            int flags) {
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, kg = (size_t)uk->k_unroll;
    const size_t esz = kind == LUTHIER_QOUTPUT_UINT8 ? 1 : 4, ldc = n + 5, rows = m + 2;
    luthier__packed_b_layout l;
    int8_t *b = (int8_t *)test_alloc(k * n), *bp;
    int32_t *comp, offset[LUTHIER__QMAX_NR];
    uint8_t *arows[LUTHIER__QMAX_MR], *apack = NULL;
    const uint8_t *arows_c[LUTHIER__QMAX_MR];
    unsigned char *c1 = (unsigned char *)test_alloc(rows * ldc * esz), *c2 = (unsigned char *)test_alloc(rows * ldc * esz);
    int32_t mult[LUTHIER__QMAX_NR], shift[LUTHIER__QMAX_NR];
    float bscale[LUTHIER__QMAX_NR], fbias[LUTHIER__QMAX_NR];
    q8_output o;
    luthier_qgemm_ukernel_args p;
    size_t i, j;
    const int extreme = flags & Q8_EXTREME;
    int bad = 0;
    o.mult = mult; o.shift = shift; o.bscale = bscale; o.fbias = fbias;
    q8_output_random(&o, nr, kind, k);
    for (i = 0; i < k * n; i++) b[i] = (int8_t)(extreme ? (i % 3 == 0 ? -128 : 127) : test_rand_int(-128, 127));
    luthier__qpack_layout_init(&l, nr, kg, k, n);
    bp = (int8_t *)test_alloc(luthier__qdata_bytes(&l) + nr * sizeof(int32_t));
    comp = (int32_t *)test_alloc(nr * sizeof(int32_t));
    luthier__qpack_b(&l, b, n, 0, test_rand_int(-128, 255), bp, comp);
    for (j = 0; j < nr; j++) offset[j] = j < n ? (int32_t)(uint32_t)test_rand_u64() >> test_rand_int(0, 31) : 0;
    for (i = 0; i < mr; i++) arows[i] = NULL;
    for (i = 0; i < m; i++) {
        size_t kk;
        arows[i] = (uint8_t *)test_alloc(k); /* exact size: ASan sees any over-read */
        for (kk = 0; kk < k; kk++) arows[i][kk] = (uint8_t)(extreme ? 255 : test_rand_int(0, 255));
    }
    for (i = 0; i < mr; i++) arows_c[i] = arows[i];
    if (uk->kind == LUTHIER_KERNEL_INTERLEAVED) {
        uint8_t *dense = (uint8_t *)test_alloc(m * k);
        for (i = 0; i < m; i++) memcpy(dense + i * k, arows[i], k);
        apack = (uint8_t *)test_alloc(mr * luthier__div_up(k, kg) * kg);
        luthier__qpack_a(dense, k, m, k, mr, kg, uk->a_s8, apack);
        free(dense);
    }
    memset(c1, 0xa5, rows * ldc * esz);
    memset(c2, 0xa5, rows * ldc * esz);
    memset(&p, 0, sizeof p);
    p.m = m; p.n = n; p.k = k;
    p.a_rows = arows_c;
    p.a = apack;
    p.b = bp;
#ifdef TEST_HAVE_GUARDED
    test_guarded ga = {NULL, 0}, gb = {NULL, 0}, grow[LUTHIER__QMAX_MR];
    for (i = 0; i < mr; i++) grow[i].map = NULL;
    if (flags & Q8_GUARDED) { /* one panel of each: n <= nr */
        p.b = (const int8_t *)test_guarded_copy(&gb, bp, l.panel_stride);
        if (apack) p.a = (const uint8_t *)test_guarded_copy(&ga, apack, mr * l.groups * kg);
        for (i = 0; !apack && i < m; i++) arows_c[i] = (const uint8_t *)test_guarded_copy(&grow[i], arows[i], k);
    }
#endif
    p.offset = offset;
    p.ldc = ldc;
    q8_output_apply(&o, &p, 0);
    if (test_rand_int(0, 1)) p.bias = NULL;
    p.c = c1 + (ldc + 1) * esz;
    uk->qfn(&p);
    p.c = c2 + (ldc + 1) * esz;
    luthier__qukernel_ref(&p, mr, nr, kg, uk->kind == LUTHIER_KERNEL_INTERLEAVED, uk->a_s8);
    if (memcmp(c1, c2, rows * ldc * esz) != 0) {
        for (i = 0; i < rows * ldc * esz && c1[i] == c2[i]; i++) continue;
        printf("    %s m=%zu n=%zu k=%zu output=%d extreme=%d: byte %zu (row %zu, column %zu) differs: %u vs ref %u%s\n",
               uk->name, m, n, k, (int)kind, extreme, i, i / esz / ldc, i / esz % ldc, c1[i], c2[i],
               c1[i] == 0xa5 || c2[i] == 0xa5 ? " (0xa5 = untouched)" : "");
        bad = 1;
    }
#ifdef TEST_HAVE_GUARDED
    test_guarded_free(&ga);
    test_guarded_free(&gb);
    for (i = 0; i < mr; i++) test_guarded_free(&grow[i]);
#endif
    for (i = 0; i < m; i++) free(arows[i]);
    free(apack);
    free(b);
    free(bp);
    free(comp);
    free(c1);
    free(c2);
    return bad;
}

static void test_int8_ukernels_all_edges(void) {
    static const size_t ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 67};
    const size_t nks = sizeof ks / sizeof ks[0];
    int idx;
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++) {
        const luthier__kernel_entry *uk = &luthier__qkernels[idx];
        size_t m, n, ki, cases = 0;
        int bad = 0;
        if (!q8_kernel_available(uk)) {
            printf("    (skipped %s: this CPU lacks its features)\n", uk->name);
            continue;
        }
        /* every m x n edge with a k that varies with the tile */
        for (m = 1; m <= (size_t)uk->mr; m++)
            for (n = 1; n <= (size_t)uk->nr; n += (T.quick && n > 4 && n + 4 < (size_t)uk->nr) ? 3 : 1) {
                const size_t k = ks[(m * 7 + n) % nks];
                bad += q8_ukernel_check(uk, m, n, k, (luthier_qoutput)((m + n) % 3), 0);
                cases++;
            }
        /* every k (and a long one) on the full tile and one edge tile, every output kind */
        for (ki = 0; ki <= nks; ki++) {
            const size_t k = ki < nks ? ks[ki] : 300 + (size_t)test_rand_int(0, 7);
            int kind;
            for (kind = 0; kind < 3; kind++) {
                bad += q8_ukernel_check(uk, (size_t)uk->mr, (size_t)uk->nr, k, (luthier_qoutput)kind, 0);
                bad += q8_ukernel_check(uk, (size_t)test_rand_int(1, uk->mr), (size_t)test_rand_int(1, uk->nr), k,
                                        (luthier_qoutput)kind, ki % 4 == 0);
                cases += 2;
            }
        }
        /* extreme values: A = 255, B = -128/127 */
        bad += q8_ukernel_check(uk, (size_t)uk->mr, (size_t)uk->nr, 1000, LUTHIER_QOUTPUT_INT32, Q8_EXTREME);
        bad += q8_ukernel_check(uk, (size_t)uk->mr, (size_t)uk->nr, 1001, LUTHIER_QOUTPUT_UINT8, Q8_EXTREME);
        CHECK(bad == 0, "%s: %d of %zu tile cases differ from the reference", uk->name, bad, cases + 2);
    }
}

/* Every kernel reads nothing past its packed A and B panels (nor past the A rows, hybrid
   kernels): they end at an inaccessible page, for every k up to 18 K groups of 4 (each
   remainder of the unrolled loops after 0-4 blocks, K below one block) and a long k, on the
   full tile and an edge tile, every output kind. A read past the end faults. */
static void test_int8_ukernels_panel_ends(void) {
#ifdef TEST_HAVE_GUARDED
    const size_t kmax = T.quick ? 72 : 160;
    int idx;
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++) {
        const luthier__kernel_entry *uk = &luthier__qkernels[idx];
        size_t k;
        int bad = 0;
        if (!q8_kernel_available(uk)) continue;
        for (k = 1; k <= kmax + 1; k++) {
            const size_t kk = k <= kmax ? k : 1000 + (size_t)test_rand_int(0, 3);
            bad += q8_ukernel_check(uk, (size_t)uk->mr, (size_t)uk->nr, kk, (luthier_qoutput)(k % 3), Q8_GUARDED);
            bad += q8_ukernel_check(uk, (size_t)test_rand_int(1, uk->mr), (size_t)test_rand_int(1, uk->nr), kk,
                                    (luthier_qoutput)((k + 1) % 3), Q8_GUARDED);
        }
        CHECK(bad == 0, "%s: %d guarded tile cases differ from the reference", uk->name, bad);
    }
#else
    printf("    (skipped: no guarded buffers on this system)\n");
#endif
}

/* ---- whole GEMM against a naive int64 reference ------------------------------------------- */

typedef struct q8_case {
    int64_t m, n, k, lda, ldb, ldc;
    int trans_b, with_bias, per_column, za, extreme;
    luthier_qoutput kind;
} q8_case;

static q8_case q8_random_case(int max_dim) {
    static const int zps[] = {0, 128, 255};
    q8_case g;
    memset(&g, 0, sizeof g);
    g.m = test_rand_int(1, max_dim);
    g.n = test_rand_int(1, max_dim);
    g.k = test_rand_int(1, max_dim);
    g.trans_b = test_rand_int(0, 1);
    g.lda = g.k + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.ldb = (g.trans_b ? g.k : g.n) + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.ldc = g.n + (test_rand_int(0, 1) ? test_rand_int(1, 5) : 0);
    g.with_bias = test_rand_int(0, 1);
    g.per_column = test_rand_int(0, 1);
    g.za = test_rand_int(0, 1) ? zps[test_rand_int(0, 2)] : test_rand_int(0, 255);
    g.extreme = test_rand_int(0, 7) == 0;
    g.kind = (luthier_qoutput)test_rand_int(0, 2);
    return g;
}

/* Runs g through luthier_qgemm (prepacked 0) or pack_b + packed (1); compares every element
   bit for bit with the reference and checks that nothing past n was written. Returns the number
   of wrong elements (0 on success). */
static int q8_gemm_check(luthier_context *ctx, const q8_case *g, const char *kernel, int prepacked,
                         luthier_schedule schedule, const float *ratios, int num_ratios) {
    const int64_t brows = g->trans_b ? g->n : g->k, bcols = g->trans_b ? g->k : g->n;
    const size_t esz = g->kind == LUTHIER_QOUTPUT_UINT8 ? 1 : 4;
    const size_t asz = (size_t)((g->m - 1) * g->lda + g->k), bsz = (size_t)(brows > 0 ? (brows - 1) * g->ldb + bcols : 0);
    const size_t csz = (size_t)(g->m * g->ldc) * esz;
    uint8_t *a = (uint8_t *)test_alloc(asz);
    int8_t *b = (int8_t *)test_alloc(bsz);
    int32_t *bias = (int32_t *)test_alloc((size_t)g->n * sizeof(int32_t));
    int32_t *mult = (int32_t *)test_alloc((size_t)g->n * sizeof(int32_t));
    int32_t *shift = (int32_t *)test_alloc((size_t)g->n * sizeof(int32_t));
    float *bscale = (float *)test_alloc((size_t)g->n * sizeof(float));
    float *fbias = (float *)test_alloc((size_t)g->n * sizeof(float));
    unsigned char *c = (unsigned char *)test_alloc(csz), *want = (unsigned char *)test_alloc(csz);
    q8_output o;
    luthier_qgemm_desc d;
    luthier_status s;
    int64_t i, j, kk;
    size_t e;
    int bad = 0;
    for (e = 0; e < asz; e++) a[e] = (uint8_t)(g->extreme ? 255 * (e % 5 != 0) : test_rand_int(0, 255));
    for (e = 0; e < bsz; e++) b[e] = (int8_t)(g->extreme ? (e % 2 ? -128 : 127) : test_rand_int(-128, 127));
    o.mult = mult; o.shift = shift; o.bscale = bscale; o.fbias = fbias;
    q8_output_random(&o, (size_t)g->n, g->kind, (size_t)g->k);
    for (j = 0; j < g->n; j++) bias[j] = test_rand_int(-100000, 100000);
    if (!g->per_column)
        for (j = 1; j < g->n; j++) { mult[j] = mult[0]; shift[j] = shift[0]; bscale[j] = bscale[0]; }
    memset(c, 0x5a, csz);
    memcpy(want, c, csz);
    for (i = 0; i < g->m; i++)
        for (j = 0; j < g->n; j++) {
            int64_t acc = g->with_bias ? bias[j] : 0;
            const size_t at = (size_t)(i * g->ldc + j);
            for (kk = 0; kk < g->k; kk++)
                acc += ((int64_t)a[i * g->lda + kk] - g->za) *
                       (int64_t)(g->trans_b ? b[j * g->ldb + kk] : b[kk * g->ldb + j]);
            if (g->kind == LUTHIER_QOUTPUT_UINT8) {
                want[at] = luthier_requantize((int32_t)acc, mult[j], shift[j], o.zo, o.qmin, o.qmax);
            } else if (g->kind == LUTHIER_QOUTPUT_FLOAT) {
                float v = fmaf((float)(int32_t)acc, o.a_scale * bscale[j], fbias[j]);
                if (o.clamp) v = v < o.fmin ? o.fmin : v > o.fmax ? o.fmax : v;
                memcpy(want + at * 4, &v, 4);
            } else {
                const int32_t v = (int32_t)acc;
                memcpy(want + at * 4, &v, 4);
            }
        }
    memset(&d, 0, sizeof d);
    d.m = g->m; d.n = g->n; d.k = g->k;
    d.lda = g->lda; d.ldb = g->ldb; d.ldc = g->ldc;
    d.trans_b = g->trans_b;
    d.a_zero_point = g->za;
    d.bias = g->with_bias ? bias : NULL;
    d.output = g->kind;
    d.output_zero_point = o.zo;
    d.output_min = o.qmin;
    d.output_max = o.qmax;
    d.a_scale = o.a_scale;
    d.float_bias = fbias;
    d.activation = o.clamp ? LUTHIER_ACTIVATION_CLAMP : LUTHIER_ACTIVATION_NONE;
    d.clamp_min = o.fmin;
    d.clamp_max = o.fmax;
    if (g->kind != LUTHIER_QOUTPUT_FLOAT) d.activation = LUTHIER_ACTIVATION_NONE;
    if (g->per_column) {
        d.multipliers = mult;
        d.shifts = shift;
        d.b_scales = bscale;
    } else {
        d.multiplier = mult[0];
        d.shift = shift[0];
        d.b_scale = bscale[0];
    }
    d.kernel = kernel;
    d.schedule = schedule;
    d.ratios = ratios;
    d.num_ratios = num_ratios;
    if (prepacked) {
        luthier_qpacked_b *pb = NULL;
        s = luthier_qgemm_pack_b(ctx, &d, b, &pb);
        if (s == LUTHIER_STATUS_OK) {
            memset(b, 0x77, bsz); /* the packed copy must be all that is used */
            s = luthier_qgemm_packed(ctx, &d, a, pb, c);
        }
        luthier_qpacked_b_destroy(pb);
    } else {
        s = luthier_qgemm(ctx, &d, a, b, c);
    }
    if (s != LUTHIER_STATUS_OK) {
        printf("    %s: status %s (%s)\n", kernel ? kernel : "default", luthier_status_string(s), luthier_context_error(ctx));
        bad = 1;
    } else if (memcmp(c, want, csz) != 0) {
        for (e = 0; e < csz && c[e] == want[e]; e++) continue;
        for (i = 0; i < (int64_t)csz; i++) bad += c[i] != want[i];
        printf("    %s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld tb=%d bias=%d percol=%d za=%d extreme=%d "
               "output=%d prepacked=%d: %d bytes differ, first at row %lld column %lld\n",
               kernel ? kernel : "default", (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
               (long long)g->ldb, (long long)g->ldc, g->trans_b, g->with_bias, g->per_column, g->za, g->extreme,
               (int)g->kind, prepacked, bad, (long long)(e / esz / (size_t)g->ldc), (long long)(e / esz % (size_t)g->ldc));
    }
    free(a); free(b); free(bias); free(mult); free(shift); free(bscale); free(fbias); free(c); free(want);
    return bad;
}

static luthier_context *q8_context(size_t mc, size_t nc) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.mc = mc;
    cd.nc = nc;
    cd.num_threads = 1;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
        printf("cannot create a context\n");
        exit(2);
    }
    return ctx;
}

/* Random shapes, every available kernel, both entry points, one thread. */
static void test_int8_gemm_random_shapes(void) {
    luthier_context *ctx = q8_context(0, 0);
    const int trials = T.quick ? 4 : 16;
    int idx, t;
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++) {
        int bad = 0;
        if (!q8_kernel_available(&luthier__qkernels[idx])) continue;
        for (t = 0; t < trials; t++) {
            const q8_case g = q8_random_case(t < trials / 2 ? 40 : 130);
            bad += q8_gemm_check(ctx, &g, luthier__qkernels[idx].name, t & 1, LUTHIER_SCHEDULE_RATIO, NULL, 0) != 0;
        }
        CHECK(bad == 0, "%s: %d of %d random shapes wrong", luthier__qkernels[idx].name, bad, trials);
    }
    luthier_context_destroy(ctx);
}

/* Small forced blocks (several m and n blocks, packed A blocks) and two threads in two clusters
   with random ratios, the dynamic schedule and per-cluster kernels. */
static void test_int8_gemm_threads_blocks(void) {
    static const int threads[2] = {1, 1};
    luthier_context *ctx2 = threads_context(2, threads);
    int t, bad = 0, idx;
    CHECK(ctx2 != NULL, "two-cluster context");
    if (!ctx2) return;
    for (t = 0; t < (T.quick ? 6 : 20); t++) {
        const q8_case g = q8_random_case(t % 3 ? 60 : 150);
        float ratios[2];
        ratios[0] = (float)test_rand_int(0, 10);
        ratios[1] = (float)test_rand_int(ratios[0] > 0 ? 0 : 1, 10);
        bad += q8_gemm_check(ctx2, &g, NULL, t & 1, t % 4 == 3 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO,
                             t % 4 == 2 ? NULL : ratios, 2) != 0;
    }
    CHECK(bad == 0, "two threads: %d cases wrong", bad);
    /* every kernel with a smaller kernel of the same packing on the second cluster */
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++) {
        const luthier__kernel_entry *e = &luthier__qkernels[idx];
        const char *ck[2];
        luthier_qgemm_desc d;
        uint8_t a[4 * 9];
        int8_t b[9 * 3];
        int32_t c[4 * 3];
        if (!q8_kernel_available(e)) continue;
        ck[0] = NULL;
        ck[1] = e->name;
        memset(&d, 0, sizeof d);
        memset(a, 1, sizeof a);
        memset(b, 1, sizeof b);
        d.m = 4; d.n = 3; d.k = 9;
        d.output = LUTHIER_QOUTPUT_INT32;
        d.kernel = e->name;
        d.cluster_kernels = ck;
        CHECK(luthier_qgemm(ctx2, &d, a, b, c) == LUTHIER_STATUS_OK && c[11] == 9, "%s on both clusters: %s", e->name,
              luthier_context_error(ctx2));
        d.kernel = "4x4__scalar";
        if (e->nr != 4 || e->mr != 4 || e->k_unroll != 1 || e->a_s8) {
            CHECK(luthier_qgemm(ctx2, &d, a, b, c) == LUTHIER_STATUS_INCOMPATIBLE, "%s with scalar: mismatch refused",
                  e->name);
            CHECK(strstr(luthier_context_error(ctx2), "share MR, NR") != NULL, "message: %s", luthier_context_error(ctx2));
        }
        /* interleaved kernels: one tile row over more panels than threads is split by columns,
           so the two threads read one copy of packed A (luthier__shares_packed_a); k = 37 is
           not a multiple of the K group */
        if (e->kind == LUTHIER_KERNEL_INTERLEAVED) {
            q8_case g = q8_random_case(8);
            g.m = e->mr - 1; g.n = 5 * e->nr + 3; g.k = 37;
            g.lda = g.k; g.ldb = g.trans_b ? g.k : g.n; g.ldc = g.n;
            CHECK(q8_gemm_check(ctx2, &g, e->name, (int)(idx & 1), LUTHIER_SCHEDULE_RATIO, NULL, 0) == 0,
                  "%s: A packed once for both threads", e->name);
        }
        /* a little-core kernel (_a55) on the second cluster beside its twin (the name without
           the variant): the same int32 results as the twin alone */
        if (strstr(e->name, "_a55")) {
            const char *v = strstr(e->name, "_a55");
            char twin[96];
            const int64_t m = 41, n = 29, k = 70;
            uint8_t *aa = (uint8_t *)test_alloc((size_t)(m * k));
            int8_t *bb = (int8_t *)test_alloc((size_t)(k * n));
            int32_t *c1 = (int32_t *)test_alloc((size_t)(m * n) * 4), *c2 = (int32_t *)test_alloc((size_t)(m * n) * 4);
            const float ratios[2] = {1, 1};
            size_t q;
            snprintf(twin, sizeof twin, "%.*s%s", (int)(v - e->name), e->name, v + 4);
            for (q = 0; q < (size_t)(m * k); q++) aa[q] = (uint8_t)test_rand_int(0, 255);
            for (q = 0; q < (size_t)(k * n); q++) bb[q] = (int8_t)test_rand_int(-128, 127);
            d.m = m; d.n = n; d.k = k;
            d.a_zero_point = 3;
            d.kernel = twin;
            d.ratios = ratios;
            d.num_ratios = 2;
            d.cluster_kernels = NULL;
            CHECK(luthier_qgemm(ctx2, &d, aa, bb, c1) == LUTHIER_STATUS_OK, "%s: %s", twin, luthier_context_error(ctx2));
            d.cluster_kernels = ck;
            CHECK(luthier_qgemm(ctx2, &d, aa, bb, c2) == LUTHIER_STATUS_OK && memcmp(c1, c2, (size_t)(m * n) * 4) == 0,
                  "%s on the little cluster beside %s: %s", e->name, twin, luthier_context_error(ctx2));
            free(aa); free(bb); free(c1); free(c2);
        }
    }
    luthier_context_destroy(ctx2);
    for (idx = 0; idx < LUTHIER__NUM_QKERNELS; idx++) {
        const luthier__kernel_entry *e = &luthier__qkernels[idx];
        luthier_context *ctx;
        if (!q8_kernel_available(e)) continue;
        ctx = q8_context((size_t)e->mr * (size_t)test_rand_int(1, 3), (size_t)e->nr * (size_t)test_rand_int(1, 2));
        for (t = 0, bad = 0; t < (T.quick ? 2 : 5); t++) {
            const q8_case g = q8_random_case(70);
            bad += q8_gemm_check(ctx, &g, e->name, t & 1, LUTHIER_SCHEDULE_RATIO, NULL, 0) != 0;
        }
        CHECK(bad == 0, "%s with small blocks: %d wrong", e->name, bad);
        luthier_context_destroy(ctx);
    }
}

/* The DNN shapes of the benchmark (M scaled down under --quick), default kernel, 2 threads. */
static void test_int8_gemm_dnn_shapes(void) {
    static const int shapes[][3] = {{3136, 64, 576}, {784, 128, 1152}, {49, 512, 4608}, {12544, 64, 147},
                                    {3136, 256, 64}, {128, 768, 768}, {1, 1000, 512}, {1, 4096, 4096}};
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    size_t s;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 2;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        q8_case g;
        memset(&g, 0, sizeof g);
        g.m = shapes[s][0]; g.n = shapes[s][1]; g.k = shapes[s][2];
        while (g.m * g.n * g.k > (T.quick ? 3000000 : 40000000) && g.m > 7) g.m = g.m / 4 + 1;
        if (g.m * g.n * g.k > (T.quick ? 3000000 : 40000000)) g.n = 200;
        g.lda = g.k; g.ldb = g.n; g.ldc = g.n;
        g.with_bias = 1; g.per_column = 1; g.za = 128 - (int)s;
        g.kind = (luthier_qoutput)(s % 3);
        CHECK(q8_gemm_check(ctx, &g, NULL, 1, LUTHIER_SCHEDULE_RATIO, NULL, 0) == 0, "DNN shape %lldx%lldx%lld",
              (long long)g.m, (long long)g.n, (long long)g.k);
    }
    luthier_context_destroy(ctx);
}

/* k = 0 gives the output of the bias alone; m or n = 0 is a no-op even with NULL buffers. */
static void test_int8_degenerate(void) {
    luthier_context *ctx = q8_context(0, 0);
    q8_case g;
    int kind;
    memset(&g, 0, sizeof g);
    for (kind = 0; kind < 3; kind++) {
        g.m = 5; g.n = 19; g.k = 0; g.lda = 1; g.ldb = 19; g.ldc = 21;
        g.with_bias = 1; g.per_column = kind & 1; g.za = 77; g.kind = (luthier_qoutput)kind;
        CHECK(q8_gemm_check(ctx, &g, NULL, 0, LUTHIER_SCHEDULE_RATIO, NULL, 0) == 0, "k = 0, output %d", kind);
        CHECK(q8_gemm_check(ctx, &g, NULL, 1, LUTHIER_SCHEDULE_RATIO, NULL, 0) == 0, "k = 0 packed, output %d", kind);
    }
    {
        luthier_qgemm_desc d;
        uint8_t c = 42;
        memset(&d, 0, sizeof d);
        d.m = 0; d.n = 3; d.k = 4;
        CHECK(luthier_qgemm(ctx, &d, NULL, NULL, NULL) == LUTHIER_STATUS_OK, "m = 0 with NULLs");
        d.m = 3; d.n = 0;
        CHECK(luthier_qgemm(ctx, &d, NULL, NULL, &c) == LUTHIER_STATUS_OK && c == 42, "n = 0");
    }
    luthier_context_destroy(ctx);
}

/* One packed B: reused, shared by kernels of the same packing, refused by the others, refused
   with another a_zero_point; no allocation inside luthier_qgemm_packed once the context's
   workspace has grown (with a bias on every other kernel). */
static void test_int8_packed_rules(void) {
    luthier_context *ctx = q8_context(0, 0);
    const int m = 37, n = 53, k = 71;
    uint8_t *a = (uint8_t *)test_alloc((size_t)m * k);
    int8_t *b = (int8_t *)test_alloc((size_t)k * n);
    int32_t *c1 = (int32_t *)test_alloc((size_t)m * n * 4), *c2 = (int32_t *)test_alloc((size_t)m * n * 4);
    int32_t *bias = (int32_t *)test_alloc((size_t)n * 4);
    int i, j, e;
    for (e = 0; e < n; e++) bias[e] = test_rand_int(-100000, 100000);
    for (e = 0; e < m * k; e++) a[e] = (uint8_t)test_rand_int(0, 255);
    for (e = 0; e < k * n; e++) b[e] = (int8_t)test_rand_int(-127, 127);
    for (i = 0; i < LUTHIER__NUM_QKERNELS; i++) {
        const luthier__kernel_entry *ei = &luthier__qkernels[i];
        luthier_qgemm_desc d;
        luthier_qpacked_b *pb = NULL;
        size_t allocs;
        if (!q8_kernel_available(ei)) continue;
        memset(&d, 0, sizeof d);
        d.m = m; d.n = n; d.k = k;
        d.a_zero_point = 3;
        d.output = LUTHIER_QOUTPUT_INT32;
        d.bias = i & 1 ? bias : NULL;
        d.kernel = ei->name;
        CHECK(luthier_qgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_OK, "pack for %s", ei->name);
        if (!pb) continue;
        CHECK(luthier_qpacked_b_bytes(pb) >= (size_t)k * n, "packed bytes");
        d.kernel = NULL;
        CHECK(luthier_qgemm_packed(ctx, &d, a, pb, c1) == LUTHIER_STATUS_OK, "%s packed", ei->name);
        allocs = test_luthier_allocs;
        CHECK(luthier_qgemm_packed(ctx, &d, a, pb, c1) == LUTHIER_STATUS_OK, "%s packed again", ei->name);
        CHECK(test_luthier_allocs == allocs, "%s: luthier_qgemm_packed allocated %zu times", ei->name,
              test_luthier_allocs - allocs);
        d.kernel = ei->name;
        CHECK(luthier_qgemm(ctx, &d, a, b, c2) == LUTHIER_STATUS_OK, "one-shot");
        CHECK(memcmp(c1, c2, (size_t)m * n * 4) == 0, "%s: packed and one-shot differ", ei->name);
        d.kernel = NULL;
        d.a_zero_point = 4;
        CHECK(luthier_qgemm_packed(ctx, &d, a, pb, c1) == LUTHIER_STATUS_INCOMPATIBLE, "other a_zero_point refused");
        CHECK(strstr(luthier_context_error(ctx), "a_zero_point") != NULL, "message: %s", luthier_context_error(ctx));
        d.a_zero_point = 3;
        d.k = k - 1;
        CHECK(luthier_qgemm_packed(ctx, &d, a, pb, c1) == LUTHIER_STATUS_INCOMPATIBLE, "other k refused");
        d.k = k;
        for (j = 0; j < LUTHIER__NUM_QKERNELS; j++) {
            const luthier__kernel_entry *ej = &luthier__qkernels[j];
            luthier_status s;
            if (j == i || !q8_kernel_available(ej)) continue;
            d.kernel = ej->name;
            s = luthier_qgemm_packed(ctx, &d, a, pb, c2);
            if (ej->nr == ei->nr && ej->k_unroll == ei->k_unroll && ej->a_s8 == ei->a_s8) {
                CHECK(s == LUTHIER_STATUS_OK && memcmp(c1, c2, (size_t)m * n * 4) == 0, "%s on B packed for %s",
                      ej->name, ei->name);
            } else {
                CHECK(s == LUTHIER_STATUS_INCOMPATIBLE, "%s on B packed for %s: status %d", ej->name, ei->name, (int)s);
                CHECK(strstr(luthier_context_error(ctx), "packed for") != NULL, "message: %s", luthier_context_error(ctx));
            }
        }
        luthier_qpacked_b_destroy(pb);
    }
    free(a); free(b); free(c1); free(c2); free(bias);
    luthier_context_destroy(ctx);
}

/* The default kernel follows the CPU features (and the context's disabled ones). */
static void test_int8_dispatch(void) {
    const unsigned f = luthier_cpu_features();
    static const unsigned masks[] = {0, LUTHIER_CPU_AVX512VNNI, LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVXVNNI,
                                     LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVXVNNI | LUTHIER_CPU_AVX2_FMA,
                                     LUTHIER_CPU_AVX512F, LUTHIER_CPU_DOTPROD, LUTHIER_CPU_I8MM,
                                     LUTHIER_CPU_I8MM | LUTHIER_CPU_DOTPROD};
    size_t i;
    for (i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        luthier_context *ctx = NULL;
        luthier_context_desc cd;
        const luthier__kernel_entry *e;
        memset(&cd, 0, sizeof cd);
        cd.disabled_cpu_features = masks[i];
        cd.num_threads = 1;
        if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) continue;
        e = &luthier__qkernels[luthier__qkernel_default(ctx, 256)];
        CHECK((e->required_cpu_features & masks[i]) == 0 && q8_kernel_available(e), "mask %#x chose %s", masks[i], e->name);
        if (i == 0) printf("    default int8 kernel: %s\n", e->name);
        {
            q8_case g = q8_random_case(50);
            CHECK(q8_gemm_check(ctx, &g, NULL, 1, LUTHIER_SCHEDULE_RATIO, NULL, 0) == 0, "mask %#x (%s)", masks[i], e->name);
        }
        /* the expected ISA of the default */
        if ((f & ~masks[i] & (LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVX512F)) == (LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVX512F))
            CHECK(strcmp(e->isa, "avx512vnni") == 0, "AVX-512 VNNI CPU chose %s", e->name);
        if (f & LUTHIER_CPU_NEON) {
#ifdef LUTHIER__HAVE_QNEON_I8MM
            if (f & ~masks[i] & LUTHIER_CPU_I8MM) CHECK(strcmp(e->isa, "neon_i8mm") == 0, "i8mm CPU chose %s", e->name);
#endif
            if (!(f & ~masks[i] & LUTHIER_CPU_I8MM)) CHECK(strcmp(e->isa, "neon_i8mm") != 0, "CPU without i8mm chose %s", e->name);
#ifdef LUTHIER__HAVE_QNEON_DOT
            if ((f & ~masks[i] & (LUTHIER_CPU_DOTPROD | LUTHIER_CPU_I8MM)) == LUTHIER_CPU_DOTPROD)
                CHECK(strcmp(e->isa, "neon_dot") == 0, "dotprod CPU chose %s", e->name);
#endif
            if (!(f & ~masks[i] & (LUTHIER_CPU_DOTPROD | LUTHIER_CPU_I8MM)))
                CHECK(strcmp(e->name, "luthier_qgemm_ukernel_8x8__neon_hybrid") == 0, "CPU without dotprod chose %s", e->name);
        }
        /* a narrow N picks a kernel of the same ISA that wastes no more lanes */
        {
            const luthier__kernel_entry *e16 = &luthier__qkernels[luthier__qkernel_default(ctx, 16)];
            CHECK(strcmp(e16->isa, e->isa) == 0 && luthier__nr_waste(e16->nr, 16) <= luthier__nr_waste(e->nr, 16),
                  "n = 16 chose %s over %s", e16->name, e->name);
        }
        luthier_context_destroy(ctx);
    }
    printf("    CPU features %#x: avx512vnni %d, avxvnni %d, dotprod %d, i8mm %d\n", f, !!(f & LUTHIER_CPU_AVX512VNNI),
           !!(f & LUTHIER_CPU_AVXVNNI), !!(f & LUTHIER_CPU_DOTPROD), !!(f & LUTHIER_CPU_I8MM));
}

static void q8_expect(luthier_context *ctx, luthier_status got, luthier_status want, const char *what, const char *needle) {
    CHECK(got == want, "%s: status %s, want %s (%s)", what, luthier_status_string(got), luthier_status_string(want),
          luthier_context_error(ctx));
    if (needle) CHECK(strstr(luthier_context_error(ctx), needle) != NULL, "%s: message '%s' lacks '%s'", what,
                      luthier_context_error(ctx), needle);
}

static void test_int8_bad_arguments(void) {
    luthier_context *ctx = q8_context(0, 0);
    luthier_qgemm_desc d, ok;
    luthier_qpacked_b *pb = NULL;
    uint8_t a[64];
    int8_t b[64];
    uint8_t c[64];
    int32_t mults[4] = {1 << 30, 1 << 30, -1, 1 << 30}, shifts[4] = {0, 0, 0, 0};
    float scales[4] = {1, 1, 0, 1};
    memset(a, 1, sizeof a);
    memset(b, 1, sizeof b);
    memset(&ok, 0, sizeof ok);
    ok.m = 4; ok.n = 4; ok.k = 4;
    ok.multiplier = 1 << 30;
    CHECK(luthier_qgemm(ctx, &ok, a, b, c) == LUTHIER_STATUS_OK, "the baseline works: %s", luthier_context_error(ctx));
    CHECK(luthier_qgemm(NULL, &ok, a, b, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "no context");
    q8_expect(ctx, luthier_qgemm(ctx, NULL, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL desc", "desc");
    q8_expect(ctx, luthier_qgemm(ctx, &ok, NULL, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL A", "A is NULL");
    q8_expect(ctx, luthier_qgemm(ctx, &ok, a, NULL, c), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL B", "B is NULL");
    q8_expect(ctx, luthier_qgemm(ctx, &ok, a, b, NULL), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL C", "C is NULL");
    d = ok; d.m = -1;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "m < 0", "negative");
    d = ok; d.k = (int64_t)1 << 40;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_OVERFLOW, "huge k", "2^31");
    d = ok; d.m = INT32_MAX; d.k = INT32_MAX; d.lda = (int64_t)1 << 40;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_OVERFLOW, "A overflows", "overflows");
    d = ok; d.lda = 3;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "lda < k", "leading dimension of A");
    d = ok; d.ldb = 2;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "ldb < n", "leading dimension of B");
    d = ok; d.ldc = 3;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "ldc < n", "leading dimension of C");
    d = ok; d.a_zero_point = 256;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "za 256", "a_zero_point");
    d = ok; d.output_zero_point = -1;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "zo -1", "output_zero_point");
    d = ok; d.output = LUTHIER_QOUTPUT_COUNT;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "bad output", "output kind");
    d = ok; d.shift = 32;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "shift 32", "shift");
    d = ok; d.multiplier = -5;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "negative multiplier", "multiplier");
    d = ok; d.multipliers = mults;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "multipliers without shifts", "both");
    d = ok; d.multipliers = mults; d.shifts = shifts;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "column 2 multiplier", "column 2");
    d = ok; d.output_min = 10; d.output_max = 5;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "min > max", "output_min");
    d = ok; d.output_max = 300;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "max 300", "output_max");
    d = ok; d.activation = LUTHIER_ACTIVATION_RELU;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "relu on uint8", "output_min");
    d = ok; d.output = LUTHIER_QOUTPUT_FLOAT; d.b_scale = 1;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "a_scale 0", "a_scale");
    d = ok; d.output = LUTHIER_QOUTPUT_FLOAT; d.a_scale = 1; d.b_scale = INFINITY;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "b_scale inf", "b_scale");
    d = ok; d.output = LUTHIER_QOUTPUT_FLOAT; d.a_scale = 1; d.b_scales = scales;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "b_scales[2] = 0", "b_scales[2]");
    d = ok; d.output = LUTHIER_QOUTPUT_FLOAT; d.a_scale = 1; d.b_scale = 1; d.activation = LUTHIER_ACTIVATION_CLAMP;
    d.clamp_min = 1; d.clamp_max = 0;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "reversed clamp", "clamp_min");
    d = ok; d.kernel = "no_such_kernel";
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_NOT_FOUND, "unknown kernel", "no_such_kernel");
    d = ok; d.kernel = "luthier_sgemm_ukernel_4x4__scalar";
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_NOT_FOUND, "an fp32 kernel", "int8");
    d = ok; d.schedule = LUTHIER_SCHEDULE_COUNT;
    q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "bad schedule", "schedule");
    {
        const float r[2] = {1, 1};
        d = ok; d.ratios = r; d.num_ratios = 2;
        q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_INVALID_ARGUMENT, "2 ratios, 1 cluster", "ratios");
    }
    {
        int i;
        for (i = 0; i < LUTHIER__NUM_QKERNELS; i++)
            if (!q8_kernel_available(&luthier__qkernels[i])) {
                d = ok; d.kernel = luthier__qkernels[i].name;
                q8_expect(ctx, luthier_qgemm(ctx, &d, a, b, c), LUTHIER_STATUS_UNSUPPORTED, "unavailable kernel", "lacks");
                break;
            }
    }
    /* pack_b and packed */
    CHECK(luthier_qgemm_pack_b(NULL, &ok, b, &pb) == LUTHIER_STATUS_INVALID_ARGUMENT && pb == NULL, "pack: no context");
    q8_expect(ctx, luthier_qgemm_pack_b(ctx, &ok, b, NULL), LUTHIER_STATUS_INVALID_ARGUMENT, "pack: NULL out", "out");
    q8_expect(ctx, luthier_qgemm_pack_b(ctx, &ok, NULL, &pb), LUTHIER_STATUS_INVALID_ARGUMENT, "pack: NULL B", "B is NULL");
    d = ok; d.n = -2;
    q8_expect(ctx, luthier_qgemm_pack_b(ctx, &d, b, &pb), LUTHIER_STATUS_INVALID_ARGUMENT, "pack: n < 0", "negative");
    CHECK(luthier_qgemm_pack_b(ctx, &ok, b, &pb) == LUTHIER_STATUS_OK, "pack");
    q8_expect(ctx, luthier_qgemm_packed(ctx, &ok, a, NULL, c), LUTHIER_STATUS_INVALID_ARGUMENT, "packed: NULL B", "packed B");
    q8_expect(ctx, luthier_qgemm_packed(ctx, &ok, NULL, pb, c), LUTHIER_STATUS_INVALID_ARGUMENT, "packed: NULL A", "A is NULL");
    d = ok; d.n = 5; d.ldc = 5;
    q8_expect(ctx, luthier_qgemm_packed(ctx, &d, a, pb, c), LUTHIER_STATUS_INCOMPATIBLE, "packed: other n", "packed as");
    luthier_qpacked_b_destroy(pb);
    luthier_qpacked_b_destroy(NULL);
    CHECK(luthier_qpacked_b_bytes(NULL) == 0, "bytes of NULL");
    {
        luthier_kernel_info ki;
        int idx = -1;
        CHECK(luthier_qkernel_count() == LUTHIER__NUM_QKERNELS, "count");
        CHECK(luthier_qkernel_get(-1, &ki) == LUTHIER_STATUS_INVALID_ARGUMENT, "get -1");
        CHECK(luthier_qkernel_get(luthier_qkernel_count(), &ki) == LUTHIER_STATUS_INVALID_ARGUMENT, "get count");
        CHECK(luthier_qkernel_get(0, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "get NULL");
        CHECK(luthier_qkernel_find("4x4__scalar", &idx) == LUTHIER_STATUS_OK && idx == LUTHIER__NUM_QKERNELS - 1, "find short");
        CHECK(luthier_qkernel_find("luthier_qgemm_ukernel_4x4__scalar", &idx) == LUTHIER_STATUS_OK, "find full");
        CHECK(luthier_qkernel_find("4x4", &idx) == LUTHIER_STATUS_NOT_FOUND, "find partial");
        CHECK(luthier_qkernel_find(NULL, &idx) == LUTHIER_STATUS_INVALID_ARGUMENT, "find NULL");
        CHECK(luthier_qkernel_get(0, &ki) == LUTHIER_STATUS_OK && ki.k_unroll >= 1 && ki.mr >= 1, "get 0");
    }
    luthier_context_destroy(ctx);
}

static void run_int8_tests(void) {
    RUN(test_int8_requantize);
    RUN(test_int8_quantize_helpers);
    RUN(test_int8_ukernels_all_edges);
    RUN(test_int8_ukernels_panel_ends);
    RUN(test_int8_gemm_random_shapes);
    RUN(test_int8_gemm_threads_blocks);
    RUN(test_int8_gemm_dnn_shapes);
    RUN(test_int8_degenerate);
    RUN(test_int8_packed_rules);
    RUN(test_int8_dispatch);
    RUN(test_int8_bad_arguments);
}
