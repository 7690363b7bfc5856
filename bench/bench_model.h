/* luthier-bench model: whole networks of the zoo (luthier_zoo.h) through a plan, against
   PyTorch in the same run (tests/torch_ref.py --time, when python3-torch is installed).
   Included by luthier_bench.c after luthier.h and bench_common.h. */
#include "bench_net.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage_model(FILE *out) {
    fprintf(out,
            "Usage: %s model NAME|MODEL.onnx [options]\n"
            "Latency of a zoo network (batch 1), or of your own ONNX model, planned with default\n"
            "configurations (or records, see --records-dir): min / median over\n"
            "the repetitions, per-layer time breakdown, memory (weights, arena, workspace, sum of all\n"
            "activations), and PyTorch's latency with the same thread count (eager, inference_mode,\n"
            "same weights) when python3 can import torch: tests/torch_ref.py --serve keeps the network\n"
            "built in a child process, and its 20 runs alternate with luthier's in 4 rounds, so a\n"
            "change of machine load hits both.\n"
            "NAME: resnet18 resnet50 resnet101 alexnet vgg16 googlenet mobilenet_v2 bert gpt2\n"
            "      gpt2_decode, each also as NAME_small; 'all' runs every full-size network.\n"
            "MODEL.onnx: an ONNX file; its inputs are generated (f32 uniform in [-1, 1], integer\n"
            "      inputs 1) and PyTorch is not run.\n"
            "Options:\n"
            "  --threads LIST   thread counts, e.g. 1,2 (default: 1 and all CPUs)\n"
            "  --reps N         timed repetitions (default: as many as --min-time allows, >= 3)\n"
            "  --min-time S     seconds of timed runs per contestant (default 2)\n"
            "  --layers N       print the N slowest steps (default 12; 0 = none; -1 = all)\n"
            "  --no-torch       do not run PyTorch\n"
            "  --records-dir D  plan with D/NAME.records when it exists (written by 'tune' or luthier_tune;\n"
            "                   records are per machine and thread count)\n"
            "  --python PATH    interpreter for the PyTorch timing (default $LUTHIER_PYTHON, else\n"
            "                   python3, else /usr/bin/python3)\n"
            "  --csv            one row per (model, threads):\n"
            "                   model,threads,luthier_ms,luthier_median_ms,torch_ms,torch_median_ms,\n"
            "                   speedup,weights_bytes,arena_bytes,sum_activation_bytes,workspace_bytes,gflop\n"
            "  --int8           int8 against fp32 instead of PyTorch: calibrate on 4 generated inputs, plan\n"
            "                   int8 (luthier_plan_desc.int8), time both plans in 5 interleaved rounds, and\n"
            "                   report the speedup, the cosine similarity of the outputs and the per-step\n"
            "                   breakdown of the int8 plan. CSV: model,threads,int8_ms,int8_median_ms,\n"
            "                   fp32_ms,fp32_median_ms,speedup,cosine,int8_convs,convs,calib_ms\n"
            "  --calib M        int8 calibration: minmax (default) or percentile (99.99 %%)\n"
            "  --fp16           the same against an fp16 plan (luthier_plan_desc.precision: dense layers keep\n"
            "                   their weights in fp16; with fp16 arithmetic, convolutions compute in fp16 and\n"
            "                   pass fp16 activations: their steps and the arenas are reported).\n"
            "                   CSV: model,threads,fp16_ms,fp16_median_ms,fp32_ms,\n"
            "                   fp32_median_ms,speedup,cosine,fp16_dense,dense,calib_ms (0)\n"
            "  --precision P    fp32 (default), int8 (= --int8), fp16 (= --fp16), or auto: the plan of\n"
            "                   precision AUTO (each node's from the records of 'tune --precision auto':\n"
            "                   use --records-dir; calibrated as --int8) against fp32. CSV: model,threads,\n"
            "                   auto_ms,auto_median_ms,fp32_ms,fp32_median_ms,speedup,cosine,lowered,layers,calib_ms\n"
            "  --dim NAME=V     an ONNX model's symbolic dimension NAME (batch, sequence, ...) is V\n"
            "  --default-dim V  ... and every other symbolic dimension (default 1)\n",
            bench_prog);
}

typedef struct model_run {
    luthier_context *ctx;
    luthier_plan *plan;
    const void *ins[64];
    void *outs[64];
} model_run;

static int model_once(void *arg) {
    model_run *m = (model_run *)arg;
    return luthier_plan_run(m->ctx, m->plan, m->ins, m->outs) != LUTHIER_STATUS_OK;
}

/* PyTorch in the same run: tests/torch_ref.py --serve NAME in a child process that keeps the
   network built, so its timed batches alternate with luthier's rounds and both see the same
   machine load (this machine's load moves 2-3x within minutes). */
typedef struct torch_session {
    pid_t pid;
    FILE *to, *from;
    bench_sampler ms; /* every PyTorch time so far (ms) */
} torch_session;

static void torch_close(torch_session *ts) {
    if (ts->to) fclose(ts->to); /* end of input: the server exits */
    if (ts->from) fclose(ts->from);
    if (ts->pid > 0) waitpid(ts->pid, NULL, 0);
    bench_sampler_free(&ts->ms);
    memset(ts, 0, sizeof *ts);
}

/* Starts the server with one of the interpreters; 0 once it has printed "ready". */
static int torch_open(torch_session *ts, const char *python, const char *name, int threads) {
    const char *cands[3];
    char line[256], tbuf[16];
    int i, nc = 0;
    memset(ts, 0, sizeof *ts);
    if (python) cands[nc++] = python;
    else {
        if (getenv("LUTHIER_PYTHON")) cands[nc++] = getenv("LUTHIER_PYTHON");
        cands[nc++] = "python3";
        cands[nc++] = "/usr/bin/python3";
    }
    snprintf(tbuf, sizeof tbuf, "%d", threads);
    signal(SIGPIPE, SIG_IGN); /* a server that died is seen as an end of file, not a signal */
    for (i = 0; i < nc; i++) {
        int to[2], from[2];
        if (pipe(to)) return 1;
        if (pipe(from)) {
            close(to[0]);
            close(to[1]);
            return 1;
        }
        fflush(NULL);
        ts->pid = fork();
        if (ts->pid == 0) {
            const int devnull = open("/dev/null", O_WRONLY);
            dup2(to[0], 0);
            dup2(from[1], 1);
            if (devnull >= 0) dup2(devnull, 2);
            close(to[0]);
            close(to[1]);
            close(from[0]);
            close(from[1]);
            execlp(cands[i], cands[i], "tests/torch_ref.py", "--serve", name, "--threads", tbuf, (char *)NULL);
            _exit(127);
        }
        close(to[0]);
        close(from[1]);
        if (ts->pid < 0) {
            close(to[1]);
            close(from[0]);
            ts->pid = 0;
            return 1;
        }
        ts->to = fdopen(to[1], "w");
        ts->from = fdopen(from[0], "r");
        if (ts->to && ts->from && fgets(line, sizeof line, ts->from) && strncmp(line, "ready", 5) == 0) return 0;
        if (!ts->to) close(to[1]);
        if (!ts->from) close(from[0]);
        torch_close(ts);
    }
    return 1;
}

/* Times `reps` PyTorch runs; 0 on success. */
static int torch_batch(torch_session *ts, int reps) {
    static char line[1 << 16];
    char *p, *end;
    if (!ts->to || fprintf(ts->to, "%d\n", reps) < 0 || fflush(ts->to) != 0) return 1;
    if (!fgets(line, sizeof line, ts->from) || strncmp(line, "torch_ms=", 9) != 0) return 1;
    for (p = line + 9;; p = end + 1) {
        const double v = strtod(p, &end);
        if (end == p) break;
        if (bench_sampler_push(&ts->ms, v)) return 1;
        if (*end != ',') break;
    }
    return 0;
}

#define MODEL_ROUNDS 4
#define MODEL_TORCH_REPS 20

typedef struct model_step_time {
    int step;
    double seconds;
} model_step_time;

static int model_cmp_step(const void *a, const void *b) {
    double x = ((const model_step_time *)a)->seconds, y = ((const model_step_time *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Per-step times of m's plan: the fastest of 5 profiled runs (malloc'ed, num_steps entries). */
static double *model_profile(model_run *m, int num_steps) {
    double *best = (double *)malloc(sizeof(double) * (size_t)(num_steps + 1));
    int i, round;
    if (!best) return NULL;
    for (i = 0; i < num_steps; i++) best[i] = 1e30;
    luthier_plan_set_profiling(m->plan, 1);
    for (round = 0; round < 5; round++) {
        model_once(m);
        for (i = 0; i < num_steps; i++) {
            luthier_step_info si;
            luthier_plan_step_info(m->plan, i, &si);
            if (si.last_seconds < best[i]) best[i] = si.last_seconds;
        }
    }
    luthier_plan_set_profiling(m->plan, 0);
    return best;
}

/* The `layers` slowest steps (all when -1), with their share of the sum. */
static void model_print_steps(const luthier_plan *plan, const double *best, int num_steps, int layers) {
    model_step_time *order = (model_step_time *)malloc(sizeof *order * (size_t)(num_steps + 1));
    double total = 0;
    int i, shown = layers < 0 || layers > num_steps ? num_steps : layers;
    if (!order) return;
    for (i = 0; i < num_steps; i++) order[i].step = i, order[i].seconds = best[i], total += best[i];
    qsort(order, (size_t)num_steps, sizeof *order, model_cmp_step);
    printf("  %-28s %-16s %-22s %-26s %8s %6s %8s %7s\n", "step", "op", "fused", "algorithm/kernel", "ms", "%", "GFLOP/s", "GB/s");
    for (i = 0; i < shown; i++) {
        luthier_step_info si;
        char ak[80], opn[24];
        luthier_plan_step_info(plan, order[i].step, &si);
        if (si.op == LUTHIER_OP_CONV2D)
            snprintf(ak, sizeof ak, "%s %s", luthier_conv_algorithm_name(si.algorithm), short_kernel_name(si.kernel));
        else
            snprintf(ak, sizeof ak, "%s", short_kernel_name(si.kernel));
        snprintf(opn, sizeof opn, "%s%s", si.node < 0 ? si.name : luthier_op_name(si.op), si.int8 && si.node >= 0 ? " int8" : "");
        printf("  %-28.28s %-16s %-22.22s %-26.26s %8.3f %6.1f %8.1f %7.1f\n", si.name, opn, si.fused, ak,
               order[i].seconds * 1e3, 100.0 * order[i].seconds / total,
               order[i].seconds > 0 ? si.flops * 1e-9 / order[i].seconds : 0.0,
               order[i].seconds > 0 ? si.bytes * 1e-9 / order[i].seconds : 0.0);
    }
    printf("  sum of steps %.2f ms\n", total * 1e3);
    free(order);
}

/* On m->ctx: the graph of NAME, the input/output buffers (bufs: the inputs, owned) and the
   network's inputs. cmd names the command in messages. */
static int model_graph_open(const char *cmd, const char *name, model_run *m, void **bufs, luthier_graph **g) {
    char err[512];
    int i, nin;
    memset(bufs, 0, sizeof(void *) * 64);
    *g = NULL;
    if (bench_net_build(name, g, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s: %s %s: %s\n", bench_prog, cmd, name, err);
        return BENCH_EXIT_USAGE;
    }
    nin = luthier_graph_num_inputs(*g);
    for (i = 0; i < nin + luthier_graph_num_outputs(*g) && i < 64; i++) {
        int is_out = i >= nin, k = is_out ? i - nin : i, d;
        luthier_tensor_info ti;
        size_t bytes = 1;
        luthier_graph_tensor_info(*g, is_out ? luthier_graph_output_tensor(*g, k) : luthier_graph_input_tensor(*g, k), &ti);
        for (d = 0; d < ti.rank; d++) bytes *= (size_t)ti.shape[d];
        bytes *= ti.dtype == LUTHIER_DTYPE_I64 ? 8 : 4;
        if (is_out) m->outs[k] = malloc(bytes);
        else m->ins[k] = bufs[k] = malloc(bytes);
        if (is_out ? !m->outs[k] : !bufs[k]) return BENCH_EXIT_FAIL;
    }
    if (bench_net_inputs(m->ctx, name, *g, bufs, err, sizeof err) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s: %s %s: inputs: %s\n", bench_prog, cmd, name, err);
        return BENCH_EXIT_FAIL;
    }
    return BENCH_EXIT_OK;
}

/* Context, graph, input/output buffers (bufs: the inputs, owned) and the network's inputs. */
static int model_open(const char *name, int threads, model_run *m, void **bufs, luthier_graph **g) {
    memset(m, 0, sizeof *m);
    memset(bufs, 0, sizeof(void *) * 64);
    *g = NULL;
    if (!(m->ctx = open_context("model", NULL, threads))) return BENCH_EXIT_FAIL;
    return model_graph_open("model", name, m, bufs, g);
}

/* m->plan for g: with records_dir/NAME.records when it exists, int8 with cal. 0 = ok. */
static int model_plan(model_run *m, const luthier_graph *g, const char *name, const char *records_dir, int quiet,
                      const luthier_calibration *cal, luthier_precision prec) {
    luthier_plan_desc pd;
    char rec[600], stem[256];
    memset(&pd, 0, sizeof pd);
    pd.int8 = cal;
    pd.precision = prec;
    if (records_dir) {
        FILE *f;
        snprintf(rec, sizeof rec, "%s/%s.records", records_dir, bench_net_stem(name, stem, sizeof stem));
        if ((f = fopen(rec, "r")) != NULL) {
            fclose(f);
            pd.records = rec;
        } else if (!quiet) {
            printf("  (no %s: default configurations)\n", rec);
        }
    }
    if (luthier_plan_create(m->ctx, g, &pd, &m->plan) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s: model %s: plan: %s\n", bench_prog, name, luthier_context_error(m->ctx));
        m->plan = NULL;
        return 1;
    }
    /* records for another machine or thread count are ignored: say so, or the run silently
       times default configurations */
    if (pd.records && luthier_context_error(m->ctx)[0])
        fprintf(stderr, "%s: model %s: %s\n", bench_prog, name, luthier_context_error(m->ctx));
    return 0;
}

static void model_close(model_run *m, void **bufs, luthier_graph *g) {
    int i;
    for (i = 0; i < 64; i++) {
        free(bufs[i]);
        free(m->outs[i]);
        m->outs[i] = NULL;
    }
    luthier_plan_destroy(m->plan);
    luthier_graph_destroy(g);
    luthier_context_destroy(m->ctx);
    memset(m, 0, sizeof *m);
}

static int model_one(const char *name, int threads, const bench_policy *pol, int layers, int torch, const char *python,
                     int csv, const char *records_dir) {
    luthier_graph *g = NULL;
    luthier_plan_info info;
    model_run m;
    bench_sampler s;
    bench_stats st;
    bench_policy rp;
    torch_session ts;
    double t_create, tmin = 0, tmed = 0, *best = NULL;
    int r, rc = BENCH_EXIT_OK;
    void *bufs[64];
    memset(&s, 0, sizeof s);
    memset(&ts, 0, sizeof ts);
    if ((rc = model_open(name, threads, &m, bufs, &g)) != BENCH_EXIT_OK) goto done;
    t_create = bench_now();
    if (model_plan(&m, g, name, records_dir, csv, NULL, LUTHIER_PRECISION_FP32)) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    t_create = bench_now() - t_create;
    luthier_plan_get_info(m.plan, &info);
    /* warm-up, checked */
    if (model_once(&m)) {
        fprintf(stderr, "%s: model %s: run: %s\n", bench_prog, name, luthier_context_error(m.ctx));
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    /* luthier and PyTorch alternate in MODEL_ROUNDS rounds (PyTorch: MODEL_TORCH_REPS runs in
       all); a PyTorch that fails stops only its own side */
    if (bench_net_is_onnx(name)) torch = 0; /* the zoo's PyTorch twin does not exist */
    if (torch && torch_open(&ts, python, name, threads)) {
        if (!csv) printf("  (PyTorch timing unavailable: install python3-torch python3-torchvision)\n");
        torch = 0;
    }
    rp = *pol;
    rp.rounds = MODEL_ROUNDS;
    for (r = 0; r < MODEL_ROUNDS; r++) {
        if (bench_run_round(model_once, &m, &rp, r, &s) != 0) {
            fprintf(stderr, "%s: model %s: timed run failed: %s\n", bench_prog, name, luthier_context_error(m.ctx));
            rc = BENCH_EXIT_FAIL;
            goto done;
        }
        if (torch && torch_batch(&ts, MODEL_TORCH_REPS / MODEL_ROUNDS)) {
            if (!csv) printf("  (PyTorch stopped answering: its time is left out)\n");
            torch = 0;
        }
        if (torch && threads > 1) { /* PyTorch's OpenMP workers spin a while after each run */
            struct timespec pause = {0, 50000000L};
            nanosleep(&pause, NULL);
        }
    }
    if (s.n == 0) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    st = bench_summarize(s.t, s.n);
    if (torch && ts.ms.n > 0) {
        const bench_stats tst = bench_summarize(ts.ms.t, ts.ms.n);
        tmin = tst.min;
        tmed = tst.median;
    }
    torch_close(&ts);
    if (layers != 0) best = model_profile(&m, info.num_steps);
    if (csv) {
        printf("%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%zu,%zu,%zu,%zu,%.3f\n", name, threads, st.min * 1e3, st.median * 1e3,
               tmin, tmed, tmin > 0 ? tmin / (st.min * 1e3) : 0.0, info.weights_bytes, info.arena_bytes,
               info.sum_activation_bytes, info.workspace_bytes, info.flops * 1e-9);
    } else {
        printf("%s, %d thread%s: luthier %.2f ms min, %.2f ms median (%.1f GFLOP/s, %.2f GFLOP)", name, threads,
               threads > 1 ? "s" : "", st.min * 1e3, st.median * 1e3, info.flops * 1e-9 / st.min, info.flops * 1e-9);
        if (tmin > 0) printf("; PyTorch %.2f / %.2f ms: %.2fx", tmin, tmed, tmin / (st.min * 1e3));
        printf("\n  memory: weights %.1f MB, arena %.2f MB (sum of activations %.2f MB, %.1f%%), workspace %.2f MB; "
               "%d steps; plan created in %.0f ms\n",
               info.weights_bytes / 1e6, info.arena_bytes / 1e6, info.sum_activation_bytes / 1e6,
               info.sum_activation_bytes ? 100.0 * (double)info.arena_bytes / (double)info.sum_activation_bytes : 0.0,
               info.workspace_bytes / 1e6, info.num_steps, t_create * 1e3);
        if (layers != 0 && best) model_print_steps(m.plan, best, info.num_steps, layers);
    }
done:
    torch_close(&ts);
    free(best);
    bench_sampler_free(&s);
    model_close(&m, bufs, g);
    return rc;
}

#define MODEL_CALIB_SAMPLES 4

/* Generated calibration inputs: images are drawn like the zoo's own inputs (uniform in
   [-1, 1) per element) from other streams; other inputs (token ids) are the zoo's. */
static void *model_calib_input(const luthier_graph *g, int i, int sample, const void *zoo_input) {
    luthier_tensor_info ti;
    size_t n = 1, k;
    int d;
    float *x;
    uint64_t st = 0x9E3779B97F4A7C15ull * (uint64_t)(sample + 1);
    luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
    for (d = 0; d < ti.rank; d++) n *= (size_t)ti.shape[d];
    if (ti.dtype != LUTHIER_DTYPE_F32) {
        void *c = malloc(n * 8);
        if (c) memcpy(c, zoo_input, n * 8);
        return c;
    }
    if (!(x = (float *)malloc(n * sizeof(float)))) return NULL;
    for (k = 0; k < n; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        x[k] = (float)((double)(st >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
    return x;
}

/* Calibrates g on MODEL_CALIB_SAMPLES generated inputs (zoo_inputs: the zoo's own, for the
   non-image inputs). 0 = ok; else the message is printed. */
static int model_calibrate(luthier_context *ctx, const luthier_graph *g, void *const *zoo_inputs,
                           luthier_calib_method method, const char *what, luthier_calibration **cal) {
    void *bufs[MODEL_CALIB_SAMPLES][64];
    const void *const *samples[MODEL_CALIB_SAMPLES];
    luthier_calib_desc cd;
    int k, i, ok = 1;
    memset(bufs, 0, sizeof bufs);
    for (k = 0; k < MODEL_CALIB_SAMPLES; k++) {
        for (i = 0; i < luthier_graph_num_inputs(g) && i < 64; i++) ok = ok && (bufs[k][i] = model_calib_input(g, i, k, zoo_inputs[i]));
        samples[k] = (const void *const *)bufs[k];
    }
    memset(&cd, 0, sizeof cd);
    cd.method = method;
    cd.num_samples = MODEL_CALIB_SAMPLES;
    cd.samples = samples;
    if (!ok || luthier_calibrate(ctx, g, &cd, cal) != LUTHIER_STATUS_OK) {
        fprintf(stderr, "%s: %s: calibrate: %s\n", bench_prog, what, ok ? luthier_context_error(ctx) : "out of memory");
        ok = 0;
    }
    for (k = 0; k < MODEL_CALIB_SAMPLES; k++)
        for (i = 0; i < 64; i++) free(bufs[k][i]);
    return !ok;
}

static double model_cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    size_t i;
    for (i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

/* The conv/dense layers a plan of precision lp lowers: fp16 dense layers (fp16 weights), int8
   convolutions, or under AUTO every conv/dense layer in int8 or on a kernel of another family
   than fp32's; step si counted into *layers and *lowered. */
static void model_lowered(const luthier_step_info *si, luthier_precision lp, int *layers, int *lowered) {
    const luthier__kernel_entry *e = luthier__kernel_named(si->kernel);
    if (si->node < 0) return;
    if (lp == LUTHIER_PRECISION_FP16 && si->op == LUTHIER_OP_DENSE) ++*layers, *lowered += e && e->b_bytes == 2;
    if (lp == LUTHIER_PRECISION_INT8 && si->op == LUTHIER_OP_CONV2D) ++*layers, *lowered += si->int8;
    if (lp == LUTHIER_PRECISION_AUTO && (si->op == LUTHIER_OP_CONV2D || si->op == LUTHIER_OP_DENSE))
        ++*layers, *lowered += si->int8 || (e && e->family != LUTHIER_KERNELS_F32);
}

/* --int8, --fp16 or --precision auto (lp): that plan against the fp32 plan of the same graph,
   timed in interleaved rounds. */
static int model_lowp_one(const char *name, int threads, const bench_policy *pol, int layers, int csv,
                          const char *records_dir, luthier_calib_method method, luthier_precision lowp) {
    const char *lp = luthier_precision_name(lowp);
    const int fp16 = lowp == LUTHIER_PRECISION_FP16;
    luthier_graph *g = NULL;
    model_run m8, m32;
    void *bufs[64];
    luthier_calibration *cal = NULL;
    bench_sampler s[2];
    bench_stats st8, st32;
    bench_policy rp = *pol;
    luthier_tensor_info oi;
    double t_cal, cosine, *best = NULL;
    size_t on = 1;
    int i, k, rc = BENCH_EXIT_OK, convs = 0, convs8 = 0, bad = 0, h16_steps = 0, h16_convs = 0, h16_cvt = 0;
    luthier_plan_info info, info32;
    memset(&info, 0, sizeof info);
    memset(&info32, 0, sizeof info32);
    memset(s, 0, sizeof s);
    memset(&m32, 0, sizeof m32);
    if ((rc = model_open(name, threads, &m8, bufs, &g)) != BENCH_EXIT_OK) goto done;
    /* the fp32 contestant shares the context, the graph and the inputs, with its own outputs */
    m32.ctx = m8.ctx;
    for (i = 0; i < 64; i++) m32.ins[i] = m8.ins[i];
    for (i = 0; i < luthier_graph_num_outputs(g); i++) {
        luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &oi);
        for (on = 4, k = 0; k < oi.rank; k++) on *= (size_t)oi.shape[k];
        if (!(m32.outs[i] = malloc(on))) {
            rc = BENCH_EXIT_FAIL;
            goto done;
        }
    }
    t_cal = bench_now();
    if (!fp16 && model_calibrate(m8.ctx, g, bufs, method, name, &cal)) { /* (int8, auto) */
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    t_cal = bench_now() - t_cal;
    if (model_plan(&m32, g, name, records_dir, csv, NULL, LUTHIER_PRECISION_FP32) ||
        model_plan(&m8, g, name, records_dir, 1, cal, lowp == LUTHIER_PRECISION_INT8 ? LUTHIER_PRECISION_DEFAULT : lowp)) {
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    if (model_once(&m32) || model_once(&m8)) {
        fprintf(stderr, "%s: model %s: run: %s\n", bench_prog, name, luthier_context_error(m8.ctx));
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, 0), &oi);
    for (on = 1, k = 0; k < oi.rank; k++) on *= (size_t)oi.shape[k];
    cosine = model_cosine((const float *)m8.outs[0], (const float *)m32.outs[0], on);
    luthier_plan_get_info(m8.plan, &info);
    luthier_plan_get_info(m32.plan, &info32);
    for (i = 0; i < info.num_steps; i++) {
        luthier_step_info si;
        luthier_plan_step_info(m8.plan, i, &si);
        h16_steps += si.fp16, h16_cvt += si.fp16 && si.node < 0, h16_convs += si.fp16 && si.op == LUTHIER_OP_CONV2D;
        model_lowered(&si, lowp, &convs, &convs8);
    }
    rp.rounds = 5;
    for (k = 0; k < rp.rounds && !bad; k++)
        for (i = 0; i < 2 && !bad; i++) {
            int c = (k & 1) ? 1 - i : i;
            bad = bench_run_round(model_once, c ? (void *)&m32 : (void *)&m8, &rp, k, &s[c]) != 0;
        }
    if (bad || !s[0].n || !s[1].n) {
        fprintf(stderr, "%s: model %s: timed run failed: %s\n", bench_prog, name, luthier_context_error(m8.ctx));
        rc = BENCH_EXIT_FAIL;
        goto done;
    }
    st8 = bench_summarize(s[0].t, s[0].n);
    st32 = bench_summarize(s[1].t, s[1].n);
    if (csv) {
        printf("%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.7f,%d,%d,%.1f\n", name, threads, st8.min * 1e3, st8.median * 1e3,
               st32.min * 1e3, st32.median * 1e3, st32.min / st8.min, cosine, convs8, convs, t_cal * 1e3);
    } else {
        printf("%s %s, %d thread%s: %.2f ms min, %.2f ms median; fp32 %.2f / %.2f ms: %.2fx; output cosine %.7f\n",
               name, lp, threads, threads > 1 ? "s" : "", st8.min * 1e3, st8.median * 1e3, st32.min * 1e3,
               st32.median * 1e3, st32.min / st8.min, cosine);
        if (fp16)
            printf("  %d of %d dense layers with fp16 weights (F16W, or F16: fp16 arithmetic); weights %.1f MB, arena %.2f MB, "
                   "%d steps\n", convs8, convs,
                   info.weights_bytes / 1e6, info.arena_bytes / 1e6, info.num_steps);
        if (fp16)
            printf("  fp16 activations (luthier_plan_desc.fp16_activations): %d steps on fp16 values, %d of them "
                   "convolutions, %d conversions; arena %zu bytes (fp32 plan %zu), sum of activations %zu (fp32 plan %zu)\n",
                   h16_steps, h16_convs, h16_cvt, info.arena_bytes, info32.arena_bytes, info.sum_activation_bytes,
                   info32.sum_activation_bytes);
        else if (lowp == LUTHIER_PRECISION_AUTO)
            printf("  %d of %d conv/dense layers below fp32 (the records' precisions%s); calibrated in %.0f ms; weights %.1f MB, "
                   "arena %.2f MB, %d steps\n",
                   convs8, convs, records_dir ? "" : ": none without --records-dir", t_cal * 1e3, info.weights_bytes / 1e6,
                   info.arena_bytes / 1e6, info.num_steps);
        else
            printf("  %d of %d convolutions int8; calibrated (%s, %d generated inputs) in %.0f ms; weights %.1f MB, arena "
                   "%.2f MB, %d steps\n",
                   convs8, convs, method == LUTHIER_CALIB_MINMAX ? "min/max" : "percentile 99.99", MODEL_CALIB_SAMPLES,
                   t_cal * 1e3, info.weights_bytes / 1e6, info.arena_bytes / 1e6, info.num_steps);
        if (layers != 0 && (best = model_profile(&m8, info.num_steps)) != NULL)
            model_print_steps(m8.plan, best, info.num_steps, layers);
    }
done:
    free(best);
    bench_sampler_free(&s[0]);
    bench_sampler_free(&s[1]);
    for (i = 0; i < 64; i++) free(m32.outs[i]);
    luthier_plan_destroy(m32.plan);
    luthier_calibration_destroy(cal);
    model_close(&m8, bufs, g);
    return rc;
}

static int cmd_model(int argc, char **argv) {
    const char *name = NULL, *threads_list = NULL, *python = NULL, *records_dir = NULL, *v;
    bench_policy pol;
    int i, csv = 0, torch = 1, layers = 12, rc = BENCH_EXIT_OK, tl[8], ntl = 0, lowps = 0;
    luthier_precision lowp = LUTHIER_PRECISION_FP32;
    luthier_calib_method method = LUTHIER_CALIB_MINMAX;
    memset(&pol, 0, sizeof pol);
    pol.min_time = 2.0;
    pol.rounds = 1;
    for (i = 1; i < argc; i++) {
        int64_t x;
        int net = bench_net_option(argc, argv, &i, "model");
        if (net < 0) return BENCH_EXIT_USAGE;
        if (net > 0) continue;
        if (bench_is_help(argv[i])) {
            usage_model(stdout);
            return BENCH_EXIT_OK;
        } else if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[i], "--no-torch") == 0) {
            torch = 0;
        } else if (strcmp(argv[i], "--int8") == 0) {
            lowp = LUTHIER_PRECISION_INT8, lowps++;
        } else if (strcmp(argv[i], "--fp16") == 0) {
            lowp = LUTHIER_PRECISION_FP16, lowps++;
        } else if (strcmp(argv[i], "--precision") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--precision", &v) != 1 || luthier_precision_parse(v, &lowp) ||
                lowp == LUTHIER_PRECISION_DEFAULT) {
                bench_usage_error("model", "--precision takes fp32, fp16, int8 or auto");
                return BENCH_EXIT_USAGE;
            }
            lowps += lowp != LUTHIER_PRECISION_FP32;
        } else if (strcmp(argv[i], "--calib") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--calib", &v) != 1 ||
                (strcmp(v, "minmax") != 0 && strcmp(v, "percentile") != 0)) {
                bench_usage_error("model", "--calib takes minmax or percentile");
                return BENCH_EXIT_USAGE;
            }
            method = strcmp(v, "minmax") == 0 ? LUTHIER_CALIB_MINMAX : LUTHIER_CALIB_PERCENTILE;
        } else if (strcmp(argv[i], "--threads") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--threads", &threads_list) != 1) return BENCH_EXIT_USAGE;
        } else if (strcmp(argv[i], "--records-dir") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--records-dir", &records_dir) != 1) return BENCH_EXIT_USAGE;
        } else if (strcmp(argv[i], "--python") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--python", &python) != 1) return BENCH_EXIT_USAGE;
        } else if (strcmp(argv[i], "--reps") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--reps", &v) != 1 || bench_parse_i64(v, 1, 100000, &x)) {
                bench_usage_error("model", "--reps takes an integer in [1, 100000]");
                return BENCH_EXIT_USAGE;
            }
            pol.reps = (long)x;
        } else if (strcmp(argv[i], "--layers") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--layers", &v) != 1 || bench_parse_i64(v, -1, 100000, &x)) {
                bench_usage_error("model", "--layers takes an integer >= -1");
                return BENCH_EXIT_USAGE;
            }
            layers = (int)x;
        } else if (strcmp(argv[i], "--min-time") == 0) {
            if (bench_opt_value(argc, argv, &i, "model", "--min-time", &v) != 1 || bench_parse_double(v, 0.0, 3600.0, &pol.min_time)) {
                bench_usage_error("model", "--min-time takes seconds in [0, 3600]");
                return BENCH_EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            bench_usage_error("model", "unknown option '%s'", argv[i]);
            return BENCH_EXIT_USAGE;
        } else if (!name) {
            name = argv[i];
        } else {
            bench_usage_error("model", "one model name expected, got '%s' after '%s'", argv[i], name);
            return BENCH_EXIT_USAGE;
        }
    }
    if (!name) {
        bench_usage_error("model", "name a model (e.g. resnet18) or 'all'");
        return BENCH_EXIT_USAGE;
    }
    if (threads_list) {
        const char *p = threads_list;
        while (*p && ntl < 8) {
            char *end;
            long t = strtol(p, &end, 10);
            if (end == p || t < 1 || t > LUTHIER_MAX_CPUS) {
                bench_usage_error("model", "--threads takes a list like 1,2");
                return BENCH_EXIT_USAGE;
            }
            tl[ntl++] = (int)t;
            p = *end == ',' ? end + 1 : end;
            if (*end && *end != ',') {
                bench_usage_error("model", "--threads takes a list like 1,2");
                return BENCH_EXIT_USAGE;
            }
        }
    } else {
        luthier_context *c = open_context("model", NULL, 0);
        tl[ntl++] = 1;
        if (c && luthier_context_num_threads(c) > 1) tl[ntl++] = luthier_context_num_threads(c);
        luthier_context_destroy(c);
    }
    if (lowps > 1) {
        bench_usage_error("model", "--int8, --fp16 and --precision exclude each other");
        return BENCH_EXIT_USAGE;
    }
    if (csv && lowp == LUTHIER_PRECISION_INT8)
        printf("model,threads,int8_ms,int8_median_ms,fp32_ms,fp32_median_ms,speedup,cosine,int8_convs,convs,calib_ms\n");
    else if (csv && lowp == LUTHIER_PRECISION_FP16)
        printf("model,threads,fp16_ms,fp16_median_ms,fp32_ms,fp32_median_ms,speedup,cosine,fp16_dense,dense,calib_ms\n");
    else if (csv && lowp == LUTHIER_PRECISION_AUTO)
        printf("model,threads,auto_ms,auto_median_ms,fp32_ms,fp32_median_ms,speedup,cosine,lowered,layers,calib_ms\n");
    else if (csv)
        printf("model,threads,luthier_ms,luthier_median_ms,torch_ms,torch_median_ms,speedup,weights_bytes,arena_bytes,"
               "sum_activation_bytes,workspace_bytes,gflop\n");
    {
        static const char *const all[] = {"resnet18", "resnet50", "resnet101", "alexnet", "vgg16", "googlenet",
                                          "mobilenet_v2", "bert", "gpt2", "gpt2_decode", NULL};
        const char *one[2];
        const char *const *names = all;
        int k;
        if (strcmp(name, "all") != 0) {
            one[0] = name;
            one[1] = NULL;
            names = one;
        }
        for (k = 0; names[k]; k++)
            for (i = 0; i < ntl; i++) {
                int r = lowp != LUTHIER_PRECISION_FP32
                            ? model_lowp_one(names[k], tl[i], &pol, csv ? 0 : layers, csv, records_dir, method, lowp)
                             : model_one(names[k], tl[i], &pol, csv ? 0 : layers, torch, python, csv, records_dir);
                if (r == BENCH_EXIT_USAGE) return r;
                if (r != BENCH_EXIT_OK) rc = r;
                fflush(stdout);
            }
    }
    return rc;
}
