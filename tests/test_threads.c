/* The thread pool: ratio partition (every unit exactly once, contiguous per cluster, shares in
   proportion), dynamic scheduling, bad ratios, contexts with 1..3 clusters of 1..8 threads,
   and multi-threaded GEMM equal to single-threaded GEMM for every kernel. Included by
   test_main.c. */

#define TEST_MAX_UNITS 5000

typedef struct coverage {
    int count[TEST_MAX_UNITS];   /* times each unit was visited (atomic) */
    int slot_of[TEST_MAX_UNITS]; /* who visited it */
    int calls[64];               /* callbacks per slot (atomic) */
    int cluster_of_slot[64];
    int bad_cluster;
} coverage;

static void coverage_fn(void *arg, size_t begin, size_t end, int thread, int cluster) {
    coverage *cv = (coverage *)arg;
    size_t u;
    for (u = begin; u < end; u++) {
        __atomic_add_fetch(&cv->count[u], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&cv->slot_of[u], thread, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&cv->calls[thread], 1, __ATOMIC_RELAXED);
    if (cv->cluster_of_slot[thread] != cluster) __atomic_store_n(&cv->bad_cluster, 1, __ATOMIC_RELAXED);
}

/* A context over a fake topology of nc clusters with the given thread counts (CPU ids past
   this machine's: the workers run unpinned). */
static luthier_context *threads_context(int nc, const int *threads) {
    char spec[256];
    size_t len = 0;
    int c, cpu = 0;
    luthier_topology topo;
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    char err[128];
    static const char *const names[3] = {"big", "mid", "lit"};
    for (c = 0; c < nc; c++) {
        len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%s@%g:%d-%d", c ? "," : "",
                                names[c], 1.0 / (c + 1), cpu, cpu + threads[c] - 1);
        cpu += threads[c];
    }
    if (luthier_topology_parse(spec, &topo, err, sizeof err) != LUTHIER_STATUS_OK) {
        printf("    cannot parse '%s': %s\n", spec, err);
        return NULL;
    }
    memset(&cd, 0, sizeof cd);
    cd.topology = &topo;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return NULL;
    return ctx;
}

/* Each unit of work waits 0.4 ms (a wait, not a spin: the test measures time in the ranges,
   not CPU speed, and stays right on a loaded machine). */
static void busy_wait_fn(void *arg, size_t begin, size_t end, int slot, int cluster) {
    size_t u;
    (void)arg;
    (void)slot;
    (void)cluster;
    for (u = begin; u < end; u++) {
        struct timespec ts;
        ts.tv_sec = 0;
        ts.tv_nsec = 400000;
        while (nanosleep(&ts, &ts) != 0) {}
    }
}

/* The pool's per-cluster busy times (what the tuner's balance prediction reads): each cluster's
   longest slot time, summed over the regions while timing is on, untouched while it is off. */
static void test_threads_cluster_busy(void) {
    static const int threads[3] = {2, 1, 1};
    const float r1[3] = {60, 20, 20}, r2[3] = {100, 0, 0};
    luthier_parallel_desc pd;
    double busy[3], again[3];
    luthier_context *ctx = threads_context(3, threads);
    CHECK(ctx != NULL, "context");
    if (!ctx) return;
    memset(&pd, 0, sizeof pd);
    pd.num_ratios = 3;
    pd.ratios = r1;
    luthier__pool_timing(ctx, 1);
    /* 20 units: 12 for the 2 big slots (6 each), 4 and 4: 2.4, 1.6 and 1.6 ms, twice */
    CHECK(luthier_parallel_for(ctx, 20, &pd, busy_wait_fn, NULL) == LUTHIER_STATUS_OK, "region 1");
    CHECK(luthier_parallel_for(ctx, 20, &pd, busy_wait_fn, NULL) == LUTHIER_STATUS_OK, "region 2");
    luthier__pool_cluster_busy(ctx, busy);
    CHECK(busy[0] >= 4.8e-3 && busy[0] < 0.5, "big %.3f ms, want >= 4.8", 1e3 * busy[0]);
    CHECK(busy[1] >= 3.2e-3 && busy[1] < 0.5 && busy[2] >= 3.2e-3 && busy[2] < 0.5, "mid %.3f, little %.3f ms, want >= 3.2",
          1e3 * busy[1], 1e3 * busy[2]);
    /* a cluster without work is not busy */
    luthier__pool_timing(ctx, 1);
    pd.ratios = r2;
    CHECK(luthier_parallel_for(ctx, 4, &pd, busy_wait_fn, NULL) == LUTHIER_STATUS_OK, "region 3");
    luthier__pool_cluster_busy(ctx, busy);
    CHECK(busy[0] >= 0.8e-3 && busy[1] == 0 && busy[2] == 0, "100/0/0: %.3f %.3f %.3f ms", 1e3 * busy[0],
          1e3 * busy[1], 1e3 * busy[2]);
    /* timing off: the sums stay */
    luthier__pool_timing(ctx, 0);
    CHECK(luthier_parallel_for(ctx, 4, &pd, busy_wait_fn, NULL) == LUTHIER_STATUS_OK, "region 4");
    luthier__pool_cluster_busy(ctx, again);
    CHECK(memcmp(busy, again, sizeof busy) == 0, "timing off changed the busy times");
    luthier_context_destroy(ctx);
}

static void test_threads_ratio_partition(void) {
    int trial;
    for (trial = 0; trial < (T.quick ? 30 : 120); trial++) {
        int threads[3], nc = test_rand_int(1, 3), c, t, nt = 0, bad = 0;
        float ratios[3];
        size_t n = (size_t)test_rand_int(0, TEST_MAX_UNITS), u;
        luthier_context *ctx;
        luthier_parallel_desc pd;
        coverage *cv = (coverage *)calloc(1, sizeof *cv);
        for (c = 0; c < nc; c++) {
            threads[c] = test_rand_int(1, 8);
            /* shares in 10 % steps, 0 % and 100 % included */
            ratios[c] = (float)(10 * test_rand_int(0, 10));
        }
        if (ratios[0] + (nc > 1 ? ratios[1] : 0) + (nc > 2 ? ratios[2] : 0) == 0) ratios[0] = 100;
        ctx = threads_context(nc, threads);
        CHECK(ctx != NULL, "context with %d clusters", nc);
        if (!ctx || !cv) { free(cv); luthier_context_destroy(ctx); continue; }
        for (c = 0; c < nc; c++)
            for (t = 0; t < threads[c]; t++) cv->cluster_of_slot[nt++] = c;
        CHECK(luthier_context_num_threads(ctx) == nt, "threads %d, want %d", luthier_context_num_threads(ctx), nt);
        memset(&pd, 0, sizeof pd);
        pd.ratios = ratios;
        pd.num_ratios = nc;
        CHECK(luthier_parallel_for(ctx, n, &pd, coverage_fn, cv) == LUTHIER_STATUS_OK, "parallel_for: %s",
              luthier_context_error(ctx));
        for (u = 0; u < n; u++) bad += cv->count[u] != 1;
        CHECK(bad == 0, "n=%zu: %d units not covered exactly once", n, bad);
        CHECK(!cv->bad_cluster, "callback got a wrong cluster index");
        /* one contiguous range per slot, slots in order, clusters' shares as asked (+-1 unit) */
        for (u = 1; u < n; u++) CHECK(cv->slot_of[u] >= cv->slot_of[u - 1], "unit %zu out of slot order", u);
        {
            double sum = 0;
            for (c = 0; c < nc; c++) sum += ratios[c];
            for (c = 0; c < nc; c++) {
                size_t got = 0;
                for (u = 0; u < n; u++) got += cv->cluster_of_slot[cv->slot_of[u]] == c;
                CHECK(fabs((double)got - (double)n * ratios[c] / sum) <= 1.0 + 1e-9,
                      "cluster %d got %zu of %zu units for ratio %g/%g", c, got, n, (double)ratios[c], sum);
                if (ratios[c] == 0) CHECK(got == 0, "0 %% cluster %d got %zu units", c, got);
            }
            /* within a cluster, threads differ by at most one unit */
            for (c = 0, t = 0; c < nc; t += threads[c], c++) {
                size_t lo = (size_t)-1, hi = 0;
                int s;
                for (s = t; s < t + threads[c]; s++) {
                    size_t cnt = 0;
                    for (u = 0; u < n; u++) cnt += cv->slot_of[u] == s;
                    lo = cnt < lo ? cnt : lo;
                    hi = cnt > hi ? cnt : hi;
                }
                CHECK(hi - lo <= 1, "cluster %d: thread shares %zu..%zu", c, lo, hi);
            }
        }
        /* dynamic: every unit exactly once too */
        memset(cv->count, 0, sizeof cv->count);
        pd.schedule = LUTHIER_SCHEDULE_DYNAMIC;
        pd.chunk = (size_t)test_rand_int(0, 50);
        CHECK(luthier_parallel_for(ctx, n, &pd, coverage_fn, cv) == LUTHIER_STATUS_OK, "dynamic");
        for (u = 0, bad = 0; u < n; u++) bad += cv->count[u] != 1;
        CHECK(bad == 0, "dynamic n=%zu chunk=%zu: %d units not covered exactly once", n, pd.chunk, bad);
        luthier_context_destroy(ctx);
        free(cv);
    }
}

static void test_threads_bad_ratios(void) {
    int threads[2] = {2, 2};
    luthier_context *ctx = threads_context(2, threads);
    luthier_parallel_desc pd;
    coverage *cv = (coverage *)calloc(1, sizeof *cv);
    float r[3] = {50, 50, 0};
    CHECK(ctx != NULL, "context");
    if (!ctx || !cv) { free(cv); luthier_context_destroy(ctx); return; }
    memset(&pd, 0, sizeof pd);
    pd.ratios = r;
    pd.num_ratios = 3;
    CHECK(luthier_parallel_for(ctx, 10, &pd, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "3 ratios for 2 clusters");
    CHECK(strstr(luthier_context_error(ctx), "ratios") != NULL, "message: %s", luthier_context_error(ctx));
    pd.num_ratios = 2;
    r[0] = -1;
    CHECK(luthier_parallel_for(ctx, 10, &pd, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative ratio");
    r[0] = NAN;
    CHECK(luthier_parallel_for(ctx, 10, &pd, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "NaN ratio");
    r[0] = 0; r[1] = 0;
    CHECK(luthier_parallel_for(ctx, 10, &pd, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "all zero");
    r[0] = 30; r[1] = 90; /* weights that do not sum to 100 are normalized */
    CHECK(luthier_parallel_for(ctx, 12, &pd, coverage_fn, cv) == LUTHIER_STATUS_OK, "normalized weights");
    pd.schedule = (luthier_schedule)9;
    CHECK(luthier_parallel_for(ctx, 10, &pd, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "bad schedule");
    CHECK(luthier_parallel_for(ctx, 10, NULL, NULL, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL fn");
    CHECK(luthier_parallel_for(NULL, 10, NULL, coverage_fn, cv) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL ctx");
    /* sizes that hung: n near SIZE_MAX (the partition's doubles), a chunk near SIZE_MAX (the
       dynamic counter wrapped and handed out the units again) */
    CHECK(luthier_parallel_for(ctx, SIZE_MAX - 3, NULL, coverage_fn, cv) == LUTHIER_STATUS_OVERFLOW, "n near SIZE_MAX");
    pd.schedule = LUTHIER_SCHEDULE_DYNAMIC;
    pd.chunk = SIZE_MAX / 2 + 1; /* two grabs wrapped the counter back to 0 */
    memset(cv->count, 0, 12 * sizeof(int));
    CHECK(luthier_parallel_for(ctx, 12, &pd, coverage_fn, cv) == LUTHIER_STATUS_OK, "huge chunk");
    {
        int u, bad = 0;
        for (u = 0; u < 12; u++) bad += cv->count[u] != 1;
        CHECK(bad == 0, "%d units not run exactly once with a huge chunk", bad);
    }
    luthier_context_destroy(ctx);
    free(cv);
}

/* Many back-to-back regions: no lost wake-ups, no deadlock, and the pool survives them. */
static void test_threads_many_regions(void) {
    int threads[2] = {2, 1};
    luthier_context *ctx = threads_context(2, threads);
    coverage *cv = (coverage *)calloc(1, sizeof *cv);
    int i, bad = 0;
    if (!ctx || !cv) { CHECK(0, "setup"); free(cv); luthier_context_destroy(ctx); return; }
    for (i = 0; i < (T.quick ? 200 : 2000); i++) {
        size_t u, n = (size_t)(i % 97) + 1;
        memset(cv->count, 0, n * sizeof(int));
        if (luthier_parallel_for(ctx, n, NULL, coverage_fn, cv) != LUTHIER_STATUS_OK) bad++;
        for (u = 0; u < n; u++) bad += cv->count[u] != 1;
    }
    CHECK(bad == 0, "%d errors over the regions", bad);
    luthier_context_destroy(ctx);
    free(cv);
}

/* Multi-threaded GEMM gives the same bits as the single-threaded one for every kernel, for
   ratio and dynamic schedules, with tiles split over M and (skinny M) over N. */
static void test_threads_gemm_equal(void) {
    int threads[3] = {2, 1, 2};
    luthier_context *one = NULL, *many = threads_context(3, threads);
    luthier_context_desc cd;
    int idx;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &one) == LUTHIER_STATUS_OK, "1-thread context");
    CHECK(many != NULL, "5-thread context");
    if (!one || !many) { luthier_context_destroy(one); luthier_context_destroy(many); return; }
    CHECK(luthier_context_num_threads(one) == 1, "num_threads = 1 honoured");
    for (idx = 0; idx < LUTHIER__NUM_UKERNELS; idx++) {
        static const int shapes[][3] = {{97, 75, 130}, {3, 200, 64}, {1, 333, 70}, {250, 17, 9}};
        size_t s;
        if (!kernel_available(idx)) continue;
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            float *a = (float *)test_alloc((size_t)m * k * sizeof(float));
            float *b = (float *)test_alloc((size_t)k * n * sizeof(float));
            float *bias = (float *)test_alloc((size_t)n * sizeof(float));
            float *c1 = (float *)test_alloc((size_t)m * n * sizeof(float));
            float *c2 = (float *)test_alloc((size_t)m * n * sizeof(float));
            float ratios[3] = {60, 0, 40};
            luthier_sgemm_desc d;
            int sched;
            test_fill(a, (size_t)m * k);
            test_fill(b, (size_t)k * n);
            test_fill(bias, (size_t)n);
            memset(&d, 0, sizeof d);
            d.m = m; d.n = n; d.k = k;
            d.bias = bias;
            d.activation = LUTHIER_ACTIVATION_RELU6;
            d.kernel = luthier__ukernels[idx].name;
            CHECK(luthier_sgemm(one, &d, a, b, c1) == LUTHIER_STATUS_OK, "1 thread");
            for (sched = 0; sched < 3; sched++) {
                d.schedule = sched == 2 ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
                d.ratios = sched == 1 ? ratios : NULL;
                d.num_ratios = sched == 1 ? 3 : 0;
                memset(c2, 0, (size_t)m * n * sizeof(float));
                CHECK(luthier_sgemm(many, &d, a, b, c2) == LUTHIER_STATUS_OK, "5 threads: %s", luthier_context_error(many));
                CHECK(memcmp(c1, c2, (size_t)m * n * sizeof(float)) == 0,
                      "%s %dx%dx%d schedule %d: multi-threaded result differs", d.kernel, m, n, k, sched);
            }
            free(a); free(b); free(bias); free(c1); free(c2);
        }
    }
    luthier_context_destroy(one);
    luthier_context_destroy(many);
}

/* The GEMM split (luthier__gemm_split_for / luthier__split_next): over many tile and panel
   counts and thread counts, every (tile, panel) product lies in exactly one rectangle of one
   thread's range; a grouped split's busiest thread has at most 10 % more products than an even
   share, or no more than the row split's busiest;
   below LUTHIER__GROUPED_SPLIT_MIN_THREADS or with B in L2 it stays the row split. */
static void test_threads_gemm_split(void) {
    static const int thread_counts[] = {1, 2, 3, 4, 5, 8, 16};
    static unsigned char seen[64 * 64];
    size_t tiles, panels, ti;
    int bad = 0;
    for (tiles = 1; tiles <= 40; tiles += 3)
        for (panels = 1; panels <= 60; panels += 4)
            for (ti = 0; ti < sizeof thread_counts / sizeof thread_counts[0]; ti++) {
                const int t = thread_counts[ti];
                int big;
                for (big = 0; big < 2; big++) {
                    const luthier__gemm_split s = luthier__gemm_split_for(tiles, panels, t, big ? (size_t)64 << 20 : 1024, 1 << 20);
                    const size_t units = luthier__split_units(&s);
                    size_t th, u, busiest = 0, r[4];
                    const int bad0 = bad;
                    memset(seen, 0, sizeof seen);
                    for (th = 0; th < (size_t)t; th++) {
                        size_t b = units * th / (size_t)t, e = units * (th + 1) / (size_t)t, load = 0, i, j;
                        while (luthier__split_next(&s, &b, e, r))
                            for (i = r[0]; i < r[1]; i++)
                                for (j = r[2]; j < r[3]; j++) seen[i * 64 + j]++, load++;
                        busiest = load > busiest ? load : busiest;
                    }
                    for (u = 0; u < tiles * 64; u++)
                        if (seen[u] != (u % 64 < panels)) bad++;
                    if (s.groups > 1 && busiest > luthier__div_up(tiles, (size_t)t) * panels &&
                        (double)busiest > 1.1 * (double)(tiles * panels) / t)
                        bad++;
                    if ((!big || t < LUTHIER__GROUPED_SPLIT_MIN_THREADS) && s.groups && !(tiles < (size_t)t && panels > tiles))
                        bad++;
                    if (bad > bad0 && bad0 < 3) printf("    tiles %zu panels %zu threads %d big %d: groups %zu, busiest %zu\n", tiles, panels, t, big, s.groups, busiest);
                }
            }
    CHECK(bad == 0, "%d splits miss, repeat or overload products", bad);
    {
        /* BERT-base's FFN on 16 threads: 22 tiles of 6 rows; 48 panels -> 1 group, 12 -> 4 */
        const luthier__gemm_split a = luthier__gemm_split_for(22, 48, 16, 9u << 20, 2u << 20);
        const luthier__gemm_split b = luthier__gemm_split_for(22, 12, 16, 9u << 20, 2u << 20);
        CHECK(a.groups == 1 && b.groups == 4, "BERT FFN on 16 threads: %zu and %zu row groups", a.groups, b.groups);
    }
}

/* GEMMs whose B outweighs L2 on 5 threads (grid split) and on 1: equal bit for bit, under the
   ratio and dynamic schedules: fp32 on the default kernel, on an interleaved one and on the
   F16 emulation (interleaved kernels under a column split pack A once for all threads), and
   int8. */
static void test_threads_gemm_grouped(void) {
    int five[1] = {5};
    luthier_context *one = NULL, *many = threads_context(1, five);
    luthier_context_desc cd;
    const int m = 40, n = 4000, k = 300;
    const char *kernels[3] = {NULL, "4x4__scalar", "4x4__scalar_f16"};
    float *a = (float *)test_alloc((size_t)m * k * sizeof(float)), *b = (float *)test_alloc((size_t)k * n * sizeof(float));
    float *c1 = (float *)test_alloc((size_t)m * n * sizeof(float)), *c2 = (float *)test_alloc((size_t)m * n * sizeof(float));
    int32_t *q1 = (int32_t *)test_alloc((size_t)m * n * sizeof(int32_t)), *q2 = (int32_t *)test_alloc((size_t)m * n * sizeof(int32_t));
    uint8_t *qa = (uint8_t *)test_alloc((size_t)m * 8 * k);
    int8_t *qb = (int8_t *)test_alloc((size_t)k * 8 * n);
    luthier_sgemm_desc d;
    luthier_qgemm_desc qd;
    size_t e;
    int sched, ki, i;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &one) == LUTHIER_STATUS_OK && many, "contexts");
    if (!one || !many) goto done;
    for (i = 0; i < LUTHIER__NUM_UKERNELS; i++) /* the first SIMD interleaved kernel this CPU runs */
        if (luthier__ukernels[i].kind == LUTHIER_KERNEL_INTERLEAVED && strcmp(luthier__ukernels[i].isa, "scalar") &&
            luthier__kernel_runs(&luthier__ukernels[i], luthier_cpu_features())) {
            kernels[1] = luthier__ukernels[i].name;
            break;
        }
    test_fill(a, (size_t)m * k);
    test_fill(b, (size_t)k * n);
    for (e = 0; e < (size_t)m * 8 * k; e++) qa[e] = (uint8_t)test_rand_int(0, 255);
    for (e = 0; e < (size_t)k * 8 * n; e++) qb[e] = (int8_t)test_rand_int(-128, 127);
    memset(&d, 0, sizeof d);
    d.m = m; d.n = n; d.k = k;
    d.activation = LUTHIER_ACTIVATION_RELU;
    for (ki = 0; ki < 3; ki++) {
        d.kernel = kernels[ki];
        d.schedule = LUTHIER_SCHEDULE_RATIO;
        CHECK(luthier_sgemm(one, &d, a, b, c1) == LUTHIER_STATUS_OK, "%s, 1 thread", d.kernel ? d.kernel : "default");
        for (sched = 0; sched < 2; sched++) {
            d.schedule = sched ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
            memset(c2, 0, (size_t)m * n * sizeof(float));
            CHECK(luthier_sgemm(many, &d, a, b, c2) == LUTHIER_STATUS_OK, "%s, 5 threads", d.kernel ? d.kernel : "default");
            CHECK(memcmp(c1, c2, (size_t)m * n * sizeof(float)) == 0, "%s, schedule %d: 5 threads differ from 1",
                  d.kernel ? d.kernel : "default", sched);
        }
    }
    memset(&qd, 0, sizeof qd);
    qd.m = m; qd.n = n; qd.k = 8 * k; /* 9.6 MB of int8 B */
    qd.a_zero_point = 3;
    qd.output = LUTHIER_QOUTPUT_INT32;
    CHECK(luthier_qgemm(one, &qd, qa, qb, q1) == LUTHIER_STATUS_OK, "int8, 1 thread: %s", luthier_context_error(one));
    for (sched = 0; sched < 2; sched++) {
        qd.schedule = sched ? LUTHIER_SCHEDULE_DYNAMIC : LUTHIER_SCHEDULE_RATIO;
        memset(q2, 0, (size_t)m * n * sizeof(int32_t));
        CHECK(luthier_qgemm(many, &qd, qa, qb, q2) == LUTHIER_STATUS_OK, "int8, 5 threads");
        CHECK(memcmp(q1, q2, (size_t)m * n * sizeof(int32_t)) == 0, "int8, schedule %d: 5 threads differ from 1", sched);
    }
done:
    free(a); free(b); free(c1); free(c2); free(q1); free(q2); free(qa); free(qb);
    luthier_context_destroy(one);
    luthier_context_destroy(many);
}

/* Convolutions whose weights outweigh L2 on 5 threads (the grid split: 7 x 7 pixels, 320 or
   1024 channels) and on 1: equal bit for bit for im2col, implicit GEMM and 1x1. */
static void test_threads_conv_grouped(void) {
    static const luthier_conv_algorithm algos[3] = {LUTHIER_CONV_IM2COL, LUTHIER_CONV_IMPLICIT_GEMM, LUTHIER_CONV_1X1};
    int five[1] = {5}, a;
    luthier_context *one = NULL, *many = threads_context(1, five);
    luthier_context_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &one) == LUTHIER_STATUS_OK && many, "contexts");
    for (a = 0; a < 3 && one && many; a++) {
        luthier_conv2d_desc d;
        luthier_conv2d_layer *l1 = NULL, *l5 = NULL;
        const int c = a == 2 ? 1024 : 320, ks = a == 2 ? 1 : 3;
        const size_t nin = (size_t)49 * c, nw = (size_t)c * c * ks * ks;
        float *x = (float *)test_alloc(nin * sizeof(float)), *w = (float *)test_alloc(nw * sizeof(float));
        float *y1 = (float *)test_alloc(nin * sizeof(float)), *y5 = (float *)test_alloc(nin * sizeof(float));
        memset(&d, 0, sizeof d);
        d.batch = 1;
        d.in_channels = d.out_channels = c;
        d.in_h = d.in_w = 7;
        d.kernel_h = d.kernel_w = ks;
        d.stride_h = d.stride_w = 1;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = ks / 2;
        d.groups = 1;
        d.layout = LUTHIER_LAYOUT_NHWC;
        d.activation = LUTHIER_ACTIVATION_RELU;
        d.algorithm = algos[a];
        test_fill(x, nin);
        test_fill(w, nw);
        CHECK(luthier_conv2d_create(one, &d, w, NULL, &l1) == LUTHIER_STATUS_OK && luthier_conv2d_create(many, &d, w, NULL, &l5) == LUTHIER_STATUS_OK,
              "%s: %s", luthier_conv_algorithm_name(algos[a]), luthier_context_error(many));
        if (l1 && l5) {
            CHECK(luthier_conv2d_run(one, l1, x, y1) == LUTHIER_STATUS_OK && luthier_conv2d_run(many, l5, x, y5) == LUTHIER_STATUS_OK,
                  "run: %s", luthier_context_error(many));
            CHECK(memcmp(y1, y5, nin * sizeof(float)) == 0, "%s: 5 threads differ from 1", luthier_conv_algorithm_name(algos[a]));
            CHECK(luthier__conv_split(many, l5).groups > 0 || l5->bl.bytes <= luthier__l2_bytes(many), "%s: not a grid split",
                  luthier_conv_algorithm_name(algos[a]));
        }
        luthier_conv2d_destroy(l1);
        luthier_conv2d_destroy(l5);
        free(x); free(w); free(y1); free(y5);
    }
    luthier_context_destroy(one);
    luthier_context_destroy(many);
}

/* On this machine's own topology every worker is pinned to its CPU and says so, unless the
   process may not run there. */
static void test_threads_pinning(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    int t;
    memset(&cd, 0, sizeof cd);
    setenv("LUTHIER_CLUSTERS", "", 1);
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "default context");
    unsetenv("LUTHIER_CLUSTERS");
    if (!ctx) return;
    CHECK(luthier_context_num_threads(ctx) >= 1, "threads");
    for (t = 1; t < luthier_context_num_threads(ctx); t++) {
        int cluster = -1, cpu = -1, pinned = luthier_context_thread_info(ctx, t, &cluster, &cpu);
        int allowed = 1;
#if defined(__linux__) && !defined(LUTHIER_NO_THREADS)
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) allowed = cpu >= 0 && CPU_ISSET(cpu, &set);
#else
        allowed = 0;
#endif
        CHECK(cpu >= 0 && cluster >= 0, "thread %d: cpu %d cluster %d", t, cpu, cluster);
        if (allowed) CHECK(pinned == 1, "thread %d not pinned to cpu %d", t, cpu);
    }
    CHECK(luthier_context_thread_info(ctx, 0, NULL, NULL) == 0, "the caller is not pinned");
    CHECK(luthier_context_thread_info(ctx, -1, NULL, NULL) == 0, "slot -1");
    CHECK(luthier_context_thread_info(ctx, 9999, NULL, NULL) == 0, "slot 9999");
    luthier_context_destroy(ctx);
}

/* A GEMM call's ratios are checked whatever the thread count. */
static void test_threads_gemm_bad_ratios(void) {
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_sgemm_desc d;
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    float r[2] = {1, 1};
    const char *kernels[1] = {"no_such_kernel"};
    memset(&cd, 0, sizeof cd);
    cd.num_threads = 1;
    CHECK(luthier_context_create(&cd, &ctx) == LUTHIER_STATUS_OK, "context");
    if (!ctx) return;
    memset(&d, 0, sizeof d);
    d.m = 2; d.n = 2; d.k = 2;
    d.ratios = r;
    d.num_ratios = 2;
    CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "2 ratios for 1 cluster");
    d.num_ratios = 1;
    r[0] = -5;
    CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative ratio");
    r[0] = 100;
    CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_OK, "good ratio");
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4, "result");
    d.cluster_kernels = kernels;
    CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_NOT_FOUND, "unknown cluster kernel");
    kernels[0] = "4x4__scalar";
    d.kernel = "4x4__scalar_hybrid";
    CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_OK, "cluster kernel of equal MR/NR");
    d.kernel = NULL;
    if (strcmp(luthier_context_kernel(ctx), "luthier_sgemm_ukernel_4x4__scalar") != 0) {
        CHECK(luthier_sgemm(ctx, &d, a, b, c) == LUTHIER_STATUS_INCOMPATIBLE, "cluster kernel of other MR/NR");
        CHECK(strstr(luthier_context_error(ctx), "share MR, NR") != NULL, "message: %s", luthier_context_error(ctx));
    }
    luthier_context_destroy(ctx);
}
