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

   TABLE OF CONTENTS: >>api-graph >>api-plan; implementation: >>impl-graph >>impl-lengths >>impl-plan-layout
   >>impl-plan-fuse >>impl-precision >>impl-plan-memory >>impl-plan-create >>impl-plan-run
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
    LUTHIER_DTYPE_I64, /* indices (gather), e.g. token ids; integers of the shape path */
    /* graph inputs only, read by CAST alone (e.g. int32 token ids, bool attention masks fed as
       they are; CAST turns them into i64 or f32 0/1 tensors): */
    LUTHIER_DTYPE_I32,
    LUTHIER_DTYPE_BOOL, /* one byte per element, nonzero = true */
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
                Both are views: f32 or i64.
   TRANSPOSE    perm (default: reversed dims).  GATHER  data, indices (I64) along axis.
   ATTENTION    q [B,H,Sq,D], k [B,H,Skv,D], v [B,H,Skv,Dv] -> [B,H,Sq,Dv]:
                softmax(q k^T * scale + mask) v; scale 0 = 1/sqrt(D); causal = 1: query i sees
                keys j <= i + Skv - Sq (the queries are the last positions, as with a KV cache).
   IDENTITY     copies (dropout at inference); f32 or i64.
   REDUCE       x -> the kind's reduction over axes (luthier_reduce_attrs; no axes = all of them),
                keepdims keeps them as 1s.
   RESIZE       x of any rank: nearest, linear or cubic interpolation (ONNX Resize 11..19,
                Upsample) on the last two axes (the last one for rank 1); every other axis keeps
                its size (scale 1, or size 1). Typed attributes luthier_resize_attrs: mode,
                coordinate transformation, nearest rounding, cubic_coeff_a, exclude_outside,
                and either the output sizes or the scales (output = floor(input * scale)).
   DEPTH_TO_SPACE  [N,C,H,W] -> [N,C/b^2,H*b,W*b], blocksize b; mode DCR (depth-column-row,
                the default) or CRD (luthier_depth_to_space_attrs).
   SPACE_TO_DEPTH  [N,C,H,W] -> [N,C*b^2,H/b,W/b], the inverse of DCR (luthier_space_to_depth_attrs).
   PAD          x of any rank padded (or cropped, where a pad is negative) per axis: constant
                value, reflect (mirror without the edge), edge (repeat the edge) or wrap
                (luthier_pad_attrs).
   Activations, element-wise, one input, ONNX semantics; attributes in luthier_node_attrs:
   LEAKY_RELU   x < 0 ? alpha x : x (alpha 0.01).
   ELU          x > 0 ? x : alpha (exp(x) - 1) (alpha 1).
   SELU         x > 0 ? gamma x : gamma alpha (exp(x) - 1) (alpha 1.67326..., gamma 1.05070...).
   CELU         max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (alpha 1, not 0).
   HARD_SIGMOID max(0, min(1, alpha x + beta)) (alpha 0.2, beta 0.5).
   HARD_SWISH   x max(0, min(1, x / 6 + 1/2)).   SOFTPLUS  log(1 + exp(x)).
   SOFTSIGN     x / (1 + |x|).   MISH  x tanh(softplus(x)).
   THRESHOLDED_RELU  x > alpha ? x : 0 (alpha 1).
   NaN in gives NaN out (thresholded_relu too, as torch.threshold); infinities follow the
   formulas as written: softsign(+-inf), hard_swish(-inf) and mish(-inf) are NaN (as in PyTorch
   and the ONNX reference implementation). Attributes must be finite.
   ABS, LOG, FLOOR, CEIL, ROUND, RECIPROCAL   element-wise, one input: |x|, ln x (-inf at 0, NaN
                below), floor, ceil, round half to even (as ONNX Round and torch.round), 1 / x.
                abs, floor, ceil and round are exact (libm's fabsf, floorf, ceilf, nearbyintf).
   PRELU        x, slope (constant, unidirectionally broadcast to x: in practice [C,1,1] for
                NCHW, [C] for [N,C], or one value): x < 0 ? slope x : x. Works in NHWC plans.
   SILU         x sigmoid(x) (swish); -inf gives NaN (the formula), NaN propagates.
   Booleans are f32 tensors holding 0 or 1 (any nonzero value, NaN included, reads as true);
   integers are i64 tensors (graph inputs and constants of LUTHIER_DTYPE_I64, CAST's output).
   EQUAL, GREATER, LESS, GREATER_OR_EQUAL, LESS_OR_EQUAL  a, b: both f32 or both i64, numpy
                broadcasting; f32 0/1 out. A comparison with NaN is false (NaN == NaN too).
   AND, OR, XOR a, b f32 booleans (nonzero = true), broadcasting; 0/1 out.  NOT  x == 0 ? 1 : 0.
   MOD          a, b both f32 or both i64, broadcasting, the inputs' dtype out (ONNX Mod;
                luthier_mod_attrs): fmod = 0 floored (Python %: the sign of b), fmod = 1 C fmod
                (the sign of a). f32 results are exact (fmodf); b = 0 gives NaN (f32) or 0 (i64;
                undefined in ONNX); +-inf a gives NaN. i64 INT64_MIN mod -1 is 0.
   WHERE        cond (f32, nonzero = true), x, y (both f32 or both i64): cond ? x : y with
                three-way broadcasting; x's dtype out.
   CAST         x (f32, i64, i32 or bool) converted to luthier_cast_attrs.to: F32; I64 (floats
                truncate toward zero; NaN gives 0, out-of-range values and +-inf saturate to
                INT64_MIN / INT64_MAX); BOOL (x != 0 -> 1, else 0; NaN is true); F16 (f32 rounded to
                the nearest half, ties to even, overflow to +-inf, NaN kept; held in f32); I32 (held
                in i64: floats truncate, NaN 0, saturating at INT32_MIN / INT32_MAX; integers wrap
                modulo 2^32, as numpy and ONNX Runtime). The only operator that reads i32 and bool
                graph inputs.
   Index operators (ONNX semantics; the index outputs are i64 tensors in logical layout, which
   f32 operators refuse: feed them to GATHER, or make them graph outputs):
   ARGMAX, ARGMIN  x -> i64 positions along axis (luthier_argmax_attrs: axis, keepdims,
                select_last_index). Equal extremes: the first (the last with select_last_index).
                A NaN counts as the extreme of both (numpy's argmax/argmin, torch.argmax): the
                position of the first NaN (the last with select_last_index).
   TOPK         x -> values (f32), indices (i64): the k largest (smallest with largest = 0)
                elements along axis, best first (sorted = 0 allows any order; the engine always
                sorts), equal values by the lower index (stable, as ONNX requires; -0 equals
                +0). NaN is greater than every number (numpy's sort order, torch.topk): chosen
                first by largest, last by smallest. k is static (luthier_topk_attrs), 1 <= k <=
                the axis (at most 2^32 long). A heap of k per row: O(n log k), no full sort.
   CUMSUM       running sum along axis (luthier_cumsum_attrs): exclusive leaves out the element
                itself (the first output is 0), reverse sums from the end. Accumulates in double.
   TRILU        x of rank >= 2: per matrix of the last two axes, upper = 1 keeps the elements with
                column - row >= k, upper = 0 those with column - row <= k; the others are 0
                (luthier_trilu_attrs; any k).
   NON_MAX_SUPPRESSION  boxes [B,N,4], scores [B,C,N] -> selected (i64 [bound,3]: rows of
                (batch, class, box)) and count (i64 [1]): ONNX NonMaxSuppression with its
                constant inputs as luthier_nms_attrs; the same computation as luthier_nms (see
                there). The output count depends on the data, the graph's shapes do not:
                bound = B * C * min(max_output_boxes_per_class, N) (at least 1). The selected
                rows come first, in ONNX's order; the rows after them hold -1. The number of
                selected rows is output 1 (count), and output 0's run-time length (RUN-TIME
                LENGTHS at luthier_plan_output_length). Boxes and scores may have a run-time
                length over the boxes (one batch, one class).
   NONZERO      x (f32 or i64, rank >= 1) -> i64 [rank, numel]: the coordinates of the nonzero
                elements (NaN is nonzero) in row-major order, one column each; their count is
                the run-time length along axis 1 (columns past it hold 0).
   CONV_TRANSPOSE  x [N,Cin,H,W], w [Cin,Cout/groups,kh,kw] (constant; ONNX / PyTorch layout),
                [bias Cout] (constant) -> [N,Cout,OH,OW]: every input pixel scattered through the
                kernel, y[n, g*Cout_g + co, iy*sh - pt + ky*dh, ix*sw - pl + kx*dw] +=
                x[n, g*Cin_g + ci, iy, ix] * w[g*Cin_g + ci, co, ky, kx] (ONNX ConvTranspose,
                torch.nn.ConvTranspose2d). OH = (H-1)*sh - pt - pb + dh*(kh-1) + output_padding_h
                + 1 (OW alike). Typed attributes luthier_conv_transpose_attrs: stride, pads,
                dilation, output_padding, groups, fused activation (+ clamp) as conv2d's. Runs as
                GEMM + col2im in NHWC on the context's GEMM kernel (or the node configuration's).
   LSTM, GRU, RNN  recurrent layers, ONNX semantics and input order (luthier_rnn_attrs):
                X [seq,batch,input] (layout 1: [batch,seq,input]), W [dirs,G*hidden,input],
                R [dirs,G*hidden,hidden], [B [dirs,2*G*hidden]: Wb then Rb], [sequence_lens
                [batch], an i64 constant of lengths 1..seq: Y is zero past a row's length, Y_h
                and Y_c are its last step's states], [initial_h
                [dirs,batch,hidden] (layout 1: [batch,dirs,hidden])], LSTM: [initial_c (as
                initial_h)], [P [dirs,3*hidden]: peepholes i, o, f]. G = 4 (LSTM gates i, o, f,
                c), 3 (GRU z, r, h), 1 (RNN); dirs = 2 when bidirectional, else 1. W, R, B, P
                must be constants; absent B, P, initial states are zeros. Outputs: Y
                [seq,dirs,batch,hidden] (layout 1: [batch,seq,dirs,hidden]), Y_h (the last
                hidden state of each direction, shaped as initial_h), LSTM: Y_c (the last cell
                state). The reverse direction runs from the last time step to the first and
                writes Y at the original time index. Only the default activations: LSTM
                sigmoid/tanh/tanh, GRU sigmoid/tanh, RNN tanh. clip (has_clip) clamps every
                gate's pre-activation (peepholes and biases included) to [-clip, clip], as
                onnxruntime; LSTM input_forget couples the gates (f = 1 - i); GRU
                linear_before_reset applies the reset gate after the recurrent product
                (r (.) (h R_h^T + Rb_h)). luthier_graph_add_node writes 3 output ids (LSTM) or 2
                (GRU, RNN); num_outputs is 0 or that count.
   Indexing (ONNX semantics; data and updates f32, indices i64, constant or fed at run time;
   a negative index counts from the end once, -len..-1). Constant indices out of range are
   refused when the node is added (the message names the node); at run time an index out of
   range fails luthier_plan_run with INVALID_ARGUMENT naming the step, before anything is
   written (never a read or write out of bounds).
   GATHER_ELEMENTS  data [r dims], indices (rank r; off the axis no larger than data's dims) ->
                indices' shape: y[i..] = data[i.. with the axis coordinate replaced by idx[i..]]
                (luthier_gather_elements_attrs: axis).
   GATHER_ND    data (rank r), indices (rank q, last dim m in [1, r - b]) -> indices.shape[:-1] +
                data.shape[b + m:]: each index tuple selects a slice; the first b = batch_dims
                dims of data and indices must agree and pair up (luthier_gather_nd_attrs).
   SCATTER_ND   data, indices (last dim m <= r), updates (indices.shape[:-1] + data.shape[m:]) ->
                data's shape: a copy of data with each addressed slice combined with its update
                (luthier_scatter_nd_attrs: reduction none (assign) / add / mul / max / min).
   SCATTER_ELEMENTS  data, indices (rank r; off the axis no larger than data's dims), updates
                (indices' shape) -> data's shape: the element addressed as in GATHER_ELEMENTS
                combined with its update (luthier_scatter_elements_attrs: axis, reduction).
                Scatters apply updates in index order: with a reduction, duplicate indices
                combine in that order; without one the last update wins (ONNX leaves that
                undefined). max and min propagate NaN (numpy.maximum / minimum). */
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
    X(IDENTITY, "identity", 1, 1)                   \
    X(REDUCE, "reduce", 1, 1)                       \
    X(RESIZE, "resize", 1, 1)                       \
    X(DEPTH_TO_SPACE, "depth_to_space", 1, 1)       \
    X(SPACE_TO_DEPTH, "space_to_depth", 1, 1)       \
    X(PAD, "pad", 1, 1)                                                \
    X(LEAKY_RELU, "leaky_relu", 1, 1)               \
    X(ELU, "elu", 1, 1)                             \
    X(SELU, "selu", 1, 1)                           \
    X(CELU, "celu", 1, 1)                           \
    X(HARD_SIGMOID, "hard_sigmoid", 1, 1)           \
    X(HARD_SWISH, "hard_swish", 1, 1)               \
    X(SOFTPLUS, "softplus", 1, 1)                   \
    X(SOFTSIGN, "softsign", 1, 1)                   \
    X(MISH, "mish", 1, 1)                           \
    X(THRESHOLDED_RELU, "thresholded_relu", 1, 1)   \
    X(ABS, "abs", 1, 1)                             \
    X(LOG, "log", 1, 1)                             \
    X(FLOOR, "floor", 1, 1)                         \
    X(CEIL, "ceil", 1, 1)                           \
    X(ROUND, "round", 1, 1)                         \
    X(RECIPROCAL, "reciprocal", 1, 1)               \
    X(PRELU, "prelu", 2, 2)                         \
    X(SILU, "silu", 1, 1)                           \
    X(EQUAL, "equal", 2, 2)                                                     \
    X(GREATER, "greater", 2, 2)                                                 \
    X(LESS, "less", 2, 2)                                                       \
    X(GREATER_OR_EQUAL, "greater_or_equal", 2, 2)                               \
    X(LESS_OR_EQUAL, "less_or_equal", 2, 2)                                     \
    X(AND, "and", 2, 2)                                                         \
    X(OR, "or", 2, 2)                                                           \
    X(XOR, "xor", 2, 2)                                                         \
    X(MOD, "mod", 2, 2)                                                         \
    X(NOT, "not", 1, 1)                                                         \
    X(WHERE, "where", 3, 3)                                                     \
    X(CAST, "cast", 1, 1)                                                       \
    X(ARGMAX, "argmax", 1, 1)                                                   \
    X(ARGMIN, "argmin", 1, 1)                                                   \
    X(TOPK, "topk", 1, 1)                                                       \
    X(CUMSUM, "cumsum", 1, 1)                                                   \
    X(TRILU, "trilu", 1, 1)                                                     \
    X(NON_MAX_SUPPRESSION, "non_max_suppression", 2, 2)                         \
    X(CONV_TRANSPOSE, "conv_transpose", 2, 3)                                   \
    X(LSTM, "lstm", 3, 8)                                                       \
    X(GRU, "gru", 3, 6)                                                         \
    X(RNN, "rnn", 3, 6)                                                         \
    X(GATHER_ELEMENTS, "gather_elements", 2, 2)                                 \
    X(GATHER_ND, "gather_nd", 2, 2)                                             \
    X(SCATTER_ND, "scatter_nd", 3, 3)                                           \
    X(SCATTER_ELEMENTS, "scatter_elements", 3, 3)                               \
    X(NONZERO, "nonzero", 1, 1)

typedef enum luthier_op {
#define LUTHIER__X(e, name, lo, hi) LUTHIER_OP_##e,
    LUTHIER_OP_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER_OP_COUNT
} luthier_op;

#define LUTHIER_MAX_NODE_OUTPUTS 64

/* Typed attributes: one struct per operator that has them (operators of one family share one:
   the union's member names say which), read from luthier_node_desc.attr. Every value means
   what it says (0 is 0); the defaults are the ONNX ones, which luthier_node_attrs_default
   writes. With desc.typed nonzero an operator reads only its struct; with typed = 0 the
   operators that existed before the typed form read the flat fields of luthier_node_desc (the
   older form, where 0 means the default), so existing callers keep working, and the newer
   operators read attr as given. Variable-length attributes stay in the desc: SPLIT's
   num_outputs and sizes, RESHAPE's sizes, TRANSPOSE's perm. */
/* A fused activation (CONV2D, DENSE and the binary operators): applied to the result. */
typedef struct luthier_fused_activation {
    luthier_activation kind;    /* default NONE */
    float clamp_min, clamp_max; /* its parameters: CLAMP's bounds (min <= max), LEAKY_RELU's
                                   alpha, HARD_SIGMOID's alpha and beta (see luthier_activation) */
} luthier_fused_activation;

typedef struct luthier_conv2d_attrs {
    luthier_fused_activation act;
    int64_t stride[2];   /* h, w; default 1 */
    int64_t pads[4];     /* top, left, bottom, right; default 0 */
    int64_t dilation[2]; /* default 1 */
    int64_t groups;      /* default 1 */
} luthier_conv2d_attrs;

typedef struct luthier_dense_attrs {
    luthier_fused_activation act;
    int trans_b; /* 1: w is [K,N] */
} luthier_dense_attrs;

typedef struct luthier_binary_attrs { /* ADD, SUB, MUL, DIV, POW, MAX, MIN */
    luthier_fused_activation act;
} luthier_binary_attrs;

typedef struct luthier_matmul_attrs {
    int trans_b; /* 1: b is read as [..., N, K] */
} luthier_matmul_attrs;

typedef struct luthier_pool_attrs { /* MAXPOOL, AVGPOOL */
    int64_t kernel[2];     /* kh, kw (required) */
    int64_t stride[2];     /* default 1 (ONNX; the flat form's 0 means the kernel, as PyTorch) */
    int64_t pads[4];       /* top, left, bottom, right; each in [0, (kernel - 1) * dilation] */
    int64_t dilation[2];   /* MAXPOOL; default 1 */
    int ceil_mode;         /* default 0 */
    int count_include_pad; /* AVGPOOL; default 0 */
} luthier_pool_attrs;

typedef struct luthier_adaptive_pool_attrs {
    int64_t out_size[2]; /* output h, w (required, >= 1) */
} luthier_adaptive_pool_attrs;

typedef struct luthier_clip_attrs {
    float min, max; /* default -FLT_MAX, FLT_MAX (ONNX: the float's lowest and highest) */
} luthier_clip_attrs;

typedef struct luthier_gelu_attrs {
    int approximate; /* 1: the tanh form; default 0 (erf) */
} luthier_gelu_attrs;

typedef struct luthier_axis_attrs { /* CONCAT, SPLIT, GATHER */
    int axis; /* default 0; negative counts from the end */
} luthier_axis_attrs;

typedef struct luthier_softmax_attrs {
    int axis; /* default -1 (ONNX 13) */
    int log;  /* 1: log-softmax */
} luthier_softmax_attrs;

typedef struct luthier_lrn_attrs {
    int64_t size;            /* channels in the window (required, >= 1) */
    float alpha, beta, bias; /* default 1e-4, 0.75, 1 */
} luthier_lrn_attrs;

typedef struct luthier_flatten_attrs {
    int axis; /* default 1; 0 gives [1, numel]; negative counts from the end */
} luthier_flatten_attrs;

typedef struct luthier_batch_norm_attrs {
    float epsilon; /* default 1e-5; >= 0 */
} luthier_batch_norm_attrs;

typedef struct luthier_layer_norm_attrs {
    int axis;      /* first normalized dim; default -1 (the last); 0 normalizes everything */
    float epsilon; /* default 1e-5; >= 0 */
} luthier_layer_norm_attrs;

typedef struct luthier_attention_attrs {
    int causal;    /* 1: query i sees keys j <= i + Skv - Sq */
    int has_scale; /* 0: scale is 1/sqrt(D) (the default) */
    float scale;   /* multiplies q k^T when has_scale */
} luthier_attention_attrs;

/* REDUCE: ONNX ReduceMax .. ReduceSumSquare */
typedef enum luthier_reduce_kind {
    LUTHIER_REDUCE_MAX, LUTHIER_REDUCE_MIN, LUTHIER_REDUCE_SUM, LUTHIER_REDUCE_MEAN, LUTHIER_REDUCE_PROD,
    LUTHIER_REDUCE_L1, LUTHIER_REDUCE_L2, LUTHIER_REDUCE_LOG_SUM, LUTHIER_REDUCE_LOG_SUM_EXP, LUTHIER_REDUCE_SUM_SQUARE,
    LUTHIER_REDUCE_KIND_COUNT
} luthier_reduce_kind;

typedef struct luthier_reduce_attrs {
    luthier_reduce_kind kind;
    int keepdims;                /* default 1 */
    int num_axes;                /* 0: every axis */
    int axes[LUTHIER_MAX_RANK];  /* distinct; negative counts from the end */
} luthier_reduce_attrs;

/* RESIZE. Output axis i is sizes[i] when sizes[0] != 0, else floor(shape[i] * scales[i]); the
   coordinates map with scales[i] when scales are given, else with sizes[i] / shape[i] (ONNX).
   Input coordinate of output index o on an axis of length `in` resized to `out` with scale s,
   L = in * s (real; = out when sizes are given):
     HALF_PIXEL (default)  (o + 0.5) / s - 0.5
     PYTORCH_HALF_PIXEL    L > 1 ? (o + 0.5) / s - 0.5 : 0
     ALIGN_CORNERS         L > 1 ? o * (in - 1) / (L - 1) : 0
     ASYMMETRIC            o / s
     HALF_PIXEL_SYMMETRIC  in / 2 * (1 - out / L) + (o + 0.5) / s - 0.5
     TF_HALF_PIXEL_FOR_NN  (o + 0.5) / s (opset 11)
   NEAREST takes the input at that coordinate rounded by nearest_mode (clamped into the axis);
   LINEAR and CUBIC interpolate (cubic: Keys with coefficient cubic_coeff_a, exclude_outside = 1
   drops the taps outside the axis and renormalizes) with edge values outside. */
typedef enum luthier_resize_mode {
    LUTHIER_RESIZE_NEAREST = 0, LUTHIER_RESIZE_LINEAR, LUTHIER_RESIZE_CUBIC, LUTHIER_RESIZE_MODE_COUNT
} luthier_resize_mode;
typedef enum luthier_resize_coord {
    LUTHIER_RESIZE_HALF_PIXEL = 0, LUTHIER_RESIZE_PYTORCH_HALF_PIXEL, LUTHIER_RESIZE_ALIGN_CORNERS,
    LUTHIER_RESIZE_ASYMMETRIC, LUTHIER_RESIZE_HALF_PIXEL_SYMMETRIC, LUTHIER_RESIZE_TF_HALF_PIXEL_FOR_NN,
    LUTHIER_RESIZE_COORD_COUNT
} luthier_resize_coord;
typedef enum luthier_resize_nearest {
    LUTHIER_RESIZE_ROUND_PREFER_FLOOR = 0, LUTHIER_RESIZE_ROUND_PREFER_CEIL, LUTHIER_RESIZE_FLOOR,
    LUTHIER_RESIZE_CEIL, LUTHIER_RESIZE_NEAREST_COUNT
} luthier_resize_nearest;

typedef struct luthier_resize_attrs {
    int mode;                         /* luthier_resize_mode; default NEAREST */
    int coord;                        /* luthier_resize_coord; default HALF_PIXEL */
    int nearest_mode;                 /* luthier_resize_nearest; default ROUND_PREFER_FLOOR */
    int exclude_outside;              /* CUBIC; default 0 */
    float cubic_coeff_a;              /* CUBIC; default -0.75 */
    float scales[LUTHIER_MAX_RANK];   /* per input axis, > 0; default 1 */
    int64_t sizes[LUTHIER_MAX_RANK];  /* the output shape (>= 1 each), or all 0 (default): scales */
} luthier_resize_attrs;

typedef enum luthier_depth_to_space_mode {
    LUTHIER_DEPTH_TO_SPACE_DCR = 0, /* channel = (i * b + j) * C' + c */
    LUTHIER_DEPTH_TO_SPACE_CRD      /* channel = (c * b + i) * b + j */
} luthier_depth_to_space_mode;

typedef struct luthier_depth_to_space_attrs {
    int64_t blocksize; /* >= 1 (required) */
    int mode;          /* luthier_depth_to_space_mode; default DCR */
} luthier_depth_to_space_attrs;

typedef struct luthier_space_to_depth_attrs {
    int64_t blocksize; /* >= 1 (required); output channel = (i * b + j) * C + c */
} luthier_space_to_depth_attrs;

/* PAD. Output index o of an axis reads input index o - begin[axis]; outside [0, len):
   CONSTANT the value, REFLECT mirrored about the edge element (again at the other edge when a
   pad is longer than the axis, as numpy.pad), EDGE the edge element, WRAP from the other end
   (periodic). A negative pad removes elements (the output is
   the padded input cropped, the same in every mode). */
typedef enum luthier_pad_mode {
    LUTHIER_PAD_CONSTANT = 0, LUTHIER_PAD_REFLECT, LUTHIER_PAD_EDGE, LUTHIER_PAD_WRAP, LUTHIER_PAD_MODE_COUNT
} luthier_pad_mode;

typedef struct luthier_pad_attrs {
    int mode;                          /* luthier_pad_mode; default CONSTANT */
    float value;                       /* CONSTANT; default 0 */
    int64_t begin[LUTHIER_MAX_RANK];   /* elements added in front of each axis; default 0 */
    int64_t end[LUTHIER_MAX_RANK];     /* ... and after it (0 past the rank) */
} luthier_pad_attrs;

typedef struct luthier_leaky_relu_attrs {
    float alpha; /* slope for x < 0; default 0.01 */
} luthier_leaky_relu_attrs;

typedef struct luthier_elu_attrs {
    float alpha; /* default 1 */
} luthier_elu_attrs;

typedef struct luthier_selu_attrs {
    float alpha, gamma; /* default 1.67326319217681884765625, 1.05070102214813232421875 */
} luthier_selu_attrs;

typedef struct luthier_celu_attrs {
    float alpha; /* default 1; must not be 0 */
} luthier_celu_attrs;

typedef struct luthier_hard_sigmoid_attrs {
    float alpha, beta; /* default 0.2, 0.5 */
} luthier_hard_sigmoid_attrs;

typedef struct luthier_thresholded_relu_attrs {
    float alpha; /* default 1 */
} luthier_thresholded_relu_attrs;

typedef struct luthier_mod_attrs {
    int fmod; /* 0 (default): floored, the sign of the divisor; 1: C fmod, the sign of the dividend */
} luthier_mod_attrs;

typedef enum luthier_cast_to {
    LUTHIER_CAST_TO_F32 = 0, LUTHIER_CAST_TO_I64, LUTHIER_CAST_TO_BOOL, LUTHIER_CAST_TO_F16, LUTHIER_CAST_TO_I32,
    LUTHIER_CAST_TO_COUNT
} luthier_cast_to;

typedef struct luthier_cast_attrs {
    int to; /* luthier_cast_to; default F32. Output dtype: f32 for F32, BOOL, F16; i64 for I64, I32 */
} luthier_cast_attrs;
/* ARGMAX and ARGMIN. */
typedef struct luthier_argmax_attrs {
    int axis;              /* default 0; negative counts from the end */
    int keepdims;          /* 0 or 1 (default 1): the axis stays as a 1 */
    int select_last_index; /* 0 or 1 (default 0): the last of equal extremes */
} luthier_argmax_attrs;

typedef struct luthier_topk_attrs {
    int64_t k;   /* required: 1 <= k <= the axis's length */
    int axis;    /* default -1 */
    int largest; /* 0 or 1 (default 1) */
    int sorted;  /* 0 or 1 (default 1); the output is sorted either way */
} luthier_topk_attrs;

typedef struct luthier_cumsum_attrs {
    int axis;      /* default 0 */
    int exclusive; /* 0 or 1 (default 0) */
    int reverse;   /* 0 or 1 (default 0) */
} luthier_cumsum_attrs;

typedef struct luthier_trilu_attrs {
    int upper; /* 0 or 1 (default 1) */
    int64_t k; /* diagonal offset (default 0) */
} luthier_trilu_attrs;

/* NON_MAX_SUPPRESSION and luthier_nms: ONNX NonMaxSuppression's attribute and constant inputs. */
typedef struct luthier_nms_attrs {
    int center_point_box;               /* 0 (default): [y1,x1,y2,x2], any two opposite corners;
                                           1: [x_center, y_center, width, height] */
    int64_t max_output_boxes_per_class; /* >= 0 (default 0: nothing is selected) */
    float iou_threshold;                /* in [0, 1] (default 0): a box overlapping a selected box
                                           of its class by IoU > this is suppressed */
    int use_score_threshold;            /* 0 (default): every box is a candidate (the ONNX input
                                           is absent); 1: only scores > score_threshold */
    float score_threshold;              /* not NaN */
} luthier_nms_attrs;

/* CONV_TRANSPOSE (see LUTHIER_OP_LIST). 0 means 0: take luthier_node_attrs_default. */
typedef struct luthier_conv_transpose_attrs {
    luthier_fused_activation act;  /* fused, as conv2d's; default NONE */
    int64_t stride[2];         /* h, w; >= 1; default 1 */
    int64_t pads[4];           /* top, left, bottom, right: removed from the full output; >= 0 */
    int64_t dilation[2];       /* >= 1; default 1 */
    int64_t output_padding[2]; /* added at the bottom / right of the output; >= 0; default 0 */
    int64_t groups;            /* divides Cin; default 1 */
} luthier_conv_transpose_attrs;

/* LSTM, GRU, RNN (see LUTHIER_OP_LIST). */
typedef enum luthier_rnn_direction {
    LUTHIER_RNN_FORWARD = 0, LUTHIER_RNN_REVERSE, LUTHIER_RNN_BIDIRECTIONAL, LUTHIER_RNN_DIRECTION_COUNT
} luthier_rnn_direction;

typedef struct luthier_rnn_attrs {
    int64_t hidden_size;     /* >= 1 (required) */
    int direction;           /* luthier_rnn_direction; default FORWARD */
    int layout;              /* 0 (default): X [seq,batch,input]; 1: [batch,seq,input] */
    int has_clip;            /* 1: gate pre-activations clamped to [-clip, clip]; default 0 */
    float clip;              /* > 0 when has_clip */
    int linear_before_reset; /* GRU only: 0 (default) or 1 */
    int input_forget;        /* LSTM only: 0 (default) or 1 (forget gate = 1 - input gate) */
} luthier_rnn_attrs;

/* GATHER_ELEMENTS, GATHER_ND, SCATTER_ND, SCATTER_ELEMENTS (see LUTHIER_OP_LIST). */
typedef enum luthier_scatter_reduction {
    LUTHIER_SCATTER_NONE = 0, LUTHIER_SCATTER_ADD, LUTHIER_SCATTER_MUL, LUTHIER_SCATTER_MAX, LUTHIER_SCATTER_MIN,
    LUTHIER_SCATTER_REDUCTION_COUNT
} luthier_scatter_reduction;

typedef struct luthier_gather_elements_attrs {
    int axis; /* default 0; negative counts from the end */
} luthier_gather_elements_attrs;

typedef struct luthier_gather_nd_attrs {
    int batch_dims; /* default 0; >= 0 and below both ranks */
} luthier_gather_nd_attrs;

typedef struct luthier_scatter_nd_attrs {
    int reduction; /* luthier_scatter_reduction; default NONE */
} luthier_scatter_nd_attrs;

typedef struct luthier_scatter_elements_attrs {
    int axis;      /* default 0; negative counts from the end */
    int reduction; /* luthier_scatter_reduction; default NONE */
} luthier_scatter_elements_attrs;

typedef union luthier_node_attrs {
    luthier_conv2d_attrs conv2d;
    luthier_dense_attrs dense;
    luthier_binary_attrs binary;               /* ADD, SUB, MUL, DIV, POW, MAX, MIN */
    luthier_matmul_attrs matmul;
    luthier_pool_attrs pool;                   /* MAXPOOL, AVGPOOL */
    luthier_adaptive_pool_attrs adaptive_pool; /* ADAPTIVE_AVGPOOL */
    luthier_clip_attrs clip;
    luthier_gelu_attrs gelu;
    luthier_axis_attrs axis;                   /* CONCAT, SPLIT, GATHER */
    luthier_softmax_attrs softmax;
    luthier_lrn_attrs lrn;
    luthier_flatten_attrs flatten;
    luthier_batch_norm_attrs batch_norm;
    luthier_layer_norm_attrs layer_norm;
    luthier_attention_attrs attention;
    luthier_reduce_attrs reduce;
    luthier_resize_attrs resize;
    luthier_depth_to_space_attrs depth_to_space;
    luthier_space_to_depth_attrs space_to_depth;
    luthier_pad_attrs pad;
    luthier_leaky_relu_attrs leaky_relu;
    luthier_elu_attrs elu;
    luthier_selu_attrs selu;
    luthier_celu_attrs celu;
    luthier_hard_sigmoid_attrs hard_sigmoid;
    luthier_thresholded_relu_attrs thresholded_relu;
    luthier_mod_attrs mod;
    luthier_cast_attrs cast;
    luthier_argmax_attrs argmax;
    luthier_argmax_attrs argmin;
    luthier_topk_attrs topk;
    luthier_cumsum_attrs cumsum;
    luthier_trilu_attrs trilu;
    luthier_nms_attrs nms;
    luthier_conv_transpose_attrs conv_transpose;
    luthier_rnn_attrs lstm;
    luthier_rnn_attrs gru;
    luthier_rnn_attrs rnn;
    luthier_gather_elements_attrs gather_elements;
    luthier_gather_nd_attrs gather_nd;
    luthier_scatter_nd_attrs scatter_nd;
    luthier_scatter_elements_attrs scatter_elements;
    int64_t reserved_[16]; /* room for the operators to come without changing the size */
} luthier_node_attrs;

/* One node. The flat fields below are the operators' attributes in the older form: zero means
   the default for each of them, and only the op's own are read (see luthier_node_attrs for the
   operators whose attributes are typed). */
typedef struct luthier_node_desc {
    luthier_op op;
    const char *name;              /* for messages and reports; copied. NULL = "<op>_<index>" */
    const int *inputs;             /* tensor ids; -1 = an absent optional input */
    int num_inputs;
    int num_outputs;               /* SPLIT: number of parts; others 0 (= what the operator
                                      gives) or that count */
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
    float epsilon;                 /* BATCH_NORM (0 = 1e-5), LAYER_NORM (0 = 1e-5); typed: 0 is 0 */
    float alpha, beta, bias;       /* LRN (0 = 1e-4, 0.75, 1.0; typed: luthier_lrn_attrs) */
    int64_t size;                  /* LRN */
    int trans_b;                   /* DENSE, MATMUL */
    int approximate;               /* GELU: 1 = tanh approximation */
    int log;                       /* SOFTMAX */
    int causal;                    /* ATTENTION */
    float scale;                   /* ATTENTION: 0 = 1/sqrt(D) (typed: has_scale) */
    int typed;                     /* nonzero: attr holds the operator's typed attributes */
    luthier_node_attrs attr;       /* see luthier_node_attrs; a graph's nodes always hold them
                                      resolved (typed = 1) */
} luthier_node_desc;

/* Non-maximum suppression (ONNX NonMaxSuppression, also run by the NON_MAX_SUPPRESSION node),
   for firmware that runs a detection head alone. boxes [batches][num_boxes][4], scores
   [batches][classes][num_boxes] (f32). For each batch, then each class: the candidates (the
   boxes whose score is not NaN, and > score_threshold when use_score_threshold) in order of
   score, highest first, equal scores by the lower box index; a candidate is selected unless it
   overlaps an already selected box of that class by IoU > iou_threshold, until
   max_output_boxes_per_class are selected. The IoU is the ONNX reference's, in f32: corners
   taken as min/max of the two given (flipped corners are fine); boxes that do not intersect, or
   of zero or negative area, never suppress each other (identical boxes do, at any threshold
   below 1). Writes the selections as rows (batch, class, box) into selected [capacity][3], in
   that order, fills the remaining rows with -1, and sets *count to the number of selections
   (all of them: more than capacity gives LUTHIER_STATUS_OVERFLOW, with the first capacity
   rows written). scratch: luthier_nms_scratch_bytes(num_boxes) bytes, 8-aligned, or NULL (then
   the function allocates it and frees it). INVALID_ARGUMENT for a bad argument or attribute
   (negative sizes, center_point_box not 0/1, a negative max, iou_threshold outside [0, 1] or
   NaN, a NaN score_threshold in use). */
LUTHIER_API size_t luthier_nms_scratch_bytes(int64_t num_boxes); /* 0 when negative or too large */
LUTHIER_API luthier_status luthier_nms(const float *boxes, const float *scores, int64_t batches, int64_t classes,
                                       int64_t num_boxes, const luthier_nms_attrs *attrs, int64_t *selected,
                                       int64_t capacity, int64_t *count, void *scratch);

/* Writes op's default typed attributes into *a (zero for the fields that have no default);
   INVALID_ARGUMENT for an unknown op. */
LUTHIER_API luthier_status luthier_node_attrs_default(luthier_op op, luthier_node_attrs *a);

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
/* Adds a node after checking it; writes its output tensor ids to outputs (1; num_outputs for
   SPLIT; 2 for TOPK, NON_MAX_SUPPRESSION, GRU and RNN; 3 for LSTM). On failure the graph is
   unchanged. */
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
    int length_axis; /* -1, or the axis whose length is known only at run time: shape[length_axis]
                        is its capacity (see RUN-TIME LENGTHS at luthier_plan_output_length) */
    int length_root; /* the tensor whose count that length is (tensors with one root have equal
                        lengths); -1 without a length axis */
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

/* Precision of a plan's nodes (luthier_plan_desc.precision) or of one node
   (luthier_node_config.precision); one row each of luthier__precisions:
   DEFAULT  a plan: FP32, or INT8 when luthier_plan_desc.int8 is given; a node: its plan's.
   FP32     everything in fp32 (with luthier_plan_desc.int8 given, the nodes configured INT8 run
            int8 and the rest fp32).
   FP16     dense (fully connected) layers keep their weights in fp16, half the bytes that a
            memory-bound GEMM (batch 1: every classifier head, every transformer decode step)
            streams; the arithmetic stays fp32 (the F16W kernels: luthier_kernel_family), so the
            only error is each weight's rounding to fp16 (relative 2^-11). On CPUs with fp16
            arithmetic (Armv8.2 FP16, AVX-512 FP16), dense layers of at least 8 rows (transformer prompts,
            batches) and convolutions other than depthwise compute in fp16 too (the F16 kernels:
            twice the FMA rate; sums kept in fp16 over blocks of at most 256 steps of k, added up in
            fp32; convolutions by im2col or 1x1). Other nodes run fp32.
   INT8     the nodes whose tensors have quantization parameters in luthier_plan_desc.int8 run
            int8 (>>api-int8-plan); a node configured INT8 without them is refused.
   AUTO     a plan only: each node's precision from its records (luthier_tune with AUTO writes
            them, see >>api-tune), fp32 for the nodes without one.
   A node's configuration that names a kernel of a family its precision does not use (an F16W
   kernel on an FP32 node) is invalid (luthier_plan_desc.fallback_invalid); with DEFAULT the
   kernel names its own (an F16W kernel on a dense node is fp16 weights whatever the plan says). */
typedef enum luthier_precision {
    LUTHIER_PRECISION_DEFAULT = 0,
    LUTHIER_PRECISION_FP32,
    LUTHIER_PRECISION_FP16,
    LUTHIER_PRECISION_INT8,
    LUTHIER_PRECISION_AUTO,
    LUTHIER_PRECISION_COUNT
} luthier_precision;

/* "default", "fp32", "fp16", "int8", "auto" (the names records and tools use); NULL out of range. */
LUTHIER_API const char *luthier_precision_name(luthier_precision p);
/* The precision named name; INVALID_ARGUMENT (and *out untouched) for an unknown name. */
LUTHIER_API luthier_status luthier_precision_parse(const char *name, luthier_precision *out);

/* One node's configuration: the tuner's knobs. All zero = defaults. */
typedef struct luthier_node_config {
    luthier_conv_algorithm algorithm; /* CONV2D; AUTO = default choice */
    char kernel[64];                  /* CONV2D, DENSE, MATMUL: microkernel name; "" = default;
                                         CONV2D, DENSE: or one per cluster, "K0,K1,..." (short
                                         names; cluster c runs Kc; a plain name lets each
                                         cluster run its variant for its cores, see
                                         luthier_conv2d_info.cluster_kernels) */
    luthier_schedule schedule;
    int num_ratios;                   /* 0 = default split; else one weight per cluster */
    float ratios[LUTHIER_MAX_CLUSTERS];
    luthier_precision precision;      /* DEFAULT = the plan's; AUTO is refused */
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
    /* int8 inference (see >>api-int8-plan): NULL = fp32 everywhere. Otherwise (precision
       DEFAULT or INT8) the nodes whose tensors have quantization parameters here run on uint8
       activations and int8 weights, or (precision FP32, FP16, AUTO) the nodes whose precision
       is INT8; the rest run in fp32, with quantize/dequantize steps where the two meet. The
       calibration is read during luthier_plan_create only. */
    const luthier_calibration *int8;
    /* What AUTO picks for the nodes without a configuration (luthier_auto_policy):
       LUTHIER_AUTO_DEFAULT (0) = the context's policy (luthier_context_desc.auto_policy). */
    luthier_auto_policy auto_policy;
    /* The plan's precision (luthier_precision; a node's configuration may name its own). */
    luthier_precision precision;
    /* fp16 activations between fp16 nodes: 0 = where the CPU has fp16 arithmetic (Armv8.2 FP16,
       HWCAP ASIMDHP; AVX-512 FP16), that is where fp16 plans run the F16 kernels; elsewhere (a
       Cortex-A72, x86 without AVX-512 FP16) activations stay fp32 as in any plan. -1 = never.
       1 = also on other CPUs, where the F16 kernels' scalar emulation runs (slow: to test an
       fp16 plan's structure anywhere). With them, the convolutions of FP16 nodes on F16 kernels
       (1x1 and im2col: not depthwise) and their dense layers of 8 rows or more read and write
       fp16 (an fp32 bias, accumulation, activation, then the rounding to fp16), views keep it,
       the element-wise operators, pools, softmax, norms, transposes, gathers and attention take
       fp16 values with fp32 math inside (each output rounded once), and "to_f16" / "to_f32" steps
       convert where fp16 and fp32 steps meet (luthier_step_info.fp16); the activation arena
       shrinks with them. */
    int fp16_activations;
} luthier_plan_desc;

typedef struct luthier_plan_info {
    int num_steps;                /* steps run (after fusion and layout conversions) */
    int num_inputs, num_outputs;
    size_t weights_bytes;         /* packed/transformed constants owned by the plan */
    size_t arena_bytes;           /* activation arena */
    size_t sum_activation_bytes;  /* all intermediate tensors, as if none shared memory */
    size_t workspace_bytes;       /* context workspace reserved for the steps */
    double flops;                 /* per run */
    int num_fallbacks;            /* configurations (records) that did not fit their node: defaults
                                     ran instead; luthier_context_error names the first */
} luthier_plan_info;

typedef struct luthier_step_info {
    const char *name;             /* the producing node's name */
    luthier_op op;
    const char *fused;            /* e.g. "batch_norm+relu" or "" */
    int node;                     /* graph node index; -1 for a layout conversion */
    luthier_conv_algorithm algorithm;
    const char *kernel;           /* "" when no microkernel runs */
    const char *cluster_kernels[LUTHIER_MAX_CLUSTERS]; /* conv2d and dense steps: the kernel each
                                     cluster of the creating context runs (kernel, or its variant
                                     for the cluster's cores: luthier_conv2d_info); NULL past
                                     the clusters and for other steps */
    luthier_schedule schedule;
    int num_ratios;
    float ratios[LUTHIER_MAX_CLUSTERS];
    double flops;
    double last_seconds;          /* from the last luthier_plan_run with profiling on */
    int int8;                     /* 1: reads or writes uint8 activations (int8 steps, and the
                                     "quantize" / "dequantize" conversions: op IDENTITY, node -1) */
    int fp16;                     /* 1: reads or writes fp16 activations (fp16-activation
                                     steps, and the "to_f16" / "to_f32" conversions: op IDENTITY,
                                     node -1; luthier_plan_desc.fp16_activations) */
    const char *isa;              /* instruction set of the code that runs the step on the
                                     creating context: "avx512", "avx2", "sse2", "avx512vnni",
                                     "neon", "neon_dot", "neon_i8mm", ...; "scalar" (plain C, or
                                     a part of the step such as a gather is); "copy" (memcpy
                                     only: concat, split, gather); "none" (nothing runs) */
    double bytes;                 /* memory traffic of one run: the node's inputs (weights
                                     included) read once and its outputs written once, as the
                                     operator's infer hook counts it; 0 for layout conversions */
} luthier_step_info;

/* Creates a plan; the graph may be changed or destroyed afterwards. On failure nothing is
   leaked and the context stays usable; the message names the node. */
LUTHIER_API luthier_status luthier_plan_create(luthier_context *ctx, const luthier_graph *g,
                                               const luthier_plan_desc *desc, luthier_plan **out);
LUTHIER_API void luthier_plan_destroy(luthier_plan *p); /* NULL is a no-op */
LUTHIER_API luthier_status luthier_plan_get_info(const luthier_plan *p, luthier_plan_info *out);
LUTHIER_API luthier_status luthier_plan_step_info(const luthier_plan *p, int step,
                                                  luthier_step_info *out);
/* The plan as text, for people: one line per step (op, node name, what was fused, algorithm and
   kernel, instruction set, int8) with its input and output values (dtype, layout, shape, where they live), then
   the memory (arena, weights, workspace). Writes at most size bytes, always 0-terminated when
   size > 0, and returns the length of the whole text (buf may be NULL with size 0). With
   LUTHIER_PLAN_TRACE=1 in the environment, luthier_plan_create prints it after each of its
   passes to stderr. */
LUTHIER_API size_t luthier_plan_describe(const luthier_plan *p, char *buf, size_t size);
/* Caller-provided arena: at least arena_bytes, 64-byte aligned; must outlive its use. */
LUTHIER_API luthier_status luthier_plan_bind_arena(luthier_plan *p, void *arena, size_t bytes);
/* Profiling: when on, every step is timed into luthier_step_info.last_seconds. */
LUTHIER_API luthier_status luthier_plan_set_profiling(luthier_plan *p, int on);
/* inputs[i] for the i-th graph input (logical row-major order, dtype as declared);
   outputs[i] receives the i-th graph output. The steps write the outputs straight into these
   buffers when none of them overlaps an input, another output or the arena; otherwise they
   compute in the arena and the outputs are copied at the end, in order (so an output buffer may
   be an input's: the input is read whole first). Runs on ctx (any context whose topology matches
   the plan's ratios; the workspace is reserved on the creating context). No allocation when the
   arena is allocated or bound and ctx is the creating context. */
LUTHIER_API luthier_status luthier_plan_run(luthier_context *ctx, luthier_plan *p,
                                            const void *const *inputs, void *const *outputs);

/* RUN-TIME LENGTHS. Some operators produce a number of entries that depends on the data:
   NONZERO (the nonzero elements), NON_MAX_SUPPRESSION (the selected boxes), and from them TOPK
   with k above what remains, CONCAT of such tensors, a prefix gathered from one (ONNX Slice).
   Their shapes stay static, so the plan and its arena are static: along one axis (the tensor's
   luthier_tensor_info.length_axis) the shape entry is a capacity, and each run records how many
   of those entries are valid (the first n; the rest are filled with 0, or -1 for the selected
   rows of NON_MAX_SUPPRESSION, and mean nothing). The length travels with the data: element-wise
   operators, views (reshape, flatten, identity: the axis must stay whole), TRANSPOSE, GATHER,
   GATHER_ND, TOPK, CONCAT and NON_MAX_SUPPRESSION take such inputs; GATHER checks run-time
   indices against the valid length (negative ones count from its end). REDUCE reads only the
   valid entries (the axis after 1s only); over none it gives ONNX's reduction of an empty set:
   max -inf, min +inf, sum, L1, L2 and sum of squares 0, prod 1, mean NaN, log-sum and
   log-sum-exp -inf. Any other operator
   refuses them when the node is added, with a message naming it and the input.
   luthier_plan_output_length: after luthier_plan_run, graph output i's valid length along its
   *axis (the output buffer still receives the whole capacity); *axis = -1 and *length = -1 when
   the output's shape is static. Either pointer may be NULL. */
LUTHIER_API luthier_status luthier_plan_output_length(const luthier_plan *p, int i, int *axis, int64_t *length);

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
    int len_axis;      /* the axis whose length is known at run time (shape: its capacity), -1 */
    int len_root;      /* the tensor whose run-time count that length is (>>impl-lengths) */
} luthier__gtensor;

typedef struct luthier__gnode {
    luthier_node_desc d; /* d.name, d.inputs, d.sizes, d.perm point at the copies below */
    char *name;
    int *inputs;
    int *outputs;
    int num_outputs;
    int64_t *sizes;
    int perm[LUTHIER_MAX_RANK];
    double flops, bytes;
} luthier__gnode;

/* Name -> index hash (open addressing, -1 = empty) of the tensors or the nodes of a graph. */
typedef struct luthier__names {
    int *slot;
    int cap, used; /* used: filled slots, stale ones of rolled-back additions included */
} luthier__names;

struct luthier_graph {
    luthier__names names[2]; /* [0] tensors, [1] nodes */
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

/* >>op-registry: one row per operator of LUTHIER_OP_LIST (name, input counts) and its hooks:
     attrs   its typed attributes (luthier_node_attrs) from a desc with typed = 0: the flat fields
             for the operators that had them, attr as given for the others; NULL desc: the
             defaults. "none": the operator has no typed attributes (it reads the flat fields);
     infer   checks a node's inputs and attributes, gives its output shapes and FLOPs
             (luthier_graph_add_node);
     run     runs the node's plan step (luthier_plan_run); "view" for the operators a plan
             turns into aliases of their input (reshape, flatten, identity), which never run;
     lower   prepares the step at plan time (weights packed or transformed, workspace);
     layout  the layout the step works in (LUTHIER__LAYOUT_*);
     dtypes  F32: every input is f32 (checked before infer); HOOK: the infer hook checks the
             inputs' dtypes and gives each output's (luthier__infer.dtype);
     lens    how the operator takes inputs with a run-time length (>>impl-lengths): NO refuses
             them when the node is added (the message names the operator and the input);
             FOLLOW (element-wise) gives output 0 the inputs' length along the axis it
             broadcasts to, computing the whole capacity; HOOK: the infer hook places the
             lengths of the outputs and the run hook reads and sets them;
     h16     whether the node's step reads and writes fp16 activations in an fp16-activation plan
             (luthier_plan_desc.fp16_activations; >>impl-plan-h16): "no"; NATIVE forms (conv,
             dense, maxpool, concat, view) whose run or lower hook reads fp16 itself; "wide":
             the fp32 run hook on fp32 copies of its fp16 inputs, its outputs narrowed
             (luthier__run_h16_wide: pools, softmax, norms, transposes, gathers, attention);
             "elt": the element-wise operators, whose run hook reads fp16 operands and writes
             fp16 itself, vector by vector (luthier__op_unary_h16, luthier__op_binary_h16), its
             other inputs fp32 as "wide" leaves them.
   Operators of one family share a hook: X(ENUM, attrs, infer, run, lower, layout, dtypes, lens, h16) names
   luthier__attrs_<attrs>, luthier__infer_<infer>, luthier__run_<run>, luthier__lower_<lower> and luthier__h16_<h16>. The rows are in LUTHIER_OP_LIST's order
   (test_op_registry checks it). */
typedef struct luthier__infer_args luthier__infer_args;
typedef struct luthier__run_args luthier__run_args;
typedef struct luthier__planner luthier__planner;
typedef struct luthier__pstep luthier__pstep;

/* The layout rule of a step (and how many of its inputs are activations; the others are
   constants its lower hook owns). */
enum {
    LUTHIER__LAYOUT_PLAIN,    /* logical order (NCHW), every input */
    LUTHIER__LAYOUT_PLAIN_X,  /* logical order, input 0 only (dense, layer norm) */
    LUTHIER__LAYOUT_NHWC,     /* NHWC, input 0 only (convolution, pooling, LRN) */
    LUTHIER__LAYOUT_FOLLOW,   /* input 0's layout (element-wise, split, softmax) */
    LUTHIER__LAYOUT_FOLLOW_X, /* input 0's layout, input 0 only (batch norm) */
    LUTHIER__LAYOUT_BINARY,   /* NHWC when the output is 4-D and an input is NHWC */
    LUTHIER__LAYOUT_ANY_NHWC  /* NHWC when an input is (concat) */
};
enum { LUTHIER__DTYPES_F32, LUTHIER__DTYPES_HOOK };
enum { LUTHIER__LENS_NO, LUTHIER__LENS_FOLLOW, LUTHIER__LENS_HOOK };
enum { LUTHIER__H16_NO, LUTHIER__H16_NATIVE, LUTHIER__H16_WIDE, LUTHIER__H16_ELT }; /* what an h16 hook answers */
typedef luthier_status (*luthier__infer_fn)(const luthier__infer_args *arg);
typedef luthier_status (*luthier__run_fn)(const luthier__run_args *arg);

#define LUTHIER__OP_HOOKS(X) \
    X(CONV2D, conv2d, conv2d, conv2d, conv2d, NHWC, F32, NO, conv)              \
    X(DENSE, dense, dense, dense, dense, PLAIN_X, F32, NO, dense)               \
    X(MATMUL, matmul, matmul, matmul, matmul, PLAIN, F32, NO, no)               \
    X(MAXPOOL, pool, pool, pool, none, NHWC, F32, NO, maxpool)                  \
    X(AVGPOOL, pool, pool, pool, none, NHWC, F32, NO, wide)                     \
    X(GLOBAL_AVGPOOL, none, global_pool, global_pool, none, NHWC, F32, NO, wide) \
    X(ADAPTIVE_AVGPOOL, adaptive_pool, global_pool, global_pool, none, NHWC, F32, NO, wide) \
    X(RELU, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(CLIP, clip, clip, unary, none, FOLLOW, F32, FOLLOW, elt)                  \
    X(GELU, gelu, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(SIGMOID, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)        \
    X(TANH, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(ERF, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(EXP, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(SQRT, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(NEG, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(ADD, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(SUB, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(MUL, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(DIV, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(POW, binary, binary, binary, none, BINARY, F32, FOLLOW, wide)             \
    X(MAX, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(MIN, binary, binary, binary, none, BINARY, F32, FOLLOW, elt)              \
    X(CONCAT, axis, concat, concat_split, none, ANY_NHWC, HOOK, HOOK, concat)   \
    X(SPLIT, axis, split, concat_split, none, FOLLOW, F32, HOOK, no)            \
    X(SOFTMAX, softmax, softmax, softmax, none, FOLLOW, F32, NO, wide)          \
    X(LAYER_NORM, layer_norm, layer_norm, layer_norm, layer_norm, PLAIN_X, F32, NO, wide) \
    X(BATCH_NORM, batch_norm, batch_norm, batch_norm, batch_norm, FOLLOW_X, F32, NO, wide) \
    X(LRN, lrn, lrn, lrn, none, NHWC, F32, NO, no)                              \
    X(FLATTEN, flatten, flatten, view, none, PLAIN, HOOK, HOOK, view)           \
    X(RESHAPE, none, reshape, view, none, PLAIN, HOOK, HOOK, view)              \
    X(TRANSPOSE, none, transpose, transpose, none, PLAIN, HOOK, HOOK, wide) \
    X(GATHER, axis, gather, gather, none, PLAIN, HOOK, HOOK, wide) \
    X(ATTENTION, attention, attention, attention, attention, PLAIN, F32, NO, wide) \
    X(IDENTITY, none, identity, view, none, FOLLOW, HOOK, HOOK, view)           \
    X(REDUCE, reduce, reduce, reduce, none, PLAIN, F32, HOOK, no)               \
    X(RESIZE, resize, resize, resize, resize, FOLLOW_X, F32, NO, no)            \
    X(DEPTH_TO_SPACE, depth_to_space, depth_space, depth_space, none, FOLLOW_X, F32, NO, no) \
    X(SPACE_TO_DEPTH, space_to_depth, depth_space, depth_space, none, FOLLOW_X, F32, NO, no) \
    X(PAD, pad, pad, pad, none, FOLLOW_X, F32, NO, no)                          \
    X(LEAKY_RELU, leaky_relu, activation, unary, none, FOLLOW, F32, FOLLOW, elt) \
    X(ELU, elu, activation, unary, none, FOLLOW, F32, FOLLOW, elt)              \
    X(SELU, selu, activation, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(CELU, celu, activation, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(HARD_SIGMOID, hard_sigmoid, activation, unary, none, FOLLOW, F32, FOLLOW, elt) \
    X(HARD_SWISH, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)     \
    X(SOFTPLUS, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)       \
    X(SOFTSIGN, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)       \
    X(MISH, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(THRESHOLDED_RELU, thresholded_relu, activation, unary, none, FOLLOW, F32, FOLLOW, elt) \
    X(ABS, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(LOG, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)            \
    X(FLOOR, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)          \
    X(CEIL, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(ROUND, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)          \
    X(RECIPROCAL, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)     \
    X(PRELU, none, prelu, binary, none, BINARY, F32, NO, elt)                   \
    X(SILU, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, elt)           \
    X(EQUAL, none, compare, compare, none, BINARY, HOOK, FOLLOW, no)            \
    X(GREATER, none, compare, compare, none, BINARY, HOOK, FOLLOW, no)          \
    X(LESS, none, compare, compare, none, BINARY, HOOK, FOLLOW, no)             \
    X(GREATER_OR_EQUAL, none, compare, compare, none, BINARY, HOOK, FOLLOW, no) \
    X(LESS_OR_EQUAL, none, compare, compare, none, BINARY, HOOK, FOLLOW, no)    \
    X(AND, none, binary, compare, none, BINARY, F32, FOLLOW, no)                \
    X(OR, none, binary, compare, none, BINARY, F32, FOLLOW, no)                 \
    X(XOR, none, binary, compare, none, BINARY, F32, FOLLOW, no)                \
    X(MOD, mod, mod, mod, none, BINARY, HOOK, FOLLOW, no)                       \
    X(NOT, none, elementwise, unary, none, FOLLOW, F32, FOLLOW, no)             \
    X(WHERE, none, where, where, none, PLAIN, HOOK, FOLLOW, no)                 \
    X(CAST, cast, cast, cast, none, PLAIN, HOOK, FOLLOW, no)                    \
    X(ARGMAX, argmax, argext, argext, none, PLAIN, HOOK, NO, no)                \
    X(ARGMIN, argmin, argext, argext, none, PLAIN, HOOK, NO, no)                \
    X(TOPK, topk, topk, topk, none, PLAIN, HOOK, HOOK, no)                      \
    X(CUMSUM, cumsum, cumsum, cumsum, none, PLAIN, F32, NO, no)                 \
    X(TRILU, trilu, trilu, trilu, none, PLAIN, F32, NO, no)                     \
    X(NON_MAX_SUPPRESSION, nms, nms, nms, nms, PLAIN, HOOK, HOOK, no)           \
    X(CONV_TRANSPOSE, conv_transpose, conv_transpose, conv_transpose, conv_transpose, NHWC, F32, NO, no) \
    X(LSTM, lstm, rnn, rnn, rnn, PLAIN, HOOK, NO, no)                           \
    X(GRU, gru, rnn, rnn, rnn, PLAIN, HOOK, NO, no)                             \
    X(RNN, rnn, rnn, rnn, rnn, PLAIN, HOOK, NO, no)                             \
    X(GATHER_ELEMENTS, gather_elements, gather_elements, gather_elements, none, PLAIN, HOOK, NO, no) \
    X(GATHER_ND, gather_nd, gather_nd, gather_nd, none, PLAIN, HOOK, HOOK, no)  \
    X(SCATTER_ND, scatter_nd, scatter_nd, scatter_nd, none, PLAIN, HOOK, NO, no) \
    X(SCATTER_ELEMENTS, scatter_elements, scatter_elements, scatter_elements, none, PLAIN, HOOK, NO, no) \
    X(NONZERO, none, nonzero, nonzero, none, PLAIN, HOOK, NO, no)

#define LUTHIER__X(e, attrs, inf, run, lower, layout, dtypes, lens, h16)                      \
    LUTHIER_PRIVATE void luthier__attrs_##attrs(const luthier_node_desc *d, luthier_node_attrs *a);           \
    LUTHIER_PRIVATE luthier_status luthier__infer_##inf(const luthier__infer_args *arg);             \
    LUTHIER_PRIVATE luthier_status luthier__run_##run(const luthier__run_args *arg);                 \
    LUTHIER_PRIVATE luthier_status luthier__lower_##lower(luthier__planner *pl, luthier__pstep *st, int ni); \
    LUTHIER_PRIVATE int luthier__h16_##h16(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins);
LUTHIER__OP_HOOKS(LUTHIER__X)
#undef LUTHIER__X

/* The public half of each row (LUTHIER_OP_LIST: name, input counts) ... */
static const struct { const char *name; int lo, hi; } luthier__op_names[] = {
#define LUTHIER__X(e, name, lo, hi) {name, lo, hi},
    LUTHIER_OP_LIST(LUTHIER__X)
#undef LUTHIER__X
};

/* ... and its hooks, indexed by luthier_op. */
typedef struct luthier__op_row {
    luthier_op op;
    void (*attrs)(const luthier_node_desc *d, luthier_node_attrs *a);
    luthier__infer_fn infer;
    luthier__run_fn run;
    luthier_status (*lower)(luthier__planner *pl, luthier__pstep *st, int ni);
    int layout; /* LUTHIER__LAYOUT_* */
    int dtypes; /* LUTHIER__DTYPES_* */
    int lens;   /* LUTHIER__LENS_* */
    int (*h16)(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins); /* LUTHIER__H16_* */
} luthier__op_row;

static const luthier__op_row luthier__ops[] = {
#define LUTHIER__X(e, attrs, inf, run, lower, layout, dtypes, lens, h16) \
    {LUTHIER_OP_##e, luthier__attrs_##attrs, luthier__infer_##inf, luthier__run_##run, luthier__lower_##lower, LUTHIER__LAYOUT_##layout, LUTHIER__DTYPES_##dtypes, LUTHIER__LENS_##lens, luthier__h16_##h16},
    LUTHIER__OP_HOOKS(LUTHIER__X)
#undef LUTHIER__X
};

LUTHIER_API const char *luthier_op_name(luthier_op op) {
    if ((unsigned)op >= (unsigned)LUTHIER_OP_COUNT) return "unknown";
    return luthier__op_names[op].name;
}

/* >>op-attrs: each row's attrs hook (see >>op-registry). */
LUTHIER_PRIVATE void luthier__attrs_none(const luthier_node_desc *d, luthier_node_attrs *a) {
    (void)d;
    (void)a;
}

LUTHIER_PRIVATE void luthier__attrs_act(const luthier_node_desc *d, luthier_fused_activation *a) {
    a->kind = d ? d->activation : LUTHIER_ACTIVATION_NONE;
    a->clamp_min = d ? d->clamp_min : 0.0f;
    a->clamp_max = d ? d->clamp_max : 0.0f;
}

/* The flat form's 0 stride, dilation and groups mean 1. */
LUTHIER_PRIVATE void luthier__attrs_conv2d(const luthier_node_desc *d, luthier_node_attrs *a) {
    int i;
    luthier__attrs_act(d, &a->conv2d.act);
    for (i = 0; i < 2; i++) {
        a->conv2d.stride[i] = d && d->stride[i] ? d->stride[i] : 1;
        a->conv2d.dilation[i] = d && d->dilation[i] ? d->dilation[i] : 1;
    }
    for (i = 0; i < 4; i++) a->conv2d.pads[i] = d ? d->pads[i] : 0;
    a->conv2d.groups = d && d->groups ? d->groups : 1;
}

LUTHIER_PRIVATE void luthier__attrs_dense(const luthier_node_desc *d, luthier_node_attrs *a) {
    luthier__attrs_act(d, &a->dense.act);
    a->dense.trans_b = d ? d->trans_b : 0;
}

LUTHIER_PRIVATE void luthier__attrs_binary(const luthier_node_desc *d, luthier_node_attrs *a) {
    luthier__attrs_act(d, &a->binary.act);
}

LUTHIER_PRIVATE void luthier__attrs_matmul(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->matmul.trans_b = d ? d->trans_b : 0;
}

/* The flat form's 0 stride means the kernel (PyTorch), 0 dilation 1; typed, the default is 1. */
LUTHIER_PRIVATE void luthier__attrs_pool(const luthier_node_desc *d, luthier_node_attrs *a) {
    int i;
    for (i = 0; i < 2; i++) {
        a->pool.kernel[i] = d ? d->kernel[i] : 0;
        a->pool.stride[i] = d && d->stride[i] ? d->stride[i] : d ? d->kernel[i] : 1;
        a->pool.dilation[i] = d && d->dilation[i] ? d->dilation[i] : 1;
    }
    for (i = 0; i < 4; i++) a->pool.pads[i] = d ? d->pads[i] : 0;
    a->pool.ceil_mode = d ? d->ceil_mode : 0;
    a->pool.count_include_pad = d ? d->count_include_pad : 0;
}

LUTHIER_PRIVATE void luthier__attrs_adaptive_pool(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->adaptive_pool.out_size[0] = d ? d->out_size[0] : 0;
    a->adaptive_pool.out_size[1] = d ? d->out_size[1] : 0;
}

LUTHIER_PRIVATE void luthier__attrs_clip(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->clip.min = d ? d->clamp_min : -FLT_MAX;
    a->clip.max = d ? d->clamp_max : FLT_MAX;
}

LUTHIER_PRIVATE void luthier__attrs_gelu(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->gelu.approximate = d ? d->approximate : 0;
}

LUTHIER_PRIVATE void luthier__attrs_axis(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->axis.axis = d ? d->axis : 0;
}

LUTHIER_PRIVATE void luthier__attrs_softmax(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->softmax.axis = d ? d->axis : -1;
    a->softmax.log = d ? d->log : 0;
}

LUTHIER_PRIVATE const char *luthier__act_name(luthier_activation a) {
    static const char *const n[] = {
#define LUTHIER__X(name, text, params) text,
        LUTHIER_ACTIVATION_LIST(LUTHIER__X)
#undef LUTHIER__X
    };
    return (unsigned)a < (unsigned)LUTHIER_ACTIVATION_COUNT ? n[a] : "?";
}

/* How many of (clamp_min, clamp_max) activation a reads. */
LUTHIER_PRIVATE int luthier__act_params(luthier_activation a) {
    static const unsigned char n[] = {
#define LUTHIER__X(name, text, params) params,
        LUTHIER_ACTIVATION_LIST(LUTHIER__X)
#undef LUTHIER__X
    };
    return (unsigned)a < (unsigned)LUTHIER_ACTIVATION_COUNT ? n[a] : 0;
}

/* The fused activation of a node that has one (conv2d, dense, conv_transpose, binary operators),
   else NULL. */
LUTHIER_PRIVATE const luthier_fused_activation *luthier__node_act(const luthier_node_desc *d) {
    if (d->op == LUTHIER_OP_CONV2D) return &d->attr.conv2d.act;
    if (d->op == LUTHIER_OP_DENSE) return &d->attr.dense.act;
    if (d->op == LUTHIER_OP_CONV_TRANSPOSE) return &d->attr.conv_transpose.act;
    if (d->op >= LUTHIER_OP_ADD && d->op <= LUTHIER_OP_MIN) return &d->attr.binary.act;
    return NULL;
}

LUTHIER_PRIVATE void luthier__attrs_lrn(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->lrn.size = d ? d->size : 0;
    a->lrn.alpha = d && d->alpha != 0 ? d->alpha : 1e-4f;
    a->lrn.beta = d && d->beta != 0 ? d->beta : 0.75f;
    a->lrn.bias = d && d->bias != 0 ? d->bias : 1.0f;
}

LUTHIER_PRIVATE void luthier__attrs_flatten(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->flatten.axis = d && d->axis != 0 ? d->axis : 1;
}

LUTHIER_PRIVATE void luthier__attrs_batch_norm(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->batch_norm.epsilon = d && d->epsilon != 0 ? d->epsilon : 1e-5f;
}

LUTHIER_PRIVATE void luthier__attrs_layer_norm(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->layer_norm.axis = d && d->axis != 0 ? d->axis : -1;
    a->layer_norm.epsilon = d && d->epsilon != 0 ? d->epsilon : 1e-5f;
}

LUTHIER_PRIVATE void luthier__attrs_attention(const luthier_node_desc *d, luthier_node_attrs *a) {
    a->attention.causal = d ? d->causal : 0;
    a->attention.has_scale = d && d->scale != 0;
    a->attention.scale = d ? d->scale : 0.0f;
}

/* The operators whose attributes exist only in typed form: attr as given, and without a desc
   their ONNX defaults (those not named here are 0). */
#define LUTHIER__TYPED_ATTRS(name, defaults)                                                        \
    LUTHIER_PRIVATE void luthier__attrs_##name(const luthier_node_desc *d, luthier_node_attrs *a) { \
        if (d) {                                                                                    \
            *a = d->attr;                                                                           \
            return;                                                                                 \
        }                                                                                           \
        defaults;                                                                                   \
    }

LUTHIER_PRIVATE void luthier__resize_defaults(luthier_resize_attrs *r) {
    int i;
    r->cubic_coeff_a = -0.75f;
    for (i = 0; i < LUTHIER_MAX_RANK; i++) r->scales[i] = 1.0f;
}

LUTHIER_PRIVATE void luthier__conv_transpose_defaults(luthier_conv_transpose_attrs *c) {
    c->stride[0] = c->stride[1] = c->dilation[0] = c->dilation[1] = c->groups = 1;
}

LUTHIER__TYPED_ATTRS(reduce, a->reduce.keepdims = 1)
LUTHIER__TYPED_ATTRS(resize, luthier__resize_defaults(&a->resize))
LUTHIER__TYPED_ATTRS(depth_to_space, (void)a)
LUTHIER__TYPED_ATTRS(space_to_depth, (void)a)
LUTHIER__TYPED_ATTRS(pad, (void)a)
LUTHIER__TYPED_ATTRS(leaky_relu, a->leaky_relu.alpha = 0.01f)
LUTHIER__TYPED_ATTRS(elu, a->elu.alpha = 1.0f)
LUTHIER__TYPED_ATTRS(selu, (a->selu.alpha = 1.67326319217681884765625f, a->selu.gamma = 1.05070102214813232421875f))
LUTHIER__TYPED_ATTRS(celu, a->celu.alpha = 1.0f)
LUTHIER__TYPED_ATTRS(hard_sigmoid, (a->hard_sigmoid.alpha = 0.2f, a->hard_sigmoid.beta = 0.5f))
LUTHIER__TYPED_ATTRS(thresholded_relu, a->thresholded_relu.alpha = 1.0f)
LUTHIER__TYPED_ATTRS(mod, (void)a)
LUTHIER__TYPED_ATTRS(cast, (void)a)
LUTHIER__TYPED_ATTRS(argmax, a->argmax.keepdims = 1)
LUTHIER__TYPED_ATTRS(argmin, a->argmin.keepdims = 1)
LUTHIER__TYPED_ATTRS(topk, (a->topk.axis = -1, a->topk.largest = a->topk.sorted = 1))
LUTHIER__TYPED_ATTRS(cumsum, (void)a)
LUTHIER__TYPED_ATTRS(trilu, a->trilu.upper = 1)
LUTHIER__TYPED_ATTRS(nms, (void)a)
LUTHIER__TYPED_ATTRS(conv_transpose, luthier__conv_transpose_defaults(&a->conv_transpose))
LUTHIER__TYPED_ATTRS(lstm, (void)a)
LUTHIER__TYPED_ATTRS(gru, (void)a)
LUTHIER__TYPED_ATTRS(rnn, (void)a)
LUTHIER__TYPED_ATTRS(gather_elements, (void)a)
LUTHIER__TYPED_ATTRS(gather_nd, (void)a)
LUTHIER__TYPED_ATTRS(scatter_nd, (void)a)
LUTHIER__TYPED_ATTRS(scatter_elements, (void)a)
#undef LUTHIER__TYPED_ATTRS

LUTHIER_API luthier_status luthier_node_attrs_default(luthier_op op, luthier_node_attrs *a) {
    if ((unsigned)op >= (unsigned)LUTHIER_OP_COUNT || !a) return LUTHIER_STATUS_INVALID_ARGUMENT;
    memset(a, 0, sizeof *a);
    luthier__ops[op].attrs(NULL, a);
    return LUTHIER_STATUS_OK;
}

/* desc with its typed attributes resolved (typed = 1), as the graph keeps it. */
LUTHIER_PRIVATE luthier_node_desc luthier__resolve_attrs(const luthier_node_desc *desc) {
    luthier_node_desc d = *desc;
    if (!d.typed) {
        memset(&d.attr, 0, sizeof d.attr);
        luthier__ops[d.op].attrs(desc, &d.attr);
        d.typed = 1;
    }
    return d;
}

LUTHIER__PRINTF(3, 4)
LUTHIER_PRIVATE luthier_status luthier__gfail(luthier_graph *g, luthier_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
    luthier__copy_error(g->error, sizeof g->error);
    return s;
}

LUTHIER_PRIVATE char *luthier__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)luthier__alloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* The most tensors a graph may hold; calibrations take ids below it. */
#define LUTHIER__MAX_TENSORS (1 << 26)

/* Grows *arr (elements of size elt) to hold at least need; returns 0 on failure. */
LUTHIER_PRIVATE int luthier__grow(void **arr, int *cap, int need, size_t elt) {
    void *p;
    int n;
    size_t bytes;
    if (need < 0) return 0;
    if (need <= *cap) return 1;
    n = *cap ? *cap : 16;
    while (n < need) {
        if (n > INT_MAX / 2) return 0;
        n *= 2;
    }
    if (!luthier__size_mul((size_t)n, elt, &bytes) || !(p = luthier__alloc(bytes))) return 0;
    if (*arr) memcpy(p, *arr, (size_t)*cap * elt);
    memset((char *)p + (size_t)*cap * elt, 0, (size_t)(n - *cap) * elt);
    luthier__free(*arr);
    *arr = p;
    *cap = n;
    return 1;
}

LUTHIER_API luthier_status luthier_graph_create(luthier_graph **out) {
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return (*out = (luthier_graph *)luthier__zalloc(sizeof **out)) ? LUTHIER_STATUS_OK : LUTHIER_STATUS_OUT_OF_MEMORY;
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
    luthier__free(g->names[0].slot);
    luthier__free(g->names[1].slot);
    luthier__free(g->tensors);
    luthier__free(g->nodes);
    luthier__free(g->inputs);
    luthier__free(g->outputs);
    luthier__free(g);
}

LUTHIER_API const char *luthier_graph_error(const luthier_graph *g) { return g ? g->error : "no graph"; }

/* Activations inside plans that are never a graph tensor's type: uint8 (int8 plans), fp16
   (fp16 plans on CPUs with fp16 arithmetic). */
#define LUTHIER__DTYPE_U8 ((luthier_dtype)100)
#define LUTHIER__DTYPE_F16 ((luthier_dtype)101)

/* Plan steps: a node's, a layout conversion, and the conversions between activation datatypes
   (the to_f32 / from_f32 kinds of luthier__vdtypes). */
enum {
    LUTHIER__STEP_NODE = 0, LUTHIER__STEP_CONVERT, LUTHIER__STEP_QUANTIZE, LUTHIER__STEP_DEQUANTIZE,
    LUTHIER__STEP_NARROW_H16, LUTHIER__STEP_WIDEN_H16
};

/* The datatypes a plan value may have, one row each: bytes per element, name, and for the
   activation datatypes other than fp32 the steps that make a value of it from fp32 (from_f32)
   and back (to_f32), with their names; -1: none (integers never convert). Activations meet
   through fp32: luthier__need_dtype. */
typedef struct luthier__vdtype {
    luthier_dtype dtype;
    size_t bytes;
    const char *name;
    int from_f32, to_f32;
    const char *from_name, *to_name;
} luthier__vdtype;

static const luthier__vdtype luthier__vdtypes[] = {
    {LUTHIER_DTYPE_F32, 4, "f32", -1, -1, NULL, NULL},
    {LUTHIER_DTYPE_I64, 8, "i64", -1, -1, NULL, NULL},
    {LUTHIER_DTYPE_I32, 4, "i32", -1, -1, NULL, NULL},
    {LUTHIER_DTYPE_BOOL, 1, "bool", -1, -1, NULL, NULL},
    {LUTHIER__DTYPE_U8, 1, "u8", LUTHIER__STEP_QUANTIZE, LUTHIER__STEP_DEQUANTIZE, "quantize", "dequantize"},
    {LUTHIER__DTYPE_F16, 2, "f16", LUTHIER__STEP_NARROW_H16, LUTHIER__STEP_WIDEN_H16, "to_f16", "to_f32"}};

/* The row of dtype t (NULL: none). */
LUTHIER_PRIVATE const luthier__vdtype *luthier__vdtype_of(luthier_dtype t) {
    size_t i;
    for (i = 0; i < sizeof luthier__vdtypes / sizeof luthier__vdtypes[0]; i++)
        if (luthier__vdtypes[i].dtype == t) return &luthier__vdtypes[i];
    return NULL;
}

LUTHIER_PRIVATE size_t luthier__dtype_size(luthier_dtype t) {
    const luthier__vdtype *r = luthier__vdtype_of(t);
    return r ? r->bytes : 4;
}

LUTHIER_PRIVATE const char *luthier__dtype_name(luthier_dtype t) {
    const luthier__vdtype *r = luthier__vdtype_of(t);
    return r ? r->name : "?";
}

/* Elements of a shape; 0 with *ok = 0 when the tensor's bytes at the widest dtype (8 bytes)
   would pass LUTHIER__SIZE_LIMIT, so that every byte size of a graph tensor is representable. */
LUTHIER_PRIVATE uint64_t luthier__numel(int rank, const int64_t *shape, int *ok) {
    size_t bytes;
    *ok = luthier__size_shape(rank, shape, 8, &bytes);
    return (uint64_t)(bytes / 8);
}

/* Bytes of a tensor of this shape and dtype (checked: 0 when it overflows). */
LUTHIER_PRIVATE int luthier__tensor_bytes(int rank, const int64_t *shape, luthier_dtype dtype, size_t *bytes) {
    return luthier__size_shape(rank, shape, luthier__dtype_size(dtype), bytes);
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

/* ---- names: each tensor and node name is checked for uniqueness by a hash lookup (a 40k-node
   graph took 4 s to build with linear scans). Kind 0 = tensors, 1 = nodes. A slot whose index is
   no longer below the count (a rolled-back addition) is skipped, and rebuilt away when the
   table fills. */

LUTHIER_PRIVATE const char *luthier__gname(const luthier_graph *g, int kind, int i) {
    return kind ? g->nodes[i].name : g->tensors[i].name;
}

LUTHIER_PRIVATE uint32_t luthier__name_hash(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The index of the tensor or node called name, or -1. */
LUTHIER_PRIVATE int luthier__names_find(const luthier_graph *g, int kind, const char *name) {
    const luthier__names *h = &g->names[kind];
    const int count = kind ? g->num_nodes : g->num_tensors;
    uint32_t k;
    if (!h->cap) return -1;
    for (k = luthier__name_hash(name) & (uint32_t)(h->cap - 1); h->slot[k] >= 0; k = (k + 1) & (uint32_t)(h->cap - 1))
        if (h->slot[k] < count && strcmp(luthier__gname(g, kind, h->slot[k]), name) == 0) return h->slot[k];
    return -1;
}

LUTHIER_PRIVATE void luthier__names_put(luthier__names *h, const char *name, int index) {
    uint32_t k = luthier__name_hash(name) & (uint32_t)(h->cap - 1);
    while (h->slot[k] >= 0) k = (k + 1) & (uint32_t)(h->cap - 1);
    h->slot[k] = index;
    h->used++;
}

/* Adds index i (its name already set; items 0..i-1 are indexed) to the hash; 0 when out of memory. */
LUTHIER_PRIVATE int luthier__names_add(luthier_graph *g, int kind, int i) {
    luthier__names *h = &g->names[kind];
    if ((size_t)(h->used + 1) * 2 > (size_t)h->cap) { /* rebuild at twice the live count */
        int cap = 64, j, *slot;
        while (cap < (i + 1) * 2) cap *= 2;
        if (!(slot = (int *)luthier__alloc(sizeof(int) * (size_t)cap))) return 0;
        luthier__free(h->slot);
        h->slot = slot;
        h->cap = cap;
        h->used = 0;
        for (j = 0; j < cap; j++) slot[j] = -1;
        for (j = 0; j < i; j++) luthier__names_put(h, luthier__gname(g, kind, j), j);
    }
    luthier__names_put(h, luthier__gname(g, kind, i), i);
    return 1;
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
    if (g->num_tensors >= LUTHIER__MAX_TENSORS)
        return luthier__gfail(g, LUTHIER_STATUS_OVERFLOW, "tensor '%s': the graph already holds %d tensors, the most it may",
                              name, LUTHIER__MAX_TENSORS);
    if (luthier__names_find(g, 0, name) >= 0)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "tensor name '%s' is already used", name);
    if (!luthier__grow((void **)&g->tensors, &g->cap_tensors, g->num_tensors + 1, sizeof *g->tensors))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name);
    t = &g->tensors[g->num_tensors];
    memset(t, 0, sizeof *t);
    t->len_axis = t->len_root = -1;
    if (!(t->name = luthier__strdup(name))) return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    if (!luthier__names_add(g, 0, g->num_tensors)) {
        luthier__free(t->name);
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    }
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
        size_t bytes;
        ok = luthier__tensor_bytes(rank, shape, dtype, &bytes); /* checked by luthier__add_tensor */
        if (!ok || !(t->owned = luthier__alloc(bytes ? bytes : 1))) {
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
    luthier_dtype dtype[LUTHIER_MAX_NODE_OUTPUTS]; /* per output; F32 unless the hook says */
    double bytes; /* memory traffic of one run; 0 after the hook: every input (weights included)
                     read once and every output written once */
    double flops;
    int len_axis[LUTHIER_MAX_NODE_OUTPUTS]; /* per output, -1 (static): see >>impl-lengths */
    int len_root[LUTHIER_MAX_NODE_OUTPUTS]; /* a tensor, or LUTHIER__LEN_OUT(j): output j of the node */
} luthier__infer;
#define LUTHIER__LEN_OUT(j) (-2 - (j))

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

LUTHIER__PRINTF(4, 5)
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

/* What an infer hook gets: the node and its inputs, and the result to fill (output 0 preset to
   input 0's rank and shape, f32, one output). LUTHIER__INFER_ARGS unpacks it under the names the
   hooks use (LUTHIER__NFAIL needs g, nname and d). */
struct luthier__infer_args {
    luthier_graph *g;
    const luthier_node_desc *d;
    const char *nname;
    const luthier__gtensor *const *in; /* in[i]: input i, NULL when absent */
    const luthier__gtensor *x;         /* in[0] */
    int ni;
    double numel;                      /* elements of x */
    luthier__infer *r;
};
#define LUTHIER__INFER_ARGS                                                                                   \
    luthier_graph *g = arg->g;                                                                                \
    const luthier_node_desc *d = arg->d;                                                                      \
    const char *nname = arg->nname;                                                                           \
    const luthier__gtensor *const *in = arg->in;                                                              \
    const luthier__gtensor *x = arg->x;                                                                       \
    const int ni = arg->ni;                                                                                   \
    const double numel = arg->numel;                                                                          \
    luthier__infer *r = arg->r;                                                                               \
    char sa[96], sb[96];                                                                                      \
    int i = 0, ok = 1;                                                                                        \
    (void)g, (void)d, (void)nname, (void)in, (void)x, (void)ni, (void)numel, (void)r, (void)sa, (void)sb, (void)i, \
        (void)ok

/* The NHWC convolution of a conv2d node (x [N,C,H,W], w [O,C/groups,kh,kw]) without its fused
   activation. */
LUTHIER_PRIVATE void luthier__node_conv_desc(const luthier_node_desc *d, const luthier__gtensor *x,
                                             const luthier__gtensor *w, luthier_conv2d_desc *cd) {
    const luthier_conv2d_attrs *a = &d->attr.conv2d;
    memset(cd, 0, sizeof *cd);
    cd->batch = x->shape[0]; cd->in_channels = x->shape[1]; cd->in_h = x->shape[2]; cd->in_w = x->shape[3];
    cd->out_channels = w->shape[0]; cd->kernel_h = w->shape[2]; cd->kernel_w = w->shape[3];
    cd->stride_h = a->stride[0]; cd->stride_w = a->stride[1];
    cd->dilation_h = a->dilation[0]; cd->dilation_w = a->dilation[1];
    cd->pad_top = a->pads[0]; cd->pad_left = a->pads[1]; cd->pad_bottom = a->pads[2]; cd->pad_right = a->pads[3];
    cd->groups = a->groups;
    cd->layout = LUTHIER_LAYOUT_NHWC;
}

/* The fused epilogue of convolution cd: activation act (with its clamp) and, when accumulate,
   the residual add (the output buffer holds it). */
LUTHIER_PRIVATE void luthier__conv_epilogue(luthier_conv2d_desc *cd, luthier_activation act, float cmin, float cmax, int accumulate) {
    cd->activation = act;
    cd->clamp_min = cmin;
    cd->clamp_max = cmax;
    cd->accumulate = accumulate;
}

LUTHIER_PRIVATE luthier_status luthier__infer_conv2d(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *w = in[1], *b = ni > 2 ? in[2] : NULL;
    const luthier_conv2d_attrs *a = &d->attr.conv2d;
    luthier_conv2d_desc cd;
    int64_t oh, ow, groups = a->groups;
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, conv2d takes [N,C,H,W]", x->name, x->rank);
    if (w->rank != 4) LUTHIER__NFAIL("weights '%s' have rank %d, conv2d takes [O,C/groups,kh,kw]", w->name, w->rank);
    if (!w->is_const) LUTHIER__NFAIL("weights '%s' must be a constant", w->name);
    if (a->stride[0] < 1 || a->stride[1] < 1 || a->dilation[0] < 1 || a->dilation[1] < 1)
        LUTHIER__NFAIL("stride %lldx%lld and dilation %lldx%lld must be >= 1", (long long)a->stride[0],
                       (long long)a->stride[1], (long long)a->dilation[0], (long long)a->dilation[1]);
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
    luthier__node_conv_desc(d, x, w, &cd);
    if (luthier_conv2d_output_size(&cd, &oh, &ow) != LUTHIER_STATUS_OK)
        LUTHIER__NFAIL("stride/padding/dilation do not fit the %lldx%lld input with a %lldx%lld kernel "
                       "(strides and dilations >= 0, pads >= 0)",
                       (long long)x->shape[2], (long long)x->shape[3], (long long)w->shape[2], (long long)w->shape[3]);
    r->shape[0][1] = w->shape[0]; r->shape[0][2] = oh; r->shape[0][3] = ow;
    r->flops = 2.0 * (double)x->shape[0] * (double)w->shape[0] * (double)oh * (double)ow *
               (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
    return LUTHIER_STATUS_OK;
}

/* Output size of one axis of a transposed convolution; 0 when it is below 1 or too large (the
   window attributes are below 2^31 and the input below 2^40 each, so nothing overflows). */
LUTHIER_PRIVATE int64_t luthier__convt_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t dil, int64_t op) {
    const double od = (double)(in - 1) * (double)s - (double)p0 - (double)p1 + (double)dil * (double)(k - 1) + (double)op + 1.0;
    int64_t o;
    if (in > ((int64_t)1 << 40) || k > ((int64_t)1 << 31) || !(od >= 0.5 && od <= (double)((int64_t)1 << 40))) return 0;
    o = (in - 1) * s - p0 - p1 + dil * (k - 1) + op + 1;
    return o >= 1 ? o : 0;
}

LUTHIER_PRIVATE luthier_status luthier__infer_conv_transpose(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *w = in[1], *b = ni > 2 ? in[2] : NULL;
    const luthier_conv_transpose_attrs *a = &d->attr.conv_transpose;
    const int64_t lim = (int64_t)1 << 31;
    int64_t o[2];
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, conv_transpose takes [N,C,H,W]", x->name, x->rank);
    if (w->rank != 4 || !w->is_const)
        LUTHIER__NFAIL("weights '%s' must be a 4-D constant [Cin,Cout/groups,kh,kw] (rank %d)", w->name, w->rank);
    if (a->groups < 1 || x->shape[1] % a->groups || w->shape[0] != x->shape[1]) {
        luthier__shape_str(4, x->shape, sa, sizeof sa);
        luthier__shape_str(4, w->shape, sb, sizeof sb);
        LUTHIER__NFAIL("input %s and weights %s with groups %lld: the weights need %lld rows and groups must divide them",
                       sa, sb, (long long)a->groups, (long long)x->shape[1]);
    }
    if (w->shape[1] > lim / a->groups) LUTHIER__NFAIL("%lld output channels overflow", (long long)w->shape[1]);
    if (b && (!b->is_const || b->rank != 1 || b->shape[0] != w->shape[1] * a->groups))
        LUTHIER__NFAIL("bias '%s' must be a constant of %lld values", b->name, (long long)(w->shape[1] * a->groups));
    for (i = 0; i < 2; i++)
        if (a->stride[i] < 1 || a->stride[i] >= lim || a->dilation[i] < 1 || a->dilation[i] >= lim ||
            a->output_padding[i] < 0 || a->output_padding[i] >= lim)
            LUTHIER__NFAIL("stride %lld, dilation %lld, output_padding %lld (axis %d): strides and dilations must be in "
                           "[1, 2^31), output_padding in [0, 2^31)", (long long)a->stride[i], (long long)a->dilation[i],
                           (long long)a->output_padding[i], i);
    for (i = 0; i < 4; i++)
        if (a->pads[i] < 0 || a->pads[i] >= lim) LUTHIER__NFAIL("pad %d is %lld: pads must be in [0, 2^31)", i, (long long)a->pads[i]);
    for (i = 0; i < 2; i++) {
        o[i] = luthier__convt_out(x->shape[2 + i], w->shape[2 + i], a->stride[i], a->pads[i], a->pads[i + 2], a->dilation[i],
                                  a->output_padding[i]);
        if (!o[i])
            LUTHIER__NFAIL("input %s %lld with kernel %lld: the output %s (in-1)*stride - pads + dilation*(k-1) + "
                           "output_padding + 1 must be in [1, 2^40]", i ? "width" : "height", (long long)x->shape[2 + i],
                           (long long)w->shape[2 + i], i ? "width" : "height");
    }
    r->shape[0][1] = w->shape[1] * a->groups; r->shape[0][2] = o[0]; r->shape[0][3] = o[1];
    r->flops = 2.0 * numel * (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_dense(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *w = in[1], *b = ni > 2 ? in[2] : NULL;
    int64_t n, k;
    if (x->rank < 1) LUTHIER__NFAIL("input '%s' is a scalar, dense takes [..., K]", x->name);
    if (w->rank != 2 || !w->is_const) LUTHIER__NFAIL("weights '%s' must be a 2-D constant", w->name);
    n = d->attr.dense.trans_b ? w->shape[1] : w->shape[0];
    k = d->attr.dense.trans_b ? w->shape[0] : w->shape[1];
    if (x->shape[x->rank - 1] != k) {
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        luthier__shape_str(2, w->shape, sb, sizeof sb);
        LUTHIER__NFAIL("input %s has %lld features, weights %s%s take %lld", sa,
                       (long long)x->shape[x->rank - 1], sb, d->attr.dense.trans_b ? " (trans_b)" : "", (long long)k);
    }
    if (b && (!b->is_const || b->rank != 1 || b->shape[0] != n))
        LUTHIER__NFAIL("bias '%s' must be a constant of %lld values", b->name, (long long)n);
    r->shape[0][x->rank - 1] = n;
    r->flops = 2.0 * numel / (double)k * (double)n * (double)k;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_matmul(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *b = in[1];
    int64_t m, k, kb, n, oshape[LUTHIER_MAX_RANK];
    int orank;
    if (x->rank < 2 || b->rank < 2) LUTHIER__NFAIL("inputs must have rank >= 2 (have %d and %d)", x->rank, b->rank);
    m = x->shape[x->rank - 2]; k = x->shape[x->rank - 1];
    kb = d->attr.matmul.trans_b ? b->shape[b->rank - 1] : b->shape[b->rank - 2];
    n = d->attr.matmul.trans_b ? b->shape[b->rank - 2] : b->shape[b->rank - 1];
    luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
    luthier__shape_str(b->rank, b->shape, sb, sizeof sb);
    if (k != kb) LUTHIER__NFAIL("%s @ %s%s: inner dimensions %lld and %lld differ", sa, sb,
                                d->attr.matmul.trans_b ? "^T" : "", (long long)k, (long long)kb);
    if (!luthier__broadcast(x->rank - 2, x->shape, b->rank - 2, b->shape, &orank, oshape))
        LUTHIER__NFAIL("%s @ %s: batch dimensions do not broadcast", sa, sb);
    oshape[orank] = m; oshape[orank + 1] = n;
    r->rank[0] = orank + 2;
    memcpy(r->shape[0], oshape, sizeof oshape);
    r->flops = 2.0 * (double)luthier__numel(orank, oshape, &ok) * (double)m * (double)n * (double)k;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_pool(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_pool_attrs *a = &d->attr.pool;
    int64_t kh = a->kernel[0], kw = a->kernel[1], sh = a->stride[0], sw = a->stride[1], dh = a->dilation[0],
            dw = a->dilation[1], oh, ow;
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, pools take [N,C,H,W]", x->name, x->rank);
    if (kh < 1 || kw < 1) LUTHIER__NFAIL("kernel %lldx%lld: set kernel[0] and kernel[1] >= 1", (long long)kh, (long long)kw);
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1) LUTHIER__NFAIL("strides and dilations must be >= 1");
    if (kh > INT32_MAX || kw > INT32_MAX || sh > INT32_MAX || sw > INT32_MAX || dh > INT32_MAX || dw > INT32_MAX)
        LUTHIER__NFAIL("kernel, stride and dilation must be below 2^31");
    if (d->op == LUTHIER_OP_AVGPOOL && (dh != 1 || dw != 1)) LUTHIER__NFAIL("avgpool takes no dilation");
    for (i = 0; i < 4; i++)
        if (a->pads[i] < 0 || a->pads[i] > (i & 1 ? (kw - 1) * dw : (kh - 1) * dh))
            LUTHIER__NFAIL("pad %d is %lld: pads must be in [0, (kernel-1)*dilation]", i, (long long)a->pads[i]);
    oh = luthier__pool_out(x->shape[2], kh, sh, a->pads[0], a->pads[2], dh, a->ceil_mode);
    ow = luthier__pool_out(x->shape[3], kw, sw, a->pads[1], a->pads[3], dw, a->ceil_mode);
    if (oh < 1 || ow < 1)
        LUTHIER__NFAIL("a %lldx%lld window does not fit the %lldx%lld input", (long long)kh, (long long)kw,
                       (long long)x->shape[2], (long long)x->shape[3]);
    r->shape[0][2] = oh; r->shape[0][3] = ow;
    r->flops = (double)x->shape[0] * (double)x->shape[1] * (double)oh * (double)ow * (double)kh * (double)kw;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_global_pool(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, pools take [N,C,H,W]", x->name, x->rank);
    if (d->op == LUTHIER_OP_ADAPTIVE_AVGPOOL) {
        const int64_t *os = d->attr.adaptive_pool.out_size;
        if (os[0] < 1 || os[1] < 1)
            LUTHIER__NFAIL("out_size %lldx%lld: both must be >= 1", (long long)os[0], (long long)os[1]);
        r->shape[0][2] = os[0]; r->shape[0][3] = os[1];
    } else {
        r->shape[0][2] = r->shape[0][3] = 1;
    }
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_clip(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (!(d->attr.clip.min <= d->attr.clip.max))
        LUTHIER__NFAIL("min %g > max %g", (double)d->attr.clip.min, (double)d->attr.clip.max);
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* The activations with attributes: a, b as the unary kernel takes them (luthier__run_unary). */
LUTHIER_PRIVATE luthier__unary luthier__activation_params(const luthier_node_desc *d, float *a, float *b) {
    const luthier_node_attrs *t = &d->attr;
    *a = *b = 0.0f;
    switch (d->op) {
    case LUTHIER_OP_LEAKY_RELU: *a = t->leaky_relu.alpha; return LUTHIER__UNARY_LEAKY_RELU;
    case LUTHIER_OP_ELU: *a = t->elu.alpha; *b = 1.0f; return LUTHIER__UNARY_ELU;
    case LUTHIER_OP_SELU: *a = t->selu.alpha; *b = t->selu.gamma; return LUTHIER__UNARY_ELU;
    case LUTHIER_OP_CELU: *a = t->celu.alpha; return LUTHIER__UNARY_CELU;
    case LUTHIER_OP_HARD_SIGMOID: *a = t->hard_sigmoid.alpha; *b = t->hard_sigmoid.beta; return LUTHIER__UNARY_HARD_SIGMOID;
    default: *a = t->thresholded_relu.alpha; return LUTHIER__UNARY_THRESHOLDED_RELU;
    }
}

/* The operators whose unary kernel has their name. */
#define LUTHIER__UNARY_OPS(X)                                                                                 \
    X(RELU) X(SIGMOID) X(TANH) X(ERF) X(EXP) X(SQRT) X(NEG) X(HARD_SWISH) X(SOFTPLUS) X(SOFTSIGN) X(MISH) X(ABS) \
    X(LOG) X(FLOOR) X(CEIL) X(ROUND) X(RECIPROCAL) X(SILU) X(NOT)

/* The unary kernel (and its a, b) of a node that runs with luthier__run_unary. */
LUTHIER_PRIVATE luthier__unary luthier__node_unary(const luthier_node_desc *d, float *a, float *b) {
    *a = *b = 0.0f;
    switch (d->op) {
#define LUTHIER__X(k) case LUTHIER_OP_##k: return LUTHIER__UNARY_##k;
    LUTHIER__UNARY_OPS(LUTHIER__X)
#undef LUTHIER__X
    case LUTHIER_OP_CLIP:
        *a = d->attr.clip.min;
        *b = d->attr.clip.max;
        return LUTHIER__UNARY_CLIP;
    case LUTHIER_OP_GELU: return d->attr.gelu.approximate ? LUTHIER__UNARY_GELU_TANH : LUTHIER__UNARY_GELU_ERF;
    default: return luthier__activation_params(d, a, b); /* the activations with attributes */
    }
}
#undef LUTHIER__UNARY_OPS

LUTHIER_PRIVATE luthier_status luthier__infer_activation(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    float a, b;
    (void)luthier__activation_params(d, &a, &b);
    if (!(a - a == 0)) LUTHIER__NFAIL("alpha %g must be finite", (double)a);
    if (!(b - b == 0)) LUTHIER__NFAIL("%s %g must be finite", d->op == LUTHIER_OP_SELU ? "gamma" : "beta", (double)b);
    if (d->op == LUTHIER_OP_SELU && !(a * b - a * b == 0)) LUTHIER__NFAIL("alpha * gamma (%g * %g) overflows", (double)a, (double)b);
    if (d->op == LUTHIER_OP_CELU && a == 0) LUTHIER__NFAIL("alpha 0: celu divides by alpha");
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* >>impl-lengths ===============================================================================
   A tensor with a run-time length: its shape is static (the plan and the arena are), and along
   one axis (len_axis) the shape entry is a capacity of which only the first n entries are
   valid; n is the count of its root tensor, held by the plan and set when the root's step
   runs (NONZERO, TOPK over such an axis, CONCAT along it, a gathered prefix, NON_MAX_SUPPRESSION).
   The entries past n are defined (roots write zeros or -1 there) but mean nothing. Operators
   declare in their registry row (lens) how they take such inputs; the helpers below are the
   FOLLOW rule and the one the views share. */

/* FOLLOW: output 0 gets the length of the inputs that have one, along the axis they broadcast
   to; every other input must have extent 1 there (a static extent would not match n). */
LUTHIER_PRIVATE luthier_status luthier__lens_follow(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int axis = -1, root = -1;
    const int rank = r->rank[0];
    for (i = 0; i < ni; i++) {
        const luthier__gtensor *t = in[i];
        if (!t || t->len_axis < 0) continue;
        if (t->shape[t->len_axis] != r->shape[0][t->len_axis + rank - t->rank])
            LUTHIER__NFAIL("input %d ('%s') would broadcast along its run-time-length axis %d", i, t->name, t->len_axis);
        if (root >= 0 && (root != t->len_root || axis != t->len_axis + rank - t->rank))
            LUTHIER__NFAIL("input %d ('%s') has a run-time length that is not the other inputs' (another tensor's count, "
                           "or another axis)", i, t->name);
        axis = t->len_axis + rank - t->rank, root = t->len_root;
    }
    if (root < 0) return LUTHIER_STATUS_OK;
    for (i = 0; i < ni; i++) {
        const luthier__gtensor *t = in[i];
        const int a = t ? axis - (rank - t->rank) : -1;
        if (!t || t->len_axis >= 0 || a < 0 || t->shape[a] == 1) continue;
        LUTHIER__NFAIL("input %d ('%s') has %lld entries along axis %d, where another input's length is known only at "
                       "run time (it must be 1 there)", i, t->name, (long long)t->shape[a], a);
    }
    if (rank == 4 && luthier__ops[d->op].layout != LUTHIER__LAYOUT_PLAIN)
        LUTHIER__NFAIL("a 4-D tensor with a run-time length: the step could run in NHWC");
    r->len_axis[0] = axis, r->len_root[0] = root;
    return LUTHIER_STATUS_OK;
}

/* The views (reshape, flatten, identity): the axis with a run-time length must stay whole, with
   the same number of elements before it. */
LUTHIER_PRIVATE luthier_status luthier__lens_view(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int64_t before = 1, acc = 1;
    if (x->len_axis < 0) return LUTHIER_STATUS_OK;
    for (i = 0; i < x->len_axis; i++) before *= x->shape[i];
    for (i = 0; i < r->rank[0] && acc <= before; acc *= r->shape[0][i], i++)
        if (acc == before && r->shape[0][i] == x->shape[x->len_axis]) {
            r->len_axis[0] = i, r->len_root[0] = x->len_root;
            return LUTHIER_STATUS_OK;
        }
    luthier__shape_str(r->rank[0], r->shape[0], sa, sizeof sa);
    LUTHIER__NFAIL("'%s' has a run-time length along axis %d: the view to %s does not keep that axis whole", x->name,
                   x->len_axis, sa);
}

/* Elements per row before the run-time axis of t (the valid ones are then a prefix of each
   row: 1 when the axis is the first, or only 1s come before it). */
LUTHIER_PRIVATE int64_t luthier__lens_outer(const luthier__gtensor *t) {
    int64_t n = 1;
    int k;
    for (k = 0; k < t->len_axis; k++) n *= t->shape[k];
    return n;
}

LUTHIER_PRIVATE luthier_status luthier__infer_elementwise(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* IDENTITY: a view of its input, of either dtype (index outputs pass to graph outputs). */
LUTHIER_PRIVATE luthier_status luthier__infer_identity(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    r->dtype[0] = x->dtype;
    r->flops = numel;
    return luthier__lens_view(arg);
}

LUTHIER_PRIVATE luthier_status luthier__infer_binary(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *b = in[1];
    if (!luthier__broadcast(x->rank, x->shape, b->rank, b->shape, &r->rank[0], r->shape[0])) {
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        luthier__shape_str(b->rank, b->shape, sb, sizeof sb);
        LUTHIER__NFAIL("shapes %s and %s do not broadcast", sa, sb);
    }
    if (r->rank[0] < 1) r->rank[0] = 1, r->shape[0][0] = 1;
    r->flops = (double)luthier__numel(r->rank[0], r->shape[0], &ok);
    return LUTHIER_STATUS_OK;
}

/* PRELU: the slope is a constant that broadcasts to x one way (x's shape is the output's). */
LUTHIER_PRIVATE luthier_status luthier__infer_prelu(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *s = in[1];
    int ok1 = s->rank <= x->rank;
    if (!s->is_const) LUTHIER__NFAIL("slope '%s' must be a constant", s->name);
    for (i = 0; ok1 && i < s->rank; i++) {
        const int64_t e = s->shape[s->rank - 1 - i];
        ok1 = e == 1 || e == x->shape[x->rank - 1 - i];
    }
    if (!ok1) {
        luthier__shape_str(s->rank, s->shape, sb, sizeof sb);
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        LUTHIER__NFAIL("slope '%s' %s does not broadcast to x %s", s->name, sb, sa);
    }
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* The comparisons: two f32 or two i64 operands, broadcast; f32 0/1 out. */
LUTHIER_PRIVATE luthier_status luthier__infer_compare(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *b = in[1];
    if ((x->dtype != LUTHIER_DTYPE_F32 && x->dtype != LUTHIER_DTYPE_I64) || b->dtype != x->dtype)
        LUTHIER__NFAIL("inputs '%s' (%s) and '%s' (%s): the operator takes two f32 or two i64 tensors", x->name,
                       luthier__dtype_name(x->dtype), b->name, luthier__dtype_name(b->dtype));
    return luthier__infer_binary(arg); /* output dtype f32 (preset) */
}

/* MOD: as the comparisons, the inputs' dtype out; fmod 0 or 1. */
LUTHIER_PRIVATE luthier_status luthier__infer_mod(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    luthier_status s;
    if (d->attr.mod.fmod != 0 && d->attr.mod.fmod != 1) LUTHIER__NFAIL("fmod is %d (0 or 1)", d->attr.mod.fmod);
    if ((s = luthier__infer_compare(arg)) != LUTHIER_STATUS_OK) return s;
    r->dtype[0] = x->dtype;
    return LUTHIER_STATUS_OK;
}

/* WHERE: cond f32; x, y both f32 or both i64; three-way broadcast. */
LUTHIER_PRIVATE luthier_status luthier__infer_where(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *a = in[1], *b = in[2];
    int64_t t[LUTHIER_MAX_RANK];
    int rt;
    if (x->dtype != LUTHIER_DTYPE_F32) LUTHIER__NFAIL("condition '%s' is %s: booleans are f32 0/1 tensors", x->name,
                                                      luthier__dtype_name(x->dtype));
    if ((a->dtype != LUTHIER_DTYPE_F32 && a->dtype != LUTHIER_DTYPE_I64) || b->dtype != a->dtype)
        LUTHIER__NFAIL("x '%s' (%s) and y '%s' (%s): the operator takes two f32 or two i64 tensors", a->name,
                       luthier__dtype_name(a->dtype), b->name, luthier__dtype_name(b->dtype));
    if (!luthier__broadcast(x->rank, x->shape, a->rank, a->shape, &rt, t) ||
        !luthier__broadcast(rt, t, b->rank, b->shape, &r->rank[0], r->shape[0])) {
        luthier__shape_str(a->rank, a->shape, sa, sizeof sa);
        luthier__shape_str(b->rank, b->shape, sb, sizeof sb);
        LUTHIER__NFAIL("condition, x %s and y %s do not broadcast", sa, sb);
    }
    if (r->rank[0] < 1) r->rank[0] = 1, r->shape[0][0] = 1;
    r->dtype[0] = a->dtype;
    r->flops = (double)luthier__numel(r->rank[0], r->shape[0], &ok);
    return LUTHIER_STATUS_OK;
}

/* CAST: any graph dtype in, the target's out (f32, or i64 for I64 and I32). */
LUTHIER_PRIVATE luthier_status luthier__infer_cast(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const int to = d->attr.cast.to;
    if ((unsigned)to >= (unsigned)LUTHIER_CAST_TO_COUNT) LUTHIER__NFAIL("to is %d (a luthier_cast_to, 0..%d)", to, LUTHIER_CAST_TO_COUNT - 1);
    if ((unsigned)x->dtype >= (unsigned)LUTHIER_DTYPE_COUNT)
        LUTHIER__NFAIL("input '%s' has dtype %s", x->name, luthier__dtype_name(x->dtype));
    r->dtype[0] = to == LUTHIER_CAST_TO_I64 || to == LUTHIER_CAST_TO_I32 ? LUTHIER_DTYPE_I64 : LUTHIER_DTYPE_F32;
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* A concatenation of the same lengths as this one (the same roots, or the same static extents,
   input by input, along each one's axis) made earlier: its output's root, so that the two outputs
   (boxes and their scores, say) share their length; else this node's output. */
LUTHIER_PRIVATE int luthier__concat_twin(const luthier__infer_args *arg, int axis) {
    const luthier_graph *g = arg->g;
    int j, k;
    for (j = 0; j < g->num_nodes; j++) {
        const luthier__gnode *n = &g->nodes[j];
        const luthier__gtensor *o = &g->tensors[n->outputs[0]];
        const int ax = o->len_axis; /* its axis (the ranks may differ: boxes and scores) */
        int same = n->d.op == LUTHIER_OP_CONCAT && n->d.num_inputs == arg->ni && ax >= 0 && o->len_root == n->outputs[0];
        for (k = 0; same && k < arg->ni; k++) {
            const luthier__gtensor *a = &g->tensors[n->inputs[k]], *b = arg->in[k];
            same = a->len_axis == ax ? b->len_axis == axis && a->len_root == b->len_root
                                     : b->len_axis != axis && a->shape[ax] == b->shape[axis];
        }
        if (same) return n->outputs[0];
    }
    return LUTHIER__LEN_OUT(0);
}

/* CONCAT and run-time lengths: inputs with one along the axis are packed (each contributes its
   valid entries, static inputs all of theirs; the output's length is the sum); along another
   axis every input must have the same one, which the output keeps. */
LUTHIER_PRIVATE luthier_status luthier__concat_lens(const luthier__infer_args *arg, int axis) {
    LUTHIER__INFER_ARGS;
    int along = 0, other = -1;
    for (i = 0; i < ni; i++) {
        along |= in[i]->len_axis == axis;
        if (in[i]->len_axis >= 0 && in[i]->len_axis != axis) other = i;
    }
    if (!along && other < 0) return LUTHIER_STATUS_OK;
    if (x->rank == 4) LUTHIER__NFAIL("a 4-D tensor with a run-time length: the step could run in NHWC");
    if (along && other >= 0)
        LUTHIER__NFAIL("input %d ('%s') has a run-time length along axis %d, others along the concatenated axis %d", other,
                       in[other]->name, in[other]->len_axis, axis);
    if (along) {
        r->len_axis[0] = axis, r->len_root[0] = luthier__concat_twin(arg, axis);
        return LUTHIER_STATUS_OK;
    }
    for (i = 0; i < ni; i++)
        if (in[i]->len_axis != in[other]->len_axis || in[i]->len_root != in[other]->len_root)
            LUTHIER__NFAIL("inputs %d ('%s') and %d ('%s') do not share one run-time length", i, in[i]->name, other,
                           in[other]->name);
    r->len_axis[0] = in[other]->len_axis, r->len_root[0] = in[other]->len_root;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_concat(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int axis = luthier__norm_axis(d->attr.axis.axis, x->rank, 0), j;
    int64_t total = 0;
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.axis.axis, x->rank);
    if (x->dtype != LUTHIER_DTYPE_F32 && (x->dtype != LUTHIER_DTYPE_I64 || x->rank == 4))
        LUTHIER__NFAIL("input 0 ('%s') is %s: the operator takes f32, or i64 below rank 4", x->name, luthier__dtype_name(x->dtype));
    r->dtype[0] = x->dtype;
    for (i = 0; i < ni; i++) {
        if (in[i]->dtype != x->dtype)
            LUTHIER__NFAIL("input %d ('%s') is %s, input 0 %s", i, in[i]->name, luthier__dtype_name(in[i]->dtype), luthier__dtype_name(x->dtype));
        if (in[i]->rank != x->rank) LUTHIER__NFAIL("input %d has rank %d, input 0 has %d", i, in[i]->rank, x->rank);
        for (j = 0; j < x->rank; j++)
            if (j != axis && in[i]->shape[j] != x->shape[j]) {
                luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
                luthier__shape_str(in[i]->rank, in[i]->shape, sb, sizeof sb);
                LUTHIER__NFAIL("input %d %s differs from input 0 %s outside axis %d", i, sb, sa, axis);
            }
        if (in[i]->shape[axis] > (int64_t)(LUTHIER__SIZE_LIMIT / 8) - total)
            LUTHIER__NFAIL("the concatenated axis %d overflows", axis);
        total += in[i]->shape[axis];
    }
    r->shape[0][axis] = total;
    r->flops = 0;
    return luthier__concat_lens(arg, axis);
}

LUTHIER_PRIVATE luthier_status luthier__infer_split(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int axis = luthier__norm_axis(d->attr.axis.axis, x->rank, 0), parts = d->num_outputs ? d->num_outputs : 1;
    int64_t total = 0;
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.axis.axis, x->rank);
    if (parts < 1 || parts > LUTHIER_MAX_NODE_OUTPUTS)
        LUTHIER__NFAIL("num_outputs %d is not in [1, %d]", parts, LUTHIER_MAX_NODE_OUTPUTS);
    if (!d->sizes && x->shape[axis] % parts)
        LUTHIER__NFAIL("dimension %lld does not split into %d equal parts (give sizes)", (long long)x->shape[axis], parts);
    r->num_outputs = parts;
    for (i = 0; i < parts; i++) {
        int64_t len = d->sizes ? d->sizes[i] : x->shape[axis] / parts;
        if (len < 1 || len > x->shape[axis] - total)
            LUTHIER__NFAIL("part %d has size %lld: sizes must be >= 1 and add up to the axis's %lld", i, (long long)len,
                           (long long)x->shape[axis]);
        total += len;
        r->rank[i] = x->rank;
        memcpy(r->shape[i], x->shape, sizeof x->shape);
        r->shape[i][axis] = len;
    }
    if (total != x->shape[axis])
        LUTHIER__NFAIL("sizes add up to %lld, the axis has %lld", (long long)total, (long long)x->shape[axis]);
    /* a run-time length along another axis: every part keeps it (box coordinates split apart) */
    if (x->len_axis == axis) LUTHIER__NFAIL("'%s' has a run-time length along the split axis %d", x->name, axis);
    if (x->len_axis >= 0 && x->rank == 4) LUTHIER__NFAIL("a 4-D tensor with a run-time length: the step could run in NHWC");
    for (i = 0; i < parts; i++) r->len_axis[i] = x->len_axis, r->len_root[i] = x->len_root;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_softmax(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (luthier__norm_axis(d->attr.softmax.axis, x->rank, 0) < 0)
        LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.softmax.axis, x->rank);
    r->flops = 5 * numel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_layer_norm(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int axis = luthier__norm_axis(d->attr.layer_norm.axis, x->rank, 0);
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.layer_norm.axis, x->rank);
    if (!(d->attr.layer_norm.epsilon >= 0 && d->attr.layer_norm.epsilon < INFINITY))
        LUTHIER__NFAIL("epsilon %g must be finite and >= 0", (double)d->attr.layer_norm.epsilon);
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
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_batch_norm(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (x->rank < 2) LUTHIER__NFAIL("input '%s' has rank %d, batch_norm takes [N,C,...]", x->name, x->rank);
    for (i = 1; i < 5; i++)
        if (!in[i]->is_const || in[i]->rank != 1 || in[i]->shape[0] != x->shape[1])
            LUTHIER__NFAIL("parameter %d ('%s') must be a constant of %lld values", i, in[i]->name, (long long)x->shape[1]);
    if (!(d->attr.batch_norm.epsilon >= 0 && d->attr.batch_norm.epsilon < INFINITY))
        LUTHIER__NFAIL("epsilon %g must be finite and >= 0", (double)d->attr.batch_norm.epsilon);
    r->flops = 2 * numel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_lrn(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, lrn takes [N,C,H,W]", x->name, x->rank);
    const luthier_lrn_attrs *a = &d->attr.lrn;
    if (a->size < 1 || a->size > INT32_MAX) LUTHIER__NFAIL("size %lld must be in [1, 2^31)", (long long)a->size);
    if (!(a->alpha - a->alpha == 0 && a->beta - a->beta == 0 && a->bias - a->bias == 0))
        LUTHIER__NFAIL("alpha %g, beta %g and bias %g must be finite", (double)a->alpha, (double)a->beta, (double)a->bias);
    r->flops = (double)(2 * a->size + 4) * numel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_flatten(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int axis = luthier__norm_axis(d->attr.flatten.axis, x->rank, 1);
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.flatten.axis, x->rank);
    r->rank[0] = 2;
    r->shape[0][0] = (int64_t)luthier__numel(axis, x->shape, &ok);
    r->shape[0][1] = (int64_t)luthier__numel(x->rank - axis, x->shape + axis, &ok);
    r->dtype[0] = x->dtype; /* a view: f32 or i64 */
    return luthier__lens_view(arg);
}

LUTHIER_PRIVATE luthier_status luthier__infer_reshape(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int infer = -1;
    int64_t known = 1, xn = (int64_t)luthier__numel(x->rank, x->shape, &ok); /* exact */
    r->dtype[0] = x->dtype; /* a view: f32 or i64 */
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
        if (v > xn / known) { /* more elements than the input has */
            luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
            LUTHIER__NFAIL("cannot reshape %s: size %d (%lld) makes more elements than it has", sa, i, (long long)v);
        }
        r->shape[0][i] = v;
        known *= v;
    }
    if (infer >= 0) {
        if (xn % known) LUTHIER__NFAIL("cannot infer the -1 size: %lld elements over %lld", (long long)xn, (long long)known);
        r->shape[0][infer] = xn / known;
        known *= r->shape[0][infer];
    }
    if (known != xn) {
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        luthier__shape_str(r->rank[0], r->shape[0], sb, sizeof sb);
        LUTHIER__NFAIL("cannot reshape %s to %s (element counts differ)", sa, sb);
    }
    return luthier__lens_view(arg);
}

LUTHIER_PRIVATE luthier_status luthier__infer_transpose(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    int seen[LUTHIER_MAX_RANK] = {0};
    if (x->dtype != LUTHIER_DTYPE_F32 && x->dtype != LUTHIER_DTYPE_I64)
        LUTHIER__NFAIL("input '%s' is %s, the operator takes f32 or i64", x->name, luthier__dtype_name(x->dtype));
    if (x->dtype == LUTHIER_DTYPE_I64 && x->rank >= LUTHIER_MAX_RANK)
        LUTHIER__NFAIL("i64 input '%s' of rank %d: i64 transposes take rank < %d", x->name, x->rank, LUTHIER_MAX_RANK);
    r->dtype[0] = x->dtype;
    for (i = 0; i < x->rank; i++) {
        int p = d->perm ? d->perm[i] : x->rank - 1 - i;
        if (p < 0 || p >= x->rank || seen[p]) LUTHIER__NFAIL("perm is not a permutation of 0..%d", x->rank - 1);
        seen[p] = 1;
        r->shape[0][i] = x->shape[p];
        if (p == x->len_axis) r->len_axis[0] = i, r->len_root[0] = x->len_root;
    }
    return LUTHIER_STATUS_OK;
}

/* The axes a REDUCE node reduces (red[axis] = 1) for input rank rank; 0 when an axis is out of
   range or repeated. */
LUTHIER_PRIVATE int luthier__reduce_axes(const luthier_reduce_attrs *a, int rank, int *red) {
    int k;
    for (k = 0; k < rank; k++) red[k] = a->num_axes == 0;
    if (a->num_axes < 0 || a->num_axes > rank) return 0;
    for (k = 0; k < a->num_axes; k++) {
        const int ax = luthier__norm_axis(a->axes[k], rank, 0);
        if (ax < 0 || red[ax]) return 0;
        red[ax] = 1;
    }
    return 1;
}

typedef char luthier__scatter_kinds_match[(int)LUTHIER_SCATTER_REDUCTION_COUNT == (int)LUTHIER__SCAT_COUNT ? 1 : -1];
typedef char luthier__reduce_kinds_match[(int)LUTHIER_REDUCE_KIND_COUNT == (int)LUTHIER__RED_COUNT ? 1 : -1];

/* REDUCE and run-time lengths: x may have one along an axis with only 1s before it (its valid
   entries are then a prefix). Reduced over, the output is static and the step reads only the
   valid entries (a count of 0 gives the reduction of nothing: luthier__op_reduce); kept, the
   output keeps x's length along the same axis (keepdims) or where the axis lands. */
LUTHIER_PRIVATE luthier_status luthier__reduce_lens(const luthier__infer_args *arg, const int *red) {
    LUTHIER__INFER_ARGS;
    int j = 0;
    if (x->len_axis < 0) return LUTHIER_STATUS_OK;
    if (luthier__lens_outer(x) != 1)
        LUTHIER__NFAIL("input '%s' has a run-time length along axis %d after dimensions other than 1", x->name, x->len_axis);
    if (red[x->len_axis]) return LUTHIER_STATUS_OK;
    for (i = 0; i < x->len_axis; i++) j += !red[i] || d->attr.reduce.keepdims;
    r->len_axis[0] = j, r->len_root[0] = x->len_root;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_reduce(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_reduce_attrs *a = &d->attr.reduce;
    int red[LUTHIER_MAX_RANK], j = 0;
    if ((unsigned)a->kind >= (unsigned)LUTHIER_REDUCE_KIND_COUNT) LUTHIER__NFAIL("unknown reduction kind %d", (int)a->kind);
    if (!luthier__reduce_axes(a, x->rank, red))
        LUTHIER__NFAIL("axes must be %d distinct values in [-%d, %d) (0 of them: every axis)", a->num_axes, x->rank, x->rank);
    for (i = 0; i < x->rank; i++)
        if (!red[i] || a->keepdims) r->shape[0][j++] = red[i] ? 1 : x->shape[i];
    r->rank[0] = j;
    if (j == 0) r->rank[0] = 1, r->shape[0][0] = 1; /* a scalar is held as [1] */
    r->flops = 2 * numel;
    return luthier__reduce_lens(arg, red);
}

/* GATHER and run-time lengths: indices with one (only 1s before its axis) give it to the output;
   data with one along the gather axis bounds the indices by its length when the step runs, and
   constant indices there must be the prefix 0..m-1 (the output's length: min(m, n)); data with
   one along another axis passes it on. At most one such axis per output. */
LUTHIER_PRIVATE luthier_status luthier__gather_lens(const luthier__infer_args *arg, int axis) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    if (idx->len_axis >= 0) {
        if (luthier__lens_outer(idx) != 1)
            LUTHIER__NFAIL("indices '%s' have a run-time length along axis %d after dimensions other than 1", idx->name,
                           idx->len_axis);
        if (x->len_axis >= 0 && x->len_axis != axis)
            LUTHIER__NFAIL("data '%s' and indices '%s' both have run-time lengths: the output would have two", x->name,
                           idx->name);
        r->len_axis[0] = axis + idx->len_axis, r->len_root[0] = idx->len_root;
    } else if (x->len_axis == axis) {
        const int64_t *v = (const int64_t *)idx->data;
        int64_t e;
        for (e = 0; idx->is_const && idx->rank == 1 && e < idx->shape[0] && v[e] == e; e++) {}
        if (!idx->is_const || idx->rank != 1 || e < idx->shape[0])
            LUTHIER__NFAIL("data '%s' has a run-time length along axis %d: indices '%s' there must have one too, or be the "
                           "constant prefix 0..m-1", x->name, axis, idx->name);
        r->len_axis[0] = axis, r->len_root[0] = LUTHIER__LEN_OUT(0);
    } else if (x->len_axis >= 0) {
        r->len_axis[0] = x->len_axis < axis ? x->len_axis : x->len_axis + idx->rank - 1, r->len_root[0] = x->len_root;
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_gather(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    int axis = luthier__norm_axis(d->attr.axis.axis, x->rank, 0), j = 0;
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", d->attr.axis.axis, x->rank);
    if (idx->dtype != LUTHIER_DTYPE_I64) LUTHIER__NFAIL("indices '%s' must be i64", idx->name);
    if (x->dtype != LUTHIER_DTYPE_F32 && x->dtype != LUTHIER_DTYPE_I64)
        LUTHIER__NFAIL("input 0 ('%s') is %s, the operator takes f32 or i64", x->name, luthier__dtype_name(x->dtype));
    if (x->rank - 1 + idx->rank > LUTHIER_MAX_RANK) LUTHIER__NFAIL("output rank exceeds %d", LUTHIER_MAX_RANK);
    r->dtype[0] = x->dtype;
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
    /* the rows it selects (read and written) and the indices, not the whole table */
    r->bytes = 8.0 * (double)luthier__numel(j ? j : 1, r->shape[0], &ok) +
               8.0 * (double)luthier__numel(idx->rank, idx->shape, &ok);
    return luthier__gather_lens(arg, axis);
}

/* ---- indexing: GATHER_ELEMENTS, GATHER_ND, SCATTER_ND, SCATTER_ELEMENTS ----
   data (input 0) and updates (input 2) f32, indices (input 1) i64; constant indices are checked
   against their axes here, run-time ones when the step runs (luthier__op_check_indices). */
LUTHIER_PRIVATE luthier_status luthier__index_check(const luthier__infer_args *arg, size_t m, const int64_t *lens) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    uint64_t n, e;
    for (i = 0; i < ni; i++) {
        const luthier_dtype want = i == 1 ? LUTHIER_DTYPE_I64 : LUTHIER_DTYPE_F32;
        if (in[i]->dtype != want)
            LUTHIER__NFAIL("input %d ('%s') is %s, the operator takes %s", i, in[i]->name, luthier__dtype_name(in[i]->dtype),
                           luthier__dtype_name(want));
    }
    if (!idx->is_const) return LUTHIER_STATUS_OK;
    n = luthier__numel(idx->rank, idx->shape, &ok);
    for (e = 0; e < n; e++) {
        const int64_t v = ((const int64_t *)idx->data)[e], len = lens[e % m];
        if (v < -len || v >= len)
            LUTHIER__NFAIL("index %lld at position %llu of '%s' is out of range [-%lld, %lld)", (long long)v,
                           (unsigned long long)e, idx->name, (long long)len, (long long)len);
    }
    return LUTHIER_STATUS_OK;
}

/* GATHER_ELEMENTS, SCATTER_ELEMENTS: indices of data's rank, no larger than data off the axis;
   updates (scatter) of the indices' shape. */
LUTHIER_PRIVATE luthier_status luthier__infer_elements(const luthier__infer_args *arg, int axis_attr) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    const int axis = luthier__norm_axis(axis_attr, x->rank, 0);
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", axis_attr, x->rank);
    if (idx->rank != x->rank) LUTHIER__NFAIL("indices '%s' have rank %d, data '%s' rank %d: they must agree", idx->name, idx->rank, x->name, x->rank);
    for (i = 0; i < x->rank; i++)
        if (i != axis && idx->shape[i] > x->shape[i])
            LUTHIER__NFAIL("indices '%s' dimension %d is %lld, above data's %lld", idx->name, i, (long long)idx->shape[i],
                           (long long)x->shape[i]);
    if (ni == 3) {
        const luthier__gtensor *u = in[2];
        int same = u->rank == idx->rank;
        for (i = 0; same && i < idx->rank; i++) same = u->shape[i] == idx->shape[i];
        luthier__shape_str(u->rank, u->shape, sa, sizeof sa);
        luthier__shape_str(idx->rank, idx->shape, sb, sizeof sb);
        if (!same) LUTHIER__NFAIL("updates '%s' %s must have the indices' shape %s", u->name, sa, sb);
    }
    return luthier__index_check(arg, 1, &x->shape[axis]);
}

LUTHIER_PRIVATE luthier_status luthier__infer_gather_elements(const luthier__infer_args *arg) {
    luthier_status s = luthier__infer_elements(arg, arg->d->attr.gather_elements.axis);
    const luthier__gtensor *idx = arg->in[1];
    if (s != LUTHIER_STATUS_OK) return s;
    memcpy(arg->r->shape[0], idx->shape, sizeof(int64_t) * (size_t)idx->rank);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_scatter_elements(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const int red = d->attr.scatter_elements.reduction;
    if ((unsigned)red >= (unsigned)LUTHIER_SCATTER_REDUCTION_COUNT) LUTHIER__NFAIL("unknown reduction %d", red);
    return luthier__infer_elements(arg, d->attr.scatter_elements.axis);
}

/* GATHER_ND, SCATTER_ND (b = 0): index tuples of m in [1, r - b] entries over data's dims from b
   on; out gets indices.shape[:-1] + data.shape[b + m:] (rank 0: [1]). */
LUTHIER_PRIVATE luthier_status luthier__infer_nd(const luthier__infer_args *arg, int b, int *rank, int64_t *out) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    const int q = idx->rank;
    int64_t m;
    if (q < 1) LUTHIER__NFAIL("indices '%s' are a scalar: they need a last dimension (the index tuples)", idx->name);
    if (b < 0 || b >= q || b >= x->rank) LUTHIER__NFAIL("batch_dims %d must be in [0, %d)", b, q < x->rank ? q : x->rank);
    for (i = 0; i < b; i++)
        if (idx->shape[i] != x->shape[i])
            LUTHIER__NFAIL("batch dimension %d differs: indices '%s' %lld, data '%s' %lld", i, idx->name, (long long)idx->shape[i],
                           x->name, (long long)x->shape[i]);
    m = idx->shape[q - 1];
    if (m < 1 || m > x->rank - b)
        LUTHIER__NFAIL("index tuples of %lld entries: data '%s' of rank %d takes 1 to %d after %d batch dims", (long long)m, x->name,
                       x->rank, x->rank - b, b);
    if (q - 1 + x->rank - b - (int)m > LUTHIER_MAX_RANK) LUTHIER__NFAIL("output rank exceeds %d", LUTHIER_MAX_RANK);
    *rank = 0;
    for (i = 0; i < q - 1; i++) out[(*rank)++] = idx->shape[i];
    for (i = b + (int)m; i < x->rank; i++) out[(*rank)++] = x->shape[i];
    if (*rank == 0) *rank = 1, out[0] = 1;
    return luthier__index_check(arg, (size_t)m, x->shape + b);
}

/* GATHER_ND: indices with a run-time length along an axis before the tuples (only 1s before it)
   give the output that length there; data with one are refused. */
LUTHIER_PRIVATE luthier_status luthier__infer_gather_nd(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *idx = in[1];
    luthier_status s = luthier__infer_nd(arg, d->attr.gather_nd.batch_dims, &r->rank[0], r->shape[0]);
    if (s != LUTHIER_STATUS_OK) return s;
    if (x->len_axis >= 0) LUTHIER__NFAIL("data '%s' has a run-time length (along axis %d)", x->name, x->len_axis);
    if (idx->len_axis < 0) return LUTHIER_STATUS_OK;
    if (idx->len_axis == idx->rank - 1 || luthier__lens_outer(idx) != 1)
        LUTHIER__NFAIL("indices '%s' have a run-time length along axis %d: only an axis before the index tuples, after "
                       "dimensions of 1", idx->name, idx->len_axis);
    r->len_axis[0] = idx->len_axis, r->len_root[0] = idx->len_root;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_scatter_nd(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *u = in[2];
    int64_t want[LUTHIER_MAX_RANK];
    int rank, same;
    luthier_status s;
    if ((unsigned)d->attr.scatter_nd.reduction >= (unsigned)LUTHIER_SCATTER_REDUCTION_COUNT)
        LUTHIER__NFAIL("unknown reduction %d", d->attr.scatter_nd.reduction);
    if ((s = luthier__infer_nd(arg, 0, &rank, want)) != LUTHIER_STATUS_OK) return s;
    same = u->rank == rank || (u->rank == 0 && rank == 1 && want[0] == 1);
    for (i = 0; same && i < u->rank; i++) same = u->shape[i] == want[i];
    luthier__shape_str(u->rank, u->shape, sa, sizeof sa);
    luthier__shape_str(rank, want, sb, sizeof sb);
    if (!same) LUTHIER__NFAIL("updates '%s' %s must have the shape %s (indices.shape[:-1] + data.shape[m:])", u->name, sa, sb);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_attention(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *k = in[1], *v = in[2];
    int rk = x->rank;
    if (rk < 3 || k->rank != rk || v->rank != rk) LUTHIER__NFAIL("q, k, v must have one rank >= 3 ([..., S, D])");
    for (i = 0; i < rk - 2; i++)
        if (k->shape[i] != x->shape[i] || v->shape[i] != x->shape[i]) LUTHIER__NFAIL("q, k, v batch dimensions differ");
    if (k->shape[rk - 1] != x->shape[rk - 1]) LUTHIER__NFAIL("q and k head sizes differ (%lld, %lld)",
                                                             (long long)x->shape[rk - 1], (long long)k->shape[rk - 1]);
    if (v->shape[rk - 2] != k->shape[rk - 2]) LUTHIER__NFAIL("k and v lengths differ (%lld, %lld)",
                                                             (long long)k->shape[rk - 2], (long long)v->shape[rk - 2]);
    if (d->attr.attention.causal && k->shape[rk - 2] < x->shape[rk - 2])
        LUTHIER__NFAIL("causal attention needs at least as many keys (%lld) as queries (%lld)",
                       (long long)k->shape[rk - 2], (long long)x->shape[rk - 2]);
    if (d->attr.attention.has_scale && !(d->attr.attention.scale - d->attr.attention.scale == 0))
        LUTHIER__NFAIL("scale %g must be finite", (double)d->attr.attention.scale);
    r->shape[0][rk - 1] = v->shape[rk - 1];
    r->flops = 2.0 * numel / (double)x->shape[rk - 1] * (double)k->shape[rk - 2] *
               (double)(x->shape[rk - 1] + v->shape[rk - 1]);
    return LUTHIER_STATUS_OK;
}

/* The axes RESIZE resizes: the last two (the last one at rank 1). */
LUTHIER_PRIVATE int luthier__resize_first(int rank) { return rank > 2 ? rank - 2 : 0; }

/* Output length of RESIZE's axis i (0 when invalid, with the reason in why). */
LUTHIER_PRIVATE int64_t luthier__resize_len(const luthier_resize_attrs *a, int use_sizes, int i, int64_t in,
                                            char *why, size_t wn) {
    double o;
    if (use_sizes) {
        if (a->sizes[i] < 1 || a->sizes[i] > ((int64_t)1 << 40)) {
            snprintf(why, wn, "size %d is %lld: sizes must be in [1, 2^40]", i, (long long)a->sizes[i]);
            return 0;
        }
        return a->sizes[i];
    }
    if (!(a->scales[i] > 0) || !(a->scales[i] <= 1e30f)) {
        snprintf(why, wn, "scale %d is %g: scales must be positive and finite", i, (double)a->scales[i]);
        return 0;
    }
    o = floor((double)in * (double)a->scales[i]);
    if (o < 1 || o > (double)((int64_t)1 << 40)) {
        snprintf(why, wn, "axis %d: %lld * scale %g gives %.0f elements (must be in [1, 2^40])", i, (long long)in,
                 (double)a->scales[i], o);
        return 0;
    }
    return (int64_t)o;
}

LUTHIER_PRIVATE luthier_status luthier__infer_resize(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_resize_attrs *a = &d->attr.resize;
    const int first = luthier__resize_first(x->rank);
    int use_sizes = 0;
    char why[160];
    static const double taps[3] = {1, 4, 16};
    if ((unsigned)a->mode >= (unsigned)LUTHIER_RESIZE_MODE_COUNT) LUTHIER__NFAIL("unknown mode %d", a->mode);
    if ((unsigned)a->coord >= (unsigned)LUTHIER_RESIZE_COORD_COUNT)
        LUTHIER__NFAIL("unknown coordinate transformation %d", a->coord);
    if ((unsigned)a->nearest_mode >= (unsigned)LUTHIER_RESIZE_NEAREST_COUNT) LUTHIER__NFAIL("unknown nearest_mode %d", a->nearest_mode);
    if (a->exclude_outside != 0 && a->exclude_outside != 1) LUTHIER__NFAIL("exclude_outside %d is not 0 or 1", a->exclude_outside);
    if (!(a->cubic_coeff_a - a->cubic_coeff_a == 0)) LUTHIER__NFAIL("cubic_coeff_a %g is not finite", (double)a->cubic_coeff_a);
    for (i = 0; i < x->rank; i++) use_sizes |= a->sizes[i] != 0;
    for (i = 0; i < x->rank; i++) {
        const int64_t in = x->shape[i], out = luthier__resize_len(a, use_sizes, i, in, why, sizeof why);
        if (!out) LUTHIER__NFAIL("%s", why);
        if (i < first && !(out == in && (in == 1 || use_sizes || a->scales[i] == 1.0f)))
            LUTHIER__NFAIL("axis %d (%lld -> %lld, scale %g): only the last two axes are resized, the others must keep "
                           "their size with scale 1", i, (long long)in, (long long)out,
                           use_sizes ? (double)out / (double)in : (double)a->scales[i]);
        /* tf_half_pixel_for_nn moves even an axis of scale 1 by half an element */
        if (i < first && in > 1 && a->coord == LUTHIER_RESIZE_TF_HALF_PIXEL_FOR_NN &&
            !(a->mode == LUTHIER_RESIZE_NEAREST &&
              (a->nearest_mode == LUTHIER_RESIZE_ROUND_PREFER_FLOOR || a->nearest_mode == LUTHIER_RESIZE_FLOOR)))
            LUTHIER__NFAIL("tf_half_pixel_for_nn shifts axis %d (of %lld, scale 1) by half an element: supported with "
                           "nearest rounding down only", i, (long long)in);
        r->shape[0][i] = out;
    }
    r->flops = (double)luthier__numel(x->rank, r->shape[0], &ok) * taps[a->mode];
    if (!ok) {
        luthier__shape_str(x->rank, r->shape[0], sa, sizeof sa);
        LUTHIER__NFAIL("the output %s is too large", sa);
    }
    return LUTHIER_STATUS_OK;
}

/* DEPTH_TO_SPACE and SPACE_TO_DEPTH. */
LUTHIER_PRIVATE luthier_status luthier__infer_depth_space(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const int d2s = d->op == LUTHIER_OP_DEPTH_TO_SPACE;
    const int64_t b = d2s ? d->attr.depth_to_space.blocksize : d->attr.space_to_depth.blocksize;
    int64_t c = x->shape[1], h = x->shape[2], w = x->shape[3];
    if (x->rank != 4) LUTHIER__NFAIL("input '%s' has rank %d, the operator takes [N,C,H,W]", x->name, x->rank);
    luthier__shape_str(4, x->shape, sa, sizeof sa);
    if (b < 1 || b > ((int64_t)1 << 20)) LUTHIER__NFAIL("blocksize %lld must be in [1, 2^20]", (long long)b);
    if (d2s) {
        if ((unsigned)d->attr.depth_to_space.mode > (unsigned)LUTHIER_DEPTH_TO_SPACE_CRD)
            LUTHIER__NFAIL("unknown mode %d (DCR 0, CRD 1)", d->attr.depth_to_space.mode);
        if (c % (b * b)) LUTHIER__NFAIL("input %s: %lld channels do not divide by blocksize^2 = %lld", sa, (long long)c,
                                        (long long)(b * b));
        c /= b * b, h *= b, w *= b;
    } else {
        if (h % b || w % b) LUTHIER__NFAIL("input %s: height and width must divide by blocksize %lld", sa, (long long)b);
        if (c > ((int64_t)1 << 40) / (b * b)) LUTHIER__NFAIL("input %s: %lld channels times blocksize^2 overflow", sa, (long long)c);
        c *= b * b, h /= b, w /= b;
    }
    r->shape[0][1] = c; r->shape[0][2] = h; r->shape[0][3] = w;
    luthier__numel(4, r->shape[0], &ok);
    if (!ok) LUTHIER__NFAIL("the output is too large");
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_pad(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_pad_attrs *a = &d->attr.pad;
    const int64_t lim = (int64_t)1 << 40;
    if ((unsigned)a->mode >= (unsigned)LUTHIER_PAD_MODE_COUNT) LUTHIER__NFAIL("unknown mode %d", a->mode);
    for (i = x->rank; i < LUTHIER_MAX_RANK; i++)
        if (a->begin[i] || a->end[i]) LUTHIER__NFAIL("axis %d has pads, the input has rank %d", i, x->rank);
    for (i = 0; i < x->rank; i++) {
        const int64_t in = x->shape[i], b = a->begin[i], e = a->end[i];
        if (b < -lim || b > lim || e < -lim || e > lim)
            LUTHIER__NFAIL("axis %d: pads %lld, %lld must be within +-2^40", i, (long long)b, (long long)e);
        if (in + b + e < 1)
            LUTHIER__NFAIL("axis %d: pads %lld, %lld leave %lld of its %lld elements", i, (long long)b, (long long)e,
                           (long long)(in + b + e), (long long)in);
        r->shape[0][i] = in + b + e;
    }
    luthier__numel(x->rank, r->shape[0], &ok);
    if (!ok) {
        luthier__shape_str(x->rank, r->shape[0], sa, sizeof sa);
        LUTHIER__NFAIL("the output %s is too large", sa);
    }
    return LUTHIER_STATUS_OK;
}

/* ARGMAX, ARGMIN: i64 positions along the axis. */
LUTHIER_PRIVATE luthier_status luthier__infer_argext(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_argmax_attrs *a = d->op == LUTHIER_OP_ARGMAX ? &d->attr.argmax : &d->attr.argmin;
    const int axis = luthier__norm_axis(a->axis, x->rank, 0);
    int j = 0;
    if (x->dtype != LUTHIER_DTYPE_F32) LUTHIER__NFAIL("input '%s' is %s, the operator takes f32", x->name, luthier__dtype_name(x->dtype));
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", a->axis, x->rank);
    if ((unsigned)a->keepdims > 1 || (unsigned)a->select_last_index > 1)
        LUTHIER__NFAIL("keepdims %d and select_last_index %d must be 0 or 1", a->keepdims, a->select_last_index);
    for (i = 0; i < x->rank; i++)
        if (i != axis || a->keepdims) r->shape[0][j++] = i == axis ? 1 : x->shape[i];
    r->rank[0] = j;
    if (j == 0) r->rank[0] = 1, r->shape[0][0] = 1; /* a scalar is held as [1] */
    r->dtype[0] = LUTHIER_DTYPE_I64;
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* TOPK: values (f32) and indices (i64), the axis cut to k. */
LUTHIER_PRIVATE luthier_status luthier__infer_topk(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_topk_attrs *a = &d->attr.topk;
    const int axis = luthier__norm_axis(a->axis, x->rank, 0);
    if (x->dtype != LUTHIER_DTYPE_F32) LUTHIER__NFAIL("input '%s' is %s, the operator takes f32", x->name, luthier__dtype_name(x->dtype));
    if (axis < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", a->axis, x->rank);
    if ((unsigned)a->largest > 1 || (unsigned)a->sorted > 1)
        LUTHIER__NFAIL("largest %d and sorted %d must be 0 or 1", a->largest, a->sorted);
    if (a->k < 1 || a->k > x->shape[axis])
        LUTHIER__NFAIL("k %lld is not in [1, %lld] (the length of axis %d)", (long long)a->k, (long long)x->shape[axis], axis);
    if (x->shape[axis] > ((int64_t)1 << 32)) LUTHIER__NFAIL("axis %d is longer than 2^32 elements", axis);
    r->num_outputs = 2;
    r->rank[1] = x->rank;
    r->shape[0][axis] = a->k;
    memcpy(r->shape[1], r->shape[0], sizeof r->shape[0]);
    r->dtype[0] = LUTHIER_DTYPE_F32;
    r->dtype[1] = LUTHIER_DTYPE_I64;
    r->flops = numel * (1.0 + log((double)a->k + 1.0));
    /* a run-time length along the axis: min(k, n) of each row, both outputs; elsewhere: x's */
    r->len_axis[0] = r->len_axis[1] = x->len_axis;
    r->len_root[0] = r->len_root[1] = x->len_axis == axis ? LUTHIER__LEN_OUT(0) : x->len_root;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_cumsum(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_cumsum_attrs *a = &d->attr.cumsum;
    if (luthier__norm_axis(a->axis, x->rank, 0) < 0) LUTHIER__NFAIL("axis %d is out of range for rank %d", a->axis, x->rank);
    if ((unsigned)a->exclusive > 1 || (unsigned)a->reverse > 1)
        LUTHIER__NFAIL("exclusive %d and reverse %d must be 0 or 1", a->exclusive, a->reverse);
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_trilu(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (x->rank < 2) LUTHIER__NFAIL("input '%s' has rank %d, trilu takes [..., rows, columns]", x->name, x->rank);
    if ((unsigned)d->attr.trilu.upper > 1) LUTHIER__NFAIL("upper %d must be 0 or 1", d->attr.trilu.upper);
    return LUTHIER_STATUS_OK;
}

/* NONZERO: the coordinates of x's nonzero elements (NaN included), row-major order, as i64
   [rank, numel]: their count is the run-time length along axis 1. */
LUTHIER_PRIVATE luthier_status luthier__infer_nonzero(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    if (x->dtype != LUTHIER_DTYPE_F32 && x->dtype != LUTHIER_DTYPE_I64)
        LUTHIER__NFAIL("input '%s' is %s, the operator takes f32 or i64", x->name, luthier__dtype_name(x->dtype));
    if (x->rank < 1) LUTHIER__NFAIL("input '%s' is a scalar", x->name);
    r->rank[0] = 2;
    r->shape[0][0] = x->rank;
    r->shape[0][1] = (int64_t)luthier__numel(x->rank, x->shape, &ok);
    r->dtype[0] = LUTHIER_DTYPE_I64;
    r->len_axis[0] = 1, r->len_root[0] = LUTHIER__LEN_OUT(0);
    r->flops = numel;
    return LUTHIER_STATUS_OK;
}

/* The rows NON_MAX_SUPPRESSION's output holds: B * C * min(max per class, N), at least 1. */
LUTHIER_PRIVATE int64_t luthier__nms_bound(const luthier__gtensor *boxes, const luthier__gtensor *scores, int64_t max_per_class) {
    const int64_t per = max_per_class < boxes->shape[1] ? max_per_class : boxes->shape[1];
    const int64_t bound = scores->shape[0] * scores->shape[1] * per; /* <= the elements of scores */
    return bound > 0 ? bound : 1;
}

/* The attributes luthier_nms refuses (NULL when they are fine). */
LUTHIER_PRIVATE const char *luthier__nms_attrs_bad(const luthier_nms_attrs *a) {
    if ((unsigned)a->center_point_box > 1) return "center_point_box must be 0 or 1";
    if (a->max_output_boxes_per_class < 0) return "max_output_boxes_per_class must be >= 0";
    if (!(a->iou_threshold >= 0 && a->iou_threshold <= 1)) return "iou_threshold must be in [0, 1]";
    if ((unsigned)a->use_score_threshold > 1) return "use_score_threshold must be 0 or 1";
    if (a->use_score_threshold && a->score_threshold != a->score_threshold) return "score_threshold is NaN";
    return NULL;
}

LUTHIER_PRIVATE luthier_status luthier__infer_nms(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *sc = in[1];
    const char *why = luthier__nms_attrs_bad(&d->attr.nms);
    if (why) LUTHIER__NFAIL("%s", why);
    if (x->dtype != LUTHIER_DTYPE_F32 || sc->dtype != LUTHIER_DTYPE_F32) LUTHIER__NFAIL("boxes and scores must be f32");
    if (x->rank != 3 || x->shape[2] != 4) LUTHIER__NFAIL("boxes '%s' must be [batches, boxes, 4]", x->name);
    if (sc->rank != 3 || sc->shape[0] != x->shape[0] || sc->shape[2] != x->shape[1]) {
        luthier__shape_str(x->rank, x->shape, sa, sizeof sa);
        luthier__shape_str(sc->rank, sc->shape, sb, sizeof sb);
        LUTHIER__NFAIL("scores %s must be [batches, classes, boxes] for boxes %s", sb, sa);
    }
    r->num_outputs = 2;
    r->rank[0] = 2;
    r->shape[0][0] = luthier__nms_bound(x, sc, d->attr.nms.max_output_boxes_per_class);
    r->shape[0][1] = 3;
    r->rank[1] = 1;
    r->shape[1][0] = 1;
    r->dtype[0] = r->dtype[1] = LUTHIER_DTYPE_I64;
    r->flops = (double)luthier__numel(sc->rank, sc->shape, &ok) * (1.0 + log((double)x->shape[1] + 1.0));
    /* the selected rows: a run-time length (the count); boxes and scores may have one over the
       boxes, one batch and one class */
    r->len_axis[0] = 0, r->len_root[0] = LUTHIER__LEN_OUT(0);
    if (x->len_axis < 0 && sc->len_axis < 0) return LUTHIER_STATUS_OK;
    if (x->len_axis != 1 || sc->len_axis != 2 || x->len_root != sc->len_root || x->shape[0] != 1 || sc->shape[1] != 1)
        LUTHIER__NFAIL("boxes '%s' and scores '%s': a run-time length only over the boxes (axes 1 and 2, the same one), "
                       "with one batch and one class", x->name, sc->name);
    return LUTHIER_STATUS_OK;
}

/* Bytes of a node's inputs (each once) and outputs. */
LUTHIER_PRIVATE double luthier__io_bytes(const luthier__gtensor *const *in, int ni, const luthier__infer *r) {
    double b = 0;
    int i, ok;
    for (i = 0; i < ni; i++)
        if (in[i]) b += (double)luthier__numel(in[i]->rank, in[i]->shape, &ok) * (double)luthier__dtype_size(in[i]->dtype);
    for (i = 0; i < r->num_outputs; i++)
        b += (double)luthier__numel(r->rank[i], r->shape[i], &ok) * (double)luthier__dtype_size(r->dtype[i]);
    return b;
}

/* LSTM, GRU, RNN (see LUTHIER_OP_LIST): gates per direction and the node's attributes. */
LUTHIER_PRIVATE int luthier__rnn_gates(luthier_op op) {
    return op == LUTHIER_OP_LSTM ? 4 : op == LUTHIER_OP_GRU ? 3 : 1;
}

LUTHIER_PRIVATE const luthier_rnn_attrs *luthier__rnn_attrs(const luthier_node_desc *d) {
    return d->op == LUTHIER_OP_LSTM ? &d->attr.lstm : d->op == LUTHIER_OP_GRU ? &d->attr.gru : &d->attr.rnn;
}

/* Input k of a recurrent node, when present: f32, rank 3 (or 2 when s2 < 0) with shape
   [s0, s1, s2], and a constant when want_const. */
LUTHIER_PRIVATE luthier_status luthier__rnn_check_input(const luthier__infer_args *arg, int k, const char *what, int want_const,
                                                        int64_t s0, int64_t s1, int64_t s2) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *t = k < ni ? in[k] : NULL;
    const int rank = s2 < 0 ? 2 : 3;
    int64_t want[3];
    want[0] = s0, want[1] = s1, want[2] = s2;
    if (!t) return LUTHIER_STATUS_OK;
    if (t->dtype != LUTHIER_DTYPE_F32) LUTHIER__NFAIL("%s '%s' is %s, not f32", what, t->name, luthier__dtype_name(t->dtype));
    if (want_const && !t->is_const) LUTHIER__NFAIL("%s '%s' must be a constant", what, t->name);
    if (t->rank != rank || memcmp(t->shape, want, sizeof(int64_t) * (size_t)rank) != 0) {
        luthier__shape_str(t->rank, t->shape, sa, sizeof sa);
        luthier__shape_str(rank, want, sb, sizeof sb);
        LUTHIER__NFAIL("%s '%s' is %s, the node needs %s", what, t->name, sa, sb);
    }
    return LUTHIER_STATUS_OK;
}

/* sequence_lens (input 4), when present: an i64 constant [batch] of lengths 1..seq (rows past
   a sequence's length give zeros in Y, and Y_h / Y_c its last step's states). */
LUTHIER_PRIVATE luthier_status luthier__rnn_check_lens(const luthier__infer_args *arg, int64_t seq, int64_t batch) {
    LUTHIER__INFER_ARGS;
    const luthier__gtensor *t = ni > 4 ? in[4] : NULL;
    if (!t) return LUTHIER_STATUS_OK;
    if (t->dtype != LUTHIER_DTYPE_I64 || !t->is_const || t->rank != 1 || t->shape[0] != batch)
        LUTHIER__NFAIL("sequence_lens '%s' must be an i64 constant of %lld values", t->name, (long long)batch);
    for (i = 0; i < batch; i++)
        if (((const int64_t *)t->data)[i] < 1 || ((const int64_t *)t->data)[i] > seq)
            LUTHIER__NFAIL("sequence_lens[%d] is %lld, outside 1..%lld (the sequence length)", i,
                           (long long)((const int64_t *)t->data)[i], (long long)seq);
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__rnn_check_attrs(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_rnn_attrs *a = luthier__rnn_attrs(d);
    if (a->hidden_size < 1 || a->hidden_size > ((int64_t)1 << 24))
        LUTHIER__NFAIL("hidden_size %lld is not in [1, 2^24]", (long long)a->hidden_size);
    if ((unsigned)a->direction >= (unsigned)LUTHIER_RNN_DIRECTION_COUNT) LUTHIER__NFAIL("unknown direction %d", a->direction);
    if (a->layout != 0 && a->layout != 1) LUTHIER__NFAIL("layout %d is not 0 or 1", a->layout);
    if (a->has_clip != 0 && a->has_clip != 1) LUTHIER__NFAIL("has_clip %d is not 0 or 1", a->has_clip);
    if (a->has_clip && !(a->clip > 0)) LUTHIER__NFAIL("clip %g must be > 0", (double)a->clip);
    if (a->linear_before_reset != 0 && !(d->op == LUTHIER_OP_GRU && a->linear_before_reset == 1))
        LUTHIER__NFAIL("linear_before_reset %d: 0, or 1 for gru", a->linear_before_reset);
    if (a->input_forget != 0 && !(d->op == LUTHIER_OP_LSTM && a->input_forget == 1))
        LUTHIER__NFAIL("input_forget %d: 0, or 1 for lstm", a->input_forget);
    if (x->dtype != LUTHIER_DTYPE_F32 || x->rank != 3)
        LUTHIER__NFAIL("input '%s' must be 3-D f32 ([seq,batch,input], layout 1: [batch,seq,input]), not rank %d %s", x->name,
                       x->rank, luthier__dtype_name(x->dtype));
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__infer_rnn(const luthier__infer_args *arg) {
    LUTHIER__INFER_ARGS;
    const luthier_rnn_attrs *a = luthier__rnn_attrs(d);
    const int64_t G = luthier__rnn_gates(d->op), H = a->hidden_size;
    int64_t dirs, seq, batch, input, s0, s1;
    double ws;
    luthier_status s;
    if ((s = luthier__rnn_check_attrs(arg)) != LUTHIER_STATUS_OK) return s;
    dirs = a->direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
    seq = x->shape[a->layout], batch = x->shape[1 - a->layout], input = x->shape[2];
    s0 = a->layout ? batch : dirs, s1 = a->layout ? dirs : batch;
    if ((s = luthier__rnn_check_input(arg, 1, "W", 1, dirs, G * H, input)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_input(arg, 2, "R", 1, dirs, G * H, H)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_input(arg, 3, "B", 1, dirs, 2 * G * H, -1)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_lens(arg, seq, batch)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_input(arg, 5, "initial_h", 0, s0, s1, H)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_input(arg, 6, "initial_c", 0, s0, s1, H)) != LUTHIER_STATUS_OK ||
        (s = luthier__rnn_check_input(arg, 7, "P", 1, dirs, 3 * H, -1)) != LUTHIER_STATUS_OK)
        return s;
    /* the workspace holds a direction's input projections: seq * batch * G * hidden floats */
    ws = (double)seq * (double)batch * (double)(G * H) * 4.0;
    if (ws > (double)(LUTHIER__SIZE_LIMIT / 4)) LUTHIER__NFAIL("%lld steps of %lld x %lld gates are too large", (long long)seq,
                                                              (long long)batch, (long long)(G * H));
    r->num_outputs = d->op == LUTHIER_OP_LSTM ? 3 : 2;
    r->rank[0] = 4;
    r->shape[0][0] = a->layout ? batch : seq;
    r->shape[0][1] = a->layout ? seq : dirs;
    r->shape[0][2] = a->layout ? dirs : batch;
    r->shape[0][3] = H;
    for (i = 1; i < r->num_outputs; i++) {
        r->rank[i] = 3;
        r->shape[i][0] = s0, r->shape[i][1] = s1, r->shape[i][2] = H;
    }
    luthier__numel(4, r->shape[0], &ok);
    if (!ok) LUTHIER__NFAIL("the output is too large");
    r->flops = 2.0 * (double)dirs * (double)seq * (double)batch * (double)(G * H) * (double)(input + H);
    return LUTHIER_STATUS_OK;
}


/* The inputs an operator may leave absent (-1): X(ENUM, mask), bit i = input i. Its infer hook
   sees them as NULL; every other input must be present. */
#define LUTHIER__OPTIONAL_INPUTS(X) \
    X(CONV2D, 0x4u) X(DENSE, 0x4u) X(CONV_TRANSPOSE, 0x4u) X(LAYER_NORM, 0x6u) X(LSTM, 0xf8u) X(GRU, 0x38u) \
    X(RNN, 0x38u)

LUTHIER_PRIVATE unsigned luthier__optional_inputs(luthier_op op) {
    static const struct { luthier_op op; unsigned mask; } rows[] = {
#define LUTHIER__X(e, mask) {LUTHIER_OP_##e, mask},
        LUTHIER__OPTIONAL_INPUTS(LUTHIER__X)
#undef LUTHIER__X
    };
    size_t k;
    for (k = 0; k < sizeof rows / sizeof rows[0]; k++)
        if (rows[k].op == op) return rows[k].mask;
    return 0;
}

LUTHIER_PRIVATE luthier_status luthier__infer_node(luthier_graph *g, const luthier_node_desc *d,
                                                   const char *nname, luthier__infer *r) {
    const luthier__gtensor *in[64] = {NULL};
    const luthier__gtensor *x;
    const luthier_fused_activation *act;
    int i, ni = d->num_inputs, ok;
    double numel;
    memset(r, 0, sizeof *r);
    r->num_outputs = 1;
    for (i = 0; i < ni; i++) in[i] = d->inputs[i] >= 0 ? &g->tensors[d->inputs[i]] : NULL;
    x = in[0];
    if (!x) LUTHIER__NFAIL("input 0 is absent");
    numel = (double)luthier__numel(x->rank, x->shape, &ok);
    for (i = 0; i < ni && luthier__ops[d->op].dtypes == LUTHIER__DTYPES_F32; i++)
        if (in[i] && in[i]->dtype != LUTHIER_DTYPE_F32)
            LUTHIER__NFAIL("input %d ('%s') is %s, the operator takes f32", i, in[i]->name,
                           luthier__dtype_name(in[i]->dtype));
    for (i = 1; i < ni; i++)
        if (!in[i] && !(luthier__optional_inputs(d->op) >> i & 1u))
            LUTHIER__NFAIL("input %d is absent and not optional", i);
    for (i = 0; i < ni && luthier__ops[d->op].lens == LUTHIER__LENS_NO; i++)
        if (in[i] && in[i]->len_axis >= 0)
            LUTHIER__NFAIL("%s does not take tensors with a run-time length: input %d ('%s') has one along axis %d",
                           luthier_op_name(d->op), i, in[i]->name, in[i]->len_axis);
    for (i = 0; i < LUTHIER_MAX_NODE_OUTPUTS; i++) r->len_axis[i] = r->len_root[i] = -1;
    r->rank[0] = x->rank;
    memcpy(r->shape[0], x->shape, sizeof x->shape);
    {
        luthier__infer_args arg;
        luthier_status s;
        arg.g = g; arg.d = d; arg.nname = nname; arg.in = in; arg.x = x; arg.ni = ni; arg.numel = numel; arg.r = r;
        if ((s = luthier__ops[d->op].infer(&arg)) != LUTHIER_STATUS_OK) return s;
        if (luthier__ops[d->op].lens == LUTHIER__LENS_FOLLOW && (s = luthier__lens_follow(&arg)) != LUTHIER_STATUS_OK) return s;
    }
    if (r->bytes == 0) r->bytes = luthier__io_bytes(in, ni, r);
    if ((act = luthier__node_act(d)) != NULL &&
        ((unsigned)act->kind >= (unsigned)LUTHIER_ACTIVATION_COUNT ||
         (act->kind == LUTHIER_ACTIVATION_CLAMP && !(act->clamp_min <= act->clamp_max))))
        LUTHIER__NFAIL("bad activation %d (or clamp_min > clamp_max)", (int)act->kind);
    if (act && d->op != LUTHIER_OP_CONV2D && d->op != LUTHIER_OP_DENSE && luthier__act_is_post(act->kind))
        LUTHIER__NFAIL("activation %s is fused into conv2d and dense only", luthier__act_name(act->kind));
    return LUTHIER_STATUS_OK;
}
#undef LUTHIER__NFAIL

LUTHIER_API luthier_status luthier_graph_add_node(luthier_graph *g, const luthier_node_desc *desc,
                                                  int *outputs) {
    luthier_node_desc rd;
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
    snprintf(defname, sizeof defname, "%s_%d", luthier__op_names[desc->op].name, g->num_nodes);
    nname = desc->name && *desc->name ? desc->name : defname;
    if (luthier__names_find(g, 1, nname) >= 0)
        return luthier__gfail(g, LUTHIER_STATUS_INVALID_ARGUMENT, "node name '%s' is already used", nname);
    if (desc->num_inputs < luthier__op_names[desc->op].lo || desc->num_inputs > luthier__op_names[desc->op].hi)
        return luthier__node_fail(g, nname, desc->op, "%d inputs given, the operator takes %d to %d",
                                  desc->num_inputs, luthier__op_names[desc->op].lo, luthier__op_names[desc->op].hi);
    if (!desc->inputs) return luthier__node_fail(g, nname, desc->op, "inputs is NULL");
    for (i = 0; i < desc->num_inputs; i++)
        if (desc->inputs[i] < -1 || desc->inputs[i] >= g->num_tensors)
            return luthier__node_fail(g, nname, desc->op, "input %d is tensor %d, which does not exist (the graph has %d)",
                                      i, desc->inputs[i], g->num_tensors);
    rd = luthier__resolve_attrs(desc);
    if ((s = luthier__infer_node(g, &rd, nname, &r)) != LUTHIER_STATUS_OK) return s;
    /* the infer hook gives the number of outputs (split: num_outputs; lstm: 3) */
    if (desc->num_outputs > 1 && desc->num_outputs != r.num_outputs)
        return luthier__node_fail(g, nname, desc->op, "num_outputs %d: the operator gives %d output%s", desc->num_outputs,
                                  r.num_outputs, r.num_outputs > 1 ? "s" : "");
    if (!luthier__grow((void **)&g->nodes, &g->cap_nodes, g->num_nodes + 1, sizeof *g->nodes))
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
    n = &g->nodes[g->num_nodes];
    memset(n, 0, sizeof *n);
    n->d = rd;
    n->num_outputs = r.num_outputs;
    n->flops = r.flops;
    n->bytes = r.bytes;
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
        s = luthier__add_tensor(g, oname, r.dtype[i], r.rank[i], r.shape[i], 1, &t);
        if (s == LUTHIER_STATUS_INVALID_ARGUMENT && strstr(g->error, "already used")) {
            snprintf(oname + strlen(oname), sizeof oname - strlen(oname), "#%d", g->num_tensors);
            s = luthier__add_tensor(g, oname, r.dtype[i], r.rank[i], r.shape[i], 1, &t);
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
    for (i = 0; i < r.num_outputs; i++) {
        luthier__gtensor *t = &g->tensors[n->outputs[i]];
        const int root = r.len_root[i];
        t->len_axis = r.len_axis[i];
        t->len_root = t->len_axis < 0 ? -1 : root >= 0 ? root : n->outputs[-2 - root];
    }
    if (!luthier__names_add(g, 1, g->num_nodes)) {
        while (g->num_tensors > first_tensor) luthier__free(g->tensors[--g->num_tensors].name);
        luthier__gnode_free(n);
        return luthier__gfail(g, LUTHIER_STATUS_OUT_OF_MEMORY, "out of memory");
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
    out->length_axis = t->len_axis;
    out->length_root = t->len_root;
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
    if (!g || !name || !tensor) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return (*tensor = luthier__names_find(g, 0, name)) >= 0 ? LUTHIER_STATUS_OK : LUTHIER_STATUS_NOT_FOUND;
}

LUTHIER_API luthier_status luthier_graph_find_node(const luthier_graph *g, const char *name, int *node) {
    if (!g || !name || !node) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return (*node = luthier__names_find(g, 1, name)) >= 0 ? LUTHIER_STATUS_OK : LUTHIER_STATUS_NOT_FOUND;
}


/* >>impl-plan-layout ==========================================================================
   Plan values: one per graph tensor plus layout twins. A value lives in the arena, in a graph
   input (the caller's buffer) or in a plan-owned constant; views (reshape, flatten, identity,
   layout twins whose memory order coincides) and in-place results alias another value. */

enum { LUTHIER__PLAIN = 0, LUTHIER__NHWC = 1 };
enum { LUTHIER__ST_NONE = 0, LUTHIER__ST_ARENA, LUTHIER__ST_INPUT, LUTHIER__ST_CONST };

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
    int qtwin;                       /* the next of a ring of the same tensor in other datatypes
                                        (fp32, uint8, fp16: luthier__dtwin), -1 */
    int output_index;                /* ST_ARENA roots the size of graph output i: the run puts
                                        them in the caller's output buffer (luthier__ptr), -1 */
    float qscale;                    /* LUTHIER__DTYPE_U8: real = qscale * (q - qzero) */
    int32_t qzero;
} luthier__pval;

struct luthier__pstep {
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
    const char *cluster_kernels[LUTHIER_MAX_CLUSTERS]; /* conv2d, dense: each cluster's (NULL: kernel) */
    int explicit_kernels;            /* DENSE: the configuration named them (the runs pass them) */
    int kernel_index;                /* MATMUL: registry index */
    luthier__packed_b_layout bl;     /* MATMUL: one batch's packed B */
    float *packed;                   /* MATMUL: plan-owned packed B (scratch, or B itself when constant) */
    size_t packed_bytes;             /* CONV_TRANSPOSE: of packed (its weights: the tuner flushes them) */
    int b_prepacked;                 /* MATMUL: B constant without batch: packed at create time */
    luthier_conv_algorithm algorithm;
    double flops, bytes, seconds;
    luthier_qconv2d_layer *qconv;    /* int8 conv2d / dense */
    int q;                           /* runs on uint8 values */
    int32_t qmin, qmax;              /* int8 add: quantized clamp of the fused activation */
    const void *aux;                 /* RESIZE: its tap tables (luthier__op_rs_plan, plan-owned) */
    size_t h16_wide, h16_wide_off;   /* the workspace's bytes [h16_wide_off, h16_wide): the fp32
                                        copies that luthier__run_h16_wide runs the step on (its
                                        fp16 inputs and outputs); 0: none */
};

/* A graph tensor's run-time length in a plan: the axis and root of the graph's, and the count
   the root's step set in the last run (read through the root). */
typedef struct luthier__plen {
    int axis, root; /* -1: a static shape */
    int64_t n;
} luthier__plen;

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
    int running;                     /* atomic: a luthier_plan_run is in progress */
    unsigned features;               /* the creating context's CPU features (luthier_step_info.isa) */
    int fallbacks;                   /* configurations that did not fit their node (fallback_invalid) */
    char fallback_note[200];         /* ... the first one, and why */
    /* luthier_calibrate: called with every fp32 value of a graph tensor the run computes */
    void (*observe)(void *user, int tensor, const float *x, size_t n);
    void *observe_user;
    int num_tensors;                 /* of the graph */
    luthier__plen *lens;             /* per graph tensor: its run-time length (>>impl-lengths) */
};

/* >>impl-lengths when a plan runs: value v's run-time length (its root's count), NULL when its
   shape is static or the length runs along another axis than axis (-1: any). */
LUTHIER_PRIVATE int64_t *luthier__vlen(const luthier_plan *p, int v, int axis) {
    const int t = p->vals[v].tensor;
    const luthier__plen *l = t >= 0 && t < p->num_tensors ? &p->lens[t] : NULL;
    if (!l || l->axis < 0 || (axis >= 0 && l->axis != axis)) return NULL;
    return &p->lens[l->root].n;
}

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
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    return (*out = (luthier_calibration *)luthier__zalloc(sizeof **out)) ? LUTHIER_STATUS_OK : LUTHIER_STATUS_OUT_OF_MEMORY;
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
    if (!c || tensor < 0 || tensor >= LUTHIER__MAX_TENSORS || !(scale > 0.0f) || !(scale <= FLT_MAX) || zero_point < 0 || zero_point > 255)
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
    const char *why;
    luthier_status s = LUTHIER_STATUS_OK;
    int lineno = 0;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!c || !g || !path) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "calibration_load: calibration, graph or path is NULL");
    if (!(fh = luthier__fopen_regular(path, &why)))
        return luthier__fail(ctx, strcmp(why, "cannot open") ? LUTHIER_STATUS_INVALID_ARGUMENT : LUTHIER_STATUS_NOT_FOUND,
                             "calibration_load: '%s': %s", path, why);
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
    if (!luthier__grow((void **)&p->vals, &p->cap_vals, p->num_vals + 1, sizeof *p->vals)) return -1;
    v = &p->vals[p->num_vals];
    memset(v, 0, sizeof *v);
    v->dtype = dtype;
    v->rank = rank;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)rank);
    v->layout = layout;
    if (!luthier__tensor_bytes(rank, shape, dtype, &v->bytes)) return -1;
    v->alias = -1;
    v->twin = -1;
    v->tensor = -1;
    v->qtwin = -1;
    v->output_index = -1;
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

/* Value v's twin of datatype t (the same tensor in the same layout, converted): v itself or one
   on v's ring of twins (qtwin), else -1. */
LUTHIER_PRIVATE int luthier__dtwin(const luthier_plan *p, int v, luthier_dtype t) {
    int w = v;
    do {
        if (p->vals[w].dtype == t) return w;
        w = p->vals[w].qtwin;
    } while (w >= 0 && w != v);
    return -1;
}

/* Value v as activations of datatype t (a row of luthier__vdtypes with conversions, or fp32;
   uint8: the calibration's parameters for its tensor, which the caller has checked): itself, a
   twin, or a new twin made by a conversion step in the same layout; datatypes other than fp32
   meet through an fp32 twin. Values that do not convert (integers) stay as they are. -1 = OOM. */
LUTHIER_PRIVATE int luthier__need_dtype(luthier_plan *p, const luthier_calibration *cal, int v, luthier_dtype t) {
    const luthier__vdtype *from, *to;
    int w;
    luthier__pval *a, *b;
    luthier__pstep *st;
    if (v < 0) return v;
    if ((w = luthier__dtwin(p, v, t)) >= 0) return w;
    from = luthier__vdtype_of(p->vals[v].dtype);
    to = luthier__vdtype_of(t);
    if (!from || !to || (from->to_f32 < 0 && p->vals[v].dtype != LUTHIER_DTYPE_F32) ||
        (to->from_f32 < 0 && t != LUTHIER_DTYPE_F32))
        return v;
    if (p->vals[v].dtype != LUTHIER_DTYPE_F32 && t != LUTHIER_DTYPE_F32)
        return (v = luthier__need_dtype(p, cal, v, LUTHIER_DTYPE_F32)) < 0 ? -1 : luthier__need_dtype(p, cal, v, t);
    {
        int64_t shape[LUTHIER_MAX_RANK];
        int rank = p->vals[v].rank, layout = p->vals[v].layout;
        memcpy(shape, p->vals[v].shape, sizeof shape);
        if ((w = luthier__pval_new(p, t, rank, shape, layout)) < 0) return -1;
    }
    a = &p->vals[v];
    b = &p->vals[w];
    b->qtwin = a->qtwin >= 0 ? a->qtwin : v; /* into a's ring */
    a->qtwin = w;
    b->tensor = a->tensor;
    b->qscale = t == LUTHIER__DTYPE_U8 ? cal->scale[a->tensor] : a->qscale;
    b->qzero = t == LUTHIER__DTYPE_U8 ? cal->zero[a->tensor] : a->qzero;
    b->storage = LUTHIER__ST_ARENA;
    if (!(st = luthier__step_new(p, t == LUTHIER_DTYPE_F32 ? from->to_f32 : to->from_f32, -1, 1, 1))) return -1;
    st->in[0] = v;
    st->out[0] = w;
    snprintf(st->name, sizeof st->name, "%s", t == LUTHIER_DTYPE_F32 ? from->to_name : to->from_name);
    return w;
}

/* Value v as uint8 (u8 != 0) or as fp32 (luthier__need_dtype). */
LUTHIER_PRIVATE int luthier__need_q(luthier_plan *p, const luthier_calibration *cal, int v, int u8) {
    return luthier__need_dtype(p, cal, v, u8 ? LUTHIER__DTYPE_U8 : LUTHIER_DTYPE_F32);
}

/* Value v in the given layout: itself, its twin, or a new twin (a view when the memory orders
   coincide, a plan-owned transposed copy for constants, else a conversion step; uint8 values are
   dequantized first: transposes are fp32). -1 = OOM. */
LUTHIER_PRIVATE int luthier__need(luthier_context *ctx, luthier_plan *p, int v, int layout) {
    int w;
    luthier__pval *a;
    if (v < 0 || p->vals[v].layout == layout || p->vals[v].rank != 4) return v;
    if (p->vals[v].twin >= 0) return p->vals[v].twin;
    if (luthier__vdtype_of(p->vals[v].dtype) && luthier__vdtype_of(p->vals[v].dtype)->to_f32 >= 0 &&
        !luthier__coincide(4, p->vals[v].shape))
        return (v = luthier__need_dtype(p, NULL, v, LUTHIER_DTYPE_F32)) < 0 ? -1 : luthier__need(ctx, p, v, layout);
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

/* Folds batch norm node bn into conv node c (weights scaled per output channel). */
LUTHIER_PRIVATE int luthier__fold_bn(const luthier_graph *g, int c, int bn, luthier__fuse *fc) {
    const luthier__gnode *cn = &g->nodes[c], *bnn = &g->nodes[bn];
    const luthier__gtensor *w = &g->tensors[cn->inputs[1]];
    const float *gamma = (const float *)g->tensors[bnn->inputs[1]].data,
                *beta = (const float *)g->tensors[bnn->inputs[2]].data,
                *mean = (const float *)g->tensors[bnn->inputs[3]].data,
                *var = (const float *)g->tensors[bnn->inputs[4]].data;
    const float *bias = cn->d.num_inputs > 2 && cn->inputs[2] >= 0 ? (const float *)g->tensors[cn->inputs[2]].data : NULL;
    double eps = bnn->d.attr.batch_norm.epsilon;
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

/* Whether node p may take an activation that runs after the store: a conv / dense node that
   stays fp32 (an int8 plan's layer on a calibrated input takes the clamps only). */
LUTHIER_PRIVATE int luthier__post_producer(const luthier_graph *g, int p, const luthier_calibration *cal) {
    const luthier_op op = g->nodes[p].d.op;
    return (op == LUTHIER_OP_CONV2D || op == LUTHIER_OP_DENSE) && !luthier__cal_has(cal, g->nodes[p].inputs[0]);
}

/* The activation that runs after the store (luthier__act_post) equal to element-wise node gn,
   with its parameters in *p0, *p1, when producer p may take it; else NONE. */
LUTHIER_PRIVATE luthier_activation luthier__fusable_post(const luthier_graph *g, const luthier__gnode *gn, int p,
                                                         const luthier_calibration *cal, float *p0, float *p1) {
    luthier_activation act;
    if (p < 0 || luthier__ops[gn->d.op].run != luthier__run_unary || !luthier__post_producer(g, p, cal))
        return LUTHIER_ACTIVATION_NONE;
    /* (the unary kernel's a, b are the activation's parameters: luthier__act_unary) */
    act = luthier__act_of_unary(luthier__node_unary(&gn->d, p0, p1));
    return luthier__act_is_post(act) ? act : LUTHIER_ACTIVATION_NONE;
}

/* Node n (gn) fused into node p: p now produces n's output, n runs no step, and what joins the
   names of p's fused nodes ("+"-separated). */
LUTHIER_PRIVATE void luthier__absorb(luthier__fuse *f, int *prod, int p, int n, const luthier__gnode *gn, const char *what) {
    const size_t len = strlen(f[p].fused);
    f[p].out = gn->outputs[0];
    prod[gn->outputs[0]] = p;
    f[n].alive = 0;
    snprintf(f[p].fused + len, sizeof f[p].fused - len, "%s%s", len ? "+" : "", what);
}

/* Fusion decisions over the whole graph (f zeroed, prod and cons sized by the caller: each
   tensor's producer node, -1, and consumer count, a graph output counting as one).
   fold = 0 records the decisions without computing folded weights (signatures only). Residual
   adds stay apart with no_residual, and (int8 plans, cal set) when both operands have
   quantization parameters: they run as quantized adds. */
LUTHIER_PRIVATE void luthier__fuse_graph(const luthier_graph *g, luthier__fuse *f, int *prod, int *cons,
                                         int no_fusion, int fold, const luthier_calibration *cal, int no_residual,
                                         int *oom) {
    int n, i;
    for (i = 0; i < g->num_tensors; i++) prod[i] = -1, cons[i] = 0;
    for (i = 0; i < g->num_outputs; i++) cons[g->outputs[i]]++;
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        f[n].alive = 1;
        f[n].pos = n;
        const luthier_fused_activation *act = luthier__node_act(&gn->d);
        f[n].act = act ? act->kind : LUTHIER_ACTIVATION_NONE;
        f[n].cmin = act ? act->clamp_min : 0.0f;
        f[n].cmax = act ? act->clamp_max : 0.0f;
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
        luthier__absorb(f, prod, c, n, gn, "batch_norm");
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
        f[best].pos = f[n].pos;
        luthier__absorb(f, prod, best, n, gn, "add");
    }
    /* 3: relu / clip into the producer; hard_swish, hard_sigmoid, silu, leaky_relu into a
       conv / dense producer of fp32 (after its residual add, as the graph orders them) */
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        int t = gn->inputs[0], p = prod[t];
        float a0, a1;
        const luthier_activation post = luthier__fusable_post(g, gn, p, cal, &a0, &a1);
        if ((gn->d.op != LUTHIER_OP_RELU && gn->d.op != LUTHIER_OP_CLIP && !post) || p < 0 || !f[p].alive ||
            f[p].out != t || f[p].act != LUTHIER_ACTIVATION_NONE || !LUTHIER__SOLE(t) ||
            !luthier__node_act(&g->nodes[p].d))
            continue;
        const float lo = gn->d.attr.clip.min, hi = gn->d.attr.clip.max; /* clip only */
        if (post) {
            f[p].act = post;
            f[p].cmin = a0;
            f[p].cmax = a1;
        } else if (gn->d.op == LUTHIER_OP_RELU || (lo == 0.0f && hi >= FLT_MAX)) {
            f[p].act = LUTHIER_ACTIVATION_RELU;
        } else if (lo == 0.0f && hi == 6.0f) {
            f[p].act = LUTHIER_ACTIVATION_RELU6;
        } else {
            f[p].act = LUTHIER_ACTIVATION_CLAMP;
            f[p].cmin = lo;
            f[p].cmax = hi;
        }
        luthier__absorb(f, prod, p, n, gn, luthier_op_name(gn->d.op));
    }
    /* 4: x * sigmoid(x) (exported SiLU) into x's conv / dense producer */
    for (n = 0; n < g->num_nodes; n++) {
        const luthier__gnode *gn = &g->nodes[n];
        for (i = 0; i < 2 && gn->d.op == LUTHIER_OP_MUL && f[n].act == LUTHIER_ACTIVATION_NONE; i++) {
            const int t = gn->inputs[i], s = gn->inputs[1 - i], sg = prod[s], p = prod[t];
            if (sg < 0 || !f[sg].alive || g->nodes[sg].d.op != LUTHIER_OP_SIGMOID || g->nodes[sg].inputs[0] != t ||
                !LUTHIER__SOLE(s) || cons[t] != 2 || g->tensors[t].is_output || g->tensors[t].is_input ||
                p < 0 || !f[p].alive || f[p].out != t || f[p].act != LUTHIER_ACTIVATION_NONE ||
                !luthier__post_producer(g, p, cal))
                continue;
            f[p].act = LUTHIER_ACTIVATION_SILU;
            f[sg].alive = 0;
            luthier__absorb(f, prod, p, n, gn, "sigmoid+mul");
            break;
        }
    }
#undef LUTHIER__SOLE
}

/* >>impl-plan-memory: lifetimes, in-place results, arena offsets (greedy by size). */

/* Value v (-1: an absent optional input) is used at step s: its root lives through s. */
LUTHIER_PRIVATE void luthier__live_at(luthier_plan *p, int v, int s) {
    luthier__pval *r = v >= 0 ? &p->vals[luthier__root(p, v)] : NULL;
    if (r && r->first > s) r->first = s;
    if (r && r->last < s) r->last = s;
}

LUTHIER_PRIVATE void luthier__lifetimes(luthier_plan *p) {
    int s, i, v;
    for (v = 0; v < p->num_vals; v++) p->vals[v].first = INT_MAX, p->vals[v].last = -1;
    for (s = 0; s < p->num_steps; s++) {
        const luthier__pstep *st = &p->steps[s];
        for (i = 0; i < st->nin; i++) luthier__live_at(p, st->in[i], s);
        luthier__live_at(p, st->residual, s);
        for (i = 0; i < st->nout; i++) luthier__live_at(p, st->out[i], s);
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
        if (luthier__ops[op].run == luthier__run_unary || op == LUTHIER_OP_BATCH_NORM) {
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

/* 1 when placed, 0 when out of memory, -1 when the arena's size overflows. */
LUTHIER_PRIVATE int luthier__assign_offsets(luthier_plan *p) {
    int *order = (int *)luthier__alloc(sizeof(int) * (size_t)(p->num_vals + 1)), n = 0, i, j, ok = 1;
    luthier__placed *placed = (luthier__placed *)luthier__alloc(sizeof *placed * (size_t)(p->num_vals + 1));
    size_t total = 0;
    if (!order || !placed) {
        luthier__free(order);
        luthier__free(placed);
        return 0;
    }
    for (i = 0; i < p->num_vals; i++) { /* the arena's roots that some step uses */
        const luthier__pval *v = &p->vals[i];
        if (v->alias < 0 && v->storage == LUTHIER__ST_ARENA && v->last >= 0) order[n++] = i;
    }
    /* largest first (insertion sort: a few hundred values) */
    for (i = 1; i < n; i++) {
        int x = order[i];
        for (j = i; j > 0 && p->vals[order[j - 1]].bytes < p->vals[x].bytes; j--) order[j] = order[j - 1];
        order[j] = x;
    }
    for (i = 0; i < n && ok; i++) {
        luthier__pval *v = &p->vals[order[i]];
        size_t size, off = 0, end = 0;
        int moved = 1;
        ok = luthier__size_add(v->bytes, LUTHIER__ALIGN - 1, &size);
        size = size / LUTHIER__ALIGN * LUTHIER__ALIGN;
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
        ok = ok && luthier__size_add(off, size, &end);
        v->offset = off;
        placed[i].off = off;
        placed[i].end = end;
        placed[i].first = v->first;
        placed[i].last = v->last;
        if (end > total) total = end;
    }
    p->arena_bytes = total;
    luthier__free(order);
    luthier__free(placed);
    return ok ? 1 : -1;
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
    luthier__free(p->lens);
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

LUTHIER_PRIVATE size_t luthier__sgemm_ws(luthier_context *ctx, const luthier__kernel_entry *uk, size_t m, size_t n, size_t k) {
    luthier__gemm_blocking b = luthier__gemm_blocking_for(uk, &ctx->caches, &ctx->blocking_override, m, n, k);
    size_t ws = luthier__gemm_workspace_bytes(uk, &b);
    return (ws + LUTHIER__ALIGN - 1) / LUTHIER__ALIGN * LUTHIER__ALIGN * (size_t)ctx->pool->num_threads;
}

/* Counts a configuration of node `name` that did not fit (why: in ctx's message) and falls back
   to the default: the note of luthier_plan_create names the first. */
LUTHIER_PRIVATE void luthier__plan_fallback(luthier_context *ctx, luthier_plan *p, const char *name) {
    if (!p->fallbacks++) snprintf(p->fallback_note, sizeof p->fallback_note, "node '%.60s': %.120s", name, ctx->error);
}

/* >>impl-precision: one row per luthier_precision: the name records and tools use, the kernel
   families its nodes' kernels come from (0: a plan's precision only, no node's), and the
   operators whose node precision it sets (FP16: convolutions and dense layers; INT8: those and
   adds, while pools and views follow their input's type; every other operator runs fp32). */
typedef struct luthier__precision_row {
    const char *name;
    unsigned families; /* bit (1 << luthier_kernel_family) per family */
    int (*applies)(luthier_op op);
} luthier__precision_row;

LUTHIER_PRIVATE int luthier__prec_any_op(luthier_op op) { return (void)op, 1; }
LUTHIER_PRIVATE int luthier__prec_gemm_op(luthier_op op) { return op == LUTHIER_OP_CONV2D || op == LUTHIER_OP_DENSE; }
LUTHIER_PRIVATE int luthier__prec_int8_op(luthier_op op) { return luthier__prec_gemm_op(op) || op == LUTHIER_OP_ADD; }

static const luthier__precision_row luthier__precisions[LUTHIER_PRECISION_COUNT] = {
    /* DEFAULT */ {"default", 0, NULL},
    /* FP32 */ {"fp32", 1u << LUTHIER_KERNELS_F32, luthier__prec_any_op},
    /* FP16 */ {"fp16", 1u << LUTHIER_KERNELS_F16W | 1u << LUTHIER_KERNELS_F16, luthier__prec_gemm_op},
    /* INT8 */ {"int8", 1u << LUTHIER_KERNELS_INT8, luthier__prec_int8_op},
    /* AUTO */ {"auto", 0, NULL}};

LUTHIER_API const char *luthier_precision_name(luthier_precision p) {
    return (unsigned)p < (unsigned)LUTHIER_PRECISION_COUNT ? luthier__precisions[p].name : NULL;
}

LUTHIER_API luthier_status luthier_precision_parse(const char *name, luthier_precision *out) {
    int i;
    for (i = 0; name && out && i < (int)LUTHIER_PRECISION_COUNT; i++)
        if (!strcmp(name, luthier__precisions[i].name)) {
            *out = (luthier_precision)i;
            return LUTHIER_STATUS_OK;
        }
    return LUTHIER_STATUS_INVALID_ARGUMENT;
}

/* The precision a node with kernels of family fam runs in (FP32 for an unknown family). */
LUTHIER_PRIVATE luthier_precision luthier__precision_of_family(luthier_kernel_family fam) {
    int i;
    for (i = 0; i < (int)LUTHIER_PRECISION_COUNT; i++)
        if (luthier__precisions[i].families >> fam & 1u) return (luthier_precision)i;
    return LUTHIER_PRECISION_FP32;
}

/* A plan's precision as it runs: DEFAULT is INT8 with a calibration, else FP32. */
LUTHIER_PRIVATE luthier_precision luthier__plan_precision(luthier_precision p, const luthier_calibration *cal) {
    return p != LUTHIER_PRECISION_DEFAULT ? p : cal ? LUTHIER_PRECISION_INT8 : LUTHIER_PRECISION_FP32;
}

/* The precision node ni runs in under pd (whose precision is resolved): its configuration's,
   else the plan's; AUTO (no record for the node) is FP32. */
LUTHIER_PRIVATE luthier_precision luthier__node_precision(const luthier_plan_desc *pd, int ni) {
    luthier_precision p = pd->num_configs ? pd->configs[ni].precision : LUTHIER_PRECISION_DEFAULT;
    if (p == LUTHIER_PRECISION_DEFAULT) p = pd->precision;
    return p == LUTHIER_PRECISION_AUTO ? LUTHIER_PRECISION_FP32 : p;
}

/* Whether every kernel a configuration's kernel knob names is of a family of precision p. */
LUTHIER_PRIVATE int luthier__cfg_kernels_in(const char *knob, luthier_precision p) {
    char buf[64], *name, *next;
    snprintf(buf, sizeof buf, "%s", knob);
    for (name = buf; name && *name; name = next) {
        const luthier__kernel_entry *e;
        if ((next = strchr(name, ','))) *next++ = 0;
        if ((e = luthier__kernel_named(name)) && !(luthier__precisions[p].families >> e->family & 1u)) return 0;
    }
    return 1;
}

/* The F16 kernel fp16 plans compute n output columns with on ctx (AVX-512 FP16, Armv8.2
   FP16; never the scalar emulation): the first one it runs, unless more than a quarter of its
   NR lanes would be padding for n; then the one it runs that wastes the least (earliest on
   ties), as luthier__kernel_for_n does for fp32. NULL when there is none. */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__f16_kernel(const luthier_context *ctx, size_t n) {
    int i;
    for (i = 0; i < LUTHIER__NUM_FKERNELS; i++) /* the first SIMD row the CPU runs */
        if (luthier__kernel_runs(&luthier__fkernels[i], ctx->cpu_features) && strcmp(luthier__fkernels[i].isa, "scalar"))
            return luthier__least_padding(luthier__fkernels, LUTHIER__NUM_FKERNELS, &luthier__fkernels[i], ctx->cpu_features,
                                          n, LUTHIER__SAME_ISA);
    return NULL;
}

/* The F16 kernel an fp16 plan gives a convolution without a configuration, for any layer but
   depthwise (whose per-channel loops are memory-bound); NULL: fp32. */
LUTHIER_PRIVATE const char *luthier__conv_f16_kernel(const luthier_context *ctx, const luthier_conv2d_desc *cd,
                                                     luthier_precision prec) {
    const luthier__kernel_entry *e = luthier__f16_kernel(ctx, (size_t)(cd->out_channels / (cd->groups ? cd->groups : 1)));
    return prec == LUTHIER_PRECISION_FP16 && e && !luthier__conv_is_depthwise(cd) ? e->name : NULL;
}

/* The F16 kernel of a convolution on fp16 activations (h16 = 2: the scalar emulation where the
   CPU has no fp16 arithmetic); NULL: none (depthwise: luthier__conv_h16_dw_fits). */
LUTHIER_PRIVATE const char *luthier__h16_conv_kernel(const luthier_context *ctx, int h16, const luthier_conv2d_desc *cd) {
    const char *k = luthier__conv_f16_kernel(ctx, cd, LUTHIER_PRECISION_FP16);
    int i;
    for (i = 0; !k && h16 == 2 && !luthier__conv_is_depthwise(cd) && i < LUTHIER__NUM_FKERNELS; i++)
        if (!strcmp(luthier__fkernels[i].isa, "scalar")) k = luthier__fkernels[i].name;
    return k;
}

/* A configuration's kernel knob: "" (the default), "K" (the layer's kernel, which each cluster
   runs or its variant for the cluster's cores: >>cluster-kernels) or "K0,K1,..." (cluster c runs
   Kc exactly; K0 is the layer's kernel). Copies it into buf and splits it: names[c] = Kc (NULL
   past the list, all NULL for "K"); returns K0, NULL for "". */
LUTHIER_PRIVATE const char *luthier__cfg_kernels(const char *knob, char *buf, size_t size, const char **names) {
    char *p = buf;
    int n;
    memset(names, 0, sizeof *names * LUTHIER_MAX_CLUSTERS);
    snprintf(buf, size, "%s", knob);
    if (!strchr(buf, ',')) return buf[0] ? buf : NULL;
    for (n = 0; p && n < LUTHIER_MAX_CLUSTERS; n++) {
        names[n] = p;
        if ((p = strchr(p, ','))) *p++ = 0;
    }
    return names[0];
}

/* What the convolution layer of step st (st->conv, or st->qconv for int8) reports: its kernels and
   algorithm (AUTO for dense nodes), its weight and workspace bytes. */
LUTHIER_PRIVATE void luthier__plan_conv_info(luthier_plan *p, luthier__pstep *st) {
    luthier_conv2d_info info;
    memset(&info, 0, sizeof info);
    if (st->qconv) luthier_qconv2d_get_info(st->qconv, &info);
    else luthier_conv2d_get_info(st->conv, &info);
    st->algorithm = st->d.op == LUTHIER_OP_DENSE ? LUTHIER_CONV_AUTO : info.algorithm;
    st->kernel = info.kernel;
    memcpy(st->cluster_kernels, info.cluster_kernels, sizeof st->cluster_kernels);
    p->weights_bytes += info.weight_bytes;
    if (p->workspace_bytes < info.workspace_bytes) p->workspace_bytes = info.workspace_bytes;
}

/* Creates the conv layer of step st (node gn) with the config, or the default on fallback. */
LUTHIER_PRIVATE luthier_status luthier__plan_conv(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                  luthier__pstep *st, const luthier__gnode *gn,
                                                  const luthier__fuse *f, int fallback, luthier_precision prec, int h16) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    const float *wd = f->w ? f->w : (const float *)w->data;
    const float *bd = f->b ? f->b : (gn->d.num_inputs > 2 && gn->inputs[2] >= 0 ? (const float *)g->tensors[gn->inputs[2]].data : NULL);
    luthier_conv2d_desc cd;
    luthier_status s;
    char knob[sizeof st->cfg.kernel];
    const char *names[LUTHIER_MAX_CLUSTERS];
    int attempt;
    for (attempt = 0; attempt < 2; attempt++) {
        luthier__node_conv_desc(&gn->d, x, w, &cd);
        luthier__conv_epilogue(&cd, st->act, st->cmin, st->cmax, st->residual >= 0);
        cd.kernel = luthier__conv_f16_kernel(ctx, &cd, prec); /* (the default: fp32, or F16 in fp16 plans) */
        if (h16 && !luthier__conv_is_depthwise(&cd)) /* fp16 activations: F16 (luthier__h16_conv) */
            cd.kernel = luthier__h16_conv_kernel(ctx, h16, &cd);
        if (attempt == 0) {
            if (st->cfg.kernel[0] || st->cfg.algorithm != LUTHIER_CONV_AUTO) { /* a configured (fp32) choice */
                cd.algorithm = st->cfg.algorithm;
                cd.kernel = luthier__cfg_kernels(st->cfg.kernel, knob, sizeof knob, names);
                cd.cluster_kernels = names[0] ? names : NULL;
            }
            cd.schedule = st->cfg.schedule;
            cd.ratios = st->cfg.num_ratios ? st->cfg.ratios : NULL;
            cd.num_ratios = st->cfg.num_ratios;
        }
        s = luthier_conv2d_create(ctx, &cd, wd, bd, &st->conv);
        if (s == LUTHIER_STATUS_OK) break;
        if (s == LUTHIER_STATUS_OUT_OF_MEMORY || !fallback || attempt == 1)
            return luthier__fail_in(ctx, s, "plan: node '%s' (conv2d)", gn->name);
        luthier__plan_fallback(ctx, p, gn->name);
        memset(&st->cfg, 0, sizeof st->cfg);
    }
    if (h16 && (s = luthier__conv_use_h16(ctx, st->conv)) != LUTHIER_STATUS_OK)
        return luthier__fail_in(ctx, s, "plan: node '%s' (conv2d)", gn->name);
    luthier__plan_conv_info(p, st);
    return LUTHIER_STATUS_OK;
}

/* The F16W kernel for n columns on ctx: the twin (same ISA and tile) of the F32 kernel the
   context would take, else the same ISA's, else any SIMD one's, else the scalar one with the
   least padding for n. */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__f16w_kernel(luthier_context *ctx, size_t n) {
    const luthier__kernel_entry *uk = &luthier__ukernels[luthier__kernel_for_n(ctx, n)], *best = NULL;
    int i, pass;
    for (i = 0; i < LUTHIER__NUM_HKERNELS; i++) {
        const luthier__kernel_entry *e = &luthier__hkernels[i];
        if (luthier__kernel_runs(e, ctx->cpu_features) && !strcmp(e->isa, uk->isa) && e->mr == uk->mr && e->nr == uk->nr) return e;
    }
    for (pass = 0; pass < 3 && !best; pass++)
        for (i = 0; i < LUTHIER__NUM_HKERNELS; i++) {
            const luthier__kernel_entry *e = &luthier__hkernels[i];
            if (!luthier__kernel_runs(e, ctx->cpu_features) || (pass == 0 && strcmp(e->isa, uk->isa)) ||
                (pass == 1 && !strcmp(e->isa, "scalar")))
                continue;
            if (!best || luthier__nr_waste(e->nr, n) < luthier__nr_waste(best->nr, n)) best = e;
        }
    return best ? best : uk;
}

/* Rows of a dense layer from which an fp16 plan computes it in fp16 arithmetic where the CPU
   has it (an F16 kernel): one full tile of the 8x24 kernel. Below, the layer is bound by its
   weight bytes and F16W (fp32 arithmetic) is as fast and more accurate. */
#define LUTHIER__F16_MIN_ROWS 8

/* The kernel of a dense node (m x n) without a configuration: the context's for n; under
   LUTHIER_PRECISION_FP16 an F16 kernel (not the scalar emulation) when m >=
   LUTHIER__F16_MIN_ROWS and the CPU runs one, else the F16W kernel. */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__dense_default_kernel(luthier_context *ctx, size_t m, size_t n,
                                                                         luthier_precision prec) {
    if (prec != LUTHIER_PRECISION_FP16) return &luthier__ukernels[luthier__kernel_for_n(ctx, n)];
    if (m >= LUTHIER__F16_MIN_ROWS && luthier__f16_kernel(ctx, n)) return luthier__f16_kernel(ctx, n);
    return luthier__f16w_kernel(ctx, n);
}

/* Dense node gn as a 1x1 convolution over its rows (NHWC: batch = rows, one pixel each, in_channels
   = K, out_channels = N), without its activation. */
LUTHIER_PRIVATE void luthier__dense_conv_desc(const luthier_graph *g, const luthier__gnode *gn, luthier_conv2d_desc *cd) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    const int tb = gn->d.attr.dense.trans_b != 0;
    int ok;
    uint64_t n = luthier__numel(x->rank, x->shape, &ok);
    memset(cd, 0, sizeof *cd);
    cd->out_channels = tb ? w->shape[1] : w->shape[0];
    cd->in_channels = tb ? w->shape[0] : w->shape[1];
    cd->batch = cd->in_channels > 0 ? (int64_t)(n / (uint64_t)cd->in_channels) : 0;
    cd->in_h = cd->in_w = cd->kernel_h = cd->kernel_w = 1;
    cd->algorithm = LUTHIER_CONV_1X1;
    cd->layout = LUTHIER_LAYOUT_NHWC;
}

/* Dense step st on fp16 activations (luthier__h16_dense): a 1x1 convolution layer on an F16
   kernel (h16: luthier__h16_conv_kernel) that reads and writes fp16, its weights in OIHW order
   (trans_b: transposed from [K, N]), bias, residual and activation in its fp32 epilogue. */
LUTHIER_PRIVATE luthier_status luthier__plan_dense_h16(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                       luthier__pstep *st, const luthier__gnode *gn, int h16) {
    const float *wd = (const float *)g->tensors[gn->inputs[1]].data;
    const float *bd = gn->d.num_inputs > 2 && gn->inputs[2] >= 0 ? (const float *)g->tensors[gn->inputs[2]].data : NULL;
    float *wt = NULL;
    luthier_conv2d_desc cd;
    luthier_status s;
    luthier__dense_conv_desc(g, gn, &cd);
    luthier__conv_epilogue(&cd, st->act, st->cmin, st->cmax, st->residual >= 0);
    cd.kernel = luthier__h16_conv_kernel(ctx, h16, &cd);
    if (gn->d.attr.dense.trans_b) { /* [K, N] -> [N, K] (the sizes are the weights', checked) */
        const size_t n = (size_t)cd.out_channels, k = (size_t)cd.in_channels;
        size_t i, j;
        if (!(wt = (float *)luthier__alloc(sizeof(float) * n * k + 1)))
            return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
        for (i = 0; i < k; i++)
            for (j = 0; j < n; j++) wt[j * k + i] = wd[i * n + j];
        wd = wt;
    }
    s = luthier_conv2d_create(ctx, &cd, wd, bd, &st->conv);
    luthier__free(wt);
    if (s == LUTHIER_STATUS_OK) s = luthier__conv_use_h16(ctx, st->conv);
    if (s != LUTHIER_STATUS_OK) return luthier__fail_in(ctx, s, "plan: node '%s' (dense)", gn->name);
    luthier__plan_conv_info(p, st);
    st->bytes -= (double)cd.out_channels * (double)cd.in_channels * (double)(sizeof(float) - sizeof(uint16_t)); /* fp16 weights */
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__plan_dense(luthier_context *ctx, const luthier_graph *g, luthier_plan *p,
                                                   luthier__pstep *st, const luthier__gnode *gn, int fallback,
                                                   luthier_precision prec) {
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]], *w = &g->tensors[gn->inputs[1]];
    const luthier__kernel_entry *uk = NULL;
    const luthier__kernel_entry *ck[LUTHIER_MAX_CLUSTERS];
    luthier_sgemm_desc sd;
    luthier_status s;
    char knob[sizeof st->cfg.kernel];
    const char *names[LUTHIER_MAX_CLUSTERS];
    int ok, attempt, cl;
    memset(&sd, 0, sizeof sd);
    sd.n = gn->d.attr.dense.trans_b ? w->shape[1] : w->shape[0];
    sd.k = gn->d.attr.dense.trans_b ? w->shape[0] : w->shape[1];
    sd.m = (int64_t)(luthier__numel(x->rank, x->shape, &ok) / (uint64_t)sd.k);
    sd.trans_b = !gn->d.attr.dense.trans_b;
    for (attempt = 0; attempt < 2; attempt++) {
        s = LUTHIER_STATUS_OK;
        memset(names, 0, sizeof names);
        if (attempt == 0 && st->cfg.kernel[0])
            s = luthier__resolve_sgemm_kernel(ctx, luthier__cfg_kernels(st->cfg.kernel, knob, sizeof knob, names), &uk);
        else uk = luthier__dense_default_kernel(ctx, (size_t)sd.m, (size_t)sd.n, prec);
        if (s == LUTHIER_STATUS_OK && attempt == 0 && st->cfg.num_ratios && st->cfg.num_ratios != p->num_clusters)
            s = luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%d ratios given for %d clusters",
                              st->cfg.num_ratios, p->num_clusters);
        if (s == LUTHIER_STATUS_OK) s = luthier__cluster_kernels(ctx, LUTHIER__SGEMM_FAMILIES, uk, names[0] ? names : NULL, ck);
        if (s == LUTHIER_STATUS_OK) {
            sd.kernel = uk->name;
            s = luthier_sgemm_pack_b(ctx, &sd, (const float *)w->data, &st->pb);
        }
        if (s == LUTHIER_STATUS_OK) break;
        if (s == LUTHIER_STATUS_OUT_OF_MEMORY || !fallback || attempt == 1)
            return luthier__fail_in(ctx, s, "plan: node '%s' (%s)", gn->name, luthier_op_name(gn->d.op));
        luthier__plan_fallback(ctx, p, gn->name);
        memset(&st->cfg, 0, sizeof st->cfg);
    }
    st->kernel = uk->name;
    for (cl = 0; cl < ctx->pool->num_clusters; cl++) st->cluster_kernels[cl] = ck[cl]->name;
    st->explicit_kernels = names[0] != NULL;
    st->bytes -= (double)sd.n * (double)sd.k * (double)(sizeof(float) - (size_t)uk->b_bytes); /* fp16 weights */
    p->weights_bytes += luthier_packed_b_bytes(st->pb);
    if (gn->d.num_inputs > 2 && gn->inputs[2] >= 0 && !(st->bias = (const float *)luthier__own_const(p, gn->inputs[2])))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    {
        size_t ws = luthier__sgemm_ws(ctx, uk, (size_t)sd.m, (size_t)sd.n, (size_t)sd.k);
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
    luthier_conv2d_desc geo; /* the fp32 layer's geometry (dense: luthier__dense_conv_desc) */
    luthier_qconv2d_desc cd;
    luthier_status s = LUTHIER_STATUS_OK;
    size_t cout, per, c, i;
    int8_t *wq = NULL;
    float *sw = NULL;
    int32_t *bias = NULL, *mult = NULL, *shift = NULL, qmin = 0, qmax = 255;
    int attempt;
    if (dense) luthier__dense_conv_desc(g, gn, &geo);
    else luthier__node_conv_desc(&gn->d, x, w, &geo);
    memset(&cd, 0, sizeof cd);
    cd.batch = geo.batch; cd.in_channels = geo.in_channels; cd.in_h = geo.in_h; cd.in_w = geo.in_w;
    cd.out_channels = geo.out_channels; cd.kernel_h = geo.kernel_h; cd.kernel_w = geo.kernel_w;
    cd.stride_h = geo.stride_h; cd.stride_w = geo.stride_w; cd.dilation_h = geo.dilation_h; cd.dilation_w = geo.dilation_w;
    cd.pad_top = geo.pad_top; cd.pad_left = geo.pad_left; cd.pad_bottom = geo.pad_bottom; cd.pad_right = geo.pad_right;
    cd.groups = geo.groups;
    cd.layout = LUTHIER_LAYOUT_NHWC;
    cd.input_zero_point = za;
    cout = (size_t)geo.out_channels;
    per = (size_t)(geo.in_channels / (geo.groups > 1 ? geo.groups : 1) * geo.kernel_h * geo.kernel_w); /* weights per channel */
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
#define LUTHIER__QW(c, i) (dense && gn->d.attr.dense.trans_b ? wd[(i) * cout + (c)] : wd[(c) * per + (i)])
        float m = 0.0f;
        for (i = 0; i < per; i++) {
            float a = fabsf(LUTHIER__QW(c, i));
            if (!(a <= FLT_MAX)) { /* NaN or infinity: no int8 value stands for it */
                s = luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                                  "plan: node '%s': its weights (output channel %zu) hold NaN or infinity, which int8 cannot "
                                  "represent: plan this node in fp32",
                                  gn->name, (size_t)c);
                goto done;
            }
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
            if (b != b) b = 0.0; /* a NaN bias (with a finite one, the clamp below keeps the conversion defined) */
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
        char knob[sizeof st->cfg.kernel];
        const char *names[LUTHIER_MAX_CLUSTERS], *k0;
        int ki;
        cd.algorithm = LUTHIER_CONV_AUTO;
        cd.kernel = NULL;
        cd.cluster_kernels = NULL;
        if (attempt == 0) {
            if (luthier__conv_algo_in(st->cfg.algorithm, LUTHIER_KERNELS_INT8)) cd.algorithm = st->cfg.algorithm;
            if ((k0 = luthier__cfg_kernels(st->cfg.kernel, knob, sizeof knob, names)) && luthier_qkernel_find(k0, &ki) == LUTHIER_STATUS_OK) {
                cd.kernel = k0;
                cd.cluster_kernels = names[0] ? names : NULL;
            }
        }
        cd.schedule = st->cfg.schedule;
        cd.ratios = st->cfg.num_ratios ? st->cfg.ratios : NULL;
        cd.num_ratios = st->cfg.num_ratios;
        s = luthier_qconv2d_create(ctx, &cd, wq, *out_u8 ? bias : NULL, &st->qconv);
        if (s == LUTHIER_STATUS_OK || s == LUTHIER_STATUS_OUT_OF_MEMORY) break;
    }
    if (s != LUTHIER_STATUS_OK) {
        s = luthier__fail_in(ctx, s, "plan: node '%s' (int8 %s)", gn->name, luthier_op_name(gn->d.op));
        goto done;
    }
    luthier__plan_conv_info(p, st);
    st->q = 1;
done:
    luthier__free(wq);
    luthier__free(sw);
    luthier__free(bias);
    luthier__free(mult);
    luthier__free(shift);
    return s;
}

/* Whether node ni runs int8 in a plan with calibration cal (see >>api-int8-plan) when its
   precision is prec; ins are its inputs' values so far. */
LUTHIER_PRIVATE int luthier__q_node(const luthier_graph *g, const luthier_plan *p, const luthier_calibration *cal,
                                    const luthier__gnode *gn, const luthier__fuse *f, const int *ins, luthier_precision prec) {
    const luthier__pval *x;
    if (!cal || (luthier__precisions[LUTHIER_PRECISION_INT8].applies(gn->d.op) && prec != LUTHIER_PRECISION_INT8)) return 0;
    x = &p->vals[ins[0]];
    switch (gn->d.op) {
    case LUTHIER_OP_CONV2D:
    case LUTHIER_OP_DENSE:
        return f->residual < 0 && !luthier__act_is_post(f->act) &&
               (x->dtype == LUTHIER__DTYPE_U8 || luthier__cal_has(cal, x->tensor));
    case LUTHIER_OP_ADD: {
        const luthier__gtensor *a = &g->tensors[gn->inputs[0]], *b = &g->tensors[gn->inputs[1]], *o = &g->tensors[f->out];
        return luthier__cal_has(cal, gn->inputs[0]) && luthier__cal_has(cal, gn->inputs[1]) && luthier__cal_has(cal, f->out) &&
               a->rank == o->rank && b->rank == o->rank && memcmp(a->shape, o->shape, sizeof(int64_t) * (size_t)o->rank) == 0 &&
               memcmp(b->shape, o->shape, sizeof(int64_t) * (size_t)o->rank) == 0;
    }
    case LUTHIER_OP_MAXPOOL:
        return luthier__dtwin(p, ins[0], LUTHIER__DTYPE_U8) >= 0;
    case LUTHIER_OP_AVGPOOL: case LUTHIER_OP_GLOBAL_AVGPOOL: case LUTHIER_OP_ADAPTIVE_AVGPOOL: {
        /* a mean keeps its input's parameters; other output parameters (a finer scale) would
           mean rounding twice: then it runs in fp32 */
        const int qv = luthier__dtwin(p, ins[0], LUTHIER__DTYPE_U8);
        const luthier__pval *q = qv >= 0 ? &p->vals[qv] : NULL;
        return q && (!luthier__cal_has(cal, f->out) || (cal->scale[f->out] == q->qscale && cal->zero[f->out] == q->qzero));
    }
    case LUTHIER_OP_IDENTITY: case LUTHIER_OP_FLATTEN: case LUTHIER_OP_RESHAPE:
        /* a view keeps uint8 when no transpose is needed to see it in plain order */
        return x->dtype == LUTHIER__DTYPE_U8 && (x->rank != 4 || x->layout == LUTHIER__PLAIN || luthier__coincide(4, x->shape));
    default:
        return 0;
    }
}

/* Makes value v of activation datatype t (uint8 with (scale, zero); fp16). */
LUTHIER_PRIVATE void luthier__set_dtype(luthier__pval *v, luthier_dtype t, float scale, int32_t zero) {
    int ok;
    v->dtype = t;
    if (t == LUTHIER__DTYPE_U8) v->qscale = scale, v->qzero = zero;
    ok = luthier__tensor_bytes(v->rank, v->shape, t, &v->bytes);
    (void)ok; /* no larger than its fp32 size, which was checked */
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
        if (u8) luthier__set_dtype(o, LUTHIER__DTYPE_U8, so, zo);
        return LUTHIER_STATUS_OK;
    case LUTHIER_OP_ADD:
        luthier_quantize_activation(st->act, st->cmin, st->cmax, so, zo, &st->qmin, &st->qmax);
        luthier__set_dtype(o, LUTHIER__DTYPE_U8, so, zo);
        return LUTHIER_STATUS_OK;
    default: /* pools: the input's parameters */
        luthier__set_dtype(o, LUTHIER__DTYPE_U8, x->qscale, x->qzero);
        return LUTHIER_STATUS_OK;
    }
}

/* >>impl-records ==============================================================================
   The records module: what the tuner writes and luthier_plan_create reads, in one place.
   A LAYER is a tunable node (a convolution, dense or conv_transpose node as fused in the plan)
   identified by its SIGNATURE, a text of its shapes, attributes, fused epilogue and (int8)
   kind; nodes with one signature share one record. A records file is text: the header "luthier-records <version>",
   '#' comments, then one tab-separated line per layer: machine fingerprint, signature,
   algorithm, kernel, schedule, ratios, ms, default ms. Lines of other machines are ignored and
   malformed ones skipped, both counted in a note (luthier_context_error after a success).
   Predicted records (luthier_tune_desc.offline) have a fingerprint of the machine's core types
   (luthier__fingerprint_predicted) and their ms are the model's; a machine takes the lines of
   either fingerprint, a later line for a layer replacing an earlier one. */

#define LUTHIER__RECORDS_VERSION 1

typedef struct luthier__layer {
    luthier_op op;           /* CONV2D, DENSE or CONV_TRANSPOSE */
    char sig[256];
    luthier_conv2d_desc cd;  /* CONV2D: the desc the plan creates (NHWC, epilogue set);
                                CONV_TRANSPOSE: its shapes and attributes (luthier__convt_layer) */
    int64_t m, n, k;         /* DENSE: C = act(A * W^T + b (+ C)); CONV_TRANSPOSE: its GEMM */
    int q;                   /* int8 layer (input uint8; output uint8 when out_u8, else fp32) */
    luthier_kernel_family fam; /* of its kernel knob: INT8 when q, F16W for dense layers of fp16
                                  plans, else F32 */
    int out_u8;
    int trans_w;
    luthier_activation act;
    float cmin, cmax;
    int residual;
    double flops, bytes;
} luthier__layer;

/* The signature of conv_transpose node gn (input x, weights w [Cin, Cout_g, kh, kw]), its
   attributes in the fields of a conv2d descriptor (cd: output channels, kernel, stride, pads,
   dilation, groups) and its GEMM (algorithm IM2COL): one per group of m input pixels, n = taps
   x Cout_g columns, k = Cin_g, m counting every group's pixels. */
LUTHIER_PRIVATE void luthier__convt_layer(const luthier__gnode *gn, const luthier__gtensor *x, const luthier__gtensor *w,
                                          luthier__layer *t) {
    const luthier_conv_transpose_attrs *a = &gn->d.attr.conv_transpose;
    luthier_conv2d_desc *cd = &t->cd;
    cd->batch = x->shape[0], cd->in_channels = x->shape[1], cd->in_h = x->shape[2], cd->in_w = x->shape[3];
    cd->out_channels = w->shape[1] * a->groups, cd->kernel_h = w->shape[2], cd->kernel_w = w->shape[3];
    cd->stride_h = a->stride[0], cd->stride_w = a->stride[1], cd->dilation_h = a->dilation[0], cd->dilation_w = a->dilation[1];
    cd->pad_top = a->pads[0], cd->pad_left = a->pads[1], cd->pad_bottom = a->pads[2], cd->pad_right = a->pads[3];
    cd->groups = a->groups;
    t->m = x->shape[0] * x->shape[2] * x->shape[3] * a->groups;
    t->n = w->shape[1] * w->shape[2] * w->shape[3];
    t->k = x->shape[1] / a->groups;
    snprintf(t->sig, sizeof t->sig,
             "conv_transpose n%lld c%lld h%lld w%lld o%lld k%lldx%lld s%lldx%lld p%lld,%lld,%lld,%lld d%lldx%lld op%lld,%lld g%lld act=%s res=%d",
             (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[2], (long long)x->shape[3],
             (long long)(w->shape[1] * a->groups), (long long)w->shape[2], (long long)w->shape[3], (long long)a->stride[0],
             (long long)a->stride[1], (long long)a->pads[0], (long long)a->pads[1], (long long)a->pads[2], (long long)a->pads[3],
             (long long)a->dilation[0], (long long)a->dilation[1], (long long)a->output_padding[0],
             (long long)a->output_padding[1], (long long)a->groups, luthier__act_name(t->act), t->residual);
}

/* Whether layer l is a conv_transpose with one input and one output channel per group (which
   the DEPTHWISE algorithm runs). */
LUTHIER_PRIVATE int luthier__layer_convt_dw(const luthier__layer *l) {
    return l->op == LUTHIER_OP_CONV_TRANSPOSE && l->cd.groups == l->cd.in_channels && l->cd.out_channels == l->cd.groups;
}

/* The layer of node i given the fusion decisions (with cal: of a plan with that calibration)
   when the node's precision is prec (resolved: FP32, FP16 or INT8) on ctx (NULL: a CPU without
   fp16 arithmetic); 0 when the node is not a tunable layer. Its family: INT8 for int8 layers
   (INT8 nodes on a calibrated input); for FP16 nodes F16W for dense layers, and
   F16 for the convolutions that the plan computes in fp16 (luthier__conv_f16_kernel); else
   F32. Layers of another family than F32 have their own signatures ("int8 ...", "fp16 ..."),
   so that records made for one precision configure only plans of that precision. */
LUTHIER_PRIVATE int luthier__layer_of(const luthier_context *ctx, const luthier_graph *g, const luthier__fuse *f, int i,
                                      const luthier_calibration *cal, luthier_precision prec, luthier__layer *t) {
    const luthier__gnode *gn = &g->nodes[i];
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]];
    memset(t, 0, sizeof *t);
    if (!f[i].alive ||
        (gn->d.op != LUTHIER_OP_CONV2D && gn->d.op != LUTHIER_OP_DENSE && gn->d.op != LUTHIER_OP_CONV_TRANSPOSE))
        return 0;
    /* as luthier__q_node and luthier__plan_qstep decide it */
    t->q = prec == LUTHIER_PRECISION_INT8 && gn->d.op != LUTHIER_OP_CONV_TRANSPOSE && f[i].residual < 0 &&
           !luthier__act_is_post(f[i].act) && luthier__cal_has(cal, gn->inputs[0]);
    t->out_u8 = t->q && luthier__cal_has(cal, f[i].out) && !g->tensors[f[i].out].is_output;
    t->op = gn->d.op;
    t->act = f[i].act;
    t->cmin = f[i].cmin;
    t->cmax = f[i].cmax;
    t->residual = f[i].residual >= 0;
    t->flops = gn->flops;
    t->bytes = gn->bytes;
    if (gn->d.op == LUTHIER_OP_CONV2D) {
        const luthier__gtensor *w = &g->tensors[gn->inputs[1]];
        luthier_conv2d_desc *cd = &t->cd;
        luthier__node_conv_desc(&gn->d, x, w, cd);
        luthier__conv_epilogue(cd, t->act, t->cmin, t->cmax, t->residual);
        snprintf(t->sig, sizeof t->sig,
                 "conv2d n%lld c%lld h%lld w%lld o%lld k%lldx%lld s%lldx%lld p%lld,%lld,%lld,%lld d%lldx%lld g%lld act=%s res=%d",
                 (long long)cd->batch, (long long)cd->in_channels, (long long)cd->in_h, (long long)cd->in_w,
                 (long long)cd->out_channels, (long long)cd->kernel_h, (long long)cd->kernel_w, (long long)cd->stride_h,
                 (long long)cd->stride_w, (long long)cd->pad_top, (long long)cd->pad_left, (long long)cd->pad_bottom,
                 (long long)cd->pad_right, (long long)cd->dilation_h, (long long)cd->dilation_w, (long long)cd->groups,
                 luthier__act_name(t->act), t->residual);
    } else if (gn->d.op == LUTHIER_OP_CONV_TRANSPOSE) {
        luthier__convt_layer(gn, x, &g->tensors[gn->inputs[1]], t);
    } else {
        const luthier__gtensor *w = &g->tensors[gn->inputs[1]];
        int ok;
        t->trans_w = gn->d.attr.dense.trans_b;
        t->n = t->trans_w ? w->shape[1] : w->shape[0];
        t->k = t->trans_w ? w->shape[0] : w->shape[1];
        t->m = (int64_t)(luthier__numel(x->rank, x->shape, &ok) / (uint64_t)t->k);
        snprintf(t->sig, sizeof t->sig, "dense m%lld n%lld k%lld wt%d act=%s res=%d", (long long)t->m, (long long)t->n,
                 (long long)t->k, t->trans_w, luthier__act_name(t->act), t->residual);
    }
    if (luthier__act_params(t->act)) { /* (CLAMP: " clamp=min,max", as before the others) */
        size_t n = strlen(t->sig);
        snprintf(t->sig + n, sizeof t->sig - n, " %s=%g", luthier__act_name(t->act), (double)t->cmin);
        n = strlen(t->sig);
        if (luthier__act_params(t->act) > 1) snprintf(t->sig + n, sizeof t->sig - n, ",%g", (double)t->cmax);
    }
    t->fam = t->q ? LUTHIER_KERNELS_INT8
             : gn->d.op == LUTHIER_OP_DENSE && prec == LUTHIER_PRECISION_FP16 ? LUTHIER_KERNELS_F16W
             : gn->d.op == LUTHIER_OP_CONV2D && ctx && luthier__conv_f16_kernel(ctx, &t->cd, prec) ? LUTHIER_KERNELS_F16
                                                                                                  : LUTHIER_KERNELS_F32;
    if (t->fam != LUTHIER_KERNELS_F32) {
        char tmp[sizeof t->sig + 16];
        if (t->q) snprintf(tmp, sizeof tmp, "int8 %s out=%s", t->sig, t->out_u8 ? "u8" : "f32");
        else snprintf(tmp, sizeof tmp, "fp16 %s", t->sig);
        tmp[sizeof t->sig - 1] = 0;
        memcpy(t->sig, tmp, sizeof t->sig);
        if (t->q) t->bytes *= 0.25; /* one byte per element */
        else t->bytes -= 2.0 * (double)t->n * (double)t->k; /* fp16 weights */
    }
    return 1;
}

/* Fusion decisions of g without folding weights (-1 prod, 0 cons), of its int8 plan with cal;
   NULL on OOM. */
LUTHIER_PRIVATE luthier__fuse *luthier__fuse_only(const luthier_graph *g, const luthier_calibration *cal) {
    luthier__fuse *f = (luthier__fuse *)luthier__zalloc(sizeof *f * (size_t)(g->num_nodes + 1));
    int *prod = (int *)luthier__alloc(sizeof(int) * (size_t)(g->num_tensors + 1));
    int *cons = (int *)luthier__alloc(sizeof(int) * (size_t)(g->num_tensors + 1));
    int oom = 0;
    if (f && prod && cons) luthier__fuse_graph(g, f, prod, cons, 0, 0, cal, 0, &oom);
    else luthier__free(f), f = NULL;
    luthier__free(prod);
    luthier__free(cons);
    return f;
}

LUTHIER_API luthier_status luthier_tune_signature(const luthier_graph *g, int node, char *buf, size_t size) {
    luthier__fuse *f;
    luthier__layer t;
    int ok;
    if (!g || !buf || !size || node < 0 || node >= g->num_nodes) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!(f = luthier__fuse_only(g, NULL))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    ok = luthier__layer_of(NULL, g, f, node, NULL, LUTHIER_PRECISION_FP32, &t);
    luthier__free(f);
    if (!ok) return LUTHIER_STATUS_NOT_FOUND;
    snprintf(buf, size, "%s", t.sig);
    return LUTHIER_STATUS_OK;
}

/* One line: per cluster name@capacity:cpus(core), then threads and CPU features. */
LUTHIER_API int luthier_tune_fingerprint(const luthier_context *ctx, char *buf, size_t size) {
    size_t used = 0;
    int c;
    if (!ctx || !buf || !size) return 0;
    buf[0] = 0;
    for (c = 0; c < ctx->topology.num_clusters && used < size; c++) {
        const luthier_cluster *cl = &ctx->topology.clusters[c];
        char cpus[256];
        luthier__format_cpulist(cl->cpus, cl->num_cpus, cpus, sizeof cpus);
        used += (size_t)snprintf(buf + used, size - used, "%s%s@%.2f:%s(%s)", c ? ";" : "", cl->name, cl->capacity, cpus,
                                 cl->core);
    }
    if (used < size)
        used += (size_t)snprintf(buf + used, size - used, "|threads=%d|features=%#x", ctx->pool->num_threads, ctx->cpu_features);
    for (c = 0; buf[c]; c++)
        if (buf[c] == '\t' || buf[c] == '\n' || buf[c] == '\r') buf[c] = ' ';
    return (int)strlen(buf);
}

/* The fingerprint of predicted records (luthier_tune_desc.offline): the machine as the cost
   model sees it, its clusters' core rows (>>impl-costmodel) and sizes,
   "predicted|Cortex-A72x2;Cortex-A53x4|threads=6|features=0x100", which a board's own detection
   reproduces (no CPU ids, labels, capacities or model names, which depend on how the machine
   was described). */
LUTHIER_PRIVATE int luthier__fingerprint_predicted(const luthier_context *ctx, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "predicted|");
    int c;
    for (c = 0; c < ctx->topology.num_clusters && used < size; c++)
        used += (size_t)snprintf(buf + used, size - used, "%s%sx%d", c ? ";" : "",
                                 luthier__cm_core_for(ctx->topology.clusters[c].core, ctx->cpu_features)->name,
                                 ctx->topology.clusters[c].num_cpus);
    if (used < size) snprintf(buf + used, size - used, "|threads=%d|features=%#x", ctx->pool->num_threads, ctx->cpu_features);
    for (c = 0; buf[c]; c++)
        if (buf[c] == '\t' || buf[c] == '\n' || buf[c] == '\r') buf[c] = ' ';
    return (int)strlen(buf);
}

LUTHIER_PRIVATE void luthier__ratios_str(const luthier_node_config *cfg, char *buf, size_t size) {
    size_t used = 0;
    int i;
    buf[0] = 0;
    if (!cfg->num_ratios) {
        snprintf(buf, size, "default");
        return;
    }
    for (i = 0; i < cfg->num_ratios && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%g", i ? "," : "", (double)cfg->ratios[i]);
}

/* Whether n cluster weights can split work: each finite and >= 0, some > 0. */
LUTHIER_PRIVATE int luthier__ratios_usable(const float *r, int n) {
    double sum = 0;
    int i;
    if (n < 1 || n > LUTHIER_MAX_CLUSTERS) return 0;
    for (i = 0; i < n; i++) {
        if (!(r[i] >= 0 && r[i] <= 1e6f)) return 0;
        sum += r[i];
    }
    return sum > 0;
}

/* Parses one record line into (fingerprint, signature, config); 0 when malformed. The ninth
   field, the layer's precision (a node's: fp32, fp16, int8), may be left out (records written
   before it): fp32. */
LUTHIER_PRIVATE int luthier__record_parse(char *line, char **fp, char **sig, luthier_node_config *cfg) {
    char *field[9];
    int nf = 0, a;
    char *p = line, *q;
    while (nf < 9) {
        field[nf++] = p;
        if (!(q = strchr(p, '\t'))) break;
        *q = 0;
        p = q + 1;
    }
    if (nf < 8 || strchr(field[nf - 1], '\t')) return 0;
    memset(cfg, 0, sizeof *cfg);
    *fp = field[0];
    *sig = field[1];
    cfg->precision = LUTHIER_PRECISION_FP32;
    if (nf == 9 && (luthier_precision_parse(field[8], &cfg->precision) != LUTHIER_STATUS_OK ||
                    !luthier__precisions[cfg->precision].families))
        return 0;
    for (a = 0; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++)
        if (strcmp(field[2], luthier_conv_algorithm_name((luthier_conv_algorithm)a)) == 0) break;
    if (a == (int)LUTHIER_CONV_ALGORITHM_COUNT && strcmp(field[2], "-") != 0) return 0;
    cfg->algorithm = a == (int)LUTHIER_CONV_ALGORITHM_COUNT ? LUTHIER_CONV_AUTO : (luthier_conv_algorithm)a;
    if (strcmp(field[3], "-") != 0) { /* a kernel, or one per cluster (K0,K1: luthier__cfg_kernels) */
        char knob[sizeof cfg->kernel];
        const char *names[LUTHIER_MAX_CLUSTERS];
        int k;
        if (strlen(field[3]) >= sizeof cfg->kernel || !luthier__cfg_kernels(field[3], knob, sizeof knob, names)) return 0;
        if (!names[0] && !luthier__kernel_named(knob)) return 0;
        for (k = 0; k < LUTHIER_MAX_CLUSTERS && names[k]; k++)
            if (!luthier__kernel_named(names[k])) return 0;
        snprintf(cfg->kernel, sizeof cfg->kernel, "%s", field[3]);
    }
    if (strcmp(field[4], "dynamic") == 0) cfg->schedule = LUTHIER_SCHEDULE_DYNAMIC;
    else if (strcmp(field[4], "ratio") != 0) return 0;
    if (strcmp(field[5], "default") != 0) {
        char *s = field[5], *end;
        while (*s) {
            double v = strtod(s, &end);
            if (end == s || !(v >= 0 && v <= 1e6) || cfg->num_ratios >= LUTHIER_MAX_CLUSTERS) return 0;
            cfg->ratios[cfg->num_ratios++] = (float)v;
            s = *end == ',' ? end + 1 : end;
            if (*end && *end != ',') return 0;
        }
        if (!luthier__ratios_usable(cfg->ratios, cfg->num_ratios)) return 0;
    }
    return 1;
}

/* The records writer: the header (with the machine's fingerprint), then one line per layer. */
LUTHIER_PRIVATE void luthier__records_write_header(FILE *fh, const char *fingerprint) {
    fprintf(fh, "luthier-records %d\n# machine: %s\n# fields: fingerprint, signature, algorithm, kernel, schedule, ratios, ms, default_ms, precision\n",
            LUTHIER__RECORDS_VERSION, fingerprint);
}

LUTHIER_PRIVATE void luthier__record_write(FILE *fh, const char *fingerprint, const luthier__layer *l, const luthier_node_config *cfg,
                                           double ms, double default_ms) {
    char ratios[96];
    luthier__ratios_str(cfg, ratios, sizeof ratios);
    fprintf(fh, "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%.4f\t%s\n", fingerprint, l->sig,
            l->op != LUTHIER_OP_DENSE && cfg->algorithm ? luthier_conv_algorithm_name(cfg->algorithm) : "-",
            cfg->kernel[0] ? cfg->kernel : "-", cfg->schedule == LUTHIER_SCHEDULE_DYNAMIC ? "dynamic" : "ratio", ratios, ms,
            default_ms, luthier_precision_name(luthier__precision_of_family(l->fam)));
}

/* Records and cost-model files: at most 64 MiB (a network's records are a few KiB). */
LUTHIER_PRIVATE luthier_status luthier__read_file(const char *path, char **text, size_t *len, char *err, size_t err_size) {
    return luthier_read_file(path, (size_t)64 << 20, (void **)text, len, err, err_size);
}

/* Applies the records in text (name: for messages) to configs; the lines are parsed in place
   from a private copy, so text may live in read-only memory (firmware: a const array). */
LUTHIER_PRIVATE luthier_status luthier__records_apply(luthier_context *ctx, const luthier_graph *g, const char *name,
                                                      const char *text, size_t len, const luthier_calibration *cal,
                                                      luthier_precision prec, luthier_node_config *configs, int *matched) {
    char fpr[640], fpp[640], *buf, *line, *next;
    luthier__fuse *f;
    luthier__layer t;
    int i, lineno = 0, bad = 0, foreign = 0, n = 0, header = 0;
    luthier_status s = LUTHIER_STATUS_OK;
    if (!(buf = (char *)luthier__alloc(len + 1))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "records: out of memory");
    memcpy(buf, text, len);
    buf[len] = 0;
    if (!(f = luthier__fuse_only(g, cal))) {
        luthier__free(buf);
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "records: out of memory");
    }
    luthier_tune_fingerprint(ctx, fpr, sizeof fpr);
    luthier__fingerprint_predicted(ctx, fpp, sizeof fpp);
    for (line = buf; line; line = next) {
        char *fp, *sig;
        luthier_node_config cfg;
        size_t ll;
        if ((next = strchr(line, '\n'))) *next++ = 0;
        lineno++;
        ll = strlen(line);
        while (ll && line[ll - 1] == '\r') line[--ll] = 0;
        if (!ll || line[0] == '#') continue;
        if (!header) {
            if (strncmp(line, "luthier-records ", 16) != 0 || atoi(line + 16) != LUTHIER__RECORDS_VERSION) {
                s = luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                                  "records: '%s' line %d is '%.40s', expected 'luthier-records 1' (another version or not a records file)",
                                  name, lineno, line);
                break;
            }
            header = 1;
            continue;
        }
        if (!luthier__record_parse(line, &fp, &sig, &cfg)) {
            bad++;
            continue;
        }
        if (strcmp(fp, fpr) != 0 && strcmp(fp, fpp) != 0) {
            foreign++;
            continue;
        }
        /* an AUTO plan: the record's precision becomes the node's; a plan of one precision: the
           record configures its layers of that precision (their signatures say it) */
        if (prec != LUTHIER_PRECISION_AUTO) cfg.precision = LUTHIER_PRECISION_DEFAULT;
        for (i = 0; i < g->num_nodes; i++)
            if (luthier__layer_of(ctx, g, f, i, cal, cfg.precision ? cfg.precision : prec, &t) && strcmp(t.sig, sig) == 0) {
                if (t.op == LUTHIER_OP_DENSE) cfg.algorithm = LUTHIER_CONV_AUTO;
                configs[i] = cfg;
                n++;
            }
    }
    luthier__free(f);
    luthier__free(buf);
    if (s != LUTHIER_STATUS_OK) return s;
    if (matched) *matched = n;
    if (!header) return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE, "records: '%s' has no 'luthier-records 1' header", name);
    if (bad || foreign)
        luthier__fail(ctx, LUTHIER_STATUS_OK,
                      "records: '%s': %d node%s configured; %d malformed line%s skipped, %d line%s for another machine ignored (this one: %s)",
                      name, n, n == 1 ? "" : "s", bad, bad == 1 ? "" : "s", foreign, foreign == 1 ? "" : "s", fpr);
    return LUTHIER_STATUS_OK;
}

/* Records from path (read whole: records files are small) or text, for g's fp32 plan or, with
   cal, its int8 plan (luthier_plan_create uses that); the public calls below wrap it. */
LUTHIER_PRIVATE luthier_status luthier__records_for_plan(luthier_context *ctx, const luthier_graph *g, const char *path,
                                                         const char *text, const luthier_calibration *cal,
                                                         luthier_precision prec, luthier_node_config *configs, int *matched) {
    char *buf = NULL, err[400];
    size_t len = 0;
    luthier_status s;
    ctx->error[0] = 0;
    if (matched) *matched = 0;
    if (text) return luthier__records_apply(ctx, g, "(text)", text, strlen(text), cal, prec, configs, matched);
    if ((s = luthier__read_file(path, &buf, &len, err, sizeof err)) != LUTHIER_STATUS_OK)
        return luthier__fail(ctx, s, "records: %s", err);
    s = luthier__records_apply(ctx, g, path, buf, len, cal, prec, configs, matched);
    luthier__free(buf);
    return s;
}

LUTHIER_API luthier_status luthier_records_apply_text(luthier_context *ctx, const luthier_graph *g, const char *text,
                                                      luthier_node_config *configs, int *matched) {
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!g || !text || !configs) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "records: graph, text or configs is NULL");
    return luthier__records_for_plan(ctx, g, NULL, text, NULL, LUTHIER_PRECISION_FP32, configs, matched);
}

LUTHIER_API luthier_status luthier_records_apply(luthier_context *ctx, const luthier_graph *g, const char *path,
                                                 luthier_node_config *configs, int *matched) {
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!g || !path || !configs) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "records: graph, path or configs is NULL");
    return luthier__records_for_plan(ctx, g, path, NULL, NULL, LUTHIER_PRECISION_FP32, configs, matched);
}


enum { LUTHIER__PLAN_NO_RESIDUAL = 1 };


/* >>impl-plan-passes ===========================================================================
   luthier_plan_create runs these passes in order over one planner state; each is a named
   function, and LUTHIER_PLAN_TRACE=1 prints the plan after each (luthier_plan_describe's text):
     fuse      batch norm folded into the preceding convolution, activations and residual adds
               fused into their producer (luthier__fuse_graph); the nodes left alive
     values    one plan value per graph tensor (graph inputs, constants, arena values)
     order     the alive nodes in execution order (a node that absorbed an add runs at the add)
     steps     per node: the layout it works in (its registry row's layout rule), int8
               partitioning (uint8 where the calibration allows), layout and quantization
               conversions of its inputs, its step, and its row's lower hook (weights packed or
               transformed, workspace)
     outputs   graph outputs converted to the caller's layout and fp32
     memory    lifetimes, in-place results, arena offsets
     prefetch  each conv step linked to the next one's first weight block
     reserve   FLOPs, the context's workspace, the arena */

struct luthier__planner {
    luthier_context *ctx;
    const luthier_graph *g;
    luthier_plan_desc pd;
    int flags;
    luthier_plan *p;
    luthier__fuse *f;  /* per node */
    int *prod, *cons;  /* per tensor: producer node, consumer count (fusion) */
    int *order;        /* alive nodes in execution order */
    int n, nalive;
    int h16;           /* fp16 activations: 0 none, 1 on the CPU's F16 kernels, 2 on the scalar
                          emulation (luthier_plan_desc.fp16_activations) */
};

/* >>impl-plan-lower: each operator's lower hook (its registry row) prepares its step at plan
   time: weights packed or transformed into plan-owned memory, and the workspace a run needs. */

LUTHIER_PRIVATE luthier_status luthier__lower_none(luthier__planner *pl, luthier__pstep *st, int ni) {
    (void)pl, (void)st, (void)ni;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__lower_conv2d(luthier__planner *pl, luthier__pstep *st, int ni) {
    return luthier__plan_conv(pl->ctx, pl->g, pl->p, st, &pl->g->nodes[ni], &pl->f[ni], pl->pd.fallback_invalid,
                              luthier__node_precision(&pl->pd, ni),
                              pl->p->vals[st->out[0]].dtype == LUTHIER__DTYPE_F16 ? pl->h16 : 0);
}

LUTHIER_PRIVATE luthier_status luthier__lower_dense(luthier__planner *pl, luthier__pstep *st, int ni) {
    if (pl->p->vals[st->out[0]].dtype == LUTHIER__DTYPE_F16) /* (luthier__h16_dense) */
        return luthier__plan_dense_h16(pl->ctx, pl->g, pl->p, st, &pl->g->nodes[ni], pl->h16);
    return luthier__plan_dense(pl->ctx, pl->g, pl->p, st, &pl->g->nodes[ni], pl->pd.fallback_invalid,
                               luthier__node_precision(&pl->pd, ni));
}

/* A batch norm left alone (no convolution to fold into): a per-channel scale and shift. */
LUTHIER_PRIVATE luthier_status luthier__lower_batch_norm(luthier__planner *pl, luthier__pstep *st, int ni) {
    const luthier_graph *g = pl->g;
    const luthier__gnode *gn = &g->nodes[ni];
    luthier_plan *p = pl->p;
    size_t c = (size_t)g->tensors[gn->inputs[0]].shape[1], q;
    float *sc = (float *)luthier__plan_blob(p, sizeof(float) * c), *sh = (float *)luthier__plan_blob(p, sizeof(float) * c);
    const float *gamma = (const float *)g->tensors[gn->inputs[1]].data, *beta = (const float *)g->tensors[gn->inputs[2]].data,
                *mean = (const float *)g->tensors[gn->inputs[3]].data, *var = (const float *)g->tensors[gn->inputs[4]].data;
    double eps = gn->d.attr.batch_norm.epsilon;
    if (!sc || !sh) return luthier__fail(pl->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    for (q = 0; q < c; q++) {
        double s = (double)gamma[q] / sqrt((double)var[q] + eps);
        sc[q] = (float)s;
        sh[q] = (float)((double)beta[q] - (double)mean[q] * s);
    }
    st->scale = sc;
    st->shift = sh;
    p->weights_bytes += 2 * sizeof(float) * c;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__lower_layer_norm(luthier__planner *pl, luthier__pstep *st, int ni) {
    const luthier__gnode *gn = &pl->g->nodes[ni];
    int k;
    for (k = 1; k < gn->d.num_inputs; k++) {
        const float *c = NULL;
        if (gn->inputs[k] >= 0 && !(c = (const float *)luthier__own_const(pl->p, gn->inputs[k])))
            return luthier__fail(pl->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
        if (k == 1) st->scale = c;
        else st->shift = c;
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__lower_attention(luthier__planner *pl, luthier__pstep *st, int ni) {
    const luthier_graph *g = pl->g;
    const luthier__gnode *gn = &g->nodes[ni];
    const luthier__gtensor *q = &g->tensors[gn->inputs[0]], *kk = &g->tensors[gn->inputs[1]];
    size_t ws = sizeof(float) * luthier__op_attention_scratch_floats(pl->ctx->pool->num_threads, (size_t)q->shape[q->rank - 2],
                                                                     (size_t)kk->shape[kk->rank - 2]);
    (void)st;
    if (pl->p->workspace_bytes < ws) pl->p->workspace_bytes = ws;
    return LUTHIER_STATUS_OK;
}
/* NON_MAX_SUPPRESSION: luthier_nms's scratch, from the context workspace. */
LUTHIER_PRIVATE luthier_status luthier__lower_nms(luthier__planner *pl, luthier__pstep *st, int ni) {
    const luthier__gnode *gn = &pl->g->nodes[ni];
    const size_t ws = luthier_nms_scratch_bytes(pl->g->tensors[gn->inputs[0]].shape[1]);
    (void)st;
    if (pl->p->workspace_bytes < ws) pl->p->workspace_bytes = ws;
    return LUTHIER_STATUS_OK;
}

/* RESIZE: the tap tables of its two axes (luthier__op_rs_plan), plan-owned. */
LUTHIER_PRIVATE luthier_status luthier__lower_resize(luthier__planner *pl, luthier__pstep *st, int ni) {
    const luthier__gnode *gn = &pl->g->nodes[ni];
    const luthier__gtensor *x = &pl->g->tensors[gn->inputs[0]], *y = &pl->g->tensors[gn->outputs[0]];
    const luthier_resize_attrs *a = &gn->d.attr.resize;
    const int rank = x->rank, taps = a->mode == LUTHIER_RESIZE_NEAREST ? 1 : a->mode == LUTHIER_RESIZE_LINEAR ? 2 : 4;
    luthier__op_rs_plan *rp;
    size_t n, bytes;
    int k, use_sizes = 0;
    char *mem;
    for (k = 0; k < rank; k++) use_sizes |= a->sizes[k] != 0;
    n = (rank > 1 ? (size_t)y->shape[rank - 2] : 1) + (size_t)y->shape[rank - 1];
    bytes = sizeof *rp + n * (size_t)taps * (sizeof(size_t) + sizeof(float));
    if (!(mem = (char *)luthier__plan_blob(pl->p, bytes))) return luthier__fail(pl->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    rp = (luthier__op_rs_plan *)mem;
    memset(rp, 0, sizeof *rp);
    rp->h = rank > 1 ? (size_t)x->shape[rank - 2] : 1;
    rp->w = (size_t)x->shape[rank - 1];
    rp->oh = rank > 1 ? (size_t)y->shape[rank - 2] : 1;
    rp->ow = (size_t)y->shape[rank - 1];
    rp->taps = taps;
    rp->hidx = (size_t *)(mem + sizeof *rp);
    rp->widx = rp->hidx + rp->oh * (size_t)taps;
    rp->hwt = (float *)(rp->widx + rp->ow * (size_t)taps);
    rp->wwt = rp->hwt + rp->oh * (size_t)taps;
    for (k = rank > 1 ? 0 : 1; k < 2; k++) {
        const int ax = rank - 2 + k;
        const size_t in = (size_t)x->shape[ax], out = (size_t)y->shape[ax];
        const double s = use_sizes ? (double)out / (double)in : (double)a->scales[ax];
        luthier__op_resize_axis(a->mode, a->coord, a->nearest_mode, a->cubic_coeff_a, a->exclude_outside, in, out,
                                use_sizes ? (double)out : (double)in * s, s,
                                k ? rp->widx : rp->hidx, k ? rp->wwt : rp->hwt);
    }
    if (rank == 1) { /* one row: tap 0 of row 0 */
        for (k = 0; k < taps; k++) rp->hidx[k] = 0, rp->hwt[k] = k == 0 ? 1.0f : 0.0f;
    }
    if (taps == 1 && rp->ow % rp->w == 0) { /* an integer upsampling of the columns: copies */
        size_t ox;
        rp->rep = rp->ow / rp->w;
        for (ox = 0; ox < rp->ow && rp->rep; ox++)
            if (rp->widx[ox] != ox / rp->rep) rp->rep = 0;
    }
    st->aux = rp;
    return LUTHIER_STATUS_OK;
}


/* LSTM, GRU, RNN: what a step needs at run time (plan-owned). W and R are packed per direction
   for the GEMM engine: the input projections of all time steps run as one GEMM, x W^T +
   bias [seq*batch, G*hidden], then each time step accumulates h R^T into its rows. GRU
   (linear_before_reset 0) packs R_z,r and R_h apart: R_h multiplies r (.) h. */
typedef struct luthier__rnn_plan {
    int kernel, gates, dirs, lbr, gru;
    size_t seq, batch, input, hidden;
    luthier__packed_b_layout wl, rl, rl2; /* W^T [input, G H]; R^T [H, n1]; GRU (lbr 0) R_h^T [H, H] */
    float *w[2], *r[2], *r2[2];           /* packed, per direction */
    float *bias[2];                       /* G H: Wb + Rb (without Rb_h for linear_before_reset) */
    float *rbh[2], *p[2];                 /* Rb_h (linear_before_reset); LSTM peepholes or NULL */
    size_t off_xw, off_h, off_c, off_t;   /* workspace offsets in bytes (the GEMMs' own first) */
    const int64_t *lens;                  /* sequence_lens when some is below seq, else NULL */
    size_t off_g, off_y, off_s;           /* lens: a step's gates, outputs and saved states */
} luthier__rnn_plan;

/* Direction d's constants packed or copied into rp (plan-owned). */
LUTHIER_PRIVATE int luthier__rnn_pack(luthier_plan *p, luthier__rnn_plan *rp, int d, const float *w, const float *r,
                                      const float *b, const float *peep) {
    const size_t H = rp->hidden, GH = (size_t)rp->gates * H;
    size_t q;
    if (!(rp->w[d] = (float *)luthier__plan_blob(p, rp->wl.bytes)) || !(rp->r[d] = (float *)luthier__plan_blob(p, rp->rl.bytes)) ||
        (rp->rl2.bytes && !(rp->r2[d] = (float *)luthier__plan_blob(p, rp->rl2.bytes))) ||
        !(rp->bias[d] = (float *)luthier__plan_blob(p, sizeof(float) * GH)) ||
        (rp->lbr && !(rp->rbh[d] = (float *)luthier__plan_blob(p, sizeof(float) * H))) ||
        (peep && !(rp->p[d] = (float *)luthier__plan_blob(p, sizeof(float) * 3 * H))))
        return 0;
    luthier__pack_b(&rp->wl, w + (size_t)d * GH * rp->input, rp->input, 1, rp->w[d], 0, rp->wl.panels);
    luthier__pack_b(&rp->rl, r + (size_t)d * GH * H, H, 1, rp->r[d], 0, rp->rl.panels);
    if (rp->rl2.bytes) luthier__pack_b(&rp->rl2, r + (size_t)d * GH * H + 2 * H * H, H, 1, rp->r2[d], 0, rp->rl2.panels);
    for (q = 0; q < GH; q++)
        rp->bias[d][q] = b ? b[(size_t)d * 2 * GH + q] + (rp->lbr && q >= 2 * H ? 0.0f : b[(size_t)d * 2 * GH + GH + q]) : 0.0f;
    for (q = 0; rp->lbr && q < H; q++) rp->rbh[d][q] = b ? b[(size_t)d * 2 * GH + GH + 2 * H + q] : 0.0f;
    if (peep) memcpy(rp->p[d], peep + (size_t)d * 3 * H, sizeof(float) * 3 * H);
    p->weights_bytes += rp->wl.bytes + rp->rl.bytes + rp->rl2.bytes + sizeof(float) * (GH + (rp->lbr ? H : 0) + (peep ? 3 * H : 0));
    return 1;
}

/* *out: a plan-owned copy of the node's sequence_lens when one is below seq (checked at infer:
   1..seq); NULL when absent or all full (the common path then runs). 0 on OOM. */
LUTHIER_PRIVATE int luthier__rnn_ragged(luthier_plan *p, const luthier__gnode *gn, const luthier_graph *g, size_t seq, size_t batch,
                                        const int64_t **out) {
    const int64_t *lens = gn->d.num_inputs > 4 && gn->inputs[4] >= 0 ? (const int64_t *)g->tensors[gn->inputs[4]].data : NULL;
    int64_t *copy;
    size_t b;
    *out = NULL;
    for (b = 0; lens && b < batch && (size_t)lens[b] == seq; b++) continue;
    if (!lens || b == batch) return 1;
    if (!(copy = (int64_t *)luthier__plan_blob(p, sizeof(int64_t) * batch))) return 0;
    memcpy(copy, lens, sizeof(int64_t) * batch);
    *out = copy;
    return 1;
}

LUTHIER_PRIVATE luthier_status luthier__lower_rnn(luthier__planner *pl, luthier__pstep *st, int ni) {
    luthier_context *ctx = pl->ctx;
    const luthier_graph *g = pl->g;
    const luthier__gnode *gn = &g->nodes[ni];
    const luthier_rnn_attrs *a = luthier__rnn_attrs(&gn->d);
    const luthier__gtensor *x = &g->tensors[gn->inputs[0]];
    const int nin = gn->d.num_inputs;
    const float *b = nin > 3 && gn->inputs[3] >= 0 ? (const float *)g->tensors[gn->inputs[3]].data : NULL;
    const float *peep = nin > 7 && gn->inputs[7] >= 0 ? (const float *)g->tensors[gn->inputs[7]].data : NULL;
    luthier__rnn_plan *rp = (luthier__rnn_plan *)luthier__plan_blob(pl->p, sizeof *rp);
    size_t H, GH, n1, nr, gemm, k;
    int d;
    if (!rp) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    memset(rp, 0, sizeof *rp);
    rp->gates = luthier__rnn_gates(gn->d.op);
    rp->dirs = a->direction == LUTHIER_RNN_BIDIRECTIONAL ? 2 : 1;
    rp->gru = gn->d.op == LUTHIER_OP_GRU;
    rp->lbr = rp->gru && a->linear_before_reset;
    rp->seq = (size_t)x->shape[a->layout], rp->batch = (size_t)x->shape[1 - a->layout], rp->input = (size_t)x->shape[2];
    rp->hidden = H = (size_t)a->hidden_size;
    GH = (size_t)rp->gates * H;
    n1 = rp->gru && !rp->lbr ? 2 * H : GH;
    rp->kernel = luthier__kernel_for_n(ctx, GH);
    nr = (size_t)luthier__ukernels[rp->kernel].nr;
    if (!luthier__packed_b_layout_init(&rp->wl, nr, rp->input, GH) || !luthier__packed_b_layout_init(&rp->rl, nr, H, n1) ||
        (rp->gru && !rp->lbr && !luthier__packed_b_layout_init(&rp->rl2, nr, H, H)))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (%s): packed weights overflow", gn->name,
                             luthier_op_name(gn->d.op));
    for (d = 0; d < rp->dirs; d++)
        if (!luthier__rnn_pack(pl->p, rp, d, (const float *)g->tensors[gn->inputs[1]].data,
                               (const float *)g->tensors[gn->inputs[2]].data, b, peep))
            return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    gemm = luthier__max_sz(luthier__sgemm_ws(ctx, &luthier__ukernels[rp->kernel], rp->seq * rp->batch, GH, rp->input),
                           luthier__sgemm_ws(ctx, &luthier__ukernels[rp->kernel], rp->batch, n1, H));
    if (rp->rl2.bytes) gemm = luthier__max_sz(gemm, luthier__sgemm_ws(ctx, &luthier__ukernels[rp->kernel], rp->batch, H, H));
    k = sizeof(float) * rp->batch * H;
    rp->off_xw = luthier__align_up(gemm);
    rp->off_h = rp->off_xw + luthier__align_up(sizeof(float) * rp->seq * rp->batch * GH);
    rp->off_c = rp->off_h + luthier__align_up(k);
    rp->off_t = rp->off_c + luthier__align_up(k);
    k = rp->off_t + luthier__align_up(sizeof(float) * rp->batch * GH);
    if (!luthier__rnn_ragged(pl->p, gn, g, rp->seq, rp->batch, &rp->lens)) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    if (rp->lens) {
        rp->off_g = k;
        rp->off_y = rp->off_g + luthier__align_up(sizeof(float) * rp->batch * GH);
        rp->off_s = rp->off_y + luthier__align_up(sizeof(float) * rp->batch * H);
        k = rp->off_s + 2 * luthier__align_up(sizeof(float) * rp->batch * H);
    }
    if (pl->p->workspace_bytes < k) pl->p->workspace_bytes = k;
    st->aux = rp;
    /* W, R, B, sequence_lens and P live on in rp: the step reads only X and the initial states
       (the plan keeps no second copy of the weights) */
    for (d = 1; d < st->nin; d++)
        if (d != 5 && d != 6) st->in[d] = -1;
    return LUTHIER_STATUS_OK;
}

/* The kernel of a GEMM step: the configuration's (falling back to the default when it names an
   unknown one and fallback_invalid is set), else the context's for n columns. */
LUTHIER_PRIVATE luthier_status luthier__step_kernel(luthier__planner *pl, luthier__pstep *st, const char *name, size_t n) {
    if (st->cfg.kernel[0]) {
        if (luthier__resolve_kernel(pl->ctx, st->cfg.kernel, &st->kernel_index) == LUTHIER_STATUS_OK) goto done;
        if (!pl->pd.fallback_invalid)
            return luthier__fail(pl->ctx, LUTHIER_STATUS_NOT_FOUND, "plan: node '%s' (%s): unknown kernel '%s'", name,
                                 luthier_op_name(st->d.op), st->cfg.kernel);
        luthier__plan_fallback(pl->ctx, pl->p, name);
    }
    st->kernel_index = luthier__kernel_for_n(pl->ctx, n);
done:
    st->kernel = luthier__ukernels[st->kernel_index].name;
    return LUTHIER_STATUS_OK;
}

/* B is packed per batch into plan-owned memory (or once, when it is a constant without batch
   dimensions): luthier_sgemm would allocate on every call. */
LUTHIER_PRIVATE luthier_status luthier__lower_matmul(luthier__planner *pl, luthier__pstep *st, int ni) {
    luthier_context *ctx = pl->ctx;
    const luthier_graph *g = pl->g;
    const luthier__gnode *gn = &g->nodes[ni];
    luthier_plan *p = pl->p;
    const luthier__gtensor *a = &g->tensors[gn->inputs[0]], *b = &g->tensors[gn->inputs[1]];
    const luthier__gtensor *o = &g->tensors[gn->outputs[0]];
    size_t m = (size_t)a->shape[a->rank - 2], n = (size_t)o->shape[o->rank - 1], kk = (size_t)a->shape[a->rank - 1], ws;
    int ok2;
    luthier_status s;
    if ((s = luthier__step_kernel(pl, st, gn->name, n)) != LUTHIER_STATUS_OK) return s;
    if (!luthier__packed_b_layout_init(&st->bl, (size_t)luthier__ukernels[st->kernel_index].nr, kk, n))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (matmul): packed B overflows", gn->name);
    if (!(st->packed = (float *)luthier__plan_blob(p, st->bl.bytes))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    st->b_prepacked = b->is_const && luthier__numel(b->rank - 2, b->shape, &ok2) == 1;
    if (st->b_prepacked) {
        luthier__pack_b(&st->bl, (const float *)b->data, gn->d.attr.matmul.trans_b ? kk : n, gn->d.attr.matmul.trans_b != 0, st->packed, 0, st->bl.panels);
        p->weights_bytes += st->bl.bytes;
    }
    ws = luthier__sgemm_ws(ctx, &luthier__ukernels[st->kernel_index], m, n, kk);
    if (p->workspace_bytes < ws) p->workspace_bytes = ws;
    return LUTHIER_STATUS_OK;
}

/* CONV_TRANSPOSE: what its run hook needs besides st->bl / st->packed / st->kernel_index / st->bias.
   Two algorithms (the configuration's knob): IM2COL, a GEMM per group on the packed weights
   into columns that col2im gathers; DEPTHWISE (one input and one output channel per group, the
   default there), col2im making each tap's product from the input and the weights [kh][kw][C]
   in st->packed. */
typedef struct luthier__convt_plan {
    int direct;           /* DEPTHWISE */
    size_t kh, kw, ncols; /* ncols = kh * kw * Cout_g: the columns of one group's GEMM */
    size_t rows;          /* input rows (n * H + iy) per chunk */
    size_t group_floats;  /* packed B of group g at st->packed + g * group_floats */
    float *cols;          /* rows * W * groups * ncols floats, plan-owned scratch */
} luthier__convt_plan;

/* Columns per chunk: a chunk's cols stay within 1 MiB (in L2 when col2im reads them) unless
   one input row needs more. [1,64,56,56] -> 32 channels, k4 s2, 1 thread: 1 MiB chunks (9 input
   rows) 2.36 ms, 256 KiB 2.40 ms, one 6.4 MiB chunk 3.04 ms (docs/DESIGN.md). */
#ifndef LUTHIER__CONVT_COLS_FLOATS
#define LUTHIER__CONVT_COLS_FLOATS ((size_t)1 << 18)
#endif

/* The weights of group g as a GEMM's B [Cin_g, ncols], columns in (ky, kx, co) order so that
   one output pixel's taps are runs of Cout_g floats (w is [Cin, Cout_g, kh, kw]). */
LUTHIER_PRIVATE void luthier__convt_weights(const float *w, size_t g, size_t cing, size_t cg, size_t taps, float *b) {
    size_t ci, co, t;
    for (ci = 0; ci < cing; ci++)
        for (co = 0; co < cg; co++)
            for (t = 0; t < taps; t++) b[ci * taps * cg + t * cg + co] = w[((g * cing + ci) * cg + co) * taps + t];
}

/* Whether conv_transpose node gn has one input and one output channel per group. */
LUTHIER_PRIVATE int luthier__convt_depthwise(const luthier_graph *g, const luthier__gnode *gn) {
    return g->tensors[gn->inputs[0]].shape[1] == gn->d.attr.conv_transpose.groups && g->tensors[gn->inputs[1]].shape[1] == 1;
}

/* The algorithm of conv_transpose step st: the configuration's, IM2COL or DEPTHWISE where it
   fits (AUTO: DEPTHWISE where it fits); another one fails naming the node, or falls back to
   AUTO with fallback_invalid. */
LUTHIER_PRIVATE luthier_status luthier__convt_algorithm(luthier__planner *pl, luthier__pstep *st, const luthier__gnode *gn) {
    const int dw = luthier__convt_depthwise(pl->g, gn);
    luthier_conv_algorithm a = st->cfg.algorithm;
    if (a != LUTHIER_CONV_AUTO && a != LUTHIER_CONV_IM2COL && !(a == LUTHIER_CONV_DEPTHWISE && dw)) {
        const char *name = luthier_conv_algorithm_name(a);
        if (!pl->pd.fallback_invalid)
            return luthier__fail(pl->ctx, LUTHIER_STATUS_UNSUPPORTED,
                                 "plan: node '%s' (conv_transpose): algorithm '%s': it runs im2col (GEMM + col2im), or "
                                 "depthwise with one input and one output channel per group",
                                 gn->name, name ? name : "?");
        luthier__plan_fallback(pl->ctx, pl->p, gn->name);
        a = LUTHIER_CONV_AUTO;
    }
    st->algorithm = dw && a != LUTHIER_CONV_IM2COL ? LUTHIER_CONV_DEPTHWISE : LUTHIER_CONV_IM2COL;
    return LUTHIER_STATUS_OK;
}

/* CONV_TRANSPOSE by DEPTHWISE: the weights [C][1][kh][kw] as [kh][kw][C], no microkernel. */
LUTHIER_PRIVATE luthier_status luthier__lower_convt_direct(luthier__planner *pl, luthier__pstep *st, const luthier__gnode *gn,
                                                           luthier__convt_plan *cp) {
    const luthier__gtensor *w = &pl->g->tensors[gn->inputs[1]];
    const size_t c = (size_t)w->shape[0], taps = cp->kh * cp->kw;
    size_t ch, t, bytes;
    if (!luthier__size_mul(c * taps, sizeof(float), &bytes) || !(st->packed = (float *)luthier__plan_blob(pl->p, bytes)))
        return luthier__fail(pl->ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    for (ch = 0; ch < c; ch++)
        for (t = 0; t < taps; t++) st->packed[t * c + ch] = ((const float *)w->data)[ch * taps + t];
    cp->direct = 1;
    st->kernel = "";
    st->packed_bytes = bytes;
    pl->p->weights_bytes += bytes;
    return LUTHIER_STATUS_OK;
}

/* CONV_TRANSPOSE: its algorithm; by IM2COL the weights packed once per group for the step's
   kernel, the columns' scratch and the GEMM's workspace; the bias. */
LUTHIER_PRIVATE luthier_status luthier__lower_conv_transpose(luthier__planner *pl, luthier__pstep *st, int ni) {
    luthier_context *ctx = pl->ctx;
    const luthier__gnode *gn = &pl->g->nodes[ni];
    const luthier__gtensor *x = &pl->g->tensors[gn->inputs[0]], *w = &pl->g->tensors[gn->inputs[1]];
    const size_t groups = (size_t)gn->d.attr.conv_transpose.groups, cing = (size_t)x->shape[1] / groups;
    const size_t cg = (size_t)w->shape[1], xrows = (size_t)(x->shape[0] * x->shape[2]), xw = (size_t)x->shape[3];
    luthier__convt_plan *cp;
    size_t taps, per_row, cols_floats, bytes, g, ws;
    float *tmp;
    luthier_status s;
    if (!luthier__size_mul((size_t)w->shape[2], (size_t)w->shape[3], &taps) || !luthier__size_mul(taps, cg, &per_row) ||
        !luthier__size_mul(per_row, groups, &per_row) || !luthier__size_mul(per_row, xw, &per_row))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (conv_transpose): the columns overflow", gn->name);
    if ((s = luthier__convt_algorithm(pl, st, gn)) != LUTHIER_STATUS_OK) return s;
    if (!(cp = (luthier__convt_plan *)luthier__plan_blob(pl->p, sizeof *cp))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    memset(cp, 0, sizeof *cp);
    cp->kh = (size_t)w->shape[2];
    cp->kw = (size_t)w->shape[3];
    st->aux = cp;
    if (gn->d.num_inputs > 2 && gn->inputs[2] >= 0 && !(st->bias = (const float *)luthier__own_const(pl->p, gn->inputs[2])))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    if (st->algorithm == LUTHIER_CONV_DEPTHWISE) return luthier__lower_convt_direct(pl, st, gn, cp);
    if ((s = luthier__step_kernel(pl, st, gn->name, taps * cg)) != LUTHIER_STATUS_OK) return s;
    if (!luthier__packed_b_layout_init(&st->bl, (size_t)luthier__ukernels[st->kernel_index].nr, cing, taps * cg))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (conv_transpose): packed B overflows", gn->name);
    cp->ncols = taps * cg;
    cp->rows = luthier__min_sz(xrows, luthier__max_sz(1, LUTHIER__CONVT_COLS_FLOATS / per_row));
    cp->group_floats = luthier__div_up(st->bl.bytes, LUTHIER__ALIGN) * LUTHIER__ALIGN / sizeof(float);
    if (!luthier__size_mul(cp->rows, per_row, &cols_floats) || !luthier__size_mul(cols_floats, sizeof(float), &bytes) ||
        !luthier__size_mul(cp->group_floats * sizeof(float), groups, &ws))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s' (conv_transpose): the columns overflow", gn->name);
    if (!(cp->cols = (float *)luthier__plan_blob(pl->p, bytes)) || !(st->packed = (float *)luthier__plan_blob(pl->p, ws)) ||
        !(tmp = (float *)luthier__alloc(sizeof(float) * cing * cp->ncols + 1)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    for (g = 0; g < groups; g++) {
        luthier__convt_weights((const float *)w->data, g, cing, cg, taps, tmp);
        luthier__pack_b(&st->bl, tmp, cp->ncols, 0, st->packed + g * cp->group_floats, 0, st->bl.panels);
    }
    luthier__free(tmp);
    pl->p->weights_bytes += ws;
    st->packed_bytes = ws;
    ws = luthier__sgemm_ws(ctx, &luthier__ukernels[st->kernel_index], cp->rows * xw, cp->ncols, cing);
    if (pl->p->workspace_bytes < ws) pl->p->workspace_bytes = ws;
    return LUTHIER_STATUS_OK;
}

#define LUTHIER__PLFAIL(st, ...) return luthier__fail(pl->ctx, st, __VA_ARGS__)
#define LUTHIER__PLOOM() LUTHIER__PLFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory")

LUTHIER_PRIVATE luthier_status luthier__pass_fuse(luthier__planner *pl) {
    const luthier_graph *g = pl->g;
    int oom = 0;
    pl->f = (luthier__fuse *)luthier__zalloc(sizeof *pl->f * (size_t)(pl->n + 1));
    pl->prod = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_tensors);
    pl->cons = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_tensors);
    pl->order = (int *)luthier__alloc(sizeof(int) * (size_t)(pl->n + 1));
    if (!pl->f || !pl->prod || !pl->cons || !pl->order) LUTHIER__PLOOM();
    luthier__fuse_graph(g, pl->f, pl->prod, pl->cons, pl->pd.no_fusion, 1, pl->pd.int8, pl->flags & LUTHIER__PLAN_NO_RESIDUAL, &oom);
    if (oom) LUTHIER__PLOOM();
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__pass_values(luthier__planner *pl) {
    const luthier_graph *g = pl->g;
    luthier_plan *p = pl->p;
    int i;
    p->inputs = (int *)luthier__alloc(sizeof(int) * (size_t)(g->num_inputs + 1));
    p->input_dtypes = (luthier_dtype *)luthier__alloc(sizeof(luthier_dtype) * (size_t)(g->num_inputs + 1));
    p->outputs = (int *)luthier__alloc(sizeof(int) * (size_t)g->num_outputs);
    p->lens = (luthier__plen *)luthier__alloc(sizeof(luthier__plen) * (size_t)(g->num_tensors + 1));
    if (!p->inputs || !p->input_dtypes || !p->outputs || !p->lens) LUTHIER__PLOOM();
    p->num_tensors = g->num_tensors;
    for (i = 0; i < g->num_tensors; i++) {
        const luthier__gtensor *t = &g->tensors[i];
        int v = luthier__pval_new(p, t->dtype, t->rank, t->shape, LUTHIER__PLAIN);
        if (v < 0) LUTHIER__PLOOM();
        p->lens[i].axis = t->len_axis, p->lens[i].root = t->len_root, p->lens[i].n = 0;
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
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__pass_order(luthier__planner *pl) {
    int i, j;
    for (i = 0, pl->nalive = 0; i < pl->n; i++) {
        if (!pl->f[i].alive) continue;
        for (j = pl->nalive; j > 0 && pl->f[pl->order[j - 1]].pos > pl->f[i].pos; j--) pl->order[j] = pl->order[j - 1];
        pl->order[j] = i;
        pl->nalive++;
    }
    return LUTHIER_STATUS_OK;
}

/* The layout node gn's step works in, by its row's rule; *nin: its activation inputs (the others
   are constants its lower hook owns). */
LUTHIER_PRIVATE int luthier__node_layout(const luthier__planner *pl, const luthier__gnode *gn, const int *ins, int *nin) {
    const luthier_plan *p = pl->p;
    const int rule = luthier__ops[gn->d.op].layout;
    int layout = LUTHIER__PLAIN, k;
    *nin = gn->d.num_inputs;
    switch (rule) {
    case LUTHIER__LAYOUT_NHWC: layout = LUTHIER__NHWC; *nin = 1; break;
    case LUTHIER__LAYOUT_FOLLOW: layout = p->vals[ins[0]].layout; break;
    case LUTHIER__LAYOUT_FOLLOW_X: layout = p->vals[ins[0]].layout; *nin = 1; break;
    case LUTHIER__LAYOUT_PLAIN_X: *nin = 1; break;
    case LUTHIER__LAYOUT_BINARY:
        if (pl->g->tensors[gn->outputs[0]].rank != 4) break;
        /* fall through */
    case LUTHIER__LAYOUT_ANY_NHWC:
        for (k = 0; k < *nin; k++)
            if (p->vals[ins[k]].layout == LUTHIER__NHWC) layout = LUTHIER__NHWC;
        break;
    default: break;
    }
    return layout;
}

/* >>impl-plan-h16: the operators with an fp16-activation form (luthier_plan_desc.fp16_activations):
   each row's h16 hook (its registry column) says whether node ni (inputs ins so far) reads and
   writes fp16 in planner pl, whose h16 is set: LUTHIER__H16_NO, _NATIVE (its lower or run hook
   takes fp16: convolutions, dense layers, max pooling, concatenation, views), _WIDE (its fp32
   run hook, on fp32 copies: luthier__run_h16_wide) or _ELT (the element-wise operators: inputs
   as _WIDE's, the run hook reads and writes fp16 without copies). Views keep their input's fp16
   where no transpose is needed to see it. */
LUTHIER_PRIVATE int luthier__h16_no(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    (void)pl, (void)gn, (void)ni, (void)ins;
    return LUTHIER__H16_NO;
}

/* whether node ni is an FP16 node without a configured kernel or algorithm (fp32 choices) */
LUTHIER_PRIVATE int luthier__h16_fp16_node(const luthier__planner *pl, int ni) {
    const luthier_node_config *c = pl->pd.num_configs ? &pl->pd.configs[ni] : NULL;
    return luthier__node_precision(&pl->pd, ni) == LUTHIER_PRECISION_FP16 &&
           !(c && (c->kernel[0] || c->algorithm != LUTHIER_CONV_AUTO));
}

LUTHIER_PRIVATE int luthier__h16_conv(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    luthier_conv2d_desc cd;
    (void)ins;
    if (!luthier__h16_fp16_node(pl, ni)) return LUTHIER__H16_NO;
    luthier__node_conv_desc(&gn->d, &pl->g->tensors[gn->inputs[0]], &pl->g->tensors[gn->inputs[1]], &cd);
    luthier__conv_epilogue(&cd, pl->f[ni].act, pl->f[ni].cmin, pl->f[ni].cmax, 0); /* (as fused) */
    if (luthier__conv_is_depthwise(&cd)) return luthier__conv_h16_dw_fits(pl->ctx->cpu_features, &cd);
    return luthier__h16_conv_kernel(pl->ctx, pl->h16, &cd) != NULL;
}

/* a dense layer: a 1x1 convolution over its rows (luthier__dense_conv_desc) on an F16 kernel, from
   as many rows as fp16 plans give the F16 kernels (luthier__dense_default_kernel: fewer stay on
   F16W, fp32 arithmetic) */
LUTHIER_PRIVATE int luthier__h16_dense(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    luthier_conv2d_desc cd;
    (void)ins;
    if (!luthier__h16_fp16_node(pl, ni)) return LUTHIER__H16_NO;
    luthier__dense_conv_desc(pl->g, gn, &cd);
    return cd.batch >= LUTHIER__F16_MIN_ROWS && luthier__h16_conv_kernel(pl->ctx, pl->h16, &cd) != NULL;
}

LUTHIER_PRIVATE int luthier__h16_view(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    const luthier__pval *x = &pl->p->vals[ins[0]];
    (void)gn, (void)ni;
    return x->dtype == LUTHIER__DTYPE_F16 && (x->rank != 4 || x->layout == LUTHIER__PLAIN || luthier__coincide(4, x->shape));
}

/* a max pool whose input is fp16 already (it is exact on fp16: never narrow to pool) */
LUTHIER_PRIVATE int luthier__h16_maxpool(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    (void)gn, (void)ni;
    return luthier__dtwin(pl->p, ins[0], LUTHIER__DTYPE_F16) >= 0;
}

/* a concatenation of values that are all fp16 already, without run-time lengths, each an even
   number of elements along the axis (the copies move pairs of halves: luthier__run_concat_split) */
LUTHIER_PRIVATE int luthier__h16_concat(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    const luthier__pval *o = &pl->p->vals[gn->outputs[0]];
    const int axis = luthier__norm_axis(gn->d.attr.axis.axis, o->rank, 0);
    int k;
    (void)ni;
    if (luthier__vlen(pl->p, gn->outputs[0], -1)) return 0;
    for (k = 0; k < gn->d.num_inputs; k++)
        if (luthier__dtwin(pl->p, ins[k], LUTHIER__DTYPE_F16) < 0 || pl->p->vals[ins[k]].shape[axis] % 2 ||
            luthier__vlen(pl->p, ins[k], -1))
            return 0;
    return 1;
}

/* an fp32 operator on fp32 copies of its fp16 inputs (luthier__run_h16_wide): where one of its
   inputs is fp16 already (never narrow to run in fp32), one fp32 output, no residual add fused
   into it, no run-time lengths; its other inputs stay fp32 (constants, fp32 activations) */
LUTHIER_PRIVATE int luthier__h16_wide(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    const luthier_plan *p = pl->p;
    int k, any = 0;
    if (gn->num_outputs != 1 || pl->f[ni].residual >= 0 || p->vals[pl->f[ni].out].dtype != LUTHIER_DTYPE_F32 ||
        luthier__vlen(p, pl->f[ni].out, -1))
        return LUTHIER__H16_NO;
    for (k = 0; k < gn->d.num_inputs; k++) {
        if (ins[k] < 0) continue;
        if (luthier__vlen(p, ins[k], -1)) return LUTHIER__H16_NO;
        any |= luthier__dtwin(p, ins[k], LUTHIER__DTYPE_F16) >= 0;
    }
    return any ? LUTHIER__H16_WIDE : LUTHIER__H16_NO;
}

/* an element-wise operator (luthier__run_unary, luthier__run_binary) where "wide" would take it:
   its run hook reads the fp16 operands and writes the fp16 output itself (no fp32 copies) */
LUTHIER_PRIVATE int luthier__h16_elt(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    return luthier__h16_wide(pl, gn, ni, ins) == LUTHIER__H16_WIDE ? LUTHIER__H16_ELT : LUTHIER__H16_NO;
}

LUTHIER_PRIVATE int luthier__h16_node(const luthier__planner *pl, const luthier__gnode *gn, int ni, const int *ins) {
    return pl->h16 ? luthier__ops[gn->d.op].h16(pl, gn, ni, ins) : LUTHIER__H16_NO;
}

/* The activation datatype of node gn's step (int8 partitioning, fp16 activations) and the
   conversions of its activation inputs ins[0..nin) to its layout and datatype; returns
   LUTHIER__STEP_ON_F32, _U8, _F16 or _F16_WIDE (fp16 outputs, inputs fp16 where they are fp16
   already, fp32 elsewhere: luthier__run_h16_wide) or _F16_ELT (the inputs as _F16_WIDE's, the
   run hook on them: luthier__h16_elt) (-1: out of memory). */
enum { LUTHIER__STEP_ON_F32 = 0, LUTHIER__STEP_ON_U8, LUTHIER__STEP_ON_F16, LUTHIER__STEP_ON_F16_WIDE, LUTHIER__STEP_ON_F16_ELT };
LUTHIER_PRIVATE int luthier__node_inputs(luthier__planner *pl, const luthier__gnode *gn, int ni, int layout, int nin, int *ins) {
    luthier_plan *p = pl->p;
    const luthier_calibration *cal = pl->pd.int8;
    const int qs = luthier__q_node(pl->g, p, cal, gn, &pl->f[ni], ins, luthier__node_precision(&pl->pd, ni));
    const int h = qs ? LUTHIER__H16_NO : luthier__h16_node(pl, gn, ni, ins);
    const int hs = h == LUTHIER__H16_NATIVE, wide = h == LUTHIER__H16_WIDE || h == LUTHIER__H16_ELT; /* fp32 inputs stay */
    int k;
    for (k = 0; k < nin; k++) {
        const luthier__pval *a;
        if (ins[k] < 0) continue; /* an absent optional input stays -1 in the step */
        if (wide && luthier__dtwin(p, ins[k], LUTHIER__DTYPE_F16) >= 0) ins[k] = luthier__dtwin(p, ins[k], LUTHIER__DTYPE_F16);
        else if (!qs && !hs && (ins[k] = luthier__need_q(p, cal, ins[k], 0)) < 0) return -1;
        a = &p->vals[ins[k]];
        /* operands of lower rank broadcast in either layout when their memory order coincides
           (fp32 steps: an int8 add still needs its operands as uint8) */
        if (!qs && !hs && luthier__ops[gn->d.op].layout == LUTHIER__LAYOUT_BINARY && layout == LUTHIER__NHWC &&
            a->layout == LUTHIER__PLAIN &&
            (a->rank < 4 || luthier__coincide(4, a->shape)))
            continue;
        if ((ins[k] = luthier__need(pl->ctx, p, ins[k], layout)) < 0) return -1;
        if (qs && (ins[k] = luthier__need_q(p, cal, ins[k], 1)) < 0) return -1;
        if (hs && (ins[k] = luthier__need_dtype(p, cal, ins[k], LUTHIER__DTYPE_F16)) < 0) return -1;
    }
    if (h == LUTHIER__H16_ELT) return LUTHIER__STEP_ON_F16_ELT;
    return qs ? LUTHIER__STEP_ON_U8 : hs ? LUTHIER__STEP_ON_F16 : wide ? LUTHIER__STEP_ON_F16_WIDE : LUTHIER__STEP_ON_F32;
}

/* The fp32 copies that wide step st runs on (luthier__run_h16_wide): 4 bytes per element of its
   fp16 inputs and outputs, each copy aligned, in the workspace after the step's own (what its
   lower hook reserved: p->workspace_bytes now); then the plan's workspace is the larger of that
   and `before`. */
LUTHIER_PRIVATE luthier_status luthier__plan_h16_wide(luthier_context *ctx, luthier_plan *p, luthier__pstep *st, size_t before) {
    size_t total = luthier__align_up(p->workspace_bytes);
    int k;
    st->h16_wide_off = total;
    for (k = 0; k < st->nin + st->nout; k++) {
        const int v = k < st->nin ? st->in[k] : st->out[k - st->nin];
        const size_t b = v < 0 || p->vals[v].dtype != LUTHIER__DTYPE_F16 ? 0 : p->vals[v].bytes;
        if (b > SIZE_MAX / 4 || !luthier__size_add(total, luthier__align_up(b * 2), &total))
            return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "plan: node '%s': the fp32 copies' size overflows", st->name);
    }
    st->h16_wide = total ? total : 1;
    p->workspace_bytes = before > total ? before : total;
    return LUTHIER_STATUS_OK;
}

/* The step of node ni (inputs ready in ins); *out receives it. */
LUTHIER_PRIVATE luthier_status luthier__node_step(luthier__planner *pl, int ni, int layout, int nin, const int *ins,
                                                  int residual, luthier__pstep **out) {
    luthier_plan *p = pl->p;
    const luthier__gnode *gn = &pl->g->nodes[ni];
    const luthier__fuse *f = &pl->f[ni];
    luthier__pstep *st;
    int k;
    if (!(st = luthier__step_new(p, LUTHIER__STEP_NODE, ni, nin, gn->num_outputs))) LUTHIER__PLOOM();
    st->d = gn->d;
    st->d.name = NULL; st->d.inputs = NULL; st->d.sizes = NULL; st->d.perm = NULL;
    memcpy(st->perm, gn->perm, sizeof st->perm);
    snprintf(st->name, sizeof st->name, "%s", gn->name);
    snprintf(st->fused, sizeof st->fused, "%s", f->fused);
    st->act = f->act;
    st->cmin = f->cmin;
    st->cmax = f->cmax;
    st->flops = gn->flops;
    st->bytes = gn->bytes;
    for (k = 0; k < nin; k++) st->in[k] = ins[k];
    st->out[0] = f->out;
    for (k = 1; k < gn->num_outputs; k++) st->out[k] = gn->outputs[k];
    for (k = 0; k < gn->num_outputs; k++) p->vals[st->out[k]].layout = layout;
    if (pl->pd.num_configs) st->cfg = pl->pd.configs[ni];
    if (st->cfg.precision && st->cfg.kernel[0] && !luthier__cfg_kernels_in(st->cfg.kernel, st->cfg.precision)) {
        if (!pl->pd.fallback_invalid)
            LUTHIER__PLFAIL(LUTHIER_STATUS_INVALID_ARGUMENT, "plan: node '%s': kernel '%s' is not of a family of precision %s",
                            gn->name, st->cfg.kernel, luthier_precision_name(st->cfg.precision));
        luthier__fail(pl->ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "kernel '%s' is not of a family of precision %s", st->cfg.kernel,
                      luthier_precision_name(st->cfg.precision));
        luthier__plan_fallback(pl->ctx, p, gn->name);
        memset(&st->cfg, 0, sizeof st->cfg);
        st->cfg.precision = pl->pd.configs[ni].precision;
    }
    if (st->cfg.num_ratios && st->cfg.num_ratios != p->num_clusters) {
        if (!pl->pd.fallback_invalid)
            LUTHIER__PLFAIL(LUTHIER_STATUS_INVALID_ARGUMENT, "plan: node '%s': %d ratios given for %d clusters", gn->name,
                            st->cfg.num_ratios, p->num_clusters);
        luthier__fail(pl->ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%d ratios given for %d clusters", st->cfg.num_ratios, p->num_clusters);
        luthier__plan_fallback(pl->ctx, p, gn->name);
        st->cfg.num_ratios = 0;
    }
    if (f->residual >= 0) st->residual = residual;
    *out = st;
    return LUTHIER_STATUS_OK;
}

/* Constants that step st reads at run time belong to the plan. */
LUTHIER_PRIVATE int luthier__step_own_consts(luthier_plan *p, const luthier__pstep *st) {
    int k;
    for (k = 0; k < st->nin; k++)
        if (st->in[k] >= 0 && p->vals[luthier__root(p, st->in[k])].storage == LUTHIER__ST_CONST &&
            !luthier__own_const(p, st->in[k]))
            return 0;
    return st->residual < 0 || p->vals[luthier__root(p, st->residual)].storage != LUTHIER__ST_CONST ||
           luthier__own_const(p, st->residual) != NULL;
}

LUTHIER_PRIVATE luthier_status luthier__pass_steps(luthier__planner *pl) {
    luthier_plan *p = pl->p;
    const luthier_calibration *cal = pl->pd.int8;
    luthier_status s;
    int j;
    for (j = 0; j < pl->nalive; j++) {
        const int ni = pl->order[j];
        const luthier__gnode *gn = &pl->g->nodes[ni];
        const luthier__fuse *f = &pl->f[ni];
        luthier__pstep *st = NULL;
        int k, nin, ins[64] = {0}, residual = -1, layout, qs, hs, wide;
        size_t ws;
        for (k = 0; k < gn->d.num_inputs; k++) ins[k] = gn->inputs[k];
        layout = luthier__node_layout(pl, gn, ins, &nin);
        if ((qs = luthier__node_inputs(pl, gn, ni, layout, nin, ins)) < 0) LUTHIER__PLOOM();
        wide = qs == LUTHIER__STEP_ON_F16_WIDE;
        hs = qs == LUTHIER__STEP_ON_F16 || qs == LUTHIER__STEP_ON_F16_ELT || wide;
        qs = qs == LUTHIER__STEP_ON_U8;
        if (!qs && pl->pd.num_configs && pl->pd.configs[ni].precision == LUTHIER_PRECISION_INT8)
            LUTHIER__PLFAIL(LUTHIER_STATUS_INVALID_ARGUMENT,
                            "plan: node '%s' is configured int8 but cannot run int8 (its input has no quantization "
                            "parameters, or it took a residual add or an activation that int8 layers do not take)",
                            gn->name);
        if (luthier__ops[gn->d.op].run == luthier__run_view) { /* the output is the input's memory */
            luthier__pval *v = &p->vals[f->out];
            v->alias = ins[0];
            v->layout = p->vals[ins[0]].layout;
            if (qs) luthier__set_dtype(v, LUTHIER__DTYPE_U8, p->vals[ins[0]].qscale, p->vals[ins[0]].qzero);
            if (hs) luthier__set_dtype(v, LUTHIER__DTYPE_F16, 0.0f, 0);
            continue;
        }
        if (f->residual >= 0 && ((residual = hs ? f->residual : luthier__need_q(p, cal, f->residual, 0)) < 0 ||
                                 (residual = luthier__need(pl->ctx, p, residual, layout)) < 0 ||
                                 (hs && (residual = luthier__need_dtype(p, cal, residual, LUTHIER__DTYPE_F16)) < 0)))
            LUTHIER__PLOOM();
        if ((s = luthier__node_step(pl, ni, layout, nin, ins, residual, &st)) != LUTHIER_STATUS_OK) return s;
        for (k = 0; hs && k < st->nout; k++) luthier__set_dtype(&p->vals[st->out[k]], LUTHIER__DTYPE_F16, 0.0f, 0);
        ws = p->workspace_bytes;
        if (wide) p->workspace_bytes = 0; /* (what the lower hook reserves: the step's own) */
        s = qs ? luthier__plan_qstep(pl->ctx, pl->g, p, cal, st, gn, f) : luthier__ops[gn->d.op].lower(pl, st, ni);
        if (s == LUTHIER_STATUS_OK && wide) s = luthier__plan_h16_wide(pl->ctx, p, st, ws);
        if (s != LUTHIER_STATUS_OK) return s;
        if (!luthier__step_own_consts(p, st)) LUTHIER__PLOOM();
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__pass_outputs(luthier__planner *pl) {
    const luthier_graph *g = pl->g;
    luthier_plan *p = pl->p;
    int i;
    p->num_outputs = g->num_outputs;
    for (i = 0; i < g->num_outputs; i++) {
        int v = luthier__need_q(p, pl->pd.int8, g->outputs[i], 0);
        if (v < 0 || (v = luthier__need(pl->ctx, p, v, LUTHIER__PLAIN)) < 0) LUTHIER__PLOOM();
        p->outputs[i] = v;
        if (p->vals[luthier__root(p, v)].storage == LUTHIER__ST_CONST && !luthier__own_const(p, v)) LUTHIER__PLOOM();
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__pass_memory(luthier__planner *pl) {
    const luthier_graph *g = pl->g;
    luthier_plan *p = pl->p;
    int i;
    luthier__lifetimes(p);
    for (i = 0; i < p->num_vals; i++) {
        int r = luthier__root(p, i);
        if (p->vals[r].storage == LUTHIER__ST_ARENA && p->vals[r].last >= 0 &&
            (i >= g->num_tensors || !g->tensors[i].is_input) &&
            !luthier__size_add(p->sum_activation_bytes, p->vals[i].bytes, &p->sum_activation_bytes))
            LUTHIER__PLFAIL(LUTHIER_STATUS_OVERFLOW, "plan: the activations' total size overflows");
    }
    luthier__plan_inplace(p);
    if ((i = luthier__assign_offsets(p)) == 0) LUTHIER__PLOOM();
    if (i < 0)
        LUTHIER__PLFAIL(LUTHIER_STATUS_OVERFLOW, "plan: the arena's size overflows (its values need more than %zu bytes)",
                        (size_t)LUTHIER__SIZE_LIMIT);
    for (i = 0; i < p->num_outputs; i++) { /* roots a run may place in the caller's buffers */
        luthier__pval *r = &p->vals[luthier__root(p, p->outputs[i])];
        if (r->storage == LUTHIER__ST_ARENA && r->bytes == p->vals[p->outputs[i]].bytes && r->output_index < 0)
            r->output_index = i;
    }
    return LUTHIER_STATUS_OK;
}

/* Each conv step prefetches, as it ends, the block the next conv step starts with: in a network
   the weights come from memory, and the first block of a layer had nothing to hide its arrival
   behind (docs/DESIGN.md, "Next-block prefetch"). */
LUTHIER_PRIVATE luthier_status luthier__pass_prefetch(luthier__planner *pl) {
    luthier_plan *p = pl->p;
    int i, j;
    for (i = 0, j = -1; i < p->num_steps; i++) {
        luthier__pstep *st = &p->steps[i];
        if (st->kind != LUTHIER__STEP_NODE || st->q || st->d.op != LUTHIER_OP_CONV2D || !st->conv) continue;
        if (j >= 0) luthier__conv2d_first_block(st->conv, &p->steps[j].next);
        j = i;
    }
    return LUTHIER_STATUS_OK;
}

/* FLOPs, and the memory of a run reserved now so that runs do not allocate. */
LUTHIER_PRIVATE luthier_status luthier__pass_reserve(luthier__planner *pl) {
    luthier_plan *p = pl->p;
    int i;
    for (i = 0; i < p->num_steps; i++) p->flops += p->steps[i].flops;
    if (p->workspace_bytes && !luthier__context_workspace(pl->ctx, p->workspace_bytes))
        LUTHIER__PLFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: cannot reserve %zu bytes of workspace", p->workspace_bytes);
    if (!pl->pd.external_arena && p->arena_bytes) {
        if (!(p->arena = luthier__alloc(p->arena_bytes)))
            LUTHIER__PLFAIL(LUTHIER_STATUS_OUT_OF_MEMORY, "plan: cannot allocate the %zu-byte arena", p->arena_bytes);
        p->arena_owned = 1;
    }
    return LUTHIER_STATUS_OK;
}

typedef luthier_status (*luthier__pass_fn)(luthier__planner *pl);

static const struct {
    const char *name;
    luthier__pass_fn run;
} luthier__passes[] = {{"fuse", luthier__pass_fuse},         {"values", luthier__pass_values},
                       {"order", luthier__pass_order},       {"steps", luthier__pass_steps},
                       {"outputs", luthier__pass_outputs},   {"memory", luthier__pass_memory},
                       {"prefetch", luthier__pass_prefetch}, {"reserve", luthier__pass_reserve}};

/* The plan's text after pass `name` on stderr, when LUTHIER_PLAN_TRACE is set (and not "0"). */
LUTHIER_PRIVATE void luthier__plan_trace(const luthier__planner *pl, const char *name) {
    const char *env = getenv("LUTHIER_PLAN_TRACE");
    size_t need;
    char *text;
    int i, alive = 0;
    if (!env || !*env || !strcmp(env, "0")) return;
    for (i = 0; i < pl->n && pl->f; i++) alive += pl->f[i].alive;
    need = luthier_plan_describe(pl->p, NULL, 0) + 1;
    if (!(text = (char *)luthier__alloc(need))) return;
    luthier_plan_describe(pl->p, text, need);
    fprintf(stderr, "== plan after pass '%s' (%d of %d graph nodes alive after fusion)\n%s", name, alive, pl->n, text);
    luthier__free(text);
}

/* Checks node i's configured precision: a node's (not DEFAULT's or AUTO's), of an operator it
   applies to, INT8 only where the calibration has the node's input's quantization parameters. */
LUTHIER_PRIVATE luthier_status luthier__plan_check_precision(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *pd,
                                                             int i) {
    const luthier_precision p = pd->configs[i].precision;
    const luthier__gnode *gn = &g->nodes[i];
    if (p == LUTHIER_PRECISION_DEFAULT) return LUTHIER_STATUS_OK;
    if ((unsigned)p >= (unsigned)LUTHIER_PRECISION_COUNT || !luthier__precisions[p].families)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: node '%s': precision %d is not a node's precision", gn->name,
                             (int)p);
    if (!luthier__precisions[p].applies(gn->d.op))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: node '%s' (%s) has no %s form", gn->name,
                             luthier_op_name(gn->d.op), luthier__precisions[p].name);
    if (p == LUTHIER_PRECISION_INT8 && !luthier__cal_has(pd->int8, gn->inputs[0]))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "plan: node '%s' is configured int8 but %s quantization parameters for its input '%s'", gn->name,
                             pd->int8 ? "the calibration (luthier_plan_desc.int8) has no" : "no calibration (luthier_plan_desc.int8) gives",
                             g->tensors[gn->inputs[0]].name);
    return LUTHIER_STATUS_OK;
}

/* Checks the descriptor's configurations (one per node, each well formed). */
LUTHIER_PRIVATE luthier_status luthier__plan_check_desc(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *pd) {
    luthier_status s;
    int i;
    if (g->num_outputs == 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: the graph has no outputs (luthier_graph_output)");
    if (pd->num_configs && (pd->num_configs != g->num_nodes || !pd->configs))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "plan: %d configs given for %d nodes (give one per node, or none)", pd->num_configs, g->num_nodes);
    if (pd->fp16_activations < -1 || pd->fp16_activations > 1)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: fp16_activations is %d (-1, 0 or 1)", pd->fp16_activations);
    for (i = 0; i < pd->num_configs; i++) {
        const luthier_node_config *c = &pd->configs[i];
        if (!memchr(c->kernel, 0, sizeof c->kernel) || (unsigned)c->algorithm >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT ||
            (unsigned)c->schedule >= (unsigned)LUTHIER_SCHEDULE_COUNT || c->num_ratios < 0 || c->num_ratios > LUTHIER_MAX_CLUSTERS ||
            (c->num_ratios && !luthier__ratios_usable(c->ratios, c->num_ratios)))
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "plan: config of node '%s' is malformed (kernel not terminated, algorithm/schedule/num_ratios out "
                                 "of range, or ratios that are negative, not finite or all 0)",
                                 g->nodes[i].name);
        if ((s = luthier__plan_check_precision(ctx, g, pd, i)) != LUTHIER_STATUS_OK) return s;
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__plan_create_ex(luthier_context *ctx, const luthier_graph *g,
                                                       const luthier_plan_desc *desc, int flags, luthier_plan **out);

/* Records (a path or text) turned into configurations, then the plan made with them. */
LUTHIER_PRIVATE luthier_status luthier__plan_with_records(luthier_context *ctx, const luthier_graph *g, const luthier_plan_desc *desc,
                                                          int flags, luthier_plan **out) {
    luthier_plan_desc pd = *desc;
    luthier_node_config *rc = (luthier_node_config *)luthier__zalloc(sizeof *rc * (size_t)(g->num_nodes + 1));
    luthier_status s;
    char note[256];
    if (!rc) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    s = luthier__records_for_plan(ctx, g, pd.records, pd.records ? NULL : pd.records_text, pd.int8, pd.precision, rc, NULL);
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
    if (s == LUTHIER_STATUS_OK && (*out)->fallbacks)
        luthier__fail(ctx, LUTHIER_STATUS_OK, "%s%s%d record%s did not fit this build and fell back to the default (first: %s)", note,
                      note[0] ? "; " : "records: ", (*out)->fallbacks, (*out)->fallbacks == 1 ? "" : "s", (*out)->fallback_note);
    else if (s == LUTHIER_STATUS_OK)
        snprintf(ctx->error, sizeof ctx->error, "%s", note);
    return s;
}

LUTHIER_PRIVATE luthier_status luthier__plan_create_ex(luthier_context *ctx, const luthier_graph *g,
                                                       const luthier_plan_desc *desc, int flags, luthier_plan **out) {
    luthier__planner pl;
    luthier_status s = LUTHIER_STATUS_OK;
    size_t k;
    int i;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!g || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: graph or out is NULL");
    *out = NULL;
    memset(&pl, 0, sizeof pl);
    if (desc) pl.pd = *desc;
    if ((s = luthier__plan_check_desc(ctx, g, &pl.pd)) != LUTHIER_STATUS_OK) return s;
    pl.pd.precision = luthier__plan_precision(pl.pd.precision, pl.pd.int8);
    if (pl.pd.precision == LUTHIER_PRECISION_INT8 && !pl.pd.int8)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: precision int8 without a calibration (luthier_plan_desc.int8)");
    if ((pl.pd.records || pl.pd.records_text) && !pl.pd.num_configs) return luthier__plan_with_records(ctx, g, &pl.pd, flags, out);
    if (!(pl.p = (luthier_plan *)luthier__zalloc(sizeof *pl.p))) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    pl.p->num_clusters = ctx->pool->num_clusters;
    pl.p->features = ctx->cpu_features;
    pl.ctx = ctx;
    pl.g = g;
    pl.flags = flags;
    pl.n = g->num_nodes;
    pl.h16 = luthier__f16_kernel(ctx, 64) ? pl.pd.fp16_activations >= 0 : pl.pd.fp16_activations > 0 ? 2 : 0;
    for (k = 0; k < sizeof luthier__passes / sizeof luthier__passes[0] && s == LUTHIER_STATUS_OK; k++) {
        s = luthier__passes[k].run(&pl);
        if (s == LUTHIER_STATUS_OK) luthier__plan_trace(&pl, luthier__passes[k].name);
    }
    if (pl.f)
        for (i = 0; i < pl.n; i++) {
            luthier__free(pl.f[i].w);
            luthier__free(pl.f[i].b);
        }
    luthier__free(pl.f);
    luthier__free(pl.prod);
    luthier__free(pl.cons);
    luthier__free(pl.order);
    if (s != LUTHIER_STATUS_OK) luthier_plan_destroy(pl.p);
    else *out = pl.p;
    return s;
}
#undef LUTHIER__PLFAIL
#undef LUTHIER__PLOOM

LUTHIER_API luthier_status luthier_plan_create(luthier_context *ctx, const luthier_graph *g,
                                               const luthier_plan_desc *desc, luthier_plan **out) {
    luthier_auto_policy saved;
    luthier_status s;
    if (ctx && desc && (unsigned)desc->precision >= (unsigned)LUTHIER_PRECISION_COUNT) {
        if (out) *out = NULL;
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: unknown precision %d", (int)desc->precision);
    }
    if (!ctx || !desc || desc->auto_policy == LUTHIER_AUTO_DEFAULT) return luthier__plan_create_ex(ctx, g, desc, 0, out);
    if ((unsigned)desc->auto_policy >= (unsigned)LUTHIER_AUTO_POLICY_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "plan: unknown auto_policy %d", (int)desc->auto_policy);
    saved = ctx->auto_policy;
    ctx->auto_policy = desc->auto_policy;
    s = luthier__plan_create_ex(ctx, g, desc, 0, out);
    ctx->auto_policy = saved;
    return s;
}

LUTHIER_API luthier_status luthier_plan_get_info(const luthier_plan *p, luthier_plan_info *out) {
    if (!p || !out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->num_steps = p->num_steps;
    out->num_inputs = p->num_inputs;
    out->num_outputs = p->num_outputs;
    out->weights_bytes = p->weights_bytes;
    out->arena_bytes = p->arena_bytes;
    out->sum_activation_bytes = p->sum_activation_bytes;
    out->num_fallbacks = p->fallbacks;
    out->workspace_bytes = p->workspace_bytes;
    out->flops = p->flops;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_plan_output_length(const luthier_plan *p, int i, int *axis, int64_t *length) {
    const int64_t *n;
    if (axis) *axis = -1;
    if (length) *length = -1;
    if (!p || i < 0 || i >= p->num_outputs) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!(n = luthier__vlen(p, p->outputs[i], -1))) return LUTHIER_STATUS_OK;
    if (axis) *axis = p->lens[p->vals[p->outputs[i]].tensor].axis;
    if (length) *length = *n;
    return LUTHIER_STATUS_OK;
}

/* ---- the ISA of a step (luthier_step_info.isa) ----
   Steps of a node run its row's run hook; the hooks listed here run something other than one
   operator pass of luthier_ops.h (luthier__op_isa). Rows added later default to the pass. */
LUTHIER_PRIVATE luthier__isa luthier__isa_view(unsigned f) { (void)f; return LUTHIER__ISA_NONE; }
LUTHIER_PRIVATE luthier__isa luthier__isa_copy(unsigned f) { (void)f; return LUTHIER__ISA_COPY; }
LUTHIER_PRIVATE luthier__isa luthier__isa_plain(unsigned f) { (void)f; return LUTHIER__ISA_SCALAR; }
static const struct {
    luthier__run_fn run;
    luthier__isa (*isa)(unsigned features);
} luthier__run_isas[] = {
    {luthier__run_view, luthier__isa_view},
    {luthier__run_concat_split, luthier__isa_copy},
    {luthier__run_gather, luthier__isa_copy},
    {luthier__run_transpose, luthier__op_transpose_isa},
    {luthier__run_reduce, luthier__isa_plain}, /* plain C (odometer over the reduced axes) */
    {luthier__run_depth_space, luthier__op_transpose_isa},
    {luthier__run_pad, luthier__isa_copy},
    {luthier__run_argext, luthier__isa_plain}, /* plain C (rows along an axis) */
    {luthier__run_topk, luthier__isa_plain},
    {luthier__run_nonzero, luthier__isa_plain},
    {luthier__run_cumsum, luthier__op_cumsum_isa},
    {luthier__run_trilu, luthier__isa_plain},
    {luthier__run_nms, luthier__isa_plain},
    {luthier__run_gather_elements, luthier__isa_plain}, /* plain C (>>ops-index) */
    {luthier__run_gather_nd, luthier__isa_copy},
    {luthier__run_scatter_nd, luthier__isa_plain},
    {luthier__run_scatter_elements, luthier__isa_plain},
};

/* Whether a step reads or writes a value (its present inputs, its outputs) of a datatype that
   `is` accepts: fp16 activations, or an integer tensor (i64, i32, bool), whose forms are plain C. */
LUTHIER_PRIVATE int luthier__dtype_f16(luthier_dtype t) { return t == LUTHIER__DTYPE_F16; }
LUTHIER_PRIVATE int luthier__dtype_integer(luthier_dtype t) {
    return t != LUTHIER_DTYPE_F32 && luthier__vdtype_of(t)->to_f32 < 0;
}
LUTHIER_PRIVATE int luthier__step_has(const luthier_plan *p, const luthier__pstep *st, int (*is)(luthier_dtype t)) {
    int k;
    for (k = 0; k < st->nin + st->nout; k++) {
        const int v = k < st->nin ? st->in[k] : st->out[k - st->nin];
        if (v >= 0 && is(p->vals[v].dtype)) return 1;
    }
    return 0;
}

LUTHIER_PRIVATE luthier__isa luthier__qconv_isa(const luthier_qconv2d_layer *L, unsigned features); /* luthier_int8.h */

LUTHIER_PRIVATE luthier__isa luthier__step_isa(const luthier_plan *p, const luthier__pstep *st) {
    const unsigned f = p->features;
    luthier__run_fn run;
    size_t i;
    if (st->kind == LUTHIER__STEP_CONVERT) return luthier__op_transpose_isa(f);
    if (st->kind == LUTHIER__STEP_NARROW_H16 || st->kind == LUTHIER__STEP_WIDEN_H16) return luthier__op_h16_isa(f);
    if (st->qconv) return luthier__qconv_isa(st->qconv, f);
    if (st->kind != LUTHIER__STEP_NODE || st->q) return luthier__op_u8_isa(f); /* (de)quantize, int8 add, pools */
    if (st->conv) return luthier__conv_isa(st->conv, f);
    if (st->kernel && st->kernel[0]) { /* dense, matmul */
        const luthier__kernel_entry *e = luthier__kernel_named(st->kernel);
        return e ? luthier__isa_of(e->isa) : LUTHIER__ISA_SCALAR;
    }
    run = luthier__ops[st->d.op].run;
    for (i = 0; i < sizeof luthier__run_isas / sizeof luthier__run_isas[0]; i++)
        if (luthier__run_isas[i].run == run)
            return luthier__run_isas[i].isa(f);
    if (luthier__step_has(p, st, luthier__dtype_integer)) return LUTHIER__ISA_SCALAR;
    return luthier__op_isa(f);
}

/* ---- luthier_plan_describe ---- */

typedef struct luthier__text {
    char *buf;
    size_t size, len;
} luthier__text;

LUTHIER__PRINTF(2, 3)
LUTHIER_PRIVATE void luthier__text_add(luthier__text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL, t->len < t->size ? t->size - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

/* "v12:f32 nhwc [1,64,56,56] arena" (=vN: an alias of value N) */
LUTHIER_PRIVATE void luthier__text_val(luthier__text *t, const luthier_plan *p, int v) {
    static const char *const where[] = {"-", "arena", "input", "const"};
    const luthier__pval *a = &p->vals[v];
    const int r = luthier__root(p, v);
    char shape[96];
    luthier__shape_str(a->rank, a->shape, shape, sizeof shape);
    luthier__text_add(t, "v%d:%s %s %s %s", v, luthier__dtype_name(a->dtype),
                      a->layout == LUTHIER__NHWC ? "nhwc" : "plain", shape, where[p->vals[r].storage & 3]);
    if (r != v) luthier__text_add(t, "=v%d", r);
    if (p->arena_bytes && p->vals[r].storage == LUTHIER__ST_ARENA) luthier__text_add(t, "@%zu", p->vals[r].offset);
}

LUTHIER_PRIVATE void luthier__text_step(luthier__text *t, const luthier_plan *p, int i) {
    static const char *const kinds[] = {"", "layout", "quantize", "dequantize"};
    const luthier__pstep *st = &p->steps[i];
    int k;
    luthier__text_add(t, "  %3d %-14s %-24s", i, st->kind ? kinds[st->kind & 3] : luthier_op_name(st->d.op), st->name);
    if (st->fused[0]) luthier__text_add(t, " +%s", st->fused);
    if (st->kind == LUTHIER__STEP_NODE && st->d.op == LUTHIER_OP_CONV2D && (st->conv || st->qconv))
        luthier__text_add(t, " [%s]", luthier_conv_algorithm_name(st->algorithm));
    if (st->kernel && st->kernel[0]) luthier__text_add(t, " [%s]", st->kernel);
    for (k = 0; k < LUTHIER_MAX_CLUSTERS; k++)
        if (st->cluster_kernels[k] && strcmp(st->cluster_kernels[k], st->kernel)) luthier__text_add(t, " [cluster %d: %s]", k, st->cluster_kernels[k]);
    luthier__text_add(t, " {%s}", luthier__isa_name(luthier__step_isa(p, st)));
    if (st->q) luthier__text_add(t, " int8");
    luthier__text_add(t, "\n        ");
    for (k = 0; k < st->nin; k++) {
        luthier__text_add(t, "%s", k ? ", " : "");
        if (st->in[k] < 0) luthier__text_add(t, "-");
        else luthier__text_val(t, p, st->in[k]);
    }
    if (st->residual >= 0) {
        luthier__text_add(t, " (+ ");
        luthier__text_val(t, p, st->residual);
        luthier__text_add(t, ")");
    }
    luthier__text_add(t, " -> ");
    for (k = 0; k < st->nout; k++) {
        luthier__text_add(t, "%s", k ? ", " : "");
        luthier__text_val(t, p, st->out[k]);
    }
    luthier__text_add(t, "\n");
}

LUTHIER_API size_t luthier_plan_describe(const luthier_plan *p, char *buf, size_t size) {
    luthier__text t;
    int i;
    t.buf = buf;
    t.size = buf ? size : 0;
    t.len = 0;
    if (t.size) buf[0] = 0;
    if (!p) return 0;
    luthier__text_add(&t, "plan: %d steps, %d values, %d inputs, %d outputs\n", p->num_steps, p->num_vals, p->num_inputs,
                      p->num_outputs);
    for (i = 0; i < p->num_steps; i++) luthier__text_step(&t, p, i);
    for (i = 0; i < p->num_outputs && p->outputs; i++) {
        luthier__text_add(&t, "  output %d: ", i);
        luthier__text_val(&t, p, p->outputs[i]);
        luthier__text_add(&t, "\n");
    }
    luthier__text_add(&t, "  arena %zu bytes (activations %zu), weights %zu bytes, workspace %zu bytes, %.4g GFLOP\n", p->arena_bytes,
                      p->sum_activation_bytes, p->weights_bytes, p->workspace_bytes, p->flops * 1e-9);
    return t.len;
}

LUTHIER_API luthier_status luthier_plan_step_info(const luthier_plan *p, int step, luthier_step_info *out) {
    const luthier__pstep *st;
    if (out) memset(out, 0, sizeof *out); /* (zeros on failure too) */
    if (!p || !out || step < 0 || step >= p->num_steps) return LUTHIER_STATUS_INVALID_ARGUMENT;
    st = &p->steps[step];
    out->name = st->name;
    out->op = st->kind == LUTHIER__STEP_NODE ? st->d.op : st->kind == LUTHIER__STEP_CONVERT ? LUTHIER_OP_TRANSPOSE : LUTHIER_OP_IDENTITY;
    out->int8 = st->q || st->kind == LUTHIER__STEP_QUANTIZE || st->kind == LUTHIER__STEP_DEQUANTIZE;
    out->fp16 = luthier__step_has(p, st, luthier__dtype_f16);
    out->fused = st->fused;
    out->node = st->node;
    out->algorithm = st->algorithm;
    out->kernel = st->kernel;
    memcpy(out->cluster_kernels, st->cluster_kernels, sizeof out->cluster_kernels);
    out->schedule = st->cfg.schedule;
    out->num_ratios = st->cfg.num_ratios;
    memcpy(out->ratios, st->cfg.ratios, sizeof out->ratios);
    out->flops = st->flops;
    out->bytes = st->bytes;
    out->last_seconds = st->seconds;
    out->isa = luthier__isa_name(luthier__step_isa(p, st));
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
    void *const *outputs;  /* the caller's output buffers when they hold their roots, else NULL */
    int num_over;          /* values whose memory is elsewhere during one step: value over_v[i] */
    const int *over_v;     /* at over_p[i] (luthier__run_h16_wide's fp32 copies) */
    void *const *over_p;
} luthier__runctx;

LUTHIER_PRIVATE void *luthier__ptr(const luthier__runctx *rc, int v) {
    const luthier__pval *r = &rc->p->vals[luthier__root(rc->p, v)];
    int i;
    for (i = 0; i < rc->num_over; i++)
        if (rc->over_v[i] == v) return rc->over_p[i];
    switch (r->storage) {
    case LUTHIER__ST_ARENA:
        return rc->outputs && r->output_index >= 0 ? rc->outputs[r->output_index] : (char *)rc->p->arena + r->offset;
    case LUTHIER__ST_INPUT: return (void *)rc->inputs[r->input_index];
    default: return (void *)r->cdata;
    }
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
        const luthier_pool_attrs *a = &st->d.attr.pool;
        size_t kh = (size_t)a->kernel[0], kw = (size_t)a->kernel[1], sh = (size_t)a->stride[0], sw = (size_t)a->stride[1];
        if (st->d.op == LUTHIER_OP_MAXPOOL)
            return luthier__op_qmaxpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3], kh, kw,
                                             sh, sw, (size_t)a->dilation[0], (size_t)a->dilation[1], (size_t)a->pads[0],
                                             (size_t)a->pads[1], (size_t)a->pads[2], (size_t)a->pads[3], (uint8_t *)op,
                                             (size_t)os[1], (size_t)os[2], x->qzero);
        return luthier__op_qavgpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3], kh, kw, sh, sw,
                                         (size_t)a->pads[0], (size_t)a->pads[1], (size_t)a->pads[2],
                                         (size_t)a->pads[3], a->count_include_pad, (uint8_t *)op, (size_t)os[1],
                                         (size_t)os[2], x->qzero);
    }
    default: /* GLOBAL_AVGPOOL, ADAPTIVE_AVGPOOL */
        return luthier__op_qadaptive_avgpool_nhwc(ctx, cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3],
                                                  (uint8_t *)op, (size_t)os[1], (size_t)os[2]);
    }
}

/* What a run hook gets: the step, its first input and output values with their physical
   shapes and pointers, and the split (cfg). LUTHIER__RUN_ARGS unpacks it under the names the
   hooks use. */
struct luthier__run_args {
    luthier_context *ctx;
    const luthier__runctx *rc;
    luthier__pstep *st;
    luthier_plan *p;
    const luthier__pval *x, *o;
    const float *xp;
    float *op;
    const luthier__op_cfg *cfg;
    const int64_t *xs, *os;
};
#define LUTHIER__RUN_ARGS                                                                                     \
    luthier_context *ctx = arg->ctx;                                                                          \
    const luthier__runctx *rc = arg->rc;                                                                      \
    luthier__pstep *st = arg->st;                                                                             \
    luthier_plan *p = arg->p;                                                                                 \
    const luthier__pval *x = arg->x, *o = arg->o;                                                             \
    const float *xp = arg->xp;                                                                                \
    float *op = arg->op;                                                                                      \
    const luthier__op_cfg cfg = *arg->cfg;                                                                    \
    const int64_t *xs = arg->xs, *os = arg->os;                                                               \
    (void)ctx, (void)rc, (void)st, (void)p, (void)x, (void)o, (void)xp, (void)op, (void)cfg, (void)xs, (void)os

/* Operators a plan turns into views run no step. */
LUTHIER_PRIVATE luthier_status luthier__run_view(const luthier__run_args *arg) {
    return luthier__fail(arg->ctx, LUTHIER_STATUS_UNSUPPORTED, "step '%s': operator %s is a view and has no runner",
                         arg->st->name, luthier_op_name(arg->st->d.op));
}

LUTHIER_PRIVATE luthier_status luthier__run_conv2d(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    return luthier__conv2d_run_next(ctx, st->conv, xp, op, &st->next);
}

LUTHIER_PRIVATE luthier_status luthier__run_dense(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    luthier_sgemm_desc sd;
    if (st->conv) return luthier__conv2d_run_next(ctx, st->conv, xp, op, &st->next); /* fp16 (luthier__plan_dense_h16) */
    memset(&sd, 0, sizeof sd);
    sd.n = os[o->rank - 1];
    sd.k = xs[x->rank - 1];
    sd.m = (int64_t)(luthier__prod(xs, 0, x->rank) / (size_t)sd.k);
    sd.trans_b = !st->d.attr.dense.trans_b;
    sd.bias = st->bias;
    sd.activation = st->act;
    sd.clamp_min = st->cmin;
    sd.clamp_max = st->cmax;
    sd.accumulate = st->residual >= 0;
    sd.schedule = st->cfg.schedule;
    sd.ratios = cfg.ratios;
    sd.num_ratios = cfg.num_ratios;
    sd.cluster_kernels = st->explicit_kernels ? st->cluster_kernels : NULL;
    return luthier_sgemm_packed(ctx, &sd, xp, st->pb, op);
}

LUTHIER_PRIVATE luthier_status luthier__run_matmul(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
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
    sd.lda = (int64_t)k; sd.ldc = (int64_t)n; sd.ldb = (int64_t)(st->d.attr.matmul.trans_b ? k : n);
    sd.trans_b = st->d.attr.matmul.trans_b;
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
        if ((s = luthier__run(ctx, &sd, &luthier__ukernels[st->kernel_index], xp + aoff * m * k, &st->bl, st->packed, op + bi * m * n)) !=
            LUTHIER_STATUS_OK)
            return s;
    }
    return LUTHIER_STATUS_OK;
}

/* CONV_TRANSPOSE on NHWC, chunk by chunk of input rows: per group one GEMM on the packed weights
   writes cols[pixel][g][ky][kx][co] = sum over ci of x[pixel][g * Cin_g + ci] * w[g * Cin_g + ci][co][ky][kx],
   then col2im gathers the chunk's columns into the output rows they reach (each row starts at
   the bias and gets the activation's clamp once its last input row is in). */
LUTHIER_PRIVATE luthier_status luthier__run_conv_transpose(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier_conv_transpose_attrs *a = &st->d.attr.conv_transpose;
    const luthier__convt_plan *cp = (const luthier__convt_plan *)st->aux;
    const size_t groups = (size_t)a->groups, cin = (size_t)xs[3], cing = cin / groups, xrows = (size_t)(xs[0] * xs[1]);
    luthier__op_col2im_job j;
    luthier_sgemm_desc sd;
    luthier_status s;
    size_t r0, g;
    memset(&j, 0, sizeof j);
    j.cols = cp->cols; j.bias = st->bias; j.y = op;
    j.n = (size_t)xs[0]; j.h = (size_t)xs[1]; j.w = (size_t)xs[2]; j.c = (size_t)os[3];
    j.groups = groups; j.cg = j.c / groups; j.kh = cp->kh; j.kw = cp->kw;
    j.sh = (size_t)a->stride[0]; j.sw = (size_t)a->stride[1]; j.dh = (size_t)a->dilation[0]; j.dw = (size_t)a->dilation[1];
    j.oh = (size_t)os[1]; j.ow = (size_t)os[2];
    j.pt = (ptrdiff_t)a->pads[0]; j.pl = (ptrdiff_t)a->pads[1];
    j.clamp = luthier__activation_bounds(st->act, st->cmin, st->cmax, &j.lo, &j.hi);
    if (cp->direct) {
        j.x = xp;
        j.wt = st->packed;
        j.r1 = xrows;
        j.first = 1;
        return luthier__op_col2im_nhwc(ctx, &cfg, &j);
    }
    memset(&sd, 0, sizeof sd);
    sd.n = (int64_t)cp->ncols; sd.k = (int64_t)cing;
    sd.lda = (int64_t)cin; sd.ldc = (int64_t)(groups * cp->ncols);
    sd.schedule = st->cfg.schedule; sd.ratios = cfg.ratios; sd.num_ratios = cfg.num_ratios;
    for (r0 = 0; r0 < xrows; r0 += cp->rows) {
        j.r0 = r0;
        j.r1 = luthier__min_sz(xrows, r0 + cp->rows);
        j.first = r0 == 0;
        sd.m = (int64_t)((j.r1 - r0) * j.w);
        for (g = 0; g < groups; g++)
            if ((s = luthier__run(ctx, &sd, &luthier__ukernels[st->kernel_index], xp + r0 * j.w * cin + g * cing, &st->bl,
                                  st->packed + g * cp->group_floats, cp->cols + g * cp->ncols)) != LUTHIER_STATUS_OK)
                return s;
        if ((s = luthier__op_col2im_nhwc(ctx, &cfg, &j)) != LUTHIER_STATUS_OK) return s;
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_pool(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier_pool_attrs *a = &st->d.attr.pool;
    if (x->dtype == LUTHIER__DTYPE_F16) /* fp16 activations (luthier__h16_maxpool) */
        return luthier__op_maxpool_h16_nhwc(ctx, &cfg, (const uint16_t *)(const void *)xp, (size_t)xs[0], (size_t)xs[1],
                                            (size_t)xs[2], (size_t)xs[3], (size_t)a->kernel[0], (size_t)a->kernel[1],
                                            (size_t)a->stride[0], (size_t)a->stride[1], (size_t)a->dilation[0],
                                            (size_t)a->dilation[1], (size_t)a->pads[0], (size_t)a->pads[1], (size_t)a->pads[2],
                                            (size_t)a->pads[3], (uint16_t *)(void *)op, (size_t)os[1], (size_t)os[2]);
    return luthier__op_pool2d_nhwc(ctx, &cfg, st->d.op == LUTHIER_OP_MAXPOOL, xp, (size_t)xs[0], (size_t)xs[1],
                                   (size_t)xs[2], (size_t)xs[3], (size_t)a->kernel[0], (size_t)a->kernel[1],
                                   (size_t)a->stride[0], (size_t)a->stride[1], (size_t)a->dilation[0], (size_t)a->dilation[1],
                                   (size_t)a->pads[0], (size_t)a->pads[1], (size_t)a->pads[2], (size_t)a->pads[3],
                                   a->count_include_pad, op, (size_t)os[1], (size_t)os[2]);
}

LUTHIER_PRIVATE luthier_status luthier__run_global_pool(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    return luthier__op_adaptive_avgpool_nhwc(ctx, &cfg, xp, (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)xs[3],
                                             op, (size_t)os[1], (size_t)os[2]);
}

LUTHIER_PRIVATE luthier_status luthier__run_lrn(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier_lrn_attrs *a = &st->d.attr.lrn;
    return luthier__op_lrn_nhwc(ctx, &cfg, xp, op, luthier__prod(xs, 0, 3), (size_t)xs[3], (size_t)a->size, a->alpha,
                                a->beta, a->bias);
}

LUTHIER_PRIVATE luthier_status luthier__run_batch_norm(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    if (x->layout == LUTHIER__NHWC)
        return luthier__op_channel_affine(ctx, &cfg, xp, op, luthier__prod(xs, 0, 3), (size_t)xs[3], 1, st->scale,
                                          st->shift, LUTHIER_ACTIVATION_NONE, 0, 0);
    return luthier__op_channel_affine(ctx, &cfg, xp, op, (size_t)xs[0], (size_t)xs[1], luthier__prod(xs, 2, x->rank),
                                      st->scale, st->shift, LUTHIER_ACTIVATION_NONE, 0, 0);
}

LUTHIER_PRIVATE luthier_status luthier__run_unary(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    float a, b;
    const luthier__unary u = luthier__node_unary(&st->d, &a, &b);
    if (o->dtype == LUTHIER__DTYPE_F16) /* fp16 activations (luthier__h16_elt) */
        return luthier__op_unary_h16(ctx, &cfg, u, a, b, (const uint16_t *)(const void *)xp, (uint16_t *)(void *)op,
                                     o->bytes / sizeof(uint16_t));
    return luthier__op_unary(ctx, &cfg, u, a, b, xp, op, o->bytes / sizeof(float));
}


LUTHIER_PRIVATE luthier_status luthier__run_binary(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    int64_t as[LUTHIER_MAX_RANK], bs[LUTHIER_MAX_RANK];
    luthier__binary kind = st->d.op == LUTHIER_OP_PRELU ? LUTHIER__BINARY_PRELU
                                                        : (luthier__binary)(LUTHIER__BINARY_ADD + (st->d.op - LUTHIER_OP_ADD));
    luthier__bshape(x, o->layout, o->rank, as);
    luthier__bshape(&p->vals[st->in[1]], o->layout, o->rank, bs);
    if (o->dtype == LUTHIER__DTYPE_F16) /* fp16 activations (luthier__h16_elt): either operand fp16 */
        return luthier__op_binary_h16(ctx, &cfg, kind, xp, x->dtype == LUTHIER__DTYPE_F16, as, luthier__ptr(rc, st->in[1]),
                                      p->vals[st->in[1]].dtype == LUTHIER__DTYPE_F16, bs, (uint16_t *)(void *)op, os, o->rank,
                                      st->act, st->cmin, st->cmax);
    return luthier__op_binary(ctx, &cfg, kind, xp, as, (const float *)luthier__ptr(rc, st->in[1]), bs, op, os, o->rank,
                              st->act, st->cmin, st->cmax);
}

/* The comparisons and AND / OR / XOR (f32 0/1 out), MOD: the binary kernel's kinds in the rows'
   order, the i64 form where the inputs are i64. */
LUTHIER_PRIVATE luthier_status luthier__run_compare(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *b = &p->vals[st->in[1]];
    int64_t as[LUTHIER_MAX_RANK], bs[LUTHIER_MAX_RANK];
    luthier__binary kind = (luthier__binary)(LUTHIER__BINARY_EQUAL + (st->d.op - LUTHIER_OP_EQUAL));
    if (st->d.op == LUTHIER_OP_MOD && st->d.attr.mod.fmod) kind = LUTHIER__BINARY_FMOD;
    luthier__bshape(x, o->layout, o->rank, as);
    luthier__bshape(b, o->layout, o->rank, bs);
    if (x->dtype == LUTHIER_DTYPE_I64)
        return luthier__op_binary_i64(ctx, &cfg, kind, (const int64_t *)luthier__ptr(rc, st->in[0]), as,
                                      (const int64_t *)luthier__ptr(rc, st->in[1]), bs,
                                      o->dtype == LUTHIER_DTYPE_F32 ? op : NULL,
                                      o->dtype == LUTHIER_DTYPE_I64 ? (int64_t *)luthier__ptr(rc, st->out[0]) : NULL, os, o->rank);
    return luthier__op_binary(ctx, &cfg, kind, xp, as, (const float *)luthier__ptr(rc, st->in[1]), bs, op, os, o->rank,
                              LUTHIER_ACTIVATION_NONE, 0, 0);
}

/* MOD: the binary pass (f32, exact), or the i64 form (plain C: luthier__dtype_integer). */
LUTHIER_PRIVATE luthier_status luthier__run_mod(const luthier__run_args *arg) { return luthier__run_compare(arg); }

LUTHIER_PRIVATE luthier_status luthier__run_where(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *a = &p->vals[st->in[1]], *b = &p->vals[st->in[2]];
    const int i64 = o->dtype == LUTHIER_DTYPE_I64;
    void *ap = luthier__ptr(rc, st->in[1]), *bp = luthier__ptr(rc, st->in[2]), *out = luthier__ptr(rc, st->out[0]);
    int64_t cs[LUTHIER_MAX_RANK], as[LUTHIER_MAX_RANK], bs[LUTHIER_MAX_RANK];
    luthier__bshape(x, o->layout, o->rank, cs);
    luthier__bshape(a, o->layout, o->rank, as);
    luthier__bshape(b, o->layout, o->rank, bs);
    return luthier__op_where(ctx, &cfg, xp, cs, i64 ? NULL : (const float *)ap, i64 ? (const int64_t *)ap : NULL, as,
                             i64 ? NULL : (const float *)bp, i64 ? (const int64_t *)bp : NULL, bs,
                             i64 ? NULL : (float *)out, i64 ? (int64_t *)out : NULL, os, o->rank);
}

LUTHIER_PRIVATE luthier_status luthier__run_cast(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    /* luthier_cast_to and luthier__cast list the targets in the same order */
    const int src = x->dtype == LUTHIER_DTYPE_F32 ? 0 : x->dtype == LUTHIER_DTYPE_I64 ? 1 : x->dtype == LUTHIER_DTYPE_I32 ? 2 : 3;
    return luthier__op_cast(ctx, &cfg, src, (luthier__cast)st->d.attr.cast.to, luthier__ptr(rc, st->in[0]),
                            luthier__ptr(rc, st->out[0]), o->bytes / luthier__dtype_size(o->dtype));
}

/* CONCAT along an axis with a run-time length: each input's valid entries packed one after the
   other in every outer row, zeros after them; the output's length is their sum. Plain layout. */
LUTHIER_PRIVATE luthier_status luthier__run_concat_lens(const luthier__run_args *arg, int axis) {
    LUTHIER__RUN_ARGS;
    const size_t w = o->dtype == LUTHIER_DTYPE_I64 ? 2 : 1, cap = (size_t)os[axis];
    const size_t outer = luthier__prod(os, 0, axis), inner = luthier__prod(os, axis + 1, o->rank) * w;
    size_t r, pos = 0;
    int i;
    for (r = 0; r < outer; r++) {
        for (i = 0, pos = 0; i < st->nin; i++) {
            const luthier__pval *v = &p->vals[st->in[i]];
            const int64_t *n = luthier__vlen(p, st->in[i], axis);
            const size_t len = n ? (size_t)*n : (size_t)v->shape[axis];
            memcpy(op + (r * cap + pos) * inner, (const float *)luthier__ptr(rc, st->in[i]) + r * (size_t)v->shape[axis] * inner,
                   len * inner * sizeof(float));
            pos += len;
        }
        memset(op + (r * cap + pos) * inner, 0, (cap - pos) * inner * sizeof(float));
    }
    *luthier__vlen(p, st->out[0], axis) = (int64_t)pos;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_concat_split(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    if (st->d.op == LUTHIER_OP_CONCAT && luthier__vlen(p, st->out[0], luthier__norm_axis(st->d.attr.axis.axis, o->rank, 0)))
        return luthier__run_concat_lens(arg, luthier__norm_axis(st->d.attr.axis.axis, o->rank, 0));
    const float *srcs[64];
    float *dsts[LUTHIER_MAX_NODE_OUTPUTS];
    size_t lens[64];
    int many = st->d.op == LUTHIER_OP_CONCAT ? st->nin : st->nout, i;
    const luthier__pval *whole = st->d.op == LUTHIER_OP_CONCAT ? o : x;
    int axis = luthier__phys_axis(whole, luthier__norm_axis(st->d.attr.axis.axis, whole->rank, 0));
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
    if (st->d.op == LUTHIER_OP_CONCAT && whole->dtype == LUTHIER__DTYPE_F16) { /* pairs of halves (luthier__h16_concat) */
        for (i = 0; i < many; i++) lens[i] /= 2;
        return luthier__op_concat(ctx, &cfg, srcs, lens, many, luthier__prod(ws, 0, axis), luthier__prod(ws, axis + 1, whole->rank), op);
    }
    if (st->d.op == LUTHIER_OP_CONCAT) /* i64: pairs of floats */
        return luthier__op_concat(ctx, &cfg, srcs, lens, many, luthier__prod(ws, 0, axis),
                                  luthier__prod(ws, axis + 1, whole->rank) * (whole->dtype == LUTHIER_DTYPE_I64 ? 2 : 1), op);
    return luthier__op_split(ctx, &cfg, xp, luthier__prod(ws, 0, axis), luthier__prod(ws, axis + 1, whole->rank), many,
                             lens, dsts);
}

LUTHIER_PRIVATE luthier_status luthier__run_softmax(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    int axis = luthier__phys_axis(x, luthier__norm_axis(st->d.attr.softmax.axis, x->rank, 0));
    return luthier__op_softmax(ctx, &cfg, xp, op, luthier__prod(xs, 0, axis), (size_t)xs[axis],
                               luthier__prod(xs, axis + 1, x->rank), st->d.attr.softmax.log);
}

LUTHIER_PRIVATE luthier_status luthier__run_layer_norm(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    int axis = luthier__norm_axis(st->d.attr.layer_norm.axis, x->rank, 0);
    return luthier__op_layernorm(ctx, &cfg, xp, op, luthier__prod(xs, 0, axis), luthier__prod(xs, axis, x->rank),
                                 st->scale, st->shift, st->d.attr.layer_norm.epsilon);
}

/* TRANSPOSE; i64 as f32 pairs: one more axis of 2 that stays last. */
LUTHIER_PRIVATE luthier_status luthier__run_transpose(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    int64_t s[LUTHIER_MAX_RANK + 1];
    int perm[LUTHIER_MAX_RANK + 1], k;
    if (x->dtype != LUTHIER_DTYPE_I64) return luthier__op_transpose(ctx, &cfg, xp, op, x->rank, xs, st->perm);
    for (k = 0; k < x->rank; k++) s[k] = xs[k], perm[k] = st->perm[k];
    s[x->rank] = 2, perm[x->rank] = x->rank;
    return luthier__op_transpose(ctx, &cfg, xp, op, x->rank + 1, s, perm);
}

/* GATHER (f32 data, or i64 as pairs of floats); with run-time lengths (luthier__gather_lens), per
   outer row: the valid indices against the data's valid length, zeros after them. */
LUTHIER_PRIVATE luthier_status luthier__run_gather(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *iv = &p->vals[st->in[1]];
    const int axis = luthier__norm_axis(st->d.attr.axis.axis, x->rank, 0);
    const size_t w = x->dtype == LUTHIER_DTYPE_I64 ? 2 : 1, outer = luthier__prod(xs, 0, axis), alen = (size_t)xs[axis];
    const size_t inner = luthier__prod(xs, axis + 1, x->rank) * w, cap = iv->bytes / sizeof(int64_t);
    const int64_t *xn = luthier__vlen(p, st->in[0], axis), *in = luthier__vlen(p, st->in[1], -1);
    const int64_t *idx = (const int64_t *)luthier__ptr(rc, st->in[1]);
    size_t valid = alen, num = cap, row;
    if (!xn && !in) return luthier__op_gather(ctx, &cfg, xp, outer, alen, inner, idx, cap, op);
    if (xn) valid = (size_t)*xn;
    if (in) num = (size_t)*in * (cap / (size_t)iv->shape[p->lens[iv->tensor].axis]);
    else num = valid < cap ? valid : cap, *luthier__vlen(p, st->out[0], -1) = (int64_t)num; /* a prefix */
    for (row = 0; row < outer; row++) {
        luthier_status s = num ? luthier__op_gather(ctx, &cfg, xp + row * alen * inner, 1, valid, inner, idx, num, op + row * cap * inner)
                               : LUTHIER_STATUS_OK;
        if (s != LUTHIER_STATUS_OK) return s;
        memset(op + (row * cap + num) * inner, 0, (cap - num) * inner * sizeof(float));
    }
    return LUTHIER_STATUS_OK;
}

/* REDUCE of x with a run-time length n along axis a (a prefix: only 1s before it): over the
   shape with n there; a kept axis leaves zeros in the output past its n rows. */
LUTHIER_PRIVATE luthier_status luthier__run_reduce_lens(const luthier__run_args *arg, const int *red, int a, int64_t n) {
    LUTHIER__RUN_ARGS;
    int64_t s[LUTHIER_MAX_RANK];
    const size_t total = luthier__prod(os, 0, o->rank), cap = (size_t)xs[a];
    const size_t made = red[a] ? total : total / cap * (size_t)n;
    memcpy(s, xs, sizeof(int64_t) * (size_t)x->rank);
    s[a] = n;
    memset(op + made, 0, (total - made) * sizeof(float));
    return made ? luthier__op_reduce(ctx, &cfg, xp, op, x->rank, s, red, (int)st->d.attr.reduce.kind) : LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_reduce(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    int red[LUTHIER_MAX_RANK];
    const int64_t *n = luthier__vlen(p, st->in[0], -1);
    (void)luthier__reduce_axes(&st->d.attr.reduce, x->rank, red); /* checked when the node was added */
    if (n) return luthier__run_reduce_lens(arg, red, p->lens[x->tensor].axis, *n);
    return luthier__op_reduce(ctx, &cfg, xp, op, x->rank, xs, red, (int)st->d.attr.reduce.kind);
}

LUTHIER_PRIVATE luthier_status luthier__run_attention(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *k = &p->vals[st->in[1]], *v = &p->vals[st->in[2]];
    int r = x->rank;
    size_t d = (size_t)xs[r - 1];
    float *scratch = (float *)luthier__context_workspace(ctx, p->workspace_bytes);
    if (!scratch) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "attention: no workspace");
    return luthier__op_attention(ctx, &cfg, xp, (const float *)luthier__ptr(rc, st->in[1]),
                                 (const float *)luthier__ptr(rc, st->in[2]), op, luthier__prod(xs, 0, r - 2),
                                 (size_t)xs[r - 2], (size_t)k->shape[r - 2], d, (size_t)v->shape[r - 1],
                                 st->d.attr.attention.has_scale ? st->d.attr.attention.scale : (float)(1.0 / sqrt((double)d)),
                                 st->d.attr.attention.causal, scratch);
}

LUTHIER_PRIVATE luthier_status luthier__run_resize(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__op_rs_plan *rp = (const luthier__op_rs_plan *)st->aux;
    if (x->layout == LUTHIER__NHWC) /* [N][H][W][C] */
        return luthier__op_resize(ctx, &cfg, rp, xp, op, (size_t)xs[0], (size_t)xs[3]);
    return luthier__op_resize(ctx, &cfg, rp, xp, op, luthier__prod(xs, 0, luthier__resize_first(x->rank)), 1);
}

/* DEPTH_TO_SPACE, SPACE_TO_DEPTH: one transpose of a 6-D view of the input. */
LUTHIER_PRIVATE luthier_status luthier__run_depth_space(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    static const int perms[2][3][6] = {
        {{0, 3, 4, 1, 5, 2}, {0, 1, 4, 2, 5, 3}, {0, 3, 5, 1, 2, 4}},  /* NCHW: DCR, CRD, space_to_depth */
        {{0, 1, 3, 2, 4, 5}, {0, 1, 4, 2, 5, 3}, {0, 1, 3, 2, 4, 5}}}; /* NHWC */
    const int nhwc = x->layout == LUTHIER__NHWC, d2s = st->d.op == LUTHIER_OP_DEPTH_TO_SPACE;
    const int which = d2s ? st->d.attr.depth_to_space.mode : 2;
    const int64_t b = d2s ? st->d.attr.depth_to_space.blocksize : st->d.attr.space_to_depth.blocksize;
    const int64_t n = xs[0], c = nhwc ? xs[3] : xs[1], h = nhwc ? xs[1] : xs[2], w = nhwc ? xs[2] : xs[3];
    int64_t v[6];
    if (d2s && !nhwc && which == 0) v[0] = n, v[1] = b, v[2] = b, v[3] = c / (b * b), v[4] = h, v[5] = w;
    else if (d2s && !nhwc) v[0] = n, v[1] = c / (b * b), v[2] = b, v[3] = b, v[4] = h, v[5] = w;
    else if (d2s && which == 0) v[0] = n, v[1] = h, v[2] = w, v[3] = b, v[4] = b, v[5] = c / (b * b);
    else if (d2s) v[0] = n, v[1] = h, v[2] = w, v[3] = c / (b * b), v[4] = b, v[5] = b;
    else if (!nhwc) v[0] = n, v[1] = c, v[2] = h / b, v[3] = b, v[4] = w / b, v[5] = b;
    else v[0] = n, v[1] = h / b, v[2] = b, v[3] = w / b, v[4] = b, v[5] = c;
    return luthier__op_transpose(ctx, &cfg, xp, op, 6, v, perms[nhwc][which]);
}

LUTHIER_PRIVATE luthier_status luthier__run_pad(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier_pad_attrs *a = &st->d.attr.pad;
    int64_t begin[LUTHIER_MAX_RANK];
    int k;
    for (k = 0; k < x->rank; k++) begin[luthier__phys_axis(x, k)] = a->begin[k];
    return luthier__op_pad(ctx, &cfg, xp, op, x->rank, xs, os, begin, a->mode, a->value);
}

/* ARGMAX, ARGMIN, TOPK, CUMSUM: rows along the axis (plain layout). */
LUTHIER_PRIVATE int luthier__run_axis_of(const luthier__pstep *st, int rank) {
    const int a = st->d.op == LUTHIER_OP_ARGMAX ? st->d.attr.argmax.axis : st->d.op == LUTHIER_OP_ARGMIN ? st->d.attr.argmin.axis
                  : st->d.op == LUTHIER_OP_TOPK ? st->d.attr.topk.axis : st->d.attr.cumsum.axis;
    return luthier__norm_axis(a, rank, 0);
}

LUTHIER_PRIVATE luthier_status luthier__run_argext(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const int axis = luthier__run_axis_of(st, x->rank);
    const luthier_argmax_attrs *a = st->d.op == LUTHIER_OP_ARGMAX ? &st->d.attr.argmax : &st->d.attr.argmin;
    return luthier__op_argext(ctx, &cfg, xp, (int64_t *)(void *)op, luthier__prod(xs, 0, axis), (size_t)xs[axis],
                              luthier__prod(xs, axis + 1, x->rank), st->d.op == LUTHIER_OP_ARGMIN, a->select_last_index);
}

/* TOPK over an axis with a run-time length n: the first min(k, n) of each row, zeros after them. */
LUTHIER_PRIVATE luthier_status luthier__run_topk_lens(const luthier__run_args *arg, int axis, size_t n) {
    LUTHIER__RUN_ARGS;
    const size_t outer = luthier__prod(xs, 0, axis), len = (size_t)xs[axis], inner = luthier__prod(xs, axis + 1, x->rank);
    const size_t k = (size_t)st->d.attr.topk.k, kk = n < k ? n : k;
    int64_t *ix = (int64_t *)luthier__ptr(rc, st->out[1]);
    size_t row;
    for (row = 0; row < outer; row++) {
        luthier_status s = kk ? luthier__op_topk(ctx, &cfg, xp + row * len * inner, op + row * k * inner, ix + row * k * inner, 1, n,
                                                 inner, kk, st->d.attr.topk.largest)
                              : LUTHIER_STATUS_OK;
        if (s != LUTHIER_STATUS_OK) return s;
        memset(op + (row * k + kk) * inner, 0, (k - kk) * inner * sizeof(float));
        memset(ix + (row * k + kk) * inner, 0, (k - kk) * inner * sizeof(int64_t));
    }
    *luthier__vlen(p, st->out[0], -1) = (int64_t)kk;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_topk(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const int axis = luthier__run_axis_of(st, x->rank);
    const int64_t *n = luthier__vlen(p, st->in[0], axis);
    if (n) return luthier__run_topk_lens(arg, axis, (size_t)*n);
    return luthier__op_topk(ctx, &cfg, xp, op, (int64_t *)luthier__ptr(rc, st->out[1]), luthier__prod(xs, 0, axis), (size_t)xs[axis],
                            luthier__prod(xs, axis + 1, x->rank), (size_t)st->d.attr.topk.k, st->d.attr.topk.largest);
}

LUTHIER_PRIVATE luthier_status luthier__run_cumsum(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const int axis = luthier__run_axis_of(st, x->rank);
    return luthier__op_cumsum(ctx, &cfg, xp, op, luthier__prod(xs, 0, axis), (size_t)xs[axis], luthier__prod(xs, axis + 1, x->rank),
                              st->d.attr.cumsum.exclusive, st->d.attr.cumsum.reverse);
}

LUTHIER_PRIVATE luthier_status luthier__run_trilu(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    return luthier__op_trilu(ctx, &cfg, xp, op, luthier__prod(xs, 0, x->rank - 2), (size_t)xs[x->rank - 2], (size_t)xs[x->rank - 1],
                             st->d.attr.trilu.upper, st->d.attr.trilu.k);
}

LUTHIER_PRIVATE luthier_status luthier__run_nms(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *sc = &p->vals[st->in[1]];
    void *scratch = luthier__context_workspace(ctx, p->workspace_bytes);
    int64_t count = 0;
    luthier_status s;
    const int64_t *n = luthier__vlen(p, st->in[0], 1); /* the boxes' run-time length (one batch, one class) */
    if (!scratch) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "non_max_suppression: no workspace");
    s = luthier_nms(xp, (const float *)luthier__ptr(rc, st->in[1]), xs[0], sc->shape[1], n ? *n : xs[1], &st->d.attr.nms,
                    (int64_t *)(void *)op, os[0], &count, scratch);
    *(int64_t *)luthier__ptr(rc, st->out[1]) = count;
    *luthier__vlen(p, st->out[0], 0) = count < os[0] ? count : os[0];
    if (s != LUTHIER_STATUS_OK) /* the bound holds every selection: only a broken invariant lands here */
        return luthier__fail(ctx, s, "non_max_suppression: %s", luthier_status_string(s));
    return LUTHIER_STATUS_OK;
}

/* >>nms: luthier_nms (see its declaration). */
typedef struct luthier__nms_cand {
    float score;
    int64_t box;
} luthier__nms_cand;

LUTHIER_API size_t luthier_nms_scratch_bytes(int64_t num_boxes) {
    size_t bytes;
    if (num_boxes < 0 || !luthier__size_mul((size_t)num_boxes, sizeof(luthier__nms_cand) + sizeof(int64_t), &bytes)) return 0;
    return bytes;
}

/* Higher score first, then the lower box. */
LUTHIER_PRIVATE int luthier__nms_order(const void *pa, const void *pb) {
    const luthier__nms_cand *a = (const luthier__nms_cand *)pa, *b = (const luthier__nms_cand *)pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->box < b->box ? -1 : a->box > b->box;
}

/* A box as [ymin, xmin, ymax, xmax], computed as the ONNX reference does (its max_min for
   corners: NaN coordinates keep their place). */
LUTHIER_PRIVATE void luthier__nms_corners(const float *b, int center, float *c) {
    if (center) {
        const float hw = b[2] / 2, hh = b[3] / 2;
        c[0] = b[1] - hh, c[1] = b[0] - hw, c[2] = b[1] + hh, c[3] = b[0] + hw;
    } else {
        c[0] = b[0] >= b[2] ? b[2] : b[0], c[2] = b[0] >= b[2] ? b[0] : b[2];
        c[1] = b[1] >= b[3] ? b[3] : b[1], c[3] = b[1] >= b[3] ? b[1] : b[3];
    }
}

/* Whether boxes a and b overlap by IoU > thr (the reference's suppress_by_iou, in f32; its
   max(p, q) is q > p ? q : p and min(p, q) is q < p ? q : p, as Python's). */
LUTHIER_PRIVATE int luthier__nms_suppresses(const float *a, const float *b, int center, float thr) {
    float ca[4], cb[4], ix0, ix1, iy0, iy1, inter, area_a, area_b, uni;
    luthier__nms_corners(a, center, ca);
    luthier__nms_corners(b, center, cb);
    ix0 = cb[1] > ca[1] ? cb[1] : ca[1], ix1 = cb[3] < ca[3] ? cb[3] : ca[3];
    if (ix1 <= ix0) return 0;
    iy0 = cb[0] > ca[0] ? cb[0] : ca[0], iy1 = cb[2] < ca[2] ? cb[2] : ca[2];
    if (iy1 <= iy0) return 0;
    inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0) return 0;
    area_a = (ca[3] - ca[1]) * (ca[2] - ca[0]);
    area_b = (cb[3] - cb[1]) * (cb[2] - cb[0]);
    uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return 0;
    return inter / uni > thr;
}

/* One (batch, class): appends its selections to selected (rows past capacity only counted). */
LUTHIER_PRIVATE void luthier__nms_class(const float *boxes, const float *scores, int64_t b, int64_t c, int64_t n,
                                        const luthier_nms_attrs *a, luthier__nms_cand *cand, int64_t *kept,
                                        int64_t *selected, int64_t capacity, int64_t *count) {
    int64_t m = 0, nk = 0, t, q;
    for (t = 0; t < n; t++) {
        const float s = scores[t];
        if (s != s || (a->use_score_threshold && !(s > a->score_threshold))) continue;
        cand[m].score = s, cand[m].box = t, m++;
    }
    if (m > 1) qsort(cand, (size_t)m, sizeof *cand, luthier__nms_order);
    for (t = 0; t < m && nk < a->max_output_boxes_per_class; t++) {
        const float *bx = boxes + cand[t].box * 4;
        for (q = 0; q < nk; q++)
            if (luthier__nms_suppresses(bx, boxes + kept[q] * 4, a->center_point_box, a->iou_threshold)) break;
        if (q < nk) continue;
        kept[nk++] = cand[t].box;
        if (*count < capacity) {
            int64_t *row = selected + *count * 3;
            row[0] = b, row[1] = c, row[2] = cand[t].box;
        }
        ++*count;
    }
}

LUTHIER_API luthier_status luthier_nms(const float *boxes, const float *scores, int64_t batches, int64_t classes,
                                       int64_t num_boxes, const luthier_nms_attrs *attrs, int64_t *selected,
                                       int64_t capacity, int64_t *count, void *scratch) {
    const size_t bytes = luthier_nms_scratch_bytes(num_boxes);
    void *owned = NULL;
    int64_t b, c, e;
    if (count) *count = 0;
    if (!attrs || !count || batches < 0 || classes < 0 || num_boxes < 0 || capacity < 0 || (capacity && !selected) ||
        ((!boxes || !scores) && batches && classes && num_boxes) || luthier__nms_attrs_bad(attrs) ||
        (num_boxes && !bytes) || (capacity > (int64_t)(LUTHIER__SIZE_LIMIT / 24)))
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!scratch && bytes && !(scratch = owned = luthier__alloc(bytes))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (b = 0; b < batches && num_boxes > 0; b++) /* no boxes: nothing selected (and no scratch) */
        for (c = 0; c < classes; c++)
            luthier__nms_class(boxes + b * num_boxes * 4, scores + (b * classes + c) * num_boxes, b, c, num_boxes, attrs,
                               (luthier__nms_cand *)scratch, (int64_t *)scratch + 2 * num_boxes, selected, capacity, count);
    for (e = (*count < capacity ? *count : capacity) * 3; e < capacity * 3; e++) selected[e] = -1;
    luthier__free(owned);
    return *count > capacity ? LUTHIER_STATUS_OVERFLOW : LUTHIER_STATUS_OK;
}

/* One time step of j's rows (gates at j->g, outputs at j->y): h R^T into the gates (GRU with
   linear_before_reset: into j->rh, the t of the cell), rd being its GEMM; the cell; and GRU's
   candidate (r h) R_h^T. */
LUTHIER_PRIVATE luthier_status luthier__rnn_step(luthier_context *ctx, const luthier__op_cfg *cfg, const luthier__rnn_plan *rp, int dir,
                                                 luthier__op_rnn_job *j, luthier_sgemm_desc *rd, int serial) {
    const size_t GH = (size_t)rp->gates * rp->hidden;
    const luthier__kernel_entry *uk = &luthier__ukernels[rp->kernel];
    luthier_status s;
    rd->n = (int64_t)(rp->lbr ? GH : rp->rl.n), rd->ldc = (int64_t)(rp->lbr ? GH : j->gs), rd->accumulate = !rp->lbr;
    if ((s = luthier__run_ex(ctx, rd, uk, j->h, &rp->rl, rp->r[dir], rp->lbr ? j->rh : j->g, serial)) != LUTHIER_STATUS_OK ||
        (s = luthier__op_rnn_cell(ctx, cfg, j, rp->batch)) != LUTHIER_STATUS_OK)
        return s;
    if (j->kind != LUTHIER__RNN_CELL_GRU_ZR) return LUTHIER_STATUS_OK;
    rd->n = (int64_t)rp->hidden; /* the candidate: (r h) R_h^T into g_h */
    if ((s = luthier__run_ex(ctx, rd, uk, j->rh, &rp->rl2, rp->r2[dir], j->g + 2 * rp->hidden, serial)) != LUTHIER_STATUS_OK) return s;
    j->kind = LUTHIER__RNN_CELL_GRU_H;
    s = luthier__op_rnn_cell(ctx, cfg, j, rp->batch);
    j->kind = LUTHIER__RNN_CELL_GRU_ZR;
    return s;
}

/* Y's row of time ti, batch row b, direction dir (H floats). */
LUTHIER_PRIVATE float *luthier__rnn_yrow(const luthier__rnn_plan *rp, const luthier_rnn_attrs *a, float *y, int dir, size_t ti, size_t b) {
    const size_t D = (size_t)rp->dirs, H = rp->hidden;
    return y + (a->layout ? (b * rp->seq + ti) * D + (size_t)dir : (ti * D + (size_t)dir) * rp->batch + b) * H;
}

/* The steps of ragged sequences (rp->lens): step s takes each row b with s < len[b] at time s
   (reverse: len[b] - 1 - s). The rows' gates are gathered into a block (the rows' times differ),
   the other rows' states are kept across the step, and Y past each row's length is zero. */
LUTHIER_PRIVATE luthier_status luthier__rnn_ragged_steps(luthier_context *ctx, const luthier__op_cfg *cfg, const luthier__rnn_plan *rp,
                                                         const luthier_rnn_attrs *a, int dir, luthier__op_rnn_job *j,
                                                         luthier_sgemm_desc *rd, const float *xw, float *y, unsigned char *ws, int serial) {
    const size_t S = rp->seq, B = rp->batch, H = rp->hidden, GH = (size_t)rp->gates * H;
    const int reverse = a->direction == LUTHIER_RNN_REVERSE || dir == 1;
    float *g = (float *)(void *)(ws + rp->off_g), *ys = (float *)(void *)(ws + rp->off_y), *keep = (float *)(void *)(ws + rp->off_s);
    luthier_status s;
    size_t step, b, ti;
    for (b = 0; b < B; b++)
        for (ti = (size_t)rp->lens[b]; ti < S; ti++) memset(luthier__rnn_yrow(rp, a, y, dir, ti, b), 0, sizeof(float) * H);
    j->g = g, j->gs = GH, j->y = ys, j->ys = H;
    for (step = 0; step < S; step++) {
        for (b = 0; b < B; b++) {
            const size_t len = (size_t)rp->lens[b];
            ti = reverse ? len - 1 - step : step;
            if (step < len) memcpy(g + b * GH, xw + (a->layout ? b * S + ti : ti * B + b) * GH, sizeof(float) * GH);
            else memcpy(keep + 2 * b * H, j->h + b * H, sizeof(float) * H), memcpy(keep + (2 * b + 1) * H, j->c + b * H, sizeof(float) * H);
        }
        if ((s = luthier__rnn_step(ctx, cfg, rp, dir, j, rd, serial)) != LUTHIER_STATUS_OK) return s;
        for (b = 0; b < B; b++) {
            const size_t len = (size_t)rp->lens[b];
            if (step < len) {
                memcpy(luthier__rnn_yrow(rp, a, y, dir, reverse ? len - 1 - step : step, b), ys + b * H, sizeof(float) * H);
            } else {
                memcpy(j->h + b * H, keep + 2 * b * H, sizeof(float) * H);
                memcpy(j->c + b * H, keep + (2 * b + 1) * H, sizeof(float) * H);
            }
        }
    }
    return LUTHIER_STATUS_OK;
}

/* LSTM, GRU, RNN: one direction (see luthier__rnn_plan). States are rows of [dirs][batch][H]
   (layout 1: [batch][dirs][H]); h0, c0 NULL = zeros. */
LUTHIER_PRIVATE luthier_status luthier__rnn_direction(luthier_context *ctx, const luthier__op_cfg *cfg, const luthier__rnn_plan *rp,
                                                      const luthier_rnn_attrs *a, int dir, const float *x, const float *h0,
                                                      const float *c0, float *const *outs, unsigned char *ws) {
    const size_t S = rp->seq, B = rp->batch, H = rp->hidden, D = (size_t)rp->dirs, GH = (size_t)rp->gates * H;
    const size_t soff = a->layout ? (size_t)dir * H : (size_t)dir * B * H, sstride = a->layout ? D * H : H;
    const int reverse = a->direction == LUTHIER_RNN_REVERSE || dir == 1, lstm = rp->gates == 4;
    /* a step's GEMM below 2^21 FLOPs (LSTM batch 8, hidden 128: 1M) runs on this thread: one
       parallel region per step cost more than it saved (GRU, 2 threads, batch 1: 0.54 vs
       0.27 ms; on a loaded host, LSTM batch 8 waited ~3 ms per step for the second thread) */
    const int serial = 2.0 * (double)B * (double)H * (double)GH < 2097152.0;
    float *xw = (float *)(void *)(ws + rp->off_xw), *h = (float *)(void *)(ws + rp->off_h), *c = (float *)(void *)(ws + rp->off_c);
    float *t = (float *)(void *)(ws + rp->off_t);
    luthier_sgemm_desc sd, rd;
    luthier__op_rnn_job j;
    luthier_status s;
    size_t step, bi;
    memset(&sd, 0, sizeof sd);
    sd.m = (int64_t)(S * B), sd.n = (int64_t)GH, sd.k = (int64_t)rp->input, sd.lda = sd.k, sd.ldc = sd.n;
    sd.bias = rp->bias[dir];
    if ((s = luthier__run(ctx, &sd, &luthier__ukernels[rp->kernel], x, &rp->wl, rp->w[dir], xw)) != LUTHIER_STATUS_OK) return s;
    for (bi = 0; bi < B; bi++) {
        if (h0) memcpy(h + bi * H, h0 + soff + bi * sstride, sizeof(float) * H);
        else memset(h + bi * H, 0, sizeof(float) * H);
        if (c0) memcpy(c + bi * H, c0 + soff + bi * sstride, sizeof(float) * H);
        else memset(c + bi * H, 0, sizeof(float) * H);
    }
    memset(&j, 0, sizeof j);
    j.kind = lstm ? LUTHIER__RNN_CELL_LSTM : rp->lbr ? LUTHIER__RNN_CELL_GRU_LBR : rp->gru ? LUTHIER__RNN_CELL_GRU_ZR : LUTHIER__RNN_CELL_RNN;
    j.has_clip = a->has_clip, j.clip = a->clip, j.input_forget = a->input_forget, j.hidden = H;
    j.gs = a->layout ? S * GH : GH, j.ys = a->layout ? S * D * H : H;
    j.t = t, j.ts = GH, j.rbh = rp->rbh[dir], j.p = rp->p[dir], j.h = h, j.c = c, j.rh = t;
    memset(&rd, 0, sizeof rd);
    rd.m = (int64_t)B, rd.k = (int64_t)H, rd.lda = rd.k;
    if (rp->lens) s = luthier__rnn_ragged_steps(ctx, cfg, rp, a, dir, &j, &rd, xw, outs[0], ws, serial);
    for (step = 0; !rp->lens && step < S && s == LUTHIER_STATUS_OK; step++) {
        const size_t ti = reverse ? S - 1 - step : step;
        j.g = xw + (a->layout ? ti * GH : ti * B * GH);
        j.y = luthier__rnn_yrow(rp, a, outs[0], dir, ti, 0);
        s = luthier__rnn_step(ctx, cfg, rp, dir, &j, &rd, serial);
    }
    if (s != LUTHIER_STATUS_OK) return s;
    for (bi = 0; bi < B; bi++) {
        memcpy(outs[1] + soff + bi * sstride, h + bi * H, sizeof(float) * H);
        if (lstm) memcpy(outs[2] + soff + bi * sstride, c + bi * H, sizeof(float) * H);
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_rnn(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__rnn_plan *rp = (const luthier__rnn_plan *)st->aux;
    unsigned char *ws = (unsigned char *)luthier__context_workspace(ctx, p->workspace_bytes);
    const float *h0 = st->nin > 5 && st->in[5] >= 0 ? (const float *)luthier__ptr(rc, st->in[5]) : NULL;
    const float *c0 = st->nin > 6 && st->in[6] >= 0 ? (const float *)luthier__ptr(rc, st->in[6]) : NULL;
    float *outs[3];
    luthier_status s;
    int d;
    if (!ws) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "%s: no workspace", luthier_op_name(st->d.op));
    outs[0] = op;
    outs[1] = (float *)luthier__ptr(rc, st->out[1]);
    outs[2] = st->nout > 2 ? (float *)luthier__ptr(rc, st->out[2]) : NULL;
    for (d = 0; d < rp->dirs; d++)
        if ((s = luthier__rnn_direction(ctx, &cfg, rp, luthier__rnn_attrs(&st->d), d, xp, h0, c0, outs, ws)) != LUTHIER_STATUS_OK)
            return s;
    return LUTHIER_STATUS_OK;
}

/* The indexing steps (>>ops-index): indices are input 1, updates input 2, all in logical order. */
LUTHIER_PRIVATE luthier_status luthier__run_gather_elements(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *iv = &p->vals[st->in[1]];
    return luthier__op_gather_elements(ctx, &cfg, xp, xs, x->rank, (const int64_t *)luthier__ptr(rc, st->in[1]), iv->shape,
                                       luthier__norm_axis(st->d.attr.gather_elements.axis, x->rank, 0), op);
}

LUTHIER_PRIVATE luthier_status luthier__run_scatter_elements(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *iv = &p->vals[st->in[1]];
    return luthier__op_scatter_elements(ctx, xp, xs, x->rank, (const int64_t *)luthier__ptr(rc, st->in[1]), iv->shape,
                                        (const float *)luthier__ptr(rc, st->in[2]),
                                        luthier__norm_axis(st->d.attr.scatter_elements.axis, x->rank, 0),
                                        st->d.attr.scatter_elements.reduction, op);
}

/* GATHER_ND; indices with a run-time length gather their valid tuples, zeros after them. */
LUTHIER_PRIVATE luthier_status luthier__run_gather_nd(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *iv = &p->vals[st->in[1]];
    const int64_t *n = luthier__vlen(p, st->in[1], -1);
    int64_t ish[LUTHIER_MAX_RANK];
    size_t keep = o->bytes;
    luthier_status s = LUTHIER_STATUS_OK;
    memcpy(ish, iv->shape, sizeof ish);
    if (n) {
        const int a = p->lens[iv->tensor].axis;
        keep = o->bytes / (size_t)ish[a] * (size_t)*n;
        ish[a] = *n;
    }
    if (keep)
        s = luthier__op_gather_nd(ctx, &cfg, xp, x->rank, xs, (const int64_t *)luthier__ptr(rc, st->in[1]), iv->rank, ish,
                                  st->d.attr.gather_nd.batch_dims, op);
    if (s == LUTHIER_STATUS_OK && keep < o->bytes) memset((char *)op + keep, 0, o->bytes - keep);
    return s;
}

/* NONZERO: one pass in row-major order; the coordinates' rows past the count hold 0. */
LUTHIER_PRIVATE luthier_status luthier__run_nonzero(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const size_t cap = (size_t)os[1];
    const int rank = x->rank;
    const int64_t *xi = x->dtype == LUTHIER_DTYPE_I64 ? (const int64_t *)(const void *)xp : NULL;
    int64_t *y = (int64_t *)(void *)op, coord[LUTHIER_MAX_RANK] = {0};
    size_t e, n = 0;
    int k;
    for (e = 0; e < cap; e++) {
        if (xi ? xi[e] != 0 : xp[e] != 0.0f) { /* NaN != 0 */
            for (k = 0; k < rank; k++) y[(size_t)k * cap + n] = coord[k];
            n++;
        }
        for (k = rank - 1; k >= 0 && ++coord[k] == xs[k]; k--) coord[k] = 0;
    }
    for (k = 0; k < rank; k++) memset(y + (size_t)k * cap + n, 0, (cap - n) * sizeof(int64_t));
    *luthier__vlen(p, st->out[0], 1) = (int64_t)n;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__run_scatter_nd(const luthier__run_args *arg) {
    LUTHIER__RUN_ARGS;
    const luthier__pval *iv = &p->vals[st->in[1]];
    return luthier__op_scatter_nd(ctx, xp, x->rank, xs, (const int64_t *)luthier__ptr(rc, st->in[1]), iv->rank, iv->shape,
                                  (const float *)luthier__ptr(rc, st->in[2]), st->d.attr.scatter_nd.reduction, op);
}


/* A step whose h16 hook answered WIDE (>>impl-plan-h16): its fp32 run hook on fp32 copies of its
   fp16 inputs (widened into the workspace), its fp16 outputs narrowed from theirs; math, sums
   and the fused activation in fp32 as in an fp32 plan, one rounding to fp16 at the end. */
LUTHIER_PRIVATE luthier_status luthier__run_h16_wide(const luthier__run_args *arg) {
    luthier_context *ctx = arg->ctx;
    const luthier__pstep *st = arg->st;
    const luthier_plan *p = arg->p;
    unsigned char *ws = (unsigned char *)luthier__context_workspace(ctx, st->h16_wide);
    int vs[64 + LUTHIER_MAX_NODE_OUTPUTS], out[64 + LUTHIER_MAX_NODE_OUTPUTS], k, n = 0;
    void *at[64 + LUTHIER_MAX_NODE_OUTPUTS];
    luthier__runctx rc = *arg->rc;
    luthier__run_args a = *arg;
    luthier__pval x = *arg->x, o = *arg->o;
    luthier_status s = LUTHIER_STATUS_OK;
    if (!ws) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "step '%s': cannot allocate %zu bytes of fp32 copies",
                                  st->name, st->h16_wide);
    ws += st->h16_wide_off; /* (after the step's own workspace) */
    for (k = 0; k < st->nin + st->nout && s == LUTHIER_STATUS_OK; k++) {
        const int v = k < st->nin ? st->in[k] : st->out[k - st->nin];
        if (v < 0 || p->vals[v].dtype != LUTHIER__DTYPE_F16) continue;
        if (k < st->nin)
            s = luthier__op_widen_h16(ctx, arg->cfg, (const uint16_t *)luthier__ptr(arg->rc, v), (float *)(void *)ws,
                                      p->vals[v].bytes / sizeof(uint16_t));
        vs[n] = v, out[n] = k >= st->nin, at[n++] = ws;
        ws += luthier__align_up(p->vals[v].bytes * 2);
    }
    rc.num_over = n, rc.over_v = vs, rc.over_p = at;
    if (x.dtype == LUTHIER__DTYPE_F16) x.dtype = LUTHIER_DTYPE_F32, x.bytes *= 2;
    if (o.dtype == LUTHIER__DTYPE_F16) o.dtype = LUTHIER_DTYPE_F32, o.bytes *= 2;
    a.rc = &rc, a.x = &x, a.o = &o;
    a.xp = (const float *)luthier__ptr(&rc, st->in[0]);
    a.op = (float *)luthier__ptr(&rc, st->out[0]);
    if (s == LUTHIER_STATUS_OK) s = luthier__ops[st->d.op].run(&a);
    for (k = 0; k < n && s == LUTHIER_STATUS_OK; k++)
        if (out[k])
            s = luthier__op_narrow_h16(ctx, arg->cfg, (const float *)at[k], (uint16_t *)luthier__ptr(arg->rc, vs[k]),
                                       p->vals[vs[k]].bytes / sizeof(uint16_t));
    return s;
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
    if (st->kind == LUTHIER__STEP_NARROW_H16)
        return luthier__op_narrow_h16(ctx, &cfg, xp, (uint16_t *)(void *)op, o->bytes / sizeof(uint16_t));
    if (st->kind == LUTHIER__STEP_WIDEN_H16)
        return luthier__op_widen_h16(ctx, &cfg, (const uint16_t *)(const void *)xp, op, x->bytes / sizeof(uint16_t));
    if (st->q) return luthier__run_qstep(ctx, rc, st, &cfg, x, o, xs, os);
    {
        luthier__run_args arg;
        arg.ctx = ctx; arg.rc = rc; arg.st = st; arg.p = p; arg.x = x; arg.o = o; arg.xp = xp; arg.op = op;
        arg.cfg = &cfg; arg.xs = xs; arg.os = os;
        return st->h16_wide ? luthier__run_h16_wide(&arg) : luthier__ops[st->d.op].run(&arg);
    }
}

LUTHIER_PRIVATE luthier_status luthier__plan_run_steps(luthier_context *ctx, luthier_plan *p, const void *const *inputs,
                                                       void *const *outputs);

LUTHIER_API luthier_status luthier_plan_run(luthier_context *ctx, luthier_plan *p,
                                            const void *const *inputs, void *const *outputs) {
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
    /* the activations live in the plan's arena: one run at a time (THREADING in luthier.h) */
    if (__atomic_exchange_n(&p->running, 1, __ATOMIC_ACQUIRE))
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "plan_run: the plan is already running (from another thread or context): a plan runs one call "
                             "at a time, since its activations live in its arena; create one plan per context to run in parallel");
    s = luthier__plan_run_steps(ctx, p, inputs, outputs);
    __atomic_store_n(&p->running, 0, __ATOMIC_RELEASE);
    return s;
}

/* The body of luthier_plan_run, once the arguments are checked and the plan is taken. */
/* Whether byte ranges [a, a + na) and [b, b + nb) share a byte. */
LUTHIER_PRIVATE int luthier__overlap(const void *a, size_t na, const void *b, size_t nb) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na && nb && x < y + nb && y < x + na;
}

/* The outputs' roots are computed in the caller's buffers, saving the copy out of the arena,
   unless a buffer overlaps an input, another output or the arena: then everything is computed in
   the arena and copied at the end, as the caller's buffers may be read or written meanwhile. */
LUTHIER_PRIVATE int luthier__outputs_bindable(const luthier_plan *p, const void *const *inputs, void *const *outputs) {
    int i, j;
    for (i = 0; i < p->num_outputs; i++) {
        size_t n = p->vals[p->outputs[i]].bytes;
        if (luthier__overlap(outputs[i], n, p->arena, p->arena_bytes)) return 0;
        for (j = 0; j < p->num_inputs; j++)
            if (luthier__overlap(outputs[i], n, inputs[j], p->vals[p->inputs[j]].bytes)) return 0;
        for (j = 0; j < i; j++)
            if (luthier__overlap(outputs[i], n, outputs[j], p->vals[p->outputs[j]].bytes)) return 0;
    }
    return 1;
}

LUTHIER_PRIVATE luthier_status luthier__plan_run_steps(luthier_context *ctx, luthier_plan *p, const void *const *inputs,
                                                       void *const *outputs) {
    luthier__runctx rc;
    luthier_status s;
    int i;
    memset(&rc, 0, sizeof rc);
    rc.p = p;
    rc.inputs = inputs;
    rc.outputs = luthier__outputs_bindable(p, inputs, outputs) ? outputs : NULL;
    if (p->observe)
        for (i = 0; i < p->num_inputs; i++)
            if (p->input_dtypes[i] == LUTHIER_DTYPE_F32)
                p->observe(p->observe_user, p->vals[p->inputs[i]].tensor, (const float *)inputs[i],
                           p->vals[p->inputs[i]].bytes / sizeof(float));
    for (i = 0; i < p->num_steps; i++) {
        luthier__pstep *st = &p->steps[i];
        double t0 = p->profiling ? luthier__seconds() : 0.0;
        int k;
        if ((s = luthier__run_step(ctx, &rc, st)) != LUTHIER_STATUS_OK)
            return luthier__fail_in(ctx, s, "plan_run: step %d '%s'", i, st->name);
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
            if (!(h = (uint64_t *)luthier__zalloc(sizeof(uint64_t) * LUTHIER__CAL_BINS))) {
                o->oom = 1;
                return;
            }
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
    o.seen = (unsigned char *)luthier__zalloc((size_t)g->num_tensors + 1);
    o.hist = (uint64_t **)luthier__zalloc(sizeof(uint64_t *) * (size_t)(g->num_tensors + 1));
    outs = (void **)luthier__zalloc(sizeof(void *) * (size_t)(g->num_outputs + 1));
    if (!o.mn || !o.mx || !o.seen || !o.hist || !outs) goto oom;
    for (i = 0; i < g->num_outputs; i++) {
        const luthier__gtensor *ot = &g->tensors[g->outputs[i]];
        int ok;
        if (!(outs[i] = luthier__alloc((size_t)luthier__numel(ot->rank, ot->shape, &ok) * luthier__dtype_size(ot->dtype) + 1)))
            goto oom;
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
                s = luthier__fail_in(ctx, s, "calibrate: sample %d", smp);
                goto done;
            }
            if (o.oom) goto oom;
        }
    }
    if ((s = luthier_calibration_create(&cal)) != LUTHIER_STATUS_OK) goto oom;
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
        if ((s = luthier_calibration_set_range(cal, t, lo, hi)) != LUTHIER_STATUS_OK) goto oom;
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
                LUTHIER_STATUS_OK)
            goto oom;
    }
    *out = cal;
    cal = NULL;
    goto done;
oom: /* s: the status of the call that failed, else out of memory */
    s = luthier__fail(ctx, s != LUTHIER_STATUS_OK ? s : LUTHIER_STATUS_OUT_OF_MEMORY, "calibrate: out of memory");
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
