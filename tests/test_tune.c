/* The tuner (luthier_tune.h): tasks, space, a short real tuning run, records. Timing results
   are not asserted (benchmarks do that); what is asserted is structure and correctness. */

static const char *tune_tmp(const char *leaf, char *buf, size_t size) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, size, "%s/luthier_test_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), leaf);
    return buf;
}

/* Tasks group identical signatures: the mini ResNet has 6 convolutions + 1 dense, and its two
   3x3 convolutions of block 1 differ only by the fused residual. */
static void test_tune_signatures(void) {
    gb b;
    int x, i, n_sig = 0, seen_res = 0;
    char sig[256], all[16][256];
    build_mini_resnet(&b, 1, 32, &x);
    for (i = 0; i < b.g->num_nodes; i++) {
        luthier_status s = luthier_tune_signature(b.g, i, sig, sizeof sig);
        if (b.g->nodes[i].d.op == LUTHIER_OP_CONV2D || b.g->nodes[i].d.op == LUTHIER_OP_DENSE) {
            int k, dup = 0;
            CHECK(s == LUTHIER_STATUS_OK, "node %s", b.g->nodes[i].name);
            for (k = 0; k < n_sig; k++) dup |= strcmp(all[k], sig) == 0;
            if (!dup && n_sig < 16) snprintf(all[n_sig++], sizeof all[0], "%s", sig);
            if (strstr(sig, "res=1")) seen_res++;
            if (strcmp(b.g->nodes[i].name, "conv1") == 0)
                CHECK(strstr(sig, "k7x7 s2x2 p3,3,3,3") && strstr(sig, "act=relu res=0"), "conv1: %s", sig);
        } else {
            CHECK(s == LUTHIER_STATUS_NOT_FOUND, "node %s is not tuned", b.g->nodes[i].name);
        }
    }
    CHECK(n_sig == 7, "%d distinct signatures", n_sig);
    CHECK(seen_res == 2, "%d convolutions carry the residual add", seen_res);
    CHECK(luthier_tune_signature(b.g, -1, sig, sizeof sig) == LUTHIER_STATUS_INVALID_ARGUMENT, "bad node");
    gb_free(&b);
}

/* A task of one 3x3 convolution, 8 -> 16 channels on 10x10, padding 1. */
static void tune_conv_task(luthier__task *t) {
    memset(t, 0, sizeof *t);
    t->l.op = LUTHIER_OP_CONV2D;
    t->l.cd.batch = 1; t->l.cd.in_channels = 8; t->l.cd.in_h = t->l.cd.in_w = 10; t->l.cd.out_channels = 16;
    t->l.cd.kernel_h = t->l.cd.kernel_w = 3; t->l.cd.pad_top = t->l.cd.pad_left = t->l.cd.pad_bottom = t->l.cd.pad_right = 1;
    t->l.cd.stride_h = t->l.cd.stride_w = t->l.cd.dilation_h = t->l.cd.dilation_w = t->l.cd.groups = 1;
}

/* The space: only valid (algorithm, kernel) pairs, shares in steps summing to 100. */
static void test_tune_space(void) {
    luthier_topology topo;
    luthier_context_desc cd;
    luthier_context *ctx = NULL;
    luthier__task t;
    luthier__cand *c;
    size_t n = 0, i;
    char err[128];
    int sizes[3] = {0, 0, 0}, k;
    static const char *const specs[3] = {"all:0", "big:0,little:1", "prime:0,gold:1,silver:2"};
    for (k = 0; k < 3; k++) {
        /* fake topologies with CPU ids this machine may not have: the pool tolerates unpinnable workers */
        if (luthier_topology_parse(specs[k], &topo, err, sizeof err) != LUTHIER_STATUS_OK) {
            CHECK(0, "%s: %s", specs[k], err);
            continue;
        }
        memset(&cd, 0, sizeof cd);
        cd.topology = &topo;
        if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) {
            printf("    (skip %s: no context)\n", specs[k]);
            continue;
        }
        tune_conv_task(&t);
        c = luthier__task_space(ctx, &t, 10, 1, &n);
        CHECK(c && n > 0, "space of %s", specs[k]);
        for (i = 0; c && i < n; i++) {
            int sum = c[i].shares[0] + c[i].shares[1] + c[i].shares[2];
            CHECK(c[i].dynamic || sum == 100, "shares sum %d", sum);
            CHECK(c[i].algo != LUTHIER_CONV_DEPTHWISE && c[i].algo != LUTHIER_CONV_AUTO, "algo %d", c[i].algo);
            if (c[i].algo == LUTHIER_CONV_IMPLICIT_GEMM) CHECK(luthier__ukernels[c[i].kernel].kind == LUTHIER_KERNEL_HYBRID, "implicit gemm with an interleaved kernel");
            CHECK(c[i].kernel >= 0 && c[i].kernel < luthier_kernel_count(), "kernel %d", c[i].kernel);
        }
        sizes[k] = (int)n;
        luthier__free(c);
        luthier_context_destroy(ctx);
        ctx = NULL;
    }
    /* 1 cluster: 1 split + dynamic; 2: 11 + 1; 3: 66 + 1 per (algorithm, kernel) */
    if (sizes[0] && sizes[1]) CHECK(sizes[1] * 2 == sizes[0] * 12, "1 cluster %d, 2 clusters %d candidates", sizes[0], sizes[1]);
    if (sizes[0] && sizes[2]) CHECK(sizes[2] * 2 == sizes[0] * 67, "1 cluster %d, 3 clusters %d candidates", sizes[0], sizes[2]);
}

/* A real (short) tuning run: records are written, read back by a plan, and the tuned plan
   computes the same network (compared with the interpreter). */
static void test_tune_run_and_records(void) {
    gb b;
    int x, threads;
    char rec[512], rep[512], svg[512];
    float *img;
    int runner_times = 0; /* runners-up timed in the plan, over the three runs */
    for (threads = 1; threads <= 3; threads++) {
        /* 3: two clusters of one CPU each (the search's balance prediction reads their busy times) */
        static const int one_each[2] = {1, 1};
        luthier_context *ctx = threads < 3 ? ctx_threads(threads) : threads_context(2, one_each);
        luthier_tune_desc td;
        luthier_tune_result r;
        luthier_plan_desc pd;
        luthier_node_config *cfg;
        int matched = -1;
        const void *ins[1];
        FILE *fh;
        build_mini_resnet(&b, 1, 24, &x);
        img = rand_buf(3 * 24 * 24, -1, 1);
        ins[0] = img;
        memset(&td, 0, sizeof td);
        td.budget_seconds = T.quick ? 1.0 : 3.0;
        td.progress = -1;
        td.report_path = tune_tmp("report.txt", rep, sizeof rep);
        td.heatmap_path = tune_tmp("heat.svg", svg, sizeof svg);
        tune_tmp("records.txt", rec, sizeof rec);
        CHECK(luthier_tune(ctx, b.g, &td, rec, &r) == LUTHIER_STATUS_OK, "tune: %s", luthier_context_error(ctx));
        CHECK(r.tasks == 7 && r.ops == 7, "%d tasks, %d ops", r.tasks, r.ops);
        CHECK(r.measurements > 7 && r.measurements <= r.candidates + r.tasks, "%d measurements of %d", r.measurements, r.candidates);
        CHECK(r.tuned_ms > 0 && r.tuned_ms <= r.default_ms * 1.0001, "tuned %g default %g", r.tuned_ms, r.default_ms);
        cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
        CHECK(luthier_records_apply(ctx, b.g, rec, cfg, &matched) == LUTHIER_STATUS_OK, "apply: %s", luthier_context_error(ctx));
        CHECK(matched == 7, "%d nodes matched (%d threads; notes: %s)", matched, threads, luthier_context_error(ctx));
        if (matched != 7 && (fh = fopen(rec, "r"))) { /* show the records */
            char line[1200];
            while (fgets(line, sizeof line, fh)) printf("    | %s", line);
            fclose(fh);
        }
        { /* the same records from memory (CRLF line ends too) configure the same nodes */
            luthier_node_config *cfg2 = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg2);
            char *text = (char *)calloc(1, 1 << 16), line[1200];
            size_t used = 0;
            FILE *in = fopen(rec, "r");
            while (in && text && fgets(line, sizeof line, in)) {
                size_t l = strlen(line);
                if (l && line[l - 1] == '\n') line[--l] = 0;
                if (used + l + 3 < (1 << 16)) used += (size_t)sprintf(text + used, "%s\r\n", line);
            }
            if (in) fclose(in);
            CHECK(cfg2 && text && luthier_records_apply_text(ctx, b.g, text, cfg2, &matched) == LUTHIER_STATUS_OK, "apply text: %s",
                  luthier_context_error(ctx));
            CHECK(matched == 7 && cfg2 && memcmp(cfg, cfg2, sizeof *cfg * (size_t)b.g->num_nodes) == 0,
                  "text records: %d nodes matched, same configs", matched);
            CHECK(luthier_records_apply_text(ctx, b.g, "not records\n", cfg2, &matched) == LUTHIER_STATUS_INCOMPATIBLE &&
                      strstr(luthier_context_error(ctx), "expected 'luthier-records 1'"),
                  "garbage text: %s", luthier_context_error(ctx));
            CHECK(luthier_records_apply_text(ctx, b.g, NULL, cfg2, &matched) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL text");
            memset(&pd, 0, sizeof pd);
            pd.records_text = text;
            plan_vs_ref(ctx, b.g, &pd, ins, 1e-3, "plan from records text");
            free(text);
            free(cfg2);
        }
        free(cfg);
        memset(&pd, 0, sizeof pd);
        pd.records = rec;
        plan_vs_ref(ctx, b.g, &pd, ins, 1e-3, "tuned plan");
        fh = fopen(svg, "r");
        CHECK(fh != NULL, "heatmap written");
        if (fh) {
            char head[64] = {0};
            CHECK(fread(head, 1, 63, fh) > 0 && strstr(head, "<svg") != NULL, "svg header: %s", head);
            fclose(fh);
        }
        fh = fopen(rep, "r");
        CHECK(fh != NULL, "report written");
        if (fh) { /* the in-plan check: each task takes the fastest of default, winner and runners-up
                     in the plan (the default on ties), and its record says so */
            char line[1200], recs[64][16];
            int in_check = 0, checked = 0, reverted = 0, took = 0, n = 0, task, ntask, ops;
            double pdef, ptun;
            FILE *rf = fopen(rec, "r");
            while (rf && n < 64 && fgets(line, sizeof line, rf)) {
                char *f = line;
                int k;
                if (line[0] == '#' || strncmp(line, "luthier-records", 15) == 0) continue;
                for (k = 0; k < 2 && f; k++) f = strchr(f, '\t'), f = f ? f + 1 : NULL;
                /* fields 3-6: algorithm, kernel, schedule, ratios; "-\t-\tratio\tdefault" is the default */
                snprintf(recs[n++], sizeof recs[0], "%s", f && strncmp(f, "-\t-\tratio\tdefault\t", 18) == 0 ? "default" : "tuned");
            }
            if (rf) fclose(rf);
            while (fgets(line, sizeof line, fh)) {
                double run[8], pmin;
                int nrun = 0, x, pick = -2; /* -2 default, -1 winner, x runner-up x */
                const char *q = line;
                if (strncmp(line, "in-plan check", 13) == 0) in_check = 1;
                if (!in_check || sscanf(line, "task %d/%d x%d default %lf ms tuned %lf ms", &task, &ntask, &ops, &pdef, &ptun) != 5) continue;
                checked++;
                while (nrun < 8 && (q = strstr(q, "runner-up ")) != NULL) {
                    q += 10;
                    if (sscanf(q, "%lf", &run[nrun]) == 1) nrun++;
                }
                runner_times += nrun;
                if (strstr(line, "reverted to the default")) reverted++;
                else if (strstr(line, "kept")) pick = -1;
                else if ((q = strstr(line, "took the runner-up #")) != NULL) pick = atoi(q + 20) - 1, took++;
                else pick = -3;
                /* (printed to 1e-6 ms: equal there may still be chosen) */
                pmin = pick == -2 ? pdef : pick == -1 ? ptun : pick >= 0 && pick < nrun ? run[pick] : -1;
                CHECK(pick >= -2 && pick < nrun && pmin >= 0, "report: no verdict: %s", line);
                CHECK(pick == -2 ? pdef <= ptun : pmin <= pdef && pmin <= ptun, "report: %s", line);
                for (x = 0; x < nrun && pmin >= 0; x++) CHECK(pmin <= run[x], "report: runner-up %d faster: %s", x + 1, line);
                CHECK(task >= 1 && task <= n && strcmp(recs[task - 1], pick == -2 ? "default" : "tuned") == 0,
                      "record of task %d is %s: %s", task, task >= 1 && task <= n ? recs[task - 1] : "missing", line);
            }
            CHECK(reverted == r.reverted && took == r.runner_ups && (checked > 0) == (r.plan_default_ms > 0) &&
                      (checked == 0 || (r.plan_tuned_ms > 0 && r.plan_chosen_ms <= r.plan_default_ms + 1e-9)),
                  "%d checked, %d reverted, %d runners-up (result: %d, %d, plan %g / %g / %g ms)", checked, reverted, took,
                  r.reverted, r.runner_ups, r.plan_default_ms, r.plan_tuned_ms, r.plan_chosen_ms);
            fclose(fh);
        }
        /* another machine's records are ignored with a note; corrupt lines are skipped */
        if (threads == 2) {
            FILE *in = fopen(rec, "r"), *out;
            char line[1200], rec2[512];
            int lines = 0;
            tune_tmp("records2.txt", rec2, sizeof rec2);
            out = fopen(rec2, "w");
            while (in && out && fgets(line, sizeof line, in)) {
                lines++;
                if (lines == 4) fputs("garbage line without tabs\n", out);
                if (lines == 5) { fputs("other-machine|threads=64", out); fputs(strchr(line, '\t'), out); continue; }
                if (lines == 6) { /* 7 fields: truncated (8 are a line without its precision) */
                    int cut;
                    for (cut = 0; cut < 2; cut++) { char *tab = strrchr(line, '\t'); if (tab) *tab = 0; }
                    strcat(line, "\n");
                }
                fputs(line, out);
            }
            if (in) fclose(in);
            if (out) fclose(out);
            cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
            CHECK(luthier_records_apply(ctx, b.g, rec2, cfg, &matched) == LUTHIER_STATUS_OK, "apply: %s", luthier_context_error(ctx));
            CHECK(matched == 5, "%d nodes matched after 2 bad lines", matched);
            CHECK(strstr(luthier_context_error(ctx), "2 malformed") && strstr(luthier_context_error(ctx), "1 line for another machine") &&
                      strstr(luthier_context_error(ctx), "5 nodes configured"),
                  "note: %s", luthier_context_error(ctx));
            /* a different version is refused, a missing file is NOT_FOUND */
            out = fopen(rec2, "w");
            if (out) { fputs("luthier-records 2\n", out); fclose(out); }
            CHECK(luthier_records_apply(ctx, b.g, rec2, cfg, &matched) == LUTHIER_STATUS_INCOMPATIBLE, "version 2 accepted");
            CHECK(luthier_records_apply(ctx, b.g, "/nonexistent/records", cfg, &matched) == LUTHIER_STATUS_NOT_FOUND, "missing file");
            memset(&pd, 0, sizeof pd);
            pd.records = rec2;
            {
                luthier_plan *p = NULL;
                CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_INCOMPATIBLE, "plan from version-2 records");
                luthier_plan_destroy(p);
            }
            remove(rec2);
            free(cfg);
        }
        /* transfer: the model of this run starts another one, which still tunes every task */
        {
            char mp[512];
            luthier_tune_desc t2 = td;
            luthier_tune_result r2;
            FILE *mf;
            char head[16] = {0};
            t2.model_out = tune_tmp("model.txt", mp, sizeof mp);
            t2.report_path = t2.heatmap_path = NULL;
            CHECK(luthier_tune(ctx, b.g, &t2, NULL, &r2) == LUTHIER_STATUS_OK, "tune (model_out): %s", luthier_context_error(ctx));
            mf = fopen(mp, "r");
            CHECK(mf && fread(head, 1, 11, mf) == 11 && strncmp(head, "luthier-gbt", 11) == 0, "model saved: '%s'", head);
            if (mf) fclose(mf);
            t2.model_out = NULL;
            t2.model_in = mp;
            CHECK(luthier_tune(ctx, b.g, &t2, NULL, &r2) == LUTHIER_STATUS_OK && r2.tasks == 7 && r2.measurements >= 7,
                  "tune (model_in): %s", luthier_context_error(ctx));
            CHECK(r2.tuned_ms > 0 && r2.tuned_ms <= r2.default_ms * 1.0001, "warm: tuned %g default %g", r2.tuned_ms, r2.default_ms);
            { /* a model of another feature count (an earlier version's) is refused */
                enum { ROWS = 32, F = LUTHIER__TUNE_FEATURES - 1 };
                float xs[ROWS * F], ys[ROWS];
                luthier__gbt *old = NULL;
                char *text = NULL;
                size_t len = 0;
                FILE *of;
                int k;
                for (k = 0; k < ROWS * F; k++) xs[k] = (float)((k * 7919) % 101);
                for (k = 0; k < ROWS; k++) ys[k] = (float)(k % 5);
                CHECK(luthier__search_model(NULL, xs, ys, ROWS, F, LUTHIER__GBT_SQUARED, 1, &old) == LUTHIER_STATUS_OK &&
                          luthier__gbt_save(old, &text, &len) == LUTHIER_STATUS_OK,
                      "old model");
                if (text && (of = fopen(mp, "w")) != NULL) {
                    fwrite(text, 1, len, of);
                    fclose(of);
                }
                CHECK(luthier_tune(ctx, b.g, &t2, NULL, &r2) == LUTHIER_STATUS_INCOMPATIBLE &&
                          strstr(luthier_context_error(ctx), "features"),
                      "model of %d features: %s", LUTHIER__TUNE_FEATURES - 1, luthier_context_error(ctx));
                luthier__free(text);
                luthier__gbt_free(old);
            }
            t2.model_in = "/nonexistent/model";
            CHECK(luthier_tune(ctx, b.g, &t2, NULL, &r2) != LUTHIER_STATUS_OK && strstr(luthier_context_error(ctx), "cost model"),
                  "missing model: %s", luthier_context_error(ctx));
            remove(mp);
        }
        /* bad arguments */
        td.ratio_step = 7;
        CHECK(luthier_tune(ctx, b.g, &td, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "ratio step 7 accepted");
        td.ratio_step = 0;
        td.budget_seconds = -1;
        CHECK(luthier_tune(ctx, b.g, &td, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "negative budget accepted");
        CHECK(luthier_tune(ctx, NULL, &td, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL graph");
        CHECK(luthier_tune(ctx, b.g, NULL, "/nonexistent/dir/records", NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "unwritable path");
        remove(rec);
        remove(rep);
        remove(svg);
        free(img);
        gb_free(&b);
        luthier_context_destroy(ctx);
    }
    CHECK(runner_times > 0, "no runner-up was timed in the plan in three tuning runs");
}

/* luthier_topology_cores: clusters by rank, detection's core names, CPUs in order; bad specs
   name their token. */
static void test_tune_cores_spec(void) {
    static luthier_topology t;
    static const char *const bad[] = {"", "A72x0", "A72x", "x2", "A72,,A53", "A99x2", "A72x100000", "A72x200,A53x100",
                                      "A53,A53,A53,A53,A53,A53,A53,A53,A53"};
    char err[256];
    size_t i;
    CHECK(luthier_topology_cores("A77x1,A77x3,A55x4", &t, err, sizeof err) == LUTHIER_STATUS_OK, "sd865: %s", err);
    CHECK(t.num_clusters == 3 && !strcmp(t.clusters[0].name, "big") && !strcmp(t.clusters[1].name, "middle") &&
              !strcmp(t.clusters[2].name, "little") && !strcmp(t.clusters[0].core, "Cortex-A77") &&
              !strcmp(t.clusters[2].core, "Cortex-A55") && t.clusters[1].num_cpus == 3 && t.clusters[1].cpus[0] == 1 &&
              t.clusters[2].cpus[3] == 7 && t.clusters[0].capacity == 1.0 && t.clusters[2].capacity < 0.5 &&
              !strcmp(t.source, "cores"),
          "sd865 as cores: %d clusters, %s %s", t.num_clusters, t.clusters[0].name, t.clusters[0].core);
    CHECK(luthier_topology_cores("x86-avx512,x86-avx2x3", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.num_clusters == 2 &&
              t.clusters[0].num_cpus == 1 && t.clusters[1].num_cpus == 3 && !strcmp(t.clusters[0].core, "x86-avx512"),
          "x86 rows: %s", err);
    CHECK(luthier_topology_cores(" N1x4 ", &t, err, sizeof err) == LUTHIER_STATUS_OK && t.num_clusters == 1 &&
              !strcmp(t.clusters[0].name, "all") && !strcmp(t.clusters[0].core, "Neoverse-N1") && t.clusters[0].num_cpus == 4,
          "N1x4: %s", err);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(luthier_topology_cores(bad[i], &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(err, "cores:"),
              "'%s' accepted (%s)", bad[i], err);
    }
    CHECK(luthier_topology_cores(NULL, &t, err, sizeof err) == LUTHIER_STATUS_INVALID_ARGUMENT, "NULL spec");
}

/* Offline tuning (luthier_tune_desc.offline) for a machine described by its cores: nothing
   runs; each conv task takes a configuration predicted at least as fast as AUTO's model pick,
   never an algorithm AUTO's error bound excludes, its record's ms the model's prediction; the
   records match another description of the same cores (other CPU ids and labels) but not
   another thread count, and the plan they configure computes the network. A board this build's
   kernels cannot run on is refused. */
static void test_tune_offline(void) {
    const int arm = (luthier_cpu_features() & LUTHIER_CPU_NEON) != 0;
    const char *row = arm ? "A72" : (luthier_cpu_features() & LUTHIER_CPU_AVX512F) ? "x86-avx512" : "x86-avx2";
    static luthier_topology t, t2;
    char spec[64], err[256], rec[512], root[512];
    luthier_context *ctx, *ctx2, *ctx3, *ctxm;
    luthier_tune_desc td;
    luthier_tune_result r;
    luthier_node_config *cfg;
    luthier_plan_desc pd;
    luthier__fuse *f;
    gb b;
    int x, i, matched = -1, convs = 0;
    float *img;
    const void *ins[1];
    snprintf(spec, sizeof spec, arm ? "%sx2,A53x4" : "%sx2,%sx1", row, row);
    CHECK(luthier_topology_cores(spec, &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s: %s", spec, err);
    /* the same cores described otherwise: the board's sysfs tree, or a cluster spec */
    if (arm) snprintf(root, sizeof root, "%s/rk3399", LUTHIER_TEST_TOPOLOGY_DIR);
    CHECK((arm ? luthier_topology_detect(root, "", &t2, err, sizeof err) : luthier_topology_parse("p:5-6,q:9", &t2, err, sizeof err)) ==
              LUTHIER_STATUS_OK, "other description: %s", err);
    ctx = ctx_make(0, &t, LUTHIER_AUTO_RULES); /* its default: the rules' choices */
    ctxm = ctx_make(0, &t, LUTHIER_AUTO_MODEL);
    ctx2 = ctx_make(0, &t2, LUTHIER_AUTO_RULES);
    ctx3 = ctx_make(2, &t2, LUTHIER_AUTO_RULES);
    build_mini_resnet(&b, 1, 24, &x);
    memset(&td, 0, sizeof td);
    td.progress = -1;
    td.offline = 1;
    tune_tmp("offline.records", rec, sizeof rec);
    CHECK(ctx && ctx2 && ctx3 && ctxm && luthier_tune(ctx, b.g, &td, rec, &r) == LUTHIER_STATUS_OK, "offline: %s", ctx ? luthier_context_error(ctx) : "");
    CHECK(r.measurements == 0 && r.tasks == 7 && r.tuned_ms > 0 && r.tuned_ms <= r.default_ms, "%d measurements, %d tasks, %g / %g ms",
          r.measurements, r.tasks, r.tuned_ms, r.default_ms);
    cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
    CHECK(ctx2 && luthier_records_apply(ctx2, b.g, rec, cfg, &matched) == LUTHIER_STATUS_OK && matched == 7, "%d nodes matched: %s",
          matched, ctx2 ? luthier_context_error(ctx2) : "");
    /* each conv: its configuration predicted no slower than AUTO's model pick (1 %: AUTO's split
       takes steps of 5 %, the tuner's of 10 %) */
    f = luthier__fuse_only(b.g, NULL);
    for (i = 0; f && ctxm && i < b.g->num_nodes; i++) {
        luthier__layer l;
        luthier_conv2d_desc d;
        double chosen = 0, autos = 0;
        if (!luthier__layer_of(ctxm, b.g, f, i, NULL, LUTHIER_PRECISION_FP32, &l) || l.op != LUTHIER_OP_CONV2D) continue;
        convs++;
        d = l.cd;
        CHECK(luthier_conv2d_predict(ctxm, &d, &autos) == LUTHIER_STATUS_OK, "node %d: AUTO predict: %s", i, luthier_context_error(ctxm));
        d.algorithm = cfg[i].algorithm;
        d.kernel = cfg[i].kernel[0] ? cfg[i].kernel : NULL;
        d.ratios = cfg[i].num_ratios ? cfg[i].ratios : NULL;
        d.num_ratios = cfg[i].num_ratios;
        d.schedule = cfg[i].schedule;
        /* (a record of the default leaves AUTO to the plan's context: the rules') */
        CHECK(luthier_conv2d_predict(d.algorithm ? ctxm : ctx, &d, &chosen) == LUTHIER_STATUS_OK, "node %d: predict: %s", i,
              luthier_context_error(ctxm));
        CHECK(chosen <= autos * 1.01, "node %d (%s): chosen %s %s predicted %g s, AUTO %g s", i, l.sig,
              luthier_conv_algorithm_name(cfg[i].algorithm), cfg[i].kernel, chosen, autos);
        CHECK(cfg[i].algorithm == LUTHIER_CONV_AUTO || luthier__conv_algos[cfg[i].algorithm].rel_error <= LUTHIER_AUTO_MAX_ERROR,
              "node %d: %s is past AUTO's error bound", i, luthier_conv_algorithm_name(cfg[i].algorithm));
    }
    luthier__free(f);
    CHECK(convs == 6, "%d conv tasks checked", convs);
    memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
    CHECK(ctx3 && luthier_records_apply(ctx3, b.g, rec, cfg, &matched) == LUTHIER_STATUS_OK && matched == 0 &&
              strstr(luthier_context_error(ctx3), "another machine"),
          "2 threads matched %d: %s", matched, ctx3 ? luthier_context_error(ctx3) : "");
    img = rand_buf(3 * 24 * 24, -1, 1);
    ins[0] = img;
    memset(&pd, 0, sizeof pd);
    pd.records = rec;
    if (ctx2) plan_vs_ref(ctx2, b.g, &pd, ins, 1e-3, "plan from predicted records");
    /* refused: measuring options, and cores that do not run this build's kernels */
    td.exhaustive = 1;
    CHECK(ctx && luthier_tune(ctx, b.g, &td, NULL, NULL) == LUTHIER_STATUS_INVALID_ARGUMENT, "offline + exhaustive accepted");
    td.exhaustive = 0;
    luthier_context_destroy(ctx);
    CHECK(luthier_topology_cores(arm ? "x86-avx2x2" : "A72x2,A53x4", &t, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    ctx = ctx_make(0, &t, LUTHIER_AUTO_RULES);
    CHECK(ctx != NULL, "context of foreign cores");
    if (ctx && !strstr(luthier_context_kernel(ctx), "scalar")) /* (scalar kernels run on every core row) */
        CHECK(luthier_tune(ctx, b.g, &td, NULL, NULL) == LUTHIER_STATUS_UNSUPPORTED &&
                  strstr(luthier_context_error(ctx), "does not run this build's kernels"),
              "foreign cores: %s", luthier_context_error(ctx));
    remove(rec);
    free(img);
    free(cfg);
    gb_free(&b);
    luthier_context_destroy(ctx);
    luthier_context_destroy(ctx2);
    luthier_context_destroy(ctx3);
    luthier_context_destroy(ctxm);
}


/* The conv2d and dense steps of plan p: each runs kernel k (a full name) and cluster 1 runs k1. */
static void tune_check_cluster_steps(luthier_plan *p, const char *k, const char *k1, const char *what) {
    int i, n = 0;
    for (i = 0; i < p->num_steps; i++) {
        luthier_step_info si;
        if (luthier_plan_step_info(p, i, &si) != LUTHIER_STATUS_OK || (si.op != LUTHIER_OP_CONV2D && si.op != LUTHIER_OP_DENSE) ||
            !si.kernel[0])
            continue;
        n++;
        CHECK(!strcmp(si.kernel, k) && si.cluster_kernels[0] && !strcmp(si.cluster_kernels[0], k) && si.cluster_kernels[1] &&
                  !strcmp(si.cluster_kernels[1], k1),
              "%s: step %s runs %s / %s / %s, expected %s / %s", what, si.name, si.kernel,
              si.cluster_kernels[0] ? si.cluster_kernels[0] : "-", si.cluster_kernels[1] ? si.cluster_kernels[1] : "-", k, k1);
    }
    CHECK(n >= 3, "%s: %d GEMM steps", what, n);
}

/* The kernel knob per cluster (>>cluster-kernels) on a machine of big and in-order cores
   ("A72x1,A53x1"): the space adds, for exactly the kernels a cluster would swap for a variant,
   candidates that run the kernel itself on every cluster, configured as the knob's list form
   "K,K"; a plan runs a list as named and a plain "K" with the variant, computing the same
   network either way; an unknown name in the list is refused, naming it. x86 has no variants:
   there only the list form is exercised. */
/* A record's kernel field may name one kernel per cluster, the list form the tuner writes for
   candidates that run one kernel on every cluster: it parses (one name alike), and a list with
   an unknown name or one too long for the knob does not. */
static void test_tune_record_kernel_list(void) {
    char line[512], *fp, *sig;
    luthier_node_config cfg;
    luthier_kernel_info ki;
    const char *k0;
    CHECK(luthier_kernel_get(0, &ki) == LUTHIER_STATUS_OK && strncmp(ki.name, "luthier_sgemm_ukernel_", 22) == 0, "kernel 0");
    k0 = ki.name + 22;
    snprintf(line, sizeof line, "fp\tconv2d x\tim2col\t%s,%s\tratio\t50,50\t1.0\t2.0", k0, k0);
    CHECK(luthier__record_parse(line, &fp, &sig, &cfg) && strchr(cfg.kernel, ',') && cfg.num_ratios == 2,
          "a record with the kernels %s,%s is refused", k0, k0);
    snprintf(line, sizeof line, "fp\tconv2d x\tim2col\t%s\tratio\tdefault\t1.0\t2.0", k0);
    CHECK(luthier__record_parse(line, &fp, &sig, &cfg) && strcmp(cfg.kernel, k0) == 0, "one kernel");
    snprintf(line, sizeof line, "fp\tconv2d x\tim2col\t%s,no_such_kernel\tratio\t50,50\t1.0\t2.0", k0);
    CHECK(!luthier__record_parse(line, &fp, &sig, &cfg), "an unknown kernel in the list parses");
    snprintf(line, sizeof line, "fp\tconv2d x\tim2col\t%s,%s,%s\tratio\t50,50\t1.0\t2.0", ki.name, ki.name, ki.name);
    CHECK(!luthier__record_parse(line, &fp, &sig, &cfg), "a list longer than the knob parses");
}

/* Each configuration is measured once: on one cluster the default configuration is one of the
   space's candidates, so an exhaustive run measures exactly the candidates; and a search the
   cost model orders keeps to its cap per task, runners-up included: at most max(3, floor(0.1 x
   the task's candidates)) measured, as each task's report line says. */
static void test_tune_measure_once(void) {
    gb b;
    int x, exhaustive;
    char rep[512], line[512];
    luthier_context *ctx = ctx_threads(1);
    build_mini_resnet(&b, 1, 16, &x);
    for (exhaustive = 1; exhaustive >= 0; exhaustive--) {
        luthier_tune_desc td;
        luthier_tune_result r;
        FILE *fh;
        int lines = 0;
        memset(&td, 0, sizeof td);
        td.budget_seconds = 20;
        td.progress = -1;
        td.exhaustive = exhaustive;
        td.no_plan_check = 1;
        td.report_path = tune_tmp("once.txt", rep, sizeof rep);
        CHECK(luthier_tune(ctx, b.g, &td, NULL, &r) == LUTHIER_STATUS_OK, "tune: %s", luthier_context_error(ctx));
        if (exhaustive) CHECK(r.measurements == r.candidates, "%d measurements of %d candidates", r.measurements, r.candidates);
        for (fh = fopen(rep, "r"); fh && fgets(line, sizeof line, fh);) {
            const char *p = strstr(line, "measured ");
            int got, of;
            if (exhaustive || !p || sscanf(p, "measured %d of %d", &got, &of) != 2) continue;
            lines++;
            CHECK(got <= (of / 10 > 3 ? of / 10 : 3), "a task measured %d of %d candidates", got, of);
        }
        if (fh) fclose(fh);
        CHECK(exhaustive || lines == r.tasks, "%d report lines for %d tasks", lines, r.tasks);
        remove(rep);
    }
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* The heatmap of a costliest task that is a dense layer has one column (the GEMM) per kernel:
   a dense task has no algorithm knob, and its grid measured each kernel once per conv
   algorithm (AlexNet's 9216 x 4096 layer at 16 threads: over a minute). */
static void test_tune_heatmap_dense(void) {
    gb b;
    int x, y;
    int64_t xs[2] = {1, 512};
    char svg[512], buf[8192];
    size_t got = 0;
    FILE *fh;
    luthier_tune_desc td;
    luthier_context *ctx = ctx_threads(1);
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 2, xs, &x);
    y = gb_lin(&b, "fc", x, 1024, 512);
    CHECK(luthier_graph_output(b.g, y) == LUTHIER_STATUS_OK, "output");
    memset(&td, 0, sizeof td);
    td.budget_seconds = 5;
    td.progress = -1;
    td.no_plan_check = 1;
    td.heatmap_path = tune_tmp("dense.svg", svg, sizeof svg);
    CHECK(luthier_tune(ctx, b.g, &td, NULL, NULL) == LUTHIER_STATUS_OK, "tune: %s", luthier_context_error(ctx));
    if ((fh = fopen(svg, "r"))) {
        got = fread(buf, 1, sizeof buf - 1, fh);
        fclose(fh);
    }
    buf[got] = 0;
    CHECK(strstr(buf, ">gemm<") && !strstr(buf, "im2col") && !strstr(buf, "winograd"),
          "the dense heatmap's columns: %.300s", buf);
    remove(svg);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

static void test_tune_cluster_kernels(void) {
    luthier_topology topo;
    luthier_context *ctx;
    luthier__task t;
    luthier__cand *c;
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier_node_config *cfg;
    char err[160], knob[64];
    const char *k, *k1;
    size_t n = 0, i;
    int j, same = 0, x, variants = 0;
    float *img;
    const void *ins[1];
    gb b;
    CHECK(luthier_topology_cores("A72x1,A53x1", &topo, err, sizeof err) == LUTHIER_STATUS_OK, "%s", err);
    if (!(ctx = ctx_make(2, &topo, LUTHIER_AUTO_RULES))) return;
    tune_conv_task(&t);
    c = luthier__task_space(ctx, &t, 10, 1, &n);
    for (i = 0; c && i < n; i++) {
        const char *name = luthier__ukernels[c[i].kernel].name;
        const int has = strcmp(conv_expected_variant(LUTHIER_KERNELS_F32, name, "Cortex-A53"), name) != 0 ||
                        strcmp(conv_expected_variant(LUTHIER_KERNELS_F32, name, "Cortex-A72"), name) != 0;
        if (!c[i].same) continue;
        same++;
        CHECK(has, "a same-kernel candidate for %s, which has no variant", name);
        if (same == 1) {
            luthier_node_config one;
            luthier__cand_config(ctx, &t, &c[i], &one);
            snprintf(knob, sizeof knob, "%s,%s", luthier__kernel_short(name), luthier__kernel_short(name));
            CHECK(!strcmp(one.kernel, knob), "config of a same-kernel candidate: '%s', expected '%s'", one.kernel, knob);
        }
    }
    for (j = 0; j < luthier_kernel_count(); j++) {
        const char *name = luthier__ukernels[j].name;
        if (luthier__kernel_runs(&luthier__ukernels[j], ctx->cpu_features) &&
            (strcmp(conv_expected_variant(LUTHIER_KERNELS_F32, name, "Cortex-A53"), name) ||
             strcmp(conv_expected_variant(LUTHIER_KERNELS_F32, name, "Cortex-A72"), name)))
            variants++;
    }
    CHECK((same > 0) == (variants > 0), "%d same-kernel candidates, %d kernels with a variant", same, variants);
    luthier__free(c);
    /* plans: "K,K" runs K on both clusters, "K" gives cluster 1 its variant */
    build_mini_resnet(&b, 1, 20, &x);
    img = rand_buf(3 * 20 * 20, -1, 1);
    ins[0] = img;
    cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
    k = luthier_context_kernel(ctx);
    k1 = conv_expected_variant(LUTHIER_KERNELS_F32, k, "Cortex-A53");
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = b.g->num_nodes;
    for (j = 0; j < 3; j++) {
        static const char *const what[3] = {"list", "plain", "unknown in the list"};
        for (x = 0; x < b.g->num_nodes; x++) {
            if (j == 0) snprintf(cfg[x].kernel, sizeof cfg[x].kernel, "%s,%s", luthier__kernel_short(k), luthier__kernel_short(k));
            else if (j == 1) snprintf(cfg[x].kernel, sizeof cfg[x].kernel, "%s", k);
            else snprintf(cfg[x].kernel, sizeof cfg[x].kernel, "%s,no_such_kernel", luthier__kernel_short(k));
        }
        if (j == 2) {
            CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_NOT_FOUND && !p &&
                      strstr(luthier_context_error(ctx), "no_such_kernel"),
                  "%s: %s", what[j], luthier_context_error(ctx));
            break;
        }
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "%s: %s", what[j], luthier_context_error(ctx));
        if (p) tune_check_cluster_steps(p, k, j == 0 ? k : k1, what[j]);
        luthier_plan_destroy(p);
        p = NULL;
        plan_vs_ref(ctx, b.g, &pd, ins, 2e-5, what[j]);
    }
    free(cfg);
    free(img);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

/* Transposed convolutions are tasks: algorithm, kernel and split, timed as their step in a
   plan of the node alone. Two nodes of one signature (a ReLU fused into each), a depthwise one
   and a grouped one: 3 tasks, 4 ops; the records name their signatures, algorithms and
   kernels, configure all four nodes, and the plan made from them runs those and matches the
   reference. */
static void test_tune_conv_transpose(void) {
    static const ct_case up = {1, 8, 10, 10, 16, 4, 4, 2, 2, {1, 1, 1, 1}, 1, 1, 0, 0, 1, 1, LUTHIER_ACTIVATION_NONE};
    static const ct_case dw = {1, 16, 20, 20, 16, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 1, 1, 16, 1, LUTHIER_ACTIVATION_NONE};
    static const ct_case grouped = {1, 16, 40, 40, 4, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, 0, 0, 4, 1, LUTHIER_ACTIVATION_NONE};
    luthier_context *ctx = ctx_threads(2);
    luthier_tune_desc td;
    luthier_tune_result r;
    luthier_plan_desc pd;
    luthier_node_config *cfg;
    luthier_plan *p = NULL;
    luthier_step_info si;
    char rec[512], svg[512], sig[256], line[1200], buf[8192];
    int64_t xs[4] = {1, 8, 10, 10};
    int x, a, a2, y, lines = 0, matched = -1, k, i, na = -1;
    float *img = rand_buf(8 * 10 * 10, -1, 1);
    const void *ins[1];
    size_t got = 0;
    FILE *fh;
    gb b;
    memset(&b, 0, sizeof b);
    luthier_graph_create(&b.g);
    luthier_graph_input(b.g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
    a = gb_act(&b, LUTHIER_OP_RELU, "relu_a", gb_convt(&b, "up_a", x, &up), NAN, NAN);
    a2 = gb_act(&b, LUTHIER_OP_RELU, "relu_b", gb_convt(&b, "up_b", x, &up), NAN, NAN);
    y = gb_convt(&b, "mix", gb_convt(&b, "dw", gb_op(&b, LUTHIER_OP_ADD, "sum", a, a2), &dw), &grouped);
    luthier_graph_output(b.g, y);
    CHECK(!b.fail, "build");
    luthier_graph_find_node(b.g, "up_a", &na);
    CHECK(luthier_tune_signature(b.g, na, sig, sizeof sig) == LUTHIER_STATUS_OK && strncmp(sig, "conv_transpose n1 c8 h10 w10 o16 k4x4 s2x2", 42) == 0 &&
              strstr(sig, "act=relu"),
          "signature '%s'", sig);
    memset(&td, 0, sizeof td);
    td.budget_seconds = 10;
    td.progress = -1;
    td.exhaustive = 1;
    td.heatmap_path = tune_tmp("convt.svg", svg, sizeof svg);
    CHECK(luthier_tune(ctx, b.g, &td, tune_tmp("convt.records", rec, sizeof rec), &r) == LUTHIER_STATUS_OK, "tune: %s",
          luthier_context_error(ctx));
    CHECK(r.tasks == 3 && r.ops == 4, "%d tasks, %d ops", r.tasks, r.ops);
    CHECK(r.measurements >= r.candidates && r.tuned_ms > 0 && r.tuned_ms <= r.default_ms * 1.0001, "%d measurements of %d; tuned %g default %g",
          r.measurements, r.candidates, r.tuned_ms, r.default_ms);
    for (fh = fopen(rec, "r"); fh && fgets(line, sizeof line, fh);)
        lines += strstr(line, "\tconv_transpose n1 c") != NULL && /* (the default: "-") */
                 (strstr(line, "\t-\t-\t") || strstr(line, "\tim2col\tluthier_") ||
                  (strstr(line, " g16 ") && strstr(line, "\tdepthwise\t-\t")));
    if (fh) fclose(fh);
    CHECK(lines == 3, "%d conv_transpose records", lines);
    cfg = (luthier_node_config *)calloc((size_t)b.g->num_nodes, sizeof *cfg);
    CHECK(luthier_records_apply(ctx, b.g, rec, cfg, &matched) == LUTHIER_STATUS_OK && matched == 4, "%d nodes matched: %s", matched,
          luthier_context_error(ctx));
    memset(&pd, 0, sizeof pd);
    pd.configs = cfg;
    pd.num_configs = b.g->num_nodes;
    ins[0] = img;
    plan_vs_ref(ctx, b.g, &pd, ins, 1e-5, "the tuned conv_transpose plan");
    CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "plan: %s", luthier_context_error(ctx));
    for (k = 0; p && luthier_plan_step_info(p, k, &si) == LUTHIER_STATUS_OK; k++) {
        if (si.op != LUTHIER_OP_CONV_TRANSPOSE) continue;
        CHECK(!cfg[si.node].kernel[0] || strstr(si.kernel, cfg[si.node].kernel), "step %s runs %s, its record names '%s'", si.name,
              si.kernel, cfg[si.node].kernel);
        CHECK(si.algorithm == (cfg[si.node].algorithm ? cfg[si.node].algorithm
                               : strcmp(si.name, "dw") == 0 ? LUTHIER_CONV_DEPTHWISE : LUTHIER_CONV_IM2COL),
              "step %s runs %s, its record names %s", si.name,
              luthier_conv_algorithm_name(si.algorithm), luthier_conv_algorithm_name(cfg[si.node].algorithm));
        for (i = 0; i < cfg[si.node].num_ratios; i++) CHECK(si.ratios[i] == cfg[si.node].ratios[i], "step %s: its split", si.name);
    }
    luthier_plan_destroy(p);
    p = NULL;
    { /* a record naming another kernel than the default configures the grouped node with it */
        luthier_kernel_info ki;
        char fpr[640], text[2048];
        int mix = -1;
        luthier_graph_find_node(b.g, "mix", &mix);
        luthier_tune_signature(b.g, mix, sig, sizeof sig);
        luthier_tune_fingerprint(ctx, fpr, sizeof fpr);
        for (k = luthier_kernel_count() - 1; k >= 0; k--)
            if (luthier_kernel_get(k, &ki) == LUTHIER_STATUS_OK && ki.available && strcmp(ki.isa, "scalar")) break;
        snprintf(text, sizeof text, "luthier-records 1\n%s\t%s\tim2col\t%s\tratio\tdefault\t1\t1\tfp32\n", fpr, sig, ki.name);
        memset(cfg, 0, sizeof *cfg * (size_t)b.g->num_nodes);
        CHECK(luthier_records_apply_text(ctx, b.g, text, cfg, &matched) == LUTHIER_STATUS_OK && matched == 1 &&
                  strcmp(cfg[mix].kernel, ki.name) == 0 && cfg[mix].algorithm == LUTHIER_CONV_IM2COL,
              "%d matched by '%s': %s", matched, text, luthier_context_error(ctx));
        CHECK(luthier_plan_create(ctx, b.g, &pd, &p) == LUTHIER_STATUS_OK, "plan: %s", luthier_context_error(ctx));
        for (k = 0; p && luthier_plan_step_info(p, k, &si) == LUTHIER_STATUS_OK; k++)
            if (si.node == mix) CHECK(strcmp(si.kernel, ki.name) == 0, "mix runs %s, not the record's %s", si.kernel, ki.name);
        luthier_plan_destroy(p);
        plan_vs_ref(ctx, b.g, &pd, ins, 1e-5, "the conv_transpose plan of the written record");
    }
    if ((fh = fopen(svg, "r"))) {
        got = fread(buf, 1, sizeof buf - 1, fh);
        fclose(fh);
    }
    buf[got] = 0;
    CHECK(strstr(buf, ">gemm<") && !strstr(buf, "winograd"), "the heatmap's columns: %.300s", buf);
    remove(rec);
    remove(svg);
    free(cfg);
    free(img);
    gb_free(&b);
    luthier_context_destroy(ctx);
}

static void run_tune_tests(void) {
    RUN(test_tune_signatures);
    RUN(test_tune_space);
    RUN(test_tune_run_and_records);
    RUN(test_tune_cores_spec);
    RUN(test_tune_offline);
    RUN(test_tune_cluster_kernels);
    RUN(test_tune_record_kernel_list);
    RUN(test_tune_measure_once);
    RUN(test_tune_heatmap_dense);
    RUN(test_tune_conv_transpose);
}
