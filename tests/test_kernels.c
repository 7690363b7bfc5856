/* Every registered microkernel against a double-precision oracle, called directly through the
   contract: m = 1..MR, n = 1..NR, k around the unroll and large, hybrid segments, every flag,
   C pre-filled with NaN where it must not be read, canaries around the tile, exact-size
   allocations of A rows, B and bias so that ASan sees any over-read, NULL pointers for the A
   rows a kernel must not touch, and half the cases with a prefetch range (the hybrid kernels'
   two-step loops, at the base and the dense rate). Included by test_main.c. */

/* The kernels of the fp32-activation families (F32, F16W, F16: one contract), by one index. */
#define SGEMM_KERNELS (LUTHIER__NUM_UKERNELS + LUTHIER__NUM_HKERNELS + LUTHIER__NUM_FKERNELS)
static const luthier__kernel_entry *sgemm_kernel_at(int idx) {
    if (idx < LUTHIER__NUM_UKERNELS) return &luthier__ukernels[idx];
    idx -= LUTHIER__NUM_UKERNELS;
    return idx < LUTHIER__NUM_HKERNELS ? &luthier__hkernels[idx] : &luthier__fkernels[idx - LUTHIER__NUM_HKERNELS];
}

/* What a value becomes in a kernel's operand: itself, or (fp16 operands) its nearest half. */
static float operand_round(float v, int bytes) { return bytes == 2 ? luthier__f16_to_f32(luthier__f32_to_f16(v)) : v; }

/* The error a family's arithmetic allows on a sum whose terms' magnitudes add up to mag: fp32
   (a few ulps per term), or F16 (fp16 sums over the k block: each step's rounding is at most
   2^-11 of the partial sum and they add up like a random walk; 2^-8 keeps 16x the typical). */
static double family_tol(const luthier__kernel_entry *uk, double mag) {
    return uk->family == LUTHIER_KERNELS_F16 ? 1e-6 + 0x1p-8 * mag : 1e-6 + 4.0 * FLT_EPSILON * mag;
}

typedef struct ukernel_case {
    size_t m, n, k, ks;
    unsigned flags;
    int with_bias, with_prefetch; /* prefetch: 0 none, 1 base rate, 2 dense */
} ukernel_case;

/* Runs one case; returns the number of mismatches (and prints the first). */
static int ukernel_check(const luthier__kernel_entry *uk, const ukernel_case *tc) {
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, m = tc->m, n = tc->n, k = tc->k;
    const size_t ks = uk->kind == LUTHIER_KERNEL_HYBRID ? tc->ks : 1;
    const size_t ktot = k * ks;
    const size_t ldc = n + 3, c_rows = m + 2; /* one guard row above and below */
    const float sentinel = test_sentinel();
    const float lo = -0.4f * (float)sqrt((double)ktot), hi = 0.3f * (float)sqrt((double)ktot);
    float *b = (float *)test_alloc(ktot * nr * sizeof(float)); /* the values (F16W: widened back) */
    uint16_t *bh = uk->b_bytes == 2 ? (uint16_t *)test_alloc(ktot * nr * sizeof(uint16_t)) : NULL; /* F16W's B */
    float *bias = tc->with_bias ? (float *)test_alloc(n * sizeof(float)) : NULL;
    float *cbuf = (float *)test_alloc(c_rows * ldc * sizeof(float));
    float *c0 = (float *)test_alloc(m * n * sizeof(float));
    float *apacked = NULL;
    /* the range a kernel may prefetch: ks*k/2 lines, twice that when dense */
    char *pf = tc->with_prefetch ? (char *)test_alloc(ks * (k / 2 + 1) * 64 * (size_t)tc->with_prefetch) : NULL;
    float **arows = (float **)test_alloc(ks * mr * sizeof(float *));
    const float **arows_c = (const float **)test_alloc(ks * mr * sizeof(float *));
    float *c = cbuf + ldc + 1;
    luthier_sgemm_ukernel_args p;
    size_t i, j, s, kk;
    int bad = 0;

    /* B: ktot steps of NR floats; columns >= n are padding the packer would zero. */
    for (kk = 0; kk < ktot; kk++)
        for (j = 0; j < nr; j++) b[kk * nr + j] = j < n ? test_rand_float() : 0.0f;
    if (bh)
        for (i = 0; i < ktot * nr; i++) {
            bh[i] = luthier__f32_to_f16(b[i]);
            b[i] = luthier__f16_to_f32(bh[i]);
        }
    if (bias) test_fill(bias, n);
    for (i = 0; i < ks * mr; i++) arows[i] = NULL;
    for (s = 0; s < ks; s++)
        for (i = 0; i < m; i++) {
            arows[s * mr + i] = (float *)test_alloc(k * sizeof(float));
            test_fill(arows[s * mr + i], k);
            for (kk = 0; kk < k; kk++) arows[s * mr + i][kk] = operand_round(arows[s * mr + i][kk], uk->a_bytes);
        }
    if (uk->kind == LUTHIER_KERNEL_INTERLEAVED) { /* (F16: halves, the panel of the same size in bytes) */
        apacked = (float *)test_alloc(k * mr * (size_t)uk->a_bytes);
        for (kk = 0; kk < k; kk++)
            for (i = 0; i < mr; i++) {
                const float v = i < m ? arows[i][kk] : 0.0f;
                if (uk->a_bytes == 2) ((uint16_t *)(void *)apacked)[kk * mr + i] = luthier__f32_to_f16(v);
                else apacked[kk * mr + i] = v;
            }
    }
    for (i = 0; i < c_rows * ldc; i++) cbuf[i] = sentinel;
    if (tc->flags & LUTHIER_UKERNEL_LOAD_C)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) c[i * ldc + j] = c0[i * n + j] = test_rand_float();

    for (i = 0; i < ks * mr; i++) arows_c[i] = arows[i];
    if (uk->kind == LUTHIER_KERNEL_HYBRID && uk->a_bytes == 2) /* F16 hybrid: the rows in fp16, exact size */
        for (i = 0; i < ks * mr; i++) {
            uint16_t *h = NULL;
            if (arows[i]) {
                h = (uint16_t *)test_alloc(k * sizeof(uint16_t));
                for (kk = 0; kk < k; kk++) h[kk] = luthier__f32_to_f16(arows[i][kk]);
            }
            arows_c[i] = (const float *)(const void *)h;
        }
    memset(&p, 0, sizeof p);
    p.m = m; p.n = n; p.k = k; p.ks = ks;
    p.a = apacked;
    p.a_rows = arows_c;
    p.b = bh ? (const float *)(const void *)bh : b;
    p.c = c;
    p.ldc = ldc;
    p.bias = bias;
    p.min = lo;
    p.max = hi;
    p.flags = tc->flags | (tc->with_prefetch == 2 ? (unsigned)LUTHIER_UKERNEL_PREFETCH_DENSE : 0u);
    p.prefetch = pf;
    uk->fn(&p);

    for (i = 0; i < c_rows; i++)
        for (j = 0; j < ldc; j++) {
            const size_t ti = i - 1, tj = j - 1; /* tile coordinates (wrap when outside) */
            const float got = cbuf[i * ldc + j];
            if (i >= 1 && ti < m && j >= 1 && tj < n) {
                double ref = 0.0, mag = 0.0, tol;
                if (tc->flags & LUTHIER_UKERNEL_LOAD_C) ref = c0[ti * n + tj];
                if (bias) ref += bias[tj]; /* (under LOAD_C too: a fused residual add) */
                mag = fabs(ref);
                for (s = 0; s < ks; s++)
                    for (kk = 0; kk < k; kk++) {
                        const double t = (double)arows[s * mr + ti][kk] * (double)b[(s * k + kk) * nr + tj];
                        ref += t;
                        mag += fabs(t);
                    }
                if (tc->flags & LUTHIER_UKERNEL_CLAMP) ref = ref < lo ? lo : (ref > hi ? hi : ref);
                tol = family_tol(uk, mag);
                if (!(fabs((double)got - ref) <= tol)) {
                    if (!bad)
                        printf("    %s m=%zu n=%zu k=%zu ks=%zu flags=%u bias=%d prefetch=%d: C[%zu][%zu] = %g, "
                               "want %g\n", uk->name, m, n, k, ks, tc->flags, tc->with_bias, tc->with_prefetch,
                               ti, tj, (double)got, ref);
                    bad++;
                }
            } else if (!test_is_sentinel(got)) {
                if (!bad)
                    printf("    %s m=%zu n=%zu k=%zu ks=%zu flags=%u: wrote outside the tile at row %d col %d\n",
                           uk->name, m, n, k, ks, tc->flags, (int)i - 1, (int)j - 1);
                bad++;
            }
        }

    for (i = 0; i < ks * mr; i++) {
        if ((const float *)arows[i] != arows_c[i]) free((void *)(uintptr_t)arows_c[i]);
        free(arows[i]);
    }
    free(arows);
    free(arows_c);
    free(apacked);
    free(pf);
    free(b);
    free(bh);
    free(bias);
    free(cbuf);
    free(c0);
    return bad;
}

static void test_ukernels_all_edges(void) {
    int idx;
    const unsigned flag_sets[4] = {0, LUTHIER_UKERNEL_LOAD_C, LUTHIER_UKERNEL_CLAMP,
                                   LUTHIER_UKERNEL_LOAD_C | LUTHIER_UKERNEL_CLAMP};
    for (idx = 0; idx < SGEMM_KERNELS; idx++) {
        const luthier__kernel_entry *uk = sgemm_kernel_at(idx);
        const size_t ku = (size_t)uk->k_unroll;
        size_t ks_list[8], nk = 0, ki, m, n;
        int bad = 0, cases = 0;
        if ((uk->required_cpu_features & luthier_cpu_features()) != uk->required_cpu_features) {
            printf("    (skipped %s: this CPU lacks its features)\n", uk->name);
            continue;
        }
        /* k around the unroll factor, plus odd and large values */
        ks_list[nk++] = 1;
        if (ku > 2) ks_list[nk++] = ku - 1;
        ks_list[nk++] = ku + 1;
        ks_list[nk++] = 2 * ku + 3;
        ks_list[nk++] = 17;
        if (!T.quick) ks_list[nk++] = 64;
        for (m = 1; m <= (size_t)uk->mr; m++)
            for (n = 1; n <= (size_t)uk->nr; n++)
                for (ki = 0; ki < nk; ki++) {
                    ukernel_case tc;
                    tc.m = m;
                    tc.n = n;
                    tc.k = ks_list[ki];
                    tc.ks = (size_t)test_rand_int(1, 3);
                    tc.flags = flag_sets[(m + n + ki) % 4];
                    tc.with_bias = (int)((m * 7 + n * 3 + ki) % 3 != 0);
                    tc.with_prefetch = (int)((m + n * 5 + ki) % 2) * (int)(1 + (m + ki) % 2);
                    bad += ukernel_check(uk, &tc) != 0;
                    cases++;
                }
        /* full tiles with long k, every flag set, with and without bias */
        for (ki = 0; ki < 8; ki++) {
            ukernel_case tc;
            tc.m = (size_t)uk->mr;
            tc.n = (size_t)uk->nr;
            tc.k = T.quick ? 259 : 1031;
            tc.ks = ki % 2 ? 1 : 2;
            tc.flags = flag_sets[ki % 4];
            tc.with_bias = ki >= 4;
            tc.with_prefetch = ki % 3 == 0 ? 1 + (int)(ki % 2) : 0;
            bad += ukernel_check(uk, &tc) != 0;
            cases++;
        }
        CHECK(bad == 0, "%s: %d of %d cases wrong", uk->name, bad, cases);
    }
}

/* The hybrid kernels of the fp32-activation families read each A row exactly in [0, k) and the
   packed B exactly over its ks * k steps: every row of every segment, and the B panel, end at an
   inaccessible page (a read past an end faults), for every k up to 3 unrolled blocks and more
   (each remainder after 0-3 blocks) and a long k, at 1-3 segments, on the full tile and an edge
   tile (rows >= m have no row pointer); the result must be the bits of the same call on plain
   buffers (whose values test_ukernels_all_edges checks). */
static int hybrid_ends_case(const luthier__kernel_entry *uk, size_t m, size_t n, size_t k, size_t ks) {
#ifdef TEST_HAVE_GUARDED
    const size_t mr = (size_t)uk->mr, nr = (size_t)uk->nr, ab = (size_t)uk->a_bytes, bb = (size_t)uk->b_bytes;
    const size_t bbytes = ks * k * nr * bb;
    unsigned char *b = (unsigned char *)test_alloc(bbytes), **rows = (unsigned char **)test_alloc(ks * mr * sizeof(void *));
    const float **plain = (const float **)test_alloc(ks * mr * sizeof(float *));
    const float **guarded = (const float **)test_alloc(ks * mr * sizeof(float *));
    test_guarded *g = (test_guarded *)test_alloc((ks * mr + 1) * sizeof(test_guarded));
    float c1[LUTHIER__MAX_MR * 64], c2[LUTHIER__MAX_MR * 64];
    luthier_sgemm_ukernel_args p;
    size_t i, e;
    int bad;
    /* values of the operand's type: fp16 bit patterns of small floats, or floats */
    for (e = 0; e < ks * k * nr; e++) {
        const float v = test_rand_float();
        const uint16_t h = luthier__f32_to_f16(v);
        memcpy(b + e * bb, bb == 2 ? (const void *)&h : (const void *)&v, bb);
    }
    for (i = 0; i < ks * mr; i++) {
        g[i].map = NULL;
        rows[i] = NULL;
        plain[i] = guarded[i] = NULL;
        if (i % mr >= m) continue;
        rows[i] = (unsigned char *)test_alloc(k * ab);
        for (e = 0; e < k; e++) {
            const float v = test_rand_float();
            const uint16_t h = luthier__f32_to_f16(v);
            memcpy(rows[i] + e * ab, ab == 2 ? (const void *)&h : (const void *)&v, ab);
        }
        plain[i] = (const float *)(const void *)rows[i];
        guarded[i] = (const float *)test_guarded_copy(&g[i], rows[i], k * ab);
    }
    g[ks * mr].map = NULL;
    memset(&p, 0, sizeof p);
    p.m = m; p.n = n; p.k = k; p.ks = ks;
    p.ldc = nr;
    p.min = -1.0f; p.max = 1.0f;
    p.flags = LUTHIER_UKERNEL_CLAMP;
    memset(c1, 0, sizeof c1), memset(c2, 0, sizeof c2);
    p.a_rows = plain, p.b = (const float *)(const void *)b, p.c = c1;
    uk->fn(&p);
    p.a_rows = guarded, p.b = (const float *)test_guarded_copy(&g[ks * mr], b, bbytes), p.c = c2;
    uk->fn(&p);
    bad = memcmp(c1, c2, sizeof c1) != 0;
    if (bad) printf("    %s m=%zu n=%zu k=%zu ks=%zu: guarded operands give other bits\n", uk->name, m, n, k, ks);
    for (i = 0; i <= ks * mr; i++) test_guarded_free(&g[i]);
    for (i = 0; i < ks * mr; i++) free(rows[i]);
    free(b), free(rows), free(plain), free(guarded), free(g);
    return bad;
#else
    (void)uk, (void)m, (void)n, (void)k, (void)ks;
    return 0;
#endif
}

static void test_ukernels_hybrid_row_ends(void) {
    int idx, tested = 0;
    for (idx = 0; idx < SGEMM_KERNELS; idx++) {
        const luthier__kernel_entry *uk = sgemm_kernel_at(idx);
        const size_t ku = (size_t)uk->k_unroll, kmax = 4 * ku - 1;
        size_t k;
        int bad = 0;
        if (uk->kind != LUTHIER_KERNEL_HYBRID || uk->nr > 64 || uk->mr > LUTHIER__MAX_MR ||
            (uk->required_cpu_features & luthier_cpu_features()) != uk->required_cpu_features)
            continue;
        for (k = 1; k <= kmax + 1; k++) {
            const size_t kk = k <= kmax ? k : 16 * ku + (size_t)test_rand_int(0, (int)ku - 1);
            bad += hybrid_ends_case(uk, (size_t)uk->mr, (size_t)uk->nr, kk, 1 + k % 3);
            bad += hybrid_ends_case(uk, (size_t)test_rand_int(1, uk->mr), (size_t)test_rand_int(1, uk->nr), kk,
                                    1 + (k + 1) % 3);
        }
        CHECK(bad == 0, "%s: %d guarded cases differ", uk->name, bad);
        tested++;
    }
#ifdef TEST_HAVE_GUARDED
    printf("    %d hybrid kernel(s) checked on guarded rows and panels\n", tested);
#else
    printf("    (%d hybrid kernel(s) skipped: no guarded buffers on this system)\n", tested);
#endif
}

/* The scalar kernels are the fallback on every CPU: check the registry always has them. */
static void test_registry(void) {
    int i, j, n_scalar = 0, n_hybrid = 0, n_interleaved = 0;
    for (i = 0; i < luthier_kernel_count(); i++) {
        luthier_kernel_info ki;
        int found = -1;
        CHECK(luthier_kernel_get(i, &ki) == LUTHIER_STATUS_OK, "kernel_get(%d)", i);
        CHECK(strncmp(ki.name, "luthier_sgemm_ukernel_", 22) == 0, "name %s", ki.name);
        CHECK(ki.mr >= 1 && ki.mr <= LUTHIER__MAX_MR && ki.nr >= 1 && ki.nr <= 64,
              "%s: MR=%d NR=%d out of range", ki.name, ki.mr, ki.nr);
        CHECK(ki.k_unroll >= 1, "%s: k_unroll %d", ki.name, ki.k_unroll);
        CHECK(luthier_kernel_find(ki.name, &found) == LUTHIER_STATUS_OK && found == i,
              "find(%s) = %d", ki.name, found);
        CHECK(luthier_kernel_find(ki.name + 22, &found) == LUTHIER_STATUS_OK && found == i,
              "find(short %s) = %d", ki.name + 22, found);
        /* the name encodes the shape: <MR>x<NR>__ */
        {
            char want[32];
            snprintf(want, sizeof want, "%dx%d__", ki.mr, ki.nr);
            CHECK(strncmp(ki.name + 22, want, strlen(want)) == 0, "%s does not start with %s",
                  ki.name + 22, want);
        }
        CHECK((strstr(ki.name, "_hybrid") != NULL) == (ki.kind == LUTHIER_KERNEL_HYBRID),
              "%s: kind %d disagrees with its name", ki.name, (int)ki.kind);
        for (j = 0; j < i; j++) {
            luthier_kernel_info kj;
            luthier_kernel_get(j, &kj);
            CHECK(strcmp(ki.name, kj.name) != 0, "duplicate kernel %s", ki.name);
        }
        if (strcmp(ki.isa, "scalar") == 0) {
            n_scalar++;
            CHECK(ki.available, "scalar kernel %s must always be available", ki.name);
        }
        if (ki.kind == LUTHIER_KERNEL_HYBRID) n_hybrid++; else n_interleaved++;
    }
    CHECK(n_scalar >= 2, "scalar kernels: %d", n_scalar);
    CHECK(n_hybrid >= 1 && n_interleaved >= 1, "hybrid %d interleaved %d", n_hybrid, n_interleaved);
#if LUTHIER__X86
    {
        int n_avx2 = 0, n_avx512 = 0;
        for (i = 0; i < luthier_kernel_count(); i++) {
            luthier_kernel_info ki;
            luthier_kernel_get(i, &ki);
            n_avx2 += strcmp(ki.isa, "avx2") == 0;
            n_avx512 += strcmp(ki.isa, "avx512") == 0;
        }
        CHECK(n_avx2 >= 2 && n_avx512 >= 2, "avx2 kernels %d, avx512 kernels %d", n_avx2, n_avx512);
    }
#endif
#if LUTHIER__ARM64
    {
        static const char *const want[] = {"8x12__neonfma", "8x6__neonfma", "6x16__neonfma_hybrid",
                                           "4x24__neonfma_hybrid", "8x4__neonfma_hybrid", "8x12__neonfma_a53",
                                           "6x16__neonfma_hybrid_a53"};
        size_t w;
        for (w = 0; w < sizeof want / sizeof want[0]; w++) {
            int idx = -1;
            CHECK(luthier_kernel_find(want[w], &idx) == LUTHIER_STATUS_OK, "NEON kernel %s missing", want[w]);
        }
    }
#endif
}

/* The registry API over every family: types, unique names across families, find by full and
   short name within its family only, the F16W rows hybrid twins of F32 rows (same ISA, tile and
   features: dense layers swap one for the other), the scalar row of each family always runs. */
static void test_registry_families(void) {
    static const char *const types[LUTHIER_KERNELS_COUNT][3] = {
        {"f32", "f32", "f32"}, {"f32", "f16", "f32"}, {"u8", "i8", "i32"}, {"f16", "f16", "f16"}};
    int f, g, i, j, total = 0;
    for (f = 0; f < (int)LUTHIER_KERNELS_COUNT; f++) {
        const luthier_kernel_family fam = (luthier_kernel_family)f;
        int n_scalar = 0;
        CHECK(luthier_kernels_count(fam) >= 1, "family %d: no kernels", f);
        for (i = 0; i < luthier_kernels_count(fam); i++, total++) {
            luthier_kernel_info ki;
            const char *shortname;
            int found = -1;
            CHECK(luthier_kernels_get(fam, i, &ki) == LUTHIER_STATUS_OK, "get(%d, %d)", f, i);
            CHECK(ki.family == fam && !strcmp(ki.a_type, types[f][0]) && !strcmp(ki.b_type, types[f][1]) &&
                      !strcmp(ki.c_type, types[f][2]),
                  "%s: family %d types %s %s %s", ki.name, (int)ki.family, ki.a_type, ki.b_type, ki.c_type);
            shortname = strstr(ki.name, "ukernel_") + 8;
            CHECK(luthier_kernels_find(fam, ki.name, &found) == LUTHIER_STATUS_OK && found == i, "find(%s)", ki.name);
            CHECK(luthier_kernels_find(fam, shortname, &found) == LUTHIER_STATUS_OK && found == i, "find(%s)", shortname);
            for (g = 0; g < (int)LUTHIER_KERNELS_COUNT; g++)
                if (g != f)
                    CHECK(luthier_kernels_find((luthier_kernel_family)g, ki.name, &found) == LUTHIER_STATUS_NOT_FOUND,
                          "%s found in family %d too", ki.name, g);
            CHECK(luthier__kernel_named(ki.name) != NULL && luthier__kernel_named(ki.name)->family == fam,
                  "kernel_named(%s)", ki.name); /* (short names may repeat: 4x4__scalar is sgemm's and qgemm's) */
            if (!strcmp(ki.isa, "scalar")) {
                n_scalar++;
                CHECK(ki.available, "%s must run everywhere", ki.name);
            }
            if (fam == LUTHIER_KERNELS_F16W) {
                char twin[96];
                const luthier__kernel_entry *t;
                CHECK(ki.kind == LUTHIER_KERNEL_HYBRID && strstr(ki.name, "_f16w"), "%s: F16W rows are hybrid, named _f16w",
                      ki.name);
                snprintf(twin, sizeof twin, "%.*s", (int)(strstr(ki.name, "_f16w") - ki.name), ki.name);
                t = luthier__kernel_named(twin);
                CHECK(t && t->family == LUTHIER_KERNELS_F32 && t->mr == ki.mr && t->nr == ki.nr && !strcmp(t->isa, ki.isa) &&
                          t->required_cpu_features == ki.required_cpu_features,
                      "%s: no F32 twin %s", ki.name, twin);
            }
            for (j = 0; j < i; j++) {
                luthier_kernel_info kj;
                luthier_kernels_get(fam, j, &kj);
                CHECK(strcmp(ki.name, kj.name) != 0, "duplicate kernel %s", ki.name);
            }
        }
        CHECK(n_scalar >= 1, "family %d: no scalar kernel", f);
    }
    {
        luthier_kernel_info ki;
        int found;
        CHECK(luthier_kernels_count(LUTHIER_KERNELS_COUNT) == 0 &&
                  luthier_kernels_get(LUTHIER_KERNELS_COUNT, 0, &ki) == LUTHIER_STATUS_INVALID_ARGUMENT &&
                  luthier_kernels_get(LUTHIER_KERNELS_F32, -1, &ki) == LUTHIER_STATUS_INVALID_ARGUMENT &&
                  luthier_kernels_find(LUTHIER_KERNELS_F16W, "4x4__scalar", &found) == LUTHIER_STATUS_NOT_FOUND &&
                  luthier_kernels_find(LUTHIER_KERNELS_F32, NULL, &found) == LUTHIER_STATUS_INVALID_ARGUMENT,
              "registry API: bad arguments");
        CHECK(total == luthier_kernel_count() + luthier_qkernel_count() + luthier_kernels_count(LUTHIER_KERNELS_F16W) +
                           luthier_kernels_count(LUTHIER_KERNELS_F16),
              "the older luthier_kernel_* / luthier_qkernel_* count their families");
    }
}

/* Little-core kernels (an _a53 or _a55 variant, fp32 and fp16) serve a little cluster beside
   their big-core twin (the same name without the variant: same MR, NR and packed B): a GEMM
   split over a fake big:0,little:1 topology, the twin on the big cluster and the variant on the
   little one, gives the bits of the twin alone (both sum k in the same order), for k below one
   4-step block, whole blocks and blocks with a remainder (8-step blocks: one, two, more). */
static void test_ukernels_little_twin(luthier_context *ctx, const luthier__kernel_entry *uk, const char *twin, int64_t k) {
    const int64_t m = 45, n = 2 * uk->nr + 5;
    float *a = (float *)test_alloc((size_t)(m * k) * sizeof(float));
    float *b = (float *)test_alloc((size_t)(k * n) * sizeof(float));
    float *bias = (float *)test_alloc((size_t)n * sizeof(float));
    float *c1 = (float *)test_alloc((size_t)(m * n) * sizeof(float));
    float *c2 = (float *)test_alloc((size_t)(m * n) * sizeof(float));
    const float ratios[2] = {50, 50};
    const char *ck[2] = {NULL, uk->name};
    luthier_sgemm_desc d;
    test_fill(a, (size_t)(m * k));
    test_fill(b, (size_t)(k * n));
    test_fill(bias, (size_t)n);
    memset(&d, 0, sizeof d);
    d.m = m; d.n = n; d.k = k;
    d.bias = bias;
    d.activation = LUTHIER_ACTIVATION_RELU;
    d.kernel = twin;
    d.ratios = ratios;
    d.num_ratios = 2;
    CHECK(luthier_sgemm(ctx, &d, a, b, c1) == LUTHIER_STATUS_OK, "%s alone: %s", twin, luthier_context_error(ctx));
    d.cluster_kernels = ck;
    CHECK(luthier_sgemm(ctx, &d, a, b, c2) == LUTHIER_STATUS_OK, "%s on the little cluster: %s", uk->name,
          luthier_context_error(ctx));
    CHECK(memcmp(c1, c2, (size_t)(m * n) * sizeof(float)) == 0, "%s on the little cluster differs from %s (k = %lld)",
          uk->name, twin, (long long)k);
    free(a); free(b); free(bias); free(c1); free(c2);
}

static void test_ukernels_little_cluster(void) {
    static const luthier_kernel_family fams[] = {LUTHIER_KERNELS_F32, LUTHIER_KERNELS_F16};
    static const int64_t ks[] = {1, 3, 4, 8, 11, 16, 19, 37};
    luthier_context *ctx = NULL;
    luthier_context_desc cd;
    luthier_topology topo;
    char err[128];
    int f, i, tested = 0;
    size_t q;
    memset(&cd, 0, sizeof cd);
    if (luthier_topology_parse("big:0,little:1", &topo, err, sizeof err) != LUTHIER_STATUS_OK) return;
    cd.topology = &topo;
    if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return;
    for (f = 0; f < (int)(sizeof fams / sizeof fams[0]); f++)
        for (i = 0; i < luthier_kernels_count(fams[f]); i++) {
            const luthier__kernel_entry *uk = luthier__kernel_in(fams[f], i), *tw;
            const char *v = strstr(uk->name, "_a53") ? strstr(uk->name, "_a53") : strstr(uk->name, "_a55");
            char twin[96];
            if (!v || (uk->required_cpu_features & luthier_cpu_features()) != uk->required_cpu_features) continue;
            snprintf(twin, sizeof twin, "%.*s%s", (int)(v - uk->name), uk->name, v + 4);
            tw = luthier__kernel_named(twin);
            CHECK(tw && tw->family == uk->family, "%s: no twin %s", uk->name, twin);
            if (!tw) continue;
            CHECK(tw->mr == uk->mr && tw->nr == uk->nr && tw->kind == uk->kind && tw->k_unroll == uk->k_unroll,
                  "%s and %s differ in shape", uk->name, twin);
            for (q = 0; q < sizeof ks / sizeof ks[0]; q++) test_ukernels_little_twin(ctx, uk, twin, ks[q]);
            tested++;
        }
    printf("    %d little-core kernel(s) checked beside their twins\n", tested);
    luthier_context_destroy(ctx);
}
