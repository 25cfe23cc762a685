/* The apps' timing of one queued operation apart from a solve (spsolve's preconditioner and
 * SpMV times, spsolve-fem's SpMV of K), so that a cost reads as a count of SpMVs. */
#ifndef APPS_COMMON_TIMING_H
#define APPS_COMMON_TIMING_H
#include <spsolve/spsolve.h>

/** One call of fn(arg): the median over 5 batches of 10 back-to-back calls (queued as inside
 *  a solve, ctx synchronised after each batch), after one untimed call, divided by 10; 0
 *  when fn fails (returns other than SPS_OK). */
double app_time_median(sps_context ctx, sps_status (*fn)(void *arg), void *arg);
#endif
