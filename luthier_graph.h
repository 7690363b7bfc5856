/* luthier_graph.h - graphs and plans: the execution engine of luthier.
   Part of luthier (MIT license, see luthier.h). Include luthier.h, never this file on its own.

   A GRAPH is a network written down: tensors (inputs, constant weights, intermediate values)
   and nodes (operators) in topological order. Each node may only read tensors that exist
   when it is added, so a graph cannot hold a cycle. Shapes are inferred and checked as nodes
   are added; a bad node is refused with a message naming it (luthier_graph_error).

   Shapes and data follow PyTorch/ONNX: row-major, images NCHW. Inside a plan the engine
   keeps 4-D activations of convolutions and pools as NHWC and converts at the edges and in
   front of layout-sensitive operators (flatten, reshape, transpose, matmul, ...), so callers
   always see the logical NCHW order.

   A PLAN binds a graph to a context: one configuration per node (algorithm, kernel, cluster
   ratios: the three knobs), weights packed/transformed once, batch norm folded into the
   preceding convolution, bias + activation (+ residual add) fused into the producing
   convolution or GEMM, and one activation ARENA whose offsets are planned from tensor
   lifetimes. luthier_plan_get_info tells the arena's size before anything runs; with
   luthier_plan_desc.external_arena the caller provides that memory (luthier_plan_bind_arena)
   and luthier_plan_run allocates nothing (the context's workspace is reserved when the plan
   is created).

       luthier_graph *g;  int x, w, y;
       int64_t xs[4] = {1, 3, 224, 224}, ws[4] = {64, 3, 7, 7};
       luthier_graph_create(&g);
       luthier_graph_input(g, "x", LUTHIER_DTYPE_F32, 4, xs, &x);
       luthier_graph_constant(g, "w", 4, ws, weights, 0, &w);
       luthier_node_desc n = {0};  int in[2] = {x, w};
       n.op = LUTHIER_OP_CONV2D; n.name = "conv1"; n.inputs = in; n.num_inputs = 2;
       n.stride[0] = n.stride[1] = 2; n.pads[0] = n.pads[1] = n.pads[2] = n.pads[3] = 3;
       luthier_graph_add_node(g, &n, &y);
       luthier_graph_output(g, y);
       luthier_plan *p;  luthier_plan_desc pd = {0};
       luthier_plan_create(ctx, g, &pd, &p);           // the graph may be destroyed after this
       const float *ins[1] = {image};  float *outs[1] = {result};
       luthier_plan_run(ctx, p, ins, outs);

   TABLE OF CONTENTS: >>api-graph >>api-plan; implementation: >>impl-graph >>impl-plan-layout
   >>impl-plan-fuse >>impl-plan-memory >>impl-plan-create >>impl-plan-run
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_graph.h is part of luthier: include luthier.h instead"
#endif

#ifndef LUTHIER_GRAPH_H_INCLUDED
#define LUTHIER_GRAPH_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* >>api-graph */

#define LUTHIER_MAX_RANK 6

typedef enum luthier_dtype {
    LUTHIER_DTYPE_F32 = 0,
    LUTHIER_DTYPE_I64, /* indices (gather), e.g. token ids */
    LUTHIER_DTYPE_COUNT
} luthier_dtype;

/* Operators: X(ENUM, "name", min inputs, max inputs). Inputs in order; [optional].
   CONV2D       x [N,C,H,W], w [O,C/groups,kh,kw], [bias O]. kernel size from w; stride,
                pads (top, left, bottom, right), dilation, groups; activation fused.
   DENSE        x [..., K], w [N,K] (PyTorch Linear; trans_b = 1: w is [K,N]), [bias N] ->
                [..., N]; activation fused. ONNX Gemm with constant B.
   MATMUL       a [..., M, K] @ b [..., K, N] with batch broadcasting (b may be constant);
                trans_b = 1 reads b as [..., N, K].
   MAXPOOL, AVGPOOL  x [N,C,H,W]; kernel, stride (0 = kernel), pads, dilation (max only),
                ceil_mode, count_include_pad (avg).
   GLOBAL_AVGPOOL [N,C,H,W] -> [N,C,1,1].  ADAPTIVE_AVGPOOL -> [N,C,out_size[0],out_size[1]].
   RELU, CLIP (clamp_min, clamp_max), GELU (approximate = 1: tanh form), SIGMOID, TANH, ERF,
   EXP, SQRT, NEG       element-wise, one input.
   ADD, SUB, MUL, DIV, POW, MAX, MIN   two inputs, numpy broadcasting; activation fused.
   CONCAT       1..64 inputs along axis.  SPLIT  one input along axis into num_outputs parts
                (split_sizes, or equal parts).
   SOFTMAX      along axis (log = 1: log-softmax).
   LAYER_NORM   x, [gamma], [beta]: normalizes the last dims starting at axis (default -1).
   BATCH_NORM   x [N,C,...], scale, bias, mean, var (all constant, C values), epsilon.
   LRN          x [N,C,H,W]; size, alpha, beta, bias (ONNX semantics).
   FLATTEN      to 2-D at axis (default 1).  RESHAPE  to shape (0 = copy that dim, -1 = infer).
   TRANSPOSE    perm (default: reversed dims).  GATHER  data, indices (I64) along axis.
   ATTENTION    q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv] -> [B,H,Sq,Dv]:
                softmax(q k^T * scale + mask) v; scale 0 = 1/sqrt(D); causal = 1: query i sees
                keys j <= i + Skv - Sq (the queries are the last positions, as with a KV cache).
   IDENTITY     copies (dropout at inference). */
#define LUTHIER_OP_LIST(X)                          \
    X(CONV2D, "conv2d", 2, 3)                       \
    X(DENSE, "dense", 2, 3)                         \
    X(MATMUL, "matmul", 2, 2)                       \
    X(MAXPOOL, "maxpool", 1, 1)                     \
    X(AVGPOOL, "avgpool", 1, 1)                     \
    X(GLOBAL_AVGPOOL, "global_avgpool", 1, 1)       \
    X(ADAPTIVE_AVGPOOL, "adaptive_avgpool", 1, 1)   \
    X(RELU, "relu", 1, 1)                           \
    X(CLIP, "clip", 1, 1)                           \
    X(GELU, "gelu", 1, 1)                           \
    X(SIGMOID, "sigmoid", 1, 1)                     \
    X(TANH, "tanh", 1, 1)                           \
    X(ERF, "erf", 1, 1)                             \
    X(EXP, "exp", 1, 1)                             \
    X(SQRT, "sqrt", 1, 1)                           \
    X(NEG, "neg", 1, 1)                             \
    X(ADD, "add", 2, 2)                             \
    X(SUB, "sub", 2, 2)                             \
    X(MUL, "mul", 2, 2)                             \
    X(DIV, "div", 2, 2)                             \
    X(POW, "pow", 2, 2)                             \
    X(MAX, "max", 2, 2)                             \
    X(MIN, "min", 2, 2)                             \
    X(CONCAT, "concat", 1, 64)                      \
    X(SPLIT, "split", 1, 1)                         \
    X(SOFTMAX, "softmax", 1, 1)                     \
    X(LAYER_NORM, "layer_norm", 1, 3)               \
    X(BATCH_NORM, "batch_norm", 5, 5)               \
    X(LRN, "lrn", 1, 1)                             \
    X(FLATTEN, "flatten", 1, 1)                     \
    X(RESHAPE, "reshape", 1, 1)                     \
    X(TRANSPOSE, "transpose", 1, 1)                 \
    X(GATHER, "gather", 2, 2)                       \
    X(ATTENTION, "attention", 3, 3)                 \
    X(IDENTITY, "identity", 1, 1)

typedef enum luthier_op {
#define LUTHIER__X(e, name, lo, hi) LUTHIER_OP_##e,
    LUTHIER_OP_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER_OP_COUNT
} luthier_op;

#define LUTHIER_MAX_NODE_OUTPUTS 64

/* One node. Zero = default for every attribute; only the op's own attributes are read. */
typedef struct luthier_node_desc {
    luthier_op op;
    const char *name;              /* for messages and reports; copied. NULL = "<op>_<index>" */
    const int *inputs;             /* tensor ids; -1 = an absent optional input */
    int num_inputs;
    int num_outputs;               /* SPLIT: number of parts; others 0 (= 1) */
    int64_t kernel[2];             /* pools: kh, kw */
    int64_t stride[2];             /* conv (0 = 1), pools (0 = kernel) */
    int64_t pads[4];               /* top, left, bottom, right */
    int64_t dilation[2];           /* 0 = 1 */
    int64_t groups;                /* conv: 0 = 1 */
    int ceil_mode, count_include_pad;
    int64_t out_size[2];           /* ADAPTIVE_AVGPOOL */
    int axis;                      /* CONCAT, SPLIT, SOFTMAX, GATHER, FLATTEN, LAYER_NORM;
                                      negative counts from the end. FLATTEN 0 = 1;
                                      LAYER_NORM 0 = -1 (last dim) */
    const int64_t *sizes;          /* SPLIT: num_outputs sizes (NULL = equal parts);
                                      RESHAPE: the target shape */
    int num_sizes;                 /* RESHAPE: rank of the target shape */
    const int *perm;               /* TRANSPOSE: rank entries (NULL = reversed) */
    luthier_activation activation; /* CONV2D, DENSE, binary ops: fused activation */
    float clamp_min, clamp_max;    /* CLIP, and activation CLAMP */
    float epsilon;                 /* BATCH_NORM (0 = 1e-5), LAYER_NORM (0 = 1e-5) */
    float alpha, beta, bias;       /* LRN (0 = 1e-4, 0.75, 1.0) */
    int64_t size;                  /* LRN */
    int trans_b;                   /* DENSE, MATMUL */
    int approximate;               /* GELU: 1 = tanh approximation */
    int log;                       /* SOFTMAX */
    int causal;                    /* ATTENTION */
    float scale;                   /* ATTENTION: 0 = 1/sqrt(D) */
} luthier_node_desc;

typedef struct luthier_graph luthier_graph;

LUTHIER_API luthier_status luthier_graph_create(luthier_graph **out);
LUTHIER_API void luthier_graph_destroy(luthier_graph *g); /* NULL is a no-op */
/* What was wrong in the last failed call on g ("" when none). */
LUTHIER_API const char *luthier_graph_error(const luthier_graph *g);
LUTHIER_API const char *luthier_op_name(luthier_op op);

/* A graph input fed at every run. Dimensions >= 1, rank 1..LUTHIER_MAX_RANK. */
LUTHIER_API luthier_status luthier_graph_input(luthier_graph *g, const char *name, luthier_dtype dtype,
                                               int rank, const int64_t *shape, int *tensor);
/* A constant (weights): rank 0..LUTHIER_MAX_RANK (0 = scalar). copy = 0 borrows data, which
   must stay valid and unchanged until the last plan of this graph has been created (plans
   keep their own packed copies); copy != 0 copies it now. */
LUTHIER_API luthier_status luthier_graph_constant(luthier_graph *g, const char *name, int rank,
                                                  const int64_t *shape, const float *data,
                                                  int copy, int *tensor);
LUTHIER_API luthier_status luthier_graph_constant_i64(luthier_graph *g, const char *name, int rank,
                                                      const int64_t *shape, const int64_t *data,
                                                      int *tensor);
/* Adds a node after checking it; writes its output tensor ids to outputs (1, or num_outputs
   for SPLIT). On failure the graph is unchanged. */
LUTHIER_API luthier_status luthier_graph_add_node(luthier_graph *g, const luthier_node_desc *desc,
                                                  int *outputs);
/* Marks a tensor as a graph output (in the order of the calls). */
LUTHIER_API luthier_status luthier_graph_output(luthier_graph *g, int tensor);

typedef struct luthier_tensor_info {
    const char *name;
    luthier_dtype dtype;
    int rank;
    int64_t shape[LUTHIER_MAX_RANK];
    int is_input, is_constant, is_output;
    int producer; /* node index, -1 for inputs and constants */
} luthier_tensor_info;

LUTHIER_API int luthier_graph_num_tensors(const luthier_graph *g);
LUTHIER_API int luthier_graph_num_nodes(const luthier_graph *g);
/* Graph inputs in declaration order and outputs in luthier_graph_output order (the order of
   luthier_plan_run's arrays): the i-th one's tensor id, or -1 when i is out of range. */
LUTHIER_API int luthier_graph_num_inputs(const luthier_graph *g);
LUTHIER_API int luthier_graph_num_outputs(const luthier_graph *g);
LUTHIER_API int luthier_graph_input_tensor(const luthier_graph *g, int i);
LUTHIER_API int luthier_graph_output_tensor(const luthier_graph *g, int i);
LUTHIER_API luthier_status luthier_graph_tensor_info(const luthier_graph *g, int tensor,
                                                     luthier_tensor_info *out);
/* Node i's op, name, inputs/outputs (pointers valid while the graph lives), FLOPs
   (multiply-adds count 2). Any out pointer may be NULL. */
LUTHIER_API luthier_status luthier_graph_node(const luthier_graph *g, int node, luthier_op *op,
                                              const char **name, const int **inputs, int *num_inputs,
                                              const int **outputs, int *num_outputs, double *flops);
/* The node's full descriptor (its arrays point into the graph). */
LUTHIER_API luthier_status luthier_graph_node_desc(const luthier_graph *g, int node,
                                                   luthier_node_desc *out);
LUTHIER_API luthier_status luthier_graph_find_tensor(const luthier_graph *g, const char *name,
                                                     int *tensor);
LUTHIER_API luthier_status luthier_graph_find_node(const luthier_graph *g, const char *name,
                                                   int *node);

/* >>api-plan */

/* One node's configuration: the tuner's three knobs. All zero = defaults. */
typedef struct luthier_node_config {
    luthier_conv_algorithm algorithm; /* CONV2D; AUTO = default choice */
    char kernel[64];                  /* CONV2D, DENSE, MATMUL: microkernel name; "" = default */
    luthier_schedule schedule;
    int num_ratios;                   /* 0 = default split; else one weight per cluster */
    float ratios[LUTHIER_MAX_CLUSTERS];
} luthier_node_config;

typedef struct luthier_plan luthier_plan;
typedef struct luthier_calibration luthier_calibration; /* >>api-int8-plan */

typedef struct luthier_plan_desc {
    /* Per-node configurations indexed by graph node (num_configs = luthier_graph_num_nodes, or
       0 for all defaults). Nodes that are fused away ignore theirs; a fused group runs with
       the configuration of its producing conv/GEMM. */
    const luthier_node_config *configs;
    int num_configs;
    /* A configuration that is not valid for its node (e.g. Winograd on a 1x1 convolution):
       0 = fail with a message naming the node, 1 = fall back to the default for that node. */
    int fallback_invalid;
    /* Or: a records file written by luthier_tune (used when configs is NULL): nodes whose task
       signature and machine fingerprint match get the tuned configuration; a record that no
       longer fits (e.g. another build) falls back to the default. Notes about skipped lines
       are left in luthier_context_error(ctx). */
    const char *records;
    /* Or the same records held in memory (NUL-terminated; used when configs and records are
       NULL): a firmware image carries them as a const array, and no file is opened. */
    const char *records_text;
    int no_fusion;          /* keep batch norm, activations and adds as separate steps */
    int external_arena;     /* do not allocate the arena: bind one with luthier_plan_bind_arena */
    /* int8 inference (see >>api-int8-plan): NULL = fp32 everywhere. Otherwise the nodes whose
       tensors have quantization parameters here run on uint8 activations and int8 weights;
       the rest run in fp32, with quantize/dequantize steps where the two meet. The calibration
       is read during luthier_plan_create only. */
    const luthier_calibration *int8;
} luthier_plan_desc;

typedef struct luthier_plan_info {
    int num_steps;                /* steps run (after fusion and layout conversions) */
    int num_inputs, num_outputs;
    size_t weights_bytes;         /* packed/transformed constants owned by the plan */
    size_t arena_bytes;           /* activation arena */
    size_t sum_activation_bytes;  /* all intermediate tensors, as if none shared memory */
    size_t workspace_bytes;       /* context workspace reserved for the steps */
    double flops;                 /* per run */
} luthier_plan_info;

typedef struct luthier_step_info {
    const char *name;             /* the producing node's name */
    luthier_op op;
    const char *fused;            /* e.g. "batch_norm+relu" or "" */
    int node;                     /* graph node index; -1 for a layout conversion */
    luthier_conv_algorithm algorithm;
    const char *kernel;           /* "" when no microkernel runs */
    luthier_schedule schedule;
    int num_ratios;
    float ratios[LUTHIER_MAX_CLUSTERS];
    double flops;
    double last_seconds;          /* from the last luthier_plan_run with profiling on */
    int int8;                     /* 1: reads or writes uint8 activations (int8 steps, and the
                                     "quantize" / "dequantize" conversions: op IDENTITY, node -1) */
} luthier_step_info;

/* Creates a plan; the graph may be changed or destroyed afterwards. On failure nothing is
   leaked and the context stays usable; the message names the node. */
LUTHIER_API luthier_status luthier_plan_create(luthier_context *ctx, const luthier_graph *g,
                                               const luthier_plan_desc *desc, luthier_plan **out);
LUTHIER_API void luthier_plan_destroy(luthier_plan *p); /* NULL is a no-op */
LUTHIER_API luthier_status luthier_plan_get_info(const luthier_plan *p, luthier_plan_info *out);
LUTHIER_API luthier_status luthier_plan_step_info(const luthier_plan *p, int step,
                                                  luthier_step_info *out);
/* Caller-provided arena: at least arena_bytes, 64-byte aligned; must outlive its use. */
LUTHIER_API luthier_status luthier_plan_bind_arena(luthier_plan *p, void *arena, size_t bytes);
/* Profiling: when on, every step is timed into luthier_step_info.last_seconds. */
LUTHIER_API luthier_status luthier_plan_set_profiling(luthier_plan *p, int on);
/* inputs[i] for the i-th graph input (logical row-major order, dtype as declared);
   outputs[i] receives the i-th graph output. Runs on ctx (any context whose topology matches
   the plan's ratios; the workspace is reserved on the creating context). No allocation when the
   arena is allocated or bound and ctx is the creating context. */
LUTHIER_API luthier_status luthier_plan_run(luthier_context *ctx, luthier_plan *p,
                                            const void *const *inputs, void *const *outputs);

/* >>api-int8-plan
   int8 plans. Activations are uint8, per tensor asymmetric (real = scale * (q - zero_point));
   weights int8, symmetric per output channel (max |w| / 127, computed from the fp32 weights
   after batch norm folding); accumulation int32; requantization as in luthier_int8.h. Which
   node runs int8 in a plan with desc.int8 set:
     conv2d (fused batch norm / ReLU / ReLU6 / clamp)  input and output tensors have params
                          (output without params: dequantized fp32 output)
     dense                input has params (output with params: uint8, else fp32)
     add (+ReLU)          both inputs and the output have params, same shapes (with int8 the
                          residual add is not fused into the convolution: it becomes a
                          quantized add of two uint8 tensors)
     maxpool, avgpool, global/adaptive avgpool   input has params (output: the same params)
     reshape, flatten, identity                  views, any type
   Everything else runs in fp32. Graph inputs and outputs stay fp32: the plan quantizes and
   dequantizes at the edges. Parameters come from a calibration: ranges observed on sample
   inputs (luthier_calibrate), or set one by one (e.g. an ONNX QDQ model's own scales). */

typedef enum luthier_calib_method {
    LUTHIER_CALIB_MINMAX = 0,   /* the smallest and largest value seen */
    LUTHIER_CALIB_PERCENTILE,   /* clip the tails: keep `percentile` % of the values inside */
    LUTHIER_CALIB_METHOD_COUNT
} luthier_calib_method;

typedef struct luthier_calib_desc {
    luthier_calib_method method;
    float percentile;                     /* PERCENTILE: in [50, 100]; 0 = 99.99 */
    int num_samples;                      /* >= 1 */
    const void *const *const *samples;    /* samples[s][i]: graph input i of sample s (fp32) */
} luthier_calib_desc;

/* An empty calibration (no parameters). */
LUTHIER_API luthier_status luthier_calibration_create(luthier_calibration **out);
LUTHIER_API void luthier_calibration_destroy(luthier_calibration *c); /* NULL is a no-op */
/* Runs the samples through an fp32 plan of g (residual adds kept apart, so that the tensors an
   int8 plan materializes are the ones observed) and sets the range of every fp32 tensor the
   engine computes, plus the graph inputs. Writes a new calibration to *out. */
LUTHIER_API luthier_status luthier_calibrate(luthier_context *ctx, const luthier_graph *g,
                                             const luthier_calib_desc *desc,
                                             luthier_calibration **out);
/* Parameters of graph tensor `tensor` from a real range [min, max] (widened to contain 0; uint8
   asymmetric), or given exactly (scale > 0, zero_point 0..255). */
LUTHIER_API luthier_status luthier_calibration_set_range(luthier_calibration *c, int tensor,
                                                         float min, float max);
LUTHIER_API luthier_status luthier_calibration_set_params(luthier_calibration *c, int tensor,
                                                          float scale, int32_t zero_point);
/* NOT_FOUND when the tensor has no parameters. */
LUTHIER_API luthier_status luthier_calibration_get(const luthier_calibration *c, int tensor,
                                                   float *scale, int32_t *zero_point);
LUTHIER_API luthier_status luthier_calibration_remove(luthier_calibration *c, int tensor);
/* Text form, one line per tensor: "<tensor name> <scale> <zero point>" (names of g; '#' starts
   a comment line). load sets the tensors it names (the others keep theirs); an unknown name or
   a malformed line fails (nothing after it is read) with the line number in
   luthier_context_error(ctx). */
LUTHIER_API luthier_status luthier_calibration_save(luthier_context *ctx, const luthier_calibration *c,
                                                    const luthier_graph *g, const char *path);
LUTHIER_API luthier_status luthier_calibration_load(luthier_context *ctx, luthier_calibration *c,
                                                    const luthier_graph *g, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_GRAPH_H_INCLUDED */

#if defined(LUTHIER_GRAPH_IMPLEMENTATION) && !defined(LUTHIER__GRAPH_IMPL_DONE)
#define LUTHIER__GRAPH_IMPL_DONE

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-graph =================================================================================
   A graph is a growing list of tensors and nodes; every node's outputs are created when the node
   is added, so the node list is always in topological order. */

typedef struct luthier__gtensor {
    char *name;
    luthier_dtype dtype;
    int rank;
    int64_t shape[LUTHIER_MAX_RANK];
    int is_input, is_const, is_output;
    int producer;      /* node, -1 for inputs and constants */
    const void *data;  /* constants: borrowed or == owned */
    void *owned;
} luthier__gtensor;

typedef struct luthier__gnode {
    luthier_node_desc d; /* d.name, d.inputs, d.sizes, d.perm point at the copies below */
    char *name;
    int *inputs;
    int *outputs;
    int num_outputs;
    int64_t *sizes;
    int perm[LUTHIER_MAX_RANK];
    double flops;
} luthier__gnode;

struct luthier_graph {
    luthier__gtensor *tensors;
    int num_tensors, cap_tensors;
    luthier__gnode *nodes;
    int num_nodes, cap_nodes;
    int *inputs; /* input tensors in declaration order */
    int num_inputs, cap_inputs;
    int *outputs;
    int num_outputs, cap_outputs;
    char error[320];
};

static const struct { const char *name; int lo, hi; } luthier__ops[] = {
#define LUTHIER__X(e, name, lo, hi) {name, lo, hi},
    LUTHIER_OP_LIST(LUTHIER__X)
#undef LUTHIER__X
};

LUTHIER_API const char *luthier_op_name(luthier_op op) {
    if ((unsigned)op >= (unsigned)LUTHIER_OP_COUNT) return "unknown";
    return luthier__ops[op].name;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
LUTHIER_PRIVATE luthier_status luthier__gfail(luthier_graph *g, luthier_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    return s;
}

LUTHIER_PRIVATE char *luthier__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)luthier__alloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* Grows *arr (elements of size elt) to hold at least need; returns 0 on failure. */
LUTHIER_PRIVATE int luthier__grow(void **arr, int *cap, int need, size_t elt) {
    void *p;
    int n;
    if (need <= *cap) return 1;
    n = *cap ? *cap : 16;
    while (n < need) {
        if (n > INT_MAX / 2) return 0;
        n *= 2;
    }
    if ((size_t)n > SIZE_MAX / elt || !(p = luthier__alloc((size_t)n * elt))) return 0;
    if (*arr) memcpy(p, *arr, (size_t)*cap * elt);
    memset((char *)p + (size_t)*cap * elt, 0, (size_t)(n - *cap) * elt);
    luthier__free(*arr);
    *arr = p;
    *cap = n;
    return 1;
}

LUTHIER_API luthier_status luthier_graph_create(luthier_graph **out) {
    luthier_graph *g;
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    if (!(g = (luthier_graph *)luthier__alloc(sizeof *g))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    memset(g, 0, sizeof *g);
    *out = g;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE void luthier__gnode_free(luthier__gnode *n) {
    luthier__free(n->name);
    luthier__free(n->inputs);
    luthier__free(n->outputs);
    luthier__free(n->sizes);
}

LUTHIER_API void luthier_graph_destroy(luthier_graph *g) {
    int i;
    if (!g) return;
    for (i = 0; i < g->num_tensors; i++) {
        luthier__free(g->tensors[i].name);
        luthier__free(g->tensors[i].owned);
    }
    for (i = 0; i < g->num_nodes; i++) luthier__gnode_free(&g->nodes[i]);
    luthier__free(g->tensors);
    luthier__free(g->nodes);
    luthier__free(g->inputs);
    luthier__free(g->outputs);
    luthier__free(g);
}

LUTHIER_API const char *luthier_graph_error(const luthier_graph *g) { return g ? g->error : "no graph"; }

/* Quantized activations inside int8 plans (never a graph tensor's type). */
#define LUTHIER__DTYPE_U8 ((luthier_dtype)100)

LUTHIER_PRIVATE size_t luthier__dtype_size(luthier_dtype t) {
    return t == LUTHIER_DTYPE_I64 ? 8 : t == LUTHIER__DTYPE_U8 ? 1 : 4;
}

/* Elements of a shape; 0 with *ok = 0 when the product overflows 2^62. */
LUTHIER_PRIVATE uint64_t luthier__numel(int rank, const int64_t *shape, int *ok) {
    uint64_t n = 1;
    int i;
    *ok = 1;
    for (i = 0; i < rank; i++) {
        if (shape[i] < 0 || (shape[i] && n > ((uint64_t)1 << 62) / (uint64_t)shape[i])) {
            *ok = 0;
            return 0;
        }
        n *= (uint64_t)shape[i];
    }
    return n;
}

LUTHIER_PRIVATE void luthier__shape_str(int rank, const int64_t *shape, char *buf, size_t size) {
    size_t used = 0;
    int i;
    buf[0] = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (i = 0; i < rank && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

/* Checks name/rank/shape and appends a tensor; the caller fills the rest. */
LUTHIER_PRIVATE luthier_status luthier__add_tensor(luthier_graph *g, const char *name, luthier_dtype dtype,
                                                   int rank, const int64_t *shape, int min_rank,
                                                   int *index) {
    luthier__gtensor *t;
    int i, ok;
    if (!name || !*name) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor name is empty");
    if ((unsigned)dtype >= (unsigned)LUTHIER_DTYPE_COUNT)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': unknown dtype %d", name, (int)dtype);
    if (rank < min_rank || rank > LUTHIER_MAX_RANK)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': rank %d is not in [%d, %d]",
                              name, rank, min_rank, LUTHIER_MAX_RANK);
    if (rank && !shape) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': shape is NULL", name);
    for (i = 0; i < rank; i++)
        if (shape[i] < 1)
            return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': dimension %d is %lld (must be >= 1)",
                                  name, i, (long long)shape[i]);
    luthier__numel(rank, shape, &ok);
    if (!ok) return luthier__gfail(g, LUTHIER_STATUS_OVERFLOW, "tensor '%s': element count overflows", name);
    for (i = 0; i < g->num_tensors; i++)
        if (strcmp(g->tensors[i].name, name) == 0)
            return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor name '%s' is already used", name);
    if (!luthier__grow((void **)&g->tensors, &g->cap_tensors, g->num_tensors + 1, sizeof *g->tensors))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name);
    t = &g->tensors[g->num_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = luthier__strdup(name))) return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    t->dtype = dtype;
    t->rank = rank;
    for (i = 0; i < rank; i++) t->shape[i] = shape[i];
    t->producer = -1;
    *index = g->num_tensors++;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_graph_input(luthier_graph *g, const char *name, luthier_dtype dtype,
                                               int rank, const int64_t *shape, int *tensor) {
    luthier_status s;
    int t;
    if (!g) return LUTHIER_STATUS_INVALID_ARGUMENT;
    g->error[0] = 0;
    if (!tensor) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "input: tensor is NULL");
    if (!luthier__grow((void **)&g->inputs, &g->cap_inputs, g->num_inputs + 1, sizeof *g->inputs))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    if ((s = luthier__add_tensor(g, name, dtype, rank, shape, 1, &t)) != LUTHIER_STATUS_OK) return s;
    g->tensors[t].is_input = 1;
    g->inputs[g->num_inputs++] = t;
    *tensor = t;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__graph_const(luthier_graph *g, const char *name, luthier_dtype dtype,
                                                    int rank, const int64_t *shape, const void *data,
                                                    int copy, int *tensor) {
    luthier_status s;
    luthier__gtensor *t;
    int i, ok;
    if (!g) return LUTHIER_STATUS_INVALID_ARGUMENT;
    g->error[0] = 0;
    if (!tensor) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "constant: tensor is NULL");
    if (!data) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "constant '%s': data is NULL", name ? name : "");
    if ((s = luthier__add_tensor(g, name, dtype, rank, shape, 0, &i)) != LUTHIER_STATUS_OK) return s;
    t = &g->tensors[i];
    t->is_const = 1;
    t->data = data;
    if (copy) {
        size_t bytes = (size_t)luthier__numel(rank, shape, &ok) * luthier__dtype_size(dtype);
        if (!(t->owned = luthier__alloc(bytes ? bytes : 1))) {
            luthier__free(t->name);
            g->num_tensors--;
            return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "constant '%s': cannot copy %zu bytes", name, bytes);
        }
        memcpy(t->owned, data, bytes);
        t->data = t->owned;
    }
    *tensor = i;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_graph_constant(luthier_graph *g, const char *name, int rank,
                                                  const int64_t *shape, const float *data, int copy,
                                                  int *tensor) {
    return luthier__graph_const(g, name, LUTHIER_DTYPE_F32, rank, shape, data, copy, tensor);
}

LUTHIER_API luthier_status luthier_graph_constant_i64(luthier_graph *g, const char *name, int rank,
                                                      const int64_t *shape, const int64_t *data,
                                                      int *tensor) {
    return luthier__graph_const(g, name, LUTHIER_DTYPE_I64, rank, shape, data, 1, tensor);
}

LUTHIER_API luthier_status luthier_graph_output(luthier_graph *g, int tensor) {
    if (!g) return LUTHIER_STATUS_INVALID_ARGUMENT;
    g->error[0] = 0;
    if (tensor < 0 || tensor >= g->num_tensors)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "output: no tensor %d (the graph has %d)",
                              tensor, g->num_tensors);
    if (g->tensors[tensor].is_output)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "output: tensor '%s' is already an output",
                              g->tensors[tensor].name);
    if (!luthier__grow((void **)&g->outputs, &g->cap_outputs, g->num_outputs + 1, sizeof *g->outputs))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    g->tensors[tensor].is_output = 1;
    g->outputs[g->num_outputs++] = tensor;
    return LUTHIER_STATUS_OK;
}

/* ---- shape inference ---- */

typedef struct luthier__infer {
    int num_outputs;
    int rank[LUTHIER_MAX_NODE_OUTPUTS];
    int64_t shape[LUTHIER_MAX_NODE_OUTPUTS][LUTHIER_MAX_RANK];
    luthier_dtype dtype;
    double flops;
} luthier__infer;

/* Pooling output size, PyTorch rule (ceil_mode: the last window must start inside the input or
   the left padding). Returns < 1 when the window does not fit. */
LUTHIER_PRIVATE int64_t luthier__pool_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1,
                                          int64_t dil, int ceil_mode) {
    int64_t span = in + p0 + p1 - dil * (k - 1) - 1, o;
    if (span < 0) return 0;
    o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0) o--;
    return o;
}

LUTHIER_PRIVATE int luthier__norm_axis(int axis, int rank, int allow_rank) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank - (allow_rank ? 0 : 1)) return -1;
    return axis;
}

#define LUTHIER__NFAIL(...) return luthier__node_fail(g, nname, d->op, __VA_ARGS__)

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
LUTHIER_PRIVATE luthier_status luthier__node_fail(luthier_graph *g, const char *nname, luthier_op op,
                                                  const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "node '%s' (%s): %s", nname,
                          luthier_op_name(op), msg);
}

/* Broadcast of two shapes (numpy rules) into out; returns 0 when incompatible. */
LUTHIER_PRIVATE int luthier__broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro,
                                       int64_t *o) {
    int r = ra > rb ? ra : rb, i;
    for (i = 0; i < r; i++) {
        int64_t x = i < r - ra ? 1 : a[i - (r - ra)], y = i < r - rb ? 1 : b[i - (r - rb)];
        if (x != y && x != 1 && y != 1) return 0;
        o[i] = x == 1 ? y : x;
    }
    *ro = r;
    return 1;
}

LUTHIER_PRIVATE luthier_status luthier__infer_node(luthier_graph *g, const luthier_node_desc *d,
                                                   const char *nname, luthier__infer *r) {
    const luthier__gtensor *in[64] = {NULL};
    const luthier__gtensor *x;
    int i, ni = d->num_inputs, ok;
    char sa[96], sb[96];
    double numel;
    memset(r, 0, sizeof *r);
    r->num_outputs = 1;
    r->dtype = LUTHIER_DTYPE_F32;
    for (i = 0; i < ni; i++) in[i] = d->inputs[i] >= 0 ? &g->tensors[d->inputs[i]] : NULL;
    x = in[0];
    if (!x) LUTHIER__NFAIL("input 0 is absent");
    numel = (double)luthier__numel(x->rank, x->shape, &ok);
    /* inputs other than GATHER's indices are f32 */
    for (i = 0; i < ni; i++)
        if (in[i] && in[i]->dtype != LUTHIER_DTYPE_F32 && !(d->op == LUTHIER_OP_GATHER && i == 1))
            LUTHIER__NFAIL("input %d ('%s') is %s, the operator takes f32", i, in[i]->name,
                           in[i]->dtype == LUTHIER_DTYPE_I64 ? "i64" : "?");
    for (i = 1; i < ni; i++)
        if (!in[i] && !((d->op == LUTHIER_OP_CONV2D || d->op == LUTHIER_OP_DENSE) && i == 2) &&
            !(d->op == LUTHIER_OP_LAYER_NORM))
            LUTHIER__NFAIL("input %d is absent and not optional", i);
    r->rank[0] = x->rank;
    memcpy(r->shape[0], x->shape, sizeof x->shape);
    switch (d->op) {
    case LUTHIER_OP_CONV2D: {
        const luthier__gtensor *w = in[1], *b = ni > 2 ? in[2] : NULL;
        luthier_conv2d_desc cd;
        int64_t oh, ow, groups = d->groups ? d->groups : 1;
        if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, conv2d takes [N,C,H,W]", x->name, x->rank);
        if (w->rank != 4) LUTHIER__NFAIL("weights '%s' have rank %d, conv2d takes [O,C/groups,kh,kw]", w->name, w->rank);
        if (!w->is_const) LUTHIER__NFAIL("weights '%s' must be a constant", w->name);
        if (groups < 1 || x->shape[1] % groups || w->shape[0] % groups)
            LUTHIER__NFAIL("groups %lld must divide the %lld input and %lld output channels",
                           (long long)groups, (long long)x->shape[1], (long long)w->shape[0]);
        if (w->shape[1] * groups != x->shape[1]) {
            luthier__shape_str(4, x->shape, sa, sizeof sa);
            luthier__shape_str(4, w->shape, sb, sizeof sb);
            LUTHIER__NFAIL("input %s has %lld channels, weights %s with groups %lld expect %lld", sa,
                           (long long)x->shape[1], sb, (long long)groups, (long long)(w->shape[1] * groups));
        }
        if (b && (!b->is_const || b->rank != 1 || b->shape[0] != w->shape[0]))
            LUTHIER__NFAIL("bias '%s' must be a constant of %lld values", b->name, (long long)w->shape[0]);
        memset(&cd, 0, sizeof cd);
        cd.batch = x->shape[0]; cd.in_channels = x->shape[1]; cd.in_h = x->shape[2]; cd.in_w = x->shape[3];
        cd.out_channels = w->shape[0]; cd.kernel_h = w->shape[2]; cd.kernel_w = w->shape[3];
        cd.stride_h = d->stride[0]; cd.stride_w = d->stride[1];
        cd.dilation_h = d->dilation[0]; cd.dilation_w = d->dilation[1];
        cd.pad_top = d->pads[0]; cd.pad_left = d->pads[1]; cd.pad_bottom = d->pads[2]; cd.pad_right = d->pads[3];
        cd.groups = groups;
        if (luthier_conv2d_output_size(&cd, &oh, &ow) != LUTHIER_STATUS_OK)
            LUTHIER__NFAIL("stride/padding/dilation do not fit the %lldx%lld input with a %lldx%lld kernel "
                           "(strides and dilations >= 0, pads >= 0)",
                           (long long)x->shape[2], (long long)x->shape[3], (long long)w->shape[2], (long long)w->shape[3]);
        r->shape[0][1] = w->shape[0]; r->shape[0][2] = oh; r->shape[0][3] = ow;
        r->flops = 2.0 * (double)x->shape[0] * (double)w->shape[0] * (double)oh * (double)ow *
                   (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
        break;
    }
    case LUTHIER_OP_DENSE: {
        const luthier__gtensor *w = in[1], *b = ni > 2 ? in[2] : NULL;
        int64_t n, k;
        if (x->rank < 1) LUTHIER__NFAIL("input '%s' is a scalar, dense takes [..., K]", x->name);
        if (w->rank != 2 || !w->is_const) LUTHIER__NFAIL("weights '%s' must be a 2-D constant", w->name);
        n = d->trans_b ? w->shape[1] : w->shape[0];
        k = d->trans_b ? w->shape[0] : w->shape[1];
        if (x->shape[x->rank - 1] != k) {
            luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
            luthier__shape_str(2, w->shape, sb, sizeof sb);
            LUTHIER__NFAIL("input %s has %lld features, weights %s%s take %lld", sa,
                           (long long)x->shape[x->rank - 1], sb, d->trans_b ? " (trans_b)" : "", (long long)k);
        }
        if (b && (!b->is_const || b->rank != 1 || b->shape[0] != n))
            LUTHIER__NFAIL("bias '%s' must be a constant of %lld values", b->name, (long long)n);
        r->shape[0][x->rank - 1] = n;
        r->flops = 2.0 * numel / (double)k * (double)n * (double)k;
        break;
    }
    case LUTHIER_OP_MATMUL: {
        const luthier__gtensor *b = in[1];
        int64_t m, k, kb, n, oshape[LUTHIER_MAX_RANK];
        int orank;
        if (x->rank < 2 || b->rank < 2) LUTHIER__NFAIL("inputs must have rank >= 2 (have %d and %d)", x->rank, b->rank);
        m = x->shape[x->rank - 2]; k = x->shape[x->rank - 1];
        kb = d->trans_b ? b->shape[b->rank - 1] : b->shape[b->rank - 2];
        n = d->trans_b ? b->shape[b->rank - 2] : b->shape[b->rank - 1];
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        luthier__shape_str(b->rank, b->shape, sb, sizeof sb);
        if (k != kb) LUTHIER__NFAIL("%s @ %s%s: inner dimensions %lld and %lld differ", sa, sb,
                                    d->trans_b ? "^T" : "", (long long)k, (long long)kb);
        if (!luthier__broadcast(x->rank - 2, x->shape, b->rank - 2, b->shape, &orank, oshape))
            LUTHIER__NFAIL("%s @ %s: batch dimensions do not broadcast", sa, sb);
        oshape[orank] = m; oshape[orank + 1] = n;
        r->rank[0] = orank + 2;
        memcpy(r->shape[0], oshape, sizeof oshape);
        r->flops = 2.0 * (double)luthier__numel(orank, oshape, &ok) * (double)m * (double)n * (double)k;
        break;
    }
    case LUTHIER_OP_MAXPOOL:
    case LUTHIER_OP_AVGPOOL: {
        int64_t kh = d->kernel[0], kw = d->kernel[1], sh = d->stride[0] ? d->stride[0] : kh,
                sw = d->stride[1] ? d->stride[1] : kw, dh = d->dilation[0] ? d->dilation[0] : 1,
                dw = d->dilation[1] ? d->dilation[1] : 1, oh, ow;
        if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, pools take [N,C,H,W]", x->name, x->rank);
        if (kh < 1 || kw < 1) LUTHIER__NFAIL("kernel %lldx%lld: set kernel[0] and kernel[1] >= 1", (long long)kh, (long long)kw);
        if (sh < 1 || sw < 1 || dh < 1 || dw < 1) LUTHIER__NFAIL("strides and dilations must be >= 1");
        /* bounded as convolutions are, so that (kernel-1)*dilation and the padded size fit int64 */
        if (kh > INT32_MAX || kw > INT32_MAX || sh > INT32_MAX || sw > INT32_MAX || dh > INT32_MAX || dw > INT32_MAX)
            LUTHIER__NFAIL("kernel %lldx%lld, strides %lldx%lld and dilations %lldx%lld must be <= 2^31-1", (long long)kh,
                           (long long)kw, (long long)sh, (long long)sw, (long long)dh, (long long)dw);
        if (d->op == LUTHIER_OP_AVGPOOL && (dh != 1 || dw != 1)) LUTHIER__NFAIL("avgpool takes no dilation");
        for (i = 0; i < 4; i++)
            if (d->pads[i] < 0 || d->pads[i] > INT32_MAX || d->pads[i] > (i & 1 ? (kw - 1) * dw : (kh - 1) * dh))
                LUTHIER__NFAIL("pad %d is %lld: pads must be in [0, (kernel-1)*dilation] and <= 2^31-1", i, (long long)d->pads[i]);
        oh = luthier__pool_out(x->shape[2], kh, sh, d->pads[0], d->pads[2], dh, d->ceil_mode);
        ow = luthier__pool_out(x->shape[3], kw, sw, d->pads[1], d->pads[3], dw, d->ceil_mode);
        if (oh < 1 || ow < 1)
            LUTHIER__NFAIL("a %lldx%lld window does not fit the %lldx%lld input", (long long)kh, (long long)kw,
                           (long long)x->shape[2], (long long)x->shape[3]);
        r->shape[0][2] = oh; r->shape[0][3] = ow;
        r->flops = (double)x->shape[0] * (double)x->shape[1] * (double)oh * (double)ow * (double)(kh * kw);
        break;
    }
    case LUTHIER_OP_GLOBAL_AVGPOOL:
    case LUTHIER_OP_ADAPTIVE_AVGPOOL:
        if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, pools take [N,C,H,W]", x->name, x->rank);
        if (d->op == LUTHIER_OP_ADAPTIVE_AVGPOOL) {
            if (d->out_size[0] < 1 || d->out_size[1] < 1)
                LUTHIER__NFAIL("out_size %lldx%lld: both must be >= 1", (long long)d->out_size[0], (long long)d->out_size[1]);
            r->shape[0][2] = d->out_size[0]; r->shape[0][3] = d->out_size[1];
        } else {
            r->shape[0][2] = r->shape[0][3] = 1;
        }
        r->flops = numel;
        break;
    case LUTHIER_OP_CLIP:
        if (!(d->clamp_min <= d->clamp_max)) LUTHIER__NFAIL("clamp_min %g > clamp_max %g", (double)d->clamp_min, (double)d->clamp_max);
        r->flops = numel;
        break;
    case LUTHIER_OP_RELU: case LUTHIER_OP_GELU: case LUTHIER_OP_SIGMOID: case LUTHIER_OP_TANH:
    case LUTHIER_OP_ERF: case LUTHIER_OP_EXP: case LUTHIER_OP_SQRT: case LUTHIER_OP_NEG:
    case LUTHIER_OP_IDENTITY:
        r->flops = numel;
        break;
    case LUTHIER_OP_ADD: case LUTHIER_OP_SUB: case LUTHIER_OP_MUL: case LUTHIER_OP_DIV:
    case LUTHIER_OP_POW: case LUTHIER_OP_MAX: case LUTHIER_OP_MIN: {
        const luthier__gtensor *b = in[1];
        if (!luthier__broadcast(x->rank, x->shape, b->rank, b->shape, &r->rank[0], r->shape[0])) {
            luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
            luthier__shape_str(b->rank, b->shape, sb, sizeof sb);
            LUTHIER__NFAIL("shapes %s and %s do not broadcast", sa, sb);
        }
        if (r->rank[0] < 1) r->rank[0] = 1, r->shape[0][0] = 1;
        r->flops = (double)luthier__numel(r->rank[0], r->shape[0], &ok);
        break;
    }
    case LUTHIER_OP_CONCAT: {
        int axis = luthier__norm_axis(d->axis, x->rank, 0), j;
        int64_t total = 0;
        if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        for (i = 0; i < ni; i++) {
            if (in[i]->rank != x->rank) LUTHIER__NFAIL("input %d has rank %d, input 0 has %d", i, in[i]->rank, x->rank);
            for (j = 0; j < x->rank; j++)
                if (j != axis && in[i]->shape[j] != x->shape[j]) {
                    luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
                    luthier__shape_str(in[i]->rank, in[i]->shape, sb, sizeof sb);
                    LUTHIER__NFAIL("input %d %s differs from input 0 %s outside axis %d", i, sb, sa, axis);
                }
            total += in[i]->shape[axis];
        }
        r->shape[0][axis] = total;
        r->flops = 0;
        break;
    }
    case LUTHIER_OP_SPLIT: {
        int axis = luthier__norm_axis(d->axis, x->rank, 0), parts = d->num_outputs ? d->num_outputs : 1;
        int64_t total = 0;
        if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        if (parts < 1 || parts > LUTHIER_MAX_NODE_OUTPUTS)
            LUTHIER__NFAIL("num_outputs %d is not in [1, %d]", parts, LUTHIER_MAX_NODE_OUTPUTS);
        if (!d->sizes && x->shape[axis] % parts)
            LUTHIER__NFAIL("dimension %lld does not split into %d equal parts (give sizes)", (long long)x->shape[axis], parts);
        r->num_outputs = parts;
        for (i = 0; i < parts; i++) {
            int64_t len = d->sizes ? d->sizes[i] : x->shape[axis] / parts;
            if (len < 1) LUTHIER__NFAIL("part %d has size %lld (must be >= 1)", i, (long long)len);
            if (len > x->shape[axis] - total) /* (checked before adding: the sum cannot overflow) */
                LUTHIER__NFAIL("sizes add up to more than the axis (%lld) at part %d", (long long)x->shape[axis], i);
            total += len;
            r->rank[i] = x->rank;
            memcpy(r->shape[i], x->shape, sizeof x->shape);
            r->shape[i][axis] = len;
        }
        if (total != x->shape[axis])
            LUTHIER__NFAIL("sizes add up to %lld, the axis has %lld", (long long)total, (long long)x->shape[axis]);
        break;
    }
    case LUTHIER_OP_SOFTMAX:
        if (luthier__norm_axis(d->axis, x->rank, 0) < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        r->flops = 5 * numel;
        break;
    case LUTHIER_OP_LAYER_NORM: {
        int axis = luthier__norm_axis(d->axis ? d->axis : -1, x->rank, 0);
        if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        for (i = 1; i < ni; i++) {
            const luthier__gtensor *p = in[i];
            int j;
            if (!p) continue;
            if (!p->is_const) LUTHIER__NFAIL("%s '%s' must be a constant", i == 1 ? "gamma" : "beta", p->name);
            ok = p->rank == x->rank - axis;
            for (j = 0; ok && j < p->rank; j++) ok = p->shape[j] == x->shape[axis + j];
            if (!ok) {
                luthier__shape_str(p->rank, p->shape, sa, sizeof sa);
                luthier__shape_str(x->rank - axis, x->shape + axis, sb, sizeof sb);
                LUTHIER__NFAIL("%s '%s' is %s, the normalized dims are %s", i == 1 ? "gamma" : "beta", p->name, sa, sb);
            }
        }
        r->flops = 8 * numel;
        break;
    }
    case LUTHIER_OP_BATCH_NORM:
        if (x->rank < 2) LUTHIER__NFAIL("input '%s' has rank %d, batch_norm takes [N,C,...]", x->name, x->rank);
        for (i = 1; i < 5; i++)
            if (!in[i]->is_const || in[i]->rank != 1 || in[i]->shape[0] != x->shape[1])
                LUTHIER__NFAIL("parameter %d ('%s') must be a constant of %lld values", i, in[i]->name, (long long)x->shape[1]);
        r->flops = 2 * numel;
        break;
    case LUTHIER_OP_LRN:
        if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, lrn takes [N,C,H,W]", x->name, x->rank);
        if (d->size < 1 || d->size > INT32_MAX) LUTHIER__NFAIL("size %lld must be in [1, 2^31-1]", (long long)d->size);
        r->flops = (double)(2 * d->size + 4) * numel;
        break;
    case LUTHIER_OP_FLATTEN: {
        int axis = luthier__norm_axis(d->axis ? d->axis : 1, x->rank, 1);
        if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        r->rank[0] = 2;
        r->shape[0][0] = (int64_t)luthier__numel(axis, x->shape, &ok);
        r->shape[0][1] = (int64_t)luthier__numel(x->rank - axis, x->shape + axis, &ok);
        break;
    }
    case LUTHIER_OP_RESHAPE: {
        int infer = -1;
        int64_t known = 1;
        if (!d->sizes || d->num_sizes < 1 || d->num_sizes > LUTHIER_MAX_RANK)
            LUTHIER__NFAIL("the target shape needs sizes and 1 <= num_sizes <= %d", LUTHIER_MAX_RANK);
        r->rank[0] = d->num_sizes;
        for (i = 0; i < d->num_sizes; i++) {
            int64_t v = d->sizes[i];
            if (v == 0) {
                if (i >= x->rank) LUTHIER__NFAIL("size %d is 0 (copy) but the input has rank %d", i, x->rank);
                v = x->shape[i];
            } else if (v == -1) {
                if (infer >= 0) LUTHIER__NFAIL("more than one size is -1");
                infer = i;
                v = 1;
            } else if (v < 1) {
                LUTHIER__NFAIL("size %d is %lld", i, (long long)v);
            }
            r->shape[0][i] = v;
            if (v > ((int64_t)1 << 62) / known) /* no tensor has that many elements */
                LUTHIER__NFAIL("sizes multiply past 2^62 elements (the input has %.0f)", numel);
            known *= v;
        }
        if (infer >= 0) {
            if ((int64_t)numel % known) LUTHIER__NFAIL("cannot infer the -1 size: %.0f elements over %lld", numel, (long long)known);
            r->shape[0][infer] = (int64_t)numel / known;
            known *= r->shape[0][infer];
        }
        if ((double)known != numel) {
            luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
            luthier__shape_str(r->rank[0], r->shape[0], sb, sizeof sb);
            LUTHIER__NFAIL("cannot reshape %s to %s (element counts differ)", sa, sb);
        }
        break;
    }
    case LUTHIER_OP_TRANSPOSE: {
        int seen[LUTHIER_MAX_RANK] = {0};
        for (i = 0; i < x->rank; i++) {
            int p = d->perm ? d->perm[i] : x->rank - 1 - i;
            if (p < 0 || p >= x->rank || seen[p]) LUTHIER__NFAIL("perm is not a permutation of 0..%d", x->rank - 1);
            seen[p] = 1;
            r->shape[0][i] = x->shape[p];
        }
        break;
    }
    case LUTHIER_OP_GATHER: {
        const luthier__gtensor *idx = in[1];
        int axis = luthier__norm_axis(d->axis, x->rank, 0), j = 0;
        if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->axis, x->rank);
        if (idx->dtype != LUTHIER_DTYPE_I64) LUTHIER__NFAIL("indices '%s' must be i64", idx->name);
        if (x->rank - 1 + idx->rank > LUTHIER_MAX_RANK) LUTHIER__NFAIL("output rank exceeds %d", LUTHIER_MAX_RANK);
        if (idx->is_const) {
            const int64_t *v = (const int64_t *)idx->data;
            uint64_t n = luthier__numel(idx->rank, idx->shape, &ok), e;
            for (e = 0; e < n; e++)
                if (v[e] < -x->shape[axis] || v[e] >= x->shape[axis])
                    LUTHIER__NFAIL("index %lld at position %llu is out of range [-%lld, %lld)", (long long)v[e],
                                   (unsigned long long)e, (long long)x->shape[axis], (long long)x->shape[axis]);
        }
        for (i = 0; i < axis; i++) r->shape[0][j++] = x->shape[i];
        for (i = 0; i < idx->rank; i++) r->shape[0][j++] = idx->shape[i];
        for (i = axis + 1; i < x->rank; i++) r->shape[0][j++] = x->shape[i];
        r->rank[0] = j;
        if (j == 0) r->rank[0] = 1, r->shape[0][0] = 1;
        break;
    }
    case LUTHIER_OP_ATTENTION: {
        const luthier__gtensor *k = in[1], *v = in[2];
        int rk = x->rank;
        if (rk < 3 || k->rank != rk || v->rank != rk) LUTHIER__NFAIL("q, k, v must have one rank >= 3 ([..., S, D])");
        for (i = 0; i < rk - 2; i++)
            if (k->shape[i] != x->shape[i] || v->shape[i] != x->shape[i]) LUTHIER__NFAIL("q, k, v batch dimensions differ");
        if (k->shape[rk - 1] != x->shape[rk - 1]) LUTHIER__NFAIL("q and k head sizes differ (%lld, %lld)",
                                                                 (long long)x->shape[rk - 1], (long long)k->shape[rk - 1]);
        if (v->shape[rk - 2] != k->shape[rk - 2]) LUTHIER__NFAIL("k and v lengths differ (%lld, %lld)",
                                                                 (long long)k->shape[rk - 2], (long long)v->shape[rk - 2]);
        if (d->causal && k->shape[rk - 2] < x->shape[rk - 2])
            LUTHIER__NFAIL("causal attention needs at least as many keys (%lld) as queries (%lld)",
                           (long long)k->shape[rk - 2], (long long)x->shape[rk - 2]);
        if (d->scale < 0 || d->scale != d->scale) LUTHIER__NFAIL("scale %g must be >= 0 (0 = 1/sqrt(D))", (double)d->scale);
        r->shape[0][rk - 1] = v->shape[rk - 1];
        r->flops = 2.0 * numel / (double)x->shape[rk - 1] * (double)k->shape[rk - 2] *
                   (double)(x->shape[rk - 1] + v->shape[rk - 1]);
        break;
    }
    default:
        LUTHIER__NFAIL("unknown operator %d", (int)d->op);
    }
    if ((d->op == LUTHIER_OP_CONV2D || d->op == LUTHIER_OP_DENSE ||
         (d->op >= LUTHIER_OP_ADD && d->op <= LUTHIER_OP_MIN)) &&
        ((unsigned)d->activation >= (unsigned)LUTHIER_ACTIVATION_COUNT ||
         (d->activation == LUTHIER_ACTIVATION_CLAMP && !(d->clamp_min <= d->clamp_max))))
        LUTHIER__NFAIL("bad activation %d (or clamp_min > clamp_max)", (int)d->activation);
    return LUTHIER_STATUS_OK;
}
#undef LUTHIER__NFAIL

LUTHIER_API luthier_status luthier_graph_add_node(luthier_graph *g, const luthier_node_desc *desc,
                                                  int *outputs) {
    luthier__infer r;
    luthier__gnode *n;
    luthier_status s;
    char defname[64], oname[320];
    const char *nname;
    int i, first_tensor;
    if (!g) return LUTHIER_STATUS_INVALID_ARGUMENT;
    g->error[0] = 0;
    if (!desc || !outputs) return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "add_node: desc or outputs is NULL");
    if ((unsigned)desc->op >= (unsigned)LUTHIER_OP_COUNT)
        return luthier__gfail(g, LUTHIER_STATUS_NOT_FOUND, "node '%s': unknown operator %d",
                              desc->name ? desc->name : "?", (int)desc->op);
    snprintf(defname, sizeof defname, "%s_%d", luthier__ops[desc->op].name, g->num_nodes);
    nname = desc->name && *desc->name ? desc->name : defname;
    for (i = 0; i < g->num_nodes; i++)
        if (strcmp(g->nodes[i].name, nname) == 0)
            return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "node name '%s' is already used", nname);
    if (desc->num_inputs < luthier__ops[desc->op].lo || desc->num_inputs > luthier__ops[desc->op].hi)
        return luthier__node_fail(g, nname, desc->op, "%d inputs given, the operator takes %d to %d",
                                  desc->num_inputs, luthier__ops[desc->op].lo, luthier__ops[desc->op].hi);
    if (!desc->inputs) return luthier__node_fail(g, nname, desc->op, "inputs is NULL");
    for (i = 0; i < desc->num_inputs; i++)
        if (desc->inputs[i] < -1 || desc->inputs[i] >= g->num_tensors)
            return luthier__node_fail(g, nname, desc->op, "input %d is tensor %d, which does not exist (the graph has %d)",
                                      i, desc->inputs[i], g->num_tensors);
    if (desc->op != LUTHIER_OP_SPLIT && desc->num_outputs > 1)
        return luthier__node_fail(g, nname, desc->op, "num_outputs %d: only split has several outputs", desc->num_outputs);
    if ((s = luthier__infer_node(g, desc, nname, &r)) != LUTHIER_STATUS_OK) return s;
    if (!luthier__grow((void **)&g->nodes, &g->cap_nodes, g->num_nodes + 1, sizeof *g->nodes))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    n = &g->nodes[g->num_nodes];
    memset(n, 0, sizeof *n);
    n->d = *desc;
    n->num_outputs = r.num_outputs;
    n->flops = r.flops;
    if (!(n->name = luthier__strdup(nname)) ||
        !(n->inputs = (int *)luthier__alloc(sizeof(int) * (size_t)desc->num_inputs)) ||
        !(n->outputs = (int *)luthier__alloc(sizeof(int) * (size_t)r.num_outputs)) ||
        (desc->sizes && (desc->op == LUTHIER_OP_SPLIT || desc->op == LUTHIER_OP_RESHAPE) &&
         !(n->sizes = (int64_t *)luthier__alloc(sizeof(int64_t) * (size_t)(desc->op == LUTHIER_OP_SPLIT ? r.num_outputs : desc->num_sizes))))) {
        luthier__gnode_free(n);
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(n->inputs, desc->inputs, sizeof(int) * (size_t)desc->num_inputs);
    if (n->sizes)
        memcpy(n->sizes, desc->sizes, sizeof(int64_t) * (size_t)(desc->op == LUTHIER_OP_SPLIT ? r.num_outputs : desc->num_sizes));
    if (desc->op == LUTHIER_OP_TRANSPOSE) {
        int rk = g->tensors[desc->inputs[0]].rank;
        for (i = 0; i < rk; i++) n->perm[i] = desc->perm ? desc->perm[i] : rk - 1 - i;
        n->d.perm = n->perm;
    } else {
        n->d.perm = NULL;
    }
    n->d.name = n->name;
    n->d.inputs = n->inputs;
    n->d.sizes = n->sizes;
    n->d.num_outputs = r.num_outputs;
    first_tensor = g->num_tensors;
    for (i = 0; i < r.num_outputs; i++) {
        int t;
        if (r.num_outputs == 1) snprintf(oname, sizeof oname, "%s", nname);
        else snprintf(oname, sizeof oname, "%s:%d", nname, i);
        s = luthier__add_tensor(g, oname, r.dtype, r.rank[i], r.shape[i], 1, &t);
        if (s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(g->error, "already used")) {
            snprintf(oname + strlen(oname), sizeof oname - strlen(oname), "#%d", g->num_tensors);
            s = luthier__add_tensor(g, oname, r.dtype, r.rank[i], r.shape[i], 1, &t);
        }
        if (s != LUTHIER_STATUS_OK) {
            while (g->num_tensors > first_tensor) luthier__free(g->tensors[--g->num_tensors].name);
            luthier__gnode_free(n);
            return s;
        }
        g->tensors[t].producer = g->num_nodes;
        n->outputs[i] = t;
        outputs[i] = t;
    }
    g->num_nodes++;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API int luthier_graph_num_tensors(const luthier_graph *g) { return g ? g->num_tensors : 0; }
LUTHIER_API int luthier_graph_num_nodes(const luthier_graph *g) { return g ? g->num_nodes : 0; }
LUTHIER_API int luthier_graph_num_inputs(const luthier_graph *g) { return g ? g->num_inputs : 0; }
LUTHIER_API int luthier_graph_num_outputs(const luthier_graph *g) { return g ? g->num_outputs : 0; }
LUTHIER_API int luthier_graph_input_tensor(const luthier_graph *g, int i) {
    return g && i >= 0 && i < g->num_inputs ? g->inputs[i] : -1;
}
LUTHIER_API int luthier_graph_output_tensor(const luthier_graph *g, int i) {
    return g && i >= 0 && i < g->num_outputs ? g->outputs[i] : -1;
}

LUTHIER_API luthier_status luthier_graph_tensor_info(const luthier_graph *g, int tensor,
                                                     luthier_tensor_info *out) {
    const luthier__gtensor *t;
    if (!g || !out || tensor < 0 || tensor >= g->num_tensors) return LUTHIER_STATUS_INVALID_ARGUMENT;
    t = &g->tensors[tensor];
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->dtype = t->dtype;
    out->rank = t->rank;
    memcpy(out->shape, t->shape, sizeof t->shape);
    out->is_input = t->is_input;
    out->is_constant = t->is_const;
    out->is_output = t->is_output;
    out->producer = t->producer;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_graph_node(const luthier_graph *g, int node, luthier_op *op,
                                              const char **name, const int **inputs, int *num_inputs,
                                              const int **outputs, int *num_outputs, double *flops) {
    const luthier__gnode *n;
    if (!g || node < 0 || node >= g->num_nodes) return LUTHIER_STATUS_INVALID_ARGUMENT;
    n = &g->nodes[node];
    if (op) *op = n->d.op;
    if (name) *name = n->name;
    if (inputs) *inputs = n->inputs;
    if (num_inputs) *num_inputs = n->d.num_inputs;
    if (outputs) *outputs = n->outputs;
    if (num_outputs) *num_outputs = n->num_outputs;
    if (flops) *flops = n->flops;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_graph_node_desc(const luthier_graph *g, int node,
                                                   luthier_node_desc *out) {
    if (!g || !out || node < 0 || node >= g->num_nodes) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = g->nodes[node].d;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_graph_find_tensor(const luthier_graph *g, const char *name, int *tensor) {
    int i;
    if (!g || !name || !tensor) return LUTHIER_STATUS_INVALID_ARGUMENT;
    for (i = 0; i < g->num_tensors; i++)
        if (strcmp(g->tensors[i].name, name) == 0) {
            *tensor = i;
            return LUTHIER_STATUS_OK;
        }
    return LUTHIER_STATUS_NOT_FOUND;
}

LUTHIER_API luthier_status luthier_graph_find_node(const luthier_graph *g, const char *name, int *node) {
    int i;
    if (!g || !name || !node) return LUTHIER_STATUS_INVALID_ARGUMENT;
    for (i = 0; i < g->num_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) {
            *node = i;
            return LUTHIER_STATUS_OK;
        }
    return LUTHIER_STATUS_NOT_FOUND;
}


/* >>impl-plan-layout ==========================================================================
   Plan values: one per graph tensor plus layout twins. A value lives in the arena, in a graph
   input (the caller's buffer) or in a plan-owned constant; views (reshape, flatten, identity,
   layout twins whose memory order coincides) and in-place results alias another value. */

enum { LUTHIER__PLAIN = 0, LUTHIER__NHWC = 1 };
enum { LUTHIER__ST_NONE = 0, LUTHIER__ST_ARENA, LUTHIER__ST_INPUT, LUTHIER__ST_CONST };
enum { LUTHIER__STEP_NODE = 0, LUTHIER__STEP_CONVERT, LUTHIER__STEP_QUANTIZE, LUTHIER__STEP_DEQUANTIZE };

typedef struct luthier__pval {
    luthier_dtype dtype;
    int rank;
    int64_t shape[LUTHIER_MAX_RANK]; /* logical */
    int layout;
    size_t bytes;
    int storage;
    int input_index;                 /* ST_INPUT */
    const void *cdata;               /* ST_CONST (plan-owned once the plan is built) */
    int owned;                       /* cdata belongs to the plan */
    int alias;                       /* value whose memory this one is (-1 = its own) */
    int first, last;                 /* steps that produce / last read it (root: all aliases) */
    size_t offset;                   /* ST_ARENA roots */
    int twin;                        /* the same tensor in the other layout, -1 */
    int tensor;                      /* the graph tensor this value holds, -1 */
    int qtwin;                       /* the same tensor as uint8 (of an fp32 value) or fp32, -1 */
    float qscale;                    /* LUTHIER__DTYPE_U8: real = qscale * (q - qzero) */
    int32_t qzero;
} luthier__pval;

typedef struct luthier__pstep {
    int kind;
    int node;                        /* graph node, -1 for conversions */
    luthier_node_desc d;             /* the node's attributes (pointers cleared) */
    int perm[LUTHIER_MAX_RANK];
    int nin, nout;
    int *in, *out;                   /* values */
    luthier_activation act;
    float cmin, cmax;
    int residual;                    /* value added (accumulate), -1 */
    int residual_aliased;            /* the output already holds it (in place) */
    luthier_node_config cfg;
    char fused[48];
    char name[64];
    luthier_conv2d_layer *conv;
    luthier__prefetch_region next;   /* CONV2D: the first B block of the next conv step, which
                                        this one prefetches as it ends (b = NULL: none) */
    luthier_packed_b *pb;
    const float *bias, *scale, *shift; /* plan-owned */
    const char *kernel;              /* microkernel name or "" */
    int kernel_index;                /* MATMUL: registry index */
    luthier__packed_b_layout bl;     /* MATMUL: one batch's packed B */
    float *packed;                   /* MATMUL: plan-owned packed B (scratch, or B itself when constant) */
    int b_prepacked;                 /* MATMUL: B constant without batch: packed at create time */
    luthier_conv_algorithm algorithm;
    double flops, seconds;
    luthier_qconv2d_layer *qconv;    /* int8 conv2d / dense */
    int q;                           /* runs on uint8 values */
    int32_t qmin, qmax;              /* int8 add: quantized clamp of the fused activation */
} luthier__pstep;

struct luthier_plan {
    luthier__pval *vals;
    int num_vals, cap_vals;
    luthier__pstep *steps;
    int num_steps, cap_steps;
    int num_inputs, num_outputs;
    int *inputs;                     /* values of the graph inputs */
    luthier_dtype *input_dtypes;
    int *outputs;                    /* values copied out at the end */
    void **blobs;                    /* plan-owned memory */
    int num_blobs, cap_blobs;
    int num_clusters;
    void *arena;
    int arena_owned;
    size_t arena_bytes, sum_activation_bytes, workspace_bytes, weights_bytes;
    double flops;
    int profiling;
    /* luthier_calibrate: called with every fp32 value of a graph tensor the run computes */
    void (*observe)(void *user, int tensor, const float *x, size_t n);
    void *observe_user;
};

/* >>impl-calibration (container; luthier_calibrate is at the end of the file) */
struct luthier_calibration {
    int cap;              /* entries (graph tensor ids 0..cap-1) */
    unsigned char *has;
    float *scale;
    int32_t *zero;
};

LUTHIER_PRIVATE int luthier__cal_has(const luthier_calibration *c, int t) {
    return c && t >= 0 && t < c->cap && c->has[t];
}

LUTHIER_API luthier_status luthier_calibration_create(luthier_calibration **out) {
    luthier_calibration *c;
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    if (!(c = (luthier_calibration *)luthier__alloc(sizeof *c))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    memset(c, 0, sizeof *c);
    *out = c;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_calibration_destroy(luthier_calibration *c) {
    if (!c) return;
    luthier__free(c->has);
    luthier__free(c->scale);
    luthier__free(c->zero);
    luthier__free(c);
}

LUTHIER_API luthier_status luthier_calibration_set_params(luthier_calibration *c, int tensor, float scale,
                                                          int32_t zero_point) {
    if (!c || tensor < 0 || !(scale > 0.0f) || !(scale <= FLT_MAX) || zero_point < 0 || zero_point > 255)
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (tensor >= c->cap) {
        int cap = c->cap, c1 = cap, c2 = cap, c3 = cap;
        if (!luthier__grow((void **)&c->has, &c1, tensor + 1, 1) ||
            !luthier__grow((void **)&c->scale, &c2, tensor + 1, sizeof(float)) ||
            !luthier__grow((void **)&c->zero, &c3, tensor + 1, sizeof(int32_t)))
            return LUTHIER_STATUS_OUT_OF_MEMORY; /* (a partly grown array keeps its old entries) */
        c->cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    }
    c->has[tensor] = 1;
    c->scale[tensor] = scale;
    c->zero[tensor] = zero_point;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_calibration_set_range(luthier_calibration *c, int tensor, float min, float max) {
    float scale;
    int32_t zp;
    if (!c || luthier_quantize_range(min, max, 0, &scale, &zp) != LUTHIER_STATUS_OK) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return luthier_calibration_set_params(c, tensor, scale, zp);
}

LUTHIER_API luthier_status luthier_calibration_get(const luthier_calibration *c, int tensor, float *scale,
                                                   int32_t *zero_point) {
    if (!c || tensor < 0) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!luthier__cal_has(c, tensor)) return LUTHIER_STATUS_NOT_FOUND;
    if (scale) *scale = c->scale[tensor];
    if (zero_point) *zero_point = c->zero[tensor];
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_calibration_remove(luthier_calibration *c, int tensor) {
    if (!c || tensor < 0) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!luthier__cal_has(c, tensor)) return LUTHIER_STATUS_NOT_FOUND;
    c->has[tensor] = 0;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_calibration_save(luthier_context *ctx, const luthier_calibration *c,
                                                    const luthier_graph *g, const char *path) {
    FILE *fh;
    int t, err;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!c || !g || !path) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibration_save: calibration, graph or path is NULL");
    for (t = 0; t < c->cap && t < g->num_tensors; t++)
        if (c->has[t] && (!g->tensors[t].name[0] || strpbrk(g->tensors[t].name, " \t\r\n")))
            return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                                 "calibration_save: tensor %d's name '%s' is empty or has white space", t, g->tensors[t].name);
    if (!(fh = fopen(path, "w"))) return luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND, "calibration_save: cannot open '%s'", path);
    fprintf(fh, "# luthier calibration: tensor scale zero_point\n");
    for (t = 0; t < c->cap && t < g->num_tensors; t++)
        if (c->has[t]) fprintf(fh, "%s %.9g %d\n", g->tensors[t].name, (double)c->scale[t], (int)c->zero[t]);
    err = ferror(fh);
    if (fclose(fh) != 0 || err) return luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND, "calibration_save: cannot write '%s'", path);
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_calibration_load(luthier_context *ctx, luthier_calibration *c, const luthier_graph *g,
                                                    const char *path) {
    FILE *fh;
    char line[1024], name[1000];
    luthier_status s = LUTHIER_STATUS_OK;
    int lineno = 0;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!c || !g || !path) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibration_load: calibration, graph or path is NULL");
    if (!(fh = fopen(path, "r"))) return luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND, "calibration_load: cannot open '%s'", path);
    while (s == LUTHIER_STATUS_OK && fgets(line, sizeof line, fh)) {
        double scale;
        int zp, t;
        char extra[2];
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
        if (!strchr(line, '\n') && !feof(fh))
            s = luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibration_load: %s:%d: line too long", path, lineno);
        else if (sscanf(line, "%999s %lf %d %1s", name, &scale, &zp, extra) != 3 || !(scale > 0.0) || scale > FLT_MAX ||
                 zp < 0 || zp > 255)
            s = luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                              "calibration_load: %s:%d: expected '<tensor> <scale > 0> <zero point 0..255>'", path, lineno);
        else if (luthier_graph_find_tensor(g, name, &t) != LUTHIER_STATUS_OK)
            s = luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND, "calibration_load: %s:%d: the graph has no tensor '%s'", path,
                              lineno, name);
        else if ((s = luthier_calibration_set_params(c, t, (float)scale, zp)) != LUTHIER_STATUS_OK)
            luthier__fail(ctx, s, "calibration_load: %s:%d: cannot set '%s'", path, lineno, name);
    }
    fclose(fh);
    return s;
}

LUTHIER_PRIVATE void *luthier__plan_blob(luthier_plan *p, size_t bytes) {
    void *b;
    if (!luthier__grow((void **)&p->blobs, &p->cap_blobs, p->num_blobs + 1, sizeof *p->blobs)) return NULL;
    if (!(b = luthier__alloc(bytes ? bytes : 1))) return NULL;
    p->blobs[p->num_blobs++] = b;
    return b;
}

LUTHIER_PRIVATE int luthier__pval_new(luthier_plan *p, luthier_dtype dtype, int rank, const int64_t *shape,
                                      int layout) {
    luthier__pval *v;
    int ok;
    if (!luthier__grow((void **)&p->vals, &p->cap_vals, p->num_vals + 1, sizeof *p->vals)) return -1;
    v = &p->vals[p->num_vals];
    memset(v, 0, sizeof *v);
    v->dtype = dtype;
    v->rank = rank;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)rank);
    v->layout = layout;
    v->bytes = (size_t)luthier__numel(rank, shape, &ok) * luthier__dtype_size(dtype);
    v->alias = -1;
    v->twin = -1;
    v->tensor = -1;
    v->qtwin = -1;
    v->first = INT_MAX;
    v->last = -1;
    return p->num_vals++;
}

LUTHIER_PRIVATE int luthier__root(const luthier_plan *p, int v) {
    while (p->vals[v].alias >= 0) v = p->vals[v].alias;
    return v;
}

/* Physical shape: logical, or [N,H,W,C] for NHWC. */
LUTHIER_PRIVATE void luthier__phys(const luthier__pval *v, int64_t *ps) {
    memcpy(ps, v->shape, sizeof(int64_t) * (size_t)v->rank);
    if (v->layout == LUTHIER__NHWC) {
        ps[1] = v->shape[2]; ps[2] = v->shape[3]; ps[3] = v->shape[1];
    }
}

/* Logical axis -> physical axis. */
LUTHIER_PRIVATE int luthier__phys_axis(const luthier__pval *v, int axis) {
    static const int map[4] = {0, 3, 1, 2};
    return v->layout == LUTHIER__NHWC ? map[axis] : axis;
}

/* NCHW and NHWC orders of a rank-4 shape are the same memory order. */
LUTHIER_PRIVATE int luthier__coincide(int rank, const int64_t *s) {
    return rank != 4 || s[1] == 1 || (s[2] == 1 && s[3] == 1);
}

LUTHIER_PRIVATE luthier__pstep *luthier__step_new(luthier_plan *p, int kind, int node, int nin, int nout) {
    luthier__pstep *st;
    if (!luthier__grow((void **)&p->steps, &p->cap_steps, p->num_steps + 1, sizeof *p->steps)) return NULL;
    st = &p->steps[p->num_steps];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->node = node;
    st->nin = nin;
    st->nout = nout;
    st->residual = -1;
    st->kernel = "";
    if (!(st->in = (int *)luthier__alloc(sizeof(int) * (size_t)(nin ? nin : 1))) ||
        !(st->out = (int *)luthier__alloc(sizeof(int) * (size_t)(nout ? nout : 1)))) {
        luthier__free(st->in);
        luthier__free(st->out);
        return NULL;
    }
    p->num_steps++;
    return st;
}

/* Value v as uint8 (u8 != 0; parameters: the calibration's for its tensor, which the caller has
   checked) or as fp32: itself, its other-type twin, or a new twin made by a quantize or dequantize
   step in the same layout. -1 = OOM. */
LUTHIER_PRIVATE int luthier__need_q(luthier_plan *p, const luthier_calibration *cal, int v, int u8) {
    int w;
    luthier__pval *a, *b;
    luthier__pstep *st;
    if (v < 0 || (p->vals[v].dtype == LUTHIER__DTYPE_U8) == (u8 != 0)) return v;
    if (p->vals[v].qtwin >= 0) return p->vals[v].qtwin;
    {
        int64_t shape[LUTHIER_MAX_RANK];
        int rank = p->vals[v].rank, layout = p->vals[v].layout;
        memcpy(shape, p->vals[v].shape, sizeof shape);
        if ((w = luthier__pval_new(p, u8 ? LUTHIER__DTYPE_U8 : LUTHIER_DTYPE_F32, rank, shape, layout)) < 0) return -1;
    }
    a = &p->vals[v];
    b = &p->vals[w];
    a->qtwin = w;
    b->qtwin = v;
    b->tensor = a->tensor;
    b->qscale = u8 ? cal->scale[a->tensor] : a->qscale;
    b->qzero = u8 ? cal->zero[a->tensor] : a->qzero;
    b->storage = LUTHIER__ST_ARENA;
    if (!(st = luthier__step_new(p, u8 ? LUTHIER__STEP_QUANTIZE : LUTHIER__STEP_DEQUANTIZE, -1, 1, 1))) return -1;
    st->in[0] = v;
    st->out[0] = w;
    snprintf(st->name, sizeof st->name, "%s", u8 ? "quantize" : "dequantize");
    return w;
}

/* Value v in the given layout: itself, its twin, or a new twin (a view when the memory orders
   coincide, a plan-owned transposed copy for constants, else a conversion step; uint8 values are
   dequantized first: transposes are fp32). -1 = OOM. */
LUTHIER_PRIVATE int luthier__need(luthier_context *ctx, luthier_plan *p, int v, int layout) {
    int w;
    luthier__pval *a;
    if (v < 0 || p->vals[v].layout == layout || p->vals[v].rank != 4) return v;
    if (p->vals[v].twin >= 0) return p->vals[v].twin;
    if (p->vals[v].dtype == LUTHIER__DTYPE_U8 && !luthier__coincide(4, p->vals[v].shape))
        return (v = luthier__need_q(p, NULL, v, 0)) < 0 ? -1 : luthier__need(ctx, p, v, layout);
    {
        int64_t shape[4]; /* p->vals may move while growing */
        memcpy(shape, p->vals[v].shape, sizeof shape);
        if ((w = luthier__pval_new(p, p->vals[v].dtype, 4, shape, layout)) < 0) return -1;
    }
    a = &p->vals[v];
    a->twin = w;
    p->vals[w].twin = v;
    p->vals[w].tensor = a->tensor;
    p->vals[w].qscale = a->qscale;
    p->vals[w].qzero = a->qzero;
    if (luthier__coincide(4, a->shape)) {
        p->vals[w].alias = v;
    } else if (a->storage == LUTHIER__ST_CONST) {
        float *dst = (float *)luthier__plan_blob(p, a->bytes);
        int perm[4] = {0, 2, 3, 1}, inv[4] = {0, 3, 1, 2};
        int64_t ps[4];
        if (!dst) return -1;
        luthier__phys(a, ps);
        if (luthier__op_transpose(ctx, NULL, (const float *)a->cdata, dst, 4, ps,
                                  layout == LUTHIER__NHWC ? perm : inv) != LUTHIER_STATUS_OK)
            return -1;
        p->vals[w].storage = LUTHIER__ST_CONST;
        p->vals[w].cdata = dst;
        p->vals[w].owned = 1;
    } else {
        luthier__pstep *st = luthier__step_new(p, LUTHIER__STEP_CONVERT, -1, 1, 1);
        if (!st) return -1;
        st->in[0] = v;
        st->out[0] = w;
        snprintf(st->name, sizeof st->name, "to_%s", layout == LUTHIER__NHWC ? "nhwc" : "nchw");
        p->vals[w].storage = LUTHIER__ST_ARENA;
    }
    return w;
}

/* >>impl-plan-fuse: node-level decisions before any step exists. */

typedef struct luthier__fuse {
    int alive, pos;
    luthier_activation act;
    float cmin, cmax;
    int out;          /* tensor the node (group) writes */
    int residual;     /* tensor accumulated onto, -1 */
    float *w, *b;     /* folded conv weights/bias (temporary) */
    char fused[48];
} luthier__fuse;

LUTHIER_PRIVATE void luthier__fused_add(luthier__fuse *f, const char *what) {
    size_t n = strlen(f->fused);
    snprintf(f->fused + n, sizeof f->fused - n, "%s%s", n ? "+" : "", what);
}

/* Folds batch norm node bn into conv node c (weights scaled per output channel). */
LUTHIER_PRIVATE int luthier__fold_bn(const luthier_graph *g, int c, int bn, luthier__fuse *fc) {
    const luthier__gnode *cn = &g->nodes[c], *bnn = &g->nodes[bn];
    const luthier__gtensor *w = &g->tensors[cn->inputs[1]];
    const float *gamma = (const float *)g->tensors[bnn->inputs[1]].data,
                *beta = (const float *)g->tensors[bnn->inputs[2]].data,
                *mean = (const float *)g->tensors[bnn->inputs[3]].data,
                *var = (const float *)g->tensors[bnn->inputs[4]].data;
    const float *bias = cn->d.num_inputs > 2 && cn->inputs[2] >= 0 ? (const float *)g->tensors[cn->inputs[2]].data : NULL;
    double eps = bnn->d.epsilon > 0 ? bnn->d.epsilon : 1e-5;
    size_t o, i, per = (size_t)(w->shape[1] * w->shape[2] * w->shape[3]), cout = (size_t)w->shape[0];
    if (!fc->w) {
        if (!(fc->w = (float *)luthier__alloc(sizeof(float) * per * cout)) ||
            !(fc->b = (float *)luthier__alloc(sizeof(float) * cout)))
            return 0;
        memcpy(fc->w, w->data, sizeof(float) * per * cout);
        for (o = 0; o < cout; o++) fc->b[o] = bias ? bias[o] : 0.0f;
    }
    for (o = 0; o < cout; o++) {
        double sc = (double)gamma[o] / sqrt((double)var[o] + eps);
        for (i = 0; i < per; i++) fc->w[o * per + i] = (float)((double)fc->w[o * per + i] * sc);
        fc->b[o] = (float)(((double)fc->b[o] - (double)mean[o]) * sc + (double)beta[o]);
    }
    return 1;
}

LUTHIER_PRIVATE int luthier__is_binary(luthier_op op) { return op >= LUTHIER_OP_ADD && op <= LUTHIER_OP_MIN; }

/* Fusion decisions over the whole graph (f, prod, cons sized by the caller, zeroed / -1).
   fold = 0 records the decisions without computing folded weights (signatures only). Residual
   adds stay apart with no_residual, and (int8 plans, cal set) when both operands have
   quantization parameters: they run as quantized adds. */
LUTHIER_PRIVATE void luthier__fuse_graph(const luthier_graph *g, luthier__fuse *f, int *prod, int *cons,
                                         int no_fusion, int fold, const luthier_calibration *cal, int no_residual,
                                         int *oom) {
    int n, i;
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        f[n].alive = 1;
        f[n].pos = n;
        f[n].act = (gn->d.op == LUTHIER_OP_CONV2D || gn->d.op == LUTHIER_OP_DENSE || luthier__is_binary(gn->d.op))
                       ? gn->d.activation : LUTHIER_ACTIVATION_NONE;
        f[n].cmin = gn->d.clamp_min;
        f[n].cmax = gn->d.clamp_max;
        f[n].out = gn->outputs[0];
        f[n].residual = -1;
        for (i = 0; i < gn->num_outputs; i++) prod[gn->outputs[i]] = n;
        for (i = 0; i < gn->d.num_inputs; i++)
            if (gn->inputs[i] >= 0) cons[gn->inputs[i]]++;
    }
    if (no_fusion) return;
#define LUTHIER__SOLE(t) (cons[t] == 1 && !g->tensors[t].is_output && !g->tensors[t].is_input && !g->tensors[t].is_const)
    /* 1: batch norm into the preceding convolution */
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        int t = gn->inputs[0], c = prod[t];
        if (gn->d.op != LUTHIER_OP_BATCH_NORM || c < 0 || !f[c].alive || g->nodes[c].d.op != LUTHIER_OP_CONV2D ||
            f[c].act != LUTHIER_ACTIVATION_NONE || f[c].residual >= 0 || !LUTHIER__SOLE(t) || f[c].out != t)
            continue;
        if (fold && !luthier__fold_bn(g, c, n, &f[c])) {
            *oom = 1;
            return;
        }
        f[c].out = gn->outputs[0];
        prod[gn->outputs[0]] = c;
        f[n].alive = 0;
        luthier__fused_add(&f[c], "batch_norm");
    }
    /* 2: residual add into the later of its conv/dense producers (which then runs at the add) */
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        int best = -1, bi = -1;
        if (gn->d.op != LUTHIER_OP_ADD || f[n].act != LUTHIER_ACTIVATION_NONE || no_residual ||
            (luthier__cal_has(cal, gn->inputs[0]) && luthier__cal_has(cal, gn->inputs[1])))
            continue;
        for (i = 0; i < 2; i++) {
            int t = gn->inputs[i], p = prod[t];
            const luthier__gtensor *a = &g->tensors[gn->inputs[0]], *b = &g->tensors[gn->inputs[1]];
            if (a->rank != b->rank || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank) != 0) break;
            if (p < 0 || !f[p].alive || f[p].out != t || f[p].act != LUTHIER_ACTIVATION_NONE || f[p].residual >= 0 ||
                !LUTHIER__SOLE(t) || (g->nodes[p].d.op != LUTHIER_OP_CONV2D && g->nodes[p].d.op != LUTHIER_OP_DENSE))
                continue;
            if (p > best) best = p, bi = i;
        }
        if (best < 0) continue;
        f[best].residual = gn->inputs[1 - bi];
        f[best].out = gn->outputs[0];
        f[best].pos = f[n].pos;
        prod[gn->outputs[0]] = best;
        f[n].alive = 0;
        luthier__fused_add(&f[best], "add");
    }
    /* 3: relu / clip into the producer */
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        int t = gn->inputs[0], p = prod[t];
        if ((gn->d.op != LUTHIER_OP_RELU && gn->d.op != LUTHIER_OP_CLIP) || p < 0 || !f[p].alive || f[p].out != t ||
            f[p].act != LUTHIER_ACTIVATION_NONE || !LUTHIER__SOLE(t) ||
            (g->nodes[p].d.op != LUTHIER_OP_CONV2D && g->nodes[p].d.op != LUTHIER_OP_DENSE && !luthier__is_binary(g->nodes[p].d.op)))
            continue;
        if (gn->d.op == LUTHIER_OP_RELU || (gn->d.clamp_min == 0.0f && gn->d.clamp_max >= FLT_MAX)) {
            f[p].act = LUTHIER_ACTIVATION_RELU;
        } else if (gn->d.clamp_min == 0.0f && gn->d.clamp_max == 6.0f) {
            f[p].act = LUTHIER_ACTIVATION_RELU6;
        } else {
            f[p].act = LUTHIER_ACTIVATION_CLAMP;
            f[p].cmin = gn->d.clamp_min;
            f[p].cmax = gn->d.clamp_max;
        }
        f[p].out = gn->outputs[0];
        prod[gn->outputs[0]] = p;
        f[n].alive = 0;
        luthier__fused_add(&f[p], luthier_op_name(gn->d.op));
    }
#undef LUTHIER__SOLE
}

/* >>impl-plan-memory: lifetimes, in-place results, arena offsets (greedy by size). */

LUTHIER_PRIVATE void luthier__lifetimes(luthier_plan *p) {
    int s, i, v;
    for (v = 0; v < p->num_vals; v++) p->vals[v].first = INT_MAX, p->vals[v].last = -1;
    for (s = 0; s < p->num_steps; s++) {
        const luthier__pstep *st = &p->steps[s];
        for (i = 0; i < st->nin; i++) {
            int r = luthier__root(p, st->in[i]);
            if (p->vals[r].last < s) p->vals[r].last = s;
            if (p->vals[r].first > s) p->vals[r].first = s;
        }
        if (st->residual >= 0) {
            int r = luthier__root(p, st->residual);
            if (p->vals[r].last < s) p->vals[r].last = s;
            if (p->vals[r].first > s) p->vals[r].first = s;
        }
        for (i = 0; i < st->nout; i++) {
            int r = luthier__root(p, st->out[i]);
            if (p->vals[r].first > s) p->vals[r].first = s;
            if (p->vals[r].last < s) p->vals[r].last = s;
        }
    }
    for (i = 0; i < p->num_outputs; i++) p->vals[luthier__root(p, p->outputs[i])].last = p->num_steps;
}

/* Lets out reuse the memory of value x when x is in the arena and dies at step s. */
LUTHIER_PRIVATE int luthier__try_inplace(luthier_plan *p, int s, int x, int out, int forbid_root) {
    int rx = luthier__root(p, x), ro = luthier__root(p, out);
    luthier__pval *a = &p->vals[rx], *o = &p->vals[ro];
    if (rx == ro || rx == forbid_root || a->storage != LUTHIER__ST_ARENA || o->storage != LUTHIER__ST_ARENA ||
        a->last != s || a->bytes < o->bytes || o->alias >= 0)
        return 0;
    o->alias = rx;
    if (a->last < o->last) a->last = o->last;
    return 1;
}

LUTHIER_PRIVATE void luthier__plan_inplace(luthier_plan *p) {
    int s;
    for (s = 0; s < p->num_steps; s++) {
        luthier__pstep *st = &p->steps[s];
        luthier_op op = st->d.op;
        if (st->kind != LUTHIER__STEP_NODE) continue;
        if (st->residual >= 0) {
            st->residual_aliased = luthier__try_inplace(p, s, st->residual, st->out[0], luthier__root(p, st->in[0]));
            continue;
        }
        if ((op >= LUTHIER_OP_RELU && op <= LUTHIER_OP_NEG) || op == LUTHIER_OP_BATCH_NORM) {
            luthier__try_inplace(p, s, st->in[0], st->out[0], -1);
        } else if (luthier__is_binary(op)) {
            int i;
            for (i = 0; i < 2; i++) {
                const luthier__pval *a = &p->vals[st->in[i]], *o = &p->vals[st->out[0]];
                if (a->layout == o->layout && a->rank == o->rank &&
                    memcmp(a->shape, o->shape, sizeof(int64_t) * (size_t)a->rank) == 0 &&
                    luthier__try_inplace(p, s, st->in[i], st->out[0], -1))
                    break;
            }
        }
    }
}

typedef struct luthier__placed { size_t off, end; int first, last; } luthier__placed;

LUTHIER_PRIVATE int luthier__assign_offsets(luthier_plan *p) {
    int *order, n = 0, i, j, k;
    luthier__placed *placed;
    size_t total = 0;
    for (i = 0; i < p->num_vals; i++) {
        const luthier__pval *v = &p->vals[i];
        if (v->alias < 0 && v->storage == LUTHIER__ST_ARENA && v->last >= 0) n++;
    }
    order = (int *)luthier__alloc(sizeof(int) * (size_t)(n + 1));
    placed = (luthier__placed *)luthier__alloc(sizeof *placed * (size_t)(n + 1));
    if (!order || !placed) {
        luthier__free(order);
        luthier__free(placed);
        return 0;
    }
    for (i = 0, k = 0; i < p->num_vals; i++) {
        const luthier__pval *v = &p->vals[i];
        if (v->alias < 0 && v->storage == LUTHIER__ST_ARENA && v->last >= 0) order[k++] = i;
    }
    /* largest first (insertion sort: a few hundred values) */
    for (i = 1; i < n; i++) {
        int x = order[i];
        for (j = i; j > 0 && p->vals[order[j - 1]].bytes < p->vals[x].bytes; j--) order[j] = order[j - 1];
        order[j] = x;
    }
    for (i = 0; i < n; i++) {
        luthier__pval *v = &p->vals[order[i]];
        size_t size = (v->bytes + LUTHIER__ALIGN - 1) / LUTHIER__ALIGN * LUTHIER__ALIGN, off = 0;
        int moved = 1;
        /* lowest offset that overlaps no placed value alive at the same time */
        while (moved) {
            moved = 0;
            for (j = 0; j < i; j++) {
                const luthier__placed *q = &placed[j];
                if (q->last < v->first || q->first > v->last) continue;
                if (off < q->end && q->off < off + size) {
                    off = q->end;
                    moved = 1;
                }
            }
        }
        v->offset = off;
        placed[i].off = off;
        placed[i].end = off + size;
        placed[i].first = v->first;
        placed[i].last = v->last;
        if (off + size > total) total = off + size;
    }
    p->arena_bytes = total;
    luthier__free(order);
    luthier__free(placed);
    return 1;
}


/* >>impl-plan-create */

LUTHIER_API void luthier_plan_destroy(luthier_plan *p) {
    int i;
    if (!p) return;
    for (i = 0; i < p->num_steps; i++) {
        luthier_conv2d_destroy(p->steps[i].conv);
        luthier_qconv2d_destroy(p->steps[i].qconv);
        luthier_packed_b_destroy(p->steps[i].pb);
        luthier__free(p->steps[i].in);
        luthier__free(p->steps[i].out);
    }
    for (i = 0; i < p->num_blobs; i++) luthier__free(p->blobs[i]);
    if (p->arena_owned) luthier__free(p->arena);
    luthier__free(p->blobs);
    luthier__free(p->vals);
    luthier__free(p->steps);
    luthier__free(p->inputs);
    luthier__free(p->input_dtypes);
    luthier__free(p->outputs);
    luthier__free(p);
}

/* A plan-owned copy of a constant value's data (made once). */
LUTHIER_PRIVATE const void *luthier__own_const(luthier_plan *p, int v) {
    luthier__pval *c = &p->vals[luthier__root(p, v)];
    void *d;
    if (c->storage != LUTHIER__ST_CONST || c->owned) return c->cdata;
    if (!(d = luthier__plan_blob(p, c->bytes))) return NULL;
    memcpy(d, c->cdata, c->bytes);
    c->cdata = d;
    c->owned = 1;
    p->weights_bytes += c->bytes;
    return d;
}

LUTHIER_PRIVATE size_t luthier__sgemm_ws(luthier_context *ctx, int kernel, size_t m, size_t n, size_t k) {
    const luthier__ukernel_entry *uk = &luthier__ukernels[kernel];
    luthier__gemm_blocking b = luthier__gemm_blocking_for(uk, &ctx->caches, &ctx->blocking_override, m, n, k);
    size_t ws = luthier__gemm_workspace_bytes(uk, &b);
    return (ws + LUTHIER__ALIGN - 1) / LUTHIER__ALIGN * LUTHIER__ALIGN * (size_t)ctx->pool->num_threads;
}

#define LUTHIER__PFAIL(st, ...) do { status = luthier__fail(ctx, st, __VA_ARGS__); goto done; } while (0)
#define LUTHIER__OOM() LUTHIER__PFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory")

/* Creates the conv layer of step st (node gn) with the config, or the default on fallback. */
LUTHIER_PRIVATE luthier_status luthier__plan_conv(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                  luthier__pstep *st, const luthier__gnode *gn,
                                                  const luthier__fuse *f, int fallback) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    const float *wd = f->w ? f->w : (const float *)w->data;
    const float *bd = f->b ? f->b : (gn->d.num_inputs > 2 && gn->inputs[2] >= 0 ? (const float *)g->tensors[gn->inputs[2]].data : NULL);
    luthier_conv2d_desc cd;
    luthier_conv2d_info info;
    luthier_status s;
    int attempt;
    for (attempt = 0; attempt < 2; attempt++) {
        memset(&cd, 0, sizeof cd);
        cd.batch = x->shape[0]; cd.in_channels = x->shape[1]; cd.in_h = x->shape[2]; cd.in_w = x->shape[3];
        cd.out_channels = w->shape[0]; cd.kernel_h = w->shape[2]; cd.kernel_w = w->shape[3];
        cd.stride_h = gn->d.stride[0]; cd.stride_w = gn->d.stride[1];
        cd.dilation_h = gn->d.dilation[0]; cd.dilation_w = gn->d.dilation[1];
        cd.pad_top = gn->d.pads[0]; cd.pad_left = gn->d.pads[1]; cd.pad_bottom = gn->d.pads[2]; cd.pad_right = gn->d.pads[3];
        cd.groups = gn->d.groups;
        cd.layout = LUTHIER_LAYOUT_NHWC;
        cd.activation = st->act;
        cd.clamp_min = st->cmin;
        cd.clamp_max = st->cmax;
        cd.accumulate = st->residual >= 0;
        if (attempt == 0) {
            cd.algorithm = st->cfg.algorithm;
            cd.kernel = st->cfg.kernel[0] ? st->cfg.kernel : NULL;
            cd.schedule = st->cfg.schedule;
            cd.ratios = st->cfg.num_ratios ? st->cfg.ratios : NULL;
            cd.num_ratios = st->cfg.num_ratios;
        }
        s = luthier_conv2d_create(ctx, &cd, wd, bd, &st->conv);
        if (s == LUTHIER_STATUS_OK) break;
        if (s == LUTHIER_STATUS_OUT_OF_MEMORY || !fallback || attempt == 1) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ctx->error);
            return luthier__fail(ctx, s, "plan: node '%s' (conv2d): %s", gn->name, msg);
        }
        memset(&st->cfg, 0, sizeof st->cfg);
    }
    memset(&info, 0, sizeof info);
    luthier_conv2d_get_info(st->conv, &info);
    st->algorithm = info.algorithm;
    st->kernel = info.kernel;
    p->weights_bytes += info.weight_bytes;
    if (p->workspace_bytes < info.workspace_bytes) p->workspace_bytes = info.workspace_bytes;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__plan_dense(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                   luthier__pstep *st, const luthier__gnode *gn, int fallback) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    luthier_sgemm_desc sd;
    luthier_status s;
    int ok, attempt, kernel = 0;
    memset(&sd, 0, sizeof sd);
    sd.n = gn->d.trans_b ? w->shape[1] : w->shape[0];
    sd.k = gn->d.trans_b ? w->shape[0] : w->shape[1];
    sd.m = (int64_t)(luthier__numel(x->rank, x->shape, &ok) / (uint64_t)sd.k);
    sd.trans_b = !gn->d.trans_b;
    for (attempt = 0; attempt < 2; attempt++) {
        s = LUTHIER_STATUS_OK;
        if (attempt == 0 && st->cfg.kernel[0]) s = luthier__resolve_kernel(ctx, st->cfg.kernel, &kernel);
        else kernel = luthier__kernel_for_n(ctx, (size_t)sd.n);
        if (s == LUTHIER_STATUS_OK && attempt == 0 && st->cfg.num_ratios && st->cfg.num_ratios != p->num_clusters)
            s = luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%d ratios given for %d clusters",
                              st->cfg.num_ratios, p->num_clusters);
        if (s == LUTHIER_STATUS_OK) {
            sd.kernel = luthier__ukernels[kernel].name;
            s = luthier_sgemm_pack_b(ctx, &sd, (const float *)w->data, &st->pb);
        }
        if (s == LUTHIER_STATUS_OK) break;
        if (s == LUTHIER_STATUS_OUT_OF_MEMORY || !fallback || attempt == 1) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ctx->error);
            return luthier__fail(ctx, s, "plan: node '%s' (%s): %s", gn->name, luthier_op_name(gn->d.op), msg);
        }
        memset(&st->cfg, 0, sizeof st->cfg);
    }
    st->kernel = luthier__ukernels[kernel].name;
    p->weights_bytes += luthier_packed_b_bytes(st->pb);
    if (gn->d.num_inputs > 2 && gn->inputs[2] >= 0) {
        float *b = (float *)luthier__plan_blob(p, sizeof(float) * (size_t)sd.n);
        if (!b) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
        memcpy(b, g->tensors[gn->inputs[2]].data, sizeof(float) * (size_t)sd.n);
        st->bias = b;
        p->weights_bytes += sizeof(float) * (size_t)sd.n;
    }
    {
        size_t ws = luthier__sgemm_ws(ctx, kernel, (size_t)sd.m, (size_t)sd.n, (size_t)sd.k);
        if (p->workspace_bytes < ws) p->workspace_bytes = ws;
    }
    return LUTHIER_STATUS_OK;
}

/* int8 conv2d or dense (a 1x1 convolution over m "pixels") for step st: weights quantized per
   output channel (symmetric, max |w| / 127), input (sa, za) from the value it reads; output uint8
   with (so, zo) when *out_u8 (cleared when a channel's requantization multiplier would reach 1:
   the output is then dequantized fp32), else fp32. The configuration's algorithm and kernel are
   used when they are int8 ones, else the defaults. */
LUTHIER_PRIVATE luthier_status luthier__plan_qconv(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                   luthier__pstep *st, const luthier__gnode *gn, const luthier__fuse *f,
                                                   float sa, int32_t za, float so, int32_t zo, int *out_u8) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    const int dense = gn->d.op == LUTHIER_OP_DENSE;
    const float *wd = f->w ? f->w : (const float *)w->data;
    const float *bd = f->b ? f->b : (gn->d.num_inputs > 2 && gn->inputs[2] >= 0 ? (const float *)g->tensors[gn->inputs[2]].data : NULL);
    luthier_qconv2d_desc cd;
    luthier_conv2d_info info;
    luthier_status s = LUTHIER_STATUS_OK;
    size_t cout, per, c, i;
    int8_t *wq = NULL;
    float *sw = NULL;
    int32_t *bias = NULL, *mult = NULL, *shift = NULL, qmin = 0, qmax = 255;
    int attempt, ok;
    memset(&cd, 0, sizeof cd);
    if (dense) {
        cout = (size_t)(gn->d.trans_b ? w->shape[1] : w->shape[0]);
        per = (size_t)(gn->d.trans_b ? w->shape[0] : w->shape[1]);
        cd.batch = (int64_t)(luthier__numel(x->rank, x->shape, &ok) / per);
        cd.in_channels = (int64_t)per;
        cd.in_h = cd.in_w = cd.kernel_h = cd.kernel_w = 1;
    } else {
        cout = (size_t)w->shape[0];
        per = (size_t)(w->shape[1] * w->shape[2] * w->shape[3]);
        cd.batch = x->shape[0]; cd.in_channels = x->shape[1]; cd.in_h = x->shape[2]; cd.in_w = x->shape[3];
        cd.kernel_h = w->shape[2]; cd.kernel_w = w->shape[3];
        cd.stride_h = gn->d.stride[0]; cd.stride_w = gn->d.stride[1];
        cd.dilation_h = gn->d.dilation[0]; cd.dilation_w = gn->d.dilation[1];
        cd.pad_top = gn->d.pads[0]; cd.pad_left = gn->d.pads[1]; cd.pad_bottom = gn->d.pads[2]; cd.pad_right = gn->d.pads[3];
        cd.groups = gn->d.groups;
    }
    cd.out_channels = (int64_t)cout;
    cd.layout = LUTHIER_LAYOUT_NHWC;
    cd.input_zero_point = za;
    wq = (int8_t *)luthier__alloc(cout * per + 1);
    sw = (float *)luthier__alloc(sizeof(float) * cout);
    bias = (int32_t *)luthier__alloc(sizeof(int32_t) * cout);
    mult = (int32_t *)luthier__alloc(sizeof(int32_t) * cout);
    shift = (int32_t *)luthier__alloc(sizeof(int32_t) * cout);
    if (!wq || !sw || !bias || !mult || !shift) {
        s = luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
        goto done;
    }
    for (c = 0; c < cout; c++) {
        /* weight (c, i): OIHW, or dense [N, K] / [K, N] (trans_b) */
#define LUTHIER__QW(c, i) (dense && gn->d.trans_b ? wd[(i) * cout + (c)] : wd[(c) * per + (i)])
        float m = 0.0f;
        for (i = 0; i < per; i++) {
            float a = fabsf(LUTHIER__QW(c, i));
            if (a > m) m = a;
        }
        sw[c] = m > 0.0f && m <= FLT_MAX ? m / 127.0f : 1.0f;
        if (!(sw[c] > 0.0f)) sw[c] = 1.0f;
        for (i = 0; i < per; i++) {
            double q = floor((double)LUTHIER__QW(c, i) / (double)sw[c] + 0.5);
            wq[c * per + i] = (int8_t)(q < -127.0 ? -127 : q > 127.0 ? 127 : q);
        }
#undef LUTHIER__QW
        if (*out_u8) {
            double real = (double)sa * (double)sw[c] / (double)so, b;
            if (luthier_quantize_multiplier(real, &mult[c], &shift[c]) != LUTHIER_STATUS_OK) *out_u8 = 0;
            b = bd ? floor((double)bd[c] / ((double)sa * (double)sw[c]) + 0.5) : 0.0;
            bias[c] = (int32_t)(b < -2147483647.0 ? -2147483647.0 : b > 2147483647.0 ? 2147483647.0 : b);
        }
    }
    if (*out_u8) {
        cd.output = LUTHIER_QOUTPUT_UINT8;
        cd.output_zero_point = zo;
        cd.multipliers = mult;
        cd.shifts = shift;
        luthier_quantize_activation(st->act, st->cmin, st->cmax, so, zo, &qmin, &qmax);
        cd.output_min = qmin;
        cd.output_max = qmax;
    } else {
        cd.output = LUTHIER_QOUTPUT_FLOAT;
        cd.input_scale = sa;
        cd.weight_scales = sw;
        cd.float_bias = bd;
        cd.activation = st->act;
        cd.clamp_min = st->cmin;
        cd.clamp_max = st->cmax;
    }
    for (attempt = 0; attempt < 2; attempt++) {
        int ki;
        cd.algorithm = LUTHIER_CONV_AUTO;
        cd.kernel = NULL;
        if (attempt == 0) {
            if (st->cfg.algorithm == LUTHIER_CONV_IM2COL || st->cfg.algorithm == LUTHIER_CONV_1X1 ||
                st->cfg.algorithm == LUTHIER_CONV_DEPTHWISE)
                cd.algorithm = st->cfg.algorithm;
            if (st->cfg.kernel[0] && luthier_qkernel_find(st->cfg.kernel, &ki) == LUTHIER_STATUS_OK) cd.kernel = st->cfg.kernel;
        }
        cd.schedule = st->cfg.schedule;
        cd.ratios = st->cfg.num_ratios ? st->cfg.ratios : NULL;
        cd.num_ratios = st->cfg.num_ratios;
        s = luthier_qconv2d_create(ctx, &cd, wq, *out_u8 ? bias : NULL, &st->qconv);
        if (s == LUTHIER_STATUS_OK || s == LUTHIER_STATUS_OUT_OF_MEMORY) break;
    }
    if (s != LUTHIER_STATUS_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", ctx->error);
        s = luthier__fail(ctx, s, "plan: node '%s' (int8 %s): %s", gn->name, luthier_op_name(gn->d.op), msg);
        goto done;
    }
    memset(&info, 0, sizeof info);
    luthier_qconv2d_get_info(st->qconv, &info);
    st->algorithm = dense ? LUTHIER_CONV_AUTO : info.algorithm;
    st->kernel = info.kernel;
    st->q = 1;
    p->weights_bytes += info.weight_bytes;
    if (p->workspace_bytes < info.workspace_bytes) p->workspace_bytes = info.workspace_bytes;
done:
    luthier__free(wq);
    luthier__free(sw);
    luthier__free(bias);
    luthier__free(mult);
    luthier__free(shift);
    return s;
}

/* Whether node ni runs int8 in a plan with calibration cal (see >>api-int8-plan); ins are its
   inputs' values so far. */
LUTHIER_PRIVATE int luthier__q_node(const luthier_graph *g, const luthier_plan *p, const luthier_calibration *cal,
                                    const luthier__gnode *gn, const luthier__fuse *f, const int *ins) {
    const luthier__pval *x;
    if (!cal) return 0;
    x = &p->vals[ins[0]];
    switch (gn->d.op) {
    case LUTHIER_OP_CONV2D:
    case LUTHIER_OP_DENSE:
        return f->residual < 0 && (x->dtype == LUTHIER__DTYPE_U8 || luthier__cal_has(cal, x->tensor));
    case LUTHIER_OP_ADD: {
        const luthier__gtensor *a = &g->tensors[gn->inputs[0]], *b = &g->tensors[gn->inputs[1]], *o = &g->tensors[f->out];
        return luthier__cal_has(cal, gn->inputs[0]) && luthier__cal_has(cal, gn->inputs[1]) && luthier__cal_has(cal, f->out) &&
               a->rank == o->rank && b->rank == o->rank && memcmp(a->shape, o->shape, sizeof(int64_t) * (size_t)o->rank) == 0 &&
               memcmp(b->shape, o->shape, sizeof(int64_t) * (size_t)o->rank) == 0;
    }
    case LUTHIER_OP_MAXPOOL:
        return x->dtype == LUTHIER__DTYPE_U8 || x->qtwin >= 0;
    case LUTHIER_OP_AVGPOOL: case LUTHIER_OP_GLOBAL_AVGPOOL: case LUTHIER_OP_ADAPTIVE_AVGPOOL: {
        /* a mean keeps its input's parameters; other output parameters (a finer scale) would
           mean rounding twice: then it runs in fp32 */
        const luthier__pval *q = x->dtype == LUTHIER__DTYPE_U8 ? x : x->qtwin >= 0 ? &p->vals[x->qtwin] : NULL;
        return q && (!luthier__cal_has(cal, f->out) || (cal->scale[f->out] == q->qscale && cal->zero[f->out] == q->qzero));
    }
    case LUTHIER_OP_IDENTITY: case LUTHIER_OP_FLATTEN: case LUTHIER_OP_RESHAPE:
        /* a view keeps uint8 when no transpose is needed to see it in plain order */
        return x->dtype == LUTHIER__DTYPE_U8 && (x->rank != 4 || x->layout == LUTHIER__PLAIN || luthier__coincide(4, x->shape));
    default:
        return 0;
    }
}

/* Makes value v uint8 with (scale, zero). */
LUTHIER_PRIVATE void luthier__set_u8(luthier__pval *v, float scale, int32_t zero) {
    int ok;
    v->dtype = LUTHIER__DTYPE_U8;
    v->qscale = scale;
    v->qzero = zero;
    v->bytes = (size_t)luthier__numel(v->rank, v->shape, &ok);
}

/* The int8 step st of node gn (luthier__q_node said yes; inputs already uint8). */
LUTHIER_PRIVATE luthier_status luthier__plan_qstep(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                   const luthier_calibration *cal, luthier__pstep *st,
                                                   const luthier__gnode *gn, const luthier__fuse *f) {
    const luthier__pval *x = &p->vals[st->in[0]];
    luthier__pval *o = &p->vals[st->out[0]];
    /* a graph output is produced in fp32 directly (no second rounding through uint8) */
    const int t = f->out, has_out = luthier__cal_has(cal, t) && !(g->tensors[t].is_output && gn->d.op != LUTHIER_OP_ADD);
    const float so = has_out ? cal->scale[t] : 1.0f;
    const int32_t zo = has_out ? cal->zero[t] : 0;
    int u8 = has_out;
    luthier_status s;
    st->q = 1;
    switch (gn->d.op) {
    case LUTHIER_OP_CONV2D:
    case LUTHIER_OP_DENSE:
        if ((s = luthier__plan_qconv(ctx, g, p, st, gn, f, x->qscale, x->qzero, so, zo, &u8)) != LUTHIER_STATUS_OK) return s;
        if (u8) luthier__set_u8(o, so, zo);
        return LUTHIER_STATUS_OK;
    case LUTHIER_OP_ADD:
        luthier_quantize_activation(st->act, st->cmin, st->cmax, so, zo, &st->qmin, &st->qmax);
        luthier__set_u8(o, so, zo);
        return LUTHIER_STATUS_OK;
    default: /* pools: the input's parameters */
        luthier__set_u8(o, x->qscale, x->qzero);
        return LUTHIER_STATUS_OK;
    }
}

enum { LUTHIER__PLAN_NO_RESIDUAL = 1 };

/* (luthier_tune.h) */
LUTHIER_PRIVATE luthier_status luthier__records_for_plan(luthier_context *ctx, const luthier_graph *g, const char *path,
                                                         const char *text, const luthier_calibration *cal,
                                                         luthier_node_config *configs, int *matched);

LUTHIER_PRIVATE luthier_status luthier__plan_create_ex(luthier_context *ctx, const luthier_graph *g,
                                                       const luthier_plan_desc *desc, int flags, luthier_plan **out);

LUTHIER_API luthier_status luthier_plan_create(luthier_context *ctx, const luthier_graph *g,
                                               const luthier_plan_desc *desc, luthier_plan **out) {
    return luthier__plan_create_ex(ctx, g, desc, 0, out);
}

LUTHIER_PRIVATE luthier_status luthier__plan_create_ex(luthier_context *ctx, const luthier_graph *g,
                                                       const luthier_plan_desc *desc, int flags, luthier_plan **out) {
    luthier_plan_desc pd;
    luthier_plan *p = NULL;
    luthier__fuse *f = NULL;
    int *prod = NULL, *cons = NULL, *order = NULL;
    luthier_status status = LUTHIER_STATUS_OK;
    int i, j, n, nalive, oom = 0;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!g || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: graph or out is NULL");
    *out = NULL;
    memset(&pd, 0, sizeof pd);
    if (desc) pd = *desc;
    if (g->num_outputs == 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: the graph has no outputs (luthier_graph_output)");
    if (pd.num_configs && (pd.num_configs != g->num_nodes || !pd.configs))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "plan: %d configs given for %d nodes (give one per node, or none)", pd.num_configs, g->num_nodes);
    for (i = 0; i < pd.num_configs; i++) {
        const luthier_node_config *c = &pd.configs[i];
        if (!memchr(c->kernel, 0, sizeof c->kernel) || (unsigned)c->algorithm >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT ||
            (unsigned)c->schedule >= (unsigned)LUTHIER_SCHEDULE_COUNT || c->num_ratios < 0 || c->num_ratios > LUTHIER_MAX_CLUSTERS)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "plan: config of node '%s' is malformed (kernel not terminated, or algorithm/schedule/num_ratios out of range)",
                                 g->nodes[i].name);
    }
    if ((pd.records || pd.records_text) && !pd.num_configs) {
        luthier_node_config *rc = (luthier_node_config *)luthier__alloc(sizeof *rc * (size_t)(g->num_nodes + 1));
        luthier_status s;
        char note[256];
        if (!rc) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
        memset(rc, 0, sizeof *rc * (size_t)(g->num_nodes + 1));
        s = luthier__records_for_plan(ctx, g, pd.records, pd.records ? NULL : pd.records_text, pd.int8, rc, NULL);
        if (s != LUTHIER_STATUS_OK) {
            luthier__free(rc);
            return s;
        }
        snprintf(note, sizeof note, "%s", ctx->error);
        pd.records = pd.records_text = NULL;
        pd.configs = rc;
        pd.num_configs = g->num_nodes;
        pd.fallback_invalid = 1;
        s = luthier__plan_create_ex(ctx, g, &pd, flags, out);
        luthier__free(rc);
        if (s == LUTHIER_STATUS_OK) snprintf(ctx->error, sizeof ctx->error, "%s", note);
        return s;
    }
    if (!(p = (luthier_plan *)luthier__alloc(sizeof *p))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    memset(p, 0, sizeof *p);
    p->num_clusters = ctx->pool->num_clusters;
    n = g->num_nodes;
    f = (luthier__fuse *)luthier__alloc(sizeof *f * (size_t)(n + 1));
    prod = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_tensors);
    cons = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_tensors);
    order = (int *)luthier__alloc(sizeof(int) * (size_t)(n + 1));
    p->inputs = (int *)luthier__alloc(sizeof(int) * (size_t)(g->num_inputs + 1));
    p->input_dtypes = (luthier_dtype *)luthier__alloc(sizeof(luthier_dtype) * (size_t)(g->num_inputs + 1));
    p->outputs = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_outputs);
    if (!f || !prod || !cons || !order || !p->inputs || !p->input_dtypes || !p->outputs) LUTHIER__OOM();
    memset(f, 0, sizeof *f * (size_t)(n + 1));
    memset(cons, 0, sizeof(int) * (size_t)g->num_tensors);
    for (i = 0; i < g->num_tensors; i++) prod[i] = -1;
    for (i = 0; i < g->num_outputs; i++) cons[g->outputs[i]]++;
    luthier__fuse_graph(g, f, prod, cons, pd.no_fusion, 1, pd.int8, flags & LUTHIER__PLAN_NO_RESIDUAL, &oom);
    if (oom) LUTHIER__OOM();

    /* one value per graph tensor */
    for (i = 0; i < g->num_tensors; i++) {
        const luthier__gtensor *t = &g->tensors[i];
        int v = luthier__pval_new(p, t->dtype, t->rank, t->shape, LUTHIER__PLAIN);
        if (v < 0) LUTHIER__OOM();
        p->vals[v].tensor = i;
        if (t->is_const) p->vals[v].storage = LUTHIER__ST_CONST, p->vals[v].cdata = t->data;
        else if (t->is_input) p->vals[v].storage = LUTHIER__ST_INPUT;
        else p->vals[v].storage = LUTHIER__ST_ARENA;
    }
    p->num_inputs = g->num_inputs;
    for (i = 0; i < g->num_inputs; i++) {
        p->inputs[i] = g->inputs[i];
        p->input_dtypes[i] = g->tensors[g->inputs[i]].dtype;
        p->vals[g->inputs[i]].input_index = i;
    }
    /* execution order: alive nodes by position (a node that absorbed an add runs at the add) */
    for (i = 0, nalive = 0; i < n; i++) {
        if (!f[i].alive) continue;
        for (j = nalive; j > 0 && f[order[j - 1]].pos > f[i].pos; j--) order[j] = order[j - 1];
        order[j] = i;
        nalive++;
    }

    for (j = 0; j < nalive; j++) {
        const int ni = order[j];
        const luthier__gnode *gn = &g->nodes[ni];
        const luthier_op op = gn->d.op;
        luthier__pstep *st;
        int layout = LUTHIER__PLAIN, k, nin = gn->d.num_inputs, ins[64] = {0}, residual = -1, qs;
        for (k = 0; k < nin; k++) ins[k] = gn->inputs[k];
        /* the layout this step works in, and its inputs converted to it */
        switch (op) {
        case LUTHIER_OP_CONV2D: case LUTHIER_OP_MAXPOOL: case LUTHIER_OP_AVGPOOL:
        case LUTHIER_OP_GLOBAL_AVGPOOL: case LUTHIER_OP_ADAPTIVE_AVGPOOL: case LUTHIER_OP_LRN:
            layout = LUTHIER__NHWC;
            nin = 1;
            break;
        case LUTHIER_OP_BATCH_NORM:
            nin = 1;
            /* fall through */
        case LUTHIER_OP_RELU: case LUTHIER_OP_CLIP: case LUTHIER_OP_GELU: case LUTHIER_OP_SIGMOID:
        case LUTHIER_OP_TANH: case LUTHIER_OP_ERF: case LUTHIER_OP_EXP: case LUTHIER_OP_SQRT:
        case LUTHIER_OP_NEG: case LUTHIER_OP_SPLIT: case LUTHIER_OP_SOFTMAX: case LUTHIER_OP_IDENTITY:
            layout = p->vals[ins[0]].layout;
            break;
        case LUTHIER_OP_ADD: case LUTHIER_OP_SUB: case LUTHIER_OP_MUL: case LUTHIER_OP_DIV:
        case LUTHIER_OP_POW: case LUTHIER_OP_MAX: case LUTHIER_OP_MIN:
            if (g->tensors[gn->outputs[0]].rank == 4)
                for (k = 0; k < 2; k++)
                    if (p->vals[ins[k]].layout == LUTHIER__NHWC) layout = LUTHIER__NHWC;
            break;
        case LUTHIER_OP_CONCAT:
            for (k = 0; k < nin; k++)
                if (p->vals[ins[k]].layout == LUTHIER__NHWC) layout = LUTHIER__NHWC;
            break;
        case LUTHIER_OP_DENSE: case LUTHIER_OP_LAYER_NORM:
            nin = 1;
            break;
        default:
            break;
        }
        /* int8 steps read uint8 (converted to the layout first: transposes are fp32), the others
           fp32 (dequantized first) */
        qs = luthier__q_node(g, p, pd.int8, gn, &f[ni], ins);
        for (k = 0; k < nin; k++) {
            const luthier__pval *a;
            if (!qs && (ins[k] = luthier__need_q(p, pd.int8, ins[k], 0)) < 0) LUTHIER__OOM();
            a = &p->vals[ins[k]];
            /* operands of lower rank broadcast in either layout when their memory order coincides
               (fp32 steps: an int8 add still needs its operands as uint8) */
            if (!qs && luthier__is_binary(op) && layout == LUTHIER__NHWC && a->layout == LUTHIER__PLAIN &&
                (a->rank < 4 || luthier__coincide(4, a->shape)))
                continue;
            if ((ins[k] = luthier__need(ctx, p, ins[k], layout)) < 0) LUTHIER__OOM();
            if (qs && (ins[k] = luthier__need_q(p, pd.int8, ins[k], 1)) < 0) LUTHIER__OOM();
        }
        if (op == LUTHIER_OP_IDENTITY || op == LUTHIER_OP_FLATTEN || op == LUTHIER_OP_RESHAPE) {
            /* views: the output is the input's memory */
            int v = f[ni].out;
            p->vals[v].alias = ins[0];
            p->vals[v].layout = p->vals[ins[0]].layout;
            if (qs) luthier__set_u8(&p->vals[v], p->vals[ins[0]].qscale, p->vals[ins[0]].qzero);
            continue;
        }
        if (f[ni].residual >= 0 && ((residual = luthier__need_q(p, pd.int8, f[ni].residual, 0)) < 0 ||
                                    (residual = luthier__need(ctx, p, residual, layout)) < 0))
            LUTHIER__OOM();
        if (!(st = luthier__step_new(p, LUTHIER__STEP_NODE, ni, nin, gn->num_outputs))) LUTHIER__OOM();
        st->d = gn->d;
        st->d.name = NULL; st->d.inputs = NULL; st->d.sizes = NULL; st->d.perm = NULL;
        memcpy(st->perm, gn->perm, sizeof st->perm);
        snprintf(st->name, sizeof st->name, "%s", gn->name);
        snprintf(st->fused, sizeof st->fused, "%s", f[ni].fused);
        st->act = f[ni].act;
        st->cmin = f[ni].cmin;
        st->cmax = f[ni].cmax;
        st->flops = gn->flops;
        for (k = 0; k < nin; k++) st->in[k] = ins[k];
        st->out[0] = f[ni].out;
        for (k = 1; k < gn->num_outputs; k++) st->out[k] = gn->outputs[k];
        for (k = 0; k < gn->num_outputs; k++) p->vals[st->out[k]].layout = layout;
        if (pd.num_configs) st->cfg = pd.configs[ni];
        if (st->cfg.num_ratios && st->cfg.num_ratios != p->num_clusters) {
            if (!pd.fallback_invalid)
                LUTHIER__PFAIL(LUTHIER_STATUS_INVALID_ARGUMENT, "plan: node '%s': %d ratios given for %d clusters",
                               gn->name, st->cfg.num_ratios, p->num_clusters);
            st->cfg.num_ratios = 0;
        }
        if (f[ni].residual >= 0) st->residual = residual;
        if (qs) {
            if ((status = luthier__plan_qstep(ctx, g, p, pd.int8, st, gn, &f[ni])) != LUTHIER_STATUS_OK) goto done;
        } else switch (op) {
        case LUTHIER_OP_CONV2D:
            if ((status = luthier__plan_conv(ctx, g, p, st, gn, &f[ni], pd.fallback_invalid)) != LUTHIER_STATUS_OK) goto done;
            break;
        case LUTHIER_OP_DENSE:
            if ((status = luthier__plan_dense(ctx, g, p, st, gn, pd.fallback_invalid)) != LUTHIER_STATUS_OK) goto done;
            break;
        case LUTHIER_OP_BATCH_NORM: {
            size_t c = (size_t)g->tensors[gn->inputs[0]].shape[1], q;
            float *sc = (float *)luthier__plan_blob(p, sizeof(float) * c), *sh = (float *)luthier__plan_blob(p, sizeof(float) * c);
            const float *gamma = (const float *)g->tensors[gn->inputs[1]].data, *beta = (const float *)g->tensors[gn->inputs[2]].data,
                        *mean = (const float *)g->tensors[gn->inputs[3]].data, *var = (const float *)g->tensors[gn->inputs[4]].data;
            double eps = gn->d.epsilon > 0 ? gn->d.epsilon : 1e-5;
            if (!sc || !sh) LUTHIER__OOM();
            for (q = 0; q < c; q++) {
                double s = (double)gamma[q] / sqrt((double)var[q] + eps);
                sc[q] = (float)s;
                sh[q] = (float)((double)beta[q] - (double)mean[q] * s);
            }
            st->scale = sc;
            st->shift = sh;
            p->weights_bytes += 2 * sizeof(float) * c;
            break;
        }
        case LUTHIER_OP_LAYER_NORM:
            for (k = 1; k < gn->d.num_inputs; k++) {
                const float *c = NULL;
                if (gn->inputs[k] >= 0 && !(c = (const float *)luthier__own_const(p, gn->inputs[k]))) LUTHIER__OOM();
                if (k == 1) st->scale = c;
                else st->shift = c;
            }
            break;
        case LUTHIER_OP_ATTENTION: {
            const luthier__gtensor *q = &g->tensors[gn->inputs[0]], *kk = &g->tensors[gn->inputs[1]];
            size_t ws = sizeof(float) * luthier__op_attention_scratch_floats(ctx->pool->num_threads,
                                                                             (size_t)q->shape[q->rank - 2], (size_t)kk->shape[kk->rank - 2]);
            if (p->workspace_bytes < ws) p->workspace_bytes = ws;
            break;
        }
        case LUTHIER_OP_MATMUL: {
            /* B is packed per batch into plan-owned memory (or once, when it is a constant
               without batch dimensions): luthier_sgemm would allocate on every call */
            const luthier__gtensor *a = &g->tensors[gn->inputs[0]], *b = &g->tensors[gn->inputs[1]];
            const luthier__gtensor *o = &g->tensors[gn->outputs[0]];
            size_t m = (size_t)a->shape[a->rank - 2], n = (size_t)o->shape[o->rank - 1], kk = (size_t)a->shape[a->rank - 1], ws;
            int ok2;
            if (st->cfg.kernel[0]) {
                if (luthier__resolve_kernel(ctx, st->cfg.kernel, &st->kernel_index) != LUTHIER_STATUS_OK) {
                    if (!pd.fallback_invalid)
                        LUTHIER__PFAIL(LUTHIER_STATUS_NOT_FOUND, "plan: node '%s' (matmul): unknown kernel '%s'", gn->name, st->cfg.kernel);
                    st->kernel_index = luthier__kernel_for_n(ctx, n);
                }
            } else {
                st->kernel_index = luthier__kernel_for_n(ctx, n);
            }
            st->kernel = luthier__ukernels[st->kernel_index].name;
            if (!luthier__packed_b_layout_init(&st->bl, (size_t)luthier__ukernels[st->kernel_index].nr, kk, n))
                LUTHIER__PFAIL(LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (matmul): packed B overflows", gn->name);
            if (!(st->packed = (float *)luthier__plan_blob(p, st->bl.bytes))) LUTHIER__OOM();
            st->b_prepacked = b->is_const && luthier__numel(b->rank - 2, b->shape, &ok2) == 1;
            if (st->b_prepacked) {
                luthier__pack_b(&st->bl, (const float *)b->data, gn->d.trans_b ? kk : n, gn->d.trans_b != 0, st->packed, 0,
                                st->bl.panels);
                p->weights_bytes += st->bl.bytes;
            }
            ws = luthier__sgemm_ws(ctx, st->kernel_index, m, n, kk);
            if (p->workspace_bytes < ws) p->workspace_bytes = ws;
            break;
        }
        default:
            break;
        }
        /* constants read at run time belong to the plan */
        for (k = 0; k < st->nin; k++)
            if (p->vals[luthier__root(p, st->in[k])].storage == LUTHIER__ST_CONST && !luthier__own_const(p, st->in[k])) LUTHIER__OOM();
        if (st->residual >= 0 && p->vals[luthier__root(p, st->residual)].storage == LUTHIER__ST_CONST &&
            !luthier__own_const(p, st->residual))
            LUTHIER__OOM();
    }
    /* graph outputs in the caller's (logical) layout */
    p->num_outputs = g->num_outputs;
    for (i = 0; i < g->num_outputs; i++) {
        int v = luthier__need_q(p, pd.int8, g->outputs[i], 0);
        if (v < 0 || (v = luthier__need(ctx, p, v, LUTHIER__PLAIN)) < 0) LUTHIER__OOM();
        p->outputs[i] = v;
        if (p->vals[luthier__root(p, v)].storage == LUTHIER__ST_CONST && !luthier__own_const(p, v)) LUTHIER__OOM();
    }
    luthier__lifetimes(p);
    for (i = 0; i < p->num_vals; i++) {
        int r = luthier__root(p, i);
        if (p->vals[r].storage == LUTHIER__ST_ARENA && p->vals[r].last >= 0 &&
            (i >= g->num_tensors || !g->tensors[i].is_input))
            p->sum_activation_bytes += p->vals[i].bytes;
    }
    luthier__plan_inplace(p);
    if (!luthier__assign_offsets(p)) LUTHIER__OOM();
    /* each conv step prefetches, as it ends, the block the next conv step starts with: in a
       network the weights come from memory, and the first block of a layer had nothing to
       hide its arrival behind (docs/DESIGN.md, "Next-block prefetch") */
    for (i = 0, j = -1; i < p->num_steps; i++) {
        luthier__pstep *st = &p->steps[i];
        if (st->kind != LUTHIER__STEP_NODE || st->q || st->d.op != LUTHIER_OP_CONV2D || !st->conv) continue;
        if (j >= 0) luthier__conv2d_first_block(st->conv, &p->steps[j].next);
        j = i;
    }
    for (i = 0; i < p->num_steps; i++) p->flops += p->steps[i].flops;
    /* reserve the workspace now so that runs do not allocate */
    if (p->workspace_bytes && !luthier__context_workspace(ctx, p->workspace_bytes))
        LUTHIER__PFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: cannot reserve %zu bytes of workspace", p->workspace_bytes);
    if (!pd.external_arena && p->arena_bytes) {
        if (!(p->arena = luthier__alloc(p->arena_bytes)))
            LUTHIER__PFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: cannot allocate the %zu-byte arena", p->arena_bytes);
        p->arena_owned = 1;
    }
    *out = p;
    p = NULL; /* handed out: the cleanup below keeps it */
done: /* success and failure: free the scaffolding */
    if (f)
        for (i = 0; i < n; i++) {
            luthier__free(f[i].w);
            luthier__free(f[i].b);
        }
    luthier__free(f);
    luthier__free(prod);
    luthier__free(cons);
    luthier__free(order);
    luthier_plan_destroy(p);
    return status;
}
#undef LUTHIER__PFAIL
#undef LUTHIER__OOM

LUTHIER_API luthier_status luthier_plan_get_info(const luthier_plan *p, luthier_plan_info *out) {
    if (!p || !out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->num_steps = p->num_steps;
    out->num_inputs = p->num_inputs;
    out->num_outputs = p->num_outputs;
    out->weights_bytes = p->weights_bytes;
    out->arena_bytes = p->arena_bytes;
    out->sum_activation_bytes = p->sum_activation_bytes;
    out->workspace_bytes = p->workspace_bytes;
    out->flops = p->flops;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_plan_step_info(const luthier_plan *p, int step, luthier_step_info *out) {
    const luthier__pstep *st;
    if (!p || !out || step < 0 || step >= p->num_steps) return LUTHIER_STATUS_INVALID_ARGUMENT;
    st = &p->steps[step];
    memset(out, 0, sizeof *out);
    out->name = st->name;
    out->op = st->kind == LUTHIER__STEP_NODE ? st->d.op : st->kind == LUTHIER__STEP_CONVERT ? LUTHIER_OP_TRANSPOSE : LUTHIER_OP_IDENTITY;
    out->int8 = st->q || st->kind == LUTHIER__STEP_QUANTIZE || st->kind == LUTHIER__STEP_DEQUANTIZE;
    out->fused = st->fused;
    out->node = st->node;
    out->algorithm = st->algorithm;
    out->kernel = st->kernel;
    out->schedule = st->cfg.schedule;
    out->num_ratios = st->cfg.num_ratios;
    memcpy(out->ratios, st->cfg.ratios, sizeof out->ratios);
    out->flops = st->flops;
    out->last_seconds = st->seconds;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_plan_bind_arena(luthier_plan *p, void *arena, size_t bytes) {
    if (!p) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((!arena && p->arena_bytes) || bytes < p->arena_bytes || ((uintptr_t)arena % LUTHIER__ALIGN)) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (p->arena_owned) luthier__free(p->arena);
    p->arena = arena;
    p->arena_owned = 0;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_plan_set_profiling(luthier_plan *p, int on) {
    if (!p) return LUTHIER_STATUS_INVALID_ARGUMENT;
    p->profiling = on != 0;
    return LUTHIER_STATUS_OK;
}

/* >>impl-plan-run */

typedef struct luthier__runctx {
    luthier_plan *p;
    const void *const *inputs;
} luthier__runctx;

LUTHIER_PRIVATE void *luthier__ptr(const luthier__runctx *rc, int v) {
    const luthier__pval *r = &rc->p->vals[luthier__root(rc->p, v)];
    switch (r->storage) {
    case LUTHIER__ST_ARENA: return (char *)rc->p->arena + r->offset;
    case LUTHIER__ST_INPUT: return (void *)rc->inputs[r->input_index];
    default: return (void *)r->cdata;
    }
}

LUTHIER_PRIVATE size_t luthier__prod(const int64_t *s, int from, int to) {
    size_t n = 1;
    int i;
    for (i = from; i < to; i++) n *= (size_t)s[i];
    return n;
}

/* Shape of v as seen by a step in `layout`, right-aligned to rank (numpy broadcasting). */
LUTHIER_PRIVATE void luthier__bshape(const luthier__pval *v, int layout, int rank, int64_t *out) {
    int64_t ls[LUTHIER_MAX_RANK];
    int i, pad = rank - v->rank;
    for (i = 0; i < rank; i++) ls[i] = i < pad ? 1 : v->shape[i - pad];
    if (layout == LUTHIER__NHWC && rank == 4) {
        out[0] = ls[0]; out[1] = ls[2]; out[2] = ls[3]; out[3] = ls[1];
    } else {
        memcpy(out, ls, sizeof(int64_t) * (size_t)rank);
    }
}

/* An int8 step: uint8 in, uint8 out (int8 conv2d / dense: uint8 or fp32 out). */
LUTHIER_PRIVATE luthier_status luthier__run_qstep(luthier_context *ctx, const luthier__runctx *rc, const luthier__pstep *st,
                                                  const luthier__op_cfg *cfg, const luthier__pval *x, const luthier__pval *o,
                                                  const int64_t *xs, const int64_t *os) {
    const uint8_t *xp = (const uint8_t *)luthier__ptr(rc, st->in[0]);
    void *op = luthier__ptr(rc, st->out[0]);
    switch (st->d.op) {
    case LUTHIER_OP_CONV2D:
    case LUTHIER_OP_DENSE:
        return luthier_qconv2d_run(ctx, st->qconv, xp, op);
    case LUTHIER_OP_ADD: {
        const luthier__pval *b = &rc->p->vals[st->in[1]];
        return luthier__op_qadd(ctx, cfg, xp, x->qscale, x->qzero, (const uint8_t *)luthier__ptr(rc, st->in[1]), b->qscale,
                                b->qzero, (uint8_t *)op, o->qscale, o->qzero, st->qmin, st->qmax, o->bytes);
    }
    case LUTHIER_OP_MAXPOOL:
    case LUTHIER_OP_AVGPOOL: {
        size_t kh = (size_t)st->d.kernel[0], kw = (size_t)st->d.kernel[1];
        size_t sh = st->d.stride[0] ? (size_t)st->d.stride[0] : kh, sw = st->d.stride[1] ? (size_t)st->d.stride[1] : kw;
        if (st->d.op == LUTHIER_OP_MAXPOOL)
            return luthier__op_qmaxpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3], kh, kw,
                                             sh, sw, st->d.dilation[0] ? (size_t)st->d.dilation[0] : 1,
                                             st->d.dilation[1] ? (size_t)st->d.dilation[1] : 1, (size_t)st->d.pads[0],
                                             (size_t)st->d.pads[1], (size_t)st->d.pads[2], (size_t)st->d.pads[3], (uint8_t *)op,
                                             (size_t)os[1], (size_t)os[2], x->qzero);
        return luthier__op_qavgpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3], kh, kw, sh, sw,
                                         (size_t)st->d.pads[0], (size_t)st->d.pads[1], (size_t)st->d.pads[2],
                                         (size_t)st->d.pads[3], st->d.count_include_pad, (uint8_t *)op, (size_t)os[1],
                                         (size_t)os[2], x->qzero);
    }
    default: /* GLOBAL_AVGPOOL, ADAPTIVE_AVGPOOL */
        return luthier__op_qadaptive_avgpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3],
                                                  (uint8_t *)op, (size_t)os[1], (size_t)os[2]);
    }
}

LUTHIER_PRIVATE luthier_status luthier__run_step(luthier_context *ctx, const luthier__runctx *rc,
                                                 luthier__pstep *st) {
    luthier_plan *p = rc->p;
    const luthier__pval *x = &p->vals[st->in[0]], *o = &p->vals[st->out[0]];
    const float *xp = (const float *)luthier__ptr(rc, st->in[0]);
    float *op = (float *)luthier__ptr(rc, st->out[0]);
    luthier__op_cfg cfg;
    int64_t xs[LUTHIER_MAX_RANK], os[LUTHIER_MAX_RANK];
    cfg.schedule = st->cfg.schedule;
    cfg.ratios = st->cfg.num_ratios ? st->cfg.ratios : NULL;
    cfg.num_ratios = st->cfg.num_ratios;
    luthier__phys(x, xs);
    luthier__phys(o, os);
    if (st->residual >= 0 && !st->residual_aliased) {
        const void *r = luthier__ptr(rc, st->residual);
        if (r != (const void *)op) memcpy(op, r, o->bytes);
    }
    if (st->kind == LUTHIER__STEP_CONVERT) {
        static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
        return luthier__op_transpose(ctx, &cfg, xp, op, 4, xs, o->layout == LUTHIER__NHWC ? to_nhwc : to_nchw);
    }
    if (st->kind == LUTHIER__STEP_QUANTIZE)
        return luthier__op_quantize(ctx, &cfg, xp, (uint8_t *)op, o->bytes, o->qscale, o->qzero);
    if (st->kind == LUTHIER__STEP_DEQUANTIZE)
        return luthier__op_dequantize(ctx, &cfg, (const uint8_t *)xp, op, x->bytes, x->qscale, x->qzero);
    if (st->q) return luthier__run_qstep(ctx, rc, st, &cfg, x, o, xs, os);
    switch (st->d.op) {
    case LUTHIER_OP_CONV2D:
        return luthier__conv2d_run_next(ctx, st->conv, xp, op, &st->next);
    case LUTHIER_OP_DENSE: {
        luthier_sgemm_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.n = os[o->rank - 1];
        sd.k = xs[x->rank - 1];
        sd.m = (int64_t)(luthier__prod(xs, 0, x->rank) / (size_t)sd.k);
        sd.trans_b = !st->d.trans_b;
        sd.bias = st->bias;
        sd.activation = st->act;
        sd.clamp_min = st->cmin;
        sd.clamp_max = st->cmax;
        sd.accumulate = st->residual >= 0;
        sd.schedule = st->cfg.schedule;
        sd.ratios = cfg.ratios;
        sd.num_ratios = cfg.num_ratios;
        return luthier_sgemm_packed(ctx, &sd, xp, st->pb, op);
    }
    case LUTHIER_OP_MATMUL: {
        const luthier__pval *b = &p->vals[st->in[1]];
        const float *bp = (const float *)luthier__ptr(rc, st->in[1]);
        int orank = o->rank, br = orank - 2, i;
        int64_t as[LUTHIER_MAX_RANK], bs[LUTHIER_MAX_RANK];
        size_t m = (size_t)os[orank - 2], n = (size_t)os[orank - 1], k = (size_t)xs[x->rank - 1];
        size_t batches = luthier__prod(os, 0, br), bi;
        luthier_sgemm_desc sd;
        luthier_status s;
        for (i = 0; i < br; i++) {
            int ia = i - (br - (x->rank - 2)), ib = i - (br - (b->rank - 2));
            as[i] = ia >= 0 ? xs[ia] : 1;
            bs[i] = ib >= 0 ? b->shape[ib] : 1;
        }
        memset(&sd, 0, sizeof sd);
        sd.m = (int64_t)m; sd.n = (int64_t)n; sd.k = (int64_t)k;
        sd.lda = (int64_t)k; sd.ldc = (int64_t)n; sd.ldb = (int64_t)(st->d.trans_b ? k : n);
        sd.trans_b = st->d.trans_b;
        sd.schedule = st->cfg.schedule;
        sd.ratios = cfg.ratios;
        sd.num_ratios = cfg.num_ratios;
        for (bi = 0; bi < batches; bi++) {
            size_t rem = bi, aoff = 0, boff = 0, astride = 1, bstride = 1;
            for (i = br - 1; i >= 0; i--) {
                size_t idx = rem % (size_t)os[i];
                rem /= (size_t)os[i];
                aoff += (as[i] == 1 ? 0 : idx) * astride;
                boff += (bs[i] == 1 ? 0 : idx) * bstride;
                astride *= (size_t)as[i];
                bstride *= (size_t)bs[i];
            }
            if (!st->b_prepacked)
                luthier__pack_b(&st->bl, bp + boff * k * n, (size_t)sd.ldb, sd.trans_b != 0, st->packed, 0, st->bl.panels);
            if ((s = luthier__run(ctx, &sd, st->kernel_index, xp + aoff * m * k, &st->bl, st->packed, op + bi * m * n)) !=
                LUTHIER_STATUS_OK)
                return s;
        }
        return LUTHIER_STATUS_OK;
    }
    case LUTHIER_OP_MAXPOOL:
    case LUTHIER_OP_AVGPOOL: {
        size_t kh = (size_t)st->d.kernel[0], kw = (size_t)st->d.kernel[1];
        return luthier__op_pool2d_nhwc(ctx, &cfg, st->d.op == LUTHIER_OP_MAXPOOL, xp, (size_t)xs[0], (size_t)xs[1],
                                       (size_t)xs[2], (size_t)xs[3], kh, kw,
                                       st->d.stride[0] ? (size_t)st->d.stride[0] : kh, st->d.stride[1] ? (size_t)st->d.stride[1] : kw,
                                       st->d.dilation[0] ? (size_t)st->d.dilation[0] : 1, st->d.dilation[1] ? (size_t)st->d.dilation[1] : 1,
                                       (size_t)st->d.pads[0], (size_t)st->d.pads[1], (size_t)st->d.pads[2], (size_t)st->d.pads[3],
                                       st->d.count_include_pad, op, (size_t)os[1], (size_t)os[2]);
    }
    case LUTHIER_OP_GLOBAL_AVGPOOL:
    case LUTHIER_OP_ADAPTIVE_AVGPOOL:
        return luthier__op_adaptive_avgpool_nhwc(ctx, &cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3],
                                                 op, (size_t)os[1], (size_t)os[2]);
    case LUTHIER_OP_LRN:
        return luthier__op_lrn_nhwc(ctx, &cfg, xp, op, luthier__prod(xs, 0, 3), (size_t)xs[3], (size_t)st->d.size,
                                    st->d.alpha != 0 ? st->d.alpha : 1e-4f, st->d.beta != 0 ? st->d.beta : 0.75f,
                                    st->d.bias != 0 ? st->d.bias : 1.0f);
    case LUTHIER_OP_BATCH_NORM:
        if (x->layout == LUTHIER__NHWC)
            return luthier__op_channel_affine(ctx, &cfg, xp, op, luthier__prod(xs, 0, 3), (size_t)xs[3], 1, st->scale,
                                              st->shift, LUTHIER_ACTIVATION_NONE, 0, 0);
        return luthier__op_channel_affine(ctx, &cfg, xp, op, (size_t)xs[0], (size_t)xs[1], luthier__prod(xs, 2, x->rank),
                                          st->scale, st->shift, LUTHIER_ACTIVATION_NONE, 0, 0);
    case LUTHIER_OP_RELU: case LUTHIER_OP_CLIP: case LUTHIER_OP_GELU: case LUTHIER_OP_SIGMOID:
    case LUTHIER_OP_TANH: case LUTHIER_OP_ERF: case LUTHIER_OP_EXP: case LUTHIER_OP_SQRT: case LUTHIER_OP_NEG: {
        luthier__unary u;
        switch (st->d.op) {
        case LUTHIER_OP_RELU: u = LUTHIER__UNARY_RELU; break;
        case LUTHIER_OP_CLIP: u = LUTHIER__UNARY_CLIP; break;
        case LUTHIER_OP_GELU: u = st->d.approximate ? LUTHIER__UNARY_GELU_TANH : LUTHIER__UNARY_GELU_ERF; break;
        case LUTHIER_OP_SIGMOID: u = LUTHIER__UNARY_SIGMOID; break;
        case LUTHIER_OP_TANH: u = LUTHIER__UNARY_TANH; break;
        case LUTHIER_OP_ERF: u = LUTHIER__UNARY_ERF; break;
        case LUTHIER_OP_EXP: u = LUTHIER__UNARY_EXP; break;
        case LUTHIER_OP_SQRT: u = LUTHIER__UNARY_SQRT; break;
        default: u = LUTHIER__UNARY_NEG; break;
        }
        return luthier__op_unary(ctx, &cfg, u, st->d.clamp_min, st->d.clamp_max, xp, op, o->bytes / sizeof(float));
    }
    case LUTHIER_OP_ADD: case LUTHIER_OP_SUB: case LUTHIER_OP_MUL: case LUTHIER_OP_DIV:
    case LUTHIER_OP_POW: case LUTHIER_OP_MAX: case LUTHIER_OP_MIN: {
        int64_t as[LUTHIER_MAX_RANK], bs[LUTHIER_MAX_RANK];
        luthier__binary kind = (luthier__binary)(LUTHIER__BINARY_ADD + (st->d.op - LUTHIER_OP_ADD));
        luthier__bshape(x, o->layout, o->rank, as);
        luthier__bshape(&p->vals[st->in[1]], o->layout, o->rank, bs);
        return luthier__op_binary(ctx, &cfg, kind, xp, as, (const float *)luthier__ptr(rc, st->in[1]), bs, op, os, o->rank,
                                  st->act, st->cmin, st->cmax);
    }
    case LUTHIER_OP_CONCAT:
    case LUTHIER_OP_SPLIT: {
        const float *srcs[64];
        float *dsts[LUTHIER_MAX_NODE_OUTPUTS];
        size_t lens[64];
        int many = st->d.op == LUTHIER_OP_CONCAT ? st->nin : st->nout, i;
        const luthier__pval *whole = st->d.op == LUTHIER_OP_CONCAT ? o : x;
        int axis = luthier__phys_axis(whole, luthier__norm_axis(st->d.axis, whole->rank, 0));
        int64_t ws[LUTHIER_MAX_RANK];
        luthier__phys(whole, ws);
        for (i = 0; i < many; i++) {
            int v = st->d.op == LUTHIER_OP_CONCAT ? st->in[i] : st->out[i];
            int64_t ps[LUTHIER_MAX_RANK];
            luthier__phys(&p->vals[v], ps);
            lens[i] = (size_t)ps[axis];
            if (st->d.op == LUTHIER_OP_CONCAT) srcs[i] = (const float *)luthier__ptr(rc, v);
            else dsts[i] = (float *)luthier__ptr(rc, v);
        }
        if (st->d.op == LUTHIER_OP_CONCAT)
            return luthier__op_concat(ctx, &cfg, srcs, lens, many, luthier__prod(ws, 0, axis),
                                      luthier__prod(ws, axis + 1, whole->rank), op);
        return luthier__op_split(ctx, &cfg, xp, luthier__prod(ws, 0, axis), luthier__prod(ws, axis + 1, whole->rank), many,
                                 lens, dsts);
    }
    case LUTHIER_OP_SOFTMAX: {
        int axis = luthier__phys_axis(x, luthier__norm_axis(st->d.axis, x->rank, 0));
        return luthier__op_softmax(ctx, &cfg, xp, op, luthier__prod(xs, 0, axis), (size_t)xs[axis],
                                   luthier__prod(xs, axis + 1, x->rank), st->d.log);
    }
    case LUTHIER_OP_LAYER_NORM: {
        int axis = luthier__norm_axis(st->d.axis ? st->d.axis : -1, x->rank, 0);
        return luthier__op_layernorm(ctx, &cfg, xp, op, luthier__prod(xs, 0, axis), luthier__prod(xs, axis, x->rank),
                                     st->scale, st->shift, st->d.epsilon > 0 ? st->d.epsilon : 1e-5f);
    }
    case LUTHIER_OP_TRANSPOSE:
        return luthier__op_transpose(ctx, &cfg, xp, op, x->rank, xs, st->perm);
    case LUTHIER_OP_GATHER: {
        const luthier__pval *iv = &p->vals[st->in[1]];
        int axis = luthier__norm_axis(st->d.axis, x->rank, 0);
        return luthier__op_gather(ctx, &cfg, xp, luthier__prod(xs, 0, axis), (size_t)xs[axis], luthier__prod(xs, axis + 1, x->rank),
                                  (const int64_t *)luthier__ptr(rc, st->in[1]), iv->bytes / sizeof(int64_t), op);
    }
    case LUTHIER_OP_ATTENTION: {
        const luthier__pval *k = &p->vals[st->in[1]], *v = &p->vals[st->in[2]];
        int r = x->rank;
        size_t d = (size_t)xs[r - 1];
        float *scratch = (float *)luthier__context_workspace(ctx, p->workspace_bytes);
        if (!scratch) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "attention: no workspace");
        return luthier__op_attention(ctx, &cfg, xp, (const float *)luthier__ptr(rc, st->in[1]),
                                     (const float *)luthier__ptr(rc, st->in[2]), op, luthier__prod(xs, 0, r - 2),
                                     (size_t)xs[r - 2], (size_t)k->shape[r - 2], d, (size_t)v->shape[r - 1],
                                     st->d.scale > 0 ? st->d.scale : (float)(1.0 / sqrt((double)d)), st->d.causal, scratch);
    }
    default:
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "step '%s': operator %s has no runner", st->name,
                             luthier_op_name(st->d.op));
    }
}

LUTHIER_API luthier_status luthier_plan_run(luthier_context *ctx, luthier_plan *p,
                                            const void *const *inputs, void *const *outputs) {
    luthier__runctx rc;
    luthier_status s;
    int i;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!p) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan_run: plan is NULL");
    if (p->num_inputs && !inputs) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan_run: inputs is NULL");
    if (!outputs) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan_run: outputs is NULL");
    for (i = 0; i < p->num_inputs; i++)
        if (!inputs[i]) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan_run: input %d is NULL", i);
    for (i = 0; i < p->num_outputs; i++)
        if (!outputs[i]) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan_run: output %d is NULL", i);
    if (p->arena_bytes && !p->arena)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "plan_run: the plan was created with external_arena and no arena is bound (luthier_plan_bind_arena)");
    if (p->num_clusters != ctx->pool->num_clusters)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE, "plan_run: the plan was made for %d clusters, the context has %d",
                             p->num_clusters, ctx->pool->num_clusters);
    rc.p = p;
    rc.inputs = inputs;
    if (p->observe)
        for (i = 0; i < p->num_inputs; i++)
            if (p->input_dtypes[i] == LUTHIER_DTYPE_F32)
                p->observe(p->observe_user, p->vals[p->inputs[i]].tensor, (const float *)inputs[i],
                           p->vals[p->inputs[i]].bytes / sizeof(float));
    for (i = 0; i < p->num_steps; i++) {
        luthier__pstep *st = &p->steps[i];
        double t0 = p->profiling ? luthier__seconds() : 0.0;
        int k;
        if ((s = luthier__run_step(ctx, &rc, st)) != LUTHIER_STATUS_OK) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ctx->error);
            return luthier__fail(ctx, s, "plan_run: step %d '%s': %s", i, st->name, msg);
        }
        if (p->profiling) st->seconds = luthier__seconds() - t0;
        if (p->observe && st->kind == LUTHIER__STEP_NODE)
            for (k = 0; k < st->nout; k++) {
                const luthier__pval *a = &p->vals[st->out[k]];
                if (a->dtype == LUTHIER_DTYPE_F32 && a->tensor >= 0)
                    p->observe(p->observe_user, a->tensor, (const float *)luthier__ptr(&rc, st->out[k]), a->bytes / sizeof(float));
            }
    }
    for (i = 0; i < p->num_outputs; i++) {
        const void *src = luthier__ptr(&rc, p->outputs[i]);
        if (src != outputs[i]) memmove(outputs[i], src, p->vals[p->outputs[i]].bytes);
    }
    return LUTHIER_STATUS_OK;
}

/* >>impl-calibrate: ranges observed on sample runs of an fp32 plan. */

#define LUTHIER__CAL_BINS 2048

typedef struct luthier__calobs {
    int num_tensors, pass;       /* pass 0: min/max; 1: histograms over [min, max] */
    float *mn, *mx;
    unsigned char *seen;
    uint64_t **hist;             /* PERCENTILE: per tensor, LUTHIER__CAL_BINS counts (pass 1) */
    int oom;
} luthier__calobs;

LUTHIER_PRIVATE void luthier__cal_observe(void *user, int t, const float *x, size_t n) {
    luthier__calobs *o = (luthier__calobs *)user;
    size_t i;
    if (t < 0 || t >= o->num_tensors) return;
    if (o->pass == 0) {
        float mn = o->seen[t] ? o->mn[t] : FLT_MAX, mx = o->seen[t] ? o->mx[t] : -FLT_MAX;
        for (i = 0; i < n; i++) {
            float v = x[i];
            if (v < mn) mn = v; /* NaN compares false: skipped */
            if (v > mx) mx = v;
        }
        if (mn <= mx) {
            o->mn[t] = mn;
            o->mx[t] = mx;
            o->seen[t] = 1;
        }
    } else if (o->seen[t]) {
        uint64_t *h = o->hist[t];
        const double lo = o->mn[t], width = (double)o->mx[t] - lo, k = width > 0 ? LUTHIER__CAL_BINS / width : 0.0;
        if (!h) {
            if (!(h = (uint64_t *)luthier__alloc(sizeof(uint64_t) * LUTHIER__CAL_BINS))) {
                o->oom = 1;
                return;
            }
            memset(h, 0, sizeof(uint64_t) * LUTHIER__CAL_BINS);
            o->hist[t] = h;
            o->seen[t] = 2;
        }
        for (i = 0; i < n; i++) {
            double b = ((double)x[i] - lo) * k;
            if (b >= 0.0) h[b < LUTHIER__CAL_BINS - 1 ? (size_t)b : LUTHIER__CAL_BINS - 1]++;
            else if (b < 0.0) h[0]++; /* (NaN: neither) */
        }
    }
}

LUTHIER_API luthier_status luthier_calibrate(luthier_context *ctx, const luthier_graph *g, const luthier_calib_desc *desc,
                                             luthier_calibration **out) {
    luthier_plan *p = NULL;
    luthier_calibration *cal = NULL;
    luthier__calobs o;
    luthier_status s = LUTHIER_STATUS_OK;
    void **outs = NULL;
    double pct;
    int i, t, smp, pass;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!g || !desc || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: graph, desc or out is NULL");
    *out = NULL;
    if ((unsigned)desc->method >= (unsigned)LUTHIER_CALIB_METHOD_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: unknown method %d", (int)desc->method);
    pct = desc->percentile == 0.0f ? 99.99 : (double)desc->percentile;
    if (desc->method == LUTHIER_CALIB_PERCENTILE && !(pct >= 50.0 && pct <= 100.0))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: percentile %g is outside [50, 100]", pct);
    if (desc->num_samples < 1 || !desc->samples)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: %d samples (give at least one, and samples)",
                             desc->num_samples);
    for (smp = 0; smp < desc->num_samples; smp++) {
        if (!desc->samples[smp] && g->num_inputs)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: sample %d is NULL", smp);
        for (i = 0; i < g->num_inputs; i++)
            if (!desc->samples[smp][i])
                return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibrate: input %d of sample %d is NULL", i, smp);
    }
    memset(&o, 0, sizeof o);
    o.num_tensors = g->num_tensors;
    o.mn = (float *)luthier__alloc(sizeof(float) * (size_t)(g->num_tensors + 1));
    o.mx = (float *)luthier__alloc(sizeof(float) * (size_t)(g->num_tensors + 1));
    o.seen = (unsigned char *)luthier__alloc((size_t)g->num_tensors + 1);
    o.hist = (uint64_t **)luthier__alloc(sizeof(uint64_t *) * (size_t)(g->num_tensors + 1));
    outs = (void **)luthier__alloc(sizeof(void *) * (size_t)(g->num_outputs + 1));
    if (!o.mn || !o.mx || !o.seen || !o.hist || !outs) {
        s = luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "calibrate: out of memory");
        goto done;
    }
    memset(o.seen, 0, (size_t)g->num_tensors + 1);
    memset(o.hist, 0, sizeof(uint64_t *) * (size_t)(g->num_tensors + 1));
    memset(outs, 0, sizeof(void *) * (size_t)(g->num_outputs + 1));
    for (i = 0; i < g->num_outputs; i++) {
        const luthier__gtensor *ot = &g->tensors[g->outputs[i]];
        int ok;
        if (!(outs[i] = luthier__alloc((size_t)luthier__numel(ot->rank, ot->shape, &ok) * luthier__dtype_size(ot->dtype) + 1))) {
            s = luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "calibrate: out of memory");
            goto done;
        }
    }
    {
        luthier_plan_desc pd;
        memset(&pd, 0, sizeof pd);
        if ((s = luthier__plan_create_ex(ctx, g, &pd, LUTHIER__PLAN_NO_RESIDUAL, &p)) != LUTHIER_STATUS_OK) goto done;
    }
    p->observe = luthier__cal_observe;
    p->observe_user = &o;
    for (pass = 0; pass < (desc->method == LUTHIER_CALIB_PERCENTILE ? 2 : 1); pass++) {
        o.pass = pass;
        for (smp = 0; smp < desc->num_samples; smp++) {
            if ((s = luthier_plan_run(ctx, p, desc->samples[smp], outs)) != LUTHIER_STATUS_OK) {
                char msg[256];
                snprintf(msg, sizeof msg, "%s", ctx->error);
                s = luthier__fail(ctx, s, "calibrate: sample %d: %s", smp, msg);
                goto done;
            }
            if (o.oom) {
                s = luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "calibrate: out of memory");
                goto done;
            }
        }
    }
    if ((s = luthier_calibration_create(&cal)) != LUTHIER_STATUS_OK) {
        s = luthier__fail(ctx, s, "calibrate: out of memory");
        goto done;
    }
    for (t = 0; t < g->num_tensors; t++) {
        float lo, hi;
        if (!o.seen[t]) continue;
        lo = o.mn[t];
        hi = o.mx[t];
        if (o.hist[t] && o.seen[t] == 2) {
            /* the tails beyond (100 - pct) / 2 % on each side are clipped */
            const uint64_t *h = o.hist[t];
            uint64_t total = 0, acc = 0, cut;
            int b, blo = 0, bhi = LUTHIER__CAL_BINS - 1;
            const double width = ((double)o.mx[t] - (double)o.mn[t]) / LUTHIER__CAL_BINS;
            for (b = 0; b < LUTHIER__CAL_BINS; b++) total += h[b];
            cut = (uint64_t)((double)total * (100.0 - pct) / 200.0 + 0.5);
            for (b = 0, acc = 0; b < LUTHIER__CAL_BINS && acc + h[b] <= cut; b++) acc += h[b];
            blo = b;
            for (b = LUTHIER__CAL_BINS - 1, acc = 0; b >= 0 && acc + h[b] <= cut; b--) acc += h[b];
            bhi = b;
            if (blo <= bhi) {
                lo = (float)((double)o.mn[t] + width * blo);
                hi = (float)((double)o.mn[t] + width * (bhi + 1));
                if (lo < o.mn[t]) lo = o.mn[t];
                if (hi > o.mx[t]) hi = o.mx[t];
            }
        }
        if (!(lo >= -FLT_MAX && hi <= FLT_MAX)) continue; /* infinite values: leave the tensor fp32 */
        if ((s = luthier_calibration_set_range(cal, t, lo, hi)) != LUTHIER_STATUS_OK) {
            s = luthier__fail(ctx, s, "calibrate: out of memory");
            goto done;
        }
    }
    /* views (reshape, flatten, identity) compute nothing, and pools stay inside their input's
       range: their outputs take their inputs' parameters (as int8 plans run them) */
    for (i = 0; i < g->num_nodes; i++) {
        const luthier__gnode *gn = &g->nodes[i];
        const luthier_op op = gn->d.op;
        if ((op == LUTHIER_OP_IDENTITY || op == LUTHIER_OP_FLATTEN || op == LUTHIER_OP_RESHAPE || op == LUTHIER_OP_MAXPOOL ||
             op == LUTHIER_OP_AVGPOOL || op == LUTHIER_OP_GLOBAL_AVGPOOL || op == LUTHIER_OP_ADAPTIVE_AVGPOOL) &&
            luthier__cal_has(cal, gn->inputs[0]) &&
            (s = luthier_calibration_set_params(cal, gn->outputs[0], cal->scale[gn->inputs[0]], cal->zero[gn->inputs[0]])) !=
                LUTHIER_STATUS_OK) {
            s = luthier__fail(ctx, s, "calibrate: out of memory");
            goto done;
        }
    }
    *out = cal;
    cal = NULL;
done:
    if (o.hist)
        for (t = 0; t < g->num_tensors; t++) luthier__free(o.hist[t]);
    if (outs)
        for (i = 0; i < g->num_outputs; i++) luthier__free(outs[i]);
    luthier__free(outs);
    luthier__free(o.hist);
    luthier__free(o.mn);
    luthier__free(o.mx);
    luthier__free(o.seen);
    luthier_calibration_destroy(cal);
    luthier_plan_destroy(p);
    return s;
}
#undef LUTHIER__CAL_BINS

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_GRAPH_IMPLEMENTATION */
