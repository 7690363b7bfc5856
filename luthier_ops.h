/* luthier_ops.h - operator kernels of the execution engine: everything that is not convolution
   or GEMM (pooling, element-wise, normalization, softmax, attention, data movement).
   Part of luthier (MIT license, see luthier.h). Include luthier.h, never this file on its own:
   luthier.h pulls it into the implementation.

   CONTRACT (for the engine in luthier_graph.h)
   - Every function works on dense row-major fp32 buffers described by the arguments; the engine
     has validated every shape and size before it calls (no argument checking needed here
     beyond what protects memory). Sizes are size_t element counts.
   - "NHWC" functions take the physical layout [n][h][w][c].
   - Each function spreads its work over the context's threads with luthier__parallel (RATIO
     schedule with cfg->ratios when given, else the default) and returns its status
     (LUTHIER_STATUS_OK, or the failure that luthier__parallel reported). Results never depend
     on the number of threads or the split (bit-identical).
   - No allocation: scratch space, when needed, comes from the caller (documented per function).
   - x == y (in place) is allowed where marked "in place ok".

   TABLE OF CONTENTS: >>ops-common >>ops-unary >>ops-binary >>ops-pool >>ops-norm >>ops-softmax
   >>ops-move >>ops-attention
*/
#ifndef LUTHIER_H_INCLUDED
#error "luthier_ops.h is part of luthier: include luthier.h instead"
#endif

#if defined(LUTHIER_IMPLEMENTATION) && !defined(LUTHIER__OPS_IMPL_DONE)
#define LUTHIER__OPS_IMPL_DONE

#ifdef __cplusplus
extern "C" {
#endif

/* >>ops-common: how a step is split over the clusters (the workload knob of non-conv ops). */
typedef struct luthier__op_cfg {
    luthier_schedule schedule;
    const float *ratios; /* NULL = default weights */
    int num_ratios;
} luthier__op_cfg;

#ifdef __cplusplus
}
#endif

#endif /* LUTHIER_IMPLEMENTATION */
