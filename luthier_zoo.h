/* luthier_zoo.h - reference networks built with luthier's graph API, with deterministic weights.
   Part of luthier (MIT license, see luthier.h). A companion header that uses only the public
   API: include luthier.h first (in exactly one file with LUTHIER_IMPLEMENTATION, as usual).

       #include "luthier.h"
       #include "luthier_zoo.h"

       luthier_graph *g;  char err[256];
       luthier_zoo_options o = {0};                      // full size, seed 42
       if (luthier_zoo_build("resnet18", &o, &g, err, sizeof err)) puts(err);
       float *x = malloc(3 * 224 * 224 * sizeof(float));
       luthier_zoo_input("resnet18", &o, 0, x, 3 * 224 * 224 * sizeof(float));

   Every function is static (a copy per translation unit that includes the header; unused ones
   do not warn). Bad names and arguments return a status with a message, never crash.

   FUNCTIONS
       luthier_zoo_names()          NULL-terminated list of the names below (full, then _small)
       luthier_zoo_build()          the graph (constants copied into it; inputs and outputs in
                                    the order of tests/torch_ref.py)
       luthier_zoo_get_info()       input/output shapes, byte sizes and tensor names, unbuilt
       luthier_zoo_input()          one generated input (buffer of at least its byte size)
       luthier_zoo_inputs()         all inputs at once; use it for gpt2_decode, whose 24 past
                                    tensors need a gpt2 prompt run (luthier_zoo_input repeats
                                    that run for each of them)
       luthier_zoo_stats()          FLOPs per run and parameter count of a built graph

   NETWORKS (batch 1; luthier_zoo_names() lists them; "<name>_small" or options.small = 1 picks
   the reduced variant: same layer structure, for tests under qemu and sanitizers)
       name          full size                              _small
       resnet18      224x224 -> 1000 logits                 64x64, widths / 4, 100 classes
       resnet50      (torchvision v1.5 bottlenecks)         64x64, widths / 4, 100 classes
       resnet101                                            64x64, widths / 4, 100 classes
       alexnet       224x224                                128x128, widths / 4, hidden 256, 100
       vgg16         224x224 (no batch norm)                64x64, widths / 8, hidden 256, 100
       googlenet     224x224, aux_logits=False,             96x96, widths / 4, 100 classes
                     transform_input=False
       mobilenet_v2  224x224                                128x128, widths / 4 (also 1280), 100
       bert          12 layers, d 768, 12 heads, FFN 3072,  2 layers, d 64, 4 heads, FFN 256,
                     GELU (erf), post-LayerNorm eps 1e-12,  seq 16, vocab 1000, 64 positions
                     vocab 30522, 512 positions, seq 128;
                     in: input_ids [1,128] I64 (token type 0, no mask);
                     out: last hidden state [1,128,768]
       gpt2          12 layers, d 768, 12 heads, FFN 3072,  2 layers, d 64, 4 heads, FFN 256,
                     GELU (tanh), pre-LayerNorm eps 1e-5,   seq 16, vocab 1000, 64 positions
                     vocab 50257, 1024 positions, causal,
                     lm_head tied to wte; prompt of 128 tokens
                     in: input_ids [1,128] I64
                     out: logits of the last position [1,50257], then per layer l:
                          present key l, present value l [1,12,128,64] (25 outputs)
       gpt2_decode   one token at position 128 with the prompt's KV cache (same weights as gpt2)
                     in: input_ids [1,1] I64, then per layer l: past key l, past value l
                         [1,12,128,64] (25 inputs); out: logits [1,50257]
   The CNNs are torchvision's networks (tests/torch_ref.py --check-torchvision proves that its
   width-parametrized copies equal torchvision's at full width). Node names are the PyTorch
   module names ("layer1.0.conv1", "features.3.conv.1.0", "encoder.layer.0.attention.query");
   a module used more than once gets "_2", "_3" appended ("layer1.0.relu_2"); nodes without a
   module are named after what they do ("layer1.0.add", "inception3a.concat"); constants are
   named by their state_dict key ("layer1.0.bn1.running_var").

   DETERMINISTIC WEIGHTS (tests/torch_ref.py implements the same; fixtures depend on it)
     splitmix64, one stream per network with state = seed (default 42):
         state += 0x9E3779B97F4A7C15; z = state;
         z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
         return z ^ (z >> 31);                                (uint64 wrap-around)
     u = (double)(next() >> 40) * 2^-23 - 1.0                 (uniform in [-1, 1), 24 bits)
     The tensors of PyTorch's state_dict() in its order (non-floating ones such as
     num_batches_tracked skipped), each tensor's elements row-major:
         value = (float)(u * s + o), computed in double and rounded once to float32, with
         name ends with running_var   s = 0.5             o = 1.0
         name ends with running_mean  s = 0.1             o = 0
         rank >= 2 (conv, linear,     s = sqrt(6/fan_in)  o = 0    fan_in = product of dims 1..
           embedding [V,d]: fan_in = d)
         name ends with bias          s = 0.1             o = 0
         1-D weight (norm gamma)      s = 0.1             o = 1.0
     Tied weights: GPT-2's lm_head is F.linear(h, wte.weight) in the PyTorch model, so
     state_dict lists wte.weight once and it is generated once; the graph uses that one
     constant for the embedding GATHER and the lm_head DENSE. gpt2_decode has gpt2's weights.
     The C side generates the tensors in the order it adds them; the builders add them in
     state_dict order (e.g. a residual block's downsample after its main path).
   INPUTS: a separate splitmix64 stream with state = 7: images get u per element (NCHW order);
     token ids get next() % vocab. gpt2_decode's token is draw number 128 (0-based; the one
     after gpt2's 128 prompt tokens); its 24 past tensors are gpt2's present outputs for the
     prompt, which luthier_zoo_inputs/luthier_zoo_input compute by running gpt2 with a plan.

   REFERENCES: tests/torch_ref.py writes tests/data/models/<name>.ref (PyTorch outputs for
   these weights and inputs); tests/test_models.c compares plans against them.
*/
#ifndef LUTHIER_ZOO_H_INCLUDED
#define LUTHIER_ZOO_H_INCLUDED

#ifndef LUTHIER_H_INCLUDED
#error "luthier_zoo.h: include luthier.h first"
#endif

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define LUTHIER_ZOO__FN static __attribute__((unused))
#else
#define LUTHIER_ZOO__FN static
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct luthier_zoo_options {
    int small;     /* 1 = the reduced variant (same as the "_small" suffix) */
    uint64_t seed; /* weight stream seed; 0 = 42 */
} luthier_zoo_options;

#define LUTHIER_ZOO_MAX_IO 32 /* inputs or outputs of one network, at most */

/* What a network takes and returns, without building it. */
typedef struct luthier_zoo_info {
    int num_inputs, num_outputs;
    luthier_dtype input_dtype[LUTHIER_ZOO_MAX_IO];
    int input_rank[LUTHIER_ZOO_MAX_IO];
    int64_t input_shape[LUTHIER_ZOO_MAX_IO][LUTHIER_MAX_RANK];
    size_t input_bytes[LUTHIER_ZOO_MAX_IO];
    int output_rank[LUTHIER_ZOO_MAX_IO];
    int64_t output_shape[LUTHIER_ZOO_MAX_IO][LUTHIER_MAX_RANK];
    size_t output_bytes[LUTHIER_ZOO_MAX_IO];
    /* tensor names in the graph (luthier_graph_find_tensor), in input / output order */
    char input_name[LUTHIER_ZOO_MAX_IO][48];
    char output_name[LUTHIER_ZOO_MAX_IO][48];
} luthier_zoo_info;

/* ---- implementation ------------------------------------------------------------------------ */

enum { LUTHIER_ZOO__RESNET, LUTHIER_ZOO__ALEXNET, LUTHIER_ZOO__VGG, LUTHIER_ZOO__GOOGLENET,
       LUTHIER_ZOO__MOBILENET, LUTHIER_ZOO__BERT, LUTHIER_ZOO__GPT2, LUTHIER_ZOO__GPT2_DECODE };

/* One network's configuration (full or small). */
typedef struct luthier_zoo__cfg {
    const char *base;
    int kind;
    int small;
    /* CNNs */
    int size, div, hidden, classes;
    int bottleneck, blocks[4];
    /* transformers */
    int vocab, d, layers, heads, ffn, max_pos, seq;
    float eps;
} luthier_zoo__cfg;

LUTHIER_ZOO__FN const char *const *luthier_zoo_names(void) {
    static const char *const names[] = {
        "resnet18", "resnet50", "resnet101", "alexnet", "vgg16", "googlenet", "mobilenet_v2",
        "bert", "gpt2", "gpt2_decode",
        "resnet18_small", "resnet50_small", "resnet101_small", "alexnet_small", "vgg16_small",
        "googlenet_small", "mobilenet_v2_small", "bert_small", "gpt2_small", "gpt2_decode_small",
        NULL};
    return names;
}

LUTHIER_ZOO__FN void luthier_zoo__msg(char *err, size_t err_size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
    luthier__copy_error(err, err_size);
}

/* Resolves name + options into a configuration; 0 when unknown. */
LUTHIER_ZOO__FN int luthier_zoo__config(const char *name, const luthier_zoo_options *opt,
                                        luthier_zoo__cfg *c) {
    /* base name, kind, ResNet blocks, and the small variant's input size and channel divisor */
    static const struct { const char *base; int kind, blocks[4], small_size, small_div; } nets[] = {
        {"resnet18", LUTHIER_ZOO__RESNET, {2, 2, 2, 2}, 64, 4},
        {"resnet50", LUTHIER_ZOO__RESNET, {3, 4, 6, 3}, 64, 4},
        {"resnet101", LUTHIER_ZOO__RESNET, {3, 4, 23, 3}, 64, 4},
        {"alexnet", LUTHIER_ZOO__ALEXNET, {0, 0, 0, 0}, 128, 4},
        {"vgg16", LUTHIER_ZOO__VGG, {0, 0, 0, 0}, 64, 8},
        {"googlenet", LUTHIER_ZOO__GOOGLENET, {0, 0, 0, 0}, 96, 4},
        {"mobilenet_v2", LUTHIER_ZOO__MOBILENET, {0, 0, 0, 0}, 128, 4},
        {"bert", LUTHIER_ZOO__BERT, {0, 0, 0, 0}, 64, 4},
        {"gpt2", LUTHIER_ZOO__GPT2, {0, 0, 0, 0}, 64, 4},
        {"gpt2_decode", LUTHIER_ZOO__GPT2_DECODE, {0, 0, 0, 0}, 64, 4}};
    char base[32];
    size_t n, v;
    int small = opt && opt->small, bert;
    if (!name) return 0;
    n = strlen(name);
    if (n >= sizeof base) return 0;
    memcpy(base, name, n + 1);
    if (n > 6 && strcmp(base + n - 6, "_small") == 0) {
        base[n - 6] = 0;
        small = 1;
    }
    for (v = 0; v < sizeof nets / sizeof nets[0]; v++)
        if (strcmp(base, nets[v].base) == 0) break;
    if (v == sizeof nets / sizeof nets[0]) return 0;
    memset(c, 0, sizeof *c);
    c->base = nets[v].base;
    c->kind = nets[v].kind;
    c->small = small;
    c->size = small ? nets[v].small_size : 224;
    c->div = small ? nets[v].small_div : 1;
    c->hidden = small ? 256 : 4096;
    c->classes = small ? 100 : 1000;
    c->bottleneck = c->kind == LUTHIER_ZOO__RESNET && v != 0;
    memcpy(c->blocks, nets[v].blocks, sizeof c->blocks);
    if (c->kind >= LUTHIER_ZOO__BERT) {
        bert = c->kind == LUTHIER_ZOO__BERT;
        c->vocab = small ? 1000 : bert ? 30522 : 50257;
        c->d = small ? 64 : 768;
        c->layers = small ? 2 : 12;
        c->heads = small ? 4 : 12;
        c->ffn = small ? 256 : 3072;
        c->max_pos = small ? 64 : bert ? 512 : 1024;
        c->seq = small ? 16 : 128;
        c->eps = bert ? 1e-12f : 1e-5f;
    }
    return 1;
}

LUTHIER_ZOO__FN int luthier_zoo__lookup(const char *name, const luthier_zoo_options *opt,
                                        luthier_zoo__cfg *c, char *err, size_t err_size) {
    if (luthier_zoo__config(name, opt, c)) return 1;
    luthier_zoo__msg(err, err_size,
                     "luthier_zoo: unknown network '%s' (known: resnet18 resnet50 resnet101 "
                     "alexnet vgg16 googlenet mobilenet_v2 bert gpt2 gpt2_decode, each also "
                     "with _small)", name ? name : "(null)");
    return 0;
}

/* The streams are splitmix64 as a counter (luthier__gbt_rand): draw i (0-based) of the stream
   with state s is mix(s + (i+1)*g). */
LUTHIER_ZOO__FN double luthier_zoo__u(uint64_t *state) {
    return (double)(luthier__gbt_rand(state) >> 40) * (1.0 / 8388608.0) - 1.0;
}

/* value = (float)(u * s + o): the product is stored before the sum so that no compiler
   contracts it into an FMA (PyTorch's side rounds the product). */
LUTHIER_ZOO__FN void luthier_zoo__fill(uint64_t *state, float *p, size_t n, double s, double o) {
    size_t i;
    for (i = 0; i < n; i++) {
        volatile double t = luthier_zoo__u(state) * s;
        p[i] = (float)(t + o);
    }
}

static int luthier_zoo__ends(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- the builder: sticky status, weights in creation order ---- */

#define LUTHIER_ZOO__RING 16
typedef struct luthier_zoo__b {
    luthier_graph *g;
    uint64_t state; /* weight stream */
    luthier_status status;
    char *err;
    size_t err_size;
    const luthier_zoo__cfg *c;
    char ring[LUTHIER_ZOO__RING][128];
    unsigned ring_next;
} luthier_zoo__b;

LUTHIER_ZOO__FN void luthier_zoo__fail(luthier_zoo__b *b, luthier_status s, const char *what) {
    if (b->status) return;
    b->status = s;
    luthier_zoo__msg(b->err, b->err_size, "luthier_zoo %s%s: %s: %s", b->c->base,
                     b->c->small ? "_small" : "", what,
                     b->g && luthier_graph_error(b->g)[0] ? luthier_graph_error(b->g)
                                                          : luthier_status_string(s));
}

/* Names: luthier_zoo__nmv returns one by value (for locals); luthier_zoo__nm formats into the
   builder's ring of buffers, valid for the next LUTHIER_ZOO__RING calls (node names are copied
   by the graph, so they only need to live through one call). */
typedef struct luthier_zoo__name { char s[128]; } luthier_zoo__name;
LUTHIER_ZOO__FN luthier_zoo__name luthier_zoo__nmv(const char *fmt, ...) {
    luthier_zoo__name n;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n.s, sizeof n.s, fmt, ap);
    va_end(ap);
    return n;
}
LUTHIER_ZOO__FN const char *luthier_zoo__nm(luthier_zoo__b *b, const char *fmt, ...) {
    char *s = b->ring[b->ring_next++ % LUTHIER_ZOO__RING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof b->ring[0], fmt, ap);
    va_end(ap);
    return s;
}

/* A state_dict tensor "<prefix>.<leaf>" generated from the weight stream. */
LUTHIER_ZOO__FN int luthier_zoo__weight(luthier_zoo__b *b, const char *prefix, const char *leaf,
                                        int rank, const int64_t *shape) {
    luthier_zoo__name name = luthier_zoo__nmv("%s.%s", prefix, leaf);
    size_t n = 1, fan_in = 1;
    double s, o;
    float *data;
    int i, t = -1;
    luthier_status st;
    if (b->status) return -1;
    for (i = 0; i < rank; i++) {
        n *= (size_t)shape[i];
        if (i) fan_in *= (size_t)shape[i];
    }
    if (luthier_zoo__ends(name.s, "running_var")) { s = 0.5; o = 1.0; }
    else if (luthier_zoo__ends(name.s, "running_mean")) { s = 0.1; o = 0.0; }
    else if (rank >= 2) { s = sqrt(6.0 / (double)fan_in); o = 0.0; }
    else if (luthier_zoo__ends(name.s, "bias")) { s = 0.1; o = 0.0; }
    else { s = 0.1; o = 1.0; } /* 1-D weight: norm gamma */
    data = (float *)malloc(n * sizeof(float));
    if (!data) {
        luthier_zoo__fail(b, LUTHIER_STATUS_OUT_OF_MEMORY, name.s);
        return -1;
    }
    luthier_zoo__fill(&b->state, data, n, s, o);
    st = luthier_graph_constant(b->g, name.s, rank, shape, data, 1, &t);
    free(data);
    if (st) luthier_zoo__fail(b, st, name.s);
    return st ? -1 : t;
}

/* A node descriptor with every field zero: the helpers below set their nodes' attributes in it. */
LUTHIER_ZOO__FN luthier_node_desc luthier_zoo__desc(void) {
    luthier_node_desc d;
    memset(&d, 0, sizeof d);
    return d;
}

LUTHIER_ZOO__FN int luthier_zoo__node(luthier_zoo__b *b, luthier_node_desc *d, luthier_op op, const int *in,
                                      int nin, const char *name) {
    int out = -1, i;
    luthier_status st;
    if (b->status) return -1;
    for (i = 0; i < nin; i++)
        if (in[i] < 0) {
            luthier_zoo__fail(b, LUTHIER_STATUS_INVALID_ARGUMENT, name);
            return -1;
        }
    d->op = op;
    d->inputs = in;
    d->num_inputs = nin;
    d->name = name;
    st = luthier_graph_add_node(b->g, d, &out);
    if (st) luthier_zoo__fail(b, st, name);
    return st ? -1 : out;
}

LUTHIER_ZOO__FN int luthier_zoo__unary(luthier_zoo__b *b, luthier_op op, int x, const char *name) {
    luthier_node_desc d = luthier_zoo__desc();
    return luthier_zoo__node(b, &d, op, &x, 1, name);
}

/* A node of inputs x, y with the attributes of d. */
LUTHIER_ZOO__FN int luthier_zoo__node2(luthier_zoo__b *b, luthier_node_desc *d, luthier_op op, int x, int y,
                                       const char *name) {
    int in[2];
    in[0] = x;
    in[1] = y;
    return luthier_zoo__node(b, d, op, in, 2, name);
}

LUTHIER_ZOO__FN int luthier_zoo__binary(luthier_zoo__b *b, luthier_op op, int x, int y, const char *name) {
    luthier_node_desc d = luthier_zoo__desc();
    return luthier_zoo__node2(b, &d, op, x, y, name);
}

/* Conv2d "name" (weight [cout, cin/groups, k, k], bias when has_bias) */
LUTHIER_ZOO__FN int luthier_zoo__conv(luthier_zoo__b *b, int x, const char *name, int64_t cin,
                                      int64_t cout, int64_t k, int64_t stride, int64_t pad,
                                      int64_t groups, int has_bias) {
    luthier_node_desc d = luthier_zoo__desc();
    int64_t ws[4], bs[1];
    int in[3];
    ws[0] = cout;
    ws[1] = cin / groups;
    ws[2] = ws[3] = k;
    bs[0] = cout;
    in[0] = x;
    in[1] = luthier_zoo__weight(b, name, "weight", 4, ws);
    in[2] = has_bias ? luthier_zoo__weight(b, name, "bias", 1, bs) : -1;
    d.stride[0] = d.stride[1] = stride;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = pad;
    d.groups = groups;
    return luthier_zoo__node(b, &d, LUTHIER_OP_CONV2D, in, has_bias ? 3 : 2, name);
}

LUTHIER_ZOO__FN int luthier_zoo__bn(luthier_zoo__b *b, int x, const char *name, int64_t c, float eps) {
    luthier_node_desc d = luthier_zoo__desc();
    int in[5];
    in[0] = x;
    in[1] = luthier_zoo__weight(b, name, "weight", 1, &c);
    in[2] = luthier_zoo__weight(b, name, "bias", 1, &c);
    in[3] = luthier_zoo__weight(b, name, "running_mean", 1, &c);
    in[4] = luthier_zoo__weight(b, name, "running_var", 1, &c);
    d.epsilon = eps;
    return luthier_zoo__node(b, &d, LUTHIER_OP_BATCH_NORM, in, 5, name);
}

LUTHIER_ZOO__FN int luthier_zoo__clip6(luthier_zoo__b *b, int x, const char *name) {
    luthier_node_desc d = luthier_zoo__desc();
    d.clamp_min = 0.0f;
    d.clamp_max = 6.0f;
    return luthier_zoo__node(b, &d, LUTHIER_OP_CLIP, &x, 1, name);
}

LUTHIER_ZOO__FN int luthier_zoo__maxpool(luthier_zoo__b *b, int x, const char *name, int64_t k,
                                         int64_t stride, int64_t pad, int ceil_mode) {
    luthier_node_desc d = luthier_zoo__desc();
    d.kernel[0] = d.kernel[1] = k;
    d.stride[0] = d.stride[1] = stride;
    d.pads[0] = d.pads[1] = d.pads[2] = d.pads[3] = pad;
    d.ceil_mode = ceil_mode;
    return luthier_zoo__node(b, &d, LUTHIER_OP_MAXPOOL, &x, 1, name);
}

LUTHIER_ZOO__FN int luthier_zoo__adaptive(luthier_zoo__b *b, int x, const char *name, int64_t s) {
    luthier_node_desc d = luthier_zoo__desc();
    d.out_size[0] = d.out_size[1] = s;
    return luthier_zoo__node(b, &d, LUTHIER_OP_ADAPTIVE_AVGPOOL, &x, 1, name);
}

/* Linear "name": weight [n, k] (PyTorch layout), bias [n] */
LUTHIER_ZOO__FN int luthier_zoo__dense(luthier_zoo__b *b, int x, const char *name, int64_t k, int64_t n) {
    luthier_node_desc d = luthier_zoo__desc();
    int64_t ws[2];
    int in[3];
    ws[0] = n;
    ws[1] = k;
    in[0] = x;
    in[1] = luthier_zoo__weight(b, name, "weight", 2, ws);
    in[2] = luthier_zoo__weight(b, name, "bias", 1, &n);
    return luthier_zoo__node(b, &d, LUTHIER_OP_DENSE, in, 3, name);
}

LUTHIER_ZOO__FN int luthier_zoo__layer_norm(luthier_zoo__b *b, int x, const char *name, int64_t dm) {
    luthier_node_desc d = luthier_zoo__desc();
    int in[3];
    in[0] = x;
    in[1] = luthier_zoo__weight(b, name, "weight", 1, &dm);
    in[2] = luthier_zoo__weight(b, name, "bias", 1, &dm);
    d.axis = -1;
    d.epsilon = b->c->eps;
    return luthier_zoo__node(b, &d, LUTHIER_OP_LAYER_NORM, in, 3, name);
}

LUTHIER_ZOO__FN int luthier_zoo__reshape(luthier_zoo__b *b, int x, const char *name, int rank,
                                         int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    luthier_node_desc d = luthier_zoo__desc();
    int64_t s[4];
    s[0] = d0;
    s[1] = d1;
    s[2] = d2;
    s[3] = d3;
    d.sizes = s;
    d.num_sizes = rank;
    return luthier_zoo__node(b, &d, LUTHIER_OP_RESHAPE, &x, 1, name);
}

/* [B,S,H,Dh] <-> [B,H,S,Dh] */
LUTHIER_ZOO__FN int luthier_zoo__swap12(luthier_zoo__b *b, int x, const char *name) {
    static const int perm[4] = {0, 2, 1, 3};
    luthier_node_desc d = luthier_zoo__desc();
    d.perm = perm;
    return luthier_zoo__node(b, &d, LUTHIER_OP_TRANSPOSE, &x, 1, name);
}

LUTHIER_ZOO__FN int luthier_zoo__gather(luthier_zoo__b *b, int data, int idx, int axis, const char *name) {
    luthier_node_desc d = luthier_zoo__desc();
    d.axis = axis;
    return luthier_zoo__node2(b, &d, LUTHIER_OP_GATHER, data, idx, name);
}

/* I64 constant [n] with values start, start + step, ... */
LUTHIER_ZOO__FN int luthier_zoo__range(luthier_zoo__b *b, const char *name, int64_t n, int64_t start,
                                       int64_t step) {
    int64_t *v, i;
    int t = -1;
    luthier_status st;
    if (b->status) return -1;
    v = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    if (!v) {
        luthier_zoo__fail(b, LUTHIER_STATUS_OUT_OF_MEMORY, name);
        return -1;
    }
    for (i = 0; i < n; i++) v[i] = start + i * step;
    st = luthier_graph_constant_i64(b->g, name, 1, &n, v, &t);
    free(v);
    if (st) luthier_zoo__fail(b, st, name);
    return st ? -1 : t;
}

LUTHIER_ZOO__FN int luthier_zoo__input(luthier_zoo__b *b, const char *name, luthier_dtype dt, int rank,
                                       const int64_t *shape) {
    int t = -1;
    luthier_status st;
    if (b->status) return -1;
    st = luthier_graph_input(b->g, name, dt, rank, shape, &t);
    if (st) luthier_zoo__fail(b, st, name);
    return st ? -1 : t;
}

LUTHIER_ZOO__FN void luthier_zoo__output(luthier_zoo__b *b, int t) {
    luthier_status st;
    if (b->status) return;
    st = luthier_graph_output(b->g, t);
    if (st) luthier_zoo__fail(b, st, "output");
}

/* ---- CNNs ---- */

/* GLOBAL_AVGPOOL "avgpool" -> FLATTEN "flatten" -> Linear fc_name */
LUTHIER_ZOO__FN int luthier_zoo__head(luthier_zoo__b *b, int x, int64_t c, const char *fc_name) {
    x = luthier_zoo__unary(b, LUTHIER_OP_GLOBAL_AVGPOOL, x, "avgpool");
    x = luthier_zoo__unary(b, LUTHIER_OP_FLATTEN, x, "flatten");
    return luthier_zoo__dense(b, x, fc_name, c, b->c->classes);
}

LUTHIER_ZOO__FN int luthier_zoo__resnet(luthier_zoo__b *b, int x) {
    const luthier_zoo__cfg *c = b->c;
    int64_t div = c->div, inplanes = 64 / div, exp = c->bottleneck ? 4 : 1;
    int l, i;
    x = luthier_zoo__conv(b, x, "conv1", 3, inplanes, 7, 2, 3, 1, 0);
    x = luthier_zoo__bn(b, x, "bn1", inplanes, 1e-5f);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "relu");
    x = luthier_zoo__maxpool(b, x, "maxpool", 3, 2, 1, 0);
    for (l = 0; l < 4; l++) {
        int64_t planes = (64 << l) / div;
        for (i = 0; i < c->blocks[l]; i++) {
            int64_t s = i == 0 && l > 0 ? 2 : 1;
            luthier_zoo__name p = luthier_zoo__nmv("layer%d.%d", l + 1, i);
            int y, idt = x;
#define LUTHIER_ZOO__P(leaf) luthier_zoo__nm(b, "%s." leaf, p.s)
            /* basic: conv1 3x3 with the stride, conv2 3x3; bottleneck: conv1 1x1, conv2 3x3 with
               the stride, conv3 1x1 */
            const int64_t k1 = c->bottleneck ? 1 : 3, s1 = c->bottleneck ? 1 : s, s2 = c->bottleneck ? s : 1;
            y = luthier_zoo__conv(b, x, LUTHIER_ZOO__P("conv1"), inplanes, planes, k1, s1, k1 / 2, 1, 0);
            y = luthier_zoo__bn(b, y, LUTHIER_ZOO__P("bn1"), planes, 1e-5f);
            y = luthier_zoo__unary(b, LUTHIER_OP_RELU, y, LUTHIER_ZOO__P("relu"));
            y = luthier_zoo__conv(b, y, LUTHIER_ZOO__P("conv2"), planes, planes, 3, s2, 1, 1, 0);
            y = luthier_zoo__bn(b, y, LUTHIER_ZOO__P("bn2"), planes, 1e-5f);
            if (c->bottleneck) {
                y = luthier_zoo__unary(b, LUTHIER_OP_RELU, y, LUTHIER_ZOO__P("relu_2"));
                y = luthier_zoo__conv(b, y, LUTHIER_ZOO__P("conv3"), planes, planes * 4, 1, 1, 0, 1, 0);
                y = luthier_zoo__bn(b, y, LUTHIER_ZOO__P("bn3"), planes * 4, 1e-5f);
            }
            if (i == 0 && (s != 1 || inplanes != planes * exp)) {
                idt = luthier_zoo__conv(b, x, LUTHIER_ZOO__P("downsample.0"), inplanes, planes * exp,
                                        1, s, 0, 1, 0);
                idt = luthier_zoo__bn(b, idt, LUTHIER_ZOO__P("downsample.1"), planes * exp, 1e-5f);
            }
            y = luthier_zoo__binary(b, LUTHIER_OP_ADD, y, idt, LUTHIER_ZOO__P("add"));
            x = luthier_zoo__unary(b, LUTHIER_OP_RELU, y,
                                   c->bottleneck ? LUTHIER_ZOO__P("relu_3") : LUTHIER_ZOO__P("relu_2"));
#undef LUTHIER_ZOO__P
            inplanes = planes * exp;
        }
    }
    return luthier_zoo__head(b, x, inplanes, "fc");
}

/* AdaptiveAvgPool2d(s) "avgpool" -> FLATTEN "flatten" -> Linear -> ReLU -> Linear -> ReLU ->
   Linear (dropouts are left out: identity at inference); ch: the channels pooled */
LUTHIER_ZOO__FN int luthier_zoo__classifier(luthier_zoo__b *b, int x, int64_t ch, int64_t s, int i0, int i1, int i2) {
    const luthier_zoo__cfg *c = b->c;
    x = luthier_zoo__adaptive(b, x, "avgpool", s);
    x = luthier_zoo__unary(b, LUTHIER_OP_FLATTEN, x, "flatten");
    x = luthier_zoo__dense(b, x, luthier_zoo__nm(b, "classifier.%d", i0), ch * s * s, c->hidden);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, luthier_zoo__nm(b, "classifier.%d", i0 + 1));
    x = luthier_zoo__dense(b, x, luthier_zoo__nm(b, "classifier.%d", i1), c->hidden, c->hidden);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, luthier_zoo__nm(b, "classifier.%d", i1 + 1));
    return luthier_zoo__dense(b, x, luthier_zoo__nm(b, "classifier.%d", i2), c->hidden, c->classes);
}

LUTHIER_ZOO__FN int luthier_zoo__alexnet(luthier_zoo__b *b, int x) {
    int64_t div = b->c->div;
    int64_t c0 = 64 / div, c1 = 192 / div, c2 = 384 / div, c3 = 256 / div;
    x = luthier_zoo__conv(b, x, "features.0", 3, c0, 11, 4, 2, 1, 1);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "features.1");
    x = luthier_zoo__maxpool(b, x, "features.2", 3, 2, 0, 0);
    x = luthier_zoo__conv(b, x, "features.3", c0, c1, 5, 1, 2, 1, 1);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "features.4");
    x = luthier_zoo__maxpool(b, x, "features.5", 3, 2, 0, 0);
    x = luthier_zoo__conv(b, x, "features.6", c1, c2, 3, 1, 1, 1, 1);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "features.7");
    x = luthier_zoo__conv(b, x, "features.8", c2, c3, 3, 1, 1, 1, 1);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "features.9");
    x = luthier_zoo__conv(b, x, "features.10", c3, c3, 3, 1, 1, 1, 1);
    x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, "features.11");
    x = luthier_zoo__maxpool(b, x, "features.12", 3, 2, 0, 0);
    return luthier_zoo__classifier(b, x, c3, 6, 1, 4, 6);
}

LUTHIER_ZOO__FN int luthier_zoo__vgg16(luthier_zoo__b *b, int x) {
    static const int cfg[18] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0,
                                512, 512, 512, 0};
    int64_t cin = 3;
    int i, f = 0;
    for (i = 0; i < 18; i++) {
        if (!cfg[i]) {
            x = luthier_zoo__maxpool(b, x, luthier_zoo__nm(b, "features.%d", f++), 2, 2, 0, 0);
        } else {
            int64_t co = cfg[i] / b->c->div;
            x = luthier_zoo__conv(b, x, luthier_zoo__nm(b, "features.%d", f++), cin, co, 3, 1, 1, 1, 1);
            x = luthier_zoo__unary(b, LUTHIER_OP_RELU, x, luthier_zoo__nm(b, "features.%d", f++));
            cin = co;
        }
    }
    return luthier_zoo__classifier(b, x, cin, 7, 0, 3, 6);
}

/* GoogLeNet's BasicConv2d "name": conv (no bias) -> bn (eps 1e-3) -> relu */
LUTHIER_ZOO__FN int luthier_zoo__basic_conv(luthier_zoo__b *b, int x, const char *name, int64_t cin,
                                            int64_t cout, int64_t k, int64_t s, int64_t p) {
    x = luthier_zoo__conv(b, x, luthier_zoo__nm(b, "%s.conv", name), cin, cout, k, s, p, 1, 0);
    x = luthier_zoo__bn(b, x, luthier_zoo__nm(b, "%s.bn", name), cout, 1e-3f);
    return luthier_zoo__unary(b, LUTHIER_OP_RELU, x, luthier_zoo__nm(b, "%s.relu", name));
}

LUTHIER_ZOO__FN int luthier_zoo__googlenet(luthier_zoo__b *b, int x) {
    /* name, cin, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5 (3x3 in torchvision), pool_proj;
       a row with cin 0 is a max pool (kernel in ch1x1) */
    static const struct { const char *name; int v[7]; } inc[11] = {
        {"inception3a", {192, 64, 96, 128, 16, 32, 32}},
        {"inception3b", {256, 128, 128, 192, 32, 96, 64}},
        {"maxpool3", {0, 3, 0, 0, 0, 0, 0}},
        {"inception4a", {480, 192, 96, 208, 16, 48, 64}},
        {"inception4b", {512, 160, 112, 224, 24, 64, 64}},
        {"inception4c", {512, 128, 128, 256, 24, 64, 64}},
        {"inception4d", {512, 112, 144, 288, 32, 64, 64}},
        {"inception4e", {528, 256, 160, 320, 32, 128, 128}},
        {"maxpool4", {0, 2, 0, 0, 0, 0, 0}},
        {"inception5a", {832, 256, 160, 320, 32, 128, 128}},
        {"inception5b", {832, 384, 192, 384, 48, 128, 128}}};
    int64_t dv = b->c->div;
    int i;
    x = luthier_zoo__basic_conv(b, x, "conv1", 3, 64 / dv, 7, 2, 3);
    x = luthier_zoo__maxpool(b, x, "maxpool1", 3, 2, 0, 1);
    x = luthier_zoo__basic_conv(b, x, "conv2", 64 / dv, 64 / dv, 1, 1, 0);
    x = luthier_zoo__basic_conv(b, x, "conv3", 64 / dv, 192 / dv, 3, 1, 1);
    x = luthier_zoo__maxpool(b, x, "maxpool2", 3, 2, 0, 1);
    for (i = 0; i < 11; i++) {
        const char *n = inc[i].name;
        const int *v = inc[i].v;
        int br[4];
        luthier_node_desc d = luthier_zoo__desc();
        if (!v[0]) {
            x = luthier_zoo__maxpool(b, x, n, v[1], 2, 0, 1);
            continue;
        }
        br[0] = luthier_zoo__basic_conv(b, x, luthier_zoo__nm(b, "%s.branch1", n), v[0] / dv, v[1] / dv, 1, 1, 0);
        br[1] = luthier_zoo__basic_conv(b, x, luthier_zoo__nm(b, "%s.branch2.0", n), v[0] / dv, v[2] / dv, 1, 1, 0);
        br[1] = luthier_zoo__basic_conv(b, br[1], luthier_zoo__nm(b, "%s.branch2.1", n), v[2] / dv, v[3] / dv, 3, 1, 1);
        br[2] = luthier_zoo__basic_conv(b, x, luthier_zoo__nm(b, "%s.branch3.0", n), v[0] / dv, v[4] / dv, 1, 1, 0);
        br[2] = luthier_zoo__basic_conv(b, br[2], luthier_zoo__nm(b, "%s.branch3.1", n), v[4] / dv, v[5] / dv, 3, 1, 1);
        br[3] = luthier_zoo__maxpool(b, x, luthier_zoo__nm(b, "%s.branch4.0", n), 3, 1, 1, 1);
        br[3] = luthier_zoo__basic_conv(b, br[3], luthier_zoo__nm(b, "%s.branch4.1", n), v[0] / dv, v[6] / dv, 1, 1, 0);
        d.axis = 1;
        x = luthier_zoo__node(b, &d, LUTHIER_OP_CONCAT, br, 4, luthier_zoo__nm(b, "%s.concat", n));
    }
    return luthier_zoo__head(b, x, 1024 / dv, "fc");
}

/* Conv2dNormActivation "name": conv "name.0" (no bias) -> bn "name.1" -> ReLU6 "name.2" */
LUTHIER_ZOO__FN int luthier_zoo__cbr6(luthier_zoo__b *b, int x, const char *name, int64_t cin,
                                      int64_t cout, int64_t k, int64_t s, int64_t groups) {
    x = luthier_zoo__conv(b, x, luthier_zoo__nm(b, "%s.0", name), cin, cout, k, s, (k - 1) / 2, groups, 0);
    x = luthier_zoo__bn(b, x, luthier_zoo__nm(b, "%s.1", name), cout, 1e-5f);
    return luthier_zoo__clip6(b, x, luthier_zoo__nm(b, "%s.2", name));
}

LUTHIER_ZOO__FN int luthier_zoo__mobilenet_v2(luthier_zoo__b *b, int x) {
    static const int setting[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    int64_t dv = b->c->div, c = 32 / dv;
    int f = 1, i, j;
    x = luthier_zoo__cbr6(b, x, "features.0", 3, c, 3, 2, 1);
    for (i = 0; i < 7; i++) {
        for (j = 0; j < setting[i][2]; j++, f++) {
            int64_t t = setting[i][0], co = setting[i][1] / dv, s = j == 0 ? setting[i][3] : 1;
            int64_t hid = c * t;
            int y = x, k = 0;
            if (t != 1) y = luthier_zoo__cbr6(b, y, luthier_zoo__nm(b, "features.%d.conv.%d", f, k++), c, hid, 1, 1, 1);
            y = luthier_zoo__cbr6(b, y, luthier_zoo__nm(b, "features.%d.conv.%d", f, k++), hid, hid, 3, s, hid);
            y = luthier_zoo__conv(b, y, luthier_zoo__nm(b, "features.%d.conv.%d", f, k), hid, co, 1, 1, 0, 1, 0);
            y = luthier_zoo__bn(b, y, luthier_zoo__nm(b, "features.%d.conv.%d", f, k + 1), co, 1e-5f);
            if (s == 1 && c == co) y = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, y, luthier_zoo__nm(b, "features.%d.add", f));
            x = y;
            c = co;
        }
    }
    x = luthier_zoo__cbr6(b, x, luthier_zoo__nm(b, "features.%d", f), c, 1280 / dv, 1, 1, 1);
    return luthier_zoo__head(b, x, 1280 / dv, "classifier.1");
}

/* ---- transformers ---- */

/* Linear "name" on [1,S,d] -> heads [1,H,S,Dh] ("name.split_heads", "name.transpose") */
LUTHIER_ZOO__FN int luthier_zoo__proj_heads(luthier_zoo__b *b, int x, const char *name, int64_t s) {
    const luthier_zoo__cfg *c = b->c;
    x = luthier_zoo__dense(b, x, name, c->d, c->d);
    x = luthier_zoo__reshape(b, x, luthier_zoo__nm(b, "%s.split_heads", name), 4, 1, s, c->heads,
                             c->d / c->heads);
    return luthier_zoo__swap12(b, x, luthier_zoo__nm(b, "%s.transpose", name));
}

/* ATTENTION "prefix.sdpa" on q [1,H,Sq,Dh], k, v -> merged [1,Sq,d] */
LUTHIER_ZOO__FN int luthier_zoo__sdpa(luthier_zoo__b *b, int q, int k, int v, const char *prefix,
                                      int64_t sq, int causal) {
    luthier_node_desc d = luthier_zoo__desc();
    int in[3], x;
    in[0] = q;
    in[1] = k;
    in[2] = v;
    d.causal = causal;
    x = luthier_zoo__node(b, &d, LUTHIER_OP_ATTENTION, in, 3, luthier_zoo__nm(b, "%s.sdpa", prefix));
    x = luthier_zoo__swap12(b, x, luthier_zoo__nm(b, "%s.merge_transpose", prefix));
    return luthier_zoo__reshape(b, x, luthier_zoo__nm(b, "%s.merge_heads", prefix), 3, 1, sq, b->c->d, 0);
}

LUTHIER_ZOO__FN int luthier_zoo__bert(luthier_zoo__b *b, int ids) {
    const luthier_zoo__cfg *c = b->c;
    int64_t s = c->seq, two = 2, shp[2];
    int x, t, l;
    shp[0] = c->vocab;
    shp[1] = c->d;
    t = luthier_zoo__weight(b, "embeddings.word_embeddings", "weight", 2, shp);
    x = luthier_zoo__gather(b, t, ids, 0, "embeddings.word_embeddings");
    shp[0] = c->max_pos;
    t = luthier_zoo__weight(b, "embeddings.position_embeddings", "weight", 2, shp);
    t = luthier_zoo__gather(b, t, luthier_zoo__range(b, "embeddings.position_ids", s, 0, 1), 0,
                            "embeddings.position_embeddings");
    x = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, t, "embeddings.add");
    shp[0] = two;
    t = luthier_zoo__weight(b, "embeddings.token_type_embeddings", "weight", 2, shp);
    t = luthier_zoo__gather(b, t, luthier_zoo__range(b, "embeddings.token_type_ids", s, 0, 0), 0,
                            "embeddings.token_type_embeddings");
    x = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, t, "embeddings.add_2");
    x = luthier_zoo__layer_norm(b, x, "embeddings.LayerNorm", c->d);
    for (l = 0; l < c->layers; l++) {
        luthier_zoo__name p = luthier_zoo__nmv("encoder.layer.%d", l), a = luthier_zoo__nmv("%s.attention", p.s);
        int q, k, v, y;
        q = luthier_zoo__proj_heads(b, x, luthier_zoo__nm(b, "%s.query", a.s), s);
        k = luthier_zoo__proj_heads(b, x, luthier_zoo__nm(b, "%s.key", a.s), s);
        v = luthier_zoo__proj_heads(b, x, luthier_zoo__nm(b, "%s.value", a.s), s);
        y = luthier_zoo__sdpa(b, q, k, v, a.s, s, 0);
        y = luthier_zoo__dense(b, y, luthier_zoo__nm(b, "%s.output", a.s), c->d, c->d);
        y = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, y, luthier_zoo__nm(b, "%s.add", a.s));
        x = luthier_zoo__layer_norm(b, y, luthier_zoo__nm(b, "%s.LayerNorm", a.s), c->d);
        y = luthier_zoo__dense(b, x, luthier_zoo__nm(b, "%s.intermediate", p.s), c->d, c->ffn);
        y = luthier_zoo__unary(b, LUTHIER_OP_GELU, y, luthier_zoo__nm(b, "%s.intermediate.gelu", p.s));
        y = luthier_zoo__dense(b, y, luthier_zoo__nm(b, "%s.output", p.s), c->ffn, c->d);
        y = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, y, luthier_zoo__nm(b, "%s.add", p.s));
        x = luthier_zoo__layer_norm(b, y, luthier_zoo__nm(b, "%s.LayerNorm", p.s), c->d);
    }
    return x;
}

/* GPT-2 prompt (past == NULL) or decode step (past: 2 * layers input tensors). Writes the
   present key/value tensors to presents (2 * layers) and returns the logits [1, vocab]. */
LUTHIER_ZOO__FN int luthier_zoo__gpt2(luthier_zoo__b *b, int ids, const int *past, int *presents) {
    const luthier_zoo__cfg *c = b->c;
    int64_t s = past ? 1 : c->seq, pos0 = past ? c->seq : 0, shp[2];
    int x, t, wte, l;
    luthier_node_desc d;
    shp[0] = c->vocab;
    shp[1] = c->d;
    wte = luthier_zoo__weight(b, "wte", "weight", 2, shp);
    x = luthier_zoo__gather(b, wte, ids, 0, "wte");
    shp[0] = c->max_pos;
    t = luthier_zoo__weight(b, "wpe", "weight", 2, shp);
    t = luthier_zoo__gather(b, t, luthier_zoo__range(b, "position_ids", s, pos0, 1), 0, "wpe");
    x = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, t, "embeddings.add");
    for (l = 0; l < c->layers; l++) {
        luthier_zoo__name p = luthier_zoo__nmv("h.%d", l), a = luthier_zoo__nmv("h.%d.attn", l);
        int h, q, k, v, y;
        h = luthier_zoo__layer_norm(b, x, luthier_zoo__nm(b, "%s.ln_1", p.s), c->d);
        q = luthier_zoo__proj_heads(b, h, luthier_zoo__nm(b, "%s.q_proj", a.s), s);
        k = luthier_zoo__proj_heads(b, h, luthier_zoo__nm(b, "%s.k_proj", a.s), s);
        v = luthier_zoo__proj_heads(b, h, luthier_zoo__nm(b, "%s.v_proj", a.s), s);
        presents[2 * l] = k;
        presents[2 * l + 1] = v;
        if (past) {
            memset(&d, 0, sizeof d);
            d.axis = 2;
            k = luthier_zoo__node2(b, &d, LUTHIER_OP_CONCAT, past[2 * l], k, luthier_zoo__nm(b, "%s.cat_key", a.s));
            v = luthier_zoo__node2(b, &d, LUTHIER_OP_CONCAT, past[2 * l + 1], v, luthier_zoo__nm(b, "%s.cat_value", a.s));
        }
        y = luthier_zoo__sdpa(b, q, k, v, a.s, s, 1);
        y = luthier_zoo__dense(b, y, luthier_zoo__nm(b, "%s.c_proj", a.s), c->d, c->d);
        x = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, y, luthier_zoo__nm(b, "%s.add", a.s));
        h = luthier_zoo__layer_norm(b, x, luthier_zoo__nm(b, "%s.ln_2", p.s), c->d);
        h = luthier_zoo__dense(b, h, luthier_zoo__nm(b, "%s.mlp.c_fc", p.s), c->d, c->ffn);
        memset(&d, 0, sizeof d);
        d.approximate = 1;
        h = luthier_zoo__node(b, &d, LUTHIER_OP_GELU, &h, 1, luthier_zoo__nm(b, "%s.mlp.gelu", p.s));
        h = luthier_zoo__dense(b, h, luthier_zoo__nm(b, "%s.mlp.c_proj", p.s), c->ffn, c->d);
        x = luthier_zoo__binary(b, LUTHIER_OP_ADD, x, h, luthier_zoo__nm(b, "%s.mlp.add", p.s));
    }
    if (!past) /* the last position only: [1,S,d] -> [1,1,d] */
        x = luthier_zoo__gather(b, x, luthier_zoo__range(b, "last_position", 1, s - 1, 1), 1, "last_token");
    x = luthier_zoo__reshape(b, x, "last_token.reshape", 2, 1, c->d, 0, 0);
    x = luthier_zoo__layer_norm(b, x, "ln_f", c->d);
    /* tied: Linear weight [vocab, d] is the embedding */
    return luthier_zoo__binary(b, LUTHIER_OP_DENSE, x, wte, "lm_head");
}

/* ---- public functions ---- */

/* The bytes of a tensor of the given shape, elem bytes per element. */
LUTHIER_ZOO__FN size_t luthier_zoo__bytes(size_t elem, int rank, const int64_t *shape) {
    int j;
    for (j = 0; j < rank; j++) elem *= (size_t)shape[j];
    return elem;
}

/* Inputs and outputs of a network (shapes as the graph has them). */
LUTHIER_ZOO__FN luthier_status luthier_zoo_get_info(const char *name, const luthier_zoo_options *opt,
                                                    luthier_zoo_info *out) {
    luthier_zoo__cfg c;
    int i;
    if (!out || !luthier_zoo__config(name, opt, &c)) return !out ? LUTHIER_STATUS_INVALID_ARGUMENT
                                                                 : LUTHIER_STATUS_NOT_FOUND;
    memset(out, 0, sizeof *out);
    out->num_inputs = out->num_outputs = 1;
    if (c.kind <= LUTHIER_ZOO__MOBILENET) {
        out->input_dtype[0] = LUTHIER_DTYPE_F32;
        out->input_rank[0] = 4;
        out->input_shape[0][0] = 1;
        out->input_shape[0][1] = 3;
        out->input_shape[0][2] = out->input_shape[0][3] = c.size;
        out->output_rank[0] = 2;
        out->output_shape[0][0] = 1;
        out->output_shape[0][1] = c.classes;
    } else {
        out->input_dtype[0] = LUTHIER_DTYPE_I64;
        out->input_rank[0] = 2;
        out->input_shape[0][0] = 1;
        out->input_shape[0][1] = c.kind == LUTHIER_ZOO__GPT2_DECODE ? 1 : c.seq;
        out->output_rank[0] = c.kind == LUTHIER_ZOO__BERT ? 3 : 2;
        out->output_shape[0][0] = 1;
        out->output_shape[0][1] = c.kind == LUTHIER_ZOO__BERT ? c.seq : c.vocab;
        out->output_shape[0][2] = c.d;
        if (c.kind != LUTHIER_ZOO__BERT) { /* present (gpt2) or past (gpt2_decode) keys, values */
            int dec = c.kind == LUTHIER_ZOO__GPT2_DECODE;
            int64_t(*shp)[LUTHIER_MAX_RANK] = dec ? out->input_shape : out->output_shape;
            int *r = dec ? out->input_rank : out->output_rank;
            for (i = 1; i <= 2 * c.layers; i++) {
                r[i] = 4;
                shp[i][0] = 1;
                shp[i][1] = c.heads;
                shp[i][2] = c.seq;
                shp[i][3] = c.d / c.heads;
                if (dec) out->input_dtype[i] = LUTHIER_DTYPE_F32;
            }
            if (dec) out->num_inputs += 2 * c.layers;
            else out->num_outputs += 2 * c.layers;
        }
    }
    snprintf(out->input_name[0], sizeof out->input_name[0], "%s",
             c.kind <= LUTHIER_ZOO__MOBILENET ? "input" : "input_ids");
    snprintf(out->output_name[0], sizeof out->output_name[0], "%s",
             c.kind == LUTHIER_ZOO__RESNET || c.kind == LUTHIER_ZOO__GOOGLENET ? "fc"
             : c.kind == LUTHIER_ZOO__ALEXNET || c.kind == LUTHIER_ZOO__VGG ? "classifier.6"
             : c.kind == LUTHIER_ZOO__MOBILENET ? "classifier.1"
             : c.kind == LUTHIER_ZOO__BERT ? "" : "lm_head");
    if (c.kind == LUTHIER_ZOO__BERT)
        snprintf(out->output_name[0], sizeof out->output_name[0], "encoder.layer.%d.LayerNorm",
                 c.layers - 1);
    for (i = 0; c.kind == LUTHIER_ZOO__GPT2 && i < 2 * c.layers; i++)
        snprintf(out->output_name[1 + i], sizeof out->output_name[0], "h.%d.attn.%s_proj.transpose",
                 i / 2, i % 2 ? "v" : "k");
    for (i = 0; c.kind == LUTHIER_ZOO__GPT2_DECODE && i < 2 * c.layers; i++)
        snprintf(out->input_name[1 + i], sizeof out->input_name[0], "past.%d.%s", i / 2,
                 i % 2 ? "value" : "key");
    for (i = 0; i < out->num_inputs; i++)
        out->input_bytes[i] = luthier_zoo__bytes(out->input_dtype[i] == LUTHIER_DTYPE_I64 ? 8 : 4, out->input_rank[i],
                                                 out->input_shape[i]);
    for (i = 0; i < out->num_outputs; i++)
        out->output_bytes[i] = luthier_zoo__bytes(4, out->output_rank[i], out->output_shape[i]);
    return LUTHIER_STATUS_OK;
}

/* Builds the network; *out receives a new graph (luthier_graph_destroy it) or NULL on failure,
   with a message in err. */
LUTHIER_ZOO__FN luthier_status luthier_zoo_build(const char *name, const luthier_zoo_options *opt,
                                                 luthier_graph **out, char *err, size_t err_size) {
    luthier_zoo__cfg c;
    luthier_zoo__b b;
    luthier_zoo_info info;
    luthier_status st;
    int y = -1, i;
    int in[LUTHIER_ZOO_MAX_IO], presents[LUTHIER_ZOO_MAX_IO]; /* in: input_ids, then gpt2_decode's past */
    if (err && err_size) err[0] = 0;
    if (!out) {
        luthier_zoo__msg(err, err_size, "luthier_zoo_build: out is NULL");
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (!luthier_zoo__lookup(name, opt, &c, err, err_size)) return LUTHIER_STATUS_NOT_FOUND;
    memset(&b, 0, sizeof b);
    b.c = &c;
    b.err = err;
    b.err_size = err_size;
    b.state = opt && opt->seed ? opt->seed : 42;
    st = luthier_graph_create(&b.g);
    if (st) {
        luthier_zoo__msg(err, err_size, "luthier_zoo_build: luthier_graph_create: %s",
                         luthier_status_string(st));
        return st;
    }
    luthier_zoo_get_info(name, opt, &info); /* the inputs and outputs, in order */
    for (i = 0; i < info.num_inputs; i++)
        in[i] = luthier_zoo__input(&b, info.input_name[i], info.input_dtype[i], info.input_rank[i], info.input_shape[i]);
    switch (c.kind) {
    case LUTHIER_ZOO__RESNET: y = luthier_zoo__resnet(&b, in[0]); break;
    case LUTHIER_ZOO__ALEXNET: y = luthier_zoo__alexnet(&b, in[0]); break;
    case LUTHIER_ZOO__VGG: y = luthier_zoo__vgg16(&b, in[0]); break;
    case LUTHIER_ZOO__GOOGLENET: y = luthier_zoo__googlenet(&b, in[0]); break;
    case LUTHIER_ZOO__MOBILENET: y = luthier_zoo__mobilenet_v2(&b, in[0]); break;
    case LUTHIER_ZOO__BERT: y = luthier_zoo__bert(&b, in[0]); break;
    case LUTHIER_ZOO__GPT2: y = luthier_zoo__gpt2(&b, in[0], NULL, presents); break;
    default: y = luthier_zoo__gpt2(&b, in[0], in + 1, presents); break;
    }
    for (i = 0; i < info.num_outputs; i++) luthier_zoo__output(&b, i ? presents[i - 1] : y);
    if (b.status) {
        luthier_graph_destroy(b.g);
        return b.status;
    }
    *out = b.g;
    return LUTHIER_STATUS_OK;
}

/* Graph totals: FLOPs per run (multiply-adds count 2) and parameters (constant F32 elements). */
LUTHIER_ZOO__FN luthier_status luthier_zoo_stats(const luthier_graph *g, double *flops, int64_t *params) {
    int i, n;
    double f = 0;
    int64_t p = 0;
    if (!g) return LUTHIER_STATUS_INVALID_ARGUMENT;
    n = luthier_graph_num_nodes(g);
    for (i = 0; i < n; i++) {
        double nf = 0;
        if (luthier_graph_node(g, i, NULL, NULL, NULL, NULL, NULL, NULL, &nf) == LUTHIER_STATUS_OK) f += nf;
    }
    n = luthier_graph_num_tensors(g);
    for (i = 0; i < n; i++) {
        luthier_tensor_info ti;
        if (luthier_graph_tensor_info(g, i, &ti) == LUTHIER_STATUS_OK && ti.is_constant &&
            ti.dtype == LUTHIER_DTYPE_F32)
            p += (int64_t)luthier_zoo__bytes(1, ti.rank, ti.shape);
    }
    if (flops) *flops = f;
    if (params) *params = p;
    return LUTHIER_STATUS_OK;
}

/* Fills every input of the network: buffers[i] receives input i (info.input_bytes[i] bytes).
   gpt2_decode's past tensors are gpt2's present outputs for the prompt: they are computed by
   building gpt2 and running it with a plan on ctx (NULL = a temporary default context). */
LUTHIER_ZOO__FN luthier_status luthier_zoo_inputs(luthier_context *ctx, const char *name,
                                                  const luthier_zoo_options *opt,
                                                  void *const *buffers, char *err, size_t err_size) {
    luthier_zoo__cfg c;
    uint64_t st = 7;
    int i;
    if (err && err_size) err[0] = 0;
    if (!luthier_zoo__lookup(name, opt, &c, err, err_size)) return LUTHIER_STATUS_NOT_FOUND;
    if (!buffers || !buffers[0]) {
        luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: buffers is NULL");
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    }
    if (c.kind <= LUTHIER_ZOO__MOBILENET) {
        luthier_zoo__fill(&st, (float *)buffers[0], (size_t)3 * (size_t)c.size * (size_t)c.size, 1.0, 0.0);
    } else if (c.kind != LUTHIER_ZOO__GPT2_DECODE) {
        int64_t *ids = (int64_t *)buffers[0];
        for (i = 0; i < c.seq; i++) ids[i] = (int64_t)(luthier__gbt_rand(&st) % (uint64_t)c.vocab);
    } else {
        luthier_zoo_options o;
        luthier_zoo_info info;
        luthier_graph *g = NULL;
        luthier_plan *p = NULL;
        luthier_context *own = NULL;
        luthier_plan_desc pd;
        luthier_status s;
        void *outs[LUTHIER_ZOO_MAX_IO];
        const void *ins[1];
        int64_t *prompt;
        float *logits;
        for (i = 1; i <= 2 * c.layers; i++)
            if (!buffers[i]) {
                luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: buffers[%d] is NULL", i);
                return LUTHIER_STATUS_INVALID_ARGUMENT;
            }
        o.small = c.small;
        o.seed = opt ? opt->seed : 0;
        luthier_zoo_get_info("gpt2", &o, &info);
        prompt = (int64_t *)malloc(info.input_bytes[0]);
        logits = (float *)malloc(info.output_bytes[0]);
        if (!prompt || !logits) {
            free(prompt);
            free(logits);
            luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: out of memory");
            return LUTHIER_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < c.seq; i++) prompt[i] = (int64_t)(luthier__gbt_rand(&st) % (uint64_t)c.vocab);
        ((int64_t *)buffers[0])[0] = (int64_t)(luthier__gbt_rand(&st) % (uint64_t)c.vocab);
        s = luthier_zoo_build("gpt2", &o, &g, err, err_size);
        if (!s && !ctx) {
            luthier_context_desc cd;
            memset(&cd, 0, sizeof cd);
            s = luthier_context_create(&cd, &own);
            if (s) luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: context: %s", luthier_status_string(s));
            ctx = own;
        }
        if (!s) {
            memset(&pd, 0, sizeof pd);
            s = luthier_plan_create(ctx, g, &pd, &p);
            if (s) luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: gpt2 prompt plan: %s",
                                    luthier_context_error(ctx));
        }
        luthier_graph_destroy(g);
        if (!s) {
            outs[0] = logits;
            for (i = 1; i <= 2 * c.layers; i++) outs[i] = buffers[i];
            ins[0] = prompt;
            s = luthier_plan_run(ctx, p, ins, outs);
            if (s) luthier_zoo__msg(err, err_size, "luthier_zoo_inputs: gpt2 prompt run: %s",
                                    luthier_context_error(ctx));
        }
        luthier_plan_destroy(p);
        luthier_context_destroy(own);
        free(prompt);
        free(logits);
        return s;
    }
    return LUTHIER_STATUS_OK;
}

/* The generated input number input_index (bytes >= its size; see luthier_zoo_get_info).
   gpt2_decode's past tensors (index >= 1) run the gpt2 prompt each call: prefer
   luthier_zoo_inputs, which computes them all at once. */
LUTHIER_ZOO__FN luthier_status luthier_zoo_input(const char *name, const luthier_zoo_options *opt,
                                                 int input_index, void *buffer, size_t bytes) {
    luthier_zoo_info info;
    luthier_zoo__cfg c;
    void *bufs[LUTHIER_ZOO_MAX_IO];
    luthier_status s;
    int i;
    if (!luthier_zoo__config(name, opt, &c)) return LUTHIER_STATUS_NOT_FOUND;
    luthier_zoo_get_info(name, opt, &info);
    if (!buffer || input_index < 0 || input_index >= info.num_inputs || bytes < info.input_bytes[input_index])
        return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (c.kind != LUTHIER_ZOO__GPT2_DECODE) {
        bufs[0] = buffer;
        return luthier_zoo_inputs(NULL, name, opt, bufs, NULL, 0);
    }
    if (input_index == 0) { /* the token alone: draw number seq of the input stream */
        uint64_t st = 7;
        int64_t tok;
        for (i = 0; i < c.seq; i++) luthier__gbt_rand(&st);
        tok = (int64_t)(luthier__gbt_rand(&st) % (uint64_t)c.vocab);
        memcpy(buffer, &tok, sizeof tok);
        return LUTHIER_STATUS_OK;
    }
    memset(bufs, 0, sizeof bufs);
    for (i = 0; i < info.num_inputs; i++) {
        bufs[i] = i == input_index ? buffer : malloc(info.input_bytes[i]);
        if (!bufs[i]) {
            s = LUTHIER_STATUS_OUT_OF_MEMORY;
            goto done;
        }
    }
    s = luthier_zoo_inputs(NULL, name, opt, bufs, NULL, 0);
done:
    for (i = 0; i < info.num_inputs; i++)
        if (i != input_index) free(bufs[i]);
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_ZOO_H_INCLUDED */
