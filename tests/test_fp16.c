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
   and weights: only the fp16 sums differ. Implicit GEMM and Winograd are refused by name. */
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
                /* the fp16 sums' rounding error grows with the steps of k (as sqrt(K) for random
                   signs: 0.5 % of the largest output was seen at K = 12 channels x 3 x 3) */
                CHECK(md <= 4e-3 * mx * fmax(1.0, sqrt((double)(d.in_channels / d.groups * d.kernel_h * d.kernel_w) / 16.0)),
                      "%s trial %d: max |diff| %g, max |fp32| %g", ki.name, trial, md, mx);
                luthier_conv2d_get_info(c16, &info);
                CHECK(!strcmp(info.kernel, ki.name) && (info.algorithm == LUTHIER_CONV_IM2COL || info.algorithm == LUTHIER_CONV_1X1),
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
            d.algorithm = LUTHIER_CONV_WINOGRAD_4X3;
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED && !cv &&
                      strstr(luthier_context_error(ctx), "not implemented"), "winograd on %s: %s", ki.name, luthier_context_error(ctx));
            d.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
            CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_UNSUPPORTED && !cv, "implicit gemm on %s", ki.name);
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
            luthier_plan_step_info(p16, k, &s16);
            luthier_plan_step_info(p32, k, &s32);
            if (s16.op != LUTHIER_OP_DENSE) continue;
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

static void run_fp16_tests(void) {
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
}
