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
            "                    pinned busy loop halves it while tuning and timing (see 'asym'); the\n"
            "                    clusters' capacities say what it leaves (1.0 and the little CPU's speed\n"
            "                    under the loop, measured), as a board's sysfs would\n"
            "  --load-timeout S  the busy loop's deadline in seconds (default: 600 + the budgets of\n"
            "                    the searches asked for, plus 6 h with --exhaustive); the command\n"
            "                    fails when the loop stopped before the plans were timed\n"
            "  --min-time S      seconds of timed runs per plan (default 2); all plans are created\n"
            "                    after tuning and timed together in 5 interleaved rounds\n"
            "  --int8            tune the int8 plan (calibrated on 4 generated inputs as 'model --int8'\n"
            "                    does); records default to build/NAME.int8.records, and the fp32\n"
            "                    default plan is timed too (csv column fp32_ms)\n"
            "  --fp16            tune the fp16 plan (luthier_tune_desc.precision: dense layers over fp16\n"
            "                    weights, convolutions over the fp16-arithmetic kernels where the CPU\n"
            "                    has them); records default to build/NAME.fp16.records, and the fp32\n"
            "                    default plan is timed too (csv column fp32_ms)\n"
            "  --precision P     fp32, fp16 (= --fp16), int8 (= --int8) or auto: a precision per layer\n"
            "                    (luthier_tune_desc.precision AUTO): tuned in fp32 and in fp16 (with\n"
            "                    --int8 in int8 too), each layer its fastest, then the accuracy guard on\n"
            "                    the 4 generated calibration inputs: cosine >= 0.9999 and max |diff| <= 1 %%\n"
            "                    of the largest fp32 output against the fp32 plan, layers back to fp32\n"
            "                    most harmful first until it holds; records default to\n"
            "                    build/NAME.auto.records (plans of precision AUTO read them), and the\n"
            "                    fp32 default plan is timed too (csv column fp32_ms)\n"
            , bench_prog);
    fputs(  "  --no-plan-check   keep every task's winner: no in-plan check (luthier_tune_desc)\n"
            "  --no-prior-too    also run the guided search without the cost model's first-batch\n"
            "                    order (luthier_tune_desc.no_prior) with the same budget, and time it\n"
            "  --half            the guided search measures at most half as many candidates per task\n"
            "                    (luthier_tune_desc.max_fraction 0.05 instead of 0.1); with --no-prior-too\n"
            "                    that one keeps 0.1: does the cost model's warm start need half the\n"
            "                    measurements for the same plan?\n"
            "  --rank            rate the analytical cost model instead of tuning for a plan: measure\n"
            "                    every candidate of every task (exhaustive, no dynamic schedule, no\n"
            "                    in-plan check), print the median over tasks of the Spearman correlation\n"
            "                    of predicted and measured times and of the model's rank of the fastest\n"
            "                    (per task in the report); no plans are timed\n"
            "  --offline CORES   predict instead of measuring, for a board that is not this machine:\n"
            "                    CORES lists its clusters fastest first as CORExCOUNT (A72x2,A53x4) or\n"
            "                    names a board: rk3399, odroid-n2plus, rpi4, rk3588, sd865\n"
            "                    (luthier_topology_cores, luthier_tune_desc.offline); writes predicted\n"
            "                    records the board's own detection matches; nothing is timed. Run the\n"
            "                    board's build (an AArch64 board: under qemu-aarch64 with its -cpu)\n"
            "  --quiet           no progress lines\n"
            "  --csv             one summary row:\n"
            "                    model,threads,tasks,ops,measurements,tuning_s,tuned_ms,default_ms,\n"
            "                    exhaustive_ms,exhaustive_measurements,random_ms,random_measurements,\n"
            "                    bigonly_ms,equal_ms,candidates,reverted,runner_ups[,fp32_ms with --int8 or --fp16]\n"
            "                    [,modelonly_ms,modelonly_measurements with --model-only]\n", out);
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
#define TUNE_MAX_PLANS 10 /* default, tuned, rules, exhaustive, random, model only, no prior, big only, equal, fp32 */
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
    if (c.no_prior) c.max_fraction = 0; /* the search without the model at the default cap (--half) */
    c.budget_seconds = budget;
    c.heatmap_path = NULL;
    c.report_path = NULL;
    if (luthier_tune(t->ctx, t->g, &c, path, res) != LUTHIER_STATUS_OK) path[0] = 0;
}

typedef struct tune_opts {
    const char *cmd, *name;
    char records[512], report[512], heatmap[512], stem[256], offline[128];
    int threads, csv, exhaustive, random, asym, quiet, int8, fp16, monly, no_check, rank, noprior, half, autop;
    double budget, load_timeout;
    bench_policy pol;
} tune_opts;

/* The searches and the plans' times (min ms; 0 or -1 when not run). */
typedef struct tune_outcome {
    luthier_tune_result res, rex, rrn, rmo, rnp;
    char ex_path[600], rn_path[600], mo_path[600], np_path[600];
    double default_ms, tuned_ms, rules_ms, ex_ms, rn_ms, mo_ms, np_ms, big_ms, eq_ms, fp32_ms;
} tune_outcome;

/* The command line into o: -1 to go on, else the exit code. */
static int tune_parse(int argc, char **argv, tune_opts *o) {
    const struct { const char *name; size_t off; } flags[] = {
        {"--csv", offsetof(tune_opts, csv)},           {"--exhaustive", offsetof(tune_opts, exhaustive)},
        {"--random", offsetof(tune_opts, random)},     {"--model-only", offsetof(tune_opts, monly)},
        {"--no-plan-check", offsetof(tune_opts, no_check)}, {"--no-prior-too", offsetof(tune_opts, noprior)},
        {"--rank", offsetof(tune_opts, rank)},         {"--asym", offsetof(tune_opts, asym)},
        {"--int8", offsetof(tune_opts, int8)},         {"--quiet", offsetof(tune_opts, quiet)},
        {"--fp16", offsetof(tune_opts, fp16)},         {"--half", offsetof(tune_opts, half)}};
    const struct { const char *name; char *dst; size_t size; } paths[] = {
        {"--records", o->records, sizeof o->records}, {"--report", o->report, sizeof o->report},
        {"--heatmap", o->heatmap, sizeof o->heatmap}, {"--offline", o->offline, sizeof o->offline}};
    const char *cmd = o->cmd, *val;
    int i, r;
    size_t f;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int64_t v;
        int net = bench_net_option(argc, argv, &i, cmd), done = 0;
        if (net) {
            if (net < 0) return BENCH_EXIT_USAGE;
            continue;
        }
        if (bench_is_help(arg)) {
            usage_tune(stdout);
            return BENCH_EXIT_OK;
        }
        for (f = 0; f < sizeof flags / sizeof flags[0] && !done; f++)
            if ((r = bench_opt_flag(arg, cmd, flags[f].name)) != 0) {
                if (r < 0) return BENCH_EXIT_USAGE;
                *(int *)((char *)o + flags[f].off) = done = 1;
            }
        for (f = 0; f < sizeof paths / sizeof paths[0] && !done; f++)
            if ((r = bench_opt_value(argc, argv, &i, cmd, paths[f].name, &val)) != 0) {
                if (r < 0) return BENCH_EXIT_USAGE;
                snprintf(paths[f].dst, paths[f].size, "%s", val);
                done = 1;
            }
        if (done) continue;
        if ((r = bench_opt_value(argc, argv, &i, cmd, "--threads", &val)) != 0) {
            if (r < 0 || bench_parse_i64(val, 1, LUTHIER_MAX_CPUS, &v)) {
                bench_usage_error(cmd, "--threads wants an integer in [1, %d]", LUTHIER_MAX_CPUS);
                return BENCH_EXIT_USAGE;
            }
            o->threads = (int)v;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--budget", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 0.1, 86400, &o->budget)) {
                bench_usage_error(cmd, "--budget wants seconds in [0.1, 86400]");
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--load-timeout", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 1, 86400 * 7, &o->load_timeout)) {
                bench_usage_error(cmd, "--load-timeout wants seconds in [1, 604800]");
                return BENCH_EXIT_USAGE;
            }
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--precision", &val)) != 0) {
            luthier_precision p = LUTHIER_PRECISION_DEFAULT;
            if (r < 0 || luthier_precision_parse(val, &p) != LUTHIER_STATUS_OK || p == LUTHIER_PRECISION_DEFAULT) {
                bench_usage_error(cmd, "--precision wants fp32, fp16, int8 or auto");
                return BENCH_EXIT_USAGE;
            }
            o->fp16 |= p == LUTHIER_PRECISION_FP16;
            o->int8 |= p == LUTHIER_PRECISION_INT8;
            o->autop |= p == LUTHIER_PRECISION_AUTO;
        } else if ((r = bench_opt_value(argc, argv, &i, cmd, "--min-time", &val)) != 0) {
            if (r < 0 || bench_parse_double(val, 0.0, 3600, &o->pol.min_time)) {
                bench_usage_error(cmd, "--min-time wants seconds in [0, 3600]");
                return BENCH_EXIT_USAGE;
            }
        } else if (arg[0] == '-') {
            bench_usage_error(cmd, "unknown option '%s'", arg);
            return BENCH_EXIT_USAGE;
        } else if (!o->name) {
            o->name = arg;
        } else {
            bench_usage_error(cmd, "one model name expected");
            return BENCH_EXIT_USAGE;
        }
    }
    if (!o->name) {
        bench_usage_error(cmd, "name a zoo network, e.g. resnet18");
        return BENCH_EXIT_USAGE;
    }
    if ((o->autop && o->fp16) || (o->int8 && o->fp16)) {
        bench_usage_error(cmd, "one precision: --fp16, --int8 or --precision auto (which takes --int8 to try int8 too)");
        return BENCH_EXIT_USAGE;
    }
    return -1;
}

/* The boards --offline names, as luthier_topology_cores specs. */
static const char *tune_board_cores(const char *name) {
    static const struct { const char *board, *cores; } boards[] = {
        {"rk3399", "A72x2,A53x4"}, {"odroid-n2plus", "A73x4,A53x2"}, {"rpi4", "A72x4"},
        {"rk3588", "A76x4,A55x4"}, {"sd865", "A77x1,A77x3,A55x4"}};
    size_t i;
    for (i = 0; i < sizeof boards / sizeof boards[0]; i++)
        if (!strcmp(name, boards[i].board)) return boards[i].cores;
    return name;
}

/* The context: all CPUs, or with --asym an emulated big.LITTLE pair whose little CPU a busy
   loop loads (*loading = 1 while it runs), or with --offline the board described. 0 = ok, else
   the exit code. */
static int tune_context(tune_opts *o, tune_ctx *t, asym_loader *loaders, int *loading) {
    luthier_context_desc cd;
    luthier_topology topo;
    char spec[256], err[256];
    memset(&cd, 0, sizeof cd);
    cd.num_threads = o->threads;
    if (o->offline[0]) {
        if (luthier_topology_cores(tune_board_cores(o->offline), &topo, err, sizeof err) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s tune: --offline '%s': %s\n", bench_prog, o->offline, err);
            return BENCH_EXIT_USAGE;
        }
        cd.topology = &topo;
    } else if (o->asym) {
        int cpus[LUTHIER_MAX_CPUS], ncpus = bench_allowed_cpus(cpus, LUTHIER_MAX_CPUS), k;
        char *p = spec;
        double cap;
        if (ncpus < 2) {
            fprintf(stderr, "%s tune: --asym needs 2 CPUs\n", bench_prog);
            return BENCH_EXIT_FAIL;
        }
        /* The deadline is a safety net only: it must outlast every search and the timing of the
           plans (an exhaustive search of ResNet-18 on the pair takes about 20 minutes). */
        if (o->load_timeout <= 0)
            o->load_timeout = 600 + o->budget * (2 + 4 * o->random + o->monly + o->noprior) + (o->exhaustive ? 6 * 3600 : 0);
        if (asym_load_start(loaders, 1, &cpus[ncpus - 1], o->load_timeout) != 0) {
            fprintf(stderr, "%s tune: cannot start the busy loop on CPU %d\n", bench_prog, cpus[ncpus - 1]);
            return BENCH_EXIT_FAIL;
        }
        *loading = 1;
        /* capacities as a board's sysfs gives them: the little CPU's speed under its busy loop,
           measured (the loop is meant to leave it half; hosts differ) */
        cap = asym_probe_capacity(cpus[0], cpus[ncpus - 1]);
        if (cap < 0) cap = 0.5;
        printf("little CPU %d under the busy loop: %.2f of CPU %d (its declared capacity)\n", cpus[ncpus - 1], cap, cpus[0]);
        p += sprintf(p, "big@1.0:");
        for (k = 0; k < ncpus - 1; k++) p += sprintf(p, "%s%d", k ? "," : "", cpus[k]);
        sprintf(p, ",little@%.2f:%d", cap, cpus[ncpus - 1]);
        if (luthier_topology_detect(NULL, spec, &topo, err, sizeof err) != LUTHIER_STATUS_OK) {
            fprintf(stderr, "%s tune: clusters '%s': %s\n", bench_prog, spec, err);
            return BENCH_EXIT_FAIL;
        }
        cd.topology = &topo;
        cd.num_threads = 0;
    }
    if (luthier_context_create(&cd, &t->ctx) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: cannot create a context\n", bench_prog);
        return BENCH_EXIT_FAIL;
    }
    t->m.ctx = t->ctx;
    return 0;
}

/* The plans' precision, and its name in the output ("" for fp32). */
static luthier_precision tune_precision(const tune_opts *o) {
    return o->autop ? LUTHIER_PRECISION_AUTO : o->fp16 ? LUTHIER_PRECISION_FP16 : LUTHIER_PRECISION_DEFAULT;
}
static const char *tune_precision_label(const tune_opts *o) {
    return o->autop ? (o->int8 ? "auto (fp32, fp16, int8)" : "auto (fp32, fp16)") : o->int8 ? "int8" : o->fp16 ? "fp16" : "";
}

static void tune_header(const tune_opts *o, const tune_ctx *t) {
    char topo_s[1024], joined[1100] = "", *line, *save = NULL;
    luthier_topology ct;
    luthier_context_topology(t->ctx, &ct);
    luthier_topology_format(&ct, topo_s, sizeof topo_s);
    /* the format has one cluster per line: one line here, clusters joined by "; " */
    for (line = strtok_r(topo_s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", joined[0] ? "; " : "", line);
    if (o->offline[0])
        printf("tune %s offline (the cost model's predictions, nothing runs) for %s (%d threads)\n", o->name, joined,
               luthier_context_num_threads(t->ctx));
    else
        printf("tune %s%s%s on %s (%d threads)%s, budget %.0f s\n", o->name, *tune_precision_label(o) ? " " : "", tune_precision_label(o), joined,
               luthier_context_num_threads(t->ctx), o->asym ? ", little cluster loaded by a busy loop" : "", o->budget);
    fflush(stdout);
}

/* Every plan timed together: default, tuned, the rules', then the comparisons asked for
   (split: the big-only and equal-split configurations, owned by the caller). */
static void tune_time_all(const tune_opts *o, tune_ctx *t, const luthier_calibration *cal, luthier_node_config **split,
                          tune_outcome *u) {
    luthier_plan_desc pds[TUNE_MAX_PLANS];
    const char *what[TUNE_MAX_PLANS];
    double ms[TUNE_MAX_PLANS], *dst[TUNE_MAX_PLANS];
    int np = 0, k, nn = luthier_graph_num_nodes(t->g);
    memset(pds, 0, sizeof pds);
    dst[np] = &u->default_ms, what[np++] = "default";
    dst[np] = &u->tuned_ms, pds[np].records = o->records, what[np++] = "tuned";
    dst[np] = &u->rules_ms, pds[np].auto_policy = LUTHIER_AUTO_RULES, what[np++] = "rules";
    if (u->ex_path[0]) dst[np] = &u->ex_ms, pds[np].records = u->ex_path, what[np++] = "exhaustive";
    if (u->rn_path[0]) dst[np] = &u->rn_ms, pds[np].records = u->rn_path, what[np++] = "random";
    if (u->mo_path[0]) dst[np] = &u->mo_ms, pds[np].records = u->mo_path, what[np++] = "model only";
    if (u->np_path[0]) dst[np] = &u->np_ms, pds[np].records = u->np_path, what[np++] = "no prior";
    if (luthier_context_num_threads(t->ctx) > 1) {
        luthier_topology ct;
        luthier_context_topology(t->ctx, &ct);
        if (ct.num_clusters == 2) {
            const float big[2] = {1, 0}, eq[2] = {1, 1};
            split[0] = tune_split_configs(t->g, big, 2);
            split[1] = tune_split_configs(t->g, eq, 2);
            if (split[0] && split[1]) {
                dst[np] = &u->big_ms, pds[np].configs = split[0], pds[np].num_configs = nn, what[np++] = "big only";
                dst[np] = &u->eq_ms, pds[np].configs = split[1], pds[np].num_configs = nn, what[np++] = "equal split";
            }
        }
    }
    for (k = 0; k < np; k++) pds[k].int8 = cal, pds[k].precision = tune_precision(o);
    if (o->int8 || o->fp16 || o->autop) dst[np] = &u->fp32_ms, what[np++] = "fp32"; /* the fp32 default plan: pds[np] is all zero */
    tune_time_plans(t, pds, what, np, &o->pol, ms);
    for (k = 0; k < np; k++) *dst[k] = ms[k];
}

static void tune_print_csv(const tune_opts *o, const tune_ctx *t, const tune_outcome *u) {
    printf("model,threads,tasks,ops,measurements,tuning_s,tuned_ms,default_ms,exhaustive_ms,exhaustive_measurements,"
           "random_ms,random_measurements,bigonly_ms,equal_ms,candidates,reverted,runner_ups%s%s\n",
           o->int8 || o->fp16 || o->autop ? ",fp32_ms" : "", o->monly ? ",modelonly_ms,modelonly_measurements" : "");
    printf("%s,%d,%d,%d,%d,%.1f,%.3f,%.3f,%.3f,%d,%.3f,%d,%.3f,%.3f,%d,%d,%d", o->name, luthier_context_num_threads(t->ctx),
           u->res.tasks, u->res.ops, u->res.measurements, u->res.seconds, u->tuned_ms, u->default_ms, u->ex_ms,
           u->rex.measurements, u->rn_ms, u->rrn.measurements, u->big_ms, u->eq_ms, u->res.candidates, u->res.reverted,
           u->res.runner_ups);
    if (o->int8 || o->fp16 || o->autop) printf(",%.3f", u->fp32_ms);
    if (o->monly) printf(",%.3f,%d", u->mo_ms, u->rmo.measurements);
    printf("\n");
}

static void tune_print_text(const tune_opts *o, const tune_outcome *u) {
    const luthier_tune_result *res = &u->res;
    const double tuned = u->tuned_ms;
    printf("%d ops in %d tasks; %d measurements of a %d-candidate space in %.1f s\n", res->ops, res->tasks,
           res->measurements, res->candidates, res->seconds);
    if (res->plan_default_ms > 0)
        printf("in-plan check: %d tuned tasks reverted to the default, %d took a runner-up; the tuned tasks' steps "
               "took %.2f ms in the default plan, %.2f ms in the winners' one, %.2f ms as chosen\n", res->reverted,
               res->runner_ups, res->plan_default_ms, res->plan_tuned_ms, res->plan_chosen_ms);
    printf("end to end: default %.2f ms, tuned %.2f ms (%.2fx)\n", u->default_ms, tuned, u->default_ms / tuned);
    printf("the rules' default (auto_policy rules, no records): %.2f ms (%.2fx the tuned plan's time; the default, "
           "from the cost model unless $LUTHIER_AUTO says otherwise: %.2fx)\n", u->rules_ms, u->rules_ms / tuned,
           u->default_ms / tuned);
    if (u->fp32_ms > 0)
        printf("fp32 default plan %.2f ms: tuned %s is %.2fx faster\n", u->fp32_ms, tune_precision_label(o), u->fp32_ms / tuned);
    if (o->autop)
        printf("auto precision: %d conv/dense nodes fp16, %d int8; taken back to fp32: %d whose conversions cost more than "
               "they saved, %d by the guard; on the calibration inputs against the fp32 plan: cosine %.6f, max |diff| %.3g\n",
               res->nodes_fp16, res->nodes_int8, res->conversions_dropped, res->guard_dropped, res->guard_cosine, res->guard_max_abs);
    if (u->ex_ms > 0)
        printf("exhaustive search: %.2f ms with %d measurements (tuned is %.1f%% off with %.1f%% of the measurements)\n",
               u->ex_ms, u->rex.measurements, 100.0 * (tuned / u->ex_ms - 1), 100.0 * res->measurements / u->rex.measurements);
    if (u->rn_ms > 0) printf("random search, same measurements: %.2f ms\n", u->rn_ms);
    if (u->mo_ms > 0)
        printf("guided search without the busy times (model only): %.2f ms with %d measurements\n", u->mo_ms, u->rmo.measurements);
    if (u->np_ms > 0)
        printf("guided search without the cost model (first-batch order, feature)%s: %.2f ms with %d measurements (with it: %.2f ms, "
               "%d measurements%s)\n", o->half ? " at the full cap" : "", u->np_ms, u->rnp.measurements, tuned, res->measurements,
               o->half ? " at half the cap" : "");
    if (u->big_ms > 0)
        printf("big cluster only %.2f ms (tuned %.2fx), equal split %.2f ms (tuned %.2fx)\n", u->big_ms, u->big_ms / tuned,
               u->eq_ms, u->eq_ms / tuned);
    printf("records: %s, report: %s, heatmap: %s\n", o->records, o->report, o->heatmap);
}

/* MODEL_CALIB_SAMPLES sets of generated inputs (the calibration's), set k's input i at
   [k * inputs + i]; NULL when out of memory. */
static void **tune_guard_inputs(const luthier_graph *g, void *const *zoo_inputs) {
    const int nin = luthier_graph_num_inputs(g);
    void **in = (void **)calloc((size_t)(MODEL_CALIB_SAMPLES * nin + 1), sizeof *in);
    int k, i, ok = in != NULL && nin <= 64;
    for (k = 0; ok && k < MODEL_CALIB_SAMPLES; k++)
        for (i = 0; ok && i < nin; i++) ok = (in[k * nin + i] = model_calib_input(g, i, k, zoo_inputs[i])) != NULL;
    if (ok) return in;
    for (k = 0; in && k < MODEL_CALIB_SAMPLES * nin; k++) free(in[k]);
    free(in);
    return NULL;
}

static void tune_guard_free(const luthier_graph *g, void **in) {
    int k;
    for (k = 0; in && k < MODEL_CALIB_SAMPLES * luthier_graph_num_inputs(g); k++) free(in[k]);
    free(in);
}

/* The guided search, then the comparison searches asked for. 0 = ok. */
static int tune_search(const tune_opts *o, tune_ctx *t, const luthier_calibration *cal, const void *const *guard, tune_outcome *u) {
    luthier_tune_desc td;
    memset(&td, 0, sizeof td);
    td.budget_seconds = o->budget;
    td.progress = o->quiet || o->csv ? -1 : 1;
    td.report_path = o->report;
    td.heatmap_path = o->heatmap;
    td.int8 = cal;
    td.precision = tune_precision(o);
    td.accuracy_inputs = guard;
    td.num_accuracy_sets = guard ? MODEL_CALIB_SAMPLES : 0;
    td.no_plan_check = o->no_check || o->rank;
    td.offline = o->offline[0] != 0;
    if (td.offline) td.heatmap_path = NULL;
    if (o->rank) td.exhaustive = td.no_dynamic = 1, td.heatmap_path = NULL;
    if (o->half) td.max_fraction = 0.05;
    if (luthier_tune(t->ctx, t->g, &td, o->records, &u->res) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s tune: %s\n", bench_prog, luthier_context_error(t->ctx));
        return 1;
    }
    if (o->rank) return 0;
    if (o->exhaustive) tune_compare(t, &td, 1, o->budget, o->records, ".exhaustive", u->ex_path, sizeof u->ex_path, &u->rex);
    if (o->random) tune_compare(t, &td, 0, o->budget * 4, o->records, ".random", u->rn_path, sizeof u->rn_path, &u->rrn);
    if (o->monly) tune_compare(t, &td, 2, o->budget, o->records, ".modelonly", u->mo_path, sizeof u->mo_path, &u->rmo);
    if (o->noprior) tune_compare(t, &td, 3, o->budget, o->records, ".noprior", u->np_path, sizeof u->np_path, &u->rnp);
    return 0;
}

static int cmd_tune(int argc, char **argv) {
    tune_opts o;
    tune_outcome u;
    tune_ctx t;
    asym_loader loaders[1];
    luthier_calibration *cal = NULL;
    luthier_node_config *split[2] = {NULL, NULL};
    void **guard = NULL;
    int i, rc, loading = 0;
    memset(&o, 0, sizeof o);
    memset(&u, 0, sizeof u);
    memset(&t, 0, sizeof t);
    memset(loaders, 0, sizeof loaders);
    o.cmd = argv[0];
    o.budget = 120;
    o.pol.min_time = 2.0;
    o.pol.rounds = 1;
    u.default_ms = u.tuned_ms = u.rules_ms = -1;
    if ((rc = tune_parse(argc, argv, &o)) >= 0) return rc;
    bench_net_stem(o.name, o.stem, sizeof o.stem);
    if (o.offline[0] && (o.exhaustive || o.random || o.monly || o.noprior || o.rank || o.asym || o.int8 || o.fp16 || o.autop)) {
        bench_usage_error(o.cmd, "--offline predicts fp32 plans: it takes no measuring option (--exhaustive, --random, "
                                 "--model-only, --no-prior-too, --rank, --asym) and no --int8, --fp16 or --precision");
        return BENCH_EXIT_USAGE;
    }
    if (!o.records[0] && o.offline[0])
        snprintf(o.records, sizeof o.records, "build/%s.%s.predicted.records", o.stem, o.offline);
    if (!o.records[0])
        snprintf(o.records, sizeof o.records, "build/%s%s.records", o.stem, o.autop ? ".auto" : o.int8 ? ".int8" : o.fp16 ? ".fp16" : "");
    if (!o.report[0]) snprintf(o.report, sizeof o.report, "build/%s.tune.txt", o.stem);
    if (!o.heatmap[0]) snprintf(o.heatmap, sizeof o.heatmap, "build/%s.heatmap.svg", o.stem);
    if ((rc = tune_context(&o, &t, loaders, &loading)) != 0) goto done;
    if ((rc = model_graph_open("tune", o.name, &t.m, t.bufs, &t.g)) != BENCH_EXIT_OK) goto done;
    /* --int8: calibrated as 'model --int8' does it */
    if (o.int8 && model_calibrate(t.ctx, t.g, t.bufs, LUTHIER_CALIB_MINMAX, "tune", &cal)) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    /* --precision auto: the guard runs on the calibration's generated inputs */
    if (o.autop && !(guard = tune_guard_inputs(t.g, t.bufs))) {
        fprintf(stderr, "%s tune: out of memory\n", bench_prog);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (!o.csv) tune_header(&o, &t);
    if (tune_search(&o, &t, cal, (const void *const *)guard, &u)) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (o.offline[0]) {
        printf("predicted for %s: %d ops in %d tasks, sum over ops %.2f ms default, %.2f ms chosen (%.2fx); nothing "
               "measured\nrecords: %s, report: %s\n", o.offline, u.res.ops, u.res.tasks, u.res.default_ms, u.res.tuned_ms,
               u.res.tuned_ms > 0 ? u.res.default_ms / u.res.tuned_ms : 0.0, o.records, o.report);
        goto done;
    }
    if (o.rank) {
        printf("cost model over %d tasks (%d measurements): median Spearman %.3f, median rank of the fastest %.1f "
               "(per task: %s)\n", u.res.tasks, u.res.measurements, u.res.model_spearman, u.res.model_rank, o.report);
        goto done;
    }
    tune_time_all(&o, &t, cal, split, &u);
    if (loading) {
        loading = 0;
        if (asym_load_stop(loaders, 1)) {
            fprintf(stderr, "%s tune: the busy loop reached its deadline (--load-timeout %.0f s) before the plans were "
                            "timed: these numbers are not of the emulated pair\n", bench_prog, o.load_timeout);
            rc = BENCH_EXIT_FAIL;
        }
    }
    if (o.csv) tune_print_csv(&o, &t, &u);
    else tune_print_text(&o, &u);
done:
    if (loading) asym_load_stop(loaders, 1);
    luthier_calibration_destroy(cal);
    tune_guard_free(t.g, guard);
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
