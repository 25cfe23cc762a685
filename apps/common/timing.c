/* apps/common/timing.h */
#define _POSIX_C_SOURCE 200809L
#include "timing.h"

#include <time.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double app_time_median(sps_context ctx, sps_status (*fn)(void *arg), void *arg)
{
    enum { BATCH = 10, SAMPLES = 5 };
    double t[SAMPLES];
    int ok = fn(arg) == SPS_OK;
    for (int k = 0; k < SAMPLES && ok; k++) {
        ok = sps_context_synchronize(ctx) == SPS_OK;
        const double t0 = wall();
        for (int q = 0; q < BATCH && ok; q++) ok = fn(arg) == SPS_OK;
        ok = ok && sps_context_synchronize(ctx) == SPS_OK;
        t[k] = (wall() - t0) / BATCH;
    }
    if (!ok) return 0.0;
    for (int i = 1; i < SAMPLES; i++) /* insertion sort */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            const double w = t[j];
            t[j] = t[j - 1], t[j - 1] = w;
        }
    return t[SAMPLES / 2];
}
