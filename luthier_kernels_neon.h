/* luthier_kernels_neon.h - AArch64 NEON fp32 GEMM microkernels of luthier (placeholder). */
#ifndef LUTHIER__GEMM_IMPL_DONE
#error "luthier_kernels_neon.h is part of luthier: include luthier.h instead"
#endif
