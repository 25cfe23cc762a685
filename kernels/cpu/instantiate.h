/* Instantiate a generic CPU source once per scalar type (PETSc/BLAS style).
 *
 * Usage:   #define SPS_TEMPLATE "kernels/cpu/blas1.inc"
 *          #include "kernels/cpu/instantiate.h"
 * Inside the template:
 *   T      the scalar type            R    its real type
 *   ACC    accumulator type (double precision, complex if T is)
 *   SFX    suffix s, d, c, z          FN(name) -> sps_cpu_name_SFX
 *   IS_CPLX, TFROM(sps_cplx), TOCPLX(T), CONJ(x), ABS2(x) (|x|^2 as R), ISFINITE(x) */
#ifndef SPS_TEMPLATE
#error "define SPS_TEMPLATE before including instantiate.h"
#endif
#include <complex.h>
#ifndef CMPLX /* glibc defines CMPLX/CMPLXF only for GCC (__builtin_complex): clang's builds (fuzzing) */
#define CMPLX(x, y) ((double _Complex){(double)(x), (double)(y)})
#define CMPLXF(x, y) ((float _Complex){(float)(x), (float)(y)})
#endif
#include <math.h>

#define SPS_FN2_(p, n, s) p##_##n##_##s
#define SPS_FN1_(p, n, s) SPS_FN2_(p, n, s)
#define FN(name) SPS_FN1_(sps_cpu, name, SFX)

/* ---- f32 */
#define SFX s
#define T float
#define R float
#define ACC double
#define IS_CPLX 0
#define TFROM(c) ((float)(c).re)
#define TOCPLX(x) sps_cplx_make((double)(x), 0.0)
#define ACC_TOCPLX(x) sps_cplx_make((double)(x), 0.0)
#define CONJ(x) (x)
#define ABS2(x) ((x) * (x))
#define ISFINITE(x) isfinite(x)
#include SPS_TEMPLATE
#undef SFX
#undef T
#undef R
#undef ACC
#undef IS_CPLX
#undef TFROM
#undef TOCPLX
#undef ACC_TOCPLX
#undef CONJ
#undef ABS2
#undef ISFINITE

/* ---- f64 */
#define SFX d
#define T double
#define R double
#define ACC double
#define IS_CPLX 0
#define TFROM(c) ((c).re)
#define TOCPLX(x) sps_cplx_make((x), 0.0)
#define ACC_TOCPLX(x) sps_cplx_make((x), 0.0)
#define CONJ(x) (x)
#define ABS2(x) ((x) * (x))
#define ISFINITE(x) isfinite(x)
#include SPS_TEMPLATE
#undef SFX
#undef T
#undef R
#undef ACC
#undef IS_CPLX
#undef TFROM
#undef TOCPLX
#undef ACC_TOCPLX
#undef CONJ
#undef ABS2
#undef ISFINITE

/* ---- c32 */
#define SFX c
#define T float _Complex
#define R float
#define ACC double _Complex
#define IS_CPLX 1
#define TFROM(c) CMPLXF((float)(c).re, (float)(c).im)
#define TOCPLX(x) sps_cplx_make((double)crealf(x), (double)cimagf(x))
#define ACC_TOCPLX(x) sps_cplx_make(creal(x), cimag(x))
#define CONJ(x) conjf(x)
#define ABS2(x) (crealf(x) * crealf(x) + cimagf(x) * cimagf(x))
#define ISFINITE(x) (isfinite(crealf(x)) && isfinite(cimagf(x)))
#include SPS_TEMPLATE
#undef SFX
#undef T
#undef R
#undef ACC
#undef IS_CPLX
#undef TFROM
#undef TOCPLX
#undef ACC_TOCPLX
#undef CONJ
#undef ABS2
#undef ISFINITE

/* ---- c64 */
#define SFX z
#define T double _Complex
#define R double
#define ACC double _Complex
#define IS_CPLX 1
#define TFROM(c) CMPLX((c).re, (c).im)
#define TOCPLX(x) sps_cplx_make(creal(x), cimag(x))
#define ACC_TOCPLX(x) sps_cplx_make(creal(x), cimag(x))
#define CONJ(x) conj(x)
#define ABS2(x) (creal(x) * creal(x) + cimag(x) * cimag(x))
#define ISFINITE(x) (isfinite(creal(x)) && isfinite(cimag(x)))
#include SPS_TEMPLATE
#undef SFX
#undef T
#undef R
#undef ACC
#undef IS_CPLX
#undef TFROM
#undef TOCPLX
#undef ACC_TOCPLX
#undef CONJ
#undef ABS2
#undef ISFINITE

#undef SPS_TEMPLATE
