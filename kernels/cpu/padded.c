/* CPU kernels of the padded formats (ELLPACK-R, SELL-C-sigma, RgCSR; layout in
 * kernels/format_kernels_padded.h) for f32, f64, c32, c64: the index kernels are
 * type-independent (below, shared by the four instantiations), the value and
 * SpMV kernels are one generic source, padded.inc.
 *
 * All of them are deterministic and independent of the thread count: the row
 * sort is a stable sort of each window, every slot is written by exactly one
 * iteration, SpMV sums each row in entry order, SpMV^T scatters in a fixed
 * number of chunks (a function of nnz) reduced in chunk order. */
#include "kernels/cpu/common.h"

#include <stdlib.h>

/* rl[r] = length of row perm[r] (or r). */
static sps_status pad_rowlen_impl(sps_index n, const sps_index *rowptr, const sps_index *perm, sps_index *rl)
{
#pragma omp parallel for schedule(static) if (n > SPS_OMP_MIN)
    for (sps_index r = 0; r < n; r++) {
        const sps_index p = perm ? perm[r] : r;
        rl[r] = rowptr[p + 1] - rowptr[p];
    }
    return SPS_OK;
}

/* Stable merge sort of idx[0..k) by decreasing len[idx], ties by increasing idx
 * (the indices come in increasing order, so a stable sort keeps ties ordered). */
static void pad_merge_sort(sps_index *idx, sps_index *tmp, int64_t k, const sps_index *len)
{
    for (int64_t width = 1; width < k; width *= 2) {
        for (int64_t lo = 0; lo < k; lo += 2 * width) {
            const int64_t mid = lo + width < k ? lo + width : k;
            const int64_t hi = lo + 2 * width < k ? lo + 2 * width : k;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = len[idx[j]] > len[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        for (int64_t q = 0; q < k; q++) idx[q] = tmp[q];
    }
}

static sps_status pad_sort_rows_impl(sps_exec *ex, sps_index n, sps_index window, const sps_index *len,
                                     sps_index *perm)
{
    if (n <= 0) return SPS_OK;
    if (window < 1) window = 1;
    sps_index *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) return sps_kerror(ex, SPS_ERR_ALLOC, "row sort: out of host memory for %zu bytes", (size_t)n * sizeof *tmp);
    const sps_index nw = (sps_index)(((int64_t)n + window - 1) / window);
#pragma omp parallel for schedule(dynamic, 1) if (n > SPS_OMP_MIN)
    for (sps_index w = 0; w < nw; w++) {
        const sps_index lo = (sps_index)((int64_t)w * window);
        const sps_index hi = (int64_t)lo + window < n ? lo + window : n;
        for (sps_index r = lo; r < hi; r++) perm[r] = r;
        pad_merge_sort(perm + lo, tmp + lo, hi - lo, len);
    }
    free(tmp);
    return SPS_OK;
}

static sps_status pad_widths_impl(sps_index n, sps_index chunk, const sps_index *rl, const sps_index *rowptr,
                                  const sps_index *perm, const sps_index *src_col, sps_index *w, sps_index *lo)
{
    const sps_index nq = n > 0 ? (sps_index)(((int64_t)n + chunk - 1) / chunk) : 0;
    sps_index gmin = INT32_MAX, gmax = -1, span = -1, wmax = -1;
#pragma omp parallel for schedule(static) reduction(min : gmin) reduction(max : gmax, span, wmax) if (n > SPS_OMP_MIN)
    for (sps_index q = 0; q < nq; q++) {
        const int64_t a = (int64_t)q * chunk, b = a + chunk < n ? a + chunk : n;
        sps_index mx = 0, cmin = INT32_MAX, cmax = -1;
        for (int64_t r = a; r < b; r++) {
            mx = rl[r] > mx ? rl[r] : mx;
            if (rl[r] == 0) continue;
            const sps_index p = perm ? perm[r] : (sps_index)r;
            const sps_index first = src_col[rowptr[p]], last = src_col[rowptr[p + 1] - 1];
            cmin = first < cmin ? first : cmin;
            cmax = last > cmax ? last : cmax;
        }
        w[q] = mx;
        wmax = mx > wmax ? mx : wmax;
        if (lo) lo[q] = cmax < 0 ? 0 : cmin;
        if (cmax < 0) continue;
        gmin = cmin < gmin ? cmin : gmin;
        gmax = cmax > gmax ? cmax : gmax;
        span = cmax - cmin > span ? cmax - cmin : span;
    }
    w[nq] = gmax < 0 ? -1 : INT32_MAX - gmin;
    w[nq + 1] = gmax;
    w[nq + 2] = span;
    w[nq + 3] = wmax;
    return SPS_OK;
}

static sps_status pad_group_ptr_impl(sps_index ngroups, sps_index h, sps_index nstored, const sps_index *w, int64_t *gp)
{
    gp[0] = 0;
    for (sps_index g = 0; g < ngroups; g++) {
        const int64_t left = (int64_t)nstored - (int64_t)g * h;
        gp[g + 1] = gp[g] + (int64_t)w[g] * (left < h ? left : h);
    }
    return SPS_OK;
}

/* Every slot of L: storage row r, entry k < width of its group; 32-bit columns,
 * or 16-bit offsets from cbase[g] when L.cbase is set. */
static sps_status pad_scatter_col_impl(sps_pad_layout L, const sps_index *rowptr, const sps_index *src_col, void *colv)
{
    sps_index *col = L.cbase ? NULL : colv;
    uint16_t *col16 = L.cbase ? colv : NULL;
#pragma omp parallel for schedule(static) if (L.nstored > SPS_OMP_MIN)
    for (sps_index r = 0; r < L.nstored; r++) {
        sps_index stride;
        const int64_t base = sps_pad_row_base(&L, r, &stride);
        const sps_index g = r / L.h;
        const int64_t width = (L.grp_ptr[g + 1] - L.grp_ptr[g]) / stride;
        const sps_index len = r < L.n ? L.rl[r] : 0;
        const sps_index *src = r < L.n ? src_col + rowptr[L.perm ? L.perm[r] : r] : NULL;
        if (col16)
            for (int64_t k = 0; k < width; k++)
                col16[base + k * stride] = k < len ? sps_pad_col16_of(src[k], L.cbase[g]) : (uint16_t)SPS_PAD_COL16_PAD;
        else
            for (int64_t k = 0; k < width; k++) col[base + k * stride] = k < len ? src[k] : -1;
    }
    return SPS_OK;
}

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_pad_rowlen(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *perm,
                                  sps_index *rl)
{
    (void)ex;
    return pad_rowlen_impl(n, rowptr, perm, rl);
}

sps_status sps_cpu_pad_sort_rows(sps_exec *ex, sps_index n, sps_index window, const sps_index *len,
                                     sps_index *perm)
{
    return pad_sort_rows_impl(ex, n, window, len, perm);
}

sps_status sps_cpu_pad_widths(sps_exec *ex, sps_index n, sps_index chunk, const sps_index *rl,
                                  const sps_index *rowptr, const sps_index *perm, const sps_index *src_col,
                                  sps_index *w, sps_index *lo)
{
    (void)ex;
    return pad_widths_impl(n, chunk, rl, rowptr, perm, src_col, w, lo);
}

sps_status sps_cpu_pad_group_ptr(sps_exec *ex, sps_index ngroups, sps_index h, sps_index nstored,
                                     const sps_index *w, int64_t *gp)
{
    (void)ex;
    return pad_group_ptr_impl(ngroups, h, nstored, w, gp);
}

sps_status sps_cpu_pad_scatter_col(sps_exec *ex, sps_pad_layout L, const sps_index *rowptr,
                                       const sps_index *src_col, void *col)
{
    (void)ex;
    return pad_scatter_col_impl(L, rowptr, src_col, col);
}

#define SPS_TEMPLATE "kernels/cpu/padded.inc"
#include "kernels/cpu/instantiate.h"
