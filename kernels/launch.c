/* Launch variants by name (kernels/launch.h). */
#include "kernels/launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPS_LV_NAME_(f, ...) #f,
#define SPS_LV_OFFSET_(f, ...) offsetof(sps_launch_variant, f),
static const char *const field_name[] = {SPS_LAUNCH_FIELDS(SPS_LV_NAME_)};
static const size_t field_offset[] = {SPS_LAUNCH_FIELDS(SPS_LV_OFFSET_)};
#define NFIELDS ((int)(sizeof field_name / sizeof field_name[0]))

int sps_launch_variant_parse(const char *spec, sps_launch_variant *v, char *why, size_t len)
{
    memset(v, 0, sizeof *v);
    for (const char *p = spec ? spec : ""; *p;) {
        const size_t item = strcspn(p, ","), key = strcspn(p, "=,");
        int f = 0;
        while (f < NFIELDS && !(strlen(field_name[f]) == key && strncmp(p, field_name[f], key) == 0)) f++;
        char *end = NULL;
        errno = 0;
        const long val = key < item ? strtol(p + key + 1, &end, 10) : -1;
        const int digits = key < item && end == p + item && end > p + key + 1 && !errno;
        if (f == NFIELDS || !digits || val < 0 || val > 64) {
            if (why) snprintf(why, len, "'%.*s': expected field=value (0..64) of sps_launch_variant", (int)item, p);
            memset(v, 0, sizeof *v);
            return -1;
        }
        *(int *)((char *)v + field_offset[f]) = (int)val;
        p += item + (p[item] == ',');
    }
    return 0;
}
