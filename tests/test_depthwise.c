/* Depthwise convolution, every shape family against the naive reference (conv_check in
   test_conv.c: 1 thread, the default threads and a 2-cluster split, bit-identical across them):
   3x3 and 5x5 at stride 1 and 2 (the row kernels: AVX-512 3x3, NEON 3x3 and 5x5) and families
   that NEON runs pixel by pixel (stride 3, dilation 2, 7x7, 3x5), padding 0..2 on each side,
   widths 1..17, channel counts that are not multiples of 4 or 8, batch 1 and 2, with and
   without bias, accumulate, every activation, NHWC and NCHW; the row kernels' runs of 1..20
   interior pixels at each of their four families. Then the NaN/Inf contract, which
   routines are picked, and the NCHW <-> NHWC transposes of the layout edges against naive
   loops. The same tests run natively and under qemu (make test-neon).
   Included by test_main.c after test_conv.c. */

/* kernel_h, kernel_w, stride, dilation */
static const int dw_families[][4] = {{3, 3, 1, 1}, {3, 3, 2, 1}, {5, 5, 1, 1}, {5, 5, 2, 1},
                                     {3, 3, 3, 1}, {3, 3, 1, 2}, {7, 7, 1, 1}, {3, 5, 2, 1}};

static void dw_family_desc(luthier_conv2d_desc *d, int f, int i) {
    static const int widths[] = {1, 2, 3, 5, 7, 13, 17};
    static const int channels[] = {1, 3, 5, 12, 17, 35};
    const int *fam = dw_families[f];
    int64_t eff;
    memset(d, 0, sizeof *d);
    d->algorithm = LUTHIER_CONV_DEPTHWISE;
    d->batch = i % 4 == 3 ? 1 : 2;
    d->in_channels = d->out_channels = d->groups = channels[i % 6];
    d->in_w = widths[i % 7]; /* i = 0..41 meets every (width, channels) pair */
    d->in_h = 1 + (i * 5 + f) % 7;
    d->kernel_h = fam[0];
    d->kernel_w = fam[1];
    d->stride_w = fam[2];
    d->stride_h = i % 5 == 4 && fam[2] < 3 ? 3 - fam[2] : fam[2];
    d->dilation_h = d->dilation_w = fam[3];
    d->pad_left = i % 3;
    d->pad_right = (i / 3) % 3;
    d->pad_top = (i + f) % 3;
    d->pad_bottom = (i / 2 + f) % 3;
    eff = (d->kernel_h - 1) * d->dilation_h + 1;
    if (d->in_h + d->pad_top + d->pad_bottom < eff) d->in_h = eff - d->pad_top - d->pad_bottom;
    eff = (d->kernel_w - 1) * d->dilation_w + 1;
    if (d->in_w + d->pad_left + d->pad_right < eff) d->in_w = eff - d->pad_left - d->pad_right;
    d->layout = i % 5 == 2 ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
    d->activation = (luthier_activation)((i / 2 + f) % LUTHIER_ACTIVATION_COUNT);
    d->clamp_min = -0.5f;
    d->clamp_max = 0.75f;
    d->accumulate = i % 3 == 1;
}

static void test_conv_depthwise_families(void) {
    static const float ratios[3][2] = {{30, 70}, {50, 50}, {70, 30}};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    const int nfam = (int)(sizeof dw_families / sizeof dw_families[0]);
    int f, i, c, bad = 0;
    CHECK(nctx == 3, "3 contexts");
    for (f = 0; f < nfam && !bad; f++) {
        const int trials = f < 4 || !T.quick ? 42 : 14; /* the row kernels' families in full */
        for (i = 0; i < trials && !bad; i++) {
            luthier_conv2d_desc d;
            char what[200];
            dw_family_desc(&d, f, i);
            snprintf(what, sizeof what,
                     "depthwise %lldx%lld s%lld,%lld d%lld n%lld C%lld %lldx%lld p%lld,%lld,%lld,%lld %s act%d "
                     "acc%d bias%d",
                     (long long)d.kernel_h, (long long)d.kernel_w, (long long)d.stride_h, (long long)d.stride_w,
                     (long long)d.dilation_h, (long long)d.batch, (long long)d.in_channels, (long long)d.in_h,
                     (long long)d.in_w, (long long)d.pad_top, (long long)d.pad_left, (long long)d.pad_bottom,
                     (long long)d.pad_right, d.layout ? "nchw" : "nhwc", (int)d.activation, d.accumulate,
                     i % 2 == 0);
            bad += conv_check(ctxs, nctx, &d, i % 2 == 0, ratios[i % 3], what);
        }
    }
    CHECK(bad == 0, "depthwise family cases wrong");
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* The row kernels' runs of interior pixels (NEON: groups of 8 pixels for 3x3, 4 for 5x5, then
   the rest in groups of 4, 2 and 1): at each of the four kernel / stride families, runs of 1..20
   interior pixels (every group count and remainder), channel counts with and without a partial
   chunk, padding on either side, with and without bias, clamp (RELU6, CLAMP) and accumulate, on
   every context (1 thread, the default threads, 2 clusters: runs cut where the split falls). */
static void test_conv_depthwise_rows(void) {
    static const int channels[] = {13, 8, 20, 5};
    static const luthier_activation acts[] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU6,
                                              LUTHIER_ACTIVATION_CLAMP};
    static const float ratios[2] = {40, 60};
    luthier_context *ctxs[3];
    const int nctx = conv_contexts(ctxs);
    int f, t, c, bad = 0;
    for (f = 0; f < 4 && !bad; f++)
        for (t = 0; t < 20 && !bad; t++) {
            luthier_conv2d_desc d;
            char what[160];
            memset(&d, 0, sizeof d);
            d.algorithm = LUTHIER_CONV_DEPTHWISE;
            d.batch = 1;
            d.in_channels = d.out_channels = d.groups = channels[t % 4];
            d.kernel_h = d.kernel_w = dw_families[f][0];
            d.stride_h = d.stride_w = dw_families[f][2];
            d.dilation_h = d.dilation_w = 1;
            d.in_h = d.kernel_h + 1;
            d.in_w = d.kernel_w + t * d.stride_w; /* t + 1 interior pixels (t with an odd pad at stride 2) */
            d.pad_left = t % 3;
            d.pad_right = (t / 3) % 2;
            d.pad_top = t % 2;
            d.activation = acts[t % 3];
            d.clamp_min = -0.5f;
            d.clamp_max = 0.75f;
            d.accumulate = (t / 2) % 2;
            snprintf(what, sizeof what, "depthwise rows %lldx%lld s%lld C%lld %lldx%lld p%lld,%lld,%lld act%d acc%d",
                     (long long)d.kernel_h, (long long)d.kernel_w, (long long)d.stride_w, (long long)d.in_channels,
                     (long long)d.in_h, (long long)d.in_w, (long long)d.pad_top, (long long)d.pad_left,
                     (long long)d.pad_right, (int)d.activation, d.accumulate);
            bad += conv_check(ctxs, nctx, &d, t % 5 != 4, ratios, what);
        }
    CHECK(bad == 0, "depthwise row kernel cases wrong");
    for (c = 0; c < nctx; c++) luthier_context_destroy(ctxs[c]);
}

/* The NaN/Inf contract of every depthwise path (NUMERICS in luthier.h): taps in the padding are
   left out (an Inf weight there gives no NaN); a NaN in the window stays NaN, with or without an
   activation, as in PyTorch. */
static void test_conv_depthwise_nan(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    int f, a, bad = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 2;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    for (f = 0; f < 4; f++)
        for (a = 0; a < 2; a++) {
            const int K = dw_families[f][0], S = dw_families[f][2], C = 13, H = 9, W = 11, P = 2;
            const int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            luthier__dw_pixel_fn px;
            luthier__dw_rows_fn rows;
            float *in = (float *)test_alloc((size_t)(H * W * C) * sizeof(float));
            float *w = (float *)test_alloc((size_t)(C * K * K) * sizeof(float));
            float *out = (float *)test_alloc((size_t)(OH * OW * C) * sizeof(float));
            const char *impl;
            int64_t oy, ox, ch, ky, kx;
            memset(&d, 0, sizeof d);
            d.algorithm = LUTHIER_CONV_DEPTHWISE;
            d.batch = 1;
            d.in_channels = d.out_channels = d.groups = C;
            d.in_h = H;
            d.in_w = W;
            d.kernel_h = d.kernel_w = K;
            d.stride_h = d.stride_w = S;
            d.dilation_h = d.dilation_w = 1;
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = P;
            d.activation = a ? LUTHIER_ACTIVATION_RELU6 : LUTHIER_ACTIVATION_NONE;
            impl = luthier__isa_name(luthier__dw_pick(ctx->cpu_features, &d, &px, &rows));
            test_fill(in, (size_t)(H * W * C));
            test_fill(w, (size_t)(C * K * K));
            for (ch = 0; ch < C; ch++) {
                w[ch * K * K] = INFINITY;                    /* tap (0, 0) */
                in[((size_t)4 * W + 5) * C + ch] = NAN;      /* pixel (4, 5) */
            }
            for (oy = 0; oy < OH * OW * C; oy++) out[oy] = test_sentinel();
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "create");
            CHECK(cv && luthier_conv2d_run(ctx, cv, in, out) == LUTHIER_STATUS_OK, "run");
            luthier_conv2d_destroy(cv);
            for (oy = 0; oy < OH; oy++)
                for (ox = 0; ox < OW; ox++)
                    for (ch = 0; ch < C; ch++) {
                        const int64_t iy = oy * S - P, ix = ox * S - P;
                        const float v = out[(oy * OW + ox) * C + ch];
                        const int has_nan = iy <= 4 && 4 < iy + K && ix <= 5 && 5 < ix + K;
                        double s = 0;
                        int ok;
                        if (has_nan) {
                            ok = v != v;
                        } else if (iy < 0 || ix < 0) { /* the Inf tap is in the padding */
                            for (ky = 0; ky < K; ky++)
                                for (kx = 0; kx < K; kx++)
                                    if (iy + ky >= 0 && iy + ky < H && ix + kx >= 0 && ix + kx < W)
                                        s += (double)in[((iy + ky) * W + ix + kx) * C + ch] * w[(ch * K + ky) * K + kx];
                            if (a) s = s < 0 ? 0 : s > 6 ? 6 : s;
                            ok = fabs((double)v - s) <= 1e-5 * (1 + fabs(s));
                        } else { /* Inf times a nonzero input dominates */
                            const float x0 = in[(iy * W + ix) * C + ch];
                            ok = x0 == 0.0f || (a ? v == (x0 > 0 ? 6.0f : 0.0f) : v == (x0 > 0 ? INFINITY : -INFINITY));
                        }
                        if (!ok && bad++ < 3)
                            CHECK(0, "%s %dx%d s%d act%d: out(%lld, %lld, %lld) = %g", impl, K, K, S, a, (long long)oy,
                                  (long long)ox, (long long)ch, (double)v);
                    }
            free(in);
            free(w);
            free(out);
        }
    CHECK(bad == 0, "NaN/Inf cases wrong");
    luthier_context_destroy(ctx);
}

/* Which depthwise routines a layer gets: on AArch64 NEON everywhere, the row kernel for 3x3 and
   5x5 at stride 1 and 2 with dilation 1; on x86 the AVX-512 row kernel for 3x3 (dilation 1). On
   fp16 activations the segment kernels take the NEON row kernels' families. */
static void test_conv_depthwise_pick(void) {
    const unsigned feat = luthier_cpu_features();
    int f;
    for (f = 0; f < (int)(sizeof dw_families / sizeof dw_families[0]); f++) {
        luthier_conv2d_desc d;
        luthier__dw_pixel_fn px;
        luthier__dw_rows_fn rows;
        const char *want = NULL;
        char impl[32];
        luthier__isa isa;
        memset(&d, 0, sizeof d);
        d.kernel_h = dw_families[f][0];
        d.kernel_w = dw_families[f][1];
        d.stride_h = d.stride_w = dw_families[f][2];
        d.dilation_h = d.dilation_w = dw_families[f][3];
        isa = luthier__dw_pick(feat, &d, &px, &rows);
        snprintf(impl, sizeof impl, "%s%s", luthier__isa_name(isa), rows ? "_rows" : "");
        CHECK(px != NULL, "%s: no pixel routine", impl);
#if LUTHIER__SIMD_NEON
        want = f < 4 ? "neon_rows" : "neon";
        CHECK(px == luthier__dw_pixel_neon, "NEON pixel routine");
#elif LUTHIER__SIMD_X86
        if (feat & LUTHIER_CPU_AVX512F) want = f == 0 || f == 1 || f == 4 ? "avx512_rows" : "avx512";
        else if (feat & LUTHIER_CPU_AVX2_FMA) want = "avx2";
#endif
        if (!want) want = "scalar";
        CHECK(strcmp(impl, want) == 0, "family %d (%dx%d s%d d%d): picked %s, want %s", f, dw_families[f][0],
              dw_families[f][1], dw_families[f][2], dw_families[f][3], impl, want);
        CHECK(luthier__dw_h16_rows_fit(&d) == (f < 4), "family %d: fp16 segment kernels %d, want %d", f,
              luthier__dw_h16_rows_fit(&d), f < 4); /* (the NEON row kernels' families, on fp16 activations) */
    }
}

/* luthier__transpose_batches of fp32 NCHW to NHWC and back (the layout edges) against naive loops, odd
   sizes around the 4 x 4 and 8 x 8 blocks and the 64-wide blocking; nothing written past the
   end. Also luthier__transpose_tile on a sub-block of larger strides (the op_transpose tiles):
   only the block is written. x86: the SSE2 and the AVX2 blocks (features without and with
   AVX2). */
static void test_conv_layout_transpose(void) {
    static const size_t cs[] = {1, 3, 4, 5, 8, 17, 35, 70}, hws[] = {1, 2, 3, 4, 5, 7, 13, 17, 67, 130};
    size_t ic, ih, e;
    int bad = 0, fi;
    for (fi = 0; fi < 2; fi++) {
    const unsigned features = fi ? LUTHIER_CPU_AVX2_FMA : 0;
    for (ic = 0; ic < sizeof cs / sizeof cs[0]; ic++)
        for (ih = 0; ih < sizeof hws / sizeof hws[0]; ih++) {
            const size_t n = 2, c = cs[ic], hw = hws[ih], total = n * c * hw;
            float *src = (float *)test_alloc(total * sizeof(float));
            float *t = (float *)test_alloc((total + 4) * sizeof(float));
            float *back = (float *)test_alloc((total + 4) * sizeof(float));
            size_t b, ch, p;
            test_fill(src, total);
            for (e = 0; e < total + 4; e++) t[e] = back[e] = test_sentinel();
            luthier__transpose_batches(src, t, n, c, hw, sizeof(float), features);
            luthier__transpose_batches(t, back, n, hw, c, sizeof(float), features);
            for (b = 0; b < n; b++)
                for (ch = 0; ch < c; ch++)
                    for (p = 0; p < hw; p++) {
                        const size_t i = (b * c + ch) * hw + p, o = (b * hw + p) * c + ch;
                        if ((t[o] != src[i] || back[i] != src[i]) && bad++ < 3)
                            CHECK(0, "n%zu c%zu hw%zu: (%zu, %zu, %zu)", n, c, hw, b, ch, p);
                    }
            for (e = total; e < total + 4; e++)
                if ((!test_is_sentinel(t[e]) || !test_is_sentinel(back[e])) && bad++ < 3)
                    CHECK(0, "c%zu hw%zu: written past the end", c, hw);
            free(src);
            free(t);
            free(back);
        }
    {
        enum { XS = 41, YS = 37, NB = 30, NA = 35 };
        static float x[NB * XS], y[NA * YS];
        size_t nb, na, a;
        test_fill(x, sizeof x / sizeof x[0]);
        for (nb = 1; nb <= 25; nb += 3)
            for (na = 1; na <= NA - 1; na += 3) {
                for (e = 0; e < sizeof y / sizeof y[0]; e++) y[e] = test_sentinel();
                luthier__transpose_tile(x + 1 + 2 * XS, XS, y + 3 + YS, YS, nb, na, features);
                for (a = 0; a < NA; a++)
                    for (e = 0; e < YS; e++) {
                        const float v = y[a * YS + e];
                        const int in = a >= 1 && a < 1 + na && e >= 3 && e < 3 + nb;
                        const int ok = in ? v == x[(2 + e - 3) * XS + 1 + a - 1] : test_is_sentinel(v);
                        if (!ok && bad++ < 3) CHECK(0, "transpose_tile (features %#x) nb%zu na%zu: y(%zu, %zu)", features, nb, na, a, e);
                    }
            }
    }
    }
    CHECK(bad == 0, "transposes wrong");
}
