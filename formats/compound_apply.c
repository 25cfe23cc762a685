/* The compound formats' products at the operator's boundary (sps_cmp_apply,
 * formats/format.h).  The operator's vectors, so every solver's, are AoS: an
 * entry's d scalars together.  A matrix built with vector-layout soa runs its
 * kernels on SoA vectors (d arrays), so each product relays x out into backend
 * scratch (the index family's vec_relayout), y too when b != 0, runs the kernels
 * there and relays y back: two or three extra passes over the vectors, paid at
 * every product.  It is a candidate of the autotuner like any layout, and the
 * seed of solvers that keep their vectors SoA (which would skip the passes). */
#include "formats/format.h"

sps_status sps_cmp_apply(sps_matrix A, sps_op_mode mode, sps_entry_layout vlay, sps_cmp_call call, sps_cplx a,
                         const void *x, sps_cplx b, void *y)
{
    if (vlay != SPS_ENTRY_SOA) return call(A, mode, SPS_ENTRY_AOS, a, x, b, y);
    sps_exec *ex = sps_ex(A->ctx);
    const sps_idx_kernels *k = sps_kidx(A->ctx);
    const int d = sps_entry_dim(A->entry);
    const sps_index nx = mode == SPS_OP_N ? A->m : A->n, ny = mode == SPS_OP_N ? A->n : A->m;
    const size_t es = sps_scalar_size(A->t), /* a complex scalar moves whole */ xb = (size_t)nx * d * es, yb = (size_t)ny * d * es;
    void *xs = NULL, *ys = NULL;
    sps_status st = sps_exec_alloc(ex, &xs, xb);
    if (st == SPS_OK) st = sps_exec_alloc(ex, &ys, yb);
    if (st == SPS_OK) st = k->vec_relayout(ex, es, d, nx, 1, x, xs);
    if (st == SPS_OK && (b.re != 0.0 || b.im != 0.0)) st = k->vec_relayout(ex, es, d, ny, 1, y, ys);
    if (st == SPS_OK) st = call(A, mode, SPS_ENTRY_SOA, a, xs, b, ys);
    if (st == SPS_OK) st = k->vec_relayout(ex, es, d, ny, 0, ys, y);
    sps_exec_release(ex, xs); /* stream-ordered: after the work queued above */
    sps_exec_release(ex, ys);
    return st;
}
