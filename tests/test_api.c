/* Public API contracts: status strings, context creation, and bad arguments that must return a
   clear status (never crash, never abort). Included by test_main.c. */

static void test_status_strings(void) {
    int i, j;
    for (i = 0; i < LUTHIER_STATUS_COUNT; i++) {
        const char *s = luthier_status_string((luthier_status)i);
        CHECK(s && *s, "status %d has no text", i);
        for (j = 0; j < i; j++)
            CHECK(strcmp(s, luthier_status_string((luthier_status)j)) != 0, "statuses %d and %d share '%s'", i, j, s);
    }
    CHECK(strcmp(luthier_status_string(LUTHIER_STATUS_OK), "ok") == 0, "OK text");
    CHECK(strcmp(luthier_status_string((luthier_status)999), "unknown status") == 0, "out of range");
    CHECK(strcmp(luthier_status_string((luthier_status)-1), "unknown status") == 0, "negative");
}

static void test_context_create(void) {
    luthier_context *ctx = (luthier_context *)&ctx; /* must be reset to NULL on failure */
    luthier_context_desc cd;
    luthier_cache_info ci = luthier_cache_sizes();
    CHECK(luthier_context_create(NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL out");
    CHECK(luthier_context_create(NULL, &ctx) == LUTHIER_STATUS_OK && ctx, "NULL desc = defaults");
    CHECK(strcmp(luthier_context_error(ctx), "") == 0, "fresh context has no error");
    luthier_context_destroy(ctx);
    luthier_context_destroy(NULL);
    CHECK(strcmp(luthier_context_error(NULL), "no context") == 0, "error(NULL)");

    memset(&cd, 0, sizeof cd);
    cd.kernel = "no_such_kernel";
    ctx = (luthier_context *)&cd;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_NOT_FOUND, "unknown kernel");
    CHECK(ctx == NULL, "out reset on failure");
    {   /* the reason reaches the caller although no context is left to hold it */
        char why[256];
        luthier_topology bad;
        memset(&bad, 0, sizeof bad);
        cd.error = why;
        cd.error_size = sizeof why;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_NOT_FOUND && strstr(why, "no_such_kernel"), "%s", why);
        cd.kernel = NULL;
        cd.topology = &bad; /* no clusters */
        CHECK(luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK && ctx == NULL && why[0], "bad topology: '%s'", why);
        cd.topology = NULL;
        CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK && why[0] == 0, "success clears the message: '%s'", why);
        luthier_context_destroy(ctx);
        cd.error = NULL;
        cd.error_size = 0;
    }

    cd.kernel = "4x4__scalar_hybrid";
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "short kernel name");
    CHECK(ctx && strcmp(luthier_context_kernel(ctx), "luthier_sgemm_ukernel_4x4__scalar_hybrid") == 0,
          "kernel %s", ctx ? luthier_context_kernel(ctx) : "-");
    luthier_context_destroy(ctx);

    CHECK(ci.l1d >= 8192 && ci.l2 >= 65536, "cache sizes l1d=%zu l2=%zu", ci.l1d, ci.l2);
#if LUTHIER__X86
    {
        int i;
        /* a kernel that needs a disabled feature is refused with a clear message */
        for (i = 0; i < luthier_kernel_count(); i++) {
            luthier_kernel_info ki;
            luthier_kernel_get(i, &ki);
            if (ki.required_cpu_features & LUTHIER_CPU_AVX2_FMA) {
                cd.kernel = ki.name;
                cd.disabled_cpu_features = LUTHIER_CPU_AVX2_FMA;
                CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_UNSUPPORTED, "%s with AVX2 disabled", ki.name);
                break;
            }
        }
    }
#endif
}

static void test_kernel_queries(void) {
    luthier_kernel_info ki;
    int idx;
    CHECK(luthier_kernel_count() >= 2, "count");
    CHECK(luthier_kernel_get(-1, &ki) == LUTHIER_STATUS_INVALID_ARGUMENT, "get(-1)");
    CHECK(luthier_kernel_get(luthier_kernel_count(), &ki) == LUTHIER_STATUS_INVALID_ARGUMENT, "get(count)");
    CHECK(luthier_kernel_get(0, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "get NULL out");
    CHECK(luthier_kernel_find(NULL, &idx) == LUTHIER_STATUS_INVALID_ARGUMENT, "find(NULL)");
    CHECK(luthier_kernel_find("4x4__scalar", NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "find NULL out");
    CHECK(luthier_kernel_find("", &idx) == LUTHIER_STATUS_NOT_FOUND, "find empty");
    CHECK(luthier_kernel_find("luthier_sgemm_ukernel_", &idx) == LUTHIER_STATUS_NOT_FOUND, "prefix only");
    CHECK(luthier_kernel_find("4x4__scala", &idx) == LUTHIER_STATUS_NOT_FOUND, "truncated name");
}

/* Calls luthier_sgemm with desc d and expects status want and an error message containing
   `words`. */
static void expect_sgemm(luthier_context *ctx, const luthier_sgemm_desc *d, const float *a,
                         const float *b, float *c, luthier_status want, const char *words,
                         const char *what) {
    luthier_status s = luthier_sgemm(ctx, d, a, b, c);
    CHECK(s == want, "%s: got %s, want %s (%s)", what, luthier_status_string(s),
          luthier_status_string(want), luthier_context_error(ctx));
    if (words) CHECK(strstr(luthier_context_error(ctx), words) != NULL, "%s: message '%s' lacks '%s'", what,
                     luthier_context_error(ctx), words);
}

static void test_sgemm_bad_arguments(void) {
    luthier_context *ctx = NULL;
    luthier_sgemm_desc d, base;
    float a[64], b[64], c[64];
    luthier_packed_b *pb = NULL;
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    CHECK(luthier_context_create(NULL, &ctx) == LUTHIER_STATUS_OK, "create");
    memset(&base, 0, sizeof base);
    base.m = 4; base.n = 4; base.k = 4;

    CHECK(luthier_sgemm(NULL, &base, a, b, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL ctx");
    expect_sgemm(ctx, NULL, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "desc", "NULL desc");
    expect_sgemm(ctx, &base, NULL, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "A is NULL", "NULL A");
    expect_sgemm(ctx, &base, a, NULL, c, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL", "NULL B");
    expect_sgemm(ctx, &base, a, b, NULL, LUTHIER_STATUS_INVALID_ARGUMENT, "C is NULL", "NULL C");
    d = base; d.m = -1;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "negative", "m < 0");
    d = base; d.n = -3;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "negative", "n < 0");
    d = base; d.k = -2;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "negative", "k < 0");
    d = base; d.lda = 3;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "leading dimension of A", "lda < k");
    d = base; d.ldb = 2;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "leading dimension of B", "ldb < n");
    d = base; d.ldc = -1;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "leading dimension of C", "ldc < 0");
    d = base; d.n = 8; d.k = 2; d.trans_b = 1; d.ldb = 1;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "leading dimension of B", "trans ldb < k");
    d = base; d.m = (int64_t)1 << 40;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_OVERFLOW, "2^31", "m too large");
    d = base; d.m = INT32_MAX; d.k = INT32_MAX; d.n = 1;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_OVERFLOW, "overflows", "m*k overflows");
    d = base; d.m = 2; d.lda = INT64_MAX;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_OVERFLOW, "overflows", "huge lda");
    d = base; d.activation = (luthier_activation)77;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "activation", "bad activation");
    d = base; d.activation = LUTHIER_ACTIVATION_CLAMP; d.clamp_min = 1.0f; d.clamp_max = -1.0f;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "clamp_min", "min > max");
    d.clamp_min = NAN;
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_INVALID_ARGUMENT, "clamp_min", "NaN clamp");
    d = base; d.kernel = "8x8__nothing";
    expect_sgemm(ctx, &d, a, b, c, LUTHIER_STATUS_NOT_FOUND, "8x8__nothing", "unknown kernel");

    /* the context stays usable after errors, and a success clears the message */
    expect_sgemm(ctx, &base, a, b, c, LUTHIER_STATUS_OK, NULL, "valid call after errors");
    CHECK(strcmp(luthier_context_error(ctx), "") == 0, "error cleared: '%s'", luthier_context_error(ctx));

    /* pre-packed B */
    CHECK(luthier_sgemm_pack_b(NULL, &base, b, &pb) == LUTHIER_STATUS_INVALID_ARGUMENT && pb == NULL, "pack NULL ctx");
    CHECK(luthier_sgemm_pack_b(ctx, NULL, b, &pb) == LUTHIER_STATUS_INVALID_ARGUMENT, "pack NULL desc");
    CHECK(luthier_sgemm_pack_b(ctx, &base, NULL, &pb) == LUTHIER_STATUS_INVALID_ARGUMENT, "pack NULL B");
    CHECK(luthier_sgemm_pack_b(ctx, &base, b, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "pack NULL out");
    d = base; d.ldb = 1;
    CHECK(luthier_sgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_INVALID_ARGUMENT && pb == NULL, "pack bad ldb");
    d = base; d.k = (int64_t)INT32_MAX; d.n = INT32_MAX;
    CHECK(luthier_sgemm_pack_b(ctx, &d, b, &pb) == LUTHIER_STATUS_OVERFLOW && pb == NULL, "pack overflow: %s",
          luthier_context_error(ctx));
    CHECK(luthier_sgemm_pack_b(ctx, &base, b, &pb) == LUTHIER_STATUS_OK && pb, "pack");
    CHECK(luthier_sgemm_packed(NULL, &base, a, pb, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "packed NULL ctx");
    CHECK(luthier_sgemm_packed(ctx, &base, a, NULL, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "packed NULL B");
    CHECK(luthier_sgemm_packed(ctx, &base, NULL, pb, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "packed NULL A");
    d = base; d.n = 5;
    CHECK(luthier_sgemm_packed(ctx, &d, a, pb, c) == LUTHIER_STATUS_INCOMPATIBLE, "packed n mismatch");
    CHECK(strstr(luthier_context_error(ctx), "packed") != NULL, "message: %s", luthier_context_error(ctx));
    d = base; d.k = 3;
    CHECK(luthier_sgemm_packed(ctx, &d, a, pb, c) == LUTHIER_STATUS_INCOMPATIBLE, "packed k mismatch");
    CHECK(luthier_sgemm_packed(ctx, &base, a, pb, c) == LUTHIER_STATUS_OK, "packed ok");
    luthier_packed_b_destroy(pb);
    luthier_packed_b_destroy(NULL);
    CHECK(luthier_packed_b_bytes(NULL) == 0, "bytes(NULL)");
    luthier_context_destroy(ctx);
}

/* LUTHIER_KERNEL picks the default kernel of new contexts; a bad value is an error. */
static void test_env_kernel(void) {
    luthier_context *ctx = NULL;
    const char *old = getenv("LUTHIER_KERNEL");
    char saved[128] = "";
    if (old) snprintf(saved, sizeof saved, "%s", old);
    setenv("LUTHIER_KERNEL", "4x4__scalar", 1);
    CHECK(luthier_context_create(NULL, &ctx) == LUTHIER_STATUS_OK, "env kernel");
    CHECK(ctx && strcmp(luthier_context_kernel(ctx), "luthier_sgemm_ukernel_4x4__scalar") == 0, "env kernel used");
    luthier_context_destroy(ctx);
    setenv("LUTHIER_KERNEL", "bogus", 1);
    CHECK(luthier_context_create(NULL, &ctx) == LUTHIER_STATUS_NOT_FOUND && !ctx, "bad env kernel");
    if (old) setenv("LUTHIER_KERNEL", saved, 1);
    else unsetenv("LUTHIER_KERNEL");
}
