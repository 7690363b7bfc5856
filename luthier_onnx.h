/* luthier_onnx.h - load ONNX models into luthier graphs, with nothing but libc.
   Part of luthier (MIT license, see luthier.h). An optional companion header that uses only the
   public graph API: include luthier.h first (in exactly one file with LUTHIER_IMPLEMENTATION).

       #include "luthier.h"
       #include "luthier_onnx.h"

       luthier_graph *g;  char err[512];
       luthier_onnx_options o = {0};                  // symbolic dims (batch, ...) = 1
       if (luthier_onnx_load("model.onnx", &o, &g, err, sizeof err)) { puts(err); return 1; }
       int xi = luthier_onnx_input_index(g, "input");  // position in luthier_plan_run's inputs
       int yi = luthier_onnx_output_index(g, "logits");
       ... luthier_plan_create(ctx, g, &pd, &p); luthier_plan_run(ctx, p, ins, outs);
       luthier_graph_destroy(g);

   Every function is static (a copy per translation unit; unused ones do not warn). The model is
   read with a small bounds-checked protobuf wire-format reader (no libprotobuf): a malformed,
   truncated or hostile file gives a status and a message, never a crash.

   FUNCTIONS
       luthier_onnx_load()          a .onnx file -> graph (constants copied into the graph, once)
       luthier_onnx_load_memory()   the same from bytes in memory
       luthier_onnx_input_index()   position of an ONNX graph input among the plan's inputs (-1)
       luthier_onnx_output_index()  position of an ONNX graph output among the plan's outputs
       luthier_onnx_tensor_load()   a serialized TensorProto (.pb, e.g. ONNX test data) -> f32/i64
       luthier_onnx_tensor_load_memory(), luthier_onnx_tensor_free()

   NAMES: the graph's tensors carry the ONNX value names (inputs, outputs, every value an engine
   node computes); nodes are named after their first output; helper nodes the loader adds get
   "<value>/<what>". Graph inputs that have an initializer (or a binding in the options) are
   constants, not plan inputs.

   WHAT IS READ: ModelProto (ir_version, opset_import), GraphProto (node, initializer, input,
   output, value_info), NodeProto, AttributeProto, ValueInfoProto, TensorProto (raw_data and
   float_data/int32_data/int64_data/double_data/uint64_data; float, double, float16, bfloat16 and
   the integer types and bool; floating point becomes f32, integers i64, keeping their type for
   DequantizeLinear); subgraphs (AttributeProto.g, nested at most 16 deep) for If. External data,
   sparse initializers, strings and the graphs lists of Loop and Scan are refused with a message. Default-domain opsets
   7..18 (and "com.microsoft" Gelu). Opset 18's changes to the operators below are read (Reduce*
   axes as an input, Split num_outputs, Pad axes, Resize axes, scatter reductions max and min,
   GroupNormalization); the operators it adds otherwise (BitwiseAnd/Or/Xor/Not, CenterCropPad,
   Col2Im, LpPool, ...) are refused as not supported.

   OPERATORS (ONNX -> engine)
       Conv (2-D; pads, auto_pad, strides, dilations, group; constant W, B) -> conv2d; Conv,
       MaxPool, AveragePool and the global pools over [N,C,L] run as 2-D over [N,C,1,L]
       ConvTranspose (2-D and 1-D; constant W [Cin, Cout/group, k...], B; strides, pads,
       dilations, output_padding, group, output_shape and auto_pad, which give the pads as the
       ONNX reference computes them) -> conv_transpose; 3-D is refused
       Gemm (transA, transB, alpha, beta; constant B -> dense (+bias), else matmul + mul/add)
       MatMul (constant 2-D B -> dense, else matmul)
       Relu Sigmoid Tanh Erf Sqrt Exp Neg Gelu Softmax LogSoftmax LRN Abs Log Floor Ceil
       Round Reciprocal -> the engine operator of the same name; Mul(t, Sigmoid(t)) (either
       order, the Sigmoid used by nothing else) -> silu; Mul(t, HardSigmoid(t)) with alpha 1/6,
       beta 0.5 (hardswish below opset 14; the same conditions) -> hard_swish
       PRelu (constant slope, broadcast one way to x) -> prelu
       Clip (attributes or constant inputs; [0, inf) -> relu)
       LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus Softsign ThresholdedRelu (and Mish,
       opset 18 in ONNX, taken where it appears) -> the engine activation of the same name
       MaxPool AveragePool (2-D: kernel_shape, strides, pads, auto_pad, dilations, ceil_mode,
       count_include_pad), GlobalAveragePool, GlobalMaxPool, BatchNormalization (inference),
       Pad (constant, reflect, edge, wrap; constant pads, negative ones crop; axes) -> pad
       Resize (11..18: nearest with every nearest_mode, linear, cubic with cubic_coeff_a and
       exclude_outside; every coordinate_transformation_mode but tf_crop_and_resize; constant
       scales or sizes, axes, keep_aspect_ratio_policy stretch, no antialias), Resize 10 and
       Upsample 7..9 (asymmetric) -> resize: the last two axes only (N and C keep their size)
       DepthToSpace (DCR, CRD), SpaceToDepth -> depth_to_space, space_to_depth
       LayerNormalization (opset 17), InstanceNormalization (layer norm from axis 2 + per-channel
       scale and bias), GroupNormalization (opset 18: reshape to [N, G, rest], layer norm from
       axis 2, reshape back, per-channel scale and bias from the per-group values), Add Sub Mul
       Div Pow Max Min Sum (numpy broadcasting)
       GatherElements GatherND (batch_dims) ScatterND ScatterElements (Scatter 9..10; reduction
       none, add, mul from 16, max, min from 18; int64 indices, constant or run-time) -> the
       engine operators of the same names
       Einsum (one or two operands; "..." and the implicit output included; a sum over labels
       in one term, contractions, batch labels) -> reduce, transpose, reshape, matmul steps;
       diagonals, broadcasting of size-1 dims and three or more operands are refused
       ReduceMax ReduceMin ReduceSum ReduceMean ReduceProd ReduceL1 ReduceL2 ReduceLogSum
       ReduceLogSumExp ReduceSumSquare (any constant axes, keepdims, noop_with_empty_axes) ->
       reduce (ReduceMean over H and W of [N,C,H,W] -> global_avgpool)
       Concat Split Slice (constant starts/ends/axes/steps -> gather) Flatten Reshape Transpose
       Squeeze Unsqueeze Gather Identity Dropout (identity; training_mode only with ratio 0)
       Cast (at run time to float, float16, int64, int32 or bool -> cast; any type on constants)
       Equal Greater Less GreaterOrEqual LessOrEqual Mod (fmod) -> the engine operator of the
       same name, on i64 when every operand is an integer, else on f32; And Or Xor Not -> f32
       0/1 logic; Where -> where (x, y i64 when both are integers). Booleans are f32 0/1 in the
       engine and come out so; int32 values are held (and come out) as i64
       Constant, Shape, Size, ConstantOfShape, Range (constants only); Expand (run
       time: a multiply by ones of the target shape), Tile (of a constant: folded, any repeats, at
       most 2^26 elements out; at run time: concats, at most 2^40 elements out)
       NonZero -> nonzero: a tensor with a run-time length (RUN-TIME LENGTHS in luthier_graph.h;
       so are NonMaxSuppression's selected rows). The operators downstream carry the length or
       are refused by the engine, naming them. Shape of such a tensor gives its capacity with
       that entry marked as min(value, length): Gather, Unsqueeze, Squeeze, Reshape, Flatten,
       Identity and Concat move the marks, ReduceMin keeps one; TopK takes a marked K over that
       length (torchvision's topk(min(topk_candidates, n))), ConstantOfShape a whole marked
       Shape (full_like). Any other use of a marked value, Size of such a tensor, and Slice of
       its axis other than [start >= 0 : end >= 0] with step 1 are refused. Concat takes more
       than 64 inputs (in groups of 64). Reduce* over such an axis reads only the valid
       entries (over none: ONNX's reduction of an empty set, e.g. ReduceMax -inf).
       If: the taken branch is converted in the node's place when the condition folds at load
       time; torch's numel(X) == 0 of a tensor X with a run-time length (batched_nms) takes the
       else-branch when the then-branch gives empty constants; any other condition is refused
       (>>onnx-if).
     GRAPH INPUTS: float, int64, int32 and bool; an int32 or bool input is fed as the model
     declares it (int32_t, one byte per bool) and read through a cast to i64 or f32 0/1.
       QuantizeLinear DequantizeLinear QLinearConv QLinearMatMul (see QUANTIZED MODELS)
     Constant folding: every node whose inputs are all constants is computed at load time (the
     Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains exporters write for static shapes).
     Patterns: the decomposed LayerNorm (ReduceMean, Sub, Pow|Mul, ReduceMean, Add eps, Sqrt,
     Div [, Mul gamma [, Add beta]]) -> layer_norm; the erf GELU x*0.5*(1+erf(x/sqrt2)) and the
     tanh GELU 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))) (GPT-2's gelu_new; the cube as Pow 3
     or Mul, the half as * 0.5 or / 2 applied first, last or to 1 + tanh, constants on either
     side) -> gelu (approximate for tanh); each with rank-0 constants and intermediates that
     nothing else reads; MatMul + Add of a constant bias [N] -> dense with its bias (B a
     constant [K, N]; else the same add), so that an activation after it fuses into the dense.
     luthier_onnx_options.no_patterns keeps them as written. Nodes whose results nothing uses
     are dropped.
     Anything else (an operator, an attribute value, a non-constant weight, int64 arithmetic
     other than the above at run time) fails with LUTHIER_STATUS_UNSUPPORTED and a message naming the node,
     its op type and what is missing. A malformed model (cycle, dangling input, value produced
     twice, bad wire format) fails with LUTHIER_STATUS_INVALID_ARGUMENT.

   QUANTIZED MODELS: the QDQ format (QuantizeLinear / DequantizeLinear pairs around float
   operators, as onnxruntime's quantizer writes them) and the QOperator format's QLinearConv and
   QLinearMatMul. A luthier graph is fp32 at its edges and inside: the loader imports the
   model's real-valued computation and hands its quantization parameters to the
   luthier_calibration in options.calibration (without one, the same graph is imported and the
   parameters are dropped), for an int8 plan to use.
     QuantizeLinear of a run-time tensor x adds no node: its integers are x's graph tensor, and
       (scale, zero point) go to that tensor. Per tensor only (per-axis parameters on an
       activation: UNSUPPORTED); uint8 or int8 (zero point z -> z + 128, same scale: the plan's
       uint8 q + 128 is the same real value). Where the range starts at 0 (zero point 0 for
       uint8, -128 for int8) ONNX saturates negative values to 0, and quantizers drop a ReLU in
       front of such a QuantizeLinear: unless x is known to hold no negative values (a ReLU, a
       clip at >= 0, a pool or view of one) the loader adds a clip node [0, 255 * scale], named
       after the quantized value, which then carries the parameters.
     DequantizeLinear of such a value (or of a QLinear* output) is that same tensor, no node
       (with the scale and zero point the value was quantized with). Of a constant (int8, uint8,
       int32 weights and biases; per tensor, or per axis with `axis`) it is computed at load
       time, scale * (q - zero point) in fp32, like QuantizeLinear of a constant.
     QLinearConv -> conv2d, QLinearMatMul (constant 2-D b) -> dense, with the weights
       dequantized (w_scale per tensor or per output channel, b_scale per tensor or per column)
       and the int32 bias B as B * x_scale * w_scale[channel]; the saturation of the output to
       its integer range is a fused clamp activation [scale (qmin - zero), scale (qmax - zero)];
       parameters on the input and output tensors. Same attributes as Conv.
     Identity, Dropout, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, MaxPool read quantized
       integers as they read real values: their outputs keep the parameters. Any other operator
       on quantized integers, uint8/int8 graph inputs ("quantized graph inputs: luthier graphs
       take fp32 inputs") and outputs, scales and zero points computed at run time: UNSUPPORTED.
       A tensor quantized twice with different parameters (two QuantizeLinear of one value)
       keeps the first in the calibration (in conversion order); each ONNX value is still read
       with its own parameters. The calibration should start empty: entries are set for the
       new graph's tensor ids, only when the load succeeds.
     An fp32 plan of such a graph runs the model unquantized: real values without the rounding
       of each quantization (so within a few quantization steps of the quantized model's
       outputs; saturation is reproduced only as described above). An int8 plan
       (luthier_plan_desc.int8 = the calibration) quantizes with the model's scales and zero
       points; its weights are re-quantized per output channel, symmetric, from the dequantized
       values, which reproduces the model's integers when they were symmetric per channel with
       max |q| = 127 (onnxruntime's per-channel int8 weights) and is within one step of them
       otherwise. tests/onnx_qdq.py writes the models the tests check this on.

   WEIGHTS: luthier_onnx_load reads the file into one buffer of its own and copies float32
   raw_data straight from there into the graph's constants: that copy is the only one (raw_data
   that is not 4-byte aligned is first moved down in place, over its own already-read field
   header). Peak memory while loading: about the file plus the weights. luthier_onnx_load_memory
   only reads the caller's bytes: aligned float32 raw_data is copied once, unaligned raw_data and
   other encodings (float_data, float16, double, ...) are converted into a staging buffer first.

   SHAPES: static. Symbolic or unknown input dimensions take luthier_onnx_options.dims (by
   dim_param name) or default_dim (0 = 1). Rank-0 values computed by the engine become [1].
*/
#ifndef LUTHIER_ONNX_H_INCLUDED
#define LUTHIER_ONNX_H_INCLUDED

#ifndef LUTHIER_H_INCLUDED
#error "luthier_onnx.h: include luthier.h first"
#endif

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define LUTHIER_ONNX__FN static __attribute__((unused))
#define LUTHIER_ONNX__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LUTHIER_ONNX__FN static
#define LUTHIER_ONNX__PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LUTHIER_ONNX_MAX_RANK 8

/* A tensor: test data read by luthier_onnx_tensor_load (owned: free with
   luthier_onnx_tensor_free), or a binding in the options (borrowed). */
typedef struct luthier_onnx_tensor {
    char *name;
    int onnx_type;       /* TensorProto.DataType of the source (1 float, 7 int64, ...) */
    luthier_dtype dtype; /* F32 for floating-point sources, I64 for integers and bool */
    int rank;
    int64_t shape[LUTHIER_ONNX_MAX_RANK];
    size_t numel;
    void *data;          /* float or int64_t, numel elements */
} luthier_onnx_tensor;

/* A value for a symbolic dimension ("batch", "sequence", ...). */
typedef struct luthier_onnx_dim {
    const char *name;
    int64_t value;
} luthier_onnx_dim;

typedef struct luthier_onnx_options {
    int64_t default_dim;                     /* symbolic/unknown dims without an entry: 0 = 1 */
    const luthier_onnx_dim *dims;            /* per dim_param name */
    int num_dims;
    /* Graph inputs frozen to these values (constants of the graph, no longer plan inputs),
       e.g. shape tensors fed as inputs. name, dtype, rank, shape, data are read. */
    const luthier_onnx_tensor *constants;
    int num_constants;
    int no_patterns;                         /* 1 = do not fuse LayerNorm / GELU patterns */
    /* When non-NULL: receives the model's quantization parameters (QuantizeLinear / QLinear*
       scales and zero points) for the graph tensors they describe (see QUANTIZED MODELS).
       Create it empty with luthier_calibration_create; pass it later as
       luthier_plan_desc.int8. It is changed only when the load succeeds. */
    luthier_calibration *calibration;
    /* The most bytes the loader may allocate for one model besides the graph's own copies of
       the weights (parsed and folded tensors, names, nodes): 0 = 1 GiB plus twice the model's
       size, far above any real model's needs. A small file that would need more (a few
       ConstantOfShape nodes asking for gigabytes) is refused with OUT_OF_MEMORY and a message
       naming this budget, before it takes the memory. */
    size_t memory_budget;
} luthier_onnx_options;

/* ---- implementation: arena ----------------------------------------------------------------- */

typedef struct luthier_onnx__blk {
    struct luthier_onnx__blk *next;
    size_t used, cap;
} luthier_onnx__blk;

#define LUTHIER_ONNX__BLK_HDR ((sizeof(luthier_onnx__blk) + 15) & ~(size_t)15)
#define LUTHIER_ONNX__MAX_ELEMS ((size_t)1 << 26) /* tensors made at load time: at most 2^26 elements */

typedef struct luthier_onnx__tensor {
    const char *name;
    int type;                   /* TensorProto.DataType */
    int rank;
    int64_t dims[LUTHIER_ONNX_MAX_RANK];
    size_t n;
    float *f;                   /* floating types */
    int64_t *i;                 /* integer types */
    /* >>onnx-lengths: entries computed from a run-time length: entry e with lenmask[e] set
       stands for min(i[e], the run-time length of graph tensor lentid); lenwhole: the tensor is
       Shape(lentid) as it is. lenmask NULL: a plain constant. */
    unsigned char *lenmask;
    int lentid, lenwhole;
} luthier_onnx__tensor;

struct luthier_onnx__sub;

typedef struct luthier_onnx__attr {
    const char *name;
    int type;                   /* AttributeProto.AttributeType; 0 = inferred */
    int has_f, has_i, has_s, has_t, has_g;
    float f;
    int64_t i;
    const char *s;
    luthier_onnx__tensor *t;
    float *floats;
    int nfloats, cfloats;
    int64_t *ints;
    int nints, cints;
    const char **strs;          /* strings (activations of LSTM, GRU, RNN) */
    int nstrs, cstrs;
    struct luthier_onnx__sub *g; /* a GraphProto (field g: If's branches), or NULL */
} luthier_onnx__attr;

typedef struct luthier_onnx__node {
    const char *name, *op, *domain;
    const char **in;
    int nin, cin;
    const char **out;
    int nout, cout;
    luthier_onnx__attr *attrs;
    int nattrs, cattrs;
    int dead;
    int deps; /* topological sort */
    int numel0; /* If: input 0 is X, the condition numel(X) == 0 (>>onnx-if) */
} luthier_onnx__node;

typedef struct luthier_onnx__vi {
    const char *name;
    int elem, has_shape, rank;
    int64_t dims[LUTHIER_ONNX_MAX_RANK];
    const char *params[LUTHIER_ONNX_MAX_RANK];
} luthier_onnx__vi;

typedef struct luthier_onnx__val {
    const char *name;
    int producer;   /* node index, -1 */
    int is_output;  /* listed in graph.output */
    int is_init;    /* an initializer or binding */
    luthier_onnx__tensor *c;  /* constant value, or NULL */
    int tid;        /* engine tensor (computed or input), -1 */
    int cid;        /* engine tensor holding c, -1 */
    int defined;    /* has a value during conversion */
    int uses;       /* live consumers */
    int refused;    /* produced by a node the loader refused (its consumers are skipped) */
    /* quantized run-time value: ONNX holds integers of type qtype (2 uint8, 3 int8) that stand
       for qscale * (q - qzero); the graph tensor tid holds those real values (fp32) */
    int q, qtype;
    float qscale;
    int64_t qzero;
} luthier_onnx__val;

/* Quantization parameters of a graph tensor, as the calibration will receive them (uint8). */
typedef struct luthier_onnx__qp {
    int has, had;
    float scale, old_scale;
    int32_t zero, old_zero; /* old: the calibration's own, restored when setting fails */
} luthier_onnx__qp;

/* A subgraph (an attribute holding a GraphProto: If's then_branch and else_branch), parsed into
   the arena as the main graph is: its nodes in order, initializers, inputs and outputs. */
typedef struct luthier_onnx__sub {
    luthier_onnx__node *nodes;
    int nn, cn;
    luthier_onnx__tensor **inits;
    int ninit, cinit;
    luthier_onnx__vi *inputs;
    int nin, cin;
    luthier_onnx__vi *outputs;
    int nout, cout;
    int sparse_inits;
} luthier_onnx__sub;

typedef struct luthier_onnx__ctx {
    luthier_onnx__blk *arena;
    size_t arena_bytes, budget; /* allocated so far, and the most allowed (memory_budget) */
    char *err;
    size_t err_size;
    luthier_status st;
    const luthier_onnx_options *opt;
    const uint8_t *base;
    uint8_t *mut; /* base, writable (the loader's own copy of the file), or NULL */
    int64_t ir_version, opset;
    int has_opset;
    luthier_onnx__sub gr; /* the graph being parsed (the main one, or a subgraph: >>onnx-if) */
    luthier_onnx__val *vals;
    int nv, cv;
    int *hash;
    int hcap;
    luthier_graph *g;
    int *order;
    int norder;
    int cur; /* node being converted */
    luthier_onnx__qp *qp; /* by graph tensor id */
    int cqp;
    int depth; /* subgraphs being parsed, nested (>>onnx-if) */
} luthier_onnx__ctx;


#define LUTHIER_ONNX__MAX_DEPTH 16 /* subgraphs nested deeper are refused */

LUTHIER_ONNX__FN LUTHIER_ONNX__PRINTF(3, 4) luthier_status luthier_onnx__fail(luthier_onnx__ctx *c, luthier_status s, const char *fmt, ...);

/* The loader's memory budget for a file of size bytes (see luthier_onnx_options.memory_budget). */
LUTHIER_ONNX__FN size_t luthier_onnx__budget(const luthier_onnx_options *opt, size_t size) {
    const size_t base = (size_t)1 << 30;
    if (opt && opt->memory_budget) return opt->memory_budget;
    return size > (SIZE_MAX - base) / 2 ? SIZE_MAX : base + 2 * size;
}

LUTHIER_ONNX__FN void *luthier_onnx__alloc(luthier_onnx__ctx *c, size_t size) {
    luthier_onnx__blk *b = c->arena;
    void *p;
    size = (size + 15) & ~(size_t)15;
    if (size > ((size_t)1 << 40)) return NULL;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        if (cap > c->budget || c->arena_bytes > c->budget - cap) {
            luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY,
                               "the model needs more than the loader's memory budget of %zu MiB (luthier_onnx_options."
                               "memory_budget: by default 1 GiB plus twice the model's size)", c->budget >> 20);
            return NULL;
        }
        c->arena_bytes += cap;
        b = (luthier_onnx__blk *)malloc(LUTHIER_ONNX__BLK_HDR + cap);
        if (!b) return NULL;
        b->next = c->arena;
        b->used = 0;
        b->cap = cap;
        c->arena = b;
    }
    p = (char *)b + LUTHIER_ONNX__BLK_HDR + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

LUTHIER_ONNX__FN void luthier_onnx__arena_free(luthier_onnx__ctx *c) {
    while (c->arena) {
        luthier_onnx__blk *n = c->arena->next;
        free(c->arena);
        c->arena = n;
    }
}

/* Grows arr (arena) to hold need elements; returns the (maybe new) array or NULL. */
LUTHIER_ONNX__FN void *luthier_onnx__grow(luthier_onnx__ctx *c, void *arr, int *cap, int need, size_t elt) {
    void *p;
    int n;
    if (need <= *cap) return arr;
    n = *cap ? *cap : 4;
    while (n < need) {
        if (n > INT_MAX / 2) return NULL;
        n *= 2;
    }
    if (!(p = luthier_onnx__alloc(c, (size_t)n * elt))) return NULL;
    if (arr) memcpy(p, arr, (size_t)*cap * elt);
    *cap = n;
    return p;
}

#define LUTHIER_ONNX__PUSH(c, arr, n, cap, T) \
    (((arr) = (T *)luthier_onnx__grow((c), (arr), &(cap), (n) + 1, sizeof(T))) != NULL ? &(arr)[(n)++] : (T *)NULL)

LUTHIER_ONNX__FN char *luthier_onnx__strn(luthier_onnx__ctx *c, const void *s, size_t n) {
    char *p = (char *)luthier_onnx__alloc(c, n + 1);
    if (p) {
        if (n) memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

/* ---- errors ---------------------------------------------------------------------------------- */

LUTHIER_ONNX__FN LUTHIER_ONNX__PRINTF(3, 4) luthier_status luthier_onnx__fail(luthier_onnx__ctx *c, luthier_status s, const char *fmt, ...) {
    va_list ap;
    char msg[2048];
    if (c->st != LUTHIER_STATUS_OK) return c->st; /* the first error wins */
    c->st = s;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    luthier_set_last_error(msg); /* public: the loader may be compiled apart from the engine */
    if (c->err && c->err_size) snprintf(c->err, c->err_size, "%s", msg);
    return s;
}

LUTHIER_ONNX__FN const char *luthier_onnx__nname(const luthier_onnx__node *n) {
    if (n->name && *n->name) return n->name;
    if (n->nout && n->out[0] && *n->out[0]) return n->out[0];
    return "?";
}

LUTHIER_ONNX__FN LUTHIER_ONNX__PRINTF(4, 5) luthier_status luthier_onnx__nfail(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_status s,
                                                                const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return luthier_onnx__fail(c, s, "node '%s' (%s): %s", luthier_onnx__nname(n), n->op ? n->op : "?", msg);
}
#define LUTHIER_ONNX__UNSUP(...) return luthier_onnx__nfail(c, n, LUTHIER_STATUS_UNSUPPORTED, __VA_ARGS__)
#define LUTHIER_ONNX__BAD(...) return luthier_onnx__nfail(c, n, LUTHIER_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define LUTHIER_ONNX__OOM() return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory")
#define LUTHIER_ONNX__TRY(e) do { luthier_status s_ = (e); if (s_ != LUTHIER_STATUS_OK) return s_; } while (0)

/* ---- protobuf wire format -------------------------------------------------------------------- */

typedef struct luthier_onnx__rd {
    const uint8_t *p, *end;
} luthier_onnx__rd;

typedef struct luthier_onnx__fld {
    uint32_t num, wire;
    uint64_t v;
    const uint8_t *data;
    size_t len;
} luthier_onnx__fld;

LUTHIER_ONNX__FN int luthier_onnx__varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int i;
    for (i = 0; i < 10; i++) {
        uint8_t b;
        if (p >= end) return 0;
        b = *p++;
        if (i == 9 && b > 1) return 0;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 1;
        }
    }
    return 0;
}

LUTHIER_ONNX__FN uint64_t luthier_onnx__le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

LUTHIER_ONNX__FN float luthier_onnx__f32(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

LUTHIER_ONNX__FN float luthier_onnx__f64(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return (float)d;
}

LUTHIER_ONNX__FN float luthier_onnx__f16(uint32_t h) {
    uint32_t s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return s ? -v : v;
    }
    if (e == 31) return luthier_onnx__f32(s | 0x7f800000u | (m << 13));
    return luthier_onnx__f32(s | ((e + 112) << 23) | (m << 13));
}

LUTHIER_ONNX__FN int luthier_onnx__perr(luthier_onnx__ctx *c, const uint8_t *at, const char *what, const char *msg) {
    if (c->base)
        luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "malformed %s at byte %lld: %s", what, (long long)(at - c->base), msg);
    else
        luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "malformed %s: %s", what, msg);
    return -1;
}

/* 1 = a field, 0 = end of the message, -1 = malformed (the error is set). */
LUTHIER_ONNX__FN int luthier_onnx__next(luthier_onnx__ctx *c, luthier_onnx__rd *r, luthier_onnx__fld *f, const char *what) {
    uint64_t key, len;
    const uint8_t *start = r->p;
    char msg[160];
    if (r->p >= r->end) return 0;
    if (!luthier_onnx__varint(&r->p, r->end, &key)) return luthier_onnx__perr(c, start, what, "truncated or overlong field key");
    f->num = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->v = 0;
    f->data = NULL;
    f->len = 0;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffffu) return luthier_onnx__perr(c, start, what, "field number 0 or too large");
    switch (f->wire) {
    case 0:
        if (!luthier_onnx__varint(&r->p, r->end, &f->v)) {
            snprintf(msg, sizeof msg, "truncated varint in field %u", f->num);
            return luthier_onnx__perr(c, start, what, msg);
        }
        break;
    case 1:
    case 5: {
        size_t w = f->wire == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < w) {
            snprintf(msg, sizeof msg, "field %u: %zu-byte value truncated", f->num, w);
            return luthier_onnx__perr(c, start, what, msg);
        }
        f->v = luthier_onnx__le(r->p, (int)w);
        r->p += w;
        break;
    }
    case 2:
        if (!luthier_onnx__varint(&r->p, r->end, &len)) {
            snprintf(msg, sizeof msg, "truncated length of field %u", f->num);
            return luthier_onnx__perr(c, start, what, msg);
        }
        if (len > (uint64_t)(r->end - r->p)) {
            snprintf(msg, sizeof msg, "field %u declares %llu bytes, only %llu are left", f->num, (unsigned long long)len,
                     (unsigned long long)(r->end - r->p));
            return luthier_onnx__perr(c, start, what, msg);
        }
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        break;
    default:
        snprintf(msg, sizeof msg, "field %u has wire type %u (ONNX uses 0, 1, 2 and 5)", f->num, f->wire);
        return luthier_onnx__perr(c, start, what, msg);
    }
    return 1;
}

LUTHIER_ONNX__FN int luthier_onnx__want(luthier_onnx__ctx *c, const luthier_onnx__fld *f, uint32_t wire, const char *what, const char *field) {
    char msg[160];
    if (f->wire == wire) return 0;
    snprintf(msg, sizeof msg, "field %u (%s) has wire type %u, expected %u", f->num, field, f->wire, wire);
    return luthier_onnx__perr(c, f->data ? f->data : c->base, what, msg);
}

/* A string field (wire type 2) of message what, copied into the arena as *out. */
LUTHIER_ONNX__FN int luthier_onnx__str(luthier_onnx__ctx *c, const luthier_onnx__fld *f, const char *what, const char *field, const char **out) {
    char *s;
    if (luthier_onnx__want(c, f, 2, what, field)) return -1;
    if (!(s = luthier_onnx__strn(c, f->data, f->len))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
    *out = s;
    return 0;
}

/* Repeated integers: one varint, or packed varints. */
LUTHIER_ONNX__FN int luthier_onnx__ints(luthier_onnx__ctx *c, const luthier_onnx__fld *f, int64_t **arr, int *n, int *cap, const char *what) {
    if (f->wire == 0) {
        int64_t *slot = LUTHIER_ONNX__PUSH(c, *arr, *n, *cap, int64_t);
        if (!slot) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
        *slot = (int64_t)f->v;
        return 0;
    }
    if (f->wire == 2) {
        const uint8_t *p = f->data, *end = f->data + f->len;
        while (p < end) {
            uint64_t v;
            int64_t *slot;
            if (!luthier_onnx__varint(&p, end, &v)) return luthier_onnx__perr(c, p, what, "truncated packed varint");
            if (!(slot = LUTHIER_ONNX__PUSH(c, *arr, *n, *cap, int64_t)))
                return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            *slot = (int64_t)v;
        }
        return 0;
    }
    return luthier_onnx__want(c, f, 0, what, "repeated integer");
}

/* Repeated fixed-size values (4 or 8 bytes): one value, or packed. Stored as float. kind: 0 =
   float32 bits, 1 = double bits. */
LUTHIER_ONNX__FN int luthier_onnx__fixed(luthier_onnx__ctx *c, const luthier_onnx__fld *f, int kind, float **arr, int *n, int *cap, const char *what) {
    size_t w = kind ? 8 : 4, k;
    uint32_t wire = kind ? 1 : 5;
    if (f->wire == wire) {
        float *slot = LUTHIER_ONNX__PUSH(c, *arr, *n, *cap, float);
        if (!slot) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
        *slot = kind ? luthier_onnx__f64(f->v) : luthier_onnx__f32((uint32_t)f->v);
        return 0;
    }
    if (f->wire == 2) {
        if (f->len % w) return luthier_onnx__perr(c, f->data, what, "packed fixed-size field length is not a multiple of the element size");
        if (f->len / w > (size_t)INT_MAX - (size_t)*n) return luthier_onnx__perr(c, f->data, what, "too many values");
        if (!(*arr = (float *)luthier_onnx__grow(c, *arr, cap, *n + (int)(f->len / w), sizeof(float))))
            return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
        for (k = 0; k < f->len / w; k++)
            (*arr)[(*n)++] = kind ? luthier_onnx__f64(luthier_onnx__le(f->data + k * w, 8)) : luthier_onnx__f32((uint32_t)luthier_onnx__le(f->data + k * w, 4));
        return 0;
    }
    return luthier_onnx__want(c, f, wire, what, "repeated fixed");
}

/* ---- messages -------------------------------------------------------------------------------- */

LUTHIER_ONNX__FN int luthier_onnx__host_le(void) {
    const uint32_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

LUTHIER_ONNX__FN int luthier_onnx__elsize(int type) {
    switch (type) {
    case 1: case 6: case 12: return 4;        /* float, int32, uint32 */
    case 2: case 3: case 9: return 1;         /* uint8, int8, bool */
    case 4: case 5: case 10: case 16: return 2; /* uint16, int16, float16, bfloat16 */
    case 7: case 11: case 13: return 8;       /* int64, double, uint64 */
    default: return 0;
    }
}

LUTHIER_ONNX__FN int luthier_onnx__isfloat(int type) { return type == 1 || type == 10 || type == 11 || type == 16; }

LUTHIER_ONNX__FN const char *luthier_onnx__typename(int type) {
    static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                  "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
                                  "complex128", "bfloat16"};
    return type >= 0 && type <= 16 ? names[type] : "unknown type";
}

LUTHIER_ONNX__FN int luthier_onnx__parse_tensor(luthier_onnx__ctx *c, const uint8_t *data, size_t len, luthier_onnx__tensor *t) {
    luthier_onnx__rd r = {data, data + len};
    luthier_onnx__fld f;
    int64_t *dims = NULL, *ints = NULL;
    float *fl = NULL;
    int nd = 0, cd = 0, ni = 0, ci = 0, nf = 0, cf = 0, k, rc, external = 0, have_type = 0;
    const uint8_t *raw = NULL, *at, *raw_field = NULL;
    size_t rawlen = 0, n = 1, i;
    int has_raw = 0;
    t->name = "";
    while (at = r.p, (rc = luthier_onnx__next(c, &r, &f, "TensorProto")) > 0) {
        switch (f.num) {
        case 1: if (luthier_onnx__ints(c, &f, &dims, &nd, &cd, "TensorProto.dims")) return -1; break;
        case 2: if (luthier_onnx__want(c, &f, 0, "TensorProto", "data_type")) return -1; t->type = (int)f.v; have_type = 1; break;
        case 4: if (luthier_onnx__fixed(c, &f, 0, &fl, &nf, &cf, "TensorProto.float_data")) return -1; break;
        case 5: case 7: case 11:
            if (luthier_onnx__ints(c, &f, &ints, &ni, &ci, "TensorProto.int_data")) return -1;
            break;
        case 6: t->type = 8; break;
        case 8: if (luthier_onnx__str(c, &f, "TensorProto", "name", &t->name)) return -1; break;
        case 9:
            if (luthier_onnx__want(c, &f, 2, "TensorProto", "raw_data")) return -1;
            raw = f.data; rawlen = f.len; has_raw = 1; raw_field = at;
            break;
        case 10: if (luthier_onnx__fixed(c, &f, 1, &fl, &nf, &cf, "TensorProto.double_data")) return -1; break;
        case 13: external = 1; break;
        case 14: if (f.wire == 0 && f.v == 1) external = 1; break;
        default: break;
        }
    }
    if (rc < 0) return -1;
    if (external)
        return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED,
                        "tensor '%s' keeps its data in an external file (data_location EXTERNAL): not supported; save the "
                        "model with the weights inside it (onnx.save(..., save_as_external_data=False))", t->name), -1;
    if (nd > LUTHIER_ONNX_MAX_RANK)
        return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "tensor '%s' has rank %d (at most %d)", t->name, nd, LUTHIER_ONNX_MAX_RANK), -1;
    t->rank = nd;
    for (k = 0; k < nd; k++) {
        if (dims[k] < 0)
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': dimension %d is negative (%lld)", t->name, k,
                            (long long)dims[k]), -1;
        if (dims[k] && n > ((size_t)1 << 40) / (size_t)dims[k])
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': element count overflows", t->name), -1;
        n *= (size_t)dims[k];
        t->dims[k] = dims[k];
    }
    t->n = n;
    if (!have_type && t->type != 8)
        return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s' has no data_type", t->name), -1;
    if (t->type == 8 || !luthier_onnx__elsize(t->type)) return 0; /* kept without data: refused where used */
    /* the stored data must match the dims before anything is allocated for them */
    if (has_raw ? rawlen != n * (size_t)luthier_onnx__elsize(t->type) : (size_t)(t->type == 1 || t->type == 11 ? nf : ni) != n) {
        if (has_raw)
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': raw_data holds %zu bytes, %zu %s values need %zu",
                                      t->name, rawlen, n, luthier_onnx__typename(t->type), n * (size_t)luthier_onnx__elsize(t->type)), -1;
        return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor '%s': %d values stored, dims need %zu", t->name,
                                  t->type == 1 || t->type == 11 ? nf : ni, n), -1;
    }
    if (has_raw && n && t->type == 1 && luthier_onnx__host_le()) {
        /* float32 raw_data is used where it lies, so that the graph's copy of the constant is
           the only one. It must be aligned for float: in the loader's own buffer (c->mut) it is
           moved down over its own field key and length (already read, never read again) when
           it is not; otherwise (the caller's bytes, or no room) it is copied below. */
        size_t mis = (size_t)((uintptr_t)raw % sizeof(float));
        if (mis && c->mut && c->base && raw > c->base && (size_t)(raw - raw_field) >= mis) {
            uint8_t *w = c->mut + (raw - c->base);
            memmove(w - mis, w, rawlen);
            raw = w - mis;
            mis = 0;
        }
        if (!mis) {
            t->f = (float *)(uintptr_t)raw; /* read only, like every parsed tensor */
            return 0;
        }
    }
    if (luthier_onnx__isfloat(t->type)) {
        if (!(t->f = (float *)luthier_onnx__alloc(c, (n ? n : 1) * sizeof(float)))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
    } else if (!(t->i = (int64_t *)luthier_onnx__alloc(c, (n ? n : 1) * sizeof(int64_t)))) {
        return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
    }
    if (has_raw) {
        size_t es = (size_t)luthier_onnx__elsize(t->type); /* rawlen == n * es: checked above */
        if (t->type == 1 && luthier_onnx__host_le()) {
            if (n) memcpy(t->f, raw, n * sizeof(float));
            return 0;
        }
        for (i = 0; i < n; i++) {
            const uint8_t *p = raw + i * es;
            switch (t->type) {
            case 1: t->f[i] = luthier_onnx__f32((uint32_t)luthier_onnx__le(p, 4)); break;
            case 11: t->f[i] = luthier_onnx__f64(luthier_onnx__le(p, 8)); break;
            case 10: t->f[i] = luthier_onnx__f16((uint32_t)luthier_onnx__le(p, 2)); break;
            case 16: t->f[i] = luthier_onnx__f32((uint32_t)luthier_onnx__le(p, 2) << 16); break;
            case 2: case 9: t->i[i] = p[0]; break;
            case 3: t->i[i] = (int8_t)p[0]; break;
            case 4: t->i[i] = (int64_t)luthier_onnx__le(p, 2); break;
            case 5: t->i[i] = (int16_t)luthier_onnx__le(p, 2); break;
            case 6: t->i[i] = (int32_t)(uint32_t)luthier_onnx__le(p, 4); break;
            case 12: t->i[i] = (int64_t)luthier_onnx__le(p, 4); break;
            default: t->i[i] = (int64_t)luthier_onnx__le(p, 8); break;
            }
        }
        return 0;
    }
    if (t->type == 1 || t->type == 11) { /* nf == n: checked above */
        if (n) memcpy(t->f, fl, n * sizeof(float));
        return 0;
    }
    for (i = 0; i < n; i++) { /* ni == n: checked above */
        if (t->type == 10) t->f[i] = luthier_onnx__f16((uint32_t)ints[i] & 0xffffu);
        else if (t->type == 16) t->f[i] = luthier_onnx__f32(((uint32_t)ints[i] & 0xffffu) << 16);
        else if (t->type == 6 || t->type == 5 || t->type == 3) t->i[i] = (int32_t)(uint32_t)(uint64_t)ints[i];
        else t->i[i] = ints[i];
    }
    return 0;
}

LUTHIER_ONNX__FN int luthier_onnx__pushstr(luthier_onnx__ctx *c, const luthier_onnx__fld *f, const char ***arr, int *n, int *cap, const char *what);
LUTHIER_ONNX__FN int luthier_onnx__parse_graph(luthier_onnx__ctx *c, const uint8_t *data, size_t len);

/* Field f, a GraphProto, into a new subgraph *out: parsed by luthier_onnx__parse_graph into the
   context's lists, emptied for it and put back after; at most LUTHIER_ONNX__MAX_DEPTH levels. */
LUTHIER_ONNX__FN int luthier_onnx__parse_sub(luthier_onnx__ctx *c, const luthier_onnx__fld *f, luthier_onnx__sub **out) {
    luthier_onnx__sub outer, *g;
    int rc;
    if (luthier_onnx__want(c, f, 2, "AttributeProto", "g")) return -1;
    if (c->depth >= LUTHIER_ONNX__MAX_DEPTH)
        return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "subgraphs nest deeper than %d levels", LUTHIER_ONNX__MAX_DEPTH), -1;
    if (!(g = (luthier_onnx__sub *)luthier_onnx__alloc(c, sizeof *g))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
    outer = c->gr;
    memset(&c->gr, 0, sizeof c->gr);
    c->depth++;
    rc = luthier_onnx__parse_graph(c, f->data, f->len);
    c->depth--;
    *g = c->gr;
    c->gr = outer;
    *out = g;
    return rc;
}

LUTHIER_ONNX__FN int luthier_onnx__parse_attr(luthier_onnx__ctx *c, const uint8_t *data, size_t len, luthier_onnx__attr *a) {
    luthier_onnx__rd r = {data, data + len};
    luthier_onnx__fld f;
    int rc;
    a->name = "";
    while ((rc = luthier_onnx__next(c, &r, &f, "AttributeProto")) > 0) {
        switch (f.num) {
        case 1: if (luthier_onnx__str(c, &f, "AttributeProto", "name", &a->name)) return -1; break;
        case 2: if (luthier_onnx__want(c, &f, 5, "AttributeProto", "f")) return -1; a->f = luthier_onnx__f32((uint32_t)f.v); a->has_f = 1; break;
        case 3: if (luthier_onnx__want(c, &f, 0, "AttributeProto", "i")) return -1; a->i = (int64_t)f.v; a->has_i = 1; break;
        case 4: if (luthier_onnx__str(c, &f, "AttributeProto", "s", &a->s)) return -1; a->has_s = 1; break;
        case 5:
            if (luthier_onnx__want(c, &f, 2, "AttributeProto", "t")) return -1;
            if (!(a->t = (luthier_onnx__tensor *)luthier_onnx__alloc(c, sizeof(luthier_onnx__tensor)))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            if (luthier_onnx__parse_tensor(c, f.data, f.len, a->t)) return -1;
            a->has_t = 1;
            break;
        case 6: if (luthier_onnx__parse_sub(c, &f, &a->g)) return -1; a->has_g = 1; break;
        case 11: a->has_g = 1; break; /* graphs (Scan, Loop): refused where the node is read */
        case 7: if (luthier_onnx__fixed(c, &f, 0, &a->floats, &a->nfloats, &a->cfloats, "AttributeProto.floats")) return -1; break;
        case 8: if (luthier_onnx__ints(c, &f, &a->ints, &a->nints, &a->cints, "AttributeProto.ints")) return -1; break;
        case 9: if (luthier_onnx__pushstr(c, &f, &a->strs, &a->nstrs, &a->cstrs, "AttributeProto.strings")) return -1; break;
        case 20: if (luthier_onnx__want(c, &f, 0, "AttributeProto", "type")) return -1; a->type = (int)f.v; break;
        default: break;
        }
    }
    return rc < 0 ? -1 : 0;
}

LUTHIER_ONNX__FN int luthier_onnx__pushstr(luthier_onnx__ctx *c, const luthier_onnx__fld *f, const char ***arr, int *n, int *cap, const char *what) {
    const char **slot;
    if (luthier_onnx__want(c, f, 2, what, "string")) return -1;
    if (!(slot = LUTHIER_ONNX__PUSH(c, *arr, *n, *cap, const char *)) || !(*slot = luthier_onnx__strn(c, f->data, f->len)))
        return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
    return 0;
}

LUTHIER_ONNX__FN int luthier_onnx__parse_node(luthier_onnx__ctx *c, const uint8_t *data, size_t len, luthier_onnx__node *n) {
    luthier_onnx__rd r = {data, data + len};
    luthier_onnx__fld f;
    int rc;
    n->name = "";
    n->op = "";
    n->domain = "";
    while ((rc = luthier_onnx__next(c, &r, &f, "NodeProto")) > 0) {
        switch (f.num) {
        case 1: if (luthier_onnx__pushstr(c, &f, &n->in, &n->nin, &n->cin, "NodeProto.input")) return -1; break;
        case 2: if (luthier_onnx__pushstr(c, &f, &n->out, &n->nout, &n->cout, "NodeProto.output")) return -1; break;
        case 3: if (luthier_onnx__str(c, &f, "NodeProto", "name", &n->name)) return -1; break;
        case 4: if (luthier_onnx__str(c, &f, "NodeProto", "op_type", &n->op)) return -1; break;
        case 7: if (luthier_onnx__str(c, &f, "NodeProto", "domain", &n->domain)) return -1; break;
        case 5: {
            luthier_onnx__attr *a;
            if (luthier_onnx__want(c, &f, 2, "NodeProto", "attribute")) return -1;
            if (!(a = LUTHIER_ONNX__PUSH(c, n->attrs, n->nattrs, n->cattrs, luthier_onnx__attr))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            if (luthier_onnx__parse_attr(c, f.data, f.len, a)) return -1;
            break;
        }
        default: break;
        }
    }
    return rc < 0 ? -1 : 0;
}

LUTHIER_ONNX__FN int luthier_onnx__parse_vi(luthier_onnx__ctx *c, const uint8_t *data, size_t len, luthier_onnx__vi *v) {
    luthier_onnx__rd r = {data, data + len}, r2, r3, r4, r5;
    luthier_onnx__fld f, f2, f3, f4, f5;
    int rc;
    v->name = "";
    while ((rc = luthier_onnx__next(c, &r, &f, "ValueInfoProto")) > 0) {
        if (f.num == 1) {
            if (luthier_onnx__str(c, &f, "ValueInfoProto", "name", &v->name)) return -1;
        } else if (f.num == 2) { /* TypeProto */
            if (luthier_onnx__want(c, &f, 2, "ValueInfoProto", "type")) return -1;
            r2.p = f.data; r2.end = f.data + f.len;
            while ((rc = luthier_onnx__next(c, &r2, &f2, "TypeProto")) > 0) {
                if (f2.num != 1) continue; /* tensor_type; sequences and maps stay elem 0 */
                if (luthier_onnx__want(c, &f2, 2, "TypeProto", "tensor_type")) return -1;
                r3.p = f2.data; r3.end = f2.data + f2.len;
                while ((rc = luthier_onnx__next(c, &r3, &f3, "TypeProto.Tensor")) > 0) {
                    if (f3.num == 1) {
                        if (luthier_onnx__want(c, &f3, 0, "TypeProto.Tensor", "elem_type")) return -1;
                        v->elem = (int)f3.v;
                    } else if (f3.num == 2) {
                        if (luthier_onnx__want(c, &f3, 2, "TypeProto.Tensor", "shape")) return -1;
                        v->has_shape = 1;
                        r4.p = f3.data; r4.end = f3.data + f3.len;
                        while ((rc = luthier_onnx__next(c, &r4, &f4, "TensorShapeProto")) > 0) {
                            if (f4.num != 1) continue;
                            if (luthier_onnx__want(c, &f4, 2, "TensorShapeProto", "dim")) return -1;
                            if (v->rank >= LUTHIER_ONNX_MAX_RANK)
                                return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "value '%s' has rank above %d", v->name,
                                                LUTHIER_ONNX_MAX_RANK), -1;
                            v->dims[v->rank] = -1;
                            v->params[v->rank] = NULL;
                            r5.p = f4.data; r5.end = f4.data + f4.len;
                            while ((rc = luthier_onnx__next(c, &r5, &f5, "TensorShapeProto.Dimension")) > 0) {
                                if (f5.num == 1) {
                                    if (luthier_onnx__want(c, &f5, 0, "Dimension", "dim_value")) return -1;
                                    v->dims[v->rank] = (int64_t)f5.v;
                                    if (v->dims[v->rank] < 0)
                                        return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "value '%s': dimension %d is negative (%lld)",
                                                        v->name, v->rank, (long long)v->dims[v->rank]), -1;
                                } else if (f5.num == 2) {
                                    if (luthier_onnx__str(c, &f5, "Dimension", "dim_param", &v->params[v->rank])) return -1;
                                }
                            }
                            if (rc < 0) return -1;
                            v->rank++;
                        }
                        if (rc < 0) return -1;
                    }
                }
                if (rc < 0) return -1;
            }
            if (rc < 0) return -1;
        }
    }
    return rc < 0 ? -1 : 0;
}

LUTHIER_ONNX__FN int luthier_onnx__parse_graph(luthier_onnx__ctx *c, const uint8_t *data, size_t len) {
    luthier_onnx__rd r = {data, data + len};
    luthier_onnx__fld f;
    int rc;
    while ((rc = luthier_onnx__next(c, &r, &f, "GraphProto")) > 0) {
        switch (f.num) {
        case 1: {
            luthier_onnx__node *n;
            if (luthier_onnx__want(c, &f, 2, "GraphProto", "node")) return -1;
            if (!(n = LUTHIER_ONNX__PUSH(c, c->gr.nodes, c->gr.nn, c->gr.cn, luthier_onnx__node))) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            if (luthier_onnx__parse_node(c, f.data, f.len, n)) return -1;
            break;
        }
        case 5: {
            luthier_onnx__tensor **slot;
            if (luthier_onnx__want(c, &f, 2, "GraphProto", "initializer")) return -1;
            if (!(slot = LUTHIER_ONNX__PUSH(c, c->gr.inits, c->gr.ninit, c->gr.cinit, luthier_onnx__tensor *)) ||
                !(*slot = (luthier_onnx__tensor *)luthier_onnx__alloc(c, sizeof(luthier_onnx__tensor))))
                return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            if (luthier_onnx__parse_tensor(c, f.data, f.len, *slot)) return -1;
            break;
        }
        case 11: case 12: {
            luthier_onnx__vi *v;
            if (luthier_onnx__want(c, &f, 2, "GraphProto", f.num == 11 ? "input" : "output")) return -1;
            v = f.num == 11 ? LUTHIER_ONNX__PUSH(c, c->gr.inputs, c->gr.nin, c->gr.cin, luthier_onnx__vi) : LUTHIER_ONNX__PUSH(c, c->gr.outputs, c->gr.nout, c->gr.cout, luthier_onnx__vi);
            if (!v) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory"), -1;
            if (luthier_onnx__parse_vi(c, f.data, f.len, v)) return -1;
            break;
        }
        case 15: c->gr.sparse_inits = 1; break;
        default: break;
        }
    }
    return rc < 0 ? -1 : 0;
}

LUTHIER_ONNX__FN int luthier_onnx__parse_model(luthier_onnx__ctx *c, const uint8_t *data, size_t len) {
    luthier_onnx__rd r = {data, data + len}, r2;
    luthier_onnx__fld f, f2;
    const uint8_t *graph = NULL;
    size_t glen = 0;
    int rc, have_graph = 0;
    while ((rc = luthier_onnx__next(c, &r, &f, "ModelProto")) > 0) {
        if (f.num == 1) {
            if (luthier_onnx__want(c, &f, 0, "ModelProto", "ir_version")) return -1;
            c->ir_version = (int64_t)f.v;
        } else if (f.num == 7) {
            if (luthier_onnx__want(c, &f, 2, "ModelProto", "graph")) return -1;
            graph = f.data;
            glen = f.len;
            have_graph = 1;
        } else if (f.num == 8) {
            const char *domain = "";
            int64_t version = 0;
            if (luthier_onnx__want(c, &f, 2, "ModelProto", "opset_import")) return -1;
            r2.p = f.data; r2.end = f.data + f.len;
            while ((rc = luthier_onnx__next(c, &r2, &f2, "OperatorSetIdProto")) > 0) {
                if (f2.num == 1) {
                    if (luthier_onnx__str(c, &f2, "OperatorSetIdProto", "domain", &domain)) return -1;
                } else if (f2.num == 2) {
                    if (luthier_onnx__want(c, &f2, 0, "OperatorSetIdProto", "version")) return -1;
                    version = (int64_t)f2.v;
                }
            }
            if (rc < 0) return -1;
            if (!*domain || strcmp(domain, "ai.onnx") == 0) {
                c->opset = version;
                c->has_opset = 1;
            }
        }
    }
    if (rc < 0) return -1;
    if (!have_graph)
        return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "not an ONNX model: ModelProto has no graph (field 7)%s",
                        len ? "" : " (the file is empty)"), -1;
    return luthier_onnx__parse_graph(c, graph, glen);
}

/* ---- values ---------------------------------------------------------------------------------- */

LUTHIER_ONNX__FN uint32_t luthier_onnx__hashstr(const char *s) {
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

LUTHIER_ONNX__FN luthier_onnx__val *luthier_onnx__find(luthier_onnx__ctx *c, const char *name) {
    uint32_t h;
    if (!c->hcap || !name) return NULL;
    h = luthier_onnx__hashstr(name) & (uint32_t)(c->hcap - 1);
    while (c->hash[h]) {
        luthier_onnx__val *v = &c->vals[c->hash[h] - 1];
        if (strcmp(v->name, name) == 0) return v;
        h = (h + 1) & (uint32_t)(c->hcap - 1);
    }
    return NULL;
}

/* The value named name, created when absent (NULL only when out of memory). */
LUTHIER_ONNX__FN luthier_onnx__val *luthier_onnx__get(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__val *v = luthier_onnx__find(c, name);
    uint32_t h;
    int i;
    if (v) return v;
    if ((c->nv + 1) * 2 > c->hcap) {
        int cap = c->hcap ? c->hcap * 2 : 256;
        int *nh = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)cap);
        if (!nh || cap > (1 << 28)) return NULL;
        for (i = 0; i < c->nv; i++) {
            h = luthier_onnx__hashstr(c->vals[i].name) & (uint32_t)(cap - 1);
            while (nh[h]) h = (h + 1) & (uint32_t)(cap - 1);
            nh[h] = i + 1;
        }
        c->hash = nh;
        c->hcap = cap;
    }
    if (!(v = LUTHIER_ONNX__PUSH(c, c->vals, c->nv, c->cv, luthier_onnx__val))) return NULL;
    v->name = name;
    v->producer = -1;
    v->tid = v->cid = -1;
    h = luthier_onnx__hashstr(name) & (uint32_t)(c->hcap - 1);
    while (c->hash[h]) h = (h + 1) & (uint32_t)(c->hcap - 1);
    c->hash[h] = c->nv;
    return v;
}

/* ---- attributes ------------------------------------------------------------------------------ */

LUTHIER_ONNX__FN const luthier_onnx__attr *luthier_onnx__attr_get(const luthier_onnx__node *n, const char *name) {
    int i;
    for (i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}
LUTHIER_ONNX__FN int64_t luthier_onnx__ai(const luthier_onnx__node *n, const char *name, int64_t def) {
    const luthier_onnx__attr *a = luthier_onnx__attr_get(n, name);
    return a && a->has_i ? a->i : def;
}
LUTHIER_ONNX__FN float luthier_onnx__af(const luthier_onnx__node *n, const char *name, float def) {
    const luthier_onnx__attr *a = luthier_onnx__attr_get(n, name);
    return a && a->has_f ? a->f : def;
}
LUTHIER_ONNX__FN const char *luthier_onnx__as(const luthier_onnx__node *n, const char *name, const char *def) {
    const luthier_onnx__attr *a = luthier_onnx__attr_get(n, name);
    return a && a->has_s ? a->s : def;
}
/* Integer list attribute: count (-1 when absent). */
LUTHIER_ONNX__FN int luthier_onnx__aints(const luthier_onnx__node *n, const char *name, const int64_t **v) {
    const luthier_onnx__attr *a = luthier_onnx__attr_get(n, name);
    *v = a ? a->ints : NULL;
    return a ? a->nints : -1;
}

/* Refuses attributes outside allowed (comma-separated) so that none is silently ignored. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__check_attrs(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *allowed) {
    int i;
    for (i = 0; i < n->nattrs; i++) {
        const char *a = n->attrs[i].name, *p = allowed;
        size_t la = strlen(a);
        int ok = 0;
        while (*p && !ok) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            ok = l == la && strncmp(p, a, l) == 0;
            p += l + (e ? 1 : 0);
        }
        if (!ok) LUTHIER_ONNX__UNSUP("attribute '%s' is not supported (supported: %s)", a, *allowed ? allowed : "none");
        if (n->attrs[i].has_g) LUTHIER_ONNX__UNSUP("attribute '%s' holds a subgraph: not supported", a);
    }
    return LUTHIER_STATUS_OK;
}

/* ---- host tensors (constants and folding) ---------------------------------------------------- */

LUTHIER_ONNX__FN luthier_onnx__tensor *luthier_onnx__tnew(luthier_onnx__ctx *c, int isf, int rank, const int64_t *dims) {
    luthier_onnx__tensor *t;
    size_t n = 1;
    int k;
    if (rank < 0 || rank > LUTHIER_ONNX_MAX_RANK) return NULL;
    for (k = 0; k < rank; k++) {
        if (dims[k] < 0 || (dims[k] && n > LUTHIER_ONNX__MAX_ELEMS / (size_t)dims[k])) return NULL;
        n *= (size_t)dims[k];
    }
    if (n > LUTHIER_ONNX__MAX_ELEMS || !(t = (luthier_onnx__tensor *)luthier_onnx__alloc(c, sizeof *t))) return NULL;
    t->type = isf ? 1 : 7;
    t->rank = rank;
    for (k = 0; k < rank; k++) t->dims[k] = dims[k];
    t->n = n;
    if (isf ? !(t->f = (float *)luthier_onnx__alloc(c, (n ? n : 1) * sizeof(float)))
            : !(t->i = (int64_t *)luthier_onnx__alloc(c, (n ? n : 1) * sizeof(int64_t))))
        return NULL;
    return t;
}

LUTHIER_ONNX__FN double luthier_onnx__tget(const luthier_onnx__tensor *t, size_t i) { return t->f ? (double)t->f[i] : (double)t->i[i]; }

/* count elements of s from index src into t from index dst (both float, or both integers). */
LUTHIER_ONNX__FN void luthier_onnx__tcopy(luthier_onnx__tensor *t, size_t dst, const luthier_onnx__tensor *s, size_t src, size_t count) {
    if (t->f) memcpy(t->f + dst, s->f + src, count * sizeof(float));
    else memcpy(t->i + dst, s->i + src, count * sizeof(int64_t));
}

/* Integer values of a constant (any integer type). */
LUTHIER_ONNX__FN int luthier_onnx__is_int(const luthier_onnx__tensor *t) { return t && t->i != NULL; }

LUTHIER_ONNX__FN size_t luthier_onnx__numel(int rank, const int64_t *d) {
    size_t n = 1;
    int k;
    for (k = 0; k < rank; k++) n *= (size_t)d[k];
    return n;
}

/* Offset in a tensor of shape s (rank rs) of output element e of shape o (rank r), broadcast. */
LUTHIER_ONNX__FN size_t luthier_onnx__bidx(size_t e, const int64_t *o, int r, const int64_t *s, int rs) {
    size_t off = 0, stride = 1;
    int d;
    for (d = r - 1; d >= 0; d--) {
        size_t idx = e % (size_t)o[d];
        int ds = d - (r - rs);
        e /= (size_t)o[d];
        if (ds >= 0) {
            if (s[ds] != 1) off += idx * stride;
            stride *= (size_t)s[ds];
        }
    }
    return off;
}

LUTHIER_ONNX__FN int luthier_onnx__bcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *o) {
    int r = ra > rb ? ra : rb, i;
    for (i = 0; i < r; i++) {
        int64_t x = i < r - ra ? 1 : a[i - (r - ra)], y = i < r - rb ? 1 : b[i - (r - rb)];
        if (x != y && x != 1 && y != 1) return 0;
        o[i] = x == 1 ? y : x;
    }
    *ro = r;
    return 1;
}

/* "[d0,d1,...]" into buf (the loader's messages). */
LUTHIER_ONNX__FN void luthier_onnx__dims_str(int rank, const int64_t *d, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    int i;
    for (i = 0; i < rank && used < size; i++) used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)d[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

LUTHIER_ONNX__FN int luthier_onnx__norm_axis(int64_t axis, int rank, int64_t *out) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= (rank ? rank : 1)) return 0;
    *out = axis;
    return 1;
}

/* ---- per-value shape --------------------------------------------------------------------- */

typedef struct luthier_onnx__shape {
    int rank;
    int64_t d[LUTHIER_ONNX_MAX_RANK];
    int isf; /* f32 (else i64) */
    int len_axis, len_root; /* the engine tensor's run-time length (luthier_tensor_info), -1 */
} luthier_onnx__shape;

LUTHIER_ONNX__FN void luthier_onnx__vshape(luthier_onnx__ctx *c, const luthier_onnx__val *v, luthier_onnx__shape *s) {
    memset(s, 0, sizeof *s);
    s->len_axis = s->len_root = -1;
    if (v->c) {
        s->rank = v->c->rank;
        memcpy(s->d, v->c->dims, sizeof(int64_t) * (size_t)v->c->rank);
        s->isf = v->c->f != NULL;
    } else if (v->tid >= 0) {
        luthier_tensor_info ti;
        luthier_graph_tensor_info(c->g, v->tid, &ti);
        s->rank = ti.rank;
        memcpy(s->d, ti.shape, sizeof(int64_t) * (size_t)ti.rank);
        s->isf = ti.dtype == LUTHIER_DTYPE_F32;
        s->len_axis = ti.length_axis, s->len_root = ti.length_root;
    }
}

/* ---- shared shape logic ------------------------------------------------------------------------ */

LUTHIER_ONNX__FN luthier_onnx__val *luthier_onnx__in(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k) {
    if (k >= n->nin || !n->in[k] || !*n->in[k]) return NULL;
    return luthier_onnx__find(c, n->in[k]);
}

/* A constant integer input (or NULL when absent); fails when present and not constant. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__const_ints(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, const char *what,
                                               const luthier_onnx__tensor **out) {
    luthier_onnx__val *v = luthier_onnx__in(c, n, k);
    *out = NULL;
    if (!v) return LUTHIER_STATUS_OK;
    if (!v->c) LUTHIER_ONNX__UNSUP("input %d ('%s', %s) must be a constant (computed at run time here)", k, v->name, what);
    if (!luthier_onnx__is_int(v->c)) LUTHIER_ONNX__UNSUP("input %d ('%s', %s) must hold integers", k, v->name, what);
    if (v->c->lenmask) LUTHIER_ONNX__UNSUP("input %d ('%s', %s) holds a run-time length: it must be a constant", k, v->name, what);
    *out = v->c;
    return LUTHIER_STATUS_OK;
}

/* axes from the attribute (before opset_input) or input 1 (from opset_input); count -1 = absent */
LUTHIER_ONNX__FN luthier_status luthier_onnx__axes(luthier_onnx__ctx *c, const luthier_onnx__node *n, int64_t opset_input, int64_t *axes, int *count) {
    const int64_t *a;
    int k;
    *count = -1;
    if (c->opset >= opset_input) {
        const luthier_onnx__tensor *t;
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "axes", &t));
        if (!t) return LUTHIER_STATUS_OK;
        if (t->n > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__BAD("%zu axes", t->n);
        for (k = 0; k < (int)t->n; k++) axes[k] = t->i[k];
        *count = (int)t->n;
        return LUTHIER_STATUS_OK;
    }
    k = luthier_onnx__aints(n, "axes", &a);
    if (k > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__BAD("%d axes", k);
    if (k > 0) memcpy(axes, a, sizeof(int64_t) * (size_t)k);
    *count = k;
    return LUTHIER_STATUS_OK;
}

/* Output shape of Reshape, Flatten, Squeeze, Unsqueeze. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__reshape_like(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *x, luthier_onnx__shape *o) {
    int64_t axes[LUTHIER_ONNX_MAX_RANK], ax;
    int na, k, j;
    size_t numel = luthier_onnx__numel(x->rank, x->d);
    *o = *x;
    if (strcmp(n->op, "Flatten") == 0) {
        int64_t a = luthier_onnx__ai(n, "axis", 1);
        if (a < 0) a += x->rank;
        if (a < 0 || a > x->rank) LUTHIER_ONNX__BAD("axis %lld is out of range for rank %d", (long long)luthier_onnx__ai(n, "axis", 1), x->rank);
        o->rank = 2;
        o->d[0] = (int64_t)luthier_onnx__numel((int)a, x->d);
        o->d[1] = (int64_t)luthier_onnx__numel(x->rank - (int)a, x->d + a);
        return LUTHIER_STATUS_OK;
    }
    if (strcmp(n->op, "Reshape") == 0) {
        const luthier_onnx__tensor *t = NULL;
        const int64_t *sh;
        int ns, infer = -1;
        int64_t known = 1;
        if (c->opset >= 5) {
            LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "shape", &t));
            if (!t) LUTHIER_ONNX__BAD("the shape input is missing");
            sh = t->i;
            ns = (int)t->n;
        } else if ((ns = luthier_onnx__aints(n, "shape", &sh)) < 0) {
            LUTHIER_ONNX__BAD("the shape attribute is missing");
        }
        if (ns > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__UNSUP("target rank %d is above %d", ns, LUTHIER_ONNX_MAX_RANK);
        o->rank = ns;
        for (k = 0; k < ns; k++) {
            int64_t v = sh[k];
            if (v == 0 && !luthier_onnx__ai(n, "allowzero", 0)) {
                if (k >= x->rank) LUTHIER_ONNX__BAD("size %d is 0 (copy) but the input has rank %d", k, x->rank);
                v = x->d[k];
            } else if (v == -1) {
                if (infer >= 0) LUTHIER_ONNX__BAD("more than one size is -1");
                infer = k;
                v = 1;
            } else if (v < 0) {
                LUTHIER_ONNX__BAD("size %d is %lld", k, (long long)v);
            }
            o->d[k] = v;
            if (v > ((int64_t)1 << 40) || (v && known > ((int64_t)1 << 40) / v)) LUTHIER_ONNX__BAD("target shape is too large");
            known *= v;
        }
        if (infer >= 0) {
            if (known == 0 || numel % (size_t)known) LUTHIER_ONNX__BAD("cannot infer the -1 size of the target shape");
            o->d[infer] = (int64_t)(numel / (size_t)known);
            known *= o->d[infer];
        }
        if ((size_t)known != numel) LUTHIER_ONNX__BAD("cannot reshape %zu elements to %lld", numel, (long long)known);
        return LUTHIER_STATUS_OK;
    }
    LUTHIER_ONNX__TRY(luthier_onnx__axes(c, n, 13, axes, &na));
    if (strcmp(n->op, "Squeeze") == 0) {
        int drop[LUTHIER_ONNX_MAX_RANK] = {0};
        if (na < 0) {
            for (k = 0; k < x->rank; k++) drop[k] = x->d[k] == 1;
        } else {
            for (k = 0; k < na; k++) {
                if (!luthier_onnx__norm_axis(axes[k], x->rank, &ax)) LUTHIER_ONNX__BAD("axis %lld is out of range", (long long)axes[k]);
                if (x->d[ax] != 1) LUTHIER_ONNX__BAD("axis %lld has size %lld, not 1", (long long)axes[k], (long long)x->d[ax]);
                drop[ax] = 1;
            }
        }
        for (k = j = 0; k < x->rank; k++)
            if (!drop[k]) o->d[j++] = x->d[k];
        o->rank = j;
        return LUTHIER_STATUS_OK;
    }
    /* Unsqueeze */
    {
        int ins[LUTHIER_ONNX_MAX_RANK] = {0}, r;
        if (na < 0) LUTHIER_ONNX__BAD("axes are missing");
        r = x->rank + na;
        if (r > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__UNSUP("result rank %d is above %d", r, LUTHIER_ONNX_MAX_RANK);
        for (k = 0; k < na; k++) {
            if (!luthier_onnx__norm_axis(axes[k], r, &ax) || ins[ax]) LUTHIER_ONNX__BAD("axis %lld is out of range or repeated", (long long)axes[k]);
            ins[ax] = 1;
        }
        for (k = j = 0; k < r; k++) o->d[k] = ins[k] ? 1 : x->d[j++];
        o->rank = r;
        return LUTHIER_STATUS_OK;
    }
}

/* Slice: per axis of x, start, step and length. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__slice_params(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *x, int64_t *start,
                                                 int64_t *step, int64_t *len) {
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int ns, ne, na = -1, nsp = -1, k;
    int seen[LUTHIER_ONNX_MAX_RANK] = {0};
    for (k = 0; k < x->rank; k++) start[k] = 0, step[k] = 1, len[k] = x->d[k];
    if (c->opset >= 10) {
        const luthier_onnx__tensor *ts, *te, *ta, *tp;
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "starts", &ts));
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 2, "ends", &te));
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 3, "axes", &ta));
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 4, "steps", &tp));
        if (!ts || !te) LUTHIER_ONNX__BAD("starts and ends are required");
        st = ts->i; ns = (int)ts->n; en = te->i; ne = (int)te->n;
        if (ta) ax = ta->i, na = (int)ta->n;
        if (tp) sp = tp->i, nsp = (int)tp->n;
    } else {
        ns = luthier_onnx__aints(n, "starts", &st);
        ne = luthier_onnx__aints(n, "ends", &en);
        na = luthier_onnx__aints(n, "axes", &ax);
        if (ns < 0 || ne < 0) LUTHIER_ONNX__BAD("starts and ends are required");
    }
    if (ns != ne || (na >= 0 && na != ns) || (nsp >= 0 && nsp != ns) || ns > x->rank)
        LUTHIER_ONNX__BAD("starts, ends, axes and steps have different lengths");
    for (k = 0; k < ns; k++) {
        int64_t a, dim, s, e, p = sp ? sp[k] : 1, l;
        if (!luthier_onnx__norm_axis(ax ? ax[k] : k, x->rank, &a) || seen[a]) LUTHIER_ONNX__BAD("axis %lld is out of range or repeated", (long long)(ax ? ax[k] : k));
        seen[a] = 1;
        dim = x->d[a];
        if (p == 0) LUTHIER_ONNX__BAD("step 0");
        if (a == x->len_axis && (p != 1 || st[k] < 0 || en[k] < 0)) /* positions from the end would count from the capacity */
            LUTHIER_ONNX__UNSUP("axis %lld has a run-time length: it slices only with start >= 0, end >= 0 and step 1", (long long)a);
        if (p > dim + 1) p = dim + 1; /* same slice, no overflow below */
        if (p < -(dim + 1)) p = -(dim + 1);
        s = st[k];
        e = en[k];
        if (s < 0) s = s < -dim ? 0 : s + dim; /* careful with INT64_MIN */
        if (e < 0) e = e < -dim ? -1 : e + dim;
        if (p > 0) {
            if (s > dim) s = dim;
            if (e > dim) e = dim;
            if (e < 0) e = 0;
            l = e > s ? (e - s + p - 1) / p : 0;
        } else {
            if (s > dim - 1) s = dim - 1;
            if (e > dim - 1) e = dim - 1;
            l = s > e ? (s - e + (-p) - 1) / (-p) : 0;
        }
        start[a] = s;
        step[a] = p;
        len[a] = l;
    }
    return LUTHIER_STATUS_OK;
}

/* ---- constant folding -------------------------------------------------------------------------- */

LUTHIER_ONNX__FN int luthier_onnx__isop(const luthier_onnx__node *n, const char *op) { return strcmp(n->op, op) == 0; }

/* The index of s in names[0..count), or -1. */
LUTHIER_ONNX__FN int luthier_onnx__pick(const char *s, const char *const *names, int count) {
    int k;
    for (k = 0; k < count; k++)
        if (!strcmp(s, names[k])) return k;
    return -1;
}

LUTHIER_ONNX__FN double luthier_onnx__unary(const char *op, double x) {
    if (!strcmp(op, "Sqrt")) return sqrt(x);
    if (!strcmp(op, "Neg")) return -x;
    if (!strcmp(op, "Exp")) return exp(x);
    if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(op, "Tanh")) return tanh(x);
    if (!strcmp(op, "Erf")) return erf(x);
    if (!strcmp(op, "Abs")) return fabs(x);
    if (!strcmp(op, "Log")) return log(x);
    if (!strcmp(op, "Floor")) return floor(x);
    if (!strcmp(op, "Ceil")) return ceil(x);
    if (!strcmp(op, "Round")) return nearbyint(x); /* half to even (the default rounding mode) */
    return 1 / x; /* Reciprocal */
}

LUTHIER_ONNX__FN int64_t luthier_onnx__toint(double v) {
    if (v != v) return 0;
    if (v >= 9.2e18) return INT64_MAX;
    if (v <= -9.2e18) return INT64_MIN;
    return (int64_t)v;
}

LUTHIER_ONNX__FN int64_t luthier_onnx__ibin(const char *op, int64_t a, int64_t b) {
    if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return (int64_t)((uint64_t)a + (uint64_t)b);
    if (!strcmp(op, "Sub")) return (int64_t)((uint64_t)a - (uint64_t)b);
    if (!strcmp(op, "Mul")) return (int64_t)((uint64_t)a * (uint64_t)b);
    if (!strcmp(op, "Div")) return b == 0 || (a == INT64_MIN && b == -1) ? 0 : a / b;
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "And")) return a != 0 && b != 0;
    if (!strcmp(op, "Or")) return a != 0 || b != 0;
    if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
    if (!strcmp(op, "Mod") || !strcmp(op, "FMod")) { /* Mod fmod = 0: floored; "FMod": fmod = 1 (C) */
        int64_t r = b == 0 || b == -1 ? 0 : a % b;
        return op[0] == 'M' && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    return luthier_onnx__toint(pow((double)a, (double)b));
}

LUTHIER_ONNX__FN double luthier_onnx__fbin(const char *op, double a, double b) {
    if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "And")) return a != 0 && b != 0;
    if (!strcmp(op, "Or")) return a != 0 || b != 0;
    if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
    if (!strcmp(op, "Mod") || !strcmp(op, "FMod")) {
        double r = fmod(a, b);
        return op[0] == 'M' && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    return pow(a, b);
}

/* ---- quantization parameters (QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul) ---- */

/* A quantization operator's scale and zero point (two of its inputs): constants, one value (per
   tensor) or one per position along an axis. */
typedef struct luthier_onnx__qparams {
    size_t n;          /* pairs: 1 = per tensor */
    const float *s;
    const int64_t *z;  /* NULL: 0 */
    int type;          /* the zero point's TensorProto type (2 uint8, 3 int8, 6 int32); 0: absent */
} luthier_onnx__qparams;

/* Integer range of a quantized type (0 when it is not one that is read here). */
LUTHIER_ONNX__FN int luthier_onnx__qlimits(int type, int64_t *lo, int64_t *hi) {
    switch (type) {
    case 2: *lo = 0; *hi = 255; return 1;
    case 3: *lo = -128; *hi = 127; return 1;
    case 6: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    default: return 0;
    }
}

/* Scale (input ks) and zero point (input kz, optional) of node n; what names them in messages. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qparams_get(luthier_onnx__ctx *c, const luthier_onnx__node *n, int ks, int kz, const char *what,
                                                          luthier_onnx__qparams *q) {
    luthier_onnx__val *sv = luthier_onnx__in(c, n, ks), *zv = luthier_onnx__in(c, n, kz);
    size_t e;
    memset(q, 0, sizeof *q);
    if (!sv) LUTHIER_ONNX__BAD("the %s scale (input %d) is missing", what, ks);
    if (!sv->c) LUTHIER_ONNX__UNSUP("the %s scale (input %d, '%s') must be a constant: it is computed at run time here", what, ks, sv->name);
    if (!sv->c->f) LUTHIER_ONNX__BAD("the %s scale '%s' is %s, not floating point", what, sv->name, luthier_onnx__typename(sv->c->type));
    if (sv->c->rank > 1 || sv->c->n < 1)
        LUTHIER_ONNX__BAD("the %s scale '%s' must be a scalar or 1-D and not empty (rank %d, %zu values)", what, sv->name, sv->c->rank, sv->c->n);
    q->n = sv->c->n;
    q->s = sv->c->f;
    for (e = 0; e < q->n; e++)
        if (!(q->s[e] >= 0.0f && q->s[e] <= FLT_MAX))
            LUTHIER_ONNX__BAD("the %s scale '%s' holds %g (scales are finite and not negative)", what, sv->name, (double)q->s[e]);
    if (zv) {
        int64_t lo, hi;
        if (!zv->c) LUTHIER_ONNX__UNSUP("the %s zero point (input %d, '%s') must be a constant: it is computed at run time here", what, kz, zv->name);
        if (!zv->c->i) LUTHIER_ONNX__BAD("the %s zero point '%s' is %s, not an integer type", what, zv->name, luthier_onnx__typename(zv->c->type));
        if (zv->c->n != q->n)
            LUTHIER_ONNX__BAD("the %s zero point '%s' has %zu values, the scale '%s' %zu", what, zv->name, zv->c->n, sv->name, q->n);
        q->z = zv->c->i;
        q->type = zv->c->type;
        if (!luthier_onnx__qlimits(q->type, &lo, &hi)) LUTHIER_ONNX__UNSUP("the %s zero point '%s' is %s: quantized types are uint8, int8 (and int32 to dequantize)", what, zv->name, luthier_onnx__typename(q->type));
        for (e = 0; e < q->n; e++)
            if (q->z[e] < lo || q->z[e] > hi)
                LUTHIER_ONNX__BAD("the %s zero point '%s' holds %lld, outside the %s range", what, zv->name, (long long)q->z[e], luthier_onnx__typename(q->type));
    }
    return LUTHIER_STATUS_OK;
}

/* Per-axis parameters (q->n > 1) of tensor t: the axis they run along (attribute axis, default 1). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qaxis(luthier_onnx__ctx *c, const luthier_onnx__node *n, int rank, const int64_t *dims,
                                                    const luthier_onnx__qparams *q, int64_t *axis) {
    *axis = 0;
    if (q->n == 1) return LUTHIER_STATUS_OK;
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 1), rank, axis) || rank == 0)
        LUTHIER_ONNX__BAD("axis %lld is out of range for rank %d", (long long)luthier_onnx__ai(n, "axis", 1), rank);
    if (dims[*axis] != (int64_t)q->n)
        LUTHIER_ONNX__BAD("%zu scales along axis %lld of size %lld", q->n, (long long)*axis, (long long)dims[*axis]);
    return LUTHIER_STATUS_OK;
}

/* The real values scale * (q - zero) of integer constant x, per tensor or along axis (float32,
   as ONNX computes them); NULL when out of memory. */
LUTHIER_ONNX__FN float *luthier_onnx__dequantize(luthier_onnx__ctx *c, const luthier_onnx__tensor *x, const luthier_onnx__qparams *q, int64_t axis) {
    float *f = (float *)luthier_onnx__alloc(c, (x->n ? x->n : 1) * sizeof(float));
    size_t e, inner = q->n == 1 ? 1 : luthier_onnx__numel(x->rank - (int)axis - 1, x->dims + axis + 1);
    if (!f) return NULL;
    for (e = 0; e < x->n; e++) {
        size_t k = q->n == 1 ? 0 : (e / inner) % q->n;
        f[e] = q->s[k] * (float)(x->i[e] - (q->z ? q->z[k] : 0));
    }
    return f;
}

/* QuantizeLinear / DequantizeLinear of constants (weights, biases): computed at load time. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_q(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__tensor *xc,
                                                     luthier_onnx__tensor **out) {
    luthier_onnx__qparams q;
    luthier_onnx__tensor *t;
    int64_t axis, lo, hi;
    size_t e, inner;
    int deq = luthier_onnx__isop(n, "DequantizeLinear");
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
    LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 1, 2, deq ? "input" : "output", &q));
    LUTHIER_ONNX__TRY(luthier_onnx__qaxis(c, n, xc->rank, xc->dims, &q, &axis));
    if (deq) {
        float *f;
        if (!xc->i) LUTHIER_ONNX__BAD("input '%s' is %s: DequantizeLinear reads integers", n->in[0], luthier_onnx__typename(xc->type));
        if (!(t = (luthier_onnx__tensor *)luthier_onnx__alloc(c, sizeof *t)) || !(f = luthier_onnx__dequantize(c, xc, &q, axis)))
            LUTHIER_ONNX__OOM();
        t->type = 1;
        t->rank = xc->rank;
        memcpy(t->dims, xc->dims, sizeof t->dims);
        t->n = xc->n;
        t->f = f;
        *out = t;
        return LUTHIER_STATUS_OK;
    }
    if (!luthier_onnx__qlimits(q.type ? q.type : 2, &lo, &hi) || q.type == 6)
        LUTHIER_ONNX__UNSUP("quantization to %s is not supported (uint8, int8)", luthier_onnx__typename(q.type));
    if (!(t = luthier_onnx__tnew(c, 0, xc->rank, xc->dims)))
        LUTHIER_ONNX__UNSUP("constant result too large (or rank > %d)", LUTHIER_ONNX_MAX_RANK);
    t->type = q.type ? q.type : 2;
    inner = q.n == 1 ? 1 : luthier_onnx__numel(xc->rank - (int)axis - 1, xc->dims + axis + 1);
    for (e = 0; e < t->n; e++) {
        size_t k = q.n == 1 ? 0 : (e / inner) % q.n;
        double r = nearbyint((double)((float)luthier_onnx__tget(xc, e) / q.s[k])); /* x / scale in float32, half to even */
        if (r != r) r = 0;
        r += (double)(q.z ? q.z[k] : 0);
        t->i[e] = r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
    }
    *out = t;
    return LUTHIER_STATUS_OK;
}

#define LUTHIER_ONNX__TNEW(var, isf, rank, dims)                                                                      \
    do {                                                                                                   \
        if (!((var) = luthier_onnx__tnew(c, (isf), (rank), (dims))))                                                 \
            return luthier_onnx__nfail(c, n, LUTHIER_STATUS_UNSUPPORTED, "constant result too large (or rank > %d)", \
                             LUTHIER_ONNX_MAX_RANK);                                                       \
    } while (0)
/* ... of the element type of tensor like (float or integer, and its ONNX type) */
#define LUTHIER_ONNX__TLIKE(var, like, rank, dims)                                                                    \
    do {                                                                                                              \
        LUTHIER_ONNX__TNEW(var, (like)->f != NULL, rank, dims);                                                       \
        (var)->type = (like)->type;                                                                                   \
    } while (0)

typedef struct luthier_onnx__cvargs luthier_onnx__cvargs;
typedef struct luthier_onnx__foldargs luthier_onnx__foldargs;

/* One row of the operator table (LUTHIER_ONNX__OPS, below with the converters). */
typedef struct luthier_onnx__opinfo {
    const char *op;
    int min_in, max_in, min_out, max_out;
    luthier_status (*convert)(const luthier_onnx__cvargs *arg);
    luthier_op engine_op; /* what the converter emits for it (LUTHIER_OP_COUNT: none, or several) */
    luthier_status (*fold)(const luthier_onnx__foldargs *arg);
    int since, until;     /* the default-domain opsets that define it (until 0: the newest read) */
} luthier_onnx__opinfo;
LUTHIER_ONNX__FN const luthier_onnx__opinfo *luthier_onnx__opinfo_of(const luthier_onnx__node *n);

/* >>onnx-fold: each operator row's fold hook computes the node at load time when it can, writing
   its output 0 to *arg->res (left NULL: the node is converted into engine nodes instead). Hooks
   run when every input present is a constant (xc: input 0's value), except the two that fold
   from shapes (luthier_onnx__fold_any): Shape/Size and ConstantOfShape. "none": the operator
   never folds. */
struct luthier_onnx__foldargs {
    luthier_onnx__ctx *c;
    luthier_onnx__node *n;
    luthier_onnx__val *x;              /* input 0 (NULL when absent) */
    const luthier_onnx__tensor *xc;    /* its constant when all inputs are constants, else NULL */
    const luthier_onnx__shape *xs;     /* its shape (rank 0 when x is NULL) */
    luthier_onnx__tensor **res;
};
#define LUTHIER_ONNX__FOLD_ARGS                                                                                \
    luthier_onnx__ctx *c = arg->c;                                                                             \
    luthier_onnx__node *n = arg->n;                                                                            \
    luthier_onnx__val *x = arg->x;                                                                             \
    const luthier_onnx__tensor *xc = arg->xc;                                                                  \
    const luthier_onnx__shape xs = *arg->xs;                                                                   \
    luthier_onnx__tensor *t = NULL; /* the result (luthier_onnx__folded) */                                    \
    (void)c, (void)n, (void)x, (void)xc, (void)xs, (void)t

/* A fold hook's success: t is the node's output 0. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__folded(const luthier_onnx__foldargs *arg, luthier_onnx__tensor *t) {
    *arg->res = t;
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_none(const luthier_onnx__foldargs *arg) {
    (void)arg;
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_identity(const luthier_onnx__foldargs *arg) {
    return luthier_onnx__folded(arg, arg->x->c);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_quant(const luthier_onnx__foldargs *arg) {
    luthier_onnx__ctx *c = arg->c;
    LUTHIER_ONNX__TRY(luthier_onnx__fold_q(c, arg->n, arg->xc, arg->res));
    return LUTHIER_STATUS_OK;
}

/* Shape and Size: from the static shape, whatever the input's value. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_shape(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    int k;
    int64_t one = (int64_t)xs.rank, s = luthier_onnx__ai(n, "start", 0), en = luthier_onnx__ai(n, "end", xs.rank);
    if (!x) return LUTHIER_STATUS_OK;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "start,end"));
    if (luthier_onnx__isop(n, "Size")) {
        if (xs.len_axis >= 0) LUTHIER_ONNX__UNSUP("'%s' has a run-time length: its size is not a constant", x->name);
        LUTHIER_ONNX__TNEW(t, 0, 0, &one);
        t->i[0] = (int64_t)luthier_onnx__numel(xs.rank, xs.d);
    } else {
        if (s < 0) s += xs.rank;
        if (en < 0) en += xs.rank;
        s = s < 0 ? 0 : s > xs.rank ? xs.rank : s;
        en = en < 0 ? 0 : en > xs.rank ? xs.rank : en;
        one = en > s ? en - s : 0;
        LUTHIER_ONNX__TNEW(t, 0, 1, &one);
        for (k = 0; k < (int)one; k++) t->i[k] = xs.d[s + k];
        if (xs.len_axis >= s && xs.len_axis < en) { /* the capacity, marked: min(capacity, n) = n */
            if (!(t->lenmask = (unsigned char *)luthier_onnx__alloc(c, (size_t)one))) LUTHIER_ONNX__OOM();
            memset(t->lenmask, 0, (size_t)one);
            t->lenmask[xs.len_axis - s] = 1;
            t->lentid = x->tid;
            t->lenwhole = s == 0 && en == xs.rank;
        }
    }
    return luthier_onnx__folded(arg, t);
}

/* ConstantOfShape (its shape input must be constant). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_const_of_shape(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    int k;
    const luthier_onnx__tensor *sh;
    const luthier_onnx__attr *va = luthier_onnx__attr_get(n, "value");
    int64_t dims[LUTHIER_ONNX_MAX_RANK];
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "value"));
    if (x && x->c && x->c->lenmask) return LUTHIER_STATUS_OK; /* converted: luthier_onnx__cv_const_of_shape */
    LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 0, "shape", &sh));
    if (!sh || sh->n > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__BAD("needs a constant shape of rank <= %d", LUTHIER_ONNX_MAX_RANK);
    for (k = 0; k < (int)sh->n; k++) dims[k] = sh->i[k];
    if (va && (!va->t || va->t->n != 1 || (!va->t->f && !va->t->i))) LUTHIER_ONNX__UNSUP("value must be a one-element numeric tensor");
    LUTHIER_ONNX__TNEW(t, !va || va->t->f, (int)sh->n, dims);
    for (e = 0; e < t->n; e++) {
        if (t->f) t->f[e] = va ? va->t->f[0] : 0.0f;
        else t->i[e] = va->t->i[0];
    }
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_cast(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    int to = (int)luthier_onnx__ai(n, "to", 0);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "to,saturate"));
    if (!luthier_onnx__elsize(to)) LUTHIER_ONNX__UNSUP("cast to %s is not supported", luthier_onnx__typename(to));
    LUTHIER_ONNX__TNEW(t, luthier_onnx__isfloat(to), xc->rank, xc->dims);
    t->type = to;
    for (e = 0; e < t->n; e++) {
        double v = luthier_onnx__tget(xc, e);
        if (t->f) t->f[e] = (float)v;
        else t->i[e] = to == 9 ? v != 0 : luthier_onnx__toint(v);
    }
    return luthier_onnx__folded(arg, t);
}

/* Reshape, Flatten, Squeeze, Unsqueeze. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_reshape(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    luthier_onnx__shape os;
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_like(c, n, &xs, &os));
    LUTHIER_ONNX__TLIKE(t, xc, os.rank, os.d);
    luthier_onnx__tcopy(t, 0, xc, 0, t->n);
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_gather(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    int k;
    const luthier_onnx__tensor *ic = luthier_onnx__in(c, n, 1)->c;
    int64_t ax, dims[LUTHIER_ONNX_MAX_RANK];
    size_t outer, inner, m, idx, nd = 0;
    if (!luthier_onnx__is_int(ic)) LUTHIER_ONNX__BAD("indices must be integers");
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xc->rank, &ax) || xc->rank == 0) LUTHIER_ONNX__BAD("axis out of range");
    if (xc->rank - 1 + ic->rank > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__UNSUP("result rank too large");
    for (k = 0; k < ax; k++) dims[nd++] = xc->dims[k];
    for (k = 0; k < ic->rank; k++) dims[nd++] = ic->dims[k];
    for (k = (int)ax + 1; k < xc->rank; k++) dims[nd++] = xc->dims[k];
    LUTHIER_ONNX__TLIKE(t, xc, (int)nd, dims);
    outer = luthier_onnx__numel((int)ax, xc->dims);
    inner = luthier_onnx__numel(xc->rank - (int)ax - 1, xc->dims + ax + 1);
    for (m = 0; m < outer; m++)
        for (idx = 0; idx < ic->n; idx++) {
            int64_t j = ic->i[idx];
            if (j < 0) j += xc->dims[ax];
            if (j < 0 || j >= xc->dims[ax]) LUTHIER_ONNX__BAD("index %lld is out of range", (long long)ic->i[idx]);
            luthier_onnx__tcopy(t, (m * ic->n + idx) * inner, xc, (m * (size_t)xc->dims[ax] + (size_t)j) * inner, inner);
        }
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_concat(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    int k;
    int64_t ax, dims[LUTHIER_ONNX_MAX_RANK], off = 0;
    size_t outer, inner, m;
    int isf = xc->f != NULL;
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xc->rank, &ax) || xc->rank == 0) LUTHIER_ONNX__BAD("axis out of range");
    memcpy(dims, xc->dims, sizeof dims);
    dims[ax] = 0;
    for (k = 0; k < n->nin; k++) {
        const luthier_onnx__tensor *p = luthier_onnx__in(c, n, k) ? luthier_onnx__in(c, n, k)->c : NULL;
        int j;
        if (!p) continue;
        if (p->rank != xc->rank || (p->f != NULL) != isf) LUTHIER_ONNX__BAD("inputs differ in rank or type");
        for (j = 0; j < p->rank; j++)
            if (j != ax && p->dims[j] != xc->dims[j]) LUTHIER_ONNX__BAD("input %d's shape differs outside the axis", k);
        dims[ax] += p->dims[ax];
    }
    LUTHIER_ONNX__TLIKE(t, xc, xc->rank, dims);
    outer = luthier_onnx__numel((int)ax, xc->dims);
    inner = luthier_onnx__numel(xc->rank - (int)ax - 1, xc->dims + ax + 1);
    for (k = 0; k < n->nin; k++) {
        const luthier_onnx__tensor *p = luthier_onnx__in(c, n, k) ? luthier_onnx__in(c, n, k)->c : NULL;
        size_t len;
        if (!p) continue;
        len = (size_t)p->dims[ax] * inner;
        for (m = 0; m < outer; m++) luthier_onnx__tcopy(t, (m * (size_t)dims[ax] + (size_t)off) * inner, p, m * len, len);
        off += p->dims[ax];
    }
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_slice(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    int k;
    int64_t st[LUTHIER_ONNX_MAX_RANK], sp[LUTHIER_ONNX_MAX_RANK], ln[LUTHIER_ONNX_MAX_RANK];
    LUTHIER_ONNX__TRY(luthier_onnx__slice_params(c, n, &xs, st, sp, ln));
    LUTHIER_ONNX__TLIKE(t, xc, xc->rank, ln);
    for (e = 0; e < t->n; e++) {
        size_t rem = e, src = 0, stride = 1;
        for (k = xc->rank - 1; k >= 0; k--) {
            size_t idx = rem % (size_t)ln[k];
            rem /= (size_t)ln[k];
            src += (size_t)(st[k] + (int64_t)idx * sp[k]) * stride;
            stride *= (size_t)xc->dims[k];
        }
        luthier_onnx__tcopy(t, e, xc, src, 1);
    }
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_transpose(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    int k;
    const int64_t *perm;
    int np = luthier_onnx__aints(n, "perm", &perm), p[LUTHIER_ONNX_MAX_RANK], seen[LUTHIER_ONNX_MAX_RANK] = {0};
    int64_t dims[LUTHIER_ONNX_MAX_RANK];
    size_t istr[LUTHIER_ONNX_MAX_RANK];
    if (np >= 0 && np != xc->rank) LUTHIER_ONNX__BAD("perm has %d entries for rank %d", np, xc->rank);
    for (k = 0; k < xc->rank; k++) {
        p[k] = np >= 0 ? (int)perm[k] : xc->rank - 1 - k;
        if (p[k] < 0 || p[k] >= xc->rank || seen[p[k]]) LUTHIER_ONNX__BAD("perm is not a permutation");
        seen[p[k]] = 1;
        dims[k] = xc->dims[p[k]];
    }
    for (k = xc->rank - 1, e = 1; k >= 0; k--) istr[k] = e, e *= (size_t)xc->dims[k];
    LUTHIER_ONNX__TLIKE(t, xc, xc->rank, dims);
    for (e = 0; e < t->n; e++) {
        size_t rem = e, src = 0;
        for (k = xc->rank - 1; k >= 0; k--) {
            src += (rem % (size_t)dims[k]) * istr[p[k]];
            rem /= (size_t)dims[k];
        }
        luthier_onnx__tcopy(t, e, xc, src, 1);
    }
    return luthier_onnx__folded(arg, t);
}

/* The element-wise unary operators (float; Neg and Relu also on integers). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_unary(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    LUTHIER_ONNX__TLIKE(t, xc, xc->rank, xc->dims);
    for (e = 0; e < t->n; e++) {
        if (t->f) t->f[e] = (float)luthier_onnx__unary(n->op, (double)xc->f[e]);
        else if (luthier_onnx__isop(n, "Neg")) t->i[e] = (int64_t)(0 - (uint64_t)xc->i[e]);
        else if (luthier_onnx__isop(n, "Relu")) t->i[e] = xc->i[e] > 0 ? xc->i[e] : 0;
        else if (luthier_onnx__isop(n, "Abs")) t->i[e] = xc->i[e] < 0 ? (int64_t)(0 - (uint64_t)xc->i[e]) : xc->i[e];
        else LUTHIER_ONNX__UNSUP("integer input");
    }
    return luthier_onnx__folded(arg, t);
}

/* Not (bool out). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_not(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    LUTHIER_ONNX__TNEW(t, 0, xc->rank, xc->dims);
    t->type = 9;
    for (e = 0; e < t->n; e++) t->i[e] = luthier_onnx__tget(xc, e) == 0;
    return luthier_onnx__folded(arg, t);
}

/* The broadcasting operators: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Equal, Greater, Less,
   GreaterOrEqual, LessOrEqual, And, Or, Xor, Mod, Expand (the second input is the shape), Where. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_broadcast(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    int k;
    /* broadcast over all inputs (Expand: the second input is the shape) */
    int64_t dims[LUTHIER_ONNX_MAX_RANK], tmp[LUTHIER_ONNX_MAX_RANK];
    int rank = xc->rank, isf = 0, expand = luthier_onnx__isop(n, "Expand"), where = luthier_onnx__isop(n, "Where");
    const int boolop = luthier_onnx__isop(n, "Equal") || luthier_onnx__isop(n, "Greater") || luthier_onnx__isop(n, "Less") ||
                       luthier_onnx__isop(n, "GreaterOrEqual") || luthier_onnx__isop(n, "LessOrEqual") ||
                       luthier_onnx__isop(n, "And") || luthier_onnx__isop(n, "Or") || luthier_onnx__isop(n, "Xor");
    const char *opn = luthier_onnx__isop(n, "Mod") && luthier_onnx__ai(n, "fmod", 0) ? "FMod" : n->op;
    memcpy(dims, xc->dims, sizeof dims);
    for (k = 0; k < n->nin; k++) {
        const luthier_onnx__tensor *p = luthier_onnx__in(c, n, k) ? luthier_onnx__in(c, n, k)->c : NULL;
        int r2;
        if (!p) continue;
        if (!p->f && !p->i) LUTHIER_ONNX__UNSUP("input %d has type %s", k, luthier_onnx__typename(p->type));
        if (expand && k == 1) {
            if (!p->i || p->n > LUTHIER_ONNX_MAX_RANK) LUTHIER_ONNX__BAD("bad shape input");
            int64_t out[LUTHIER_ONNX_MAX_RANK];
            int ro;
            memcpy(tmp, p->i, sizeof(int64_t) * p->n);
            r2 = (int)p->n;
            if (!luthier_onnx__bcast(rank, dims, r2, tmp, &ro, out)) { /* (not in place: it reads dims as it writes) */
                char sa[96], sb[96];
                luthier_onnx__dims_str(rank, dims, sa, sizeof sa);
                luthier_onnx__dims_str(r2, tmp, sb, sizeof sb);
                LUTHIER_ONNX__BAD("the input %s and the shape %s do not broadcast", sa, sb);
            }
            rank = ro;
            memcpy(dims, out, sizeof out);
            continue;
        }
        if (p->f && !(where && k == 0)) isf = 1;
        if (!luthier_onnx__bcast(rank, dims, p->rank, p->dims, &r2, tmp)) LUTHIER_ONNX__BAD("input shapes do not broadcast");
        rank = r2;
        memcpy(dims, tmp, sizeof dims);
    }
    if (boolop) isf = 0;
    if (where) isf = luthier_onnx__in(c, n, 1)->c->f != NULL;
    if (expand) isf = xc->f != NULL;
    LUTHIER_ONNX__TNEW(t, isf, rank, dims);
    t->type = isf ? 1 : (boolop ? 9 : xc->type);
    for (e = 0; e < t->n; e++) {
        if (where || expand) {
            const luthier_onnx__tensor *src = where ? (luthier_onnx__tget(xc, luthier_onnx__bidx(e, dims, rank, xc->dims, xc->rank)) != 0 ? luthier_onnx__in(c, n, 1)->c
                                                                                                            : luthier_onnx__in(c, n, 2)->c)
                                          : xc;
            size_t o = luthier_onnx__bidx(e, dims, rank, src->dims, src->rank);
            if (t->f) t->f[e] = src->f ? src->f[o] : (float)src->i[o];
            else t->i[e] = src->i ? src->i[o] : luthier_onnx__toint(src->f[o]);
            continue;
        }
        {
            const luthier_onnx__tensor *a = xc;
            double fa = luthier_onnx__tget(a, luthier_onnx__bidx(e, dims, rank, a->dims, a->rank));
            int64_t ia = a->i ? a->i[luthier_onnx__bidx(e, dims, rank, a->dims, a->rank)] : 0;
            int intmode = !isf && a->i;
            for (k = 1; k < n->nin; k++) {
                const luthier_onnx__tensor *b = luthier_onnx__in(c, n, k) ? luthier_onnx__in(c, n, k)->c : NULL;
                size_t o;
                if (!b) continue;
                o = luthier_onnx__bidx(e, dims, rank, b->dims, b->rank);
                if (intmode && b->i) ia = luthier_onnx__ibin(opn, ia, b->i[o]);
                else intmode = 0, fa = luthier_onnx__fbin(opn, fa, luthier_onnx__tget(b, o));
            }
            if (boolop && !intmode) t->i[e] = (int64_t)fa;
            else if (t->f) t->f[e] = (float)fa;
            else t->i[e] = intmode ? ia : luthier_onnx__toint(fa);
        }
    }
    return luthier_onnx__folded(arg, t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_range(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    size_t e;
    const luthier_onnx__tensor *a = x->c, *b = luthier_onnx__in(c, n, 1) ? luthier_onnx__in(c, n, 1)->c : NULL, *d = luthier_onnx__in(c, n, 2) ? luthier_onnx__in(c, n, 2)->c : NULL;
    double s, l, dl, cnt;
    int64_t len;
    if (!b || !d || a->n != 1 || b->n != 1 || d->n != 1) LUTHIER_ONNX__BAD("start, limit and delta must be scalars");
    if ((!b->f && !b->i) || (!d->f && !d->i))
        LUTHIER_ONNX__UNSUP("limit or delta has type %s", luthier_onnx__typename(!b->f && !b->i ? b->type : d->type));
    s = luthier_onnx__tget(a, 0); l = luthier_onnx__tget(b, 0); dl = luthier_onnx__tget(d, 0);
    if (dl == 0) LUTHIER_ONNX__BAD("delta is 0");
    cnt = ceil((l - s) / dl);
    if (!(cnt < (double)LUTHIER_ONNX__MAX_ELEMS)) LUTHIER_ONNX__UNSUP("range too long");
    len = cnt > 0 ? (int64_t)cnt : 0;
    LUTHIER_ONNX__TLIKE(t, a, 1, &len);
    for (e = 0; e < t->n; e++) {
        if (t->f) t->f[e] = (float)(s + (double)e * dl);
        else t->i[e] = (int64_t)((uint64_t)a->i[0] + (uint64_t)e * (uint64_t)d->i[0]);
    }
    return luthier_onnx__folded(arg, t);
}

/* Whether row r folds whatever its inputs' values (from shapes). */
LUTHIER_ONNX__FN int luthier_onnx__fold_any(const luthier_onnx__opinfo *r) {
    return r->fold == luthier_onnx__fold_shape || r->fold == luthier_onnx__fold_const_of_shape;
}

/* >>onnx-lengths: constants computed from the shape of a tensor with a run-time length (RUN-TIME
   LENGTHS in luthier_graph.h). Shape gives that axis's capacity and marks the entry: a marked
   entry stands for min(value, the run-time length). Gather, Unsqueeze, Squeeze, Reshape,
   Flatten, Identity and Concat move marks as they move values; ReduceMin keeps one where it
   takes one (min(a, min(b, n)) = min(min(a, b), n)); TopK takes a marked K over that length as
   the engine's min(k, n), and ConstantOfShape a whole marked Shape. Any other node that reads a
   marked constant is refused, naming it. */
/* Graph tensor t's name, and the tensor whose count its run-time length is (-1: none). */
LUTHIER_ONNX__FN const char *luthier_onnx__gname(luthier_onnx__ctx *c, int t) {
    luthier_tensor_info ti;
    return luthier_graph_tensor_info(c->g, t, &ti) == LUTHIER_STATUS_OK ? ti.name : "?";
}

LUTHIER_ONNX__FN int luthier_onnx__root(luthier_onnx__ctx *c, int t) {
    luthier_tensor_info ti;
    return luthier_graph_tensor_info(c->g, t, &ti) == LUTHIER_STATUS_OK && ti.length_axis >= 0 ? ti.length_root : -1;
}

LUTHIER_ONNX__FN int luthier_onnx__moves_marks(const luthier_onnx__node *n) {
    static const char *const ops[8] = {"Gather", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity", "Concat", "ReduceMin"};
    return luthier_onnx__pick(n->op, ops, 8) >= 0;
}

/* The marks as an integer tensor of t's shape (1 marked, 0 not). */
LUTHIER_ONNX__FN luthier_onnx__tensor *luthier_onnx__marks(luthier_onnx__ctx *c, const luthier_onnx__tensor *t) {
    luthier_onnx__tensor *m = luthier_onnx__tnew(c, 0, t->rank, t->dims);
    size_t e;
    for (e = 0; m && e < m->n; e++) m->i[e] = t->lenmask ? t->lenmask[e] : 0;
    return m;
}

/* res = node n folded from constants: its marks, by folding the inputs' marks the same way
   (ReduceMin's as ReduceMax: a mark survives where any reduced entry had one). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_lens(luthier_onnx__ctx *c, luthier_onnx__node *n, const luthier_onnx__opinfo *r,
                                                       luthier_onnx__tensor *res) {
    luthier_onnx__tensor *saved[64], *mres = NULL;
    luthier_onnx__foldargs arg;
    luthier_onnx__shape xs;
    luthier_onnx__node n2 = *n;
    luthier_status s = LUTHIER_STATUS_OK;
    const int data = luthier_onnx__isop(n, "Concat") ? n->nin : 1;
    int k, marked = -1;
    size_t e;
    for (k = 0; k < n->nin; k++) {
        const luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        if (!v || !v->c || !v->c->lenmask) continue;
        if (!luthier_onnx__moves_marks(n) || k >= data || n->nin > 64)
            LUTHIER_ONNX__UNSUP("input %d ('%s') holds a run-time length (the shape of '%s'): this operator cannot follow it", k,
                                v->name, luthier_onnx__gname(c, v->c->lentid));
        if (marked >= 0 && luthier_onnx__root(c, v->c->lentid) != luthier_onnx__root(c, luthier_onnx__in(c, n, marked)->c->lentid))
            LUTHIER_ONNX__UNSUP("inputs %d and %d hold different run-time lengths", marked, k);
        marked = k;
    }
    if (marked < 0) return LUTHIER_STATUS_OK;
    for (k = 0; k < data; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        saved[k] = v ? v->c : NULL;
        if (v && v->c && !(v->c = luthier_onnx__marks(c, saved[k]))) s = LUTHIER_STATUS_OUT_OF_MEMORY;
    }
    if (luthier_onnx__isop(n, "ReduceMin")) n2.op = "ReduceMax";
    memset(&arg, 0, sizeof arg);
    arg.c = c, arg.n = &n2, arg.x = luthier_onnx__in(c, n, 0), arg.xc = arg.x->c, arg.xs = &xs, arg.res = &mres;
    luthier_onnx__vshape(c, arg.x, &xs);
    if (s == LUTHIER_STATUS_OK) s = r->fold(&arg);
    for (k = 0; k < data; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        if (v) v->c = saved[k];
    }
    if (s == LUTHIER_STATUS_OUT_OF_MEMORY) LUTHIER_ONNX__OOM();
    if (s != LUTHIER_STATUS_OK) return s;
    if (!mres || !mres->i || mres->n != res->n || !(res->lenmask = (unsigned char *)luthier_onnx__alloc(c, res->n + 1)))
        LUTHIER_ONNX__OOM();
    for (e = 0; e < res->n; e++) res->lenmask[e] = mres->i[e] != 0;
    res->lentid = luthier_onnx__in(c, n, marked)->c->lentid;
    res->lenwhole = luthier_onnx__isop(n, "Identity") && luthier_onnx__in(c, n, 0)->c->lenwhole;
    return LUTHIER_STATUS_OK;
}

/* The node's row's fold hook (see >>onnx-fold): *done = 1 when it computed n's output. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold(luthier_onnx__ctx *c, luthier_onnx__node *n, int *done) {
    const luthier_onnx__opinfo *r = luthier_onnx__opinfo_of(n);
    luthier_onnx__val *out = n->nout ? luthier_onnx__find(c, n->out[0]) : NULL;
    luthier_onnx__tensor *res = NULL;
    luthier_onnx__foldargs arg;
    luthier_onnx__shape xs;
    int k, all_const = 1;
    *done = 0;
    if (!out || !r) return LUTHIER_STATUS_OK;
    for (k = 0; k < n->nin; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        if (v && !v->c) all_const = 0;
    }
    memset(&xs, 0, sizeof xs);
    arg.c = c;
    arg.n = n;
    arg.x = luthier_onnx__in(c, n, 0);
    arg.xc = all_const && arg.x ? arg.x->c : NULL;
    arg.xs = &xs;
    arg.res = &res;
    if (arg.x) luthier_onnx__vshape(c, arg.x, &xs);
    if (!arg.xc && !luthier_onnx__fold_any(r)) return LUTHIER_STATUS_OK;
    if (arg.xc && !arg.xc->f && !arg.xc->i && r->fold != luthier_onnx__fold_none)
        LUTHIER_ONNX__UNSUP("input '%s' has type %s: not supported", arg.x->name, luthier_onnx__typename(arg.xc->type));
    LUTHIER_ONNX__TRY(r->fold(&arg));
    if (res && all_const) LUTHIER_ONNX__TRY(luthier_onnx__fold_lens(c, n, r, res));
    if (res) out->c = res, *done = 1;
    return LUTHIER_STATUS_OK;
}

/* ---- engine side -------------------------------------------------------------------------------- */

/* A name that is neither an ONNX value nor used in the graph: "<base>/<what>[_k]". */
LUTHIER_ONNX__FN const char *luthier_onnx__uname(luthier_onnx__ctx *c, const char *base, const char *what) {
    size_t len = strlen(base) + strlen(what) + 24;
    char *buf = (char *)luthier_onnx__alloc(c, len);
    int k = 1, dummy;
    if (!buf) return NULL;
    snprintf(buf, len, "%s/%s", base, what);
    while (luthier_onnx__find(c, buf) || luthier_graph_find_tensor(c->g, buf, &dummy) == LUTHIER_STATUS_OK ||
           luthier_graph_find_node(c->g, buf, &dummy) == LUTHIER_STATUS_OK)
        snprintf(buf, len, "%s/%s_%d", base, what, ++k);
    return buf;
}

/* d's operator and inputs: op(ins[0..nin)). */
LUTHIER_ONNX__FN void luthier_onnx__set_op(luthier_node_desc *d, luthier_op op, int *ins, int nin) {
    d->op = op;
    d->inputs = ins;
    d->num_inputs = nin;
}

/* An int32 or bool graph input (the user's buffer, as declared) is read by one CAST: to i64
   (int32) or f32 0/1 (bool), the engine's integer and boolean forms; v then stands for the
   cast's output. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__input_cast(luthier_onnx__ctx *c, luthier_onnx__val *v, luthier_dtype dt) {
    luthier_node_desc d;
    int in = v->tid;
    const char *name = luthier_onnx__uname(c, v->name, dt == LUTHIER_DTYPE_I32 ? "i64" : "f32");
    if (!name) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    memset(&d, 0, sizeof d);
    luthier_onnx__set_op(&d, LUTHIER_OP_CAST, &in, 1);
    d.name = name;
    d.typed = 1;
    d.attr.cast.to = dt == LUTHIER_DTYPE_I32 ? LUTHIER_CAST_TO_I64 : LUTHIER_CAST_TO_BOOL;
    if (luthier_graph_add_node(c->g, &d, &v->tid) != LUTHIER_STATUS_OK)
        return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph input '%s': %s", v->name, luthier_graph_error(c->g));
    return LUTHIER_STATUS_OK;
}

/* The data of a derived constant: n floats s * src[e] (s * src[0] each with one) in the arena;
   NULL: out of memory. */
LUTHIER_ONNX__FN float *luthier_onnx__fscale(luthier_onnx__ctx *c, const float *src, size_t n, float s, int one) {
    float *f = (float *)luthier_onnx__alloc(c, (n ? n : 1) * sizeof(float));
    size_t e;
    for (e = 0; f && e < n; e++) f[e] = s * src[one ? 0 : e];
    return f;
}

/* A new f32 constant in the graph. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__newconst(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *base, const char *what, int rank,
                                             const int64_t *dims, const float *data, int *tid) {
    const char *name = luthier_onnx__uname(c, base, what);
    if (!name) LUTHIER_ONNX__OOM();
    if (luthier_graph_constant(c->g, name, rank, dims, data, 1, tid) != LUTHIER_STATUS_OK)
        LUTHIER_ONNX__UNSUP("cannot add constant '%s': %s", name, luthier_graph_error(c->g));
    return LUTHIER_STATUS_OK;
}

/* The graph tensor of v, adding its constant when needed. want_f32: integer constants are
   converted to f32 (operands of arithmetic). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__eng(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__val *v, int want_f32, int *tid) {
    luthier_onnx__tensor *t = v->c;
    const char *name;
    luthier_status s;
    int k, dummy;
    if (!t) {
        if (v->tid < 0) LUTHIER_ONNX__BAD("input '%s' has no value", v->name);
        *tid = v->tid;
        return LUTHIER_STATUS_OK;
    }
    if (!t->f && !t->i) LUTHIER_ONNX__UNSUP("constant '%s' has type %s: not supported", v->name, luthier_onnx__typename(t->type));
    if (t->lenmask) LUTHIER_ONNX__UNSUP("'%s' holds a run-time length (a shape of a tensor with one): the engine computes no shapes", v->name);
    if (t->rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("constant '%s' has rank %d (the engine takes up to %d)", v->name, t->rank, LUTHIER_MAX_RANK);
    for (k = 0; k < t->rank; k++)
        if (t->dims[k] < 1) LUTHIER_ONNX__UNSUP("constant '%s' is empty (dimension %d is %lld)", v->name, k, (long long)t->dims[k]);
    if (t->i && want_f32) {
        float *f = (float *)luthier_onnx__alloc(c, (t->n ? t->n : 1) * sizeof(float));
        size_t e;
        if (!f) LUTHIER_ONNX__OOM();
        for (e = 0; e < t->n; e++) f[e] = (float)t->i[e];
        return luthier_onnx__newconst(c, n, v->name, "f32", t->rank, t->dims, f, tid);
    }
    if (v->cid >= 0) {
        *tid = v->cid;
        return LUTHIER_STATUS_OK;
    }
    /* under its own name, unless the graph holds a tensor of that name already */
    if (luthier_graph_find_tensor(c->g, v->name, &dummy) != LUTHIER_STATUS_OK) name = v->name;
    else if (!(name = luthier_onnx__uname(c, v->name, "const"))) LUTHIER_ONNX__OOM();
    s = t->f ? luthier_graph_constant(c->g, name, t->rank, t->dims, t->f, 1, &v->cid)
             : luthier_graph_constant_i64(c->g, name, t->rank, t->dims, t->i, &v->cid);
    if (s != LUTHIER_STATUS_OK) LUTHIER_ONNX__UNSUP("constant '%s': %s", v->name, luthier_graph_error(c->g));
    *tid = v->cid;
    return LUTHIER_STATUS_OK;
}

/* Adds an engine node named name (the ONNX output name for the final one). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__emit(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_node_desc *d, const char *name, int *outs) {
    luthier_status s;
    d->name = name;
    /* sizes past the engine's limits and exhausted memory keep their status; any other refusal
       is a configuration the engine does not run */
    if ((s = luthier_graph_add_node(c->g, d, outs)) != LUTHIER_STATUS_OK)
        return luthier_onnx__nfail(c, n, s == LUTHIER_STATUS_OVERFLOW || s == LUTHIER_STATUS_OUT_OF_MEMORY ? s : LUTHIER_STATUS_UNSUPPORTED,
                                   "the engine refuses its %s step: %s", luthier_op_name(d->op), luthier_graph_error(c->g));
    return LUTHIER_STATUS_OK;
}

/* Helper step on the way to the output: named "<out>/<what>". */
LUTHIER_ONNX__FN luthier_status luthier_onnx__step(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_node_desc *d, const char *what, int *out) {
    const char *name = luthier_onnx__uname(c, n->out[0], what);
    if (!name) LUTHIER_ONNX__OOM();
    return luthier_onnx__emit(c, n, d, name, out);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__reshape_to(luthier_onnx__ctx *c, const luthier_onnx__node *n, int x, int rank, const int64_t *dims,
                                               const char *name, int *out) {
    luthier_node_desc d;
    int64_t one = 1;
    memset(&d, 0, sizeof d);
    luthier_onnx__set_op(&d, LUTHIER_OP_RESHAPE, &x, 1);
    d.sizes = rank ? dims : &one;
    d.num_sizes = rank ? rank : 1;
    if (rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("rank %d is above the engine's %d", rank, LUTHIER_MAX_RANK);
    if (name) return luthier_onnx__emit(c, n, &d, name, out);
    return luthier_onnx__step(c, n, &d, "reshape", out);
}

/* d with op's typed attributes at their defaults (the converters set those the node gives). */
LUTHIER_ONNX__FN void luthier_onnx__typed(luthier_node_desc *d, luthier_op op) {
    luthier_node_attrs_default(op, &d->attr);
    d->typed = 1;
}

/* Node n's output k is engine tensor tid; OK. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__setout(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, int tid) {
    luthier_onnx__val *v = k < n->nout && *n->out[k] ? luthier_onnx__find(c, n->out[k]) : NULL;
    if (v) v->tid = tid, v->defined = 1;
    return LUTHIER_STATUS_OK;
}

/* Adds engine node op(ins[0..nin)) with d's attributes as node n's output 0. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__emit_out(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_node_desc *d, luthier_op op,
                                                      int *ins, int nin) {
    int outs[LUTHIER_MAX_NODE_OUTPUTS];
    luthier_onnx__set_op(d, op, ins, nin);
    LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, d, n->out[0], outs));
    return luthier_onnx__setout(c, n, 0, outs[0]);
}

/* Value v holds what x holds: its constant, graph tensor and quantization. */
LUTHIER_ONNX__FN void luthier_onnx__same_as(luthier_onnx__val *v, const luthier_onnx__val *x) {
    v->c = x->c, v->tid = x->tid, v->cid = x->cid;
    v->q = x->q, v->qtype = x->qtype, v->qscale = x->qscale, v->qzero = x->qzero;
}

/* Adds engine node op(ins[0..nin)) with d's attributes, named "<output 0>/<what>", whose outputs
   0..count-1 are node n's. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__emit_outs(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_node_desc *d, luthier_op op,
                                                       int *ins, int nin, const char *what, int count) {
    int outs[LUTHIER_MAX_NODE_OUTPUTS], k;
    luthier_onnx__set_op(d, op, ins, nin);
    LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, d, what, outs));
    for (k = 0; k < count; k++) luthier_onnx__setout(c, n, k, outs[k]);
    return LUTHIER_STATUS_OK;
}

/* Node n's output 0 is value x (a node that changes nothing); OK. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__alias(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__val *x) {
    luthier_onnx__val *v = n->nout && *n->out[0] ? luthier_onnx__find(c, n->out[0]) : NULL;
    if (v) luthier_onnx__same_as(v, x);
    return LUTHIER_STATUS_OK;
}

/* Pads for auto_pad (SAME_UPPER, SAME_LOWER, VALID) or the pads attribute. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__pads(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *xs, const int64_t *k, const int64_t *s,
                                         const int64_t *dl, int64_t *pads) {
    const char *ap = luthier_onnx__as(n, "auto_pad", "NOTSET");
    const int64_t *p;
    int np = luthier_onnx__aints(n, "pads", &p), i;
    for (i = 0; i < 4; i++) pads[i] = 0;
    if (!strcmp(ap, "NOTSET") || !*ap) {
        if (np >= 0 && np != 4) LUTHIER_ONNX__UNSUP("%d pads (2-D takes 4)", np);
        for (i = 0; i < 4 && np == 4; i++) {
            if (p[i] < 0 || p[i] > (1 << 30)) LUTHIER_ONNX__UNSUP("pad %lld is negative or too large", (long long)p[i]);
            pads[i] = p[i];
        }
    } else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        for (i = 0; i < 2; i++) {
            int64_t in = xs->d[2 + i], out = (in + s[i] - 1) / s[i], total = (out - 1) * s[i] + (k[i] - 1) * dl[i] + 1 - in;
            if (total < 0) total = 0;
            pads[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            pads[i + 2] = total - pads[i];
        }
    } else if (strcmp(ap, "VALID")) {
        LUTHIER_ONNX__UNSUP("auto_pad '%s' is not supported", ap);
    }
    return LUTHIER_STATUS_OK;
}

/* kernel k, strides s, dilations dl of a 2-D conv/pool; w: the weights [O, I, kh, kw] of a
   convolution (k is theirs, and kernel_shape must match it), or NULL (k as the caller set it). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__window(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__tensor *w,
                                                    int64_t *k, int64_t *s, int64_t *dl) {
    static const char *const names[3] = {"kernel_shape", "strides", "dilations"};
    int64_t *const lists[3] = {k, s, dl};
    const int64_t *p;
    int np, i;
    s[0] = s[1] = dl[0] = dl[1] = 1;
    if (w) k[0] = w->dims[2], k[1] = w->dims[3];
    for (i = 0; i < 3; i++) {
        np = luthier_onnx__aints(n, names[i], &p);
        if (np >= 0 && np != 2) LUTHIER_ONNX__UNSUP("%s has %d entries: only 2-D is supported", names[i], np);
        if (np == 2) lists[i][0] = p[0], lists[i][1] = p[1];
    }
    for (i = 0; i < 2; i++)
        if (k[i] < 1 || s[i] < 1 || dl[i] < 1 || k[i] > (1 << 30) || s[i] > (1 << 30) || dl[i] > (1 << 30))
            LUTHIER_ONNX__BAD("kernel, strides and dilations must be in [1, 2^30]");
    if (w && (k[0] != w->dims[2] || k[1] != w->dims[3])) LUTHIER_ONNX__BAD("kernel_shape differs from the weights' shape");
    return LUTHIER_STATUS_OK;
}

/* Further outputs of n must be unused (training outputs, masks, indices). */
LUTHIER_ONNX__FN int luthier_onnx__used(luthier_onnx__ctx *c, const char *name);
LUTHIER_ONNX__FN luthier_status luthier_onnx__only_first(luthier_onnx__ctx *c, const luthier_onnx__node *n) {
    int k;
    for (k = 1; k < n->nout; k++)
        if (*n->out[k] && luthier_onnx__used(c, n->out[k])) LUTHIER_ONNX__UNSUP("output %d ('%s') is used: only the first output is supported", k, n->out[k]);
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__float_scalar(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, float *out, int *present) {
    luthier_onnx__val *v = luthier_onnx__in(c, n, k);
    *present = 0;
    if (!v) return LUTHIER_STATUS_OK;
    if (!v->c || v->c->n != 1) LUTHIER_ONNX__UNSUP("input %d ('%s') must be a constant scalar", k, v->name);
    if (!v->c->f && !v->c->i) LUTHIER_ONNX__UNSUP("input %d ('%s') has type %s", k, v->name, luthier_onnx__typename(v->c->type));
    *out = (float)luthier_onnx__tget(v->c, 0);
    *present = 1;
    return LUTHIER_STATUS_OK;
}

/* A constant float input as host data with count elements (error otherwise). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__const_f(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, const char *what, const luthier_onnx__tensor **out) {
    luthier_onnx__val *v = luthier_onnx__in(c, n, k);
    *out = NULL;
    if (!v) return LUTHIER_STATUS_OK;
    if (!v->c) LUTHIER_ONNX__UNSUP("input %d ('%s', %s) must be a constant: it is computed at run time here", k, v->name, what);
    if (!v->c->f) LUTHIER_ONNX__UNSUP("input %d ('%s', %s) must be floating point", k, v->name, what);
    *out = v->c;
    return LUTHIER_STATUS_OK;
}

/* ---- quantized values ------------------------------------------------------------------------ */

/* Records (scale, zero point) for graph tensor tid, as the calibration will receive them (uint8:
   an int8 zero point z becomes z + 128). A tensor that already has parameters keeps the first. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qrecord(luthier_onnx__ctx *c, int tid, float scale, int32_t zero) {
    if (tid < 0) return LUTHIER_STATUS_OK;
    if (tid >= c->cqp) {
        luthier_onnx__qp *p = (luthier_onnx__qp *)luthier_onnx__grow(c, c->qp, &c->cqp, tid + 1, sizeof(luthier_onnx__qp));
        if (!p) LUTHIER_ONNX__OOM();
        c->qp = p;
    }
    if (!c->qp[tid].has) {
        c->qp[tid].has = 1;
        c->qp[tid].scale = scale;
        c->qp[tid].zero = zero;
    }
    return LUTHIER_STATUS_OK;
}

/* Value o is quantized: integers of type (2 uint8, 3 int8) standing for scale * (q - zero),
   whose real values graph tensor tid holds. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qmark(luthier_onnx__ctx *c, luthier_onnx__val *o, int tid, int type, float scale, int64_t zero) {
    if (!o) return LUTHIER_STATUS_OK;
    o->tid = tid;
    o->defined = 1;
    o->q = 1;
    o->qtype = type;
    o->qscale = scale;
    o->qzero = zero;
    return luthier_onnx__qrecord(c, tid, scale, (int32_t)(zero + (type == 3 ? 128 : 0)));
}

/* Per-tensor parameters of a quantized run-time value (activation): uint8 or int8, scale > 0. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qact(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__qparams *q,
                                                   const char *what, const char *value, int *type, int64_t *lo, int64_t *hi) {
    *type = q->type ? q->type : 2;
    if (q->n != 1)
        LUTHIER_ONNX__UNSUP("per-axis quantization (%zu scales) of the run-time tensor '%s': luthier quantizes activations per "
                            "tensor (per-axis parameters are read on constants, e.g. weights)", q->n, value);
    if (*type != 2 && *type != 3)
        LUTHIER_ONNX__UNSUP("the %s is %s: quantized activations are uint8 or int8", what, luthier_onnx__typename(*type));
    luthier_onnx__qlimits(*type, lo, hi);
    if (!(q->s[0] > 0.0f)) LUTHIER_ONNX__BAD("the %s scale is %g: the scale of a run-time tensor must be positive", what, (double)q->s[0]);
    return LUTHIER_STATUS_OK;
}

/* The graph tensor (fp32 real values) of the integers that input k of n holds, which n reads with
   the per-tensor parameters q: a quantized run-time value (quantized with these parameters) or
   an integer constant (dequantized here). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__qinput(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, const luthier_onnx__qparams *q,
                                                     int *tid) {
    luthier_onnx__val *v = luthier_onnx__in(c, n, k);
    int64_t z = q->z ? q->z[0] : 0;
    if (!v) LUTHIER_ONNX__BAD("input %d is missing", k);
    if (v->q) {
        if (v->qscale != q->s[0] || v->qzero != z || (q->type && q->type != v->qtype))
            LUTHIER_ONNX__UNSUP("input %d ('%s') holds %s integers for scale %.9g and zero point %lld; this node reads them with scale "
                                "%.9g and zero point %lld (%s): not supported, the parameters must be the same", k, v->name,
                                luthier_onnx__typename(v->qtype), (double)v->qscale, (long long)v->qzero, (double)q->s[0], (long long)z,
                                luthier_onnx__typename(q->type ? q->type : v->qtype));
        *tid = v->tid;
        return LUTHIER_STATUS_OK;
    }
    if (v->c && v->c->i) {
        float *f = luthier_onnx__dequantize(c, v->c, q, 0);
        if (!f) LUTHIER_ONNX__OOM();
        if (v->c->rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("constant '%s' has rank %d", v->name, v->c->rank);
        return luthier_onnx__newconst(c, n, v->name, "dequantized", v->c->rank, v->c->dims, f, tid);
    }
    if (v->c) LUTHIER_ONNX__BAD("input %d ('%s') is %s: quantized integers expected", k, v->name, luthier_onnx__typename(v->c->type));
    LUTHIER_ONNX__UNSUP("input %d ('%s') is a run-time tensor that no QuantizeLinear or QLinear operator produced: integers computed "
                        "otherwise are not supported (luthier graphs compute fp32 values)", k, v->name);
}

/* 1 when graph tensor t is known to hold no negative values (a ReLU-like producer, maybe seen
   through pools and views). */
LUTHIER_ONNX__FN int luthier_onnx__nonneg(luthier_onnx__ctx *c, int t, int depth) {
    luthier_tensor_info ti;
    luthier_node_desc d;
    if (depth > 64 || luthier_graph_tensor_info(c->g, t, &ti) != LUTHIER_STATUS_OK || ti.producer < 0 ||
        luthier_graph_node_desc(c->g, ti.producer, &d) != LUTHIER_STATUS_OK)
        return 0;
    switch (d.op) {
    case LUTHIER_OP_RELU: case LUTHIER_OP_SIGMOID: case LUTHIER_OP_EXP: case LUTHIER_OP_SQRT:
    case LUTHIER_OP_HARD_SIGMOID: case LUTHIER_OP_SOFTPLUS:
        return 1;
    case LUTHIER_OP_THRESHOLDED_RELU:
        return d.attr.thresholded_relu.alpha >= 0;
    case LUTHIER_OP_SOFTMAX:
        return !d.attr.softmax.log;
    case LUTHIER_OP_CLIP:
        return d.attr.clip.min >= 0;
    case LUTHIER_OP_MAXPOOL: case LUTHIER_OP_AVGPOOL: case LUTHIER_OP_GLOBAL_AVGPOOL: case LUTHIER_OP_ADAPTIVE_AVGPOOL:
    case LUTHIER_OP_RESHAPE: case LUTHIER_OP_FLATTEN: case LUTHIER_OP_TRANSPOSE: case LUTHIER_OP_IDENTITY:
        return d.num_inputs >= 1 && luthier_onnx__nonneg(c, d.inputs[0], depth + 1);
    default: { /* a fused activation (the graph keeps attributes typed) */
        const luthier_fused_activation *a = d.op == LUTHIER_OP_CONV2D  ? &d.attr.conv2d.act
                                            : d.op == LUTHIER_OP_DENSE ? &d.attr.dense.act
                                            : d.op >= LUTHIER_OP_ADD && d.op <= LUTHIER_OP_MIN ? &d.attr.binary.act
                                                                                             : NULL;
        return a && (a->kind == LUTHIER_ACTIVATION_RELU || a->kind == LUTHIER_ACTIVATION_RELU6 ||
                     (a->kind == LUTHIER_ACTIVATION_CLAMP && a->clamp_min >= 0));
    }
    }
}

/* QuantizeLinear, DequantizeLinear on run-time tensors; QLinearConv, QLinearMatMul. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert_q(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    luthier_onnx__val *x = luthier_onnx__in(c, n, 0), *o = luthier_onnx__find(c, n->out[0]);
    luthier_onnx__qparams qx, qw, qy;
    luthier_onnx__shape xs;
    luthier_node_desc d;
    const char *oname = n->out[0];
    int in[3], t, type;
    int64_t lo, hi, z;
    memset(&d, 0, sizeof d);
    if (!x) LUTHIER_ONNX__BAD("input 0 is missing");
    if (luthier_onnx__isop(n, "QuantizeLinear")) {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
        LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 1, 2, "output", &qy));
        luthier_onnx__vshape(c, x, &xs);
        if (!xs.isf) LUTHIER_ONNX__UNSUP("input '%s' is a run-time int64 tensor: only float tensors are quantized", x->name);
        LUTHIER_ONNX__TRY(luthier_onnx__qact(c, n, &qy, "output", x->name, &type, &lo, &hi));
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &t));
        z = qy.z ? qy.z[0] : 0;
        if (z == lo && !luthier_onnx__nonneg(c, t, 0)) {
            /* the range starts at 0: ONNX saturates negative values to 0 (quantizers drop a ReLU
               in front of such a QuantizeLinear); the graph keeps that as a clip */
            luthier_onnx__set_op(&d, LUTHIER_OP_CLIP, &t, 1);
            d.clamp_min = 0.0f;
            d.clamp_max = qy.s[0] * (float)(hi - lo);
            LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, oname, &t));
        }
        return luthier_onnx__qmark(c, o, t, type, qy.s[0], z);
    }
    if (luthier_onnx__isop(n, "DequantizeLinear")) {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
        LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 1, 2, "input", &qx));
        if (qx.n != 1)
            LUTHIER_ONNX__UNSUP("per-axis parameters (%zu scales) on the run-time tensor '%s': activations are quantized per tensor", qx.n, x->name);
        LUTHIER_ONNX__TRY(luthier_onnx__qinput(c, n, 0, &qx, &t));
        return luthier_onnx__setout(c, n, 0, t);
    }
    if (luthier_onnx__isop(n, "QLinearConv") || luthier_onnx__isop(n, "QLinearMatMul")) {
        int conv = luthier_onnx__isop(n, "QLinearConv");
        luthier_onnx__val *wv = luthier_onnx__in(c, n, 3), *bv = conv ? luthier_onnx__in(c, n, 8) : NULL;
        const luthier_onnx__tensor *w;
        int64_t axis = conv ? 0 : 1, nout, e;
        float *wf;
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, conv ? "auto_pad,dilations,group,kernel_shape,pads,strides" : ""));
        LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 1, 2, conv ? "x" : "a", &qx));
        LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 4, 5, conv ? "w" : "b", &qw));
        LUTHIER_ONNX__TRY(luthier_onnx__qparams_get(c, n, 6, 7, "y", &qy));
        LUTHIER_ONNX__TRY(luthier_onnx__qact(c, n, &qx, conv ? "x" : "a", x->name, &type, &lo, &hi));
        LUTHIER_ONNX__TRY(luthier_onnx__qact(c, n, &qy, "y", oname, &type, &lo, &hi));
        z = qy.z ? qy.z[0] : 0;
        if (!wv || !wv->c || !wv->c->i || wv->c->rank != (conv ? 4 : 2))
            LUTHIER_ONNX__UNSUP("%s (input 3%s%s%s) must be a constant %s integer tensor", conv ? "the weights w" : "b", wv ? ", '" : "",
                                wv ? wv->name : "", wv ? "'" : "", conv ? "4-D" : "2-D");
        w = wv->c;
        nout = w->dims[axis];
        if (qw.n != 1 && (int64_t)qw.n != nout)
            LUTHIER_ONNX__BAD("%zu %s scales for %lld output channels (one, or one per channel)", qw.n, conv ? "w" : "b", (long long)nout);
        luthier_onnx__vshape(c, x, &xs);
        LUTHIER_ONNX__TRY(luthier_onnx__qinput(c, n, 0, &qx, &in[0]));
        if (!(wf = luthier_onnx__dequantize(c, w, &qw, axis))) LUTHIER_ONNX__OOM();
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "weight", w->rank, w->dims, wf, &in[1]));
        d.inputs = in;
        d.num_inputs = 2;
        if (bv) { /* int32 B, scale x_scale * w_scale */
            float *bf;
            if (!bv->c || !bv->c->i || bv->c->n != (size_t)nout)
                LUTHIER_ONNX__UNSUP("the bias B ('%s') must be a constant integer tensor of %lld values", bv->name, (long long)nout);
            if (!(bf = (float *)luthier_onnx__alloc(c, (size_t)nout * sizeof(float)))) LUTHIER_ONNX__OOM();
            for (e = 0; e < nout; e++) bf[e] = (float)((double)bv->c->i[e] * (double)qx.s[0] * (double)qw.s[qw.n == 1 ? 0 : e]);
            LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "bias", 1, &nout, bf, &in[2]));
            d.num_inputs = 3;
        }
        if (conv) {
            int64_t kk[2];
            if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input '%s' has rank %d: only 2-D convolution ([N,C,H,W]) is supported", x->name, xs.rank);
            LUTHIER_ONNX__TRY(luthier_onnx__window(c, n, w, kk, d.stride, d.dilation));
            LUTHIER_ONNX__TRY(luthier_onnx__pads(c, n, &xs, kk, d.stride, d.dilation, d.pads));
            d.op = LUTHIER_OP_CONV2D;
            d.groups = luthier_onnx__ai(n, "group", 1);
        } else {
            if (xs.rank < 2) LUTHIER_ONNX__UNSUP("a 1-D a is not supported");
            d.op = LUTHIER_OP_DENSE;
            d.trans_b = 1; /* b is [K, N] */
        }
        /* the output saturates to the integer range: a fused clamp (a ReLU when the range starts at 0) */
        d.activation = LUTHIER_ACTIVATION_CLAMP;
        d.clamp_min = qy.s[0] * (float)(lo - z);
        d.clamp_max = qy.s[0] * (float)(hi - z);
        LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, oname, &t));
        return luthier_onnx__qmark(c, o, t, type, qy.s[0], z);
    }
    LUTHIER_ONNX__UNSUP("operator not supported");
}

/* Operators that read quantized integers (input 0) with the same meaning as the real values
   the graph holds: their output keeps the parameters. */
LUTHIER_ONNX__FN int luthier_onnx__qpass(const luthier_onnx__node *n) {
    static const char *const ops[8] = {"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "MaxPool"};
    return luthier_onnx__pick(n->op, ops, 8) >= 0;
}


/* Conversion of one node in topological order. */
/* ---- converters: one per family of ONNX operators -------------------------------------------------
   Each gets the node, its input 0 (a value with a shape; NULL for Constant) and the engine
   operator of its row, and adds the node's engine steps (or folds it into an alias or a
   constant). LUTHIER_ONNX__CV_ARGS unpacks the arguments under the names the converters use
   (the LUTHIER_ONNX__BAD/UNSUP/OOM macros need c and n). */
struct luthier_onnx__cvargs {
    luthier_onnx__ctx *c;
    luthier_onnx__node *n;
    luthier_onnx__val *x;
    const luthier_onnx__shape *xs;
    const char *oname; /* output 0's name */
    luthier_op op;     /* the row's engine operator (LUTHIER_OP_COUNT: none) */
};
#define LUTHIER_ONNX__CV_ARGS                                                                                  \
    luthier_onnx__ctx *c = arg->c;                                                                             \
    luthier_onnx__node *n = arg->n;                                                                            \
    luthier_onnx__val *x = arg->x;                                                                             \
    const luthier_onnx__shape xs = *arg->xs;                                                                   \
    const char *oname = arg->oname;                                                                            \
    luthier_node_desc d;                                                                                       \
    int outs[LUTHIER_MAX_NODE_OUTPUTS], in[64], xt = -1, k = 0;                                                \
    memset(&d, 0, sizeof d);                                                                                   \
    (void)c, (void)n, (void)x, (void)xs, (void)oname, (void)outs, (void)in, (void)xt, (void)k

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_quant(const luthier_onnx__cvargs *arg) {
    return luthier_onnx__convert_q(arg->c, arg->n);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_constant(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *o = luthier_onnx__find(c, oname);
    const luthier_onnx__attr *a;
    int64_t cnt;
    if (n->nattrs != 1) LUTHIER_ONNX__BAD("Constant takes exactly one attribute");
    a = &n->attrs[0];
    if (!strcmp(a->name, "value") && a->t) {
        o->c = a->t;
    } else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        int64_t none = 0;
        if (!(o->c = luthier_onnx__tnew(c, a->name[6] == 'f', 0, &none))) LUTHIER_ONNX__OOM();
        if (o->c->f) o->c->f[0] = a->f;
        else o->c->i[0] = a->i;
    } else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
        int isf = a->name[6] == 'f';
        cnt = isf ? a->nfloats : a->nints;
        if (!(o->c = luthier_onnx__tnew(c, isf, 1, &cnt))) LUTHIER_ONNX__OOM();
        if (cnt && isf) memcpy(o->c->f, a->floats, sizeof(float) * (size_t)cnt);
        if (cnt && !isf) memcpy(o->c->i, a->ints, sizeof(int64_t) * (size_t)cnt);
    } else {
        LUTHIER_ONNX__UNSUP("attribute '%s' is not supported (sparse or string constants)", a->name);
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_passthrough(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    if (luthier_onnx__isop(n, "Dropout")) {
        float tm = 0;
        int has = 0;
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "ratio,seed,is_test"));
        if (n->nin > 2) LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 2, &tm, &has));
        if (tm != 0) { /* dropout with ratio 0 keeps everything: the identity (as Swin exports it) */
            float ratio = 0.5f; /* training_mode is an input from opset 12, like ratio */
            LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 1, &ratio, &has));
            if (ratio != 0) LUTHIER_ONNX__UNSUP("training_mode is true with ratio %g (random dropout)", (double)ratio);
        }
        LUTHIER_ONNX__TRY(luthier_onnx__only_first(c, n));
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    }
    return luthier_onnx__alias(c, n, x);
}

/* Cast at run time: to float, int64, int32, bool or float16 (the engine's CAST: booleans are f32
   0/1, int32 is held in i64, float16 is f32 rounded to half precision). A cast to the value's
   own engine form is an alias. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_cast(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int to = (int)luthier_onnx__ai(n, "to", 0);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "to,saturate"));
    if ((to == 1 && xs.isf) || (to == 7 && !xs.isf)) return luthier_onnx__alias(c, n, x);
    d.typed = 1;
    switch (to) {
    case 1: d.attr.cast.to = LUTHIER_CAST_TO_F32; break;
    case 7: d.attr.cast.to = LUTHIER_CAST_TO_I64; break;
    case 6: d.attr.cast.to = LUTHIER_CAST_TO_I32; break;
    case 9: d.attr.cast.to = LUTHIER_CAST_TO_BOOL; break;
    case 10: d.attr.cast.to = LUTHIER_CAST_TO_F16; break;
    default:
        LUTHIER_ONNX__UNSUP("casting a run-time %s tensor to %s is not supported (run-time casts go to float, float16, int64, "
                            "int32 or bool; other types only on constants)", xs.isf ? "f32" : "i64", luthier_onnx__typename(to));
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 0, &xt));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CAST, &xt, 1);
}

/* Whether node n's inputs are all integers (run-time i64 values, integer constants): the
   comparisons and Mod then run on i64; otherwise every operand is f32 (integer constants
   converted: booleans are f32 0/1 in the engine). */
LUTHIER_ONNX__FN int luthier_onnx__int_operands(luthier_onnx__ctx *c, const luthier_onnx__node *n) {
    int k;
    for (k = 0; k < n->nin; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        luthier_onnx__shape s;
        if (!v) continue;
        if (!v->c) luthier_onnx__vshape(c, v, &s);
        if (v->c ? !v->c->i : s.isf) return 0;
    }
    return 1;
}

/* Equal, Greater, Less, GreaterOrEqual, LessOrEqual, Mod (fmod), And, Or, Xor: two operands,
   broadcast by the engine; the comparisons and Mod on i64 when both are integers. Not: one. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_logic(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const int nin = arg->op == LUTHIER_OP_NOT ? 1 : 2;
    const int numeric = arg->op != LUTHIER_OP_AND && arg->op != LUTHIER_OP_OR && arg->op != LUTHIER_OP_XOR && arg->op != LUTHIER_OP_NOT;
    const int wantf = !numeric || !luthier_onnx__int_operands(c, n);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, arg->op == LUTHIER_OP_MOD ? "fmod" : ""));
    if (arg->op == LUTHIER_OP_MOD) {
        int64_t fm = luthier_onnx__ai(n, "fmod", 0);
        if (fm != 0 && fm != 1) LUTHIER_ONNX__BAD("fmod is %lld (0 or 1)", (long long)fm);
        d.typed = 1;
        d.attr.mod.fmod = (int)fm;
    }
    for (k = 0; k < nin; k++) LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, luthier_onnx__in(c, n, k), wantf, &in[k]));
    return luthier_onnx__emit_out(c, n, &d, arg->op, in, nin);
}

/* Where(cond, x, y): cond as f32 0/1, x and y i64 when both are integers, else f32. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_where(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *a = luthier_onnx__in(c, n, 1), *b = luthier_onnx__in(c, n, 2);
    luthier_onnx__shape sa, sb;
    int wantf;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    luthier_onnx__vshape(c, a, &sa);
    luthier_onnx__vshape(c, b, &sb);
    wantf = sa.isf || sb.isf;
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, a, wantf, &in[1]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, b, wantf, &in[2]));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_WHERE, in, 3);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_unary(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const char *appr = luthier_onnx__as(n, "approximate", "none");
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, arg->op == LUTHIER_OP_GELU ? "approximate" : ""));
    if (strcmp(appr, "none") && strcmp(appr, "tanh")) LUTHIER_ONNX__UNSUP("approximate '%s'", appr);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.approximate = !strcmp(appr, "tanh");
    return luthier_onnx__emit_out(c, n, &d, arg->op, &xt, 1);
}

/* PRelu: x < 0 ? slope x : x, the slope a constant broadcast one way to x (the engine checks
   the broadcast and names the node). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_prelu(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__tensor *slope;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, 1, "slope", &slope));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, luthier_onnx__in(c, n, 1), 1, &in[1]));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_PRELU, in, 2);
}

/* The activations (LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus Softsign Mish
   ThresholdedRelu): the engine operator of the same name, its typed attributes from the node's
   (ONNX defaults for those it leaves out; the engine checks the values). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_activation(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_node_attrs *t = &d.attr;
    const char *allowed = "alpha";
    switch (arg->op) {
    case LUTHIER_OP_SELU: allowed = "alpha,gamma"; break;
    case LUTHIER_OP_HARD_SIGMOID: allowed = "alpha,beta"; break;
    case LUTHIER_OP_HARD_SWISH: case LUTHIER_OP_SOFTPLUS: case LUTHIER_OP_SOFTSIGN: case LUTHIER_OP_MISH: allowed = ""; break;
    default: break;
    }
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, allowed));
    luthier_onnx__typed(&d, arg->op);
    switch (arg->op) {
    case LUTHIER_OP_LEAKY_RELU: t->leaky_relu.alpha = luthier_onnx__af(n, "alpha", t->leaky_relu.alpha); break;
    case LUTHIER_OP_ELU: t->elu.alpha = luthier_onnx__af(n, "alpha", t->elu.alpha); break;
    case LUTHIER_OP_SELU:
        t->selu.alpha = luthier_onnx__af(n, "alpha", t->selu.alpha);
        t->selu.gamma = luthier_onnx__af(n, "gamma", t->selu.gamma);
        break;
    case LUTHIER_OP_CELU: t->celu.alpha = luthier_onnx__af(n, "alpha", t->celu.alpha); break;
    case LUTHIER_OP_HARD_SIGMOID:
        t->hard_sigmoid.alpha = luthier_onnx__af(n, "alpha", t->hard_sigmoid.alpha);
        t->hard_sigmoid.beta = luthier_onnx__af(n, "beta", t->hard_sigmoid.beta);
        break;
    case LUTHIER_OP_THRESHOLDED_RELU: t->thresholded_relu.alpha = luthier_onnx__af(n, "alpha", t->thresholded_relu.alpha); break;
    default: break;
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    return luthier_onnx__emit_out(c, n, &d, arg->op, &xt, 1);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_clip(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    float lo = -FLT_MAX, hi = FLT_MAX, v;
    int has;
    if (c->opset < 11) {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "min,max"));
        lo = luthier_onnx__af(n, "min", lo);
        hi = luthier_onnx__af(n, "max", hi);
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
        LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 1, &v, &has));
        if (has) lo = v;
        LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 2, &v, &has));
        if (has) hi = v;
    }
    if (!(lo <= hi)) LUTHIER_ONNX__UNSUP("min %g > max %g", (double)lo, (double)hi);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.clamp_min = lo;
    d.clamp_max = hi;
    return luthier_onnx__emit_out(c, n, &d, lo == 0 && hi >= FLT_MAX ? LUTHIER_OP_RELU : LUTHIER_OP_CLIP, &xt, 1);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_binary(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int acc, j, nin = 0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 7 ? "broadcast,axis" : ""));
    for (j = 0; j < n->nin; j++)
        if (luthier_onnx__in(c, n, j)) nin++;
    if (nin < 1 || (nin > 2 && !(luthier_onnx__isop(n, "Max") || luthier_onnx__isop(n, "Min") || luthier_onnx__isop(n, "Sum"))))
        LUTHIER_ONNX__BAD("%d inputs", nin);
    if (nin == 1) return luthier_onnx__alias(c, n, x);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &acc));
    for (j = 1, nin--; j < n->nin; j++) {
        luthier_onnx__val *b = luthier_onnx__in(c, n, j);
        if (!b) continue;
        in[0] = acc;
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, b, 1, &in[1]));
        luthier_onnx__set_op(&d, arg->op, in, 2);
        if (--nin == 0) LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, oname, &acc));
        else LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "acc", &acc));
    }
    return luthier_onnx__setout(c, n, 0, acc);
}

/* Conv and ConvTranspose: constant 4-D weights (input 1, wv) and bias (input 2, may be absent),
   and the window: kernel_shape (which must match the weights), strides, dilations. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__conv_window(luthier_onnx__ctx *c, const luthier_onnx__node *n,
                                                          const luthier_onnx__val *wv, int64_t *kk, int64_t *s, int64_t *dl) {
    const luthier_onnx__tensor *w, *b;
    if (!wv) LUTHIER_ONNX__BAD("weights are missing");
    LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, 1, "weights", &w));
    LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, 2, "bias", &b));
    if (w->rank != 4) LUTHIER_ONNX__BAD("weights '%s' have rank %d", wv->name, w->rank);
    return luthier_onnx__window(c, n, w, kk, s, dl);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_conv(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t kk[2];
    luthier_onnx__val *wv = luthier_onnx__in(c, n, 1), *bv = luthier_onnx__in(c, n, 2);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "auto_pad,dilations,group,kernel_shape,pads,strides"));
    if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input '%s' has rank %d: only 2-D convolution ([N,C,H,W]) is supported", x->name, xs.rank);
    LUTHIER_ONNX__TRY(luthier_onnx__conv_window(c, n, wv, kk, d.stride, d.dilation));
    LUTHIER_ONNX__TRY(luthier_onnx__pads(c, n, &xs, kk, d.stride, d.dilation, d.pads));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, wv, 1, &in[1]));
    if (bv) LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bv, 1, &in[2]));
    d.groups = luthier_onnx__ai(n, "group", 1);
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CONV2D, in, bv ? 3 : 2);
}

/* floor(a / 2) (C's division truncates) */
LUTHIER_ONNX__FN int64_t luthier_onnx__half_floor(int64_t a) { return a >= 0 ? a / 2 : -((1 - a) / 2); }

/* ConvTranspose pads from output_shape or auto_pad SAME_UPPER / SAME_LOWER (the ONNX reference):
   total = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out, out = output_shape
   or in * stride; SAME_UPPER puts floor(total / 2) in front, the others total - floor(total / 2).
   A negative end pad (an output_shape past the full output) becomes output padding. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convt_pads(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *xs,
                                                         const int64_t *kk, const int64_t *s, const int64_t *dl, int64_t *op, int64_t *pads) {
    const char *ap = luthier_onnx__as(n, "auto_pad", "NOTSET");
    const int64_t *os;
    const int nos = luthier_onnx__aints(n, "output_shape", &os);
    int i;
    if (nos >= 0 && nos != 2) LUTHIER_ONNX__UNSUP("output_shape has %d entries (2-D takes 2: the output's height and width)", nos);
    if (nos < 0 && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER"))
        return luthier_onnx__pads(c, n, xs, kk, s, dl, pads); /* NOTSET (the pads attribute) or VALID */
    if (strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") && strcmp(ap, "NOTSET") && *ap)
        LUTHIER_ONNX__UNSUP("auto_pad '%s' is not supported", ap);
    for (i = 0; i < 2; i++) {
        const int64_t in = xs->d[2 + i], out = nos == 2 ? os[i] : in * s[i];
        int64_t total, lo;
        if (in > ((int64_t)1 << 30) || out < 1 || out > ((int64_t)1 << 40))
            LUTHIER_ONNX__BAD("output_shape %lld (input %lld) must be in [1, 2^40]", (long long)out, (long long)in);
        total = s[i] * (in - 1) + op[i] + (kk[i] - 1) * dl[i] + 1 - out;
        lo = !strcmp(ap, "SAME_UPPER") ? luthier_onnx__half_floor(total) : total - luthier_onnx__half_floor(total);
        pads[i] = lo;
        pads[i + 2] = total - lo;
        if (pads[i] < 0)
            LUTHIER_ONNX__UNSUP("output_shape %lld needs a negative leading pad (%lld)", (long long)out, (long long)pads[i]);
        if (pads[i + 2] < 0) op[i] -= pads[i + 2], pads[i + 2] = 0;
    }
    return LUTHIER_STATUS_OK;
}

/* ConvTranspose (2-D; 1-D through luthier_onnx__lift_1d) -> conv_transpose: constant W
   [Cin, Cout/group, kh, kw] and B; kernel_shape, strides, dilations, group, output_padding, pads,
   auto_pad, output_shape (which overrides the pads, as ONNX says). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_conv_transpose(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *wv = luthier_onnx__in(c, n, 1), *bv = luthier_onnx__in(c, n, 2);
    luthier_conv_transpose_attrs *a = &d.attr.conv_transpose;
    int64_t kk[2];
    const int64_t *p;
    int np;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "auto_pad,dilations,group,kernel_shape,output_padding,output_shape,pads,strides"));
    if (xs.rank != 4)
        LUTHIER_ONNX__UNSUP("input '%s' has rank %d: ConvTranspose is supported in 1-D ([N,C,L]) and 2-D ([N,C,H,W]), not 3-D or more",
                            x->name, xs.rank);
    luthier_onnx__typed(&d, LUTHIER_OP_CONV_TRANSPOSE);
    LUTHIER_ONNX__TRY(luthier_onnx__conv_window(c, n, wv, kk, a->stride, a->dilation));
    np = luthier_onnx__aints(n, "output_padding", &p);
    if (np >= 0 && np != 2) LUTHIER_ONNX__UNSUP("output_padding has %d entries (2-D takes 2)", np);
    for (k = 0; k < 2; k++) {
        if (np == 2 && (p[k] < 0 || p[k] > (1 << 30))) LUTHIER_ONNX__BAD("output_padding %lld is not in [0, 2^30]", (long long)p[k]);
        a->output_padding[k] = np == 2 ? p[k] : 0;
    }
    LUTHIER_ONNX__TRY(luthier_onnx__convt_pads(c, n, &xs, kk, a->stride, a->dilation, a->output_padding, a->pads));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, wv, 1, &in[1]));
    if (bv) LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bv, 1, &in[2]));
    a->groups = luthier_onnx__ai(n, "group", 1);
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CONV_TRANSPOSE, in, bv ? 3 : 2);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_pool(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int mx = !luthier_onnx__isop(n, "AveragePool");
    if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input '%s' has rank %d: only 2-D pooling ([N,C,H,W]) is supported", x->name, xs.rank);
    if (luthier_onnx__isop(n, "GlobalMaxPool")) { /* (pads 0) */
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
        d.kernel[0] = xs.d[2]; d.kernel[1] = xs.d[3];
        d.stride[0] = d.stride[1] = d.dilation[0] = d.dilation[1] = 1;
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, mx ? "auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides"
                                         : "auto_pad,ceil_mode,count_include_pad,kernel_shape,pads,strides,dilations"));
        {
            const int64_t *ks;
            if (luthier_onnx__aints(n, "kernel_shape", &ks) != 2) LUTHIER_ONNX__UNSUP("kernel_shape must have 2 entries (2-D pooling)");
            d.kernel[0] = ks[0];
            d.kernel[1] = ks[1];
        }
        LUTHIER_ONNX__TRY(luthier_onnx__window(c, n, NULL, d.kernel, d.stride, d.dilation));
        LUTHIER_ONNX__TRY(luthier_onnx__pads(c, n, &xs, d.kernel, d.stride, d.dilation, d.pads));
        if (!mx && (d.dilation[0] != 1 || d.dilation[1] != 1)) LUTHIER_ONNX__UNSUP("dilated average pooling is not supported");
    }
    LUTHIER_ONNX__TRY(luthier_onnx__only_first(c, n));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.ceil_mode = (int)luthier_onnx__ai(n, "ceil_mode", 0);
    d.count_include_pad = (int)luthier_onnx__ai(n, "count_include_pad", 0);
    return luthier_onnx__emit_out(c, n, &d, mx ? LUTHIER_OP_MAXPOOL : LUTHIER_OP_AVGPOOL, &xt, 1);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_global_avgpool(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input '%s' has rank %d: only [N,C,H,W] is supported", x->name, xs.rank);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_GLOBAL_AVGPOOL, &xt, 1);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_batch_norm(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__tensor *p;
    float eps = luthier_onnx__af(n, "epsilon", 1e-5f);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "epsilon,momentum,spatial,training_mode,is_test,consumed_inputs"));
    if (luthier_onnx__ai(n, "training_mode", 0)) LUTHIER_ONNX__UNSUP("training_mode = 1 is not supported (inference only)");
    if (!luthier_onnx__ai(n, "spatial", 1)) LUTHIER_ONNX__UNSUP("spatial = 0 is not supported");
    LUTHIER_ONNX__TRY(luthier_onnx__only_first(c, n));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    for (k = 1; k < 5; k++) {
        LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, k, "batch norm parameter", &p));
        if (!p) LUTHIER_ONNX__BAD("input %d is missing", k);
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, luthier_onnx__in(c, n, k), 1, &in[k]));
    }
    luthier_onnx__typed(&d, LUTHIER_OP_BATCH_NORM);
    d.attr.batch_norm.epsilon = eps;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_BATCH_NORM, in, 5);
}

/* InstanceNormalization (G = 0) and GroupNormalization (G groups of C / G channels): x
   normalized per (n, c), or per (n, group) through a reshape to [N, G, rest] and back, by a layer
   norm from axis 2 without affine (the node's epsilon); then scale[c] * y + bias[c] as a
   per-channel multiply and add. scale and bias hold C values, or one per group (opset 18). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__norm_affine(const luthier_onnx__cvargs *arg, int64_t G) {
    LUTHIER_ONNX__CV_ARGS;
    const int64_t C = xs.d[1], per = G ? G : C;
    const luthier_onnx__tensor *p;
    int64_t gd[3], cd[LUTHIER_ONNX_MAX_RANK], e;
    int cur, pc[2];
    cd[0] = C;
    for (e = 1; e < xs.rank - 1; e++) cd[e] = 1; /* [C, 1, ...]: broadcast over the spatial dims */
    for (k = 0; k < 2; k++) {
        float *f = NULL;
        LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, k + 1, k ? "bias" : "scale", &p));
        if (!p || p->n != (size_t)per)
            LUTHIER_ONNX__BAD("%s must hold %s = %lld values%s", k ? "bias" : "scale", G ? "num_groups" : "C", (long long)per,
                              G ? " (opset 18)" : "");
        if (G && !(f = (float *)luthier_onnx__alloc(c, (size_t)C * sizeof(float)))) LUTHIER_ONNX__OOM();
        for (e = 0; f && e < C; e++) f[e] = p->f[e / (C / G)];
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, k ? "bias" : "scale", xs.rank - 1, cd, f ? f : p->f, &pc[k]));
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &cur));
    if (G) { /* [N, G, rest] */
        gd[0] = xs.d[0], gd[1] = G, gd[2] = (int64_t)(luthier_onnx__numel(xs.rank, xs.d) / (size_t)(xs.d[0] * G));
        LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, cur, 3, gd, NULL, &cur));
    }
    luthier_onnx__typed(&d, LUTHIER_OP_LAYER_NORM);
    d.attr.layer_norm.axis = 2;
    d.attr.layer_norm.epsilon = luthier_onnx__af(n, "epsilon", 1e-5f);
    luthier_onnx__set_op(&d, LUTHIER_OP_LAYER_NORM, &cur, 1);
    LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "normalized", &cur));
    if (G) LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, cur, xs.rank, xs.d, NULL, &cur));
    memset(&d, 0, sizeof d);
    in[0] = cur, in[1] = pc[0];
    luthier_onnx__set_op(&d, LUTHIER_OP_MUL, in, 2);
    LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "scaled", &cur));
    in[0] = cur, in[1] = pc[1];
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_ADD, in, 2);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_instance_norm(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "epsilon"));
    if (xs.rank < 3 || xs.rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("input rank %d (takes [N,C,D1,...])", xs.rank);
    return luthier_onnx__norm_affine(arg, 0);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_layer_norm(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax;
    float eps = luthier_onnx__af(n, "epsilon", 1e-5f);
    size_t norm;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis,epsilon,stash_type"));
    LUTHIER_ONNX__TRY(luthier_onnx__only_first(c, n));
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", -1), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    norm = luthier_onnx__numel(xs.rank - (int)ax, xs.d + ax);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    in[1] = in[2] = -1;
    for (k = 1; k < 3; k++) {
        const luthier_onnx__tensor *p;
        LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, k, k == 1 ? "scale" : "bias", &p));
        if (!p) continue;
        if (p->n == norm) {
            LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, k == 1 ? "gamma" : "beta", xs.rank - (int)ax, xs.d + ax, p->f, &in[k]));
        } else if (p->n == 1 && norm <= LUTHIER_ONNX__MAX_ELEMS) {
            const float *f = luthier_onnx__fscale(c, p->f, norm, 1.0f, 1); /* p's value broadcast */
            if (!f) LUTHIER_ONNX__OOM();
            LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, k == 1 ? "gamma" : "beta", xs.rank - (int)ax, xs.d + ax, f, &in[k]));
        } else {
            LUTHIER_ONNX__UNSUP("%s has %zu values, the normalized dims hold %zu", k == 1 ? "scale" : "bias", p->n, norm);
        }
    }
    luthier_onnx__typed(&d, LUTHIER_OP_LAYER_NORM);
    d.attr.layer_norm.axis = (int)(ax - xs.rank);
    d.attr.layer_norm.epsilon = eps;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_LAYER_NORM, in, in[2] >= 0 ? 3 : in[1] >= 0 ? 2 : 1);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_gemm(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *bv = luthier_onnx__in(c, n, 1), *cv = luthier_onnx__in(c, n, 2);
    float alpha = luthier_onnx__af(n, "alpha", 1.0f), beta = luthier_onnx__af(n, "beta", 1.0f);
    int ta = (int)luthier_onnx__ai(n, "transA", 0), tb = (int)luthier_onnx__ai(n, "transB", 0), a, y;
    int64_t N;
    luthier_onnx__shape bs, cs;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "alpha,beta,transA,transB,broadcast"));
    if (!bv) LUTHIER_ONNX__BAD("B is missing");
    luthier_onnx__vshape(c, bv, &bs);
    if (xs.rank != 2 || bs.rank != 2) LUTHIER_ONNX__BAD("A and B must be 2-D");
    N = tb ? bs.d[0] : bs.d[1];
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &a));
    if (ta) {
        luthier_onnx__set_op(&d, LUTHIER_OP_TRANSPOSE, &a, 1);
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "transA", &a));
        memset(&d, 0, sizeof d);
    }
    if (cv) luthier_onnx__vshape(c, cv, &cs);
    if (bv->c && bv->c->f) {
        /* dense: w = alpha * B, bias = beta * C when C is per column */
        const luthier_onnx__tensor *bt = bv->c;
        const float *w = bt->f, *bias = NULL;
        int wt, bt_id = -1, percol = cv && cv->c && cv->c->f && luthier_onnx__numel(cs.rank, cs.d) == (size_t)N && (cs.rank < 2 || cs.d[0] == 1);
        int scalar = cv && cv->c && cv->c->f && cv->c->n == 1;
        /* alpha * B (B as it is when alpha is 1: the graph's copy is the only one) */
        if (alpha != 1.0f && !(w = luthier_onnx__fscale(c, bt->f, bt->n, alpha, 0))) LUTHIER_ONNX__OOM();
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "weight", 2, bt->dims, w, &wt));
        if (percol || scalar) {
            if (percol && beta == 1.0f) bias = cv->c->f;
            else if (!(bias = luthier_onnx__fscale(c, cv->c->f, (size_t)N, beta, scalar))) LUTHIER_ONNX__OOM();
            LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "bias", 1, &N, bias, &bt_id));
        }
        in[0] = a; in[1] = wt; in[2] = bt_id;
        d.trans_b = !tb;
        if (!cv || bt_id >= 0 || beta == 0) return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_DENSE, in, bt_id >= 0 ? 3 : 2);
        luthier_onnx__set_op(&d, LUTHIER_OP_DENSE, in, 2);
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "dense", &y));
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bv, 1, &in[1]));
        in[0] = a;
        d.trans_b = tb;
        if (alpha == 1 && (!cv || beta == 0)) return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_MATMUL, in, 2);
        luthier_onnx__set_op(&d, LUTHIER_OP_MATMUL, in, 2);
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "matmul", &y));
        if (alpha != 1) {
            int64_t none = 0;
            int ct;
            LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "alpha", 0, &none, &alpha, &ct));
            in[0] = y; in[1] = ct;
            d.trans_b = 0;
            if (!cv || beta == 0) return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_MUL, in, 2);
            d.op = LUTHIER_OP_MUL;
            LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "scaled", &y));
        }
    }
    /* + beta * C (full matrix or run-time C) */
    memset(&d, 0, sizeof d);
    if (cv->c && cv->c->f) {
        const float *cc = luthier_onnx__fscale(c, cv->c->f, cv->c->n, beta, 0);
        if (!cc) LUTHIER_ONNX__OOM();
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "C", cs.rank, cs.d, cc, &in[1]));
    } else {
        if (beta != 1) LUTHIER_ONNX__UNSUP("beta != 1 with a run-time C");
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, cv, 1, &in[1]));
    }
    in[0] = y;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_ADD, in, 2);
}

/* The product of MatMul into a tensor named name (*y): a dense step when B is a float constant
   of rank 1 or 2 (with bias, when given, as its third input), else the engine's matmul. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__matmul_into(const luthier_onnx__cvargs *arg, int bias, const char *name, int *y) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *bv = luthier_onnx__in(c, n, 1);
    luthier_onnx__shape bs;
    int a;
    if (!bv) LUTHIER_ONNX__BAD("B is missing");
    luthier_onnx__vshape(c, bv, &bs);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &a));
    in[0] = a;
    if (bv->c && bv->c->f && bs.rank == 2) {
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bv, 1, &in[1]));
        if (bias >= 0) in[2] = bias;
        luthier_onnx__set_op(&d, LUTHIER_OP_DENSE, in, bias >= 0 ? 3 : 2);
        d.trans_b = 1; /* B is [K, N] */
        return luthier_onnx__emit(c, n, &d, name, y);
    }
    if (bv->c && bv->c->f && bs.rank == 1) {
        int64_t wd[2];
        wd[0] = 1; wd[1] = bs.d[0];
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "weight", 2, wd, bv->c->f, &in[1]));
        luthier_onnx__set_op(&d, LUTHIER_OP_DENSE, in, 2);
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "dense", &a));
        return luthier_onnx__reshape_to(c, n, a, xs.rank - 1, xs.d, name, y);
    }
    if (xs.rank < 2 || bs.rank < 2) LUTHIER_ONNX__UNSUP("a 1-D operand with a run-time B is not supported");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bv, 1, &in[1]));
    luthier_onnx__set_op(&d, LUTHIER_OP_MATMUL, in, 2);
    return luthier_onnx__emit(c, n, &d, name, y);
}

/* MatMul, and MatMul(x, B, bias) of luthier_onnx__match_matmul_bias: the dense's own bias when B
   is a float constant [K, N] and the bias a float constant [N], else an add after the product. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_matmul(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *bv = luthier_onnx__in(c, n, 1), *bias = n->nin == 3 ? luthier_onnx__in(c, n, 2) : NULL;
    luthier_onnx__shape bs;
    const char *pname = oname;
    int own = 0, y;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    if (!bv || (n->nin == 3 && !bias)) LUTHIER_ONNX__BAD("an input is missing");
    luthier_onnx__vshape(c, bv, &bs);
    if (bias) {
        own = bv->c && bv->c->f && bs.rank == 2 && bias->c && bias->c->f && bias->c->rank == 1 && bias->c->dims[0] == bs.d[1];
        if (own) LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bias, 1, &in[0]));
        else if (!(pname = luthier_onnx__uname(c, oname, "product"))) LUTHIER_ONNX__OOM();
    }
    LUTHIER_ONNX__TRY(luthier_onnx__matmul_into(arg, own ? in[0] : -1, pname, &y));
    if (!bias || own) {
        return luthier_onnx__setout(c, n, 0, y);
    }
    in[0] = y;
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, bias, 1, &in[1]));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_ADD, in, 2);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_softmax(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax, def = c->opset < 13 ? 1 : -1;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", def), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.op = LUTHIER_OP_SOFTMAX;
    d.log = luthier_onnx__isop(n, "LogSoftmax");
    d.num_inputs = 1;
    if (c->opset < 13 && ax != xs.rank - 1) {
        int64_t two[2];
        int t1, t2;
        two[0] = (int64_t)luthier_onnx__numel((int)ax, xs.d);
        two[1] = (int64_t)luthier_onnx__numel(xs.rank - (int)ax, xs.d + ax);
        LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, xt, 2, two, NULL, &t1));
        d.inputs = &t1;
        d.axis = 1;
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "softmax", &t2));
        LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, t2, xs.rank, xs.d, oname, outs));
    } else {
        d.inputs = &xt;
        d.axis = (int)ax;
        LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, oname, outs));
    }
    return luthier_onnx__setout(c, n, 0, outs[0]);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_lrn(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__attr *al = luthier_onnx__attr_get(n, "alpha"), *be = luthier_onnx__attr_get(n, "beta"), *bi = luthier_onnx__attr_get(n, "bias");
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "alpha,beta,bias,size"));
    if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input rank %d (only [N,C,H,W])", xs.rank);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    luthier_onnx__typed(&d, LUTHIER_OP_LRN);
    if (al) d.attr.lrn.alpha = al->f;
    if (be) d.attr.lrn.beta = be->f;
    if (bi) d.attr.lrn.bias = bi->f;
    d.attr.lrn.size = luthier_onnx__ai(n, "size", 0);
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_LRN, &xt, 1);
}

/* Concat; above 64 inputs (the engine's concat takes at most 64), concatenations of 64 at a time
   and one of those (at most 64 * 64 inputs). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_concat(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax;
    int m = 0, parts = 0, *all = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)(n->nin + 1));
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
    if (!all) LUTHIER_ONNX__OOM();
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    if (n->nin > 64 * 64) LUTHIER_ONNX__UNSUP("%d inputs (at most %d)", n->nin, 64 * 64);
    for (k = 0; k < n->nin; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        if (!v || (v->c && v->c->n == 0)) continue;
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, v, 1, &all[m]));
        m++;
    }
    if (!m) LUTHIER_ONNX__UNSUP("all inputs are empty");
    d.axis = (int)ax;
    if (m <= 64) return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CONCAT, all, m);
    for (k = 0; k < m; k += 64, parts++) {
        d.op = LUTHIER_OP_CONCAT, d.inputs = all + k, d.num_inputs = m - k < 64 ? m - k : 64;
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "part", &in[parts]));
    }
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CONCAT, in, parts);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_split(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax, sizes[LUTHIER_MAX_NODE_OUTPUTS];
    const int64_t *sp = NULL;
    int ns = -1;
    const luthier_onnx__attr *no = luthier_onnx__attr_get(n, "num_outputs");
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 13 ? "axis,split" : c->opset < 18 ? "axis" : "axis,num_outputs"));
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    if (c->opset >= 13) {
        const luthier_onnx__tensor *t;
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "split", &t));
        if (t) sp = t->i, ns = (int)t->n;
    } else {
        ns = luthier_onnx__aints(n, "split", &sp);
    }
    if (n->nout > LUTHIER_MAX_NODE_OUTPUTS) LUTHIER_ONNX__UNSUP("%d outputs (at most %d)", n->nout, LUTHIER_MAX_NODE_OUTPUTS);
    if (ns >= 0 && ns != n->nout) LUTHIER_ONNX__BAD("split has %d sizes for %d outputs", ns, n->nout);
    for (k = 0; k < ns; k++) sizes[k] = sp[k];
    if (no) { /* opset 18: parts of ceil(len / num_outputs), the last one smaller */
        const int64_t len = xs.d[ax];
        int64_t chunk;
        if (ns >= 0) LUTHIER_ONNX__BAD("split and num_outputs are both given");
        if (no->i != n->nout) LUTHIER_ONNX__BAD("num_outputs is %lld for %d outputs", (long long)no->i, n->nout);
        chunk = (len + no->i - 1) / no->i; /* 1 <= num_outputs <= 64 here */
        for (ns = 0; ns < n->nout; ns++)
            if ((sizes[ns] = len - ns * chunk < chunk ? len - ns * chunk : chunk) < 1)
                LUTHIER_ONNX__UNSUP("num_outputs %lld over a dimension of %lld leaves output %d empty", (long long)no->i, (long long)len, ns);
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.num_outputs = n->nout;
    d.axis = (int)ax;
    d.sizes = ns >= 0 ? sizes : NULL;
    return luthier_onnx__emit_outs(c, n, &d, LUTHIER_OP_SPLIT, &xt, 1, "split", n->nout);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_slice(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t st[LUTHIER_ONNX_MAX_RANK], sp[LUTHIER_ONNX_MAX_RANK], ln[LUTHIER_ONNX_MAX_RANK];
    int last = -1, cur;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 10 ? "starts,ends,axes" : ""));
    LUTHIER_ONNX__TRY(luthier_onnx__slice_params(c, n, &xs, st, sp, ln));
    for (k = 0; k < xs.rank; k++) {
        if (ln[k] == 0) LUTHIER_ONNX__UNSUP("the slice of axis %d is empty", k);
        if (st[k] != 0 || sp[k] != 1 || ln[k] != xs.d[k]) last = k;
    }
    if (last < 0) return luthier_onnx__alias(c, n, x);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &cur));
    for (k = 0; k <= last; k++) {
        int64_t *idx, e;
        int it;
        if (st[k] == 0 && sp[k] == 1 && ln[k] == xs.d[k]) continue;
        if ((size_t)ln[k] > LUTHIER_ONNX__MAX_ELEMS) LUTHIER_ONNX__UNSUP("slice of %lld elements is too long", (long long)ln[k]);
        if (!(idx = (int64_t *)luthier_onnx__alloc(c, (size_t)ln[k] * sizeof(int64_t)))) LUTHIER_ONNX__OOM();
        for (e = 0; e < ln[k]; e++) idx[e] = st[k] + e * sp[k];
        {
            const char *iname = luthier_onnx__uname(c, oname, "indices");
            if (!iname) LUTHIER_ONNX__OOM();
            if (luthier_graph_constant_i64(c->g, iname, 1, &ln[k], idx, &it) != LUTHIER_STATUS_OK)
                LUTHIER_ONNX__UNSUP("%s", luthier_graph_error(c->g));
        }
        in[0] = cur; in[1] = it;
        memset(&d, 0, sizeof d);
        luthier_onnx__set_op(&d, LUTHIER_OP_GATHER, in, 2);
        d.axis = k;
        if (k == last) LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, oname, &cur));
        else LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "slice", &cur));
    }
    return luthier_onnx__setout(c, n, 0, cur);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_gather(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *iv = luthier_onnx__in(c, n, 1);
    int64_t ax;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis"));
    if (!iv) LUTHIER_ONNX__BAD("indices are missing");
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    if (iv->c && !iv->c->i) LUTHIER_ONNX__BAD("indices must be integers");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, iv, 0, &in[1]));
    d.axis = (int)ax;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_GATHER, in, 2);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_reshape(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__shape os;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, luthier_onnx__isop(n, "Reshape") ? "allowzero,shape" : luthier_onnx__isop(n, "Flatten") ? "axis" : "axes"));
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_like(c, n, &xs, &os));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 0, &xt));
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, xt, os.rank, os.d, oname, outs));
    return luthier_onnx__setout(c, n, 0, outs[0]);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_transpose(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const int64_t *perm;
    int np = luthier_onnx__aints(n, "perm", &perm), p[LUTHIER_MAX_RANK];
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "perm"));
    if (xs.rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("rank %d", xs.rank);
    if (np >= 0 && np != xs.rank) LUTHIER_ONNX__BAD("perm has %d entries for rank %d", np, xs.rank);
    for (k = 0; k < xs.rank && np >= 0; k++) {
        if (perm[k] < 0 || perm[k] >= xs.rank) LUTHIER_ONNX__BAD("perm entry %lld out of range", (long long)perm[k]);
        p[k] = (int)perm[k];
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.perm = np >= 0 ? p : NULL;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_TRANSPOSE, &xt, 1);
}

/* The Reduce* operators: their engine kind and the opset from which axes is an input. */
static const struct {
    const char *op;
    luthier_reduce_kind kind;
    int axes_input_from;
} luthier_onnx__reduces[] = {
    {"ReduceMax", LUTHIER_REDUCE_MAX, 18},      {"ReduceMin", LUTHIER_REDUCE_MIN, 18},
    {"ReduceSum", LUTHIER_REDUCE_SUM, 13},      {"ReduceMean", LUTHIER_REDUCE_MEAN, 18},
    {"ReduceProd", LUTHIER_REDUCE_PROD, 18},    {"ReduceL1", LUTHIER_REDUCE_L1, 18},
    {"ReduceL2", LUTHIER_REDUCE_L2, 18},        {"ReduceLogSum", LUTHIER_REDUCE_LOG_SUM, 18},
    {"ReduceLogSumExp", LUTHIER_REDUCE_LOG_SUM_EXP, 18}, {"ReduceSumSquare", LUTHIER_REDUCE_SUM_SQUARE, 18},
};

/* Reduce* of a constant: max, min, sum, mean and prod over the axes (double for f32, int64 for
   integers; mean of integers and the other kinds are left to the conversion). Shape arithmetic
   needs it: a detector's image transform takes the ReduceMax of its size, then Casts and
   Subtracts. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_reduce(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    int64_t axes[LUTHIER_ONNX_MAX_RANK], dims[LUTHIER_ONNX_MAX_RANK], ax, cnt = 1;
    int red[LUTHIER_ONNX_MAX_RANK] = {0}, na, r = 0, k, ro = 0, kind;
    size_t e, q;
    while (strcmp(luthier_onnx__reduces[r].op, n->op)) r++;
    kind = (int)luthier_onnx__reduces[r].kind;
    if ((!xc->f && !xc->i) || !xc->n || (xc->i && kind == LUTHIER_REDUCE_MEAN) ||
        (kind != LUTHIER_REDUCE_MAX && kind != LUTHIER_REDUCE_MIN && kind != LUTHIER_REDUCE_SUM && kind != LUTHIER_REDUCE_MEAN &&
         kind != LUTHIER_REDUCE_PROD))
        return LUTHIER_STATUS_OK;
    LUTHIER_ONNX__TRY(luthier_onnx__axes(c, n, luthier_onnx__reduces[r].axes_input_from, axes, &na));
    if (na <= 0 && luthier_onnx__ai(n, "noop_with_empty_axes", 0)) return LUTHIER_STATUS_OK;
    for (k = 0; k < xc->rank; k++) red[k] = na <= 0;
    for (k = 0; k < na; k++) {
        if (!luthier_onnx__norm_axis(axes[k], xc->rank, &ax)) return LUTHIER_STATUS_OK; /* (the conversion names it) */
        red[ax] = 1;
    }
    for (k = 0; k < xc->rank; k++) {
        if (red[k]) cnt *= xc->dims[k];
        if (!red[k] || luthier_onnx__ai(n, "keepdims", 1)) dims[ro++] = red[k] ? 1 : xc->dims[k];
    }
    LUTHIER_ONNX__TLIKE(t, xc, ro, dims);
    for (q = 0; q < t->n; q++) {
        if (t->f) t->f[q] = kind == LUTHIER_REDUCE_MAX ? -INFINITY : kind == LUTHIER_REDUCE_MIN ? INFINITY : kind == LUTHIER_REDUCE_PROD;
        else t->i[q] = kind == LUTHIER_REDUCE_MAX ? INT64_MIN : kind == LUTHIER_REDUCE_MIN ? INT64_MAX : kind == LUTHIER_REDUCE_PROD;
    }
    for (e = 0; e < xc->n; e++) { /* the output element of e: its index with the reduced axes dropped */
        size_t rest = e, o = 0, stride = 1;
        for (k = xc->rank - 1; k >= 0; k--) {
            const size_t i = rest % (size_t)xc->dims[k];
            rest /= (size_t)xc->dims[k];
            if (!red[k]) o += i * stride, stride *= (size_t)xc->dims[k];
        }
        if (t->f) {
            const float v = xc->f[e], a = t->f[o];
            t->f[o] = kind == LUTHIER_REDUCE_MAX ? (v > a || v != v ? v : a) : kind == LUTHIER_REDUCE_MIN ? (v < a || v != v ? v : a)
                      : kind == LUTHIER_REDUCE_PROD ? (float)((double)a * v) : (float)((double)a + v);
        } else {
            const int64_t v = xc->i[e], a = t->i[o];
            t->i[o] = kind == LUTHIER_REDUCE_MAX ? (v > a ? v : a) : kind == LUTHIER_REDUCE_MIN ? (v < a ? v : a)
                      : kind == LUTHIER_REDUCE_PROD ? (int64_t)((uint64_t)a * (uint64_t)v) : (int64_t)((uint64_t)a + (uint64_t)v);
        }
    }
    for (q = 0; kind == LUTHIER_REDUCE_MEAN && q < t->n; q++) t->f[q] = (float)((double)t->f[q] / (double)cnt);
    return luthier_onnx__folded(arg, t);
}

/* ReduceMean over H and W of [N,C,H,W] runs as global average pooling (it works in NHWC). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__reduce_as_pool(luthier_onnx__ctx *c, luthier_onnx__node *n, int cur, int keepdims,
                                                            const luthier_onnx__shape *xs) {
    luthier_node_desc d;
    int64_t od[2];
    int outs[1];
    memset(&d, 0, sizeof d);
    luthier_onnx__set_op(&d, LUTHIER_OP_GLOBAL_AVGPOOL, &cur, 1);
    if (keepdims) {
        LUTHIER_ONNX__TRY(luthier_onnx__emit(c, n, &d, n->out[0], outs));
    } else {
        od[0] = xs->d[0], od[1] = xs->d[1];
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "pool", &cur));
        LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, cur, 2, od, n->out[0], outs));
    }
    return luthier_onnx__setout(c, n, 0, outs[0]);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_reduce(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t axes[LUTHIER_ONNX_MAX_RANK], ax;
    int na, cur, keepdims, r = 0, hw = 0;
    (void)oname, (void)outs, (void)in;
    while (strcmp(luthier_onnx__reduces[r].op, n->op)) r++; /* the table's rows all name a Reduce* here */
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < luthier_onnx__reduces[r].axes_input_from ? "axes,keepdims" : "keepdims,noop_with_empty_axes"));
    LUTHIER_ONNX__TRY(luthier_onnx__axes(c, n, luthier_onnx__reduces[r].axes_input_from, axes, &na));
    keepdims = (int)luthier_onnx__ai(n, "keepdims", 1);
    if (na <= 0 && luthier_onnx__ai(n, "noop_with_empty_axes", 0)) return luthier_onnx__alias(c, n, x);
    if (xs.rank > LUTHIER_MAX_RANK || na > xs.rank) LUTHIER_ONNX__UNSUP("rank %d with %d axes", xs.rank, na);
    if (!xs.isf) LUTHIER_ONNX__UNSUP("integer input computed at run time (reductions run on f32)");
    luthier_onnx__typed(&d, LUTHIER_OP_REDUCE);
    d.attr.reduce.kind = luthier_onnx__reduces[r].kind;
    d.attr.reduce.keepdims = keepdims != 0;
    d.attr.reduce.num_axes = na > 0 ? na : 0;
    for (k = 0; k < na; k++) {
        if (!luthier_onnx__norm_axis(axes[k], xs.rank, &ax)) LUTHIER_ONNX__BAD("axis %lld out of range", (long long)axes[k]);
        d.attr.reduce.axes[k] = (int)ax;
        hw |= ax == 2 ? 1 : ax == 3 ? 2 : 4;
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &cur));
    if (luthier_onnx__reduces[r].kind == LUTHIER_REDUCE_MEAN && xs.rank == 4 && na == 2 && hw == 3)
        return luthier_onnx__reduce_as_pool(c, n, cur, keepdims, &xs);
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_REDUCE, &cur, 1);
}

/* Resize (opsets 10..19) and Upsample (7..9) -> resize. Scales or sizes come from constant
   inputs (Upsample 7: the scales attribute); axes (opset 18) lists the axes they cover. */

/* Resize's string attributes into d (opset >= 11). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__resize_modes(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_resize_attrs *a) {
    static const char *const modes[3] = {"nearest", "linear", "cubic"};
    static const char *const coords[6] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
                                          "tf_half_pixel_for_nn"};
    static const char *const nearest[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *ctm = luthier_onnx__as(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = luthier_onnx__as(n, "nearest_mode", "round_prefer_floor");
    const char *kar = luthier_onnx__as(n, "keep_aspect_ratio_policy", "stretch");
    int64_t ex = luthier_onnx__ai(n, "exclude_outside", 0);
    if ((a->mode = luthier_onnx__pick(luthier_onnx__as(n, "mode", "nearest"), modes, 3)) < 0)
        LUTHIER_ONNX__BAD("mode '%s' is not nearest, linear or cubic", luthier_onnx__as(n, "mode", "nearest"));
    if (!strcmp(ctm, "tf_crop_and_resize")) LUTHIER_ONNX__UNSUP("coordinate_transformation_mode tf_crop_and_resize is not supported");
    if ((a->coord = luthier_onnx__pick(ctm, coords, 6)) < 0) LUTHIER_ONNX__BAD("unknown coordinate_transformation_mode '%s'", ctm);
    if ((a->nearest_mode = luthier_onnx__pick(nm, nearest, 4)) < 0) LUTHIER_ONNX__BAD("unknown nearest_mode '%s'", nm);
    if (strcmp(kar, "stretch"))
        LUTHIER_ONNX__UNSUP("keep_aspect_ratio_policy '%s' is not supported (only stretch)", kar);
    if (luthier_onnx__ai(n, "antialias", 0)) LUTHIER_ONNX__UNSUP("antialias is not supported");
    if (ex != 0 && ex != 1) LUTHIER_ONNX__BAD("exclude_outside %lld is not 0 or 1", (long long)ex);
    a->exclude_outside = (int)ex;
    a->cubic_coeff_a = luthier_onnx__af(n, "cubic_coeff_a", -0.75f);
    return LUTHIER_STATUS_OK;
}

/* The axes Resize's scales or sizes cover (all when absent): ax[k] for entry k. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__resize_axes(luthier_onnx__ctx *c, const luthier_onnx__node *n, int rank, int *ax, int *count) {
    const int64_t *p;
    int np = luthier_onnx__aints(n, "axes", &p), k, seen = 0;
    int64_t v;
    if (np < 0) {
        for (k = 0; k < rank; k++) ax[k] = k;
        *count = rank;
        return LUTHIER_STATUS_OK;
    }
    if (np < 1 || np > rank) LUTHIER_ONNX__BAD("axes has %d entries for rank %d", np, rank);
    for (k = 0; k < np; k++) {
        if (!luthier_onnx__norm_axis(p[k], rank, &v) || (seen >> v & 1)) LUTHIER_ONNX__BAD("axes[%d] = %lld is out of range or repeated", k, (long long)p[k]);
        seen |= 1 << v;
        ax[k] = (int)v;
    }
    *count = np;
    return LUTHIER_STATUS_OK;
}

/* Scales (float) or sizes (integers) of Resize / Upsample into a's per-axis arrays. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__resize_amounts(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *xs,
                                                            int ks, int upsample, luthier_resize_attrs *a) {
    const luthier_onnx__tensor *sc = NULL, *sz = NULL;
    const float *sp = NULL;
    int ns = -1, ax[LUTHIER_ONNX_MAX_RANK], na = 0, k;
    LUTHIER_ONNX__TRY(luthier_onnx__resize_axes(c, n, xs->rank, ax, &na));
    if (ks < 0) { /* Upsample 7: attribute */
        const luthier_onnx__attr *at = luthier_onnx__attr_get(n, "scales");
        if (!at || !at->nfloats) LUTHIER_ONNX__BAD("the scales attribute is missing");
        ns = at->nfloats;
        sp = at->floats;
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__const_f(c, n, ks, "scales", &sc));
        if (sc && sc->n) ns = (int)sc->n, sp = sc->f;
        if (ks == 2 && n->nin > 3 && *n->in[3]) LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 3, "sizes", &sz)); /* opset >= 11 */
        if (sz && !sz->n) sz = NULL;
    }
    if (sp && sz) LUTHIER_ONNX__BAD("scales and sizes are both given (one of them must be empty)");
    if (!sp && !sz) LUTHIER_ONNX__BAD("neither scales nor sizes is given");
    if ((sp ? ns : (int)sz->n) != na)
        LUTHIER_ONNX__BAD("%d %s for %d axes (input rank %d)", sp ? ns : (int)sz->n, sp ? "scales" : "sizes", na, xs->rank);
    for (k = 0; k < xs->rank; k++) a->scales[k] = 1.0f, a->sizes[k] = sz ? xs->d[k] : 0;
    for (k = 0; k < na; k++) {
        if (sp && !(sp[k] > 0 && sp[k] <= 1e30f)) LUTHIER_ONNX__BAD("scale %d is %g: scales must be positive and finite", k, (double)sp[k]);
        if (sp && upsample && sp[k] < 1) LUTHIER_ONNX__BAD("scale %d is %g: Upsample scales must be >= 1", k, (double)sp[k]);
        if (sz && (sz->i[k] < 1 || sz->i[k] > ((int64_t)1 << 40))) LUTHIER_ONNX__BAD("size %d is %lld: sizes must be in [1, 2^40]", k, (long long)sz->i[k]);
        if (sp) a->scales[ax[k]] = sp[k];
        else a->sizes[ax[k]] = sz->i[k];
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_resize(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const int upsample = luthier_onnx__isop(n, "Upsample"), old = upsample || c->opset < 11;
    luthier_resize_attrs *a = &d.attr.resize;
    luthier_onnx__typed(&d, LUTHIER_OP_RESIZE);
    if (old) { /* Upsample and Resize 10: asymmetric coordinates, nearest truncates when upsampling, rounds up when downsampling */
        const char *m = luthier_onnx__as(n, "mode", "nearest");
        int up = 0, down = 0;
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, upsample && c->opset < 9 ? "mode,scales" : "mode"));
        if (strcmp(m, "nearest") && strcmp(m, "linear")) LUTHIER_ONNX__BAD("mode '%s' is not nearest or linear", m);
        a->mode = strcmp(m, "nearest") ? LUTHIER_RESIZE_LINEAR : LUTHIER_RESIZE_NEAREST;
        a->coord = LUTHIER_RESIZE_ASYMMETRIC;
        LUTHIER_ONNX__TRY(luthier_onnx__resize_amounts(c, n, &xs, upsample && c->opset < 9 ? -1 : 1, upsample, a));
        for (k = 0; k < xs.rank; k++) up |= a->scales[k] > 1, down |= a->scales[k] < 1;
        if (up && down && a->mode == LUTHIER_RESIZE_NEAREST)
            LUTHIER_ONNX__UNSUP("nearest with scales both above and below 1 (opset 10 rounds them differently)");
        a->nearest_mode = down ? LUTHIER_RESIZE_CEIL : LUTHIER_RESIZE_FLOOR;
    } else {
        LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 18 ? "mode,coordinate_transformation_mode,cubic_coeff_a,exclude_outside,"
                                                                           "extrapolation_value,nearest_mode"
                                                                         : "mode,coordinate_transformation_mode,cubic_coeff_a,exclude_outside,"
                                                                           "extrapolation_value,nearest_mode,axes,keep_aspect_ratio_policy,antialias"));
        LUTHIER_ONNX__TRY(luthier_onnx__resize_modes(c, n, a));
        LUTHIER_ONNX__TRY(luthier_onnx__resize_amounts(c, n, &xs, 2, 0, a));
    }
    if (xs.rank < 1) LUTHIER_ONNX__UNSUP("a scalar input");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_RESIZE, &xt, 1);
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_depth_space(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const int d2s = luthier_onnx__isop(n, "DepthToSpace");
    const int64_t b = luthier_onnx__ai(n, "blocksize", 0);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, d2s ? "blocksize,mode" : "blocksize"));
    if (!luthier_onnx__attr_get(n, "blocksize")) LUTHIER_ONNX__BAD("the blocksize attribute is missing");
    if (xs.rank != 4) LUTHIER_ONNX__UNSUP("input rank %d (only [N,C,H,W])", xs.rank);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    d.typed = 1;
    if (d2s) {
        const char *m = luthier_onnx__as(n, "mode", "DCR");
        if (strcmp(m, "DCR") && strcmp(m, "CRD")) LUTHIER_ONNX__BAD("mode '%s' is not DCR or CRD", m);
        d.attr.depth_to_space.blocksize = b;
        d.attr.depth_to_space.mode = strcmp(m, "DCR") ? LUTHIER_DEPTH_TO_SPACE_CRD : LUTHIER_DEPTH_TO_SPACE_DCR;
    } else {
        d.attr.space_to_depth.blocksize = b;
    }
    return luthier_onnx__emit_out(c, n, &d, arg->op, &xt, 1);
}

/* Pad (constant, reflect, edge, wrap; negative pads crop) -> pad. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_pad(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    static const char *const modes[4] = {"constant", "reflect", "edge", "wrap"};
    const char *mode = luthier_onnx__as(n, "mode", "constant");
    const int64_t *pp;
    int64_t axes[LUTHIER_ONNX_MAX_RANK];
    int np, na = xs.rank, any = 0, seen = 0;
    float value = 0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 11 ? "mode,pads,value" : "mode"));
    luthier_onnx__typed(&d, LUTHIER_OP_PAD);
    if ((d.attr.pad.mode = luthier_onnx__pick(mode, modes, 4)) < 0) LUTHIER_ONNX__BAD("mode '%s' is not constant, reflect, edge or wrap", mode);
    for (k = 0; k < xs.rank; k++) axes[k] = k;
    if (c->opset < 11) {
        np = luthier_onnx__aints(n, "pads", &pp);
        value = luthier_onnx__af(n, "value", 0.0f);
    } else {
        const luthier_onnx__tensor *t, *at;
        int has;
        if (c->opset < 18 && n->nin > 3 && *n->in[3]) LUTHIER_ONNX__BAD("the axes input is defined from opset 18");
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "pads", &t));
        LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 3, "axes", &at));
        np = t ? (int)t->n : -1;
        pp = t ? t->i : NULL;
        if (at) {
            if (at->n < 1 || at->n > (size_t)xs.rank) LUTHIER_ONNX__BAD("axes has %zu entries for rank %d", at->n, xs.rank);
            for (na = 0; na < (int)at->n; na++)
                if (!luthier_onnx__norm_axis(at->i[na], xs.rank, &axes[na]) || (seen >> axes[na] & 1))
                    LUTHIER_ONNX__BAD("axes[%d] = %lld is out of range or repeated", na, (long long)at->i[na]);
                else seen |= 1 << axes[na];
        }
        LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 2, &value, &has));
    }
    if (np != 2 * na) LUTHIER_ONNX__BAD("%d pads for %d axes", np, na);
    for (k = 0; k < na; k++) {
        if (pp[k] < -((int64_t)1 << 40) || pp[k] > ((int64_t)1 << 40) || pp[k + na] < -((int64_t)1 << 40) || pp[k + na] > ((int64_t)1 << 40))
            LUTHIER_ONNX__BAD("pads of axis %lld are out of range", (long long)axes[k]);
        d.attr.pad.begin[axes[k]] = pp[k];
        d.attr.pad.end[axes[k]] = pp[k + na];
        any |= pp[k] || pp[k + na];
    }
    d.attr.pad.value = value;
    if (!any) return luthier_onnx__alias(c, n, x);
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &xt));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_PAD, &xt, 1);
}

/* Expand of a run-time tensor: x * ones(shape), the engine's broadcasting multiply (exact for every
   value, -0 and NaN included; the ones are a constant of the target shape, broadcast back where
   x's own dims are larger). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_expand(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__tensor *sh;
    int64_t dims[LUTHIER_ONNX_MAX_RANK] = {0}, od[LUTHIER_ONNX_MAX_RANK];
    int r2, zt;
    float *z;
    size_t n0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "shape", &sh));
    if (!sh || sh->n > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("needs a constant shape of rank <= %d", LUTHIER_MAX_RANK);
    if (!xs.isf) LUTHIER_ONNX__UNSUP("integer input computed at run time (the engine expands f32)");
    for (k = 0; k < (int)sh->n; k++) {
        if (sh->i[k] < 1) LUTHIER_ONNX__UNSUP("shape entry %lld (empty or negative)", (long long)sh->i[k]);
        dims[k] = sh->i[k];
    }
    if (!luthier_onnx__bcast(xs.rank, xs.d, (int)sh->n, dims, &r2, od)) LUTHIER_ONNX__BAD("shapes do not broadcast");
    n0 = luthier_onnx__numel((int)sh->n, dims);
    if (n0 > LUTHIER_ONNX__MAX_ELEMS) LUTHIER_ONNX__UNSUP("target shape too large");
    if (!(z = (float *)luthier_onnx__alloc(c, (n0 ? n0 : 1) * sizeof(float)))) LUTHIER_ONNX__OOM();
    for (k = 0; k < (int)(n0 ? n0 : 1); k++) z[k] = 1.0f;
    LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "ones", (int)sh->n, dims, z, &zt));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    in[1] = zt;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_MUL, in, 2);
}

/* Tile's output dims od from the input's (rank, xd) and the constant repeats rp (one per axis,
   each >= 1, or >= 0 with zero_ok), refused when the output has more than limit elements. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__tile_dims(luthier_onnx__ctx *c, const luthier_onnx__node *n, int rank, const int64_t *xd,
                                                       const luthier_onnx__tensor *rp, int zero_ok, size_t limit, int64_t *od) {
    size_t total = 1;
    int ax;
    if (!rp || (int)rp->n != rank) LUTHIER_ONNX__BAD("repeats must be a constant of %d values (the input's rank)", rank);
    for (ax = 0; ax < rank; ax++) {
        const int64_t r = rp->i[ax];
        if (r < 0) LUTHIER_ONNX__BAD("repeats %lld on axis %d: negative", (long long)r, ax);
        if (r == 0 && !zero_ok) LUTHIER_ONNX__UNSUP("repeats 0 on axis %d: an empty output (supported on constants only)", ax);
        if (xd[ax] && (r > INT64_MAX / xd[ax] || (total && (uint64_t)(xd[ax] * r) > limit / total))) {
            char sx[96];
            luthier_onnx__dims_str(rank, xd, sx, sizeof sx);
            LUTHIER_ONNX__UNSUP("repeats %lld on axis %d of %s: the output has more than %zu elements", (long long)r, ax, sx, limit);
        }
        od[ax] = xd[ax] * r;
        total *= (size_t)od[ax];
    }
    return LUTHIER_STATUS_OK;
}

/* Tile of a constant: any repeats, the output a constant of at most LUTHIER_ONNX__MAX_ELEMS. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__fold_tile(const luthier_onnx__foldargs *arg) {
    LUTHIER_ONNX__FOLD_ARGS;
    const luthier_onnx__tensor *rp;
    int64_t od[LUTHIER_ONNX_MAX_RANK];
    size_t row, rows, len, j, reps;
    int k;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "repeats", &rp));
    LUTHIER_ONNX__TRY(luthier_onnx__tile_dims(c, n, xc->rank, xc->dims, rp, 1, LUTHIER_ONNX__MAX_ELEMS, od));
    LUTHIER_ONNX__TLIKE(t, xc, xc->rank, od);
    *arg->res = t;
    if (xc->rank == 0) luthier_onnx__tcopy(t, 0, xc, 0, 1); /* no repeats: the scalar itself */
    if (t->n == 0 || xc->rank == 0) return LUTHIER_STATUS_OK;
    len = (size_t)xc->dims[xc->rank - 1];
    reps = (size_t)rp->i[xc->rank - 1];
    rows = t->n / (len * reps);
    for (row = 0; row < rows; row++) { /* output row -> input row: each index modulo the input's dim */
        size_t rest = row, src = 0, stride = 1;
        for (k = xc->rank - 2; k >= 0; k--) {
            src += (rest % (size_t)od[k]) % (size_t)xc->dims[k] * stride;
            rest /= (size_t)od[k];
            stride *= (size_t)xc->dims[k];
        }
        for (j = 0; j < reps; j++) luthier_onnx__tcopy(t, (row * reps + j) * len, xc, src * len, len);
    }
    return LUTHIER_STATUS_OK;
}

/* cur repeated r >= 2 times along axis ax into *out (named name, or a helper step when NULL):
   concats of at most 64 inputs, r = 64 q + m as q copies of a 64-fold concat, then m more. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__repeat(luthier_onnx__ctx *c, const luthier_onnx__node *n, int cur, int64_t r, int ax,
                                                    const char *name, int *out) {
    luthier_node_desc d;
    int in[64], m = 0, block;
    if (r > 64) {
        LUTHIER_ONNX__TRY(luthier_onnx__repeat(c, n, cur, 64, ax, NULL, &block));
        if (r % 64 == 0) return luthier_onnx__repeat(c, n, block, r / 64, ax, name, out);
        if (r / 64 > 1) LUTHIER_ONNX__TRY(luthier_onnx__repeat(c, n, block, r / 64, ax, NULL, &block));
        in[m++] = block;
        r %= 64;
    }
    while (r-- > 0) in[m++] = cur;
    memset(&d, 0, sizeof d);
    d.op = LUTHIER_OP_CONCAT;
    d.axis = ax;
    d.inputs = in;
    d.num_inputs = m;
    return name ? luthier_onnx__emit(c, n, &d, name, out) : luthier_onnx__step(c, n, &d, "tile", out);
}

/* Tile of a run-time tensor: along each axis with repeats r > 1, r copies concatenated; the
   output at most 2^40 elements. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_tile(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__tensor *rp;
    int64_t od[LUTHIER_ONNX_MAX_RANK];
    int cur, last = -1, ax;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, 1, "repeats", &rp));
    LUTHIER_ONNX__TRY(luthier_onnx__tile_dims(c, n, xs.rank, xs.d, rp, 0, (size_t)1 << 40, od));
    for (ax = 0; ax < xs.rank; ax++)
        if (rp->i[ax] > 1) last = ax;
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &cur));
    if (last < 0) return luthier_onnx__alias(c, n, x);
    for (ax = 0; ax <= last; ax++)
        if (rp->i[ax] > 1) LUTHIER_ONNX__TRY(luthier_onnx__repeat(c, n, cur, rp->i[ax], ax, ax == last ? oname : NULL, &cur));
    return luthier_onnx__setout(c, n, 0, cur);
}

/* ---- indexing: GatherElements, GatherND, ScatterND, ScatterElements (and Scatter, opsets 9-10)
   -> the engine's operators of the same names. Indices are int64 (int32 constants are widened);
   reduction add/mul from opset 16, max/min from opset 18. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_index(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    static const char *const reductions[5] = {"none", "add", "mul", "max", "min"};
    const int scatter = arg->op == LUTHIER_OP_SCATTER_ND || arg->op == LUTHIER_OP_SCATTER_ELEMENTS;
    const int elems = arg->op == LUTHIER_OP_GATHER_ELEMENTS || arg->op == LUTHIER_OP_SCATTER_ELEMENTS;
    const char *rs = luthier_onnx__as(n, "reduction", "none");
    const int64_t bd = luthier_onnx__ai(n, "batch_dims", 0);
    luthier_onnx__val *iv = luthier_onnx__in(c, n, 1);
    int64_t ax = 0;
    int red = 0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, elems ? (scatter ? "axis,reduction" : "axis") : scatter ? "reduction" : "batch_dims"));
    if (scatter && (red = luthier_onnx__pick(rs, reductions, 5)) < 0) LUTHIER_ONNX__BAD("reduction '%s' is not none, add, mul, max or min", rs);
    if (red && c->opset < (red >= 3 ? 18 : 16))
        LUTHIER_ONNX__BAD("reduction '%s' is defined from opset %d (the model imports opset %lld)", rs, red >= 3 ? 18 : 16, (long long)c->opset);
    if (elems && !luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    if (bd < 0 || bd >= LUTHIER_MAX_RANK) LUTHIER_ONNX__BAD("batch_dims %lld is out of range", (long long)bd);
    if (!iv) LUTHIER_ONNX__BAD("indices are missing");
    if (iv->c && !iv->c->i) LUTHIER_ONNX__BAD("indices must be integers");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 1, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, iv, 0, &in[1]));
    if (scatter) LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, luthier_onnx__in(c, n, 2), 1, &in[2]));
    d.typed = 1;
    if (arg->op == LUTHIER_OP_GATHER_ELEMENTS) d.attr.gather_elements.axis = (int)ax;
    if (arg->op == LUTHIER_OP_SCATTER_ELEMENTS) d.attr.scatter_elements.axis = (int)ax, d.attr.scatter_elements.reduction = red;
    if (arg->op == LUTHIER_OP_SCATTER_ND) d.attr.scatter_nd.reduction = red;
    if (arg->op == LUTHIER_OP_GATHER_ND) d.attr.gather_nd.batch_dims = (int)bd;
    return luthier_onnx__emit_out(c, n, &d, arg->op, in, scatter ? 3 : 2);
}

/* ---- Einsum ----------------------------------------------------------------------------------------
   One or two operands, lowered to engine steps: each operand first sums the labels that appear in
   no other term (reduce); one operand is then transposed to the output's order; two become
   A [batch, M, K] and B [batch, K, N] (transpose + reshape; B as [batch, N, K] with trans_b when it
   is already in that order), a matmul, and a reshape + transpose to the output's labels. "..."
   stands for the operands' leading broadcast dims (aligned from the right; sizes must be equal).
   Refused, naming the equation: more than two operands, a label twice in one term (diagonals),
   dims that broadcast (size 1 against another size). Label ids: a-z 0..25, A-Z 26..51, the
   ellipsis dims 52.. */
#define LUTHIER_ONNX__EQ_MAX 128 /* characters of an equation */
#define LUTHIER_ONNX__LABELS (52 + LUTHIER_MAX_RANK)

typedef struct luthier_onnx__eop {
    int t;                          /* engine tensor */
    int n;                          /* labels */
    int lab[LUTHIER_MAX_RANK];
    int64_t dim[LUTHIER_MAX_RANK];
} luthier_onnx__eop;

/* One term from eq[*pos] up to a character that is not a label, space or "...": labels into lab
   (*ell: where "..." stood, -1 none). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__eterm(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *eq, int *pos,
                                                   int *lab, int *nlab, int *ell) {
    *nlab = 0;
    *ell = -1;
    for (;;) {
        const char ch = eq[*pos];
        if (ch == ' ') {
            (*pos)++;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            if (*nlab >= LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("equation '%s': a term has more than %d labels", eq, LUTHIER_MAX_RANK);
            lab[(*nlab)++] = ch >= 'a' ? ch - 'a' : 26 + ch - 'A';
            (*pos)++;
        } else if (ch == '.') {
            if (eq[*pos + 1] != '.' || eq[*pos + 2] != '.' || *ell >= 0)
                LUTHIER_ONNX__BAD("equation '%s': position %d: a term holds at most one '...' and no other '.'", eq, *pos);
            *ell = *nlab;
            *pos += 3;
        } else {
            return LUTHIER_STATUS_OK;
        }
    }
}

/* lab (nlab labels, "..." at ell, -1: none) with the ellipsis expanded to ne dims, the ids
   52 + E - ne .. 52 + E - 1 (aligned from the right). */
LUTHIER_ONNX__FN int luthier_onnx__eexpand(const int *lab, int nlab, int ell, int ne, int E, int *out) {
    int k, i, j = 0;
    for (k = 0; k <= nlab; k++) {
        if (k == ell)
            for (i = 0; i < ne; i++) out[j++] = 52 + E - ne + i;
        if (k < nlab) out[j++] = lab[k];
    }
    return j;
}

/* The equation's terms for the node's operands (shapes sh) into op (labels, dims), the output's
   labels into out. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__einsum_parse(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *eq,
                                                          const luthier_onnx__shape *sh, luthier_onnx__eop *op, int *out, int *nout) {
    int lab[3][LUTHIER_MAX_RANK], nl[3], ell[3], pos = 0, k, j, E = 0, uses[LUTHIER_ONNX__LABELS] = {0};
    int64_t size[LUTHIER_ONNX__LABELS];
    for (k = 0; k < n->nin; k++) {
        LUTHIER_ONNX__TRY(luthier_onnx__eterm(c, n, eq, &pos, lab[k], &nl[k], &ell[k]));
        if (eq[pos] != (k + 1 < n->nin ? ',' : eq[pos] == '-' ? '-' : '\0'))
            LUTHIER_ONNX__BAD("equation '%s': position %d: expected %s", eq, pos, k + 1 < n->nin ? "',' (one term per operand)" : "'->' or the end");
        if (eq[pos] == ',') pos++;
        if (ell[k] < 0 ? nl[k] != sh[k].rank : nl[k] > sh[k].rank)
            LUTHIER_ONNX__BAD("equation '%s': term %d has %d labels for an operand of rank %d", eq, k, nl[k], sh[k].rank);
        if (ell[k] >= 0 && sh[k].rank - nl[k] > E) E = sh[k].rank - nl[k];
    }
    for (k = 0; k < n->nin; k++) {
        op[k].n = luthier_onnx__eexpand(lab[k], nl[k], ell[k], sh[k].rank - nl[k], E, op[k].lab);
        for (j = 0; j < op[k].n; j++) op[k].dim[j] = sh[k].d[j], uses[op[k].lab[j]]++;
    }
    if (eq[pos] == '-') {
        if (eq[++pos] != '>') LUTHIER_ONNX__BAD("equation '%s': position %d: '-' without '>'", eq, pos);
        pos++;
        LUTHIER_ONNX__TRY(luthier_onnx__eterm(c, n, eq, &pos, lab[2], &nl[2], &ell[2]));
        if (eq[pos]) LUTHIER_ONNX__BAD("equation '%s': position %d: unexpected '%c'", eq, pos, eq[pos]);
        if (nl[2] + (ell[2] >= 0 ? E : 0) > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("equation '%s': output rank above %d", eq, LUTHIER_MAX_RANK);
        *nout = luthier_onnx__eexpand(lab[2], nl[2], ell[2], E, E, out);
    } else { /* implicit: the broadcast dims, then the labels used once in ASCII order */
        for (*nout = 0; *nout < E; (*nout)++) out[*nout] = 52 + *nout;
        for (j = 26; j < 78; j++) {
            if (uses[j % 52] != 1) continue;
            if (*nout >= LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("equation '%s': output rank above %d", eq, LUTHIER_MAX_RANK);
            out[(*nout)++] = j % 52;
        }
    }
    for (j = 0; j < LUTHIER_ONNX__LABELS; j++) size[j] = -1;
    for (k = 0; k < n->nin; k++)
        for (j = 0; j < op[k].n; j++) {
            int64_t *s = &size[op[k].lab[j]];
            int i;
            for (i = 0; i < j; i++)
                if (op[k].lab[i] == op[k].lab[j]) LUTHIER_ONNX__UNSUP("equation '%s': a label twice in term %d (diagonals are not supported)", eq, k);
            if (*s >= 0 && *s != op[k].dim[j])
                return luthier_onnx__nfail(c, n, *s == 1 || op[k].dim[j] == 1 ? LUTHIER_STATUS_UNSUPPORTED : LUTHIER_STATUS_INVALID_ARGUMENT,
                                           "equation '%s': a label stands for sizes %lld and %lld (broadcasting is not supported)", eq,
                                           (long long)*s, (long long)op[k].dim[j]);
            *s = op[k].dim[j];
        }
    for (j = 0; j < *nout; j++) {
        int i;
        if (size[out[j]] < 0) LUTHIER_ONNX__BAD("equation '%s': output label %d appears in no operand", eq, j);
        for (i = 0; i < j; i++)
            if (out[i] == out[j]) LUTHIER_ONNX__BAD("equation '%s': output label %d is repeated", eq, j);
    }
    return LUTHIER_STATUS_OK;
}

/* Sums o over the labels keep[] does not hold (a reduce step). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__eop_reduce(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__eop *o,
                                                        const int *keep) {
    luthier_node_desc d;
    int k, j = 0;
    memset(&d, 0, sizeof d);
    luthier_onnx__typed(&d, LUTHIER_OP_REDUCE);
    d.attr.reduce.kind = LUTHIER_REDUCE_SUM;
    d.attr.reduce.keepdims = 0;
    for (k = 0; k < o->n; k++) {
        if (!keep[o->lab[k]]) d.attr.reduce.axes[d.attr.reduce.num_axes++] = k;
        else o->lab[j] = o->lab[k], o->dim[j++] = o->dim[k];
    }
    if (!d.attr.reduce.num_axes) return LUTHIER_STATUS_OK;
    o->n = j;
    luthier_onnx__set_op(&d, LUTHIER_OP_REDUCE, &o->t, 1);
    return luthier_onnx__step(c, n, &d, "einsum_sum", &o->t);
}

/* Transposes o to the label order ord (cnt labels, o's own). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__eop_order(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__eop *o,
                                                       const int *ord) {
    luthier_node_desc d;
    luthier_onnx__eop t = *o;
    int perm[LUTHIER_MAX_RANK], k, j, moved = 0;
    for (k = 0; k < o->n; k++) {
        for (j = 0; o->lab[j] != ord[k]; j++) {
        }
        perm[k] = j, moved |= j != k;
        t.lab[k] = o->lab[j], t.dim[k] = o->dim[j];
    }
    if (!moved) return LUTHIER_STATUS_OK;
    memset(&d, 0, sizeof d);
    luthier_onnx__set_op(&d, LUTHIER_OP_TRANSPOSE, &o->t, 1);
    d.perm = perm;
    LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "einsum_transpose", &t.t));
    *o = t;
    return LUTHIER_STATUS_OK;
}

/* The labels of o in category cat (of cats[]) into ord from *k on, in the order of ref's labels. */
LUTHIER_ONNX__FN void luthier_onnx__eorder(const int *ref, int nref, const int *cats, int cat, int *ord, int *k, int64_t *prod,
                                          const int64_t *size) {
    int j;
    *prod = 1;
    for (j = 0; j < nref; j++)
        if (cats[ref[j]] == cat) ord[(*k)++] = ref[j], *prod *= size[ref[j]];
}

/* Two operands (reduced): batch (both and the output, cat 1), M (A and the output, 2), N (B and
   the output, 3), K (both, 4) -> A [Bt, M, K] @ B [Bt, K, N] -> [batch.., M.., N..] in o[0]. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__einsum_matmul(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__eop *o,
                                                           const int *out, int nout) {
    int cats[LUTHIER_ONNX__LABELS] = {0}, inout[LUTHIER_ONNX__LABELS] = {0}, oa[LUTHIER_MAX_RANK], ob[LUTHIER_MAX_RANK];
    int64_t size[LUTHIER_ONNX__LABELS], bt, m, nn, kk, sa[3], sb[3], dims[LUTHIER_MAX_RANK];
    int k, j, na = 0, nb = 0, trans_b = 1, in[2], nd = 0;
    luthier_node_desc d;
    for (k = 0; k < nout; k++) inout[out[k]] = 1;
    for (k = 0; k < 2; k++)
        for (j = 0; j < o[k].n; j++) cats[o[k].lab[j]] |= 1 << k, size[o[k].lab[j]] = o[k].dim[j];
    for (k = 0; k < LUTHIER_ONNX__LABELS; k++) cats[k] = cats[k] == 3 ? (inout[k] ? 1 : 4) : cats[k] == 1 ? 2 : cats[k] == 2 ? 3 : 0;
    luthier_onnx__eorder(out, nout, cats, 1, oa, &na, &bt, size);
    luthier_onnx__eorder(out, nout, cats, 2, oa, &na, &m, size);
    luthier_onnx__eorder(o[0].lab, o[0].n, cats, 4, oa, &na, &kk, size);
    luthier_onnx__eorder(out, nout, cats, 1, ob, &nb, &bt, size);
    luthier_onnx__eorder(out, nout, cats, 3, ob, &nb, &nn, size);
    luthier_onnx__eorder(o[0].lab, o[0].n, cats, 4, ob, &nb, &kk, size);
    for (k = 0; k < o[1].n && trans_b; k++) trans_b = o[1].lab[k] == ob[k]; /* B is [batch, N, K] already */
    if (!trans_b) {
        nb = 0;
        luthier_onnx__eorder(out, nout, cats, 1, ob, &nb, &bt, size);
        luthier_onnx__eorder(o[0].lab, o[0].n, cats, 4, ob, &nb, &kk, size);
        luthier_onnx__eorder(out, nout, cats, 3, ob, &nb, &nn, size);
    }
    LUTHIER_ONNX__TRY(luthier_onnx__eop_order(c, n, &o[0], oa));
    LUTHIER_ONNX__TRY(luthier_onnx__eop_order(c, n, &o[1], ob));
    sa[0] = sb[0] = bt, sa[1] = m, sa[2] = kk, sb[1] = trans_b ? nn : kk, sb[2] = trans_b ? kk : nn;
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, o[0].t, 3, sa, NULL, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, o[1].t, 3, sb, NULL, &in[1]));
    memset(&d, 0, sizeof d);
    luthier_onnx__set_op(&d, LUTHIER_OP_MATMUL, in, 2);
    d.trans_b = trans_b;
    LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "einsum_matmul", &o[0].t));
    o[0].n = 0;
    for (j = 1; j <= 3; j++)
        for (k = 0; k < nout; k++)
            if (cats[out[k]] == j) o[0].lab[o[0].n] = out[k], o[0].dim[o[0].n++] = dims[nd++] = size[out[k]];
    return luthier_onnx__reshape_to(c, n, o[0].t, nd, dims, NULL, &o[0].t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_einsum(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const char *eq = luthier_onnx__as(n, "equation", NULL);
    luthier_onnx__shape sh[2];
    luthier_onnx__eop op[2];
    int out[LUTHIER_MAX_RANK], nout = 0, keep[LUTHIER_ONNX__LABELS];
    int64_t dims[LUTHIER_MAX_RANK];
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "equation"));
    if (!eq) LUTHIER_ONNX__BAD("the equation attribute is missing");
    for (k = 0; eq[k]; k++)
        if (k >= LUTHIER_ONNX__EQ_MAX || eq[k] < ' ' || eq[k] > '~')
            LUTHIER_ONNX__BAD("the equation is longer than %d characters or holds a byte outside printable ASCII", LUTHIER_ONNX__EQ_MAX);
    if (n->nin > 2) LUTHIER_ONNX__UNSUP("equation '%s': %d operands (one or two are supported)", eq, n->nin);
    for (k = 0; k < n->nin; k++) {
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        if (!v) LUTHIER_ONNX__BAD("operand %d is missing", k);
        luthier_onnx__vshape(c, v, &sh[k]);
        if (sh[k].rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("operand %d has rank %d (the engine takes up to %d)", k, sh[k].rank, LUTHIER_MAX_RANK);
    }
    LUTHIER_ONNX__TRY(luthier_onnx__einsum_parse(c, n, eq, sh, op, out, &nout));
    for (k = 0; k < n->nin; k++) {
        int j;
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, luthier_onnx__in(c, n, k), 1, &op[k].t));
        memset(keep, 0, sizeof keep);
        for (j = 0; j < nout; j++) keep[out[j]] = 1;
        for (j = 0; n->nin == 2 && j < op[1 - k].n; j++) keep[op[1 - k].lab[j]] = 1;
        LUTHIER_ONNX__TRY(luthier_onnx__eop_reduce(c, n, &op[k], keep));
    }
    if (n->nin == 2) LUTHIER_ONNX__TRY(luthier_onnx__einsum_matmul(c, n, op, out, nout));
    LUTHIER_ONNX__TRY(luthier_onnx__eop_order(c, n, &op[0], out));
    for (k = 0; k < nout; k++) dims[k] = op[0].dim[k];
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, op[0].t, nout, dims, oname, outs));
    return luthier_onnx__setout(c, n, 0, outs[0]);
}

/* GroupNormalization (opset 18): x [N, C, D...] in num_groups groups (luthier_onnx__norm_affine). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_group_norm(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const int64_t G = luthier_onnx__ai(n, "num_groups", 0);
    int64_t C;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "epsilon,num_groups"));
    if (!luthier_onnx__attr_get(n, "num_groups")) LUTHIER_ONNX__BAD("the num_groups attribute is missing");
    if (xs.rank < 2 || xs.rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("input rank %d (takes [N,C,D1,...])", xs.rank);
    C = xs.d[1];
    if (G < 1 || G > C || C % G) LUTHIER_ONNX__BAD("num_groups %lld must be >= 1 and divide the %lld channels", (long long)G, (long long)C);
    return luthier_onnx__norm_affine(arg, G);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_const_only(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    LUTHIER_ONNX__UNSUP("supported only on constants (an input is computed at run time here)");
}

/* ConstantOfShape of Shape(s) where s has a run-time length (>>onnx-lengths): where(s, v, v)
   has s's shape and length (s as f32 0/1 through a cast when it holds integers). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_const_of_shape(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__attr *va = luthier_onnx__attr_get(n, "value");
    const int64_t one = 1;
    luthier_tensor_info ti;
    if (!x->c || !x->c->lenmask || !x->c->lenwhole)
        LUTHIER_ONNX__UNSUP("needs a constant shape, or the whole shape of a tensor with a run-time length");
    if (va && (!va->t || va->t->n != 1 || (!va->t->f && !va->t->i))) LUTHIER_ONNX__UNSUP("value must be a one-element numeric tensor");
    in[0] = x->c->lentid;
    luthier_graph_tensor_info(c->g, in[0], &ti);
    if (ti.dtype != LUTHIER_DTYPE_F32) {
        d.op = LUTHIER_OP_CAST, d.typed = 1, d.attr.cast.to = LUTHIER_CAST_TO_BOOL, d.inputs = in, d.num_inputs = 1;
        LUTHIER_ONNX__TRY(luthier_onnx__step(c, n, &d, "cond", &in[0]));
        memset(&d, 0, sizeof d);
    }
    if (!va || va->t->f) {
        const float v = va ? va->t->f[0] : 0.0f;
        LUTHIER_ONNX__TRY(luthier_onnx__newconst(c, n, oname, "value", 1, &one, &v, &in[1]));
    } else {
        const char *name = luthier_onnx__uname(c, oname, "value");
        if (!name) LUTHIER_ONNX__OOM();
        if (luthier_graph_constant_i64(c->g, name, 1, &one, va->t->i, &in[1]) != LUTHIER_STATUS_OK)
            LUTHIER_ONNX__UNSUP("%s", luthier_graph_error(c->g));
    }
    in[2] = in[1];
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_WHERE, in, 3);
}

/* NonZero -> nonzero: i64 [rank, numel], the count a run-time length along axis 1. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_nonzero(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, ""));
    if (xs.rank < 1) LUTHIER_ONNX__UNSUP("a scalar input (the engine holds no rank-0 tensors)");
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, x, 0, &xt));
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_NONZERO, &xt, 1);
}

/* LSTM, GRU, RNN (opsets 7..; layout from 14) -> the engine's lstm, gru, rnn. W, R, B, P must be
   constants, sequence_lens a constant (lengths 1..seq); only the default
   activations (their alpha and beta lists are unused then). */
LUTHIER_ONNX__FN int luthier_onnx__streq_ci(const char *a, const char *b) {
    while (*a && *b && (*a | 0x20) == (*b | 0x20)) a++, b++;
    return *a == 0 && *b == 0;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__rnn_acts(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_op op, int dirs) {
    static const char *const defs[3][3] = {{"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh", ""}, {"Tanh", "", ""}};
    const luthier_onnx__attr *a = luthier_onnx__attr_get(n, "activations");
    const int row = op == LUTHIER_OP_LSTM ? 0 : op == LUTHIER_OP_GRU ? 1 : 2, per = 3 - row;
    int k;
    if (!a) return LUTHIER_STATUS_OK;
    if (a->nstrs != per * dirs) LUTHIER_ONNX__BAD("activations lists %d functions, the node takes %d", a->nstrs, per * dirs);
    for (k = 0; k < a->nstrs; k++)
        if (!luthier_onnx__streq_ci(a->strs[k], defs[row][k % per]))
            LUTHIER_ONNX__UNSUP("activation %d is '%s': only the defaults (%s%s%s%s%s) are supported", k, a->strs[k], defs[row][0],
                                per > 1 ? ", " : "", defs[row][1], per > 2 ? ", " : "", defs[row][2]);
    return LUTHIER_STATUS_OK;
}

/* The attributes into a (d's typed attributes); dirs receives the number of directions. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__rnn_attrs(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_op op,
                                                       luthier_rnn_attrs *a, int *dirs) {
    static const char *const dirnames[3] = {"forward", "reverse", "bidirectional"};
    const luthier_onnx__attr *clip = luthier_onnx__attr_get(n, "clip");
    const char *dn = luthier_onnx__as(n, "direction", "forward");
    const int64_t layout = luthier_onnx__ai(n, "layout", 0), lbr = luthier_onnx__ai(n, "linear_before_reset", 0);
    const int64_t inf = luthier_onnx__ai(n, "input_forget", 0);
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, op == LUTHIER_OP_LSTM ? "activation_alpha,activation_beta,activations,clip,direction,hidden_size,input_forget,layout"
                                                      : op == LUTHIER_OP_GRU ? "activation_alpha,activation_beta,activations,clip,direction,hidden_size,linear_before_reset,layout"
                                                                             : "activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout"));
    if (luthier_onnx__attr_get(n, "layout") && c->opset < 14) LUTHIER_ONNX__BAD("layout is an attribute from opset 14 (the model imports %lld)", (long long)c->opset);
    if ((a->direction = luthier_onnx__pick(dn, dirnames, 3)) < 0) LUTHIER_ONNX__BAD("unknown direction '%s'", dn);
    if (layout != 0 && layout != 1) LUTHIER_ONNX__BAD("layout %lld is not 0 or 1", (long long)layout);
    if (lbr != 0 && lbr != 1) LUTHIER_ONNX__BAD("linear_before_reset %lld is not 0 or 1", (long long)lbr);
    if (inf != 0 && inf != 1) LUTHIER_ONNX__BAD("input_forget %lld is not 0 or 1", (long long)inf);
    if (clip && !(clip->f > 0)) LUTHIER_ONNX__BAD("clip %g must be > 0", (double)clip->f);
    a->layout = (int)layout, a->linear_before_reset = (int)lbr, a->input_forget = (int)inf;
    a->has_clip = clip != NULL, a->clip = clip ? clip->f : 0.0f;
    *dirs = a->direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
    return luthier_onnx__rnn_acts(c, n, op, *dirs);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_rnn(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    static const char *const what[8] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
    const luthier_op op = arg->op;
    luthier_rnn_attrs *a = op == LUTHIER_OP_LSTM ? &d.attr.lstm : op == LUTHIER_OP_GRU ? &d.attr.gru : &d.attr.rnn;
    const luthier_onnx__val *rv = luthier_onnx__in(c, n, 2);
    int dirs, nin = 3;
    luthier_onnx__typed(&d, op);
    LUTHIER_ONNX__TRY(luthier_onnx__rnn_attrs(c, n, op, a, &dirs));
    /* hidden_size, when absent, is R's last dimension */
    a->hidden_size = luthier_onnx__ai(n, "hidden_size", rv && rv->c && rv->c->rank == 3 ? rv->c->dims[2] : 0);
    if (a->hidden_size < 1) LUTHIER_ONNX__BAD("hidden_size %lld must be >= 1", (long long)a->hidden_size);
    for (k = 0; k < 8; k++) {
        luthier_onnx__val *v = k < n->nin ? luthier_onnx__in(c, n, k) : NULL;
        in[k] = -1;
        if (!v) continue;
        if ((k == 1 || k == 2 || k == 3 || k == 4 || k == 7) && !v->c)
            LUTHIER_ONNX__UNSUP("input %d ('%s', %s) must be a constant (computed at run time here)", k, v->name, what[k]);
        if (k == 4 && !luthier_onnx__is_int(v->c)) LUTHIER_ONNX__BAD("sequence_lens '%s' must hold integers", v->name);
        LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, v, k != 4, &in[k]));
        nin = k + 1;
    }
    (void)dirs;
    return luthier_onnx__emit_outs(c, n, &d, op, in, nin, luthier_op_name(op), n->nout);
}

/* ---- the operators the loader maps ------------------------------------------------------------
   X(op_type, min inputs, max inputs, min outputs, max outputs, converter family, engine op, fold
   family, since opset, until opset): counts over the opsets the loader reads (the widest range of
   any opset: the converter checks the opset's own rules); luthier_onnx__cv_<family> converts the
   node, to engine operator LUTHIER_OP_<op> where one operator stands for it (COUNT: none, or
   several steps); luthier_onnx__fold_<fold> computes it at load time (>>onnx-fold). The model's
   default-domain opset must lie in [since, until] (until 0: the newest the loader reads). The first `min inputs` inputs
   are required and must be named; later ones are optional and may be "" (absent). Every node of
   one of these types is checked against its row before pattern matching, folding or conversion
   looks at its inputs. */
/* ---- index operators: ArgMax, ArgMin, TopK, CumSum, Trilu, NonMaxSuppression ---------------- */

/* Input k as a constant integer scalar (one element) into *out; absent: *out unchanged. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__int_scalar(luthier_onnx__ctx *c, const luthier_onnx__node *n, int k, const char *what,
                                                        int64_t *out) {
    const luthier_onnx__tensor *t;
    LUTHIER_ONNX__TRY(luthier_onnx__const_ints(c, n, k, what, &t));
    if (t && t->n == 0) return LUTHIER_STATUS_OK; /* empty: as absent (the ONNX reference) */
    if (t && t->n != 1) LUTHIER_ONNX__BAD("input %d (%s) has %zu values, it must be one", k, what, t->n);
    if (t) *out = t->i[0];
    return LUTHIER_STATUS_OK;
}

/* Input 0 for the engine: f32 (integer constants converted); integers computed at run time are
   refused. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__f32_input(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__val *x,
                                                       const luthier_onnx__shape *xs, int *tid) {
    if (!xs->isf && !x->c) LUTHIER_ONNX__UNSUP("input '%s' holds integers computed at run time (the operator runs on f32)", x->name);
    if (xs->rank > LUTHIER_MAX_RANK) LUTHIER_ONNX__UNSUP("rank %d is above the engine's %d", xs->rank, LUTHIER_MAX_RANK);
    return luthier_onnx__eng(c, n, x, 1, tid);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_argext(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_argmax_attrs *a = arg->op == LUTHIER_OP_ARGMAX ? &d.attr.argmax : &d.attr.argmin;
    int64_t ax;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "axis,keepdims,select_last_index"));
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", 0), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    LUTHIER_ONNX__TRY(luthier_onnx__f32_input(c, n, x, &xs, &xt));
    luthier_onnx__typed(&d, arg->op);
    a->axis = (int)ax;
    a->keepdims = luthier_onnx__ai(n, "keepdims", 1) != 0;
    a->select_last_index = luthier_onnx__ai(n, "select_last_index", 0) != 0;
    return luthier_onnx__emit_out(c, n, &d, arg->op, &xt, 1);
}

/* TopK's K = min(k, the run-time length of x along the axis) (>>onnx-lengths): the engine's TOPK
   with k over that length gives min(k, n) entries. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__topk_len_k(luthier_onnx__ctx *c, const luthier_onnx__node *n, const luthier_onnx__shape *xs,
                                                        int64_t ax, const luthier_onnx__tensor *K, int64_t *kk) {
    if (K->n != 1 || !K->i) LUTHIER_ONNX__BAD("input K has %zu values, it must be one", K->n);
    if (!K->lenmask[0] || xs->len_axis != ax || xs->len_root != luthier_onnx__root(c, K->lentid))
        LUTHIER_ONNX__UNSUP("K holds the run-time length of '%s', which is not x's along axis %lld", luthier_onnx__gname(c, K->lentid),
                            (long long)ax);
    *kk = K->i[0];
    return LUTHIER_STATUS_OK;
}

/* TopK: k from the attribute (opsets 1..9) or the constant input K (10..); largest and sorted
   from opset 11. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_topk(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax, kk = -1;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, c->opset < 10 ? "axis,k" : "axis,largest,sorted"));
    if (!luthier_onnx__norm_axis(luthier_onnx__ai(n, "axis", -1), xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    if (c->opset < 10) {
        if (!luthier_onnx__attr_get(n, "k")) LUTHIER_ONNX__BAD("the k attribute is missing");
        kk = luthier_onnx__ai(n, "k", -1);
    } else {
        luthier_onnx__val *kv = luthier_onnx__in(c, n, 1);
        if (!kv) LUTHIER_ONNX__BAD("input K is missing");
        if (!kv->c) LUTHIER_ONNX__UNSUP("input K ('%s') is computed at run time: the engine needs a constant k", kv->name);
        if (kv->c->lenmask) LUTHIER_ONNX__TRY(luthier_onnx__topk_len_k(c, n, &xs, ax, kv->c, &kk));
        else LUTHIER_ONNX__TRY(luthier_onnx__int_scalar(c, n, 1, "K", &kk));
    }
    if (kk == 0) LUTHIER_ONNX__UNSUP("k = 0 gives empty outputs, which the engine does not hold");
    if (kk < 0 || kk > xs.d[ax]) LUTHIER_ONNX__BAD("k %lld is not in [1, %lld]", (long long)kk, (long long)xs.d[ax]);
    LUTHIER_ONNX__TRY(luthier_onnx__f32_input(c, n, x, &xs, &xt));
    luthier_onnx__typed(&d, LUTHIER_OP_TOPK);
    d.attr.topk.k = kk;
    d.attr.topk.axis = (int)ax;
    d.attr.topk.largest = luthier_onnx__ai(n, "largest", 1) != 0;
    d.attr.topk.sorted = luthier_onnx__ai(n, "sorted", 1) != 0;
    return luthier_onnx__emit_outs(c, n, &d, LUTHIER_OP_TOPK, &xt, 1, "topk", 2);
}

/* CumSum: axis a constant input. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_cumsum(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t ax = 0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "exclusive,reverse"));
    if (!luthier_onnx__in(c, n, 1)) LUTHIER_ONNX__BAD("input axis is missing");
    LUTHIER_ONNX__TRY(luthier_onnx__int_scalar(c, n, 1, "axis", &ax));
    if (!luthier_onnx__norm_axis(ax, xs.rank, &ax)) LUTHIER_ONNX__BAD("axis out of range");
    LUTHIER_ONNX__TRY(luthier_onnx__f32_input(c, n, x, &xs, &xt));
    d.typed = 1;
    d.attr.cumsum.axis = (int)ax;
    d.attr.cumsum.exclusive = luthier_onnx__ai(n, "exclusive", 0) != 0;
    d.attr.cumsum.reverse = luthier_onnx__ai(n, "reverse", 0) != 0;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_CUMSUM, &xt, 1);
}

/* Trilu: k an optional constant input (default 0). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_trilu(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    int64_t kk = 0;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "upper"));
    LUTHIER_ONNX__TRY(luthier_onnx__int_scalar(c, n, 1, "k", &kk));
    if (xs.rank < 2) LUTHIER_ONNX__BAD("input rank %d: Trilu takes rank >= 2", xs.rank);
    LUTHIER_ONNX__TRY(luthier_onnx__f32_input(c, n, x, &xs, &xt));
    d.typed = 1;
    d.attr.trilu.upper = luthier_onnx__ai(n, "upper", 1) != 0;
    d.attr.trilu.k = kk;
    return luthier_onnx__emit_out(c, n, &d, LUTHIER_OP_TRILU, &xt, 1);
}

/* NonMaxSuppression: max_output_boxes_per_class, iou_threshold, score_threshold constant
   inputs; the engine's output 0 ([bound, 3], rows past the selections -1) is the ONNX output. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_nms(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    luthier_onnx__val *sv = luthier_onnx__in(c, n, 1);
    const int64_t cpb = luthier_onnx__ai(n, "center_point_box", 0);
    int64_t mx = 0;
    float iou = 0, st = 0;
    int has_iou, has_st;
    LUTHIER_ONNX__TRY(luthier_onnx__check_attrs(c, n, "center_point_box"));
    if (!sv) LUTHIER_ONNX__BAD("input scores is missing");
    if (cpb != 0 && cpb != 1) LUTHIER_ONNX__BAD("center_point_box %lld is not 0 or 1", (long long)cpb);
    LUTHIER_ONNX__TRY(luthier_onnx__int_scalar(c, n, 2, "max_output_boxes_per_class", &mx));
    LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 3, &iou, &has_iou));
    LUTHIER_ONNX__TRY(luthier_onnx__float_scalar(c, n, 4, &st, &has_st));
    if (!(iou >= 0 && iou <= 1)) LUTHIER_ONNX__BAD("iou_threshold %g is not in [0, 1]", (double)iou);
    if (st != st) LUTHIER_ONNX__BAD("score_threshold is NaN");
    LUTHIER_ONNX__TRY(luthier_onnx__f32_input(c, n, x, &xs, &in[0]));
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, sv, 1, &in[1]));
    d.typed = 1;
    d.attr.nms.center_point_box = (int)cpb;
    d.attr.nms.max_output_boxes_per_class = mx < 0 ? 0 : mx; /* the reference takes max(value, 0) */
    d.attr.nms.iou_threshold = iou;
    d.attr.nms.use_score_threshold = has_st;
    d.attr.nms.score_threshold = st;
    return luthier_onnx__emit_outs(c, n, &d, LUTHIER_OP_NON_MAX_SUPPRESSION, in, 2, "nms", 1);
}

/* >>onnx-if: If. Its branches (subgraphs) read values of the enclosing graphs by name: the
   loader appends those names to the node's inputs (luthier_onnx__if_implicit), so that ordering
   and dead-code removal see them. The condition is read when the node is converted:
     - it folded to a constant (an initializer, shape arithmetic): the taken branch is converted
       in place of the node (its nodes in order, its initializers as constants), and the node's
       outputs are the branch's;
     - it is numel(X) == 0 (torch's boxes.numel() == 0 in batched_nms: Shape + ReduceProd, or
       Size, then Equal with 0 and maybe Cast to bool; luthier_onnx__if_prepare puts X in input 0,
       for the Ifs of the main graph):
       with X static, numel(X) is known; with X of a run-time length and a then-branch that gives
       only empty constants, the else-branch is converted: each of its outputs must have a
       run-time length (count 0 when X is empty: the else-branch's chain then selects nothing,
       as the length machinery gives, where the then-branch would give the empty tensor);
     - anything else is known only at run time and refused, naming the node. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert_checked(luthier_onnx__ctx *c, luthier_onnx__node *n);
LUTHIER_ONNX__FN luthier_status luthier_onnx__check_arity(luthier_onnx__ctx *c, const luthier_onnx__node *n);
LUTHIER_ONNX__FN luthier_status luthier_onnx__name_out0(luthier_onnx__ctx *c, luthier_onnx__node *n);

/* Node n's branch named which (then_branch, else_branch); refuses other attributes. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_branch(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *which,
                                                       const luthier_onnx__sub **out) {
    int k;
    *out = NULL;
    for (k = 0; k < n->nattrs; k++) {
        const luthier_onnx__attr *a = &n->attrs[k];
        if (strcmp(a->name, "then_branch") && strcmp(a->name, "else_branch"))
            LUTHIER_ONNX__UNSUP("attribute '%s' is not supported (supported: then_branch,else_branch)", a->name);
        if (!strcmp(a->name, which)) *out = a->g;
    }
    if (!*out) LUTHIER_ONNX__BAD("If has no %s (a graph attribute)", which);
    if ((*out)->nin) LUTHIER_ONNX__BAD("%s takes %d inputs (an If branch takes none)", which, (*out)->nin);
    if ((*out)->sparse_inits) LUTHIER_ONNX__UNSUP("%s has sparse initializers", which);
    if ((*out)->nout != n->nout)
        LUTHIER_ONNX__BAD("%s gives %d outputs, the node has %d", which, (*out)->nout, n->nout);
    return LUTHIER_STATUS_OK;
}

/* Value name for a branch's initializer or node output: new, or the branch shadows an outer one. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_local(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *which,
                                                      const char *name, luthier_onnx__val **out) {
    luthier_onnx__val *v;
    if (!*name) LUTHIER_ONNX__BAD("%s holds an initializer without a name", which);
    if (!(v = luthier_onnx__get(c, name))) LUTHIER_ONNX__OOM();
    if (v->producer >= 0 || v->is_init || v->tid >= 0 || v->c || v->defined)
        LUTHIER_ONNX__BAD("%s defines '%s', which is already a value of the graph", which, name);
    v->defined = 1;
    *out = v;
    return LUTHIER_STATUS_OK;
}

/* Converts branch b (named which) of If node n in its place; n's outputs become b's. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_inline(luthier_onnx__ctx *c, luthier_onnx__node *n, const luthier_onnx__sub *b,
                                                       const char *which) {
    luthier_onnx__val *v, *o;
    int i, k;
    for (i = 0; i < b->ninit; i++) {
        LUTHIER_ONNX__TRY(luthier_onnx__if_local(c, n, which, b->inits[i]->name, &v));
        v->is_init = 1, v->c = b->inits[i];
    }
    for (i = 0; i < b->nn; i++) {
        luthier_onnx__node *m = &b->nodes[i];
        if (!*m->op) LUTHIER_ONNX__BAD("node %d of %s has no op_type", i, which);
        LUTHIER_ONNX__TRY(luthier_onnx__name_out0(c, m));
        LUTHIER_ONNX__TRY(luthier_onnx__check_arity(c, m));
        for (k = 0; k < m->nout; k++)
            if (*m->out[k]) LUTHIER_ONNX__TRY(luthier_onnx__if_local(c, n, which, m->out[k], &v));
    }
    for (i = 0; i < b->nn; i++) LUTHIER_ONNX__TRY(luthier_onnx__convert_checked(c, &b->nodes[i]));
    for (k = 0; k < n->nout; k++) {
        if (!(v = luthier_onnx__find(c, b->outputs[k].name)) || (!v->c && v->tid < 0))
            LUTHIER_ONNX__BAD("output %d ('%s') of %s has no value", k, b->outputs[k].name, which);
        if (*n->out[k] && (o = luthier_onnx__find(c, n->out[k])) != NULL) {
            luthier_onnx__same_as(o, v);
            o->defined = 1;
        }
    }
    return LUTHIER_STATUS_OK;
}

/* The empty constant that output k of branch b gives, or NULL. */
LUTHIER_ONNX__FN const luthier_onnx__tensor *luthier_onnx__if_empty(const luthier_onnx__sub *b, int k) {
    int i;
    for (i = 0; i < b->nn; i++) {
        const luthier_onnx__node *m = &b->nodes[i];
        if (m->nout == 1 && !strcmp(m->out[0], b->outputs[k].name))
            return !*m->domain && !strcmp(m->op, "Constant") && m->nattrs == 1 && !strcmp(m->attrs[0].name, "value") &&
                           m->attrs[0].t && m->attrs[0].t->n == 0 && m->attrs[0].t->rank > 0 ? m->attrs[0].t : NULL;
    }
    return NULL;
}

/* numel(X) == 0 with X of a run-time length: the else-branch, when the then-branch gives only
   empty constants, each of the rank of the else-branch's output with 0 entries along its
   run-time-length axis and the same element type. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_len(luthier_onnx__ctx *c, luthier_onnx__node *n, const luthier_onnx__sub *tb,
                                                    const luthier_onnx__sub *eb) {
    int k;
    for (k = 0; k < n->nout; k++)
        if (!luthier_onnx__if_empty(tb, k))
            LUTHIER_ONNX__UNSUP("the condition numel('%s') == 0 is known only at run time, and then_branch output %d ('%s') is not "
                                "an empty constant", n->in[0], k, tb->outputs[k].name);
    LUTHIER_ONNX__TRY(luthier_onnx__if_inline(c, n, eb, "else_branch"));
    for (k = 0; k < n->nout; k++) {
        const luthier_onnx__tensor *t = luthier_onnx__if_empty(tb, k);
        luthier_onnx__val *v = luthier_onnx__find(c, eb->outputs[k].name);
        luthier_onnx__shape os;
        luthier_onnx__vshape(c, v, &os);
        if (os.len_axis < 0 || t->rank != os.rank || t->dims[os.len_axis] != 0 || luthier_onnx__isfloat(t->type) != os.isf)
            LUTHIER_ONNX__UNSUP("the condition numel('%s') == 0 is known only at run time, and else_branch output %d ('%s') is not "
                                "the then_branch's empty %s of rank %d with a run-time length where it has 0 entries", n->in[0], k,
                                eb->outputs[k].name, luthier_onnx__typename(t->type), t->rank);
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__cv_if(const luthier_onnx__cvargs *arg) {
    LUTHIER_ONNX__CV_ARGS;
    const luthier_onnx__sub *tb, *eb;
    LUTHIER_ONNX__TRY(luthier_onnx__if_branch(c, n, "then_branch", &tb));
    LUTHIER_ONNX__TRY(luthier_onnx__if_branch(c, n, "else_branch", &eb));
    if (n->numel0 && (x->c || xs.len_axis < 0)) /* numel(X) known at load time (static shapes are not empty) */
        return x->c && x->c->n == 0 ? luthier_onnx__if_inline(c, n, tb, "then_branch") : luthier_onnx__if_inline(c, n, eb, "else_branch");
    if (n->numel0) return luthier_onnx__if_len(c, n, tb, eb);
    if (x->c && x->c->lenmask) LUTHIER_ONNX__UNSUP("the condition '%s' depends on a run-time length", x->name);
    if (x->c && x->c->n != 1) LUTHIER_ONNX__BAD("the condition '%s' has %zu elements (takes 1)", x->name, x->c->n);
    if (x->c) return luthier_onnx__tget(x->c, 0) != 0 ? luthier_onnx__if_inline(c, n, tb, "then_branch") : luthier_onnx__if_inline(c, n, eb, "else_branch");
    LUTHIER_ONNX__UNSUP("the condition '%s' is known only at run time (an If is read when its condition folds at load time, or "
                        "is numel(X) == 0 of a tensor X with a run-time length)", x->name);
}

#define LUTHIER_ONNX__MANY (1 << 20)
#define LUTHIER_ONNX__OPSET_MIN 7 /* the default-domain opsets the loader reads */
#define LUTHIER_ONNX__OPSET_MAX 18
#define LUTHIER_ONNX__OPS(X) \
    X("Constant", 0, 0, 1, 1, constant, COUNT, none, 1, 0)                           \
    X("Identity", 1, 1, 1, 1, passthrough, COUNT, identity, 1, 0)                    \
    X("Dropout", 1, 3, 1, 2, passthrough, COUNT, identity, 1, 0)                     \
    X("Cast", 1, 1, 1, 1, cast, COUNT, cast, 1, 0)                                   \
    X("Relu", 1, 1, 1, 1, unary, RELU, unary, 1, 0)                                  \
    X("Sigmoid", 1, 1, 1, 1, unary, SIGMOID, unary, 1, 0)                            \
    X("Tanh", 1, 1, 1, 1, unary, TANH, unary, 1, 0)                                  \
    X("Erf", 1, 1, 1, 1, unary, ERF, unary, 9, 0)                                    \
    X("Sqrt", 1, 1, 1, 1, unary, SQRT, unary, 1, 0)                                  \
    X("Exp", 1, 1, 1, 1, unary, EXP, unary, 1, 0)                                    \
    X("Neg", 1, 1, 1, 1, unary, NEG, unary, 1, 0)                                    \
    X("Gelu", 1, 1, 1, 1, unary, GELU, none, 1, 0)                                   \
    X("Reciprocal", 1, 1, 1, 1, unary, RECIPROCAL, unary, 1, 0)                      \
    X("Abs", 1, 1, 1, 1, unary, ABS, unary, 1, 0)                                    \
    X("Log", 1, 1, 1, 1, unary, LOG, unary, 1, 0)                                    \
    X("Floor", 1, 1, 1, 1, unary, FLOOR, unary, 1, 0)                                \
    X("Ceil", 1, 1, 1, 1, unary, CEIL, unary, 1, 0)                                  \
    X("Round", 1, 1, 1, 1, unary, ROUND, unary, 11, 0)                               \
    X("PRelu", 2, 2, 1, 1, prelu, PRELU, none, 1, 0)                                 \
    X("Swish", 1, 1, 1, 1, unary, SILU, none, 1, 0) /* Mul(t, Sigmoid(t)) (the pattern); alpha 1 */ \
    X("LeakyRelu", 1, 1, 1, 1, activation, LEAKY_RELU, none, 1, 0)                   \
    X("Elu", 1, 1, 1, 1, activation, ELU, none, 1, 0)                                \
    X("Selu", 1, 1, 1, 1, activation, SELU, none, 1, 0)                              \
    X("Celu", 1, 1, 1, 1, activation, CELU, none, 12, 0)                             \
    X("HardSigmoid", 1, 1, 1, 1, activation, HARD_SIGMOID, none, 1, 0)               \
    X("HardSwish", 1, 1, 1, 1, activation, HARD_SWISH, none, 14, 0)                  \
    X("Softplus", 1, 1, 1, 1, activation, SOFTPLUS, none, 1, 0)                      \
    X("Softsign", 1, 1, 1, 1, activation, SOFTSIGN, none, 1, 0)                      \
    X("Mish", 1, 1, 1, 1, activation, MISH, none, 1, 0)                              \
    X("ThresholdedRelu", 1, 1, 1, 1, activation, THRESHOLDED_RELU, none, 10, 0)      \
    X("Clip", 1, 3, 1, 1, clip, CLIP, none, 1, 0)                                    \
    X("Add", 2, 2, 1, 1, binary, ADD, broadcast, 1, 0)                               \
    X("Sub", 2, 2, 1, 1, binary, SUB, broadcast, 1, 0)                               \
    X("Mul", 2, 2, 1, 1, binary, MUL, broadcast, 1, 0)                               \
    X("Div", 2, 2, 1, 1, binary, DIV, broadcast, 1, 0)                               \
    X("Pow", 2, 2, 1, 1, binary, POW, broadcast, 1, 0)                               \
    X("Max", 1, LUTHIER_ONNX__MANY, 1, 1, binary, MAX, broadcast, 1, 0)              \
    X("Min", 1, LUTHIER_ONNX__MANY, 1, 1, binary, MIN, broadcast, 1, 0)              \
    X("Sum", 1, LUTHIER_ONNX__MANY, 1, 1, binary, ADD, broadcast, 1, 0)              \
    X("Conv", 2, 3, 1, 1, conv, CONV2D, none, 1, 0)                                  \
    X("MaxPool", 1, 1, 1, 2, pool, MAXPOOL, none, 1, 0)                              \
    X("AveragePool", 1, 1, 1, 1, pool, AVGPOOL, none, 1, 0)                          \
    X("GlobalMaxPool", 1, 1, 1, 1, pool, MAXPOOL, none, 1, 0)                        \
    X("GlobalAveragePool", 1, 1, 1, 1, global_avgpool, GLOBAL_AVGPOOL, none, 1, 0)   \
    X("BatchNormalization", 5, 5, 1, 5, batch_norm, BATCH_NORM, none, 1, 0)          \
    X("LayerNormalization", 1, 3, 1, 3, layer_norm, LAYER_NORM, none, 17, 0)         \
    X("InstanceNormalization", 3, 3, 1, 1, instance_norm, COUNT, none, 1, 0)         \
    X("Gemm", 2, 3, 1, 1, gemm, DENSE, none, 1, 0)                                   \
    X("MatMul", 2, 2, 1, 1, matmul, MATMUL, none, 1, 0)                              \
    X("Softmax", 1, 1, 1, 1, softmax, SOFTMAX, none, 1, 0)                           \
    X("LogSoftmax", 1, 1, 1, 1, softmax, SOFTMAX, none, 1, 0)                        \
    X("LRN", 1, 1, 1, 1, lrn, LRN, none, 1, 0)                                       \
    X("Concat", 1, LUTHIER_ONNX__MANY, 1, 1, concat, CONCAT, concat, 1, 0)           \
    X("Split", 1, 2, 1, LUTHIER_ONNX__MANY, split, SPLIT, none, 1, 0)                \
    X("Slice", 1, 5, 1, 1, slice, COUNT, slice, 1, 0)                                \
    X("Gather", 2, 2, 1, 1, gather, GATHER, gather, 1, 0)                            \
    X("Reshape", 2, 2, 1, 1, reshape, RESHAPE, reshape, 1, 0)                        \
    X("Flatten", 1, 1, 1, 1, reshape, RESHAPE, reshape, 1, 0)                        \
    X("Squeeze", 1, 2, 1, 1, reshape, RESHAPE, reshape, 1, 0)                        \
    X("Unsqueeze", 1, 2, 1, 1, reshape, RESHAPE, reshape, 1, 0)                      \
    X("Transpose", 1, 1, 1, 1, transpose, TRANSPOSE, transpose, 1, 0)                \
    X("ReduceMax", 1, 2, 1, 1, reduce, REDUCE, reduce, 1, 0)                           \
    X("ReduceMin", 1, 2, 1, 1, reduce, REDUCE, reduce, 1, 0)                           \
    X("ReduceSum", 1, 2, 1, 1, reduce, REDUCE, reduce, 1, 0)                           \
    X("ReduceMean", 1, 2, 1, 1, reduce, REDUCE, reduce, 1, 0)                          \
    X("ReduceProd", 1, 2, 1, 1, reduce, REDUCE, reduce, 1, 0)                          \
    X("ReduceL1", 1, 2, 1, 1, reduce, REDUCE, none, 1, 0)                            \
    X("ReduceL2", 1, 2, 1, 1, reduce, REDUCE, none, 1, 0)                            \
    X("ReduceLogSum", 1, 2, 1, 1, reduce, REDUCE, none, 1, 0)                        \
    X("ReduceLogSumExp", 1, 2, 1, 1, reduce, REDUCE, none, 1, 0)                     \
    X("ReduceSumSquare", 1, 2, 1, 1, reduce, REDUCE, none, 1, 0)                     \
    X("Pad", 1, 4, 1, 1, pad, PAD, none, 1, 0)                                       \
    X("Resize", 1, 4, 1, 1, resize, RESIZE, none, 10, 0)                             \
    X("Upsample", 1, 2, 1, 1, resize, RESIZE, none, 7, 9)                            \
    X("DepthToSpace", 1, 1, 1, 1, depth_space, DEPTH_TO_SPACE, none, 1, 0)           \
    X("SpaceToDepth", 1, 1, 1, 1, depth_space, SPACE_TO_DEPTH, none, 1, 0)           \
    X("Shape", 1, 1, 1, 1, const_only, COUNT, shape, 1, 0)                           \
    X("Size", 1, 1, 1, 1, const_only, COUNT, shape, 1, 0)                            \
    X("ConstantOfShape", 1, 1, 1, 1, const_of_shape, WHERE, const_of_shape, 9, 0)    \
    X("Range", 3, 3, 1, 1, const_only, COUNT, range, 11, 0)                          \
    X("Equal", 2, 2, 1, 1, logic, EQUAL, broadcast, 1, 0)                            \
    X("Where", 3, 3, 1, 1, where, WHERE, broadcast, 9, 0)                            \
    X("Expand", 2, 2, 1, 1, expand, MUL, broadcast, 8, 0)                            \
    X("Tile", 2, 3, 1, 1, tile, CONCAT, tile, 6, 0)                                  \
    X("QuantizeLinear", 2, 3, 1, 1, quant, COUNT, quant, 10, 0)                      \
    X("DequantizeLinear", 2, 3, 1, 1, quant, COUNT, quant, 10, 0)                    \
    X("QLinearConv", 8, 9, 1, 1, quant, CONV2D, none, 10, 0)                         \
    X("QLinearMatMul", 8, 8, 1, 1, quant, DENSE, none, 10, 0)                   \
    X("Greater", 2, 2, 1, 1, logic, GREATER, broadcast, 1, 0)                   \
    X("Less", 2, 2, 1, 1, logic, LESS, broadcast, 1, 0)                         \
    X("GreaterOrEqual", 2, 2, 1, 1, logic, GREATER_OR_EQUAL, broadcast, 12, 0)  \
    X("LessOrEqual", 2, 2, 1, 1, logic, LESS_OR_EQUAL, broadcast, 12, 0)        \
    X("And", 2, 2, 1, 1, logic, AND, broadcast, 1, 0)                           \
    X("Or", 2, 2, 1, 1, logic, OR, broadcast, 1, 0)                             \
    X("Xor", 2, 2, 1, 1, logic, XOR, broadcast, 1, 0)                           \
    X("Not", 1, 1, 1, 1, logic, NOT, not, 1, 0)                                 \
    X("Mod", 2, 2, 1, 1, logic, MOD, broadcast, 10, 0)                          \
    X("ArgMax", 1, 1, 1, 1, argext, ARGMAX, none, 1, 0)                         \
    X("ArgMin", 1, 1, 1, 1, argext, ARGMIN, none, 1, 0)                         \
    X("TopK", 1, 2, 2, 2, topk, TOPK, none, 1, 0)                               \
    X("CumSum", 2, 2, 1, 1, cumsum, CUMSUM, none, 11, 0)                        \
    X("Trilu", 1, 2, 1, 1, trilu, TRILU, none, 14, 0)                           \
    X("NonMaxSuppression", 2, 5, 1, 1, nms, NON_MAX_SUPPRESSION, none, 10, 0)   \
    X("ConvTranspose", 2, 3, 1, 1, conv_transpose, CONV_TRANSPOSE, none, 1, 0)  \
    X("LSTM", 3, 8, 1, 3, rnn, LSTM, none, 7, 0)                                \
    X("GRU", 3, 6, 1, 2, rnn, GRU, none, 7, 0)                                  \
    X("RNN", 3, 6, 1, 2, rnn, RNN, none, 7, 0)                                  \
    X("GatherElements", 2, 2, 1, 1, index, GATHER_ELEMENTS, none, 11, 0)        \
    X("GatherND", 2, 2, 1, 1, index, GATHER_ND, none, 11, 0)                    \
    X("ScatterND", 3, 3, 1, 1, index, SCATTER_ND, none, 11, 0)                  \
    X("ScatterElements", 3, 3, 1, 1, index, SCATTER_ELEMENTS, none, 11, 0)      \
    X("Scatter", 3, 3, 1, 1, index, SCATTER_ELEMENTS, none, 9, 10)              \
    X("Einsum", 1, LUTHIER_ONNX__MANY, 1, 1, einsum, COUNT, none, 12, 0)        \
    X("GroupNormalization", 3, 3, 1, 1, group_norm, COUNT, none, 18, 0)        \
    X("NonZero", 1, 1, 1, 1, nonzero, NONZERO, none, 9, 0)                       \
    X("If", 1, LUTHIER_ONNX__MANY, 1, LUTHIER_ONNX__MANY, if, COUNT, none, 1, 0)


/* The row of node n's operator, or NULL (an unknown operator, or a domain the loader does not read). */
LUTHIER_ONNX__FN const luthier_onnx__opinfo *luthier_onnx__opinfo_of(const luthier_onnx__node *n) {
    static const luthier_onnx__opinfo ops[] = {
#define LUTHIER_ONNX__X(op, lo, hi, olo, ohi, fam, eop, fold, since, until) \
    {op, lo, hi, olo, ohi, luthier_onnx__cv_##fam, LUTHIER_OP_##eop, luthier_onnx__fold_##fold, since, until},
        LUTHIER_ONNX__OPS(LUTHIER_ONNX__X)
#undef LUTHIER_ONNX__X
    };
    size_t k;
    if (*n->domain && strcmp(n->domain, "ai.onnx") && !(strcmp(n->domain, "com.microsoft") == 0 && strcmp(n->op, "Gelu") == 0))
        return NULL;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(ops[k].op, n->op) == 0) return &ops[k];
    return NULL;
}

/* LSTM, GRU and RNN may leave output 0 (Y) unnamed when another output is named: it gets a
   fresh name (the engine computes it anyway). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__name_out0(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    const luthier_onnx__opinfo *r = luthier_onnx__opinfo_of(n);
    int k = 1;
    if (!r || r->convert != luthier_onnx__cv_rnn || n->nout < 2 || *n->out[0]) return LUTHIER_STATUS_OK;
    while (k < n->nout && !*n->out[k]) k++;
    if (k < n->nout && !(n->out[0] = luthier_onnx__uname(c, n->out[k], "Y"))) LUTHIER_ONNX__OOM();
    return LUTHIER_STATUS_OK;
}

/* Node n's inputs and outputs against its operator's row (a node of an unknown operator passes:
   it is refused where it is converted, if anything uses it). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__check_arity(luthier_onnx__ctx *c, const luthier_onnx__node *n) {
    const luthier_onnx__opinfo *r = luthier_onnx__opinfo_of(n);
    int k;
    if (!r) return LUTHIER_STATUS_OK;
    if ((!*n->domain || !strcmp(n->domain, "ai.onnx")) && (c->opset < r->since || (r->until && c->opset > r->until)))
        LUTHIER_ONNX__BAD("%s is defined in opsets %d to %d; the model imports opset %lld", n->op, r->since,
                          r->until ? r->until : LUTHIER_ONNX__OPSET_MAX, (long long)c->opset);
    if (n->nin > r->max_in) LUTHIER_ONNX__BAD("the node has %d inputs, the operator takes at most %d", n->nin, r->max_in);
    for (k = 0; k < r->min_in; k++)
        if (k >= n->nin || !*n->in[k])
            LUTHIER_ONNX__BAD("input %d is missing (the operator needs %d input%s)", k, r->min_in, r->min_in == 1 ? "" : "s");
    if (n->nout < r->min_out || n->nout > r->max_out)
        LUTHIER_ONNX__BAD("the node has %d outputs, the operator gives %d to %d", n->nout, r->min_out, r->max_out);
    if (!*n->out[0]) LUTHIER_ONNX__BAD("output 0 is missing");
    return LUTHIER_STATUS_OK;
}

/* ---- 1-D convolution and pooling ---------------------------------------------------------------
   Conv, MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool over [N,C,L] (audio, keyword
   spotting) run as their 2-D forms over [N,C,1,L]: the input is reshaped, the weights get a unit
   height, each window attribute its height entry (kernel, stride and dilation 1, pads 0), and the
   result is reshaped back to [N,C',L']. */
LUTHIER_ONNX__FN int luthier_onnx__lifts_1d(const luthier_onnx__opinfo *r) {
    return r->convert == luthier_onnx__cv_conv || r->convert == luthier_onnx__cv_pool ||
           r->convert == luthier_onnx__cv_global_avgpool || r->convert == luthier_onnx__cv_conv_transpose;
}

/* Node n's attributes with the 1-D window lists given a height entry (in c's arena): 1 for
   kernel_shape, strides, dilations and output_shape, 0 for output_padding and the two pads. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__lift_attrs(luthier_onnx__ctx *c, const luthier_onnx__node *n, luthier_onnx__attr **out) {
    static const char *const lists[6] = {"kernel_shape", "strides", "dilations", "output_shape", "output_padding", "pads"};
    luthier_onnx__attr *at = (luthier_onnx__attr *)luthier_onnx__alloc(c, sizeof *at * (size_t)(n->nattrs + 1));
    int k, j;
    if (!at) LUTHIER_ONNX__OOM();
    for (k = 0; k < n->nattrs; k++) {
        at[k] = n->attrs[k];
        for (j = 0; j < 6; j++) {
            const int want = j == 5 ? 2 : 1;
            int64_t *v;
            if (strcmp(at[k].name, lists[j])) continue;
            if (at[k].nints != want) LUTHIER_ONNX__BAD("%s has %d entries for a 1-D input (takes %d)", lists[j], at[k].nints, want);
            if (!(v = (int64_t *)luthier_onnx__alloc(c, 4 * sizeof(int64_t)))) LUTHIER_ONNX__OOM();
            if (j == 5) v[0] = 0, v[1] = at[k].ints[0], v[2] = 0, v[3] = at[k].ints[1];
            else v[0] = j == 4 ? 0 : 1, v[1] = at[k].ints[0];
            at[k].ints = v;
            at[k].nints = at[k].cints = want * 2;
        }
    }
    *out = at;
    return LUTHIER_STATUS_OK;
}

/* A new ONNX value named "<n's output>/<what>" (NULL: out of memory). */
LUTHIER_ONNX__FN luthier_onnx__val *luthier_onnx__newval(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *what) {
    const char *name = luthier_onnx__uname(c, n->out[0], what);
    luthier_onnx__val *v = name ? luthier_onnx__get(c, name) : NULL;
    if (v) v->defined = 1;
    return v;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__lift_1d(const luthier_onnx__cvargs *arg, const luthier_onnx__opinfo *r) {
    luthier_onnx__ctx *c = arg->c;
    luthier_onnx__node *n = arg->n, n2 = *arg->n;
    const luthier_onnx__shape *xs = arg->xs;
    luthier_onnx__cvargs a2 = *arg;
    luthier_onnx__shape xs2, os;
    luthier_onnx__val *xv, *ov, *wv = n->nin > 1 ? luthier_onnx__in(c, n, 1) : NULL;
    const char **ins = (const char **)luthier_onnx__alloc(c, sizeof(char *) * (size_t)(n->nin + 1)), **outs;
    int64_t d4[4];
    int xt, t4, k;
    if (!ins || !(outs = (const char **)luthier_onnx__alloc(c, sizeof(char *) * (size_t)n->nout))) LUTHIER_ONNX__OOM();
    LUTHIER_ONNX__TRY(luthier_onnx__lift_attrs(c, n, &n2.attrs));
    d4[0] = xs->d[0], d4[1] = xs->d[1], d4[2] = 1, d4[3] = xs->d[2];
    LUTHIER_ONNX__TRY(luthier_onnx__eng(c, n, arg->x, 1, &xt));
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, xt, 4, d4, NULL, &t4));
    if (!(xv = luthier_onnx__newval(c, n, "in2d")) || !(ov = luthier_onnx__newval(c, n, "out2d"))) LUTHIER_ONNX__OOM();
    xv->tid = t4;
    for (k = 0; k < n->nin; k++) ins[k] = n->in[k];
    for (k = 0; k < n->nout; k++) outs[k] = k ? n->out[k] : ov->name;
    ins[0] = xv->name;
    if (wv && wv->c && (r->convert == luthier_onnx__cv_conv || r->convert == luthier_onnx__cv_conv_transpose)) {
        /* weights [O, I, k] -> [O, I, 1, k] (ConvTranspose: [I, O/group, k] -> [I, O/group, 1, k]) */
        luthier_onnx__val *w2 = luthier_onnx__newval(c, n, "weights2d");
        if (wv->c->rank != 3) LUTHIER_ONNX__BAD("weights '%s' have rank %d for a 1-D convolution", wv->name, wv->c->rank);
        if (!w2 || !(w2->c = (luthier_onnx__tensor *)luthier_onnx__alloc(c, sizeof *w2->c))) LUTHIER_ONNX__OOM();
        *w2->c = *wv->c;
        w2->c->rank = 4;
        w2->c->dims[2] = 1, w2->c->dims[3] = wv->c->dims[2];
        ins[1] = w2->name;
    }
    n2.in = ins;
    n2.out = outs;
    luthier_onnx__vshape(c, xv, &xs2);
    a2.n = &n2, a2.x = xv, a2.xs = &xs2, a2.oname = ov->name;
    LUTHIER_ONNX__TRY(r->convert(&a2));
    luthier_onnx__vshape(c, ov, &os);
    d4[0] = os.d[0], d4[1] = os.d[1], d4[2] = os.d[3];
    LUTHIER_ONNX__TRY(luthier_onnx__reshape_to(c, n, ov->tid, 3, d4, n->out[0], &t4));
    return luthier_onnx__setout(c, n, 0, t4);
}

/* Converts node n: the checks every operator shares (domain, a row in the table, inputs that
   have values, folding of constant inputs, quantized inputs read only where their meaning is
   known), then the row's converter. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert_op(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    const luthier_onnx__opinfo *r;
    luthier_onnx__cvargs arg;
    int k, done;
    luthier_onnx__val *x;
    luthier_onnx__shape xs;
    if (*n->domain && strcmp(n->domain, "ai.onnx") && !(strcmp(n->domain, "com.microsoft") == 0 && luthier_onnx__isop(n, "Gelu")))
        LUTHIER_ONNX__UNSUP("operator domain '%s' is not supported", n->domain);
    if (!(r = luthier_onnx__opinfo_of(n))) LUTHIER_ONNX__UNSUP("operator not supported");
    if (n->nout < 1 || !*n->out[0]) LUTHIER_ONNX__BAD("the node has no output");
    memset(&xs, 0, sizeof xs);
    arg.c = c;
    arg.n = n;
    arg.xs = &xs;
    arg.oname = n->out[0];
    arg.op = r->engine_op;
    if (r->convert == luthier_onnx__cv_constant) { /* no inputs: nothing to check or fold */
        arg.x = NULL;
        return r->convert(&arg);
    }
    for (k = 0; k < n->nin; k++)
        if (*n->in[k] && (!luthier_onnx__find(c, n->in[k]) || (!luthier_onnx__find(c, n->in[k])->c && luthier_onnx__find(c, n->in[k])->tid < 0)))
            LUTHIER_ONNX__BAD("input '%s' has no value", n->in[k]);
    LUTHIER_ONNX__TRY(luthier_onnx__fold(c, n, &done));
    if (done) return LUTHIER_STATUS_OK;
    for (k = 0; k < n->nin; k++) { /* quantized integers are read only where their meaning is known */
        luthier_onnx__val *v = luthier_onnx__in(c, n, k);
        int reads = k == 0 && (luthier_onnx__isop(n, "DequantizeLinear") || luthier_onnx__isop(n, "QLinearConv") ||
                               luthier_onnx__isop(n, "QLinearMatMul") || luthier_onnx__qpass(n));
        if (v && v->q && !reads)
            LUTHIER_ONNX__UNSUP("input %d ('%s') holds quantized %s integers: they are read only by DequantizeLinear, QLinearConv, "
                                "QLinearMatMul (input 0) and Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, MaxPool",
                                k, v->name, luthier_onnx__typename(v->qtype));
    }
    if (r->convert == luthier_onnx__cv_quant) return r->convert(&arg); /* reads its input 0 as integers */
    x = luthier_onnx__in(c, n, 0);
    if (!x) LUTHIER_ONNX__BAD("input 0 is missing");
    luthier_onnx__vshape(c, x, &xs);
    if (x->c && !x->c->f && !x->c->i) LUTHIER_ONNX__UNSUP("input '%s' has type %s", x->name, luthier_onnx__typename(x->c->type));

    arg.x = x;
    if (xs.rank == 3 && luthier_onnx__lifts_1d(r)) return luthier_onnx__lift_1d(&arg, r);
    return r->convert(&arg);
}

/* Conversion of one node; the quantization parameters of input 0 pass to the output of the
   operators that keep them. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    luthier_onnx__val *x, *o;
    LUTHIER_ONNX__TRY(luthier_onnx__convert_op(c, n));
    x = luthier_onnx__in(c, n, 0);
    o = n->nout && *n->out[0] ? luthier_onnx__find(c, n->out[0]) : NULL;
    if (x && x->q && o && o->tid >= 0 && luthier_onnx__qpass(n))
        return luthier_onnx__qmark(c, o, o->tid, x->qtype, x->qscale, x->qzero);
    return LUTHIER_STATUS_OK;
}

/* ---- graph analysis: uses, patterns, dead code, order ------------------------------------------- */

LUTHIER_ONNX__FN int luthier_onnx__used(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__val *v = luthier_onnx__find(c, name);
    return v && (v->uses > 0 || v->is_output);
}

LUTHIER_ONNX__FN void luthier_onnx__count_uses(luthier_onnx__ctx *c) {
    int i, k;
    for (i = 0; i < c->nv; i++) c->vals[i].uses = 0;
    for (i = 0; i < c->gr.nn; i++)
        if (!c->gr.nodes[i].dead)
            for (k = 0; k < c->gr.nodes[i].nin; k++) {
                luthier_onnx__val *v = *c->gr.nodes[i].in[k] ? luthier_onnx__find(c, c->gr.nodes[i].in[k]) : NULL;
                if (v) v->uses++;
            }
}

LUTHIER_ONNX__FN luthier_onnx__node *luthier_onnx__prod(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__val *v = luthier_onnx__find(c, name);
    return v && v->producer >= 0 && !c->gr.nodes[v->producer].dead ? &c->gr.nodes[v->producer] : NULL;
}

/* The only consumer of name, of op type op (any when NULL); NULL when name has several, none,
   or is a graph output. */
LUTHIER_ONNX__FN luthier_onnx__node *luthier_onnx__sole(luthier_onnx__ctx *c, const char *name, const char *op) {
    luthier_onnx__val *v = luthier_onnx__find(c, name);
    int i, k;
    if (!v || v->is_output || v->uses != 1) return NULL;
    for (i = 0; i < c->gr.nn; i++)
        if (!c->gr.nodes[i].dead)
            for (k = 0; k < c->gr.nodes[i].nin; k++)
                if (strcmp(c->gr.nodes[i].in[k], name) == 0)
                    return (!op || strcmp(c->gr.nodes[i].op, op) == 0) && !*c->gr.nodes[i].domain ? &c->gr.nodes[i] : NULL;
    return NULL;
}

/* A consumer of name with op type op whose input k is name. */
LUTHIER_ONNX__FN luthier_onnx__node *luthier_onnx__consumer(luthier_onnx__ctx *c, const char *name, const char *op, int k) {
    int i;
    for (i = 0; i < c->gr.nn; i++) {
        luthier_onnx__node *n = &c->gr.nodes[i];
        if (!n->dead && !*n->domain && strcmp(n->op, op) == 0 && n->nin > k && strcmp(n->in[k], name) == 0 && n->nout >= 1) return n;
    }
    return NULL;
}

/* The constant behind name (initializer or Constant node), or NULL. */
LUTHIER_ONNX__FN const luthier_onnx__tensor *luthier_onnx__pconst(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__val *v = luthier_onnx__find(c, name);
    luthier_onnx__node *p;
    if (!v) return NULL;
    if (v->is_init) return v->c;
    p = luthier_onnx__prod(c, name);
    if (p && !strcmp(p->op, "Constant") && p->nattrs == 1 && !strcmp(p->attrs[0].name, "value")) return p->attrs[0].t;
    return NULL;
}

LUTHIER_ONNX__FN int luthier_onnx__pscalar(luthier_onnx__ctx *c, const char *name, double want, double tol) {
    const luthier_onnx__tensor *t = luthier_onnx__pconst(c, name);
    return t && t->n == 1 && (t->f || t->i) && fabs(luthier_onnx__tget(t, 0) - want) <= tol;
}

/* Other input of a binary node n (the one that is not name), or NULL. */
LUTHIER_ONNX__FN const char *luthier_onnx__other(const luthier_onnx__node *n, const char *name) {
    if (n->nin != 2) return NULL;
    if (strcmp(n->in[0], name) == 0) return n->in[1];
    if (strcmp(n->in[1], name) == 0) return n->in[0];
    return NULL;
}

LUTHIER_ONNX__FN int luthier_onnx__rewrite(luthier_onnx__ctx *c, luthier_onnx__node *fin, const char *op, const char **in, int nin, int nattrs) {
    const char **ins = (const char **)luthier_onnx__alloc(c, sizeof(char *) * (size_t)nin);
    luthier_onnx__attr *a = nattrs ? (luthier_onnx__attr *)luthier_onnx__alloc(c, sizeof(luthier_onnx__attr) * (size_t)nattrs) : NULL;
    if (!ins || (nattrs && !a)) return 0;
    memcpy(ins, in, sizeof(char *) * (size_t)nin);
    fin->op = op;
    fin->domain = "";
    fin->in = ins;
    fin->nin = fin->cin = nin;
    fin->attrs = a;
    fin->nattrs = fin->cattrs = nattrs;
    return 1;
}

/* A constant scalar of rank 0 within tol of want (a pattern's constants: one of rank 1 would
   broadcast a rank-0 x to [1], which the fused operator does not). */
LUTHIER_ONNX__FN int luthier_onnx__pscalar0(luthier_onnx__ctx *c, const char *name, double want, double tol) {
    const luthier_onnx__tensor *t = luthier_onnx__pconst(c, name);
    return t && t->rank == 0 && luthier_onnx__pscalar(c, name, want, tol);
}

/* n is Mul(v, 0.5), Mul(0.5, v) or Div(v, 2). */
LUTHIER_ONNX__FN int luthier_onnx__halves(luthier_onnx__ctx *c, const luthier_onnx__node *n, const char *v) {
    const char *o = luthier_onnx__other(n, v);
    if (!o || *n->domain) return 0;
    if (!strcmp(n->op, "Mul")) return luthier_onnx__pscalar0(c, o, 0.5, 1e-6);
    return !strcmp(n->op, "Div") && !strcmp(n->in[0], v) && luthier_onnx__pscalar0(c, n->in[1], 2.0, 1e-6);
}

/* n is Mul(v, k) or Mul(k, v) with the constant k within tol of want: v, else NULL. */
LUTHIER_ONNX__FN const char *luthier_onnx__scaled(luthier_onnx__ctx *c, const luthier_onnx__node *n, double want, double tol) {
    if (!n || *n->domain || strcmp(n->op, "Mul") || n->nin != 2) return NULL;
    if (luthier_onnx__pscalar0(c, n->in[1], want, tol)) return n->in[0];
    if (luthier_onnx__pscalar0(c, n->in[0], want, tol)) return n->in[1];
    return NULL;
}

LUTHIER_ONNX__FN int luthier_onnx__gelu_at(luthier_onnx__ctx *c, luthier_onnx__node *fin, const char *x, int tanh) {
    if (!luthier_onnx__rewrite(c, fin, "Gelu", &x, 1, tanh)) return 0;
    if (tanh) {
        fin->attrs[0].name = "approximate";
        fin->attrs[0].has_s = 1;
        fin->attrs[0].s = "tanh";
    }
    return 1;
}

/* The common end of both GELU forms, from a = 1 + f (f = erf(x / sqrt2) or tanh(...)), each
   value consumed once: x a then halved; x (a halved); (x halved) a. Halved: * 0.5 on either
   side, or / 2. The node that ends it becomes Gelu(x). */
LUTHIER_ONNX__FN int luthier_onnx__gelu_tail(luthier_onnx__ctx *c, const char *a, const char *x, int tanh) {
    luthier_onnx__node *m1 = luthier_onnx__sole(c, a, NULL), *m2, *h;
    const char *o;
    if (!m1 || m1->nout != 1 || !*m1->out[0]) return 0;
    if (!strcmp(m1->op, "Mul") && (o = luthier_onnx__other(m1, a)) && !strcmp(o, x)) {
        m2 = luthier_onnx__sole(c, m1->out[0], NULL);
        return m2 && m2->nout == 1 && luthier_onnx__halves(c, m2, m1->out[0]) && luthier_onnx__gelu_at(c, m2, x, tanh);
    }
    if (luthier_onnx__halves(c, m1, a)) {
        m2 = luthier_onnx__sole(c, m1->out[0], "Mul");
        return m2 && m2->nout == 1 && (o = luthier_onnx__other(m2, m1->out[0])) && !strcmp(o, x) &&
               luthier_onnx__gelu_at(c, m2, x, tanh);
    }
    if (strcmp(m1->op, "Mul") || !(o = luthier_onnx__other(m1, a)) || !(h = luthier_onnx__prod(c, o)) ||
        !luthier_onnx__halves(c, h, x) || luthier_onnx__sole(c, o, "Mul") != m1)
        return 0;
    return luthier_onnx__gelu_at(c, m1, x, tanh);
}

/* The value a = 1 + f from f (Add(f, 1) or Add(1, f), f consumed by it alone), or NULL. */
LUTHIER_ONNX__FN const char *luthier_onnx__plus_one(luthier_onnx__ctx *c, const char *f) {
    luthier_onnx__node *a = luthier_onnx__sole(c, f, "Add");
    const char *o;
    return a && a->nout == 1 && (o = luthier_onnx__other(a, f)) && luthier_onnx__pscalar0(c, o, 1.0, 1e-6) ? a->out[0] : NULL;
}

/* x*0.5*(1+erf(x/sqrt2)) in its usual orders -> Gelu(x) */
LUTHIER_ONNX__FN int luthier_onnx__match_gelu(luthier_onnx__ctx *c, luthier_onnx__node *e) {
    luthier_onnx__node *p = luthier_onnx__prod(c, e->in[0]);
    const char *x, *a;
    if (!p || *p->domain || p->nin != 2 || e->nin != 1 || e->nout != 1 || luthier_onnx__sole(c, e->in[0], "Erf") != e) return 0;
    if (!strcmp(p->op, "Div") && luthier_onnx__pscalar0(c, p->in[1], 1.4142135623730951, 1e-4)) x = p->in[0];
    else if (!(x = luthier_onnx__scaled(c, p, 0.7071067811865476, 1e-4))) return 0;
    return (a = luthier_onnx__plus_one(c, e->out[0])) != NULL && luthier_onnx__gelu_tail(c, a, x, 0);
}

/* x cubed: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x), the intermediates consumed once:
   x, else NULL. */
LUTHIER_ONNX__FN const char *luthier_onnx__cube_of(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__node *p = luthier_onnx__prod(c, name), *s;
    int k;
    if (!p || *p->domain || p->nin != 2) return NULL;
    if (!strcmp(p->op, "Pow")) return luthier_onnx__pscalar0(c, p->in[1], 3.0, 0) ? p->in[0] : NULL;
    if (strcmp(p->op, "Mul")) return NULL;
    for (k = 0; k < 2; k++)
        if ((s = luthier_onnx__prod(c, p->in[k])) && !*s->domain && !strcmp(s->op, "Mul") && s->nin == 2 &&
            !strcmp(s->in[0], s->in[1]) && !strcmp(s->in[0], p->in[1 - k]) && luthier_onnx__sole(c, p->in[k], "Mul") == p)
            return p->in[1 - k];
    return NULL;
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in the orders exporters write it (GPT-2's
   gelu_new), each intermediate value consumed once -> Gelu(x, approximate "tanh") */
LUTHIER_ONNX__FN int luthier_onnx__match_gelu_tanh(luthier_onnx__ctx *c, luthier_onnx__node *t) {
    luthier_onnx__node *s, *q;
    const char *v, *a, *x = NULL;
    int k;
    if (t->nin != 1 || t->nout != 1 || luthier_onnx__sole(c, t->in[0], "Tanh") != t) return 0;
    s = luthier_onnx__prod(c, t->in[0]);
    if (!(v = luthier_onnx__scaled(c, s, 0.7978845608028654, 1e-5)) || !(q = luthier_onnx__prod(c, v)) || *q->domain ||
        strcmp(q->op, "Add") || q->nin != 2 || luthier_onnx__sole(c, v, "Mul") != s)
        return 0;
    for (k = 0; k < 2 && !x; k++) {
        luthier_onnx__node *w = luthier_onnx__prod(c, q->in[k]);
        const char *cube = luthier_onnx__scaled(c, w, 0.044715, 1e-6), *y = cube ? luthier_onnx__cube_of(c, cube) : NULL;
        if (y && !strcmp(y, q->in[1 - k]) && luthier_onnx__sole(c, q->in[k], "Add") == q && luthier_onnx__sole(c, cube, "Mul") == w)
            x = y;
    }
    return x && (a = luthier_onnx__plus_one(c, t->out[0])) != NULL && luthier_onnx__gelu_tail(c, a, x, 1);
}

/* MatMul(x, B) then Add of a bias (either order), the bias a float constant of rank 1, the
   product consumed by the Add alone -> MatMul(x, B, bias) (three inputs only from here): when B
   turns out a constant [K, N] (the Transpose of a weight folds later) and the bias [N], one
   dense step with its bias, into which a following activation fuses; else the same add. */
LUTHIER_ONNX__FN int luthier_onnx__match_matmul_bias(luthier_onnx__ctx *c, luthier_onnx__node *mm) {
    const luthier_onnx__tensor *bias;
    luthier_onnx__node *a;
    const char *o, *ins[3];
    if (mm->nin != 2 || mm->nout != 1 || !(a = luthier_onnx__sole(c, mm->out[0], "Add")) || a->nout != 1 ||
        !(o = luthier_onnx__other(a, mm->out[0])) || !(bias = luthier_onnx__pconst(c, o)) || !bias->f || bias->rank != 1)
        return 0;
    ins[0] = mm->in[0];
    ins[1] = mm->in[1];
    ins[2] = o;
    return luthier_onnx__rewrite(c, a, "MatMul", ins, 3, 0);
}

/* t * g(t), in either order, where g's output feeds that Mul alone (and is no graph output) ->
   op(t); g Sigmoid: Swish(t), one SILU step instead of two, and no sigmoid tensor in between */
LUTHIER_ONNX__FN int luthier_onnx__match_gated(luthier_onnx__ctx *c, luthier_onnx__node *g, const char *op) {
    luthier_onnx__node *m;
    const char *t, *o;
    if (g->nin != 1 || g->nout < 1 || !*g->out[0]) return 0;
    t = g->in[0];
    if (!(m = luthier_onnx__sole(c, g->out[0], "Mul")) || m->nout < 1 || !(o = luthier_onnx__other(m, g->out[0])) || strcmp(o, t))
        return 0;
    return luthier_onnx__rewrite(c, m, op, &t, 1, 0);
}

/* t * HardSigmoid(t, alpha 1/6, beta 0.5), in either order, the HardSigmoid's output feeding that
   Mul alone (and no graph output) -> HardSwish(t): what PyTorch writes for hardswish below opset
   14 (MobileNetV3), one step that fuses into the conv before it instead of two */
LUTHIER_ONNX__FN int luthier_onnx__match_hardswish(luthier_onnx__ctx *c, luthier_onnx__node *h) {
    if (fabs((double)luthier_onnx__af(h, "alpha", 0.2f) - 1.0 / 6) > 1e-6 || luthier_onnx__af(h, "beta", 0.5f) != 0.5f ||
        h->nattrs != (luthier_onnx__attr_get(h, "alpha") != NULL) + (luthier_onnx__attr_get(h, "beta") != NULL))
        return 0; /* other values, or attributes HardSigmoid does not have (refused when it is converted) */
    return luthier_onnx__match_gated(c, h, "HardSwish");
}

LUTHIER_ONNX__FN int luthier_onnx__reduce_axes(luthier_onnx__ctx *c, const luthier_onnx__node *r, int64_t *axes) {
    const int64_t *a;
    int na;
    if (luthier_onnx__ai(r, "keepdims", 1) != 1 || r->nattrs > 2) return -1;
    if (c->opset >= 18) {
        const luthier_onnx__tensor *t = r->nin > 1 ? luthier_onnx__pconst(c, r->in[1]) : NULL;
        if (!t || !t->i || t->n > LUTHIER_ONNX_MAX_RANK) return -1;
        memcpy(axes, t->i, sizeof(int64_t) * t->n);
        return (int)t->n;
    }
    if (r->nin != 1 || (na = luthier_onnx__aints(r, "axes", &a)) < 1 || na > LUTHIER_ONNX_MAX_RANK) return -1;
    memcpy(axes, a, sizeof(int64_t) * (size_t)na);
    return na;
}

/* ReduceMean, Sub, Pow 2 | Mul, ReduceMean, Add eps, Sqrt, Div [, Mul gamma [, Add beta]] -> LayerNormalization */
LUTHIER_ONNX__FN int luthier_onnx__match_layernorm(luthier_onnx__ctx *c, luthier_onnx__node *r1) {
    int64_t axes[LUTHIER_ONNX_MAX_RANK], axes2[LUTHIER_ONNX_MAX_RANK], lo, hi;
    int na = luthier_onnx__reduce_axes(c, r1, axes), k, neg;
    const char *x = r1->in[0], *d, *o, *ins[3];
    luthier_onnx__node *s, *p, *r2, *a, *q, *dv, *g, *b, *fin;
    const luthier_onnx__tensor *eps;
    if (na < 1) return 0;
    lo = hi = axes[0];
    neg = axes[0] < 0;
    for (k = 1; k < na; k++) {
        if ((axes[k] < 0) != neg) return 0;
        lo = axes[k] < lo ? axes[k] : lo;
        hi = axes[k] > hi ? axes[k] : hi;
    }
    if (hi - lo + 1 != na || (neg && hi != -1)) return 0;
    if (!(s = luthier_onnx__consumer(c, r1->out[0], "Sub", 1)) || strcmp(s->in[0], x)) return 0;
    d = s->out[0];
    if ((p = luthier_onnx__consumer(c, d, "Pow", 0)) != NULL) {
        if (!luthier_onnx__pscalar(c, p->in[1], 2.0, 0)) return 0;
    } else if (!(p = luthier_onnx__consumer(c, d, "Mul", 0)) || strcmp(p->in[1], d)) {
        return 0;
    }
    if (!(r2 = luthier_onnx__sole(c, p->out[0], "ReduceMean")) || luthier_onnx__reduce_axes(c, r2, axes2) != na ||
        memcmp(axes, axes2, sizeof(int64_t) * (size_t)na))
        return 0;
    if (!(a = luthier_onnx__sole(c, r2->out[0], "Add")) || !(o = luthier_onnx__other(a, r2->out[0])) || !(eps = luthier_onnx__pconst(c, o)) || eps->n != 1 ||
        !eps->f)
        return 0;
    if (!(q = luthier_onnx__sole(c, a->out[0], "Sqrt")) || !(dv = luthier_onnx__sole(c, q->out[0], "Div")) || strcmp(dv->in[0], d) ||
        strcmp(dv->in[1], q->out[0]))
        return 0;
    fin = dv;
    ins[0] = x;
    ins[1] = ins[2] = "";
    if ((g = luthier_onnx__sole(c, dv->out[0], "Mul")) != NULL && (o = luthier_onnx__other(g, dv->out[0])) && luthier_onnx__pconst(c, o) && luthier_onnx__pconst(c, o)->f) {
        fin = g;
        ins[1] = o;
        if ((b = luthier_onnx__sole(c, g->out[0], "Add")) != NULL && (o = luthier_onnx__other(b, g->out[0])) && luthier_onnx__pconst(c, o) && luthier_onnx__pconst(c, o)->f) {
            fin = b;
            ins[2] = o;
        }
    }
    if (!luthier_onnx__rewrite(c, fin, "LayerNormalization", ins, 3, 3)) return 0;
    fin->attrs[0].name = "axis";
    fin->attrs[0].has_i = 1;
    fin->attrs[0].i = lo;
    fin->attrs[1].name = "epsilon";
    fin->attrs[1].has_f = 1;
    fin->attrs[1].f = eps->f[0];
    fin->attrs[2].name = "_lox_count"; /* positive axes: checked to reach the last dim */
    fin->attrs[2].has_i = 1;
    fin->attrs[2].i = neg ? 0 : na;
    return 1;
}

/* >>onnx-if at build time. A set of names (open addressing in the arena). */
typedef struct luthier_onnx__nset {
    const char **slot;
    size_t cap;
} luthier_onnx__nset;

LUTHIER_ONNX__FN int luthier_onnx__nset_init(luthier_onnx__ctx *c, luthier_onnx__nset *s, size_t n) {
    s->cap = 16;
    while (s->cap < 2 * n + 2) s->cap *= 2;
    return (s->slot = (const char **)luthier_onnx__alloc(c, sizeof(char *) * s->cap)) != NULL;
}

/* Adds name: 1 when it was not in the set. */
LUTHIER_ONNX__FN int luthier_onnx__nset_add(luthier_onnx__nset *s, const char *name) {
    size_t h = luthier_onnx__hashstr(name) & (s->cap - 1);
    while (s->slot[h]) {
        if (!strcmp(s->slot[h], name)) return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = name;
    return 1;
}

LUTHIER_ONNX__FN int luthier_onnx__nset_has(const luthier_onnx__nset *s, const char *name) {
    size_t h = luthier_onnx__hashstr(name) & (s->cap - 1);
    for (; s->slot[h]; h = (h + 1) & (s->cap - 1))
        if (!strcmp(s->slot[h], name)) return 1;
    return 0;
}

/* Appends to If node n's inputs the names its branch b reads from enclosing graphs (node inputs
   and graph outputs that no node of b produces and no initializer of b holds), each once (seen:
   the names n has). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_reads(luthier_onnx__ctx *c, luthier_onnx__node *n, const luthier_onnx__sub *b,
                                                      luthier_onnx__nset *seen) {
    luthier_onnx__nset local;
    size_t names = (size_t)b->ninit;
    int i, k;
    for (i = 0; i < b->nn; i++) names += (size_t)b->nodes[i].nout;
    if (!luthier_onnx__nset_init(c, &local, names)) LUTHIER_ONNX__OOM();
    for (i = 0; i < b->ninit; i++) luthier_onnx__nset_add(&local, b->inits[i]->name);
    for (i = 0; i < b->nn; i++)
        for (k = 0; k < b->nodes[i].nout; k++) luthier_onnx__nset_add(&local, b->nodes[i].out[k]);
    for (i = 0; i <= b->nn; i++) /* the nodes' inputs, then (i == nn) the outputs, which may name outer values */
        for (k = 0; k < (i < b->nn ? b->nodes[i].nin : b->nout); k++) {
            const char *name = i < b->nn ? b->nodes[i].in[k] : b->outputs[k].name, **slot;
            if (!*name || luthier_onnx__nset_has(&local, name) || !luthier_onnx__nset_add(seen, name)) continue;
            if (!(slot = LUTHIER_ONNX__PUSH(c, n->in, n->nin, n->cin, const char *))) LUTHIER_ONNX__OOM();
            *slot = name;
        }
    return LUTHIER_STATUS_OK;
}

/* If node n (and the Ifs its branches hold, first): one declared input, then the names its
   branches read from enclosing graphs. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_implicit(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    luthier_onnx__nset seen;
    size_t names = 1;
    int a, i;
    if (n->nin != 1) LUTHIER_ONNX__BAD("If takes 1 input (the condition); the node has %d", n->nin);
    for (a = 0; a < n->nattrs; a++) {
        const luthier_onnx__sub *b = n->attrs[a].g;
        for (i = 0; b && i < b->nn; i++)
            if (!*b->nodes[i].domain && !strcmp(b->nodes[i].op, "If")) LUTHIER_ONNX__TRY(luthier_onnx__if_implicit(c, &b->nodes[i]));
        for (i = 0; b && i < b->nn; i++) names += (size_t)b->nodes[i].nin; /* counted after the nested ones grew */
        names += b ? (size_t)b->nout : 0;
    }
    if (!luthier_onnx__nset_init(c, &seen, names)) LUTHIER_ONNX__OOM();
    luthier_onnx__nset_add(&seen, n->in[0]);
    for (a = 0; a < n->nattrs; a++)
        if (n->attrs[a].g) LUTHIER_ONNX__TRY(luthier_onnx__if_reads(c, n, n->attrs[a].g, &seen));
    return LUTHIER_STATUS_OK;
}

/* X when name is numel(X) == 0 as torch exports it (Cast to bool of Equal(ReduceProd(Shape(X)),
   0) or of Equal(Size(X), 0), either operand order), else NULL. */
LUTHIER_ONNX__FN const char *luthier_onnx__numel0_of(luthier_onnx__ctx *c, const char *name) {
    luthier_onnx__node *e = luthier_onnx__prod(c, name), *r, *s;
    const char *a;
    if (e && !*e->domain && !strcmp(e->op, "Cast") && e->nin == 1 && luthier_onnx__ai(e, "to", 0) == 9)
        e = luthier_onnx__prod(c, e->in[0]);
    if (!e || *e->domain || strcmp(e->op, "Equal") || e->nin != 2) return NULL;
    a = luthier_onnx__pscalar(c, e->in[1], 0, 0) ? e->in[0] : luthier_onnx__pscalar(c, e->in[0], 0, 0) ? e->in[1] : NULL;
    if (!a || !(r = luthier_onnx__prod(c, a)) || *r->domain) return NULL;
    if (!strcmp(r->op, "Size") && r->nin == 1 && r->nattrs == 0) return r->in[0];
    if (strcmp(r->op, "ReduceProd") || r->nin != 1 || luthier_onnx__attr_get(r, "axes") || luthier_onnx__ai(r, "noop_with_empty_axes", 0))
        return NULL;
    s = luthier_onnx__prod(c, r->in[0]);
    return s && !*s->domain && !strcmp(s->op, "Shape") && s->nin == 1 && s->nattrs == 0 ? s->in[0] : NULL;
}

/* Every If of the main graph: its implicit inputs; a condition numel(X) == 0 is replaced by X. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__if_prepare(luthier_onnx__ctx *c) {
    int i;
    for (i = 0; i < c->gr.nn; i++) {
        luthier_onnx__node *n = &c->gr.nodes[i];
        const char *x;
        if (*n->domain || strcmp(n->op, "If")) continue;
        LUTHIER_ONNX__TRY(luthier_onnx__if_implicit(c, n));
        if ((x = luthier_onnx__numel0_of(c, n->in[0])) != NULL) n->in[0] = x, n->numel0 = 1;
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN void luthier_onnx__dce(luthier_onnx__ctx *c) {
    int changed = 1, i, k;
    luthier_onnx__count_uses(c);
    while (changed) {
        changed = 0;
        for (i = c->gr.nn - 1; i >= 0; i--) {
            luthier_onnx__node *n = &c->gr.nodes[i];
            int live = 0;
            if (n->dead) continue;
            for (k = 0; k < n->nout && !live; k++) live = *n->out[k] && luthier_onnx__used(c, n->out[k]);
            if (live) continue;
            n->dead = 1;
            changed = 1;
            for (k = 0; k < n->nin; k++) {
                luthier_onnx__val *v = *n->in[k] ? luthier_onnx__find(c, n->in[k]) : NULL;
                if (v) v->uses--;
            }
        }
    }
}

/* Kahn's algorithm over the live nodes: c->order. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__toposort(luthier_onnx__ctx *c) {
    int i, k, ne = 0, head = 0, tail = 0, *start, *edges, *fill, live = 0, pass;
    for (i = 0; i < c->gr.nn; i++) {
        luthier_onnx__node *n = &c->gr.nodes[i];
        n->deps = 0;
        if (n->dead) continue;
        live++;
        for (k = 0; k < n->nin; k++) {
            luthier_onnx__node *p = *n->in[k] ? luthier_onnx__prod(c, n->in[k]) : NULL;
            if (p) n->deps++, ne++;
        }
    }
    start = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)(c->gr.nn + 1));
    fill = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)(c->gr.nn + 1));
    edges = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)(ne + 1));
    c->order = (int *)luthier_onnx__alloc(c, sizeof(int) * (size_t)(c->gr.nn + 1));
    if (!start || !fill || !edges || !c->order) return luthier_onnx__fail(c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    for (pass = 0; pass < 2; pass++) { /* each producer's consumers: counted, then listed */
        for (i = 0; i < c->gr.nn; i++)
            for (k = 0; !c->gr.nodes[i].dead && k < c->gr.nodes[i].nin; k++) {
                luthier_onnx__val *v = *c->gr.nodes[i].in[k] ? luthier_onnx__find(c, c->gr.nodes[i].in[k]) : NULL;
                if (!v || v->producer < 0 || c->gr.nodes[v->producer].dead) continue;
                if (pass) edges[fill[v->producer]++] = i;
                else start[v->producer + 1]++;
            }
        if (pass) break;
        for (i = 0; i < c->gr.nn; i++) start[i + 1] += start[i];
        memcpy(fill, start, sizeof(int) * (size_t)(c->gr.nn + 1));
    }
    for (i = 0; i < c->gr.nn; i++)
        if (!c->gr.nodes[i].dead && c->gr.nodes[i].deps == 0) c->order[tail++] = i;
    while (head < tail) {
        int u = c->order[head++], e;
        for (e = start[u]; e < start[u + 1]; e++)
            if (--c->gr.nodes[edges[e]].deps == 0) c->order[tail++] = edges[e];
    }
    c->norder = tail;
    if (tail < live) {
        for (i = 0; i < c->gr.nn; i++)
            if (!c->gr.nodes[i].dead && c->gr.nodes[i].deps > 0) {
                luthier_onnx__node *n = &c->gr.nodes[i];
                for (k = 0; k < n->nin; k++) {
                    luthier_onnx__node *p = *n->in[k] ? luthier_onnx__prod(c, n->in[k]) : NULL;
                    if (p && p->deps > 0)
                        return luthier_onnx__nfail(c, n, LUTHIER_STATUS_INVALID_ARGUMENT,
                                         "the graph has a cycle: input '%s' depends on this node's own output", n->in[k]);
                }
                return luthier_onnx__nfail(c, n, LUTHIER_STATUS_INVALID_ARGUMENT, "the graph has a cycle through this node");
            }
    }
    return LUTHIER_STATUS_OK;
}

/* ---- the loader ------------------------------------------------------------------------------------ */

LUTHIER_ONNX__FN luthier_status luthier_onnx__inputs(luthier_onnx__ctx *c) {
    const luthier_onnx_options *o = c->opt;
    int i, k, j;
    for (i = 0; i < c->gr.ninit; i++) {
        luthier_onnx__tensor *t = c->gr.inits[i];
        luthier_onnx__val *v;
        if (!*t->name) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "initializer %d has no name", i);
        if (!(v = luthier_onnx__get(c, t->name))) LUTHIER_ONNX__OOM();
        if (v->is_init) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "initializer '%s' is given twice", t->name);
        v->is_init = 1;
        v->c = t;
    }
    for (i = 0; o && i < o->num_constants; i++) {
        const luthier_onnx_tensor *b = &o->constants[i];
        luthier_onnx__tensor *t;
        luthier_onnx__val *v;
        for (k = 0; k < c->gr.nin; k++)
            if (b->name && strcmp(b->name, c->gr.inputs[k].name) == 0) break;
        if (k == c->gr.nin)
            return luthier_onnx__fail(c, LUTHIER_STATUS_NOT_FOUND, "options.constants[%d] ('%s') names no graph input", i, b->name ? b->name : "");
        if (!b->data || b->rank < 0 || b->rank > LUTHIER_ONNX_MAX_RANK)
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "options.constants[%d] ('%s'): bad rank or no data", i, b->name);
        if (!(t = luthier_onnx__tnew(c, b->dtype == LUTHIER_DTYPE_F32, b->rank, b->shape)))
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "options.constants[%d] ('%s'): bad shape", i, b->name);
        t->name = b->name;
        if (t->f) memcpy(t->f, b->data, t->n * sizeof(float));
        else memcpy(t->i, b->data, t->n * sizeof(int64_t));
        if (t->i && b->onnx_type && !luthier_onnx__isfloat(b->onnx_type) && luthier_onnx__elsize(b->onnx_type))
            t->type = b->onnx_type; /* e.g. uint8 (a zero point) */
        if (b->onnx_type && c->gr.inputs[k].elem && b->onnx_type != c->gr.inputs[k].elem)
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "options.constants[%d] ('%s') is %s, the graph input is %s", i,
                                      b->name, luthier_onnx__typename(b->onnx_type), luthier_onnx__typename(c->gr.inputs[k].elem));
        if (!(v = luthier_onnx__get(c, c->gr.inputs[k].name))) LUTHIER_ONNX__OOM();
        v->c = t;
        v->is_init = 1;
    }
    for (i = 0; i < c->gr.nin; i++) {
        luthier_onnx__vi *vi = &c->gr.inputs[i];
        luthier_onnx__val *v;
        int64_t dims[LUTHIER_ONNX_MAX_RANK];
        int rank = vi->rank;
        luthier_dtype dt;
        if (!*vi->name) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph input %d has no name", i);
        if (!(v = luthier_onnx__get(c, vi->name))) LUTHIER_ONNX__OOM();
        if (v->is_init) continue;
        if (v->tid >= 0) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph input '%s' is listed twice", vi->name);
        if (vi->elem == 1) dt = LUTHIER_DTYPE_F32;
        else if (vi->elem == 7) dt = LUTHIER_DTYPE_I64;
        else if (vi->elem == 6) dt = LUTHIER_DTYPE_I32; /* read through a CAST to i64 (luthier_onnx__input_cast) */
        else if (vi->elem == 9) dt = LUTHIER_DTYPE_BOOL; /* ... to f32 0/1 */
        else if (vi->elem == 2 || vi->elem == 3)
            return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "quantized graph inputs: luthier graphs take fp32 inputs; graph "
                                      "input '%s' is %s (quantize in the model: an fp32 input feeding QuantizeLinear; or bind it "
                                      "with options.constants)", vi->name, luthier_onnx__typename(vi->elem));
        else
            return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph input '%s' has type %s: only float, int64, int32 and bool "
                            "inputs are supported (or bind it with options.constants)", vi->name, luthier_onnx__typename(vi->elem));
        if (!vi->has_shape) return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph input '%s' has no shape", vi->name);
        if (rank > LUTHIER_MAX_RANK)
            return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph input '%s' has rank %d (at most %d)", vi->name, rank, LUTHIER_MAX_RANK);
        for (k = 0; k < rank; k++) {
            dims[k] = vi->dims[k];
            if (dims[k] < 0) {
                dims[k] = o && o->default_dim > 0 ? o->default_dim : 1;
                for (j = 0; o && vi->params[k] && j < o->num_dims; j++)
                    if (o->dims[j].name && strcmp(o->dims[j].name, vi->params[k]) == 0) dims[k] = o->dims[j].value;
            }
            if (dims[k] < 1)
                return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph input '%s': dimension %d is %lld (empty tensors are not supported)",
                                vi->name, k, (long long)dims[k]);
        }
        if (rank == 0) rank = 1, dims[0] = 1;
        if (luthier_graph_input(c->g, vi->name, dt, rank, dims, &v->tid) != LUTHIER_STATUS_OK)
            return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph input '%s': %s", vi->name, luthier_graph_error(c->g));
        if (dt == LUTHIER_DTYPE_I32 || dt == LUTHIER_DTYPE_BOOL) LUTHIER_ONNX__TRY(luthier_onnx__input_cast(c, v, dt));
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__outputs(luthier_onnx__ctx *c) {
    int i;
    for (i = 0; i < c->gr.nout; i++) {
        luthier_onnx__val *v = luthier_onnx__find(c, c->gr.outputs[i].name);
        luthier_tensor_info ti;
        luthier_node_desc d;
        int t, o, dummy;
        const char *name;
        if (!v || (!v->c && v->tid < 0)) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph output '%s' has no value", c->gr.outputs[i].name);
        if (v->q)
            return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "quantized graph outputs: luthier graphs give fp32 outputs; graph "
                                      "output '%s' is %s (end the model with DequantizeLinear)", v->name, luthier_onnx__typename(v->qtype));
        if (!v->c) {
            luthier_graph_tensor_info(c->g, v->tid, &ti);
            if (strcmp(ti.name, v->name) == 0 && !ti.is_output && !ti.is_input && !ti.is_constant) {
                if (luthier_graph_output(c->g, v->tid) != LUTHIER_STATUS_OK)
                    return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph output '%s': %s", v->name, luthier_graph_error(c->g));
                continue;
            }
        }
        {
            luthier_onnx__node fake;
            memset(&fake, 0, sizeof fake);
            fake.name = v->name;
            fake.op = "graph output";
            if (luthier_onnx__eng(c, &fake, v, 0, &t)) return c->st;
        }
        luthier_graph_tensor_info(c->g, t, &ti);
        name = luthier_graph_find_node(c->g, v->name, &dummy) == LUTHIER_STATUS_OK ? luthier_onnx__uname(c, v->name, "output") : v->name;
        if (!name) LUTHIER_ONNX__OOM();
        memset(&d, 0, sizeof d);
        luthier_onnx__set_op(&d, LUTHIER_OP_IDENTITY, &t, 1); /* an i64 value (constant, input, alias) is copied by a CAST to i64 */
        if (ti.dtype == LUTHIER_DTYPE_I64) d.op = LUTHIER_OP_CAST, d.typed = 1, d.attr.cast.to = LUTHIER_CAST_TO_I64;
        d.name = name;
        if (luthier_graph_add_node(c->g, &d, &o) != LUTHIER_STATUS_OK || luthier_graph_output(c->g, o) != LUTHIER_STATUS_OK)
            return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "graph output '%s': %s", v->name, luthier_graph_error(c->g));
    }
    return LUTHIER_STATUS_OK;
}

/* The recorded quantization parameters into options.calibration, all or none. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__calibration(luthier_onnx__ctx *c) {
    luthier_calibration *cal = c->opt ? c->opt->calibration : NULL;
    int t, k;
    for (t = 0; cal && t < c->cqp; t++) {
        luthier_status s;
        luthier_onnx__qp *p = &c->qp[t];
        if (!p->has) continue;
        p->had = luthier_calibration_get(cal, t, &p->old_scale, &p->old_zero) == LUTHIER_STATUS_OK;
        if ((s = luthier_calibration_set_params(cal, t, p->scale, p->zero)) != LUTHIER_STATUS_OK) {
            for (k = 0; k < t; k++) /* back to what it was */
                if (c->qp[k].has && c->qp[k].had) luthier_calibration_set_params(cal, k, c->qp[k].old_scale, c->qp[k].old_zero);
                else if (c->qp[k].has) luthier_calibration_remove(cal, k);
            return luthier_onnx__fail(c, s, "calibration: cannot set the parameters of tensor %d (scale %g, zero point %d): %s", t,
                                      (double)p->scale, (int)p->zero, luthier_status_string(s));
        }
    }
    return LUTHIER_STATUS_OK;
}

/* Converts node n in order (a recognized LayerNorm with positive axes first checked to end at
   the last dim). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert_checked(luthier_onnx__ctx *c, luthier_onnx__node *n) {
    const luthier_onnx__attr *cnt = luthier_onnx__attr_get(n, "_lox_count");
    if (cnt) {
        luthier_onnx__val *x = luthier_onnx__in(c, n, 0);
        luthier_onnx__shape xs;
        if (x) luthier_onnx__vshape(c, x, &xs);
        if (x && cnt->i && luthier_onnx__ai(n, "axis", 0) + cnt->i != xs.rank)
            return luthier_onnx__nfail(c, n, LUTHIER_STATUS_UNSUPPORTED, "layer-norm pattern over axes that do not end at the last one");
        n->nattrs = 2;
    }
    return luthier_onnx__convert(c, n);
}

/* Converts every node in order. A node refused as UNSUPPORTED does not stop the load: its
   outputs are marked refused, the nodes that read them are skipped (their failure would only
   repeat it), and the others are still converted, so that one message names every refused node
   (op type, name, why): a user learns in one attempt all that the model needs. Any other error
   stops at once. */
LUTHIER_ONNX__FN luthier_status luthier_onnx__convert_all(luthier_onnx__ctx *c) {
    char *list = NULL, one[512], *user_err = c->err;
    size_t used = 0, cap = 4096, user_size = c->err_size;
    int i, k, refused = 0;
    luthier_status s = LUTHIER_STATUS_OK;
    c->err = one; /* each message whole, whatever the caller's buffer */
    c->err_size = sizeof one;
    for (i = 0; i < c->norder && s == LUTHIER_STATUS_OK; i++) {
        luthier_onnx__node *n = &c->gr.nodes[c->order[i]];
        luthier_onnx__val *v;
        int skip = 0;
        c->cur = c->order[i];
        for (k = 0; k < n->nin && !skip; k++) skip = *n->in[k] && (v = luthier_onnx__find(c, n->in[k])) != NULL && v->refused;
        if (!skip) {
            if ((s = luthier_onnx__convert_checked(c, n)) != LUTHIER_STATUS_UNSUPPORTED) continue; /* OK, or stop */
            if (!list && !(list = (char *)luthier_onnx__alloc(c, cap))) break;
            if (used + 3 < cap) used += (size_t)snprintf(list + used, cap - used, "%s%s", refused ? "; " : "", one);
            if (used >= cap) used = cap - 1;
            refused++;
            s = c->st = LUTHIER_STATUS_OK; /* go on: the message is kept in list */
        }
        for (k = 0; k < n->nout; k++)
            if (*n->out[k] && (v = luthier_onnx__find(c, n->out[k])) != NULL) v->refused = 1;
    }
    c->err = user_err;
    c->err_size = user_size;
    if (s != LUTHIER_STATUS_OK || c->st != LUTHIER_STATUS_OK) { /* the first hard error, as it was written */
        if (user_err && user_size) snprintf(user_err, user_size, "%s", one);
        return c->st != LUTHIER_STATUS_OK ? c->st : s;
    }
    if (!refused) return LUTHIER_STATUS_OK;
    if (refused == 1) return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "%s", list);
    return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "%d nodes are not supported: %s", refused, list);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx__build(luthier_onnx__ctx *c) {
    int i, k;
    if (!c->has_opset) c->opset = 7;
    if (c->opset < LUTHIER_ONNX__OPSET_MIN || c->opset > LUTHIER_ONNX__OPSET_MAX)
        return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "default-domain opset %lld: this loader reads opsets %d..%d",
                                  (long long)c->opset, LUTHIER_ONNX__OPSET_MIN, LUTHIER_ONNX__OPSET_MAX);
    if (c->gr.sparse_inits) return luthier_onnx__fail(c, LUTHIER_STATUS_UNSUPPORTED, "sparse initializers are not supported");
    if (!c->gr.nout) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "the graph has no outputs");
    LUTHIER_ONNX__TRY(luthier_onnx__inputs(c));
    for (i = 0; i < c->gr.nn; i++) {
        luthier_onnx__node *n = &c->gr.nodes[i];
        if (!*n->op) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "node %d ('%s') has no op_type", i, n->name);
        LUTHIER_ONNX__TRY(luthier_onnx__name_out0(c, n));
        for (k = 0; k < n->nout; k++) {
            luthier_onnx__val *v;
            if (!*n->out[k]) continue;
            if (!(v = luthier_onnx__get(c, n->out[k]))) LUTHIER_ONNX__OOM();
            if (v->producer >= 0 || v->is_init || v->tid >= 0)
                return luthier_onnx__nfail(c, n, LUTHIER_STATUS_INVALID_ARGUMENT, "output '%s' is already %s", n->out[k],
                                 v->producer >= 0 ? "produced by another node" : "a graph input or initializer");
            v->producer = i;
        }
        LUTHIER_ONNX__TRY(luthier_onnx__check_arity(c, n));
    }
    LUTHIER_ONNX__TRY(luthier_onnx__if_prepare(c));
    for (i = 0; i < c->gr.nn; i++) {
        luthier_onnx__node *n = &c->gr.nodes[i];
        for (k = 0; k < n->nin; k++)
            if (*n->in[k] && !luthier_onnx__find(c, n->in[k]))
                return luthier_onnx__nfail(c, n, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "input '%s' is dangling: no node produces it and it is neither a graph input nor an initializer",
                                 n->in[k]);
    }
    for (i = 0; i < c->gr.nout; i++) {
        luthier_onnx__val *v = luthier_onnx__find(c, c->gr.outputs[i].name);
        if (!v) return luthier_onnx__fail(c, LUTHIER_STATUS_INVALID_ARGUMENT, "graph output '%s' is not produced by any node", c->gr.outputs[i].name);
        v->is_output = 1;
    }
    luthier_onnx__count_uses(c);
    if (!c->opt || !c->opt->no_patterns) {
        for (i = 0; i < c->gr.nn; i++) {
            luthier_onnx__node *n = &c->gr.nodes[i];
            if (n->dead || *n->domain) continue;
            if (!strcmp(n->op, "Erf") && luthier_onnx__match_gelu(c, n)) luthier_onnx__count_uses(c);
            else if (!strcmp(n->op, "Tanh") && luthier_onnx__match_gelu_tanh(c, n)) luthier_onnx__count_uses(c);
            else if (!strcmp(n->op, "ReduceMean") && luthier_onnx__match_layernorm(c, n)) luthier_onnx__count_uses(c);
            else if (!strcmp(n->op, "Sigmoid") && luthier_onnx__match_gated(c, n, "Swish")) luthier_onnx__count_uses(c);
            else if (!strcmp(n->op, "HardSigmoid") && luthier_onnx__match_hardswish(c, n)) luthier_onnx__count_uses(c);
            else if (!strcmp(n->op, "MatMul") && luthier_onnx__match_matmul_bias(c, n)) luthier_onnx__count_uses(c);
        }
    }
    luthier_onnx__dce(c);
    LUTHIER_ONNX__TRY(luthier_onnx__toposort(c));
    LUTHIER_ONNX__TRY(luthier_onnx__convert_all(c));
    LUTHIER_ONNX__TRY(luthier_onnx__outputs(c));
    return luthier_onnx__calibration(c);
}

/* ---- public functions -------------------------------------------------------------------------------- */

LUTHIER_ONNX__FN luthier_status luthier_onnx__load_bytes(const void *data, uint8_t *mut, size_t size, const luthier_onnx_options *opt,
                                                         luthier_graph **out, char *err, size_t err_size);

LUTHIER_ONNX__FN luthier_status luthier_onnx_load_memory(const void *data, size_t size, const luthier_onnx_options *opt,
                                                         luthier_graph **out, char *err, size_t err_size) {
    return luthier_onnx__load_bytes(data, NULL, size, opt, out, err, err_size);
}

/* The loader proper. mut: the same bytes as data, writable and the loader's to change (the
   buffer luthier_onnx_load read the file into), or NULL (the caller's bytes, only read). */
LUTHIER_ONNX__FN luthier_status luthier_onnx__load_bytes(const void *data, uint8_t *mut, size_t size, const luthier_onnx_options *opt,
                                                         luthier_graph **out, char *err, size_t err_size) {
    luthier_onnx__ctx c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.err_size = err_size;
    c.opt = opt;
    c.mut = mut;
    if (err && err_size) err[0] = 0;
    if (!out) return luthier_onnx__fail(&c, LUTHIER_STATUS_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!data || !size) return luthier_onnx__fail(&c, LUTHIER_STATUS_INVALID_ARGUMENT, "empty model (0 bytes)");
    c.budget = luthier_onnx__budget(opt, size);
    c.base = (const uint8_t *)data;
    if (luthier_onnx__parse_model(&c, c.base, size) == 0) {
        if (luthier_graph_create(&c.g) != LUTHIER_STATUS_OK) luthier_onnx__fail(&c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
        else luthier_onnx__build(&c);
    } else if (c.st == LUTHIER_STATUS_OK) {
        luthier_onnx__fail(&c, LUTHIER_STATUS_INVALID_ARGUMENT, "malformed model");
    }
    if (c.st != LUTHIER_STATUS_OK) luthier_graph_destroy(c.g);
    else *out = c.g;
    luthier_onnx__arena_free(&c);
    return c.st;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx_load(const char *path, const luthier_onnx_options *opt, luthier_graph **out,
                                                  char *err, size_t err_size) {
    void *data;
    size_t size;
    luthier_status s;
    if (out) *out = NULL;
    if ((s = luthier_read_file(path, 0, &data, &size, err, err_size)) != LUTHIER_STATUS_OK) return s;
    if (!size) {
        luthier_free(data);
        if (err && err_size) snprintf(err, err_size, "'%s' is empty (0 bytes): not an ONNX model", path);
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    s = luthier_onnx__load_bytes(data, (uint8_t *)data, size, opt, out, err, err_size);
    if (s != LUTHIER_STATUS_OK && err && err_size > 1) {
        char *tmp = (char *)malloc(err_size);
        if (tmp) { /* "path: message", cut to err_size */
            snprintf(tmp, err_size, "%s: %s", path, err);
            memcpy(err, tmp, strlen(tmp) + 1);
            free(tmp);
        }
    }
    luthier_free(data);
    return s;
}

LUTHIER_ONNX__FN int luthier_onnx_input_index(const luthier_graph *g, const char *name) {
    int i;
    luthier_tensor_info ti;
    for (i = 0; name && i < luthier_graph_num_inputs(g); i++)
        if (luthier_graph_tensor_info(g, luthier_graph_input_tensor(g, i), &ti) == LUTHIER_STATUS_OK && strcmp(ti.name, name) == 0)
            return i;
    return -1;
}

LUTHIER_ONNX__FN int luthier_onnx_output_index(const luthier_graph *g, const char *name) {
    int i;
    luthier_tensor_info ti;
    const char *nn;
    for (i = 0; name && i < luthier_graph_num_outputs(g); i++)
        if (luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti) == LUTHIER_STATUS_OK && strcmp(ti.name, name) == 0)
            return i;
    for (i = 0; name && i < luthier_graph_num_outputs(g); i++)
        if (luthier_graph_tensor_info(g, luthier_graph_output_tensor(g, i), &ti) == LUTHIER_STATUS_OK && ti.producer >= 0 &&
            luthier_graph_node(g, ti.producer, NULL, &nn, NULL, NULL, NULL, NULL, NULL) == LUTHIER_STATUS_OK && strcmp(nn, name) == 0)
            return i;
    return -1;
}

LUTHIER_ONNX__FN void luthier_onnx_tensor_free(luthier_onnx_tensor *t) {
    if (!t) return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

LUTHIER_ONNX__FN luthier_status luthier_onnx_tensor_load_memory(const void *data, size_t size, luthier_onnx_tensor *out,
                                                                char *err, size_t err_size) {
    luthier_onnx__ctx c;
    luthier_onnx__tensor t;
    size_t bytes;
    memset(&c, 0, sizeof c);
    memset(&t, 0, sizeof t);
    c.err = err;
    c.err_size = err_size;
    if (err && err_size) err[0] = 0;
    if (!out) return luthier_onnx__fail(&c, LUTHIER_STATUS_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size) return luthier_onnx__fail(&c, LUTHIER_STATUS_INVALID_ARGUMENT, "data is NULL");
    c.base = (const uint8_t *)data;
    c.budget = luthier_onnx__budget(NULL, size);
    if (luthier_onnx__parse_tensor(&c, c.base, size, &t) == 0) {
        if (!t.f && !t.i) {
            luthier_onnx__fail(&c, LUTHIER_STATUS_UNSUPPORTED, "tensor '%s' has type %s", t.name, luthier_onnx__typename(t.type));
        } else {
            bytes = (t.n ? t.n : 1) * (t.f ? sizeof(float) : sizeof(int64_t));
            out->name = (char *)malloc(strlen(t.name) + 1);
            out->data = malloc(bytes);
            if (!out->name || !out->data) {
                luthier_onnx_tensor_free(out);
                luthier_onnx__fail(&c, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
            } else {
                memcpy(out->name, t.name, strlen(t.name) + 1);
                memcpy(out->data, t.f ? (const void *)t.f : (const void *)t.i, bytes);
                out->onnx_type = t.type;
                out->dtype = t.f ? LUTHIER_DTYPE_F32 : LUTHIER_DTYPE_I64;
                out->rank = t.rank;
                memcpy(out->shape, t.dims, sizeof out->shape);
                out->numel = t.n;
            }
        }
    }
    luthier_onnx__arena_free(&c);
    return c.st;
}

LUTHIER_ONNX__FN luthier_status luthier_onnx_tensor_load(const char *path, luthier_onnx_tensor *out, char *err, size_t err_size) {
    void *data;
    size_t size;
    luthier_status s;
    if (out) memset(out, 0, sizeof *out);
    if ((s = luthier_read_file(path, 0, &data, &size, err, err_size)) != LUTHIER_STATUS_OK) return s;
    s = luthier_onnx_tensor_load_memory(data, size, out, err, err_size);
    luthier_free(data);
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_ONNX_H_INCLUDED */
