/* libFuzzer target for the graph API and the engine behind it: the input's bytes choose graph
   inputs (dtype, rank, small shapes), then operators (luthier_op), their attributes (mostly small
   values, sometimes extreme ones: 0, -1, 2^31, 2^62, INT64_MIN, NaN, inf), their input tensors
   (any tensor of the graph, an absent one, a nonexistent id, a wrong input count) and the
   constants they need (weights shaped to fit the chosen input, or not), then the outputs. Each
   call must succeed or say why and leave the graph unchanged. The graph is then planned
   (optionally without fusion, with per-node configurations of any algorithm, kernel, schedule
   and ratios, strict or falling back) and, when small (tests/fuzz_common.h caps), run twice;
   optionally again as an int8 plan with byte-chosen ranges for its tensors.

   Build and run: make fuzz-one T=graph FUZZ_TIME=600 (see tests/fuzz_common.h). */
#include "fuzz_common.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#define FUZZ_MAX_CONST 4096 /* elements of a constant the target makes */

static const int64_t fuzz_edge64[] = {0, 1, 2, 3, -1, -2, 4, 7, 64, 255, 65536, INT32_MAX, (int64_t)INT32_MAX + 1,
                                      (int64_t)INT32_MIN, (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62,
                                      INT64_MAX, INT64_MIN, INT64_MAX / 2, -((int64_t)1 << 62), 1000003};

/* mostly 0..7, sometimes an edge value */
static int64_t fz_i64(fuzz_reader *r) {
    unsigned b = fuzz_u8(r);
    if (b < 224) return (int64_t)(b % 8);
    return fuzz_edge64[(b - 224) % (sizeof fuzz_edge64 / sizeof *fuzz_edge64)];
}

/* mostly -4..4 (axes), sometimes an edge value */
static int fz_int(fuzz_reader *r) {
    static const int edge[] = {INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1, 64, 65, -7, 1000};
    unsigned b = fuzz_u8(r);
    if (b < 240) return (int)(b % 9) - 4;
    return edge[(b - 240) % (sizeof edge / sizeof *edge)];
}

/* mostly multiples of 1/4 in [-1, 2.75], sometimes an edge value */
static float fz_float(fuzz_reader *r) {
    unsigned b = fuzz_u8(r);
    if (b < 224) return (float)(b % 16) * 0.25f - 1.0f;
    switch ((b - 224) % 12) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return 1e-30f;
    case 3: return 1e30f;
    case 4: return INFINITY;
    case 5: return -INFINITY;
    case 6: return NAN;
    case 7: return FLT_MAX;
    case 8: return -FLT_MAX;
    case 9: return 1e-45f; /* the smallest subnormal */
    case 10: return 1e6f;
    default: return -1e6f;
    }
}

/* State of one build: the graph and the failure checks around each call. */
typedef struct fz_build {
    fuzz_reader r;
    luthier_graph *g;
    int consts;   /* names */
    int inputs;
} fz_build;

/* FUZZ_VERBOSE=1 in the environment: one line per call (to read what a reproducer builds). */
static int fz_verbose(void) {
    static int v = -1;
    if (v < 0) v = getenv("FUZZ_VERBOSE") != NULL;
    return v;
}

/* A failed call says why and leaves the graph as it was. */
static void fz_after(fz_build *b, luthier_status s, int tensors_before, int nodes_before) {
    if (fz_verbose()) {
        int t = luthier_graph_num_tensors(b->g) - 1;
        luthier_tensor_info ti;
        if (s == LUTHIER_STATUS_OK && t >= 0 && luthier_graph_tensor_info(b->g, t, &ti) == LUTHIER_STATUS_OK) {
            int i;
            fprintf(stderr, "fuzz_graph: ok, tensor %d '%s' %s [", t, ti.name, ti.dtype == LUTHIER_DTYPE_I64 ? "i64" : "f32");
            for (i = 0; i < ti.rank; i++) fprintf(stderr, "%s%lld", i ? "," : "", (long long)ti.shape[i]);
            fprintf(stderr, "]\n");
        } else {
            fprintf(stderr, "fuzz_graph: %s: %s\n", luthier_status_string(s), luthier_graph_error(b->g));
        }
    }
    if (s == LUTHIER_STATUS_OK) return;
    FUZZ_CHECK(luthier_graph_error(b->g)[0] != 0);
    FUZZ_CHECK(luthier_graph_num_tensors(b->g) == tensors_before && luthier_graph_num_nodes(b->g) == nodes_before);
}

static int fz_info(fz_build *b, int t, luthier_tensor_info *ti) {
    return t >= 0 && luthier_graph_tensor_info(b->g, t, ti) == LUTHIER_STATUS_OK;
}

/* Any tensor (recent ones more often), or -1 (absent), or an id that does not exist. */
static int fz_pick(fz_build *b) {
    int n = luthier_graph_num_tensors(b->g);
    unsigned v = fuzz_u8(&b->r);
    if (v == 255) return -1;
    if (v == 254) return n + (int)fuzz_u8(&b->r);
    if (n == 0) return 0;
    return n - 1 - (int)(v % (unsigned)n);
}

/* An f32 constant of the given shape (values from the bytes); -1 when too large or refused. */
static int fz_const(fz_build *b, int rank, const int64_t *shape) {
    static float data[FUZZ_MAX_CONST];
    char name[32];
    int64_t n = 1;
    int i, t = -1, nt = luthier_graph_num_tensors(b->g), nn = luthier_graph_num_nodes(b->g);
    luthier_status s;
    for (i = 0; i < rank; i++) {
        if (shape[i] < 1 || shape[i] > FUZZ_MAX_CONST || n * shape[i] > FUZZ_MAX_CONST) return -1;
        n *= shape[i];
    }
    for (i = 0; i < n; i++) data[i] = fz_float(&b->r);
    snprintf(name, sizeof name, "c%d", b->consts++);
    s = luthier_graph_constant(b->g, name, rank, shape, data, 1, &t);
    fz_after(b, s, nt, nn);
    return s == LUTHIER_STATUS_OK ? t : -1;
}

/* An i64 constant of indices: mostly -2..3, sometimes an edge value. */
static int fz_const_i64(fz_build *b) {
    int64_t data[16], shape[2];
    char name[32];
    int rank = fuzz_range(&b->r, 0, 2), i, t = -1, nt = luthier_graph_num_tensors(b->g), nn = luthier_graph_num_nodes(b->g);
    int64_t n = 1;
    luthier_status s;
    for (i = 0; i < rank; i++) n *= (shape[i] = fuzz_range(&b->r, 1, 4));
    for (i = 0; i < n; i++) {
        unsigned v = fuzz_u8(&b->r);
        data[i] = v < 240 ? (int64_t)(v % 6) - 2 : fuzz_edge64[(v - 240) % (sizeof fuzz_edge64 / sizeof *fuzz_edge64)];
    }
    snprintf(name, sizeof name, "c%d", b->consts++);
    s = luthier_graph_constant_i64(b->g, name, rank, shape, data, &t);
    fz_after(b, s, nt, nn);
    return s == LUTHIER_STATUS_OK ? t : -1;
}

static void fz_add_input(fz_build *b) {
    int64_t shape[LUTHIER_MAX_RANK];
    char name[32];
    unsigned v = fuzz_u8(&b->r);
    luthier_dtype dt = v % 8 == 7 ? LUTHIER_DTYPE_I64 : LUTHIER_DTYPE_F32;
    int rank = 1 + (int)(v / 8 % 4), i, t, nt = luthier_graph_num_tensors(b->g), nn = luthier_graph_num_nodes(b->g);
    if (v >= 240) rank = v % 2 ? 6 : 5;
    for (i = 0; i < rank; i++) shape[i] = fuzz_range(&b->r, 1, i + 2 >= rank ? 8 : 3);
    snprintf(name, sizeof name, "in%d", b->inputs++);
    fz_after(b, luthier_graph_input(b->g, name, dt, rank, shape, &t), nt, nn);
}

/* One node of op (or a constant): inputs chosen, or made to fit ("smart" bit), attributes from
   the bytes. */
static void fz_add_node(fz_build *b, luthier_op op) {
    luthier_node_desc d;
    luthier_tensor_info xi;
    int in[66], outs[LUTHIER_MAX_NODE_OUTPUTS], perm[LUTHIER_MAX_RANK], i, lo = 1, hi = 1, n;
    int64_t sizes[LUTHIER_MAX_NODE_OUTPUTS], shape[LUTHIER_MAX_RANK];
    unsigned flags = fuzz_u8(&b->r);
    const int smart = (flags & 3) != 0; /* 3 times in 4: make fitting constants */
    int nt, nn;
    luthier_status s;
    memset(&d, 0, sizeof d);
    d.op = op;
    switch (op) {
#define LUTHIER__X(e, name, l, h) case LUTHIER_OP_##e: lo = l; hi = h; break;
        LUTHIER_OP_LIST(LUTHIER__X)
#undef LUTHIER__X
    default: break;
    }
    if (op == LUTHIER_OP_CONCAT) hi = 4; /* up to 4 inputs */
    n = lo + (int)(fuzz_u8(&b->r) % (unsigned)(hi - lo + 1));
    if ((flags & 0xe0) == 0xe0) /* 1 in 8: a wrong count */
        n = (fuzz_u8(&b->r) & 1) ? lo - 1 : hi + 1 + (op == LUTHIER_OP_CONCAT ? 61 : 0);
    for (i = 0; i < 66; i++) in[i] = -1;
    for (i = 0; i < n && i < 66; i++) in[i] = fz_pick(b);
    d.inputs = in;
    d.num_inputs = n;
    if (!fz_info(b, in[0], &xi)) xi.rank = 0;
    switch (op) {
    case LUTHIER_OP_CONV2D:
        d.groups = fz_i64(&b->r);
        if (smart && xi.rank == 4 && n >= 2) {
            int64_t c = xi.shape[1], g = (flags & 4) ? c : (d.groups > 0 && d.groups <= c && c % d.groups == 0 ? d.groups : 1);
            int64_t ws[4];
            d.groups = g;
            ws[0] = g * fuzz_range(&b->r, 1, 3);
            ws[1] = c / g;
            ws[2] = fuzz_range(&b->r, 1, 4);
            ws[3] = (flags & 8) ? ws[2] : fuzz_range(&b->r, 1, 4);
            in[1] = fz_const(b, 4, ws);
            if (n == 3) in[2] = (flags & 16) ? -1 : fz_const(b, 1, ws);
        }
        for (i = 0; i < 2; i++) d.stride[i] = fz_i64(&b->r), d.dilation[i] = fz_i64(&b->r);
        for (i = 0; i < 4; i++) d.pads[i] = fz_i64(&b->r);
        d.activation = (luthier_activation)fuzz_range(&b->r, 0, LUTHIER_ACTIVATION_COUNT);
        d.clamp_min = fz_float(&b->r);
        d.clamp_max = fz_float(&b->r);
        break;
    case LUTHIER_OP_DENSE:
    case LUTHIER_OP_MATMUL:
        d.trans_b = (int)(fuzz_u8(&b->r) % 3) - (flags & 0x20 ? 1 : 0);
        if (smart && xi.rank >= (op == LUTHIER_OP_DENSE ? 1 : 2) && n >= 2) {
            int64_t k = xi.shape[xi.rank - 1], nn2 = fuzz_range(&b->r, 1, 9), ws[LUTHIER_MAX_RANK];
            int r = 2;
            if (op == LUTHIER_OP_MATMUL && (flags & 4)) { /* batched b: the batch dims of a, or a suffix */
                r = xi.rank - fuzz_range(&b->r, 0, xi.rank - 2);
                memcpy(ws, xi.shape + (xi.rank - r), sizeof(int64_t) * (size_t)r);
            }
            /* dense: w [N,K] (trans_b: [K,N]); matmul: b [K,N] (trans_b: [N,K]) */
            ws[r - 2] = (d.trans_b == 1) == (op == LUTHIER_OP_MATMUL) ? nn2 : k;
            ws[r - 1] = (d.trans_b == 1) == (op == LUTHIER_OP_MATMUL) ? k : nn2;
            in[1] = fz_const(b, r, ws);
            if (n == 3) in[2] = (flags & 16) ? -1 : fz_const(b, 1, &nn2);
        }
        d.activation = (luthier_activation)fuzz_range(&b->r, 0, LUTHIER_ACTIVATION_COUNT);
        d.clamp_min = fz_float(&b->r);
        d.clamp_max = fz_float(&b->r);
        break;
    case LUTHIER_OP_MAXPOOL:
    case LUTHIER_OP_AVGPOOL:
        for (i = 0; i < 2; i++) d.kernel[i] = fz_i64(&b->r), d.stride[i] = fz_i64(&b->r), d.dilation[i] = fz_i64(&b->r);
        for (i = 0; i < 4; i++) d.pads[i] = fz_i64(&b->r);
        d.ceil_mode = (int)(fuzz_u8(&b->r) % 2);
        d.count_include_pad = (int)(fuzz_u8(&b->r) % 2);
        break;
    case LUTHIER_OP_ADAPTIVE_AVGPOOL:
        d.out_size[0] = fz_i64(&b->r);
        d.out_size[1] = fz_i64(&b->r);
        break;
    case LUTHIER_OP_CLIP:
        d.clamp_min = fz_float(&b->r);
        d.clamp_max = fz_float(&b->r);
        break;
    case LUTHIER_OP_GELU:
        d.approximate = (int)(fuzz_u8(&b->r) % 2);
        break;
    case LUTHIER_OP_ADD: case LUTHIER_OP_SUB: case LUTHIER_OP_MUL: case LUTHIER_OP_DIV:
    case LUTHIER_OP_POW: case LUTHIER_OP_MAX: case LUTHIER_OP_MIN:
        if (smart && xi.rank >= 1 && n == 2 && (flags & 4)) { /* a broadcastable constant: a suffix, ones kept */
            int r = fuzz_range(&b->r, 0, xi.rank);
            for (i = 0; i < r; i++) shape[i] = (fuzz_u8(&b->r) & 1) ? xi.shape[xi.rank - r + i] : 1;
            in[1] = fz_const(b, r, shape);
        }
        d.activation = (luthier_activation)fuzz_range(&b->r, 0, LUTHIER_ACTIVATION_COUNT);
        d.clamp_min = fz_float(&b->r);
        d.clamp_max = fz_float(&b->r);
        break;
    case LUTHIER_OP_CONCAT:
    case LUTHIER_OP_SOFTMAX:
    case LUTHIER_OP_FLATTEN:
    case LUTHIER_OP_GATHER:
        d.axis = fz_int(&b->r);
        d.log = (int)(fuzz_u8(&b->r) % 2);
        if (op == LUTHIER_OP_GATHER && smart && n == 2) in[1] = fz_const_i64(b);
        break;
    case LUTHIER_OP_SPLIT:
        d.axis = fz_int(&b->r);
        d.num_outputs = fz_int(&b->r);
        if (d.num_outputs < INT_MAX - 4) d.num_outputs += 4; /* mostly 0..8 */
        if (flags & 4) {
            for (i = 0; i < LUTHIER_MAX_NODE_OUTPUTS; i++) sizes[i] = i < 8 ? fz_i64(&b->r) : 1;
            d.sizes = sizes;
        }
        break;
    case LUTHIER_OP_LAYER_NORM:
    case LUTHIER_OP_BATCH_NORM:
        d.axis = fz_int(&b->r);
        d.epsilon = fz_float(&b->r);
        if (smart && xi.rank >= 1) {
            if (op == LUTHIER_OP_BATCH_NORM && xi.rank >= 2) {
                for (i = 1; i < n; i++) in[i] = fz_const(b, 1, &xi.shape[1]);
            } else if (op == LUTHIER_OP_LAYER_NORM) {
                int axis = d.axis ? d.axis : -1;
                axis = axis < 0 ? axis + xi.rank : axis;
                if (axis >= 0 && axis < xi.rank)
                    for (i = 1; i < n; i++) in[i] = (flags & 16) && i == 1 ? -1 : fz_const(b, xi.rank - axis, xi.shape + axis);
            }
        }
        break;
    case LUTHIER_OP_PRELU: /* a per-channel slope [C,1,...] (else whatever input 1 was) */
        if (smart && xi.rank >= 2 && n == 2) {
            int64_t shp[LUTHIER_MAX_RANK];
            for (i = 0; i < xi.rank - 1; i++) shp[i] = i ? 1 : xi.shape[1];
            in[1] = fz_const(b, xi.rank - 1, shp);
        }
        break;
    case LUTHIER_OP_LEAKY_RELU: case LUTHIER_OP_ELU: case LUTHIER_OP_SELU: case LUTHIER_OP_CELU:
    case LUTHIER_OP_HARD_SIGMOID: case LUTHIER_OP_THRESHOLDED_RELU:
        d.typed = (int)(fuzz_u8(&b->r) % 2);
        d.attr.selu.alpha = fz_float(&b->r); /* alpha first in each struct; gamma / beta second */
        d.attr.selu.gamma = fz_float(&b->r);
        break;
    case LUTHIER_OP_CAST: /* a target (or a bad one), i64 casts back to f32 in later nodes */
        d.typed = 1;
        d.attr.cast.to = (int)(fuzz_u8(&b->r) % (LUTHIER_CAST_TO_COUNT + 1));
        break;
    case LUTHIER_OP_MOD:
        d.typed = 1;
        d.attr.mod.fmod = (int)(fuzz_u8(&b->r) % 3);
        break;
    case LUTHIER_OP_ARGMAX: case LUTHIER_OP_ARGMIN: case LUTHIER_OP_TOPK: case LUTHIER_OP_CUMSUM: case LUTHIER_OP_TRILU:
        luthier_node_attrs_default(op, &d.attr); /* typed only; axis first in argmax, topk and cumsum's structs */
        d.typed = 1;
        if (op == LUTHIER_OP_TOPK) {
            d.attr.topk.k = smart ? 1 + (int64_t)(fuzz_u8(&b->r) % 4) : fz_i64(&b->r);
            d.attr.topk.axis = fz_int(&b->r);
            d.attr.topk.largest = (int)(fuzz_u8(&b->r) % 3);
        } else if (op == LUTHIER_OP_TRILU) {
            d.attr.trilu.upper = (int)(fuzz_u8(&b->r) % 3);
            d.attr.trilu.k = (flags & 4) ? fz_i64(&b->r) : fz_int(&b->r);
        } else if (op == LUTHIER_OP_CUMSUM) {
            d.attr.cumsum.axis = fz_int(&b->r);
            d.attr.cumsum.exclusive = (int)(fuzz_u8(&b->r) % 3);
            d.attr.cumsum.reverse = (int)(fuzz_u8(&b->r) % 2);
        } else {
            d.attr.argmax.axis = fz_int(&b->r);
            d.attr.argmax.keepdims = (int)(fuzz_u8(&b->r) % 3);
            d.attr.argmax.select_last_index = (int)(fuzz_u8(&b->r) % 2);
        }
        break;
    case LUTHIER_OP_NON_MAX_SUPPRESSION:
        d.typed = 1;
        d.attr.nms.center_point_box = (int)(fuzz_u8(&b->r) % 3);
        d.attr.nms.max_output_boxes_per_class = fz_i64(&b->r);
        d.attr.nms.iou_threshold = smart ? (float)(fuzz_u8(&b->r) % 11) / 10.0f : fz_float(&b->r);
        d.attr.nms.use_score_threshold = (int)(fuzz_u8(&b->r) % 2);
        d.attr.nms.score_threshold = fz_float(&b->r);
        if (smart && n == 2) { /* boxes [B,N,4] and scores [B,C,N] that fit */
            int64_t bs[3], ss[3];
            bs[0] = ss[0] = 1 + (int64_t)(fuzz_u8(&b->r) % 2);
            bs[1] = ss[2] = 1 + (int64_t)(fuzz_u8(&b->r) % 8);
            bs[2] = 4;
            ss[1] = 1 + (int64_t)(fuzz_u8(&b->r) % 3);
            in[0] = fz_const(b, 3, bs);
            in[1] = fz_const(b, 3, ss);
        }
        break;
    case LUTHIER_OP_LRN:
        d.size = fz_i64(&b->r);
        d.alpha = fz_float(&b->r);
        d.beta = fz_float(&b->r);
        d.bias = fz_float(&b->r);
        break;
    case LUTHIER_OP_RESHAPE: {
        static const int64_t small[] = {-1, 0, 1, 2, 3, 4, 6, 8};
        d.num_sizes = fuzz_range(&b->r, 0, 7);
        for (i = 0; i < d.num_sizes && i < LUTHIER_MAX_RANK; i++) {
            unsigned v = fuzz_u8(&b->r);
            sizes[i] = v < 224 ? small[v % 8] : fuzz_edge64[(v - 224) % (sizeof fuzz_edge64 / sizeof *fuzz_edge64)];
        }
        d.sizes = (flags & 4) && !(flags & 8) ? NULL : sizes;
        break;
    }
    case LUTHIER_OP_TRANSPOSE:
        if (flags & 4) {
            for (i = 0; i < LUTHIER_MAX_RANK; i++) perm[i] = i;
            for (i = LUTHIER_MAX_RANK - 1; i > 0; i--) { /* a permutation of 0..rank-1, or of 0..5 */
                int j = (int)(fuzz_u8(&b->r) % (unsigned)(i + 1)), tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
            }
            if (xi.rank >= 1 && !(flags & 8)) { /* keep the entries < rank, in their order */
                int k = 0;
                for (i = 0; i < LUTHIER_MAX_RANK; i++)
                    if (perm[i] < xi.rank) perm[k++] = perm[i];
            }
            d.perm = perm;
        }
        break;
    case LUTHIER_OP_ATTENTION:
        if (smart && xi.rank >= 3 && n == 3) {
            int r = xi.rank;
            memcpy(shape, xi.shape, sizeof(int64_t) * (size_t)r);
            shape[r - 2] = fuzz_range(&b->r, 1, 5);
            in[1] = fz_const(b, r, shape);
            shape[r - 1] = fuzz_range(&b->r, 1, 5);
            in[2] = fz_const(b, r, shape);
        }
        d.causal = (int)(fuzz_u8(&b->r) % 2);
        d.scale = (fuzz_u8(&b->r) & 1) ? 0.0f : fz_float(&b->r);
        break;
    case LUTHIER_OP_GATHER_ELEMENTS:
    case LUTHIER_OP_GATHER_ND:
    case LUTHIER_OP_SCATTER_ND:
    case LUTHIER_OP_SCATTER_ELEMENTS: /* axis / batch_dims first in each struct, the reduction after */
        d.typed = 1;
        d.attr.scatter_elements.axis = fz_int(&b->r);
        d.attr.scatter_elements.reduction = (int)(fuzz_u8(&b->r) % 6);
        if (op == LUTHIER_OP_SCATTER_ND) d.attr.scatter_nd.reduction = (int)(fuzz_u8(&b->r) % 6);
        if (smart && n >= 2) in[1] = fz_const_i64(b);
        break;
    default:
        break;
    }
    d.name = (flags & 0xe0) == 0xc0 ? "dup" : NULL; /* a second "dup" is refused */
    nt = luthier_graph_num_tensors(b->g);
    nn = luthier_graph_num_nodes(b->g);
    s = luthier_graph_add_node(b->g, &d, outs);
    fz_after(b, s, nt, nn);
    if (s == LUTHIER_STATUS_OK) {
        int k = d.op == LUTHIER_OP_SPLIT ? luthier_graph_num_tensors(b->g) - nt : 1;
        FUZZ_CHECK(luthier_graph_num_nodes(b->g) == nn + 1 && k >= 1);
        for (i = 0; i < k; i++) FUZZ_CHECK(outs[i] == nt + i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const fuzz_caps caps = {(size_t)4 << 20, (size_t)8 << 20, 2e6};
    static luthier_node_config configs[64];
    luthier_context *ctx = fuzz_context();
    fz_build b;
    luthier_plan_desc pd;
    luthier_status s;
    int i, n, ran = 0, nt, nn;
    unsigned plan_flags;
    memset(&b, 0, sizeof b);
    b.r.p = data;
    b.r.n = size;
    FUZZ_CHECK(luthier_graph_create(&b.g) == LUTHIER_STATUS_OK);
    n = 1 + (int)(fuzz_u8(&b.r) % 3);
    for (i = 0; i < n; i++) fz_add_input(&b);
    n = (int)(fuzz_u8(&b.r) % 12);
    for (i = 0; i < n && b.r.i < b.r.n; i++) {
        unsigned a = fuzz_u8(&b.r);
        if (a >= 250) {
            int64_t shape[4];
            int r = fuzz_range(&b.r, 0, 4), k;
            for (k = 0; k < r; k++) shape[k] = fuzz_range(&b.r, 1, 4);
            if (a == 255) fz_const_i64(&b);
            else fz_const(&b, r, shape);
        } else if (a == 249) { /* an operator that does not exist */
            luthier_node_desc d;
            int out, in0 = 0;
            memset(&d, 0, sizeof d);
            d.op = (luthier_op)(LUTHIER_OP_COUNT + (int)fuzz_u8(&b.r));
            d.inputs = &in0;
            d.num_inputs = 1;
            nt = luthier_graph_num_tensors(b.g);
            nn = luthier_graph_num_nodes(b.g);
            s = luthier_graph_add_node(b.g, &d, &out);
            FUZZ_CHECK(s != LUTHIER_STATUS_OK);
            fz_after(&b, s, nt, nn);
        } else {
            fz_add_node(&b, (luthier_op)(a % (unsigned)LUTHIER_OP_COUNT));
        }
    }
    /* outputs: the last tensor, and up to two more */
    nt = luthier_graph_num_tensors(b.g);
    if (nt) {
        s = luthier_graph_output(b.g, nt - 1);
        fz_after(&b, s, nt, luthier_graph_num_nodes(b.g));
    }
    n = (int)(fuzz_u8(&b.r) % 3);
    for (i = 0; i < n; i++) {
        s = luthier_graph_output(b.g, fz_pick(&b));
        fz_after(&b, s, nt, luthier_graph_num_nodes(b.g));
    }
    /* the plan: fusion or not, per-node configurations or not, strict or falling back */
    plan_flags = fuzz_u8(&b.r);
    memset(&pd, 0, sizeof pd);
    pd.no_fusion = (int)(plan_flags & 1);
    pd.fallback_invalid = (int)((plan_flags >> 1) & 1);
    pd.precision = (plan_flags & 16) ? LUTHIER_PRECISION_FP16 : LUTHIER_PRECISION_FP32;
    nn = luthier_graph_num_nodes(b.g);
    if ((plan_flags & 4) && nn <= 64) {
        /* kernels of the three families a graph's GEMMs take (F32, F16W, F16), by one index */
        static const luthier_kernel_family fams[3] = {LUTHIER_KERNELS_F32, LUTHIER_KERNELS_F16W, LUTHIER_KERNELS_F16};
        int nk = luthier_kernels_count(fams[0]) + luthier_kernels_count(fams[1]) + luthier_kernels_count(fams[2]);
        memset(configs, 0, sizeof configs);
        for (i = 0; i < nn; i++) {
            luthier_node_config *c = &configs[i];
            unsigned k = fuzz_u8(&b.r);
            int j;
            if (k < 128) continue; /* default */
            c->algorithm = (luthier_conv_algorithm)(fuzz_u8(&b.r) % LUTHIER_CONV_ALGORITHM_COUNT);
            k = fuzz_u8(&b.r) % (unsigned)(nk + 2);
            if ((int)k < nk) {
                luthier_kernel_info ki;
                int f = 0, kk = (int)k;
                while (kk >= luthier_kernels_count(fams[f])) kk -= luthier_kernels_count(fams[f++]);
                FUZZ_CHECK(luthier_kernels_get(fams[f], kk, &ki) == LUTHIER_STATUS_OK);
                snprintf(c->kernel, sizeof c->kernel, "%s", ki.name);
                if (fuzz_u8(&b.r) < 64) { /* the per-cluster list form, short names, 1 to 3 entries (maybe empty) */
                    const char *sh = strstr(ki.name, "ukernel_") ? strstr(ki.name, "ukernel_") + 8 : ki.name;
                    const int n = 1 + fuzz_u8(&b.r) % 3;
                    snprintf(c->kernel, sizeof c->kernel, "%s,%s%s%s", sh, n > 1 ? sh : "", n > 2 ? "," : "", n > 2 ? sh : "");
                }
            } else if ((int)k == nk) {
                snprintf(c->kernel, sizeof c->kernel, "no_such_kernel");
            }
            c->schedule = (luthier_schedule)(fuzz_u8(&b.r) % 2);
            c->num_ratios = (int)(fuzz_u8(&b.r) % 3);
            for (j = 0; j < c->num_ratios; j++) c->ratios[j] = fz_float(&b.r);
        }
        pd.configs = configs;
        pd.num_configs = nn;
    }
    s = fuzz_plan_run(ctx, b.g, &pd, data, size, &caps, &ran);
    if (fz_verbose())
        fprintf(stderr, "fuzz_graph: %d nodes, plan%s%s%s: %s%s%s\n", nn, pd.no_fusion ? " (no fusion)" : "",
                pd.num_configs ? " (configs)" : "", pd.precision ? " (fp16)" : "", luthier_status_string(s), ran ? ", ran" : "",
                s != LUTHIER_STATUS_OK ? luthier_context_error(ctx) : "");
    /* int8: byte-chosen ranges for some tensors (as a calibration would set them); weights that
       hold NaN or infinity (or a batch norm folded into such) are refused by the int8 plan */
    if (ran && (plan_flags & 8)) {
        luthier_calibration *c;
        FUZZ_CHECK(luthier_calibration_create(&c) == LUTHIER_STATUS_OK);
        nt = luthier_graph_num_tensors(b.g);
        for (i = 0; i < nt; i++) {
            float lo = fz_float(&b.r), hi = fz_float(&b.r);
            if (fuzz_u8(&b.r) & 1) luthier_calibration_set_range(c, i, lo, hi);
        }
        pd.int8 = c;
        fuzz_plan_run(ctx, b.g, &pd, data, size, &caps, NULL);
        luthier_calibration_destroy(c);
    }
    (void)s;
    luthier_graph_destroy(b.g);
    return 0;
}
