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
    /* each field 0 or one of the values kernels/launch.h lists for it */
#define SPS_LV_CHECK_(f, ...)                                                                                  \
    {                                                                                                          \
        static const int ok[] = {__VA_ARGS__};                                                                 \
        if (!lv_in(v->f, ok, (int)(sizeof ok / sizeof ok[0])))                                                 \
            return sps_error(A->ctx, SPS_ERR_ARG, "launch variant: %s = %d is not one of its values "          \
                                                  "(kernels/launch.h)",                                        \
                             #f, v->f);                                                                        \
    }
    SPS_LAUNCH_FIELDS(SPS_LV_CHECK_)
#undef SPS_LV_CHECK_
    A->lv = *v;
    return SPS_OK;
}
