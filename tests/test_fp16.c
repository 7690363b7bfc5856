/* fp16 (IEEE binary16): the library's conversions against the CPU's own (F16C on x86, FCVT on
   AArch64) and against their definition (exact widening; rounding to nearest even, ties on
   every midpoint, overflow, subnormals, NaN), then plans of LUTHIER_PRECISION_FP16 (dense
   layers over fp16 weights) against the interpreter at 1 and 2 threads. Included by
   test_main.c after test_graph.c (its graph builders and plan_vs_ref). */

#if LUTHIER__SIMD_X86
LUTHIER__TARGET_AVX2 static uint16_t fp16_hw_narrow(float f) {
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0);
}
LUTHIER__TARGET_AVX2 static float fp16_hw_widen(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }
static int fp16_have_hw(void) { return (luthier_cpu_features() & LUTHIER_CPU_AVX2_FMA) != 0; }
#elif LUTHIER__SIMD_NEON
static uint16_t fp16_hw_narrow(float f) { return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(f))), 0); }
static float fp16_hw_widen(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }
static int fp16_have_hw(void) { return 1; }
#else
static uint16_t fp16_hw_narrow(float f) { return luthier__f32_to_f16(f); }
static float fp16_hw_widen(uint16_t h) { return luthier__f16_to_f32(h); }
static int fp16_have_hw(void) { return 0; }
#endif

static uint32_t fp16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The value of a finite half from its fields. */
static double fp16_value(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static void test_fp16_widen(void) {
    unsigned h, bad = 0, bad_hw = 0;
    for (h = 0; h < 65536; h++) {
        const float f = luthier__f16_to_f32((uint16_t)h);
        const int nan = ((h >> 10) & 31) == 31 && (h & 1023);
        if (nan) bad += !(f != f) || (fp16_bits(f) >> 31) != (h >> 15);
        else if (((h >> 10) & 31) == 31) bad += f != ((h & 0x8000) ? -INFINITY : INFINITY);
        else bad += (double)f != fp16_value((uint16_t)h) || (fp16_bits(f) >> 31) != (h >> 15);
        if (fp16_have_hw()) bad_hw += fp16_bits(f) != fp16_bits(fp16_hw_widen((uint16_t)h));
    }
    CHECK(bad == 0, "%u of 65536 halves widened to the wrong value", bad);
    CHECK(bad_hw == 0, "%u of 65536 halves widened to other bits than the CPU's conversion", bad_hw);
}

static void test_fp16_narrow(void) {
    unsigned h, bad = 0, bad_hw = 0, n;
    /* every finite half survives the round trip, and each midpoint between neighbours rounds to
       the even one, a hair above or below it to the nearer one */
    for (h = 0; h < 0x7bff; h++) {
        const double lo = fp16_value((uint16_t)h), hi = fp16_value((uint16_t)(h + 1));
        const float mid = (float)((lo + hi) / 2); /* exact: 12 significant bits */
        const uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        int sgn;
        for (sgn = 0; sgn < 2; sgn++) {
            const float s = sgn ? -1.0f : 1.0f;
            const uint16_t sb = sgn ? 0x8000 : 0;
            bad += luthier__f32_to_f16(s * (float)lo) != (uint16_t)(sb | h);
            bad += luthier__f32_to_f16(s * mid) != (uint16_t)(sb | even);
            bad += luthier__f32_to_f16(s * nextafterf(mid, 0.0f)) != (uint16_t)(sb | h);
            bad += luthier__f32_to_f16(s * nextafterf(mid, INFINITY)) != (uint16_t)(sb | (h + 1));
        }
    }
    CHECK(bad == 0, "%u rounding cases wrong (round trip, midpoints, neighbours)", bad);
    CHECK(luthier__f32_to_f16(65504.0f) == 0x7bff && luthier__f32_to_f16(65519.996f) == 0x7bff &&
              luthier__f32_to_f16(65520.0f) == 0x7c00 && luthier__f32_to_f16(-1e10f) == 0xfc00 &&
              luthier__f32_to_f16(INFINITY) == 0x7c00 && luthier__f32_to_f16(ldexpf(1.0f, -25)) == 0 &&
              luthier__f32_to_f16(nextafterf(ldexpf(1.0f, -25), 1.0f)) == 1 && luthier__f32_to_f16(-0.0f) == 0x8000 &&
              luthier__f32_to_f16(ldexpf(1.0f, -149)) == 0,
          "overflow, underflow and signed zero");
    {
        const uint16_t q = luthier__f32_to_f16(NAN);
        CHECK(((q >> 10) & 31) == 31 && (q & 0x200), "NaN narrows to a quiet NaN (0x%04x)", q);
    }
    /* random bit patterns (every class of float) against the CPU */
    for (n = 0; fp16_have_hw() && n < (T.quick ? 200000u : 2000000u); n++) {
        const uint32_t u = (uint32_t)test_rand_u64();
        float f;
        memcpy(&f, &u, sizeof f);
        bad_hw += luthier__f32_to_f16(f) != fp16_hw_narrow(f);
    }
    CHECK(bad_hw == 0, "%u random floats narrowed to other bits than the CPU's conversion", bad_hw);
}

/* luthier__pack_a_f16 (NEON: FCVTN; AVX-512: vcvtps2ph in chunks of 64 k-steps) gives
   luthier__f32_to_f16's bits in the interleaved panel layout, zero rows past mb, for odd sizes
   (MR up to 16, k across chunks) and every class of float. */
static void test_fp16_pack_a(void) {
    int trial, bad = 0;
    for (trial = 0; trial < 40; trial++) {
        const size_t mr = (size_t)test_rand_int(1, 16), mb = (size_t)test_rand_int(1, 40), kb = (size_t)test_rand_int(1, 150);
        const size_t lda = kb + (size_t)test_rand_int(0, 3), panels = (mb + mr - 1) / mr;
        float *a = (float *)test_alloc(mb * lda * sizeof(float));
        uint16_t *got = (uint16_t *)test_alloc(panels * mr * kb * sizeof(uint16_t));
        size_t i, kk;
        for (i = 0; i < mb * lda; i++) {
            const uint32_t u = (uint32_t)test_rand_u64();
            float f;
            memcpy(&f, &u, sizeof f);
            a[i] = (i % 3) ? test_rand_float() * 70000.0f : f; /* overflow, NaN, inf, subnormals */
        }
        luthier__pack_a_f16(a, lda, mb, kb, mr, got);
        for (i = 0; i < panels * mr; i++)
            for (kk = 0; kk < kb; kk++) {
                const size_t q = i / mr, r = i % mr;
                const uint16_t want = i < mb ? luthier__f32_to_f16(a[i * lda + kk]) : 0;
                bad += got[q * mr * kb + kk * mr + r] != want;
            }
        free(a);
        free(got);
    }
    CHECK(bad == 0, "%d packed halves differ from luthier__f32_to_f16", bad);
}

/* Convolutions on the F16 kernels (every one this CPU runs: the scalar emulation anywhere,
   8x24__neonfp16 with FP16): im2col and 1x1 (AUTO picks one of them), groups, strides,
   padding, bias, ReLU, NHWC and NCHW, against the fp32 convolution of the same fp16-exact input
   and weights: only the fp16 sums differ. Implicit GEMM (interleaved kernels) and Winograd
   F(2x2), F(6x6) are refused by name; AUTO takes winograd_4x3 where the CPU has fp16
   arithmetic (test_wino16.c). */
static void test_fp16_conv(void) {
    luthier_context *ctx = ctx_threads(2);
    int f, trial;
    for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
        luthier_kernel_info ki;
        luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
        if (!ki.available) continue;
        for (trial = 0; trial < (T.quick ? 6 : 16); trial++) {
            luthier_conv2d_desc d;
            luthier_conv2d_layer *c16 = NULL, *c32 = NULL;
            luthier_conv2d_info info;
            size_t nin, nw, nout, i;
            float *x, *w, *bias, *y16, *y32;
            double mx = 1e-3, md = 0;
            memset(&d, 0, sizeof d);
            d.batch = 1 + trial % 2;
            d.groups = trial % 3 == 2 ? 2 : 1;
            d.in_channels = d.groups * test_rand_int(1, 13);
            d.out_channels = d.groups * test_rand_int(1, 30);
            d.in_h = test_rand_int(3, 11);
            d.in_w = test_rand_int(3, 11);
            d.kernel_h = d.kernel_w = trial % 2 ? 3 : 1;
            d.stride_h = d.stride_w = trial % 4 == 3 ? 2 : 1;
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = d.kernel_h == 3 && trial % 5 ? 1 : 0;
            d.activation = trial % 2 ? LUTHIER_ACTIVATION_RELU : LUTHIER_ACTIVATION_NONE;
            d.layout = trial % 4 == 1 ? LUTHIER_LAYOUT_NCHW : LUTHIER_LAYOUT_NHWC;
            d.algorithm = trial % 3 == 0 ? LUTHIER_CONV_IM2COL : LUTHIER_CONV_AUTO;
            nin = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
            nw = (size_t)(d.out_channels * (d.in_channels / d.groups) * d.kernel_h * d.kernel_w);
            x = (float *)test_alloc(nin * sizeof(float));
            w = (float *)test_alloc(nw * sizeof(float));
            bias = (float *)test_alloc((size_t)d.out_channels * sizeof(float));
            test_fill(x, nin);
            test_fill(w, nw);
            test_fill(bias, (size_t)d.out_channels);
            for (i = 0; i < nin; i++) x[i] = operand_round(x[i], 2);
            for (i = 0; i < nw; i++) w[i] = operand_round(w[i], 2);
            d.kernel = ki.name;
            CHECK(luthier_conv2d_create(ctx, &d, w, bias, &c16) == LUTHIER_STATUS_OK, "%s: %s", ki.name, luthier_context_error(ctx));
            d.kernel = NULL;
            d.algorithm = LUTHIER_CONV_IM2COL;
            CHECK(luthier_conv2d_create(ctx, &d, w, bias, &c32) == LUTHIER_STATUS_OK, "fp32: %s", luthier_context_error(ctx));
            if (c16 && c32) {
                int64_t oh = 0, ow = 0;
                luthier_conv2d_output_size(&d, &oh, &ow);
                nout = (size_t)(d.batch * d.out_channels * oh * ow);
                y16 = (float *)test_alloc(nout * sizeof(float));
                y32 = (float *)test_alloc(nout * sizeof(float));
                CHECK(luthier_conv2d_run(ctx, c16, x, y16) == LUTHIER_STATUS_OK && luthier_conv2d_run(ctx, c32, x, y32) == LUTHIER_STATUS_OK,
                      "run: %s", luthier_context_error(ctx));
                for (i = 0; i < nout; i++) mx = fabs(y32[i]) > mx ? fabs(y32[i]) : mx;
                for (i = 0; i < nout; i++) md = fabs((double)y16[i] - y32[i]) > md || y16[i] != y16[i] ? fabs((double)y16[i] - y32[i]) : md;
                luthier_conv2d_get_info(c16, &info);
                /* the fp16 sums' rounding error grows with the steps of k (as sqrt(K) for random
                   signs: 0.5 % of the largest output was seen at K = 12 channels x 3 x 3);
                   Winograd F16 (AUTO with fp16 arithmetic): test_wino16.c's bound */
                CHECK(md <= (info.algorithm == LUTHIER_CONV_WINOGRAD_4X3
                                 ? 6e-2 * mx
                                 : 4e-3 * mx * fmax(1.0, sqrt((double)(d.in_channels / d.groups * d.kernel_h * d.kernel_w) / 16.0))),
                      "%s trial %d: max |diff| %g, max |fp32| %g", ki.name, trial, md, mx);
                CHECK(!strcmp(info.kernel, ki.name) && (info.algorithm == LUTHIER_CONV_IM2COL || info.algorithm == LUTHIER_CONV_1X1 ||
                                                        (ki.kind == LUTHIER_KERNEL_HYBRID && info.algorithm == LUTHIER_CONV_IMPLICIT_GEMM) ||
                                                        (info.algorithm == LUTHIER_CONV_WINOGRAD_4X3 && (ctx->cpu_features & LUTHIER_CPU_FP16))),
                      "info: %s %s", info.kernel, luthier_conv_algorithm_name(info.algorithm));
                free(y16);
                free(y32);
            }
            luthier_conv2d_destroy(c16);
            luthier_conv2d_destroy(c32);
            free(x);
            free(w);
            free(bias);
        }
        { /* algorithms the F16 kernels do not implement */
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            float w[4 * 4 * 9];
            test_fill(w, 4 * 4 * 9);
            memset(&d, 0, sizeof d);
            d.batch = 1, d.in_channels = d.out_channels = 4, d.in_h = d.in_w = 8, d.kernel_h = d.kernel_w = 3;
            d.kernel = ki.name;
            d.algorithm = LUTHIER_CONV_WINOGRAD_2X3; /* (winograd_4x3: test_wino16.c) */
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED && !cv &&
                      strstr(luthier_context_error(ctx), "not implemented"), "winograd on %s: %s", ki.name, luthier_context_error(ctx));
            d.algorithm = LUTHIER_CONV_IMPLICIT_GEMM; /* hybrid kernels only */
            if (ki.kind == LUTHIER_KERNEL_HYBRID)
                CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK && cv, "implicit gemm on %s: %s", ki.name,
                      luthier_context_error(ctx));
            else
                CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED && !cv &&
                          strstr(luthier_context_error(ctx), "hybrid"), "implicit gemm on %s: %s", ki.name, luthier_context_error(ctx));
            luthier_conv2d_destroy(cv);
        }
    }
    luthier_context_destroy(ctx);
}

/* x [batch, 300] -> relu(fc1) [130] -> fc2 [257] + fc3 [257] (a residual add fused into fc2's
   epilogue) and, for the odd batch, a second head fc4 [1] (n below every NR). */
static void fp16_build(gb *b, int64_t batch, int *x) {
    int64_t xs[2];
    int h, y, z, w;
    memset(b, 0, sizeof *b);
    xs[0] = batch;
    xs[1] = 300;
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "x", LUTHIER_DTYPE_F32, 2, xs, x);
    h = gb_lin(b, "fc1", *x, 130, 300);
    h = gb_act(b, LUTHIER_OP_RELU, "relu", h, 0, 0);
    y = gb_lin(b, "fc2", h, 257, 130);
    z = gb_lin(b, "fc3", h, 257, 130);
    w = gb_op(b, LUTHIER_OP_ADD, "add", y, z);
    luthier_graph_output(b->g, w);
    if (batch & 1) luthier_graph_output(b->g, gb_lin(b, "fc4", h, 1, 130));
}

/* The family fp16 plans give the dense layers of b (its input's batch): F16 (fp16
   arithmetic) from 8 rows on a CPU with an F16 kernel that is not the emulation, else F16W. */
static luthier_kernel_family fp16_dense_family(luthier_context *ctx, const gb *b) {
    return b->g->tensors[b->g->inputs[0]].shape[0] >= 8 && luthier__f16_kernel(ctx, 1) ? LUTHIER_KERNELS_F16 : LUTHIER_KERNELS_F16W;
}

/* Each step of an fp16 plan of b: dense steps on F16W (or F16) kernels with half the weight
   bytes of the fp32 plan's. */
static void fp16_check_steps(luthier_context *ctx, const gb *b, const luthier_plan_desc *pd) {
    luthier_plan *p16 = NULL, *p32 = NULL;
    luthier_plan_info i16, i32;
    int k, dense = 0;
    CHECK(luthier_plan_create(ctx, b->g, pd, &p16) == LUTHIER_STATUS_OK && luthier_plan_create(ctx, b->g, NULL, &p32) == LUTHIER_STATUS_OK,
          "%s", luthier_context_error(ctx));
    if (p16 && p32) {
        luthier_plan_get_info(p16, &i16);
        luthier_plan_get_info(p32, &i32);
        for (k = 0; k < i16.num_steps; k++) {
            luthier_step_info s16, s32;
            int j;
            luthier_plan_step_info(p16, k, &s16);
            if (s16.op != LUTHIER_OP_DENSE) continue;
            for (j = 0; j < i32.num_steps; j++) /* (by name: fp16 activations add conversion steps) */
                if (luthier_plan_step_info(p32, j, &s32) == LUTHIER_STATUS_OK && s32.node >= 0 && !strcmp(s32.name, s16.name)) break;
            CHECK(j < i32.num_steps, "%s: not in the fp32 plan", s16.name);
            if (j == i32.num_steps) continue;
            dense++;
            CHECK(luthier__kernel_named(s16.kernel) && luthier__kernel_named(s16.kernel)->family == fp16_dense_family(ctx, b) &&
                      luthier__kernel_named(s32.kernel) && luthier__kernel_named(s32.kernel)->family == LUTHIER_KERNELS_F32,
                  "%s: kernels %s / %s", s16.name, s16.kernel, s32.kernel);
            /* 2 bytes less per weight: fc1 300 x 130, fc2 and fc3 130 x 257, fc4 130 x 1 */
            CHECK(s32.bytes - s16.bytes == 2.0 * 300 * 130 || s32.bytes - s16.bytes == 2.0 * 130 * 257 ||
                      s32.bytes - s16.bytes == 2.0 * 130,
                  "%s: bytes %g (fp16) / %g (fp32)", s16.name, s16.bytes, s32.bytes);
        }
        CHECK(dense >= 3, "%d dense steps", dense);
        CHECK(i16.weights_bytes < i32.weights_bytes * 0.56, "weights %zu (fp16) vs %zu (fp32)", i16.weights_bytes, i32.weights_bytes);
    }
    luthier_plan_destroy(p16);
    luthier_plan_destroy(p32);
}

static void test_fp16_plan(void) {
    static const int64_t batches[3] = {1, 5, 9};
    int bi, t, x;
    for (bi = 0; bi < 3; bi++)
        for (t = 1; t <= 2; t++) {
            luthier_context *ctx = ctx_threads(t);
            luthier_plan_desc pd;
            gb b;
            float *xin;
            const void *ins[1];
            char what[96];
            fp16_build(&b, batches[bi], &x);
            xin = (float *)test_alloc((size_t)batches[bi] * 300 * sizeof(float));
            test_fill(xin, (size_t)batches[bi] * 300);
            ins[0] = xin;
            memset(&pd, 0, sizeof pd);
            pd.precision = LUTHIER_PRECISION_FP16;
            /* weights as they are: within fp16's rounding of the fp32 result. Each weight moves by
               up to 2^-11 of itself, so an output by up to 2^-11 of the sum of its |products|:
               several times the output where the products cancel (fc4: 0.0024 seen at |y| 0.43
               with max |y| 1). fp16 sums: 10x that. */
            snprintf(what, sizeof what, "fp16 plan, batch %lld, %d threads", (long long)batches[bi], t);
            plan_vs_ref(ctx, b.g, &pd, ins, fp16_dense_family(ctx, &b) == LUTHIER_KERNELS_F16 ? 5e-2 : 5e-3, what);
            fp16_check_steps(ctx, &b, &pd);
            luthier_context_destroy(ctx);
            free(xin);
            gb_free(&b);
        }
}

/* Weights exactly representable in fp16: the fp16 plan is as accurate as the fp32 one. */
static void test_fp16_plan_exact_weights(void) {
    int t, x;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        luthier_plan_desc pd;
        gb b;
        float *xin = (float *)test_alloc(5 * 300 * sizeof(float));
        const void *ins[1];
        int i, k;
        fp16_build(&b, 5, &x);
        /* gb_const's blobs are the graph's constants (not copied): round them in place */
        for (i = 0; i < b.nblobs; i++) {
            size_t n, e;
            for (k = 0; k < b.g->num_tensors; k++)
                if (b.g->tensors[k].data == b.blobs[i]) {
                    for (n = 1, e = 0; e < (size_t)b.g->tensors[k].rank; e++) n *= (size_t)b.g->tensors[k].shape[e];
                    for (e = 0; e < n; e++) b.blobs[i][e] = luthier__f16_to_f32(luthier__f32_to_f16(b.blobs[i][e]));
                }
        }
        test_fill(xin, 5 * 300);
        ins[0] = xin;
        memset(&pd, 0, sizeof pd);
        pd.precision = LUTHIER_PRECISION_FP16;
        plan_vs_ref(ctx, b.g, &pd, ins, 2e-6, t == 1 ? "fp16 plan, fp16-exact weights, 1 thread" : "fp16 plan, fp16-exact weights, 2 threads");
        luthier_context_destroy(ctx);
        free(xin);
        gb_free(&b);
    }
}

/* A node configuration naming an F16W kernel is honoured whatever the plan's precision (records
   carry the choice); a precision out of range is refused. */
static void test_fp16_plan_config_and_refusal(void) {
    luthier_context *ctx = ctx_threads(1);
    luthier_node_config cfg[16];
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    gb b;
    int x, k, n, seen = 0;
    fp16_build(&b, 1, &x);
    n = luthier_graph_num_nodes(b.g);
    CHECK(n <= 16, "%d nodes", n);
    memset(cfg, 0, sizeof cfg);
    for (k = 0; k < n && k < 16; k++) snprintf(cfg[k].kernel, sizeof cfg[k].kernel, "%s", "4x4__scalar_hybrid_f16w");
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = n;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_info info;
        luthier_plan_get_info(p, &info);
        for (k = 0; k < info.num_steps; k++) {
            luthier_step_info si;
            luthier_plan_step_info(p, k, &si);
            if (si.op != LUTHIER_OP_DENSE) continue;
            seen++;
            CHECK(!strcmp(si.kernel, "luthier_sgemm_ukernel_4x4__scalar_hybrid_f16w"), "%s: %s", si.name, si.kernel);
        }
        CHECK(seen >= 3, "%d dense steps", seen);
    }
    luthier_plan_destroy(p);
    p = (luthier_plan *)&pd;
    memset(&pd, 0, sizeof pd);
    pd.precision = LUTHIER_PRECISION_COUNT;
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && p == NULL &&
              strstr(luthier_context_error(ctx), "precision"),
          "an unknown precision: %s", luthier_context_error(ctx));
    luthier_context_destroy(ctx);
    gb_free(&b);
}

/* luthier_sgemm with an F16W kernel packs B in fp16; a B packed for one family is refused by a
   kernel of the other with the same NR. */
static void test_fp16_sgemm_packed_mismatch(void) {
    luthier_context *ctx = test_context(0, 0, 0);
    luthier_sgemm_desc d;
    luthier_packed_b *pb = NULL;
    float a[4 * 8], b[8 * 5], c[4 * 5];
    test_fill(a, 32);
    test_fill(b, 40);
    memset(&d, 0, sizeof d);
    d.m = 4; d.n = 5; d.k = 8;
    d.kernel = "4x4__scalar_hybrid_f16w";
    CHECK(luthier_sgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    CHECK(luthier_packed_b_bytes(pb) - sizeof *pb == 2 * 2 * 4 * 8, "packed bytes %zu", luthier_packed_b_bytes(pb) - sizeof *pb);
    d.kernel = "4x4__scalar_hybrid";
    CHECK(luthier_sgemm_packed(ctx, &d, a, pb, c) == LUTHIER_STATUS_INCOMPATIBLE, "an fp32 kernel on fp16 B: %s",
          luthier_context_error(ctx));
    d.kernel = NULL;
    CHECK(luthier_sgemm_packed(ctx, &d, a, pb, c) == LUTHIER_STATUS_OK, "the packing kernel: %s", luthier_context_error(ctx));
    luthier_packed_b_destroy(pb);
    luthier_context_destroy(ctx);
}

/* Tuning an fp16 plan: dense layers are "fp16 dense" tasks over the F16W kernels; their records
   configure fp16 plans and not fp32 ones (another signature), which keep fp32 weights. */
/* Steps of op in g's plan of precision prec made with the records rec: how many run a kernel
   of family fam (*steps: all of them). */
static int fp16_steps_on(luthier_context *ctx, const luthier_graph *g, const char *rec, luthier_precision prec, luthier_op op,
                         luthier_kernel_family fam, int *steps) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    int i, on = 0;
    memset(&pd, 0, sizeof pd);
    pd.records = rec;
    pd.precision = prec;
    CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
    if (p) {
        luthier_plan_info info;
        luthier_plan_get_info(p, &info);
        for (i = 0; i < info.num_steps; i++) {
            luthier_step_info si;
            const luthier__kernel_entry *e;
            luthier_plan_step_info(p, i, &si);
            if (si.op != op) continue;
            (*steps)++;
            on += (e = luthier__kernel_named(si.kernel)) != NULL && e->family == fam;
        }
    }
    luthier_plan_destroy(p);
    return on;
}

static void test_fp16_tune(void) {
    luthier_context *ctx = ctx_threads(2);
    luthier_tune_desc td;
    luthier_tune_result r;
    char rec[512], line[1200];
    gb b;
    int x, k, fp16_lines = 0, f16w = 0, seen = 0;
    FILE *fh;
    fp16_build(&b, 1, &x);
    memset(&td, 0, sizeof td);
    td.budget_seconds = T.quick ? 1.0 : 2.0;
    td.progress = -1;
    td.precision = LUTHIER_PRECISION_FP16;
    tune_tmp("fp16.records", rec, sizeof rec);
    CHECK(luthier_tune(ctx, b.g, &td, rec, &r) == LUTHIER_STATUS_OK && r.tasks >= 3, "tune: %s", luthier_context_error(ctx));
    /* the cost model knows only the F32 kernels: no fp16 task is rated */
    CHECK(r.model_spearman != r.model_spearman && r.model_rank == 0, "fp16 tasks rated by the model: %g, %g", r.model_spearman,
          r.model_rank);
    for (fh = fopen(rec, "r"); fh && fgets(line, sizeof line, fh);)
        if (strstr(line, "\tfp16 dense ")) { /* the kernel: "-" (the default won) or an F16W one */
            fp16_lines++;
            f16w += strstr(line, "_f16w\t") != NULL || strstr(line, "\t-\t-\t") != NULL;
        }
    if (fh) fclose(fh);
    CHECK(fp16_lines >= 3 && f16w == fp16_lines, "%d fp16 dense records, %d with an F16W or the default kernel", fp16_lines, f16w);
    for (k = 0; k < 2; k++) { /* the fp16 plan and the fp32 plan from the same records */
        int steps = 0, on = fp16_steps_on(ctx, b.g, rec, k ? LUTHIER_PRECISION_FP32 : LUTHIER_PRECISION_FP16, LUTHIER_OP_DENSE,
                                          LUTHIER_KERNELS_F16W, &steps);
        CHECK(on == (k ? 0 : steps), "%s plan: %d of %d dense steps on F16W kernels", k ? "fp32" : "fp16", on, steps);
        seen += steps;
    }
    CHECK(seen >= 6, "%d dense steps", seen);
    td.precision = LUTHIER_PRECISION_COUNT;
    CHECK(luthier_tune(ctx, b.g, &td, NULL, &r) == LUTHIER_STATUS_INVALID_ARGUMENT, "unknown precision: %s", luthier_context_error(ctx));
    remove(rec);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

/* Every F16 kernel's blocking keeps its fp16 sums to at most LUTHIER__F16_MAX_KC steps of k,
   also for the shapes whose blocking would walk all of k (one row of tiles, one panel), and
   for small and large L1; the fp32 kernels keep walking all of k there. */
static void test_fp16_kc_bound(void) {
    static const size_t l1[] = {16 << 10, 48 << 10, 1 << 20};
    luthier__gemm_blocking ov, b;
    luthier_cache_info ci;
    int i, c;
    memset(&ov, 0, sizeof ov);
    for (c = 0; c < 3; c++) {
        memset(&ci, 0, sizeof ci);
        ci.l1d = l1[c], ci.l2 = 2 << 20, ci.l3 = 32 << 20;
        for (i = 0; i < LUTHIER__NUM_FKERNELS; i++) {
            b = luthier__gemm_blocking_for(&luthier__fkernels[i], &ci, &ov, 1, 4096, 4096);
            CHECK(b.kc <= LUTHIER__F16_MAX_KC, "%s, m = 1, L1 %zu: kc %zu", luthier__fkernels[i].name, l1[c], b.kc);
            b = luthier__gemm_blocking_for(&luthier__fkernels[i], &ci, &ov, 500, 8, 3000);
            CHECK(b.kc <= LUTHIER__F16_MAX_KC, "%s, n = 8, L1 %zu: kc %zu", luthier__fkernels[i].name, l1[c], b.kc);
        }
        b = luthier__gemm_blocking_for(&luthier__ukernels[0], &ci, &ov, 1, 4096, 4096);
        CHECK(b.kc == 4096, "fp32 m = 1: kc %zu (all of k)", b.kc);
    }
}

/* luthier_sgemm on the hybrid F16 kernels (fp32 A: each call's rows rounded to fp16 by the
   driver, k cut into calls of at most LUTHIER__F16_MAX_KC steps) against the double sum of the
   fp16 operands: m and n around the tile, k from 1 past two calls' worth, bias, accumulation
   and ReLU (bias on the first call of a tile only, ReLU after the last), 1 and 2 threads. The
   error allowed is the kernel tester's (2^-8 of the terms' magnitudes). */
static void test_fp16_hybrid_sgemm(void) {
    static const int64_t ks[] = {1, 7, 9, 64, 257, 700};
    int f, t, trial, tested = 0;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
            luthier_kernel_info ki;
            luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
            if (!ki.available || ki.kind != LUTHIER_KERNEL_HYBRID) continue;
            for (trial = 0; trial < 12; trial++) {
                luthier_sgemm_desc d;
                const int64_t m = test_rand_int(1, 3 * ki.mr + 1), n = test_rand_int(1, 2 * ki.nr + 3), k = ks[trial % 6];
                float *a = rand_buf((size_t)(m * k), -2, 2), *b = rand_buf((size_t)(k * n), -1, 1);
                float *bias = rand_buf((size_t)n, -1, 1), *c = rand_buf((size_t)(m * n), -1, 1), *c0;
                int64_t i, j, kk;
                size_t bad = 0;
                for (i = 0; i < m * k; i++) a[i] = operand_round(a[i], 2);
                for (i = 0; i < k * n; i++) b[i] = operand_round(b[i], 2);
                c0 = (float *)test_alloc((size_t)(m * n) * sizeof(float));
                memcpy(c0, c, (size_t)(m * n) * sizeof(float));
                memset(&d, 0, sizeof d);
                d.m = m, d.n = n, d.k = k;
                d.kernel = ki.name;
                d.bias = trial % 3 ? bias : NULL;
                d.accumulate = trial % 4 == 1;
                d.activation = trial % 2 ? LUTHIER_ACTIVATION_RELU : LUTHIER_ACTIVATION_NONE;
                CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_OK, "%s: %s", ki.name, luthier_context_error(ctx));
                for (i = 0; i < m; i++)
                    for (j = 0; j < n; j++) {
                        double ref = (d.bias ? bias[j] : 0.0) + (d.accumulate ? c0[i * n + j] : 0.0), mag = fabs(ref);
                        for (kk = 0; kk < k; kk++) {
                            const double p = (double)a[i * k + kk] * b[kk * n + j];
                            ref += p;
                            mag += fabs(p);
                        }
                        if (d.activation == LUTHIER_ACTIVATION_RELU && ref < 0) ref = 0;
                        if (!(fabs(c[i * n + j] - ref) <= 1e-6 + 0x1p-8 * mag) && !bad++)
                            printf("    %s %lldx%lldx%lld, %d threads: C[%lld][%lld] = %g, want %g\n", ki.name, (long long)m,
                                   (long long)n, (long long)k, t, (long long)i, (long long)j, (double)c[i * n + j], ref);
                    }
                CHECK(bad == 0, "%s trial %d: %zu wrong", ki.name, trial, bad);
                tested++;
                free(a), free(b), free(bias), free(c), free(c0);
            }
        }
        luthier_context_destroy(ctx);
    }
    printf("    %d hybrid F16 GEMMs checked\n", tested);
}

/* Tuning an fp16 plan of the mini ResNet: where the CPU computes convolutions in fp16 (qemu
   neoverse-n1, AVX-512 FP16), they are "fp16 conv2d" tasks over the F16 kernels, whose records
   configure fp16 plans only (the fp32 plan made from the same records keeps fp32 kernels);
   elsewhere they are the fp32 tasks. */
static void test_fp16_tune_conv(void) {
    luthier_context *ctx = ctx_threads(2);
    const int f16 = luthier__f16_kernel(ctx, 1) != NULL;
    luthier_tune_desc td;
    luthier_tune_result r;
    char rec[512], line[1200];
    int x, k, conv16 = 0, conv32 = 0, bad = 0;
    FILE *fh;
    gb b;
    build_mini_resnet(&b, 1, 16, &x);
    memset(&td, 0, sizeof td);
    td.budget_seconds = 1.0;
    td.progress = -1;
    td.precision = LUTHIER_PRECISION_FP16;
    tune_tmp("fp16conv.records", rec, sizeof rec);
    CHECK(luthier_tune(ctx, b.g, &td, rec, &r) == LUTHIER_STATUS_OK && r.tasks >= 3, "tune: %s", luthier_context_error(ctx));
    for (fh = fopen(rec, "r"); fh && fgets(line, sizeof line, fh);) {
        char *kern;
        if (strstr(line, "\tfp16 conv2d ")) {
            conv16++;
            kern = strchr(strchr(strstr(line, "\tfp16 conv2d ") + 1, '\t') + 1, '\t'); /* after the algorithm */
            if (kern && strncmp(kern, "\t-\t", 3) != 0) {
                char name[128];
                sscanf(kern + 1, "%127[^\t]", name);
                bad += !luthier__kernel_named(name) || luthier__kernel_named(name)->family != LUTHIER_KERNELS_F16;
            }
        } else if (strstr(line, "\tconv2d ")) {
            conv32++;
        }
    }
    if (fh) fclose(fh);
    printf("    %d fp16 and %d fp32 conv records (F16 kernels here: %s)\n", conv16, conv32, f16 ? "yes" : "no");
    CHECK(f16 ? conv16 >= 3 && conv32 == 0 && bad == 0 : conv16 == 0 && conv32 >= 3,
          "F16 CPU %d: %d fp16 conv records (%d not on F16 kernels), %d fp32 ones", f16, conv16, bad, conv32);
    for (k = 0; k < 2; k++) { /* the fp16 plan and the fp32 plan from the same records */
        int steps = 0, on = fp16_steps_on(ctx, b.g, rec, k ? LUTHIER_PRECISION_FP32 : LUTHIER_PRECISION_FP16, LUTHIER_OP_CONV2D,
                                          LUTHIER_KERNELS_F16, &steps);
        CHECK(steps >= 5 && on == (f16 && !k ? steps : 0), "%s plan: %d of %d convolutions on F16 kernels", k ? "fp32" : "fp16",
              on, steps);
    }
    remove(rec);
    luthier_context_destroy(ctx);
    gb_free(&b);
}

/* The fp16-arithmetic kernels run only where the CPU has FP16 (HWCAP_ASIMDHP): elsewhere
   naming one is UNSUPPORTED, never an illegal instruction (qemu -cpu cortex-a72 runs this). */
static void test_fp16_arithmetic_gated(void) {
    luthier_context *ctx = test_context(0, 0, 0);
    int i, tried = 0;
    for (i = 0; i < luthier_kernels_count(LUTHIER_KERNELS_F16); i++) {
        luthier_kernel_info ki;
        luthier_sgemm_desc d;
        float a[8 * 5], b[5 * 30], c[8 * 30];
        luthier_status s;
        luthier_kernels_get(LUTHIER_KERNELS_F16, i, &ki);
        test_fill(a, 40);
        test_fill(b, 150);
        memset(&d, 0, sizeof d);
        d.m = 8; d.n = 30; d.k = 5;
        d.kernel = ki.name;
        s = luthier_sgemm(ctx, &d, a, b, c);
        CHECK(ki.available ? s == LUTHIER_STATUS_OK : s == LUTHIER_STATUS_UNSUPPORTED, "%s (available %d): %s", ki.name, ki.available,
              luthier_context_error(ctx));
        CHECK(!strcmp(ki.isa, "scalar") || (ki.required_cpu_features & (LUTHIER_CPU_FP16 | LUTHIER_CPU_AVX512FP16)),
              "%s must require fp16 arithmetic", ki.name);
        tried++;
    }
    CHECK(tried >= 1, "no F16 kernels");
    luthier_context_destroy(ctx);
}

/* An fp16 plan of the mini ResNet: its convolutions run on the F16 kernels where the CPU has
   fp16 arithmetic (qemu neoverse-n1), fp32 elsewhere; within fp16's error of the interpreter. */
static void test_fp16_plan_conv(void) {
    int t;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        const char *f16 = NULL;
        luthier_plan_desc pd;
        luthier_plan *p = NULL;
        gb b;
        int x, i, convs = 0, on_f16 = 0;
        float *img;
        const void *ins[1];
        if (luthier__f16_kernel(ctx, 1)) f16 = luthier__f16_kernel(ctx, 1)->isa;
        build_mini_resnet(&b, 1, 24, &x);
        img = rand_buf(3 * 24 * 24, -1, 1);
        ins[0] = img;
        memset(&pd, 0, sizeof pd);
        pd.precision = LUTHIER_PRECISION_FP16;
        plan_vs_ref(ctx, b.g, &pd, ins, f16 ? 2e-2 : 2e-3, t == 1 ? "fp16 mini resnet, 1 thread" : "fp16 mini resnet, 2 threads");
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
        if (p) {
            luthier_plan_info info;
            luthier_plan_get_info(p, &info);
            for (i = 0; i < info.num_steps; i++) {
                luthier_step_info si;
                luthier_plan_step_info(p, i, &si);
                if (si.op != LUTHIER_OP_CONV2D) continue;
                convs++;
                on_f16 += f16 && luthier__kernel_named(si.kernel) && luthier__kernel_named(si.kernel)->family == LUTHIER_KERNELS_F16 &&
                          !strcmp(luthier__kernel_named(si.kernel)->isa, f16);
            }
        }
        CHECK(convs >= 5 && on_f16 == (f16 ? convs : 0), "%d of %d convolutions on F16 kernels of %s", on_f16, convs, f16 ? f16 : "(none)");
        luthier_plan_destroy(p);
        free(img);
        luthier_context_destroy(ctx);
        gb_free(&b);
    }
}

/* ---- fp16 activations (luthier_plan_desc.fp16_activations) ---------------------------------- */

/* The plan's conversion passes (luthier__op_narrow_h16 / _widen_h16: FCVTN / FCVTL, F16C, plain
   C) give luthier__f32_to_f16's / luthier__f16_to_f32's bits for every half, and for floats of
   random bits (NaNs, infinities, subnormals, ties), at sizes around the vector width and the
   work unit, at 1 and 2 threads; the plain C path (features 0) too. */
static void test_fp16_act_convert(void) {
    static const size_t sizes[] = {0, 1, 7, 8, 9, 31, 65536 + 3, 2 * 16384 + 17};
    int t;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        size_t si, i;
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const size_t n = sizes[si];
            float *x = (float *)test_alloc(n * sizeof(float) + 4), *y = (float *)test_alloc(n * sizeof(float) + 4);
            uint16_t *h = (uint16_t *)test_alloc(n * sizeof(uint16_t) + 2), *hc = (uint16_t *)test_alloc(n * sizeof(uint16_t) + 2);
            size_t bad = 0, bad_c = 0;
            for (i = 0; i < n; i++) {
                uint32_t b = (uint32_t)test_rand_u64();
                if (i % 4 == 1) b = (b & 0x8000000fu) | ((uint32_t)(0x33 + (b >> 8) % 0x4c) << 23); /* near fp16's range */
                if (i % 4 == 2) b = (b & 0x80000000u) | (uint32_t)(0x38000000u + (b >> 4) % 0xf800000u) | 0xfffu; /* ties */
                memcpy(&x[i], &b, sizeof b);
            }
            CHECK(luthier__op_narrow_h16(ctx, NULL, x, h, n) == LUTHIER_STATUS_OK, "narrow: %s", luthier_context_error(ctx));
            luthier__op_narrow_h16_run(0, x, hc, n);
            for (i = 0; i < n; i++) {
                bad += h[i] != luthier__f32_to_f16(x[i]);
                bad_c += hc[i] != luthier__f32_to_f16(x[i]);
            }
            CHECK(bad == 0 && bad_c == 0, "n %zu, %d threads: %zu (SIMD) / %zu (C) halves differ from luthier__f32_to_f16", n, t,
                  bad, bad_c);
            for (i = 0; i < n; i++) h[i] = (uint16_t)(i * 40503u + (size_t)t); /* every half for the large sizes */
            CHECK(luthier__op_widen_h16(ctx, NULL, h, y, n) == LUTHIER_STATUS_OK, "widen: %s", luthier_context_error(ctx));
            luthier__op_widen_h16_run(0, h, x, n);
            for (bad = bad_c = 0, i = 0; i < n; i++) {
                const float want = luthier__f16_to_f32(h[i]);
                bad += fp16_bits(y[i]) != fp16_bits(want);
                bad_c += fp16_bits(x[i]) != fp16_bits(want);
            }
            CHECK(bad == 0 && bad_c == 0, "n %zu, %d threads: %zu (SIMD) / %zu (C) floats differ from luthier__f16_to_f32", n, t,
                  bad, bad_c);
            free(x), free(y), free(h), free(hc);
        }
        luthier_context_destroy(ctx);
    }
}

/* A convolution on fp16 activations (luthier__conv_use_h16) against the same F16 kernel on fp32
   activations: the fp32 layer on the widened input (accumulating onto the widened output when
   it accumulates), its output rounded by luthier__f32_to_f16, must give the same bits (the
   packed A, the sums and the epilogue are the same; only the rounding of the result is added).
   Every F16 kernel this CPU runs (the scalar emulation anywhere), 1x1 and im2col, groups,
   strides, padding, accumulation, activations, 1 and 2 threads. */
static void test_fp16_act_conv_exact(void) {
    int f, trial, t;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
            luthier_kernel_info ki;
            luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
            if (!ki.available) continue;
            for (trial = 0; trial < (T.quick ? 8 : 24); trial++) {
                static const luthier_activation acts[4] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU, LUTHIER_ACTIVATION_RELU6,
                                                           LUTHIER_ACTIVATION_GELU};
                luthier_conv2d_desc d;
                luthier_conv2d_layer *c16 = NULL, *c32 = NULL;
                size_t nin, nw, nout = 0, i, bad = 0;
                float *x, *w, *bias, *xw, *y32;
                uint16_t *xh, *yh;
                int64_t oh = 0, ow = 0;
                memset(&d, 0, sizeof d);
                d.batch = 1 + trial % 2;
                d.groups = trial % 3 == 2 ? 2 : 1;
                d.in_channels = d.groups * test_rand_int(1, 40);
                d.out_channels = d.groups * test_rand_int(1, 50);
                d.in_h = test_rand_int(3, 12);
                d.in_w = test_rand_int(3, 12);
                d.kernel_h = d.kernel_w = trial % 2 ? 3 : 1;
                d.stride_h = d.stride_w = trial % 4 == 3 ? 2 : 1;
                d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = d.kernel_h == 3 && trial % 5 ? 1 : 0;
                d.activation = acts[trial % 4];
                d.accumulate = trial % 5 == 1;
                d.layout = LUTHIER_LAYOUT_NHWC;
                d.kernel = ki.name;
                nin = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
                nw = (size_t)(d.out_channels * (d.in_channels / d.groups) * d.kernel_h * d.kernel_w);
                x = rand_buf(nin, -2, 2);
                w = rand_buf(nw, -0.5f, 0.5f);
                bias = rand_buf((size_t)d.out_channels, -1, 1);
                xh = (uint16_t *)test_alloc(nin * sizeof(uint16_t));
                xw = (float *)test_alloc(nin * sizeof(float));
                for (i = 0; i < nin; i++) xh[i] = luthier__f32_to_f16(x[i]), xw[i] = luthier__f16_to_f32(xh[i]);
                CHECK(luthier_conv2d_create(ctx, &d, w, bias, &c16) == LUTHIER_STATUS_OK &&
                          luthier_conv2d_create(ctx, &d, w, bias, &c32) == LUTHIER_STATUS_OK,
                      "%s: %s", ki.name, luthier_context_error(ctx));
                CHECK(!c16 || luthier__conv_use_h16(ctx, c16) == LUTHIER_STATUS_OK, "use_h16: %s", luthier_context_error(ctx));
                if (c16 && c32 && c16->h16) {
                    luthier_conv2d_output_size(&d, &oh, &ow);
                    nout = (size_t)(d.batch * d.out_channels * oh * ow);
                    y32 = rand_buf(nout, -3, 3);
                    yh = (uint16_t *)test_alloc(nout * sizeof(uint16_t) + 2);
                    for (i = 0; i < nout; i++) yh[i] = luthier__f32_to_f16(y32[i]), y32[i] = luthier__f16_to_f32(yh[i]);
                    CHECK(luthier_conv2d_run(ctx, c32, xw, y32) == LUTHIER_STATUS_OK &&
                              luthier_conv2d_run(ctx, c16, (const float *)(const void *)xh, (float *)(void *)yh) == LUTHIER_STATUS_OK,
                          "run: %s", luthier_context_error(ctx));
                    for (i = 0; i < nout; i++) bad += yh[i] != luthier__f32_to_f16(y32[i]);
                    CHECK(bad == 0, "%s trial %d (%lldx%lld k%lld g%lld acc %d act %d), %d threads: %zu of %zu outputs differ",
                          ki.name, trial, (long long)d.in_channels, (long long)d.out_channels, (long long)d.kernel_h,
                          (long long)d.groups, d.accumulate, (int)d.activation, t, bad, nout);
                    free(y32), free(yh);
                }
                luthier_conv2d_destroy(c16);
                luthier_conv2d_destroy(c32);
                free(x), free(w), free(bias), free(xh), free(xw);
            }
        }
        { /* layers without an fp16-activation form are refused by name */
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            float w[4 * 4 * 9];
            test_fill(w, 4 * 4 * 9);
            memset(&d, 0, sizeof d);
            d.batch = 1, d.in_channels = d.out_channels = 4, d.in_h = d.in_w = 8, d.kernel_h = d.kernel_w = 3;
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "fp32: %s", luthier_context_error(ctx));
            CHECK(!cv || (luthier__conv_use_h16(ctx, cv) == LUTHIER_STATUS_UNSUPPORTED && strstr(luthier_context_error(ctx), "fp16")),
                  "an fp32 layer took fp16 activations: %s", luthier_context_error(ctx));
            luthier_conv2d_destroy(cv);
        }
        luthier_context_destroy(ctx);
    }
}

/* One output of a convolution (NHWC x, OIHW w, both holding fp16 values) in double: the sum
   over the layer's taps (zero in the padding) into *ref, the sum of the terms' magnitudes into
   *mag. */
static void fp16_conv_ref_at(const luthier_conv2d_desc *d, const float *x, const float *w, int64_t n, int64_t oy, int64_t ox,
                             int64_t co, double *ref, double *mag) {
    const int64_t cg = d->in_channels / d->groups, g = co / (d->out_channels / d->groups);
    int64_t ci, kh, kw;
    *ref = *mag = 0.0;
    for (kh = 0; kh < d->kernel_h; kh++)
        for (kw = 0; kw < d->kernel_w; kw++) {
            const int64_t iy = oy * d->stride_h - d->pad_top + kh * d->dilation_h, ix = ox * d->stride_w - d->pad_left + kw * d->dilation_w;
            if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) continue;
            for (ci = 0; ci < cg; ci++) {
                const double t = (double)x[((n * d->in_h + iy) * d->in_w + ix) * d->in_channels + g * cg + ci] *
                                 w[((co * cg + ci) * d->kernel_h + kh) * d->kernel_w + kw];
                *ref += t;
                *mag += fabs(t);
            }
        }
}

/* The hybrid F16 kernels under every convolution algorithm they run (implicit GEMM: wide
   segments for few channels, dilation, groups, padding up to 2, stride 2; 1x1 in place;
   im2col), on fp32 and on fp16 activations, at 1 and 2 threads, against the double-precision
   sum of the fp16 operands: within the fp16 sums' error (2^-8 of the terms' magnitudes, as the
   kernel tester) plus the fp16 output's rounding. Channels past LUTHIER__F16_MAX_KC (one
   segment cut into calls) and accumulation (a fused residual add) included. */
static void test_fp16_hybrid_conv(void) {
    static const int cins[] = {3, 1, 20, 37, 290, 8, 64, 5};
    int f, t, trial, tested = 0;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
            luthier_kernel_info ki;
            luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
            if (!ki.available || ki.kind != LUTHIER_KERNEL_HYBRID) continue;
            for (trial = 0; trial < (T.quick ? 16 : 40); trial++) {
                luthier_conv2d_desc d;
                luthier_conv2d_layer *cv = NULL;
                luthier_conv2d_info info;
                const int h16 = trial % 2, k = trial % 8 == 3 ? 1 : trial % 8 == 6 ? 5 : 3;
                size_t nin, nw, nout, i, bad = 0;
                int64_t oh = 0, ow = 0, n, y, x, c;
                float *xv, *w, *bias, *y0, *yf = NULL;
                uint16_t *xh = NULL, *yh = NULL;
                memset(&d, 0, sizeof d);
                d.batch = 1 + trial % 3 / 2;
                d.groups = trial % 5 == 4 ? 2 : 1;
                d.in_channels = d.groups * cins[trial % 8];
                d.out_channels = d.groups * test_rand_int(1, 70);
                d.in_h = test_rand_int(k, k + 6);
                d.in_w = test_rand_int(k, k + 6);
                d.kernel_h = d.kernel_w = k;
                d.stride_h = d.stride_w = trial % 7 == 2 ? 2 : 1;
                d.dilation_h = d.dilation_w = k == 3 && trial % 6 == 5 ? 2 : 1;
                d.pad_top = d.pad_bottom = k == 1 ? 0 : trial % 3;
                d.pad_left = d.pad_right = k == 1 ? 0 : (trial + 1) % 3;
                if (d.dilation_h == 2) d.in_h += 2, d.in_w += 2;
                d.activation = trial % 4 == 1 ? LUTHIER_ACTIVATION_RELU : LUTHIER_ACTIVATION_NONE;
                d.accumulate = trial % 5 == 2;
                d.layout = LUTHIER_LAYOUT_NHWC;
                d.algorithm = k == 1 && trial % 16 == 3 ? LUTHIER_CONV_1X1 : trial % 11 == 7 ? LUTHIER_CONV_IM2COL
                                                                                            : LUTHIER_CONV_IMPLICIT_GEMM;
                d.kernel = ki.name;
                nin = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
                nw = (size_t)(d.out_channels * (d.in_channels / d.groups) * d.kernel_h * d.kernel_w);
                luthier_conv2d_output_size(&d, &oh, &ow);
                nout = (size_t)(d.batch * d.out_channels * oh * ow);
                xv = rand_buf(nin, -2, 2);
                w = rand_buf(nw, -0.5f, 0.5f);
                bias = rand_buf((size_t)d.out_channels, -1, 1);
                y0 = rand_buf(nout, -3, 3);
                for (i = 0; i < nin; i++) xv[i] = operand_round(xv[i], 2);
                for (i = 0; i < nw; i++) w[i] = operand_round(w[i], 2);
                for (i = 0; i < nout; i++) y0[i] = operand_round(y0[i], 2);
                CHECK(luthier_conv2d_create(ctx, &d, w, bias, &cv) == LUTHIER_STATUS_OK, "%s: %s", ki.name, luthier_context_error(ctx));
                CHECK(!cv || !h16 || luthier__conv_use_h16(ctx, cv) == LUTHIER_STATUS_OK, "use_h16: %s", luthier_context_error(ctx));
                if (cv && (!h16 || cv->h16)) {
                    luthier_status s;
                    luthier_conv2d_get_info(cv, &info);
                    CHECK(info.algorithm == d.algorithm && !strcmp(info.kernel, ki.name), "info: %s %s", info.kernel,
                          luthier_conv_algorithm_name(info.algorithm));
                    if (h16) {
                        xh = (uint16_t *)test_alloc(nin * sizeof(uint16_t));
                        yh = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
                        for (i = 0; i < nin; i++) xh[i] = luthier__f32_to_f16(xv[i]);
                        for (i = 0; i < nout; i++) yh[i] = luthier__f32_to_f16(y0[i]);
                        s = luthier_conv2d_run(ctx, cv, (const float *)(const void *)xh, (float *)(void *)yh);
                    } else {
                        yf = (float *)test_alloc(nout * sizeof(float));
                        memcpy(yf, y0, nout * sizeof(float));
                        s = luthier_conv2d_run(ctx, cv, xv, yf);
                    }
                    CHECK(s == LUTHIER_STATUS_OK, "run: %s", luthier_context_error(ctx));
                    for (i = 0, n = 0; n < d.batch; n++)
                        for (y = 0; y < oh; y++)
                            for (x = 0; x < ow; x++)
                                for (c = 0; c < d.out_channels; c++, i++) {
                                    double ref, mag, got, tol;
                                    fp16_conv_ref_at(&d, xv, w, n, y, x, c, &ref, &mag);
                                    ref += bias[c] + (d.accumulate ? y0[i] : 0.0);
                                    mag += fabs(bias[c]) + (d.accumulate ? fabs(y0[i]) : 0.0);
                                    if (d.activation == LUTHIER_ACTIVATION_RELU && ref < 0) ref = 0;
                                    got = h16 ? luthier__f16_to_f32(yh[i]) : yf[i];
                                    tol = 1e-6 + 0x1p-8 * mag + (h16 ? 0x1p-10 * fabs(ref) : 0.0);
                                    if (!(fabs(got - ref) <= tol) && !bad++)
                                        printf("    %s trial %d (cin %lld cout %lld k%d s%lld d%lld g%lld h16 %d, %s), %d threads: "
                                               "out %zu = %g, want %g\n", ki.name, trial, (long long)d.in_channels,
                                               (long long)d.out_channels, k, (long long)d.stride_h, (long long)d.dilation_h,
                                               (long long)d.groups, h16, luthier_conv_algorithm_name(d.algorithm), t, i, got, ref);
                                }
                    CHECK(bad == 0, "%s trial %d: %zu of %zu outputs wrong", ki.name, trial, bad, nout);
                    tested++;
                }
                luthier_conv2d_destroy(cv);
                free(xv), free(w), free(bias), free(y0), free(yf), free(xh), free(yh);
                yf = NULL, xh = yh = NULL;
            }
        }
        luthier_context_destroy(ctx);
    }
    printf("    %d hybrid F16 convolutions checked\n", tested);
}

/* conv 3x3 + ReLU -> depthwise 3x3 -> conv 1x1 + (the first conv's output) -> ReLU -> conv 1x1
   and conv 3x3 (configured fp32 when mixed) -> concat -> maxpool -> global pool -> flatten ->
   dense; input [batch, 8, 12, 12]. Node "c4" is the 3x3 of the concat. */
static void fp16_act_build(gb *b, int64_t batch, int *x) {
    int64_t xs[4];
    int c1, y, c3, c4;
    luthier_node_desc d;
    xs[0] = batch, xs[1] = 8, xs[2] = xs[3] = 12;
    memset(b, 0, sizeof *b);
    luthier_graph_create(&b->g);
    luthier_graph_input(b->g, "x", LUTHIER_DTYPE_F32, 4, xs, x);
    c1 = gb_conv(b, "c1", *x, 24, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_RELU);
    y = gb_conv(b, "dw", c1, 24, 3, 1, 1, 24, 1, LUTHIER_ACTIVATION_NONE);
    y = gb_conv(b, "c2", y, 24, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE);
    y = gb_op(b, LUTHIER_OP_ADD, "add", y, c1);
    y = gb_op(b, LUTHIER_OP_RELU, "relu", y, -1);
    c3 = gb_conv(b, "c3", y, 16, 1, 1, 0, 1, 1, LUTHIER_ACTIVATION_NONE);
    c4 = gb_conv(b, "c4", y, 8, 3, 1, 1, 1, 1, LUTHIER_ACTIVATION_RELU6);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONCAT, d.name = "cat", d.axis = 1;
    y = gb_node(b, &d, c3, c4, -1);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_MAXPOOL, d.name = "pool";
    d.kernel[0] = d.kernel[1] = 2, d.stride[0] = d.stride[1] = 2;
    y = gb_node(b, &d, y, -1, -1);
    y = gb_op(b, LUTHIER_OP_GLOBAL_AVGPOOL, "gap", y, -1);
    y = gb_op(b, LUTHIER_OP_FLATTEN, "flatten", y, -1);
    luthier_graph_output(b->g, gb_lin(b, "fc", y, 10, 24));
}

/* Runs a plan of g on inputs ins (outputs of n0 floats, one) and returns its output (malloc'd),
   with its info; NULL when it does not plan or run. */
static float *fp16_act_run(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *pd, const void *const *ins,
                           size_t n0, luthier_plan_info *info, int *fp16_steps, int *fp16_convs, int *convs, const char *what) {
    luthier_plan *p = NULL;
    float *out = (float *)test_alloc(n0 * sizeof(float) + 4);
    void *outs[8] = {NULL};
    int k, ok;
    outs[0] = out;
    for (k = 1; k < luthier_graph_num_outputs(g) && k < 8; k++) { /* (the other outputs: unread) */
        luthier_tensor_info ti;
        size_t n = 1;
        int d;
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, k), &ti);
        for (d = 0; d < ti.rank; d++) n *= (size_t)ti.shape[d];
        outs[k] = test_alloc(n * 8 + 8);
    }
    *fp16_steps = *fp16_convs = *convs = 0;
    ok = luthier_graph_num_outputs(g) <= 8 && luthier_plan_create(ctx, g, pd, &p) == LUTHIER_STATUS_OK &&
         luthier_plan_run(ctx, p, ins, outs) == LUTHIER_STATUS_OK;
    for (k = 1; k < 8; k++) free(outs[k]);
    if (!ok) {
        CHECK(0, "%s: %s", what, luthier_context_error(ctx));
        luthier_plan_destroy(p);
        free(out);
        return NULL;
    }
    luthier_plan_get_info(p, info);
    for (k = 0; k < info->num_steps; k++) {
        luthier_step_info si;
        luthier_plan_step_info(p, k, &si);
        *fp16_steps += si.fp16;
        *fp16_convs += si.fp16 && (si.op == LUTHIER_OP_CONV2D || si.op == LUTHIER_OP_DENSE);
        *convs += si.op == LUTHIER_OP_CONV2D || si.op == LUTHIER_OP_DENSE;
        if (si.fp16 && (si.op == LUTHIER_OP_CONV2D || si.op == LUTHIER_OP_DENSE)) /* the F16 kernels, or NEON FP16's depthwise */
            CHECK(si.algorithm == LUTHIER_CONV_DEPTHWISE
                      ? LUTHIER__SIMD_NEON && (ctx->cpu_features & LUTHIER_CPU_FP16) && !si.kernel[0]
                      : luthier__kernel_named(si.kernel) && luthier__kernel_named(si.kernel)->family == LUTHIER_KERNELS_F16,
                  "%s: step %s on fp16 with kernel '%s'", what, si.name, si.kernel);
        if (si.node < 0 && si.fp16)
            CHECK(!strcmp(si.name, "to_f16") || !strcmp(si.name, "to_f32"), "%s: conversion '%s'", what, si.name);
    }
    if (*fp16_steps) { /* the plan's values: fp16 ones listed */
        char text[16384];
        luthier_plan_describe(p, text, sizeof text);
        CHECK(strstr(text, ":f16 ") != NULL, "%s: no f16 value in the description", what);
    }
    luthier_plan_destroy(p);
    return out;
}

/* fp16-activation plans of fp16_act_build against the fp32 plan (cosine >= 0.999) and the
   interpreter, at 1 and 2 threads: used where the CPU has fp16 arithmetic (qemu neoverse-n1) or
   when forced (fp16_activations = 1: the scalar emulation, so x86 runs the same structure),
   never with -1 nor by default without fp16 arithmetic (cortex-a72, x86 without AVX-512 FP16);
   with c4 configured fp32 (mixed nodes) it stays fp32. (This graph's conversions add about as
   many bytes of activations as its fp16 values save: test_fp16_act_zoo checks the memory.) */
static void test_fp16_act_plan(void) {
    int t, mode, x, k;
    for (t = 1; t <= 2; t++)
        for (mode = -1; mode <= 2; mode++) { /* fp16_activations -1, 0, 1; 2: 1 with c4 configured fp32 */
            luthier_context *ctx = ctx_threads(t);
            const int hw = luthier__f16_kernel(ctx, 64) != NULL, want = mode >= 1 || (mode == 0 && hw);
            const int dw = LUTHIER__SIMD_NEON && (ctx->cpu_features & LUTHIER_CPU_FP16); /* the depthwise too */
            luthier_plan_desc pd, p32;
            luthier_plan_info i16, i32;
            luthier_node_config cfg[64];
            int s16 = 0, c16 = 0, s32, c32, n16, n32;
            float *xin, *y16, *y32;
            const void *ins[1];
            char what[96];
            gb b;
            fp16_act_build(&b, 2, &x);
            xin = rand_buf(2 * 8 * 12 * 12, -1, 1);
            ins[0] = xin;
            memset(&pd, 0, sizeof pd);
            memset(&p32, 0, sizeof p32);
            pd.precision = LUTHIER_PRECISION_FP16;
            pd.fp16_activations = mode > 1 ? 1 : mode;
            if (mode == 2) {
                int c4 = -1;
                memset(cfg, 0, sizeof cfg);
                CHECK(luthier_graph_num_nodes(b.g) <= 64 && luthier_graph_find_node(b.g, "c4", &c4) == LUTHIER_STATUS_OK, "c4");
                if (c4 >= 0) cfg[c4].precision = LUTHIER_PRECISION_FP32;
                pd.configs = cfg;
                pd.num_configs = luthier_graph_num_nodes(b.g);
            }
            snprintf(what, sizeof what, "fp16 activations %d (mode %d), %d threads", pd.fp16_activations, mode, t);
            y16 = fp16_act_run(ctx, b.g, &pd, ins, 2 * 10, &i16, &s16, &c16, &n16, what);
            y32 = fp16_act_run(ctx, b.g, &p32, ins, 2 * 10, &i32, &s32, &c32, &n32, "fp32 plan");
            CHECK(s32 == 0, "the fp32 plan has %d fp16 steps", s32);
            /* c1, c2 (with the add as its residual), c3, and c4 unless configured fp32; dw on NEON FP16 (the dense fc: 2 rows, F16W) */
            CHECK(want ? c16 == (mode == 2 ? 3 : 4) + dw : s16 == 0, "%s: %d fp16 steps, %d fp16 conv/dense layers (want %s)", what, s16, c16,
                  want ? "fp16" : "none");
            if (y16 && y32) {
                const double cs = qp_cosine(y16, y32, 2 * 10);
                double md = 0, mx = 0;
                for (k = 0; k < 2 * 10; k++) { /* (no fmax: GCC 12's AArch64 vectorizer fails on that reduction) */
                    const double dd = fabs((double)y16[k] - y32[k]), a = fabs((double)y32[k]);
                    md = dd > md ? dd : md;
                    mx = a > mx ? a : mx;
                }
                CHECK(cs >= 0.999 && md <= 3e-2 * fmax(mx, 1.0), "%s: cosine %.6f, max |diff| %.3g (max |y| %.3g)", what, cs, md, mx);
            }
            plan_vs_ref(ctx, b.g, &pd, ins, 3e-2, what);
            free(y16), free(y32), free(xin);
            gb_free(&b);
            luthier_context_destroy(ctx);
        }
    { /* the option is checked */
        luthier_context *ctx = ctx_threads(1);
        luthier_plan_desc pd;
        luthier_plan *p = NULL;
        gb b;
        fp16_act_build(&b, 1, &x);
        memset(&pd, 0, sizeof pd);
        pd.fp16_activations = 2;
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && !p &&
                  strstr(luthier_context_error(ctx), "fp16_activations"),
              "fp16_activations 2: %s", luthier_context_error(ctx));
        gb_free(&b);
        luthier_context_destroy(ctx);
    }
}

/* A value on the grid of 2^-8 in [-lim, lim]: fp16 holds it exactly, products of two are
   multiples of 2^-16, and sums of a few of them are exact in fp32. */
static float fp16_grid(int lim) { return (float)test_rand_int(-256 * lim, 256 * lim) / 256.0f; }

/* The model of the fp16 depthwise arithmetic (test_fp16_act_dw_exact) on inputs of the grid of
   fp16_grid: want holds the output's start (accumulate) and gets the result. */
static void fp16_dw_model(const luthier_conv2d_desc *d, const uint16_t *xh, const float *w, const float *bias, uint16_t *want) {
    int64_t oh = 0, ow = 0, n, y, x, c, kh, kw;
    float lo = 0.0f, hi = 0.0f;
    luthier_conv2d_output_size(d, &oh, &ow);
    luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    for (n = 0; n < d->batch; n++)
        for (y = 0; y < oh; y++)
            for (x = 0; x < ow; x++)
                for (c = 0; c < d->in_channels; c++) {
                    const size_t o = (size_t)(((n * oh + y) * ow + x) * d->in_channels + c);
                    float acc = 0.0f, v;
                    for (kh = 0; kh < d->kernel_h; kh++)
                        for (kw = 0; kw < d->kernel_w; kw++) {
                            const int64_t iy = y * d->stride_h - d->pad_top + kh * d->dilation_h;
                            const int64_t ix = x * d->stride_w - d->pad_left + kw * d->dilation_w;
                            double e;
                            if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) continue;
                            e = (double)acc + (double)luthier__f16_to_f32(xh[((n * d->in_h + iy) * d->in_w + ix) * d->in_channels + c]) *
                                                  luthier__f16_to_f32(luthier__f32_to_f16(w[c * d->kernel_h * d->kernel_w + kh * d->kernel_w + kw]));
                            acc = luthier__f16_to_f32(luthier__f32_to_f16((float)e)); /* (e is exact in fp32) */
                        }
                    v = (d->accumulate ? luthier__f16_to_f32(want[o]) : 0.0f) + (bias ? bias[c] : 0.0f);
                    v = v + acc;
                    if (d->activation != LUTHIER_ACTIVATION_NONE) v = v < lo ? lo : v > hi ? hi : v;
                    want[o] = luthier__f32_to_f16(v);
                }
}

/* The depthwise convolution on fp16 activations (NEON FP16: FMLA v.8h) against a model of its
   arithmetic: per channel, the taps inside the image in (kh, kw) order summed in fp16 from zero
   with one rounding each (exact in double on the grid of fp16_grid, then rounded once), then
   ((the output when accumulating) + bias) + the sum in fp32, the clamp, the rounding to fp16.
   Bit for bit, channel tails, strides, dilation, padding, activations, 1 and 2 threads. Where
   the CPU lacks fp16 arithmetic the layer has no fp16 form (UNSUPPORTED). */
static void test_fp16_act_dw_exact(void) {
    static const luthier_activation acts[4] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU, LUTHIER_ACTIVATION_RELU6,
                                               LUTHIER_ACTIVATION_CLAMP};
    int t, trial;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        const int hw = LUTHIER__SIMD_NEON && (ctx->cpu_features & LUTHIER_CPU_FP16);
        for (trial = 0; trial < (hw ? (T.quick ? 10 : 30) : 1); trial++) {
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            size_t nin, nw, nout, i, bad = 0;
            float *w, *bias;
            uint16_t *xh, *yh, *want;
            int64_t oh = 0, ow = 0;
            luthier_status s;
            memset(&d, 0, sizeof d);
            d.batch = 1 + trial % 2;
            d.in_channels = d.out_channels = d.groups = trial % 2 ? test_rand_int(1, 37) : test_rand_int(32, 75); /* (32-channel steps) */
            d.in_h = test_rand_int(1, 11), d.in_w = test_rand_int(1, 11);
            d.kernel_h = d.kernel_w = trial % 3 == 2 ? 5 : 3;
            d.stride_h = d.stride_w = trial % 4 == 3 ? 2 : 1;
            d.dilation_h = d.dilation_w = trial % 5 == 4 ? 2 : 1;
            d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = trial % 3;
            d.activation = acts[trial % 4];
            d.clamp_min = -0.5f, d.clamp_max = 1.5f;
            d.accumulate = trial % 3 == 1;
            d.layout = LUTHIER_LAYOUT_NHWC;
            if (luthier_conv2d_output_size(&d, &oh, &ow) != LUTHIER_STATUS_OK || oh < 1 || ow < 1) d.in_h = d.in_w = 11;
            luthier_conv2d_output_size(&d, &oh, &ow);
            nin = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
            nw = (size_t)(d.in_channels * d.kernel_h * d.kernel_w);
            nout = (size_t)(d.batch * d.out_channels * oh * ow);
            w = (float *)test_alloc(nw * sizeof(float));
            bias = (float *)test_alloc((size_t)d.out_channels * sizeof(float));
            xh = (uint16_t *)test_alloc(nin * sizeof(uint16_t));
            yh = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            want = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            for (i = 0; i < nw; i++) w[i] = fp16_grid(1);
            for (i = 0; i < (size_t)d.out_channels; i++) bias[i] = fp16_grid(1) + 1.0f / 1024;
            for (i = 0; i < nin; i++) xh[i] = luthier__f32_to_f16(fp16_grid(2));
            for (i = 0; i < nout; i++) yh[i] = want[i] = luthier__f32_to_f16(fp16_grid(2));
            CHECK(luthier_conv2d_create(ctx, &d, w, trial % 5 ? bias : NULL, &cv) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
            s = cv ? luthier__conv_use_h16(ctx, cv) : LUTHIER_STATUS_INVALID_ARGUMENT;
            CHECK(hw ? s == LUTHIER_STATUS_OK : s == LUTHIER_STATUS_UNSUPPORTED, "use_h16 (fp16 arithmetic %d): %s", hw,
                  luthier_context_error(ctx));
            if (hw && s == LUTHIER_STATUS_OK) {
                fp16_dw_model(&d, xh, w, trial % 5 ? bias : NULL, want);
                CHECK(luthier_conv2d_run(ctx, cv, (const float *)(const void *)xh, (float *)(void *)yh) == LUTHIER_STATUS_OK, "run: %s",
                      luthier_context_error(ctx));
                for (i = 0; i < nout; i++) bad += yh[i] != want[i];
                CHECK(bad == 0, "trial %d (C %lld, k %lld, stride %lld, dil %lld, pad %lld, act %d, acc %d), %d threads: %zu of %zu differ",
                      trial, (long long)d.in_channels, (long long)d.kernel_h, (long long)d.stride_h, (long long)d.dilation_h,
                      (long long)d.pad_top, (int)d.activation, d.accumulate, t, bad, nout);
            }
            luthier_conv2d_destroy(cv);
            free(w), free(bias), free(xh), free(yh), free(want);
        }
        luthier_context_destroy(ctx);
    }
}

/* The pixel routine (luthier__dw_h16_pixel_neon) on every output pixel of fp16 depthwise layer d,
   pixel by pixel, its taps inside the image in (kh, kw) order: the arithmetic the segment kernels
   of the row runs must reproduce bit for bit. want holds the output's start. */
static void fp16_dw_pixels(const luthier_conv2d_desc *d, const uint16_t *xh, const uint16_t *wh, const float *bias, uint16_t *want) {
#if LUTHIER__SIMD_NEON
    const uint16_t *xs[LUTHIER__DW_H16_TAPS], *ws[LUTHIER__DW_H16_TAPS];
    const size_t C = (size_t)d->in_channels;
    int64_t oh = 0, ow = 0, n, y, x, kh, kw;
    float lo = 0.0f, hi = 0.0f;
    const int clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    luthier_conv2d_output_size(d, &oh, &ow);
    for (n = 0; n < d->batch; n++)
        for (y = 0; y < oh; y++)
            for (x = 0; x < ow; x++) {
                int taps = 0;
                for (kh = 0; kh < d->kernel_h; kh++)
                    for (kw = 0; kw < d->kernel_w; kw++) {
                        const int64_t iy = y * d->stride_h - d->pad_top + kh, ix = x * d->stride_w - d->pad_left + kw;
                        if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) continue;
                        xs[taps] = xh + (size_t)((n * d->in_h + iy) * d->in_w + ix) * C;
                        ws[taps++] = wh + (size_t)(kh * d->kernel_w + kw) * C;
                    }
                luthier__dw_h16_pixel_neon(want + (size_t)((n * oh + y) * ow + x) * C, xs, ws, taps, bias, d->accumulate, clamp, lo, hi, C);
            }
#else
    (void)d, (void)xh, (void)wh, (void)bias, (void)want;
#endif
}

/* The segment kernels of the fp16 depthwise run (3x3 and 5x5, stride 1 and 2 along the row: the
   interior pixels of each row in groups of 8, 4, 2, 1 per 8-channel vector; the borders and the
   channels past the last whole vector through the pixel routine) against the pixel routine
   itself on the same inputs (fp16_dw_pixels, same bits: values that round in fp16, signed zeros
   and zero weights among them) and, on grid inputs, against the model of test_fp16_act_dw_exact.
   C 8, 24, 40, 72, 200 and tails 13, 27; runs of 1..20 interior pixels (every group size and
   remainder); padding 0..2 on each side, stride 1 or 2 across the rows, accumulate, clamp,
   bias or none, batch 1 and 2; 1 and 2 threads (runs cut where the split falls). Runs where the
   CPU has fp16 arithmetic (NEON FP16; test_fp16_act_dw_exact checks the refusal elsewhere). */
static void test_fp16_act_dw_rows(void) {
    static const int chans[] = {8, 24, 40, 72, 200, 13, 27};
    static const luthier_activation acts[4] = {LUTHIER_ACTIVATION_NONE, LUTHIER_ACTIVATION_RELU6, LUTHIER_ACTIVATION_CLAMP,
                                               LUTHIER_ACTIVATION_NONE};
    int t, trial;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        const int hw = LUTHIER__SIMD_NEON && (ctx->cpu_features & LUTHIER_CPU_FP16);
        for (trial = 0; hw && trial < (T.quick ? 56 : 168); trial++) {
            const int K = trial % 4 < 2 ? 3 : 5, S = trial % 2 ? 2 : 1, grid = trial % 7 == 3, nint = 1 + (trial * 7) % 20;
            luthier_conv2d_desc d;
            luthier_conv2d_layer *cv = NULL;
            size_t nin, nw, nout, i, bad = 0, badm = 0;
            float *w, *bias;
            uint16_t *xh, *yh, *want, *model;
            int64_t oh = 0, ow = 0;
            memset(&d, 0, sizeof d);
            d.batch = trial % 5 == 4 ? 2 : 1;
            d.in_channels = d.out_channels = d.groups = chans[(trial / 4) % 7];
            d.kernel_h = d.kernel_w = K;
            d.stride_w = S;
            d.stride_h = trial % 3 == 2 ? 3 - S : S;
            d.dilation_h = d.dilation_w = 1;
            d.pad_left = (trial / 2) % 3, d.pad_right = (trial / 3) % 3, d.pad_top = trial % 3, d.pad_bottom = (trial / 5) % 3;
            d.in_w = K + (nint - 1) * S; /* nint interior pixels a row */
            d.in_h = K + trial % 3;
            d.activation = acts[(trial / 2) % 4];
            d.clamp_min = -0.5f, d.clamp_max = 0.75f;
            d.accumulate = (trial / 3) % 2;
            d.layout = LUTHIER_LAYOUT_NHWC;
            luthier_conv2d_output_size(&d, &oh, &ow);
            nin = (size_t)(d.batch * d.in_channels * d.in_h * d.in_w);
            nw = (size_t)(d.in_channels * K * K);
            nout = (size_t)(d.batch * d.out_channels * oh * ow);
            w = (float *)test_alloc(nw * sizeof(float));
            bias = (float *)test_alloc((size_t)d.out_channels * sizeof(float));
            xh = (uint16_t *)test_alloc(nin * sizeof(uint16_t));
            yh = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            want = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            model = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            for (i = 0; i < nw; i++) w[i] = grid ? fp16_grid(1) : i % 11 == 5 ? 0.0f : test_rand_float();
            for (i = 0; i < (size_t)d.out_channels; i++) bias[i] = grid ? fp16_grid(1) + 1.0f / 1024 : test_rand_float() * 0.5f;
            for (i = 0; i < nin; i++) xh[i] = luthier__f32_to_f16(grid ? fp16_grid(2) : i % 13 == 7 ? -0.0f : 2.0f * test_rand_float());
            for (i = 0; i < nout; i++) yh[i] = want[i] = model[i] = luthier__f32_to_f16(grid ? fp16_grid(2) : test_rand_float());
            CHECK(luthier_conv2d_create(ctx, &d, w, trial % 6 ? bias : NULL, &cv) == LUTHIER_STATUS_OK, "%s", luthier_context_error(ctx));
            CHECK(cv && luthier__conv_use_h16(ctx, cv) == LUTHIER_STATUS_OK, "use_h16: %s", luthier_context_error(ctx));
            if (cv && cv->h16) {
                fp16_dw_pixels(&d, xh, (const uint16_t *)(const void *)cv->packed, trial % 6 ? bias : NULL, want);
                if (grid) fp16_dw_model(&d, xh, w, trial % 6 ? bias : NULL, model);
                CHECK(luthier_conv2d_run(ctx, cv, (const float *)(const void *)xh, (float *)(void *)yh) == LUTHIER_STATUS_OK, "run: %s",
                      luthier_context_error(ctx));
                for (i = 0; i < nout; i++) {
                    bad += yh[i] != want[i];
                    badm += grid && yh[i] != model[i];
                }
                CHECK(bad == 0 && badm == 0,
                      "trial %d (%dx%d s%lld,%lld C %lld, %lldx%lld, pad %lld,%lld,%lld,%lld, act %d, acc %d, n %lld%s), %d threads: "
                      "%zu of %zu differ from the pixel routine, %zu from the model",
                      trial, K, K, (long long)d.stride_h, (long long)d.stride_w, (long long)d.in_channels, (long long)d.in_h,
                      (long long)d.in_w, (long long)d.pad_top, (long long)d.pad_left, (long long)d.pad_bottom, (long long)d.pad_right,
                      (int)d.activation, d.accumulate, (long long)d.batch, grid ? ", grid" : "", t, bad, nout, badm);
            }
            luthier_conv2d_destroy(cv);
            free(w), free(bias), free(xh), free(yh), free(want), free(model);
        }
        luthier_context_destroy(ctx);
    }
}

/* fp16-activation plans of the small zoo CNNs against their fp32 plans: output cosine >= 0.999,
   at 1 and 2 threads; where fp16 activations apply (fp16 arithmetic, or forced: the scalar
   emulation) most convolutions pass fp16, and when all do the arena is smaller; else none do. */
static void test_fp16_act_zoo(void) {
    static const char *const quick[] = {"mobilenet_v2_small", "resnet18_small", "bert_small", "gpt2_small"};
    static const char *const full[] = {"mobilenet_v2_small", "resnet18_small", "resnet50_small", "googlenet_small",
                                       "bert_small", "gpt2_small"};
    const char *const *names = T.quick ? quick : full;
    const int count = T.quick ? 4 : 6;
    int i, t;
    for (i = 0; i < count; i++)
        for (t = 1; t <= 2; t++) {
            luthier_context *ctx = ctx_threads(t);
            const int hw = luthier__f16_kernel(ctx, 64) != NULL;
            luthier_graph *g = NULL;
            luthier_zoo_info info;
            luthier_plan_desc pd, p32;
            luthier_plan_info i16, i32;
            void *bufs[LUTHIER_ZOO_MAX_IO] = {NULL};
            float *y16 = NULL, *y32 = NULL;
            char err[256], what[128];
            int k, s16 = 0, c16 = 0, s32 = 0, c32 = 0, n16 = 0, n32 = 0;
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
            pd.fp16_activations = hw || t == 2 ? 0 : 1; /* (x86 and cortex-a72: forced at 1 thread, the default at 2) */
            snprintf(what, sizeof what, "%s, fp16 activations %d, %d threads", names[i], pd.fp16_activations, t);
            if (g) y16 = fp16_act_run(ctx, g, &pd, (const void *const *)bufs, info.output_bytes[0] / 4, &i16, &s16, &c16, &n16, what);
            if (g) y32 = fp16_act_run(ctx, g, &p32, (const void *const *)bufs, info.output_bytes[0] / 4, &i32, &s32, &c32, &n32, "fp32");
            if (y16 && y32) {
                const double cs = qp_cosine(y16, y32, info.output_bytes[0] / 4);
                CHECK(cs >= 0.999, "%s: cosine %.6f", what, cs);
                /* where every convolution passes fp16 (fp32 depthwise layers need conversions) the arena shrinks */
                if (hw || pd.fp16_activations == 1)
                    CHECK(c16 >= 8 && (c16 < n32 || i16.arena_bytes < i32.arena_bytes),
                          "%s: %d of %d convolutions on fp16, arena %zu (fp32 plan %zu)", what, c16, n32, i16.arena_bytes,
                          i32.arena_bytes);
                else
                    CHECK(s16 == 0, "%s: %d fp16 steps without fp16 arithmetic", what, s16);
                printf("    %s: cosine %.6f, %d fp16 steps (%d conv/dense layers), activations %zu / %zu bytes, arena %zu / %zu\n", what,
                       cs, s16, c16, i16.sum_activation_bytes, i32.sum_activation_bytes, i16.arena_bytes, i32.arena_bytes);
            }
            free(y16), free(y32);
            for (k = 0; k < LUTHIER_ZOO_MAX_IO; k++) free(bufs[k]);
            luthier_graph_destroy(g);
            luthier_context_destroy(ctx);
        }
}

/* The zoo's small networks in fp16 plans with every convolution configured onto each hybrid F16
   kernel this CPU runs (implicit GEMM, 1x1 in place; depthwise layers as implicit GEMM of one
   channel per group; a configured layer keeps fp32 activations, whose rows the driver rounds to
   fp16): every convolution step runs the kernel, and the output keeps its cosine to the fp32
   plan's (>= 0.999), at 1 and 2 threads. (The default fp16 plans, on fp16 activations, are
   test_fp16_act_zoo's.) */
static void test_fp16_hybrid_zoo(void) {
    static const char *const names[] = {"mobilenet_v2_small", "resnet18_small"};
    int f, i, t, tested = 0;
    for (f = 0; f < luthier_kernels_count(LUTHIER_KERNELS_F16); f++) {
        luthier_kernel_info ki;
        luthier_kernels_get(LUTHIER_KERNELS_F16, f, &ki);
        if (!ki.available || ki.kind != LUTHIER_KERNEL_HYBRID || !strcmp(ki.isa, "scalar")) continue;
        for (i = 0; i < 2; i++)
            for (t = 1; t <= 2; t++) {
                luthier_context *ctx = ctx_threads(t);
                luthier_graph *g = NULL;
                luthier_zoo_info info;
                luthier_plan_desc pd, p32;
                luthier_plan_info i16, i32;
                luthier_node_config *cfg = NULL;
                void *bufs[LUTHIER_ZOO_MAX_IO] = {NULL};
                float *y16 = NULL, *y32 = NULL;
                char err[256], what[160];
                int k, n = 0, s16 = 0, c16 = 0, s32 = 0, c32 = 0, n16 = 0, n32 = 0;
                CHECK(luthier_zoo_build(names[i], NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK &&
                          luthier_zoo_get_info(names[i], NULL, &info) == LUTHIER_STATUS_OK,
                      "%s: %s", names[i], err);
                for (k = 0; g && k < info.num_inputs; k++) {
                    bufs[k] = test_alloc(info.input_bytes[k]);
                    luthier_zoo_input(names[i], NULL, k, bufs[k], info.input_bytes[k]);
                }
                if (g) {
                    n = luthier_graph_num_nodes(g);
                    cfg = (luthier_node_config *)test_alloc((size_t)n * sizeof *cfg);
                    memset(cfg, 0, (size_t)n * sizeof *cfg);
                    for (k = 0; k < n; k++) {
                        luthier_op op;
                        if (luthier_graph_node(g, k, &op, NULL, NULL, NULL, NULL, NULL, NULL) == LUTHIER_STATUS_OK &&
                            op == LUTHIER_OP_CONV2D)
                            snprintf(cfg[k].kernel, sizeof cfg[k].kernel, "%s", ki.name + 22);
                    }
                }
                memset(&pd, 0, sizeof pd);
                memset(&p32, 0, sizeof p32);
                pd.precision = LUTHIER_PRECISION_FP16;
                pd.configs = cfg;
                pd.num_configs = n;
                snprintf(what, sizeof what, "%s on %s, %d threads", names[i], ki.name + 22, t);
                if (g) y16 = fp16_act_run(ctx, g, &pd, (const void *const *)bufs, info.output_bytes[0] / 4, &i16, &s16, &c16, &n16, what);
                if (g) y32 = fp16_act_run(ctx, g, &p32, (const void *const *)bufs, info.output_bytes[0] / 4, &i32, &s32, &c32, &n32, "fp32");
                if (y16 && y32) {
                    const double cs = qp_cosine(y16, y32, info.output_bytes[0] / 4);
                    CHECK(cs >= 0.999 && n16 == n32 && i16.num_fallbacks == 0, "%s: cosine %.6f, %d fallbacks", what, cs,
                          i16.num_fallbacks);
                    printf("    %s: cosine %.6f (%d convolutions, %d fp16 steps)\n", what, cs, n16, s16);
                    tested++;
                }
                if (g) { /* every convolution step on the kernel */
                    luthier_plan *p = NULL;
                    int on = 0, convs = 0;
                    if (luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK) {
                        luthier_plan_get_info(p, &i16);
                        for (k = 0; k < i16.num_steps; k++) {
                            luthier_step_info si;
                            luthier_plan_step_info(p, k, &si);
                            convs += si.op == LUTHIER_OP_CONV2D;
                            on += si.op == LUTHIER_OP_CONV2D && !strcmp(si.kernel, ki.name);
                        }
                    }
                    CHECK(convs >= 8 && on == convs, "%s: %d of %d convolution steps on the kernel", what, on, convs);
                    luthier_plan_destroy(p);
                }
                free(y16), free(y32), free(cfg);
                for (k = 0; k < LUTHIER_ZOO_MAX_IO; k++) free(bufs[k]);
                luthier_graph_destroy(g);
                luthier_context_destroy(ctx);
            }
    }
    printf("    %d plans on hybrid F16 kernels checked\n", tested);
}

/* Max pooling on fp16 activations against the fp32 pooling of the widened input: the same bits
   (the max of fp16 values is one of them, NaN propagates), windows with padding, strides,
   dilation, 1 and 2 threads. */
static void test_fp16_act_maxpool(void) {
    int t, trial;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (trial = 0; trial < (T.quick ? 8 : 24); trial++) {
            const size_t n = 1 + (size_t)(trial % 2), h = (size_t)test_rand_int(2, 13), w = (size_t)test_rand_int(2, 13);
            const size_t c = (size_t)test_rand_int(1, 150), k = 2 + (size_t)(trial % 2), s = 1 + (size_t)(trial % 3 == 0);
            const size_t dil = 1 + (size_t)(trial % 5 == 4), pad = (size_t)(trial % 2), span = (k - 1) * dil + 1;
            size_t oh, ow, i, nin, nout, bad = 0;
            float *xf, *yf;
            uint16_t *xh, *yh;
            if (h + 2 * pad < span || w + 2 * pad < span) continue;
            oh = (h + 2 * pad - span) / s + 1, ow = (w + 2 * pad - span) / s + 1;
            nin = n * h * w * c, nout = n * oh * ow * c;
            xf = (float *)test_alloc(nin * sizeof(float)), yf = (float *)test_alloc(nout * sizeof(float));
            xh = (uint16_t *)test_alloc(nin * sizeof(uint16_t)), yh = (uint16_t *)test_alloc(nout * sizeof(uint16_t));
            for (i = 0; i < nin; i++) {
                xh[i] = luthier__f32_to_f16((float)test_rand_int(-3000, 3000) / 64.0f);
                if (test_rand_int(0, 400) == 0) xh[i] = 0x7e00; /* NaN */
                xf[i] = luthier__f16_to_f32(xh[i]);
            }
            CHECK(luthier__op_pool2d_nhwc(ctx, NULL, 1, xf, n, h, w, c, k, k, s, s, dil, dil, pad, pad, pad, pad, 0, yf, oh, ow) ==
                          LUTHIER_STATUS_OK &&
                      luthier__op_maxpool_h16_nhwc(ctx, NULL, xh, n, h, w, c, k, k, s, s, dil, dil, pad, pad, pad, pad, yh, oh, ow) ==
                          LUTHIER_STATUS_OK,
                  "%s", luthier_context_error(ctx));
            for (i = 0; i < nout; i++) bad += yh[i] != luthier__f32_to_f16(yf[i]);
            CHECK(bad == 0, "trial %d (%zux%zux%zu, k %zu, s %zu, dil %zu, pad %zu), %d threads: %zu of %zu differ", trial, h, w, c, k,
                  s, dil, pad, t, bad, nout);
            free(xf), free(yf), free(xh), free(yh);
        }
        luthier_context_destroy(ctx);
    }
}

/* ---- dense layers and the element-wise operators on fp16 activations ---- */

/* fp16_activations for a test plan: the default where the CPU has fp16 arithmetic, else forced
   (the scalar emulation: the same plan structure) */
static int fp16_act_mode(luthier_context *ctx) { return luthier__f16_kernel(ctx, 64) ? 0 : 1; }

/* a constant whose values the caller sets (the builder keeps it; the graph borrows it) */
static float *fp16_const(gb *b, const char *name, int rank, const int64_t *shape, int *t) {
    *t = gb_const(b, name, rank, shape, 0.0f, 0.0f);
    return b->blobs[b->nblobs - 1];
}

/* Runs g (inputs ins, output 0 of n floats) in an fp16 plan; returns the output (malloc'd) and
   in *cvt the "to_f32" steps, in *on16 whether the step named `node` reads or writes fp16, in
   *fused its fused text; NULL when it does not plan or run. */
static float *fp16_act_plan_run(luthier_context *ctx, const luthier_graph *g, const void *const *ins, size_t n, const char *node,
                                int *cvt, int *on16, char *fused, const char *what) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier_plan_info info;
    float *out = (float *)test_alloc(n * sizeof(float) + 4);
    void *outs[1];
    int k;
    outs[0] = out;
    *cvt = *on16 = 0;
    memset(&pd, 0, sizeof pd);
    pd.precision = LUTHIER_PRECISION_FP16;
    pd.fp16_activations = fp16_act_mode(ctx);
    if (luthier_plan_create(ctx, g, &pd, &p) != LUTHIER_STATUS_OK || luthier_plan_run(ctx, p, ins, outs) != LUTHIER_STATUS_OK) {
        CHECK(0, "%s: %s", what, luthier_context_error(ctx));
        luthier_plan_destroy(p);
        free(out);
        return NULL;
    }
    memset(&info, 0, sizeof info);
    luthier_plan_get_info(p, &info);
    for (k = 0; k < info.num_steps; k++) {
        luthier_step_info si;
        luthier_plan_step_info(p, k, &si);
        *cvt += si.node < 0 && !strcmp(si.name, "to_f32");
        if (si.node >= 0 && !strcmp(si.name, node)) {
            *on16 = si.fp16;
            if (fused) snprintf(fused, 48, "%s", si.fused);
        }
    }
    luthier_plan_destroy(p);
    return out;
}

/* Dense layers on fp16 activations (a 1x1 convolution on an F16 kernel, fp16 in and out; from 8
   rows, as the F16 kernels) against
   naive sums: integer inputs and weights keep every partial sum exact in fp16, the bias is on the
   grid of 2^-8, so the result is the fp32 sum (+ the residual, then ReLU) rounded once to fp16,
   bit for bit. Ranks 2 and 3, trans_b both ways, N and K across the tile tails, 1 and 2 threads;
   the step is fp16 and the only to_f32 is the output's. */
static void test_fp16_act_dense_exact(void) {
    int t, trial;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (trial = 0; trial < (T.quick ? 12 : 36); trial++) {
            const int few = trial % 6 == 5; /* below 8 rows: F16W (fp32 activations and arithmetic) */
            const int64_t bt = 1 + trial % 2, s = few ? test_rand_int(1, 3) : test_rand_int(8, 17), k = test_rand_int(1, 70),
                          n = test_rand_int(1, 70);
            const int tb = trial % 2 == 1, res = trial % 3 == 1, relu = trial % 3 == 2, rank = trial % 4 == 3 ? 2 : 3;
            int64_t xs[3], ws[2], bs[1];
            int x, r = -1, w, bi, y, cvt = 0, on16 = 0;
            const size_t rows = (size_t)(rank == 3 ? bt * s : s);
            float *xin, *rin, *wd, *bd, *got;
            const void *ins[2];
            luthier_node_desc d;
            char what[128], fused[48] = "";
            size_t i, j, q, bad = 0;
            gb b;
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            if (rank == 3) xs[0] = bt, xs[1] = s, xs[2] = k;
            else xs[0] = s, xs[1] = k;
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, rank, xs, &x);
            ws[0] = tb ? k : n, ws[1] = tb ? n : k, bs[0] = n;
            wd = fp16_const(&b, "w", 2, ws, &w);
            bd = fp16_const(&b, "b", 1, bs, &bi);
            for (i = 0; i < (size_t)(n * k); i++) wd[i] = (float)test_rand_int(-3, 3);
            for (i = 0; i < (size_t)n; i++) bd[i] = (float)test_rand_int(-256, 256) / 256.0f;
            memset(&d, 0, sizeof d);
            d.op = LUTHIER_OP_DENSE, d.name = "fc", d.trans_b = tb;
            d.activation = relu ? LUTHIER_ACTIVATION_RELU : LUTHIER_ACTIVATION_NONE;
            y = gb_node(&b, &d, x, w, bi);
            xin = (float *)test_alloc(rows * (size_t)k * sizeof(float));
            rin = (float *)test_alloc(rows * (size_t)n * sizeof(float));
            for (i = 0; i < rows * (size_t)k; i++) xin[i] = (float)test_rand_int(-4, 4);
            for (i = 0; i < rows * (size_t)n; i++) rin[i] = (float)test_rand_int(-8, 8);
            if (res) {
                xs[rank - 1] = n;
                luthier_graph_input(b.g, "r", LUTHIER_DTYPE_F32, rank, xs, &r);
                y = gb_op(&b, LUTHIER_OP_ADD, "add", y, r);
            }
            luthier_graph_output(b.g, y);
            ins[0] = xin, ins[1] = rin;
            snprintf(what, sizeof what, "dense %zux%lldx%lld trans_b %d residual %d relu %d, %d threads", rows, (long long)k,
                     (long long)n, tb, res, relu, t);
            got = b.fail ? NULL : fp16_act_plan_run(ctx, b.g, ins, rows * (size_t)n, "fc", &cvt, &on16, fused, what);
            CHECK(!b.fail, "%s: graph", what);
            if (got) {
                CHECK(few ? !on16 && cvt == 0 : on16 && cvt == 1 && (!res || strstr(fused, "add")),
                      "%s: fp16 %d, %d to_f32 steps, fused '%s'", what, on16, cvt, fused);
                for (i = 0; i < rows; i++)
                    for (j = 0; j < (size_t)n; j++) {
                        double acc = 0;
                        float v;
                        for (q = 0; q < (size_t)k; q++)
                            acc += (double)xin[i * (size_t)k + q] * wd[tb ? q * (size_t)n + j : j * (size_t)k + q];
                        v = (float)(acc + bd[j] + (res ? rin[i * (size_t)n + j] : 0.0f)); /* (exact) */
                        if (relu && v < 0) v = 0;
                        bad += got[i * (size_t)n + j] != (few ? v : luthier__f16_to_f32(luthier__f32_to_f16(v)));
                    }
                CHECK(bad == 0, "%s: %zu of %zu outputs differ", what, bad, rows * (size_t)n);
            }
            free(got), free(xin), free(rin);
            gb_free(&b);
        }
        luthier_context_destroy(ctx);
    }
}

/* The element-wise operators (and pools, softmax, layer norm) on fp16 activations, each case one
   graph: fp16 values made exactly by identity layers (a dense or 1x1 convolution with weights I
   on an F16 kernel: the inputs rounded to fp16), the operator, the output. */
typedef struct fp16_wide_case {
    luthier_op op;
    int nhwc;  /* 4-D after a 1x1 convolution (else [B, S, C] after a dense layer) */
    int bcast; /* binary: the second operand 0 the same shape (an fp16 value), 1 [1, 1, C] (an fp32
                  constant), 2 [B, S, 1] (fp16); 4-D: [N, C, 1, W] (fp16) */
    int exact; /* the fp32 result of fp16 operands is exact: bit for bit after the rounding */
} fp16_wide_case;

/* the reference of case c at one element (double math on the fp16-rounded operands) */
static double fp16_wide_ref1(luthier_op op, double a, double b) {
    switch (op) {
    case LUTHIER_OP_RELU: return a > 0 ? a : 0;
    case LUTHIER_OP_SIGMOID: return 1.0 / (1.0 + exp(-a));
    case LUTHIER_OP_TANH: return tanh(a);
    case LUTHIER_OP_GELU: return 0.5 * a * (1.0 + erf(a / sqrt(2.0)));
    case LUTHIER_OP_EXP: return exp(a);
    case LUTHIER_OP_NEG: return -a;
    case LUTHIER_OP_ABS: return fabs(a);
    case LUTHIER_OP_SILU: return a / (1.0 + exp(-a));
    case LUTHIER_OP_HARD_SWISH: return a * (a + 3 < 0 ? 0 : a + 3 > 6 ? 6 : a + 3) / 6.0;
    case LUTHIER_OP_ADD: return a + b;
    case LUTHIER_OP_SUB: return a - b;
    case LUTHIER_OP_MUL: return a * b;
    case LUTHIER_OP_DIV: return a / b;
    case LUTHIER_OP_MAX: return a > b ? a : b;
    default: return a < b ? a : b; /* MIN */
    }
}

/* whether got is within one fp16 step of the fp16 rounding of want (bit for bit when exact) */
static int fp16_wide_close(float got, double want, int exact) {
    const float w16 = luthier__f16_to_f32(luthier__f32_to_f16((float)want));
    if (exact) return got == w16;
    return fabs((double)got - w16) <= fabs(w16) * (1.0 / 1024) + 1.0 / (1 << 24);
}

/* An identity layer on x (its last dim, or dim 1 of a 4-D value, c wide): fp16 values of x; then
   a view (a 1x1 max pool on 4-D values) so that the operator is not fused into the layer. */
static int fp16_identity(gb *b, const char *name, int x, int64_t c, int conv) {
    luthier_tensor_info ti;
    char vn[64];
    int64_t ws[4];
    luthier_node_desc d;
    int w, i;
    float *wd;
    char wn[64];
    ws[0] = ws[1] = c, ws[2] = ws[3] = 1;
    snprintf(wn, sizeof wn, "%s.w", name);
    wd = fp16_const(b, wn, conv ? 4 : 2, ws, &w);
    for (i = 0; i < c * c; i++) wd[i] = i % (c + 1) == 0 ? 1.0f : 0.0f;
    memset(&d, 0, sizeof d);
    d.op = conv ? LUTHIER_OP_CONV2D : LUTHIER_OP_DENSE;
    d.name = name;
    x = gb_node(b, &d, x, w, -1);
    snprintf(vn, sizeof vn, "%s.view", name);
    luthier_graph_tensor_info(b->g, x, &ti);
    if (!conv) return gb_reshape(b, vn, x, ti.shape, ti.rank);
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_MAXPOOL, d.name = vn;
    d.kernel[0] = d.kernel[1] = d.stride[0] = d.stride[1] = 1;
    return gb_node(b, &d, x, -1, -1);
}

/* The reference of case c: out[i] over the operands' fp16 roundings (xs: the first operand's
   shape; y: the second operand with its broadcast strides). */
static void fp16_wide_ref(const fp16_wide_case *c, const int64_t *xs, const float *x, const float *y, const float *g,
                          const float *be, double *out) {
    const size_t total = (size_t)(xs[0] * xs[1] * xs[2] * (c->nhwc ? xs[3] : 1));
    const size_t last = (size_t)xs[c->nhwc ? 3 : 2];
    size_t i, j;
    double *h = (double *)test_alloc(total * sizeof(double));
    for (i = 0; i < total; i++) h[i] = luthier__f16_to_f32(luthier__f32_to_f16(x[i]));
    if (c->op == LUTHIER_OP_SOFTMAX || c->op == LUTHIER_OP_LAYER_NORM) {
        for (i = 0; i < total; i += last) {
            double m = -1e300, sum = 0, mean = 0, var = 0;
            for (j = 0; j < last; j++) m = h[i + j] > m ? h[i + j] : m, mean += h[i + j];
            mean /= (double)last;
            for (j = 0; j < last; j++) sum += exp(h[i + j] - m), var += (h[i + j] - mean) * (h[i + j] - mean);
            var /= (double)last;
            for (j = 0; j < last; j++)
                out[i + j] = c->op == LUTHIER_OP_SOFTMAX ? exp(h[i + j] - m) / sum
                                                          : (h[i + j] - mean) / sqrt(var + 1e-5) * g[j] + be[j];
        }
    } else if (c->op == LUTHIER_OP_TRANSPOSE) { /* [B, S, C] -> [B, C, S] */
        const size_t s = (size_t)xs[1];
        for (i = 0; i < total; i++) {
            const size_t bb = i / (s * last), r = i % (s * last);
            out[bb * s * last + (r % last) * s + r / last] = h[i];
        }
    } else if (c->op == LUTHIER_OP_GLOBAL_AVGPOOL) { /* NCHW in, [N, C] out */
        const size_t hw = (size_t)(xs[2] * xs[3]);
        for (i = 0; i < total / hw; i++) {
            double s = 0;
            for (j = 0; j < hw; j++) s += h[i * hw + j];
            out[i] = s / (double)hw;
        }
    } else {
        for (i = 0; i < total; i++) {
            double bv = 0;
            if (y) { /* the second operand's index under its broadcast */
                const size_t l = i % last, row = i / last;
                size_t at = i;
                if (c->nhwc && c->bcast) at = row / (size_t)xs[2] * last + l; /* [N, C, 1, W] */
                else if (c->bcast == 1) at = l;
                else if (c->bcast == 2) at = row;
                bv = c->bcast == 1 && !c->nhwc ? y[at] : luthier__f16_to_f32(luthier__f32_to_f16(y[at]));
            }
            out[i] = fp16_wide_ref1(c->op, h[i], bv);
        }
    }
    free(h);
}

static void test_fp16_act_wide(void) {
    static const fp16_wide_case cases[] = {
        {LUTHIER_OP_RELU, 0, 0, 1},       {LUTHIER_OP_SIGMOID, 0, 0, 0},   {LUTHIER_OP_TANH, 0, 0, 0},
        {LUTHIER_OP_GELU, 0, 0, 0},       {LUTHIER_OP_EXP, 0, 0, 0},       {LUTHIER_OP_NEG, 0, 0, 1},
        {LUTHIER_OP_ABS, 1, 0, 1},        {LUTHIER_OP_SILU, 1, 0, 0},      {LUTHIER_OP_HARD_SWISH, 1, 0, 0},
        {LUTHIER_OP_ADD, 0, 0, 1},        {LUTHIER_OP_SUB, 0, 1, 0},       {LUTHIER_OP_MUL, 0, 2, 1},
        {LUTHIER_OP_DIV, 0, 0, 0},        {LUTHIER_OP_MAX, 1, 0, 1},       {LUTHIER_OP_MIN, 1, 1, 1},
        {LUTHIER_OP_ADD, 1, 1, 1},        {LUTHIER_OP_SOFTMAX, 0, 0, 0},   {LUTHIER_OP_LAYER_NORM, 0, 0, 0},
        {LUTHIER_OP_GLOBAL_AVGPOOL, 1, 0, 0}, {LUTHIER_OP_TRANSPOSE, 0, 0, 1}};
    static const int perm[3] = {0, 2, 1};
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int t, ci;
    for (t = 1; t <= 2; t++) {
        luthier_context *ctx = ctx_threads(t);
        for (ci = 0; ci < ncases * (T.quick ? 1 : 3); ci++) {
            const fp16_wide_case *c = &cases[ci % ncases];
            const int binary = c->op >= LUTHIER_OP_ADD && c->op <= LUTHIER_OP_MIN;
            int64_t xs[4], ys[4], cs[3];
            int x, y = -1, a, bop = -1, out, gi = -1, bi = -1, k, cvt = 0, on16 = 0;
            size_t total, nout, i, bad = 0, ny;
            float *xin, *yin = NULL, *got, *gd = NULL, *bd = NULL, *ycon = NULL;
            double *want;
            const void *ins[2];
            luthier_node_desc d;
            char what[128];
            gb b;
            memset(&b, 0, sizeof b);
            luthier_graph_create(&b.g);
            if (c->nhwc) xs[0] = test_rand_int(1, 2), xs[1] = test_rand_int(2, 40), xs[2] = test_rand_int(1, 7), xs[3] = test_rand_int(1, 7);
            else xs[0] = test_rand_int(1, 2), xs[1] = test_rand_int(8, 12), xs[2] = test_rand_int(1, 90), xs[3] = 1;
            total = (size_t)(xs[0] * xs[1] * xs[2] * xs[3]);
            luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, c->nhwc ? 4 : 3, xs, &x);
            a = fp16_identity(&b, "wx", x, c->nhwc ? xs[1] : xs[2], c->nhwc);
            memcpy(ys, xs, sizeof ys);
            if (binary && c->nhwc && c->bcast) ys[2] = 1;
            else if (binary && c->bcast == 2) ys[2] = 1;
            ny = (size_t)(ys[0] * ys[1] * ys[2] * ys[3]);
            if (binary && c->bcast == 1 && !c->nhwc) { /* an fp32 constant [1, 1, C] */
                cs[0] = cs[1] = 1, cs[2] = xs[2];
                ycon = fp16_const(&b, "yc", 3, cs, &bop);
                for (i = 0; i < (size_t)xs[2]; i++) ycon[i] = (float)test_rand_int(-300, 300) / 100.0f;
            } else if (binary) {
                luthier_graph_input(b.g, "y", LUTHIER_DTYPE_F32, c->nhwc ? 4 : 3, ys, &y);
                bop = fp16_identity(&b, "wy", y, c->nhwc ? ys[1] : ys[2], c->nhwc);
            }
            memset(&d, 0, sizeof d);
            d.op = c->op, d.name = "op", d.typed = c->op != LUTHIER_OP_TRANSPOSE;
            luthier_node_attrs_default(c->op, &d.attr);
            d.perm = c->op == LUTHIER_OP_TRANSPOSE ? perm : NULL;
            if (c->op == LUTHIER_OP_LAYER_NORM) {
                cs[0] = xs[2];
                gd = fp16_const(&b, "g", 1, cs, &gi);
                bd = fp16_const(&b, "be", 1, cs, &bi);
                for (i = 0; i < (size_t)xs[2]; i++) gd[i] = 0.5f + (float)test_rand_int(0, 100) / 100.0f, bd[i] = (float)test_rand_int(-50, 50) / 100.0f;
            }
            out = gb_node(&b, &d, a, binary ? bop : gi, bi);
            luthier_graph_output(b.g, out);
            xin = rand_buf(total, -3, 3);
            if (binary && y >= 0) {
                yin = rand_buf(ny, -3, 3);
                if (c->op == LUTHIER_OP_DIV)
                    for (i = 0; i < ny; i++) yin[i] = yin[i] < 0 ? yin[i] - 0.25f : yin[i] + 0.25f;
            }
            ins[0] = xin, ins[1] = yin;
            nout = c->op == LUTHIER_OP_GLOBAL_AVGPOOL ? (size_t)(xs[0] * xs[1]) : total;
            snprintf(what, sizeof what, "%s (nhwc %d, broadcast %d) on %lldx%lldx%lldx%lld, %d threads", luthier_op_name(c->op), c->nhwc,
                     c->bcast, (long long)xs[0], (long long)xs[1], (long long)xs[2], (long long)xs[3], t);
            got = b.fail ? NULL : fp16_act_plan_run(ctx, b.g, ins, nout, "op", &cvt, &on16, NULL, what);
            CHECK(!b.fail, "%s: graph", what);
            if (got) {
                const float *yref = ycon ? ycon : yin;
                CHECK(on16 && cvt == 1, "%s: fp16 %d, %d to_f32 steps (want the output's only)", what, on16, cvt);
                want = (double *)test_alloc(total * sizeof(double));
                fp16_wide_ref(c, xs, xin, binary ? yref : NULL, gd, bd, want);
                for (i = 0; i < nout; i++) bad += !fp16_wide_close(got[i], want[i], c->exact);
                for (k = 0, i = 0; bad && i < nout && k < 3; i++)
                    if (!fp16_wide_close(got[i], want[i], c->exact)) printf("    [%zu] %.8g, want %.8g\n", i, got[i], want[i]), k++;
                CHECK(bad == 0, "%s: %zu of %zu outputs differ", what, bad, nout);
                free(want);
            }
            free(got), free(xin), free(yin);
            gb_free(&b);
        }
        luthier_context_destroy(ctx);
    }
}

static void run_fp16_tests(void) {
    RUN(test_fp16_act_dense_exact);
    RUN(test_fp16_act_wide);
    RUN(test_fp16_widen);
    RUN(test_fp16_narrow);
    RUN(test_fp16_sgemm_packed_mismatch);
    RUN(test_fp16_arithmetic_gated);
    RUN(test_fp16_kc_bound);
    RUN(test_fp16_tune_conv);
    RUN(test_fp16_pack_a);
    RUN(test_fp16_conv);
    RUN(test_fp16_plan_conv);
    RUN(test_fp16_plan);
    RUN(test_fp16_plan_exact_weights);
    RUN(test_fp16_plan_config_and_refusal);
    RUN(test_fp16_tune);
    RUN(test_fp16_act_convert);
    RUN(test_fp16_act_conv_exact);
    RUN(test_fp16_hybrid_sgemm);
    RUN(test_fp16_hybrid_conv);
    RUN(test_fp16_hybrid_zoo);
    RUN(test_fp16_act_dw_exact);
    RUN(test_fp16_act_dw_rows);
    RUN(test_fp16_act_maxpool);
    RUN(test_fp16_act_plan);
    RUN(test_fp16_act_zoo);
}
