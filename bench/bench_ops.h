/* luthier-bench ops: every memory-bound operator of the registry as a one-node plan on tensors
   larger than the last-level cache, its step's traffic (luthier_step_info.bytes) per second
   (the step's profiled time: the run also copies the plan's output from its arena to the
   caller's buffer) beside a memcpy of the input's bytes (read + write) in the same rounds: the
   operator's share of the memory bandwidth. Included by luthier_bench.c after luthier.h and
   bench_common.h. */

static void usage_ops(FILE *out) {
    fprintf(out,
            "Usage: %s ops [--threads N] [--reps R] [--min-time S] [--elements N]\n"
            "Every operator of the registry that builds on f32 tensors of one shape with its default\n"
            "attributes (element-wise, activations, comparisons, logic, where, cast, softmax,\n"
            "reductions, data movement), one node per plan, inputs of N floats (default 2^24 = 64 MB,\n"
            "past the last-level cache). Reports the step's time (profiled; 'run ms': the whole\n"
            "luthier_plan_run, whose step writes straight into the caller's output buffer),\n"
            "GB/s from the step's byte count (inputs read once, outputs written once) and\n"
            "its ratio to a memcpy of the input (read + write bytes) timed in the same alternating\n"
            "rounds: 1.0 is copy speed; the goal is >= 0.67 (within 1.5x of the bandwidth).\n",
            bench_prog);
}

/* One operator on n-float inputs: its plan and buffers (plan NULL when the graph refuses it). */
typedef struct ops_case {
    luthier_context *ctx;
    luthier_plan *plan;
    const void *ins[3];
    void *outs[2];
    double bytes;
    double step_min; /* the step's least profiled seconds */
} ops_case;

static int ops_case_run(void *arg) {
    ops_case *c = (ops_case *)arg;
    luthier_step_info si;
    if (luthier_plan_run(c->ctx, c->plan, c->ins, c->outs) != LUTHIER_STATUS_OK) return 1;
    if (luthier_plan_step_info(c->plan, 0, &si) == LUTHIER_STATUS_OK && si.last_seconds > 0 &&
        (c->step_min <= 0 || si.last_seconds < c->step_min))
        c->step_min = si.last_seconds;
    return 0;
}

typedef struct ops_copy {
    const float *src;
    float *dst;
    size_t n;
} ops_copy;

static int ops_copy_run(void *arg) {
    ops_copy *c = (ops_copy *)arg;
    memcpy(c->dst, c->src, c->n * sizeof(float));
    return 0;
}

/* A one-node graph of op over `ni` graph inputs of n floats with its default attributes; 0 when
   the graph or the plan refuses it, or the node is a view that runs no step. */
static int ops_case_try(ops_case *c, luthier_op op, int ni, int64_t n, float *const *bufs, float *out) {
    luthier_graph *g = NULL;
    luthier_node_desc d;
    int in[3], k, o[LUTHIER_MAX_NODE_OUTPUTS], ok = 0;
    const int64_t shape[1] = {n};
    luthier_tensor_info ti;
    luthier_step_info si;
    if (luthier_graph_create(&g) != LUTHIER_STATUS_OK) return 0;
    for (k = 0; k < ni; k++) {
        char name[8];
        snprintf(name, sizeof name, "x%d", k);
        luthier_graph_input(g, name, LUTHIER_DTYPE_F32, 1, shape, &in[k]);
        c->ins[k] = bufs[k];
    }
    memset(&d, 0, sizeof d);
    d.op = op;
    d.typed = 1;
    luthier_node_attrs_default(op, &d.attr);
    d.inputs = in;
    d.num_inputs = ni;
    if (luthier_graph_add_node(g, &d, o) == LUTHIER_STATUS_OK && luthier_graph_tensor_info(g, o[0], &ti) == LUTHIER_STATUS_OK &&
        ti.dtype == LUTHIER_DTYPE_F32 && ti.rank == 1 && ti.shape[0] == n && luthier_graph_output(g, o[0]) == LUTHIER_STATUS_OK &&
        luthier_plan_create(c->ctx, g, NULL, &c->plan) == LUTHIER_STATUS_OK) {
        luthier_plan_info pi;
        c->outs[0] = out;
        luthier_plan_get_info(c->plan, &pi);
        ok = pi.num_steps == 1 && luthier_plan_step_info(c->plan, 0, &si) == LUTHIER_STATUS_OK && si.bytes > 0 &&
             luthier_plan_set_profiling(c->plan, 1) == LUTHIER_STATUS_OK;
        if (ok) c->bytes = si.bytes;
        else luthier_plan_destroy(c->plan), c->plan = NULL; /* a view (no step of its own) */
    }
    luthier_graph_destroy(g);
    return ok;
}

/* The operator with the fewest inputs (1 to 3) it builds with. */
static int ops_case_open(ops_case *c, luthier_op op, int64_t n, float *const *bufs, float *out) {
    int ni;
    for (ni = 1; ni <= 3; ni++)
        if (ops_case_try(c, op, ni, n, bufs, out)) return 1;
    return 0;
}

static int cmd_ops(int argc, char **argv) {
    const char *cmd = argv[0], *val;
    bench_policy pol;
    int threads = 1, i, r, op, rc = BENCH_EXIT_OK;
    int64_t n = (int64_t)1 << 24, v;
    float *bufs[3] = {NULL, NULL, NULL}, *out = NULL;
    ops_copy cp;
    luthier_context *ctx;
    memset(&pol, 0, sizeof pol);
    pol.min_time = 0.3;
    pol.rounds = 3;
    for (i = 1; i < argc; i++) {
        if (bench_is_help(argv[i])) {
            usage_ops(stdout);
            return BENCH_EXIT_OK;
        }
        if ((r = bench_parse_run_option(argc, argv, &i, cmd, &pol, &threads, NULL, NULL)) != 0) {
            if (r < 0) return BENCH_EXIT_USAGE;
            continue;
        }
        if ((r = bench_opt_value(argc, argv, &i, cmd, "--elements", &val)) != 0) {
            if (r < 0 || bench_parse_i64(val, 1024, (int64_t)1 << 28, &v)) {
                bench_usage_error(cmd, "--elements wants an integer in [1024, 2^28]");
                return BENCH_EXIT_USAGE;
            }
            n = v;
            continue;
        }
        bench_usage_error(cmd, "unknown option '%s'", argv[i]);
        return BENCH_EXIT_USAGE;
    }
    if (!(ctx = open_context(cmd, NULL, threads))) return BENCH_EXIT_FAIL;
    for (i = 0; i < 3; i++) bufs[i] = bench_alloc_floats((size_t)n);
    out = bench_alloc_floats((size_t)n);
    if (!bufs[0] || !bufs[1] || !bufs[2] || !out) {
        fprintf(stderr, "%s ops: cannot allocate 4 x %lld floats\n", bench_prog, (long long)n);
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    for (i = 0; i < 3; i++) bench_fill_uniform(bufs[i], (size_t)n, 77u + (uint64_t)i);
    cp.src = bufs[0], cp.dst = out, cp.n = (size_t)n;
    printf("luthier-bench ops: %lld floats per tensor, %d thread(s); memcpy of one input (read + write) as the anchor\n",
           (long long)n, threads);
    printf("  %-20s %-8s %9s %9s %8s %9s %8s\n", "operator", "isa", "ms(min)", "run ms", "GB/s", "copy GB/s", "ratio");
    for (op = 0; op < (int)LUTHIER_OP_COUNT; op++) {
        ops_case c;
        bench_sampler s[2];
        bench_stats so, sc;
        luthier_step_info si;
        memset(&c, 0, sizeof c);
        memset(s, 0, sizeof s);
        c.ctx = ctx;
        if (!ops_case_open(&c, (luthier_op)op, n, bufs, out)) continue;
        if (ops_case_run(&c) == 0) /* checked once, then rounds alternating the operator and the copy */
            for (r = 0; r < pol.rounds; r++) {
                bench_run_round(r % 2 ? ops_copy_run : ops_case_run, r % 2 ? (void *)&cp : (void *)&c, &pol, r, &s[r % 2]);
                bench_run_round(r % 2 ? ops_case_run : ops_copy_run, r % 2 ? (void *)&c : (void *)&cp, &pol, r, &s[1 - r % 2]);
            }
        so = bench_summarize(s[0].t, s[0].n);
        sc = bench_summarize(s[1].t, s[1].n);
        luthier_plan_step_info(c.plan, 0, &si);
        if (so.min > 0 && sc.min > 0 && c.step_min > 0)
            printf("  %-20s %-8s %9.3f %9.3f %8.1f %9.1f %8.2f\n", luthier_op_name((luthier_op)op), si.isa, c.step_min * 1e3,
                   so.min * 1e3, c.bytes / c.step_min * 1e-9, 2.0 * (double)n * 4.0 / sc.min * 1e-9,
                   (c.bytes / c.step_min) / (2.0 * (double)n * 4.0 / sc.min));
        else
            printf("  %-20s failed: %s\n", luthier_op_name((luthier_op)op), luthier_context_error(ctx)), rc = BENCH_EXIT_FAIL;
        fflush(stdout);
        bench_sampler_free(&s[0]);
        bench_sampler_free(&s[1]);
        luthier_plan_destroy(c.plan);
    }
done:
    for (i = 0; i < 3; i++) free(bufs[i]);
    free(out);
    luthier_context_destroy(ctx);
    return rc;
}
