/* Files written whole or not at all: see atomic_out.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, fsync, getpid, lstat, O_NOFOLLOW, fchmod */
#endif
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "atomic_out.h"
#include "spsolve/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef NAME_MAX
#define SPS_NAME_MAX NAME_MAX
#else
#define SPS_NAME_MAX 255
#endif

/* The descriptor a name stands for (/dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N), else -1. */
static int descriptor_of(const char *p)
{
    if (!strcmp(p, "/dev/stdin")) return 0;
    if (!strcmp(p, "/dev/stdout")) return 1;
    if (!strcmp(p, "/dev/stderr")) return 2;
    const char *n = !strncmp(p, "/dev/fd/", 8) ? p + 8 : !strncmp(p, "/proc/self/fd/", 14) ? p + 14 : NULL;
    if (!n || *n < '0' || *n > '9') return -1;
    char *end = NULL;
    const long fd = strtol(n, &end, 10);
    return *end || fd > INT_MAX ? -1 : (int)fd;
}

/* Write straight into fd (ok: it is ready for blocking writes): no temporary, no rename.
 * A failure says why, naming path (how: what was opened). */
static sps_status write_direct(sps_out_file *o, const char *path, int fd, int ok, const char *how, char *err,
                               size_t errlen)
{
    o->f = fd >= 0 && ok ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
        snprintf(err, errlen, "cannot open '%s'%s for writing: %s", path, how,
                 errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
        if (fd >= 0) close(fd);
        free(o->target);
        o->target = NULL;
        return SPS_ERR_IO;
    }
    o->direct = 1;
    return SPS_OK;
}

sps_status sps_out_open(sps_out_file *o, const char *path, int mode, char *err, size_t errlen)
{
    o->path = path;
    o->f = NULL;
    o->tmp = NULL;
    o->target = NULL;
    o->direct = 0;
    struct stat sb;
    const char *target = path;
    int exists = lstat(path, &sb) == 0;
    /* A descriptor's name (/dev/stdout, /dev/fd/N, /proc/self/fd/N) stands for a stream the
     * process already has open: written through a duplicate of it, at its offset, never
     * replaced.  Replacing the file behind a redirected stdout unlinked what was written to it,
     * reopening the name wrote over it from offset 0, and a pipe's "link" has no path. */
    const int dfd = !exists || S_ISLNK(sb.st_mode) ? descriptor_of(path) : -1;
    if (dfd >= 0) {
        if (dfd == 1 || dfd == 2) fflush(dfd == 1 ? stdout : stderr); /* what the process printed comes first */
        return write_direct(o, path, dup(dfd), 1, " (a descriptor)", err, errlen);
    }
    if (exists && S_ISLNK(sb.st_mode)) { /* written through: the file it names is the target */
        o->target = realpath(path, NULL);
        if (!o->target || stat(o->target, &sb) != 0) {
            snprintf(err, errlen, "'%s' is a symbolic link to a missing file: not followed", path);
            free(o->target);
            o->target = NULL;
            return SPS_ERR_IO;
        }
        target = o->target;
    }
    if (exists && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "'%s' is a directory: not replaced", path);
        free(o->target);
        o->target = NULL;
        return SPS_ERR_IO;
    }
    /* The file the process's stdout or stderr already writes (redirected there, reached through
     * a link such as one to /dev/stdout or /proc/<pid>/fd/1): written through that stream, as
     * a descriptor's name is.  Replacing it had unlinked what the stream wrote, and the stream
     * went on into the unlinked file. */
    for (int sfd = 1; exists && S_ISREG(sb.st_mode) && sfd <= 2; sfd++) {
        struct stat ss;
        if (fstat(sfd, &ss) == 0 && ss.st_dev == sb.st_dev && ss.st_ino == sb.st_ino) {
            fflush(sfd == 1 ? stdout : stderr);
            const char *how = sfd == 1 ? " (standard output's file)" : " (standard error's file)";
            return write_direct(o, path, dup(sfd), 1, how, err, errlen);
        }
    }
    if (exists && !S_ISREG(sb.st_mode)) { /* a device, FIFO or socket: written into, never replaced */
        /* the open does not block: a FIFO without a reader is an error (ENXIO), not a hang;
           then blocking writes as usual */
        const int fd = open(target, O_WRONLY | O_NOCTTY | O_NONBLOCK);
        const int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
        return write_direct(o, path, fd, fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0, " (a special file)",
                            err, errlen);
    }
    /* pid and a per-process count: threads (one context each) may write at once.  The name's
     * last component is cut where it and the suffix would pass NAME_MAX (a 250-byte name is
     * valid, its temporary with the suffix was not). */
    static atomic_uint seq;
    const char *slash = strrchr(target, '/');
    const size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0, suffix = 40; /* ".tmp.<pid>.<seq>" */
    size_t baselen = strlen(target) - dirlen;
    if (baselen + suffix > SPS_NAME_MAX) baselen = SPS_NAME_MAX - suffix;
    const size_t n = dirlen + baselen + suffix + 8;
    o->tmp = malloc(n);
    if (!o->tmp) {
        snprintf(err, errlen, "out of host memory: %zu bytes for a file name", n);
        free(o->target);
        o->target = NULL;
        return SPS_ERR_ALLOC;
    }
    snprintf(o->tmp, n, "%.*s%.*s.tmp.%ld.%u", (int)dirlen, target, (int)baselen, target + dirlen, (long)getpid(),
             (unsigned)atomic_fetch_add(&seq, 1u));
    const int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, (mode_t)mode);
    /* a regular file replaced keeps its permissions */
    const int moded = fd < 0 || !exists || fchmod(fd, sb.st_mode & 07777) == 0;
    o->f = fd >= 0 && moded ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
        snprintf(err, errlen, "cannot write '%s' (a temporary file in its directory): %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            remove(o->tmp);
        }
        free(o->tmp);
        free(o->target);
        o->tmp = NULL;
        o->target = NULL;
        return SPS_ERR_IO;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);
    return SPS_OK;
}

sps_status sps_out_close(sps_out_file *o, int ok, char *err, size_t errlen)
{
    sps_status st = SPS_OK;
    if (!ok || fflush(o->f) != 0 || ferror(o->f)) {
        if (ok) snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(errno));
        st = SPS_ERR_IO;
    } else if (!o->direct && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != ENOTSUP) {
        /* EINVAL/ENOTSUP: the file system (a pipe, some FUSE) does not sync */
        snprintf(err, errlen, "cannot sync '%s': %s", o->path, strerror(errno));
        st = SPS_ERR_IO;
    }
    if (fclose(o->f) != 0 && st == SPS_OK) {
        snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(errno));
        st = SPS_ERR_IO;
    }
    if (!o->direct) {
        const char *target = o->target ? o->target : o->path;
        if (st == SPS_OK && rename(o->tmp, target) != 0) {
            snprintf(err, errlen, "cannot replace '%s': %s", o->path, strerror(errno));
            st = SPS_ERR_IO;
        }
        if (st != SPS_OK) remove(o->tmp);
    }
    free(o->tmp);
    free(o->target);
    o->tmp = NULL;
    o->target = NULL;
    o->f = NULL;
    return st;
}

/* ---------------------------------------------------------------- public API (spsolve/file.h) */
struct sps_outfile_s {
    sps_out_file o;
    char *path; /* the caller's path, kept for the messages of close */
};

sps_status sps_outfile_open(const char *path, sps_outfile *o, FILE **f, char *err, size_t errlen)
{
    if (o) *o = NULL;
    if (f) *f = NULL;
    if (!path || !o || !f) {
        if (err && errlen) snprintf(err, errlen, "sps_outfile_open: NULL argument");
        return SPS_ERR_ARG;
    }
    struct sps_outfile_s *h = calloc(1, sizeof *h);
    const size_t n = strlen(path) + 1;
    if (h) h->path = malloc(n);
    if (!h || !h->path) {
        if (err && errlen) snprintf(err, errlen, "out of host memory opening '%s'", path);
        free(h);
        return SPS_ERR_ALLOC;
    }
    memcpy(h->path, path, n);
    const sps_status st = sps_out_open(&h->o, h->path, 0666, err, errlen);
    if (st != SPS_OK) {
        free(h->path);
        free(h);
        return st;
    }
    *o = h;
    *f = h->o.f;
    return SPS_OK;
}

sps_status sps_outfile_close(sps_outfile o, int ok, char *err, size_t errlen)
{
    if (!o) return SPS_OK;
    const sps_status st = sps_out_close(&o->o, ok, err, errlen);
    free(o->path);
    free(o);
    return st;
}
