/* Convolution against a naive direct reference (double accumulation): every algorithm forced in
   turn over random shapes (odd sizes, strides 1-3, asymmetric padding, dilation, groups 1/2/
   general/depthwise, batch > 1, every activation, accumulate, NCHW and NHWC), every available
   kernel (every hybrid one for implicit GEMM), 1 thread, the default threads and a fake
   2-cluster topology with several ratios (results must be bit-identical across them), bad
   arguments, and reduced ResNet-18 layer shapes. Winograd F(2,3), F(4,3), F(6,3) likewise (3x3,
   stride 1, odd sizes for partial border tiles) with their own error bounds, plus refusals.
   Included by test_main.c. */

static int conv_is_winograd(luthier_conv_algorithm a) {
    return a == LUTHIER_CONV_WINOGRAD_2X3 || a == LUTHIER_CONV_WINOGRAD_4X3 || a == LUTHIER_CONV_WINOGRAD_6X3;
}

/* Error bound of an algorithm: |out - ref| <= 1e-6 + factor * FLT_EPSILON * scale.
   Direct algorithms only reorder the sum: scale = mag = sum |terms| (|bias|, |residual|
   included). Winograd's transforms mix the whole tile, so its rounding scales with span
   (see conv_reference); measured maxima of |out - ref| / span with inputs and weights in
   [-1, 1] (printed by test_conv_winograd_*, table in docs/DESIGN.md; 15 seeds, vectorized
   transforms) are 1.1, 19 and 50 FLT_EPSILON for F(2,3), F(4,3), F(6,3): the bounds (8, 96,
   256) keep a 5x margin or more. */
static double conv_tol_factor(luthier_conv_algorithm a) {
    switch (a) {
    case LUTHIER_CONV_WINOGRAD_2X3: return 8.0;
    case LUTHIER_CONV_WINOGRAD_4X3: return 96.0;
    case LUTHIER_CONV_WINOGRAD_6X3: return 256.0;
    default: return 8.0;
    }
}

/* Largest |out - ref| / sum |terms| seen by conv_check since the last reset (context 0). */
static double conv_max_rel_err;

/* Logical offsets of element (n, c, y, x) in either layout. */
static size_t conv_off(luthier_layout l, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c,
                       int64_t y, int64_t x) {
    if (l == LUTHIER_LAYOUT_NCHW) return (size_t)(((n * C + c) * H + y) * W + x);
    return (size_t)(((n * H + y) * W + x) * C + c);
}

/* ref/mag/span in desc->layout; d is normalized (strides etc. set). mag = sum |terms| of the
   output; span = |residual| + |bias| + max|input| * sum |weights of its channel|, the largest
   value the output could take for any input of that range (what Winograd's error scales with:
   its transforms mix every pixel of a tile, padding or not). */
static void conv_reference(const luthier_conv2d_desc *d, int64_t OH, int64_t OW, const float *in,
                           const float *w, const float *bias, const float *out_in, double *ref,
                           double *mag, double *span) {
    const int64_t G = d->groups, cig = d->in_channels / G, cog = d->out_channels / G;
    const size_t in_n = (size_t)(d->batch * d->in_channels * d->in_h * d->in_w);
    int64_t n, co, oy, ox, ci, kh, kw;
    double xmax = 0;
    size_t e;
    for (e = 0; e < in_n; e++) xmax = fabs((double)in[e]) > xmax ? fabs((double)in[e]) : xmax;
    for (n = 0; n < d->batch; n++)
        for (co = 0; co < d->out_channels; co++)
            for (oy = 0; oy < OH; oy++)
                for (ox = 0; ox < OW; ox++) {
                    const size_t o = conv_off(d->layout, d->out_channels, OH, OW, n, co, oy, ox);
                    const int64_t g = co / cog;
                    double s = 0, m = 0, ws = 0;
                    for (e = 0; e < (size_t)(cig * d->kernel_h * d->kernel_w); e++)
                        ws += fabs((double)w[(size_t)co * (size_t)(cig * d->kernel_h * d->kernel_w) + e]);
                    if (d->accumulate) { s = out_in[o]; m = fabs(s); }
                    if (bias) { s += bias[co]; m += fabs((double)bias[co]); }
                    span[o] = m + xmax * ws;
                    for (ci = 0; ci < cig; ci++)
                        for (kh = 0; kh < d->kernel_h; kh++)
                            for (kw = 0; kw < d->kernel_w; kw++) {
                                const int64_t y = oy * d->stride_h - d->pad_top + kh * d->dilation_h;
                                const int64_t x = ox * d->stride_w - d->pad_left + kw * d->dilation_w;
                                double t;
                                if (y < 0 || y >= d->in_h || x < 0 || x >= d->in_w) continue;
                                t = (double)in[conv_off(d->layout, d->in_channels, d->in_h, d->in_w, n, g * cig + ci, y, x)] *
                                    w[((co * cig + ci) * d->kernel_h + kh) * d->kernel_w + kw];
                                s += t;
                                m += fabs(t);
                            }
                    ref[o] = test_act(d->activation, d->clamp_min, d->clamp_max, s);
                    mag[o] = m * test_act_slope(d->activation, d->clamp_min, d->clamp_max);
                    span[o] *= test_act_slope(d->activation, d->clamp_min, d->clamp_max);
                }
}

/* Runs desc on every context; checks against the reference and that all contexts agree
   bit for bit. Returns the number of failures. */
static int conv_check(luthier_context *const *ctxs, int nctx, const luthier_conv2d_desc *desc,
                      int with_bias, const float *ratios2, const char *what) {
    luthier_conv2d_desc d = *desc;
    int64_t OH = 0, OW = 0;
    size_t in_n, w_n, out_n, e;
    float *in, *w, *bias = NULL, *out_in, *out, *first;
    double *ref, *mag, *span;
    int c, bad = 0;
    if (luthier_conv2d_output_size(desc, &OH, &OW) != LUTHIER_STATUS_OK) {
        CHECK(0, "%s: output_size refused the shape", what);
        return 1;
    }
    if (!d.stride_h) d.stride_h = 1;
    if (!d.stride_w) d.stride_w = 1;
    if (!d.dilation_h) d.dilation_h = 1;
    if (!d.dilation_w) d.dilation_w = 1;
    if (!d.groups) d.groups = 1;
    in_n = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
    w_n = (size_t)(d.out_channels * (d.in_channels / d.groups) * d.kernel_h * d.kernel_w);
    out_n = (size_t)(d.batch * d.out_channels * OH * OW);
    in = (float *)test_alloc(in_n * sizeof(float));
    w = (float *)test_alloc(w_n * sizeof(float));
    out_in = (float *)test_alloc(out_n * sizeof(float));
    out = (float *)test_alloc(out_n * sizeof(float));
    first = (float *)test_alloc(out_n * sizeof(float));
    ref = (double *)test_alloc(out_n * sizeof(double));
    mag = (double *)test_alloc(out_n * sizeof(double));
    span = (double *)test_alloc(out_n * sizeof(double));
    test_fill(in, in_n);
    test_fill(w, w_n);
    test_fill(out_in, out_n);
    if (with_bias) {
        bias = (float *)test_alloc((size_t)d.out_channels * sizeof(float));
        test_fill(bias, (size_t)d.out_channels);
    }
    conv_reference(&d, OH, OW, in, w, bias, out_in, ref, mag, span);
    for (c = 0; c < nctx && !bad; c++) {
        luthier_conv2d_layer *cv = NULL;
        luthier_conv2d_desc dc = *desc;
        luthier_status s;
        static luthier_topology topo;
        if (ratios2 && luthier_context_topology(ctxs[c], &topo) == LUTHIER_STATUS_OK && topo.num_clusters == 2) {
            dc.ratios = ratios2;
            dc.num_ratios = 2;
        }
        s = luthier_conv2d_create(ctxs[c], &dc, w, bias, &cv);
        if (s != LUTHIER_STATUS_OK) {
            CHECK(0, "%s: create: %s: %s", what, luthier_status_string(s), luthier_context_error(ctxs[c]));
            bad++;
            break;
        }
        for (e = 0; e < out_n; e++) out[e] = d.accumulate ? out_in[e] : test_sentinel();
        s = luthier_conv2d_run(ctxs[c], cv, in, out);
        luthier_conv2d_destroy(cv);
        if (s != LUTHIER_STATUS_OK) {
            CHECK(0, "%s: run: %s: %s", what, luthier_status_string(s), luthier_context_error(ctxs[c]));
            bad++;
            break;
        }
        if (c == 0) {
            const double factor = conv_tol_factor(d.algorithm);
            const double *scale = conv_is_winograd(d.algorithm) ? span : mag;
            for (e = 0; e < out_n; e++) {
                const double tol = 1e-6 + factor * FLT_EPSILON * scale[e];
                if (scale[e] > 0 && fabs((double)out[e] - ref[e]) / scale[e] > conv_max_rel_err)
                    conv_max_rel_err = fabs((double)out[e] - ref[e]) / scale[e];
                if (!(fabs((double)out[e] - ref[e]) <= tol)) {
                    if (bad < 3) CHECK(0, "%s: element %zu is %g, want %g", what, e, (double)out[e], ref[e]);
                    bad++;
                }
            }
            memcpy(first, out, out_n * sizeof(float));
        } else if (memcmp(first, out, out_n * sizeof(float)) != 0) {
            CHECK(0, "%s: context %d differs from context 0", what, c);
            bad++;
        }
    }
    free(in); free(w); free(bias); free(out_in); free(out); free(first); free(ref); free(mag); free(span);
    return bad;
}

/* Contexts: 1 thread; the default; fake big:0,little:1 (ratios are set per desc). AUTO under
   the rules, so that it is one algorithm on every context (the model's choice depends on the
   threads; test_costmodel checks it). */
static int conv_contexts(luthier_context **ctxs) {
    luthier_context_desc cd;
    luthier_topology topo;
    char err[128];
    int n = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    cd.auto_policy = LUTHIER_AUTO_RULES;
    if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) n++;
    memset(&cd, 0, sizeof cd);
    cd.auto_policy = LUTHIER_AUTO_RULES;
    if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) n++;
    if (luthier_topology_parse("big:0,little:1", &topo, err, sizeof err) == LUTHIER_STATUS_OK) {
        memset(&cd, 0, sizeof cd);
        cd.auto_policy = LUTHIER_AUTO_RULES;
        cd.topology = &topo;
        if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) n++;
    }
    return n;
}

static void conv_random_desc(luthier_conv2d_desc *d, luthier_conv_algorithm algo) {
    int gk = test_rand_int(0, 3);
    int64_t cig, cog, eff;
    memset(d, 0, sizeof *d);
    d->algorithm = algo;
    d->batch = test_rand_int(1, 2);
    d->groups = gk == 0 ? 1 : gk == 1 ? 2 : test_rand_int(1, 4);
    cig = test_rand_int(1, 7);
    cog = test_rand_int(1, 11);
    if (algo == LUTHIER_CONV_DEPTHWISE) {
        d->groups = test_rand_int(1, 19);
        cig = cog = 1;
    }
    d->in_channels = cig * d->groups;
    d->out_channels = cog * d->groups;
    if (algo == LUTHIER_CONV_1X1) {
        d->kernel_h = d->kernel_w = 1;
        d->stride_h = d->stride_w = test_rand_int(1, 2);
        if (test_rand_int(0, 3) == 0) d->stride_w = 3;
    } else {
        d->kernel_h = test_rand_int(1, 3);
        d->kernel_w = test_rand_int(1, 4);
        d->stride_h = test_rand_int(1, 3);
        d->stride_w = test_rand_int(1, 3);
        d->dilation_h = test_rand_int(1, 2);
        d->dilation_w = test_rand_int(0, 2);
        d->pad_top = test_rand_int(0, 2);
        d->pad_left = test_rand_int(0, 2);
        d->pad_bottom = test_rand_int(0, 2);
        d->pad_right = test_rand_int(0, 1);
    }
    eff = (d->dilation_h ? d->dilation_h : 1) * (d->kernel_h - 1) + 1;
    d->in_h = test_rand_int(1, 9);
    if (d->in_h + d->pad_top + d->pad_bottom < eff) d->in_h = eff;
    eff = (d->dilation_w ? d->dilation_w : 1) * (d->kernel_w - 1) + 1;
    d->in_w = test_rand_int(1, 11);
    if (d->in_w + d->pad_left + d->pad_right < eff) d->in_w = eff;
    d->layout = (luthier_layout)test_rand_int(0, 1);
    d->activation = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_COUNT - 1);
    d->clamp_min = -0.5f;
    d->clamp_max = 0.75f;
    d->accumulate = test_rand_int(0, 2) == 0;
    d->schedule = test_rand_int(0, 4) == 0 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
}

/* Few pixels, many output channels (at least 8 panels of nr plus an edge panel): the shape that
   the GEMM algorithms split over output channels on 2 threads (luthier__conv_split_for). */
static void conv_wide_desc(luthier_conv2d_desc *d, luthier_conv_algorithm algo, int nr) {
    memset(d, 0, sizeof *d);
    d->algorithm = algo;
    d->batch = 1;
    d->groups = 1;
    d->in_channels = test_rand_int(1, 9);
    d->out_channels = 8 * nr + test_rand_int(1, nr);
    d->in_h = test_rand_int(1, 4);
    d->in_w = test_rand_int(2, 5);
    d->kernel_h = d->kernel_w = algo == LUTHIER_CONV_1X1 ? 1 : 3;
    d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = algo == LUTHIER_CONV_1X1 ? 0 : 1;
    d->layout = (luthier_layout)test_rand_int(0, 1);
    d->activation = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_COUNT - 1);
    d->clamp_min = -0.5f;
    d->clamp_max = 0.75f;
    d->accumulate = test_rand_int(0, 1);
}

static void conv_sweep(luthier_conv_algorithm algo) {
    static const float ratio_sets[4][2] = {{100, 0}, {0, 100}, {30, 70}, {50, 50}};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    int idx, trial, c;
    CHECK(nctx == 3, "3 contexts");
    for (idx = 0; idx < LUTHIER__NUM_UKERNELS; idx++) {
        const luthier__kernel_entry *uk = &luthier__ukernels[idx];
        const int trials = T.quick ? 6 : 24;
        if (!kernel_available(idx)) continue;
        if (algo == LUTHIER_CONV_IMPLICIT_GEMM && uk->kind != LUTHIER_KERNEL_HYBRID) continue;
        if (algo == LUTHIER_CONV_DEPTHWISE && idx > 0) break; /* no microkernel */
        for (trial = 0; trial < trials; trial++) {
            luthier_conv2d_desc d;
            char what[256];
            const float *r = ratio_sets[trial % 4];
            int bad = 0;
            /* the last two trials: few pixels, many output channels */
            if (algo != LUTHIER_CONV_DEPTHWISE && trial >= trials - 2) conv_wide_desc(&d, algo, uk->nr);
            else conv_random_desc(&d, algo);
            d.kernel = algo == LUTHIER_CONV_DEPTHWISE ? NULL : uk->name;
            snprintf(what, sizeof what,
                     "%s %s: n%lld %lldx%lldx%lld -> %lld, k%lldx%lld s%lld,%lld d%lld,%lld "
                     "p%lld,%lld,%lld,%lld g%lld %s act%d acc%d",
                     luthier_conv_algorithm_name(algo), algo == LUTHIER_CONV_DEPTHWISE ? "-" : uk->name,
                     (long long)d.batch, (long long)d.in_h, (long long)d.in_w,
                     (long long)d.in_channels, (long long)d.out_channels, (long long)d.kernel_h,
                     (long long)d.kernel_w, (long long)d.stride_h, (long long)d.stride_w,
                     (long long)d.dilation_h, (long long)d.dilation_w, (long long)d.pad_top,
                     (long long)d.pad_left, (long long)d.pad_bottom, (long long)d.pad_right,
                     (long long)d.groups, d.layout ? "nchw" : "nhwc", (int)d.activation, d.accumulate);
            /* the 2-cluster context also gets a ratio set; all must agree bit for bit */
            bad += conv_check(ctxs, nctx, &d, trial % 3 != 0, r, what);
            if (bad) break;
        }
    }
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* The algorithm table (>>conv-algorithms): rows in the enum's order with their names; which
   layers each algorithm takes in fp32 and int8, against rules written out here: 1x1 needs a
   plain 1x1 layer, depthwise groups == channels, Winograd 3x3 stride 1 (not depthwise, padding
   <= 2); int8 has im2col, 1x1 and depthwise only. luthier_conv2d_algorithm_valid agrees (fp32). */
static void test_conv_algorithm_table(void) {
    static const int64_t L[][7] = {/* cin cout k stride pad groups h */
                                   {8, 16, 1, 1, 0, 1, 9}, {8, 16, 1, 1, 1, 1, 9}, {8, 8, 3, 1, 1, 8, 9},
                                   {8, 16, 3, 1, 1, 1, 9}, {8, 16, 3, 2, 1, 1, 9}, {8, 16, 3, 1, 3, 1, 9},
                                   {8, 16, 5, 1, 2, 1, 9}, {8, 16, 3, 1, 1, 2, 9}};
    luthier_context *ctx = test_context(0, 0, 0);
    size_t i;
    int a;
    for (a = 0; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++)
        CHECK(luthier__conv_algos[a].algo == (luthier_conv_algorithm)a && luthier__conv_algos[a].name &&
                  !strcmp(luthier_conv_algorithm_name((luthier_conv_algorithm)a), luthier__conv_algos[a].name),
              "row %d", a);
    CHECK(!strcmp(luthier_conv_algorithm_name(LUTHIER_CONV_ALGORITHM_COUNT), "unknown"), "name past the table");
    for (i = 0; i < sizeof L / sizeof L[0]; i++) {
        luthier_conv2d_desc d;
        int64_t oh, ow;
        memset(&d, 0, sizeof d);
        d.batch = 1;
        d.in_channels = L[i][0];
        d.out_channels = L[i][1];
        d.kernel_h = d.kernel_w = L[i][2];
        d.stride_h = d.stride_w = L[i][3];
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = L[i][4];
        d.groups = L[i][5];
        d.in_h = d.in_w = L[i][6];
        d.dilation_h = d.dilation_w = 1;
        CHECK(luthier__conv_normalize(ctx, &d, &d, &oh, &ow) == LUTHIER_STATUS_OK, "layer %zu", i);
        for (a = 1; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++) {
            const int plain1 = d.kernel_h == 1 && !d.pad_top, dw = d.groups == d.in_channels && d.groups == d.out_channels;
            const int wino = d.kernel_h == 3 && d.stride_h == 1 && !dw && d.pad_top <= 2;
            const int want32 = a == LUTHIER_CONV_1X1 ? plain1 : a == LUTHIER_CONV_DEPTHWISE ? dw
                               : a >= LUTHIER_CONV_WINOGRAD_2X3 ? wino : 1;
            const int want8 = a == LUTHIER_CONV_IM2COL || (a == LUTHIER_CONV_1X1 && plain1) || (a == LUTHIER_CONV_DEPTHWISE && dw);
            const luthier_conv_algorithm al = (luthier_conv_algorithm)a;
            CHECK((luthier__conv_algo_fits(NULL, "", &d, al, LUTHIER_KERNELS_F32) == LUTHIER_STATUS_OK) == want32 &&
                      (luthier__conv_algo_fits(NULL, "", &d, al, LUTHIER_KERNELS_INT8) == LUTHIER_STATUS_OK) == want8 &&
                      (luthier_conv2d_algorithm_valid(ctx, &d, al) == LUTHIER_STATUS_OK) == want32,
                  "layer %zu, %s: fp32 %d int8 %d expected", i, luthier_conv_algorithm_name(al), want32, want8);
        }
    }
    {
        luthier_conv2d_desc d;
        int64_t oh, ow;
        memset(&d, 0, sizeof d);
        d.batch = 1, d.in_channels = 4, d.out_channels = 4, d.kernel_h = d.kernel_w = 3, d.in_h = d.in_w = 8;
        luthier__conv_normalize(ctx, &d, &d, &oh, &ow);
        CHECK(luthier__conv_algo_fits(ctx, "qconv2d", &d, LUTHIER_CONV_WINOGRAD_4X3, LUTHIER_KERNELS_INT8) == LUTHIER_STATUS_UNSUPPORTED &&
                  strstr(luthier_context_error(ctx), "im2col, 1x1, depthwise are"),
              "the int8 refusal names what int8 has: %s", luthier_context_error(ctx));
    }
    luthier_context_destroy(ctx);
}

static void test_conv_im2col(void) { conv_sweep(LUTHIER_CONV_IM2COL); }
static void test_conv_1x1(void) { conv_sweep(LUTHIER_CONV_1X1); }
static void test_conv_implicit_gemm(void) { conv_sweep(LUTHIER_CONV_IMPLICIT_GEMM); }
static void test_conv_depthwise(void) { conv_sweep(LUTHIER_CONV_DEPTHWISE); }

/* The implicit GEMM's indirection buffer, segment by segment, against the input gathered tap by
   tap: random shapes with borders on every side, strides to 4, dilation, kernels to 11x11
   (wide segments, and segments of Cin with more taps than the running-pointer path takes),
   groups, batch 2, and blocks [r0, r1) that start and end inside output rows. */
static void test_conv_indirection(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    int trial, bad = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    for (trial = 0; trial < (T.quick ? 150 : 600) && !bad; trial++) {
        luthier_conv2d_desc d;
        luthier_conv2d_layer *cv = NULL;
        float *w = NULL, *in = NULL, *stage = NULL;
        const float **ind = NULL;
        int64_t ek;
        size_t mr, nin, nw, cin, cig, r0, r1, r, s, e, g;
        memset(&d, 0, sizeof d);
        d.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
        d.kernel = "4x4__scalar_hybrid";
        d.batch = test_rand_int(1, 2);
        d.groups = test_rand_int(0, 3) == 0 ? 2 : 1;
        cig = (size_t)(test_rand_int(0, 2) == 0 ? test_rand_int(16, 20) : test_rand_int(1, 5));
        d.in_channels = (int64_t)cig * d.groups;
        d.out_channels = d.groups;
        d.kernel_h = test_rand_int(1, 11);
        d.kernel_w = test_rand_int(0, 3) == 0 ? d.kernel_h : test_rand_int(1, 11);
        d.stride_h = test_rand_int(1, 4);
        d.stride_w = test_rand_int(1, 4);
        d.dilation_h = test_rand_int(1, 2);
        d.dilation_w = test_rand_int(0, 3) == 0 ? 2 : 1;
        d.pad_top = test_rand_int(0, 5);
        d.pad_left = test_rand_int(0, 5);
        d.pad_bottom = test_rand_int(0, 5);
        d.pad_right = test_rand_int(0, 5);
        ek = d.dilation_h * (d.kernel_h - 1) + 1;
        d.in_h = test_rand_int(1, 24);
        if (d.in_h + d.pad_top + d.pad_bottom < ek) d.in_h = ek;
        ek = d.dilation_w * (d.kernel_w - 1) + 1;
        d.in_w = test_rand_int(1, 30);
        if (d.in_w + d.pad_left + d.pad_right < ek) d.in_w = ek;
        nw = (size_t)(d.out_channels * (int64_t)cig * d.kernel_h * d.kernel_w);
        nin = (size_t)(d.batch * d.in_h * d.in_w * d.in_channels);
        w = (float *)calloc(nw, sizeof(float));
        in = (float *)malloc(nin * sizeof(float));
        for (e = 0; w && in && e < nin; e++) in[e] = (float)(e + 1); /* every value distinct, none 0 */
        if (!w || !in || luthier_conv2d_create(ctx, &d, w, NULL, &cv) != LUTHIER_STATUS_OK) {
            CHECK(0, "create: %s", luthier_context_error(ctx));
            free(w), free(in);
            break;
        }
        mr = (size_t)luthier__ukernels[cv->kernel].mr;
        cin = (size_t)d.in_channels;
        /* a block from a tile boundary to anywhere after it */
        r0 = (size_t)test_rand_int(0, (int)((cv->m - 1) / mr)) * mr;
        r1 = r0 + (size_t)test_rand_int(1, (int)(cv->m - r0));
        ind = (const float **)malloc(luthier__div_up(r1 - r0, mr) * mr * cv->seg_n * sizeof *ind);
        stage = (float *)malloc((r1 - r0) * cv->seg_n * cv->seg_k * sizeof(float) + 1);
        g = (size_t)test_rand_int(0, (int)d.groups - 1);
        if (ind && stage) luthier__conv_indirection(cv, in, g, r0, r1, mr, ind, stage);
        for (r = r0; ind && stage && r < r1 && !bad; r++) {
            const size_t ohw = (size_t)(cv->oh * cv->ow), n = r / ohw;
            const int64_t oy = (int64_t)(r % ohw) / cv->ow, ox = (int64_t)(r % ohw) % cv->ow;
            for (s = 0; s < cv->seg_n && !bad; s++) {
                const float *seg = ind[((r - r0) / mr * cv->seg_n + s) * mr + (r - r0) % mr];
                for (e = 0; e < cv->seg_k && !bad; e++) {
                    /* wide: segment = kernel row s, element = (kw, channel); else tap s, channel e */
                    const int wide = cv->seg_n != cv->ks;
                    const int64_t kh = wide ? (int64_t)s : (int64_t)s / d.kernel_w;
                    const int64_t kw = wide ? (int64_t)(e / cig) : (int64_t)s % d.kernel_w;
                    const size_t c = g * cig + (wide ? e % cig : e);
                    const int64_t iy = oy * d.stride_h - d.pad_top + kh * d.dilation_h;
                    const int64_t ix = ox * d.stride_w - d.pad_left + kw * d.dilation_w;
                    const float want = iy < 0 || iy >= d.in_h || ix < 0 || ix >= d.in_w
                                           ? 0.0f
                                           : in[((n * (size_t)d.in_h + (size_t)iy) * (size_t)d.in_w + (size_t)ix) * cin + c];
                    if (seg[e] != want) {
                        CHECK(0, "k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,%lld,%lld %lldx%lldx%zu g%lld "
                                 "rows [%zu, %zu): row %zu segment %zu element %zu = %g, want %g",
                              (long long)d.kernel_h, (long long)d.kernel_w, (long long)d.stride_h,
                              (long long)d.stride_w, (long long)d.dilation_h, (long long)d.dilation_w,
                              (long long)d.pad_top, (long long)d.pad_left, (long long)d.pad_bottom,
                              (long long)d.pad_right, (long long)d.in_h, (long long)d.in_w, cin,
                              (long long)d.groups, r0, r1, r, s, e, (double)seg[e], (double)want);
                        bad = 1;
                    }
                }
            }
        }
        CHECK(ind && stage, "allocation");
        free(ind), free(stage), free(w), free(in);
        luthier_conv2d_destroy(cv);
    }
    luthier_context_destroy(ctx);
}

/* Same shape through every algorithm valid for it: the results agree (within rounding) and
   AUTO picks as documented. */
static void test_conv_auto_choice(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_conv2d_desc d;
    luthier_conv2d_layer *cv = NULL;
    luthier_conv2d_info info;
    float w[64 * 9];
    memset(&info, 0, sizeof info);
    int i;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    cd.auto_policy = LUTHIER_AUTO_RULES; /* the rules are what this checks */
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    for (i = 0; i < 64 * 9; i++) w[i] = 0.01f * (float)i;
    memset(&d, 0, sizeof d);
    d.batch = 1; d.in_channels = 4; d.out_channels = 4; d.in_h = d.in_w = 5;
    d.kernel_h = d.kernel_w = 3; d.groups = 4;
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "depthwise");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm == LUTHIER_CONV_DEPTHWISE,
          "AUTO -> depthwise, got %s", luthier_conv_algorithm_name(info.algorithm));
    CHECK(info.out_h == 3 && info.out_w == 3, "out size");
    luthier_conv2d_destroy(cv);
    d.groups = 1; d.kernel_h = d.kernel_w = 1; d.stride_h = 2;
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "1x1");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm == LUTHIER_CONV_1X1,
          "AUTO -> 1x1, got %s", luthier_conv_algorithm_name(info.algorithm));
    luthier_conv2d_destroy(cv);
    d.kernel_h = d.kernel_w = 3; d.pad_top = 1;
    d.kernel = "4x4__scalar_hybrid";
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "hybrid");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm == LUTHIER_CONV_IMPLICIT_GEMM,
          "AUTO + hybrid -> implicit, got %s", luthier_conv_algorithm_name(info.algorithm));
    luthier_conv2d_destroy(cv);
    d.kernel = "4x4__scalar";
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "interleaved");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm == LUTHIER_CONV_IM2COL,
          "AUTO + interleaved -> im2col, got %s", luthier_conv_algorithm_name(info.algorithm));
    luthier_conv2d_destroy(cv);
    /* explicit implicit GEMM without a kernel: the first hybrid kernel */
    d.kernel = NULL;
    d.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "implicit, default kernel");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && strstr(info.kernel, "hybrid") != NULL,
          "kernel %s", info.kernel);
    luthier_conv2d_destroy(cv);
    luthier_context_destroy(ctx);
}

static void test_conv_bad_arguments(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_conv2d_desc d, b;
    luthier_conv2d_layer *cv = (luthier_conv2d_layer *)&d;
    float w[256], in[256], out[256];
    int64_t oh = -1, ow = -1;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    memset(w, 0, sizeof w);
    memset(in, 0, sizeof in);
    memset(&d, 0, sizeof d);
    d.batch = 1; d.in_channels = 2; d.out_channels = 2; d.in_h = 4; d.in_w = 4;
    d.kernel_h = 3; d.kernel_w = 3;
    CHECK(luthier_conv2d_output_size(&d, &oh, &ow) == LUTHIER_STATUS_OK && oh == 2 && ow == 2, "%lld %lld",
          (long long)oh, (long long)ow);
    CHECK(luthier_conv2d_output_size(NULL, &oh, &ow) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL desc");
    CHECK(luthier_conv2d_create(NULL, &d, w, NULL, &cv) == LUTHIER_STATUS_INVALID_ARGUMENT && cv == NULL, "NULL ctx");
    CHECK(luthier_conv2d_create(ctx, NULL, w, NULL, &cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL desc");
    CHECK(luthier_conv2d_create(ctx, &d, NULL, NULL, &cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL weights");
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL out");
    CHECK(luthier_conv2d_run(ctx, NULL, in, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL conv");
#define CONV_BAD(field, value, status, text)                                                    \
    do {                                                                                        \
        b = d;                                                                                  \
        b.field = value;                                                                        \
        CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == status, "%s = %s", #field, #value);  \
        CHECK(strstr(luthier_context_error(ctx), text) != NULL, "%s: message '%s'", #field,      \
              luthier_context_error(ctx));                                                      \
        CHECK(luthier_conv2d_output_size(&b, NULL, NULL) == status || (status) == LUTHIER_STATUS_UNSUPPORTED, \
              "output_size %s", #field);                                                        \
    } while (0)
    CONV_BAD(batch, 0, LUTHIER_STATUS_INVALID_ARGUMENT, "batch");
    CONV_BAD(in_channels, -3, LUTHIER_STATUS_INVALID_ARGUMENT, "in_channels");
    CONV_BAD(in_h, 0, LUTHIER_STATUS_INVALID_ARGUMENT, "in_h");
    CONV_BAD(kernel_w, 0, LUTHIER_STATUS_INVALID_ARGUMENT, "kernel_w");
    CONV_BAD(out_channels, (int64_t)1 << 40, LUTHIER_STATUS_OVERFLOW, "out_channels");
    CONV_BAD(stride_h, -1, LUTHIER_STATUS_INVALID_ARGUMENT, "stride");
    CONV_BAD(pad_left, -1, LUTHIER_STATUS_INVALID_ARGUMENT, "padding");
    CONV_BAD(groups, 3, LUTHIER_STATUS_INVALID_ARGUMENT, "divide");
    CONV_BAD(kernel_h, 5, LUTHIER_STATUS_INVALID_ARGUMENT, "larger than the padded input");
    CONV_BAD(dilation_w, 2, LUTHIER_STATUS_INVALID_ARGUMENT, "larger than the padded input");
    CONV_BAD(layout, (luthier_layout)7, LUTHIER_STATUS_INVALID_ARGUMENT, "layout");
    CONV_BAD(activation, LUTHIER_ACTIVATION_COUNT, LUTHIER_STATUS_INVALID_ARGUMENT, "activation");
    CONV_BAD(algorithm, (luthier_conv_algorithm)42, LUTHIER_STATUS_INVALID_ARGUMENT, "algorithm");
    b = d;
    b.in_h = b.in_w = b.batch = INT32_MAX; /* 2^93 input elements */
    CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_OVERFLOW, "huge input");
    CHECK(strstr(luthier_context_error(ctx), "overflows") != NULL, "message '%s'", luthier_context_error(ctx));
    CHECK(luthier_conv2d_output_size(&b, NULL, NULL) == LUTHIER_STATUS_OVERFLOW, "output_size huge");
    CONV_BAD(algorithm, LUTHIER_CONV_1X1, LUTHIER_STATUS_UNSUPPORTED, "1x1");
    CONV_BAD(algorithm, LUTHIER_CONV_DEPTHWISE, LUTHIER_STATUS_UNSUPPORTED, "depthwise");
    b = d;
    b.activation = LUTHIER_ACTIVATION_CLAMP;
    b.clamp_min = 1;
    b.clamp_max = 0;
    CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "clamp");
    b = d;
    b.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
    b.kernel = "4x4__scalar";
    CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_UNSUPPORTED, "implicit + interleaved");
    CHECK(strstr(luthier_context_error(ctx), "implicit_gemm") && strstr(luthier_context_error(ctx), "hybrid"),
          "message '%s'", luthier_context_error(ctx));
    CHECK(luthier_conv2d_algorithm_valid(ctx, &b, LUTHIER_CONV_IMPLICIT_GEMM) == LUTHIER_STATUS_UNSUPPORTED, "valid()");
    CHECK(luthier_conv2d_algorithm_valid(ctx, &b, LUTHIER_CONV_IM2COL) == LUTHIER_STATUS_OK, "valid() im2col");
    b.kernel = "no_such_kernel";
    CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_NOT_FOUND, "unknown kernel");
    b = d;
    {
        float r[3] = {1, 1, 1};
        b.ratios = r;
        b.num_ratios = 3;
        CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "3 ratios, 1 cluster");
        b.num_ratios = 1;
        r[0] = -1;
        CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative ratio");
    }
    CHECK(luthier_conv2d(ctx, &d, NULL, w, NULL, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL input");
    CHECK(luthier_conv2d(ctx, &d, in, w, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL output");
    CHECK(luthier_conv2d(ctx, &d, in, w, NULL, out) == LUTHIER_STATUS_OK, "good: %s", luthier_context_error(ctx));
    CHECK(luthier_conv2d_get_info(NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "info NULL");
    luthier_conv2d_destroy(NULL);
#undef CONV_BAD
    luthier_context_destroy(ctx);
}

/* ResNet-18's convolutions at reduced size (spatial / 8, channels / 4), every valid algorithm. */
static void test_conv_resnet18(void) {
    static const int L[][8] = {
        /* in_hw, cin, cout, k, stride, pad, batch, dw */
        {28, 3, 16, 7, 2, 3, 1, 0},  /* conv1 */
        {7, 16, 16, 3, 1, 1, 2, 0},  /* layer1 */
        {7, 16, 32, 3, 2, 1, 1, 0},  /* layer2 down */
        {7, 16, 32, 1, 2, 0, 1, 0},  /* layer2 shortcut */
        {4, 32, 32, 3, 1, 1, 1, 0},  /* layer2 */
        {4, 32, 64, 3, 2, 1, 1, 0},  /* layer3 down */
        {4, 32, 64, 1, 2, 0, 1, 0},  /* layer3 shortcut */
        {2, 64, 64, 3, 1, 1, 1, 0},  /* layer3 */
        {2, 64, 128, 3, 2, 1, 1, 0}, /* layer4 down */
        {1, 128, 128, 3, 1, 1, 1, 0} /* layer4 */
    };
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    size_t l;
    int a, c;
    for (l = 0; l < sizeof L / sizeof L[0]; l++)
        for (a = LUTHIER_CONV_AUTO; a < LUTHIER_CONV_ALGORITHM_COUNT; a++) {
            luthier_conv2d_desc d;
            char what[128];
            memset(&d, 0, sizeof d);
            d.in_h = d.in_w = L[l][0];
            d.in_channels = L[l][1];
            d.out_channels = L[l][2];
            d.kernel_h = d.kernel_w = L[l][3];
            d.stride_h = d.stride_w = L[l][4];
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = L[l][5];
            d.batch = L[l][6];
            d.activation = LUTHIER_ACTIVATION_RELU;
            d.accumulate = l % 2;
            d.layout = (luthier_layout)(l % 3 == 0);
            d.algorithm = (luthier_conv_algorithm)a;
            if (luthier_conv2d_algorithm_valid(ctxs[0], &d, d.algorithm) != LUTHIER_STATUS_OK) continue;
            snprintf(what, sizeof what, "resnet18 layer %zu %s", l, luthier_conv_algorithm_name(d.algorithm));
            conv_check(ctxs, nctx, &d, 1, NULL, what);
        }
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* Winograd: 3x3, stride 1, dilation 1; odd sizes up to a few tiles of 6 so that border tiles are
   partial; channels 1..7 in, 1..11 out (never a multiple of a vector width by design);
   groups 1, 2 or 3 (never depthwise: cout_g >= 2 when groups > 1). */
static void conv_random_winograd_desc(luthier_conv2d_desc *d, luthier_conv_algorithm algo) {
    int64_t cig, cog;
    memset(d, 0, sizeof *d);
    d->algorithm = algo;
    d->batch = test_rand_int(1, 2);
    d->groups = test_rand_int(0, 2) == 0 ? test_rand_int(2, 3) : 1;
    cig = test_rand_int(1, 7);
    cog = test_rand_int(d->groups > 1 ? 2 : 1, 11);
    d->in_channels = cig * d->groups;
    d->out_channels = cog * d->groups;
    d->kernel_h = d->kernel_w = 3;
    d->pad_top = test_rand_int(0, 2);
    d->pad_left = test_rand_int(0, 2);
    d->pad_bottom = test_rand_int(0, 1);
    d->pad_right = test_rand_int(0, 2);
    d->in_h = test_rand_int(1, 15);
    if (d->in_h + d->pad_top + d->pad_bottom < 3) d->in_h = 3;
    d->in_w = test_rand_int(1, 17);
    if (d->in_w + d->pad_left + d->pad_right < 3) d->in_w = 3;
    d->layout = (luthier_layout)test_rand_int(0, 1);
    d->activation = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_COUNT - 1);
    d->clamp_min = -0.5f;
    d->clamp_max = 0.75f;
    d->accumulate = test_rand_int(0, 2) == 0;
    d->schedule = test_rand_int(0, 4) == 0 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
}

/* Kernels for the Winograd sweeps: the default, the first available hybrid and the scalar
   interleaved one (at least one of each kind). Returns how many (distinct) were put in idx. */
static int conv_winograd_kernels(int *idx) {
    int n = 0, i, k, cand[3];
    cand[0] = luthier__select_default_kernel(luthier_cpu_features());
    cand[1] = -1;
    for (i = 0; i < LUTHIER__NUM_UKERNELS; i++)
        if (kernel_available(i) && luthier__ukernels[i].kind == LUTHIER_KERNEL_HYBRID) {
            cand[1] = i;
            break;
        }
    cand[2] = -1;
    luthier_kernel_find("4x4__scalar", &cand[2]);
    for (i = 0; i < 3; i++) {
        int dup = cand[i] < 0;
        for (k = 0; k < n && !dup; k++) dup = idx[k] == cand[i];
        if (!dup) idx[n++] = cand[i];
    }
    return n;
}

/* The vectorized tile transforms: channel counts with full vectors and a tail for every width
   (16 AVX-512, 8 AVX2, 4 SSE/NEON, then the scalar tail), on contexts with the wider ISAs
   switched off (each ISA checked on its own: 1 thread vs the default pool, bit-identical).
   Returns the number of failures. */
static int conv_winograd_vector_paths(luthier_conv_algorithm algo) {
    static const unsigned off[3] = {0, LUTHIER_CPU_AVX512F, LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA};
    int f, v, bad = 0;
    for (f = 0; f < 3 && !bad; f++) {
        luthier_context *ctxs[2];
        luthier_context_desc cd;
        int n = 0, c;
        memset(&cd, 0, sizeof cd);
        cd.disabled_cpu_features = off[f];
        cd.num_threads = 1;
        if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) n++;
        cd.num_threads = 0;
        if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) n++;
        CHECK(n == 2, "winograd vector paths: 2 contexts");
        for (v = 0; v < 3 && !bad && n == 2; v++) {
            luthier_conv2d_desc d;
            char what[128];
            memset(&d, 0, sizeof d);
            d.algorithm = algo;
            d.batch = 1;
            d.groups = v == 2 ? 2 : 1;
            d.in_channels = (v == 1 ? 32 : 37) * d.groups;
            d.out_channels = (v == 1 ? 48 : 21) * d.groups;
            d.in_h = T.quick ? 11 : 17;
            d.in_w = T.quick ? 13 : 19;
            d.kernel_h = d.kernel_w = 3;
            d.pad_top = d.pad_left = 1;
            d.pad_bottom = v;
            d.pad_right = 1;
            d.layout = LUTHIER_LAYOUT_NHWC;
            d.activation = v == 0 ? LUTHIER_ACTIVATION_RELU : v == 1 ? LUTHIER_ACTIVATION_CLAMP
                                                                    : LUTHIER_ACTIVATION_NONE;
            d.clamp_min = -0.5f;
            d.clamp_max = 0.75f;
            d.accumulate = v != 0;
            snprintf(what, sizeof what, "%s vector paths (disabled features 0x%x): %lld -> %lld g%lld",
                     luthier_conv_algorithm_name(algo), off[f], (long long)d.in_channels,
                     (long long)d.out_channels, (long long)d.groups);
            bad += conv_check(ctxs, n, &d, v != 1, NULL, what);
        }
        for (c = 0; c < n; c++) luthier_context_destroy(ctxs[c]);
    }
    return bad;
}

/* Every tile in one block (V and M of all tiles fit L2): with weights of at least 2 x L2 and
   whole panels, as many per thread, the output channels are split on several threads (each
   streaming its part of the weights once); with a small L2 the tiles come in blocks and are
   split instead. 30 tiles (more than 2 MR units per thread for MR <= 6), 128 -> 256 channels
   (whole panels for every NR), or 248 (partial: never split). Contexts: 1 and 2 threads with L2 just above the tiles' V and
   M, 2 threads with 64 KiB (blocks), 2 threads with 8 MiB (one block, but weights under 2 x
   L2: tiles split): results bit-identical, blocks and split as described. */
static int conv_winograd_one_block(luthier_conv_algorithm algo, const luthier__kernel_entry *uk, int partial) {
    luthier_context *ctxs[4];
    luthier_context_desc cd;
    luthier_conv2d_desc d;
    const int m = algo == LUTHIER_CONV_WINOGRAD_2X3 ? 2 : algo == LUTHIER_CONV_WINOGRAD_4X3 ? 4 : 6;
    const size_t P = (size_t)(m + 2) * (size_t)(m + 2), tiles = 30;
    size_t l2[4];
    char what[200];
    int n = 0, c, bad = 0;
    memset(&d, 0, sizeof d);
    d.algorithm = algo;
    d.kernel = uk->name;
    d.batch = 1;
    d.in_channels = 128;
    d.out_channels = partial ? 248 : 256; /* 248: a partial last panel, no channel split */
    d.in_h = 5 * m - 1;
    d.in_w = 6 * m - 1;
    d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    d.activation = LUTHIER_ACTIVATION_RELU;
    l2[0] = l2[1] = tiles * P * (size_t)(d.in_channels + d.out_channels) * sizeof(float) + (16u << 10);
    l2[2] = 64u << 10;
    l2[3] = 8u << 20;
    for (c = 0; c < 4; c++) {
        memset(&cd, 0, sizeof cd);
        cd.num_threads = c ? 2 : 1;
        if (luthier_context_create(&cd, &ctxs[n]) == LUTHIER_STATUS_OK) ctxs[n++]->caches.l2 = l2[c];
    }
    CHECK(n == 4, "one block: 4 contexts");
    for (c = 0; c < n; c++) {
        luthier_conv2d_layer *cv = NULL;
        float *w = (float *)test_alloc((size_t)(d.out_channels * d.in_channels * 9) * sizeof(float));
        test_fill(w, (size_t)(d.out_channels * d.in_channels * 9));
        CHECK(luthier_conv2d_create(ctxs[c], &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "one block: create");
        free(w);
        if (cv) {
            luthier__wino_in_fn fin;
            luthier__wino_out_fn fout;
            const size_t vw = (size_t)luthier__wino_select(ctxs[c]->cpu_features, &fin, &fout);
            const int split = luthier__conv_wino_split(cv, vw, luthier_context_num_threads(ctxs[c]), l2[c]).by_panels;
            CHECK(cv->wino_tiles == tiles && (c != 2 ? cv->wino_tb >= tiles : cv->wino_tb < tiles) &&
                      split == (c == 1 && !partial && (size_t)uk->nr % vw == 0),
                  "%s %s, L2 %zu, %d threads: %zu tiles in blocks of %zu, %s split", luthier_conv_algorithm_name(algo), uk->name,
                  l2[c], luthier_context_num_threads(ctxs[c]), cv->wino_tiles, cv->wino_tb, split ? "channel" : "tile");
        }
        luthier_conv2d_destroy(cv);
    }
    snprintf(what, sizeof what, "%s %s: every tile in one block, %lld -> %lld channels",
             luthier_conv_algorithm_name(algo), uk->name, (long long)d.in_channels, (long long)d.out_channels);
    if (n == 4) bad = conv_check(ctxs, n, &d, 1, NULL, what);
    for (c = 0; c < n; c++) luthier_context_destroy(ctxs[c]);
    return bad;
}

static void conv_winograd_sweep(luthier_conv_algorithm algo) {
    static const float ratio_sets[4][2] = {{100, 0}, {0, 100}, {30, 70}, {50, 50}};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    int kidx[3], nk, ki, trial, c, bad = 0;
    CHECK(nctx == 3, "3 contexts");
    nk = conv_winograd_kernels(kidx);
    conv_max_rel_err = 0;
    for (ki = 0; ki < nk && !bad; ki++) {
        const luthier__kernel_entry *uk = &luthier__ukernels[kidx[ki]];
        const int trials = T.quick ? 5 : 16;
        for (trial = 0; trial < trials && !bad; trial++) {
            luthier_conv2d_desc d;
            char what[256];
            conv_random_winograd_desc(&d, algo);
            d.kernel = uk->name;
            snprintf(what, sizeof what,
                     "%s %s: n%lld %lldx%lldx%lld -> %lld, p%lld,%lld,%lld,%lld g%lld %s act%d acc%d",
                     luthier_conv_algorithm_name(algo), uk->name, (long long)d.batch, (long long)d.in_h,
                     (long long)d.in_w, (long long)d.in_channels, (long long)d.out_channels,
                     (long long)d.pad_top, (long long)d.pad_left, (long long)d.pad_bottom,
                     (long long)d.pad_right, (long long)d.groups, d.layout ? "nchw" : "nhwc",
                     (int)d.activation, d.accumulate);
            bad += conv_check(ctxs, nctx, &d, trial % 3 != 0, ratio_sets[trial % 4], what);
        }
        /* few tiles, many output channels (a partial last panel, channels past the last vector):
           on several threads the output channels are split (luthier_conv2d_run) */
        for (trial = 0; trial < 2 && !bad; trial++) {
            luthier_conv2d_desc d;
            char what[256];
            memset(&d, 0, sizeof d);
            d.algorithm = algo;
            d.kernel = uk->name;
            d.batch = 1;
            d.groups = trial + 1;
            d.in_channels = 20 * d.groups;
            d.out_channels = (4 * uk->nr + 3) * d.groups;
            d.in_h = test_rand_int(3, 7);
            d.in_w = test_rand_int(3, 9);
            d.kernel_h = d.kernel_w = 3;
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
            d.activation = LUTHIER_ACTIVATION_RELU;
            d.accumulate = trial;
            snprintf(what, sizeof what, "%s %s: few tiles %lldx%lld, %lld -> %lld channels, g%lld",
                     luthier_conv_algorithm_name(algo), uk->name, (long long)d.in_h, (long long)d.in_w,
                     (long long)d.in_channels, (long long)d.out_channels, (long long)d.groups);
            bad += conv_check(ctxs, nctx, &d, 1, ratio_sets[trial + 2], what);
        }
        if (!bad && uk->mr <= 6) bad += conv_winograd_one_block(algo, uk, 0);
        if (!bad && uk->mr <= 6 && ki == 0) bad += conv_winograd_one_block(algo, uk, 1);
    }
    /* One wider layer (more tiles than a block, Cin 40): the error measurement of DESIGN.md. */
    if (!bad) {
        luthier_conv2d_desc d;
        memset(&d, 0, sizeof d);
        d.algorithm = algo;
        d.batch = 1;
        d.in_channels = T.quick ? 16 : 40;
        d.out_channels = T.quick ? 8 : 24;
        d.in_h = T.quick ? 13 : 29;
        d.in_w = T.quick ? 11 : 31;
        d.kernel_h = d.kernel_w = 3;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
        bad += conv_check(ctxs, nctx, &d, 1, ratio_sets[2], "winograd wide layer");
    }
    if (!bad) bad += conv_winograd_vector_paths(algo);
    printf("    %s: max |out - ref| / span = %.3g (%.2f FLT_EPSILON), bound %.0f FLT_EPSILON\n",
           luthier_conv_algorithm_name(algo), conv_max_rel_err, conv_max_rel_err / FLT_EPSILON,
           conv_tol_factor(algo));
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

static void test_conv_winograd_2x3(void) { conv_winograd_sweep(LUTHIER_CONV_WINOGRAD_2X3); }
static void test_conv_winograd_4x3(void) { conv_winograd_sweep(LUTHIER_CONV_WINOGRAD_4X3); }
static void test_conv_winograd_6x3(void) { conv_winograd_sweep(LUTHIER_CONV_WINOGRAD_6X3); }

/* Shapes Winograd refuses (with a message naming what is wrong), and ones it accepts. */
static void test_conv_winograd_refusals(void) {
    static const luthier_conv_algorithm algos[3] = {LUTHIER_CONV_WINOGRAD_2X3, LUTHIER_CONV_WINOGRAD_4X3,
                                                    LUTHIER_CONV_WINOGRAD_6X3};
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_conv2d_desc d, b;
    luthier_conv2d_layer *cv = NULL;
    luthier_conv2d_info info;
    float w[8 * 8 * 25], in[8 * 9 * 9], out[8 * 9 * 9];
    int a;
    memset(&info, 0, sizeof info);
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    memset(w, 0, sizeof w);
    memset(in, 0, sizeof in);
    memset(&d, 0, sizeof d);
    d.batch = 1; d.in_channels = 4; d.out_channels = 4; d.in_h = 9; d.in_w = 9;
    d.kernel_h = d.kernel_w = 3; d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    CHECK(strcmp(luthier_conv_algorithm_name(LUTHIER_CONV_WINOGRAD_2X3), "winograd_2x3") == 0 &&
          strcmp(luthier_conv_algorithm_name(LUTHIER_CONV_WINOGRAD_4X3), "winograd_4x3") == 0 &&
          strcmp(luthier_conv_algorithm_name(LUTHIER_CONV_WINOGRAD_6X3), "winograd_6x3") == 0, "names");
    for (a = 0; a < 3; a++) {
        const char *name = luthier_conv_algorithm_name(algos[a]);
#define WINO_REFUSED(field, value, text)                                                           \
    do {                                                                                           \
        b = d;                                                                                     \
        b.algorithm = algos[a];                                                                    \
        b.field = value;                                                                           \
        CHECK(luthier_conv2d_algorithm_valid(ctx, &b, algos[a]) == LUTHIER_STATUS_UNSUPPORTED,     \
              "%s %s = %s: valid()", name, #field, #value);                                        \
        CHECK(strstr(luthier_context_error(ctx), text) && strstr(luthier_context_error(ctx), name), \
              "%s %s: message '%s'", name, #field, luthier_context_error(ctx));                    \
        CHECK(luthier_conv2d(ctx, &b, in, w, NULL, out) == LUTHIER_STATUS_UNSUPPORTED, "%s %s: run", \
              name, #field);                                                                       \
    } while (0)
        WINO_REFUSED(stride_h, 2, "stride (2, 1)");
        WINO_REFUSED(stride_w, 2, "stride (1, 2)");
        WINO_REFUSED(dilation_h, 2, "dilation (2, 1)");
        WINO_REFUSED(dilation_w, 2, "dilation (1, 2)");
        WINO_REFUSED(kernel_h, 5, "5 x 3 kernel");
        WINO_REFUSED(kernel_w, 1, "3 x 1 kernel");
        b = d;
        b.kernel_h = b.kernel_w = 5;
        CHECK(luthier_conv2d_algorithm_valid(ctx, &b, algos[a]) == LUTHIER_STATUS_UNSUPPORTED &&
              strstr(luthier_context_error(ctx), "5 x 5 kernel"), "%s 5x5: '%s'", name, luthier_context_error(ctx));
        b = d;
        b.kernel_h = b.kernel_w = 1;
        b.pad_top = b.pad_left = b.pad_bottom = b.pad_right = 0;
        CHECK(luthier_conv2d_algorithm_valid(ctx, &b, algos[a]) == LUTHIER_STATUS_UNSUPPORTED &&
              strstr(luthier_context_error(ctx), "1 x 1 kernel"), "%s 1x1: '%s'", name, luthier_context_error(ctx));
        WINO_REFUSED(groups, 4, "depthwise");
#undef WINO_REFUSED
        /* accepted: asymmetric padding, groups, input smaller than one tile */
        b = d;
        b.pad_bottom = 0; b.pad_left = 2;
        CHECK(luthier_conv2d_algorithm_valid(ctx, &b, algos[a]) == LUTHIER_STATUS_OK, "%s: %s", name,
              luthier_context_error(ctx));
        b.groups = 2;
        CHECK(luthier_conv2d_algorithm_valid(ctx, &b, algos[a]) == LUTHIER_STATUS_OK, "%s groups 2: %s", name,
              luthier_context_error(ctx));
        b = d;
        b.in_h = b.in_w = 3; b.pad_top = b.pad_left = b.pad_bottom = b.pad_right = 0;
        b.algorithm = algos[a];
        CHECK(luthier_conv2d_create(ctx, &b, w, NULL, &cv) == LUTHIER_STATUS_OK, "%s create: %s", name,
              luthier_context_error(ctx));
        CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm == algos[a] &&
              info.out_h == 1 && info.out_w == 1 && info.workspace_bytes > 0, "%s info", name);
        luthier_conv2d_destroy(cv);
        cv = NULL;
    }
    /* AUTO never picks Winograd (the tuner will) */
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "auto");
    CHECK(luthier_conv2d_get_info(cv, &info) == LUTHIER_STATUS_OK && info.algorithm != LUTHIER_CONV_WINOGRAD_2X3 &&
          info.algorithm != LUTHIER_CONV_WINOGRAD_4X3 && info.algorithm != LUTHIER_CONV_WINOGRAD_6X3,
          "AUTO picked %s", luthier_conv_algorithm_name(info.algorithm));
    luthier_conv2d_destroy(cv);
    luthier_context_destroy(ctx);
}

/* Depthwise 3x3 (the layers MobileNet-style networks are made of, with a fast path for runs of
   interior pixels): channel counts around the vector widths, odd sizes, padding on every side,
   stride 1 and 2, dilation, all compared with the reference on every context. */
static void test_conv_depthwise_3x3(void) {
    static const int channels[] = {1, 7, 16, 17, 32, 33, 70};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    static const float r[2] = {30, 70};
    int trial, c, bad = 0;
    for (trial = 0; trial < (T.quick ? 14 : 42) && !bad; trial++) {
        luthier_conv2d_desc d;
        char what[160];
        memset(&d, 0, sizeof d);
        d.batch = test_rand_int(1, 2);
        d.in_channels = d.out_channels = d.groups = channels[trial % 7];
        d.kernel_h = d.kernel_w = 3;
        d.stride_h = d.stride_w = test_rand_int(1, 2);
        d.dilation_h = d.dilation_w = trial % 5 == 4 ? 2 : 1;
        d.pad_top = test_rand_int(0, 2);
        d.pad_left = test_rand_int(0, 2);
        d.pad_bottom = test_rand_int(0, 2);
        d.pad_right = test_rand_int(0, 2);
        d.in_h = test_rand_int(5, 13);
        d.in_w = test_rand_int(5, 17);
        d.layout = (luthier_layout)(trial % 2);
        d.activation = (luthier_activation)test_rand_int(0, LUTHIER_ACTIVATION_COUNT - 1);
        d.clamp_min = -0.5f;
        d.clamp_max = 0.75f;
        d.accumulate = trial % 3 == 0;
        d.algorithm = LUTHIER_CONV_DEPTHWISE;
        snprintf(what, sizeof what, "depthwise 3x3 C%lld %lldx%lld s%lld d%lld p%lld,%lld,%lld,%lld acc%d",
                 (long long)d.in_channels, (long long)d.in_h, (long long)d.in_w, (long long)d.stride_h,
                 (long long)d.dilation_h, (long long)d.pad_top, (long long)d.pad_left,
                 (long long)d.pad_bottom, (long long)d.pad_right, d.accumulate);
        bad += conv_check(ctxs, nctx, &d, 1, r, what);
    }
    CHECK(bad == 0, "depthwise 3x3 cases wrong");
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* luthier__conv2d_first_block names the B block a layer's GEMM driver reads first (the block
   the layer before it prefetches in a plan): the driver is run on the layer's own packed
   weights, blocking and layout with a recording kernel, and the lines its first block reads
   (the calls before the tile rows start over) must be exactly the region's. NC is forced small
   so that the first block is not the whole B; KC small (segments and k split) and default
   (K in one block, rounded up past Winograd's 30 channels). */
static void test_conv_first_block(void) {
    static const struct {
        luthier_conv_algorithm algo;
        int cin, h, cout, k;
    } L[] = {{LUTHIER_CONV_1X1, 150, 9, 70, 1},          {LUTHIER_CONV_IM2COL, 13, 8, 50, 3},
             {LUTHIER_CONV_IMPLICIT_GEMM, 24, 8, 45, 3}, {LUTHIER_CONV_IMPLICIT_GEMM, 5, 9, 40, 5},
             {LUTHIER_CONV_WINOGRAD_2X3, 30, 12, 60, 3}, {LUTHIER_CONV_DEPTHWISE, 16, 8, 16, 3}};
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    size_t li;
    int kci;
    for (kci = 0; kci < 2; kci++) {
        memset(&cd, 0, sizeof cd);
        cd.num_threads = 1;
        cd.kc = kci ? 0 : 40;
        cd.nc = 8;
        cd.kernel = "4x4__scalar_hybrid";
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
        if (!ctx) return;
        for (li = 0; li < sizeof L / sizeof L[0]; li++) {
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            luthier__prefetch_region r;
            luthier__kernel_entry uk;
            luthier__gemm_args g;
            float *w, *a, *c;
            const float **ind;
            size_t nw, m, tiles, bytes, lines, l, p, q;
            unsigned char *want, *got;
            int i, bad = 0;
            memset(&d, 0, sizeof d);
            d.batch = 1;
            d.in_channels = L[li].cin;
            d.in_h = d.in_w = L[li].h;
            d.out_channels = L[li].cout;
            d.kernel_h = d.kernel_w = L[li].k;
            d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = L[li].k / 2;
            d.groups = L[li].algo == LUTHIER_CONV_DEPTHWISE ? L[li].cin : 1;
            d.algorithm = L[li].algo;
            nw = (size_t)(L[li].cout * (L[li].cin / d.groups) * L[li].k * L[li].k);
            w = (float *)test_alloc(nw * sizeof(float));
            test_fill(w, nw);
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "layer %zu: %s", li, luthier_context_error(ctx));
            free(w);
            if (!cv) continue;
            luthier__conv2d_first_block(cv, &r);
            if (L[li].algo == LUTHIER_CONV_DEPTHWISE) {
                CHECK(r.b == NULL, "depthwise: no GEMM block");
                luthier_conv2d_destroy(cv);
                continue;
            }
            uk = luthier__ukernels[cv->kernel];
            uk.fn = pf_record_kernel;
            m = cv->wino_m ? cv->wino_tiles : cv->m;
            tiles = luthier__div_up(m, (size_t)uk.mr);
            bytes = cv->bl.bytes * (cv->wino_m ? 16 : 1);
            lines = bytes / 64 + 2;
            a = (float *)test_alloc(m * cv->kdim * sizeof(float));
            c = (float *)test_alloc(m * cv->cout_g * sizeof(float));
            ind = (const float **)test_alloc(tiles * cv->seg_n * (size_t)uk.mr * sizeof(float *) + 1);
            for (q = 0; q < tiles * cv->seg_n * (size_t)uk.mr; q++) ind[q] = a;
            memset(&g, 0, sizeof g);
            g.m = m;
            g.n = cv->cout_g;
            g.a = a;
            g.b = cv->packed;
            g.b_layout = &cv->bl;
            g.c = c;
            g.ldc = cv->cout_g;
            pf_rec.b = cv->packed;
            pf_rec.c = c;
            pf_rec.ldc = cv->cout_g;
            pf_rec.nr = uk.nr;
            pf_rec.n = pf_rec.dense = 0;
            if (L[li].algo == LUTHIER_CONV_IMPLICIT_GEMM) {
                g.k = cv->seg_k;
                luthier__gemm_compute_indirect(&uk, &cv->blk, &g, cv->seg_n, ind, 0, tiles, 0, cv->bl.panels);
            } else {
                g.k = g.lda = cv->wino_m ? cv->cin_g : cv->kdim;
                luthier__gemm_compute(&uk, &cv->blk, &g, 0, tiles, 0, cv->bl.panels, NULL);
            }
            want = (unsigned char *)test_alloc(lines);
            got = (unsigned char *)test_alloc(lines);
            memset(want, 0, lines);
            memset(got, 0, lines);
            for (i = 0; i < pf_rec.n; i++) { /* the first block: until the tile rows start over */
                if (i > 0 && pf_rec.calls[i].row == 0 && pf_rec.calls[i - 1].row != 0) break;
                for (l = pf_rec.calls[i].b0 / 64; l * 64 < pf_rec.calls[i].b1 && l < lines; l++) want[l] = 1;
            }
            CHECK(i < pf_rec.n, "layer %zu (%s): the forced blocking gives more than one block", li,
                  luthier_conv_algorithm_name(L[li].algo));
            CHECK(r.b == cv->packed && r.panels > 0 && r.chunk > 0, "layer %zu: a region at the packed weights", li);
            for (p = 0; p < r.panels; p++) {
                const size_t off = (size_t)((const char *)(r.b + p * r.panel_stride) - (const char *)cv->packed);
                for (l = off / 64; l * 64 < off + r.chunk * sizeof(float) && l < lines; l++) got[l] = 1;
            }
            for (l = 0; l < lines; l++) bad += want[l] != got[l];
            CHECK(bad == 0, "layer %zu (%s, kc %zu): %d lines differ between the first block read and the region (%zu panels of %zu floats)",
                  li, luthier_conv_algorithm_name(L[li].algo), cd.kc, bad, r.panels, r.chunk);
            free(want);
            free(got);
            free(ind);
            free(a);
            free(c);
            luthier_conv2d_destroy(cv);
        }
        luthier_context_destroy(ctx);
    }
}

/* NaN and infinity through every fused epilogue of the direct algorithms, as PyTorch computes
   them: an output whose window holds the NaN is NaN after any activation (relu(NaN) = NaN, clamp
   keeps NaN), one whose window holds the +inf is +-inf before the activation and what the
   activation makes of it after (relu6(+inf) = 6). Every kernel this CPU runs, with and without
   bias and accumulate; the Winograd algorithms are out of scope (their transforms mix a tile's
   pixels: docs/DESIGN.md, "Numerics of each algorithm"). */
static void test_conv_nan_inf(void) {
    static const luthier_conv_algorithm algos[] = {LUTHIER_CONV_IM2COL, LUTHIER_CONV_1X1, LUTHIER_CONV_IMPLICIT_GEMM,
                                                   LUTHIER_CONV_DEPTHWISE};
    static const luthier_activation acts[] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU, LUTHIER_ACTIVATION_RELU6,
                                              LUTHIER_ACTIVATION_CLAMP};
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    int a, v, k, acc, bad = 0, runs = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    for (a = 0; a < 4; a++)
        for (k = -1; k < LUTHIER__NUM_UKERNELS; k++)
            for (v = 0; v < 4; v++)
                for (acc = 0; acc < 2; acc++) {
                    luthier_conv2d_desc d;
                    int64_t OH = 0, OW = 0;
                    size_t in_n, w_n, out_n, e;
                    float *in, *w, *bias, *out, *out_in;
                    double *ref, *mag, *span;
                    luthier_conv2d_layer *cv = NULL;
                    if (k >= 0 && (algos[a] == LUTHIER_CONV_DEPTHWISE || !kernel_available(k) ||
                                   (algos[a] == LUTHIER_CONV_IMPLICIT_GEMM && luthier__ukernels[k].kind != LUTHIER_KERNEL_HYBRID)))
                        continue;
                    memset(&d, 0, sizeof d);
                    d.batch = 2; d.in_channels = 8; d.in_h = 7; d.in_w = 9;
                    d.out_channels = algos[a] == LUTHIER_CONV_DEPTHWISE ? 8 : 19;
                    d.groups = algos[a] == LUTHIER_CONV_DEPTHWISE ? 8 : 1;
                    d.kernel_h = d.kernel_w = algos[a] == LUTHIER_CONV_1X1 ? 1 : 3;
                    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = algos[a] == LUTHIER_CONV_1X1 ? 0 : 1;
                    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
                    d.layout = LUTHIER_LAYOUT_NHWC;
                    d.activation = acts[v];
                    d.clamp_min = -0.25f; d.clamp_max = 0.5f;
                    d.accumulate = acc;
                    d.algorithm = algos[a];
                    d.kernel = k >= 0 ? luthier__ukernels[k].name : NULL;
                    luthier_conv2d_output_size(&d, &OH, &OW);
                    in_n = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
                    w_n = (size_t)(d.out_channels * (d.in_channels / d.groups) * d.kernel_h * d.kernel_w);
                    out_n = (size_t)(d.batch * d.out_channels * OH * OW);
                    in = (float *)test_alloc(in_n * sizeof(float)); w = (float *)test_alloc(w_n * sizeof(float));
                    bias = (float *)test_alloc((size_t)d.out_channels * sizeof(float));
                    out = (float *)test_alloc(out_n * sizeof(float)); out_in = (float *)test_alloc(out_n * sizeof(float));
                    ref = (double *)test_alloc(out_n * sizeof(double)); mag = (double *)test_alloc(out_n * sizeof(double));
                    span = (double *)test_alloc(out_n * sizeof(double));
                    test_fill(in, in_n); test_fill(w, w_n); test_fill(bias, (size_t)d.out_channels); test_fill(out_in, out_n);
                    in[conv_off(d.layout, 8, 7, 9, 0, 3, 2, 2)] = NAN;      /* batch 0, channel 3 */
                    in[conv_off(d.layout, 8, 7, 9, 1, 5, 4, 6)] = INFINITY; /* batch 1, channel 5 */
                    out_in[out_n / 3] = NAN;                                /* a residual NaN (accumulate) */
                    conv_reference(&d, OH, OW, in, w, bias, out_in, ref, mag, span);
                    for (e = 0; e < out_n; e++) out[e] = acc ? out_in[e] : test_sentinel();
                    if (luthier_conv2d_create(ctx, &d, w, bias, &cv) != LUTHIER_STATUS_OK ||
                        luthier_conv2d_run(ctx, cv, in, out) != LUTHIER_STATUS_OK) {
                        CHECK(0, "%s %s: %s", luthier_conv_algorithm_name(d.algorithm), d.kernel ? d.kernel : "default",
                              luthier_context_error(ctx));
                        bad++;
                    } else {
                        runs++;
                        for (e = 0; e < out_n; e++) {
                            const int ok = isnan(ref[e]) ? isnan(out[e]) != 0
                                           : isinf(ref[e]) ? (double)out[e] == ref[e]
                                                           : fabs((double)out[e] - ref[e]) <= 1e-5 + 8 * FLT_EPSILON * mag[e];
                            if (!ok && bad++ < 4)
                                CHECK(0, "%s %s act %d acc %d: element %zu is %g, want %g",
                                      luthier_conv_algorithm_name(d.algorithm), d.kernel ? d.kernel : "default", (int)acts[v], acc,
                                      e, (double)out[e], ref[e]);
                        }
                    }
                    luthier_conv2d_destroy(cv);
                    free(in); free(w); free(bias); free(out); free(out_in); free(ref); free(mag); free(span);
                }
    CHECK(bad == 0, "%d wrong elements", bad);
    CHECK(runs >= 4 * 4 * 2, "only %d runs", runs);
    luthier_context_destroy(ctx);
}

/* The variant the registry has of kernel name for a cluster of cores core (the naming of
   >>cluster-kernels' pairs: NAME_a53 / NAME_a55 for in-order cores, NAME for the others),
   written out here independently of the cost model's table; name when there is none or the
   CPU cannot run it. */
static const char *conv_expected_variant(luthier_kernel_family fam, const char *name, const char *core) {
    static char buf[8][96];
    static int next;
    const char *v = strstr(name, "_a53") ? strstr(name, "_a53") : strstr(name, "_a55");
    const int inorder = strstr(core, "A53") || strstr(core, "A55");
    char *out = buf[next++ % 8];
    luthier_kernel_info info;
    int i;
    if (fam != LUTHIER_KERNELS_F32 && !strstr(core, "A55") && !strstr(core, "A76"))
        return name; /* cores without dotprod or fp16 (A53, A72): their rows rate no SDOT or fp16 kernel */
    if (v && !inorder) snprintf(out, 96, "%.*s%s", (int)(v - name), name, v + 4);
    else if (!v && inorder) snprintf(out, 96, "%s%s", name, fam == LUTHIER_KERNELS_F32 ? "_a53" : "_a55");
    else return name;
    if (luthier_kernels_find(fam, out, &i) != LUTHIER_STATUS_OK || luthier_kernels_get(fam, i, &info) != LUTHIER_STATUS_OK ||
        (info.required_cpu_features & luthier_cpu_features()) != info.required_cpu_features)
        return name;
    return info.name;
}

/* One fp32 layer on kernel uk of ctx (clusters cores[]): the auto per-cluster kernels are the
   expected variants and give the bits of uk on every cluster. */
static void conv_cluster_case(luthier_context *ctx, const char *const *cores, luthier_kernel_family fam, const char *uk,
                              luthier_conv_algorithm algo) {
    const char *uniform[2] = {uk, uk};
    const float ratios[2] = {1, 1};
    luthier_conv2d_desc d;
    luthier_conv2d_layer *a = NULL, *b = NULL;
    luthier_conv2d_info info;
    const size_t nin = 16 * 9 * 9, nw = 24 * 16 * 9, nout = 24 * 9 * 9;
    float *in = (float *)test_alloc(nin * sizeof(float)), *w = (float *)test_alloc(nw * sizeof(float));
    float *o1 = (float *)test_alloc(nout * sizeof(float)), *o2 = (float *)test_alloc(nout * sizeof(float));
    int cl;
    test_fill(in, nin);
    test_fill(w, nw);
    memset(&d, 0, sizeof d);
    d.batch = 1; d.in_channels = 16; d.in_h = d.in_w = 9; d.out_channels = 24;
    d.kernel_h = d.kernel_w = 3; d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    d.algorithm = algo;
    d.kernel = uk;
    d.ratios = ratios;
    d.num_ratios = 2;
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &a) == LUTHIER_STATUS_OK, "%s %s: %s", uk, luthier_conv_algorithm_name(algo),
          luthier_context_error(ctx));
    d.cluster_kernels = uniform;
    CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &b) == LUTHIER_STATUS_OK, "%s uniform: %s", uk, luthier_context_error(ctx));
    if (a && b && luthier_conv2d_get_info(a, &info) == LUTHIER_STATUS_OK) {
        for (cl = 0; cl < 2; cl++) {
            const char *want = conv_expected_variant(fam, info.kernel, cores[cl]);
            CHECK(info.cluster_kernels[cl] && !strcmp(info.cluster_kernels[cl], want), "%s on %s: cluster %d runs %s, expected %s",
                  uk, cores[cl], cl, info.cluster_kernels[cl] ? info.cluster_kernels[cl] : "(null)", want);
        }
        CHECK(info.cluster_kernels[2] == NULL, "a third cluster's kernel on a machine of two");
        CHECK(luthier_conv2d_run(ctx, a, in, o1) == LUTHIER_STATUS_OK && luthier_conv2d_run(ctx, b, in, o2) == LUTHIER_STATUS_OK,
              "run: %s", luthier_context_error(ctx));
        CHECK(memcmp(o1, o2, nout * sizeof(float)) == 0, "%s %s: the per-cluster kernels change the result", uk,
              luthier_conv_algorithm_name(algo));
    }
    luthier_conv2d_destroy(a);
    luthier_conv2d_destroy(b);
    free(in); free(w); free(o1); free(o2);
}

/* Every int8 kernel's im2col layer on ctx (clusters cores[]): the expected variants, and the
   bits of the kernel alone (int8 is exact: any difference is a wrong kernel or packing). */
static void conv_cluster_qcase(luthier_context *ctx, const char *const *cores) {
    const float ratios[2] = {1, 1};
    enum { CIN = 16, COUT = 24, HW = 7, NOUT = COUT * HW * HW };
    uint8_t in[CIN * HW * HW];
    int8_t w[COUT * CIN * 9];
    int32_t o1[NOUT], o2[NOUT];
    int i, cl;
    size_t e;
    for (e = 0; e < sizeof in; e++) in[e] = (uint8_t)test_rand_int(0, 255);
    for (e = 0; e < sizeof w; e++) w[e] = (int8_t)test_rand_int(-128, 127);
    for (i = 0; i < luthier_kernels_count(LUTHIER_KERNELS_INT8); i++) {
        luthier_kernel_info k;
        luthier_qconv2d_desc d;
        luthier_qconv2d_layer *a = NULL, *b = NULL;
        luthier_conv2d_info info;
        const char *uniform[2];
        if (luthier_kernels_get(LUTHIER_KERNELS_INT8, i, &k) != LUTHIER_STATUS_OK ||
            (k.required_cpu_features & luthier_cpu_features()) != k.required_cpu_features)
            continue;
        uniform[0] = uniform[1] = k.name;
        memset(&d, 0, sizeof d);
        d.batch = 1; d.in_channels = CIN; d.out_channels = COUT; d.in_h = d.in_w = HW;
        d.kernel_h = d.kernel_w = 3; d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
        d.input_zero_point = 3;
        d.output = LUTHIER_QOUTPUT_INT32;
        d.algorithm = LUTHIER_CONV_IM2COL;
        d.kernel = k.name;
        d.ratios = ratios;
        d.num_ratios = 2;
        CHECK(luthier_qconv2d_create(ctx, &d, w, NULL, &a) == LUTHIER_STATUS_OK, "int8 %s: %s", k.name, luthier_context_error(ctx));
        d.cluster_kernels = uniform;
        CHECK(luthier_qconv2d_create(ctx, &d, w, NULL, &b) == LUTHIER_STATUS_OK, "int8 %s uniform: %s", k.name,
              luthier_context_error(ctx));
        if (a && b && luthier_qconv2d_get_info(a, &info) == LUTHIER_STATUS_OK) {
            for (cl = 0; cl < 2; cl++) {
                const char *want = conv_expected_variant(LUTHIER_KERNELS_INT8, info.kernel, cores[cl]);
                CHECK(info.cluster_kernels[cl] && !strcmp(info.cluster_kernels[cl], want),
                      "int8 %s on %s: cluster %d runs %s, expected %s", k.name, cores[cl], cl,
                      info.cluster_kernels[cl] ? info.cluster_kernels[cl] : "(null)", want);
            }
            CHECK(luthier_qconv2d_run(ctx, a, in, o1) == LUTHIER_STATUS_OK && luthier_qconv2d_run(ctx, b, in, o2) == LUTHIER_STATUS_OK,
                  "int8 run: %s", luthier_context_error(ctx));
            CHECK(memcmp(o1, o2, sizeof o1) == 0, "int8 %s: the per-cluster kernels change the result", k.name);
        }
        luthier_qconv2d_destroy(a);
        luthier_qconv2d_destroy(b);
    }
}

/* Kernels per cluster (>>cluster-kernels): on machines of big and in-order cores, every fp32
   and fp16 kernel's layers (im2col, and Winograd for fp32, for interleaved kernels, implicit
   GEMM for hybrid ones) give the in-order cluster the variant scheduled for it where the
   registry has one (AArch64: 8x12__neonfma_a53 beside 8x12__neonfma; with FP16,
   8x24__neonfp16_a55 beside 8x24__neonfp16 and 6x32__neonfp16_hybrid_a55 beside
   6x32__neonfp16_hybrid on an A55), keep the kernel elsewhere, and compute
   the bits of the kernel alone; an int8 layer likewise (8x12__neondot_a55 with dotprod); a cluster kernel
   of another kind is refused. */
static void test_conv_cluster_kernels(void) {
    static const char *const specs[][3] = {{"A72x1,A53x1", "Cortex-A72", "Cortex-A53"}, {"A76x1,A55x1", "Cortex-A76", "Cortex-A55"}};
    static const luthier_kernel_family fams[2] = {LUTHIER_KERNELS_F32, LUTHIER_KERNELS_F16};
    size_t s;
    int f, i;
    for (s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        luthier_topology t;
        luthier_context *ctx;
        char err[160];
        CHECK(luthier_topology_cores(specs[s][0], &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", specs[s][0], err);
        if (!(ctx = ctx_make(2, &t, LUTHIER_AUTO_RULES))) continue;
        for (f = 0; f < 2; f++)
            for (i = 0; i < luthier_kernels_count(fams[f]); i++) {
                luthier_kernel_info k;
                if (luthier_kernels_get(fams[f], i, &k) != LUTHIER_STATUS_OK ||
                    (k.required_cpu_features & luthier_cpu_features()) != k.required_cpu_features)
                    continue;
                if (k.kind == LUTHIER_KERNEL_HYBRID) conv_cluster_case(ctx, specs[s] + 1, fams[f], k.name, LUTHIER_CONV_IMPLICIT_GEMM);
                else {
                    conv_cluster_case(ctx, specs[s] + 1, fams[f], k.name, LUTHIER_CONV_IM2COL);
                    if (fams[f] == LUTHIER_KERNELS_F32) conv_cluster_case(ctx, specs[s] + 1, fams[f], k.name, LUTHIER_CONV_WINOGRAD_4X3);
                }
            }
        conv_cluster_qcase(ctx, specs[s] + 1);
        {
            const char *mixed[2] = {NULL, "4x4__scalar_hybrid"};
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            float w[4 * 4 * 9] = {0};
            memset(&d, 0, sizeof d);
            d.batch = 1; d.in_channels = d.out_channels = 4; d.in_h = d.in_w = 6; d.kernel_h = d.kernel_w = 3;
            d.algorithm = LUTHIER_CONV_IM2COL;
            d.kernel = "4x4__scalar";
            d.cluster_kernels = mixed;
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_INCOMPATIBLE && !cv &&
                      strstr(luthier_context_error(ctx), "kind"),
                  "a hybrid cluster kernel for an im2col layer: %s", luthier_context_error(ctx));
        }
        luthier_context_destroy(ctx);
    }
}
