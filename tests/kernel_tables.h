/* TU_CHECK_KERNEL_TABLES(P, backend): every kernel of the vector and matrix
 * families (all four scalar types) and of the index family sits in backend P's
 * tables (P: sps_cpu or sps_cuda) under its own name, and `backend` (the
 * sps_backend_ops) holds those tables.  Shared by test_kernels.c and
 * test_gpu_kernels.c.  Needs kernels/backend.h and testutil.h. */
#ifndef SPS_TEST_KERNEL_TABLES_H
#define SPS_TEST_KERNEL_TABLES_H

enum { TU_KIDX_s = SPS_F32, TU_KIDX_d = SPS_F64, TU_KIDX_c = SPS_C32, TU_KIDX_z = SPS_C64 };
#define TU_CHK_FAMILY_(F, P, S, name)                                                                          \
    TU_CHECK(P##_##F##_kernels[TU_KIDX_##S].name == SPS_KNAME(P, S, name), "%s_%s_kernels[%s].%s is not %s_%s_%s", \
             #P, #F, #S, #name, #P, #name, #S);
#define TU_CHK_VEC_(P, S, name, args) TU_CHK_FAMILY_(vec, P, S, name)
#define TU_CHK_MAT_(P, S, name, args) TU_CHK_FAMILY_(mat, P, S, name)
#define TU_CHK_IDX_(P, name, args) \
    TU_CHECK(P##_idx_kernels.name == P##_##name, "%s_idx_kernels.%s is not %s_%s", #P, #name, #P, #name);
#define TU_CHECK_KERNEL_TABLES(P, backend)                                                                     \
    do {                                                                                                       \
        SPS_KERNEL_LIST_VEC(TU_CHK_VEC_, P, s)                                                                 \
        SPS_KERNEL_LIST_VEC(TU_CHK_VEC_, P, d)                                                                 \
        SPS_KERNEL_LIST_VEC(TU_CHK_VEC_, P, c)                                                                 \
        SPS_KERNEL_LIST_VEC(TU_CHK_VEC_, P, z)                                                                 \
        SPS_KERNEL_LIST_MAT(TU_CHK_MAT_, P, s)                                                                 \
        SPS_KERNEL_LIST_MAT(TU_CHK_MAT_, P, d)                                                                 \
        SPS_KERNEL_LIST_MAT(TU_CHK_MAT_, P, c)                                                                 \
        SPS_KERNEL_LIST_MAT(TU_CHK_MAT_, P, z)                                                                 \
        SPS_KERNEL_LIST_INDEX(TU_CHK_IDX_, P)                                                                  \
        TU_CHECK((backend).vec == P##_vec_kernels && (backend).mat == P##_mat_kernels &&                       \
                     (backend).idx == &P##_idx_kernels,                                                        \
                 "%s backend uses the %s_*_kernels tables", #P, #P);                                           \
    } while (0)

#endif
