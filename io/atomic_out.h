/* libspsolve — files written whole or not at all (io/atomic_out.c): the data goes
 * to a temporary file beside the target (same file system), which is flushed,
 * synced and renamed over it; on any failure the temporary file is removed and
 * the target stays as it was.  A regular file replaced keeps its permissions.
 * Nothing but a regular file is ever replaced:
 *   a symbolic link is written through: the file it names is the target (its
 *     temporary beside it, in that directory); a link to nothing is refused;
 *   a device, FIFO or socket is written into directly (no temporary, no rename:
 *     /dev/full fails with its error and stays a device);
 *   a descriptor's name (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written through a
 *     duplicate of the descriptor, at its offset: a pipe, a terminal or a redirected file,
 *     never replaced (replacing the file behind a redirected stdout lost what was printed);
 *   so is the file that stdout or stderr already writes, by whatever name or link it is
 *     reached (the same device and inode);
 *   a directory is refused.
 * The temporary's name is the target's with ".tmp.<pid>.<n>", the last component cut to fit
 * NAME_MAX.
 * The temporary file is created anew (O_EXCL), never through a link planted at its
 * name (O_NOFOLLOW).  Messages name the path the caller gave.  Used by the Matrix
 * Market writers, the tuning file and the residual history. */
#ifndef SPS_IO_ATOMIC_OUT_H
#define SPS_IO_ATOMIC_OUT_H

#include "spsolve/types.h"

#include <stdio.h>

typedef struct {
    const char *path; /* as the caller gave it */
    char *target;     /* a symbolic link's resolved file, else NULL (path is the target) */
    char *tmp;        /* NULL when direct */
    int direct;       /* a special file, written into */
    FILE *f;          /* write here between open and close */
} sps_out_file;

/* Open the temporary file for path (created with permissions mode & ~umask).
 * SPS_ERR_IO / SPS_ERR_ALLOC with err saying why; then nothing is left behind. */
sps_status sps_out_open(sps_out_file *o, const char *path, int mode, char *err, size_t errlen);
/* Flush, sync, close and rename over path when ok (what was written succeeded);
 * else, or when any step fails (err says which), remove the temporary file. */
sps_status sps_out_close(sps_out_file *o, int ok, char *err, size_t errlen);

#endif
