/* DIA: diagonal storage (Bell & Garland, NVR-2008-004, the DIA format; Saad,
 * "Iterative Methods for Sparse Linear Systems", §3.4).
 *
 * Layout (everything in backend memory), for an n x m matrix:
 *   off    ndiag offsets (column - row) of the diagonals holding at least one
 *          entry, increasing, in [-(n-1), m-1];
 *   dval   ndiag dense diagonals of n slots each: slot d*n + i holds entry
 *          (i, i + off[d]); slots where the diagonal leaves the matrix
 *          (i + off[d] outside [0, m)) or where the pattern has no entry are
 *          padding with value 0;
 *   mask   one bit per slot, set exactly for the stored entries: word
 *          d*nw + i/32, bit i%32, nw = ceil(n/32).
 * Why a mask: the round trip must be exact, explicit zeros (and -0.0) included,
 *   and a zero value cannot tell an explicit zero from padding.  The bitmap is
 *   the simplest exact design: to_csr emits exactly the set bits, and it costs
 *   1 bit per slot (1/64 of the f64 values, 1/32 of f32).  The SpMV kernels
 *   also skip padding by it, which makes DIA's product the same sum as CSR's
 *   (row i's entries in column order): bit-identical to CSR on the CPU, and an
 *   Inf or NaN in x never meets a padding zero (0 * Inf would be NaN).
 * Fill: stored slots = ndiag * n.  A matrix whose pattern is not banded makes
 *   this explode, so the build counts the diagonals first (a flag per possible
 *   diagonal and their prefix sum on the backend; the count to the host) and
 *   refuses, before allocating
 *   the diagonals, when ndiag * n > max_fill * nnz (options max-fill, default
 *   10, and force, dia_options), with the number of diagonals, the projected
 *   entries and bytes, the fill factor and the suggestion to use hyb or sell;
 *   force converts anyway.
 *   Footprint = ndiag * (4 + n s + 4 nw) bytes; with a value dictionary (option values,
 *   formats/vdict.h) s is 1 and the table's ndict values are added.
 * Kernels: one thread per row walking the diagonals (coalesced: slot d*n + i
 *   for consecutive i; the mask word is shared by 32 rows); SpMV^T one thread
 *   per column j gathering over the diagonals (i = j - off[d]): no atomics, so
 *   both are deterministic on every backend.
 * Compound entries: dia_layout (offsets + mask) is the index part; values are a
 *   separate array addressed by slot d*n + i, so a block or quaternion DIA
 *   keeps the layout and changes only the entry size of dval and the
 *   per-entry multiply. */
#include "formats/format.h"
#include "formats/csr_backend.h"
#include "formats/vdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sps_index ndiag; /* stored diagonals */
    sps_index nw;    /* mask words per diagonal: ceil(n / 32) */
    sps_index *off;  /* ndiag offsets, increasing */
    uint32_t *mask;  /* ndiag * nw words: bit set = stored entry */
} dia_layout;

typedef struct {
    dia_layout L;
    void *dval; /* ndiag * n values, slot d*n + i, 0 in padding; with a dictionary, ndiag * n indices (uint8_t) */
    sps_vdict vd; /* the option values (formats/vdict.h): the dictionary, or none */
} dia_store;

static void dia_destroy(sps_matrix A)
{
    dia_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, s->L.off);
    sps_dfree(A->ctx, s->L.mask);
    sps_dfree(A->ctx, s->dval);
    sps_dfree(A->ctx, s->vd.dict);
    free(s);
    A->store = NULL;
}

static size_t dia_bytes(int64_t ndiag, sps_index n, sps_index nw, size_t ss)
{
    return (size_t)ndiag * (sizeof(sps_index) + (size_t)n * ss + (size_t)nw * sizeof(uint32_t));
}

static const sps_option_desc dia_options[] = {SPS_FMT_OPT_MAX_FILL, SPS_FMT_OPT_FORCE, SPS_FMT_OPT_VALUES};

static sps_status dia_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    sps_context ctx = B->ctx;
    const sps_mat_kernels *k = sps_kmat(ctx, B->t);
    const size_t ss = sps_scalar_size(B->t);
    const double max_fill = sps_opt_num(opt, "max-fill");
    dia_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "DIA handle"));
    B->store = s; /* on failure the caller destroys B, freeing what was allocated */
    dia_layout *L = &s->L;
    L->nw = (sps_index)(((int64_t)B->n + 31) / 32);

    /* 1. which of the n + m - 1 diagonals hold entries, and their prefix sum (the
     * flag -> diagonal map), on the backend: only the count comes to the host */
    const int64_t nflag = B->n > 0 && B->m > 0 ? (int64_t)B->n + B->m - 1 : 0;
    sps_index *dflag = NULL, *dmap = NULL, *count = NULL;
    sps_status st;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&dflag, (size_t)nflag * sizeof *dflag));
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&dmap, ((size_t)nflag + 1) * sizeof *dmap), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->dia_mark(sps_ex(ctx), B->n, B->m, src->rowptr, src->col, dflag), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->dia_scan(sps_ex(ctx), nflag, dflag, dmap), done);
    SPS_CHECK_GOTO(st, sps_ddownload(ctx, (void **)&count, dmap + nflag, sizeof *count, "the DIA diagonal count"), done);
    const int64_t ndiag = *count;

    /* 2. the blow-up check, before the diagonals are allocated */
    const int64_t stored = ndiag * (int64_t)B->n;
    const size_t bytes = dia_bytes(ndiag, B->n, L->nw, ss);
    if ((double)stored > max_fill * (double)B->nnz && !sps_opt_int(opt, "force")) {
        st = sps_error(ctx, SPS_ERR_ARG,
                       "DIA: %lld diagonals x %d rows = %lld stored entries (%zu bytes) for %lld nonzeros: fill factor "
                       "%.2f exceeds max-fill %g; use hyb or sell for this matrix (or set force to convert anyway)",
                       (long long)ndiag, (int)B->n, (long long)stored, bytes, (long long)B->nnz,
                       B->nnz ? (double)stored / (double)B->nnz : 0.0, max_fill);
        goto done;
    }
    if (stored > SPS_MAX_STORED) {
        st = sps_error(ctx, SPS_ERR_ALLOC, "DIA: %lld diagonals x %d rows = %lld stored entries (at most %lld)",
                       (long long)ndiag, (int)B->n, (long long)stored, (long long)SPS_MAX_STORED);
        goto done;
    }
    L->ndiag = (sps_index)ndiag; /* <= nnz <= INT32_MAX: every diagonal counted holds an entry */

    /* 3. the offsets */
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&L->off, (size_t)ndiag * sizeof *L->off), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->dia_offsets(sps_ex(ctx), B->n, nflag, dflag, dmap, L->off), done);

    /* 4. the diagonals and the mask */
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &s->dval, (size_t)ndiag * (size_t)B->n * ss), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&L->mask, (size_t)ndiag * (size_t)L->nw * sizeof(uint32_t)), done);
    SPS_CHECK_GOTO(st, k->dia_fill(sps_ex(ctx), B->n, B->m, src->rowptr, src->col, src->val, dmap, L->ndiag, s->dval, L->mask),
                   done);
    /* 5. the values as a dictionary's indices, where asked and possible (padding's zeros count) */
    SPS_CHECK_GOTO(st, sps_vdict_apply(B, sps_vdict_mode(opt), &s->dval, (int64_t)ndiag * B->n, &s->vd), done);
done: /* dflag and dmap are freed in stream order, after the offsets and the fill have read them */
    sps_dfree(ctx, dflag);
    sps_dfree(ctx, dmap);
    free(count);
    return st;
}

static sps_status dia_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    return sps_csr_build_from_host(B, h, opt, dia_build);
}

/* Back to CSR on the host: row i's entries are the set mask bits of slot
 * (d, i), d increasing = column increasing. */
static sps_status dia_to_csr(sps_matrix A, sps_csr_host *out)
{
    dia_store *s = A->store;
    const dia_layout *L = &s->L;
    const size_t ss = sps_scalar_size(A->t), nslot = (size_t)L->ndiag * (size_t)A->n;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    sps_index *off = NULL;
    uint32_t *mask = NULL;
    char *dval = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&off, L->off, (size_t)L->ndiag * sizeof(sps_index), "DIA offsets"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&mask, L->mask, (size_t)L->ndiag * (size_t)L->nw * sizeof(uint32_t), "DIA mask"), done);
    SPS_CHECK_GOTO(st, sps_vdict_download(A->ctx, s->dval, &s->vd, (int64_t)nslot, ss, "DIA values", (void **)&dval),
                   done);
    SPS_CHECK_GOTO(st, sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&out->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, &out->val, (size_t)A->nnz * ss, "CSR values"), done);
    {
        int64_t q = 0;
        for (sps_index i = 0; i < A->n; i++) {
            for (sps_index d = 0; d < L->ndiag; d++) {
                if (!((mask[(size_t)d * L->nw + (size_t)(i >> 5)] >> (i & 31)) & 1u)) continue;
                if (q >= A->nnz) { q++; continue; } /* reported below */
                out->col[q] = (sps_index)(i + off[d]);
                memcpy((char *)out->val + (size_t)q * ss, dval + ((size_t)d * A->n + i) * ss, ss);
                q++;
            }
            out->rowptr[i + 1] = (sps_index)(q < A->nnz ? q : A->nnz);
        }
        if (q != A->nnz)
            st = sps_error(A->ctx, SPS_ERR_ARG, "DIA: the stored mask holds %lld entries, the matrix %lld",
                           (long long)q, (long long)A->nnz);
    }
done:
    free(off);
    free(mask);
    free(dval);
    return st;
}

static sps_status dia_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    dia_store *s = A->store;
    const dia_layout *L = &s->L;
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->dia_spmv : k->dia_spmvt)(sps_ex(A->ctx), A->n, A->m, L->ndiag, L->off, s->dval,
                                                          s->vd.dict, L->mask, a, x, b, y);
}

static size_t dia_footprint(sps_matrix A, int64_t *stored)
{
    const dia_store *s = A->store;
    *stored = (int64_t)s->L.ndiag * A->n;
    /* the offsets and the mask (dia_bytes without values), then the values, plain or a table's */
    return dia_bytes(s->L.ndiag, A->n, s->L.nw, 0) +
           sps_vdict_store_bytes(&s->vd, (int64_t)s->L.ndiag * A->n, sps_scalar_size(A->t));
}

/* No column index per entry: the diagonal's offset gives it (sps_matrix_info_t.index_bits). */
static int dia_index_bits(sps_matrix A)
{
    (void)A;
    return 0;
}

static int dia_value_dict(sps_matrix A)
{
    const dia_store *s = A->store;
    return s->vd.ndict; /* 0 without a table */
}

const sps_format_ops sps_format_dia = {
    .id = SPS_FMT_DIA, .name = "dia",
    .summary = "dense diagonals: banded and stencil matrices (refuses scattered patterns)",
    SPS_FORMAT_OPTIONS(dia_options),
    .index_bits = dia_index_bits, .value_dict = dia_value_dict,
    SPS_FORMAT_HOOKS(dia),
};
