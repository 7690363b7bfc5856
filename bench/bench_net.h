/* The network a `model` or `tune` command works on: a zoo name (luthier_zoo.h), or the user's
   own ONNX model (a NAME ending in ".onnx"), so that a board user can time and tune the network
   they deploy. A model's symbolic dimensions (batch, sequence, ...) take the --dim NAME=VALUE
   values, the others --default-dim (else 1); fixed dimensions come from the model. Its inputs
   are generated: f32 values uniform in [-1, 1] from a fixed seed, integer inputs (token ids,
   attention masks) all 1. Included by luthier_bench.c after luthier.h and bench_common.h. */
#include "../luthier_zoo.h"
#include "../luthier_onnx.h"

#define BENCH_NET_MAX_DIMS 16

typedef struct bench_net {
    luthier_onnx_dim dims[BENCH_NET_MAX_DIMS];
    char names[BENCH_NET_MAX_DIMS][64];
    int num_dims;
    int64_t default_dim; /* 0 = 1 */
} bench_net;

/* The options of the command line being run (the model and tune commands parse them). */
static bench_net bench_net_opts;

static int bench_net_is_onnx(const char *name) {
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".onnx") == 0;
}

/* Parses --dim NAME=VALUE and --default-dim N at argv[*i]: 1 taken, 0 not these options,
   -1 malformed (reported). */
static int bench_net_option(int argc, char **argv, int *i, const char *cmd) {
    const char *v, *eq;
    int64_t x;
    bench_net *o = &bench_net_opts;
    if (strcmp(argv[*i], "--default-dim") == 0) {
        if (bench_opt_value(argc, argv, i, cmd, "--default-dim", &v) != 1 || bench_parse_i64(v, 1, 1 << 20, &x)) {
            bench_usage_error(cmd, "--default-dim takes an integer in [1, 2^20]");
            return -1;
        }
        o->default_dim = x;
        return 1;
    }
    if (strcmp(argv[*i], "--dim") != 0) return 0;
    if (bench_opt_value(argc, argv, i, cmd, "--dim", &v) != 1) return -1;
    eq = strchr(v, '=');
    if (!eq || eq == v || (size_t)(eq - v) >= sizeof o->names[0] || bench_parse_i64(eq + 1, 1, 1 << 20, &x) ||
        o->num_dims == BENCH_NET_MAX_DIMS) {
        bench_usage_error(cmd, "--dim takes NAME=VALUE (VALUE in [1, 2^20], at most %d of them)", BENCH_NET_MAX_DIMS);
        return -1;
    }
    memcpy(o->names[o->num_dims], v, (size_t)(eq - v));
    o->names[o->num_dims][eq - v] = 0;
    o->dims[o->num_dims].name = o->names[o->num_dims];
    o->dims[o->num_dims].value = x;
    o->num_dims++;
    return 1;
}

static luthier_status bench_net_build(const char *name, luthier_graph **g, char *err, size_t n) {
    luthier_onnx_options oo;
    if (!bench_net_is_onnx(name)) {
        luthier_zoo_options zo;
        memset(&zo, 0, sizeof zo);
        return luthier_zoo_build(name, &zo, g, err, n);
    }
    memset(&oo, 0, sizeof oo);
    oo.dims = bench_net_opts.dims;
    oo.num_dims = bench_net_opts.num_dims;
    oo.default_dim = bench_net_opts.default_dim;
    return luthier_onnx_load(name, &oo, g, err, n);
}

/* Fills the graph's inputs (bufs, sized by the caller from the graph): the zoo's for a zoo name. */
static luthier_status bench_net_inputs(luthier_context *ctx, const char *name, const luthier_graph *g, void **bufs,
                                       char *err, size_t n) {
    int i, d;
    if (!bench_net_is_onnx(name)) {
        luthier_zoo_options zo;
        memset(&zo, 0, sizeof zo);
        return luthier_zoo_inputs(ctx, name, &zo, bufs, err, n);
    }
    for (i = 0; i < luthier_graph_num_inputs(g); i++) {
        luthier_tensor_info ti;
        size_t e, numel = 1;
        luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti);
        for (d = 0; d < ti.rank; d++) numel *= (size_t)ti.shape[d];
        for (e = 0; e < numel; e++) /* integers and booleans: 1, in the input's own type */
            if (ti.dtype == LUTHIER_DTYPE_I64) ((int64_t *)bufs[i])[e] = 1;
            else if (ti.dtype == LUTHIER_DTYPE_I32) ((int32_t *)bufs[i])[e] = 1;
            else if (ti.dtype == LUTHIER_DTYPE_BOOL) ((uint8_t *)bufs[i])[e] = 1;
        if (ti.dtype == LUTHIER_DTYPE_F32) bench_fill_uniform((float *)bufs[i], numel, 1000u + (uint64_t)i);
    }
    return LUTHIER_STATUS_OK;
}

/* What records files are named after, written to buf: the zoo name, or the model file's name
   without its directory and ".onnx". */
static const char *bench_net_stem(const char *name, char *buf, size_t n) {
    const char *base = strrchr(name, '/');
    size_t len;
    base = bench_net_is_onnx(name) ? (base ? base + 1 : name) : name;
    len = strlen(base) - (bench_net_is_onnx(name) ? 5 : 0);
    if (len >= n) len = n - 1;
    memcpy(buf, base, len);
    buf[len] = 0;
    return buf;
}
