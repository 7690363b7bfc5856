/* Winograd F(4x4, 3x3) in fp16 arithmetic (>>impl-conv-winograd16: the WINOGRAD_4X3 row of the
   F16 kernel family, Armv8.2 FP16 only) against a double-precision direct convolution of the
   same fp16-rounded inputs and weights; its refusal where the CPU has no fp16 arithmetic; the
   plans that pick it (fp16 precision where the fp32 plan takes winograd_4x3) against fp32 plans.
   Included by test_main.c after test_fp16.c (rand_buf, ctx_threads, qp_cosine, fp16_act_run).

   The error bound. bench/winograd_fp16_error.py models this design (fp16 products summed in
   fp16 over blocks of 8 input channels, the block sums added in fp16 over groups of 4 blocks,
   (b0 + b1) + (b2 + b3), fp32 across groups: "G=4 pairwise") at a relative RMS error of 6.5e-3
   to 6.8e-3 of the output with the transforms in fp16 (blocks of 8 added in fp32: 5.9e-3 to
   6.2e-3); here the transforms are fp32 (only V and U are rounded to fp16), which the model
   puts at 5.4e-3 to 5.9e-3. The tests take 1.2e-2, 1.8x the model's fp16-transform figure
   (twice it before the groups), for the RMS error relative to the RMS of the pre-activation output, and 6e-2 of the
   largest |pre-activation output| for any single output (the largest of a layer's errors lies
   a few RMS above the RMS, and the largest output a few RMS above the RMS output). A dropped
   cross-block sum or a wrong transform coefficient gives errors of order 1. */

static int wino16_hw(const luthier_context *ctx) {
    return LUTHIER__SIMD_NEON && (ctx->cpu_features & LUTHIER_CPU_FP16) != 0;
}

static float wino16_round(float f) { return luthier__f16_to_f32(luthier__f32_to_f16(f)); }

/* standard normal (Box-Muller on the harness generator) */
static double wino16_normal(void) {
    const double u = ((double)(test_rand_u64() >> 11) + 0.5) / 9007199254740992.0;
    const double v = (double)(test_rand_u64() >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct wino16_case {
    int64_t batch, c, k, h, w, pad, groups;
    luthier_activation act;
    int bias, accumulate, h16;
    luthier_conv_algorithm algo; /* WINOGRAD_4X3, or IM2COL for the direct fp16 convolution */
    int he;                      /* inputs max(N(0,1), 0) and He-normal weights (the model's), else uniform */
} wino16_case;

typedef struct wino16_err {
    double max_err, max_ref, sq_err, sq_ref;
    size_t n;
} wino16_err;

/* Runs case k on ctx (its F16 kernel; y0: the output's previous values when it accumulates)
   into y (fp32 values; fp16 outputs widened); returns the status of create + run. */
static luthier_status wino16_run(luthier_context *ctx, const wino16_case *k, const float *x, const float *w, const float *b,
                                 const float *y0, float *y, size_t nout) {
    luthier_conv2d_desc d;
    luthier_conv2d_layer *cv = NULL;
    luthier_conv2d_info info;
    luthier_status s;
    const size_t nin = (size_t)(k->batch * k->h * k->w * k->c);
    size_t i;
    memset(&d, 0, sizeof d);
    d.batch = k->batch, d.in_channels = k->c, d.out_channels = k->k, d.in_h = k->h, d.in_w = k->w;
    d.kernel_h = d.kernel_w = 3, d.groups = k->groups;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = k->pad;
    d.activation = k->act, d.accumulate = k->accumulate, d.layout = LUTHIER_LAYOUT_NHWC;
    d.algorithm = k->algo;
    d.kernel = luthier__conv_f16_kernel(ctx, &d, LUTHIER_PRECISION_FP16);
    if ((s = luthier_conv2d_create(ctx, &d, w, k->bias ? b : NULL, &cv)) != LUTHIER_STATUS_OK) return s;
    luthier_conv2d_get_info(cv, &info);
    CHECK(info.algorithm == k->algo, "algorithm %d, asked %d", (int)info.algorithm, (int)k->algo);
    if (k->h16 && (s = luthier__conv_use_h16(ctx, cv)) != LUTHIER_STATUS_OK) {
        luthier_conv2d_destroy(cv);
        return s;
    }
    if (k->h16) {
        uint16_t *xh = (uint16_t *)test_alloc(nin * 2 + 2), *yh = (uint16_t *)test_alloc(nout * 2 + 2);
        for (i = 0; i < nin; i++) xh[i] = luthier__f32_to_f16(x[i]);
        for (i = 0; i < nout; i++) yh[i] = luthier__f32_to_f16(y0[i]);
        s = luthier_conv2d_run(ctx, cv, (const float *)(const void *)xh, (float *)(void *)yh);
        for (i = 0; i < nout; i++) y[i] = luthier__f16_to_f32(yh[i]);
        free(xh), free(yh);
    } else {
        memcpy(y, y0, nout * sizeof(float));
        s = luthier_conv2d_run(ctx, cv, x, y);
    }
    luthier_conv2d_destroy(cv);
    return s;
}

/* The double-precision direct convolution (NHWC x, OIHW w): pre = y0 (accumulate) + bias + sum,
   ref = act(pre). */
static void wino16_reference(const wino16_case *k, const float *x, const float *w, const float *b, const float *y0,
                             double *pre, double *ref, int64_t oh, int64_t ow) {
    const int64_t cg = k->c / k->groups, kg = k->k / k->groups;
    int64_t n, oy, ox, co, ci, kh, kw;
    for (n = 0; n < k->batch; n++)
        for (oy = 0; oy < oh; oy++)
            for (ox = 0; ox < ow; ox++)
                for (co = 0; co < k->k; co++) {
                    const size_t o = (size_t)(((n * oh + oy) * ow + ox) * k->k + co);
                    double s = (k->accumulate ? (double)y0[o] : 0.0) + (k->bias ? (double)b[co] : 0.0);
                    for (kh = 0; kh < 3; kh++)
                        for (kw = 0; kw < 3; kw++) {
                            const int64_t iy = oy - k->pad + kh, ix = ox - k->pad + kw;
                            if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                            for (ci = 0; ci < cg; ci++)
                                s += (double)x[((n * k->h + iy) * k->w + ix) * k->c + (co / kg) * cg + ci] *
                                     (double)w[((co * cg + ci) * 3 + kh) * 3 + kw];
                        }
                    pre[o] = s;
                    ref[o] = test_act(k->act, 0.0f, 6.0f, s);
                }
}

/* One case on ctx: operands (fp16 values), the run and the reference; errors into e (pre-
   activation scale). Returns the outputs (caller frees) or NULL when create/run failed. */
static float *wino16_case_run(luthier_context *ctx, const wino16_case *k, wino16_err *e, luthier_status *status) {
    const int64_t oh = k->h + 2 * k->pad - 2, ow = k->w + 2 * k->pad - 2;
    const size_t nin = (size_t)(k->batch * k->h * k->w * k->c), nw = (size_t)(k->k * (k->c / k->groups) * 9);
    const size_t nout = (size_t)(k->batch * oh * ow * k->k);
    float *x = (float *)test_alloc(nin * 4 + 4), *w = (float *)test_alloc(nw * 4 + 4), *b = (float *)test_alloc((size_t)k->k * 4 + 4);
    float *y0 = (float *)test_alloc(nout * 4 + 4), *y = (float *)test_alloc(nout * 4 + 4);
    double *pre = (double *)test_alloc(nout * 8 + 8), *ref = (double *)test_alloc(nout * 8 + 8);
    const double he = sqrt(2.0 / (9.0 * (double)(k->c / k->groups)));
    size_t i;
    for (i = 0; i < nin; i++) x[i] = wino16_round(k->he ? (float)fmax(wino16_normal(), 0.0) : test_rand_float());
    for (i = 0; i < nw; i++) w[i] = wino16_round(k->he ? (float)(he * wino16_normal()) : 0.5f * test_rand_float());
    for (i = 0; i < (size_t)k->k; i++) b[i] = test_rand_float();
    for (i = 0; i < nout; i++) y0[i] = wino16_round(test_rand_float());
    *status = oh > 0 && ow > 0 ? wino16_run(ctx, k, x, w, b, y0, y, nout) : LUTHIER_STATUS_INVALID_ARGUMENT;
    if (*status == LUTHIER_STATUS_OK) {
        wino16_reference(k, x, w, b, y0, pre, ref, oh, ow);
        memset(e, 0, sizeof *e);
        for (i = 0; i < nout; i++) {
            /* the output's error measured before the activation where it is active (relu: > 0) */
            const double err = fabs((double)y[i] - ref[i]);
            e->max_err = fmax(e->max_err, err != err ? INFINITY : err);
            e->max_ref = fmax(e->max_ref, fabs(pre[i]));
            e->sq_err += err * err;
            e->sq_ref += pre[i] * pre[i];
        }
        e->n = nout;
    }
    free(x), free(w), free(b), free(y0), free(pre), free(ref);
    if (*status != LUTHIER_STATUS_OK) free(y), y = NULL;
    return y;
}

/* Case k at 1 and 2 threads on the same operands: both within the bound, the same bits. */
static void wino16_check(luthier_context *c1, luthier_context *c2, const wino16_case *k, double *worst_rms, double *worst_max,
                         int *tested) {
    wino16_err e1, e2;
    luthier_status s1, s2;
    const uint64_t seed = test_rng_state;
    float *y1 = wino16_case_run(c1, k, &e1, &s1), *y2;
    test_rng_state = seed;
    y2 = wino16_case_run(c2, k, &e2, &s2);
    CHECK(s1 == LUTHIER_STATUS_OK && s2 == LUTHIER_STATUS_OK, "C %lld K %lld %lldx%lld: %s", (long long)k->c, (long long)k->k,
          (long long)k->h, (long long)k->w, luthier_context_error(c1));
    if (y1 && y2) {
        const double rms = sqrt(e1.sq_err / (double)e1.n) / fmax(sqrt(e1.sq_ref / (double)e1.n), 1e-30);
        const double mx = e1.max_err / fmax(e1.max_ref, 1e-30);
        CHECK(rms <= 1.2e-2 && mx <= 6e-2,
              "C %lld K %lld %lldx%lld g %lld pad %lld act %d bias %d acc %d h16 %d: rms %.3g, max %.3g of max|out| %.3g",
              (long long)k->c, (long long)k->k, (long long)k->h, (long long)k->w, (long long)k->groups, (long long)k->pad,
              (int)k->act, k->bias, k->accumulate, k->h16, rms, mx, e1.max_ref);
        CHECK(!memcmp(y1, y2, e1.n * sizeof(float)), "C %lld K %lld %lldx%lld: 1 and 2 threads differ", (long long)k->c,
              (long long)k->k, (long long)k->h, (long long)k->w);
        *worst_rms = fmax(*worst_rms, rms), *worst_max = fmax(*worst_max, mx);
        ++*tested;
    }
    free(y1), free(y2);
}

/* The sweep: C, K in {1, 3, 8, 9, 16, 33, 64}, H, W in 1..14, pad 0/1, bias, ReLU/ReLU6,
   accumulation, fp32 and fp16 activations, at 1 and 2 threads (the same bits: a tile's
   arithmetic does not depend on the split); then two groups, and a layer of several blocks of
   tiles with channels past the 8-channel blocks and 16-output panels. */
static void test_wino16_conv(void) {
    static const int64_t chans[7] = {1, 3, 8, 9, 16, 33, 64};
    static const luthier_activation acts[3] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU, LUTHIER_ACTIVATION_RELU6};
    luthier_context *c1 = ctx_threads(1), *c2 = ctx_threads(2);
    int ci, ki, tested = 0, idx = 0;
    double worst_rms = 0, worst_max = 0;
    wino16_case k;
    if (!wino16_hw(c1)) {
        printf("    skip: no fp16 arithmetic (the refusal: test_wino16_refusals)\n");
        luthier_context_destroy(c1), luthier_context_destroy(c2);
        return;
    }
    for (ci = 0; ci < 7; ci++)
        for (ki = 0; ki < 7; ki++) {
            const int n = idx;
            if (T.quick && (ci + ki) % 2) continue;
            idx++;
            memset(&k, 0, sizeof k);
            k.batch = 1 + (n % 5 == 0);
            k.c = chans[ci], k.k = chans[ki];
            k.pad = n % 3 ? 1 : 0;
            k.h = test_rand_int(k.pad ? 1 : 3, 14);
            k.w = test_rand_int(k.pad ? 1 : 3, 14);
            k.groups = 1;
            k.act = acts[n % 3];
            k.bias = n % 4 != 3;
            k.accumulate = n % 6 == 5;
            k.h16 = n % 2;
            k.he = n % 7 < 3;
            k.algo = LUTHIER_CONV_WINOGRAD_4X3;
            wino16_check(c1, c2, &k, &worst_rms, &worst_max, &tested);
        }
    memset(&k, 0, sizeof k);
    k.batch = 1, k.c = 18, k.k = 34, k.h = 9, k.w = 11, k.pad = 1, k.groups = 2, k.bias = 1, k.h16 = 1;
    k.act = LUTHIER_ACTIVATION_RELU, k.algo = LUTHIER_CONV_WINOGRAD_4X3;
    wino16_check(c1, c2, &k, &worst_rms, &worst_max, &tested);
    k.groups = 1, k.c = 24, k.k = 40, k.h = 46, k.w = 45, k.h16 = 0, k.accumulate = 1, k.he = 1;
    wino16_check(c1, c2, &k, &worst_rms, &worst_max, &tested);
    printf("    %d layers, worst RMS error %.3g of RMS output, worst max error %.3g of max |output|\n", tested, worst_rms,
           worst_max);
    luthier_context_destroy(c1), luthier_context_destroy(c2);
}

/* fp16 rounding of a double, to nearest even (the kernel test's values stay far from overflow) */
static double wino16_r16(double x) {
    int e;
    if (x == 0.0) return x;
    (void)frexp(x, &e);
    e = e - 11 < -24 ? -24 : e - 11; /* the unit in the last place: 11 significant bits, or subnormal */
    return ldexp(nearbyint(ldexp(x, -e)), e);
}

/* The arithmetic luthier__wino16_4x16 is to do (>>wino16), for one output: a row of A (nb * 8
   halves) times a column of B (rows ldb halves apart). Per block of 8 channels the first product
   rounded to fp16, then each FMA rounded once; the block sums of a group of 4 added in fp16 as
   (b0 + b1) + (b2 + b3), those of a last partial group in order; the group sums added in fp32.
   Sums of these operands are exact in double, so each step rounds once, as the FMLA does. */
static float wino16_form(const uint16_t *a, const uint16_t *b, size_t ldb, size_t nb) {
    float c = 0.0f;
    size_t g, j, t;
    for (g = 0; g < nb; g += 4) {
        const size_t n = nb - g < 4 ? nb - g : 4;
        double s[4], sum;
        for (j = 0; j < n; j++) {
            double acc = 0.0;
            for (t = 0; t < 8; t++) {
                const size_t k = (g + j) * 8 + t;
                acc = wino16_r16(acc + (double)luthier__f16_to_f32(a[k]) * (double)luthier__f16_to_f32(b[k * ldb]));
            }
            s[j] = acc;
        }
        if (n == 4) sum = wino16_r16(wino16_r16(s[0] + s[1]) + wino16_r16(s[2] + s[3]));
        else
            for (sum = s[0], j = 1; j < n; j++) sum = wino16_r16(sum + s[j]);
        c += (float)sum;
    }
    return c;
}

/* The product kernel alone against wino16_form, bit for bit: nb = 1 to 13 and 25 blocks (full
   groups of 4, partial ones of 1 to 3), rows of A and C further apart than the tile (what lies
   between stays untouched), operands on coarse grids (A: multiples of 1/64 in [-4, 4], B of
   1/1024 in (-2, 2), a few zeros) so that the double sums are exact; and the form itself
   against the exact double product (it must be an approximation of it, not just of itself):
   at most 12 roundings on the way to an output, each within 2^-11 of sum |products|, 6e-3. */
static void test_wino16_kernel(void) {
    static const size_t nbs[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 25, 10};
    luthier_context *ctx = ctx_threads(1);
    size_t q, i, r, col;
    int bad = 0, tested = 0;
    double worst = 0.0;
    if (!wino16_hw(ctx)) {
        printf("    skip: no fp16 arithmetic\n");
        luthier_context_destroy(ctx);
        return;
    }
    for (q = 0; q < 14; q++) {
        const size_t nb = nbs[q], lda = nb * 8 + 8, ldc = 20;
        uint16_t *a = (uint16_t *)test_alloc(4 * lda * 2), *b = (uint16_t *)test_alloc(nb * 8 * 16 * 2);
        float *c = (float *)test_alloc(4 * ldc * 4);
        const float sent = test_sentinel();
        for (i = 0; i < 4 * lda; i++) a[i] = luthier__f32_to_f16(test_rand_int(0, 9) ? (float)test_rand_int(-256, 256) / 64.0f : 0.0f);
        for (i = 0; i < nb * 8 * 16; i++) b[i] = luthier__f32_to_f16((float)test_rand_int(-2047, 2047) / 1024.0f);
        for (i = 0; i < 4 * ldc; i++) c[i] = sent;
        luthier__wino16_4x16(a, lda, b, nb, c, ldc);
        for (r = 0; r < 4; r++)
            for (col = 0; col < ldc; col++) {
                const float y = c[r * ldc + col];
                if (col >= 16) {
                    if (memcmp(&y, &sent, sizeof y)) bad++;
                    continue;
                }
                {
                    const float want = wino16_form(a + r * lda, b + col, 16, nb);
                    double exact = 0.0, mag = 0.0;
                    for (i = 0; i < nb * 8; i++) {
                        const double p = (double)luthier__f16_to_f32(a[r * lda + i]) * (double)luthier__f16_to_f32(b[i * 16 + col]);
                        exact += p, mag += fabs(p);
                    }
                    worst = fmax(worst, fabs((double)want - exact) / fmax(mag, 1e-30));
                    CHECK(fabs((double)want - exact) <= 6e-3 * mag + 1e-6, "nb %zu row %zu col %zu: form %.9g, exact %.9g (sum |p| %.4g)",
                          nb, r, col, (double)want, exact, mag);
                    if (y != want && bad++ < 8)
                        printf("    nb %zu row %zu col %zu: kernel %.9g, form %.9g\n", nb, r, col, (double)y, (double)want);
                    tested++;
                }
            }
        free(a), free(b), free(c);
    }
    CHECK(bad == 0, "%d outputs differ from the form or written outside the tile", bad);
    printf("    %d outputs bit for bit; the form's worst error %.3g of sum |products|\n", tested, worst);
    luthier_context_destroy(ctx);
}

/* Channel counts that end in a partial group of 4 blocks of 8 channels (C = 8: one block; 24:
   three; 40, 72: full groups and one block more; 200: six full groups and one block; 100: cp 104,
   three full groups and a block with 4 zero channels), the model's operands, 1 and 2 threads,
   within the sweep's bounds. */
static void test_wino16_partial_groups(void) {
    static const int64_t chans[6] = {8, 24, 40, 72, 200, 100};
    luthier_context *c1 = ctx_threads(1), *c2 = ctx_threads(2);
    int i, tested = 0;
    double worst_rms = 0, worst_max = 0;
    if (!wino16_hw(c1)) {
        printf("    skip: no fp16 arithmetic\n");
        luthier_context_destroy(c1), luthier_context_destroy(c2);
        return;
    }
    for (i = 0; i < 6; i++) {
        wino16_case k;
        memset(&k, 0, sizeof k);
        k.batch = 1, k.c = chans[i], k.k = i % 2 ? 16 : 24, k.h = 7 + i % 3, k.w = 9 - i % 2, k.pad = 1, k.groups = 1;
        k.act = i % 3 ? LUTHIER_ACTIVATION_RELU : LUTHIER_ACTIVATION_NONE;
        k.bias = 1, k.accumulate = i == 3, k.h16 = i % 2, k.he = 1;
        k.algo = LUTHIER_CONV_WINOGRAD_4X3;
        wino16_check(c1, c2, &k, &worst_rms, &worst_max, &tested);
    }
    printf("    %d layers, worst RMS error %.3g of RMS output, worst max error %.3g of max |output|\n", tested, worst_rms,
           worst_max);
    luthier_context_destroy(c1), luthier_context_destroy(c2);
}

/* The F16 family's WINOGRAD_4X3 row: refused by name without fp16 arithmetic (every F16
   kernel this CPU runs, the scalar emulation included), taken with it; F(2x2) and F(6x6) are
   not rows of the family. */
static void test_wino16_refusals(void) {
    luthier_context *ctx = ctx_threads(1);
    const int hw = wino16_hw(ctx);
    float w[8 * 8 * 9];
    int f, tried = 0;
    test_fill(w, 8 * 8 * 9);
    for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
        luthier_kernel_info ki;
        luthier_conv2d_desc d;
        luthier_conv2d_layer *cv = NULL;
        luthier_status s;
        luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
        if (!ki.available) continue;
        memset(&d, 0, sizeof d);
        d.batch = 1, d.in_channels = d.out_channels = 8, d.in_h = d.in_w = 10, d.kernel_h = d.kernel_w = 3;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1, d.layout = LUTHIER_LAYOUT_NHWC;
        d.kernel = ki.name;
        d.algorithm = LUTHIER_CONV_WINOGRAD_4X3;
        s = luthier_conv2d_create(ctx, &d, w, NULL, &cv);
        if (hw)
            CHECK(s == LUTHIER_STATUS_OK, "%s: %s", ki.name, luthier_context_error(ctx));
        else
            CHECK(s == LUTHIER_STATUS_UNSUPPORTED && strstr(luthier_context_error(ctx), "winograd_4x3") &&
                      strstr(luthier_context_error(ctx), "FP16"),
                  "%s without fp16 arithmetic: status %d, '%s'", ki.name, (int)s, luthier_context_error(ctx));
        luthier_conv2d_destroy(cv);
        cv = NULL;
        d.algorithm = LUTHIER_CONV_WINOGRAD_2X3;
        CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED &&
                  strstr(luthier_context_error(ctx), "not implemented for this datatype") &&
                  strstr(luthier_context_error(ctx), "winograd_4x3"),
              "%s: winograd_2x3: '%s'", ki.name, luthier_context_error(ctx));
        luthier_conv2d_destroy(cv);
        cv = NULL;
        d.algorithm = LUTHIER_CONV_WINOGRAD_4X3; /* the shape rule is the fp32 row's: stride 2 */
        d.stride_h = d.stride_w = 2;
        CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED &&
                  strstr(luthier_context_error(ctx), "stride"),
              "%s: stride 2: '%s'", ki.name, luthier_context_error(ctx));
        luthier_conv2d_destroy(cv);
        tried++;
    }
    CHECK(tried > 0, "no F16 kernel available");
    luthier_context_destroy(ctx);
}

/* The tuner's space of an F16 3x3 layer offers winograd_4x3 exactly where the context's CPU runs
   it (a context with FP16 masked off gets none). */
static void test_wino16_tune_space(void) {
    int masked;
    for (masked = 0; masked < 2; masked++) {
        luthier_context_desc cd;
        luthier_context *ctx = NULL;
        luthier__task t;
        luthier__cand *c;
        size_t n = 0, i, wino = 0;
        int hw;
        memset(&cd, 0, sizeof cd);
        cd.num_threads = 1;
        cd.disabled_cpu_features = masked ? LUTHIER_CPU_FP16 : 0;
        if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
            CHECK(0, "context");
            continue;
        }
        hw = wino16_hw(ctx);
        memset(&t, 0, sizeof t);
        t.l.op = LUTHIER_OP_CONV2D;
        t.l.fam = LUTHIER_KERNELS_F16;
        t.l.cd.batch = 1, t.l.cd.in_channels = t.l.cd.out_channels = 16, t.l.cd.in_h = t.l.cd.in_w = 14;
        t.l.cd.kernel_h = t.l.cd.kernel_w = 3, t.l.cd.pad_top = t.l.cd.pad_left = t.l.cd.pad_bottom = t.l.cd.pad_right = 1;
        t.l.cd.stride_h = t.l.cd.stride_w = t.l.cd.dilation_h = t.l.cd.dilation_w = t.l.cd.groups = 1;
        t.l.cd.layout = LUTHIER_LAYOUT_NHWC;
        c = luthier__task_space(ctx, &t, 50, 0, &n);
        for (i = 0; c && i < n; i++) wino += c[i].algo == LUTHIER_CONV_WINOGRAD_4X3;
        CHECK(n > 0, "no candidates (masked %d)", masked);
        CHECK((wino > 0) == (hw != 0), "%zu winograd_4x3 candidates of %zu, fp16 arithmetic %d (masked %d)", wino, n, hw,
              masked);
        CHECK(!masked || !hw, "FP16 masked off, yet the context runs fp16 arithmetic");
        luthier__free(c);
        luthier_context_destroy(ctx);
    }
}

/* AUTO on an F16 kernel takes WINOGRAD_4X3 where the fp32 layer's AUTO does and the CPU has
   fp16 arithmetic, and the F16 algorithms otherwise. */
static void test_wino16_auto(void) {
    static const int64_t shapes[4][3] = {{64, 64, 28}, {32, 48, 14}, {16, 16, 56}, {3, 16, 8}};
    luthier_context *ctx = ctx_threads(1);
    const int hw = wino16_hw(ctx);
    int i, picked = 0;
    for (i = 0; i < 4; i++) {
        luthier_conv2d_desc d;
        luthier_conv2d_layer *c32 = NULL, *c16 = NULL;
        luthier_conv2d_info i32, i16;
        const size_t nw = (size_t)(shapes[i][0] * shapes[i][1] * 9);
        float *w = rand_buf(nw, -0.5f, 0.5f);
        memset(&d, 0, sizeof d);
        d.batch = 1, d.in_channels = shapes[i][0], d.out_channels = shapes[i][1], d.in_h = d.in_w = shapes[i][2];
        d.kernel_h = d.kernel_w = 3, d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1, d.layout = LUTHIER_LAYOUT_NHWC;
        CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &c32) == LUTHIER_STATUS_OK, "fp32: %s", luthier_context_error(ctx));
        d.kernel = luthier__conv_f16_kernel(ctx, &d, LUTHIER_PRECISION_FP16);
        if (!d.kernel) d.kernel = luthier__h16_conv_kernel(ctx, 2, &d); /* (the scalar emulation) */
        CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &c16) == LUTHIER_STATUS_OK, "F16: %s", luthier_context_error(ctx));
        if (c32 && c16) {
            luthier_conv2d_get_info(c32, &i32);
            luthier_conv2d_get_info(c16, &i16);
            CHECK((i16.algorithm == LUTHIER_CONV_WINOGRAD_4X3) == (hw && i32.algorithm == LUTHIER_CONV_WINOGRAD_4X3),
                  "%lld -> %lld at %lld: fp32 %s, F16 %s (fp16 arithmetic %d)", (long long)shapes[i][0],
                  (long long)shapes[i][1], (long long)shapes[i][2], luthier_conv_algorithm_name(i32.algorithm),
                  luthier_conv_algorithm_name(i16.algorithm), hw);
            picked += i16.algorithm == LUTHIER_CONV_WINOGRAD_4X3;
        }
        luthier_conv2d_destroy(c32), luthier_conv2d_destroy(c16);
        free(w);
    }
    printf("    F16 AUTO took winograd_4x3 on %d of 4 layers (fp16 arithmetic %d)\n", picked, hw);
    luthier_context_destroy(ctx);
}

/* The zoo's small CNNs in fp16 plans (fp16 activations where the CPU has fp16 arithmetic)
   against their fp32 plans: cosine >= 0.999 at 1 and 2 threads; with fp16 arithmetic every
   convolution the fp32 plan runs as winograd_4x3 runs it on the F16 family, without it none
   does. */
static void test_wino16_zoo(void) {
    static const char *const names[2] = {"resnet18_small", "vgg16_small"};
    int i, t;
    for (i = 0; i < 2; i++)
        for (t = 1; t <= 2; t++) {
            luthier_context *ctx = ctx_threads(t);
            const int hw = wino16_hw(ctx);
            luthier_graph *g = NULL;
            luthier_zoo_info info;
            luthier_plan_desc pd, p32;
            luthier_plan *p = NULL;
            void *bufs[LUTHIER_ZOO_MAX_IO] = {NULL};
            float *y16 = NULL, *y32 = NULL;
            char err[256], what[128];
            int k, s16, c16, n16, w16 = 0, w32 = 0;
            luthier_plan_info i16, i32;
            if (T.quick && i == 1 && t == 2) {
                luthier_context_destroy(ctx);
                continue;
            }
            CHECK(luthier_zoo_build(names[i], NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK &&
                      luthier_zoo_get_info(names[i], NULL, &info) == LUTHIER_STATUS_OK,
                  "%s: %s", names[i], err);
            for (k = 0; g && k < info.num_inputs; k++) {
                bufs[k] = test_alloc(info.input_bytes[k]);
                luthier_zoo_input(names[i], NULL, k, bufs[k], info.input_bytes[k]);
            }
            memset(&pd, 0, sizeof pd);
            memset(&p32, 0, sizeof p32);
            pd.precision = LUTHIER_PRECISION_FP16;
            snprintf(what, sizeof what, "%s fp16, %d threads", names[i], t);
            if (g) y16 = fp16_act_run(ctx, g, &pd, (const void *const *)bufs, info.output_bytes[0] / 4, &i16, &s16, &c16, &n16, what);
            if (g) y32 = fp16_act_run(ctx, g, &p32, (const void *const *)bufs, info.output_bytes[0] / 4, &i32, &s16, &c16, &n16, "fp32");
            for (k = 0; g && k < 2; k++) { /* the algorithms of each plan's convolutions */
                luthier_plan_info pi;
                int st;
                memset(&pi, 0, sizeof pi);
                if (luthier_plan_create(ctx, g, k ? &p32 : &pd, &p) != LUTHIER_STATUS_OK) continue;
                luthier_plan_get_info(p, &pi);
                for (st = 0; st < pi.num_steps; st++) {
                    luthier_step_info si;
                    luthier_plan_step_info(p, st, &si);
                    if (si.op != LUTHIER_OP_CONV2D || si.algorithm != LUTHIER_CONV_WINOGRAD_4X3) continue;
                    if (k) w32++;
                    else w16 += luthier__kernel_named(si.kernel) && luthier__kernel_named(si.kernel)->family == LUTHIER_KERNELS_F16;
                }
                luthier_plan_destroy(p);
                p = NULL;
            }
            if (y16 && y32) {
                const double cs = qp_cosine(y16, y32, info.output_bytes[0] / 4);
                CHECK(cs >= 0.999, "%s: cosine %.7f", what, cs);
                CHECK(hw ? w32 > 0 && w16 == w32 : w16 == 0, "%s: %d winograd_4x3 steps on F16 (fp32 plan: %d; fp16 arithmetic %d)",
                      what, w16, w32, hw);
                printf("    %s: cosine %.7f, %d winograd_4x3 steps in fp16 (fp32 plan: %d), fp16 arithmetic %d\n", what, cs, w16,
                       w32, hw);
            }
            free(y16), free(y32);
            for (k = 0; k < LUTHIER_ZOO_MAX_IO; k++) free(bufs[k]);
            luthier_graph_destroy(g);
            luthier_context_destroy(ctx);
        }
}

/* The model's layers (bench/winograd_fp16_error.py: post-ReLU max(N(0,1), 0) inputs, He-normal
   weights, all fp16-rounded; smaller images to fit an emulator): the relative RMS error of
   winograd_4x3 in fp16 and of the direct fp16 convolution (im2col on the same F16 kernel),
   both against the double convolution. The model's column for this form ("engine": f32
   transforms, V and U rounded to fp16, fp16 sums over 8-channel blocks added in fp16 over
   groups of 4 blocks, f32 across: the engine's "G=4 pairwise" row) predicts 5.4e-3 to 5.9e-3
   (4.7e-3 to 5.2e-3 for blocks of 8 added in f32); the check allows 8e-3, below the 1.1e-2 to
   3.1e-2 it predicts for fp16 accumulation over all channels. The F16 kernels' direct convolution adds its fp16 sums into
   fp32 every k block (<= 256 steps), so it is more accurate than the model's all-fp16 direct
   column: Winograd was allowed 4x it (3.5x measured at C 64) with blocks of 8 added in fp32;
   the groups of 4 raise the model's engine-form error 1.14-1.17x (5.47e-3 against 4.70e-3 at
   C 64), so 4.7x now (3.95x measured). */
static void test_wino16_error_model(void) {
    static const int64_t layers[4][3] = {{64, 64, 16}, {128, 128, 8}, {256, 256, 6}, {512, 64, 6}};
    luthier_context *ctx = ctx_threads(2);
    int i;
    if (!wino16_hw(ctx)) {
        printf("    skip: no fp16 arithmetic\n");
        luthier_context_destroy(ctx);
        return;
    }
    for (i = 0; i < (T.quick ? 2 : 4); i++) {
        wino16_case k;
        wino16_err ew, ed;
        luthier_status sw, sd;
        const uint64_t seed = test_rng_state;
        float *yw, *yd;
        memset(&k, 0, sizeof k);
        k.batch = 1, k.c = layers[i][0], k.k = layers[i][1], k.h = k.w = layers[i][2], k.pad = 1, k.groups = 1, k.he = 1;
        k.algo = LUTHIER_CONV_WINOGRAD_4X3;
        yw = wino16_case_run(ctx, &k, &ew, &sw);
        test_rng_state = seed;
        k.algo = LUTHIER_CONV_IM2COL;
        yd = wino16_case_run(ctx, &k, &ed, &sd);
        CHECK(yw && yd, "C %lld K %lld: %s", (long long)k.c, (long long)k.k, luthier_context_error(ctx));
        if (yw && yd) {
            const double rw = sqrt(ew.sq_err / ew.sq_ref), rd = sqrt(ed.sq_err / ed.sq_ref);
            CHECK(rw <= 8e-3 && rw <= 4.7 * rd, "C %lld K %lld %lldx%lld: winograd %.3g, direct %.3g", (long long)k.c,
                  (long long)k.k, (long long)k.h, (long long)k.w, rw, rd);
            printf("    C %lld K %lld %lldx%lld: relative RMS error winograd_4x3 fp16 %.3g, direct fp16 %.3g (%.2fx)\n",
                   (long long)k.c, (long long)k.k, (long long)k.h, (long long)k.w, rw, rd, rw / rd);
        }
        free(yw), free(yd);
    }
    luthier_context_destroy(ctx);
}

static void run_wino16_tests(void) {
    RUN(test_wino16_refusals);
    RUN(test_wino16_auto);
    RUN(test_wino16_tune_space);
    RUN(test_wino16_kernel);
    RUN(test_wino16_conv);
    RUN(test_wino16_partial_groups);
    RUN(test_wino16_error_model);
    RUN(test_wino16_zoo);
}
