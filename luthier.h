/* luthier.h - v0.2.0 - fast deep-learning inference on (asymmetric) multicore CPUs.
   MIT license: see the end of this file and LICENSE.

   DO THIS in exactly one C or C++ file:

       #define LUTHIER_IMPLEMENTATION
       #include "luthier.h"

   Every other file includes "luthier.h" without the define (luthier.c is that file, ready
   made: compile it once; CMakeLists.txt offers luthier::luthier and luthier::impl). The
   companion headers
   (luthier_gemm.h, luthier_kernels_x86.h, luthier_kernels_neon.h, luthier_ops.h,
   luthier_graph.h, luthier_gbt.h, luthier_tune.h, luthier_int8.h) must sit next to it; they
   are pulled in by luthier.h and must not be included on their own. Link with -lpthread -lm.
   luthier_zoo.h (optional) builds the benchmark networks with deterministic weights;
   luthier_onnx.h (optional) loads ONNX files into graphs.

   QUICK START (C = A*B + bias, ReLU; A is M x K, B is K x N, all row-major)

       luthier_context *ctx;
       luthier_context_desc cd = {0};                 // all-zero = defaults
       if (luthier_context_create(&cd, &ctx) != LUTHIER_STATUS_OK) return 1;
       luthier_sgemm_desc g = {0};
       g.m = M; g.n = N; g.k = K;                      // lda/ldb/ldc 0 = tightly packed
       g.bias = bias; g.activation = LUTHIER_ACTIVATION_RELU;
       luthier_status s = luthier_sgemm(ctx, &g, A, B, C);
       if (s) printf("%s: %s\n", luthier_status_string(s), luthier_context_error(ctx));
       // constant weights: pack B once, run many times
       luthier_packed_b *pb;
       luthier_sgemm_pack_b(ctx, &g, B, &pb);
       luthier_sgemm_packed(ctx, &g, A, pb, C);
       luthier_packed_b_destroy(pb);
       luthier_context_destroy(ctx);

   NETWORKS: build a graph, plan it (optionally with tuned records), run it

       luthier_graph *g;  luthier_graph_create(&g);          // or luthier_zoo_build(...)
       ... luthier_graph_input / luthier_graph_constant / luthier_graph_add_node / _output
       luthier_tune_desc td = {0};  td.budget_seconds = 60;  // optional: tune this machine
       luthier_tune(ctx, g, &td, "model.records", NULL);
       luthier_plan_desc pd = {0};  pd.records = "model.records";   // NULL = defaults
       luthier_plan *p;  luthier_plan_create(ctx, g, &pd, &p);
       luthier_plan_run(ctx, p, inputs, outputs);            // no allocation here
       (details: the doc blocks of luthier_graph.h and luthier_tune.h)
       Memory under your control: LUTHIER_MALLOC/LUTHIER_FREE, luthier_plan_desc.external_arena
       + luthier_plan_bind_arena, borrowed constants (copy = 0), records from memory
       (luthier_plan_desc.records_text). examples/ has a program per use: gemm_basic.c,
       gemm_demo.c, onnx_run.c, firmware.c, layer_table.c, resnet18_demo.c (README.md).

   TABLE OF CONTENTS (grep for the tags)
       >>version >>linkage >>types >>api-context >>api-kernels >>api-gemm >>api-topology
       >>api-threads >>api-conv
       IMPLEMENTATION: >>impl-config >>impl-platform >>impl-topology >>impl-context >>impl-threads
       >>impl-gemm-api >>impl-conv-desc >>impl-costmodel >>impl-conv-winograd >>impl-conv-create
       >>impl-conv-run
       luthier_gemm.h:         >>contract >>registry >>pack >>driver >>driver-indirect
                               >>ukernel-scalar >>select
       luthier_kernels_x86.h:  >>list, one section per kernel family
       luthier_kernels_neon.h: >>list, one section per kernel
       luthier_ops.h:          >>ops-unary >>ops-binary >>ops-pool >>ops-norm >>ops-softmax
                               >>ops-move >>ops-attention >>ops-u8
       luthier_graph.h:        >>api-graph >>api-plan >>api-int8-plan >>impl-graph >>impl-plan-layout
                               >>impl-calibration >>impl-plan-fuse >>impl-plan-memory
                               >>impl-plan-create >>impl-plan-run >>impl-calibrate
       luthier_gbt.h:          the cost model (gradient-boosted trees) and the search
       luthier_tune.h:         >>api-tune >>impl-tune-tasks >>impl-tune-space
                               >>impl-tune-measure >>impl-tune-records >>impl-tune-run >>impl-tune-svg
       luthier_int8.h:         >>scheme >>api-qgemm >>api-qconv >>qcontract >>qregistry >>qpack
                               >>qdriver >>impl-qconv-create >>impl-qconv-dw >>impl-qconv-run

   CONFIGURATION (macros; "everywhere" = define identically in every file that includes luthier.h)
       LUTHIER_IMPLEMENTATION  impl file only  compile the implementation here
       LUTHIER_STATIC          everywhere      make every public function static
       LUTHIER_NO_X86_KERNELS  impl file only  no hand-written AVX2/AVX-512 code at all: GEMM and
                               int8 microkernels, the operators' AVX2/AVX-512 passes, Winograd
                               transforms, depthwise routines
       LUTHIER_NO_NEON_KERNELS impl file only  the same for NEON (GEMM, int8, depthwise, Winograd,
                               transposes, gathers, uint8 operators)
                               Both keep the scalar code and the operators' portable pass
                               (GCC/Clang 16-byte vectors: SSE2 / NEON). What each step then runs
                               is in luthier_step_info.isa / luthier_conv2d_info.isa.
       LUTHIER_NO_THREADS      impl file only  no pthreads: parallel regions run in the caller
       LUTHIER_MALLOC, LUTHIER_FREE   impl file only, both or none:
                               void *LUTHIER_MALLOC(size_t bytes) / void LUTHIER_FREE(void *p);
                               luthier aligns its own buffers on top of them
       Run-time settings live in luthier_context_desc (all-zero = defaults).
       Environment: LUTHIER_KERNEL=name picks the default microkernel of new contexts.
       LUTHIER_AUTO=rules|model|model_exact sets AUTO's policy of new contexts that leave
       luthier_context_desc.auto_policy 0 (see luthier_auto_policy; default: model).
       LUTHIER_CLUSTERS=spec declares the CPU clusters (overrides sysfs; luthier_topology_detect):
           big:4-7,little:0-3              clusters "name:cpus"; cpus are ids and ranges a-b
           big@1.0:4-7,little@0.45:0-3     with relative per-core capacities (normalized so the
                                           fastest is 1.0; give one to every cluster or to none)
           little:0-1,3,big:2,4-5          a token without "name:" continues the CPU list
           Names: letters, digits, _ - . (max 15 characters); at most LUTHIER_MAX_CLUSTERS
           clusters, CPU ids below LUTHIER_MAX_CPUS, each CPU in one cluster, all CPUs online.
           Without capacities the clusters take them from sysfs when it knows the CPUs'
           speeds; otherwise all are 1.0 and the order given is kept (list the fastest first).
           Errors name the offending token and its position, e.g. "LUTHIER_CLUSTERS: reversed
           range 7-4 (write 4-7) in token 'big:7-4' at position 1".

   ERRORS
       Every fallible call returns luthier_status (0 = LUTHIER_STATUS_OK).
       luthier_status_string(s) names the code; luthier_last_error() says what exactly was
       wrong in the last failed call of the calling thread, whatever the module (context, GEMM,
       convolution, graph, plan, tuner, topology, ONNX loader, zoo): one way for every call.
       The older per-object channels receive the same text (luthier_context_error(ctx),
       luthier_graph_error(g), the err buffers of the loader, zoo and topology calls).
       Bad input never aborts and never crashes.

   THREADING
       A context owns a thread pool over its CPU clusters (luthier_context_desc.topology, else
       $LUTHIER_CLUSTERS, else sysfs): one worker per CPU, pinned to it; the calling thread runs
       the first slot of the fastest cluster. Work is split by per-cluster ratios (the
       "workload distribution" knob: luthier_sgemm_desc.ratios, luthier_parallel_for), or
       handed out dynamically. Results do not depend on the split (bit-identical).
       -DLUTHIER_NO_THREADS builds without pthreads: every slot runs in the calling thread.
       What may be shared (each "may" has a concurrent test in tests/test_sharing.c that
       `make tsan` runs under ThreadSanitizer):
         context      one thread at a time. Different contexts are independent (each has its
                      own workers): create one per application thread that runs inference.
         packed B     (luthier_packed_b) read-only after packing: any number of contexts may
                      run luthier_sgemm_packed on it at once.
         conv layer   (luthier_conv2d_layer) read-only after create: any number of contexts
                      may run it at once (each run uses its own context's workspace).
         graph        read-only once built: several threads may plan it at once (building it,
                      luthier_graph_add_node and friends, is one thread at a time).
         plan         runs on any context whose topology has its number of clusters, but one
                      luthier_plan_run at a time: its activations live in its arena. A second
                      run that starts while one is in progress, from any thread or context, is
                      refused with LUTHIER_STATUS_INCOMPATIBLE ("already running"), never run
                      on the shared arena. To run one network in parallel, create one plan per
                      context (the weights are packed per plan).
         calibration  read-only while plans are created from it.
       luthier_cpu_features, luthier_cache_sizes and luthier_read_file may be called from any
       thread at any time.

   NUMERICS
       fp32 throughout; results differ from a naive triple loop only by summation order
       (each output is a sum of K products accumulated in blocks of the kernel's K order).
       NaN and infinity follow IEEE and PyTorch through GEMM, im2col, 1x1, implicit GEMM and
       depthwise convolution and their fused epilogues: a NaN input reaches exactly the outputs
       that read it, and the fused activations keep NaN (relu(NaN) = NaN, clamp keeps NaN,
       relu6(+inf) = 6), as the standalone operators do. The Winograd convolutions mix every
       pixel of a tile in their transforms: one NaN or infinity spreads to the whole tile
       (outputs that do not read it included), +inf may turn into NaN, and inputs beyond about
       1e30 overflow in the transforms; they need padding of at most 2 so that no output pixel
       sees only padding.
       int8 plans (luthier_plan_desc.int8, with a calibration) trade accuracy for speed: uint8
       activations per tensor, int8 weights per output channel, exact int32 accumulation.
       fp16 plans (LUTHIER_PRECISION_FP16) keep dense weights in fp16; on CPUs with fp16
       arithmetic (Armv8.2 FP16, HWCAP ASIMDHP; AVX-512 FP16) their convolutions compute in
       fp16 and, by default, pass fp16 activations from layer to layer (luthier_plan_desc.
       fp16_activations: 0 = where the CPU has fp16 arithmetic, -1 = never, 1 = also on other
       CPUs through the F16 kernels' scalar emulation, for tests): each layer's result is
       rounded to fp16 (relative 2^-11) after its fp32 bias and activation (dense layers of 8
       rows or more too), depthwise layers sum their taps in fp16 (NEON FP16), the element-wise
       operators, pools, softmax, norms, transposes, gathers and attention read and write fp16
       with their math in fp32, and the other operators run fp32 behind "to_f32" / "to_f16"
       conversion steps. Cortex-A72 class cores and x86 without AVX-512 FP16 keep fp32
       activations. With Armv8.2 FP16 a 3x3 stride-1 layer that the fp32 plan would run as
       Winograd F(4x4, 3x3) runs it in fp16 arithmetic (>>impl-conv-winograd16: fp16 sums over
       groups of 32 input channels, fp32 across them; relative RMS error about 6e-3, 2.5-4x the
       direct fp16 convolution's).
       Exception: the Winograd convolutions trade accuracy for fewer multiplies; their error
       bounds are in docs/DESIGN.md (Convolution). AUTO's default policy (the cost model,
       LUTHIER_AUTO_MODEL) picks F(2x2) and F(4x4), within LUTHIER_AUTO_MAX_ERROR, where they
       are predicted fastest; LUTHIER_AUTO_MODEL_EXACT (or LUTHIER_AUTO=model_exact) never
       does, for applications that need the exact algorithms' NaN and infinity behaviour.

   WHAT IT DOES NOT DO (yet)
       No double precision, no complex, no transposed A, no GPU, no training. Graphs are fp32
       with static shapes (batch fixed when the graph is built); ONNX files load through the
       optional luthier_onnx.h. int8 convolution has no implicit GEMM or Winograd; int8 plans
       run concatenation, attention and normalization in fp32. Convolution has im2col, 1x1, implicit GEMM, depthwise and
       Winograd F(2x2|4x4|6x6, 3x3); AUTO never picks F(6x6) (the tuner may).

   DESIGN NOTES
       docs/DESIGN.md holds the architecture and the decisions with their measurements.
*/
#if defined(LUTHIER_IMPLEMENTATION) && !defined(_GNU_SOURCE) && defined(__linux__)
/* The implementation uses POSIX and Linux calls (sysconf, getauxval, later sched_setaffinity):
   make them visible even under -std=c99. Include luthier.h first in the implementation file. */
#define _GNU_SOURCE 1
#endif
#ifndef LUTHIER_H_INCLUDED
#define LUTHIER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/* >>version */
#define LUTHIER_VERSION_MAJOR 0
#define LUTHIER_VERSION_MINOR 2
#define LUTHIER_VERSION_PATCH 0

/* >>linkage */
#ifdef LUTHIER_STATIC
#define LUTHIER_API static
#else
#define LUTHIER_API extern
#endif
#define LUTHIER_PRIVATE static

#ifdef __cplusplus
extern "C" {
#endif

/* >>types */

/* One list makes the enum and luthier_status_string(). */
#define LUTHIER_STATUS_LIST(X)                                                         \
    X(OK, "ok")                                                                        \
    X(INVALID_ARGUMENT, "invalid argument")                                            \
    X(OUT_OF_MEMORY, "out of memory")                                                  \
    X(OVERFLOW, "size overflow")                                                       \
    X(UNSUPPORTED, "not supported by this CPU or build")                               \
    X(NOT_FOUND, "not found")                                                          \
    X(INCOMPATIBLE, "incompatible arguments")

typedef enum luthier_status {
#define LUTHIER__X(name, text) LUTHIER_STATUS_##name,
    LUTHIER_STATUS_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER_STATUS_COUNT
} luthier_status;

/* Fused output operation applied after bias (and after the accumulated residual). One list
   makes the enum and the names (plan steps, tuner signatures). The first four are clamps,
   applied in the GEMM microkernels' store; the others run on each thread's output tile right
   after it is computed, with the element-wise operators' code (so they give what the
   separate operator gives on the same values). Their parameters are the desc's two
   activation floats, clamp_min and clamp_max:
     NONE          x
     RELU          max(x, 0)
     RELU6         min(max(x, 0), 6)
     CLAMP         min(max(x, clamp_min), clamp_max)
     HARD_SWISH    x min(max(x + 3, 0), 6) / 6
     HARD_SIGMOID  min(max(alpha x + beta, 0), 1), alpha = clamp_min, beta = clamp_max
     SILU          x sigmoid(x)
     LEAKY_RELU    x < 0 ? alpha x : x, alpha = clamp_min
     GELU          x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (PyTorch's default)
     GELU_TANH     0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (approximate="tanh")
     ELU           scale (x > 0 ? x : alpha (exp(x) - 1)), alpha = clamp_min, scale = clamp_max
                   (ELU: scale 1; SELU: alpha 1.67326, scale 1.0507)
     MISH          x tanh(log(1 + exp(x)))
   The non-clamp kinds are fp32 only: int8 layers and the other operators with a fused
   activation (binary operators, transposed convolution) take the clamps. */
#define LUTHIER_ACTIVATION_LIST(X) /* X(name, text, parameters it reads) */        \
    X(NONE, "none", 0)                                                                 \
    X(RELU, "relu", 0)                                                                 \
    X(RELU6, "relu6", 0)                                                               \
    X(CLAMP, "clamp", 2)                                                               \
    X(HARD_SWISH, "hard_swish", 0)                                                     \
    X(HARD_SIGMOID, "hard_sigmoid", 2)                                                 \
    X(SILU, "silu", 0)                                                                 \
    X(LEAKY_RELU, "leaky_relu", 1)                                                     \
    X(GELU, "gelu", 0)                                                                 \
    X(GELU_TANH, "gelu_tanh", 0)                                                       \
    X(ELU, "elu", 2)                                                                   \
    X(MISH, "mish", 0)

typedef enum luthier_activation {
#define LUTHIER__X(name, text, params) LUTHIER_ACTIVATION_##name,
    LUTHIER_ACTIVATION_LIST(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER_ACTIVATION_COUNT
} luthier_activation;

/* CPU features, as returned by luthier_cpu_features() and required by kernels. */
enum {
    LUTHIER_CPU_AVX2_FMA = 1u << 0, /* x86: AVX2 + FMA3 + F16C (and OS support for YMM state) */
    LUTHIER_CPU_AVX512F = 1u << 1,  /* x86: AVX-512F (and OS support for ZMM state) */
    LUTHIER_CPU_AVX512VNNI = 1u << 2, /* x86: AVX-512F + BW + VNNI (vpdpbusd zmm), ZMM state */
    LUTHIER_CPU_AVXVNNI = 1u << 3,  /* x86: AVX-VNNI (VEX vpdpbusd ymm), YMM state */
    LUTHIER_CPU_AVX512FP16 = 1u << 4, /* x86: AVX-512 FP16 + BW + VL (vfmadd231ph zmm), ZMM state */
    LUTHIER_CPU_NEON = 1u << 8,     /* AArch64: Advanced SIMD (always present) */
    LUTHIER_CPU_DOTPROD = 1u << 9,  /* AArch64: Armv8.2 SDOT/UDOT */
    LUTHIER_CPU_FP16 = 1u << 10,    /* AArch64: Armv8.2 half-precision arithmetic */
    LUTHIER_CPU_I8MM = 1u << 11     /* AArch64: Armv8.6 int8 matrix multiply (SMMLA/USMMLA) */
};

typedef struct luthier_context luthier_context;
typedef struct luthier_packed_b luthier_packed_b;

/* How a parallel region's units are handed to threads. */
typedef enum luthier_schedule {
    LUTHIER_SCHEDULE_RATIO = 0, /* one contiguous range per cluster by ratio, even within it */
    LUTHIER_SCHEDULE_DYNAMIC,   /* chunks taken on demand by whichever thread is free */
    LUTHIER_SCHEDULE_COUNT
} luthier_schedule;

/* >>api-context */

/* What a convolution's AUTO algorithm (and a plan without records) picks: */
typedef enum luthier_auto_policy {
    LUTHIER_AUTO_DEFAULT = 0, /* $LUTHIER_AUTO when set ("rules", "model", "model_exact"), else
                                 LUTHIER_AUTO_MODEL (in a plan desc: the context's policy) */
    LUTHIER_AUTO_RULES,       /* the conservative rules (see >>api-conv): DEPTHWISE, 1X1, then
                                 IMPLICIT_GEMM or IM2COL on the context's kernel; the default
                                 split (capacity x threads); never Winograd */
    LUTHIER_AUTO_MODEL,       /* the analytical cost model (no measurement, >>impl-costmodel):
                                 algorithm and kernel predicted fastest, Winograd included when
                                 its error bound is at most LUTHIER_AUTO_MAX_ERROR (F(2x2) and
                                 F(4x4)), and the model's split over several clusters */
    LUTHIER_AUTO_MODEL_EXACT, /* the model without Winograd (results as exact as the rules') */
    LUTHIER_AUTO_POLICY_COUNT
} luthier_auto_policy;

/* The largest error a Winograd convolution chosen by LUTHIER_AUTO_MODEL may have, relative to
   the output's range |bias| + max|x| * sum|w| (the measured bounds of docs/DESIGN.md,
   Convolution: F(2x2) 1.3e-7 and F(4x4) 2.7e-6 qualify, F(6x6) 4.4e-6 does not). */
#define LUTHIER_AUTO_MAX_ERROR 3e-6

typedef struct luthier_context_desc {
    /* Default microkernel for this context: a full registry name
       ("luthier_sgemm_ukernel_6x16__neonfma_hybrid") or its short form ("6x16__neonfma_hybrid").
       NULL or "" = the best kernel for this CPU (or $LUTHIER_KERNEL when set). */
    const char *kernel;
    /* CPU features to ignore (LUTHIER_CPU_* bits): forces the dispatch down to a lower ISA,
       e.g. LUTHIER_CPU_AVX512F to run the AVX2 kernels on an AVX-512 machine. 0 = none. */
    unsigned disabled_cpu_features;
    /* Cache blocking (elements). 0 = derived from the machine's cache sizes. */
    size_t kc, mc, nc;
    /* CPU clusters the context's threads run on. NULL = luthier_topology_detect(sysfs_root,
       $LUTHIER_CLUSTERS). The calling thread runs the first slot of the fastest cluster; one
       pinned worker thread runs each other CPU's slot. */
    const struct luthier_topology *topology;
    const char *sysfs_root; /* NULL = "/" (tests point it at fake trees) */
    /* Threads (calling thread included): 0 = one per CPU of every cluster; N = the first N CPUs
       in cluster order (fastest first). 1 = no worker threads at all. */
    int num_threads;
    /* When creation fails there is no context to ask luthier_context_error: the message (a bad
       kernel name, a malformed $LUTHIER_CLUSTERS, ...) goes here instead. NULL = dropped. */
    char *error;
    size_t error_size;
    /* AUTO's policy; LUTHIER_AUTO_DEFAULT (0) = $LUTHIER_AUTO when set ("rules", "model",
       "model_exact"), else the cost model (LUTHIER_AUTO_MODEL). */
    luthier_auto_policy auto_policy;
} luthier_context_desc;

LUTHIER_API const char *luthier_status_string(luthier_status status);
LUTHIER_API luthier_status luthier_context_create(const luthier_context_desc *desc,
                                                  luthier_context **out);
LUTHIER_API void luthier_context_destroy(luthier_context *ctx); /* NULL is a no-op */
/* What was wrong in the last failed call on ctx ("" when none). Valid until the next call. */
LUTHIER_API const char *luthier_context_error(const luthier_context *ctx);
/* The message of the last failed call on this thread, of any module ("" before the first).
   Thread-local where the compiler has thread-local storage (C11, C++11, GCC, Clang, MSVC);
   successful calls leave it as it was, so read it right after the failure. */
LUTHIER_API const char *luthier_last_error(void);
/* Sets this thread's luthier_last_error (for code layered on luthier that reports through the
   same channel, such as luthier_onnx.h). NULL clears it. */
LUTHIER_API void luthier_set_last_error(const char *message);
/* LUTHIER_CPU_* bits detected on this CPU (not masked by any context). */
LUTHIER_API unsigned luthier_cpu_features(void);

/* Reads the whole of a regular file (model, records, tensor files): *data gets a buffer of
   *size bytes plus a terminating 0 byte, to release with luthier_free. A directory, a FIFO or
   a device is refused (INVALID_ARGUMENT: their size is meaningless and a read may block
   forever), so is a file larger than max_bytes (OVERFLOW; 0 = no limit). NOT_FOUND when it
   cannot be opened. err (may be NULL) receives what was wrong. Thread-safe. */
LUTHIER_API luthier_status luthier_read_file(const char *path, size_t max_bytes, void **data, size_t *size, char *err,
                                             size_t err_size);
LUTHIER_API void luthier_free(void *p); /* NULL is a no-op */

/* Cache sizes in bytes as detected (sysfs, then sysconf, then conservative defaults). */
typedef struct luthier_cache_info {
    size_t l1d, l2, l3;
} luthier_cache_info;
LUTHIER_API luthier_cache_info luthier_cache_sizes(void);

/* >>api-kernels: the microkernel registry, i.e. the values of the tuner's "kernel" knob. */

typedef enum luthier_kernel_kind {
    LUTHIER_KERNEL_INTERLEAVED = 0, /* reads a packed A panel (MR rows interleaved per k) */
    LUTHIER_KERNEL_HYBRID           /* reads A rows in place through row pointers */
} luthier_kernel_kind;

/* One kernel table per datatype, all rows of one entry type (same fields, same registry
   functions): what A, B and C (the accumulators) hold is a property of the table. */
typedef enum luthier_kernel_family {
    LUTHIER_KERNELS_F32 = 0, /* fp32 A, B and C: luthier_sgemm, convolution, the graph's GEMMs */
    LUTHIER_KERNELS_F16W,    /* fp32 A and C, B (the weights) stored in fp16 and widened on load:
                                half the weight bandwidth of memory-bound GEMMs (luthier_sgemm
                                with such a kernel packs B in fp16; dense layers of plans with
                                LUTHIER_PRECISION_FP16) */
    LUTHIER_KERNELS_INT8,    /* uint8 A, int8 B, int32 C (luthier_qgemm, luthier_qconv2d) */
    LUTHIER_KERNELS_F16,     /* fp16 arithmetic (Armv8.2 FP16: fmla .8h; AVX-512 FP16:
                                vfmadd231ph): the driver packs A to fp16, B is packed in fp16,
                                the tile accumulates in fp16 over one k block (at most 256 steps)
                                and adds it to C in fp32; luthier_sgemm with such a kernel
                                (LUTHIER_CPU_FP16 or LUTHIER_CPU_AVX512FP16, or the scalar
                                emulation) */
    LUTHIER_KERNELS_COUNT
} luthier_kernel_family;

typedef struct luthier_kernel_info {
    const char *name;   /* luthier_<s|q>gemm_ukernel_<MR>x<NR>__<isa>[_<variant>] */
    const char *isa;    /* "scalar", "avx2", "avx512", "neon", ... */
    int mr, nr;         /* tile of C computed per call */
    int k_unroll;       /* steps of k per main-loop iteration (int8: the K group) */
    luthier_kernel_kind kind;
    unsigned required_cpu_features; /* LUTHIER_CPU_* bits */
    int available;      /* nonzero if this CPU can run it */
    luthier_kernel_family family;
    const char *a_type, *b_type, *c_type; /* "f32", "f16", "u8", "i8", "i32" (c: the accumulators) */
} luthier_kernel_info;

/* The rows of one family's table, in preference order (the first row a CPU runs is its
   default). Names are unique across families; find takes the full or the short name (without
   the luthier_<s|q>gemm_ukernel_ prefix). NOT_FOUND if there is none. */
LUTHIER_API int luthier_kernels_count(luthier_kernel_family family);
LUTHIER_API luthier_status luthier_kernels_get(luthier_kernel_family family, int index, luthier_kernel_info *out);
LUTHIER_API luthier_status luthier_kernels_find(luthier_kernel_family family, const char *name, int *index);
/* The same for LUTHIER_KERNELS_F32. */
LUTHIER_API int luthier_kernel_count(void);
LUTHIER_API luthier_status luthier_kernel_get(int index, luthier_kernel_info *out);
LUTHIER_API luthier_status luthier_kernel_find(const char *name, int *index);
/* The kernel ctx uses when a call names none. */
LUTHIER_API const char *luthier_context_kernel(const luthier_context *ctx);

/* >>api-gemm: C = A*B (+C) (+bias) then activation. Row-major with leading dimensions. */

typedef struct luthier_sgemm_desc {
    int64_t m, n, k;        /* C is m x n, A is m x k, B is k x n (or n x k if trans_b) */
    int64_t lda, ldb, ldc;  /* row strides in elements; 0 = tight (k, n or k, n) */
    int trans_b;            /* nonzero: B is stored n x k (row j = the k weights of output j) */
    const float *bias;      /* NULL or n values added to every row of C */
    luthier_activation activation;
    float clamp_min, clamp_max; /* the activation's parameters (CLAMP's bounds, see luthier_activation) */
    int accumulate;         /* nonzero: C = C + A*B (+bias), e.g. a fused residual add */
    const char *kernel;     /* NULL = the context's kernel */
    /* Workload distribution over the context's clusters (the tuner's third knob). The rows of
       C are split in MR-row tiles (columns in NR panels when m fits one tile row):
       LUTHIER_SCHEDULE_RATIO gives cluster c the share ratios[c] / sum(ratios) as one
       contiguous range, split evenly among its threads; NULL ratios = in proportion to each
       cluster's capacity x threads. LUTHIER_SCHEDULE_DYNAMIC hands out chunks on demand. */
    luthier_schedule schedule;
    const float *ratios;
    int num_ratios;         /* must equal the number of clusters when ratios is set */
    /* Optional kernels per cluster (one entry per cluster of the context; NULL entries = the
       call's kernel). Each must have the call's MR and NR, so one packed B serves all. */
    const char *const *cluster_kernels;
} luthier_sgemm_desc;

/* C = act(A*B (+C) + bias). m == 0 or n == 0 is a no-op; k == 0 gives C = act((C) + bias). */
LUTHIER_API luthier_status luthier_sgemm(luthier_context *ctx, const luthier_sgemm_desc *desc,
                                         const float *a, const float *b, float *c);

/* Pack B (desc->k, desc->n, desc->ldb, desc->trans_b, desc->kernel) once for repeated use.
   The packed layout depends on the kernel's NR: any kernel with the same NR can consume it. */
LUTHIER_API luthier_status luthier_sgemm_pack_b(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *b,
                                                luthier_packed_b **out);
/* Like luthier_sgemm with B pre-packed. desc->n and desc->k must match the packed B;
   desc->kernel, when set, must have the packed NR (NULL = the kernel B was packed for). */
LUTHIER_API luthier_status luthier_sgemm_packed(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *a,
                                                const luthier_packed_b *b, float *c);
LUTHIER_API void luthier_packed_b_destroy(luthier_packed_b *b); /* NULL is a no-op */
/* Bytes held by a packed B (for memory reports). */
LUTHIER_API size_t luthier_packed_b_bytes(const luthier_packed_b *b);

/* >>api-topology: CPU clusters (sets of CPUs of one kind and speed), fastest first. */

#define LUTHIER_MAX_CLUSTERS 8 /* clusters per topology */
#define LUTHIER_MAX_CPUS 256   /* CPU ids 0..255; higher ids are ignored (sysfs) or refused */

typedef struct luthier_cluster {
    char name[16];    /* "big", "middle", "little" by rank ("all" when alone, "c0".."c7" when
                         more than three), or the label given in LUTHIER_CLUSTERS */
    char core[32];    /* microarchitecture ("Cortex-A72", "Kryo 4xx Gold", an x86 model name),
                         "" if unknown or mixed */
    int num_cpus;
    int cpus[LUTHIER_MAX_CPUS]; /* ascending CPU ids; num_cpus are valid */
    double capacity;  /* relative per-core speed, fastest cluster = 1.0 */
    unsigned max_freq_khz; /* highest cpuinfo_max_freq of its CPUs, 0 if unknown */
} luthier_cluster;

typedef struct luthier_topology {
    int num_clusters;                               /* 1..LUTHIER_MAX_CLUSTERS */
    luthier_cluster clusters[LUTHIER_MAX_CLUSTERS]; /* fastest first */
    char source[16]; /* "env" (LUTHIER_CLUSTERS), "sysfs", "default" (nothing known about the
                        CPUs' speeds: one cluster of the online CPUs), "api" (luthier_topology_parse) */
} luthier_topology;

/* Detects the clusters of this machine, in order: the cluster spec (env_spec, or
   $LUTHIER_CLUSTERS when env_spec is NULL; "" = ignore the environment), else sysfs and
   /proc/cpuinfo under sysfs_root (NULL or "" = the real "/"; tests pass fake trees), else one
   cluster of all online CPUs. A spec's CPUs must be online in that tree; a spec without
   capacities takes them (and core names, frequencies) from the tree when it has them.
   Bad specs give LUTHIER_STATUS_INVALID_ARGUMENT and a message in err (may be NULL); unreadable
   or malformed sysfs files are never an error, they only lower what is known. */
LUTHIER_API luthier_status luthier_topology_detect(const char *sysfs_root, const char *env_spec,
                                                   luthier_topology *out, char *err,
                                                   size_t err_size);
/* Parses a cluster spec (the LUTHIER_CLUSTERS syntax, see CONFIGURATION at the top) without
   looking at the machine. source = "api". */
LUTHIER_API luthier_status luthier_topology_parse(const char *spec, luthier_topology *out,
                                                  char *err, size_t err_size);
/* A machine described by its core types, for the cost model and for tuning offline for a board
   that is not this machine (luthier_tune_desc.offline): spec "A72x2,A53x4" lists clusters,
   fastest first, as CORE or CORExCOUNT (1 to LUTHIER_MAX_CPUS CPUs in all), CORE naming a row
   of the cost model's core table (>>impl-costmodel: "Cortex-A72" or any name that contains its
   short form "A72"; "A77" and "A78" take the A76 row; "x86-avx512" and "x86-avx2"). The clusters
   are named by rank like detected ones ("all" alone; "big", "middle", "little"; "c0".."c7" when
   more than three), their core is the name a board's own detection gives it ("A77":
   "Cortex-A77"; so predicted records match the board), their CPUs are numbered from 0 in the
   order given and their capacity is the cores' FMA peak relative to the first cluster's.
   source = "cores". Bad specs: INVALID_ARGUMENT, the offending token named in err. */
LUTHIER_API luthier_status luthier_topology_cores(const char *spec, luthier_topology *out, char *err,
                                                  size_t err_size);
/* One line per cluster, e.g. "big: cpus 4-5 (2 x Cortex-A72, 1800 MHz, capacity 1.00)\n".
   Returns the length of the full text like snprintf (buf may be NULL when size is 0). */
LUTHIER_API int luthier_topology_format(const luthier_topology *t, char *buf, size_t size);

/* >>api-threads: the ratio-partitioned parallel for. */

/* Work on units [begin, end); thread is the slot (0 = the calling thread), cluster its cluster. */
typedef void (*luthier_range_fn)(void *arg, size_t begin, size_t end, int thread, int cluster);

typedef struct luthier_parallel_desc {
    luthier_schedule schedule;
    /* RATIO: non-negative weights, one per cluster of the context, normalized by their sum (so
       percentages that do not add up to 100 are scaled, not refused; all zero is refused).
       A 0 weight gives that cluster nothing. NULL = capacity x threads of each cluster. */
    const float *ratios;
    int num_ratios;
    size_t chunk; /* DYNAMIC: units per grab; 0 = n / (4 x threads), at least 1 */
} luthier_parallel_desc;

/* Runs fn over [0, n) on the context's threads and returns when all are done. The context is
   single-caller: fn must not start a parallel region on the same context. desc NULL = RATIO
   with the default weights. n is at most 2^52 (OVERFLOW beyond). */
LUTHIER_API luthier_status luthier_parallel_for(luthier_context *ctx, size_t n,
                                                const luthier_parallel_desc *desc,
                                                luthier_range_fn fn, void *arg);
/* Threads of the context (calling thread included). */
LUTHIER_API int luthier_context_num_threads(const luthier_context *ctx);
/* The clusters the context's threads run on (trimmed to num_threads). */
LUTHIER_API luthier_status luthier_context_topology(const luthier_context *ctx,
                                                    luthier_topology *out);
/* Slot t: its cluster and CPU (-1 for the calling thread); returns 1 if the worker pinned
   itself to that CPU and verified it with sched_getcpu(), 0 otherwise (or t out of range). */
LUTHIER_API int luthier_context_thread_info(const luthier_context *ctx, int thread, int *cluster,
                                            int *cpu);

/* >>api-conv: 2-D convolution (cross-correlation, PyTorch semantics), fp32.
   Weights are OIHW: [out_channels][in_channels/groups][kernel_h][kernel_w]. Input and output
   are NHWC or NCHW (desc.layout); NHWC is the engine's own layout, NCHW is transposed at the
   edge through the context's workspace. Output pixel (oh, ow) reads input rows
   oh*stride_h - pad_top + kh*dilation_h (and likewise for columns); taps that fall in the
   padding read zeros. out_h = (in_h + pad_top + pad_bottom - dilation_h*(kernel_h-1) - 1)
   / stride_h + 1. Input and output must not overlap.

   Algorithms (the tuner's first knob) and when each is valid:
     IM2COL          any shape, any kernel: per block of output pixels, gather the rows
                     (kh, kw, ci) of the im2col matrix into a per-thread buffer, then GEMM.
     1X1             kernel 1x1 and no padding (any stride): a GEMM straight on the NHWC
                     input (stride 1); stride > 1 gathers the strided pixels per block.
     IMPLICIT_GEMM   any shape, hybrid kernels only: the kernel reads input pixels in place
                     through an indirection buffer (kernel_h*kernel_w segments of Cin/groups;
                     with fewer than 16 channels and groups 1, kernel_h segments of a kernel
                     row, kernel_w*Cin floats).
     DEPTHWISE       groups == in_channels == out_channels: direct loop over channels.
     WINOGRAD_2X3, WINOGRAD_4X3, WINOGRAD_6X3
                     F(m x m, 3 x 3) with m = 2, 4, 6: kernel 3x3, stride 1, dilation 1,
                     padding up to 2 (so that every output pixel's window touches the image),
                     any groups (not depthwise with groups > 1: use DEPTHWISE), any kernel. Weights transformed once at create time into (m+2)^2 GEMM B
                     matrices of Cin/groups x Cout/groups; a run transforms (m+2)x(m+2) input
                     tiles, runs the (m+2)^2 GEMMs (M = tiles) and transforms back with bias,
                     activation and accumulate fused. Fewer multiplies (2.25x, 4x, 5.06x) at
                     the price of accuracy: measured max error about 1.3e-7, 2.7e-6 and
                     4.4e-6 of the output's range |bias| + max|x| * sum|w| (inputs in [-1, 1];
                     docs/DESIGN.md); AUTO's rules never pick them (LUTHIER_AUTO_MODEL may
                     pick F(2x2) and F(4x4)).
   AUTO under the context's policy: LUTHIER_AUTO_MODEL (the default) and _MODEL_EXACT let the
   analytical cost model (luthier_conv2d_predict) pick the algorithm and kernel (see
   luthier_auto_policy); LUTHIER_AUTO_RULES picks DEPTHWISE, then 1X1 (1x1, no padding, no
   dilation), then IMPLICIT_GEMM when the kernel (desc.kernel, else the context's) is hybrid,
   else IM2COL. The GEMM algorithms run
   with any groups (one packed weight block per group). */

typedef enum luthier_conv_algorithm {
    LUTHIER_CONV_AUTO = 0,
    LUTHIER_CONV_IM2COL,
    LUTHIER_CONV_1X1,
    LUTHIER_CONV_IMPLICIT_GEMM,
    LUTHIER_CONV_DEPTHWISE,
    LUTHIER_CONV_WINOGRAD_2X3, /* F(2x2, 3x3): 4x4 input tiles, 16 GEMMs */
    LUTHIER_CONV_WINOGRAD_4X3, /* F(4x4, 3x3): 6x6 input tiles, 36 GEMMs */
    LUTHIER_CONV_WINOGRAD_6X3, /* F(6x6, 3x3): 8x8 input tiles, 64 GEMMs */
    LUTHIER_CONV_ALGORITHM_COUNT
} luthier_conv_algorithm;

typedef enum luthier_layout {
    LUTHIER_LAYOUT_NHWC = 0, /* [batch][h][w][channels] */
    LUTHIER_LAYOUT_NCHW,     /* [batch][channels][h][w] (PyTorch, ONNX) */
    LUTHIER_LAYOUT_COUNT
} luthier_layout;

typedef struct luthier_conv2d_desc {
    int64_t batch, in_channels, in_h, in_w, out_channels, kernel_h, kernel_w; /* all >= 1 */
    int64_t stride_h, stride_w, dilation_h, dilation_w;   /* 0 = 1 */
    int64_t pad_top, pad_left, pad_bottom, pad_right;     /* >= 0 */
    int64_t groups;                                       /* 0 = 1; divides both channel counts */
    luthier_layout layout;        /* of input and output */
    luthier_activation activation;
    float clamp_min, clamp_max;   /* the activation's parameters (CLAMP's bounds, see luthier_activation) */
    int accumulate;               /* nonzero: output = act(output + conv + bias), e.g. a fused
                                     residual add onto an output pre-filled with the residual */
    /* Configuration (the tuner's knobs); zero = defaults. */
    luthier_conv_algorithm algorithm;
    const char *kernel;           /* GEMM algorithms: NULL = the context's kernel (IMPLICIT_GEMM:
                                     the first hybrid kernel this CPU runs when that is not hybrid) */
    luthier_schedule schedule;    /* the output pixels are split as in luthier_sgemm_desc (the
                                     output channels instead when a GEMM layer has more of them
                                     than pixels, 4 or more NR panels per thread, groups = 1) */
    const float *ratios;          /* copied at create time */
    int num_ratios;
    /* GEMM algorithms: optional kernels per cluster of the creating context, as in
       luthier_sgemm_desc, of the layer kernel's kind; unset entries (or NULL) = the layer's
       kernel, or its variant scheduled for the cluster's cores (luthier_conv2d_info) */
    const char *const *cluster_kernels;
} luthier_conv2d_desc;

/* A created convolution: packed weights + chosen configuration. (Named _layer because
   luthier_conv2d is the one-shot call, as luthier_sgemm is for GEMM.) */
typedef struct luthier_conv2d_layer luthier_conv2d_layer;

typedef struct luthier_conv2d_info {
    luthier_conv_algorithm algorithm; /* the one chosen (never AUTO) */
    const char *kernel;               /* microkernel name; "" for DEPTHWISE */
    /* the kernel each cluster of the creating context runs (another context's clusters past
       these run kernel); NULL past its clusters and for DEPTHWISE */
    const char *cluster_kernels[LUTHIER_MAX_CLUSTERS];
    int64_t out_h, out_w;
    size_t weight_bytes;              /* transformed weights + bias held by the object */
    size_t workspace_bytes;           /* context workspace a run on the creating context needs */
    const char *isa;                  /* instruction set of the code that runs it on the creating
                                         context: "avx512", "avx2", "sse2", "neon", ... or "scalar"
                                         (also when a helper of the algorithm, e.g. the implicit
                                         GEMM's gather, runs scalar code) */
} luthier_conv2d_info;

/* out_h, out_w of desc (either pointer may be NULL); checks the shape. */
LUTHIER_API luthier_status luthier_conv2d_output_size(const luthier_conv2d_desc *desc,
                                                      int64_t *out_h, int64_t *out_w);
/* LUTHIER_STATUS_OK if algorithm can run desc on ctx; else why, in luthier_context_error(ctx). */
LUTHIER_API luthier_status luthier_conv2d_algorithm_valid(luthier_context *ctx,
                                                          const luthier_conv2d_desc *desc,
                                                          luthier_conv_algorithm algorithm);
LUTHIER_API const char *luthier_conv_algorithm_name(luthier_conv_algorithm algorithm);
/* Validates desc, resolves AUTO and the kernel, transforms (packs) the weights. bias: NULL or
   out_channels values. weights and bias are copied: they may be freed after the call. */
LUTHIER_API luthier_status luthier_conv2d_create(luthier_context *ctx,
                                                 const luthier_conv2d_desc *desc,
                                                 const float *weights, const float *bias,
                                                 luthier_conv2d_layer **out);
/* output (and with accumulate, its previous contents) in desc.layout. The object is read-only
   during a run: several contexts may run one object concurrently. */
LUTHIER_API luthier_status luthier_conv2d_run(luthier_context *ctx, const luthier_conv2d_layer *conv,
                                              const float *input, float *output);
LUTHIER_API luthier_status luthier_conv2d_get_info(const luthier_conv2d_layer *conv,
                                                   luthier_conv2d_info *out);
LUTHIER_API void luthier_conv2d_destroy(luthier_conv2d_layer *conv); /* NULL is a no-op */
/* The cost model's prediction (seconds, no measurement) of a run of desc on ctx: desc's
   algorithm (AUTO resolved under ctx's policy), kernel, schedule and ratios (none: the split
   AUTO would use) on ctx's clusters and threads. The model and its tables: >>impl-costmodel,
   docs/DESIGN.md (Cost model). UNSUPPORTED when the algorithm cannot run desc. */
LUTHIER_API luthier_status luthier_conv2d_predict(luthier_context *ctx, const luthier_conv2d_desc *desc,
                                                  double *seconds);
/* create + run + destroy. */
LUTHIER_API luthier_status luthier_conv2d(luthier_context *ctx, const luthier_conv2d_desc *desc,
                                          const float *input, const float *weights,
                                          const float *bias, float *output);

#ifdef __cplusplus
}
#endif

#include "luthier_gemm.h"  /* the microkernel contract (declarations) */
#include "luthier_graph.h" /* graphs and plans: the execution engine (declarations) */
#include "luthier_tune.h"  /* the tuner and its records (declarations) */
#include "luthier_int8.h"  /* int8 GEMM and convolution (declarations) */

#endif /* LUTHIER_H_INCLUDED */

/* ============================================================================================
   IMPLEMENTATION
   ============================================================================================ */
#if (defined(LUTHIER_IMPLEMENTATION) || defined(__INTELLISENSE__)) && !defined(LUTHIER__IMPL_DONE)
#define LUTHIER__IMPL_DONE

/* >>impl-config */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#endif
#ifndef LUTHIER_NO_THREADS
#include <pthread.h>
#include <sched.h>
#endif

#if defined(LUTHIER_MALLOC) != defined(LUTHIER_FREE)
#error "define both LUTHIER_MALLOC and LUTHIER_FREE, or neither"
#endif
#ifndef LUTHIER_MALLOC
#define LUTHIER_MALLOC(sz) malloc(sz)
#define LUTHIER_FREE(p) free(p)
#endif

#if defined(__x86_64__) || defined(_M_X64)
#define LUTHIER__X86 1
#else
#define LUTHIER__X86 0
#endif
#if defined(__aarch64__)
#define LUTHIER__ARM64 1
#else
#define LUTHIER__ARM64 0
#endif

/* Hand-written SIMD, decided here once for every file (see CONFIGURATION):
   LUTHIER__SIMD_X86   1: AVX2/AVX-512 code (intrinsics under target attributes, so the build
                       needs no -mavx2; the run-time CPU features pick it): the GEMM microkernels
                       (luthier_kernels_x86.h), the operators' AVX2/AVX-512 passes, the Winograd
                       transforms, the depthwise routines, the int8 kernels.
   LUTHIER__SIMD_NEON  1: the same families in NEON (Armv8.0-A; dotprod and i8mm int8 kernels
                       behind target attributes and HWCAP checks).
   0 on other targets, without GCC/Clang (they need target attributes or inline asm), and with
   LUTHIER_NO_X86_KERNELS / LUTHIER_NO_NEON_KERNELS: then only the scalar code and the
   operators' portable pass (GCC/Clang 16-byte vectors: SSE2 / NEON) remain. Code tests these
   macros, never whether a kernel header was included (LUTHIER__KERNELS_*_DONE only guard
   those headers against a second inclusion). */
#if LUTHIER__X86 && (defined(__GNUC__) || defined(__clang__)) && !defined(LUTHIER_NO_X86_KERNELS)
#define LUTHIER__SIMD_X86 1
#include <immintrin.h>
#define LUTHIER__TARGET_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
#define LUTHIER__TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
/* AVX-512 FP16 intrinsics: GCC 12, Clang 15 and later; older compilers build without the
   F16 family's x86 kernels. */
#if (defined(__clang__) && __clang_major__ >= 15) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12)
#define LUTHIER__HAVE_AVX512FP16 1
#define LUTHIER__TARGET_AVX512FP16 __attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f,avx2,fma,f16c")))
#else
#define LUTHIER__HAVE_AVX512FP16 0
#endif
#else
#define LUTHIER__SIMD_X86 0
#define LUTHIER__HAVE_AVX512FP16 0
#endif
#if LUTHIER__ARM64 && (defined(__GNUC__) || defined(__clang__)) && !defined(LUTHIER_NO_NEON_KERNELS)
#define LUTHIER__SIMD_NEON 1
#include <arm_neon.h>
#else
#define LUTHIER__SIMD_NEON 0
#endif
#define LUTHIER__DW_H16_TAPS 64 /* depthwise on fp16 activations: taps per pixel (luthier__conv_h16_dw_fits) */

#if defined(__GNUC__) || defined(__clang__)
#define LUTHIER__INLINE static inline __attribute__((always_inline))
#define LUTHIER__NOINLINE __attribute__((noinline))
#define LUTHIER__RESTRICT __restrict__
#define LUTHIER__UNUSED __attribute__((unused))
#define LUTHIER__PRINTF(f, a) __attribute__((format(printf, f, a))) /* argument f is a format, a its first value */
#else
#define LUTHIER__INLINE static inline
#define LUTHIER__NOINLINE
#define LUTHIER__RESTRICT
#define LUTHIER__UNUSED
#define LUTHIER__PRINTF(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-platform */

/* >>impl-isa: the instruction sets a routine may run on, and their names: the one table behind
   luthier_conv2d_info.isa, luthier_step_info.isa and the plan text (the microkernel registries'
   isa column uses the same names; tests/test_isa.c checks that). Each selection function
   (luthier__op_isa, luthier__dw_pick, luthier__wino_isa, luthier__conv_isa, luthier__step_isa,
   the qconv ones) returns one of these for the CPU features it is given. */
#define LUTHIER__ISAS(X)                                                                         \
    X(NONE, "none")     /* no arithmetic runs (a view) */                                        \
    X(COPY, "copy")     /* data movement through the C library's memcpy */                       \
    X(SCALAR, "scalar") /* plain C, one element at a time */                                     \
    X(SSE2, "sse2")     /* x86-64 baseline: the operators' portable pass, SSE transforms */      \
    X(AVX2, "avx2")                                                                              \
    X(AVXVNNI, "avxvnni")                                                                        \
    X(AVX512, "avx512")                                                                          \
    X(AVX512VNNI, "avx512vnni")                                                                  \
    X(AVX512FP16, "avx512fp16") /* vfmadd231ph (fp16 arithmetic) */                              \
    X(NEON, "neon")                                                                              \
    X(NEON_DOT, "neon_dot")   /* SDOT / UDOT (Armv8.2 dotprod) */                                \
    X(NEON_I8MM, "neon_i8mm") /* USMMLA (Armv8.6 i8mm) */                                        \
    X(NEON_FP16, "neonfp16")  /* FMLA .8h (Armv8.2 FP16) */
typedef enum luthier__isa {
#define LUTHIER__X(e, name) LUTHIER__ISA_##e,
    LUTHIER__ISAS(LUTHIER__X)
#undef LUTHIER__X
    LUTHIER__ISA_COUNT
} luthier__isa;

static const char *const luthier__isa_names[] = {
#define LUTHIER__X(e, name) name,
    LUTHIER__ISAS(LUTHIER__X)
#undef LUTHIER__X
};

LUTHIER__UNUSED LUTHIER_PRIVATE const char *luthier__isa_name(luthier__isa isa) {
    return (unsigned)isa < (unsigned)LUTHIER__ISA_COUNT ? luthier__isa_names[isa] : "unknown";
}

/* The entry of a registry's isa string; LUTHIER__ISA_COUNT when it is not in the table. */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__isa_of(const char *name) {
    int i;
    for (i = 0; i < (int)LUTHIER__ISA_COUNT; i++)
        if (name && strcmp(name, luthier__isa_names[i]) == 0) return (luthier__isa)i;
    return LUTHIER__ISA_COUNT;
}

/* A step made of a main routine and a helper (a gather, a transform): the main routine's ISA,
   or scalar when the helper is scalar (a hot part left scalar shows). */
LUTHIER__UNUSED LUTHIER_PRIVATE luthier__isa luthier__isa_with(luthier__isa main, luthier__isa helper) {
    return helper == LUTHIER__ISA_SCALAR ? LUTHIER__ISA_SCALAR : main;
}

/* The portable vector code (GCC/Clang 16-byte vectors: the operators' base pass, the
   indirection gather) compiles to the target's baseline SIMD. */
#if (defined(__GNUC__) || defined(__clang__)) && LUTHIER__X86
#define LUTHIER__ISA_PORTABLE LUTHIER__ISA_SSE2
#elif (defined(__GNUC__) || defined(__clang__)) && LUTHIER__ARM64
#define LUTHIER__ISA_PORTABLE LUTHIER__ISA_NEON
#else
#define LUTHIER__ISA_PORTABLE LUTHIER__ISA_SCALAR
#endif

/* >>impl-errors: the calling thread's last message (see ERRORS). Every module's failure path
   formats into it through luthier__set_error / luthier__set_error_v, then copies it to its own
   channel. */
#if defined(LUTHIER_NO_THREADS)
#define LUTHIER__TLS
#elif defined(__cplusplus) && __cplusplus >= 201103L
#define LUTHIER__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define LUTHIER__TLS _Thread_local
#elif defined(__GNUC__) || defined(__clang__)
#define LUTHIER__TLS __thread
#elif defined(_MSC_VER)
#define LUTHIER__TLS __declspec(thread)
#else
#define LUTHIER__TLS /* no thread-local storage known: one message for the whole process */
#endif
static LUTHIER__TLS char luthier__last_error[2048];

LUTHIER_API const char *luthier_last_error(void) { return luthier__last_error; }

LUTHIER_API void luthier_set_last_error(const char *message) {
    snprintf(luthier__last_error, sizeof luthier__last_error, "%s", message ? message : "");
}

LUTHIER_PRIVATE void luthier__set_error_v(const char *fmt, va_list ap) {
    vsnprintf(luthier__last_error, sizeof luthier__last_error, fmt, ap);
}

LUTHIER__PRINTF(1, 2)
LUTHIER_PRIVATE void luthier__set_error_f(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
}

/* The last message into dst (n bytes, cut to fit). */
LUTHIER_PRIVATE void luthier__copy_error(char *dst, size_t n) {
    size_t len = strlen(luthier__last_error);
    if (!dst || !n) return;
    if (len >= n) len = n - 1;
    memcpy(dst, luthier__last_error, len);
    dst[len] = 0;
}


#define LUTHIER__ALIGN 64

/* Buffers of at least this many bytes (transformed weights of the large layers) ask Linux for
   2 MiB pages over their aligned interior: Winograd's weights stream 9-17 MB per layer, and
   with 4 KiB pages their TLB misses slowed the layers around them 2x (docs/DESIGN.md, "Huge
   pages for large weights"). A hint: where it is refused nothing changes. */
#define LUTHIER__HUGE_PAGE_MIN ((size_t)4 << 20)

LUTHIER_PRIVATE void luthier__advise_huge(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (bytes >= LUTHIER__HUGE_PAGE_MIN && hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Aligned allocation on top of LUTHIER_MALLOC: the byte before the block records the offset. */
LUTHIER_PRIVATE void *luthier__alloc(size_t bytes) {
    unsigned char *raw, *p;
    if (bytes > SIZE_MAX - LUTHIER__ALIGN) return NULL;
    raw = (unsigned char *)LUTHIER_MALLOC(bytes + LUTHIER__ALIGN);
    if (!raw) return NULL;
    p = raw + (LUTHIER__ALIGN - ((uintptr_t)raw % LUTHIER__ALIGN));
    p[-1] = (unsigned char)(p - raw);
    luthier__advise_huge(p, bytes);
    return p;
}
/* luthier__alloc with the bytes zeroed. */
LUTHIER_PRIVATE void *luthier__zalloc(size_t bytes) {
    void *p = luthier__alloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
LUTHIER_PRIVATE void luthier__free(void *ptr) {
    unsigned char *p = (unsigned char *)ptr;
    if (p) {
        const size_t offset = p[-1];
        LUTHIER_FREE(p - offset);
    }
}

/* >>impl-size: checked size arithmetic. Every byte size, offset and element count of the graph,
   the plan and its arena, the ONNX loader and the calibration goes through these three. A result
   above LUTHIER__SIZE_LIMIT (PTRDIFF_MAX: no C object can be larger) is an overflow: the helper
   returns 0 and sets *out to 0, and the caller turns that into LUTHIER_STATUS_OVERFLOW. */
#define LUTHIER__SIZE_LIMIT ((size_t)PTRDIFF_MAX)

LUTHIER_PRIVATE int luthier__size_mul(size_t a, size_t b, size_t *out) {
    if (a > LUTHIER__SIZE_LIMIT || b > LUTHIER__SIZE_LIMIT || (a && b > LUTHIER__SIZE_LIMIT / a)) {
        *out = 0;
        return 0;
    }
    *out = a * b;
    return 1;
}

LUTHIER_PRIVATE int luthier__size_add(size_t a, size_t b, size_t *out) {
    if (a > LUTHIER__SIZE_LIMIT || b > LUTHIER__SIZE_LIMIT - a) {
        *out = 0;
        return 0;
    }
    *out = a + b;
    return 1;
}

/* elem times the product of the dimensions of a shape (a negative dimension is an overflow). */
LUTHIER_PRIVATE int luthier__size_shape(int rank, const int64_t *shape, size_t elem, size_t *out) {
    size_t n = elem;
    int i;
    for (i = 0; i < rank; i++)
        if (shape[i] < 0 || (uint64_t)shape[i] > (uint64_t)LUTHIER__SIZE_LIMIT || !luthier__size_mul(n, (size_t)shape[i], &n)) {
            *out = 0;
            return 0;
        }
    *out = n;
    return 1;
}

#if LUTHIER__X86
#if defined(__GNUC__) || defined(__clang__)
#include <cpuid.h>
#endif
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) {
    unsigned a, b, c, d, f = 0;
    unsigned long long xcr0;
    unsigned xlo, xhi;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    /* osxsave avx fma f16c (every AVX2 CPU has F16C: the fp16-weight kernels rely on it) */
    if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 12)) || !(c & (1u << 29))) return 0;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    xcr0 = ((unsigned long long)xhi << 32) | xlo;
    if ((xcr0 & 6) != 6) return 0; /* XMM + YMM state */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & (1u << 5)) f |= LUTHIER_CPU_AVX2_FMA;
    if ((b & (1u << 16)) && (xcr0 & 0xe6) == 0xe6) f |= LUTHIER_CPU_AVX512F; /* opmask+ZMM */
    /* AVX512_VNNI: leaf 7.0 ECX bit 11, with AVX-512BW (EBX bit 30) */
    if ((f & LUTHIER_CPU_AVX512F) && (b & (1u << 30)) && (c & (1u << 11))) f |= LUTHIER_CPU_AVX512VNNI;
    /* AVX512_FP16: leaf 7.0 EDX bit 23, with AVX-512BW (EBX bit 30) and VL (EBX bit 31) */
    if ((f & LUTHIER_CPU_AVX512F) && (b & (1u << 30)) && (b & (1u << 31)) && (d & (1u << 23)))
        f |= LUTHIER_CPU_AVX512FP16;
    if (a >= 1 && (f & LUTHIER_CPU_AVX2_FMA)) { /* AVX-VNNI: leaf 7.1 EAX bit 4 */
        __cpuid_count(7, 1, a, b, c, d);
        if (a & (1u << 4)) f |= LUTHIER_CPU_AVXVNNI;
    }
    return f;
}
#elif LUTHIER__ARM64 && defined(__linux__)
#include <sys/auxv.h>
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) {
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned f = LUTHIER_CPU_NEON;
    if (hw & (1ul << 20)) f |= LUTHIER_CPU_DOTPROD; /* HWCAP_ASIMDDP */
    if (hw & (1ul << 10)) f |= LUTHIER_CPU_FP16;    /* HWCAP_ASIMDHP */
#ifdef AT_HWCAP2
    if (getauxval(AT_HWCAP2) & (1ul << 13)) f |= LUTHIER_CPU_I8MM; /* HWCAP2_I8MM */
#endif
    return f;
}
#elif LUTHIER__ARM64
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) { return LUTHIER_CPU_NEON; }
#else
LUTHIER_PRIVATE unsigned luthier__detect_cpu_features(void) { return 0; }
#endif

/* Detected once; threads that race on the first call each detect the same value and store it
   atomically (bit 31 marks "detected"). */
LUTHIER_API unsigned luthier_cpu_features(void) {
    static unsigned cached; /* 0: not yet detected */
#if defined(__GNUC__) || defined(__clang__)
    unsigned f = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!f) {
        f = luthier__detect_cpu_features() | 0x80000000u;
        __atomic_store_n(&cached, f, __ATOMIC_RELEASE);
    }
#else
    unsigned f = luthier__detect_cpu_features() | 0x80000000u;
    (void)cached;
#endif
    return f & 0x7fffffffu;
}

/* Opens path for reading when it is a regular file; NULL with *why set otherwise. A directory
   (whose size reads as LONG_MAX), a FIFO or a device (an open or read that may never return) is
   refused: the open itself does not block (O_NONBLOCK), the check is made on the open file. */
LUTHIER_PRIVATE FILE *luthier__fopen_regular(const char *path, const char **why) {
#if defined(__unix__) || defined(__APPLE__)
    struct stat st;
    FILE *f;
    int fd;
    *why = "cannot open";
    if (!path || (fd = open(path, O_RDONLY | O_NONBLOCK)) < 0) return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file (a directory, FIFO, socket or device)";
        close(fd);
        return NULL;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
        close(fd);
        return NULL;
    }
    return f;
#else
    FILE *f = path ? fopen(path, "rb") : NULL;
    *why = "cannot open";
    return f;
#endif
}

LUTHIER_API void luthier_free(void *p) { luthier__free(p); }

LUTHIER_API luthier_status luthier_read_file(const char *path, size_t max_bytes, void **data, size_t *size, char *err,
                                             size_t err_size) {
    const char *why = "";
    luthier_status s = LUTHIER_STATUS_OK;
    FILE *f;
    long len = -1;
    char *buf = NULL;
    if (err && err_size) err[0] = 0;
    if (!data || !size) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *data = NULL;
    *size = 0;
    if (!(f = luthier__fopen_regular(path, &why))) {
        if (err && err_size) snprintf(err, err_size, "'%s': %s", path ? path : "(null)", why);
        return strcmp(why, "cannot open") ? LUTHIER_STATUS_INVALID_ARGUMENT : LUTHIER_STATUS_NOT_FOUND;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) s = LUTHIER_STATUS_INVALID_ARGUMENT, why = "cannot read it";
    else if ((max_bytes && (size_t)len > max_bytes) || (size_t)len >= LUTHIER__SIZE_LIMIT) s = LUTHIER_STATUS_OVERFLOW, why = "too large";
    else if (!(buf = (char *)luthier__alloc((size_t)len + 1))) s = LUTHIER_STATUS_OUT_OF_MEMORY, why = "does not fit in memory";
    else if (len && fread(buf, 1, (size_t)len, f) != (size_t)len) s = LUTHIER_STATUS_INVALID_ARGUMENT, why = "cannot read it";
    fclose(f);
    if (s != LUTHIER_STATUS_OK) {
        luthier__free(buf);
        if (err && err_size) snprintf(err, err_size, "'%s': %s (%ld bytes, limit %zu)", path, why, len, max_bytes);
        return s;
    }
    buf[len] = 0;
    *data = buf;
    *size = (size_t)len;
    return LUTHIER_STATUS_OK;
}

/* Reads a small text file into buf; returns the length or -1. */
LUTHIER_PRIVATE long luthier__read_small_file(const char *path, char *buf, size_t cap) {
    const char *why;
    FILE *f = luthier__fopen_regular(path, &why);
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return (long)n;
}

/* "48K", "2048K", "1M", "32768" -> bytes; 0 if unparsable. */
LUTHIER_PRIVATE size_t luthier__parse_size(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return 0;
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return (size_t)v;
}

LUTHIER_API luthier_cache_info luthier_cache_sizes(void) {
    luthier_cache_info ci;
    int i;
    memset(&ci, 0, sizeof ci);
    for (i = 0; i < 8; i++) {
        char path[128], level[16], type[32], size[32];
        size_t bytes;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (luthier__read_small_file(path, level, sizeof level) <= 0) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (luthier__read_small_file(path, type, sizeof type) <= 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (luthier__read_small_file(path, size, sizeof size) <= 0) continue;
        if (strncmp(type, "Instruction", 11) == 0) continue;
        bytes = luthier__parse_size(size);
        if (level[0] == '1') ci.l1d = bytes;
        else if (level[0] == '2') ci.l2 = bytes;
        else if (level[0] == '3') ci.l3 = bytes;
    }
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    if (!ci.l1d) { long v = sysconf(_SC_LEVEL1_DCACHE_SIZE); if (v > 0) ci.l1d = (size_t)v; }
    if (!ci.l2) { long v = sysconf(_SC_LEVEL2_CACHE_SIZE); if (v > 0) ci.l2 = (size_t)v; }
    if (!ci.l3) { long v = sysconf(_SC_LEVEL3_CACHE_SIZE); if (v > 0) ci.l3 = (size_t)v; }
#endif
    /* Conservative defaults: Cortex-A53/A72 class. Absurd values are clamped. */
    if (ci.l1d < (8u << 10) || ci.l1d > (4u << 20)) ci.l1d = 32u << 10;
    if (ci.l2 < (64u << 10) || ci.l2 > (256u << 20)) ci.l2 = 512u << 10;
    return ci;
}

/* >>impl-topology */

/* Core names from MIDR: (implementer, part number) as /proc/cpuinfo shows them ("CPU
   implementer : 0x41", "CPU part : 0xd08"). Ids from the Linux kernel's
   arch/arm64/include/asm/cputype.h (ARM_CPU_PART_CORTEX_*, QCOM_CPU_PART_KRYO_*).
   ipc: rough fp32 GEMM throughput per clock relative to Cortex-A53, used only when the kernel
   gives no cpu_capacity (capacity = max_freq * ipc). Basis: the NEON FMA issue width of the
   core (A53/A55/A510: one 128-bit FMLA per cycle, in order; A57..A78, A710, N1: two 128-bit
   pipes, out of order; X1/X2: four) derated by the GEMM efficiency usually reached on each
   (in-order cores stall more on loads). Estimates: only the ratios between clusters matter
   and the tuner's measured ratios supersede them. Qualcomm Kryo parts use the Cortex core
   they derive from (2xx Gold: A73, 2xx Silver: A53, 3xx Gold: A75, 3xx/4xx Silver: A55,
   4xx Gold: A76). */
typedef struct luthier__core_kind {
    unsigned implementer, part;
    const char *name;
    double ipc;
} luthier__core_kind;

static const luthier__core_kind luthier__core_kinds[] = {
    {0x41, 0xd03, "Cortex-A53", 1.0},  {0x41, 0xd05, "Cortex-A55", 1.1},
    {0x41, 0xd07, "Cortex-A57", 1.7},  {0x41, 0xd08, "Cortex-A72", 2.0},
    {0x41, 0xd09, "Cortex-A73", 1.8},  {0x41, 0xd0a, "Cortex-A75", 2.0},
    {0x41, 0xd0b, "Cortex-A76", 2.4},  {0x41, 0xd0c, "Neoverse-N1", 2.4},
    {0x41, 0xd0d, "Cortex-A77", 2.6},  {0x41, 0xd41, "Cortex-A78", 2.8},
    {0x41, 0xd44, "Cortex-X1", 4.0},   {0x41, 0xd46, "Cortex-A510", 1.2},
    {0x41, 0xd47, "Cortex-A710", 2.9}, {0x41, 0xd48, "Cortex-X2", 4.2},
    {0x51, 0x800, "Kryo 2xx Gold", 1.8},   {0x51, 0x801, "Kryo 2xx Silver", 1.0},
    {0x51, 0x802, "Kryo 3xx Gold", 2.0},   {0x51, 0x803, "Kryo 3xx Silver", 1.1},
    {0x51, 0x804, "Kryo 4xx Gold", 2.4},   {0x51, 0x805, "Kryo 4xx Silver", 1.1}};

/* What sysfs and /proc/cpuinfo say about each CPU (indexed by CPU id). */
typedef struct luthier__cpu_facts {
    unsigned char online;
    unsigned capacity;  /* cpu_capacity, 0 = unknown */
    unsigned freq_khz;  /* cpuinfo_max_freq, 0 = unknown */
    unsigned implementer, part; /* from cpuinfo; 0 = unknown */
    char core[32];      /* display name, "" = unknown */
    char key[40];       /* grouping key: core kind ("" = unknown) */
    double speed;       /* raw capacity (unnormalized) */
} luthier__cpu_facts;

typedef struct luthier__sysfs_facts {
    int online_ok;      /* the online file was readable and well-formed */
    int num_online;
    char online_text[64];
    int known;          /* anything beyond the online list (capacity, frequency or core) */
    luthier__cpu_facts cpu[LUTHIER_MAX_CPUS];
    int group_of[LUTHIER_MAX_CPUS];
} luthier__sysfs_facts;

LUTHIER__PRINTF(3, 4)
LUTHIER_PRIVATE luthier_status luthier__topo_fail(char *err, size_t err_size, const char *fmt,
                                                  ...) {
    va_list ap;
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
    luthier__copy_error(err, err_size);
    return LUTHIER_STATUS_INVALID_ARGUMENT;
}

LUTHIER_PRIVATE int luthier__is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Decimal digits [s, s+len) -> *v; 0 if empty, not all digits, or > 1e9. */
LUTHIER_PRIVATE int luthier__parse_uint(const char *s, size_t len, unsigned long *v) {
    size_t i;
    unsigned long x = 0;
    if (len == 0) return 0;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (unsigned long)(s[i] - '0');
        if (x > 1000000000ul) return 0;
    }
    *v = x;
    return 1;
}

/* "0-3,5\n" -> mask (CPU ids >= LUTHIER_MAX_CPUS dropped). Returns the number of CPUs set,
   or -1 when malformed. */
LUTHIER_PRIVATE int luthier__parse_cpulist(const char *s, unsigned char *mask) {
    int count = 0;
    memset(mask, 0, LUTHIER_MAX_CPUS);
    while (*s && !luthier__is_space(*s)) {
        const char *end = s, *dash;
        unsigned long a, b, c;
        while (*end && *end != ',' && !luthier__is_space(*end)) end++;
        dash = (const char *)memchr(s, '-', (size_t)(end - s));
        if (dash) {
            if (!luthier__parse_uint(s, (size_t)(dash - s), &a) ||
                !luthier__parse_uint(dash + 1, (size_t)(end - dash - 1), &b) || b < a)
                return -1;
        } else {
            if (!luthier__parse_uint(s, (size_t)(end - s), &a)) return -1;
            b = a;
        }
        for (c = a; c <= b && c < LUTHIER_MAX_CPUS; c++)
            if (!mask[c]) { mask[c] = 1; count++; }
        s = *end == ',' ? end + 1 : end;
    }
    while (luthier__is_space(*s)) s++;
    return *s ? -1 : count;
}

/* Ascending ids -> "0-3,5" ("..." at the end when buf is too small). Always terminates buf. */
LUTHIER_PRIVATE void luthier__format_cpulist(const int *ids, int n, char *buf, size_t size) {
    size_t len = 0;
    int i = 0;
    if (!size) return;
    buf[0] = 0;
    while (i < n) {
        int j = i, w;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1) j++;
        if (j > i) w = snprintf(buf + len, size - len, "%s%d-%d", i ? "," : "", ids[i], ids[j]);
        else w = snprintf(buf + len, size - len, "%s%d", i ? "," : "", ids[i]);
        if (w < 0 || (size_t)w >= size - len) { /* truncated: end with "..." if room */
            if (size >= 4) memcpy(buf + size - 4, "...", 4);
            return;
        }
        len += (size_t)w;
        i = j + 1;
    }
}

/* Unsigned decimal file content -> value, 0 when missing, empty or not a number. */
LUTHIER_PRIVATE unsigned luthier__read_uint_file(const char *path, unsigned long max) {
    char buf[64];
    size_t n;
    unsigned long v;
    if (luthier__read_small_file(path, buf, sizeof buf) <= 0) return 0;
    n = 0;
    while (buf[n] >= '0' && buf[n] <= '9') n++;
    if (!luthier__parse_uint(buf, n, &v) || v > max) return 0;
    while (luthier__is_space(buf[n])) n++;
    return buf[n] ? 0u : (unsigned)v;
}

/* x86 "model name" -> short core name: drops "(R)", "(TM)", " CPU @ 2.90GHz", " Processor". */
LUTHIER_PRIVATE void luthier__short_model_name(const char *in, char *out, size_t size) {
    char tmp[256];
    size_t n = 0, o = 0;
    char *cut;
    while (*in && n + 1 < sizeof tmp) {
        if (strncmp(in, "(R)", 3) == 0 || strncmp(in, "(r)", 3) == 0) { in += 3; continue; }
        if (strncmp(in, "(TM)", 4) == 0 || strncmp(in, "(tm)", 4) == 0) { in += 4; continue; }
        if (luthier__is_space(*in) && (n == 0 || tmp[n - 1] == ' ')) { in++; continue; }
        tmp[n++] = luthier__is_space(*in) ? ' ' : *in;
        in++;
    }
    tmp[n] = 0;
    if ((cut = strstr(tmp, " CPU @")) != NULL) *cut = 0;
    if ((cut = strstr(tmp, " @")) != NULL) *cut = 0;
    n = strlen(tmp);
    if (n >= 10 && strcmp(tmp + n - 10, " Processor") == 0) tmp[n -= 10] = 0;
    while (n && tmp[n - 1] == ' ') tmp[--n] = 0;
    for (o = 0; o + 1 < size && tmp[o]; o++) out[o] = tmp[o];
    while (o && out[o - 1] == ' ') o--;
    if (size) out[o] = 0;
}

/* /proc/cpuinfo: per "processor : N" block, CPU implementer / CPU part (ARM) or model name. */
LUTHIER_PRIVATE void luthier__read_cpuinfo(const char *path, luthier__sysfs_facts *sf) {
    const char *why;
    FILE *f = luthier__fopen_regular(path, &why);
    char line[256];
    long cur = -1;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *colon, *key_end, *val;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(f)) { /* long line (x86 flags): drop the rest */
            int c;
            while ((c = getc(f)) != EOF && c != '\n') {}
        }
        colon = strchr(line, ':');
        if (!colon) continue;
        key_end = colon;
        while (key_end > line && luthier__is_space(key_end[-1])) key_end--;
        *key_end = 0;
        val = colon + 1;
        while (luthier__is_space(*val)) val++;
        len = strlen(val);
        while (len && luthier__is_space(val[len - 1])) val[--len] = 0;
        if (strcmp(line, "processor") == 0) {
            unsigned long v;
            cur = luthier__parse_uint(val, len, &v) && v < LUTHIER_MAX_CPUS ? (long)v : -1;
        } else if (cur >= 0) {
            luthier__cpu_facts *c = &sf->cpu[cur];
            char *end;
            unsigned long v;
            if (strcmp(line, "CPU implementer") == 0 || strcmp(line, "CPU part") == 0) {
                v = strtoul(val, &end, 0);
                if (end == val || *end || v == 0 || v > 0xffff) continue;
                if (line[4] == 'i') c->implementer = (unsigned)v;
                else c->part = (unsigned)v;
            } else if (strcmp(line, "model name") == 0 && len) {
                luthier__short_model_name(val, c->core, sizeof c->core);
                memcpy(c->key, c->core, sizeof c->core); /* key is longer than core */
            }
        }
    }
    fclose(f);
}

LUTHIER_PRIVATE const luthier__core_kind *luthier__find_core(unsigned implementer, unsigned part) {
    size_t i;
    for (i = 0; i < sizeof luthier__core_kinds / sizeof luthier__core_kinds[0]; i++)
        if (luthier__core_kinds[i].implementer == implementer && luthier__core_kinds[i].part == part)
            return &luthier__core_kinds[i];
    return NULL;
}

/* Reads everything under root into sf. Never fails: missing pieces stay unknown. */
LUTHIER_PRIVATE void luthier__read_sysfs(const char *root, luthier__sysfs_facts *sf) {
    char path[4200], buf[4096];
    unsigned char mask[LUTHIER_MAX_CPUS];
    int i, n_cap = 0, n_freq = 0, n_core = 0, n_online = 0;
    size_t rl = strlen(root);
    while (rl && root[rl - 1] == '/') rl--;
    memset(sf, 0, sizeof *sf);
    snprintf(path, sizeof path, "%.*s/sys/devices/system/cpu/online", (int)rl, root);
    if (luthier__read_small_file(path, buf, sizeof buf) > 0 && luthier__parse_cpulist(buf, mask) > 0) {
        int ids[LUTHIER_MAX_CPUS];
        sf->online_ok = 1;
        for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
            sf->cpu[i].online = mask[i];
            if (mask[i]) ids[n_online++] = i;
        }
        luthier__format_cpulist(ids, n_online, sf->online_text, sizeof sf->online_text);
    } else {
        long n = -1;
#ifdef _SC_NPROCESSORS_ONLN
        n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
        if (n < 1) n = 1;
        if (n > LUTHIER_MAX_CPUS) n = LUTHIER_MAX_CPUS;
        for (i = 0; i < (int)n; i++) sf->cpu[i].online = 1;
        sf->num_online = (int)n;
        return; /* nothing else is trusted without the online list */
    }
    sf->num_online = n_online;
    snprintf(path, sizeof path, "%.*s/proc/cpuinfo", (int)rl, root);
    luthier__read_cpuinfo(path, sf);
    for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
        luthier__cpu_facts *c = &sf->cpu[i];
        if (!c->online) continue;
        snprintf(path, sizeof path, "%.*s/sys/devices/system/cpu/cpu%d/cpu_capacity", (int)rl, root, i);
        c->capacity = luthier__read_uint_file(path, 1u << 20);
        snprintf(path, sizeof path, "%.*s/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", (int)rl, root, i);
        c->freq_khz = luthier__read_uint_file(path, 100000000ul); /* <= 100 GHz */
        if (c->implementer && c->part) {
            const luthier__core_kind *k = luthier__find_core(c->implementer, c->part);
            if (k) snprintf(c->core, sizeof c->core, "%s", k->name);
            snprintf(c->key, sizeof c->key, "midr:%x:%x", c->implementer, c->part);
        }
        n_cap += c->capacity != 0;
        n_freq += c->freq_khz != 0;
        n_core += c->key[0] != 0;
    }
    /* One source of speed for all CPUs: cpu_capacity if every CPU has it, else frequency x IPC
       if every CPU has a frequency, else IPC alone (1.0 for unknown cores). */
    for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
        luthier__cpu_facts *c = &sf->cpu[i];
        const luthier__core_kind *k = luthier__find_core(c->implementer, c->part);
        if (!c->online) continue;
        if (n_cap == n_online) c->speed = c->capacity;
        else c->speed = (n_freq == n_online ? (double)c->freq_khz : 1.0) * (k ? k->ipc : 1.0);
    }
    sf->known = n_cap || n_freq || n_core;
}

/* Capacities normalized to the fastest, then a stable sort fastest first. */
LUTHIER_PRIVATE void luthier__topology_sort(luthier_topology *t) {
    int i, j;
    double best = 0;
    for (i = 0; i < t->num_clusters; i++)
        if (t->clusters[i].capacity > best) best = t->clusters[i].capacity;
    for (i = 0; i < t->num_clusters; i++)
        t->clusters[i].capacity = best > 0 ? t->clusters[i].capacity / best : 1.0;
    for (i = 1; i < t->num_clusters; i++) { /* insertion sort: stable, at most 8 entries */
        luthier_cluster c = t->clusters[i];
        for (j = i; j > 0 && t->clusters[j - 1].capacity < c.capacity; j--)
            t->clusters[j] = t->clusters[j - 1];
        t->clusters[j] = c;
    }
}

LUTHIER_PRIVATE void luthier__rank_names(luthier_topology *t) {
    static const char *const two[] = {"big", "little"}, *const three[] = {"big", "middle", "little"};
    int i;
    for (i = 0; i < t->num_clusters; i++) {
        char *name = t->clusters[i].name;
        if (t->num_clusters == 1) snprintf(name, sizeof t->clusters[i].name, "all");
        else if (t->num_clusters == 2) snprintf(name, sizeof t->clusters[i].name, "%s", two[i]);
        else if (t->num_clusters == 3) snprintf(name, sizeof t->clusters[i].name, "%s", three[i]);
        else snprintf(name, sizeof t->clusters[i].name, "c%d", i);
    }
}

/* Groups the online CPUs by (core kind, speed within 5 %): the 5 % keeps per-core turbo bins
   and ACPI CPPC jitter of servers in one cluster, while real cluster steps are >= 15 %. More
   groups than LUTHIER_MAX_CLUSTERS: the two closest in speed merge until they fit. */
LUTHIER_PRIVATE void luthier__topology_from_sysfs(luthier__sysfs_facts *sf, luthier_topology *t) {
    double speed[LUTHIER_MAX_CPUS];
    int count[LUTHIER_MAX_CPUS], first[LUTHIER_MAX_CPUS];
    int n = 0, i, g;
    for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
        luthier__cpu_facts *c = &sf->cpu[i];
        sf->group_of[i] = -1;
        if (!c->online) continue;
        for (g = 0; g < n; g++) {
            const luthier__cpu_facts *r = &sf->cpu[first[g]];
            double d = c->speed - r->speed, m = c->speed > r->speed ? c->speed : r->speed;
            if (strcmp(c->key, r->key) == 0 && (d < 0 ? -d : d) <= 0.05 * m) break;
        }
        if (g == n) { first[n] = i; speed[n] = 0; count[n] = 0; n++; }
        sf->group_of[i] = g;
        speed[g] += c->speed;
        count[g]++;
    }
    for (g = 0; g < n; g++) speed[g] /= count[g];
    while (n > LUTHIER_MAX_CLUSTERS) { /* merge the closest pair (a, b) into a */
        int a = 0, b = 1, h;
        double best = -1;
        for (g = 0; g < n; g++)
            for (h = g + 1; h < n; h++) {
                double lo = speed[g] < speed[h] ? speed[g] : speed[h];
                double hi = speed[g] < speed[h] ? speed[h] : speed[g];
                double r = hi > 0 ? lo / hi : 1.0;
                if (r > best) { best = r; a = g; b = h; }
            }
        speed[a] = (speed[a] * count[a] + speed[b] * count[b]) / (count[a] + count[b]);
        count[a] += count[b];
        for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
            if (sf->group_of[i] == b) sf->group_of[i] = a;
            else if (sf->group_of[i] > b) sf->group_of[i]--;
        }
        for (g = b; g + 1 < n; g++) { speed[g] = speed[g + 1]; count[g] = count[g + 1]; first[g] = first[g + 1]; }
        n--;
    }
    t->num_clusters = n;
    for (g = 0; g < n; g++) {
        luthier_cluster *c = &t->clusters[g];
        int mixed = 0;
        c->capacity = speed[g];
        for (i = 0; i < LUTHIER_MAX_CPUS; i++) {
            if (sf->group_of[i] != g) continue;
            if (c->num_cpus == 0) snprintf(c->core, sizeof c->core, "%s", sf->cpu[i].core);
            else if (strcmp(c->core, sf->cpu[i].core) != 0) mixed = 1;
            if (sf->cpu[i].freq_khz > c->max_freq_khz) c->max_freq_khz = sf->cpu[i].freq_khz;
            c->cpus[c->num_cpus++] = i;
        }
        if (mixed) c->core[0] = 0;
    }
    luthier__topology_sort(t);
    luthier__rank_names(t);
}

/* The LUTHIER_CLUSTERS syntax. what = "LUTHIER_CLUSTERS" or "cluster spec" for messages. */
LUTHIER_PRIVATE luthier_status luthier__topology_parse(const char *spec, const char *what,
                                                       luthier_topology *t, char *err,
                                                       size_t err_size) {
    short owner[LUTHIER_MAX_CPUS]; /* cluster index + 1, 0 = none */
    double cap[LUTHIER_MAX_CLUSTERS];
    int n = 0, n_cap = 0, i, c;
    size_t pos = 0;
    memset(t, 0, sizeof *t);
    memset(owner, 0, sizeof owner);
    if (!spec) return luthier__topo_fail(err, err_size, "%s: no spec (NULL)", what);
    for (;;) {
        size_t start = pos, end, len;
        const char *tok, *item, *colon, *dash;
        char shown[48];
        unsigned long a, b, cpu;
        int p;
        while (spec[pos] && spec[pos] != ',') pos++;
        end = pos;
        while (start < end && luthier__is_space(spec[start])) start++;
        while (end > start && luthier__is_space(spec[end - 1])) end--;
        tok = spec + start;
        len = end - start;
        p = (int)start + 1; /* 1-based position for messages */
        snprintf(shown, sizeof shown, "%.*s%s", (int)(len > 40 ? 40 : len), tok, len > 40 ? "..." : "");
        if (len == 0)
            return luthier__topo_fail(err, err_size, "%s: empty token at position %d in \"%s\" (expected name:cpus, e.g. big:4-7,little:0-3)",
                                      what, p, spec);
        colon = (const char *)memchr(tok, ':', len);
        if (colon) { /* name[@capacity]:cpus starts a cluster */
            const char *at = (const char *)memchr(tok, '@', (size_t)(colon - tok));
            size_t nlen = (size_t)((at ? at : colon) - tok), k;
            if (nlen == 0)
                return luthier__topo_fail(err, err_size, "%s: empty cluster name in token '%s' at position %d", what, shown, p);
            if (nlen >= sizeof t->clusters[0].name)
                return luthier__topo_fail(err, err_size, "%s: cluster name too long (max %d characters) in token '%s' at position %d",
                                          what, (int)sizeof t->clusters[0].name - 1, shown, p);
            for (k = 0; k < nlen; k++) {
                char ch = tok[k];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
                    return luthier__topo_fail(err, err_size, "%s: bad character '%c' in cluster name (letters, digits, _ - .) in token '%s' at position %d",
                                              what, ch, shown, p);
            }
            if (n == LUTHIER_MAX_CLUSTERS)
                return luthier__topo_fail(err, err_size, "%s: too many clusters (max %d) at token '%s' at position %d", what, LUTHIER_MAX_CLUSTERS, shown, p);
            memcpy(t->clusters[n].name, tok, nlen);
            t->clusters[n].name[nlen] = 0;
            for (c = 0; c < n; c++)
                if (strcmp(t->clusters[c].name, t->clusters[n].name) == 0)
                    return luthier__topo_fail(err, err_size, "%s: cluster name '%s' used twice (token '%s' at position %d)", what, t->clusters[n].name, shown, p);
            cap[n] = 0;
            if (at) {
                char num[64], *e;
                size_t clen = (size_t)(colon - at - 1);
                double v;
                if (clen == 0 || clen >= sizeof num)
                    return luthier__topo_fail(err, err_size, "%s: capacity missing or too long after '@' in token '%s' at position %d", what, shown, p);
                memcpy(num, at + 1, clen);
                num[clen] = 0;
                v = strtod(num, &e);
                if (e == num || *e || !(v > 0 && v < 1e30))
                    return luthier__topo_fail(err, err_size, "%s: capacity '%s' is not a positive number in token '%s' at position %d", what, num, shown, p);
                cap[n] = v;
                n_cap++;
            }
            n++;
            item = colon + 1;
            if (item == tok + len)
                return luthier__topo_fail(err, err_size, "%s: cluster '%s' has no CPUs (token '%s' at position %d)", what, t->clusters[n - 1].name, shown, p);
        } else {
            if (n == 0)
                return luthier__topo_fail(err, err_size, "%s: expected name:cpus (e.g. big:4-7) but found token '%s' at position %d", what, shown, p);
            item = tok; /* a CPU list continues after a comma */
        }
        len = (size_t)(tok + len - item);
        dash = (const char *)memchr(item, '-', len);
        if (dash) {
            if (!luthier__parse_uint(item, (size_t)(dash - item), &a) || !luthier__parse_uint(dash + 1, len - (size_t)(dash - item) - 1, &b))
                return luthier__topo_fail(err, err_size, "%s: bad CPU range '%.*s' (expected a-b with CPU ids) in token '%s' at position %d",
                                          what, (int)len, item, shown, p);
            if (b < a)
                return luthier__topo_fail(err, err_size, "%s: reversed range %lu-%lu (write %lu-%lu) in token '%s' at position %d", what, a, b, b, a, shown, p);
        } else {
            if (!luthier__parse_uint(item, len, &a))
                return luthier__topo_fail(err, err_size, "%s: bad CPU id '%.*s' (expected a number or a range a-b) in token '%s' at position %d",
                                          what, (int)len, item, shown, p);
            b = a;
        }
        if (b >= LUTHIER_MAX_CPUS)
            return luthier__topo_fail(err, err_size, "%s: cpu %lu over the limit (max %d) in token '%s' at position %d", what, b, LUTHIER_MAX_CPUS - 1, shown, p);
        for (cpu = a; cpu <= b; cpu++) {
            if (owner[cpu] == n)
                return luthier__topo_fail(err, err_size, "%s: cpu %lu listed twice in cluster '%s' (token '%s' at position %d)", what, cpu, t->clusters[n - 1].name, shown, p);
            if (owner[cpu])
                return luthier__topo_fail(err, err_size, "%s: cpu %lu is in two clusters, '%s' and '%s' (token '%s' at position %d)",
                                          what, cpu, t->clusters[owner[cpu] - 1].name, t->clusters[n - 1].name, shown, p);
            owner[cpu] = (short)n;
        }
        if (!spec[pos]) break;
        pos++; /* the comma */
    }
    if (n_cap && n_cap != n)
        for (c = 0; c < n; c++)
            if (cap[c] == 0)
                return luthier__topo_fail(err, err_size, "%s: give a capacity to every cluster or to none ('%s' has none; e.g. big@1:4-7,little@0.45:0-3)",
                                          what, t->clusters[c].name);
    if (n_cap) { /* normalized to the fastest, none may round to 0 */
        double best = 0;
        for (c = 0; c < n; c++)
            if (cap[c] > best) best = cap[c];
        for (c = 0; c < n; c++)
            if (!(cap[c] / best > 0))
                return luthier__topo_fail(err, err_size, "%s: capacity %g of '%s' is too small next to %g (its share rounds to 0)",
                                          what, cap[c], t->clusters[c].name, best);
    }
    for (i = 0; i < LUTHIER_MAX_CPUS; i++)
        if (owner[i]) {
            luthier_cluster *cl = &t->clusters[owner[i] - 1];
            cl->cpus[cl->num_cpus++] = i;
        }
    t->num_clusters = n;
    for (c = 0; c < n; c++) t->clusters[c].capacity = n_cap ? cap[c] : 1.0;
    luthier__topology_sort(t);
    snprintf(t->source, sizeof t->source, "api");
    if (err && err_size) err[0] = 0;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_topology_parse(const char *spec, luthier_topology *out,
                                                  char *err, size_t err_size) {
    if (!out) return luthier__topo_fail(err, err_size, "cluster spec: out is NULL");
    return luthier__topology_parse(spec, "cluster spec", out, err, err_size);
}

LUTHIER_API luthier_status luthier_topology_detect(const char *sysfs_root, const char *env_spec,
                                                   luthier_topology *out, char *err,
                                                   size_t err_size) {
    luthier__sysfs_facts *sf;
    const char *spec = env_spec ? env_spec : getenv("LUTHIER_CLUSTERS");
    luthier_status s = LUTHIER_STATUS_OK;
    if (err && err_size) err[0] = 0;
    if (!out) return luthier__topo_fail(err, err_size, "topology: out is NULL");
    memset(out, 0, sizeof *out);
    if (!sysfs_root) sysfs_root = "";
    if (strlen(sysfs_root) > 4000) return luthier__topo_fail(err, err_size, "topology: sysfs root path too long");
    sf = (luthier__sysfs_facts *)luthier__alloc(sizeof *sf);
    if (!sf) return LUTHIER_STATUS_OUT_OF_MEMORY;
    luthier__read_sysfs(sysfs_root, sf);
    if (spec && *spec) {
        int c, i, n_speed;
        s = luthier__topology_parse(spec, "LUTHIER_CLUSTERS", out, err, err_size);
        for (c = 0; s == LUTHIER_STATUS_OK && c < out->num_clusters; c++) {
            luthier_cluster *cl = &out->clusters[c];
            for (i = 0; i < cl->num_cpus; i++)
                if (sf->online_ok && !sf->cpu[cl->cpus[i]].online) {
                    s = luthier__topo_fail(err, err_size, "LUTHIER_CLUSTERS: cpu %d (cluster '%s') is not online (online: %s)",
                                           cl->cpus[i], cl->name, sf->online_text);
                    break;
                }
        }
        if (s == LUTHIER_STATUS_OK && sf->online_ok) {
            const int given = strchr(spec, '@') != NULL; /* the spec gives capacities */
            n_speed = 0;
            for (c = 0; c < out->num_clusters; c++) {
                luthier_cluster *cl = &out->clusters[c];
                double sum = 0;
                int mixed = 0;
                for (i = 0; i < cl->num_cpus; i++) {
                    const luthier__cpu_facts *f = &sf->cpu[cl->cpus[i]];
                    if (i == 0) snprintf(cl->core, sizeof cl->core, "%s", f->core);
                    else if (strcmp(cl->core, f->core) != 0) mixed = 1;
                    if (f->freq_khz > cl->max_freq_khz) cl->max_freq_khz = f->freq_khz;
                    sum += f->speed;
                }
                if (mixed) cl->core[0] = 0;
                if (!given && sf->known && sum > 0) { cl->capacity = sum / cl->num_cpus; n_speed++; }
            }
            if (n_speed == out->num_clusters) luthier__topology_sort(out);
            else if (!given) for (c = 0; c < out->num_clusters; c++) out->clusters[c].capacity = 1.0;
        }
        if (s == LUTHIER_STATUS_OK) snprintf(out->source, sizeof out->source, "env");
    } else if (sf->online_ok && sf->known) {
        luthier__topology_from_sysfs(sf, out);
        snprintf(out->source, sizeof out->source, "sysfs");
    } else {
        luthier_cluster *cl = &out->clusters[0];
        int i;
        out->num_clusters = 1;
        for (i = 0; i < LUTHIER_MAX_CPUS; i++)
            if (sf->cpu[i].online) cl->cpus[cl->num_cpus++] = i;
        cl->capacity = 1.0;
        luthier__rank_names(out);
        snprintf(out->source, sizeof out->source, "default");
    }
    if (s != LUTHIER_STATUS_OK) memset(out, 0, sizeof *out);
    luthier__free(sf);
    return s;
}

LUTHIER_API int luthier_topology_format(const luthier_topology *t, char *buf, size_t size) {
    size_t len = 0;
    int c;
    if (buf && size) buf[0] = 0;
    if (!t) return 0;
    for (c = 0; c < t->num_clusters && c < LUTHIER_MAX_CLUSTERS; c++) {
        const luthier_cluster *cl = &t->clusters[c];
        char cpus[128], freq[32];
        int w, n = cl->num_cpus < 0 ? 0 : cl->num_cpus > LUTHIER_MAX_CPUS ? LUTHIER_MAX_CPUS : cl->num_cpus;
        luthier__format_cpulist(cl->cpus, n, cpus, sizeof cpus);
        freq[0] = 0;
        if (cl->max_freq_khz) snprintf(freq, sizeof freq, ", %u MHz", (cl->max_freq_khz + 500) / 1000);
        const size_t avail = buf && len < size ? size - len : 0;
        char *dst = avail ? buf + len : NULL;
        if (cl->core[0])
            w = snprintf(dst, avail, "%.16s: cpus %s (%d x %.32s%s, capacity %.2f)\n", cl->name, cpus, n,
                         cl->core, freq, cl->capacity);
        else
            w = snprintf(dst, avail, "%.16s: cpus %s (%d cpu%s%s, capacity %.2f)\n", cl->name, cpus, n,
                         n == 1 ? "" : "s", freq, cl->capacity);
        if (w < 0) return -1;
        len += (size_t)w;
    }
    return (int)len;
}

#ifdef __cplusplus
}
#endif

/* The GEMM engine and its kernels. */
#ifndef LUTHIER_GEMM_IMPLEMENTATION
#define LUTHIER_GEMM_IMPLEMENTATION
#endif
#include "luthier_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-context */

#define LUTHIER__MAX_THREADS LUTHIER_MAX_CPUS
typedef struct luthier__pool luthier__pool;

/* Monotonic wall clock in seconds. */
LUTHIER_PRIVATE double luthier__seconds(void) {
#if defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

struct luthier_context {
    unsigned cpu_features;      /* detected & ~disabled */
    int kernel;                 /* registry index of the default kernel */
    int kernel_auto;            /* no kernel was named: calls may pick one by shape */
    luthier_auto_policy auto_policy; /* what AUTO picks (luthier_context_desc.auto_policy) */
    luthier__gemm_blocking blocking_override; /* 0 fields = from cache sizes */
    luthier_cache_info caches;
    luthier_topology topology;  /* the clusters the threads run on */
    luthier__pool *pool;
    int busy;                   /* inside a parallel region */
    void *workspace;            /* per-thread workspaces; grows on demand, reused across calls */
    size_t workspace_bytes;
    char error[256];
};

LUTHIER_API const char *luthier_status_string(luthier_status status) {
    static const char *const names[] = {
#define LUTHIER__X(name, text) text,
        LUTHIER_STATUS_LIST(LUTHIER__X)
#undef LUTHIER__X
    };
    if ((int)status < 0 || (int)status >= (int)LUTHIER_STATUS_COUNT) return "unknown status";
    return names[status];
}

LUTHIER__PRINTF(3, 4)
LUTHIER_PRIVATE luthier_status luthier__fail(luthier_context *ctx, luthier_status s,
                                             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
    if (ctx) luthier__copy_error(ctx->error, sizeof ctx->error);
    return s;
}

/* luthier__fail with fmt's text, ": " and ctx's current message after it: a failure further
   down told in the caller's terms. */
LUTHIER__PRINTF(3, 4)
LUTHIER_PRIVATE luthier_status luthier__fail_in(luthier_context *ctx, luthier_status s, const char *fmt, ...) {
    char inner[sizeof ctx->error];
    size_t len;
    va_list ap;
    memcpy(inner, ctx->error, sizeof inner);
    va_start(ap, fmt);
    luthier__set_error_v(fmt, ap);
    va_end(ap);
    len = strlen(luthier__last_error);
    snprintf(luthier__last_error + len, sizeof luthier__last_error - len, ": %s", inner);
    luthier__copy_error(ctx->error, sizeof ctx->error);
    return s;
}

LUTHIER_API const char *luthier_context_error(const luthier_context *ctx) {
    return ctx ? ctx->error : "no context";
}

/* >>impl-threads =============================================================================

   The pool: one slot per thread of the partition, slot 0 run by the calling thread, slots 1..T-1
   by persistent workers pinned to their CPU. A job is published by bumping a generation counter
   (release); workers spin briefly on it (acquire), then sleep on a condition variable. The last
   worker to finish wakes the caller if it went to sleep. Sleep/wake decisions are taken under
   the mutex with the counters re-checked, so no wake-up is lost. */

typedef struct luthier__job {
    luthier_range_fn fn;
    void *arg;
    int dynamic;
    size_t n, chunk;
    size_t next;                              /* dynamic: next unit to hand out (atomic) */
    size_t begin[LUTHIER__MAX_THREADS];       /* ratio: slot t's range */
    size_t end[LUTHIER__MAX_THREADS];
} luthier__job;

struct luthier__pool {
    int num_threads;                          /* slots, caller included */
    int num_clusters;
    int cluster_first[LUTHIER_MAX_CLUSTERS];  /* first slot of each cluster */
    int cluster_threads[LUTHIER_MAX_CLUSTERS];
    int slot_cluster[LUTHIER__MAX_THREADS];
    int slot_cpu[LUTHIER__MAX_THREADS];       /* -1: not pinned (caller, or pinning refused) */
    int slot_pinned[LUTHIER__MAX_THREADS];    /* 1 when the worker verified its CPU */
    luthier__job job;
    unsigned generation;                      /* atomic */
    int remaining;                            /* atomic: slots still running the job */
    int stop;                                 /* atomic */
    int sleepers;                             /* under mu */
    int caller_waiting;                       /* under mu */
    int timing;                               /* set between regions: slots time their ranges */
    double busy[LUTHIER__MAX_THREADS];        /* with timing: seconds each slot spent in its ranges,
                                                 summed over the regions since the last reset */
#ifndef LUTHIER_NO_THREADS
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    pthread_t threads[LUTHIER__MAX_THREADS];
    int started;                              /* workers created */
#endif
};

#define LUTHIER__LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LUTHIER__STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

LUTHIER__INLINE void luthier__cpu_relax(void) {
#if LUTHIER__X86
    __builtin_ia32_pause();
#elif LUTHIER__ARM64
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Runs slot t of the current job. */
LUTHIER_PRIVATE void luthier__run_slot(luthier__pool *p, int t) {
    const luthier__job *j = &p->job;
    const int cl = p->slot_cluster[t];
    const double t0 = p->timing ? luthier__seconds() : 0.0;
    if (j->dynamic) {
        for (;;) {
            const size_t b = __atomic_fetch_add(&p->job.next, j->chunk, __ATOMIC_RELAXED);
            if (b >= j->n) break;
            j->fn(j->arg, b, b + j->chunk < j->n ? b + j->chunk : j->n, t, cl);
        }
    } else if (j->begin[t] < j->end[t] && j->fn) {
        j->fn(j->arg, j->begin[t], j->end[t], t, cl);
    }
    if (p->timing && (j->dynamic || j->begin[t] < j->end[t])) p->busy[t] += luthier__seconds() - t0;
}

/* Starts (on = 1: resets the sums) or stops timing the slots of the context's pool. Between
   parallel regions only. */
LUTHIER_PRIVATE void luthier__pool_timing(luthier_context *ctx, int on) {
    luthier__pool *p = ctx->pool;
    if (on) memset(p->busy, 0, sizeof p->busy);
    p->timing = on;
}

/* Per cluster, the longest busy time of its slots since timing started (seconds): how long the
   cluster would take on its share of the work without waiting for the others. */
LUTHIER_PRIVATE void luthier__pool_cluster_busy(const luthier_context *ctx, double *out) {
    const luthier__pool *p = ctx->pool;
    int c, t;
    for (c = 0; c < p->num_clusters; c++) {
        out[c] = 0.0;
        for (t = p->cluster_first[c]; t < p->cluster_first[c] + p->cluster_threads[c]; t++)
            if (p->busy[t] > out[c]) out[c] = p->busy[t];
    }
}

#ifndef LUTHIER_NO_THREADS
/* Spin iterations before sleeping: long enough to cover the gap between the layers of a
   network (tens of microseconds), short enough not to burn a core between requests. */
#define LUTHIER__SPIN 20000

typedef struct luthier__worker_arg {
    luthier__pool *pool;
    int slot;
} luthier__worker_arg;

LUTHIER_PRIVATE int luthier__pin_self(int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return 0;
    return sched_getcpu() == cpu;
#else
    (void)cpu;
    return 0;
#endif
}

LUTHIER_PRIVATE void *luthier__worker_main(void *varg) {
    luthier__worker_arg wa = *(luthier__worker_arg *)varg;
    luthier__pool *p = wa.pool;
    unsigned seen = 0;
    luthier__free(varg);
    __atomic_store_n(&p->slot_pinned[wa.slot], luthier__pin_self(p->slot_cpu[wa.slot]), __ATOMIC_RELEASE);
    for (;;) {
        unsigned g;
        int spin = 0;
        while ((g = LUTHIER__LOAD(&p->generation)) == seen && !LUTHIER__LOAD(&p->stop) &&
               spin < LUTHIER__SPIN) {
            luthier__cpu_relax();
            spin++;
        }
        if (g == seen && !LUTHIER__LOAD(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            p->sleepers++;
            while ((g = LUTHIER__LOAD(&p->generation)) == seen && !LUTHIER__LOAD(&p->stop))
                pthread_cond_wait(&p->work_cv, &p->mu);
            p->sleepers--;
            pthread_mutex_unlock(&p->mu);
        }
        if (LUTHIER__LOAD(&p->stop)) break;
        seen = g;
        luthier__run_slot(p, wa.slot);
        if (__atomic_sub_fetch(&p->remaining, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&p->mu);
            if (p->caller_waiting) pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}
#endif

LUTHIER_PRIVATE void luthier__pool_destroy(luthier__pool *p) {
    if (!p) return;
#ifndef LUTHIER_NO_THREADS
    if (p->started) {
        int t;
        pthread_mutex_lock(&p->mu);
        LUTHIER__STORE(&p->stop, 1);
        pthread_cond_broadcast(&p->work_cv);
        pthread_mutex_unlock(&p->mu);
        for (t = 1; t < p->started; t++) pthread_join(p->threads[t], NULL);
    }
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
#endif
    luthier__free(p);
}

LUTHIER_PRIVATE void luthier__pool_run(luthier__pool *p);

/* Creates a pool with one slot per CPU of every cluster of t (fastest cluster first; slot 0 is
   the caller). Workers that cannot be pinned (CPU absent or not allowed) still run, unpinned. */
LUTHIER_PRIVATE luthier_status luthier__pool_create(luthier_context *ctx, const luthier_topology *t,
                                                    luthier__pool **out) {
    luthier__pool *p;
    int c, i, s = 0;
    *out = NULL;
    p = (luthier__pool *)luthier__zalloc(sizeof *p);
    if (!p) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate the thread pool");
    p->num_clusters = t->num_clusters;
    for (c = 0; c < t->num_clusters; c++) {
        p->cluster_first[c] = s;
        for (i = 0; i < t->clusters[c].num_cpus && s < LUTHIER__MAX_THREADS; i++, s++) {
            p->slot_cluster[s] = c;
            p->slot_cpu[s] = t->clusters[c].cpus[i];
        }
        p->cluster_threads[c] = s - p->cluster_first[c];
    }
    p->num_threads = s;
#ifndef LUTHIER_NO_THREADS
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->started = 1;
    for (i = 1; i < p->num_threads; i++) {
        luthier__worker_arg *wa = (luthier__worker_arg *)luthier__alloc(sizeof *wa);
        if (!wa) break;
        wa->pool = p;
        wa->slot = i;
        if (pthread_create(&p->threads[i], NULL, luthier__worker_main, wa) != 0) {
            luthier__free(wa);
            break;
        }
        p->started = i + 1;
    }
    if (p->started != p->num_threads) {
        luthier__pool_destroy(p);
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot start %d worker threads",
                             s - 1);
    }
    /* An empty region: when it returns every worker has started and pinned itself. */
    p->job.dynamic = 0;
    p->job.fn = NULL;
    luthier__pool_run(p);
#endif
    *out = p;
    return LUTHIER_STATUS_OK;
}

/* Splits [0, n) into one contiguous range per cluster in proportion to w[] (largest remainder:
   floor shares, then the leftover units one by one to the largest fractions; a weight of 0
   gives nothing), then evenly among the cluster's slots. */
LUTHIER_PRIVATE void luthier__partition(const luthier__pool *p, size_t n, const double *w,
                                        size_t *begin, size_t *end) {
    size_t share[LUTHIER_MAX_CLUSTERS], given = 0, pos = 0;
    double frac[LUTHIER_MAX_CLUSTERS], sum = 0.0;
    int c, t;
    for (c = 0; c < p->num_clusters; c++) sum += w[c];
    for (c = 0; c < p->num_clusters; c++) {
        const double exact = sum > 0.0 ? (double)n * (w[c] / sum) : 0.0;
        share[c] = (size_t)exact;
        if (share[c] > n) share[c] = n;
        frac[c] = w[c] > 0.0 ? exact - (double)share[c] : -1.0;
        given += share[c];
    }
    while (given < n) { /* fewer leftover units than clusters with a positive weight */
        int best = -1;
        for (c = 0; c < p->num_clusters; c++)
            if (frac[c] >= 0.0 && (best < 0 || frac[c] > frac[best])) best = c;
        if (best < 0) /* only after double rounding: hand the rest to the first positive cluster */
            for (best = 0; best < p->num_clusters - 1 && !(w[best] > 0.0); best++) {}
        share[best]++;
        frac[best] = -1.0;
        given++;
    }
    while (given > n) { /* rounding of doubles can overshoot by a unit */
        for (c = p->num_clusters - 1; c >= 0 && given > n; c--)
            if (share[c]) { share[c]--; given--; }
    }
    for (c = 0; c < p->num_clusters; c++) {
        const int nt = p->cluster_threads[c], first = p->cluster_first[c];
        for (t = 0; t < nt; t++) {
            begin[first + t] = pos + share[c] * (size_t)t / (size_t)nt;
            end[first + t] = pos + share[c] * (size_t)(t + 1) / (size_t)nt;
        }
        pos += share[c];
    }
}

/* Runs the published job on every slot; the caller runs slot 0. */
LUTHIER_PRIVATE void luthier__pool_run(luthier__pool *p) {
#ifndef LUTHIER_NO_THREADS
    if (p->num_threads > 1) {
        int spin = 0;
        LUTHIER__STORE(&p->remaining, p->num_threads - 1);
        __atomic_add_fetch(&p->generation, 1u, __ATOMIC_ACQ_REL);
        pthread_mutex_lock(&p->mu);
        if (p->sleepers) pthread_cond_broadcast(&p->work_cv);
        pthread_mutex_unlock(&p->mu);
        luthier__run_slot(p, 0);
        while (LUTHIER__LOAD(&p->remaining) != 0 && spin < LUTHIER__SPIN) {
            luthier__cpu_relax();
            spin++;
        }
        if (LUTHIER__LOAD(&p->remaining) != 0) {
            pthread_mutex_lock(&p->mu);
            p->caller_waiting = 1;
            while (LUTHIER__LOAD(&p->remaining) != 0) pthread_cond_wait(&p->done_cv, &p->mu);
            p->caller_waiting = 0;
            pthread_mutex_unlock(&p->mu);
        }
        return;
    }
#endif
    {
        int t;
        for (t = 0; t < p->num_threads; t++) luthier__run_slot(p, t);
    }
}

/* Checks desc's ratios against the context's clusters and turns them into weights. */
LUTHIER_PRIVATE luthier_status luthier__weights(luthier_context *ctx, const float *ratios,
                                                int num_ratios, double *w) {
    const luthier__pool *p = ctx->pool;
    double sum = 0.0;
    int c;
    if (!ratios) { /* default: in proportion to what each cluster can do */
        for (c = 0; c < p->num_clusters; c++)
            w[c] = ctx->topology.clusters[c].capacity * (double)p->cluster_threads[c];
        return LUTHIER_STATUS_OK;
    }
    if (num_ratios != p->num_clusters)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "%d ratios given for %d clusters", num_ratios, p->num_clusters);
    for (c = 0; c < p->num_clusters; c++) {
        if (!(ratios[c] >= 0.0f) || ratios[c] > 1e30f)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                 "ratio %d (cluster %s) is %g: ratios must be finite and >= 0", c,
                                 ctx->topology.clusters[c].name, (double)ratios[c]);
        w[c] = ratios[c];
        sum += w[c];
    }
    if (!(sum > 0.0))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "all ratios are 0: give some cluster a share");
    return LUTHIER_STATUS_OK;
}

/* The most units of one parallel region: exact as doubles (the ratio partition), and the
   dynamic counter (at most n plus a chunk of at most n per thread) cannot wrap. */
#define LUTHIER__PARALLEL_MAX_UNITS ((size_t)1 << 52)

/* Publishes a job (partition or dynamic) and runs it. */
LUTHIER_PRIVATE luthier_status luthier__parallel(luthier_context *ctx, size_t n,
                                                 luthier_schedule schedule, const float *ratios,
                                                 int num_ratios, size_t chunk, luthier_range_fn fn,
                                                 void *arg) {
    luthier__pool *p = ctx->pool;
    luthier__job *j = &p->job;
    double w[LUTHIER_MAX_CLUSTERS];
    luthier_status s;
    if ((unsigned)schedule >= (unsigned)LUTHIER_SCHEDULE_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "unknown schedule %d", (int)schedule);
    if ((s = luthier__weights(ctx, ratios, num_ratios, w)) != LUTHIER_STATUS_OK) return s;
    if (n == 0) return LUTHIER_STATUS_OK;
    if (n > LUTHIER__PARALLEL_MAX_UNITS) /* the partition's doubles and the dynamic counter stay exact */
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "parallel region of %zu units: at most 2^52", n);
    if (ctx->busy)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "parallel region started from inside a parallel region of the same context");
    ctx->busy = 1;
    j->fn = fn;
    j->arg = arg;
    j->n = n;
    j->dynamic = schedule == LUTHIER_SCHEDULE_DYNAMIC;
    if (j->dynamic) {
        j->chunk = chunk ? (chunk < n ? chunk : n) : luthier__max_sz(1, n / (4 * (size_t)p->num_threads));
        j->next = 0;
    } else {
        luthier__partition(p, n, w, j->begin, j->end);
    }
    luthier__pool_run(p);
    ctx->busy = 0;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_parallel_for(luthier_context *ctx, size_t n,
                                                const luthier_parallel_desc *desc,
                                                luthier_range_fn fn, void *arg) {
    luthier_parallel_desc d;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if (!ctx->busy) ctx->error[0] = 0;
    if (!fn) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "fn is NULL");
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    return luthier__parallel(ctx, n, d.schedule, d.ratios, d.num_ratios, d.chunk, fn, arg);
}

/* The kernel called `name` (full or short) among the families in fams (bits 1 << family; the
   first family in order that has it) that ctx runs; the caller's message when there is none. */
LUTHIER_PRIVATE luthier_status luthier__resolve(luthier_context *ctx, unsigned fams, const char *name,
                                                const luthier__kernel_entry **uk) {
    static const char *const what[LUTHIER_KERNELS_COUNT] = {"", "fp16-weight ", "int8 ", "fp16 "};
    const luthier__kernel_entry *e = NULL;
    int f, i;
    for (f = 0; f < (int)LUTHIER_KERNELS_COUNT && !e; f++)
        if ((fams >> f & 1u) && luthier_kernels_find((luthier_kernel_family)f, name, &i) == LUTHIER_STATUS_OK)
            e = luthier__kernel_in((luthier_kernel_family)f, i);
    if (!e)
        return luthier__fail(ctx, LUTHIER_STATUS_NOT_FOUND, "no %smicrokernel named '%s' (luthier-bench kernels lists them)",
                             fams == (1u << LUTHIER_KERNELS_INT8) ? what[LUTHIER_KERNELS_INT8] : "", name);
    if (!luthier__kernel_runs(e, ctx->cpu_features))
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "%smicrokernel '%s' needs CPU features this CPU (or context) lacks",
                             what[e->family], e->name);
    *uk = e;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE const luthier__kernel_entry *luthier__cluster_kernel(const luthier_context *ctx, int cl,
                                                                     const luthier__kernel_entry *uk);

/* The kernel of each cluster of one GEMM: what names[cluster] names (among fams), which must
   read uk's packing of B: same MR, NR and B type, and for int8 the same K group and A
   encoding; for the clusters names leaves unset, uk or its variant for the cluster's cores
   (>>cluster-kernels). */
LUTHIER_PRIVATE luthier_status luthier__cluster_kernels(luthier_context *ctx, unsigned fams, const luthier__kernel_entry *uk,
                                                        const char *const *names, const luthier__kernel_entry **out) {
    int cl;
    luthier_status s;
    for (cl = 0; cl < ctx->pool->num_clusters; cl++) {
        const luthier__kernel_entry *e = luthier__cluster_kernel(ctx, cl, uk);
        if (names && names[cl] && *names[cl] && (s = luthier__resolve(ctx, fams, names[cl], &e)) != LUTHIER_STATUS_OK) return s;
        if (e->mr != uk->mr || e->nr != uk->nr || e->b_bytes != uk->b_bytes || e->a_bytes != uk->a_bytes || e->a_s8 != uk->a_s8 ||
            (uk->family == LUTHIER_KERNELS_INT8 && e->k_unroll != uk->k_unroll))
            return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                                 "cluster %d kernel %s (%dx%d, %d-byte B, K group %d, A encoding %d) does not match the "
                                 "call's kernel %s (%dx%d, %d-byte B, K group %d, A encoding %d): clusters of one call "
                                 "share MR, NR and the packing of B", cl, e->name, e->mr, e->nr, e->b_bytes, e->k_unroll,
                                 e->a_s8, uk->name, uk->mr, uk->nr, uk->b_bytes, uk->k_unroll, uk->a_s8);
        out[cl] = e;
    }
    return LUTHIER_STATUS_OK;
}

/* An F32 kernel, as its index in luthier__ukernels. */
LUTHIER_PRIVATE luthier_status luthier__resolve_kernel(luthier_context *ctx, const char *name, int *index) {
    const luthier__kernel_entry *e;
    luthier_status s = luthier__resolve(ctx, 1u << LUTHIER_KERNELS_F32, name, &e);
    if (s == LUTHIER_STATUS_OK) *index = (int)(e - luthier__ukernels);
    return s;
}

/* The families luthier_sgemm runs: fp32 A and C in memory (F16 packs A to fp16 itself). */
#define LUTHIER__SGEMM_FAMILIES (1u << LUTHIER_KERNELS_F32 | 1u << LUTHIER_KERNELS_F16W | 1u << LUTHIER_KERNELS_F16)

/* A kernel for luthier_sgemm: F32, F16W (B packed in fp16) or F16 (fp16 arithmetic). */
LUTHIER_PRIVATE luthier_status luthier__resolve_sgemm_kernel(luthier_context *ctx, const char *name,
                                                             const luthier__kernel_entry **uk) {
    return luthier__resolve(ctx, LUTHIER__SGEMM_FAMILIES, name, uk);
}

/* Resolves the context's clusters (API override, $LUTHIER_CLUSTERS, sysfs, all CPUs), trims
   them to num_threads CPUs (fastest clusters first) and starts the pool. */
LUTHIER_PRIVATE luthier_status luthier__context_threads(luthier_context *ctx,
                                                        const luthier_context_desc *d) {
    luthier_topology *t = &ctx->topology;
    luthier_status s;
    int c, left;
    if (d->num_threads < 0)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "num_threads is %d (0 = all CPUs)", d->num_threads);
    if (d->topology) {
        *t = *d->topology;
        if (t->num_clusters < 1 || t->num_clusters > LUTHIER_MAX_CLUSTERS)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "topology has %d clusters (1..%d)",
                                 t->num_clusters, LUTHIER_MAX_CLUSTERS);
        for (c = 0; c < t->num_clusters; c++)
            if (t->clusters[c].num_cpus < 1 || t->clusters[c].num_cpus > LUTHIER_MAX_CPUS ||
                !(t->clusters[c].capacity > 0.0))
                return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                                     "topology cluster %d has %d CPUs and capacity %g", c,
                                     t->clusters[c].num_cpus, t->clusters[c].capacity);
    } else if ((s = luthier_topology_detect(d->sysfs_root, NULL, t, ctx->error, sizeof ctx->error)) !=
               LUTHIER_STATUS_OK) {
        return s;
    }
    if (d->num_threads > 0) {
        for (c = 0, left = d->num_threads; c < t->num_clusters && left > 0; c++) {
            if (t->clusters[c].num_cpus > left) t->clusters[c].num_cpus = left;
            left -= t->clusters[c].num_cpus;
        }
        t->num_clusters = c;
    }
    return luthier__pool_create(ctx, t, &ctx->pool);
}

/* AUTO's policy: the descriptor's, else $LUTHIER_AUTO, else the cost model. */
LUTHIER_PRIVATE luthier_status luthier__context_auto_policy(luthier_context *ctx, const luthier_context_desc *d) {
    static const char *const names[] = {"", "rules", "model", "model_exact"}; /* by luthier_auto_policy */
    const char *env = getenv("LUTHIER_AUTO");
    int i;
    if ((unsigned)d->auto_policy >= (unsigned)LUTHIER_AUTO_POLICY_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "context: unknown auto_policy %d", (int)d->auto_policy);
    ctx->auto_policy = d->auto_policy != LUTHIER_AUTO_DEFAULT ? d->auto_policy : LUTHIER_AUTO_MODEL;
    if (d->auto_policy != LUTHIER_AUTO_DEFAULT || !env || !*env) return LUTHIER_STATUS_OK;
    for (i = 1; i < (int)LUTHIER_AUTO_POLICY_COUNT; i++)
        if (strcmp(env, names[i]) == 0) {
            ctx->auto_policy = (luthier_auto_policy)i;
            return LUTHIER_STATUS_OK;
        }
    return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "LUTHIER_AUTO='%.40s': want rules, model or model_exact", env);
}

LUTHIER_API luthier_status luthier_context_create(const luthier_context_desc *desc,
                                                  luthier_context **out) {
    luthier_context *ctx;
    luthier_context_desc d;
    const char *kname;
    luthier_status s;
    if (!out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    ctx = (luthier_context *)luthier__zalloc(sizeof *ctx);
    if (!ctx) return LUTHIER_STATUS_OUT_OF_MEMORY;
    ctx->cpu_features = luthier_cpu_features() & ~d.disabled_cpu_features;
    ctx->caches = luthier_cache_sizes();
    ctx->blocking_override.kc = d.kc;
    ctx->blocking_override.mc = d.mc;
    ctx->blocking_override.nc = d.nc;
    kname = d.kernel;
    if (!kname || !*kname) kname = getenv("LUTHIER_KERNEL");
    if (kname && *kname) {
        s = luthier__resolve_kernel(ctx, kname, &ctx->kernel);
    } else {
        ctx->kernel = luthier__select_default_kernel(ctx->cpu_features);
        ctx->kernel_auto = 1;
        s = LUTHIER_STATUS_OK;
    }
    if (s == LUTHIER_STATUS_OK) s = luthier__context_auto_policy(ctx, &d);
    if (s == LUTHIER_STATUS_OK) s = luthier__context_threads(ctx, &d);
    if (s != LUTHIER_STATUS_OK) {
        if (d.error && d.error_size) snprintf(d.error, d.error_size, "%s", ctx->error);
        luthier__free(ctx);
        return s;
    }
    if (d.error && d.error_size) d.error[0] = 0;
    *out = ctx;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_context_destroy(luthier_context *ctx) {
    if (!ctx) return;
    luthier__pool_destroy(ctx->pool);
    luthier__free(ctx->workspace);
    luthier__free(ctx);
}

LUTHIER_API int luthier_context_num_threads(const luthier_context *ctx) {
    return ctx && ctx->pool ? ctx->pool->num_threads : 0;
}

LUTHIER_API luthier_status luthier_context_topology(const luthier_context *ctx,
                                                    luthier_topology *out) {
    if (!ctx || !out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    *out = ctx->topology;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API int luthier_context_thread_info(const luthier_context *ctx, int thread, int *cluster,
                                            int *cpu) {
    if (!ctx || !ctx->pool || thread < 0 || thread >= ctx->pool->num_threads ||
        thread >= LUTHIER__MAX_THREADS)
        return 0;
    if (cluster) *cluster = ctx->pool->slot_cluster[thread];
    if (cpu) *cpu = thread == 0 ? -1 : ctx->pool->slot_cpu[thread];
    return thread == 0 ? 0 : __atomic_load_n(&ctx->pool->slot_pinned[thread], __ATOMIC_ACQUIRE);
}

/* Padding columns a kernel of this NR computes for n outputs, as a fraction of its work. */
LUTHIER_PRIVATE double luthier__nr_waste(int nr, size_t n) {
    const size_t padded = luthier__div_up(n ? n : 1, (size_t)nr) * (size_t)nr;
    return (double)(padded - (n ? n : 1)) / (double)padded;
}

/* Of the count rows of a kernel table, the one for n output columns given a default def: def,
   unless more than a quarter of its NR lanes would be padding; then, among the rows the CPU
   runs that are not scalar and share def's kind (LUTHIER__SAME_KIND) or ISA
   (LUTHIER__SAME_ISA), the one wasting the least, earliest on ties (def when none wastes
   less). The one rule of every family's default kernel. */
#define LUTHIER__SAME_KIND 1
#define LUTHIER__SAME_ISA 2
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__least_padding(const luthier__kernel_entry *rows, int count,
                                                                    const luthier__kernel_entry *def, unsigned features,
                                                                    size_t n, int same) {
    const luthier__kernel_entry *best = def;
    int i;
    if (luthier__nr_waste(def->nr, n) <= 0.25) return def;
    for (i = 0; i < count; i++) {
        const luthier__kernel_entry *e = &rows[i];
        if (!luthier__kernel_runs(e, features) || !strcmp(e->isa, "scalar") || ((same & LUTHIER__SAME_KIND) && e->kind != def->kind) ||
            ((same & LUTHIER__SAME_ISA) && strcmp(e->isa, def->isa)))
            continue;
        if (luthier__nr_waste(e->nr, n) < luthier__nr_waste(best->nr, n)) best = e;
    }
    return best;
}

/* The kernel a call with n output columns uses when neither it nor the context named one: the
   default, unless more than a quarter of its NR lanes would be padding (a 64-wide kernel on a
   16-channel layer); then the SIMD kernel of the same kind wasting the least, earliest in the
   preference order on ties. Measured: 16 output channels (MobileNetV2 pointwise), 6x16
   AVX2 hybrid 0.20 ms vs 6x64 AVX-512 hybrid 0.42 ms. */
LUTHIER_PRIVATE int luthier__kernel_for_n(const luthier_context *ctx, size_t n) {
    if (!ctx->kernel_auto) return ctx->kernel;
    return (int)(luthier__least_padding(luthier__ukernels, LUTHIER__NUM_UKERNELS, &luthier__ukernels[ctx->kernel],
                                        ctx->cpu_features, n, LUTHIER__SAME_KIND) - luthier__ukernels);
}

LUTHIER_API const char *luthier_context_kernel(const luthier_context *ctx) {
    return ctx ? luthier__ukernels[ctx->kernel].name : "";
}

/* the L2 the blocking plans for: as detected, else 256 KiB */
LUTHIER_PRIVATE size_t luthier__l2_bytes(const luthier_context *ctx) {
    return ctx->caches.l2 ? ctx->caches.l2 : (size_t)256 << 10;
}

LUTHIER_PRIVATE void *luthier__context_workspace(luthier_context *ctx, size_t bytes) {
    if (bytes > ctx->workspace_bytes) {
        void *p = luthier__alloc(bytes);
        if (!p) return NULL;
        luthier__free(ctx->workspace);
        ctx->workspace = p;
        ctx->workspace_bytes = bytes;
    }
    return ctx->workspace;
}

/* >>impl-gemm-api */

struct luthier_packed_b {
    luthier__packed_b_layout layout;
    const luthier__kernel_entry *uk; /* the kernel it was packed for */
    float *data; /* layout.bytes (F16W kernels: fp16 values) */
};

/* The fused activation of a GEMM or convolution; prefix names the caller in the message. */
LUTHIER_PRIVATE luthier_status luthier__check_activation(luthier_context *ctx, const char *prefix,
                                                         luthier_activation act, float lo, float hi) {
    if ((unsigned)act >= (unsigned)LUTHIER_ACTIVATION_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%sunknown activation %d", prefix,
                             (int)act);
    if (act == LUTHIER_ACTIVATION_CLAMP && !(lo <= hi))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "%sclamp_min (%g) must be <= clamp_max (%g) and neither NaN", prefix,
                             (double)lo, (double)hi);
    return LUTHIER_STATUS_OK;
}

/* The sizes of a GEMM desc (fp32 or int8; need_m: m too): in [0, 2^31-1]. */
LUTHIER_PRIVATE luthier_status luthier__check_dims(luthier_context *ctx, int64_t m, int64_t n, int64_t k, int need_m) {
    if (k < 0 || n < 0 || (need_m && m < 0))
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "negative size: m=%lld n=%lld k=%lld", (long long)m,
                             (long long)n, (long long)k);
    if (k > INT32_MAX || n > INT32_MAX || (need_m && m > INT32_MAX))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                             "size above 2^31-1: m=%lld n=%lld k=%lld", (long long)m,
                             (long long)n, (long long)k);
    return LUTHIER_STATUS_OK;
}

/* Checks that a rows x cols matrix with row stride ld is addressable: ld >= cols and the last
   element's offset (rows-1)*ld + cols fits in size_t bytes. */
LUTHIER_PRIVATE luthier_status luthier__check_matrix(luthier_context *ctx, const char *what,
                                                     int64_t rows, int64_t cols, int64_t ld) {
    uint64_t last;
    if (ld < cols || ld < 1)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "leading dimension of %s is %lld, must be >= %lld", what,
                             (long long)ld, (long long)(cols > 1 ? cols : 1));
    if (rows == 0 || cols == 0) return LUTHIER_STATUS_OK;
    if ((uint64_t)(rows - 1) > (UINT64_MAX / 4 - (uint64_t)cols) / (uint64_t)ld ||
        (last = (uint64_t)(rows - 1) * (uint64_t)ld + (uint64_t)cols) > (uint64_t)(SIZE_MAX / sizeof(float)) ||
        last > (uint64_t)PTRDIFF_MAX / 4)
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                             "%s (%lld x %lld, ld %lld) overflows the address space", what,
                             (long long)rows, (long long)cols, (long long)ld);
    return LUTHIER_STATUS_OK;
}

/* The operands of a GEMM desc (fp32 or int8) of m x n x k: A and C (need_m: a run), B (need_b:
   given unpacked) addressable; fills the defaulted leading dimensions. */
LUTHIER_PRIVATE luthier_status luthier__check_operands(luthier_context *ctx, int64_t m, int64_t n, int64_t k, int trans_b,
                                                       int64_t *lda, int64_t *ldb, int64_t *ldc, int need_m, int need_b) {
    luthier_status s;
    if (need_m) {
        if (!*lda) *lda = k > 0 ? k : 1;
        if (!*ldc) *ldc = n > 0 ? n : 1;
        if ((s = luthier__check_matrix(ctx, "A", m, k, *lda)) != LUTHIER_STATUS_OK) return s;
        if ((s = luthier__check_matrix(ctx, "C", m, n, *ldc)) != LUTHIER_STATUS_OK) return s;
    }
    if (need_b) {
        const int64_t rows = trans_b ? n : k, cols = trans_b ? k : n;
        if (!*ldb) *ldb = cols > 0 ? cols : 1;
        if ((s = luthier__check_matrix(ctx, "B", rows, cols, *ldb)) != LUTHIER_STATUS_OK) return s;
    }
    return LUTHIER_STATUS_OK;
}

/* Validates desc for a run; fills the defaulted leading dimensions and the kernel index. */
LUTHIER_PRIVATE luthier_status luthier__prepare(luthier_context *ctx, const luthier_sgemm_desc *in,
                                                luthier_sgemm_desc *d, const luthier__kernel_entry **uk,
                                                int need_m, int need_b) {
    luthier_status s;
    *d = *in;
    if ((s = luthier__check_dims(ctx, d->m, d->n, d->k, need_m)) != LUTHIER_STATUS_OK ||
        (s = luthier__check_activation(ctx, "", d->activation, d->clamp_min, d->clamp_max)) != LUTHIER_STATUS_OK ||
        (s = luthier__check_operands(ctx, d->m, d->n, d->k, d->trans_b, &d->lda, &d->ldb, &d->ldc, need_m, need_b)) !=
            LUTHIER_STATUS_OK)
        return s;
    if (d->kernel && *d->kernel) return luthier__resolve_sgemm_kernel(ctx, d->kernel, uk);
    *uk = &luthier__ukernels[luthier__kernel_for_n(ctx, (size_t)d->n)];
    return LUTHIER_STATUS_OK;
}

/* The clamp an activation amounts to: [*lo, *hi]; returns 0 when there is none. */
LUTHIER_PRIVATE int luthier__activation_bounds(luthier_activation act, float cmin, float cmax,
                                               float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    switch (act) {
    case LUTHIER_ACTIVATION_RELU: *lo = 0.0f; return 1;
    case LUTHIER_ACTIVATION_RELU6: *lo = 0.0f; *hi = 6.0f; return 1;
    case LUTHIER_ACTIVATION_CLAMP: *lo = cmin; *hi = cmax; return 1;
    default: return 0;
    }
}

LUTHIER_PRIVATE void luthier__fill_epilogue(const luthier_sgemm_desc *d, luthier__gemm_args *g) {
    g->bias = d->bias;
    g->accumulate = d->accumulate != 0;
    g->clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &g->min, &g->max);
}

/* How a multi-threaded GEMM's MR tiles x NR panels become the thread pool's units: MR tiles
   (each with every panel), or (row group, NR panel) pairs, row group g being tiles
   [g * tiles / groups, (g + 1) * tiles / groups). A thread's contiguous range of pairs is a run
   of panels of one row group (or of two). groups == 1 is the column split. */
typedef struct luthier__gemm_split {
    size_t tiles, panels;
    size_t groups; /* 0: the units are tiles */
} luthier__gemm_split;

/* Row groups only from this many threads on: on 2 threads BERT's dense layers ran 4 % slower
   as a network with the column split (docs/DESIGN.md). */
#ifndef LUTHIER__GROUPED_SPLIT_MIN_THREADS
#define LUTHIER__GROUPED_SPLIT_MIN_THREADS 4
#endif

/* The split of a plain GEMM (b_bytes: its packed B). The row split makes every thread stream
   all of B: with T threads T times B's bytes, which on 16 cores held BERT's dense layers (B of
   2.4-9.4 MB) at 1/3 of the GEMM rate (docs/DESIGN.md). So when B does not fit in L2 and
   there are enough threads, take the fewest row groups (B streamed once per group) whose
   busiest thread has at most 10 % more tile-panel products than an even share; if none does,
   the grouping whose busiest thread has the fewest. Skinny M (fewer tiles than threads):
   the column split. */
LUTHIER_PRIVATE luthier__gemm_split luthier__gemm_split_for(size_t tiles, size_t panels, int threads,
                                                            size_t b_bytes, size_t l2) {
    const size_t t = (size_t)(threads > 0 ? threads : 1);
    luthier__gemm_split s;
    size_t r, load, best;
    s.tiles = tiles;
    s.panels = panels;
    s.groups = t > 1 && tiles < t && panels > tiles;
    if (s.groups || t < LUTHIER__GROUPED_SPLIT_MIN_THREADS || b_bytes <= l2 || !panels) return s;
    best = luthier__div_up(tiles, t) * panels; /* the row split's busiest thread */
    for (r = 1; r < tiles && r <= SIZE_MAX / panels; r++) {
        load = luthier__div_up(r * panels, t) * luthier__div_up(tiles, r);
        if ((double)load <= 1.1 * (double)tiles * (double)panels / (double)t) {
            s.groups = r;
            return s;
        }
        if (load < best) best = load, s.groups = r;
    }
    return s;
}

LUTHIER_PRIVATE size_t luthier__split_units(const luthier__gemm_split *s) {
    return s->groups ? s->groups * s->panels : s->tiles;
}

/* The next rectangle (tiles [r[0], r[1]) x panels [r[2], r[3])) of units [*begin, end); 0 when
   none is left. */
LUTHIER_PRIVATE int luthier__split_next(const luthier__gemm_split *s, size_t *begin, size_t end, size_t r[4]) {
    size_t g;
    if (*begin >= end) return 0;
    if (!s->groups) {
        r[0] = *begin, r[1] = end, r[2] = 0, r[3] = s->panels;
        *begin = end;
        return 1;
    }
    g = *begin / s->panels;
    r[0] = g * s->tiles / s->groups, r[1] = (g + 1) * s->tiles / s->groups;
    r[2] = *begin % s->panels, r[3] = luthier__min_sz(s->panels, r[2] + (end - *begin));
    *begin += r[3] - r[2];
    return 1;
}

/* One multi-threaded GEMM: what each slot needs to compute its tiles (or panels). */
typedef struct luthier__gemm_job {
    const luthier__gemm_args *g;
    const luthier__kernel_entry *uk[LUTHIER_MAX_CLUSTERS]; /* per cluster, same MR/NR */
    luthier__gemm_blocking blk[LUTHIER_MAX_CLUSTERS];
    luthier__gemm_split split;
    unsigned char *ws;
    size_t ws_stride;
} luthier__gemm_job;

/* The split of a convolution's GEMM (m pixels, cout_g output channels per group, in tiles and
   panels; b_bytes: one group's packed weights): the plain GEMMs' (a grid when many threads would
   each stream weights beyond L2; the column split under one tile per thread), or over output
   channels when they outnumber the pixels (the last stages of ResNets, 49-196 pixels x
   512-2048 channels) with at least 4 panels per thread: each thread then reads 1/T of the
   weights instead of all of them, and few tiles no longer split unevenly (9 tiles: 5:4); four
   panels per thread keep the shares of asymmetric clusters within about a panel of what they
   ask. Grouped layers keep the pixel split. The engine (luthier__conv_split) and the cost model
   (luthier__cm_parallel) both use it. */
LUTHIER_PRIVATE luthier__gemm_split luthier__conv_split_for(size_t m, size_t cout_g, int groups, size_t tiles, size_t panels,
                                                            int threads, size_t b_bytes, size_t l2) {
    luthier__gemm_split s = luthier__gemm_split_for(tiles, panels, groups == 1 ? threads : 1, b_bytes, l2);
    if (groups == 1 && threads > 1 && !s.groups && cout_g > m && panels >= 4 * (size_t)threads) s.groups = 1;
    return s;
}

/* Winograd's tiles per block (a multiple of mr): V and M of a block take about half of L2; 1 to
   16 MR tiles. When V and M of every tile fit L2, one block takes them all, so that B (alpha^2
   positions of weights, 4.2 MB for a 256-channel F(2x2) layer) streams once per run:
   ResNet-101's 14x14 layers went from 2 blocks (30 + 19 tiles) to 1, 1.07 -> 0.80 ms on 1
   thread in the network (docs/DESIGN.md). The engine and the cost model both use it. */
LUTHIER_PRIVATE size_t luthier__wino_block_tiles(size_t tiles, size_t mr, size_t positions, size_t cin_g, size_t cout_g,
                                                 size_t l2) {
    const size_t per_tile = positions * (cin_g + cout_g) * sizeof(float);
    size_t tb = (l2 / 2) / per_tile;
    tb = luthier__min_sz(luthier__max_sz(tb / mr, 1), 16);
    tb = luthier__min_sz(tb, luthier__div_up(tiles, mr)) * mr;
    if (tiles <= l2 / per_tile) tb = luthier__div_up(tiles, mr) * mr;
    return tb;
}

/* How a Winograd layer's work becomes the pool's units on T threads (engine and cost model).
   Units of MR tiles give each thread whole GEMM tiles. With fewer units than threads (a 7x7
   layer with F(4x4): 4 tiles, one unit) the unit becomes one tile, so that no thread idles: 3.3
   instead of 4.7 ms for 7x7x512 on 2 threads. One-tile units everywhere were slower (14x14 to
   56x56 layers: each thread's partial MR tiles cost as much as whole ones, the weights' traffic
   being the same). Or by output channels (by_panels: each thread transforms every tile and
   reads 1/T of the weights, once) rather than tiles: with few tiles (at most 2 MR units per
   thread), or with every tile in one block and large weights. 7x7x512 on 2 threads, F(2x2)
   1.03 -> 0.60 ms, F(4x4) 1.53 -> 0.90 (weights cold: 1.5x, 1.3x). ResNet-101's 14x14 layers
   (4.2 MB of weights, drawn from memory at the rate one core can stream) 0.47 -> 0.42 ms in
   the network; GoogLeNet's (1.8-3.3 MB, cached) lost 4-15 % to the transforms every thread
   repeats and to uneven panels, hence weights of at least 2 x L2 and the same number of whole
   panels per thread (docs/DESIGN.md). With several blocks of tiles each thread would stream its
   half of B once per block: no gain. Vector channel blocks must stay whole per thread (nr a
   multiple of the transform's width vw) for bit-identical results. b_bytes: one group's
   packed weights, every position. */
typedef struct luthier__wino_split {
    size_t unit;   /* tiles per unit (tile split) */
    size_t units;  /* units of the pool */
    int by_panels; /* the units are NR panels of output channels */
} luthier__wino_split;

LUTHIER_PRIVATE luthier__wino_split luthier__wino_split_for(size_t tiles, size_t tb, size_t mr, size_t nr, size_t panels,
                                                            size_t cout_g, size_t vw, size_t b_bytes, int threads, size_t l2) {
    const size_t T = (size_t)(threads > 0 ? threads : 1);
    luthier__wino_split w;
    w.unit = luthier__div_up(tiles, mr) < T ? 1 : mr;
    w.units = luthier__div_up(tiles, w.unit);
    w.by_panels = 0;
    if (T > 1 && nr % vw == 0 && panels >= 2 * T)
        w.by_panels = luthier__div_up(tiles, mr) <= 2 * T ||
                      (tb >= tiles && cout_g % nr == 0 && panels % T == 0 && b_bytes >= 2 * l2);
    if (w.by_panels) w.units = panels;
    return w;
}

LUTHIER_PRIVATE void luthier__gemm_range(void *arg, size_t begin, size_t end, int thread,
                                         int cluster) {
    const luthier__gemm_job *j = (const luthier__gemm_job *)arg;
    void *w = j->ws ? j->ws + (size_t)thread * j->ws_stride : NULL;
    size_t r[4];
    while (luthier__split_next(&j->split, &begin, end, r))
        luthier__gemm_compute(j->uk[cluster], &j->blk[cluster], j->g, r[0], r[1], r[2], r[3], w);
}

/* Whether the threads of job would pack the same rows of A over and over: interleaved kernels
   (one K blocking on every cluster) under a split of fewer row groups than threads (every
   thread of a row group packs all of its rows: 16 threads x BERT's 128 x 768 A in fp16 held
   the F16 kernels at 2/3 of their rate). Then A is packed once, in a parallel pass over its
   tiles, and each thread reads that copy. */
LUTHIER_PRIVATE int luthier__shares_packed_a(const luthier__gemm_job *job, const luthier__pool *p, size_t k) {
    int cl;
    if (!k || !job->split.groups || (size_t)p->num_threads <= job->split.groups) return 0;
    for (cl = 0; cl < p->num_clusters; cl++)
        if (job->uk[cl]->kind != LUTHIER_KERNEL_INTERLEAVED || job->blk[cl].kc != job->blk[0].kc ||
            job->uk[cl]->a_bytes != job->uk[0]->a_bytes)
            return 0;
    return 1;
}

LUTHIER_PRIVATE void luthier__prepack_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const luthier__gemm_job *j = (const luthier__gemm_job *)arg;
    (void)thread;
    luthier__prepack_a(j->uk[cluster], &j->blk[cluster], j->g, begin, end);
}

/* The job's workspace, in one block of the context's: `front` bytes for the caller (*front_at,
   none when 0), then per-thread packed A blocks (ws bytes each), or A packed once for all
   threads when they would repeat each other's packing. */
LUTHIER_PRIVATE luthier_status luthier__gemm_workspace(luthier_context *ctx, luthier__gemm_job *job, luthier__gemm_args *g,
                                                       size_t ws, int serial, size_t front, void **front_at) {
    const size_t ab = (size_t)job->uk[0]->a_bytes, t = (size_t)ctx->pool->num_threads, half = SIZE_MAX / 2;
    const size_t f = luthier__div_up(front, LUTHIER__ALIGN) * LUTHIER__ALIGN, kp = luthier__kpad(g, g->k);
    const int shared = !serial && luthier__shares_packed_a(job, ctx->pool, g->k);
    unsigned char *w = NULL;
    size_t per;
    g->m_pad = shared ? job->split.tiles * (size_t)job->uk[0]->mr : 0;
    job->ws_stride = shared || ws > half ? 0 : luthier__div_up(ws, LUTHIER__ALIGN) * LUTHIER__ALIGN;
    per = shared ? (g->m_pad > half / kp / ab ? SIZE_MAX : g->m_pad * kp * ab)
                 : (ws > half || job->ws_stride > half / t ? SIZE_MAX : job->ws_stride * t);
    if (per > half - f || (f + per && !(w = (unsigned char *)luthier__context_workspace(ctx, f + per))))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate the GEMM workspace (%zu x %zu, %zu bytes of "
                             "packed A per thread)", g->m, g->k, ws);
    g->a_packed = shared ? (char *)w + f : NULL;
    job->ws = !shared && per ? w + f : NULL;
    if (front_at) *front_at = f ? w : NULL;
    return LUTHIER_STATUS_OK;
}

/* Everything of a GEMM job but its arguments' epilogue: each cluster's kernel (uk, or
   cluster_kernels among the families fams) and blocking, the split over serial ? 1 : all
   threads, the workspace (front: see luthier__gemm_workspace). */
LUTHIER_PRIVATE luthier_status luthier__gemm_setup(luthier_context *ctx, luthier__gemm_job *job, luthier__gemm_args *g,
                                                   unsigned fams, const luthier__kernel_entry *uk,
                                                   const char *const *cluster_kernels, int serial, size_t front,
                                                   void **front_at) {
    const luthier__pool *p = ctx->pool;
    size_t ws = 0;
    luthier_status s;
    int cl;
    memset(job, 0, sizeof *job);
    job->g = g;
    if ((s = luthier__cluster_kernels(ctx, fams, uk, cluster_kernels, job->uk)) != LUTHIER_STATUS_OK) return s;
    for (cl = 0; cl < p->num_clusters; cl++) {
        job->blk[cl] = luthier__gemm_blocking_for(job->uk[cl], &ctx->caches, &ctx->blocking_override, g->m, g->n, g->k);
        ws = luthier__max_sz(ws, luthier__gemm_workspace_bytes(job->uk[cl], &job->blk[cl]));
    }
    job->split = luthier__gemm_split_for(luthier__div_up(g->m, (size_t)uk->mr), g->b_layout->panels,
                                         serial ? 1 : p->num_threads, g->b_layout->bytes, luthier__l2_bytes(ctx));
    return luthier__gemm_workspace(ctx, job, g, ws, serial, front, front_at);
}

/* Runs a set-up job: on the calling thread (serial), or A packed once when the job shares it,
   then the split's units over the pool. */
LUTHIER_PRIVATE luthier_status luthier__gemm_go(luthier_context *ctx, luthier__gemm_job *job, int serial,
                                                luthier_schedule schedule, const float *ratios, int num_ratios) {
    luthier_status s;
    if (serial) {
        luthier__gemm_range(job, 0, job->split.tiles, 0, 0);
        return LUTHIER_STATUS_OK;
    }
    if (job->g->a_packed &&
        (s = luthier__parallel(ctx, job->split.tiles, schedule, ratios, num_ratios, 0, luthier__prepack_range, job)) !=
            LUTHIER_STATUS_OK)
        return s;
    return luthier__parallel(ctx, luthier__split_units(&job->split), schedule, ratios, num_ratios, 0, luthier__gemm_range,
                             job);
}

/* serial: the whole GEMM on the calling thread (a GEMM too small to pay for a parallel region,
   such as a recurrent layer's step at batch 1); the results are the same either way. */
LUTHIER_PRIVATE luthier_status luthier__run_ex(luthier_context *ctx, const luthier_sgemm_desc *d,
                                               const luthier__kernel_entry *uk, const float *a,
                                               const luthier__packed_b_layout *bl, const float *pb,
                                               float *c, int serial) {
    luthier__gemm_args g;
    luthier__gemm_job job;
    luthier_status s;
    memset(&g, 0, sizeof g);
    g.m = (size_t)d->m; g.n = (size_t)d->n; g.k = (size_t)d->k;
    g.a = a; g.lda = (size_t)d->lda;
    g.b = pb; g.b_layout = bl;
    g.c = c; g.ldc = (size_t)d->ldc;
    luthier__fill_epilogue(d, &g);
    luthier__act_post_init(ctx->cpu_features, d->activation, d->clamp_min, d->clamp_max, &g.post);
    if ((s = luthier__gemm_setup(ctx, &job, &g, LUTHIER__SGEMM_FAMILIES, uk, d->cluster_kernels, serial, 0, NULL)) !=
        LUTHIER_STATUS_OK)
        return s;
    return luthier__gemm_go(ctx, &job, serial, d->schedule, d->ratios, d->num_ratios);
}

LUTHIER_PRIVATE luthier_status luthier__run(luthier_context *ctx, const luthier_sgemm_desc *d,
                                            const luthier__kernel_entry *uk, const float *a,
                                            const luthier__packed_b_layout *bl, const float *pb,
                                            float *c) {
    return luthier__run_ex(ctx, d, uk, a, bl, pb, c, 0);
}

/* B of d laid out and packed for kernel uk into a new block (*data; the caller frees it). */
LUTHIER_PRIVATE luthier_status luthier__pack_new(luthier_context *ctx, const luthier_sgemm_desc *d, const luthier__kernel_entry *uk,
                                                 const float *b, luthier__packed_b_layout *l, float **data) {
    if (!luthier__pack_layout_init(l, (size_t)uk->nr, 1, (size_t)d->k, (size_t)d->n, (size_t)uk->b_bytes))
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "packed B of %lld x %lld overflows", (long long)d->k, (long long)d->n);
    if (!(*data = (float *)luthier__alloc(l->bytes ? l->bytes : 1)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes for packed B", l->bytes);
    luthier__pack_b(l, b, (size_t)d->ldb, d->trans_b != 0, *data, 0, l->panels);
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_sgemm_pack_b(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *b,
                                                luthier_packed_b **out) {
    luthier_sgemm_desc d;
    luthier_packed_b *pb;
    luthier_status s;
    const luthier__kernel_entry *uk;
    if (out) *out = NULL;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !out) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and out must not be NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &uk, 0, 1)) != LUTHIER_STATUS_OK) return s;
    if (!b && d.k > 0 && d.n > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    pb = (luthier_packed_b *)luthier__zalloc(sizeof *pb);
    if (!pb) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "cannot allocate a packed B");
    pb->uk = uk;
    if ((s = luthier__pack_new(ctx, &d, uk, b, &pb->layout, &pb->data)) != LUTHIER_STATUS_OK) {
        luthier__free(pb);
        return s;
    }
    *out = pb;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API void luthier_packed_b_destroy(luthier_packed_b *b) {
    if (!b) return;
    luthier__free(b->data);
    luthier__free(b);
}

LUTHIER_API size_t luthier_packed_b_bytes(const luthier_packed_b *b) {
    return b ? b->layout.bytes + sizeof *b : 0;
}

/* The argument checks of the run entry points (fp32 and int8) of an m x n x k GEMM. */
LUTHIER_PRIVATE luthier_status luthier__check_run(luthier_context *ctx, int64_t m, int64_t n, int64_t k, const void *a,
                                                  const void *c) {
    if (m == 0 || n == 0) return LUTHIER_STATUS_OK;
    if (!c) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "C is NULL");
    if (!a && k > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "A is NULL");
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_sgemm_packed(luthier_context *ctx,
                                                const luthier_sgemm_desc *desc, const float *a,
                                                const luthier_packed_b *b, float *c) {
    luthier_sgemm_desc d;
    luthier_status s;
    const luthier__kernel_entry *uk;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !b) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc and packed B must not be NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &uk, 1, 0)) != LUTHIER_STATUS_OK) return s;
    if ((size_t)d.n != b->layout.n || (size_t)d.k != b->layout.k)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "desc is k=%lld n=%lld but B was packed as k=%zu n=%zu",
                             (long long)d.k, (long long)d.n, b->layout.k, b->layout.n);
    if (!(desc->kernel && *desc->kernel)) uk = b->uk;
    else if ((size_t)uk->nr != b->layout.nr || (size_t)uk->b_bytes != b->layout.elem)
        return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE,
                             "kernel %s has NR=%d over %d-byte B but B was packed with NR=%zu, %zu-byte elements",
                             uk->name, uk->nr, uk->b_bytes, b->layout.nr, b->layout.elem);
    if (!luthier__kernel_runs(uk, ctx->cpu_features))
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "B was packed for %s, which this context cannot run", uk->name);
    if ((s = luthier__check_run(ctx, d.m, d.n, d.k, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    return luthier__run(ctx, &d, uk, a, &b->layout, b->data, c);
}

LUTHIER_API luthier_status luthier_sgemm(luthier_context *ctx, const luthier_sgemm_desc *desc,
                                         const float *a, const float *b, float *c) {
    luthier_sgemm_desc d;
    luthier__packed_b_layout bl;
    luthier_status s;
    float *pb;
    const luthier__kernel_entry *uk;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc is NULL");
    if ((s = luthier__prepare(ctx, desc, &d, &uk, 1, 1)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__check_run(ctx, d.m, d.n, d.k, a, c)) != LUTHIER_STATUS_OK) return s;
    if (d.m == 0 || d.n == 0) return LUTHIER_STATUS_OK;
    if (!b && d.k > 0) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "B is NULL");
    /* One-shot GEMM: pack the whole B into a temporary buffer, then run the pre-packed path. */
    if ((s = luthier__pack_new(ctx, &d, uk, b, &bl, &pb)) != LUTHIER_STATUS_OK) return s;
    s = luthier__run(ctx, &d, uk, a, &bl, pb, c);
    luthier__free(pb);
    return s;
}

/* >>impl-conv-desc: defaults, shape checks, output size (algorithm validity: >>conv-algorithms) */

/* a*b into *r unless it exceeds lim (all non-negative). */
LUTHIER__INLINE int luthier__mul_le(uint64_t a, uint64_t b, uint64_t lim, uint64_t *r) {
    if (a && b > lim / a) return 0;
    *r = a * b;
    return 1;
}

/* Largest element count of any conv buffer: addressable in floats and in ptrdiff_t bytes. */
#define LUTHIER__CONV_MAX_ELEMS ((uint64_t)PTRDIFF_MAX / 16)

/* Copies *in with the defaults filled and checks the shape; ctx may be NULL (no message). */
LUTHIER_PRIVATE luthier_status luthier__conv_normalize(luthier_context *ctx,
                                                       const luthier_conv2d_desc *in,
                                                       luthier_conv2d_desc *d, int64_t *oh,
                                                       int64_t *ow) {
    const int64_t *sz[7];
    static const char *const names[7] = {"batch", "in_channels", "in_h", "in_w", "out_channels",
                                         "kernel_h", "kernel_w"};
    uint64_t e, t;
    int64_t eff_h, eff_w;
    int i;
    *d = *in;
    if (!d->stride_h) d->stride_h = 1;
    if (!d->stride_w) d->stride_w = 1;
    if (!d->dilation_h) d->dilation_h = 1;
    if (!d->dilation_w) d->dilation_w = 1;
    if (!d->groups) d->groups = 1;
    sz[0] = &d->batch; sz[1] = &d->in_channels; sz[2] = &d->in_h; sz[3] = &d->in_w;
    sz[4] = &d->out_channels; sz[5] = &d->kernel_h; sz[6] = &d->kernel_w;
    for (i = 0; i < 7; i++) {
        if (*sz[i] < 1)
            return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: %s is %lld, must be >= 1",
                                 names[i], (long long)*sz[i]);
        if (*sz[i] > INT32_MAX)
            return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "conv2d: %s is %lld, above 2^31-1",
                                 names[i], (long long)*sz[i]);
    }
    if (d->stride_h < 1 || d->stride_w < 1 || d->dilation_h < 1 || d->dilation_w < 1 || d->groups < 1 ||
        d->stride_h > INT32_MAX || d->stride_w > INT32_MAX || d->dilation_h > INT32_MAX ||
        d->dilation_w > INT32_MAX)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "conv2d: stride (%lld, %lld), dilation (%lld, %lld) and groups %lld "
                             "must be in [1, 2^31-1] (0 = 1)", (long long)d->stride_h,
                             (long long)d->stride_w, (long long)d->dilation_h,
                             (long long)d->dilation_w, (long long)d->groups);
    if (d->pad_top < 0 || d->pad_left < 0 || d->pad_bottom < 0 || d->pad_right < 0 ||
        d->pad_top > INT32_MAX || d->pad_left > INT32_MAX || d->pad_bottom > INT32_MAX ||
        d->pad_right > INT32_MAX)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "conv2d: padding (top %lld, left %lld, bottom %lld, right %lld) must be "
                             "in [0, 2^31-1]", (long long)d->pad_top, (long long)d->pad_left,
                             (long long)d->pad_bottom, (long long)d->pad_right);
    if (d->in_channels % d->groups || d->out_channels % d->groups)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "conv2d: groups %lld must divide in_channels %lld and out_channels %lld",
                             (long long)d->groups, (long long)d->in_channels, (long long)d->out_channels);
    if ((unsigned)d->layout >= (unsigned)LUTHIER_LAYOUT_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: unknown layout %d", (int)d->layout);
    {
        const luthier_status act = luthier__check_activation(ctx, "conv2d: ", d->activation,
                                                             d->clamp_min, d->clamp_max);
        if (act != LUTHIER_STATUS_OK) return act;
    }
    if ((unsigned)d->algorithm >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: unknown algorithm %d",
                             (int)d->algorithm);
    if ((unsigned)d->schedule >= (unsigned)LUTHIER_SCHEDULE_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: unknown schedule %d",
                             (int)d->schedule);
    /* all terms below 2^31: no int64 overflow */
    eff_h = d->dilation_h * (d->kernel_h - 1) + 1;
    eff_w = d->dilation_w * (d->kernel_w - 1) + 1;
    if (d->in_h + d->pad_top + d->pad_bottom < eff_h || d->in_w + d->pad_left + d->pad_right < eff_w)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT,
                             "conv2d: the dilated kernel (%lld x %lld) is larger than the padded input "
                             "(%lld x %lld)", (long long)eff_h, (long long)eff_w,
                             (long long)(d->in_h + d->pad_top + d->pad_bottom),
                             (long long)(d->in_w + d->pad_left + d->pad_right));
    *oh = (d->in_h + d->pad_top + d->pad_bottom - eff_h) / d->stride_h + 1;
    *ow = (d->in_w + d->pad_left + d->pad_right - eff_w) / d->stride_w + 1;
    {
        const uint64_t L = LUTHIER__CONV_MAX_ELEMS;
        const int ok = luthier__mul_le((uint64_t)d->batch, (uint64_t)d->in_h, L, &e) &&
                       luthier__mul_le(e, (uint64_t)d->in_w, L, &e) &&
                       luthier__mul_le(e, (uint64_t)d->in_channels, L, &e) &&
                       luthier__mul_le((uint64_t)d->batch, (uint64_t)*oh, L, &e) &&
                       luthier__mul_le(e, (uint64_t)*ow, L, &e) &&
                       luthier__mul_le(e, (uint64_t)d->out_channels, L, &e) &&
                       luthier__mul_le((uint64_t)d->kernel_h, (uint64_t)d->kernel_w, L, &t) &&
                       luthier__mul_le(t, (uint64_t)d->in_channels, L, &e) &&
                       luthier__mul_le(e, (uint64_t)d->out_channels, L, &e) &&
                       luthier__mul_le(t, (uint64_t)d->in_channels, INT32_MAX, &e);
        if (!ok)
            return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW,
                                 "conv2d: a buffer of this shape (batch %lld, %lld x %lld x %lld in, "
                                 "%lld x %lld x %lld out, kernel %lld x %lld) overflows",
                                 (long long)d->batch, (long long)d->in_h, (long long)d->in_w,
                                 (long long)d->in_channels, (long long)*oh, (long long)*ow,
                                 (long long)d->out_channels, (long long)d->kernel_h,
                                 (long long)d->kernel_w);
    }
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_conv2d_output_size(const luthier_conv2d_desc *desc,
                                                      int64_t *out_h, int64_t *out_w) {
    luthier_conv2d_desc d;
    int64_t oh, ow;
    luthier_status s;
    if (!desc) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((s = luthier__conv_normalize(NULL, desc, &d, &oh, &ow)) != LUTHIER_STATUS_OK) return s;
    if (out_h) *out_h = oh;
    if (out_w) *out_w = ow;
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE int luthier__conv_is_depthwise(const luthier_conv2d_desc *d) {
    return d->groups == d->in_channels && d->groups == d->out_channels;
}

/* The microkernel algo would use: desc's, else the context's (IMPLICIT_GEMM: else the first
   hybrid kernel the context can run). */
LUTHIER_PRIVATE luthier_status luthier__conv_kernel(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                    luthier_conv_algorithm algo, int *kernel) {
    int i;
    if (d->kernel && *d->kernel) return luthier__resolve_kernel(ctx, d->kernel, kernel);
    *kernel = luthier__kernel_for_n(ctx, (size_t)(d->out_channels / (d->groups ? d->groups : 1)));
    if (algo != LUTHIER_CONV_IMPLICIT_GEMM || luthier__ukernels[*kernel].kind == LUTHIER_KERNEL_HYBRID)
        return LUTHIER_STATUS_OK;
    for (i = 0; i < LUTHIER__NUM_UKERNELS; i++)
        if (luthier__ukernels[i].kind == LUTHIER_KERNEL_HYBRID &&
            (luthier__ukernels[i].required_cpu_features & ctx->cpu_features) ==
                luthier__ukernels[i].required_cpu_features) {
            *kernel = i;
            break;
        }
    return LUTHIER_STATUS_OK;
}

/* >>impl-costmodel: the analytical cost model. It predicts the time of a (layer, algorithm,
   kernel, split) without running anything, from what is known about the machine: the
   algorithm's arithmetic (Winograd's fewer multiplies and its transforms), the kernel's tile
   and inner-loop cycles per step of k on each core type, the bytes each blocking level moves
   against the cache sizes, the gathers, and the clusters' capacities for the split. AUTO uses it
   under luthier_context_desc.auto_policy = LUTHIER_AUTO_MODEL, the tuner as a feature and to
   order its first batch. docs/DESIGN.md (Cost model) has the formulas. Three tables: the cores
   (one row per core type), the kernels' cycles per step of k on each core, and the algorithms
   (one row each, with its cost hook and the error bound that lets AUTO pick it). */

typedef struct luthier__cm_core {
    const char *name;     /* row name; a cluster whose luthier_cluster.core contains match */
    const char *match;    /* (e.g. "A72") takes this row */
    unsigned features;    /* x86 rows: the LUTHIER_CPU_* bits that select them */
    int lanes;            /* fp32 lanes of the widest vector its kernels use */
    double fma;           /* widest-vector FMAs issued per cycle */
    double ghz;           /* nominal clock (cycles to seconds) */
    double l1, l2, l3;    /* bytes seen by one core (l3 0: none, l2 is the last level) */
    double l2_bpc, l3_bpc, dram_bpc; /* sustained bytes per cycle into one core */
    double copy_cpf;      /* cycles per float of a gather or transpose (im2col, packing A) */
    double dram_cores;    /* cores whose DRAM streams fill the memory system of the machines
                             this row stands for: DRAM bytes/s of the whole machine =
                             dram_bpc x GHz x dram_cores, shared by every thread */
} luthier__cm_core;

/* Sizes and bandwidths: vendor manuals (per-core L1/L2, typical L3 of the SoCs the cores ship
   in), bandwidths as commonly measured (STREAM-class, one core); the x86 rows were calibrated
   on this project's host (AMD EPYC Zen 4 class, AVX-512 executed as two 256-bit halves: 1 zmm
   FMA per cycle; bench/RESULTS.md, 2026-11-26 cost model). A53 moves 128-bit NEON in two 64-bit
   halves (0.5 Q-form FMLA per cycle). Xeon: the server cores with two 512-bit FMA units
   (Skylake-SP to Sapphire Rapids; measured on a 16-core Sapphire Rapids class guest, 2026-11-26:
   `luthier-bench peak` 176 GF/s avx512, 95 avx2, so 2.75 GHz), where AVX2 kernels run at half
   the AVX-512 rate; a Xeon without AVX-512 takes the x86-avx2 row. The last column, the cores
   that saturate DRAM: x86 client parts (two channels) about 2-3 cores' worth of one core's
   stream; a 16-core slice of a Sapphire Rapids socket (8 DDR5 channels, 250-300 GB/s for its
   56 cores) about 100 GB/s, 6 cores' worth (an estimate from the platform's figures: this
   project's lent 16-core guest was not measured); the boards' LPDDR: RK3399 about 1.5 A72s' worth (one A72 streams 5-6 GB/s of the
   SoC's ~9), Odroid N2+ about 2 A73s', A55/A76 SoCs (RK3588, SD865: LPDDR4x/5, 25-35 GB/s)
   about 3 A76s', Neoverse N1 servers (8 channels) about 12 cores', little-core-only boards
   (A53: Raspberry Pi 3 class, A55: RK3566 class) 1.5-2 of their cores'. A machine's cap is its
   first (fastest) cluster's row. */
static const luthier__cm_core luthier__cm_cores[] = {
    /* name          match          features                 lanes fma  GHz   L1        L2          L3            L2 B/c L3 B/c DRAM B/c copy DRAM cores */
    {"x86-avx512", "", LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA, 16, 1.0, 3.7, 32 << 10, 1 << 20, 32u << 20, 32, 16, 8, 0.20, 3},
    {"x86-avx2", "", LUTHIER_CPU_AVX2_FMA, 8, 2.0, 3.7, 32 << 10, 1 << 20, 32u << 20, 32, 16, 8, 0.20, 3},
    {"x86-avx512-xeon", "Xeon", LUTHIER_CPU_AVX512F | LUTHIER_CPU_AVX2_FMA, 16, 2.0, 2.75, 48 << 10, 2 << 20, 32u << 20, 48, 12, 6, 0.20, 6},
    {"Cortex-A53", "A53", LUTHIER_CPU_NEON, 4, 0.5, 1.4, 32 << 10, 512 << 10, 0, 8, 8, 2, 1.00, 1.5},
    {"Cortex-A55", "A55", LUTHIER_CPU_NEON, 4, 1.0, 1.8, 32 << 10, 128 << 10, 1 << 20, 16, 8, 2, 0.80, 2},
    {"Cortex-A72", "A72", LUTHIER_CPU_NEON, 4, 1.0, 2.0, 32 << 10, 1 << 20, 0, 16, 16, 3, 0.50, 1.5},
    {"Cortex-A73", "A73", LUTHIER_CPU_NEON, 4, 1.0, 2.3, 64 << 10, 1 << 20, 0, 16, 16, 3, 0.50, 2},
    {"Cortex-A76", "A7", LUTHIER_CPU_NEON, 4, 2.0, 2.6, 64 << 10, 512 << 10, 2 << 20, 32, 16, 4, 0.35, 3},
    {"Neoverse-N1", "N1", LUTHIER_CPU_NEON, 4, 2.0, 2.6, 64 << 10, 1 << 20, 32u << 20, 32, 16, 4, 0.35, 12},
};
#define LUTHIER__CM_NUM_CORES ((int)(sizeof luthier__cm_cores / sizeof luthier__cm_cores[0]))

/* Inner-loop cycles per step of k (one MR x NR rank-1 update, loads included) of each kernel on
   each core row. ARM: llvm-mca 19 on the main k-loop (bench/mca_neon.sh, cycles per iteration
   / k-unroll 4; cortex-a57 model for A72/A73, neoverse-n1 for A76/N1; in-order cores: the
   larger of the model and the FMLA floor, since the A55 model is optimistic and the A53 one
   pessimistic: bench/RESULTS.md 2026-11-22 and 2026-11-26). x86: measured once on this host,
   `build/luthier-bench gemm --kernel all --shape ...`: cycles = MR*NR / (lanes * fma) / (the
   kernel's GFLOP/s / the FMA peak of `luthier-bench peak`), see bench/RESULTS.md. */
typedef struct luthier__cm_kcycles {
    const char *core, *kernel; /* row name, kernel short name */
    double cycles;
} luthier__cm_kcycles;

static const luthier__cm_kcycles luthier__cm_kcycle_table[] = {
    /* x86 AVX-512 host (Zen 4 class, 2026-11-26): `luthier-bench peak` 118.2 GF/s for avx512
       and avx2 alike (16 lanes x 1 zmm FMA or 8 x 2 ymm FMA per cycle at about 3.7 GHz: the
       ideal is MR*NR/16 cycles a step). Each kernel's figure: its measured time / predicted
       time on the compute-bound 128 -> 128, 28 x 28, 3x3 layer (im2col and implicit GEMM, 1
       thread, best of 7 runs), times the previous figure (first from `luthier-bench gemm
       --kernel all --shape cal=1152,1024,256`, whose rounds a loaded host made uneven);
       bench/RESULTS.md 2026-11-26 (cost model). Recalibrate on an idle host. */
    {"x86-avx512", "6x64__avx512f_hybrid", 25.1},
    {"x86-avx512", "8x32__avx512f_hybrid", 16.9},
    {"x86-avx512", "12x32__avx512f_hybrid", 26.2},
    {"x86-avx512", "16x16__avx512f_hybrid", 17.8},
    {"x86-avx512", "12x32__avx512f", 27.6},
    {"x86-avx512", "14x32__avx512f", 32.1},
    {"x86-avx512", "6x64__avx512f", 30.7},
    {"x86-avx512", "6x16__avx2_fma_hybrid", 6.9},
    {"x86-avx512", "4x24__avx2_fma_hybrid", 6.6},
    {"x86-avx512", "6x16__avx2_fma", 8.0},
    {"x86-avx512", "4x24__avx2_fma", 8.5},
    /* Xeon (two zmm FMA units, ideal MR*NR/32 cycles a step): `luthier-bench gemm --kernel all
       --shape cal=1152,1024,256 --shape conv=784,128,1152 --shape c14=196,256,2304` on one core
       of the 16-core Sapphire Rapids class guest (bench/RESULTS.md 2026-11-26, Xeon
       calibration): cycles = 2 MR NR x 2.75 GHz / GFLOP/s, the mean over the three shapes for
       the hybrid kernels, the cal shape (packing A amortized over 16 panels; the model adds
       it) for the interleaved ones. */
    {"x86-avx512-xeon", "6x64__avx512f_hybrid", 12.5},
    {"x86-avx512-xeon", "8x32__avx512f_hybrid", 8.4},
    {"x86-avx512-xeon", "12x32__avx512f_hybrid", 13.2},
    {"x86-avx512-xeon", "16x16__avx512f_hybrid", 10.3},
    {"x86-avx512-xeon", "12x32__avx512f", 12.9},
    {"x86-avx512-xeon", "14x32__avx512f", 15.1},
    {"x86-avx512-xeon", "6x64__avx512f", 13.8},
    {"x86-avx512-xeon", "6x16__avx2_fma_hybrid", 6.2},
    {"x86-avx512-xeon", "4x24__avx2_fma_hybrid", 6.6},
    {"x86-avx512-xeon", "6x16__avx2_fma", 6.4},
    {"x86-avx512-xeon", "4x24__avx2_fma", 6.5},
    /* x86 AVX2 (the same host and kernels: AVX-512 disabled leaves the AVX2 rows as measured) */
    {"x86-avx2", "6x16__avx2_fma_hybrid", 6.9},
    {"x86-avx2", "4x24__avx2_fma_hybrid", 6.6},
    {"x86-avx2", "6x16__avx2_fma", 8.0},
    {"x86-avx2", "4x24__avx2_fma", 8.5},
    /* A72 (and A73, which takes A72's rows): cortex-a57 model */
    {"Cortex-A72", "8x12__neonfma", 24.0}, {"Cortex-A72", "6x16__neonfma_hybrid", 24.0},
    {"Cortex-A72", "4x24__neonfma_hybrid", 24.0}, {"Cortex-A72", "8x6__neonfma", 12.0},
    {"Cortex-A72", "8x4__neonfma_hybrid", 8.0}, {"Cortex-A72", "8x12__neonfma_a53", 26.5},
    {"Cortex-A72", "6x16__neonfma_hybrid_a53", 26.9},
    /* A76 / A77 (and N1, which takes A76's rows): neoverse-n1 model */
    {"Cortex-A76", "8x12__neonfma", 12.0}, {"Cortex-A76", "6x16__neonfma_hybrid", 12.0},
    {"Cortex-A76", "4x24__neonfma_hybrid", 12.0}, {"Cortex-A76", "8x6__neonfma", 6.0},
    {"Cortex-A76", "8x4__neonfma_hybrid", 4.0}, {"Cortex-A76", "8x12__neonfma_a53", 14.5},
    {"Cortex-A76", "6x16__neonfma_hybrid_a53", 15.3},
    /* A55: FMLA floor (1 Q-form per cycle) over the optimistic model (8x12: 77 cycles/4 k,
       a53 variant 89/4, 6x16 hybrid a53 variant 98/4); the big-core schedules lose to their
       loads on the in-order core */
    {"Cortex-A55", "8x12__neonfma_a53", 24.0}, {"Cortex-A55", "8x12__neonfma", 30.0},
    {"Cortex-A55", "6x16__neonfma_hybrid_a53", 24.5},
    {"Cortex-A55", "6x16__neonfma_hybrid", 30.0}, {"Cortex-A55", "4x24__neonfma_hybrid", 30.0},
    {"Cortex-A55", "8x6__neonfma", 15.0}, {"Cortex-A55", "8x4__neonfma_hybrid", 10.0},
    /* A53: FMLA floor at 0.5 per cycle (the model's 382 and 168 cycles are pessimistic; 438
       for the 6x16 hybrid a53 variant) */
    {"Cortex-A53", "8x12__neonfma_a53", 48.0}, {"Cortex-A53", "8x12__neonfma", 60.0},
    {"Cortex-A53", "6x16__neonfma_hybrid_a53", 48.0},
    {"Cortex-A53", "6x16__neonfma_hybrid", 60.0}, {"Cortex-A53", "4x24__neonfma_hybrid", 60.0},
    {"Cortex-A53", "8x6__neonfma", 30.0}, {"Cortex-A53", "8x4__neonfma_hybrid", 20.0},
    /* int8 SDOT kernels (steps of k; 24 sdot per K group of 4): neoverse-n1 model for A76/N1
       (8x12 12.03 cycles a group, its a55 variant 66.0 per 4 groups); A55: the in-order
       schedule as the optimistic a55 model rates it (99 cycles per 4 groups, 97 % of one sdot
       a cycle; above the floor of 6), the big-core one 1.25x the floor as its fp32 twin (the
       model: 59 %). Used to pick each cluster's kernel (>>cluster-kernels); the model does not
       time int8 layers. */
    {"Cortex-A76", "8x12__neondot", 3.0}, {"Cortex-A76", "8x12__neondot_a55", 4.13},
    {"Cortex-A55", "8x12__neondot_a55", 6.19}, {"Cortex-A55", "8x12__neondot", 7.5},
    /* fp16 kernels (24 fmla .8h a step): neoverse-n1 model for A76/N1 (8x24 and 6x32 at 2 a
       cycle, the a55 variants 56.0 cycles per 4 steps and 115.0 per 8); A55 as the fp32 rows:
       the FMLA floor for the in-order schedules (the model: 80 per 4 steps, 167 per 8), 1.25x
       it for the big-core ones */
    {"Cortex-A76", "8x24__neonfp16", 12.0}, {"Cortex-A76", "6x32__neonfp16_hybrid", 12.0},
    {"Cortex-A76", "8x24__neonfp16_a55", 14.0}, {"Cortex-A76", "6x32__neonfp16_hybrid_a55", 14.4},
    {"Cortex-A55", "8x24__neonfp16_a55", 24.0}, {"Cortex-A55", "8x24__neonfp16", 30.0},
    {"Cortex-A55", "6x32__neonfp16_hybrid", 30.0}, {"Cortex-A55", "6x32__neonfp16_hybrid_a55", 24.0},
};
#define LUTHIER__CM_NUM_KCYCLES ((int)(sizeof luthier__cm_kcycle_table / sizeof luthier__cm_kcycle_table[0]))

/* Row of the table, or -1. */
LUTHIER_PRIVATE int luthier__cm_core_find(const char *name) {
    int i;
    for (i = 0; name && i < LUTHIER__CM_NUM_CORES; i++)
        if (strcmp(luthier__cm_cores[i].name, name) == 0) return i;
    return -1;
}

/* The row a core name names: the row's name, or an ARM row's match within it; NULL: none. */
LUTHIER_PRIVATE const luthier__cm_core *luthier__cm_core_named(const char *core_name) {
    int i;
    if ((i = luthier__cm_core_find(core_name)) >= 0) return &luthier__cm_cores[i];
    for (i = 0; core_name && *core_name && i < LUTHIER__CM_NUM_CORES; i++)
        if (luthier__cm_cores[i].match[0] && strstr(core_name, luthier__cm_cores[i].match)) return &luthier__cm_cores[i];
    return NULL;
}

/* The row of a cluster: its core name (ARM; "Xeon" with AVX-512), else the ISA this build
   dispatches to. */
LUTHIER_PRIVATE const luthier__cm_core *luthier__cm_core_for(const char *core_name, unsigned features) {
    const luthier__cm_core *c = luthier__cm_core_named(core_name);
    if (c && (c->features & LUTHIER_CPU_AVX512F) && !(features & LUTHIER_CPU_AVX512F)) c = NULL; /* an AVX2 Xeon */
    if (c) return c;
    if (features & LUTHIER_CPU_AVX512F) return &luthier__cm_cores[0];
    if (features & LUTHIER_CPU_AVX2_FMA) return &luthier__cm_cores[1];
    return &luthier__cm_cores[luthier__cm_core_find("Cortex-A72")];
}

/* Whether a core of row c runs kernel uk (its ISA's instructions; the scalar kernels run
   everywhere). */
LUTHIER_PRIVATE int luthier__cm_core_runs(const luthier__cm_core *c, const luthier__kernel_entry *uk) {
    return (uk->required_cpu_features & ~c->features) == 0;
}

/* Cycles per step of k of kernel uk on core c; *listed = 0 when the table has no row and the
   FMA peak (at 85 %) stands in: scalar kernels, kernels added without a calibration. */
LUTHIER_PRIVATE double luthier__cm_kernel_cycles(const luthier__cm_core *c, const luthier__kernel_entry *uk, int *listed) {
    const char *sname = uk->name + 22; /* without "luthier_sgemm_ukernel_" */
    const int f16 = uk->family == LUTHIER_KERNELS_F16;
    const int lanes = !strcmp(uk->isa, "avx512") || !strcmp(uk->isa, "avx512fp16") ? 16
                      : !strcmp(uk->isa, "avx2")                                   ? 8
                      : !strcmp(uk->isa, "neon") || !strcmp(uk->isa, "neonfp16")   ? 4
                                                                                    : 1; /* (fp32 lanes of its vectors) */
    /* the cores whose llvm-mca model another row's cycles came from share that row's */
    const char *core = !strcmp(c->name, "Cortex-A73") ? "Cortex-A72" : !strcmp(c->name, "Neoverse-N1") ? "Cortex-A76" : c->name;
    double fma;
    int i;
    for (i = 0; i < LUTHIER__CM_NUM_KCYCLES; i++)
        if (!strcmp(luthier__cm_kcycle_table[i].core, core) && !strcmp(luthier__cm_kcycle_table[i].kernel, sname)) {
            if (listed) *listed = 1;
            return luthier__cm_kcycle_table[i].cycles;
        }
    if (listed) *listed = 0;
    if (lanes == 1) return (double)(uk->mr * uk->nr) / 2.0; /* plain C: about two multiply-adds a cycle */
    fma = c->fma * (double)c->lanes / (double)lanes; /* vectors of this width per cycle */
    return (double)(uk->mr * uk->nr) / ((double)(f16 ? 2 * lanes : lanes) * fma) / 0.85;
}

/* >>cluster-kernels: the kernel a core of row c runs in place of uk. Among the kernels that
   read uk's operands the same way (its family, kind, MR, NR, K group, element sizes and A
   encoding: one packed B serves all) and that features allow, the one the cycles table rates
   fastest on c, when the table rates it below uk; else uk. So a cluster of in-order cores
   (Cortex-A53/A55) runs the kernels scheduled for them (8x12__neonfma_a53,
   6x16__neonfma_hybrid_a53, 8x12__neondot_a55) while the big cores run the out-of-order
   schedules, in one GEMM: the default of every cluster whose luthier_sgemm_desc /
   luthier_conv2d_desc / int8 desc cluster_kernels entry is unset. Only rated kernels compete, so kernels added without a
   calibration never displace the call's. */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__core_kernel(const luthier__cm_core *c, unsigned features,
                                                                  const luthier__kernel_entry *uk) {
    const luthier__kernel_entry *best = uk;
    double best_cyc = -1;
    int i, listed;
    for (i = 0; uk && i < luthier_kernels_count(uk->family); i++) { /* (per GEMM call: the table is read only for twins) */
        const luthier__kernel_entry *e = luthier__kernel_in(uk->family, i);
        double cyc;
        if (e == uk || e->kind != uk->kind || e->mr != uk->mr || e->nr != uk->nr || e->k_unroll != uk->k_unroll ||
            e->a_bytes != uk->a_bytes || e->b_bytes != uk->b_bytes || e->a_s8 != uk->a_s8 || !luthier__kernel_runs(e, features))
            continue;
        if (best_cyc < 0) best_cyc = luthier__cm_kernel_cycles(c, uk, NULL);
        cyc = luthier__cm_kernel_cycles(c, e, &listed);
        if (listed && cyc < best_cyc) best = e, best_cyc = cyc;
    }
    return best;
}

/* The kernel of cluster cl of ctx in place of uk (luthier__core_kernel on its core row). */
LUTHIER_PRIVATE const luthier__kernel_entry *luthier__cluster_kernel(const luthier_context *ctx, int cl,
                                                                     const luthier__kernel_entry *uk) {
    return luthier__core_kernel(luthier__cm_core_for(ctx->topology.clusters[cl].core, ctx->cpu_features),
                                ctx->cpu_features, uk);
}

/* One GEMM of m x n x k on one core (cycles): the kernel's steps over the tiles (the last tile
   row's by its rows, the columns padded to NR), each tile's C traffic per block of k, packing A
   (interleaved kernels), and the bytes each blocking level moves against its bandwidth (the
   larger of compute and traffic: they overlap). Its operands come from DRAM when the layer's
   footprint (bytes of all its operands, e.g. the 36 transformed weight matrices of a Winograd
   layer) exceeds the last-level cache. */
LUTHIER_PRIVATE double luthier__cm_gemm(const luthier__cm_core *c, const luthier__kernel_entry *uk, double m, double n, double k,
                                        double footprint) {
    const double mr = uk->mr, nr = uk->nr, f = 4.0;
    const int hybrid = uk->kind == LUTHIER_KERNEL_HYBRID;
    const double tm = ceil(m / mr), tn = ceil(n / nr), llc = c->l3 > 0 ? c->l3 : c->l2;
    const double kc = hybrid ? fmax(16, fmin(k, c->l1 / 4 / (mr * f))) : fmax(16, fmin(k, c->l1 / ((mr + nr) * f)));
    const double nkb = ceil(k / kc);
    /* a last tile row of r < MR rows runs r rows of FMAs but all of B's loads: 0.3 + 0.7 r/MR */
    const double rem = m - floor(m / mr) * mr, rows = floor(m / mr) + (rem > 0 ? 0.3 + 0.7 * rem / mr : 0.0);
    const double compute = rows * tn * k * luthier__cm_kernel_cycles(c, uk, NULL);
    const double tile = tm * tn * nkb * (2.0 * mr * nr / (double)c->lanes + 20.0);
    double stream, l2_bytes, nc, pack = 0, mem, total_bytes;
    if (hybrid) {
        /* the A tile sits in L1, B's kc x nc block (L2) streams past each tile row */
        nc = fmax(nr, (c->l2 / 2) / (kc * f));
        l2_bytes = tm * k * tn * nr * f + ceil(n / nc) * m * k * f;
    } else {
        /* BLIS: B micro-panel in L1, the packed A block (L2) streams past it */
        nc = fmax(nr, (llc / 2) / (kc * f));
        l2_bytes = tn * m * k * f + ceil(m / fmax(mr, (c->l2 / 2) / (kc * f))) * k * n * f;
        pack = ceil(n / nc) * m * k * c->copy_cpf;
    }
    stream = l2_bytes / (kc * nc * f > c->l2 ? c->l3_bpc : c->l2_bpc);
    total_bytes = (m * k + k * n + m * n) * f;
    mem = total_bytes / (fmax(total_bytes, footprint) > llc ? c->dram_bpc : c->l3_bpc);
    return fmax(compute, fmax(stream, mem)) + tile + pack;
}

/* What a cost hook sees: the normalized layer, its output size, kernel and core. */
typedef struct luthier__cm_layer {
    const luthier_conv2d_desc *d;
    double oh, ow, m, cin_g, cout_g, g;
    const luthier__kernel_entry *uk; /* NULL for DEPTHWISE */
    const luthier__cm_core *c;
    double footprint; /* bytes of input, weights and output */
    double *b_bytes;  /* out: bytes of the GEMMs' B (packed weights) one pass reads */
} luthier__cm_layer;

/* im2col: per block, the (kh, kw, ci) rows gathered (one segment of Cin/groups per tap), then
   the GEMM. */
LUTHIER_PRIVATE double luthier__cm_im2col(const luthier__cm_layer *L) {
    const double taps = (double)(L->d->kernel_h * L->d->kernel_w), k = L->cin_g * taps;
    const double gather = L->g * L->m * (k * L->c->copy_cpf + taps * 6.0);
    *L->b_bytes = L->g * k * L->cout_g * 4.0;
    return gather + L->g * luthier__cm_gemm(L->c, L->uk, L->m, L->cout_g, k, L->footprint);
}

/* 1x1: a GEMM on the input in place (stride 1), else the strided pixels gathered first. */
LUTHIER_PRIVATE double luthier__cm_1x1(const luthier__cm_layer *L) {
    const int strided = L->d->stride_h > 1 || L->d->stride_w > 1;
    const double gather = strided ? L->g * L->m * (L->cin_g * L->c->copy_cpf + 6.0) : 0.0;
    *L->b_bytes = L->g * L->cin_g * L->cout_g * 4.0;
    return gather + L->g * luthier__cm_gemm(L->c, L->uk, L->m, L->cout_g, L->cin_g, L->footprint);
}

/* Implicit GEMM: no gather; each tile switches row pointers at every segment (kh*kw segments
   of Cin/groups, or kh of kw*Cin below 16 channels), and short segments run the k-loop's
   remainder path. */
LUTHIER_PRIVATE double luthier__cm_implicit(const luthier__cm_layer *L) {
    const double taps = (double)(L->d->kernel_h * L->d->kernel_w);
    const int rows = L->cin_g < 16 && L->g == 1;
    const double segs = rows ? (double)L->d->kernel_h : taps, seg_len = L->cin_g * (rows ? (double)L->d->kernel_w : 1.0);
    const double tiles = ceil(L->m / L->uk->mr) * ceil(L->cout_g / L->uk->nr);
    const double short_seg = seg_len < 8 ? 2.0 : 1.0;
    *L->b_bytes = L->g * L->cin_g * taps * L->cout_g * 4.0;
    return L->g * (short_seg * luthier__cm_gemm(L->c, L->uk, L->m, L->cout_g, L->cin_g * taps, L->footprint) +
                   tiles * segs * (4.0 + L->uk->mr));
}

/* Depthwise: the direct loop, a multiply-add per tap and channel at a fraction of the FMA rate
   (the window's loads), or the bytes of input and output, whichever is slower. */
LUTHIER_PRIVATE double luthier__cm_depthwise(const luthier__cm_layer *L) {
    const luthier_conv2d_desc *d = L->d;
    const double macs = L->m * (double)d->out_channels * (double)(d->kernel_h * d->kernel_w);
    const double bytes = 4.0 * ((double)(d->batch * d->in_h * d->in_w * d->in_channels) + L->m * (double)d->out_channels);
    return fmax(macs / ((double)L->c->lanes * L->c->fma * 0.6), bytes / L->c->l3_bpc);
}

/* Winograd F(m x m, 3x3), alpha = m + 2: T tiles; the input transform (B^T d B: two passes of
   alpha x alpha with nzb nonzeros per row of B^T, over Cin channels) and its scatter into
   alpha^2 matrices; alpha^2 GEMMs of T x Cout/g x Cin/g; the output transform (A^T M A, nza
   nonzeros per row of A^T) and its gather. */
LUTHIER_PRIVATE double luthier__cm_winograd(const luthier__cm_layer *L, int mt, double nzb, double nza) {
    const double a = mt + 2, a2 = a * a, lanes = L->c->lanes;
    const double t = (double)L->d->batch * ceil(L->oh / mt) * ceil(L->ow / mt);
    const double cin = L->cin_g * L->g, cout = L->cout_g * L->g;
    const double in_ops = t * cin * 2.0 * a2 * nzb / lanes, out_ops = t * cout * (mt * a + mt * mt) * nza / lanes;
    const double in_bytes = t * cin * a2 * 4.0, out_bytes = t * cout * a2 * 4.0;
    const double bw = in_bytes + out_bytes > L->c->l2 ? L->c->l3_bpc : L->c->l2_bpc;
    const double xform = fmax((in_ops + out_ops) / 2.0, 2.0 * (in_bytes + out_bytes) / bw);
    const double wbytes = a2 * L->cin_g * cout * 4.0;
    *L->b_bytes = wbytes;
    return xform + L->g * a2 * luthier__cm_gemm(L->c, L->uk, t, L->cout_g, L->cin_g, wbytes + in_bytes + out_bytes);
}

LUTHIER_PRIVATE double luthier__cm_wino2(const luthier__cm_layer *L) { return luthier__cm_winograd(L, 2, 2.0, 3.0); }
LUTHIER_PRIVATE double luthier__cm_wino4(const luthier__cm_layer *L) { return luthier__cm_winograd(L, 4, 4.0, 5.0); }
LUTHIER_PRIVATE double luthier__cm_wino6(const luthier__cm_layer *L) { return luthier__cm_winograd(L, 6, 6.0, 7.0); }

/* >>conv-algorithms: the shape rules of the algorithms that have any. Each returns 1 when
   the (normalized) layer fits, else 0 with what does not fit in why. */
LUTHIER_PRIVATE int luthier__conv_fits_1x1(const luthier_conv2d_desc *d, char *why, size_t n) {
    if (d->kernel_h == 1 && d->kernel_w == 1 && !d->pad_top && !d->pad_left && !d->pad_bottom && !d->pad_right) return 1;
    snprintf(why, n, "needs a 1x1 kernel and no padding; this layer has a %lld x %lld kernel and padding (%lld, %lld, %lld, "
             "%lld): use im2col", (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->pad_top,
             (long long)d->pad_left, (long long)d->pad_bottom, (long long)d->pad_right);
    return 0;
}

LUTHIER_PRIVATE int luthier__conv_fits_depthwise(const luthier_conv2d_desc *d, char *why, size_t n) {
    if (luthier__conv_is_depthwise(d)) return 1;
    snprintf(why, n, "needs groups == in_channels == out_channels; this layer has groups %lld, %lld -> %lld channels",
             (long long)d->groups, (long long)d->in_channels, (long long)d->out_channels);
    return 0;
}

LUTHIER_PRIVATE int luthier__conv_fits_winograd(const luthier_conv2d_desc *d, char *why, size_t n) {
    if (d->kernel_h != 3 || d->kernel_w != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dilation_h != 1 ||
        d->dilation_w != 1)
        snprintf(why, n, "needs a 3x3 kernel, stride 1 and dilation 1; this layer has a %lld x %lld kernel, stride (%lld, "
                 "%lld) and dilation (%lld, %lld): use im2col or implicit_gemm", (long long)d->kernel_h,
                 (long long)d->kernel_w, (long long)d->stride_h, (long long)d->stride_w, (long long)d->dilation_h,
                 (long long)d->dilation_w);
    else if (d->groups > 1 && luthier__conv_is_depthwise(d))
        snprintf(why, n, "does not run depthwise layers (groups %lld == channels): use depthwise", (long long)d->groups);
    else if (d->pad_top > 2 || d->pad_left > 2 || d->pad_bottom > 2 || d->pad_right > 2)
        snprintf(why, n, "needs padding of at most 2: with (%lld, %lld, %lld, %lld) some output pixels see only padding, "
                 "and the tile transforms would give them rounding noise instead of act(bias): use im2col or "
                 "implicit_gemm", (long long)d->pad_top, (long long)d->pad_left, (long long)d->pad_bottom,
                 (long long)d->pad_right);
    else
        return 1;
    return 0;
}

/* One row per luthier_conv_algorithm, in the enum's order: X(ENUM suffix, name, shape rule
   (NULL: any layer), the kernel families that implement it, cost hook (cycles on one core,
   whole layer), measured error relative to the output's range (docs/DESIGN.md, Convolution:
   AUTO under LUTHIER_AUTO_MODEL takes an algorithm only when this is at most
   LUTHIER_AUTO_MAX_ERROR)). Create (fp32 and int8), AUTO, the tuner's space and the cost model
   read this table and nothing else. */
#define LUTHIER__F32 (1u << LUTHIER_KERNELS_F32)
#define LUTHIER__I8 (1u << LUTHIER_KERNELS_INT8)
#define LUTHIER__H (1u << LUTHIER_KERNELS_F16) /* the fp16-arithmetic kernels (implicit GEMM: hybrid ones) */
#define LUTHIER__CONV_ALGORITHMS(X)                                                                               \
    X(AUTO, "auto", NULL, 0u, NULL, 0)                                                                            \
    X(IM2COL, "im2col", NULL, LUTHIER__F32 | LUTHIER__I8 | LUTHIER__H, luthier__cm_im2col, 0)                     \
    X(1X1, "1x1", luthier__conv_fits_1x1, LUTHIER__F32 | LUTHIER__I8 | LUTHIER__H, luthier__cm_1x1, 0)            \
    X(IMPLICIT_GEMM, "implicit_gemm", NULL, LUTHIER__F32 | LUTHIER__H, luthier__cm_implicit, 0)                   \
    X(DEPTHWISE, "depthwise", luthier__conv_fits_depthwise, LUTHIER__F32 | LUTHIER__I8, luthier__cm_depthwise, 0) \
    X(WINOGRAD_2X3, "winograd_2x3", luthier__conv_fits_winograd, LUTHIER__F32, luthier__cm_wino2, 1.3e-7)         \
    X(WINOGRAD_4X3, "winograd_4x3", luthier__conv_fits_winograd, LUTHIER__F32 | LUTHIER__H, luthier__cm_wino4, 2.7e-6) \
    X(WINOGRAD_6X3, "winograd_6x3", luthier__conv_fits_winograd, LUTHIER__F32, luthier__cm_wino6, 4.4e-6)

typedef struct luthier__conv_algo {
    luthier_conv_algorithm algo;
    const char *name;
    int (*fits)(const luthier_conv2d_desc *d, char *why, size_t n);
    unsigned families;
    double (*cost)(const luthier__cm_layer *L);
    double rel_error;
} luthier__conv_algo;

static const luthier__conv_algo luthier__conv_algos[] = {
#define LUTHIER__X(e, name, fits, fam, cost, err) {LUTHIER_CONV_##e, name, fits, fam, cost, err},
    LUTHIER__CONV_ALGORITHMS(LUTHIER__X)
#undef LUTHIER__X
};

LUTHIER_API const char *luthier_conv_algorithm_name(luthier_conv_algorithm a) {
    return (unsigned)a < (unsigned)LUTHIER_CONV_ALGORITHM_COUNT ? luthier__conv_algos[a].name : "unknown";
}

/* Whether kernel family fam implements algorithm a (AUTO: none does). */
LUTHIER_PRIVATE int luthier__conv_algo_in(luthier_conv_algorithm a, luthier_kernel_family fam) {
    return (unsigned)a < (unsigned)LUTHIER_CONV_ALGORITHM_COUNT && (luthier__conv_algos[a].families >> fam & 1u);
}

/* Whether this build and a CPU with these features run Winograd in fp16 arithmetic (the F16
   family's WINOGRAD_4X3, >>impl-conv-winograd16); why: the reason when not. */
LUTHIER_PRIVATE int luthier__conv_wino16_fits(unsigned features, char *why, size_t n) {
#if LUTHIER__SIMD_NEON
    if (features & LUTHIER_CPU_FP16) return 1;
#endif
    (void)features;
    snprintf(why, n, "in fp16 arithmetic needs Armv8.2 FP16 (AArch64 HWCAP ASIMDHP), which this CPU lacks: use im2col, 1x1 "
             "or implicit_gemm");
    return 0;
}

/* Whether algorithm a (not AUTO) runs layer d (normalized) in kernel family fam on ctx's CPU;
   when it does not, fails with a message naming op (e.g. "conv2d", "qconv2d") and the reason
   (ctx NULL: the status alone, any CPU). */
LUTHIER_PRIVATE luthier_status luthier__conv_algo_fits(luthier_context *ctx, const char *op, const luthier_conv2d_desc *d,
                                                       luthier_conv_algorithm a, luthier_kernel_family fam) {
    const luthier__conv_algo *r;
    char why[400], some[160] = "";
    int i;
    if ((unsigned)a >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT || a == LUTHIER_CONV_AUTO)
        return ctx ? luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%s: unknown algorithm %d", op, (int)a)
                   : LUTHIER_STATUS_INVALID_ARGUMENT;
    r = &luthier__conv_algos[a];
    if (!luthier__conv_algo_in(a, fam)) {
        if (!ctx) return LUTHIER_STATUS_UNSUPPORTED;
        for (i = 1; i < (int)LUTHIER_CONV_ALGORITHM_COUNT; i++)
            if (luthier__conv_algo_in((luthier_conv_algorithm)i, fam))
                snprintf(some + strlen(some), sizeof some - strlen(some), "%s%s", some[0] ? ", " : "", luthier__conv_algos[i].name);
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "%s: algorithm %s is not implemented for this datatype (%s are)",
                             op, r->name, some);
    }
    if ((r->fits && !r->fits(d, why, sizeof why)) ||
        (ctx && fam == LUTHIER_KERNELS_F16 && a == LUTHIER_CONV_WINOGRAD_4X3 && !luthier__conv_wino16_fits(ctx->cpu_features, why, sizeof why)))
        return ctx ? luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "%s algorithm %s %s", op, r->name, why)
                   : LUTHIER_STATUS_UNSUPPORTED;
    return LUTHIER_STATUS_OK;
}

/* Cycles of layer d (normalized, output oh x ow) with algo and kernel (-1 for DEPTHWISE) on
   one core of row c; a negative value when the algorithm has no row or the core cannot run the
   kernel. *b_bytes (when not NULL): the bytes of B (packed weights) a pass reads. */
LUTHIER_PRIVATE double luthier__cm_conv_cycles(const luthier__cm_core *c, const luthier_conv2d_desc *d, int64_t oh, int64_t ow,
                                               luthier_conv_algorithm algo, int kernel, double *b_bytes) {
    luthier__cm_layer L;
    double b = 0;
    if ((unsigned)algo >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT || !luthier__conv_algos[algo].cost) return -1;
    if (algo != LUTHIER_CONV_DEPTHWISE && (kernel < 0 || kernel >= LUTHIER__NUM_UKERNELS || !luthier__cm_core_runs(c, &luthier__ukernels[kernel])))
        return -1;
    L.d = d;
    L.oh = (double)oh;
    L.ow = (double)ow;
    L.m = (double)d->batch * L.oh * L.ow;
    L.g = (double)d->groups;
    L.cin_g = (double)(d->in_channels / d->groups);
    L.cout_g = (double)(d->out_channels / d->groups);
    L.uk = kernel >= 0 ? &luthier__ukernels[kernel] : NULL;
    L.c = c;
    L.footprint = 4.0 * ((double)(d->batch * d->in_h * d->in_w * d->in_channels) + L.m * (double)d->out_channels +
                         (double)(d->kernel_h * d->kernel_w) * L.cin_g * (double)d->out_channels);
    L.b_bytes = b_bytes ? b_bytes : &b;
    *L.b_bytes = 0;
    return luthier__conv_algos[algo].cost(&L);
}

/* The machine as the model sees it: per cluster its core row, capacity and threads. */
typedef struct luthier__cm_machine {
    int num_clusters;
    const luthier__cm_core *core[LUTHIER_MAX_CLUSTERS];
    double capacity[LUTHIER_MAX_CLUSTERS];
    int threads[LUTHIER_MAX_CLUSTERS];
    int same_kernel; /* every cluster runs the layer's kernel itself, not its variant for the
                        cluster's cores (>>cluster-kernels) */
} luthier__cm_machine;

/* Per-region cost of a parallel split (wake-up and join), seconds per thread used. */
#define LUTHIER__CM_SYNC_S 2e-6

/* How a layer's work spreads over threads, as the engine splits it (luthier__cm_parallel). */
typedef struct luthier__cm_par {
    double units;    /* work units, all of equal work */
    int b_whole;     /* each thread streams all of B whatever its share (a split of pixels or
                        tiles); else a thread reads its share's panels of B */
    double b_bytes;  /* B (packed weights) of one pass */
} luthier__cm_par;

/* Seconds for one core of row k to stream b bytes of B, from where B fits. */
LUTHIER_PRIVATE double luthier__cm_b_seconds(const luthier__cm_core *k, double b) {
    const double llc = k->l3 > 0 ? k->l3 : k->l2;
    return b / ((b > llc ? k->dram_bpc : b > k->l2 ? k->l3_bpc : k->l2_bpc) * k->ghz * 1e9);
}

/* Seconds of a layer whose cycles on one core of each cluster are cyc[c] (a cluster on the same
   core row as the first is scaled by its capacity instead), split into par's units with
   shares[c] (sum 1) over the clusters, each cluster's share evenly over its threads: the
   slowest thread decides, plus the synchronisation of the threads used. Memory bounds it from
   below twice: a thread that streams all of B takes at least B at one core's bandwidth, and
   the DRAM traffic of all threads together (B once, or once per thread when each streams all
   of it and it exceeds the last level) at most fills the machine's DRAM bandwidth (its first
   cluster's row: DRAM bytes per cycle x GHz x dram_cores). */
LUTHIER_PRIVATE double luthier__cm_split_seconds(const luthier__cm_machine *mc, const double *cyc, const luthier__cm_par *par,
                                                 const double *shares) {
    const luthier__cm_core *k0 = mc->core[0];
    const double units = par->units, llc = k0->l3 > 0 ? k0->l3 : k0->l2;
    double worst = 0, used = 0, busy = 0, dram;
    int c;
    for (c = 0; c < mc->num_clusters; c++) {
        const luthier__cm_core *k = mc->core[c];
        double per_unit, mine, t;
        if (!(shares[c] > 0) || mc->threads[c] < 1) continue;
        per_unit = cyc[c] / (k->ghz * 1e9) / fmax(units, 1);
        if (k == mc->core[0]) per_unit /= fmax(mc->capacity[c], 1e-3);
        mine = ceil(shares[c] * units / (double)mc->threads[c]);
        t = mine * per_unit;
        if (par->b_whole && mine > 0) t = fmax(t, luthier__cm_b_seconds(k, par->b_bytes));
        if (t > worst) worst = t;
        used += mc->threads[c];
        busy += fmin((double)mc->threads[c], ceil(shares[c] * units));
    }
    dram = par->b_bytes > llc ? par->b_bytes * (par->b_whole ? busy : 1.0) : 0.0;
    worst = fmax(worst, dram / (k0->dram_bpc * k0->ghz * 1e9 * k0->dram_cores));
    return worst + (used > 1 ? used * LUTHIER__CM_SYNC_S : 0);
}

/* The machine of ctx (its clusters trimmed to its threads). */
LUTHIER_PRIVATE void luthier__cm_machine_of(const luthier_context *ctx, luthier__cm_machine *mc) {
    int c;
    memset(mc, 0, sizeof *mc);
    mc->num_clusters = ctx->pool->num_clusters;
    for (c = 0; c < mc->num_clusters; c++) {
        mc->core[c] = luthier__cm_core_for(ctx->topology.clusters[c].core, ctx->cpu_features);
        mc->capacity[c] = ctx->topology.clusters[c].capacity > 0 ? ctx->topology.clusters[c].capacity : 1.0;
        mc->threads[c] = ctx->pool->cluster_threads[c];
    }
}

/* One token of a luthier_topology_cores spec ("A72x2", "A53") into cluster cl (CPUs from *cpu). */
LUTHIER_PRIVATE luthier_status luthier__cores_token(const char *tok, size_t len, luthier_cluster *cl, int *cpu, char *err,
                                                    size_t err_size) {
    char name[sizeof cl->core];
    const luthier__cm_core *row;
    size_t x = len, k;
    long count = 1;
    while (x > 0 && tok[x - 1] >= '0' && tok[x - 1] <= '9') x--;
    /* "CORExN", unless the whole token is a row's name ("x86-avx512": one CPU) */
    if (len < sizeof name) {
        memcpy(name, tok, len);
        name[len] = 0;
        if (luthier__cm_core_find(name) >= 0) x = len;
    }
    if (x > 1 && x < len && tok[x - 1] == 'x') {
        if (len - x > 4 || (count = strtol(tok + x, NULL, 10)) < 1) count = -1;
        len = x - 1;
    }
    if (count < 1 || len == 0 || len >= sizeof name || tok[len - 1] == 'x')
        return luthier__topo_fail(err, err_size, "cores: token '%.*s' is not CORE or CORExCOUNT (e.g. A72x2)", (int)(len ? len : x), tok);
    memcpy(name, tok, len);
    name[len] = 0;
    /* the name a board's detection gives the core ("A77" -> "Cortex-A77"), else the row's own */
    snprintf(cl->core, sizeof cl->core, "%s", name);
    for (k = 0; k < sizeof luthier__core_kinds / sizeof luthier__core_kinds[0]; k++) {
        const char *kn = luthier__core_kinds[k].name;
        const size_t kl = strlen(kn);
        if (kl >= len && strcmp(kn + kl - len, name) == 0 && (kl == len || kn[kl - len - 1] == '-'))
            snprintf(cl->core, sizeof cl->core, "%s", kn);
    }
    if (!(row = luthier__cm_core_named(cl->core)))
        return luthier__topo_fail(err, err_size, "cores: the cost model has no core row for '%s' (rows: Cortex-A53, A55, A72, "
                                  "A73, A76 (A77, A78), Neoverse-N1, x86-avx512, x86-avx512-xeon, x86-avx2)", name);
    if (count > LUTHIER_MAX_CPUS - *cpu)
        return luthier__topo_fail(err, err_size, "cores: more than %d CPUs in all", LUTHIER_MAX_CPUS);
    for (cl->num_cpus = 0; cl->num_cpus < count; cl->num_cpus++) cl->cpus[cl->num_cpus] = (*cpu)++;
    cl->capacity = row->ghz * row->fma * (double)row->lanes; /* normalized by the caller */
    cl->max_freq_khz = (unsigned)(row->ghz * 1e6);
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_topology_cores(const char *spec, luthier_topology *out, char *err, size_t err_size) {
    size_t pos = 0;
    int cpu = 0, c;
    luthier_status s;
    if (err && err_size) err[0] = 0;
    if (!spec || !out) return luthier__topo_fail(err, err_size, "cores: spec or out is NULL");
    memset(out, 0, sizeof *out);
    for (;;) {
        size_t end = pos;
        while (spec[end] && spec[end] != ',') end++;
        while (pos < end && luthier__is_space(spec[pos])) pos++;
        if (out->num_clusters == LUTHIER_MAX_CLUSTERS)
            return luthier__topo_fail(err, err_size, "cores: more than %d clusters in \"%s\"", LUTHIER_MAX_CLUSTERS, spec);
        {
            size_t e = end;
            while (e > pos && luthier__is_space(spec[e - 1])) e--;
            s = luthier__cores_token(spec + pos, e - pos, &out->clusters[out->num_clusters], &cpu, err, err_size);
        }
        if (s != LUTHIER_STATUS_OK) return s;
        out->num_clusters++;
        if (!spec[end]) break;
        pos = end + 1;
    }
    for (c = out->num_clusters - 1; c >= 0; c--) out->clusters[c].capacity /= out->clusters[0].capacity;
    luthier__rank_names(out);
    snprintf(out->source, sizeof out->source, "cores");
    return LUTHIER_STATUS_OK;
}

/* The parallel shape of a layer on mc's threads, as the engine splits it: depthwise by output
   rows; Winograd by tiles or output-channel panels (luthier__wino_split_for, with the core's
   vector width for the transforms'); the GEMM algorithms by the engine's split
   (luthier__conv_split_for: MR-row tiles, or (row group, panel) pairs where it is a grid). */
LUTHIER_PRIVATE luthier__cm_par luthier__cm_parallel(const luthier__cm_machine *mc, const luthier_conv2d_desc *d, int64_t oh,
                                                     int64_t ow, luthier_conv_algorithm algo, int kernel, double b_bytes) {
    const size_t m = (size_t)(d->batch * oh * ow), l2 = (size_t)mc->core[0]->l2;
    const int wm = algo == LUTHIER_CONV_WINOGRAD_2X3 ? 2 : algo == LUTHIER_CONV_WINOGRAD_4X3 ? 4 : algo == LUTHIER_CONV_WINOGRAD_6X3 ? 6 : 0;
    const luthier__kernel_entry *uk = kernel >= 0 ? &luthier__ukernels[kernel] : NULL;
    const size_t cout_g = (size_t)(d->out_channels / d->groups), cin_g = (size_t)(d->in_channels / d->groups);
    luthier__cm_par par;
    size_t panels, mr;
    int c, threads = 0;
    par.b_bytes = b_bytes;
    par.b_whole = 0;
    par.units = (double)(d->batch * oh);
    if (algo == LUTHIER_CONV_DEPTHWISE || !uk) return par;
    for (c = 0; c < mc->num_clusters; c++) threads += mc->threads[c];
    mr = (size_t)uk->mr;
    panels = luthier__div_up(cout_g, (size_t)uk->nr);
    if (wm) {
        const size_t tiles = (size_t)d->batch * luthier__div_up((size_t)oh, (size_t)wm) * luthier__div_up((size_t)ow, (size_t)wm);
        const size_t P = (size_t)(wm + 2) * (size_t)(wm + 2);
        const luthier__wino_split ws =
            luthier__wino_split_for(tiles, luthier__wino_block_tiles(tiles, mr, P, cin_g, cout_g, l2), mr, (size_t)uk->nr, panels,
                                    cout_g, (size_t)mc->core[0]->lanes, P * cin_g * panels * (size_t)uk->nr * sizeof(float),
                                    threads, l2);
        par.units = (double)ws.units;
        par.b_whole = !ws.by_panels;
    } else {
        const size_t kdim = cin_g * (size_t)(d->kernel_h * d->kernel_w);
        const luthier__gemm_split sp = luthier__conv_split_for(m, cout_g, (int)d->groups, luthier__div_up(m, mr), panels, threads,
                                                               panels * (size_t)uk->nr * kdim * sizeof(float), l2);
        par.units = (double)luthier__split_units(&sp);
        par.b_whole = !sp.groups;
    }
    par.b_whole = par.b_whole && threads > 1;
    return par;
}

/* The F32 kernel (index) a core of row c runs for kernel (>>cluster-kernels); -1 stays -1. */
LUTHIER_PRIVATE int luthier__cm_core_kernel(const luthier__cm_core *c, int kernel) {
    return kernel < 0 ? kernel : (int)(luthier__core_kernel(c, c->features, &luthier__ukernels[kernel]) - luthier__ukernels);
}

/* Seconds of the layer on machine mc with algo, kernel and shares (NULL: capacity x threads;
   dynamic: as the ideal split plus a chunk overhead); negative when the model has no row. */
LUTHIER_PRIVATE double luthier__cm_conv_seconds(const luthier__cm_machine *mc, const luthier_conv2d_desc *d, int64_t oh, int64_t ow,
                                                luthier_conv_algorithm algo, int kernel, const double *shares, int dynamic) {
    double cyc[LUTHIER_MAX_CLUSTERS], sh[LUTHIER_MAX_CLUSTERS], sum = 0, b_bytes = 0;
    luthier__cm_par par;
    int c;
    for (c = 0; c < mc->num_clusters; c++) {
        if ((cyc[c] = luthier__cm_conv_cycles(mc->core[c], d, oh, ow, algo,
                                              mc->same_kernel ? kernel : luthier__cm_core_kernel(mc->core[c], kernel),
                                              c ? NULL : &b_bytes)) < 0)
            return -1;
        sh[c] = shares ? shares[c] : mc->capacity[c] * (double)mc->threads[c];
        if (dynamic) sh[c] = (double)mc->threads[c] * (mc->core[c] == mc->core[0] ? mc->capacity[c] : mc->core[0]->ghz / mc->core[c]->ghz * cyc[0] / cyc[c]);
        sum += sh[c];
    }
    if (!(sum > 0)) return -1;
    for (c = 0; c < mc->num_clusters; c++) sh[c] /= sum;
    par = luthier__cm_parallel(mc, d, oh, ow, algo, kernel, b_bytes);
    return luthier__cm_split_seconds(mc, cyc, &par, sh) * (dynamic ? 1.02 : 1.0);
}

/* The model's split of a layer (fractions, sum 1) over mc's clusters: capacity x threads, or
   the composition in steps of 5 % predicted faster (at most 3 clusters; more keep capacity x
   threads). */
LUTHIER_PRIVATE void luthier__cm_best_split(const luthier__cm_machine *mc, const luthier_conv2d_desc *d, int64_t oh, int64_t ow,
                                            luthier_conv_algorithm algo, int kernel, double *shares) {
    double best, sh[LUTHIER_MAX_CLUSTERS], sum = 0;
    int a, b, c, n = mc->num_clusters;
    for (c = 0; c < n; c++) sum += shares[c] = mc->capacity[c] * (double)mc->threads[c];
    for (c = 0; c < n; c++) shares[c] /= sum > 0 ? sum : 1.0;
    if (n < 2 || n > 3) return;
    best = luthier__cm_conv_seconds(mc, d, oh, ow, algo, kernel, shares, 0); /* capacity x threads unless beaten */
    for (a = 0; a <= 20; a++)
        for (b = 0; b <= (n == 3 ? 20 - a : 0); b++) {
            double t;
            sh[0] = a / 20.0;
            sh[1] = n == 3 ? b / 20.0 : 1.0 - sh[0];
            if (n == 3) sh[2] = 1.0 - sh[0] - sh[1];
            t = luthier__cm_conv_seconds(mc, d, oh, ow, algo, kernel, sh, 0);
            if (t > 0 && (best < 0 || t < best)) {
                best = t;
                for (c = 0; c < n; c++) shares[c] = sh[c];
            }
        }
}

/* Checks algorithm a (not AUTO) against the (normalized) shape and picks its kernel. */
LUTHIER_PRIVATE luthier_status luthier__conv_check(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                   luthier_conv_algorithm a, int *kernel) {
    luthier_status s;
    *kernel = -1;
    if ((s = luthier__conv_algo_fits(ctx, "conv2d", d, a, LUTHIER_KERNELS_F32)) != LUTHIER_STATUS_OK) return s;
    if (a == LUTHIER_CONV_DEPTHWISE) return LUTHIER_STATUS_OK; /* no microkernel */
    if ((s = luthier__conv_kernel(ctx, d, a, kernel)) != LUTHIER_STATUS_OK) return s;
    if (a == LUTHIER_CONV_IMPLICIT_GEMM && luthier__ukernels[*kernel].kind != LUTHIER_KERNEL_HYBRID)
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED,
                             "conv2d algorithm implicit_gemm needs a hybrid microkernel (it reads "
                             "input pixels in place through row pointers); %s is interleaved",
                             luthier__ukernels[*kernel].name);
    return LUTHIER_STATUS_OK;
}

/* AUTO under LUTHIER_AUTO_RULES: DEPTHWISE, then 1X1, then IMPLICIT_GEMM when the kernel is
   hybrid, else IM2COL. */
LUTHIER_PRIVATE luthier_status luthier__conv_auto_rules(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                        luthier_conv_algorithm *algo) {
    const int plain_1x1 = d->kernel_h == 1 && d->kernel_w == 1 && !d->pad_top && !d->pad_left &&
                          !d->pad_bottom && !d->pad_right;
    luthier_status s;
    int k = ctx->kernel;
    if (luthier__conv_is_depthwise(d)) *algo = LUTHIER_CONV_DEPTHWISE;
    else if (plain_1x1 && d->dilation_h == 1 && d->dilation_w == 1) *algo = LUTHIER_CONV_1X1;
    else {
        if (d->kernel && *d->kernel && (s = luthier__resolve_kernel(ctx, d->kernel, &k)) != LUTHIER_STATUS_OK) return s;
        *algo = luthier__ukernels[k].kind == LUTHIER_KERNEL_HYBRID ? LUTHIER_CONV_IMPLICIT_GEMM : LUTHIER_CONV_IM2COL;
    }
    return LUTHIER_STATUS_OK;
}

/* Whether AUTO may consider kernel i on ctx: this CPU runs it, and it is not the scalar one
   unless nothing else runs (the tuner's space makes the same cut). */
LUTHIER_PRIVATE int luthier__cm_kernel_usable(const luthier_context *ctx, int i) {
    const luthier__kernel_entry *e = &luthier__ukernels[i];
    if ((e->required_cpu_features & ctx->cpu_features) != e->required_cpu_features) return 0;
    return strcmp(e->isa, "scalar") != 0 || !(ctx->cpu_features & (LUTHIER_CPU_AVX2_FMA | LUTHIER_CPU_NEON));
}

/* AUTO under LUTHIER_AUTO_MODEL(_EXACT): the (algorithm, kernel) the cost model predicts
   fastest on ctx's clusters with the default split, among the valid ones whose error bound the
   policy accepts (desc.kernel, when named, is the only kernel). Depthwise layers keep
   DEPTHWISE. The probes' messages are not the call's: ctx's error and the thread's last error
   are restored. */
LUTHIER_PRIVATE luthier_status luthier__conv_auto_model(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                        luthier_conv_algorithm *algo, int *kernel) {
    luthier__cm_machine mc;
    char saved_ctx[sizeof ctx->error], saved_last[256];
    double best = -1;
    int64_t oh = 1, ow = 1;
    int a, k, named = -1;
    luthier_status s;
    if (luthier__conv_is_depthwise(d)) return luthier__conv_check(ctx, d, *algo = LUTHIER_CONV_DEPTHWISE, kernel);
    if (d->kernel && *d->kernel && (s = luthier__resolve_kernel(ctx, d->kernel, &named)) != LUTHIER_STATUS_OK) return s;
    luthier__cm_machine_of(ctx, &mc);
    luthier_conv2d_output_size(d, &oh, &ow);
    snprintf(saved_ctx, sizeof saved_ctx, "%s", ctx->error);
    snprintf(saved_last, sizeof saved_last, "%.255s", luthier_last_error());
    for (a = LUTHIER_CONV_IM2COL; a < (int)LUTHIER_CONV_ALGORITHM_COUNT; a++) {
        int kk;
        const double err = luthier__conv_algos[a].rel_error;
        if (a == LUTHIER_CONV_DEPTHWISE || err > LUTHIER_AUTO_MAX_ERROR || (err > 0 && ctx->auto_policy == LUTHIER_AUTO_MODEL_EXACT))
            continue;
        if (luthier__conv_check(ctx, d, (luthier_conv_algorithm)a, &kk) != LUTHIER_STATUS_OK) continue;
        for (k = 0; k < LUTHIER__NUM_UKERNELS; k++) {
            double t;
            if (named >= 0 ? k != named : !luthier__cm_kernel_usable(ctx, k)) continue;
            if (a == LUTHIER_CONV_IMPLICIT_GEMM && luthier__ukernels[k].kind != LUTHIER_KERNEL_HYBRID) continue;
            t = luthier__cm_conv_seconds(&mc, d, oh, ow, (luthier_conv_algorithm)a, k, NULL, d->schedule == LUTHIER_SCHEDULE_DYNAMIC);
            if (t > 0 && (best < 0 || t < best)) best = t, *algo = (luthier_conv_algorithm)a, *kernel = k;
        }
    }
    snprintf(ctx->error, sizeof ctx->error, "%s", saved_ctx);
    luthier_set_last_error(saved_last[0] ? saved_last : NULL);
    if (best < 0) return luthier__conv_auto_rules(ctx, d, algo) == LUTHIER_STATUS_OK ? luthier__conv_check(ctx, d, *algo, kernel)
                                                                                      : LUTHIER_STATUS_INVALID_ARGUMENT;
    return LUTHIER_STATUS_OK;
}

/* Resolves AUTO (ctx's policy), checks the algorithm against the (normalized) shape, picks the
   kernel. */
LUTHIER_PRIVATE luthier_status luthier__conv_choose(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                    luthier_conv_algorithm *algo, int *kernel) {
    luthier_status s;
    *algo = d->algorithm;
    *kernel = -1;
    if (*algo == LUTHIER_CONV_AUTO && ctx->auto_policy != LUTHIER_AUTO_RULES) return luthier__conv_auto_model(ctx, d, algo, kernel);
    if (*algo == LUTHIER_CONV_AUTO && (s = luthier__conv_auto_rules(ctx, d, algo)) != LUTHIER_STATUS_OK) return s;
    return luthier__conv_check(ctx, d, *algo, kernel);
}

LUTHIER_API luthier_status luthier_conv2d_algorithm_valid(luthier_context *ctx,
                                                          const luthier_conv2d_desc *desc,
                                                          luthier_conv_algorithm algorithm) {
    luthier_conv2d_desc d;
    luthier_conv_algorithm a;
    int64_t oh, ow;
    int kernel;
    luthier_status s;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "desc is NULL");
    if ((s = luthier__conv_normalize(ctx, desc, &d, &oh, &ow)) != LUTHIER_STATUS_OK) return s;
    if ((unsigned)algorithm >= (unsigned)LUTHIER_CONV_ALGORITHM_COUNT)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: unknown algorithm %d", (int)algorithm);
    d.algorithm = algorithm;
    return luthier__conv_choose(ctx, &d, &a, &kernel);
}

/* The split AUTO gives a layer on ctx: under a model policy with several clusters and the
   ratio schedule, the model's (into ratios, returns the count); 0 = the default split. */
LUTHIER_PRIVATE int luthier__cm_auto_split(const luthier_context *ctx, const luthier_conv2d_desc *d, int64_t oh, int64_t ow,
                                           luthier_conv_algorithm algo, int kernel, float *ratios) {
    luthier__cm_machine mc;
    double sh[LUTHIER_MAX_CLUSTERS];
    int c;
    if (ctx->auto_policy == LUTHIER_AUTO_RULES || d->ratios || d->schedule != LUTHIER_SCHEDULE_RATIO ||
        ctx->pool->num_clusters < 2 || ctx->pool->num_clusters > 3)
        return 0;
    luthier__cm_machine_of(ctx, &mc);
    luthier__cm_best_split(&mc, d, oh, ow, algo, kernel, sh);
    for (c = 0; c < mc.num_clusters; c++) ratios[c] = (float)sh[c];
    return mc.num_clusters;
}

LUTHIER_API luthier_status luthier_conv2d_predict(luthier_context *ctx, const luthier_conv2d_desc *desc, double *seconds) {
    luthier_conv2d_desc d;
    luthier_conv_algorithm a;
    luthier__cm_machine mc;
    double sh[LUTHIER_MAX_CLUSTERS], t;
    float r[LUTHIER_MAX_CLUSTERS];
    int64_t oh, ow;
    int kernel, c, n;
    luthier_status s;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !seconds) return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d_predict: desc and seconds must not be NULL");
    if ((s = luthier__conv_normalize(ctx, desc, &d, &oh, &ow)) != LUTHIER_STATUS_OK) return s;
    if ((s = luthier__conv_choose(ctx, &d, &a, &kernel)) != LUTHIER_STATUS_OK) return s;
    luthier__cm_machine_of(ctx, &mc);
    if (d.ratios && d.num_ratios != mc.num_clusters)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d_predict: %d ratios given for %d clusters", d.num_ratios,
                             mc.num_clusters);
    n = d.ratios ? d.num_ratios : luthier__cm_auto_split(ctx, &d, oh, ow, a, kernel, r);
    for (c = 0; c < n; c++) sh[c] = d.ratios ? (double)d.ratios[c] : (double)r[c];
    t = luthier__cm_conv_seconds(&mc, &d, oh, ow, a, kernel, n ? sh : NULL, d.schedule == LUTHIER_SCHEDULE_DYNAMIC);
    if (!(t > 0)) return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "conv2d_predict: the model has no cost for %s", luthier_conv_algorithm_name(a));
    *seconds = t;
    return LUTHIER_STATUS_OK;
}

/* >>impl-conv-winograd: transform matrices, tile transforms, weight transform ==================
   F(m, 3) computes m outputs of a 3-tap correlation from alpha = m + 2 inputs:
       y = A^T [ (G g) . (B^T d) ]          (. = elementwise)
   and the 2-D F(m x m, 3 x 3) nests it:  Y = A^T [ (G g G^T) . (B^T d B) ] A.
   Each matrix is built on interpolation points p_0..p_{alpha-2} plus infinity (the last row of
   B^T / column of A^T / row of G takes the leading coefficient). Every table below was checked
   in exact rational arithmetic (random integer d and g, all m outputs equal the direct sum).

   F(2,3), points 0, 1, -1, inf (Lavin & Gray):
       B^T = [ 1  0 -1  0 ]   G = [  1    0    0  ]   A^T = [ 1  1  1  0 ]
             [ 0  1  1  0 ]       [ 1/2  1/2  1/2 ]         [ 0  1 -1 -1 ]
             [ 0 -1  1  0 ]       [ 1/2 -1/2  1/2 ]
             [ 0  1  0 -1 ]       [  0    0    1  ]
   F(4,3), points 0, 1, -1, 2, -2, inf:
       B^T = [ 4  0 -5  0  1  0 ]   G = [  1/4    0     0  ]   A^T = [ 1  1  1  1  1  0 ]
             [ 0 -4 -4  1  1  0 ]       [ -1/6  -1/6  -1/6 ]         [ 0  1 -1  2 -2  0 ]
             [ 0  4 -4 -1  1  0 ]       [ -1/6   1/6  -1/6 ]         [ 0  1  1  4  4  0 ]
             [ 0 -2 -1  2  1  0 ]       [ 1/24  1/12   1/6 ]         [ 0  1 -1  8 -8  1 ]
             [ 0  2 -1 -2  1  0 ]       [ 1/24 -1/12   1/6 ]
             [ 0  4  0 -5  0  1 ]       [   0     0     1  ]
   F(6,3), points 0, 1, -1, 2, -2, 1/2, -1/2, inf:
       B^T = [ 1    0  -21/4    0   21/4    0  -1  0 ]   G = [    1      0      0   ]
             [ 0    1     1  -17/4 -17/4    1   1  0 ]       [  -2/9   -2/9   -2/9  ]
             [ 0   -1     1   17/4 -17/4   -1   1  0 ]       [  -2/9    2/9   -2/9  ]
             [ 0  1/2   1/4   -5/2  -5/4    2   1  0 ]       [  1/90   1/45   2/45  ]
             [ 0 -1/2   1/4    5/2  -5/4   -2   1  0 ]       [  1/90  -1/45   2/45  ]
             [ 0    2     4   -5/2    -5  1/2   1  0 ]       [ 32/45  16/45   8/45  ]
             [ 0   -2     4    5/2    -5 -1/2   1  0 ]       [ 32/45 -16/45   8/45  ]
             [ 0   -1     0   21/4     0 -21/4  0  1 ]       [    0      0      1   ]
       A^T = [ 1  1   1   1    1     1     1  0 ]
             [ 0  1  -1   2   -2   1/2  -1/2  0 ]
             [ 0  1   1   4    4   1/4   1/4  0 ]
             [ 0  1  -1   8   -8   1/8  -1/8  0 ]
             [ 0  1   1  16   16  1/16  1/16  0 ]
             [ 0  1  -1  32  -32  1/32 -1/32  1 ]
   B^T and A^T entries are exact in fp32; G is applied in double at create time and rounded
   once. A run: per tile, V = B^T d B over contiguous channels (NHWC), then for each of the
   alpha^2 positions one GEMM  M[pos] (tiles x Cout_g) = V[pos] (tiles x Cin_g) * U[pos]
   (Cin_g x Cout_g, packed B), then Y = A^T M A + bias (+ output), activation. */

#define LUTHIER__WINO_MAX_ALPHA 8

typedef struct luthier__wino_tables {
    int m, alpha;
    const float *bt; /* alpha x alpha */
    const double *g; /* alpha x 3 */
    const float *at; /* m x alpha */
} luthier__wino_tables;

static const float luthier__wino_bt2[16] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const double luthier__wino_g2[12] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
static const float luthier__wino_at2[8] = {1, 1, 1, 0, 0, 1, -1, -1};

static const float luthier__wino_bt4[36] = {
    4, 0, -5, 0, 1, 0,   0, -4, -4, 1, 1, 0,   0, 4, -4, -1, 1, 0,
    0, -2, -1, 2, 1, 0,  0, 2, -1, -2, 1, 0,   0, 4, 0, -5, 0, 1};
static const double luthier__wino_g4[18] = {
    1.0 / 4, 0, 0,
    -1.0 / 6, -1.0 / 6, -1.0 / 6,
    -1.0 / 6, 1.0 / 6, -1.0 / 6,
    1.0 / 24, 1.0 / 12, 1.0 / 6,
    1.0 / 24, -1.0 / 12, 1.0 / 6,
    0, 0, 1};
static const float luthier__wino_at4[24] = {
    1, 1, 1, 1, 1, 0,   0, 1, -1, 2, -2, 0,   0, 1, 1, 4, 4, 0,   0, 1, -1, 8, -8, 1};

static const float luthier__wino_bt6[64] = {
    1, 0, -5.25f, 0, 5.25f, 0, -1, 0,
    0, 1, 1, -4.25f, -4.25f, 1, 1, 0,
    0, -1, 1, 4.25f, -4.25f, -1, 1, 0,
    0, 0.5f, 0.25f, -2.5f, -1.25f, 2, 1, 0,
    0, -0.5f, 0.25f, 2.5f, -1.25f, -2, 1, 0,
    0, 2, 4, -2.5f, -5, 0.5f, 1, 0,
    0, -2, 4, 2.5f, -5, -0.5f, 1, 0,
    0, -1, 0, 5.25f, 0, -5.25f, 0, 1};
static const double luthier__wino_g6[24] = {
    1, 0, 0,
    -2.0 / 9, -2.0 / 9, -2.0 / 9,
    -2.0 / 9, 2.0 / 9, -2.0 / 9,
    1.0 / 90, 1.0 / 45, 2.0 / 45,
    1.0 / 90, -1.0 / 45, 2.0 / 45,
    32.0 / 45, 16.0 / 45, 8.0 / 45,
    32.0 / 45, -16.0 / 45, 8.0 / 45,
    0, 0, 1};
static const float luthier__wino_at6[48] = {
    1, 1, 1, 1, 1, 1, 1, 0,
    0, 1, -1, 2, -2, 0.5f, -0.5f, 0,
    0, 1, 1, 4, 4, 0.25f, 0.25f, 0,
    0, 1, -1, 8, -8, 0.125f, -0.125f, 0,
    0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0,
    0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1};

/* m of a Winograd algorithm, 0 for the others. */
LUTHIER_PRIVATE int luthier__wino_m(luthier_conv_algorithm a) {
    return a == LUTHIER_CONV_WINOGRAD_2X3 ? 2 : a == LUTHIER_CONV_WINOGRAD_4X3 ? 4
         : a == LUTHIER_CONV_WINOGRAD_6X3 ? 6 : 0;
}

LUTHIER_PRIVATE luthier__wino_tables luthier__wino_get(int m) {
    luthier__wino_tables t;
    t.m = m;
    t.alpha = m + 2;
    t.bt = m == 2 ? luthier__wino_bt2 : m == 4 ? luthier__wino_bt4 : luthier__wino_bt6;
    t.g = m == 2 ? luthier__wino_g2 : m == 4 ? luthier__wino_g4 : luthier__wino_g6;
    t.at = m == 2 ? luthier__wino_at2 : m == 4 ? luthier__wino_at4 : luthier__wino_at6;
    return t;
}

/* U = G g G^T of every (co, ci) of one group, stored [pos][co][ci] (the B^T that
   luthier__pack_b reads with trans = 1, ldb = cin_g). w: OIHW rows of the group's outputs. */
LUTHIER_PRIVATE void luthier__wino_weights(const luthier__wino_tables *t, const float *w, size_t cog,
                                           size_t cig, float *u) {
    const int al = t->alpha;
    size_t co, ci;
    int i, j, k;
    for (co = 0; co < cog; co++)
        for (ci = 0; ci < cig; ci++) {
            const float *g = w + (co * cig + ci) * 9;
            double gg[LUTHIER__WINO_MAX_ALPHA][3]; /* G g */
            for (i = 0; i < al; i++)
                for (j = 0; j < 3; j++) {
                    double s = 0;
                    for (k = 0; k < 3; k++) s += t->g[i * 3 + k] * (double)g[k * 3 + j];
                    gg[i][j] = s;
                }
            for (i = 0; i < al; i++)
                for (j = 0; j < al; j++) {
                    double s = 0;
                    for (k = 0; k < 3; k++) s += gg[i][k] * t->g[j * 3 + k];
                    u[((size_t)(i * al + j) * cog + co) * cig + ci] = (float)s;
                }
        }
}

/* Tile transforms, one straight-line body per m (Lavin-style common subexpressions), applied
   to vectors of contiguous channels (NHWC): a tile's alpha^2 values of W channels are W-lane
   registers. Each ISA defines the vector ops under a prefix O (O_T type, O_W lanes, O_LD/O_ST,
   O_ADD/O_SUB/O_MUL, O_FMA(a, b, c) = a*b + c, O_FNMA(a, b, c) = c - a*b, O_SET1, O_MAX/O_MIN)
   and LUTHIER__WINO_DEFINE(O, target) makes its two functions:
     luthier__wino_in_O:  V(r, s) = (B^T d B)(r, s), d(r, s) = src + r*rs + s*cs, V(r, s) at
                          dst + (r*alpha + s)*ps, channels [c0, c1) (c1 - c0 a multiple of W);
     luthier__wino_out_O: Y = A^T M A, M(r, s) at src + (r*alpha + s)*ps; the rows x cols valid
                          pixels get bias, + out (accumulate) and the clamp, out(r, s) at
                          out + r*ors + s*ocs.
   Every channel's arithmetic is fixed by its index (vector part, then the scalar tail), so the
   result does not depend on the block or thread a tile falls in. */

/* 1-D B^T x: y[0..alpha) from x[0..alpha) */
#define LUTHIER__WINO_BT2(O, x, y)                                                            \
    do {                                                                                      \
        y[0] = O##_SUB(x[0], x[2]);                                                           \
        y[1] = O##_ADD(x[1], x[2]);                                                           \
        y[2] = O##_SUB(x[2], x[1]);                                                           \
        y[3] = O##_SUB(x[1], x[3]);                                                           \
    } while (0)
#define LUTHIER__WINO_BT4(O, x, y)                                                            \
    do {                                                                                      \
        const O##_T p12 = O##_ADD(x[1], x[2]), m12 = O##_SUB(x[1], x[2]);                     \
        const O##_T p34 = O##_ADD(x[3], x[4]), m43 = O##_SUB(x[4], x[3]);                     \
        const O##_T m31 = O##_SUB(x[3], x[1]), m42 = O##_SUB(x[4], x[2]);                     \
        y[0] = O##_FMA(k4, x[0], O##_FNMA(k5, x[2], x[4]));                                   \
        y[1] = O##_FNMA(k4, p12, p34);                                                        \
        y[2] = O##_FMA(k4, m12, m43);                                                         \
        y[3] = O##_FMA(k2, m31, m42);                                                         \
        y[4] = O##_FNMA(k2, m31, m42);                                                        \
        y[5] = O##_FMA(k4, x[1], O##_FNMA(k5, x[3], x[5]));                                   \
    } while (0)
#define LUTHIER__WINO_BT6(O, x, y)                                                            \
    do {                                                                                      \
        const O##_T a1 = O##_FNMA(k425, x[4], O##_ADD(x[2], x[6]));                           \
        const O##_T b1 = O##_FNMA(k425, x[3], O##_ADD(x[1], x[5]));                           \
        const O##_T a3 = O##_FNMA(k125, x[4], O##_FMA(k025, x[2], x[6]));                     \
        const O##_T b3 = O##_FMA(k2, x[5], O##_FNMA(k25, x[3], O##_MUL(k05, x[1])));          \
        const O##_T a5 = O##_FMA(k4, x[2], O##_FNMA(k5, x[4], x[6]));                         \
        const O##_T b5 = O##_FMA(k2, x[1], O##_FNMA(k25, x[3], O##_MUL(k05, x[5])));          \
        y[0] = O##_FMA(k525, O##_SUB(x[4], x[2]), O##_SUB(x[0], x[6]));                       \
        y[1] = O##_ADD(a1, b1);                                                               \
        y[2] = O##_SUB(a1, b1);                                                               \
        y[3] = O##_ADD(a3, b3);                                                               \
        y[4] = O##_SUB(a3, b3);                                                               \
        y[5] = O##_ADD(a5, b5);                                                               \
        y[6] = O##_SUB(a5, b5);                                                               \
        y[7] = O##_FMA(k525, O##_SUB(x[3], x[5]), O##_SUB(x[7], x[1]));                       \
    } while (0)
/* 1-D A^T x: y[0..m) from x[0..alpha) */
#define LUTHIER__WINO_AT2(O, x, y)                                                            \
    do {                                                                                      \
        y[0] = O##_ADD(O##_ADD(x[0], x[1]), x[2]);                                            \
        y[1] = O##_SUB(O##_SUB(x[1], x[2]), x[3]);                                            \
    } while (0)
#define LUTHIER__WINO_AT4(O, x, y)                                                            \
    do {                                                                                      \
        const O##_T a = O##_ADD(x[1], x[2]), b = O##_SUB(x[1], x[2]);                         \
        const O##_T q = O##_ADD(x[3], x[4]), e = O##_SUB(x[3], x[4]);                         \
        y[0] = O##_ADD(O##_ADD(x[0], a), q);                                                  \
        y[1] = O##_FMA(k2, e, b);                                                             \
        y[2] = O##_FMA(k4, q, a);                                                             \
        y[3] = O##_ADD(O##_FMA(k8, e, b), x[5]);                                              \
    } while (0)
#define LUTHIER__WINO_AT6(O, x, y)                                                            \
    do {                                                                                      \
        const O##_T a = O##_ADD(x[1], x[2]), b = O##_SUB(x[1], x[2]);                         \
        const O##_T q = O##_ADD(x[3], x[4]), e = O##_SUB(x[3], x[4]);                         \
        const O##_T f = O##_ADD(x[5], x[6]), h = O##_SUB(x[5], x[6]);                         \
        y[0] = O##_ADD(O##_ADD(O##_ADD(x[0], a), q), f);                                      \
        y[1] = O##_FMA(k05, h, O##_FMA(k2, e, b));                                            \
        y[2] = O##_FMA(k025, f, O##_FMA(k4, q, a));                                           \
        y[3] = O##_FMA(k0125, h, O##_FMA(k8, e, b));                                          \
        y[4] = O##_FMA(k00625, f, O##_FMA(k16, q, a));                                        \
        y[5] = O##_ADD(O##_FMA(k003125, h, O##_FMA(k32, e, b)), x[7]);                        \
    } while (0)

#if defined(__clang__)
#define LUTHIER__WINO_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define LUTHIER__WINO_UNROLL _Pragma("GCC unroll 8")
#else
#define LUTHIER__WINO_UNROLL
#endif

/* One tile of W channels at c: columns (B^T d) into t, then rows into dst. */
#define LUTHIER__WINO_IN_TILE(O, AL, BT)                                                      \
    do {                                                                                      \
        O##_T x[AL], y[AL], t[AL][AL];                                                        \
        int r, s;                                                                             \
        LUTHIER__WINO_UNROLL for (s = 0; s < AL; s++) {                                       \
            LUTHIER__WINO_UNROLL for (r = 0; r < AL; r++)                                     \
                x[r] = O##_LD(src + (size_t)r * rs + (size_t)s * cs + c);                     \
            BT(O, x, y);                                                                      \
            LUTHIER__WINO_UNROLL for (r = 0; r < AL; r++) t[r][s] = y[r];                     \
        }                                                                                     \
        LUTHIER__WINO_UNROLL for (r = 0; r < AL; r++) {                                       \
            LUTHIER__WINO_UNROLL for (s = 0; s < AL; s++) x[s] = t[r][s];                     \
            BT(O, x, y);                                                                      \
            LUTHIER__WINO_UNROLL for (s = 0; s < AL; s++)                                     \
                O##_ST(dst + (size_t)(r * AL + s) * ps + c, y[s]);                            \
        }                                                                                     \
    } while (0)

#define LUTHIER__WINO_OUT_TILE(O, MM, AL, AT)                                                 \
    do {                                                                                      \
        O##_T x[AL], y[MM], t[MM][AL];                                                        \
        int r, s;                                                                             \
        LUTHIER__WINO_UNROLL for (s = 0; s < AL; s++) {                                       \
            LUTHIER__WINO_UNROLL for (r = 0; r < AL; r++)                                     \
                x[r] = O##_LD(src + (size_t)(r * AL + s) * ps + c);                           \
            AT(O, x, y);                                                                      \
            LUTHIER__WINO_UNROLL for (r = 0; r < MM; r++) t[r][s] = y[r];                     \
        }                                                                                     \
        LUTHIER__WINO_UNROLL for (r = 0; r < MM; r++) {                                       \
            if (r >= rows) break;                                                             \
            LUTHIER__WINO_UNROLL for (s = 0; s < AL; s++) x[s] = t[r][s];                     \
            AT(O, x, y);                                                                      \
            LUTHIER__WINO_UNROLL for (s = 0; s < MM; s++) {                                   \
                float *o = out + (size_t)r * ors + (size_t)s * ocs + c;                       \
                O##_T v = y[s];                                                               \
                if (s >= cols) break;                                                         \
                if (bias) v = O##_ADD(v, O##_LD(bias + c));                                   \
                if (acc) v = O##_ADD(O##_LD(o), v);                                           \
                if (clamp) v = O##_MIN(O##_MAX(v, vlo), vhi);                                 \
                O##_ST(o, v);                                                                 \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#define LUTHIER__WINO_DEFINE(O, TARGET)                                                       \
    TARGET LUTHIER_PRIVATE void luthier__wino_in_##O(int m, const float *src, size_t rs,      \
                                                     size_t cs, float *dst, size_t ps,        \
                                                     size_t c0, size_t c1) {                  \
        const O##_T k2 = O##_SET1(2.0f), k4 = O##_SET1(4.0f), k5 = O##_SET1(5.0f);            \
        const O##_T k025 = O##_SET1(0.25f), k05 = O##_SET1(0.5f), k125 = O##_SET1(1.25f);     \
        const O##_T k25 = O##_SET1(2.5f), k425 = O##_SET1(4.25f), k525 = O##_SET1(5.25f);     \
        size_t c;                                                                             \
        (void)k2; (void)k4; (void)k5; (void)k025; (void)k05; (void)k125; (void)k25;           \
        (void)k425; (void)k525;                                                               \
        if (m == 2)                                                                           \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_IN_TILE(O, 4, LUTHIER__WINO_BT2);  \
        else if (m == 4)                                                                      \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_IN_TILE(O, 6, LUTHIER__WINO_BT4);  \
        else                                                                                  \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_IN_TILE(O, 8, LUTHIER__WINO_BT6);  \
    }                                                                                         \
    TARGET LUTHIER_PRIVATE void luthier__wino_out_##O(                                        \
        int m, const float *src, size_t ps, float *out, size_t ors, size_t ocs, int rows,     \
        int cols, const float *bias, int acc, int clamp, float lo, float hi, size_t c0,       \
        size_t c1) {                                                                          \
        const O##_T k2 = O##_SET1(2.0f), k4 = O##_SET1(4.0f), k8 = O##_SET1(8.0f);            \
        const O##_T k16 = O##_SET1(16.0f), k32 = O##_SET1(32.0f), k05 = O##_SET1(0.5f);       \
        const O##_T k025 = O##_SET1(0.25f), k0125 = O##_SET1(0.125f);                         \
        const O##_T k00625 = O##_SET1(0.0625f), k003125 = O##_SET1(0.03125f);                 \
        const O##_T vlo = O##_SET1(lo), vhi = O##_SET1(hi);                                   \
        size_t c;                                                                             \
        (void)k2; (void)k4; (void)k8; (void)k16; (void)k32; (void)k05; (void)k025;            \
        (void)k0125; (void)k00625; (void)k003125;                                             \
        if (m == 2)                                                                           \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_OUT_TILE(O, 2, 4, LUTHIER__WINO_AT2); \
        else if (m == 4)                                                                      \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_OUT_TILE(O, 4, 6, LUTHIER__WINO_AT4); \
        else                                                                                  \
            for (c = c0; c < c1; c += O##_W) LUTHIER__WINO_OUT_TILE(O, 6, 8, LUTHIER__WINO_AT6); \
    }

/* Scalar (every ISA; also the channel tail of the vector versions). */
#define LUTHIER__W1_T float
#define LUTHIER__W1_W 1
#define LUTHIER__W1_LD(p) (*(p))
#define LUTHIER__W1_ST(p, v) (*(p) = (v))
#define LUTHIER__W1_ADD(a, b) ((a) + (b))
#define LUTHIER__W1_SUB(a, b) ((a) - (b))
#define LUTHIER__W1_MUL(a, b) ((a) * (b))
#define LUTHIER__W1_FMA(a, b, c) ((a) * (b) + (c))
#define LUTHIER__W1_FNMA(a, b, c) ((c) - (a) * (b))
#define LUTHIER__W1_SET1(x) (x)
#define LUTHIER__W1_MAX(v, l) ((v) < (l) ? (l) : (v))
#define LUTHIER__W1_MIN(v, h) ((v) > (h) ? (h) : (v))
LUTHIER__WINO_DEFINE(LUTHIER__W1, )

#if LUTHIER__SIMD_X86
#define LUTHIER__W16_T __m512
#define LUTHIER__W16_W 16
#define LUTHIER__W16_LD(p) _mm512_loadu_ps(p)
#define LUTHIER__W16_ST(p, v) _mm512_storeu_ps((p), (v))
#define LUTHIER__W16_ADD(a, b) _mm512_add_ps((a), (b))
#define LUTHIER__W16_SUB(a, b) _mm512_sub_ps((a), (b))
#define LUTHIER__W16_MUL(a, b) _mm512_mul_ps((a), (b))
#define LUTHIER__W16_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define LUTHIER__W16_FNMA(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define LUTHIER__W16_SET1(x) _mm512_set1_ps(x)
#define LUTHIER__W16_MAX(v, l) _mm512_max_ps((l), (v)) /* NaN in v stays NaN */
#define LUTHIER__W16_MIN(v, h) _mm512_min_ps((h), (v))
LUTHIER__WINO_DEFINE(LUTHIER__W16, LUTHIER__TARGET_AVX512)
#define LUTHIER__W8_T __m256
#define LUTHIER__W8_W 8
#define LUTHIER__W8_LD(p) _mm256_loadu_ps(p)
#define LUTHIER__W8_ST(p, v) _mm256_storeu_ps((p), (v))
#define LUTHIER__W8_ADD(a, b) _mm256_add_ps((a), (b))
#define LUTHIER__W8_SUB(a, b) _mm256_sub_ps((a), (b))
#define LUTHIER__W8_MUL(a, b) _mm256_mul_ps((a), (b))
#define LUTHIER__W8_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define LUTHIER__W8_FNMA(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define LUTHIER__W8_SET1(x) _mm256_set1_ps(x)
#define LUTHIER__W8_MAX(v, l) _mm256_max_ps((l), (v)) /* NaN in v stays NaN */
#define LUTHIER__W8_MIN(v, h) _mm256_min_ps((h), (v))
LUTHIER__WINO_DEFINE(LUTHIER__W8, LUTHIER__TARGET_AVX2)
#define LUTHIER__W4_T __m128 /* SSE2 baseline (no FMA) */
#define LUTHIER__W4_W 4
#define LUTHIER__W4_LD(p) _mm_loadu_ps(p)
#define LUTHIER__W4_ST(p, v) _mm_storeu_ps((p), (v))
#define LUTHIER__W4_ADD(a, b) _mm_add_ps((a), (b))
#define LUTHIER__W4_SUB(a, b) _mm_sub_ps((a), (b))
#define LUTHIER__W4_MUL(a, b) _mm_mul_ps((a), (b))
#define LUTHIER__W4_FMA(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c))
#define LUTHIER__W4_FNMA(a, b, c) _mm_sub_ps((c), _mm_mul_ps((a), (b)))
#define LUTHIER__W4_SET1(x) _mm_set1_ps(x)
#define LUTHIER__W4_MAX(v, l) _mm_max_ps((l), (v)) /* NaN in v stays NaN */
#define LUTHIER__W4_MIN(v, h) _mm_min_ps((h), (v))
LUTHIER__WINO_DEFINE(LUTHIER__W4, )
#define LUTHIER__WINO_HAVE_W4
#elif LUTHIER__SIMD_NEON
#define LUTHIER__W4_T float32x4_t
#define LUTHIER__W4_W 4
#define LUTHIER__W4_LD(p) vld1q_f32(p)
#define LUTHIER__W4_ST(p, v) vst1q_f32((p), (v))
#define LUTHIER__W4_ADD(a, b) vaddq_f32((a), (b))
#define LUTHIER__W4_SUB(a, b) vsubq_f32((a), (b))
#define LUTHIER__W4_MUL(a, b) vmulq_f32((a), (b))
#define LUTHIER__W4_FMA(a, b, c) vfmaq_f32((c), (a), (b))
#define LUTHIER__W4_FNMA(a, b, c) vfmsq_f32((c), (a), (b))
#define LUTHIER__W4_SET1(x) vdupq_n_f32(x)
#define LUTHIER__W4_MAX(v, l) vmaxq_f32((v), (l))
#define LUTHIER__W4_MIN(v, h) vminq_f32((v), (h))
LUTHIER__WINO_DEFINE(LUTHIER__W4, )
#define LUTHIER__WINO_HAVE_W4
#endif

typedef void (*luthier__wino_in_fn)(int, const float *, size_t, size_t, float *, size_t, size_t, size_t);
typedef void (*luthier__wino_out_fn)(int, const float *, size_t, float *, size_t, size_t, int, int,
                                     const float *, int, int, float, float, size_t, size_t);

/* The widest transforms ctx's CPU features allow, and their width (1: scalar only). */
LUTHIER_PRIVATE int luthier__wino_select(unsigned features, luthier__wino_in_fn *in, luthier__wino_out_fn *out) {
    (void)features;
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX512F) {
        *in = luthier__wino_in_LUTHIER__W16;
        *out = luthier__wino_out_LUTHIER__W16;
        return 16;
    }
    if (features & LUTHIER_CPU_AVX2_FMA) {
        *in = luthier__wino_in_LUTHIER__W8;
        *out = luthier__wino_out_LUTHIER__W8;
        return 8;
    }
#endif
#ifdef LUTHIER__WINO_HAVE_W4
    *in = luthier__wino_in_LUTHIER__W4;
    *out = luthier__wino_out_LUTHIER__W4;
    return 4;
#else
    *in = luthier__wino_in_LUTHIER__W1;
    *out = luthier__wino_out_LUTHIER__W1;
    return 1;
#endif
}

/* The ISA of the transforms luthier__wino_select picks. */
LUTHIER_PRIVATE luthier__isa luthier__wino_isa(unsigned features) {
    luthier__wino_in_fn in;
    luthier__wino_out_fn out;
    switch (luthier__wino_select(features, &in, &out)) {
    case 16: return LUTHIER__ISA_AVX512;
    case 8: return LUTHIER__ISA_AVX2;
    case 4: return LUTHIER__SIMD_NEON ? LUTHIER__ISA_NEON : LUTHIER__ISA_SSE2;
    default: return LUTHIER__ISA_SCALAR;
    }
}

/* >>impl-conv-create: weight transform, blocking, workspace size */

struct luthier__conv_job;

struct luthier_conv2d_layer {
    luthier_conv2d_desc d;        /* normalized; kernel and ratios point into this object */
    float ratios[LUTHIER_MAX_CLUSTERS];
    int64_t oh, ow;
    size_t m;                     /* output pixels: batch * oh * ow */
    size_t cin_g, cout_g, kdim;   /* per group; kdim = kernel_h * kernel_w * cin_g */
    size_t ks;                    /* kernel_h * kernel_w */
    size_t seg_k, seg_n;          /* implicit GEMM: floats per A segment and segments per pixel:
                                     (cin_g, kernel_h * kernel_w), or with wide segments
                                     (kernel_w * cin, kernel_h): see luthier__conv_indirection */
    size_t stage_off;             /* wide segments: offset of the staged border rows */
    luthier_conv_algorithm algo;
    int kernel;                   /* F32 registry index; -1 for depthwise and F16 kernels */
    const luthier__kernel_entry *uk; /* the GEMM's kernel (F32 or F16); NULL for depthwise */
    const luthier__kernel_entry *cuk[LUTHIER_MAX_CLUSTERS]; /* per cluster of the creating context
                                     (uk's kind, MR, NR and packing; NULL past its clusters) */
    int direct_1x1;               /* 1x1 stride 1: A is the input itself */
    luthier__packed_b_layout bl;  /* one group's packed B (kdim x cout_g), (kh, kw, ci) order */
    size_t group_floats;          /* floats per group in packed */
    float *packed;                /* GEMM: groups packed Bs; depthwise: [kh][kw][C] */
    float *bias;                  /* NULL or out_channels */
    float *zero;                  /* implicit GEMM: seg_k zeros (a segment in the padding) */
    luthier__gemm_blocking blk;
    size_t rows_blk;              /* output pixels per im2col / indirection block (x MR) */
    size_t thread_ws;             /* bytes of per-thread workspace (aligned) */
    size_t gemm_ws_off;           /* offset of the GEMM packing workspace in it */
    size_t weight_bytes, workspace_bytes;
    /* Winograd (wino_m != 0): bl is one position's B (cin_g x cout_g); packed holds
       [group][pos] of them, group_floats apart. Per-thread workspace: V (alpha^2 x tb x cin_g),
       M (alpha^2 x tb x cout_g), a border tile (alpha^2 x cin_g), then the GEMM's. */
    int wino_m;                   /* 2, 4, 6; 0 = not Winograd */
    size_t wino_tw, wino_thw;     /* tiles per output row, per image */
    size_t wino_tiles;            /* batch * tiles per image */
    size_t wino_tb;               /* tiles per block (a multiple of MR) */
    size_t wino_m_off, wino_s_off; /* offsets of M and the scratch in a thread's workspace */
    unsigned features;            /* the creating context's CPU features (luthier_conv2d_info.isa) */
    /* the datatype: bytes per element of the input (and of the weights given to create) and of
       the output; the value of an input element in the padding (fp32 0, int8 the input zero
       point); its depthwise run (its own routines, over this geometry) */
    size_t in_elem, out_elem;
    int pad_value;
    luthier_status (*depthwise)(luthier_context *ctx, struct luthier__conv_job *job);
    /* fp16 activations (luthier__conv_use_h16): the input and output are fp16 (in_elem =
       out_elem = 2); each GEMM block's fp32 results go through a per-thread stage at
       h16_stage_off (rows_blk x cout_g floats) and are narrowed into the output */
    int h16;
    size_t h16_stage_off;
};

#define LUTHIER__CONV_WIDE_CIN 16 /* implicit GEMM: wide segments below this many channels */
#define LUTHIER__CONV_WIDE_KH 16  /* ... and up to this kernel height */

LUTHIER_PRIVATE size_t luthier__align_up(size_t x) {
    return luthier__div_up(x, LUTHIER__ALIGN) * LUTHIER__ALIGN;
}

/* Frees what a layer's front end allocated (not cv itself). */
LUTHIER_PRIVATE void luthier__conv_free(luthier_conv2d_layer *cv) {
    luthier__free(cv->packed);
    luthier__free(cv->bias);
    luthier__free(cv->zero);
}

LUTHIER_API void luthier_conv2d_destroy(luthier_conv2d_layer *cv) {
    if (!cv) return;
    luthier__conv_free(cv);
    luthier__free(cv);
}

/* Bytes of context workspace a convolution run needs with `threads` threads (0 on overflow):
   NHWC copies of an NCHW input and output (in_elem, out_elem bytes per element; both below
   PTRDIFF_MAX / 16 elements), then per bytes for each thread. */
LUTHIER_PRIVATE size_t luthier__conv_ws_bytes(const luthier_conv2d_desc *d, size_t m, size_t in_elem, size_t out_elem,
                                              size_t per, int threads) {
    size_t total = 0;
    if (d->layout == LUTHIER_LAYOUT_NCHW)
        total = luthier__align_up((size_t)d->batch * (size_t)d->in_h * (size_t)d->in_w * (size_t)d->in_channels * in_elem) +
                luthier__align_up(m * (size_t)d->out_channels * out_elem);
    if (per && (size_t)threads > (SIZE_MAX - total - 1) / per) return 0;
    return total + per * (size_t)threads + 1;
}

/* The per-algorithm half of luthier_conv2d_create: weights packed or transformed, blocking and
   workspace of cv (whose geometry, algorithm and kernel are set). OVERFLOW or OUT_OF_MEMORY;
   the caller frees cv and names the problem. */
LUTHIER_PRIVATE luthier_status luthier__conv_prepare_winograd(luthier_context *ctx, luthier_conv2d_layer *cv,
                                                              const float *weights) {
    size_t g, t;
    const luthier__wino_tables wt = luthier__wino_get(cv->wino_m);
    const luthier__kernel_entry *uk = cv->uk;
    const size_t P = (size_t)wt.alpha * (size_t)wt.alpha, mr = (size_t)uk->mr;
    size_t tb;
    float *u;
    if (!luthier__packed_b_layout_init(&cv->bl, (size_t)uk->nr, cv->cin_g, cv->cout_g) ||
        cv->bl.bytes > SIZE_MAX / 2 / P / (size_t)cv->d.groups ||
        (cv->cin_g + cv->cout_g) > SIZE_MAX / 4 / sizeof(float) / P / 1024) {
        return LUTHIER_STATUS_OVERFLOW;
    }
    cv->group_floats = cv->bl.bytes / sizeof(float);
    if (!(cv->packed = (float *)luthier__alloc(cv->bl.bytes * P * (size_t)cv->d.groups + 1))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    cv->weight_bytes += cv->bl.bytes * P * (size_t)cv->d.groups;
    if (!(u = (float *)luthier__alloc(P * cv->cout_g * cv->cin_g * sizeof(float)))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (g = 0; g < (size_t)cv->d.groups; g++) {
        luthier__wino_weights(&wt, weights + g * cv->cout_g * cv->cin_g * 9, cv->cout_g, cv->cin_g, u);
        for (t = 0; t < P; t++)
            luthier__pack_b(&cv->bl, u + t * cv->cout_g * cv->cin_g, cv->cin_g, 1,
                            cv->packed + (g * P + t) * cv->group_floats, 0, cv->bl.panels);
    }
    luthier__free(u);
    cv->wino_tw = luthier__div_up((size_t)cv->ow, (size_t)cv->wino_m);
    cv->wino_thw = luthier__div_up((size_t)cv->oh, (size_t)cv->wino_m) * cv->wino_tw;
    cv->wino_tiles = (size_t)cv->d.batch * cv->wino_thw;
    cv->wino_tb = tb = luthier__wino_block_tiles(cv->wino_tiles, mr, P, cv->cin_g, cv->cout_g, luthier__l2_bytes(ctx));
    cv->blk = luthier__gemm_blocking_for(uk, &ctx->caches, &ctx->blocking_override, tb,
                                         cv->cout_g, cv->cin_g);
    cv->wino_m_off = luthier__align_up(P * tb * cv->cin_g * sizeof(float));
    cv->wino_s_off = cv->wino_m_off + luthier__align_up(P * tb * cv->cout_g * sizeof(float));
    /* scratch: a border tile gathered with zeros, alpha^2 x cin_g */
    cv->gemm_ws_off = cv->wino_s_off + luthier__align_up(P * cv->cin_g * sizeof(float));
    cv->thread_ws = luthier__align_up(cv->gemm_ws_off + luthier__gemm_workspace_bytes(uk, &cv->blk));
    return LUTHIER_STATUS_OK;
}

/* >>impl-conv-winograd16: F(4x4, 3x3) in fp16 arithmetic, the WINOGRAD_4X3 row of the F16
   kernel family (Armv8.2 FP16: luthier__conv_wino16_fits). The tile transforms are the fp32
   ones (V = B^T d B in fp32, then rounded to fp16; Y = A^T M A, bias, accumulate and activation
   in fp32); the 36 products V[pos] * U[pos] run on luthier__wino16_4x16_neon: fp16 FMLA over
   blocks of 8 input channels, those sums added in fp16 over groups of 4 blocks (a partial group
   at the end of cp), fp32 across groups (>>wino16). Packed weights (U = G g G^T in double,
   rounded once to fp16): [group][pos][panel of 16 outputs][cp channels][16] halves, cp = cin_g
   rounded up to 8 and kp = cout_g rounded up to 16 (zeros). Per-thread workspace: V (36 x tb x
   cp halves), M (36 x tb x kp floats) at wino_m_off, the gathered fp32 tile (36 x cin_g) at
   wino_s_off, its transform (36 x cp) at gemm_ws_off, an fp32 output tile (16 x cout_g) at
   h16_stage_off. Units: groups of LUTHIER__WINO16_MR tiles. */
#define LUTHIER__WINO16_MR 4
#define LUTHIER__WINO16_NR 16

LUTHIER_PRIVATE size_t luthier__wino16_cp(const luthier_conv2d_layer *cv) { return luthier__div_up(cv->cin_g, 8) * 8; }
LUTHIER_PRIVATE size_t luthier__wino16_kp(const luthier_conv2d_layer *cv) {
    return luthier__div_up(cv->cout_g, LUTHIER__WINO16_NR) * LUTHIER__WINO16_NR;
}

/* U of group g ([pos][co][ci] floats) into its packed halves. */
LUTHIER_PRIVATE void luthier__wino16_pack(const luthier_conv2d_layer *cv, const float *u, uint16_t *dst) {
    const size_t cp = luthier__wino16_cp(cv), kp = luthier__wino16_kp(cv), cig = cv->cin_g, cog = cv->cout_g;
    size_t pos, co, ci;
    for (pos = 0; pos < 36; pos++)
        for (co = 0; co < cog; co++)
            for (ci = 0; ci < cig; ci++)
                dst[pos * cp * kp + (co / LUTHIER__WINO16_NR) * cp * LUTHIER__WINO16_NR + ci * LUTHIER__WINO16_NR +
                    co % LUTHIER__WINO16_NR] = luthier__f32_to_f16(u[(pos * cog + co) * cig + ci]);
}

LUTHIER_PRIVATE luthier_status luthier__conv_prepare_winograd16(luthier_context *ctx, luthier_conv2d_layer *cv,
                                                                const float *weights) {
    const luthier__wino_tables wt = luthier__wino_get(4);
    const size_t P = 36, G = (size_t)cv->d.groups, cig = cv->cin_g, cog = cv->cout_g;
    const size_t cp = luthier__wino16_cp(cv), kp = luthier__wino16_kp(cv);
    size_t g, bytes, tb, per_tile, tiles_r;
    float *u;
    if (cp + kp > SIZE_MAX / 4 / sizeof(float) / P / 1024 || cp > SIZE_MAX / 4 / P / G / kp || cig > SIZE_MAX / 8 / P / cog)
        return LUTHIER_STATUS_OVERFLOW;
    bytes = G * P * cp * kp * sizeof(uint16_t);
    if (!(cv->packed = (float *)luthier__alloc(bytes + 1))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    memset(cv->packed, 0, bytes);
    cv->weight_bytes += bytes;
    if (!(u = (float *)luthier__alloc(P * cog * cig * sizeof(float) + 1))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (g = 0; g < G; g++) {
        luthier__wino_weights(&wt, weights + g * cog * cig * 9, cog, cig, u);
        luthier__wino16_pack(cv, u, (uint16_t *)(void *)cv->packed + g * P * cp * kp);
    }
    luthier__free(u);
    cv->wino_tw = luthier__div_up((size_t)cv->ow, 4);
    cv->wino_thw = luthier__div_up((size_t)cv->oh, 4) * cv->wino_tw;
    cv->wino_tiles = (size_t)cv->d.batch * cv->wino_thw;
    /* tiles per block: V and M in about half of L2, 4 to 64 */
    per_tile = P * (cp * sizeof(uint16_t) + kp * sizeof(float));
    tb = luthier__l2_bytes(ctx) / 2 / per_tile / LUTHIER__WINO16_MR * LUTHIER__WINO16_MR;
    tiles_r = luthier__div_up(cv->wino_tiles, LUTHIER__WINO16_MR) * LUTHIER__WINO16_MR;
    cv->wino_tb = tb = luthier__min_sz(luthier__min_sz(luthier__max_sz(tb, LUTHIER__WINO16_MR), 64), tiles_r);
    cv->wino_m_off = luthier__align_up(P * tb * cp * sizeof(uint16_t));
    cv->wino_s_off = cv->wino_m_off + luthier__align_up(P * tb * kp * sizeof(float));
    cv->gemm_ws_off = cv->wino_s_off + luthier__align_up(P * cig * sizeof(float));
    cv->h16_stage_off = cv->gemm_ws_off + luthier__align_up(P * cp * sizeof(float));
    cv->thread_ws = cv->h16_stage_off + luthier__align_up(16 * cog * sizeof(float));
    return LUTHIER_STATUS_OK;
}

LUTHIER_PRIVATE luthier_status luthier__conv_prepare_depthwise(luthier_conv2d_layer *cv, const float *weights) {
    const size_t khw = cv->ks;
    size_t co, t;
    const size_t C = (size_t)cv->d.in_channels;
    if (!(cv->packed = (float *)luthier__alloc(khw * C * sizeof(float)))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (t = 0; t < khw; t++) /* OIHW with I = 1 -> [kh][kw][C] */
        for (co = 0; co < C; co++) cv->packed[t * C + co] = weights[co * khw + t];
    cv->weight_bytes += khw * C * sizeof(float);
    return LUTHIER_STATUS_OK;
}

/* B^T of group g (cout_g x kdim, column (kh, kw, ci)) from the OIHW weights (elements of
   in_elem bytes: fp32, or int8) into bt. */
LUTHIER_PRIVATE void luthier__conv_weights_bt(const luthier_conv2d_layer *cv, const void *weights, size_t g, void *bt) {
    const size_t khw = cv->ks, e = cv->in_elem;
    size_t co, ci, t;
    for (co = 0; co < cv->cout_g; co++) {
        const unsigned char *w = (const unsigned char *)weights + (g * cv->cout_g + co) * cv->cin_g * khw * e;
        unsigned char *row = (unsigned char *)bt + co * cv->kdim * e;
        for (ci = 0; ci < cv->cin_g; ci++)
            for (t = 0; t < khw; t++) {
                if (e == sizeof(float)) ((float *)(void *)row)[t * cv->cin_g + ci] = ((const float *)(const void *)w)[ci * khw + t];
                else row[t * cv->cin_g + ci] = w[ci * khw + t];
            }
    }
}

/* The blocks of output pixels of a GEMM layer: the im2col rows (as packed: k rounded up to the
   K group) or the indirection pointers of one block take about half of L2; at least one MR
   tile, at most 64. The blocking: the layer's, or for the full-k datatypes (int8) one block's,
   whose A is then packed at once. */
LUTHIER_PRIVATE size_t luthier__conv_blocks(luthier_context *ctx, luthier_conv2d_layer *cv) {
    const luthier__kernel_entry *uk = cv->uk;
    const size_t mr = (size_t)uk->mr, kpad = cv->bl.groups * cv->bl.kg;
    const int full_k = luthier__dtype(uk)->full_k;
    size_t rows = luthier__l2_bytes(ctx) / 2;
    rows /= cv->algo == LUTHIER_CONV_IMPLICIT_GEMM ? cv->ks * sizeof(float *) : luthier__max_sz(kpad, 1) * cv->in_elem;
    rows = luthier__min_sz(luthier__max_sz(rows / mr, 1), 64) * mr;
    cv->blk = luthier__gemm_blocking_for(uk, &ctx->caches, &ctx->blocking_override, full_k ? rows : cv->m, cv->cout_g, cv->kdim);
    if (full_k) cv->blk.mc = rows;
    return rows;
}

/* GEMM algorithms: per group, B^T packed for the layer's kernel (its element type, K group and
   NR); the blocking and the per-thread workspace (im2col rows, or the indirection pointers and
   staged rows, then the GEMM's packed A). */
LUTHIER_PRIVATE luthier_status luthier__conv_prepare_gemm(luthier_context *ctx, luthier_conv2d_layer *cv,
                                                          const void *weights) {
    const size_t khw = cv->ks;
    size_t g;
    const luthier__kernel_entry *uk = cv->uk;
    const size_t kg = luthier__dtype(uk)->full_k ? (size_t)uk->k_unroll : 1;
    void *bt;
    size_t gemm_ws, rows;
    if (!luthier__pack_layout_init(&cv->bl, (size_t)uk->nr, kg, cv->kdim, cv->cout_g, (size_t)uk->b_bytes) ||
        cv->bl.bytes > SIZE_MAX / (size_t)cv->d.groups - 64) {
        return LUTHIER_STATUS_OVERFLOW;
    }
    cv->group_floats = luthier__div_up(cv->bl.bytes, sizeof(float)); /* (F16: halves, int8: bytes, in float-sized storage) */
    if (!(cv->packed = (float *)luthier__alloc(cv->group_floats * sizeof(float) * (size_t)cv->d.groups + 64)))
        return LUTHIER_STATUS_OUT_OF_MEMORY;
    cv->weight_bytes += cv->group_floats * sizeof(float) * (size_t)cv->d.groups;
    if (!(bt = luthier__alloc(cv->cout_g * cv->kdim * cv->in_elem))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    for (g = 0; g < (size_t)cv->d.groups; g++) {
        luthier__conv_weights_bt(cv, weights, g, bt);
        luthier__pack_b(&cv->bl, bt, cv->kdim, 1, cv->packed + g * cv->group_floats, 0, cv->bl.panels);
    }
    luthier__free(bt);
    if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) {
        /* Wide segments: with few channels (a network's stem) a segment of cin floats is too
           short for the microkernel's k loop; one kernel row (kernel_w pixels x cin, contiguous
           in NHWC) makes a segment instead, and pixels whose row crosses the left or right
           padding get that row staged with zeros. */
        const int wide = cv->d.groups == 1 && cv->d.dilation_w == 1 && cv->d.kernel_w > 1 &&
                         cv->d.kernel_h <= LUTHIER__CONV_WIDE_KH && cv->cin_g < LUTHIER__CONV_WIDE_CIN;
        cv->seg_k = wide ? (size_t)cv->d.kernel_w * cv->cin_g : cv->cin_g;
        cv->seg_n = wide ? (size_t)cv->d.kernel_h : khw;
        if (!(cv->zero = (float *)luthier__zalloc(cv->seg_k * sizeof(float)))) return LUTHIER_STATUS_OUT_OF_MEMORY;
    }
    cv->rows_blk = rows = luthier__conv_blocks(ctx, cv);
    gemm_ws = luthier__gemm_workspace_bytes(uk, &cv->blk);
    if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) {
        cv->stage_off = luthier__align_up(rows * khw * sizeof(float *));
        cv->gemm_ws_off = cv->stage_off;
        if (cv->seg_n != khw) cv->gemm_ws_off += luthier__align_up(rows * cv->seg_n * cv->seg_k * sizeof(float));
    }
    else if (!cv->direct_1x1) cv->gemm_ws_off = luthier__align_up(rows * cv->kdim * cv->in_elem);
    if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) gemm_ws = 0;
    cv->thread_ws = luthier__align_up(cv->gemm_ws_off + gemm_ws);
    return LUTHIER_STATUS_OK;
}

/* The algorithm of a layer in a family without the F32 policies (int8, the F16 kernels),
   checked against the table: AUTO takes DEPTHWISE where the layer and the family have it, else
   1X1 where it fits, else IM2COL. op names the caller in messages. */
LUTHIER_PRIVATE luthier_status luthier__conv_choose_in(luthier_context *ctx, const char *op, const luthier_conv2d_desc *d,
                                                       luthier_kernel_family fam, luthier_conv_algorithm *algo) {
    char why[8];
    *algo = d->algorithm;
    if (*algo == LUTHIER_CONV_AUTO)
        *algo = luthier__conv_is_depthwise(d) && luthier__conv_algo_in(LUTHIER_CONV_DEPTHWISE, fam) ? LUTHIER_CONV_DEPTHWISE
                : luthier__conv_fits_1x1(d, why, sizeof why)                                    ? LUTHIER_CONV_1X1
                                                                                                : LUTHIER_CONV_IM2COL;
    return luthier__conv_algo_fits(ctx, op, d, *algo, fam);
}

/* Whether AUTO gives F16 layer d Winograd F(4x4, 3x3): where the CPU runs it
   (luthier__conv_wino16_fits) and the fp32 layer's AUTO would take WINOGRAD_4X3. */
LUTHIER_PRIVATE int luthier__conv_f16_wants_winograd(luthier_context *ctx, const luthier_conv2d_desc *d) {
    luthier_conv2d_desc f = *d;
    luthier_conv_algorithm a = LUTHIER_CONV_AUTO;
    char why[400], saved[sizeof ctx->error];
    int kernel;
    if (!luthier__conv_wino16_fits(ctx->cpu_features, why, sizeof why) || !luthier__conv_fits_winograd(d, why, sizeof why))
        return 0;
    f.kernel = NULL;
    f.cluster_kernels = NULL;
    f.algorithm = LUTHIER_CONV_AUTO;
    memcpy(saved, ctx->error, sizeof saved);
    if (luthier__conv_choose(ctx, &f, &a, &kernel) != LUTHIER_STATUS_OK) a = LUTHIER_CONV_AUTO;
    memcpy(ctx->error, saved, sizeof saved);
    return a == LUTHIER_CONV_WINOGRAD_4X3;
}

/* A convolution on an F16 (fp16 arithmetic) kernel named by d->kernel, run by this context.
   AUTO where luthier__conv_f16_wants_winograd: WINOGRAD_4X3 (>>impl-conv-winograd16). AUTO on a hybrid kernel: 1X1 where it fits, else IMPLICIT_GEMM (A read in place, no im2col
   copy); IMPLICIT_GEMM needs a hybrid kernel. */
LUTHIER_PRIVATE luthier_status luthier__conv_choose_f16(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                        luthier_conv_algorithm *algo, const luthier__kernel_entry **uk) {
    luthier_conv2d_desc e = *d;
    luthier_status s;
    char why[8];
    if ((s = luthier__resolve(ctx, 1u << LUTHIER_KERNELS_F16, d->kernel, uk)) != LUTHIER_STATUS_OK) return s;
    if (e.algorithm == LUTHIER_CONV_AUTO && luthier__conv_f16_wants_winograd(ctx, d)) e.algorithm = LUTHIER_CONV_WINOGRAD_4X3;
    if (e.algorithm == LUTHIER_CONV_AUTO && (*uk)->kind == LUTHIER_KERNEL_HYBRID && !luthier__conv_fits_1x1(d, why, sizeof why))
        e.algorithm = LUTHIER_CONV_IMPLICIT_GEMM;
    if ((s = luthier__conv_choose_in(ctx, "conv2d", &e, LUTHIER_KERNELS_F16, algo)) != LUTHIER_STATUS_OK) return s;
    if (*algo == LUTHIER_CONV_IMPLICIT_GEMM && (*uk)->kind != LUTHIER_KERNEL_HYBRID)
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "conv2d algorithm implicit_gemm needs a hybrid microkernel (it "
                             "reads input pixels in place through row pointers); %s is interleaved", (*uk)->name);
    return LUTHIER_STATUS_OK;
}

/* The kernel of each of ctx's clusters for a GEMM layer on uk (luthier__cluster_kernels), of
   uk's kind: the blocking, workspace and A operand (packed, im2col rows, indirection) are
   uk's. */
LUTHIER_PRIVATE luthier_status luthier__conv_cluster_kernels(luthier_context *ctx, const luthier_conv2d_desc *d,
                                                             const luthier__kernel_entry *uk, const luthier__kernel_entry **cuk) {
    luthier_status s = luthier__cluster_kernels(ctx, 1u << uk->family, uk, d->cluster_kernels, cuk);
    int cl;
    for (cl = 0; s == LUTHIER_STATUS_OK && cl < ctx->pool->num_clusters; cl++)
        if (cuk[cl]->kind != uk->kind)
            return luthier__fail(ctx, LUTHIER_STATUS_INCOMPATIBLE, "conv2d: cluster %d kernel %s is not of the layer kernel %s's kind "
                                 "(interleaved or hybrid)", cl, cuk[cl]->name, uk->name);
    return s;
}

/* The ratios of d, when it has them, checked; op names the caller in messages. */
LUTHIER_PRIVATE luthier_status luthier__conv_check_ratios(luthier_context *ctx, const char *op, const luthier_conv2d_desc *d) {
    double w[LUTHIER_MAX_CLUSTERS];
    if (!d->ratios) return LUTHIER_STATUS_OK;
    if (d->num_ratios < 1 || d->num_ratios > LUTHIER_MAX_CLUSTERS)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%s: %d ratios given for %d clusters", op, d->num_ratios,
                             ctx->pool->num_clusters);
    return luthier__weights(ctx, d->ratios, d->num_ratios, w);
}

/* The geometry of a new layer cv (zeroed) of every datatype: d normalized (ratios checked),
   the algorithm, the kernel uk (NULL: depthwise) and each cluster's, the output size. */
LUTHIER_PRIVATE void luthier__conv_init(const luthier_context *ctx, luthier_conv2d_layer *cv, const luthier_conv2d_desc *d,
                                        luthier_conv_algorithm algo, const luthier__kernel_entry *uk,
                                        const luthier__kernel_entry *const *cuk, int64_t oh, int64_t ow) {
    cv->d = *d;
    cv->d.kernel = uk ? uk->name : NULL;
    if (d->ratios) {
        memcpy(cv->ratios, d->ratios, (size_t)d->num_ratios * sizeof(float));
        cv->d.ratios = cv->ratios;
    }
    cv->d.algorithm = algo;
    cv->algo = algo;
    cv->kernel = -1;
    cv->uk = uk;
    memcpy(cv->cuk, cuk, sizeof cv->cuk);
    cv->d.cluster_kernels = NULL;
    cv->features = ctx->cpu_features;
    cv->oh = oh;
    cv->ow = ow;
    cv->m = (size_t)d->batch * (size_t)oh * (size_t)ow;
    cv->cin_g = (size_t)(d->in_channels / d->groups);
    cv->cout_g = (size_t)(d->out_channels / d->groups);
    cv->ks = (size_t)d->kernel_h * (size_t)d->kernel_w;
    cv->kdim = cv->ks * cv->cin_g;
    cv->direct_1x1 = algo == LUTHIER_CONV_1X1 && d->stride_h == 1 && d->stride_w == 1;
}

/* The workspace of a prepared layer; OVERFLOW when its size does not fit size_t. */
LUTHIER_PRIVATE luthier_status luthier__conv_finish(luthier_context *ctx, const char *op, luthier_conv2d_layer *cv) {
    cv->workspace_bytes = luthier__conv_ws_bytes(&cv->d, cv->m, cv->in_elem, cv->out_elem, cv->thread_ws, ctx->pool->num_threads);
    if (!cv->workspace_bytes) return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "%s: workspace size overflows", op);
    return LUTHIER_STATUS_OK;
}

/* The end of a create (op: "conv2d", "qconv2d") of layer cv whose weights were prepared with
   status s (OVERFLOW: they overflow; else out of memory): the workspace, or the problem named
   and destroy(cv). */
LUTHIER_PRIVATE luthier_status luthier__conv_created(luthier_context *ctx, const char *op, luthier_conv2d_layer *cv,
                                                     luthier_status s, void (*destroy)(luthier_conv2d_layer *)) {
    if (s == LUTHIER_STATUS_OVERFLOW) luthier__fail(ctx, s, "%s: packed weights overflow", op);
    else if (s != LUTHIER_STATUS_OK) luthier__fail(ctx, s, "%s: cannot allocate the weights or buffers", op);
    else s = luthier__conv_finish(ctx, op, cv);
    if (s != LUTHIER_STATUS_OK) destroy(cv);
    return s;
}

LUTHIER_PRIVATE luthier_status luthier__conv_dw_run(luthier_context *ctx, struct luthier__conv_job *job);

/* Whether depthwise layer d has an fp16-activation form on a CPU with these features: the NEON
   FP16 pixel routine (luthier__dw_h16_pixel_neon, Armv8.2 FP16), NHWC, at most
   LUTHIER__DW_H16_TAPS taps, no activation or a clamp (ReLU, ReLU6, clamp). Elsewhere plans
   convert around the fp32 layer. */
LUTHIER_PRIVATE int luthier__conv_h16_dw_fits(unsigned features, const luthier_conv2d_desc *d) {
    float lo, hi;
#if LUTHIER__SIMD_NEON
    return (features & LUTHIER_CPU_FP16) && luthier__conv_is_depthwise(d) && d->layout == LUTHIER_LAYOUT_NHWC &&
           d->kernel_h * d->kernel_w <= LUTHIER__DW_H16_TAPS &&
           (d->activation == LUTHIER_ACTIVATION_NONE || luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi));
#else
    return (void)features, (void)d, (void)lo, (void)hi, 0;
#endif
}

LUTHIER_PRIVATE luthier_status luthier__conv_dw_run_h16(luthier_context *ctx, struct luthier__conv_job *job);

/* luthier__conv_use_h16 for a depthwise layer: the weights rounded to fp16 in place, the fp16 run. */
LUTHIER_PRIVATE luthier_status luthier__conv_use_h16_dw(luthier_context *ctx, luthier_conv2d_layer *cv) {
    const size_t n = cv->ks * (size_t)cv->d.in_channels;
    uint16_t *h = (uint16_t *)(void *)cv->packed;
    size_t i;
    if (!luthier__conv_h16_dw_fits(ctx->cpu_features, &cv->d))
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "conv2d: fp16 activations of a depthwise layer need Armv8.2 FP16 "
                             "arithmetic, NHWC, at most %d taps and no activation but a clamp", LUTHIER__DW_H16_TAPS);
    for (i = 0; i < n; i++) h[i] = luthier__f32_to_f16(cv->packed[i]); /* (element i's bytes are read before written) */
    cv->h16 = 1;
    cv->in_elem = cv->out_elem = sizeof(uint16_t);
    cv->depthwise = luthier__conv_dw_run_h16;
    return luthier__conv_finish(ctx, "conv2d", cv);
}

/* Makes a new layer cv read and write fp16 activations (NHWC, an F16 kernel, im2col or 1x1, or
   implicit GEMM on a hybrid one; depthwise: luthier__conv_h16_dw_fits): A is packed from fp16 by
   copying (interleaved kernels) or read in place (hybrid: fp16 rows, fp16 indirection), each
   block of results (bias, accumulation, clamp, activation in fp32) is narrowed to fp16 as it is
   done. Its create-time sizes stay valid (fp16 rows, indirection stages, are smaller than the
   fp32 ones they were made for); the stage is added to each thread's workspace. UNSUPPORTED for other layers, OVERFLOW when the workspace overflows. */
LUTHIER_PRIVATE luthier_status luthier__conv_use_h16(luthier_context *ctx, luthier_conv2d_layer *cv) {
    size_t stage;
    if (cv->algo == LUTHIER_CONV_DEPTHWISE) return luthier__conv_use_h16_dw(ctx, cv);
    if (cv->wino_m && cv->uk && cv->uk->family == LUTHIER_KERNELS_F16 && cv->d.layout == LUTHIER_LAYOUT_NHWC) {
        cv->h16 = 1; /* (Winograd F16: the stage is in its workspace) */
        cv->in_elem = cv->out_elem = sizeof(uint16_t);
        return luthier__conv_finish(ctx, "conv2d", cv);
    }
    if (!cv->uk || cv->uk->family != LUTHIER_KERNELS_F16 || cv->wino_m ||
        (cv->algo != LUTHIER_CONV_IM2COL && cv->algo != LUTHIER_CONV_1X1 && cv->algo != LUTHIER_CONV_IMPLICIT_GEMM) ||
        cv->d.layout != LUTHIER_LAYOUT_NHWC)
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "conv2d: fp16 activations need an NHWC im2col, 1x1, "
                             "implicit_gemm or winograd_4x3 layer on an F16 kernel");
    if (cv->rows_blk > SIZE_MAX / sizeof(float) / luthier__max_sz(cv->cout_g, 1) ||
        (stage = luthier__align_up(cv->rows_blk * cv->cout_g * sizeof(float))) > SIZE_MAX / 2 - cv->thread_ws)
        return luthier__fail(ctx, LUTHIER_STATUS_OVERFLOW, "conv2d: workspace size overflows");
    cv->h16 = 1;
    cv->in_elem = cv->out_elem = sizeof(uint16_t);
    cv->h16_stage_off = cv->thread_ws;
    cv->thread_ws += stage;
    return luthier__conv_finish(ctx, "conv2d", cv);
}

LUTHIER_API luthier_status luthier_conv2d_create(luthier_context *ctx,
                                                 const luthier_conv2d_desc *desc,
                                                 const float *weights, const float *bias,
                                                 luthier_conv2d_layer **out) {
    luthier_conv2d_desc d;
    luthier_conv2d_layer *cv;
    luthier_conv_algorithm algo;
    const luthier__kernel_entry *uk = NULL;
    int64_t oh, ow;
    int kernel = -1, nsplit;
    float model_split[LUTHIER_MAX_CLUSTERS];
    const luthier__kernel_entry *cuk[LUTHIER_MAX_CLUSTERS] = {NULL};
    luthier_status s;
    if (out) *out = NULL;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!desc || !out || !weights)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "conv2d: desc, weights and out must not be NULL");
    if ((s = luthier__conv_normalize(ctx, desc, &d, &oh, &ow)) != LUTHIER_STATUS_OK) return s;
    if (d.kernel && luthier__kernel_named(d.kernel) && luthier__kernel_named(d.kernel)->family == LUTHIER_KERNELS_F16)
        s = luthier__conv_choose_f16(ctx, &d, &algo, &uk);
    else if ((s = luthier__conv_choose(ctx, &d, &algo, &kernel)) == LUTHIER_STATUS_OK)
        uk = kernel >= 0 ? &luthier__ukernels[kernel] : NULL;
    if (s != LUTHIER_STATUS_OK) return s;
    if (uk && (s = luthier__conv_cluster_kernels(ctx, &d, uk, cuk)) != LUTHIER_STATUS_OK) return s;
    if (!uk || uk->family == LUTHIER_KERNELS_F32)
        if ((nsplit = luthier__cm_auto_split(ctx, &d, oh, ow, algo, kernel, model_split)) > 0)
            d.ratios = model_split, d.num_ratios = nsplit; /* copied into cv->ratios below */
    if ((s = luthier__conv_check_ratios(ctx, "conv2d", &d)) != LUTHIER_STATUS_OK) return s;
    cv = (luthier_conv2d_layer *)luthier__zalloc(sizeof *cv);
    if (!cv) return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "conv2d: cannot allocate the object");
    luthier__conv_init(ctx, cv, &d, algo, uk, cuk, oh, ow);
    cv->kernel = uk && uk->family == LUTHIER_KERNELS_F32 ? kernel : -1;
    cv->in_elem = cv->out_elem = sizeof(float);
    cv->depthwise = luthier__conv_dw_run;
    if (bias && (cv->bias = (float *)luthier__alloc((size_t)d.out_channels * sizeof(float))) != NULL) {
        memcpy(cv->bias, bias, (size_t)d.out_channels * sizeof(float));
        cv->weight_bytes += (size_t)d.out_channels * sizeof(float);
    }
    cv->wino_m = luthier__wino_m(algo);
    s = bias && !cv->bias ? LUTHIER_STATUS_OUT_OF_MEMORY
        : cv->wino_m && uk->family == LUTHIER_KERNELS_F16 ? luthier__conv_prepare_winograd16(ctx, cv, weights)
        : cv->wino_m ? luthier__conv_prepare_winograd(ctx, cv, weights)
        : algo == LUTHIER_CONV_DEPTHWISE ? luthier__conv_prepare_depthwise(cv, weights)
                                         : luthier__conv_prepare_gemm(ctx, cv, weights);
    if ((s = luthier__conv_created(ctx, "conv2d", cv, s, luthier_conv2d_destroy)) == LUTHIER_STATUS_OK) *out = cv;
    return s;
}

LUTHIER_PRIVATE luthier__isa luthier__conv_isa(const luthier_conv2d_layer *cv, unsigned features);

/* luthier_conv2d_info.cluster_kernels from a layer's kernels per cluster. */
LUTHIER_PRIVATE void luthier__info_kernels(const luthier__kernel_entry *const *cuk, luthier_conv2d_info *out) {
    int cl;
    for (cl = 0; cl < LUTHIER_MAX_CLUSTERS; cl++) out->cluster_kernels[cl] = cuk[cl] ? cuk[cl]->name : NULL;
}

/* luthier_conv2d_info of layer cv (self: the bytes of the object that holds it), whose
   routines run on isa. */
LUTHIER_PRIVATE void luthier__conv_info(const luthier_conv2d_layer *cv, size_t self, luthier__isa isa, luthier_conv2d_info *out) {
    out->algorithm = cv->algo;
    out->kernel = cv->uk ? cv->uk->name : "";
    luthier__info_kernels(cv->cuk, out);
    out->out_h = cv->oh;
    out->out_w = cv->ow;
    out->weight_bytes = cv->weight_bytes + self;
    out->workspace_bytes = cv->workspace_bytes;
    out->isa = luthier__isa_name(isa);
}

LUTHIER_API luthier_status luthier_conv2d_get_info(const luthier_conv2d_layer *cv, luthier_conv2d_info *out) {
    if (!cv || !out) return LUTHIER_STATUS_INVALID_ARGUMENT;
    luthier__conv_info(cv, sizeof *cv, luthier__conv_isa(cv, cv->features), out);
    return LUTHIER_STATUS_OK;
}

/* >>impl-conv-run: layout edges, im2col / indirection per block, depthwise, Winograd tiles */

/* Depthwise routines (luthier__dw_pick): one output pixel over all channels (x[t], w[t]: tap
   t's input pixel and weights), and runs of pixels on output rows (luthier__dw_run). */
typedef void (*luthier__dw_pixel_fn)(float *o, const float *const *x, const float *const *w,
                                     int taps, const float *bias, int accumulate, int clamp,
                                     float lo, float hi, size_t C);
typedef void (*luthier__dw_rows_fn)(const luthier__dw_run *runs, size_t nruns, int64_t stride, int64_t in_w,
                                    const float *w, const float *bias, int accumulate, int clamp, float lo,
                                    float hi, size_t C);

typedef struct luthier__conv_job {
    const luthier_conv2d_layer *cv;
    const luthier__kernel_entry *uk;
    const luthier__kernel_entry *cuk[LUTHIER_MAX_CLUSTERS]; /* per cluster of the running context */
    const void *in; /* NHWC, elements of cv->in_elem bytes */
    void *out;      /* NHWC, elements of cv->out_elem bytes */
    unsigned char *ws;
    size_t ws_stride;
    const struct luthier__qepilogue *q; /* int8: the output stage (luthier_int8.h); NULL: fp32 */
    /* int8 depthwise: the pixel routine (luthier__qdw_select) */
    void (*qdw)(const luthier_qconv2d_layer *, const luthier_qgemm_ukernel_args *, const uint8_t *const *, size_t);
    luthier__dw_pixel_fn dw_pixel; /* depthwise: luthier__dw_pick() */
    /* depthwise K x K (K = kernel_h), dilation 1: runs of pixels on output rows, or NULL */
    luthier__dw_rows_fn dw_rows;
    luthier__wino_in_fn wino_in;   /* Winograd: tile transforms of wino_vw channels per step */
    luthier__wino_out_fn wino_out;
    size_t wino_vw;
    size_t wino_unit;              /* Winograd: output tiles per unit (MR, or 1: see the run) */
    int by_panels;                 /* Winograd: units are NR panels of output channels (every
                                      thread takes all tiles), not MR tiles of tiles */
    luthier__gemm_split split;     /* GEMM algorithms: MR tiles of pixels, or (row group, NR
                                      panel of output channels) pairs */
    const luthier__prefetch_region *next; /* NULL, or the next layer's first B block: each range
                                      prefetches it during its last GEMM block */
    luthier__act_post post;        /* the layer's activation when it is not a clamp */
} luthier__conv_job;

/* Input row of output row o, tap k (may be outside [0, size)). */
LUTHIER__INLINE int64_t luthier__conv_in(int64_t o, int64_t k, int64_t stride, int64_t dil, int64_t pad) {
    return o * stride - pad + k * dil;
}

/* im2col rows [r0, r1) of group g of the NHWC input (elements of elem bytes: fp32, or uint8
   for int8 layers) into col: row stride kernel_h * kernel_w * cin_g elements, columns
   (kh, kw, ci); taps in the padding get bytes of value pad (fp32: 0; uint8: the input zero
   point). With one group and dilation_w 1 the taps of a kernel row that fall inside the image
   are adjacent pixels: one copy (stems: Cin = 3). */
LUTHIER_PRIVATE void luthier__conv_im2col(const luthier_conv2d_desc *d, int64_t oh, int64_t ow, size_t cin_g, size_t elem,
                                          int pad, const void *in, size_t g, size_t r0, size_t r1, void *col) {
    const size_t cin = (size_t)d->in_channels * elem, cg = cin_g * elem, ohw = (size_t)(oh * ow);
    const int rows = cg == cin && d->dilation_w == 1;
    unsigned char *dst = (unsigned char *)col;
    size_t r;
    for (r = r0; r < r1; r++) {
        const size_t n = r / ohw, p = r % ohw;
        const int64_t oy = (int64_t)(p / (size_t)ow), ox = (int64_t)(p % (size_t)ow);
        int64_t kh, kw;
        for (kh = 0; kh < d->kernel_h; kh++) {
            const int64_t iy = luthier__conv_in(oy, kh, d->stride_h, d->dilation_h, d->pad_top);
            const int out = iy < 0 || iy >= d->in_h;
            const unsigned char *row = out ? NULL : (const unsigned char *)in + (n * (size_t)d->in_h + (size_t)iy) * (size_t)d->in_w * cin;
            if (rows) { /* [0, lo) and [hi, kernel_w) in the padding, [lo, hi) in one piece */
                const int64_t ix0 = luthier__conv_in(ox, 0, d->stride_w, 1, d->pad_left);
                int64_t lo = ix0 < 0 ? -ix0 : 0, hi = d->in_w - ix0 < d->kernel_w ? d->in_w - ix0 : d->kernel_w;
                if (out || hi < lo) lo = hi = 0;
                memset(dst, pad, (size_t)lo * cg);
                if (hi > lo) memcpy(dst + (size_t)lo * cg, row + (size_t)(ix0 + lo) * cin, (size_t)(hi - lo) * cg);
                memset(dst + (size_t)hi * cg, pad, (size_t)(d->kernel_w - hi) * cg);
                dst += (size_t)d->kernel_w * cg;
                continue;
            }
            for (kw = 0; kw < d->kernel_w; kw++, dst += cg) {
                const int64_t ix = luthier__conv_in(ox, kw, d->stride_w, d->dilation_w, d->pad_left);
                if (out || ix < 0 || ix >= d->in_w) memset(dst, pad, cg);
                else memcpy(dst, row + (size_t)ix * cin + g * cg, cg);
            }
        }
    }
}

#define LUTHIER__IND_TAPS 64 /* taps with a running pointer; more take the per-pixel path */

/* dst[q] = p + q * st bytes for q < cnt (the interior pixels of an indirection tile). With
   GCC/Clang and 64-bit pointers, two addresses per 16-byte vector (SSE2 / NEON), computed as
   integers: no pointer past the stretch is formed. */
#if (defined(__GNUC__) || defined(__clang__)) && UINTPTR_MAX == UINT64_MAX
#define LUTHIER__ISA_IND_GATHER LUTHIER__ISA_PORTABLE
typedef uint64_t luthier__v2u64 __attribute__((vector_size(16)));
LUTHIER__INLINE void luthier__ind_fill(const float **dst, const unsigned char *p, size_t st, size_t cnt) {
    const uint64_t a = (uint64_t)(uintptr_t)p, b = (uint64_t)st;
    luthier__v2u64 v = {a, a + b};
    const luthier__v2u64 inc = {2 * b, 2 * b};
    size_t q = 0;
    for (; q + 2 <= cnt; q += 2, v += inc) memcpy(dst + q, &v, sizeof v);
    if (q < cnt) dst[q] = (const float *)(const void *)(p + q * st);
}
#else
#define LUTHIER__ISA_IND_GATHER LUTHIER__ISA_SCALAR
LUTHIER__INLINE void luthier__ind_fill(const float **dst, const unsigned char *p, size_t st, size_t cnt) {
    size_t q;
    for (q = 0; q < cnt; q++) dst[q] = (const float *)(const void *)(p + q * st);
}
#endif

/* Indirection pointers of rows [r0, r1) of group g, per MR tile (see >>driver-indirect), into
   the NHWC input of cv->in_elem-byte elements (fp32, or fp16 activations). The slots of a last
   partial tile repeat its last row. A segment is cin_g channels of one tap, or with wide
   segments (seg_n = kernel_h) one kernel row of kernel_w * cin elements: in place when the row
   lies inside the image, cv->zero when it lies in the top or bottom padding, else gathered with
   zeros into stage (seg_k elements per row and segment).
   Pixels whose taps all lie inside the image columns (the interior of an output row) take
   running pointers, one store per segment; the others (the borders) are worked out tap by
   tap (VGG-16's stem: 0.31 -> 0.13 ms per run, docs/DESIGN.md). */
LUTHIER_PRIVATE void luthier__conv_indirection(const luthier_conv2d_layer *cv, const void *input, size_t g,
                                               size_t r0, size_t r1, size_t mr, const float **ind, void *stage_at) {
    /* every field in a local: the pointer stores below may alias them for the compiler */
    const luthier_conv2d_desc *d = &cv->d;
    /* sizes in bytes: a pixel's channels, an image row, an image, a stage segment */
    const size_t e = cv->in_elem, cin = (size_t)d->in_channels * e, ohw = (size_t)(cv->oh * cv->ow), segk = cv->seg_k * e;
    const size_t ks = cv->seg_n, rowf = (size_t)d->in_w * cin, img = (size_t)d->in_h * rowf;
    const int64_t kh_n = d->kernel_h, kw_n = d->kernel_w, in_h = d->in_h, in_w = d->in_w;
    const int64_t sh = d->stride_h, sw = d->stride_w, dh = d->dilation_h, dw = d->dilation_w;
    const int64_t pt = d->pad_top, pl = d->pad_left, ow = cv->ow, oh = cv->oh;
    const unsigned char *const zero = (const unsigned char *)cv->zero, *in = (const unsigned char *)input;
    unsigned char *const stage = (unsigned char *)stage_at;
    const int wide = ks != cv->ks;
    const size_t rpad = r1 + (mr - (r1 - r0) % mr) % mr;
    /* output columns [xlo, xhi) read no padding column */
    const int64_t xlo = luthier__min_i64((pl + sw - 1) / sw, ow);
    const int64_t xnum = in_w - 1 - (kw_n - 1) * dw + pl;
    const int64_t xhi = ks > LUTHIER__IND_TAPS ? xlo : luthier__max_i64(xlo, luthier__min_i64(xnum < 0 ? 0 : xnum / sw + 1, ow));
    const size_t step = (size_t)sw * cin;
    size_t r = r0, n = r0 / ohw;
    int64_t oy = (int64_t)(r0 % ohw) / ow, ox = (int64_t)(r0 % ohw) % ow;
    in += g * cv->cin_g * e;
    const float **tile = ind; /* the current tile's slots; row i of it */
    const unsigned char *rows[LUTHIER__CONV_WIDE_KH];
    const unsigned char *cur[LUTHIER__IND_TAPS];
    size_t inc[LUTHIER__IND_TAPS];
    size_t i = 0, s;
    while (r < r1) { /* one stretch of an output row */
        const unsigned char *image = in + n * img;
        const int64_t iy0 = oy * sh - pt, end = ox + (int64_t)luthier__min_sz((size_t)(ow - ox), r1 - r);
        int64_t kh, kw;
        if (wide)
            for (kh = 0; kh < kh_n; kh++) {
                const int64_t iy = iy0 + kh * dh;
                rows[kh] = iy < 0 || iy >= in_h ? NULL : image + (size_t)iy * rowf;
            }
        while (ox < end) {
            if (ox >= xlo && ox < xhi) { /* interior: running pointers */
                const int64_t stop = luthier__min_i64(end, xhi);
                const size_t off = (size_t)(ox * sw - pl) * cin;
                for (s = 0, kh = 0; kh < kh_n; kh++) {
                    const int64_t iy = iy0 + kh * dh;
                    const int out = iy < 0 || iy >= in_h;
                    const unsigned char *row = out ? zero : image + (size_t)iy * rowf + off;
                    for (kw = 0; kw < (wide ? 1 : kw_n); kw++, s++) {
                        cur[s] = out ? zero : row + (size_t)(kw * dw) * cin;
                        inc[s] = out ? 0 : step;
                    }
                }
                while (ox < stop) { /* the stretch's pixels in this tile, segment by segment */
                    const size_t cnt = luthier__min_sz(mr - i, (size_t)(stop - ox));
                    const int more = (int64_t)cnt < stop - ox; /* (no pointer past the stretch) */
                    for (s = 0; s < ks; s++) {
                        luthier__ind_fill(tile + s * mr + i, cur[s], inc[s], cnt);
                        if (more) cur[s] = cur[s] + cnt * inc[s];
                    }
                    ox += (int64_t)cnt, r += cnt, i += cnt;
                    if (i == mr) i = 0, tile += ks * mr;
                }
                continue;
            }
            {
                const float **dst = tile + i;
#define LUTHIER__IND_PTR(q) ((const float *)(const void *)(q))
                const int64_t ix0 = ox * sw - pl;
                if (wide) {
                    unsigned char *st = stage + (r - r0) * ks * segk;
                    /* taps [a, b) of the row lie inside the image: one copy, zeros around it */
                    const int64_t a = luthier__min_i64(luthier__max_i64(-ix0, 0), kw_n);
                    const int64_t b = luthier__max_i64(luthier__min_i64(in_w - ix0, kw_n), a);
                    for (kh = 0; kh < kh_n; kh++, dst += mr, st += segk) {
                        if (!rows[kh]) {
                            *dst = LUTHIER__IND_PTR(zero);
                            continue;
                        }
                        memset(st, 0, (size_t)a * cin);
                        if (b > a) memcpy(st + (size_t)a * cin, rows[kh] + (size_t)(ix0 + a) * cin, (size_t)(b - a) * cin);
                        memset(st + (size_t)b * cin, 0, (size_t)(kw_n - b) * cin);
                        *dst = LUTHIER__IND_PTR(st);
                    }
                } else {
                    for (kh = 0; kh < kh_n; kh++) {
                        const int64_t iy = iy0 + kh * dh;
                        if (iy < 0 || iy >= in_h) {
                            for (kw = 0; kw < kw_n; kw++, dst += mr) *dst = LUTHIER__IND_PTR(zero);
                        } else {
                            const unsigned char *row = image + (size_t)iy * rowf;
                            for (kw = 0; kw < kw_n; kw++, dst += mr) {
                                const int64_t ix = ix0 + kw * dw;
                                *dst = LUTHIER__IND_PTR(ix >= 0 && ix < in_w ? row + (size_t)ix * cin : zero);
                            }
                        }
                    }
                }
#undef LUTHIER__IND_PTR
                ox++, r++;
                if (++i == mr) i = 0, tile += ks * mr;
            }
        }
        if (ox == ow) {
            ox = 0;
            if (++oy == oh) oy = 0, n++;
        }
    }
    for (; r < rpad; r++) { /* the last tile's spare slots repeat its last row */
        const size_t t = (r - r0) / mr, slot = (r - r0) % mr, last = (r1 - 1 - r0) % mr;
        for (s = 0; s < ks; s++) ind[(t * ks + s) * mr + slot] = ind[(t * ks + s) * mr + last];
    }
}

LUTHIER_PRIVATE void luthier__op_narrow_h16_run(unsigned features, const float *x, uint16_t *y, size_t n);
LUTHIER_PRIVATE void luthier__op_widen_h16_run(unsigned features, const uint16_t *x, float *y, size_t n); /* luthier_ops.h */

/* fp16 outputs (cv->h16): rows x the columns of NR panels [p0, p1) of a group, between out
   (fp16, rows out_channels apart) and the fp32 stage (rows cout_g apart): narrowed into out
   (narrow), or widened into the stage (before the GEMM of a layer that accumulates). */
LUTHIER_PRIVATE void luthier__conv_h16_move(const luthier_conv2d_layer *cv, float *stage, uint16_t *out, size_t rows,
                                            size_t p0, size_t p1, int narrow) {
    const size_t nr = cv->bl.nr, c0 = p0 * nr, c1 = luthier__min_sz(p1 * nr, cv->cout_g), cout = (size_t)cv->d.out_channels;
    size_t r;
    for (r = 0; r < rows && c1 > c0; r++) {
        if (narrow) luthier__op_narrow_h16_run(cv->features, stage + r * cv->cout_g + c0, out + r * cout + c0, c1 - c0);
        else luthier__op_widen_h16_run(cv->features, out + r * cout + c0, stage + r * cv->cout_g + c0, c1 - c0);
    }
}

/* MR-row tiles [t0, t1) of output pixels x NR panels [p0, p1) of each group's output channels:
   per block of rows_blk pixels, per group, build the block's A (nothing / im2col rows /
   indirection pointers), then the GEMM driver on the block's tiles and the panels. w: the
   thread's workspace. */
LUTHIER_PRIVATE void luthier__conv_gemm_rect(const luthier__conv_job *j, const luthier__kernel_entry *uk, unsigned char *w,
                                             size_t t0, size_t t1, size_t p0, size_t p1) {
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const size_t mr = (size_t)uk->mr, cout = (size_t)d->out_channels, cin = (size_t)d->in_channels;
    void *gws = w + cv->gemm_ws_off;
    float *stage = cv->h16 ? (float *)(void *)(w + cv->h16_stage_off) : NULL;
    uint16_t *h16_out = NULL;
    const size_t rend = luthier__min_sz(t1 * mr, cv->m);
    luthier_sgemm_desc ed;
    luthier__gemm_args ga;
    size_t r0, g;
    memset(&ed, 0, sizeof ed);
    ed.activation = d->activation;
    ed.clamp_min = d->clamp_min;
    ed.clamp_max = d->clamp_max;
    ed.accumulate = d->accumulate;
    memset(&ga, 0, sizeof ga);
    luthier__fill_epilogue(&ed, &ga);
    ga.post = j->post;
    ga.q = j->q;
    ga.n = cv->cout_g;
    ga.b_layout = &cv->bl;
    ga.ldc = cout;
    for (r0 = t0 * mr; r0 < rend; r0 += cv->rows_blk) {
        const size_t r1 = luthier__min_sz(r0 + cv->rows_blk, rend), tiles = luthier__div_up(r1 - r0, mr);
        for (g = 0; g < (size_t)d->groups; g++) {
            ga.next_layer = r1 == rend && g + 1 == (size_t)d->groups ? j->next : NULL;
            ga.m = r1 - r0;
            ga.b = cv->packed + g * cv->group_floats;
            ga.c = (unsigned char *)j->out + (r0 * cout + g * cv->cout_g) * cv->out_elem;
            if (cv->h16) { /* the GEMM writes the stage, narrowed below */
                if (d->accumulate) luthier__conv_h16_move(cv, stage, (uint16_t *)ga.c, r1 - r0, p0, p1, 0);
                h16_out = (uint16_t *)ga.c;
                ga.c = stage;
                ga.ldc = cv->cout_g;
            }
            ga.bias = cv->bias ? cv->bias + g * cv->cout_g : NULL;
            ga.q_col = g * cv->cout_g;
            ga.a_h16 = cv->h16;
            if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) {
                const float **ind = (const float **)(void *)w;
                luthier__conv_indirection(cv, j->in, g, r0, r1, mr, ind, w + cv->stage_off);
                ga.k = cv->seg_k;
                luthier__gemm_compute_indirect(uk, &cv->blk, &ga, cv->seg_n, ind, 0, tiles, p0, p1);
                if (cv->h16) luthier__conv_h16_move(cv, stage, h16_out, r1 - r0, p0, p1, 1);
                continue;
            }
            if (cv->direct_1x1) {
                ga.a = (const unsigned char *)j->in + (r0 * cin + g * cv->cin_g) * cv->in_elem;
                ga.lda = cin;
            } else {
                luthier__conv_im2col(d, cv->oh, cv->ow, cv->cin_g, cv->in_elem, cv->pad_value, j->in, g, r0, r1, w);
                ga.a = w;
                ga.lda = cv->kdim;
            }
            ga.k = cv->kdim;
            luthier__gemm_compute(uk, &cv->blk, &ga, 0, tiles, p0, p1, gws);
            if (cv->h16) luthier__conv_h16_move(cv, stage, h16_out, r1 - r0, p0, p1, 1);
        }
    }
}

/* Units of j->split (MR tiles of pixels, or (row group, panel) pairs). */
LUTHIER_PRIVATE void luthier__conv_gemm_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    unsigned char *w = j->ws + (size_t)thread * j->ws_stride;
    size_t r[4];
    while (luthier__split_next(&j->split, &begin, end, r)) luthier__conv_gemm_rect(j, j->cuk[cluster], w, r[0], r[1], r[2], r[3]);
}

/* The split of a GEMM layer on ctx (luthier__conv_split_for). */
LUTHIER_PRIVATE luthier__gemm_split luthier__conv_split(const luthier_context *ctx, const luthier_conv2d_layer *cv) {
    return luthier__conv_split_for(cv->m, cv->cout_g, (int)cv->d.groups, luthier__div_up(cv->m, (size_t)cv->uk->mr), cv->bl.panels,
                                   ctx->pool->num_threads, cv->bl.bytes, luthier__l2_bytes(ctx));
}

/* Units = output pixels; the inner loops run over contiguous channels (NHWC). */
/* One depthwise output pixel, portable: 8-channel blocks accumulated across all taps in a
   fixed-size array (the compiler keeps it in vector registers), then one store. */
LUTHIER_PRIVATE void luthier__dw_pixel_c(float *o, const float *const *x, const float *const *w,
                                         int taps, const float *bias, int accumulate, int clamp,
                                         float lo, float hi, size_t C) {
    size_t c, e;
    int t;
    for (c = 0; c < C; c += 8) {
        const size_t cn = C - c < 8 ? C - c : 8;
        float acc[8];
        for (e = 0; e < 8; e++) acc[e] = 0.0f;
        if (accumulate) for (e = 0; e < cn; e++) acc[e] = o[c + e];
        if (bias) for (e = 0; e < cn; e++) acc[e] += bias[c + e];
        if (cn == 8) {
            for (t = 0; t < taps; t++)
                for (e = 0; e < 8; e++) acc[e] += x[t][c + e] * w[t][c + e];
        } else {
            for (t = 0; t < taps; t++)
                for (e = 0; e < cn; e++) acc[e] += x[t][c + e] * w[t][c + e];
        }
        for (e = 0; e < cn; e++) {
            float v = acc[e];
            if (clamp) {
                v = v < lo ? lo : v;
                v = v > hi ? hi : v;
            }
            o[c + e] = v;
        }
    }
}

/* Picks the depthwise routines of layer d for the CPU features: the pixel routine and the row
   kernel (NULL: pixels one by one). Returns their ISA. */
LUTHIER_PRIVATE luthier__isa luthier__dw_pick(unsigned features, const luthier_conv2d_desc *d,
                                              luthier__dw_pixel_fn *pixel, luthier__dw_rows_fn *rows) {
    const int dil1 = d->dilation_h == 1 && d->dilation_w == 1;
    *pixel = luthier__dw_pixel_c;
    *rows = NULL;
    (void)features;
    (void)dil1;
#if LUTHIER__SIMD_X86
    if (features & LUTHIER_CPU_AVX512F) {
        *pixel = luthier__dw_pixel_avx512;
        if (d->kernel_h == 3 && d->kernel_w == 3 && dil1) *rows = luthier__dw_rows3x3_avx512;
        return LUTHIER__ISA_AVX512;
    }
    if (features & LUTHIER_CPU_AVX2_FMA) {
        *pixel = luthier__dw_pixel_avx2;
        return LUTHIER__ISA_AVX2;
    }
#endif
#if LUTHIER__SIMD_NEON
    if (features & LUTHIER_CPU_NEON) {
        *pixel = luthier__dw_pixel_neon;
        if (dil1 && d->kernel_h == d->kernel_w && (d->stride_w == 1 || d->stride_w == 2))
            *rows = d->kernel_h == 3 ? luthier__dw_rows3x3_neon : d->kernel_h == 5 ? luthier__dw_rows5x5_neon : NULL;
        return LUTHIER__ISA_NEON;
    }
#endif
    return LUTHIER__ISA_SCALAR;
}

/* The ISA a layer runs on with these CPU features: the depthwise routines; the GEMM kernel,
   or scalar when the Winograd transforms or the implicit GEMM's gather are (im2col and the
   strided 1x1 gather with memcpy). */
LUTHIER_PRIVATE luthier__isa luthier__conv_isa(const luthier_conv2d_layer *cv, unsigned features) {
    luthier__dw_pixel_fn pixel;
    luthier__dw_rows_fn rows;
    luthier__isa isa;
    if (cv->algo == LUTHIER_CONV_DEPTHWISE) return luthier__dw_pick(features, &cv->d, &pixel, &rows);
    isa = luthier__isa_of(cv->uk->isa);
    if (cv->wino_m) return luthier__isa_with(isa, luthier__wino_isa(features));
    if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) return luthier__isa_with(isa, LUTHIER__ISA_IND_GATHER);
    return isa;
}

#define LUTHIER__DW_MAX_TAPS 64 /* taps gathered per pixel at once; larger kernels go in rounds */

/* The run of a row kernel (luthier__dw_run, luthier__dw_run_h16) that starts at output pixel r
   (unit r of a depthwise run): the pixels that follow on its output row within [r, end), borders
   included. Returns their count; *ix0: the first pixel's first input column; rows[kh] (kh <
   kernel_h <= LUTHIER__DW_ROWS_K): the element offset of tap row kh's input row, -1 in the
   padding. */
LUTHIER_PRIVATE size_t luthier__dw_run_span(const luthier_conv2d_layer *cv, size_t r, size_t end, int64_t *ix0,
                                            ptrdiff_t rows[LUTHIER__DW_ROWS_K]) {
    const luthier_conv2d_desc *d = &cv->d;
    const size_t ohw = (size_t)(cv->oh * cv->ow), n = r / ohw, p = r % ohw, C = (size_t)d->in_channels;
    const size_t ox = p % (size_t)cv->ow, npix = (size_t)cv->ow - ox;
    const int64_t iy0 = (int64_t)(p / (size_t)cv->ow) * d->stride_h - d->pad_top;
    int64_t kh;
    *ix0 = (int64_t)ox * d->stride_w - d->pad_left;
    for (kh = 0; kh < d->kernel_h; kh++)
        rows[kh] = iy0 + kh < 0 || iy0 + kh >= d->in_h
                       ? -1
                       : (ptrdiff_t)((n * (size_t)d->in_h + (size_t)(iy0 + kh)) * (size_t)d->in_w * C);
    return npix < end - r ? npix : end - r;
}

LUTHIER_PRIVATE void luthier__conv_depthwise_range(void *arg, size_t begin, size_t end, int thread,
                                                   int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_conv2d_layer *cv = j->cv;
    const float *in = (const float *)j->in;
    float *out = (float *)j->out;
    const luthier_conv2d_desc *d = &cv->d;
    const size_t C = (size_t)d->in_channels, ohw = (size_t)(cv->oh * cv->ow);
    const luthier__dw_pixel_fn pixel = j->dw_pixel;
    float lo, hi;
    const int clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    size_t r;
    (void)thread;
    (void)cluster;
    const int64_t khw = d->kernel_h * d->kernel_w;
    const int64_t span_h = (d->kernel_h - 1) * d->dilation_h, span_w = (d->kernel_w - 1) * d->dilation_w;
    ptrdiff_t off[LUTHIER__DW_MAX_TAPS]; /* interior pixels: tap t at x0 + off[t] */
    luthier__dw_run runs[LUTHIER__DW_RUNS];
    size_t nruns = 0, done = begin;
    const float *wts[LUTHIER__DW_MAX_TAPS];
    if (khw <= LUTHIER__DW_MAX_TAPS) {
        int64_t t;
        for (t = 0; t < khw; t++) {
            off[t] = (ptrdiff_t)(((t / d->kernel_w) * d->dilation_h * d->in_w + (t % d->kernel_w) * d->dilation_w) *
                                 (int64_t)C);
            wts[t] = cv->packed + (size_t)t * C;
        }
    }
    for (r = begin; r < end; r++) {
        const size_t n = r / ohw, p = r % ohw;
        const int64_t oy = (int64_t)(p / (size_t)cv->ow), ox = (int64_t)(p % (size_t)cv->ow);
        const int64_t iy0 = oy * d->stride_h - d->pad_top, ix0 = ox * d->stride_w - d->pad_left;
        float *o = out + r * C;
        const float *xs[LUTHIER__DW_MAX_TAPS], *ws[LUTHIER__DW_MAX_TAPS];
        int taps = 0, first = 1;
        int64_t kh, kw;
        if (!nruns) luthier__act_rows(&j->post, out, C, C, &done, r, 0); /* (pending runs are not done) */
        if (j->dw_rows) {
            /* the pixels that follow on this output row, within [r, end), borders included;
               up to LUTHIER__DW_RUNS rows per call */
            luthier__dw_run *run = &runs[nruns++];
            ptrdiff_t rows[LUTHIER__DW_ROWS_K];
            run->o = o;
            run->npix = luthier__dw_run_span(cv, r, end, &run->ix0, rows);
            for (kh = 0; kh < d->kernel_h; kh++) run->rows[kh] = rows[kh] < 0 ? NULL : in + rows[kh];
            r += run->npix - 1;
            if (nruns == LUTHIER__DW_RUNS || r + 1 == end) {
                j->dw_rows(runs, nruns, d->stride_w, d->in_w, cv->packed, cv->bias, d->accumulate, clamp, lo, hi,
                           C);
                nruns = 0;
            }
            continue;
        }
        if (khw <= LUTHIER__DW_MAX_TAPS && iy0 >= 0 && iy0 + span_h < d->in_h && ix0 >= 0 &&
            ix0 + span_w < d->in_w) {
            /* interior: every tap is inside the image, at a fixed offset */
            const float *x0 = in + ((n * (size_t)d->in_h + (size_t)iy0) * (size_t)d->in_w + (size_t)ix0) * C;
            int t;
            for (t = 0; t < (int)khw; t++) xs[t] = x0 + off[t];
            pixel(o, xs, wts, (int)khw, cv->bias, d->accumulate, clamp, lo, hi, C);
            continue;
        }
        /* gather the taps that fall inside the image; flush every LUTHIER__DW_MAX_TAPS */
        for (kh = 0; kh < d->kernel_h; kh++) {
            const int64_t iy = luthier__conv_in(oy, kh, d->stride_h, d->dilation_h, d->pad_top);
            if (iy < 0 || iy >= d->in_h) continue;
            for (kw = 0; kw < d->kernel_w; kw++) {
                const int64_t ix = luthier__conv_in(ox, kw, d->stride_w, d->dilation_w, d->pad_left);
                if (ix < 0 || ix >= d->in_w) continue;
                xs[taps] = in + ((n * (size_t)d->in_h + (size_t)iy) * (size_t)d->in_w + (size_t)ix) * C;
                ws[taps] = cv->packed + (size_t)(kh * d->kernel_w + kw) * C;
                if (++taps == LUTHIER__DW_MAX_TAPS) { /* partial sum, no clamp yet */
                    pixel(o, xs, ws, taps, first ? cv->bias : NULL, first ? d->accumulate : 1, 0, lo, hi, C);
                    taps = 0;
                    first = 0;
                }
            }
        }
        pixel(o, xs, ws, taps, first ? cv->bias : NULL, first ? d->accumulate : 1, clamp, lo, hi, C);
    }
    luthier__act_rows(&j->post, out, C, C, &done, end, 1);
}

/* Winograd tile `tile` (fp32 and F16 runs): its first output pixel (NHWC index) and its rows
   and columns inside the output. */
LUTHIER_PRIVATE size_t luthier__wino_tile_pixel(const luthier_conv2d_layer *cv, size_t tile, int m, int *rows, int *cols) {
    const size_t n = tile / cv->wino_thw, p = tile % cv->wino_thw;
    const size_t oy0 = (p / cv->wino_tw) * (size_t)m, ox0 = (p % cv->wino_tw) * (size_t)m;
    *rows = (int)luthier__min_sz((size_t)m, (size_t)cv->oh - oy0);
    *cols = (int)luthier__min_sz((size_t)m, (size_t)cv->ow - ox0);
    return (n * (size_t)cv->oh + oy0) * (size_t)cv->ow + ox0;
}

/* The input transform of tile `tile` of group g into dst (positions ps apart), from the input
   in place (fp32 inside the image) or gathered into sa (alpha^2 x cin_g floats: zeros outside
   the image, fp16 widened); alpha = m + 2 (3x3 kernels). */
LUTHIER_PRIVATE void luthier__wino_tile_in(const luthier__conv_job *j, size_t tile, size_t g, int m, float *sa, float *dst,
                                           size_t ps) {
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const int al = m + 2;
    const size_t cig = cv->cin_g, cin = (size_t)d->in_channels, cvi = cig / j->wino_vw * j->wino_vw;
    const size_t n = tile / cv->wino_thw, p = tile % cv->wino_thw;
    const int64_t iy0 = (int64_t)(p / cv->wino_tw) * m - d->pad_top, ix0 = (int64_t)(p % cv->wino_tw) * m - d->pad_left;
    const int inside = !cv->h16 && iy0 >= 0 && ix0 >= 0 && iy0 + al <= d->in_h && ix0 + al <= d->in_w;
    const size_t rs = inside ? (size_t)d->in_w * cin : (size_t)al * cig, cs = inside ? cin : cig;
    const size_t first = ((n * (size_t)d->in_h + (size_t)iy0) * (size_t)d->in_w + (size_t)ix0) * cin + g * cig;
    const float *src = inside ? (const float *)j->in + first : sa;
    int r, q;
    for (r = 0; !inside && r < al; r++)
        for (q = 0; q < al; q++) {
            const int64_t iy = iy0 + r, ix = ix0 + q;
            const size_t at = ((n * (size_t)d->in_h + (size_t)iy) * (size_t)d->in_w + (size_t)ix) * cin + g * cig;
            float *to = sa + (size_t)(r * al + q) * cig;
            if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) memset(to, 0, cig * sizeof(float));
            else if (cv->h16) luthier__op_widen_h16_run(cv->features, (const uint16_t *)j->in + at, to, cig);
            else memcpy(to, (const float *)j->in + at, cig * sizeof(float));
        }
    if (cvi) j->wino_in(m, src, rs, cs, dst, ps, 0, cvi);
    if (cvi < cig) luthier__wino_in_LUTHIER__W1(m, src, rs, cs, dst, ps, cvi, cig);
}

/* The output transform of a tile (M at src, positions ps apart) into o (rows rs, columns cs
   apart), channels [c0, c1) of its group, with bias, accumulate and the activation: vectors
   below the last whole vector, the scalar instance above, whatever the range. */
LUTHIER_PRIVATE void luthier__wino_tile_out(const luthier__conv_job *j, int m, const float *src, size_t ps, float *o, size_t rs,
                                            size_t cs, int rows, int cols, const float *bias, size_t c0, size_t c1) {
    const luthier_conv2d_desc *d = &j->cv->d;
    const size_t cvo = j->cv->cout_g / j->wino_vw * j->wino_vw;
    float lo, hi;
    const int clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    int r;
    if (c0 < luthier__min_sz(c1, cvo))
        j->wino_out(m, src, ps, o, rs, cs, rows, cols, bias, d->accumulate, clamp, lo, hi, c0, luthier__min_sz(c1, cvo));
    if (luthier__max_sz(c0, cvo) < c1)
        luthier__wino_out_LUTHIER__W1(m, src, ps, o, rs, cs, rows, cols, bias, d->accumulate, clamp, lo, hi, luthier__max_sz(c0, cvo),
                                      c1);
    for (r = 0; r < rows; r++) luthier__act_rect(&j->post, o + r * rs + c0, cs, (size_t)cols, c1 - c0);
}

/* Winograd: units = MR-tile groups of output tiles (m x m pixels; tile t of image n is at
   row (t / tiles_w) * m, column (t % tiles_w) * m). Per block of wino_tb tiles, per group:
   input transform of each tile into V, the alpha^2 GEMMs V[pos] * U[pos] -> M[pos], output
   transform of each tile with bias, accumulate and activation. Every tile's arithmetic is the
   same whatever block it falls in, so the result does not depend on the split. */
LUTHIER_PRIVATE void luthier__conv_winograd_range(void *arg, size_t begin, size_t end, int thread,
                                                  int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_conv2d_layer *cv = j->cv;
    float *out = (float *)j->out;
    const luthier_conv2d_desc *d = &cv->d;
    const luthier__wino_tables wt = luthier__wino_get(cv->wino_m);
    const int m = wt.m, al = wt.alpha;
    const size_t P = (size_t)al * (size_t)al, mr = (size_t)j->uk->mr, tb = cv->wino_tb;
    const size_t cig = cv->cin_g, cog = cv->cout_g, cout = (size_t)d->out_channels;
    unsigned char *w = j->ws + (size_t)thread * j->ws_stride;
    float *V = (float *)(void *)w, *Mb = (float *)(void *)(w + cv->wino_m_off);
    float *sa = (float *)(void *)(w + cv->wino_s_off);
    void *gws = w + cv->gemm_ws_off;
    /* by panels: every thread transforms all tiles and takes panels [begin, end) */
    const size_t t_end = j->by_panels ? cv->wino_tiles : luthier__min_sz(end * j->wino_unit, cv->wino_tiles);
    const size_t p0 = j->by_panels ? begin : 0, p1 = j->by_panels ? end : cv->bl.panels;
    const size_t c0 = j->by_panels ? begin * cv->bl.nr : 0, c1 = j->by_panels ? luthier__min_sz(end * cv->bl.nr, cog) : cog;
    luthier__gemm_args ga;
    size_t t0, g, i, pos;
    int rows, cols;
    memset(&ga, 0, sizeof ga);
    ga.n = cog;
    ga.k = cig;
    ga.lda = cig;
    ga.ldc = cog;
    ga.b_layout = &cv->bl;
    ga.min = -INFINITY;
    ga.max = INFINITY;
    for (t0 = j->by_panels ? 0 : begin * j->wino_unit; t0 < t_end; t0 += tb) {
        const size_t nt = luthier__min_sz(tb, t_end - t0);
        for (g = 0; g < (size_t)d->groups; g++) {
            const float *LUTHIER__RESTRICT bias = cv->bias ? cv->bias + g * cog : NULL;
            for (i = 0; i < nt; i++) luthier__wino_tile_in(j, t0 + i, g, m, sa, V + i * cig, tb * cig); /* V[pos][i] */
            for (pos = 0; pos < P; pos++) {
                ga.m = nt;
                ga.a = V + pos * tb * cig;
                ga.b = cv->packed + (g * P + pos) * cv->group_floats;
                ga.c = Mb + pos * tb * cog;
                ga.next_b = pos + 1 < P ? cv->packed + (g * P + pos + 1) * cv->group_floats : NULL; /* the next position's B */
                ga.next_layer = t0 + nt >= t_end && g + 1 == (size_t)d->groups ? j->next : NULL;
                luthier__gemm_compute(j->cuk[cluster], &cv->blk, &ga, 0, luthier__div_up(nt, mr), p0, p1, gws);
            }
            for (i = 0; i < nt; i++) { /* Y = A^T M A, then the epilogue on the valid pixels */
                float *o = out + luthier__wino_tile_pixel(cv, t0 + i, m, &rows, &cols) * cout + g * cog;
                luthier__wino_tile_out(j, m, Mb + i * cog, tb * cog, o, (size_t)cv->ow * cout, cout, rows, cols, bias, c0, c1);
            }
        }
    }
}

#if LUTHIER__SIMD_NEON
#define luthier__wino16_4x16 luthier__wino16_4x16_neon
#else /* (never runs: luthier__conv_wino16_fits says no) */
LUTHIER_PRIVATE void luthier__wino16_4x16(const uint16_t *a, size_t lda, const uint16_t *b, size_t nb, float *c, size_t ldc) {
    (void)a, (void)lda, (void)b, (void)nb, (void)c, (void)ldc;
}
#endif

/* Winograd F16 (>>impl-conv-winograd16): tile `tile` of group g transformed into vf (36 x cp
   floats; channels past cin_g stay zero; sa: luthier__wino_tile_in's), then rounded into its
   row i of V (36 positions tb rows apart). */
LUTHIER_PRIVATE void luthier__wino16_tile_in(const luthier__conv_job *j, size_t tile, size_t g, float *sa, float *vf,
                                             uint16_t *V, size_t i) {
    const luthier_conv2d_layer *cv = j->cv;
    const size_t cp = luthier__wino16_cp(cv), tb = cv->wino_tb;
    size_t pos;
    luthier__wino_tile_in(j, tile, g, 4, sa, vf, cp);
    for (pos = 0; pos < 36; pos++) luthier__op_narrow_h16_run(cv->features, vf + pos * cp, V + (pos * tb + i) * cp, cp);
}

/* Y = A^T M A of tile `tile` of group g (M: row i of Mb, positions tb * kp apart) with bias,
   accumulate and activation into the output (fp32, or fp16 through the fp32 tile ot). */
LUTHIER_PRIVATE void luthier__wino16_tile_out(const luthier__conv_job *j, size_t tile, size_t g, const float *Mb, size_t i,
                                              float *ot) {
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const size_t cog = cv->cout_g, cout = (size_t)d->out_channels, kp = luthier__wino16_kp(cv), tb = cv->wino_tb;
    int rows, cols, r, q;
    const size_t at = luthier__wino_tile_pixel(cv, tile, 4, &rows, &cols) * cout + g * cog, ors = (size_t)cv->ow * cout;
    uint16_t *oh = cv->h16 ? (uint16_t *)j->out + at : NULL;
    float *o = cv->h16 ? ot : (float *)j->out + at;
    const size_t rs = cv->h16 ? 4 * cog : ors, cs = cv->h16 ? cog : cout;
    if (oh && d->accumulate)
        for (r = 0; r < rows; r++)
            for (q = 0; q < cols; q++) luthier__op_widen_h16_run(cv->features, oh + r * ors + q * cout, o + r * rs + q * cs, cog);
    luthier__wino_tile_out(j, 4, Mb + i * kp, tb * kp, o, rs, cs, rows, cols, cv->bias ? cv->bias + g * cog : NULL, 0, cog);
    for (r = 0; oh && r < rows; r++)
        for (q = 0; q < cols; q++) luthier__op_narrow_h16_run(cv->features, o + r * rs + q * cs, oh + r * ors + q * cout, cog);
}

/* The Winograd F16 run: units = groups of LUTHIER__WINO16_MR output tiles. Per block of
   wino_tb tiles and group: the input transforms into V, per position and panel of 16 outputs
   luthier__wino16_4x16_neon on each 4 tiles into M, the output transforms. Every tile's
   arithmetic is the same whatever block or thread it falls in. */
LUTHIER_PRIVATE void luthier__conv_winograd16_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const size_t P = 36, tb = cv->wino_tb, cp = luthier__wino16_cp(cv), kp = luthier__wino16_kp(cv);
    const size_t panels = kp / LUTHIER__WINO16_NR, t1 = luthier__min_sz(end * LUTHIER__WINO16_MR, cv->wino_tiles);
    unsigned char *w = j->ws + (size_t)thread * j->ws_stride;
    uint16_t *V = (uint16_t *)(void *)w;
    float *Mb = (float *)(void *)(w + cv->wino_m_off), *sa = (float *)(void *)(w + cv->wino_s_off);
    float *vf = (float *)(void *)(w + cv->gemm_ws_off), *ot = (float *)(void *)(w + cv->h16_stage_off);
    const uint16_t *U = (const uint16_t *)(const void *)cv->packed;
    size_t t0, g, i, pos, pn;
    (void)cluster;
    memset(vf, 0, P * cp * sizeof(float));
    for (t0 = begin * LUTHIER__WINO16_MR; t0 < t1; t0 += tb) {
        const size_t nt = luthier__min_sz(tb, t1 - t0), nr = luthier__div_up(nt, LUTHIER__WINO16_MR) * LUTHIER__WINO16_MR;
        for (g = 0; g < (size_t)d->groups; g++) {
            for (i = 0; i < nt; i++) luthier__wino16_tile_in(j, t0 + i, g, sa, vf, V, i);
            for (pos = 0; pos < P && nr > nt; pos++) memset(V + (pos * tb + nt) * cp, 0, (nr - nt) * cp * sizeof(uint16_t));
            for (pos = 0; pos < P; pos++)
                for (pn = 0; pn < panels; pn++)
                    for (i = 0; i < nr; i += LUTHIER__WINO16_MR)
                        luthier__wino16_4x16(V + (pos * tb + i) * cp, cp, U + ((g * P + pos) * panels + pn) * cp * LUTHIER__WINO16_NR,
                                             cp / 8, Mb + (pos * tb + i) * kp + pn * LUTHIER__WINO16_NR, kp);
            for (i = 0; i < nt; i++) luthier__wino16_tile_out(j, t0 + i, g, Mb, i, ot);
        }
    }
}

/* y[a * ys + b] = x[b * xs + a] for a < na, b < nb, in the registers of a CPU with these
   features (luthier__transpose_neon, _avx2, _sse2), else one float at a time. */
LUTHIER__INLINE void luthier__transpose_tile(const float *x, size_t xs, float *y, size_t ys, size_t nb, size_t na,
                                             unsigned features) {
    size_t a, b;
    (void)features;
#if LUTHIER__SIMD_NEON
    if (nb >= 4 && na >= 4) { /* (else no whole block: one float at a time) */
        luthier__transpose_neon(x, xs, y, ys, nb, na);
        return;
    }
#elif LUTHIER__SIMD_X86
    /* (below 8 rows or columns the plain loop beats blocks plus edges: 3-, 5-channel images) */
    if (nb >= 8 && na >= 8) {
        if (features & LUTHIER_CPU_AVX2_FMA) luthier__transpose_avx2(x, xs, y, ys, nb, na);
        else luthier__transpose_sse2(x, xs, y, ys, nb, na);
        return;
    }
#endif
    for (a = 0; a < na; a++) {
        float *yr = y + a * ys;
        const float *xr = x + a;
        for (b = 0; b < nb; b++) yr[b] = xr[b * xs];
    }
}

/* The ISA luthier__transpose_tile runs on with these features. */
LUTHIER_PRIVATE luthier__isa luthier__transpose_isa(unsigned features) {
    (void)features;
#if LUTHIER__SIMD_NEON
    return LUTHIER__ISA_NEON;
#elif LUTHIER__SIMD_X86
    return features & LUTHIER_CPU_AVX2_FMA ? LUTHIER__ISA_AVX2 : LUTHIER__ISA_SSE2;
#else
    return LUTHIER__ISA_SCALAR;
#endif
}

/* n matrices of rows x cols elements of elem bytes (4: fp32, int32; 1: uint8) transposed, each
   to cols x rows (4 bytes: luthier__transpose_tile). */
LUTHIER_PRIVATE void luthier__transpose_batches(const void *src, void *dst, size_t n, size_t rows, size_t cols,
                                                size_t elem, unsigned features) {
    const size_t bytes = rows * cols * elem;
    size_t b, r, c;
    for (b = 0; b < n; b++) {
        const unsigned char *x = (const unsigned char *)src + b * bytes;
        unsigned char *y = (unsigned char *)dst + b * bytes;
        if (elem == 4) {
            luthier__transpose_tile((const float *)(const void *)x, cols, (float *)(void *)y, rows, rows, cols, features);
            continue;
        }
        for (r = 0; r < rows; r++)
            for (c = 0; c < cols; c++) {
                if (elem == 4) memcpy(y + (c * rows + r) * 4, x + (r * cols + c) * 4, 4);
                else y[c * rows + r] = x[r * cols + c];
            }
    }
}

/* The B block a GEMM-based layer starts with (group 0; Winograd: position 0), for the layer
   that runs before it to prefetch; r->b = NULL for depthwise. */
LUTHIER_PRIVATE void luthier__conv2d_first_block(const luthier_conv2d_layer *cv, luthier__prefetch_region *r) {
    size_t steps;
    memset(r, 0, sizeof *r);
    if (!cv->uk || cv->bl.elem != sizeof(float) || !cv->packed) return; /* (prefetch plans are in floats) */
    if (cv->algo == LUTHIER_CONV_IMPLICIT_GEMM) /* whole segments, as luthier__gemm_compute_indirect */
        steps = luthier__min_sz(cv->seg_n, luthier__max_sz(1, cv->blk.kc / cv->seg_k)) * cv->seg_k;
    else
        steps = luthier__min_sz(cv->blk.kc, cv->wino_m ? cv->cin_g : cv->kdim);
    r->b = cv->packed;
    r->panel_stride = cv->bl.panel_stride;
    r->chunk = steps * cv->bl.nr;
    r->panels = luthier__div_up(luthier__min_sz(cv->blk.nc, cv->cout_g), cv->bl.nr);
}

LUTHIER_PRIVATE luthier_status luthier__conv2d_run_next(luthier_context *ctx, const luthier_conv2d_layer *cv,
                                                        const float *input, float *output,
                                                        const luthier__prefetch_region *next);

/* The kernel of each cluster of ctx running a layer on uk whose creating context's clusters
   had the kernels made[] (NULL past them): made[cl] where ctx runs it, else uk. */
LUTHIER_PRIVATE void luthier__run_kernels(const luthier_context *ctx, const luthier__kernel_entry *uk,
                                          const luthier__kernel_entry *const *made, const luthier__kernel_entry **out) {
    int cl;
    for (cl = 0; cl < ctx->pool->num_clusters; cl++)
        out[cl] = made[cl] && luthier__kernel_runs(made[cl], ctx->cpu_features) ? made[cl] : uk;
}

LUTHIER_API luthier_status luthier_conv2d_run(luthier_context *ctx, const luthier_conv2d_layer *cv,
                                              const float *input, float *output) {
    return luthier__conv2d_run_next(ctx, cv, input, output, NULL);
}

/* Winograd layer cv's split on threads (luthier__wino_split_for; vw: the transforms' width). */
LUTHIER_PRIVATE luthier__wino_split luthier__conv_wino_split(const luthier_conv2d_layer *cv, size_t vw, int threads, size_t l2) {
    const size_t alpha = (size_t)luthier__wino_get(cv->wino_m).alpha;
    return luthier__wino_split_for(cv->wino_tiles, cv->wino_tb, (size_t)cv->uk->mr, cv->bl.nr, cv->bl.panels, cv->cout_g, vw,
                                   cv->group_floats * sizeof(float) * alpha * alpha, threads, l2);
}

#if LUTHIER__SIMD_NEON
#define luthier__dw_h16_pixel luthier__dw_h16_pixel_neon
#define luthier__dw_h16_rows luthier__dw_h16_rows_neon
#else /* (never run: luthier__conv_h16_dw_fits says no) */
LUTHIER_PRIVATE void luthier__dw_h16_pixel(uint16_t *o, const uint16_t *const *x, const uint16_t *const *w, int taps,
                                          const float *bias, int accumulate, int clamp, float lo, float hi, size_t C) {
    (void)o, (void)x, (void)w, (void)taps, (void)bias, (void)accumulate, (void)clamp, (void)lo, (void)hi, (void)C;
}
LUTHIER_PRIVATE void luthier__dw_h16_rows(const luthier__dw_run_h16 *runs, size_t nruns, int64_t stride, int64_t in_w,
                                         const uint16_t *w, const float *bias, int accumulate, int clamp, float lo, float hi,
                                         size_t C, int K) {
    (void)runs, (void)nruns, (void)stride, (void)in_w, (void)w, (void)bias, (void)accumulate, (void)clamp, (void)lo, (void)hi;
    (void)C, (void)K;
}
#endif

/* Whether fp16 depthwise layer d runs its interior pixels through the segment kernels
   (luthier__dw_h16_rows): 3x3 or 5x5, dilation 1, stride 1 or 2 along the row. */
LUTHIER_PRIVATE int luthier__dw_h16_rows_fit(const luthier_conv2d_desc *d) {
    return d->kernel_h == d->kernel_w && (d->kernel_h == 3 || d->kernel_h == 5) && d->dilation_h == 1 && d->dilation_w == 1 &&
           (d->stride_w == 1 || d->stride_w == 2);
}

/* Units [r, end) of an fp16 depthwise run as row-kernel runs (luthier__dw_run_span), up to
   LUTHIER__DW_RUNS rows per call. */
LUTHIER_PRIVATE void luthier__conv_dw_h16_runs(const luthier__conv_job *j, size_t r, size_t end) {
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const uint16_t *in = (const uint16_t *)j->in, *wp = (const uint16_t *)(const void *)cv->packed;
    uint16_t *out = (uint16_t *)j->out;
    const size_t C = (size_t)d->in_channels;
    luthier__dw_run_h16 runs[LUTHIER__DW_RUNS];
    size_t nruns = 0;
    float lo, hi;
    const int clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    while (r < end) {
        luthier__dw_run_h16 *run = &runs[nruns++];
        ptrdiff_t rows[LUTHIER__DW_ROWS_K];
        int64_t kh;
        run->o = out + r * C;
        run->npix = luthier__dw_run_span(cv, r, end, &run->ix0, rows);
        for (kh = 0; kh < d->kernel_h; kh++) run->rows[kh] = rows[kh] < 0 ? NULL : in + rows[kh];
        r += run->npix;
        if (nruns == LUTHIER__DW_RUNS || r == end) {
            luthier__dw_h16_rows(runs, nruns, d->stride_w, d->in_w, wp, cv->bias, d->accumulate, clamp, lo, hi, C, (int)d->kernel_h);
            nruns = 0;
        }
    }
}

/* The depthwise run on fp16 activations (luthier__conv_use_h16_dw): units = output pixels, the
   taps inside the image in (kh, kw) order; the row kernels' families by runs (segment kernels
   for the interior pixels), the rest pixel by pixel. */
LUTHIER_PRIVATE void luthier__conv_dw_h16_range(void *arg, size_t begin, size_t end, int thread, int cluster) {
    const luthier__conv_job *j = (const luthier__conv_job *)arg;
    const luthier_conv2d_layer *cv = j->cv;
    const luthier_conv2d_desc *d = &cv->d;
    const uint16_t *in = (const uint16_t *)j->in, *wp = (const uint16_t *)(const void *)cv->packed;
    uint16_t *out = (uint16_t *)j->out;
    const size_t C = (size_t)d->in_channels, ohw = (size_t)(cv->oh * cv->ow);
    float lo, hi;
    const int clamp = luthier__activation_bounds(d->activation, d->clamp_min, d->clamp_max, &lo, &hi);
    size_t r;
    (void)thread, (void)cluster;
    if (luthier__dw_h16_rows_fit(d)) {
        luthier__conv_dw_h16_runs(j, begin, end);
        return;
    }
    for (r = begin; r < end; r++) {
        const size_t n = r / ohw, p = r % ohw;
        const int64_t iy0 = (int64_t)(p / (size_t)cv->ow) * d->stride_h - d->pad_top;
        const int64_t ix0 = (int64_t)(p % (size_t)cv->ow) * d->stride_w - d->pad_left;
        const uint16_t *xs[LUTHIER__DW_H16_TAPS], *ws[LUTHIER__DW_H16_TAPS];
        int taps = 0;
        int64_t kh, kw;
        for (kh = 0; kh < d->kernel_h; kh++) {
            const int64_t iy = iy0 + kh * d->dilation_h;
            for (kw = 0; iy >= 0 && iy < d->in_h && kw < d->kernel_w; kw++) {
                const int64_t ix = ix0 + kw * d->dilation_w;
                if (ix < 0 || ix >= d->in_w) continue;
                xs[taps] = in + ((n * (size_t)d->in_h + (size_t)iy) * (size_t)d->in_w + (size_t)ix) * C;
                ws[taps++] = wp + (size_t)(kh * d->kernel_w + kw) * C;
            }
        }
        luthier__dw_h16_pixel(out + r * C, xs, ws, taps, cv->bias, d->accumulate, clamp, lo, hi, C);
    }
}

LUTHIER_PRIVATE luthier_status luthier__conv_dw_run_h16(luthier_context *ctx, luthier__conv_job *job) {
    const luthier_conv2d_desc *d = &job->cv->d;
    return luthier__parallel(ctx, job->cv->m, d->schedule, d->ratios, d->num_ratios, 0, luthier__conv_dw_h16_range, job);
}

/* The depthwise run of the fp32 datatype: units = output pixels. */
LUTHIER_PRIVATE luthier_status luthier__conv_dw_run(luthier_context *ctx, luthier__conv_job *job) {
    const luthier_conv2d_desc *d = &job->cv->d;
    (void)luthier__dw_pick(ctx->cpu_features, d, &job->dw_pixel, &job->dw_rows);
    return luthier__parallel(ctx, job->cv->m, d->schedule, d->ratios, d->num_ratios, 0, luthier__conv_depthwise_range, job);
}

/* A run of layer cv of any datatype (q: int8's output stage, NULL for fp32); next: NULL, or
   the first block of the layer that runs next (plans). NCHW layers go through NHWC copies in
   the workspace. */
LUTHIER_PRIVATE luthier_status luthier__conv_run(luthier_context *ctx, const luthier_conv2d_layer *cv, const void *input,
                                                 void *output, const luthier__prefetch_region *next,
                                                 const struct luthier__qepilogue *q) {
    const char *op = q ? "qconv2d" : "conv2d";
    const luthier_conv2d_desc *d;
    luthier__conv_job job;
    luthier_status s;
    size_t total, off = 0;
    unsigned char *ws;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    ctx->error[0] = 0;
    if (!cv || !input || !output)
        return luthier__fail(ctx, LUTHIER_STATUS_INVALID_ARGUMENT, "%s: layer, input and output must not be NULL", op);
    d = &cv->d;
    if (cv->uk && !luthier__kernel_runs(cv->uk, ctx->cpu_features))
        return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "%s: the weights were packed for %s, which this context cannot run",
                             op, cv->uk->name);
    if (!(total = luthier__conv_ws_bytes(d, cv->m, cv->in_elem, cv->out_elem, cv->thread_ws, ctx->pool->num_threads)) ||
        !(ws = (unsigned char *)luthier__context_workspace(ctx, total)))
        return luthier__fail(ctx, LUTHIER_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of workspace", op, total);
    memset(&job, 0, sizeof job);
    job.cv = cv;
    job.in = input;
    job.out = output;
    job.q = q;
    job.next = next && next->b ? next : NULL;
    luthier__act_post_init(ctx->cpu_features, d->activation, d->clamp_min, d->clamp_max, &job.post);
    if (d->layout == LUTHIER_LAYOUT_NCHW) {
        const size_t hw = (size_t)(d->in_h * d->in_w), ohw = (size_t)(cv->oh * cv->ow);
        off = luthier__align_up((size_t)d->batch * hw * (size_t)d->in_channels * cv->in_elem);
        luthier__transpose_batches(input, ws, (size_t)d->batch, (size_t)d->in_channels, hw, cv->in_elem, ctx->cpu_features);
        if (d->accumulate)
            luthier__transpose_batches(output, ws + off, (size_t)d->batch, (size_t)d->out_channels, ohw, cv->out_elem, ctx->cpu_features);
        job.in = ws;
        job.out = ws + off;
        off += luthier__align_up(cv->m * (size_t)d->out_channels * cv->out_elem);
    }
    job.ws = ws + off;
    job.ws_stride = cv->thread_ws;
    job.uk = cv->uk;
    luthier__run_kernels(ctx, cv->uk, cv->cuk, job.cuk);
    if (cv->algo == LUTHIER_CONV_DEPTHWISE) {
        s = cv->depthwise(ctx, &job);
    } else if (cv->wino_m && cv->uk->family == LUTHIER_KERNELS_F16) {
        char why[200];
        if (!luthier__conv_wino16_fits(ctx->cpu_features, why, sizeof why))
            return luthier__fail(ctx, LUTHIER_STATUS_UNSUPPORTED, "%s: algorithm winograd_4x3 %s", op, why);
        job.wino_vw = (size_t)luthier__wino_select(ctx->cpu_features, &job.wino_in, &job.wino_out);
        s = luthier__parallel(ctx, luthier__div_up(cv->wino_tiles, LUTHIER__WINO16_MR), d->schedule, d->ratios, d->num_ratios, 0,
                              luthier__conv_winograd16_range, &job);
    } else if (cv->wino_m) {
        luthier__wino_split ws;
        job.wino_vw = (size_t)luthier__wino_select(ctx->cpu_features, &job.wino_in, &job.wino_out);
        ws = luthier__conv_wino_split(cv, job.wino_vw, ctx->pool->num_threads, luthier__l2_bytes(ctx));
        job.wino_unit = ws.unit; /* every tile's arithmetic is the same whatever the split */
        job.by_panels = ws.by_panels;
        s = luthier__parallel(ctx, ws.units, d->schedule, d->ratios, d->num_ratios, 0, luthier__conv_winograd_range, &job);
    } else {
        job.split = luthier__conv_split(ctx, cv);
        s = luthier__parallel(ctx, luthier__split_units(&job.split), d->schedule, d->ratios, d->num_ratios, 0,
                              luthier__conv_gemm_range, &job);
    }
    if (s == LUTHIER_STATUS_OK && d->layout == LUTHIER_LAYOUT_NCHW)
        luthier__transpose_batches(job.out, output, (size_t)d->batch, (size_t)(cv->oh * cv->ow), (size_t)d->out_channels, cv->out_elem,
                                   ctx->cpu_features);
    return s;
}

/* luthier_conv2d_run; next: NULL, or the first block of the layer that runs next (plans) */
LUTHIER_PRIVATE luthier_status luthier__conv2d_run_next(luthier_context *ctx, const luthier_conv2d_layer *cv,
                                                        const float *input, float *output,
                                                        const luthier__prefetch_region *next) {
    return luthier__conv_run(ctx, cv, input, output, next, NULL);
}

LUTHIER_API luthier_status luthier_conv2d(luthier_context *ctx, const luthier_conv2d_desc *desc,
                                          const float *input, const float *weights,
                                          const float *bias, float *output) {
    luthier_conv2d_layer *cv = NULL;
    luthier_status s;
    if (!ctx) return LUTHIER_STATUS_INVALID_ARGUMENT;
    if ((s = luthier_conv2d_create(ctx, desc, weights, bias, &cv)) != LUTHIER_STATUS_OK) return s;
    s = luthier_conv2d_run(ctx, cv, input, output);
    luthier_conv2d_destroy(cv);
    return s;
}

#ifdef __cplusplus
}
#endif

/* The execution engine: operator kernels, then graphs and plans. */
#include "luthier_ops.h"
#include "luthier_gbt.h"
#ifndef LUTHIER_GRAPH_IMPLEMENTATION
#define LUTHIER_GRAPH_IMPLEMENTATION
#endif
#include "luthier_graph.h"
#ifndef LUTHIER_INT8_IMPLEMENTATION
#define LUTHIER_INT8_IMPLEMENTATION
#endif
#include "luthier_int8.h" /* before the tuner, which measures int8 layers */

#ifdef __cplusplus
extern "C" {
#endif

/* >>impl-kernel-families: the kernel tables of luthier_kernel_family, behind one registry API,
   each with the datatype the GEMM driver serves its kernels with (>>dtype in luthier_gemm.h). */
#define LUTHIER__F32_DRIVER sizeof(float), 0, luthier__pack_a_block, luthier__scall
static const luthier__kernel_table luthier__kernel_tables[LUTHIER_KERNELS_COUNT] = {
    {luthier__ukernels, LUTHIER__NUM_UKERNELS, "luthier_sgemm_ukernel_", "f32", "f32", "f32", LUTHIER__F32_DRIVER},
    {luthier__hkernels, LUTHIER__NUM_HKERNELS, "luthier_sgemm_ukernel_", "f32", "f16", "f32", LUTHIER__F32_DRIVER},
    {luthier__qkernels, LUTHIER__NUM_QKERNELS, "luthier_qgemm_ukernel_", "u8", "i8", "i32", 1, 1, luthier__qpack_a_block,
     luthier__qcall},
    {luthier__fkernels, LUTHIER__NUM_FKERNELS, "luthier_sgemm_ukernel_", "f16", "f16", "f16", LUTHIER__F32_DRIVER}};

LUTHIER_PRIVATE const luthier__kernel_table *luthier__dtype(const luthier__kernel_entry *uk) {
    return &luthier__kernel_tables[uk->family];
}

LUTHIER_API int luthier_kernels_count(luthier_kernel_family f) {
    return (unsigned)f < (unsigned)LUTHIER_KERNELS_COUNT ? luthier__kernel_tables[f].count : 0;
}

LUTHIER_API luthier_status luthier_kernels_get(luthier_kernel_family f, int index, luthier_kernel_info *out) {
    const luthier__kernel_table *t;
    const luthier__kernel_entry *e;
    if (!out || (unsigned)f >= (unsigned)LUTHIER_KERNELS_COUNT) return LUTHIER_STATUS_INVALID_ARGUMENT;
    t = &luthier__kernel_tables[f];
    if (index < 0 || index >= t->count) return LUTHIER_STATUS_INVALID_ARGUMENT;
    e = &t->rows[index];
    memset(out, 0, sizeof *out);
    out->name = e->name;
    out->isa = e->isa;
    out->mr = e->mr;
    out->nr = e->nr;
    out->k_unroll = e->k_unroll;
    out->kind = e->kind;
    out->required_cpu_features = e->required_cpu_features;
    out->available = luthier__kernel_runs(e, luthier_cpu_features());
    out->family = f;
    out->a_type = t->a_type;
    out->b_type = t->b_type;
    out->c_type = t->c_type;
    return LUTHIER_STATUS_OK;
}

LUTHIER_API luthier_status luthier_kernels_find(luthier_kernel_family f, const char *name, int *index) {
    const luthier__kernel_table *t;
    size_t pl;
    int i;
    if (!name || !index || (unsigned)f >= (unsigned)LUTHIER_KERNELS_COUNT) return LUTHIER_STATUS_INVALID_ARGUMENT;
    t = &luthier__kernel_tables[f];
    pl = strlen(t->prefix);
    for (i = 0; i < t->count; i++)
        if (strcmp(name, t->rows[i].name) == 0 || strcmp(name, t->rows[i].name + pl) == 0) {
            *index = i;
            return LUTHIER_STATUS_OK;
        }
    return LUTHIER_STATUS_NOT_FOUND;
}

LUTHIER_PRIVATE const luthier__kernel_entry *luthier__kernel_in(luthier_kernel_family f, int index) {
    return &luthier__kernel_tables[f].rows[index];
}

LUTHIER_PRIVATE const luthier__kernel_entry *luthier__kernel_named(const char *name) {
    int f, i;
    for (f = 0; f < (int)LUTHIER_KERNELS_COUNT; f++)
        if (luthier_kernels_find((luthier_kernel_family)f, name, &i) == LUTHIER_STATUS_OK) return &luthier__kernel_tables[f].rows[i];
    return NULL;
}

LUTHIER_API int luthier_kernel_count(void) { return luthier_kernels_count(LUTHIER_KERNELS_F32); }
LUTHIER_API luthier_status luthier_kernel_get(int index, luthier_kernel_info *out) {
    return luthier_kernels_get(LUTHIER_KERNELS_F32, index, out);
}
LUTHIER_API luthier_status luthier_kernel_find(const char *name, int *index) {
    return luthier_kernels_find(LUTHIER_KERNELS_F32, name, index);
}
LUTHIER_API int luthier_qkernel_count(void) { return luthier_kernels_count(LUTHIER_KERNELS_INT8); }
LUTHIER_API luthier_status luthier_qkernel_get(int index, luthier_kernel_info *out) {
    return luthier_kernels_get(LUTHIER_KERNELS_INT8, index, out);
}
LUTHIER_API luthier_status luthier_qkernel_find(const char *name, int *index) {
    return luthier_kernels_find(LUTHIER_KERNELS_INT8, name, index);
}

#ifdef __cplusplus
}
#endif
#ifndef LUTHIER_TUNE_IMPLEMENTATION
#define LUTHIER_TUNE_IMPLEMENTATION
#endif
#include "luthier_tune.h"

#endif /* LUTHIER_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 The luthier authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT
OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
