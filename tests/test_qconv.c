/* int8 convolution (luthier_qconv2d, luthier_int8.h): every algorithm (im2col, 1x1, depthwise,
   AUTO) bit-exact against a naive int64 convolution on random shapes (odd sizes, asymmetric
   padding, stride, dilation, groups, Cin = 3 stems, strided 1x1), zero points 0/128/255 for input
   and output, shared and per-channel requantization, ReLU/ReLU6 bounds, uint8/float/int32
   outputs, NHWC and NCHW; every int8 kernel for the GEMM algorithms, every depthwise routine
   (through contexts with CPU features disabled), 1 and 2 threads with ratios, the split over
   output channels (2 and 3 threads); bad arguments.
   Included by test_main.c after test_int8.c (q8_requant_model, q8_context, q8_expect). */

/* One random layer with its data. */
typedef struct qc_case {
    luthier_qconv2d_desc d;
    int64_t oh, ow;
    uint8_t *in;
    int8_t *w;
    int32_t *bias, *mult, *shift;
    float *wscale, *fbias;
    int extreme;
} qc_case;

static void qc_free(qc_case *c) {
    free(c->in); free(c->w); free(c->bias); free(c->mult); free(c->shift); free(c->wscale); free(c->fbias);
}

static int qc_pick_zp(void) {
    static const int zps[] = {0, 128, 255};
    return test_rand_int(0, 2) ? zps[test_rand_int(0, 2)] : test_rand_int(0, 255);
}

static void qc_fill(qc_case *c);

/* A random layer for algo (AUTO: any); max_c bounds the channel counts, extra_hw is added to the
   input size (large layers: several blocks of output pixels). */
static void qc_random(qc_case *c, luthier_conv_algorithm algo, int max_c, int extra_hw) {
    luthier_qconv2d_desc *d = &c->d;
    int64_t eff_h, eff_w, g, cin, cout;
    memset(c, 0, sizeof *c);
    d->batch = test_rand_int(1, 2);
    d->algorithm = algo;
    d->stride_h = test_rand_int(1, 2);
    d->stride_w = test_rand_int(0, 3) == 0 ? 3 - d->stride_h : d->stride_h;
    d->dilation_h = test_rand_int(0, 3) == 0 ? 2 : 1;
    d->dilation_w = test_rand_int(0, 3) == 0 ? 2 : 1;
    if (algo == LUTHIER_CONV_DEPTHWISE) {
        static const int ks[] = {3, 3, 3, 5, 1, 7, 2};
        cin = cout = g = test_rand_int(1, max_c);
        d->kernel_h = ks[test_rand_int(0, 6)];
        d->kernel_w = test_rand_int(0, 3) == 0 ? ks[test_rand_int(0, 6)] : d->kernel_h;
    } else if (algo == LUTHIER_CONV_1X1) {
        g = test_rand_int(0, 3) == 0 ? test_rand_int(2, 3) : 1;
        cin = g * test_rand_int(1, max_c / (int)g + 1);
        cout = g * test_rand_int(1, 2 * max_c / (int)g + 1);
        d->kernel_h = d->kernel_w = 1;
    } else {
        g = test_rand_int(0, 3) == 0 ? test_rand_int(2, 3) : 1;
        cin = test_rand_int(0, 4) == 0 ? 3 * g : g * test_rand_int(1, max_c / (int)g + 1); /* stems: Cin = 3 */
        cout = g * test_rand_int(1, 2 * max_c / (int)g + 1);
        d->kernel_h = test_rand_int(1, 5);
        d->kernel_w = test_rand_int(0, 2) == 0 ? test_rand_int(1, 5) : d->kernel_h;
    }
    d->in_channels = cin;
    d->out_channels = cout;
    d->groups = g;
    if (algo != LUTHIER_CONV_1X1) {
        d->pad_top = test_rand_int(0, 2);
        d->pad_bottom = test_rand_int(0, 2);
        d->pad_left = test_rand_int(0, 2);
        d->pad_right = test_rand_int(0, 3);
    }
    eff_h = d->dilation_h * (d->kernel_h - 1) + 1;
    eff_w = d->dilation_w * (d->kernel_w - 1) + 1;
    d->in_h = eff_h + test_rand_int(0, 9) + extra_hw - d->pad_top - d->pad_bottom;
    d->in_w = eff_w + test_rand_int(0, 9) + extra_hw - d->pad_left - d->pad_right;
    if (d->in_h < 1) d->in_h = 1;
    if (d->in_w < 1) d->in_w = 1;
    if (d->in_h + d->pad_top + d->pad_bottom < eff_h) d->pad_bottom = eff_h - d->in_h - d->pad_top;
    if (d->in_w + d->pad_left + d->pad_right < eff_w) d->pad_right = eff_w - d->in_w - d->pad_left;
    d->layout = test_rand_int(0, 2) == 0 ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
    qc_fill(c);
}

/* Zero points, output kind and the data (inputs, weights, bias, requantization, scales,
   activation) of the layer whose shape c->d holds; c->oh, c->ow are computed here. */
static void qc_fill(qc_case *c) {
    luthier_qconv2d_desc *d = &c->d;
    const int64_t g = d->groups ? d->groups : 1, cin = d->in_channels, cout = d->out_channels;
    const int64_t sh = d->stride_h ? d->stride_h : 1, sw = d->stride_w ? d->stride_w : 1;
    const int64_t eff_h = (d->dilation_h ? d->dilation_h : 1) * (d->kernel_h - 1) + 1;
    const int64_t eff_w = (d->dilation_w ? d->dilation_w : 1) * (d->kernel_w - 1) + 1;
    int64_t kdim, e;
    size_t in_n, w_n, j;
    c->oh = (d->in_h + d->pad_top + d->pad_bottom - eff_h) / sh + 1;
    c->ow = (d->in_w + d->pad_left + d->pad_right - eff_w) / sw + 1;
    d->input_zero_point = qc_pick_zp();
    d->output = (luthier_qoutput)(test_rand_int(0, 3) == 0 ? test_rand_int(1, 2) : 0);
    d->output_zero_point = qc_pick_zp();
    /* data */
    c->extreme = test_rand_int(0, 7) == 0;
    kdim = d->kernel_h * d->kernel_w * (cin / g);
    in_n = (size_t)(d->batch * cin * d->in_h * d->in_w);
    w_n = (size_t)(cout * kdim);
    c->in = (uint8_t *)test_alloc(in_n);
    c->w = (int8_t *)test_alloc(w_n);
    c->bias = (int32_t *)test_alloc((size_t)cout * 4);
    c->mult = (int32_t *)test_alloc((size_t)cout * 4);
    c->shift = (int32_t *)test_alloc((size_t)cout * 4);
    c->wscale = (float *)test_alloc((size_t)cout * 4);
    c->fbias = (float *)test_alloc((size_t)cout * 4);
    for (j = 0; j < in_n; j++) c->in[j] = (uint8_t)(c->extreme ? 255 * test_rand_int(0, 1) : test_rand_int(0, 255));
    for (j = 0; j < w_n; j++) c->w[j] = (int8_t)(c->extreme ? (test_rand_int(0, 1) ? 127 : -128) : test_rand_int(-127, 127));
    for (e = 0; e < cout; e++) {
        const double real = 0.01 / sqrt((double)kdim) * (0.3 + (double)test_rand_int(0, 100) / 60.0);
        c->bias[e] = test_rand_int(-20000, 20000);
        luthier_quantize_multiplier(test_rand_int(0, 15) == 0 ? 0.9 : real, &c->mult[e], &c->shift[e]);
        c->wscale[e] = 0.001f * (float)test_rand_int(1, 100);
        c->fbias[e] = (float)test_rand_int(-100, 100) / 10.0f;
    }
    if (test_rand_int(0, 1)) {
        d->multipliers = c->mult;
        d->shifts = c->shift;
    } else {
        d->multiplier = c->mult[0];
        d->shift = c->shift[0];
    }
    if (test_rand_int(0, 2)) {
        static const luthier_activation acts[3] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU,
                                                   LUTHIER_ACTIVATION_RELU6};
        const luthier_activation act = acts[test_rand_int(0, 2)];
        if (d->output == LUTHIER_QOUTPUT_UINT8)
            luthier_quantize_activation(act, 0, 0, 0.04f, d->output_zero_point, &d->output_min, &d->output_max);
        else if (d->output == LUTHIER_QOUTPUT_FLOAT)
            d->activation = act;
    }
    d->input_scale = 0.02f;
    d->weight_scale = c->wscale[0];
    if (test_rand_int(0, 1)) d->weight_scales = c->wscale;
    if (test_rand_int(0, 1)) d->float_bias = c->fbias;
}

/* The output of c by definition: int64 sums with padding taps skipped (they read the zero
   point, i.e. contribute 0), then the output stage; stored in c->d.layout. */
static void qc_reference(const qc_case *c, int has_bias, void *out) {
    const luthier_qconv2d_desc *d = &c->d;
    const int64_t g = d->groups ? d->groups : 1, cig = d->in_channels / g, cog = d->out_channels / g;
    const int64_t sh = d->stride_h ? d->stride_h : 1, sw = d->stride_w ? d->stride_w : 1;
    const int64_t dh = d->dilation_h ? d->dilation_h : 1, dw = d->dilation_w ? d->dilation_w : 1;
    const int nchw = d->layout == LUTHIER_LAYOUT_NCHW;
    const int32_t qmin = d->output_min || d->output_max ? d->output_min : 0;
    const int32_t qmax = d->output_min || d->output_max ? d->output_max : 255;
    int64_t n, co, oy, ox, ci, kh, kw;
    for (n = 0; n < d->batch; n++)
        for (co = 0; co < d->out_channels; co++)
            for (oy = 0; oy < c->oh; oy++)
                for (ox = 0; ox < c->ow; ox++) {
                    const int64_t gi = co / cog;
                    const size_t o = nchw ? (size_t)(((n * d->out_channels + co) * c->oh + oy) * c->ow + ox)
                                          : (size_t)(((n * c->oh + oy) * c->ow + ox) * d->out_channels + co);
                    int64_t acc = has_bias ? c->bias[co] : 0;
                    int32_t a32;
                    for (ci = 0; ci < cig; ci++)
                        for (kh = 0; kh < d->kernel_h; kh++)
                            for (kw = 0; kw < d->kernel_w; kw++) {
                                const int64_t iy = oy * sh - d->pad_top + kh * dh, ix = ox * sw - d->pad_left + kw * dw;
                                const int64_t cc = gi * cig + ci;
                                size_t i;
                                if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) continue;
                                i = nchw ? (size_t)(((n * d->in_channels + cc) * d->in_h + iy) * d->in_w + ix)
                                         : (size_t)(((n * d->in_h + iy) * d->in_w + ix) * d->in_channels + cc);
                                acc += ((int64_t)c->in[i] - d->input_zero_point) *
                                       c->w[((co * cig + ci) * d->kernel_h + kh) * d->kernel_w + kw];
                            }
                    a32 = (int32_t)acc;
                    if (d->output == LUTHIER_QOUTPUT_UINT8) {
                        const int32_t m = d->multipliers ? d->multipliers[co] : d->multiplier;
                        const int32_t s = d->shifts ? d->shifts[co] : d->shift;
                        ((uint8_t *)out)[o] = (uint8_t)q8_requant_model(a32, m, s, d->output_zero_point, qmin, qmax);
                    } else if (d->output == LUTHIER_QOUTPUT_FLOAT) {
                        const float ws = d->weight_scales ? d->weight_scales[co] : d->weight_scale;
                        float v = fmaf((float)a32, d->input_scale * ws, d->float_bias ? d->float_bias[co] : 0.0f);
                        if (d->activation != LUTHIER_ACTIVATION_NONE && v < 0.0f) v = 0.0f;
                        if (d->activation == LUTHIER_ACTIVATION_RELU6 && v > 6.0f) v = 6.0f;
                        ((float *)out)[o] = v;
                    } else {
                        ((int32_t *)out)[o] = a32;
                    }
                }
}

static const char *qc_describe(const qc_case *c, char *buf, size_t size) {
    const luthier_qconv2d_desc *d = &c->d;
    snprintf(buf, size,
             "%s n%lld %lldx%lldx%lld -> %lld k%lldx%lld s%lld,%lld d%lld,%lld pad %lld,%lld,%lld,%lld g%lld %s "
             "za %d out %d zo %d [%d,%d] percol %d extreme %d",
             luthier_conv_algorithm_name(d->algorithm), (long long)d->batch, (long long)d->in_channels,
             (long long)d->in_h, (long long)d->in_w, (long long)d->out_channels, (long long)d->kernel_h,
             (long long)d->kernel_w, (long long)d->stride_h, (long long)d->stride_w, (long long)d->dilation_h,
             (long long)d->dilation_w, (long long)d->pad_top, (long long)d->pad_left, (long long)d->pad_bottom,
             (long long)d->pad_right, (long long)d->groups, d->layout == LUTHIER_LAYOUT_NCHW ? "NCHW" : "NHWC",
             (int)d->input_zero_point, (int)d->output, (int)d->output_zero_point, (int)d->output_min,
             (int)d->output_max, d->multipliers != NULL, c->extreme);
    return buf;
}

/* Creates c's layer on cctx and runs it on ctx (kernel: NULL or a name; the same contexts:
   sometimes the one-shot call instead), compares bit for bit with the reference and checks a
   canary past the output. Returns the number of wrong elements (-1: an error status). */
static int qc_check_on(luthier_context *cctx, luthier_context *ctx, qc_case *c, const char *kernel) {
    const size_t elems = (size_t)(c->d.batch * c->d.out_channels * c->oh * c->ow);
    const size_t esz = c->d.output == LUTHIER_QOUTPUT_UINT8 ? 1 : 4, bytes = elems * esz;
    const int has_bias = test_rand_int(0, 3) != 0;
    unsigned char *got = (unsigned char *)test_alloc(bytes + 16), *want = (unsigned char *)test_alloc(bytes + 1);
    luthier_qconv2d_layer *L = NULL;
    luthier_conv2d_info info;
    luthier_status s;
    char buf[400];
    int bad = 0;
    size_t e, first = 0;
    c->d.kernel = kernel;
    memset(got, 0xa5, bytes + 16);
    qc_reference(c, has_bias, want);
    if (test_rand_int(0, 3) == 0 && cctx == ctx) {
        s = luthier_qconv2d(ctx, &c->d, c->in, c->w, has_bias ? c->bias : NULL, got);
    } else if ((s = luthier_qconv2d_create(cctx, &c->d, c->w, has_bias ? c->bias : NULL, &L)) == LUTHIER_STATUS_OK) {
        CHECK(luthier_qconv2d_get_info(L, &info) == LUTHIER_STATUS_OK && info.out_h == c->oh && info.out_w == c->ow &&
                  (c->d.algorithm == LUTHIER_CONV_AUTO || info.algorithm == c->d.algorithm),
              "info of %s", qc_describe(c, buf, sizeof buf));
        s = luthier_qconv2d_run(ctx, L, c->in, got);
        luthier_qconv2d_destroy(L);
    }
    if (s != LUTHIER_STATUS_OK) {
        printf("    %s: %s: %s\n", qc_describe(c, buf, sizeof buf), luthier_status_string(s),
               luthier_context_error(L ? ctx : cctx));
        free(got);
        free(want);
        return -1;
    }
    for (e = 0; e < elems; e++)
        if (memcmp(got + e * esz, want + e * esz, esz) != 0 && !bad++) first = e;
    for (e = bytes; e < bytes + 16; e++) bad += got[e] != 0xa5;
    if (bad)
        printf("    %s (kernel %s, bias %d): %d wrong, first element %zu\n", qc_describe(c, buf, sizeof buf),
               kernel ? kernel : "default", has_bias, bad, first);
    free(got);
    free(want);
    return bad;
}

/* qc_check_on with one context. */
static int qc_check(luthier_context *ctx, qc_case *c, const char *kernel) { return qc_check_on(ctx, ctx, c, kernel); }

/* trials random layers of algo on ctx; the GEMM algorithms cycle through the available kernels. */
static int qc_sweep(luthier_context *ctx, luthier_conv_algorithm algo, int trials, int max_c) {
    int t, failures = 0, idx = 0;
    for (t = 0; t < trials; t++) {
        const char *kernel = NULL;
        qc_case c;
        qc_random(&c, algo, t == trials - 1 && !T.quick ? 2 * max_c : max_c, t == trials - 1 && !T.quick ? 24 : 0);
        if (algo != LUTHIER_CONV_DEPTHWISE && t % 3 != 0) { /* every available kernel in turn */
            int tries = 0;
            while (tries++ < LUTHIER__NUM_QKERNELS && !q8_kernel_available(&luthier__qkernels[idx % LUTHIER__NUM_QKERNELS]))
                idx++;
            kernel = luthier__qkernels[idx++ % LUTHIER__NUM_QKERNELS].name;
        }
        failures += qc_check(ctx, &c, kernel) != 0;
        qc_free(&c);
    }
    return failures;
}

/* trials random layers of one GEMM algorithm on a one-thread context. */
static void qc_sweep_check(luthier_conv_algorithm algo, int trials, int max_c) {
    luthier_context *ctx = q8_context(0, 0);
    const int bad = qc_sweep(ctx, algo, trials, max_c);
    CHECK(bad == 0, "%d of %d %s layers wrong", bad, trials, luthier_conv_algorithm_name(algo));
    luthier_context_destroy(ctx);
}

static void test_int8_conv_im2col(void) { qc_sweep_check(LUTHIER_CONV_IM2COL, T.quick ? 16 : 150, 24); }

static void test_int8_conv_1x1(void) { qc_sweep_check(LUTHIER_CONV_1X1, T.quick ? 12 : 80, 70); }

/* Every depthwise routine: contexts without AVX-512, without AVX2, without dotprod and without
   NEON. */
static void test_int8_conv_depthwise(void) {
    static const unsigned masks[] = {0, LUTHIER_CPU_AVX512VNNI, LUTHIER_CPU_AVX512VNNI | LUTHIER_CPU_AVX2_FMA,
                                     LUTHIER_CPU_DOTPROD, LUTHIER_CPU_NEON};
    const int trials = T.quick ? 10 : 60;
    size_t i;
    for (i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        luthier_context *ctx = NULL;
        luthier_context_desc cd;
        int bad;
        memset(&cd, 0, sizeof cd);
        cd.disabled_cpu_features = masks[i];
        cd.num_threads = 1;
        if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) continue;
        bad = qc_sweep(ctx, LUTHIER_CONV_DEPTHWISE, trials, 40);
        CHECK(bad == 0, "features without %#x: %d of %d depthwise layers wrong", masks[i], bad, trials);
        luthier_context_destroy(ctx);
    }
}

/* The depthwise ISA a layer created on cctx reports on AArch64: the SDOT routine (neon_dot)
   when the context has dotprod and the build has the SDOT code, else the NEON one; NULL: not
   checked (other targets). */
static const char *qc_dw_isa_wanted(const luthier_context *cctx) {
#if LUTHIER__SIMD_NEON && defined(LUTHIER__HAVE_QNEON_DOT)
    return (cctx->cpu_features & LUTHIER_CPU_DOTPROD) ? "neon_dot" : "neon";
#elif LUTHIER__SIMD_NEON
    (void)cctx;
    return "neon";
#else
    (void)cctx;
    return NULL;
#endif
}

/* A depthwise layer's shape: channels, input, kernel, stride, dilation, padding. */
typedef struct qc_dw_shape {
    int c, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} qc_dw_shape;

/* c's desc: the depthwise layer of shape s with `channels` channels and batch `batch`. */
static void qc_dw_desc(qc_case *c, const qc_dw_shape *s, int channels, int batch) {
    c->d.batch = batch;
    c->d.in_channels = c->d.out_channels = c->d.groups = channels;
    c->d.in_h = s->h, c->d.in_w = s->w, c->d.kernel_h = s->kh, c->d.kernel_w = s->kw;
    c->d.stride_h = s->sh, c->d.stride_w = s->sw, c->d.dilation_h = s->dh, c->d.dilation_w = s->dw;
    c->d.pad_top = s->pt, c->d.pad_left = s->pl, c->d.pad_bottom = s->pb, c->d.pad_right = s->pr;
    c->d.algorithm = LUTHIER_CONV_DEPTHWISE;
}

/* Depthwise layers across the 16-channel blocks of the NEON routines: every channel count
   1..67 (--quick: 1, 5, 15, 16, 17, 31, 32, 33, 48, 67) on every shape of the list (3x3, 5x5,
   7x7, 1x3 and 3x1 kernels, strides 1 and 2, padding, dilation 2), batch 1 or 2, the three
   output types in turn (NHWC; NCHW now and then), on one thread, three threads, and one thread
   without dotprod (x86: without AVX-512 VNNI, the AVX2 routine), also across those contexts
   (packed on one, run on another). Each layer reports the ISA of the routine it runs: on
   AArch64 neon_dot exactly when the creating and running context have dotprod. */
static void test_int8_conv_depthwise_channels(void) {
    static const qc_dw_shape shapes[] = { /* (channels: 1..67, set below) */
        {0, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {0, 7, 8, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1}, {0, 6, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
        {0, 8, 9, 5, 5, 2, 2, 1, 1, 2, 1, 1, 2}, {0, 7, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, {0, 7, 7, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3},
        {0, 4, 9, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1}, {0, 7, 5, 3, 1, 1, 2, 1, 1, 1, 0, 1, 0}};
    static const int quick_c[] = {1, 5, 15, 16, 17, 31, 32, 33, 48, 67};
    static const int three[1] = {3};
    const int nc = T.quick ? (int)(sizeof quick_c / sizeof quick_c[0]) : 67, nsh = (int)(sizeof shapes / sizeof shapes[0]);
    luthier_context *ctx[3];
    luthier_context_desc cd;
    int bad = 0, runs = 0, isa_bad = 0, i, sh, k;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    cd.disabled_cpu_features = LUTHIER_CPU_DOTPROD | LUTHIER_CPU_AVX512VNNI;
    ctx[0] = q8_context(0, 0);
    ctx[1] = threads_context(1, three);
    ctx[2] = NULL;
    if (luthier_context_create(&cd, &ctx[2]) != LUTHIER_STATUS_OK || !ctx[1]) {
        CHECK(0, "cannot create the contexts");
        return;
    }
    if (qc_dw_isa_wanted(ctx[0]))
        printf("    cpu %s dotprod; depthwise isa: %s, without dotprod %s\n",
               (luthier_cpu_features() & LUTHIER_CPU_DOTPROD) ? "with" : "without", qc_dw_isa_wanted(ctx[0]),
               qc_dw_isa_wanted(ctx[2]));
    for (i = 0; i < nc; i++)
        for (sh = 0; sh < nsh; sh++) {
            const int ch = T.quick ? quick_c[i] : i + 1, v = ch + sh;
            qc_case c;
            memset(&c, 0, sizeof c);
            qc_dw_desc(&c, &shapes[sh], ch, 1 + v / 3 % 2);
            c.d.layout = v % 5 == 4 ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
            qc_fill(&c);
            if (c.d.output != (luthier_qoutput)(v % 3)) { /* the output type in turn, no clamp from another one */
                c.d.output = (luthier_qoutput)(v % 3);
                c.d.activation = LUTHIER_ACTIVATION_NONE;
                c.d.output_min = c.d.output_max = 0;
            }
            for (k = 0; k < 3; k++) {
                luthier_qconv2d_layer *L = NULL;
                luthier_conv2d_info info;
                const char *want = qc_dw_isa_wanted(ctx[k]);
                memset(&info, 0, sizeof info);
                if (luthier_qconv2d_create(ctx[k], &c.d, c.w, c.bias, &L) != LUTHIER_STATUS_OK ||
                    luthier_qconv2d_get_info(L, &info) != LUTHIER_STATUS_OK || (want && strcmp(info.isa, want) != 0)) {
                    if (!isa_bad++)
                        printf("    %d channels, shape %d: isa %s, want %s (%s)\n", ch, sh, info.isa ? info.isa : "-",
                               want ? want : "-", luthier_context_error(ctx[k]));
                }
                luthier_qconv2d_destroy(L);
                bad += qc_check(ctx[k], &c, NULL) != 0;
                runs++;
            }
            bad += qc_check_on(ctx[v % 2 ? 0 : 2], ctx[v % 2 ? 2 : 0], &c, NULL) != 0; /* packed with(out) SDOT blocks */
            runs++;
            qc_free(&c);
        }
    CHECK(bad == 0, "%d of %d depthwise runs wrong", bad, runs);
    CHECK(isa_bad == 0, "%d depthwise layers report another ISA", isa_bad);
    for (k = 0; k < 3; k++) luthier_context_destroy(ctx[k]);
}

/* The paths of the AVX-512 VNNI depthwise row kernel, each on purpose (on other CPUs the same
   layers check the pixel routines): flat rows (C % 16 == 0 < C % 64: one entry, 3, 9), 64-channel
   slices, a partial last chunk and C % 16 != 0, pixel segments, row pairs (stride_h 1) with an
   odd height, column phases (stride_w 2), two kernel-row groups (kernel_h 5, 7), dilations; and
   the output stages: the 32-bit one with the tie correction, without it (qmin >= zo), with a
   shift of 0, without zo folded (large shifts), the 64-bit fallback (huge biases, so the
   accumulator may wrap), float and int32. Every layer on 1 and 2 threads (1 with --quick), both
   layouts; on an AVX-512 VNNI context the test also checks that every path was taken. */
static void test_int8_conv_depthwise_rows(void) {
    static const qc_dw_shape shapes[] = {
        {32, 9, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {144, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        {96, 8, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},   {192, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        {200, 5, 7, 3, 3, 2, 2, 1, 1, 0, 1, 2, 0},   {5, 6, 11, 3, 3, 1, 2, 1, 1, 1, 0, 1, 2},
        {48, 9, 9, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},    {64, 10, 12, 7, 3, 1, 1, 2, 1, 3, 1, 3, 1},
        {80, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    {16, 5, 30, 2, 4, 2, 1, 1, 2, 0, 1, 1, 2},
        {960, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {40, 13, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    };
    enum { V_PLAIN, V_RELU, V_SHIFT0, V_WRAP, V_FLOAT, V_INT32, V_BIGSHIFT, V_EXTREME, V_COUNT };
    static const int two[2] = {1, 1};
    luthier_context *ctx[2];
    const unsigned f512 = LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX512VNNI;
    int seen[8], bad = 0, runs = 0, i, sh, v, x;
    memset(seen, 0, sizeof seen);
    ctx[0] = q8_context(0, 0);
    ctx[1] = T.quick ? NULL : threads_context(2, two);
    for (sh = 0; sh < (int)(sizeof shapes / sizeof shapes[0]); sh++)
        for (v = 0; v < V_COUNT; v++) {
            qc_case c;
            luthier_qconv2d_layer *L = NULL;
            int64_t e;
            memset(&c, 0, sizeof c);
            qc_dw_desc(&c, &shapes[sh], shapes[sh].c, 1 + (sh + v) % 2);
            c.d.layout = v % 3 == 2 ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
            qc_fill(&c);
            c.d.activation = LUTHIER_ACTIVATION_NONE;
            c.d.output_min = c.d.output_max = 0;
            c.d.output = v == V_FLOAT ? LUTHIER_QOUTPUT_FLOAT : v == V_INT32 ? LUTHIER_QOUTPUT_INT32 : LUTHIER_QOUTPUT_UINT8;
            c.d.multipliers = c.mult;
            c.d.shifts = c.shift;
            for (e = 0; e < c.d.out_channels; e++) {
                const double real = v == V_BIGSHIFT ? 3e-9 * (1 + e % 5) : 0.005 * (0.3 + (double)(e % 7) / 5.0);
                /* V_WRAP: the huge biases of some channels send the layer to the 64-bit stage, where
                   the others (shift 0 among them) stay in range */
                luthier_quantize_multiplier((v == V_SHIFT0 || v == V_WRAP) && e % 3 == 1 ? 0.7 : real, &c.mult[e],
                                            &c.shift[e]);
                if (v == V_WRAP && e % 4 == 2) c.bias[e] = (e % 8 == 2 ? 1 : -1) * (int32_t)(2147483647 - test_rand_int(0, 3000));
            }
            if (v == V_RELU) { /* qmin >= zo: no tie correction */
                c.d.output_zero_point = test_rand_int(0, 120);
                luthier_quantize_activation(LUTHIER_ACTIVATION_RELU6, 0, 0, 0.04f, c.d.output_zero_point,
                                            &c.d.output_min, &c.d.output_max);
            }
            if (v == V_FLOAT) c.d.activation = LUTHIER_ACTIVATION_RELU6;
            if (v == V_EXTREME) {
                const size_t in_n = (size_t)(c.d.batch * c.d.in_channels * c.d.in_h * c.d.in_w);
                const size_t w_n = (size_t)(c.d.out_channels * c.d.kernel_h * c.d.kernel_w);
                size_t j;
                for (j = 0; j < in_n; j++) c.in[j] = (uint8_t)(255 * test_rand_int(0, 1));
                for (j = 0; j < w_n; j++) c.w[j] = (int8_t)(test_rand_int(0, 1) ? 127 : -128);
                c.d.output_min = 1;
                c.d.output_max = 254;
            }
            if (luthier_qconv2d_create(ctx[0], &c.d, c.w, c.bias, &L) == LUTHIER_STATUS_OK) { /* the path taken */
                if (L->dw_tab && (ctx[0]->cpu_features & f512) == f512) {
                    seen[0] |= L->dw_flat && L->dw_ne > 1;
                    seen[1] |= L->dw_slice > 1;
                    seen[2] |= L->dw_seg > 1;
                    seen[3] |= L->dw_pair;
                    seen[4] |= L->dw_fast && !L->dw_nc && L->dw_zf && !L->dw_cn;
                    seen[5] |= L->dw_nc;
                    seen[6] |= L->dw_fast && (L->dw_cn || !L->dw_zf);
                    seen[7] |= c.d.output == LUTHIER_QOUTPUT_UINT8 && !L->dw_fast && L->dw_cn;
                }
                luthier_qconv2d_destroy(L);
            }
            for (x = 0; x < 2; x++) {
                if (!ctx[x]) continue;
                bad += qc_check(ctx[x], &c, NULL) != 0;
                runs++;
            }
            qc_free(&c);
        }
    CHECK(bad == 0, "%d of %d depthwise runs wrong", bad, runs);
    if (ctx[0] && (ctx[0]->cpu_features & f512) == f512)
        for (i = 0; i < 8; i++) CHECK(seen[i], "row kernel path %d never taken", i);
    luthier_context_destroy(ctx[0]);
    luthier_context_destroy(ctx[1]);
}

/* Two threads in two clusters with random ratios, the dynamic schedule, small forced blocks; AUTO
   and every algorithm; and the choice AUTO makes. */
static void test_int8_conv_threads(void) {
    static const int threads[2] = {1, 1};
    luthier_context *ctx2 = threads_context(2, threads);
    luthier_context *ctx1 = q8_context(0, 0);
    static const luthier_conv_algorithm algos[4] = {LUTHIER_CONV_AUTO, LUTHIER_CONV_IM2COL, LUTHIER_CONV_1X1,
                                                    LUTHIER_CONV_DEPTHWISE};
    const int trials = T.quick ? 3 : 12;
    int a, t, bad = 0, runs = 0;
    for (a = 0; a < 4; a++)
        for (t = 0; t < trials; t++) {
            float ratios[2];
            qc_case c;
            qc_random(&c, algos[a], t == 0 ? 48 : 20, t == 0 ? 12 : 0);
            if (c.d.algorithm == LUTHIER_CONV_AUTO && c.d.kernel_h == 1 && c.d.kernel_w == 1) {
                c.d.pad_top = c.d.pad_left = c.d.pad_bottom = c.d.pad_right = 0;
                c.oh = (c.d.in_h - 1) / c.d.stride_h + 1;
                c.ow = (c.d.in_w - 1) / c.d.stride_w + 1;
            }
            ratios[0] = (float)test_rand_int(1, 9);
            ratios[1] = (float)test_rand_int(1, 9);
            c.d.schedule = t % 3 == 2 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
            if (t % 3 == 1) {
                c.d.ratios = ratios;
                c.d.num_ratios = 2;
            }
            bad += qc_check(ctx2, &c, NULL) != 0;
            c.d.ratios = NULL;
            c.d.num_ratios = 0;
            bad += qc_check(ctx1, &c, NULL) != 0;
            runs += 2;
            qc_free(&c);
        }
    CHECK(bad == 0, "%d of %d runs wrong", bad, runs);
    { /* AUTO: depthwise, then 1x1, then im2col */
        static const struct { int cin, cout, k, pad, g; luthier_conv_algorithm want; } cases[] = {
            {8, 8, 3, 1, 8, LUTHIER_CONV_DEPTHWISE}, {8, 16, 1, 0, 1, LUTHIER_CONV_1X1},
            {8, 16, 1, 1, 1, LUTHIER_CONV_IM2COL},   {8, 16, 3, 1, 2, LUTHIER_CONV_IM2COL},
            {4, 8, 3, 1, 4, LUTHIER_CONV_IM2COL}};
        size_t i;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            luthier_qconv2d_desc d;
            luthier_qconv2d_layer *L = NULL;
            luthier_conv2d_info info;
            int8_t w[16 * 8 * 9];
            memset(&d, 0, sizeof d);
            memset(&info, 0, sizeof info);
            memset(w, 1, sizeof w);
            d.batch = 1; d.in_h = d.in_w = 6;
            d.in_channels = cases[i].cin; d.out_channels = cases[i].cout;
            d.kernel_h = d.kernel_w = cases[i].k;
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = cases[i].pad;
            d.groups = cases[i].g;
            d.multiplier = 1 << 30;
            CHECK(luthier_qconv2d_create(ctx1, &d, w, NULL, &L) == LUTHIER_STATUS_OK &&
                      luthier_qconv2d_get_info(L, &info) == LUTHIER_STATUS_OK && info.algorithm == cases[i].want &&
                      (info.algorithm == LUTHIER_CONV_DEPTHWISE) == (info.kernel[0] == 0) && info.weight_bytes > 0,
                  "AUTO case %d chose %s (%s)", (int)i, luthier_conv_algorithm_name(info.algorithm),
                  luthier_context_error(ctx1));
            luthier_qconv2d_destroy(L);
        }
    }
    luthier_context_destroy(ctx1);
    luthier_context_destroy(ctx2);
}

/* Few pixels, many output channels: the front end splits the GEMM algorithms over output
   channels (luthier__conv_split_for: at least 4 NR panels per thread, more channels than
   pixels). Every available kernel, im2col and 1x1, on 2 threads (two clusters, with ratios or
   dynamic) and 3 threads (one cluster), against the reference and 1 thread; the split taken is
   checked to be the channel split. Its draws come from a stream of its own (the state is put
   back after), so the cases that follow keep their data. */
static void test_int8_conv_channel_split(void) {
    static const int two[2] = {1, 1}, three[1] = {3};
    const uint64_t rng = test_rng_state;
    luthier_context *ctx[3];
    const int trials = T.quick ? 2 : 6;
    int k, t, c, bad = 0, runs = 0, split = 0;
    test_rng_state ^= 0x5b1170c4a7e1ull;
    ctx[0] = q8_context(0, 0);
    ctx[1] = threads_context(2, two);
    ctx[2] = threads_context(1, three);
    for (k = 0; k < LUTHIER__NUM_QKERNELS; k++) {
        const luthier__kernel_entry *uk = &luthier__qkernels[k];
        if (!q8_kernel_available(uk)) continue;
        for (t = 0; t < trials; t++) {
            const int one = t % 2 == 0;
            float ratios[2];
            qc_case q;
            luthier_qconv2d_desc *d = &q.d;
            memset(&q, 0, sizeof q);
            d->algorithm = one ? LUTHIER_CONV_1X1 : LUTHIER_CONV_IM2COL;
            d->batch = 1;
            d->groups = 1;
            d->in_channels = test_rand_int(1, 19);
            d->out_channels = 12 * uk->nr + test_rand_int(1, uk->nr);
            d->in_h = test_rand_int(1, 3);
            d->in_w = test_rand_int(2, 4);
            d->kernel_h = d->kernel_w = one ? 1 : 3;
            d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = one ? 0 : 1;
            d->layout = test_rand_int(0, 1) ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
            qc_fill(&q);
            for (c = 0; c < 3; c++) {
                luthier_qconv2d_layer *L = NULL;
                d->kernel = uk->name;
                d->schedule = c == 1 && t % 3 == 2 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
                ratios[0] = (float)test_rand_int(1, 9);
                ratios[1] = (float)test_rand_int(1, 9);
                d->ratios = c == 1 && t % 3 == 1 ? ratios : NULL;
                d->num_ratios = d->ratios ? 2 : 0;
                if (c && luthier_qconv2d_create(ctx[c], d, q.w, NULL, &L) == LUTHIER_STATUS_OK)
                    split += luthier__conv_split(ctx[c], &L->cv).groups == 1;
                luthier_qconv2d_destroy(L);
                bad += qc_check(ctx[c], &q, uk->name) != 0;
                runs++;
            }
            qc_free(&q);
        }
    }
    CHECK(bad == 0, "%d of %d runs wrong", bad, runs);
    CHECK(split == runs - runs / 3, "the channel split taken in %d of %d multi-threaded runs", split, runs - runs / 3);
    for (c = 0; c < 3; c++) luthier_context_destroy(ctx[c]);
    test_rng_state = rng;
}

/* The zero point at the borders, explicitly: a constant input equal to za gives bias alone
   everywhere, padding included (reading 0 there would not). */
static void test_int8_conv_zero_point_padding(void) {
    static const luthier_conv_algorithm algos[2] = {LUTHIER_CONV_IM2COL, LUTHIER_CONV_DEPTHWISE};
    luthier_context *ctx = q8_context(0, 0);
    int a, bad = 0;
    for (a = 0; a < 2; a++) {
        luthier_qconv2d_desc d;
        uint8_t in[2 * 5 * 5];
        int8_t w[2 * 2 * 9];
        int32_t out[2 * 5 * 5], bias[2] = {7, -3};
        size_t e;
        memset(&d, 0, sizeof d);
        d.batch = 1; d.in_h = d.in_w = 5;
        d.in_channels = d.out_channels = 2;
        d.groups = a ? 2 : 1;
        d.kernel_h = d.kernel_w = 3;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
        d.input_zero_point = 200;
        d.output = LUTHIER_QOUTPUT_INT32;
        d.algorithm = algos[a];
        memset(in, 200, sizeof in);
        for (e = 0; e < sizeof w; e++) w[e] = (int8_t)(e % 7 + 1);
        CHECK(luthier_qconv2d(ctx, &d, in, w, bias, out) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        for (e = 0; e < 2 * 5 * 5; e++) bad += out[e] != bias[e % 2];
    }
    CHECK(bad == 0, "%d outputs differ from the bias", bad);
    luthier_context_destroy(ctx);
}

static void test_int8_conv_bad_arguments(void) {
    luthier_context *ctx = q8_context(0, 0);
    luthier_qconv2d_desc d, ok;
    luthier_qconv2d_layer *L = NULL;
    int8_t w[8 * 8 * 9];
    uint8_t in[8 * 36];
    uint8_t out[8 * 36];
    int32_t mults[8] = {1 << 30, 1 << 30, 1 << 30, -5, 1 << 30, 1 << 30, 1 << 30, 1 << 30};
    float ratios[2] = {1.0f, -1.0f};
    memset(w, 1, sizeof w);
    memset(in, 1, sizeof in);
    memset(&ok, 0, sizeof ok);
    ok.batch = 1; ok.in_channels = 8; ok.in_h = ok.in_w = 6; ok.out_channels = 8;
    ok.kernel_h = ok.kernel_w = 3;
    ok.multiplier = 1 << 30;
    CHECK(luthier_qconv2d_create(NULL, &ok, w, NULL, &L) == LUTHIER_STATUS_INVALID_ARGUMENT && !L, "NULL ctx");
    q8_expect(ctx, luthier_qconv2d_create(ctx, NULL, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL desc", "NULL");
    q8_expect(ctx, luthier_qconv2d_create(ctx, &ok, NULL, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL weights", "NULL");
    q8_expect(ctx, luthier_qconv2d_create(ctx, &ok, w, NULL, NULL), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL out", "NULL");
    d = ok; d.in_channels = 0;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "Cin 0", "in_channels");
    d = ok; d.groups = 3;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "groups", "groups");
    d = ok; d.kernel_h = 9;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "kernel too large", "larger");
    d = ok; d.input_zero_point = 256;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "za", "input_zero_point");
    d = ok; d.output_zero_point = -1;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "zo", "output_zero_point");
    d = ok; d.multipliers = mults;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "shifts missing", "shifts");
    d = ok; d.shift = 40;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "shift", "shift");
    d = ok; d.output_min = 200; d.output_max = 100;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "clamp", "output_min");
    d = ok; d.output = LUTHIER_QOUTPUT_FLOAT;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "scale 0", "a_scale");
    d = ok; d.activation = LUTHIER_ACTIVATION_RELU;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "uint8 + activation", "FLOAT");
    d = ok; d.output = (luthier_qoutput)7;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "output kind", "output kind");
    d = ok; d.layout = (luthier_layout)5;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "layout", "layout");
    d = ok; d.algorithm = LUTHIER_CONV_1X1;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_UNSUPPORTED, "1x1 on 3x3", "1x1");
    d = ok; d.algorithm = LUTHIER_CONV_DEPTHWISE;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_UNSUPPORTED, "depthwise", "depthwise");
    d = ok; d.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_UNSUPPORTED, "implicit", "not implemented");
    d = ok; d.algorithm = LUTHIER_CONV_WINOGRAD_4X3;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_UNSUPPORTED, "winograd", "not implemented");
    d = ok; d.algorithm = (luthier_conv_algorithm)99;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "algorithm", "algorithm");
    d = ok; d.kernel = "no_such_kernel";
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_NOT_FOUND, "kernel", "no_such_kernel");
    d = ok; d.ratios = ratios; d.num_ratios = 2;
    CHECK(luthier_qconv2d_create(ctx, &d, w, NULL, &L) != LUTHIER_STATUS_OK && !L, "negative ratio accepted");
    d = ok; d.ratios = ratios; d.num_ratios = 0;
    q8_expect(ctx, luthier_qconv2d_create(ctx, &d, w, NULL, &L), LUTHIER_STATUS_INVALID_ARGUMENT, "ratios", "ratios");
    CHECK(L == NULL, "a failed create left a layer");
    CHECK(luthier_qconv2d_create(ctx, &ok, w, NULL, &L) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    q8_expect(ctx, luthier_qconv2d_run(ctx, L, NULL, out), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL input", "NULL");
    q8_expect(ctx, luthier_qconv2d_run(ctx, L, in, NULL), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL output", "NULL");
    q8_expect(ctx, luthier_qconv2d_run(ctx, NULL, in, out), LUTHIER_STATUS_INVALID_ARGUMENT, "NULL layer", "NULL");
    CHECK(luthier_qconv2d_run(NULL, L, in, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL ctx run");
    CHECK(luthier_qconv2d_get_info(L, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL info");
    CHECK(luthier_qconv2d_get_info(NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL layer info");
    q8_expect(ctx, luthier_qconv2d_run(ctx, L, in, out), LUTHIER_STATUS_OK, "good run", NULL);
    luthier_qconv2d_destroy(L);
    luthier_qconv2d_destroy(NULL);
    CHECK(luthier_qconv2d(NULL, &ok, in, w, NULL, out) == LUTHIER_STATUS_INVALID_ARGUMENT, "one-shot NULL ctx");
    q8_expect(ctx, luthier_qconv2d(ctx, &ok, NULL, w, NULL, out), LUTHIER_STATUS_INVALID_ARGUMENT, "one-shot NULL input", "NULL");
    luthier_context_destroy(ctx);
}

static void run_qconv_tests(void) {
    RUN(test_int8_conv_im2col);
    RUN(test_int8_conv_1x1);
    RUN(test_int8_conv_depthwise);
    RUN(test_int8_conv_depthwise_channels);
    RUN(test_int8_conv_depthwise_rows);
    RUN(test_int8_conv_threads);
    RUN(test_int8_conv_channel_split);
    RUN(test_int8_conv_zero_point_padding);
    RUN(test_int8_conv_bad_arguments);
}
