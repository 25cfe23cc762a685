/* The padded family's shared code (see formats/padded.h): build on the backend,
 * back to CSR, SpMV dispatch, footprint, blow-up check. */
#include "formats/padded.h"
#include "formats/csr_backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sps_pad_kind_name(sps_pad_kind k)
{
    switch (k) {
    case SPS_PAD_ELL: return "ELL";
    case SPS_PAD_SELL: return "SELL";
    default: return "RgCSR";
    }
}

void sps_pad_destroy(sps_matrix A)
{
    sps_pad_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, (void *)s->L.grp_ptr);
    sps_dfree(A->ctx, (void *)s->L.rl);
    sps_dfree(A->ctx, (void *)s->L.perm);
    sps_dfree(A->ctx, (void *)s->L.col);
    sps_dfree(A->ctx, (void *)s->L.col16);
    sps_dfree(A->ctx, (void *)s->L.cbase);
    sps_dfree(A->ctx, (void *)s->L.long_rows);
    sps_dfree(A->ctx, s->val);
    sps_dfree(A->ctx, s->vd.dict);
    free(s);
    A->store = NULL;
}

void sps_pad_common(sps_options opt, const char *suggest, sps_pad_params *p)
{
    static const int bits[] = {0, 16, 32}; /* the words of index-bits: auto|16|32 */
    p->max_fill = sps_opt_num(opt, "max-fill");
    p->force = sps_opt_int(opt, "force");
    p->index_bits = bits[sps_opt_int(opt, "index-bits")];
    /* values: the scalar formats declare it (SPS_FMT_OPT_VALUES); bell and bsell do not, their
       entries are blocks and quaternions */
    p->values = sps_options_get(opt, "values") ? sps_vdict_mode(opt) : SPS_VALUES_PLAIN;
    p->suggest = suggest;
}

sps_status sps_pad_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    return sps_csr_build_from_host(B, h, opt, B->ops->from_backend_csr);
}

/* Group pointers on the backend from the per-chunk widths wd (ELL: one group of
 * the widest row, two pointers from the host; SELL / RgCSR: a scan of the
 * groups' slots, pad_group_ptr), then L->slots (one integer to the host) and
 * s->width = wmax, the widest chunk. */
static sps_status pad_geometry(sps_matrix B, const sps_pad_params *p, sps_pad_store *s, const sps_index *wd, sps_index wmax)
{
    sps_pad_layout *L = &s->L;
    s->width = wmax > 0 ? wmax : 0;
    if (p->kind == SPS_PAD_ELL) {
        const int64_t gp[2] = {0, (int64_t)s->width * L->nstored};
        L->slots = gp[1];
        return sps_dupload(B->ctx, (void **)&L->grp_ptr, gp, sizeof gp);
    }
    int64_t *gp = NULL;
    SPS_CHECK(sps_dmalloc(B->ctx, (void **)&gp, ((size_t)L->ngroups + 1) * sizeof *gp));
    L->grp_ptr = gp; /* the store owns it */
    SPS_CHECK(sps_kidx(B->ctx)->pad_group_ptr(sps_ex(B->ctx), L->ngroups, L->h, L->nstored, wd, gp));
    int64_t *total = NULL;
    SPS_CHECK(sps_ddownload(B->ctx, (void **)&total, L->grp_ptr + L->ngroups, sizeof *total, "the padded slot count"));
    L->slots = *total;
    free(total);
    return SPS_OK;
}

/* The layout's name in messages: ELL, SELL, RgCSR; BELL, BSELL for compound entries (the
 * bell and bsell formats, which a user asked for by those names). */
static const char *pad_name(sps_matrix B, sps_pad_kind k)
{
    if (B->entry.kind == SPS_ENTRY_SCALAR) return sps_pad_kind_name(k);
    return k == SPS_PAD_ELL ? "BELL" : "BSELL";
}

/* Refuse a blow-up: more than max_fill x nnz slots (and more than the floor). */
static sps_status pad_check_fill(sps_matrix B, const sps_pad_params *p, const sps_pad_store *s)
{
    const sps_pad_layout *L = &s->L;
    const double limit = p->max_fill * (double)B->nnz;
    if (L->slots > SPS_PAD_FILL_FLOOR && (double)L->slots > limit && !p->force) {
        const size_t bytes =
            sps_pad_bytes(L->slots, (size_t)s->ew * sps_scalar_size(B->t), sps_pad_col_bytes(L), L->ngroups, B->n,
                          p->window > 0, L->nlong);
        const double fill = B->nnz ? (double)L->slots / (double)B->nnz : INFINITY;
        char shape[160];
        if (p->kind == SPS_PAD_ELL)
            snprintf(shape, sizeof shape, "longest row %d entries, %d rows padded to %d", (int)s->width, (int)B->n,
                     (int)L->nstored);
        else
            snprintf(shape, sizeof shape, "widest group %d entries, %d rows in %d groups of %d", (int)s->width,
                     (int)B->n, (int)L->ngroups, (int)L->h);
        return sps_error(B->ctx, SPS_ERR_ARG,
                         "%s conversion refused: it would store %lld entries (%zu bytes) for %lld nonzeros, "
                         "fill factor %.1f > max-fill %g (%s); %s, or set force to convert anyway",
                         pad_name(B, p->kind), (long long)L->slots, bytes, (long long)B->nnz, fill, p->max_fill,
                         shape, p->suggest);
    }
    if (L->slots > SPS_MAX_STORED)
        return sps_error(B->ctx, SPS_ERR_ALLOC, "%s conversion: %lld stored entries for %lld nonzeros (at most %lld)",
                         pad_name(B, p->kind), (long long)L->slots, (long long)B->nnz,
                         (long long)SPS_MAX_STORED);
    return SPS_OK;
}

/* The storage rows longer than long_len, listed for the GPU's block-per-row
 * kernels.  Only where the widest chunk is wider than long_len can there be
 * one: then rl comes to the host once (n integers). */
static sps_status pad_long_rows(sps_matrix B, sps_pad_store *s)
{
    sps_pad_layout *L = &s->L;
    const int64_t mean = L->n > 0 ? (L->nnz + L->n - 1) / L->n : 0;
    const int64_t lim = SPS_PAD_LONG_FACTOR * mean > SPS_PAD_LONG_MIN ? SPS_PAD_LONG_FACTOR * mean : SPS_PAD_LONG_MIN;
    L->long_len = (sps_index)(lim < INT32_MAX ? lim : INT32_MAX);
    if (s->width <= L->long_len) return SPS_OK;
    sps_index *rl = NULL, *list = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(B->ctx, (void **)&rl, L->rl, (size_t)L->n * sizeof *rl, "row lengths"), done);
    sps_index nlong = 0;
    for (sps_index r = 0; r < L->n; r++) nlong += rl[r] > L->long_len;
    SPS_CHECK_GOTO(st, sps_hmalloc(B->ctx, (void **)&list, (size_t)nlong * sizeof *list, "long-row list"), done);
    nlong = 0;
    for (sps_index r = 0; r < L->n; r++)
        if (rl[r] > L->long_len) list[nlong++] = r;
    SPS_CHECK_GOTO(st, sps_dupload(B->ctx, (void **)&L->long_rows, list, (size_t)nlong * sizeof *list), done);
    L->nlong = nlong;
done:
    free(rl);
    free(list);
    return st;
}

sps_status sps_pad_build(sps_matrix B, const sps_csr_store *src, const sps_pad_params *p)
{
    sps_context ctx = B->ctx;
    const sps_mat_kernels *k = sps_kmat(ctx, B->t);
    const sps_index n = B->n;
    sps_pad_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "padded matrix handle"));
    B->store = s; /* the caller destroys B on failure, which frees what was allocated */
    s->kind = p->kind;
    s->ew = sps_entry_values(B->entry);
    s->lay = p->lay;
    s->vlay = p->vlay;
    s->window = p->window > 0 ? p->window : 0;
    sps_pad_layout *L = &s->L;
    L->n = n;
    L->m = B->m;
    L->nnz = B->nnz;

    /* geometry: rows per group, storage rows, groups */
    int64_t nstored, ngroups;
    if (p->kind == SPS_PAD_ELL) {
        nstored = ((int64_t)n + SPS_PAD_WARP - 1) / SPS_PAD_WARP * SPS_PAD_WARP; /* ld */
        ngroups = 1;
    } else {
        L->h = p->h;
        ngroups = ((int64_t)n + p->h - 1) / p->h;
        nstored = p->kind == SPS_PAD_SELL ? ngroups * p->h : n;
    }
    if (nstored > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "%s: %d rows padded to %lld exceed the 32-bit row index", sps_pad_kind_name(p->kind),
                         (int)n, (long long)nstored);
    L->nstored = (sps_index)nstored;
    if (p->kind == SPS_PAD_ELL) L->h = nstored > 0 ? L->nstored : SPS_PAD_WARP; /* one group of ld rows */
    L->ngroups = (sps_index)ngroups;
    s->param = p->kind == SPS_PAD_ELL ? L->nstored : p->h;

    /* 1. row lengths in storage order (sorted when asked) */
    sps_index *rl, *perm = NULL;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&rl, (size_t)n * sizeof *rl));
    L->rl = rl;
    SPS_CHECK(sps_kidx(ctx)->pad_rowlen(sps_ex(ctx), n, src->rowptr, NULL, rl));
    if (s->window) {
        SPS_CHECK(sps_dmalloc(ctx, (void **)&perm, (size_t)n * sizeof *perm));
        L->perm = perm;
        SPS_CHECK(sps_kidx(ctx)->pad_sort_rows(sps_ex(ctx), n, s->window, rl, perm));
        SPS_CHECK(sps_kidx(ctx)->pad_rowlen(sps_ex(ctx), n, src->rowptr, perm, rl));
    }

    /* 2. widths and column ranges per group (ELL: per chunk); their extremes to the host */
    const sps_index chunk = p->kind == SPS_PAD_ELL ? SPS_PAD_ELL_CHUNK : L->h;
    const sps_index nq = (sps_index)(((int64_t)n + chunk - 1) / chunk);
    sps_index *wd = NULL, *w = NULL, *lo = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&wd, ((size_t)nq + 4) * sizeof *wd), done);
    if (p->kind != SPS_PAD_ELL && p->index_bits != 32)
        SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&lo, ((size_t)nq > 0 ? (size_t)nq : 1) * sizeof *lo), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->pad_widths(sps_ex(ctx), n, chunk, rl, src->rowptr, L->perm, src->col, wd, lo), done);
    SPS_CHECK_GOTO(st, sps_ddownload(ctx, (void **)&w, wd + nq, 4 * sizeof *w, "padded group widths"), done);

    /* 3. group pointers, column width, fill check */
    SPS_CHECK_GOTO(st, pad_geometry(B, p, s, wd, w[3]), done);
    SPS_CHECK_GOTO(st, pad_long_rows(B, s), done);
    /* ELL is one group: its span is the whole matrix's; a SELL/RgCSR chunk is a group */
    const sps_index gmin = w[0] < 0 ? 0 : INT32_MAX - w[0];
    const int64_t span = p->kind == SPS_PAD_ELL ? (w[1] < 0 ? -1 : (int64_t)w[1] - gmin) : w[2];
    const int narrow = p->index_bits == 16 || (p->index_bits == 0 && span <= SPS_PAD_COL16_SPAN);
    if (narrow && span > SPS_PAD_COL16_SPAN) {
        st = sps_error(ctx, SPS_ERR_ARG,
                       "%s: index-bits 16 refused: the columns of a %s span %lld > %d; use index-bits 32 or auto",
                       B->ops->name, p->kind == SPS_PAD_ELL ? "matrix" : "group", (long long)span,
                       SPS_PAD_COL16_SPAN);
        goto done;
    }
    if (narrow) {
        if (p->kind == SPS_PAD_ELL) SPS_CHECK_GOTO(st, sps_dupload(ctx, (void **)&lo, &gmin, sizeof gmin), done);
        L->cbase = lo; /* the store owns it now */
        lo = NULL;
    }
    SPS_CHECK_GOTO(st, pad_check_fill(B, p, s), done);

    /* 4. columns and values, every slot written once */
    void *col;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &col, (size_t)L->slots * (size_t)sps_pad_col_bytes(L)), done);
    if (narrow)
        L->col16 = col;
    else
        L->col = col;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &s->val, (size_t)L->slots * s->ew * sps_scalar_size(B->t)), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->pad_scatter_col(sps_ex(ctx), *L, src->rowptr, src->col, col), done);
    SPS_CHECK_GOTO(st, k->pad_scatter_val(sps_ex(ctx), *L, src->rowptr, src->val, s->ew, s->lay == SPS_ENTRY_SOA,
                                            s->val),
                   done);
    /* 5. the values as a dictionary's indices, where asked and possible (padding's zeros count) */
    SPS_CHECK_GOTO(st, sps_vdict_apply(B, p->values, &s->val, L->slots, &s->vd), done);
    L->vdict = s->vd.dict;
done:
    sps_dfree(ctx, wd);
    sps_dfree(ctx, lo);
    free(w);
    return st;
}

sps_status sps_pad_to_csr(sps_matrix A, sps_csr_host *out)
{
    const sps_pad_store *s = A->store;
    const sps_pad_layout *L = &s->L;
    const size_t sz = sps_scalar_size(A->t), ss = sz * (size_t)s->ew;
    /* member e of slot q at val[q es + e ms] (in scalars) */
    const int64_t es = s->lay == SPS_ENTRY_SOA ? 1 : s->ew, ms = s->lay == SPS_ENTRY_SOA ? L->slots : 1;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    out->entry = A->entry;
    sps_pad_layout H = *L; /* host copy of the layout */
    int64_t *gp = NULL;
    sps_index *rl = NULL, *perm = NULL, *col = NULL, *cbase = NULL;
    uint16_t *col16 = NULL;
    char *val = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&gp, L->grp_ptr, ((size_t)L->ngroups + 1) * sizeof *gp, "group pointers"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&rl, L->rl, (size_t)L->n * sizeof *rl, "row lengths"), done);
    if (L->perm)
        SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&perm, L->perm, (size_t)L->n * sizeof *perm, "row permutation"), done);
    if (L->col16) {
        SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&col16, L->col16, (size_t)L->slots * sizeof *col16,
                                         "padded columns"), done);
        SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&cbase, L->cbase, (size_t)L->ngroups * sizeof *cbase,
                                         "group base columns"), done);
    } else {
        SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&col, L->col, (size_t)L->slots * sizeof *col, "padded columns"),
                       done);
    }
    SPS_CHECK_GOTO(st, sps_vdict_download(A->ctx, s->val, &s->vd, L->slots, ss, "padded values", (void **)&val), done);
    H.grp_ptr = gp;
    H.rl = rl;
    H.perm = perm;
    H.col = col;
    H.col16 = col16;
    H.cbase = cbase;
    SPS_CHECK_GOTO(st, sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&out->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, &out->val, (size_t)A->nnz * ss, "CSR values"), done);
    for (sps_index r = 0; r < L->n; r++) out->rowptr[(perm ? perm[r] : r) + 1] = rl[r];
    for (sps_index i = 0; i < L->n; i++) out->rowptr[i + 1] += out->rowptr[i];
    if (out->rowptr[L->n] != A->nnz) {
        st = sps_error(A->ctx, SPS_ERR_ARG, "%s: row lengths sum to %d, the matrix has %lld nonzeros",
                       sps_pad_kind_name(s->kind), (int)out->rowptr[L->n], (long long)A->nnz);
        goto done;
    }
    for (sps_index r = 0; r < L->n; r++) {
        sps_index stride;
        int64_t slot = sps_pad_row_base(&H, r, &stride);
        const sps_index i = perm ? perm[r] : r, g = r / L->h;
        for (sps_index q = out->rowptr[i]; q < out->rowptr[i + 1]; q++, slot += stride) {
            out->col[q] = sps_pad_col_at(&H, g, slot);
            for (int e = 0; e < s->ew; e++)
                memcpy((char *)out->val + (size_t)q * ss + (size_t)e * sz, val + (size_t)(slot * es + e * ms) * sz, sz);
        }
    }
done:
    free(gp);
    free(rl);
    free(perm);
    free(col);
    free(col16);
    free(cbase);
    free(val);
    return st;
}

/* bell, bsell: the compound family's kernels on vectors of layout vlay (checked when A was built). */
static sps_status pad_cmp_kernels(sps_matrix A, sps_op_mode mode, sps_entry_layout vlay, sps_cplx a, const void *x,
                                  sps_cplx b, void *y)
{
    const sps_pad_store *s = A->store;
    const sps_cmp_kernels *c = sps_kcmp(A->ctx, A->entry, A->t);
    return (mode == SPS_OP_N ? c->pad_spmv : c->pad_spmvt)(sps_ex(A->ctx), A->entry, s->lay, vlay, s->L, s->val, a, x,
                                                           b, y);
}

sps_status sps_pad_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    const sps_pad_store *s = A->store;
    if (A->entry.kind != SPS_ENTRY_SCALAR) /* bell, bsell: the compound family, at the operator's boundary */
        return sps_cmp_apply(A, mode, s->vlay, pad_cmp_kernels, a, x, b, y);
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->pad_spmv : k->pad_spmvt)(sps_ex(A->ctx), s->L, s->val, a, x, b, y);
}

int sps_pad_index_bits_of(sps_matrix A)
{
    const sps_pad_store *s = A->store;
    return 8 * sps_pad_col_bytes(&s->L);
}

int sps_pad_value_dict_of(sps_matrix A)
{
    const sps_pad_store *s = A->store;
    return s->vd.ndict; /* 0 without a table */
}

size_t sps_pad_footprint(sps_matrix A, int64_t *stored)
{
    const sps_pad_store *s = A->store;
    *stored = s->L.slots;
    /* the index part (sps_pad_bytes without values), then the values, plain or a table's */
    return sps_pad_bytes(s->L.slots, 0, sps_pad_col_bytes(&s->L), s->L.ngroups, s->L.n, s->L.perm != NULL,
                         s->L.nlong) +
           sps_vdict_store_bytes(&s->vd, s->L.slots, (size_t)s->ew * sps_scalar_size(A->t));
}

/* sigma is 0 or 1 (no sorting) or a multiple of C. */
const char *sps_pad_sort_rules(sps_options opt, char *why, size_t len)
{
    const int C = sps_opt_int(opt, "slice-height"), sigma = sps_opt_int(opt, "sort-window");
    if (sigma <= 1 || sigma % C == 0) return NULL;
    snprintf(why, len, "expected 0 or 1 (no sorting) or a multiple of the slice height %d, got %d", C, sigma);
    return "sort-window";
}
