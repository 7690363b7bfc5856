/* luthier-bench tune: tune a zoo network with luthier_tune, then time plans end to end:
   default configurations, the tuned records, and (with two clusters) "big cluster only" and
   "equal split"; optionally an exhaustive search and a random search of equal budget.
   Included by luthier_bench.c after bench_model.h (uses model_once, asym_load_*). */

static void usage_tune(FILE *out) {
    fprintf(out,
            "Usage: %s tune NAME|MODEL.onnx [options]\n"
            "Tunes every convolution and dense task of a zoo network or of your ONNX model (see\n"
            "'model'; --dim and --default-dim set its symbolic dimensions) on this machine\n"
            "with the model-guided search, writes the records, and times plans end to end:\n"
            "default configurations vs the records (and big-only / equal split with two clusters).\n"
            "Options:\n"
            "  --threads N       threads (default: all CPUs)\n"
            "  --budget S        tuning budget in seconds (default 120)\n"
            "  --records PATH    records file (default build/NAME.records)\n"
            "  --report PATH     per-task report (default build/NAME.tune.txt)\n"
            "  --heatmap PATH    SVG heatmap of the costliest task (default build/NAME.heatmap.svg)\n"
            "  --exhaustive      also run an exhaustive search over the same space and time its plan\n"
            "  --random          also run a random search with the same per-task measurement cap\n"
            "  --model-only      also run the guided search without the clusters' busy times (the\n"
            "                    cost model alone) with the same budget\n"
            "  --asym            emulate big.LITTLE: the last CPU becomes cluster 'little' and a\n"
            "                    pinned busy loop halves it while tuning and timing (see 'asym')\n"
            "  --load-timeout S  the busy loop's deadline in seconds (default: 600 + the budgets of\n"
            "                    the searches asked for, plus 6 h with --exhaustive); the command\n"
            "                    fails when the loop stopped before the plans were timed\n"
            "  --min-time S      seconds of timed runs per plan (default 2); all plans are created\n"
            "                    after tuning and timed together in 5 interleaved rounds\n"
            "  --int8            tune the int8 plan (calibrated on 4 generated inputs as 'model --int8'\n"
            "                    does); records default to build/NAME.int8.records, and the fp32\n"
            "                    default plan is timed too (csv column fp32_ms)\n"
            "  --no-plan-check   keep every task's winner: no in-plan check (luthier_tune_desc)\n"
            "  --no-prior-too    also run the guided search without the cost model's first-batch\n"
            "                    order (luthier_tune_desc.no_prior) with the same budget, and time it\n"
            "  --rank            rate the analytical cost model instead of tuning for a plan: measure\n"
            "                    every candidate of every task (exhaustive, no dynamic schedule, no\n"
            "                    in-plan check), print the median over tasks of the Spearman correlation\n"
            "                    of predicted and measured times and of the model's rank of the fastest\n"
            "                    (per task in the report); no plans are timed\n"
            "  --quiet           no progress lines\n"
            "  --csv             one summary row:\n"
            "                    model,threads,tasks,ops,measurements,tuning_s,tuned_ms,default_ms,\n"
            "                    exhaustive_ms,exhaustive_measurements,random_ms,random_measurements,\n"
            "                    bigonly_ms,equal_ms,candidates,reverted,runner_ups[,fp32_ms with --int8]\n"
            "                    [,modelonly_ms,modelonly_measurements with --model-only]\n",
            bench_prog);
}

typedef struct tune_ctx {
    luthier_context *ctx;
    luthier_graph *g;
    void *bufs[64];
    model_run m;
} tune_ctx;

/* Latencies (min ms, -1 when a plan fails) of g planned with each of pds[0..n-1]. All plans are
   created first and timed in interleaved rounds (the start rotating), so that drifts of the
   machine over a long run (clock, other load, the busy loop of --asym) hit every plan alike. */
#define TUNE_ROUNDS 5
#define TUNE_MAX_PLANS 10 /* default, tuned, model, exhaustive, random, model only, no prior, big only, equal, fp32 */
static void tune_time_plans(tune_ctx *t, const luthier_plan_desc *pds, const char *const *what, int n,
                            const bench_policy *pol, double *ms) {
    luthier_plan *plans[TUNE_MAX_PLANS] = {NULL};
    bench_sampler s[TUNE_MAX_PLANS];
    bench_policy rp = *pol;
    int i, r, bad[TUNE_MAX_PLANS] = {0};
    memset(s, 0, sizeof s);
    rp.rounds = TUNE_ROUNDS;
    for (i = 0; i < n && i < TUNE_MAX_PLANS; i++) {
        ms[i] = -1;
        if (luthier_plan_create(t->ctx, t->g, &pds[i], &plans[i]) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s tune: plan (%s): %s\n", bench_prog, what[i], luthier_context_error(t->ctx));
            bad[i] = 1;
            continue;
        }
        t->m.plan = plans[i];
        bad[i] = model_once(&t->m); /* checked once before timing */
    }
    for (r = 0; r < TUNE_ROUNDS; r++)
        for (i = 0; i < n && i < TUNE_MAX_PLANS; i++) {
            const int k = (i + r) % n;
            if (bad[k]) continue;
            t->m.plan = plans[k];
            if (bench_run_round(model_once, &t->m, &rp, r, &s[k]) != 0) bad[k] = 1;
        }
    for (i = 0; i < n && i < TUNE_MAX_PLANS; i++) {
        if (!bad[i] && s[i].n > 0) ms[i] = bench_summarize(s[i].t, s[i].n).min * 1e3;
        bench_sampler_free(&s[i]);
        luthier_plan_destroy(plans[i]);
    }
    t->m.plan = NULL;
}

/* Every node with the same workload split (baselines "big only" and "equal"). */
static luthier_node_config *tune_split_configs(const luthier_graph *g, const float *ratios, int nr) {
    int n = luthier_graph_num_nodes(g), i;
    luthier_node_config *cfg = (luthier_node_config *)calloc((size_t)n + 1, sizeof *cfg);
    for (i = 0; cfg && i < n; i++) {
        cfg[i].num_ratios = nr;
        memcpy(cfg[i].ratios, ratios, sizeof(float) * (size_t)nr);
    }
    return cfg;
}

/* A comparison search over the same space (exhaustive = 1; 0: random with the same per-task
   cap; 2: guided without the busy times; 3: guided without the cost model's prior) into
   records + suffix; path is left empty when it fails. */
static void tune_compare(tune_ctx *t, const luthier_tune_desc *td, int exhaustive, double budget, const char *records,
                         const char *suffix, char *path, size_t size, luthier_tune_result *res) {
    luthier_tune_desc c = *td;
    snprintf(path, size, "%s%s", records, suffix);
    c.exhaustive = exhaustive == 1;
    c.random_search = exhaustive == 0;
    c.no_balance = exhaustive == 2;
    c.no_prior = exhaustive == 3;
    c.budget_seconds = budget;
    c.heatmap_path = NULL;
    c.report_path = NULL;
    if (luthier_tune(t->ctx, t->g, &c, path, res) != LUTHIER_STATUS_OK) path[0] = 0;
}

static int cmd_tune(int argc, char **argv) {
    const char *cmd = argv[0], *name = NULL, *val;
    char records[512] = "", report[512] = "", heatmap[512] = "", spec[256], err[512], stem_buf[256];
    const char *stem;
    int i, r, threads = 0, csv = 0, exhaustive = 0, random = 0, asym = 0, quiet = 0, rc = BENCH_EXIT_OK, int8 = 0, monly = 0, no_check = 0, rank = 0, noprior = 0;
    luthier_calibration *cal = NULL;
    double fp32_ms = 0;
    double budget = 120, load_timeout = 0;
    bench_policy pol;
    luthier_tune_desc td;
    luthier_tune_result res, rex, rrn, rmo, rnp;
    luthier_topology topo;
    luthier_context_desc cd;
    tune_ctx t;
    asym_loader loaders[1];
    int loading = 0;
    double np_ms = 0, model_ms = -1, default_ms = -1, tuned_ms = -1, ex_ms = 0, rn_ms = 0, big_ms = 0, eq_ms = 0, mo_ms = 0;
    char ex_path[600] = "", rn_path[600] = "", mo_path[600] = "", np_path[600] = "";
    luthier_node_config *split[2] = {NULL, NULL};
    memset(&pol, 0, sizeof pol);
    pol.min_time = 2.0;
    pol.rounds = 1;
    memset(&t, 0, sizeof t);
    memset(&res, 0, sizeof res);
    memset(&rex, 0, sizeof rex);
    memset(&rrn, 0, sizeof rrn);
    memset(&rmo, 0, sizeof rmo);
    memset(&rnp, 0, sizeof rnp);
    memset(loaders, 0, sizeof loaders);
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int64_t v;
        int net = bench_net_option(argc, argv, &i, cmd);
        if (net < 0) return BENCH_EXIT_USAGE;
        if (net > 0) continue;
        if (bench_is_help(arg)) {
            usage_tune(stdout);
            return BENCH_EXIT_OK;
        } else if ((r = bench_opt_flag(arg, cmd, "--csv")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            csv = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--exhaustive")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            exhaustive = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--random")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            random = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--model-only")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            monly = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--no-plan-check")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            no_check = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--no-prior-too")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            noprior = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--rank")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            rank = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--asym")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            asym = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--int8")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            int8 = 1;
        } else if ((r = bench_opt_flag(arg, cmd, "--quiet")) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            quiet = 1;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--threads", &val)) != 0) {
            if (r < 0 || bench_parse_i64(val, 1, LUTHIER_MAX_CPUS, &v)) {
                bench_usage_error(cmd, "--threads wants an integer in [1, %d]", LUTHIER_MAX_CPUS);
                return BENCH_EXIT_USAGE;
            }
            threads = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--budget", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 0.1, 86400, &budget)) {
                bench_usage_error(cmd, "--budget wants seconds in [0.1, 86400]");
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--load-timeout", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 1, 86400 * 7, &load_timeout)) {
                bench_usage_error(cmd, "--load-timeout wants seconds in [1, 604800]");
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--min-time", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 0.0, 3600, &pol.min_time)) {
                bench_usage_error(cmd, "--min-time wants seconds in [0, 3600]");
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--records", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            snprintf(records, sizeof records, "%s", val);
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--report", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            snprintf(report, sizeof report, "%s", val);
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--heatmap", &val)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            snprintf(heatmap, sizeof heatmap, "%s", val);
        } else if (arg[0] == '-') {
            bench_usage_error(cmd, "unknown option '%s'", arg);
            return BENCH_EXIT_USAGE;
        } else if (!name) {
            name = arg;
        } else {
            bench_usage_error(cmd, "one model name expected");
            return BENCH_EXIT_USAGE;
        }
    }
    if (!name) {
        bench_usage_error(cmd, "name a zoo network, e.g. resnet18");
        return BENCH_EXIT_USAGE;
    }
    stem = bench_net_stem(name, stem_buf, sizeof stem_buf);
    if (!records[0]) snprintf(records, sizeof records, "build/%s%s.records", stem, int8 ? ".int8" : "");
    if (!report[0]) snprintf(report, sizeof report, "build/%s.tune.txt", stem);
    if (!heatmap[0]) snprintf(heatmap, sizeof heatmap, "build/%s.heatmap.svg", stem);
    /* context (emulated big.LITTLE with --asym) */
    memset(&cd, 0, sizeof cd);
    cd.num_threads = threads;
    if (asym) {
        int cpus[LUTHIER_MAX_CPUS], ncpus = bench_allowed_cpus(cpus, LUTHIER_MAX_CPUS), k;
        char *p = spec;
        if (ncpus < 2) {
            fprintf(stderr, "%s tune: --asym needs 2 CPUs\n", bench_prog);
            return BENCH_EXIT_FAIL;
        }
        p += sprintf(p, "big:");
        for (k = 0; k < ncpus - 1; k++) p += sprintf(p, "%s%d", k ? "," : "", cpus[k]);
        sprintf(p, ",little:%d", cpus[ncpus - 1]);
        if (luthier_topology_detect(NULL, spec, &topo, err, sizeof err) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s tune: clusters '%s': %s\n", bench_prog, spec, err);
            return BENCH_EXIT_FAIL;
        }
        cd.topology = &topo;
        cd.num_threads = 0;
        /* The deadline is a safety net only: it must outlast every search and the timing of the
           plans (an exhaustive search of ResNet-18 on the pair takes about 20 minutes). */
        if (load_timeout <= 0)
            load_timeout = 600 + budget * (2 + 4 * random + monly + noprior) + (exhaustive ? 6 * 3600 : 0);
        if (asym_load_start(loaders, 1, &cpus[ncpus - 1], load_timeout) != 0) {
            fprintf(stderr, "%s tune: cannot start the busy loop on CPU %d\n", bench_prog, cpus[ncpus - 1]);
            return BENCH_EXIT_FAIL;
        }
        loading = 1;
    }
    if (luthier_context_create(&cd, &t.ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: cannot create a context\n", bench_prog);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (bench_net_build(name, &t.g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: %s\n", bench_prog, err);
        rc = BENCH_EXIT_USAGE;
        goto done;
    }
    t.m.ctx = t.ctx;
    for (i = 0; i < luthier_graph_num_inputs(t.g) + luthier_graph_num_outputs(t.g) && i < 64; i++) {
        int is_out = i >= luthier_graph_num_inputs(t.g), k = is_out ? i - luthier_graph_num_inputs(t.g) : i, d;
        luthier_tensor_info ti;
        size_t bytes = 1;
        luthier_graph_tensor_info(t.g, is_out ? luthier_graph_output_tensor(t.g, k) : luthier_graph_input_tensor(t.g, k), &ti);
        for (d = 0; d < ti.rank; d++) bytes *= (size_t)ti.shape[d];
        bytes *= ti.dtype == LUTHIER_DTYPE_I64 ? 8 : 4;
        if (is_out) t.m.outs[k] = malloc(bytes);
        else t.m.ins[k] = t.bufs[k] = malloc(bytes);
    }
    if (bench_net_inputs(t.ctx, name, t.g, t.bufs, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: inputs: %s\n", bench_prog, err);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    /* --int8: calibrated as 'model --int8' does it */
    if (int8 && model_calibrate(t.ctx, t.g, t.bufs, LUTHIER_CALIB_MINMAX, "tune", &cal)) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (!csv) {
        char topo_s[1024], joined[1100] = "", *line, *save = NULL;
        luthier_topology ct;
        luthier_context_topology(t.ctx, &ct);
        luthier_topology_format(&ct, topo_s, sizeof topo_s);
        /* the format has one cluster per line: one line here, clusters joined by "; " */
        for (line = strtok_r(topo_s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", joined[0] ? "; " : "", line);
        printf("tune %s%s on %s (%d threads)%s, budget %.0f s\n", name, int8 ? " int8" : "", joined,
               luthier_context_num_threads(t.ctx), asym ? ", little cluster loaded by a busy loop" : "", budget);
        fflush(stdout);
    }
    /* tune */
    memset(&td, 0, sizeof td);
    td.budget_seconds = budget;
    td.progress = quiet || csv ? -1 : 1;
    td.report_path = report;
    td.heatmap_path = heatmap;
    td.int8 = cal;
    td.no_plan_check = no_check || rank;
    if (rank) td.exhaustive = td.no_dynamic = 1, td.heatmap_path = NULL;
    if (luthier_tune(t.ctx, t.g, &td, records, &res) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: %s\n", bench_prog, luthier_context_error(t.ctx));
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (rank) {
        printf("cost model over %d tasks (%d measurements): median Spearman %.3f, median rank of the fastest %.1f "
               "(per task: %s)\n", res.tasks, res.measurements, res.model_spearman, res.model_rank, report);
        goto done;
    }
    if (exhaustive) tune_compare(&t, &td, 1, budget, records, ".exhaustive", ex_path, sizeof ex_path, &rex);
    if (random) tune_compare(&t, &td, 0, budget * 4, records, ".random", rn_path, sizeof rn_path, &rrn);
    if (monly) tune_compare(&t, &td, 2, budget, records, ".modelonly", mo_path, sizeof mo_path, &rmo);
    if (noprior) tune_compare(&t, &td, 3, budget, records, ".noprior", np_path, sizeof np_path, &rnp);
    {
        /* every plan timed together: default, tuned, then the comparisons that were asked for */
        luthier_plan_desc pds[TUNE_MAX_PLANS];
        const char *what[TUNE_MAX_PLANS];
        double ms[TUNE_MAX_PLANS];
        int np = 0, k, nn = luthier_graph_num_nodes(t.g);
        memset(pds, 0, sizeof pds);
        what[np++] = "default";
        pds[np].records = records, what[np++] = "tuned";
        pds[np].auto_policy = LUTHIER_AUTO_MODEL, what[np++] = "model";
        if (ex_path[0]) pds[np].records = ex_path, what[np++] = "exhaustive";
        if (rn_path[0]) pds[np].records = rn_path, what[np++] = "random";
        if (mo_path[0]) pds[np].records = mo_path, what[np++] = "model only";
        if (np_path[0]) pds[np].records = np_path, what[np++] = "no prior";
        if (luthier_context_num_threads(t.ctx) > 1) {
            luthier_topology ct;
            luthier_context_topology(t.ctx, &ct);
            if (ct.num_clusters == 2) {
                const float big[2] = {1, 0}, eq[2] = {1, 1};
                split[0] = tune_split_configs(t.g, big, 2);
                split[1] = tune_split_configs(t.g, eq, 2);
                if (split[0] && split[1]) {
                    pds[np].configs = split[0], pds[np].num_configs = nn, what[np++] = "big only";
                    pds[np].configs = split[1], pds[np].num_configs = nn, what[np++] = "equal split";
                }
            }
        }
        for (k = 0; k < np; k++) pds[k].int8 = cal;
        if (int8) what[np++] = "fp32"; /* the fp32 default plan: pds[np] is all zero */
        tune_time_plans(&t, pds, what, np, &pol, ms);
        if (loading) {
            loading = 0;
            if (asym_load_stop(loaders, 1)) {
                fprintf(stderr, "%s tune: the busy loop reached its deadline (--load-timeout %.0f s) before the "
                                "plans were timed: these numbers are not of the emulated pair\n",
                        bench_prog, load_timeout);
                rc = BENCH_EXIT_FAIL;
            }
        }
        for (k = 0; k < np; k++) {
            if (strcmp(what[k], "default") == 0) default_ms = ms[k];
            else if (strcmp(what[k], "tuned") == 0) tuned_ms = ms[k];
            else if (strcmp(what[k], "exhaustive") == 0) ex_ms = ms[k];
            else if (strcmp(what[k], "random") == 0) rn_ms = ms[k];
            else if (strcmp(what[k], "big only") == 0) big_ms = ms[k];
            else if (strcmp(what[k], "fp32") == 0) fp32_ms = ms[k];
            else if (strcmp(what[k], "model only") == 0) mo_ms = ms[k];
            else if (strcmp(what[k], "model") == 0) model_ms = ms[k];
            else if (strcmp(what[k], "no prior") == 0) np_ms = ms[k];
            else eq_ms = ms[k];
        }
    }
    if (csv) {
        printf("model,threads,tasks,ops,measurements,tuning_s,tuned_ms,default_ms,exhaustive_ms,exhaustive_measurements,"
               "random_ms,random_measurements,bigonly_ms,equal_ms,candidates,reverted,runner_ups%s%s\n", int8 ? ",fp32_ms" : "",
               monly ? ",modelonly_ms,modelonly_measurements" : "");
        printf("%s,%d,%d,%d,%d,%.1f,%.3f,%.3f,%.3f,%d,%.3f,%d,%.3f,%.3f,%d,%d,%d", name, luthier_context_num_threads(t.ctx),
               res.tasks, res.ops, res.measurements, res.seconds, tuned_ms, default_ms, ex_ms, rex.measurements, rn_ms,
               rrn.measurements, big_ms, eq_ms, res.candidates, res.reverted, res.runner_ups);
        if (int8) printf(",%.3f", fp32_ms);
        if (monly) printf(",%.3f,%d", mo_ms, rmo.measurements);
        printf("\n");
    } else {
        printf("%d ops in %d tasks; %d measurements of a %d-candidate space in %.1f s\n", res.ops, res.tasks,
               res.measurements, res.candidates, res.seconds);
        if (res.plan_default_ms > 0)
            printf("in-plan check: %d tuned tasks reverted to the default, %d took a runner-up; the tuned tasks' steps "
                   "took %.2f ms in the default plan, %.2f ms in the winners' one, %.2f ms as chosen\n", res.reverted,
                   res.runner_ups, res.plan_default_ms, res.plan_tuned_ms, res.plan_chosen_ms);
        printf("end to end: default %.2f ms, tuned %.2f ms (%.2fx)\n", default_ms, tuned_ms, default_ms / tuned_ms);
        printf("cost-model default (auto_policy model, no records): %.2f ms (%.2fx the tuned plan's time, rules default %.2fx)\n",
               model_ms, model_ms / tuned_ms, default_ms / tuned_ms);
        if (fp32_ms > 0) printf("fp32 default plan %.2f ms: tuned int8 is %.2fx faster\n", fp32_ms, fp32_ms / tuned_ms);
        if (ex_ms > 0)
            printf("exhaustive search: %.2f ms with %d measurements (tuned is %.1f%% off with %.1f%% of the measurements)\n",
                   ex_ms, rex.measurements, 100.0 * (tuned_ms / ex_ms - 1), 100.0 * res.measurements / rex.measurements);
        if (rn_ms > 0) printf("random search, same measurements: %.2f ms\n", rn_ms);
        if (mo_ms > 0) printf("guided search without the busy times (model only): %.2f ms with %d measurements\n", mo_ms,
                              rmo.measurements);
        if (np_ms > 0)
            printf("guided search without the cost model's first-batch order: %.2f ms with %d measurements (with it: %.2f ms, "
                   "%d measurements)\n", np_ms, rnp.measurements, tuned_ms, res.measurements);
        if (big_ms > 0) printf("big cluster only %.2f ms (tuned %.2fx), equal split %.2f ms (tuned %.2fx)\n", big_ms,
                               big_ms / tuned_ms, eq_ms, eq_ms / tuned_ms);
        printf("records: %s, report: %s, heatmap: %s\n", records, report, heatmap);
    }
done:
    if (loading) asym_load_stop(loaders, 1);
    luthier_calibration_destroy(cal);
    free(split[0]);
    free(split[1]);
    for (i = 0; i < 64; i++) {
        free(t.bufs[i]);
        free(t.m.outs[i]);
    }
    luthier_graph_destroy(t.g);
    luthier_context_destroy(t.ctx);
    return rc;
}
