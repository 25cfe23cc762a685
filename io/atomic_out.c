/* Files written whole or not at all: see atomic_out.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, fsync, getpid, lstat, O_NOFOLLOW */
#endif
#include "atomic_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sps_status sps_out_open(sps_out_file *o, const char *path, int mode, char *err, size_t errlen)
{
    o->path = path;
    o->f = NULL;
    o->tmp = NULL;
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file (%s): not replaced", path,
                 S_ISLNK(sb.st_mode) ? "a symbolic link" : S_ISDIR(sb.st_mode) ? "a directory" : "a special file");
        return SPS_ERR_IO;
    }
    /* pid and a per-process count: threads (one context each) may write at once */
    static atomic_uint seq;
    const size_t n = strlen(path) + 48;
    o->tmp = malloc(n);
    if (!o->tmp) {
        snprintf(err, errlen, "out of host memory: %zu bytes for a file name", n);
        return SPS_ERR_ALLOC;
    }
    snprintf(o->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), (unsigned)atomic_fetch_add(&seq, 1u));
    const int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, (mode_t)mode);
    o->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
        snprintf(err, errlen, "cannot create '%s': %s", o->tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            remove(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        return SPS_ERR_IO;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);
    return SPS_OK;
}

sps_status sps_out_close(sps_out_file *o, int ok, char *err, size_t errlen)
{
    sps_status st = SPS_OK;
    if (!ok || fflush(o->f) != 0 || ferror(o->f)) {
        if (ok) snprintf(err, errlen, "cannot write '%s': %s", o->tmp, strerror(errno));
        st = SPS_ERR_IO;
    } else if (fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != ENOTSUP) {
        /* EINVAL/ENOTSUP: the file system (a pipe, some FUSE) does not sync */
        snprintf(err, errlen, "cannot sync '%s': %s", o->tmp, strerror(errno));
        st = SPS_ERR_IO;
    }
    if (fclose(o->f) != 0 && st == SPS_OK) {
        snprintf(err, errlen, "cannot write '%s': %s", o->tmp, strerror(errno));
        st = SPS_ERR_IO;
    }
    if (st == SPS_OK && rename(o->tmp, o->path) != 0) {
        snprintf(err, errlen, "cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
        st = SPS_ERR_IO;
    }
    if (st != SPS_OK) remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    o->f = NULL;
    return st;
}
