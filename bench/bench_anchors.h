/* bench_anchors.h - the reference libraries luthier-bench compares against ("anchors").

   Compiled in when the Makefile finds them (it then passes the macros and the libraries):
     LUTHIER_HAVE_OPENBLAS  OpenBLAS cblas_sgemm, row-major, B plain (no pre-packing API)
     LUTHIER_HAVE_DNNL      oneDNN dnnl_sgemm('N', 'N'), row-major by its documentation; and
                            the dnnl_convolution_forward primitive (bench_dnnl_conv below)
   Without them every function here still exists and reports "not linked".

   Threads. OpenBLAS: openblas_set_num_threads(N). oneDNN: Debian's libdnnl is built with the
   OpenMP runtime (DNNL_CPU_RUNTIME = OMP; `ldd libdnnl.so.2` shows libgomp.so.1), so its
   parallel regions use omp_get_max_threads(). The bench is not an OpenMP program and does not
   link libgomp itself, so it declares omp_set_num_threads / omp_get_max_threads as weak symbols:
   the dynamic linker binds them to the libgomp that libdnnl pulled in. If oneDNN was built with
   another runtime they stay NULL and the tool says that oneDNN's own threading is used
   (for TBB builds: the TBB default, i.e. all cores).
*/
#ifndef LUTHIER_BENCH_ANCHORS_H
#define LUTHIER_BENCH_ANCHORS_H

#ifdef LUTHIER_HAVE_OPENBLAS
#include <cblas.h>
/* OpenBLAS extensions (declared by OpenBLAS's cblas.h; repeated in case cblas.h is another
   vendor's through Debian's alternatives). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
#endif

#ifdef LUTHIER_HAVE_DNNL
#include <dnnl.h>
#if defined(__GNUC__) || defined(__clang__)
extern void omp_set_num_threads(int n) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));
#define BENCH_HAVE_WEAK_OMP 1
#endif
#endif

enum { BENCH_ANCHOR_OPENBLAS = 0, BENCH_ANCHOR_DNNL = 1, BENCH_NUM_ANCHORS = 2 };

static const char *const bench_anchor_names[BENCH_NUM_ANCHORS] = {"OpenBLAS", "oneDNN"};

static int bench_anchor_linked(int which) {
#ifdef LUTHIER_HAVE_OPENBLAS
    if (which == BENCH_ANCHOR_OPENBLAS) return 1;
#endif
#ifdef LUTHIER_HAVE_DNNL
    if (which == BENCH_ANCHOR_DNNL) return 1;
#endif
    (void)which;
    return 0;
}

/* C = A * B, all row-major and tight (A m x k, B k x n, C m x n). Returns 0 on success. */
static int bench_anchor_sgemm(int which, int64_t m, int64_t n, int64_t k, const float *a,
                              const float *b, float *c) {
#ifdef LUTHIER_HAVE_OPENBLAS
    if (which == BENCH_ANCHOR_OPENBLAS) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)n, 0.0f, c, (int)n);
        return 0;
    }
#endif
#ifdef LUTHIER_HAVE_DNNL
    if (which == BENCH_ANCHOR_DNNL)
        return dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n) == dnnl_success ? 0 : -1;
#endif
    (void)which; (void)m; (void)n; (void)k; (void)a; (void)b; (void)c;
    return -1;
}

/* Asks every linked anchor to use `threads` threads. Notes go to `notes` (stderr). */
static void bench_anchors_set_threads(int threads, FILE *notes) {
#ifdef LUTHIER_HAVE_OPENBLAS
    openblas_set_num_threads(threads);
#endif
#ifdef LUTHIER_HAVE_DNNL
#ifdef BENCH_HAVE_WEAK_OMP
    if (omp_set_num_threads) omp_set_num_threads(threads);
    else
#endif
        fprintf(notes, "note: oneDNN is not using libgomp here: its own runtime picks the thread "
                       "count (OMP_NUM_THREADS / all cores), not --threads %d\n", threads);
#endif
    (void)threads;
    (void)notes;
}

/* One line per anchor: what is linked and with how many threads. */
static void bench_anchors_describe(FILE *out) {
#ifdef LUTHIER_HAVE_OPENBLAS
    fprintf(out, "anchor   OpenBLAS: %s, %d thread(s)\n", openblas_get_config(),
            openblas_get_num_threads());
#else
    fprintf(out, "anchor   OpenBLAS: not linked (build without LUTHIER_HAVE_OPENBLAS)\n");
#endif
#ifdef LUTHIER_HAVE_DNNL
    {
        const dnnl_version_t *v = dnnl_version();
        const unsigned rt = v->cpu_runtime;
        int thr = -1;
#ifdef BENCH_HAVE_WEAK_OMP
        if (omp_get_max_threads) thr = omp_get_max_threads();
#endif
        fprintf(out, "anchor   oneDNN: v%d.%d.%d, CPU runtime %s", v->major, v->minor, v->patch,
                rt == DNNL_RUNTIME_OMP ? "OpenMP" : rt == DNNL_RUNTIME_TBB ? "TBB"
                : rt == DNNL_RUNTIME_SEQ ? "sequential" : rt == DNNL_RUNTIME_THREADPOOL ? "threadpool"
                : "other");
        if (thr > 0) fprintf(out, ", %d thread(s)\n", thr);
        else fprintf(out, ", threads: its runtime's default\n");
    }
#else
    fprintf(out, "anchor   oneDNN: not linked (build without LUTHIER_HAVE_DNNL)\n");
#endif
}

/* ---- oneDNN convolution (conv command) ---------------------------------------------------------

   A dnnl_convolution_forward primitive (forward_inference, fp32, bias) whose source, weights and
   destination descriptors use format tag `any`, so oneDNN picks its own (blocked) layouts;
   algorithm dnnl_convolution_auto, or dnnl_convolution_direct when auto is not accepted. The
   NHWC input and OIHW (GOIHW) weights are reordered into its layouts once, at setup; a run is
   the primitive's execution only (+ dnnl_stream_wait). bench_dnnl_conv_output reorders the
   destination back to NHWC (outside any timing). With sum, the primitive carries a sum post-op
   (destination = convolution + bias + destination: a fused residual add), and
   bench_dnnl_conv_set_dst loads the residual into the destination. */

typedef struct bench_dnnl_conv {
    int ready;          /* set up and runnable */
    char impl[64];      /* implementation name (dnnl_query_impl_info_str) */
    const char *alg;    /* "auto" or "direct" */
    char error[160];    /* why setup failed */
#ifdef LUTHIER_HAVE_DNNL
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst;
    dnnl_exec_arg_t args[4];
#endif
} bench_dnnl_conv;

#ifdef LUTHIER_HAVE_DNNL
/* Reorders memory `from` into `to` (once, untimed). */
static dnnl_status_t bench_dnnl_reorder(dnnl_engine_t eng, dnnl_stream_t strm, dnnl_memory_t from,
                                        dnnl_memory_t to) {
    const dnnl_memory_desc_t *fmd, *tmd;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_exec_arg_t a[2];
    dnnl_status_t st;
    if ((st = dnnl_memory_get_memory_desc(from, &fmd)) != dnnl_success ||
        (st = dnnl_memory_get_memory_desc(to, &tmd)) != dnnl_success)
        return st;
    if ((st = dnnl_reorder_primitive_desc_create(&rpd, fmd, eng, tmd, eng, NULL)) != dnnl_success)
        return st;
    st = dnnl_primitive_create(&r, rpd);
    dnnl_primitive_desc_destroy(rpd);
    if (st != dnnl_success) return st;
    a[0].arg = DNNL_ARG_FROM;
    a[0].memory = from;
    a[1].arg = DNNL_ARG_TO;
    a[1].memory = to;
    st = dnnl_primitive_execute(r, strm, 2, a);
    if (st == dnnl_success) st = dnnl_stream_wait(strm);
    dnnl_primitive_destroy(r);
    return st;
}
#endif

static void bench_dnnl_conv_destroy(bench_dnnl_conv *c) {
#ifdef LUTHIER_HAVE_DNNL
    if (c->prim) dnnl_primitive_destroy(c->prim);
    if (c->pd) dnnl_primitive_desc_destroy(c->pd);
    if (c->src) dnnl_memory_destroy(c->src);
    if (c->wei) dnnl_memory_destroy(c->wei);
    if (c->bia) dnnl_memory_destroy(c->bia);
    if (c->dst) dnnl_memory_destroy(c->dst);
    if (c->strm) dnnl_stream_destroy(c->strm);
    if (c->eng) dnnl_engine_destroy(c->eng);
#endif
    memset(c, 0, sizeof *c);
}

/* Sets up the convolution of a batch-1 layer; in: NHWC, w: OIHW, bias: cout values; sum: with
   the residual-add post-op; deconv: a transposed convolution (dnnl_deconvolution_forward,
   direct) instead, w [cin, cout / groups, k, k] (ONNX / PyTorch ConvTranspose2d), oh / ow its
   output. Returns 0, or -1 with c->error set (not linked, or oneDNN refused). */
static int bench_dnnl_conv_setup(bench_dnnl_conv *c, int64_t cin, int64_t h, int64_t w,
                                 int64_t cout, int64_t k, int64_t stride, int64_t pad,
                                 int64_t groups, int64_t oh, int64_t ow, const float *in,
                                 const float *wt, const float *bias, int sum, int deconv) {
    memset(c, 0, sizeof *c);
#ifdef LUTHIER_HAVE_DNNL
    {
        dnnl_memory_desc_t src_any, wei_any, dst_any, bia_md, src_user, wei_user, bia_user;
        dnnl_convolution_desc_t cd;
        dnnl_deconvolution_desc_t dd_desc;
        dnnl_dims_t sd, wd, dd, bd, strides, padl;
        dnnl_memory_t usrc = NULL, uwei = NULL;
        dnnl_post_ops_t po = NULL;
        dnnl_primitive_attr_t attr = NULL;
        const char *impl = NULL;
        const char *step = "engine";
        dnnl_status_t st;
        int wnd, ai;
        sd[0] = 1; sd[1] = cin; sd[2] = h; sd[3] = w;
        dd[0] = 1; dd[1] = cout; dd[2] = oh; dd[3] = ow;
        bd[0] = cout;
        if (deconv && groups > 1) { /* w is [cin, cout / groups, k, k]: per group g its giohw */
            wnd = 5;
            wd[0] = groups; wd[1] = cout / groups; wd[2] = cin / groups; wd[3] = k; wd[4] = k;
        } else if (deconv) { /* w is [cin, cout, k, k]: oneDNN's iohw of an (o = cout, i = cin) kernel */
            wnd = 4;
            wd[0] = cout; wd[1] = cin; wd[2] = k; wd[3] = k;
        } else if (groups > 1) {
            wnd = 5;
            wd[0] = groups; wd[1] = cout / groups; wd[2] = cin / groups; wd[3] = k; wd[4] = k;
        } else {
            wnd = 4;
            wd[0] = cout; wd[1] = cin; wd[2] = k; wd[3] = k;
        }
        strides[0] = strides[1] = stride;
        padl[0] = padl[1] = pad;
        if ((st = dnnl_engine_create(&c->eng, dnnl_cpu, 0)) != dnnl_success) goto fail;
        step = "stream";
        if ((st = dnnl_stream_create(&c->strm, c->eng, dnnl_stream_default_flags)) != dnnl_success)
            goto fail;
        step = "memory descriptors";
        if ((st = dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any)) ||
            (st = dnnl_memory_desc_init_by_tag(&wei_any, wnd, wd, dnnl_f32, dnnl_format_tag_any)) ||
            (st = dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any)) ||
            (st = dnnl_memory_desc_init_by_tag(&bia_md, 1, bd, dnnl_f32, dnnl_x)) ||
            (st = dnnl_memory_desc_init_by_tag(&src_user, 4, sd, dnnl_f32, dnnl_nhwc)) ||
            (st = dnnl_memory_desc_init_by_tag(&wei_user, wnd, wd, dnnl_f32,
                                               deconv ? (groups > 1 ? dnnl_giohw : dnnl_iohw)
                                                      : groups > 1 ? dnnl_goihw : dnnl_oihw)) ||
            (st = dnnl_memory_desc_init_by_tag(&bia_user, 1, bd, dnnl_f32, dnnl_x)))
            goto fail;
        if (sum) {
            step = "sum post-op";
            if ((st = dnnl_post_ops_create(&po)) || (st = dnnl_post_ops_append_sum(po, 1.0f)) ||
                (st = dnnl_primitive_attr_create(&attr)) || (st = dnnl_primitive_attr_set_post_ops(attr, po)))
                goto fail;
        }
        /* auto first, then direct */
        for (ai = 0; ai < 2 && !c->pd; ai++) {
            step = "convolution descriptor / primitive descriptor";
            if (deconv) {
                st = ai ? dnnl_unimplemented
                        : dnnl_deconvolution_forward_desc_init(&dd_desc, dnnl_forward_inference, dnnl_deconvolution_direct,
                                                               &src_any, &wei_any, &bia_md, &dst_any, strides, padl, padl);
                if (st == dnnl_success) st = dnnl_primitive_desc_create(&c->pd, &dd_desc, attr, c->eng, NULL);
                if (st == dnnl_success) c->alg = "deconvolution direct";
                else c->pd = NULL;
                continue;
            }
            st = dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                    ai == 0 ? dnnl_convolution_auto
                                                            : dnnl_convolution_direct,
                                                    &src_any, &wei_any, &bia_md, &dst_any,
                                                    strides, padl, padl);
            if (st == dnnl_success) st = dnnl_primitive_desc_create(&c->pd, &cd, attr, c->eng, NULL);
            if (st == dnnl_success) c->alg = ai == 0 ? "auto" : "direct";
            else c->pd = NULL;
        }
        if (!c->pd) goto fail;
        if (dnnl_primitive_desc_query(c->pd, dnnl_query_impl_info_str, 0, (void *)&impl) ==
                dnnl_success && impl)
            snprintf(c->impl, sizeof c->impl, "%s", impl);
        step = "memories";
        if ((st = dnnl_memory_create(&c->src, dnnl_primitive_desc_query_md(c->pd, dnnl_query_src_md, 0),
                                     c->eng, DNNL_MEMORY_ALLOCATE)) ||
            (st = dnnl_memory_create(&c->wei, dnnl_primitive_desc_query_md(c->pd, dnnl_query_weights_md, 0),
                                     c->eng, DNNL_MEMORY_ALLOCATE)) ||
            (st = dnnl_memory_create(&c->dst, dnnl_primitive_desc_query_md(c->pd, dnnl_query_dst_md, 0),
                                     c->eng, DNNL_MEMORY_ALLOCATE)) ||
            (st = dnnl_memory_create(&c->bia, &bia_user, c->eng, (void *)(uintptr_t)bias)) ||
            (st = dnnl_memory_create(&usrc, &src_user, c->eng, (void *)(uintptr_t)in)) ||
            (st = dnnl_memory_create(&uwei, &wei_user, c->eng, (void *)(uintptr_t)wt)))
            goto fail;
        step = "input reorders";
        st = bench_dnnl_reorder(c->eng, c->strm, usrc, c->src);
        if (st == dnnl_success) st = bench_dnnl_reorder(c->eng, c->strm, uwei, c->wei);
        dnnl_memory_destroy(usrc);
        dnnl_memory_destroy(uwei);
        usrc = uwei = NULL;
        if (st != dnnl_success) goto fail;
        step = "primitive";
        if ((st = dnnl_primitive_create(&c->prim, c->pd)) != dnnl_success) goto fail;
        c->args[0].arg = DNNL_ARG_SRC;
        c->args[0].memory = c->src;
        c->args[1].arg = DNNL_ARG_WEIGHTS;
        c->args[1].memory = c->wei;
        c->args[2].arg = DNNL_ARG_BIAS;
        c->args[2].memory = c->bia;
        c->args[3].arg = DNNL_ARG_DST;
        c->args[3].memory = c->dst;
        c->ready = 1;
        if (attr) dnnl_primitive_attr_destroy(attr);
        if (po) dnnl_post_ops_destroy(po);
        return 0;
    fail:
        if (attr) dnnl_primitive_attr_destroy(attr);
        if (po) dnnl_post_ops_destroy(po);
        if (usrc) dnnl_memory_destroy(usrc);
        if (uwei) dnnl_memory_destroy(uwei);
        bench_dnnl_conv_destroy(c);
        snprintf(c->error, sizeof c->error, "oneDNN %s failed (dnnl_status %d)", step, (int)st);
        return -1;
    }
#else
    (void)cin; (void)h; (void)w; (void)cout; (void)k; (void)stride; (void)pad; (void)groups;
    (void)oh; (void)ow; (void)in; (void)wt; (void)bias; (void)sum; (void)deconv;
    snprintf(c->error, sizeof c->error, "oneDNN not linked (build without LUTHIER_HAVE_DNNL)");
    return -1;
#endif
}

/* One execution of the primitive (the timed operation). Returns 0 on success. */
static int bench_dnnl_conv_run(void *arg) {
    bench_dnnl_conv *c = (bench_dnnl_conv *)arg;
#ifdef LUTHIER_HAVE_DNNL
    if (!c->ready) return -1;
    if (dnnl_primitive_execute(c->prim, c->strm, 4, c->args) != dnnl_success) return -1;
    return dnnl_stream_wait(c->strm) == dnnl_success ? 0 : -1;
#else
    (void)c;
    return -1;
#endif
}

/* Copies between the destination and nhwc (batch 1, oh x ow x cout): into the destination
   when into_dst, else out of it. Returns 0 on success. */
static int bench_dnnl_conv_dst_copy(bench_dnnl_conv *c, int64_t cout, int64_t oh, int64_t ow,
                                    float *nhwc, int into_dst) {
#ifdef LUTHIER_HAVE_DNNL
    dnnl_memory_desc_t md;
    dnnl_memory_t m = NULL;
    dnnl_dims_t dd;
    dnnl_status_t st;
    if (!c->ready) return -1;
    dd[0] = 1; dd[1] = cout; dd[2] = oh; dd[3] = ow;
    if (dnnl_memory_desc_init_by_tag(&md, 4, dd, dnnl_f32, dnnl_nhwc) != dnnl_success ||
        dnnl_memory_create(&m, &md, c->eng, nhwc) != dnnl_success)
        return -1;
    st = into_dst ? bench_dnnl_reorder(c->eng, c->strm, m, c->dst) : bench_dnnl_reorder(c->eng, c->strm, c->dst, m);
    dnnl_memory_destroy(m);
    return st == dnnl_success ? 0 : -1;
#else
    (void)c; (void)cout; (void)oh; (void)ow; (void)nhwc; (void)into_dst;
    return -1;
#endif
}

/* The destination reordered into out (NHWC). Returns 0 on success. */
static int bench_dnnl_conv_output(bench_dnnl_conv *c, int64_t cout, int64_t oh, int64_t ow, float *out) {
    return bench_dnnl_conv_dst_copy(c, cout, oh, ow, out, 0);
}

/* The destination loaded from residual (NHWC; for the sum post-op). Returns 0 on success. */
static int bench_dnnl_conv_set_dst(bench_dnnl_conv *c, int64_t cout, int64_t oh, int64_t ow, const float *residual) {
    return bench_dnnl_conv_dst_copy(c, cout, oh, ow, (float *)(uintptr_t)residual, 1);
}

#endif /* LUTHIER_BENCH_ANCHORS_H */
