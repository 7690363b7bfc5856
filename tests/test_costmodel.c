/* The analytical cost model (>>impl-costmodel in luthier.h): its tables complete, its
   predictions monotonic in work, Winograd's fewer multiplies, the split, the public entry point,
   AUTO under the model policies (valid and correct layers), and the tuner's Spearman helper. */

/* A layer: n x c x h x w in, o out, k x k kernel, stride s, padding p. */
static luthier_conv2d_desc cm_layer(int64_t c, int64_t h, int64_t o, int64_t k, int64_t s, int64_t p) {
    luthier_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.batch = 1, d.in_channels = c, d.in_h = d.in_w = h, d.out_channels = o;
    d.kernel_h = d.kernel_w = k, d.stride_h = d.stride_w = s;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = p;
    return d;
}

/* Cycles of d on core row c with algo and kernel (d normalized here). */
static double cm_cycles(const luthier__cm_core *c, const luthier_conv2d_desc *in, luthier_conv_algorithm a, int kernel) {
    luthier_conv2d_desc d;
    int64_t oh, ow;
    if (luthier__conv_normalize(NULL, in, &d, &oh, &ow) != LUTHIER_STATUS_OK) return -1;
    return luthier__cm_conv_cycles(c, &d, oh, ow, a, kernel, NULL);
}

/* Every row is sane; every SIMD kernel runs on some core row, and every core row that runs it
   lists its cycles (the scalar kernels fall back to the formula); every algorithm has a hook. */
static void test_costmodel_tables(void) {
    int c, k, a;
    for (c = 0; c < LUTHIER__CM_NUM_CORES; c++) {
        const luthier__cm_core *r = &luthier__cm_cores[c];
        CHECK(r->lanes >= 4 && r->fma > 0 && r->ghz > 0 && r->l1 > 0 && r->l2 > r->l1 && r->l2_bpc > 0 && r->l3_bpc > 0 &&
                  r->dram_bpc > 0 && r->copy_cpf > 0,
              "core row %s has a missing or impossible entry", r->name);
        CHECK(luthier__cm_core_find(r->name) == c, "core row %s: name not unique", r->name);
    }
    for (k = 0; k < LUTHIER__NUM_UKERNELS; k++) {
        const luthier__kernel_entry *uk = &luthier__ukernels[k];
        int runs = 0, listed;
        if (!strcmp(uk->isa, "scalar")) continue;
        for (c = 0; c < LUTHIER__CM_NUM_CORES; c++) {
            double cyc;
            if (!luthier__cm_core_runs(&luthier__cm_cores[c], uk)) continue;
            runs++;
            cyc = luthier__cm_kernel_cycles(&luthier__cm_cores[c], uk, &listed);
            CHECK(listed && cyc > 0, "kernel %s has no cycles on core row %s", uk->name, luthier__cm_cores[c].name);
            /* no kernel beats its core's FMA peak */
            CHECK(cyc >= uk->mr * uk->nr / (luthier__cm_cores[c].lanes * luthier__cm_cores[c].fma) * 0.99,
                  "kernel %s on %s: %.2f cycles per k is above the FMA peak", uk->name, luthier__cm_cores[c].name, cyc);
        }
        CHECK(runs > 0, "kernel %s runs on no core row of the model", uk->name);
    }
    for (k = 0; k < LUTHIER__CM_NUM_KCYCLES; k++) {
        /* (a row for another architecture names a kernel this build does not register) */
        const luthier__cm_kcycles *row = &luthier__cm_kcycle_table[k];
        int found = 0, j;
        CHECK(luthier__cm_core_find(row->core) >= 0 && row->cycles > 0, "cycles row %d names core %s", k, row->core);
        for (j = 0; j < k; j++)
            CHECK(strcmp(row->core, luthier__cm_kcycle_table[j].core) || strcmp(row->kernel, luthier__cm_kcycle_table[j].kernel),
                  "cycles rows %d and %d are both %s on %s", j, k, row->kernel, row->core);
        if (luthier_kernel_find(row->kernel, &found) == LUTHIER_STATUS_OK)
            CHECK(luthier__cm_core_runs(&luthier__cm_cores[luthier__cm_core_find(row->core)], &luthier__ukernels[found]),
                  "cycles row %d: core %s cannot run %s", k, row->core, row->kernel);
    }
    for (a = 0; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++) {
        CHECK((int)luthier__conv_algos[a].algo == a, "algorithm row %d is out of order", a);
        CHECK(a == LUTHIER_CONV_AUTO || luthier__conv_algos[a].cost, "algorithm %s has no cost hook", luthier_conv_algorithm_name((luthier_conv_algorithm)a));
    }
}

/* The fp16-arithmetic kernels (F16 family: twice the lanes of an fp32 vector) are rated between
   the fp16 FMA peak of every core row of their ISA and the fp32 peak: from the cycles table where
   it has a row, else from the formula at the peak of their vectors of halves. */
static void test_costmodel_f16_kernels(void) {
    int c, k, rated = 0;
    for (k = 0; k < luthier_kernels_count(LUTHIER_KERNELS_F16); k++) {
        const luthier__kernel_entry *uk = luthier__kernel_in(LUTHIER_KERNELS_F16, k);
        const int neon = !strcmp(uk->isa, "neonfp16");
        if (!neon && strcmp(uk->isa, "avx512fp16")) continue; /* (the scalar emulation) */
        for (c = 0; c < LUTHIER__CM_NUM_CORES; c++) {
            const luthier__cm_core *r = &luthier__cm_cores[c];
            const double fp32_peak = (double)(uk->mr * uk->nr) / (r->lanes * r->fma);
            double cyc;
            if (neon ? !(r->features & LUTHIER_CPU_NEON) : !(r->features & LUTHIER_CPU_AVX512F)) continue;
            cyc = luthier__cm_kernel_cycles(r, uk, NULL);
            CHECK(cyc >= fp32_peak / 2 * 0.99 && cyc < fp32_peak * 1.3, "%s on %s: %.2f cycles a step (fp16 peak %.2f)",
                  uk->name, r->name, cyc, fp32_peak / 2);
            rated++;
        }
    }
    printf("    %d fp16 kernel / core pairs rated\n", rated);
}

/* More work never costs less: channels, pixels, kernel size, for every algorithm that runs the
   layer and every kernel, on every core row that runs it. */
static void test_costmodel_monotonic(void) {
    int c, k, a, bad = 0, tried = 0;
    for (c = 0; c < LUTHIER__CM_NUM_CORES; c++)
        for (a = LUTHIER_CONV_IM2COL; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++)
            for (k = a == LUTHIER_CONV_DEPTHWISE ? -1 : 0; k < (a == LUTHIER_CONV_DEPTHWISE ? 0 : LUTHIER__NUM_UKERNELS); k++) {
                const luthier__cm_core *r = &luthier__cm_cores[c];
                const int kk = a == LUTHIER_CONV_1X1 ? 1 : 3, pp = a == LUTHIER_CONV_1X1 ? 0 : 1;
                luthier_conv2d_desc d0 = cm_layer(32, 28, 32, kk, 1, pp), d1 = d0, d2 = d0, d3 = d0;
                double t0, t1, t2, t3;
                if (k >= 0 && !luthier__cm_core_runs(r, &luthier__ukernels[k])) continue;
                if (a == LUTHIER_CONV_IMPLICIT_GEMM && luthier__ukernels[k].kind != LUTHIER_KERNEL_HYBRID) continue;
                if (a == LUTHIER_CONV_DEPTHWISE) d0.groups = 32, d1 = d0, d2 = d0, d3 = d0;
                d1.in_channels *= 2, d1.out_channels *= 2;
                if (a == LUTHIER_CONV_DEPTHWISE) d1.groups *= 2;
                d2.in_h *= 2, d2.in_w *= 2;
                d3.batch = 3;
                t0 = cm_cycles(r, &d0, (luthier_conv_algorithm)a, k);
                t1 = cm_cycles(r, &d1, (luthier_conv_algorithm)a, k);
                t2 = cm_cycles(r, &d2, (luthier_conv_algorithm)a, k);
                t3 = cm_cycles(r, &d3, (luthier_conv_algorithm)a, k);
                tried++;
                if (!(t0 > 0 && t1 > t0 && t2 > t0 && t3 > t0)) {
                    if (bad++ < 5)
                        CHECK(0, "%s %s on %s: %.0f cycles, then %.0f (2x channels), %.0f (2x pixels), %.0f (batch 3)",
                              luthier_conv_algorithm_name((luthier_conv_algorithm)a), k >= 0 ? luthier__ukernels[k].name : "-", r->name, t0,
                              t1, t2, t3);
                }
            }
    CHECK(tried > 50 && bad == 0, "%d of %d (algorithm, kernel, core) triples not monotonic", bad, tried);
}

/* Winograd: fewer multiplies where the channels are many (64 -> 64 at 56 x 56: F(2x2) and F(4x4)
   below im2col on every core row), and a clearly smaller win on the 3-channel stem (at most 0.8x
   the 64-channel one; on the in-order A53 row with the 6x16 kernel it is about half), where the
   transforms of the 64 output channels and the GEMMs' short k dominate. */
static void test_costmodel_winograd(void) {
    int c;
    const luthier_conv2d_desc big = cm_layer(64, 56, 64, 3, 1, 1), stem = cm_layer(3, 224, 64, 3, 1, 1);
    for (c = 0; c < LUTHIER__CM_NUM_CORES; c++) {
        const luthier__cm_core *r = &luthier__cm_cores[c];
        int k;
        for (k = 0; k < LUTHIER__NUM_UKERNELS; k++)
            if (luthier__cm_core_runs(r, &luthier__ukernels[k]) && strcmp(luthier__ukernels[k].isa, "scalar") &&
                luthier__ukernels[k].kind == LUTHIER_KERNEL_HYBRID)
                break;
        if (k == LUTHIER__NUM_UKERNELS) continue;
        {
            const double im = cm_cycles(r, &big, LUTHIER_CONV_IM2COL, k), w2 = cm_cycles(r, &big, LUTHIER_CONV_WINOGRAD_2X3, k),
                         w4 = cm_cycles(r, &big, LUTHIER_CONV_WINOGRAD_4X3, k);
            const double si = cm_cycles(r, &stem, LUTHIER_CONV_IMPLICIT_GEMM, k), s4 = cm_cycles(r, &stem, LUTHIER_CONV_WINOGRAD_4X3, k);
            CHECK(w4 < w2 && w2 < im, "%s, %s, 64 channels: im2col %.0f, F(2x2) %.0f, F(4x4) %.0f cycles", r->name, luthier__ukernels[k].name,
                  im, w2, w4);
            CHECK(si / s4 < 0.8 * (im / w4), "%s, %s: F(4x4) gains %.2fx on the 3-channel stem, %.2fx on 64 channels", r->name,
                  luthier__ukernels[k].name, si / s4, im / w4);
        }
    }
}

/* The split: more work on the faster cluster, the model's split no slower than capacity x
   threads, and a tiny layer kept off a very slow cluster. */
static void test_costmodel_split(void) {
    luthier__cm_machine mc;
    luthier_conv2d_desc in = cm_layer(64, 28, 64, 3, 1, 1), d;
    double sh[LUTHIER_MAX_CLUSTERS], t_model, t_cap, t_big;
    const double big_only[2] = {1, 0};
    int64_t oh, ow;
    int k = luthier__select_default_kernel(luthier_cpu_features());
    memset(&mc, 0, sizeof mc);
    mc.num_clusters = 2;
    mc.core[0] = mc.core[1] = luthier__cm_core_for("", luthier_cpu_features());
    mc.capacity[0] = 1.0, mc.capacity[1] = 0.4;
    mc.threads[0] = 2, mc.threads[1] = 2;
    CHECK(luthier__conv_normalize(NULL, &in, &d, &oh, &ow) == LUTHIER_STATUS_OK, "normalize");
    luthier__cm_best_split(&mc, &d, oh, ow, LUTHIER_CONV_IM2COL, k, sh);
    CHECK(sh[0] > sh[1] && sh[1] > 0 && fabs(sh[0] + sh[1] - 1) < 1e-9, "capacities 1.0 / 0.4: split %.2f / %.2f", sh[0], sh[1]);
    t_model = luthier__cm_conv_seconds(&mc, &d, oh, ow, LUTHIER_CONV_IM2COL, k, sh, 0);
    t_cap = luthier__cm_conv_seconds(&mc, &d, oh, ow, LUTHIER_CONV_IM2COL, k, NULL, 0);
    t_big = luthier__cm_conv_seconds(&mc, &d, oh, ow, LUTHIER_CONV_IM2COL, k, big_only, 0);
    CHECK(t_model > 0 && t_model <= t_cap * (1 + 1e-9) && t_model < t_big, "split %.3g s, capacity x threads %.3g s, big only %.3g s",
          t_model, t_cap, t_big);
    /* a layer of a few tiles: the sync of more threads is not worth it */
    in = cm_layer(8, 2, 8, 1, 1, 0);
    CHECK(luthier__conv_normalize(NULL, &in, &d, &oh, &ow) == LUTHIER_STATUS_OK, "normalize");
    luthier__cm_best_split(&mc, &d, oh, ow, LUTHIER_CONV_1X1, k, sh);
    CHECK(sh[0] == 1.0, "a 4-pixel layer: the fast cluster gets %.2f (all expected)", sh[0]);
    /* a different core on the second cluster: its own row, not the capacity (ARM builds, which
       register the NEON kernels the ARM rows run) */
    if (luthier_kernel_find("8x12__neonfma", &k) == LUTHIER_STATUS_OK) {
        in = cm_layer(64, 28, 64, 3, 1, 1);
        CHECK(luthier__conv_normalize(NULL, &in, &d, &oh, &ow) == LUTHIER_STATUS_OK, "normalize");
        mc.core[1] = &luthier__cm_cores[luthier__cm_core_find("Cortex-A53")];
        mc.core[0] = &luthier__cm_cores[luthier__cm_core_find("Cortex-A76")];
        mc.capacity[1] = 1.0; /* ignored for another row */
        luthier__cm_best_split(&mc, &d, oh, ow, LUTHIER_CONV_IM2COL, k, sh);
        CHECK(sh[0] > 0.6, "A76 + A53: the A76 cluster gets %.2f", sh[0]);
    }
}

/* Memory on many threads: a Winograd layer split by tiles makes every thread stream all of its
   transformed weights (36 x 512 x 512 floats for F(4x4), beyond the last level), so 16 threads
   can be no faster than one core streaming B, nor than the machine's DRAM moving B once per busy
   thread; split by output channels, B is read once. The model's parallel shape matches the
   engine's (2 threads, this CPU's row). */
static void test_costmodel_memory(void) {
    luthier__cm_machine mc;
    const luthier_conv2d_desc in = cm_layer(512, 14, 512, 3, 1, 1);
    luthier_conv2d_desc d;
    const luthier__cm_core *row = luthier__cm_core_for("", luthier_cpu_features());
    const double B = 36.0 * 512 * 512 * 4, llc = row->l3 > 0 ? row->l3 : row->l2;
    const double one_core = B / (row->dram_bpc * row->ghz * 1e9), machine = row->dram_bpc * row->ghz * 1e9 * row->dram_cores;
    int64_t oh, ow;
    int k, checked = 0;
    CHECK(luthier__conv_normalize(NULL, &in, &d, &oh, &ow) == LUTHIER_STATUS_OK, "normalize");
    memset(&mc, 0, sizeof mc);
    mc.num_clusters = 1, mc.core[0] = row, mc.capacity[0] = 1.0, mc.threads[0] = 16;
    for (k = 0; k < LUTHIER__NUM_UKERNELS; k++) {
        const luthier__kernel_entry *uk = &luthier__ukernels[k];
        const size_t panels = (512 + (size_t)uk->nr - 1) / (size_t)uk->nr, units_1 = (16 + (size_t)uk->mr - 1) / (size_t)uk->mr;
        double b = 0, t16;
        luthier__cm_par par;
        if (!luthier__cm_core_runs(row, uk) || luthier__cm_conv_cycles(row, &d, oh, ow, LUTHIER_CONV_WINOGRAD_4X3, k, &b) < 0) continue;
        CHECK(fabs(b - B) < 1, "%s: B of F(4x4) 512 -> 512 is %.0f bytes, expected %.0f", uk->name, b, B);
        par = luthier__cm_parallel(&mc, &d, oh, ow, LUTHIER_CONV_WINOGRAD_4X3, k, b);
        /* 16 tiles: by channels when there are 2 x 16 panels (and whole vector blocks) */
        CHECK(par.b_whole == !(panels >= 32 && uk->nr % (size_t)row->lanes == 0),
              "%s: %zu panels, 16 threads: %s split", uk->name, panels, par.b_whole ? "tile" : "channel");
        t16 = luthier__cm_conv_seconds(&mc, &d, oh, ow, LUTHIER_CONV_WINOGRAD_4X3, k, NULL, 0);
        if (par.b_whole && B > llc) {
            const double busy = (double)(units_1 < 16 ? 16 : units_1); /* one-tile units: 16 */
            CHECK(t16 >= one_core * 0.999 && t16 >= busy * B / machine * 0.999,
                  "%s, 16 threads, tile split: %.3g s predicted, below B at one core's bandwidth (%.3g s) or %g x B "
                  "at the machine's (%.3g s)", uk->name, t16, one_core, busy, busy * B / machine);
            checked++;
        }
    }
    CHECK(checked > 0 || llc >= B, "no kernel had the tile split");
    /* engine and model agree on 2 threads */
    {
        static const int64_t shapes[][3] = {{512, 7, 512}, {256, 14, 256}, {64, 56, 64}, {128, 28, 256}};
        luthier_context *ctx = NULL;
        luthier_context_desc cd;
        size_t i;
        memset(&cd, 0, sizeof cd);
        cd.num_threads = 2;
        if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK || luthier_context_num_threads(ctx) != 2) {
            luthier_context_destroy(ctx);
            return;
        }
        ctx->caches.l2 = (size_t)row->l2;
        mc.threads[0] = 2;
        for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            luthier_conv2d_desc e = cm_layer(shapes[i][0], shapes[i][1], shapes[i][2], 3, 1, 1), n;
            luthier_conv2d_layer *cv = NULL;
            float *w = (float *)test_alloc((size_t)(e.in_channels * e.out_channels * 9) * sizeof(float));
            e.algorithm = LUTHIER_CONV_WINOGRAD_2X3;
            test_fill(w, (size_t)(e.in_channels * e.out_channels * 9));
            CHECK(luthier_conv2d_create(ctx, &e, w, NULL, &cv) == LUTHIER_STATUS_OK, "create");
            free(w);
            if (cv && luthier__conv_normalize(NULL, &e, &n, &oh, &ow) == LUTHIER_STATUS_OK) {
                const luthier__wino_split ws = luthier__conv_wino_split(cv, (size_t)row->lanes, 2, (size_t)row->l2);
                const luthier__cm_par par = luthier__cm_parallel(&mc, &n, oh, ow, LUTHIER_CONV_WINOGRAD_2X3,
                                                                 (int)(cv->uk - luthier__ukernels), 0);
                CHECK(par.units == (double)ws.units && par.b_whole == !ws.by_panels,
                      "%lld -> %lld, %lldx%lld: model %.0f units (%s), engine %zu (%s)", (long long)e.in_channels,
                      (long long)e.out_channels, (long long)e.in_h, (long long)e.in_w, par.units, par.b_whole ? "tiles" : "panels",
                      ws.units, ws.by_panels ? "panels" : "tiles");
            }
            luthier_conv2d_destroy(cv);
        }
        luthier_context_destroy(ctx);
    }
}

/* luthier_conv2d_predict: arguments, UNSUPPORTED for an algorithm that cannot run the layer,
   more threads never slower for a large layer. */
static void test_costmodel_predict_api(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_conv2d_desc d = cm_layer(64, 56, 64, 3, 1, 1);
    double t = 0, t1 = 0;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    cd.auto_policy = LUTHIER_AUTO_RULES; /* AUTO: no Winograd */
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    CHECK(luthier_conv2d_predict(NULL, &d, &t) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL context");
    CHECK(luthier_conv2d_predict(ctx, NULL, &t) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL desc");
    CHECK(luthier_conv2d_predict(ctx, &d, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL seconds");
    CHECK(luthier_conv2d_predict(ctx, &d, &t) == LUTHIER_STATUS_OK && t > 1e-6 && t < 1.0, "AUTO: %g s", t);
    d.algorithm = LUTHIER_CONV_WINOGRAD_4X3;
    CHECK(luthier_conv2d_predict(ctx, &d, &t1) == LUTHIER_STATUS_OK && t1 > 0 && t1 < t, "F(4x4) %g s vs AUTO %g s", t1, t);
    d = cm_layer(64, 56, 64, 1, 1, 0);
    d.algorithm = LUTHIER_CONV_WINOGRAD_2X3;
    CHECK(luthier_conv2d_predict(ctx, &d, &t) == LUTHIER_STATUS_UNSUPPORTED, "Winograd on a 1x1 layer");
    d.algorithm = LUTHIER_CONV_1X1;
    d.in_channels = 0;
    CHECK(luthier_conv2d_predict(ctx, &d, &t) == LUTHIER_STATUS_INVALID_ARGUMENT, "bad shape");
    luthier_context_destroy(ctx);
}

/* AUTO under each policy: the layer it creates is valid and matches the im2col reference (the
   Winograd bound of LUTHIER_AUTO_MAX_ERROR, relative to the output's range); MODEL_EXACT never
   picks Winograd, RULES is today's choice; a bad policy or $LUTHIER_AUTO is refused. */
static void test_costmodel_auto_policy(void) {
    static const int64_t shapes[][6] = {{64, 28, 64, 3, 1, 1}, {3, 32, 16, 3, 2, 1}, {32, 14, 96, 1, 1, 0}, {16, 20, 16, 5, 1, 2}};
    int pol, si;
    for (pol = 0; pol < (int)LUTHIER_AUTO_POLICY_COUNT; pol++)
        for (si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
            luthier_context *ctx = NULL, *ref_ctx = NULL;
            luthier_context_desc cd;
            luthier_conv2d_desc d = cm_layer(shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3], shapes[si][4], shapes[si][5]);
            luthier_conv2d_layer *cv = NULL;
            luthier_conv2d_info info;
            int64_t oh = 0, ow = 0;
            size_t nin = (size_t)(d.in_channels * d.in_h * d.in_w), nw, nout, i;
            float *x, *w, *b, *y, *r;
            double range = 0, err = 0;
            memset(&cd, 0, sizeof cd);
            cd.num_threads = 1;
            cd.auto_policy = (luthier_auto_policy)pol;
            CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context, policy %d", pol);
            cd.auto_policy = LUTHIER_AUTO_RULES;
            CHECK(luthier_context_create(&cd, &ref_ctx) == LUTHIER_STATUS_OK, "reference context");
            luthier_conv2d_output_size(&d, &oh, &ow);
            nw = (size_t)(d.out_channels * d.in_channels * d.kernel_h * d.kernel_w);
            nout = (size_t)(d.out_channels * oh * ow);
            x = (float *)test_alloc(nin * 4), w = (float *)test_alloc(nw * 4), b = (float *)test_alloc((size_t)d.out_channels * 4);
            y = (float *)test_alloc(nout * 4), r = (float *)test_alloc(nout * 4);
            for (i = 0; i < nin; i++) x[i] = test_rand_float();
            for (i = 0; i < nw; i++) w[i] = test_rand_float();
            for (i = 0; i < (size_t)d.out_channels; i++) b[i] = test_rand_float();
            if (ctx && ref_ctx && luthier_conv2d_create(ctx, &d, w, b, &cv) == LUTHIER_STATUS_OK) {
                luthier_conv2d_desc rd = d;
                luthier_conv2d_get_info(cv, &info);
                CHECK(luthier_conv2d_run(ctx, cv, x, y) == LUTHIER_STATUS_OK, "run");
                rd.algorithm = LUTHIER_CONV_IM2COL;
                CHECK(luthier_conv2d(ref_ctx, &rd, x, w, b, r) == LUTHIER_STATUS_OK, "reference");
                for (i = 0; i < nout; i++) err = fmax(err, fabs((double)y[i] - r[i]));
                range = 1.0 + (double)(d.in_channels * d.kernel_h * d.kernel_w); /* |bias| + max|x| sum|w| */
                CHECK(err <= 4 * LUTHIER_AUTO_MAX_ERROR * range, "policy %d, shape %d (%s): max|err| %.3g, range %.3g", pol, si,
                      luthier_conv_algorithm_name(info.algorithm), err, range);
                if (pol == LUTHIER_AUTO_MODEL_EXACT || pol == LUTHIER_AUTO_RULES)
                    CHECK(info.algorithm < LUTHIER_CONV_WINOGRAD_2X3, "policy %d picked %s", pol, luthier_conv_algorithm_name(info.algorithm));
                CHECK(info.algorithm != LUTHIER_CONV_WINOGRAD_6X3, "F(6x6) is beyond the bound");
                luthier_conv2d_destroy(cv);
            } else {
                CHECK(0, "policy %d, shape %d: create: %s", pol, si, ctx ? luthier_context_error(ctx) : "no context");
            }
            free(x), free(w), free(b), free(y), free(r);
            luthier_context_destroy(ctx);
            luthier_context_destroy(ref_ctx);
        }
    {
        luthier_context *ctx = NULL;
        luthier_context_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.auto_policy = LUTHIER_AUTO_POLICY_COUNT;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_INVALID_ARGUMENT && !ctx, "bad auto_policy");
        cd.auto_policy = LUTHIER_AUTO_DEFAULT;
        cd.num_threads = 1;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK && ctx && ctx->auto_policy == LUTHIER_AUTO_MODEL,
              "the default policy is the model's");
        luthier_context_destroy(ctx);
        ctx = NULL;
        setenv("LUTHIER_AUTO", "fastest", 1);
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_INVALID_ARGUMENT && !ctx, "bad $LUTHIER_AUTO");
        setenv("LUTHIER_AUTO", "model_exact", 1);
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK && ctx && ctx->auto_policy == LUTHIER_AUTO_MODEL_EXACT,
              "$LUTHIER_AUTO=model_exact");
        unsetenv("LUTHIER_AUTO");
        luthier_context_destroy(ctx);
    }
}

/* The tuner's rank correlation: perfect, reversed, ties averaged, too few pairs. */
static void test_costmodel_spearman(void) {
    const double a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, c[5] = {5, 4, 3, 2, 1}, t[4] = {1, 1, 2, 3}, u[4] = {1, 2, 3, 4};
    double s;
    CHECK(fabs(luthier__spearman(a, b, 5) - 1) < 1e-12, "perfect: %g", luthier__spearman(a, b, 5));
    CHECK(fabs(luthier__spearman(a, c, 5) + 1) < 1e-12, "reversed: %g", luthier__spearman(a, c, 5));
    s = luthier__spearman(t, u, 4); /* ranks 1.5 1.5 3 4 vs 1 2 3 4: 0.9487 */
    CHECK(fabs(s - 0.9486832980505138) < 1e-9, "ties: %.10f", s);
    s = luthier__spearman(a, b, 2);
    CHECK(s != s, "two pairs: NaN, got %g", s);
}

/* luthier_plan_desc.auto_policy: a plan of the model policy on a rules context (Winograd
   F(4x4) or F(2x2) on some 3x3 layer of ResNet-18 (small) on this host's model), the context's
   policy unchanged afterwards, an unknown policy refused. */
static void test_costmodel_plan_policy(void) {
    luthier_context *ctx = NULL;
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_context_desc cd;
    char err[256];
    int i, wino = 0;
    memset(&cd, 0, sizeof cd);
    cd.auto_policy = LUTHIER_AUTO_RULES;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    CHECK(luthier_zoo_build("resnet18_small", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "build: %s", err);
    if (!ctx || !g) goto done;
    memset(&pd, 0, sizeof pd);
    pd.auto_policy = LUTHIER_AUTO_POLICY_COUNT;
    CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_INVALID_ARGUMENT && !p, "unknown policy");
    pd.auto_policy = LUTHIER_AUTO_MODEL;
    CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "model plan: %s", luthier_context_error(ctx));
    CHECK(ctx->auto_policy == LUTHIER_AUTO_RULES, "the context's policy is restored");
    for (i = 0; p && i < p->num_steps; i++) {
        luthier_step_info si;
        if (luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK && si.op == LUTHIER_OP_CONV2D)
            wino += si.algorithm == LUTHIER_CONV_WINOGRAD_2X3 || si.algorithm == LUTHIER_CONV_WINOGRAD_4X3;
        if (luthier_plan_step_info(p, i, &si) == LUTHIER_STATUS_OK && si.op == LUTHIER_OP_CONV2D)
            CHECK(si.algorithm != LUTHIER_CONV_WINOGRAD_6X3, "step %d: F(6x6) is beyond the bound", i);
    }
    if (luthier_cpu_features() & (LUTHIER_CPU_AVX2_FMA | LUTHIER_CPU_NEON)) CHECK(wino > 0, "no Winograd step in the model's plan");
done:
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
}

static void run_costmodel_tests(void) {
    RUN(test_costmodel_tables);
    RUN(test_costmodel_f16_kernels);
    RUN(test_costmodel_monotonic);
    RUN(test_costmodel_winograd);
    RUN(test_costmodel_split);
    RUN(test_costmodel_memory);
    RUN(test_costmodel_predict_api);
    RUN(test_costmodel_auto_policy);
    RUN(test_costmodel_spearman);
    RUN(test_costmodel_plan_policy);
}
