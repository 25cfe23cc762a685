/* The apps' output files against their inputs and each other: no output may replace an input
 * or another output (spsolve, spsolve-fem, spsolve-spin; checked before anything is read or
 * written, a usage error). */
#ifndef APPS_COMMON_FILES_H
#define APPS_COMMON_FILES_H
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Whether path names an entry `base` of the directory *dir (its stat): the last component and
 * the folder that holds it, for a file that does not exist yet */
static inline int files_parent(const char *path, struct stat *dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    char d[PATH_MAX];
    const size_t len = slash ? (size_t)(slash - path) : 0;
    if (len >= sizeof d) return 0;
    memcpy(d, path, len);
    d[len] = 0;
    return stat(slash ? (len ? d : "/") : ".", dir) == 0;
}

/* Whether a and b name one regular file (one path, or two names of one inode); by_name: also
 * when neither exists yet and they name one entry of one folder (two outputs: `x.mtx` and
 * `./x.mtx`).  Special files (a terminal, /dev/null, a pipe) are written into, never
 * replaced, and may be named twice. */
static inline int files_same(const char *a, const char *b, int by_name)
{
    struct stat sa, sb;
    if (!a || !b) return 0;
    const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (!by_name || ea || eb) return 0;
    const char *ba, *bb;
    if (!files_parent(a, &sa, &ba) || !files_parent(b, &sb, &bb)) return strcmp(a, b) == 0;
    return strcmp(ba, bb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The outputs outs[0..nout) (NULL: not asked for; outn: their options' names) against the
 * inputs ins[0..nin) and each other; output keep may name input keep_in (an in-place rewrite
 * the app reads first; -1: none).  The first clash is printed as prog's usage error; 0 then. */
static inline int files_outputs_ok(const char *prog, const char *const *ins, const char *const *inn, int nin,
                                   const char *const *outs, const char *const *outn, int nout, int keep, int keep_in)
{
    for (int i = 0; i < nout; i++) {
        for (int k = 0; k < nin; k++)
            if (!(i == keep && k == keep_in) && files_same(outs[i], ins[k], 0)) {
                fprintf(stderr, "%s: %s '%s' is the file %s reads ('%s'): it would be replaced\n", prog, outn[i],
                        outs[i], inn[k], ins[k]);
                return 0;
            }
        for (int k = i + 1; k < nout; k++)
            if (files_same(outs[i], outs[k], 1)) {
                fprintf(stderr, "%s: %s '%s' and %s '%s' name one file: one would replace the other\n", prog,
                        outn[i], outs[i], outn[k], outs[k]);
                return 0;
            }
    }
    return 1;
}
#endif
