/* libspsolve — CUDA column readers of the padded layout (kernels/format_kernels_padded.h):
 * one per index width (sps_pad_layout.col / col16), shared by the scalar padded
 * kernels (padded.cu) and the compound ones (compound.cuh).  cols(slot) is the
 * column of a slot of group g.  16-bit columns read 2 bytes a slot, not 4, plus
 * one base column per thread (a slice's 32 threads share its line); or_pad(slot)
 * is the column or -1 for padding.  NA: the
 * loads bypass the L1 (sps_cu_ld). */
#ifndef SPS_CUDA_PAD_COLS_CUH
#define SPS_CUDA_PAD_COLS_CUH
#include "kernels/cuda/common.cuh"
#include "kernels/format_kernels_padded.h"

template <bool NA> struct pad_cols32 {
    const sps_index *c;
    __device__ pad_cols32(const sps_pad_layout &L, sps_index) : c(L.col) {}
    __device__ sps_index operator()(int64_t p) const { return sps_cu_ld<NA>(c + p); }
    /* the column, or -1 for a padding slot (the lean ELL kernel reads padding) */
    __device__ sps_index or_pad(int64_t p) const { return sps_cu_ld<NA>(c + p); }
};
template <bool NA> struct pad_cols16 {
    const uint16_t *c;
    sps_index base;
    __device__ pad_cols16(const sps_pad_layout &L, sps_index g) : c(L.col16), base(ldg_t(L.cbase + g)) {}
    __device__ sps_index operator()(int64_t p) const { return base + (sps_index)sps_cu_ld<NA>(c + p); }
    __device__ sps_index or_pad(int64_t p) const
    {
        const uint16_t v = sps_cu_ld<NA>(c + p);
        return v == SPS_PAD_COL16_PAD ? -1 : base + (sps_index)v;
    }
};
#endif
