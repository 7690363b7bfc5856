/* Which instruction set each step selects on this CPU (luthier_step_info.isa,
   luthier_conv2d_info.isa, the plan text):
   - every isa of the microkernel registries is a name of luthier.h's ISA table;
   - one layer per convolution algorithm (fp32 and int8) reports the ISA it runs;
   - every zoo network (the "_small" variants, planned only: fast under qemu) in fp32, and the
     convolutional ones also in int8 (calibration ranges set by hand): on AArch64 no step
     reports "scalar"; on x86 every fp32 step that computes runs the widest pass the CPU has
     (AVX-512 or AVX2) and every int8 step an AVX one. The steps' op, name and isa are
     printed for the first offenders.
   Without the hand-written SIMD of the target (LUTHIER_NO_X86_KERNELS / LUTHIER_NO_NEON_KERNELS)
   only the names are checked. Included by test_main.c; call run_isa_tests(). */

/* The ISA a step or layer must report here, or NULL when nothing is required: "neon" means any
   NEON ISA (neon, neon_dot, neon_i8mm). On x86 the operator passes must be the widest the CPU
   has; steps that run a microkernel (any = 1: GEMM kernels are chosen per shape, e.g. 4x24 AVX2
   for 24 columns, and int8 ones per CPU) any AVX ISA. */
static const char *isa_wanted(int any) {
#if LUTHIER__SIMD_NEON
    (void)any;
    return "neon";
#elif LUTHIER__SIMD_X86
    const unsigned f = luthier_cpu_features();
    if (any) return (f & LUTHIER_CPU_AVX2_FMA) ? "avx" : NULL;
    return (f & LUTHIER_CPU_AVX512F) ? "avx512" : (f & LUTHIER_CPU_AVX2_FMA) ? "avx2" : NULL;
#else
    (void)any;
    return NULL;
#endif
}

/* isa satisfies want: a prefix match for the families ("neon", "avx"), else equal. */
static int isa_ok(const char *isa, const char *want) {
    if (!want) return 1;
    if (!strcmp(want, "neon") || !strcmp(want, "avx")) return !strncmp(isa, want, strlen(want));
    return !strcmp(isa, want);
}

static void test_isa_names(void) {
    int i, n;
    luthier__isa k;
    for (k = LUTHIER__ISA_NONE; k < LUTHIER__ISA_COUNT; k = (luthier__isa)(k + 1))
        CHECK(luthier__isa_of(luthier__isa_name(k)) == k, "isa %d: name %s", (int)k, luthier__isa_name(k));
    CHECK(luthier__isa_of("no-such-isa") == LUTHIER__ISA_COUNT && !strcmp(luthier__isa_name(LUTHIER__ISA_COUNT), "unknown"),
          "unknown names");
    int f;
    for (f = 0; f < (int)LUTHIER_KERNELS_COUNT; f++)
        for (i = 0, n = luthier_kernels_count((luthier_kernel_family)f); i < n; i++) {
            luthier_kernel_info ki;
            CHECK(luthier_kernels_get((luthier_kernel_family)f, i, &ki) == LUTHIER_STATUS_OK &&
                      luthier__isa_of(ki.isa) != LUTHIER__ISA_COUNT,
                  "family %d kernel %d (%s): isa '%s' is not in the table", f, i, ki.name, ki.isa);
        }
}

/* One layer per algorithm (a 3x3 shape every algorithm takes; 1x1 and depthwise their own). */
static void test_isa_conv_algorithms(void) {
    static const luthier_conv_algorithm algos[] = {LUTHIER_CONV_IM2COL,       LUTHIER_CONV_1X1,
                                                   LUTHIER_CONV_IMPLICIT_GEMM, LUTHIER_CONV_DEPTHWISE,
                                                   LUTHIER_CONV_WINOGRAD_2X3, LUTHIER_CONV_WINOGRAD_4X3,
                                                   LUTHIER_CONV_WINOGRAD_6X3};
    luthier_context *ctx = ctx_threads(1);
    float *w = (float *)test_alloc(32 * 32 * 9 * sizeof(float));
    size_t a;
    test_fill(w, 32 * 32 * 9);
    for (a = 0; a < sizeof algos / sizeof algos[0] && ctx; a++) {
        const int dw = algos[a] == LUTHIER_CONV_DEPTHWISE, k = algos[a] == LUTHIER_CONV_1X1 ? 1 : 3;
        luthier_conv2d_desc d;
        luthier_conv2d_layer *cv = NULL;
        luthier_conv2d_info info;
        memset(&d, 0, sizeof d);
        memset(&info, 0, sizeof info);
        d.algorithm = algos[a];
        d.batch = 1;
        d.in_h = d.in_w = 12;
        d.in_channels = d.out_channels = 32;
        d.groups = dw ? 32 : 1;
        d.kernel_h = d.kernel_w = k;
        d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = k / 2;
        CHECK(luthier_conv2d_create(ctx, &d, w, NULL, &cv) == LUTHIER_STATUS_OK, "%s: create: %s",
              luthier_conv_algorithm_name(algos[a]), luthier_context_error(ctx));
        if (!cv) continue;
        luthier_conv2d_get_info(cv, &info);
        CHECK(info.isa && isa_ok(info.isa, isa_wanted(!dw)), "%s: isa %s, want %s", luthier_conv_algorithm_name(algos[a]),
              info.isa ? info.isa : "(null)", isa_wanted(!dw));
        printf("    %-16s %s\n", luthier_conv_algorithm_name(algos[a]), info.isa);
        luthier_conv2d_destroy(cv);
    }
    free(w);
    luthier_context_destroy(ctx);
}

/* Steps of p that report an ISA other than the one wanted; prints the first few. */
static int isa_plan_offenders(const luthier_plan *p, const char *what) {
    luthier_plan_info pi;
    int s, bad = 0;
    if (luthier_plan_get_info(p, &pi) != LUTHIER_STATUS_OK) return 1;
    for (s = 0; s < pi.num_steps; s++) {
        luthier_step_info si;
        const char *want;
        if (luthier_plan_step_info(p, s, &si) != LUTHIER_STATUS_OK || !si.isa) return 1;
        if (!strcmp(si.isa, "none") || !strcmp(si.isa, "copy")) continue;
        /* (transposes: 8 x 8 AVX blocks, no 16-lane form; kernels and int8: any AVX family) */
        want = isa_wanted(si.int8 || si.kernel[0] || si.op == LUTHIER_OP_TRANSPOSE);
        if (isa_ok(si.isa, want)) continue;
        if (bad++ < 6)
            printf("    %s: step %d %s '%s'%s [%s] runs %s, want %s\n", what, s, luthier_op_name(si.op), si.name,
                   si.int8 ? " int8" : "", si.kernel, si.isa, want);
    }
    return bad;
}

/* Plans network name in fp32 and, when it has convolutions, in int8 (every tensor given the
   range [-4, 4]): nothing runs. */
static void isa_zoo_case(luthier_context *ctx, const char *name) {
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    luthier_calibration *cal = NULL;
    char err[256];
    int t, convs = 0, bad;
    CHECK(luthier_zoo_build(name, NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK, "%s: build: %s", name, err);
    if (!g) return;
    memset(&pd, 0, sizeof pd);
    CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "%s: plan: %s", name, luthier_context_error(ctx));
    if (p) {
        bad = isa_plan_offenders(p, name);
        CHECK(bad == 0, "%s (fp32): %d steps do not run what they should", name, bad);
    }
    luthier_plan_destroy(p);
    p = NULL;
    for (t = 0; t < luthier_graph_num_nodes(g); t++) {
        luthier_op op;
        luthier_graph_node(g, t, &op, NULL, NULL, NULL, NULL, NULL, NULL);
        convs += op == LUTHIER_OP_CONV2D;
    }
    if (convs && luthier_calibration_create(&cal) == LUTHIER_STATUS_OK) {
        char what[64];
        for (t = 0; t < luthier_graph_num_tensors(g); t++) luthier_calibration_set_range(cal, t, -4.0f, 4.0f);
        pd.int8 = cal;
        CHECK(luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK, "%s: int8 plan: %s", name, luthier_context_error(ctx));
        snprintf(what, sizeof what, "%s int8", name);
        if (p) {
            bad = isa_plan_offenders(p, what);
            CHECK(bad == 0, "%s: %d steps do not run what they should", what, bad);
        }
        luthier_plan_destroy(p);
        luthier_calibration_destroy(cal);
    }
    luthier_graph_destroy(g);
}

static void test_isa_zoo_steps(void) {
    static const char *const nets[] = {"resnet18_small", "resnet50_small",    "resnet101_small", "alexnet_small",
                                       "vgg16_small",    "googlenet_small",   "mobilenet_v2_small", "bert_small",
                                       "gpt2_small",     "gpt2_decode_small"};
    luthier_context *ctx = ctx_threads(1);
    size_t i;
    for (i = 0; i < sizeof nets / sizeof nets[0] && ctx; i++) isa_zoo_case(ctx, nets[i]);
    luthier_context_destroy(ctx);
}

/* The plan text names every step's ISA. */
static void test_isa_plan_text(void) {
    luthier_context *ctx = ctx_threads(1);
    luthier_graph *g = NULL;
    luthier_plan *p = NULL;
    luthier_plan_desc pd;
    char err[256], *text;
    size_t need;
    memset(&pd, 0, sizeof pd);
    CHECK(ctx && luthier_zoo_build("mobilenet_v2_small", NULL, &g, err, sizeof err) == LUTHIER_STATUS_OK &&
              luthier_plan_create(ctx, g, &pd, &p) == LUTHIER_STATUS_OK,
          "plan");
    if (p) {
        luthier_step_info si;
        char tag[32];
        need = luthier_plan_describe(p, NULL, 0) + 1;
        text = (char *)test_alloc(need);
        luthier_plan_describe(p, text, need);
        CHECK(luthier_plan_step_info(p, 0, &si) == LUTHIER_STATUS_OK, "step 0");
        snprintf(tag, sizeof tag, "{%s}", si.isa);
        CHECK(strstr(text, tag) != NULL, "plan text lacks %s", tag);
        free(text);
    }
    luthier_plan_destroy(p);
    luthier_graph_destroy(g);
    luthier_context_destroy(ctx);
}

static void run_isa_tests(void) {
    RUN(test_isa_names);
    RUN(test_isa_conv_algorithms);
    RUN(test_isa_zoo_steps);
    RUN(test_isa_plan_text);
}
