/* bench_anchors.h - the reference libraries luthier-bench compares against ("anchors").

   Compiled in when the Makefile finds them (it then passes the macros and the libraries):
     LUTHIER_HAVE_OPENBLAS  OpenBLAS cblas_sgemm, row-major, B plain (no pre-packing API)
     LUTHIER_HAVE_DNNL      oneDNN dnnl_sgemm('N', 'N'), row-major by its documentation
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

#endif /* LUTHIER_BENCH_ANCHORS_H */
