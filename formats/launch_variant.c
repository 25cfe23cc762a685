/* The launch variant of a matrix (kernels/launch.h): range checks here, the
 * instantiation check at the product (the backend knows what it compiled in). */
#include "formats/format.h"

#include <string.h>

/* v is one of the n values of ok[] (0, the default, is always allowed). */
static int lv_in(int v, const int *ok, int n)
{
    if (v == 0) return 1;
    for (int i = 0; i < n; i++)
        if (v == ok[i]) return 1;
    return 0;
}

sps_status sps_matrix_set_launch_variant(sps_matrix A, const sps_launch_variant *v)
{
    if (!A) return SPS_ERR_ARG;
    if (!v) {
        memset(&A->lv, 0, sizeof A->lv);
        return SPS_OK;
    }
    static const int pow124[] = {1, 2, 4}, u24[] = {2, 4}, k12[] = {1, 2}, minb_csr[] = {4, 6, 8}, one[] = {1},
                     minb_hola[] = {2, 4, 5, 6}, u48[] = {4, 8}, minb_pad[] = {4};
    const struct {
        const char *name;
        int v;
        const int *ok;
        int n;
    } f[] = {
        {"csr_lane_entries", v->csr_lane_entries, pow124, 3}, {"csr_unroll", v->csr_unroll, u24, 2},
        {"csr_stage_rows", v->csr_stage_rows, k12, 2},        {"csr_minb", v->csr_minb, minb_csr, 3},
        {"hola_early_mul", v->hola_early_mul, one, 1},         {"hola_minb", v->hola_minb, minb_hola, 4},
        {"hola_out_div", v->hola_out_div, k12, 2},             {"hola_ldg", v->hola_ldg, one, 1},
        {"pad_unroll", v->pad_unroll, u48, 2},                 {"pad_minb", v->pad_minb, minb_pad, 1},
        {"pad_ldg", v->pad_ldg, one, 1},                       {"pad_split", v->pad_split, pow124, 3},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!lv_in(f[i].v, f[i].ok, f[i].n))
            return sps_error(A->ctx, SPS_ERR_ARG, "launch variant: %s = %d is not one of its values (kernels/launch.h)",
                             f[i].name, f[i].v);
    A->lv = *v;
    return SPS_OK;
}
