/* libspsolve — files written whole or not at all (io/atomic_out.c): the data goes
 * to a temporary file beside the target (same file system), which is flushed,
 * synced and renamed over it; on any failure the temporary file is removed and
 * the target stays as it was.  A target that is a symbolic link, directory,
 * device or FIFO is never replaced, and the temporary file is created anew
 * (O_EXCL), never through a link planted at its name (O_NOFOLLOW).  Used by the
 * Matrix Market writers and the tuning file. */
#ifndef SPS_IO_ATOMIC_OUT_H
#define SPS_IO_ATOMIC_OUT_H

#include "spsolve/types.h"

#include <stdio.h>

typedef struct {
    const char *path;
    char *tmp;
    FILE *f; /* write here between open and close */
} sps_out_file;

/* Open the temporary file for path (created with permissions mode & ~umask).
 * SPS_ERR_IO / SPS_ERR_ALLOC with err saying why; then nothing is left behind. */
sps_status sps_out_open(sps_out_file *o, const char *path, int mode, char *err, size_t errlen);
/* Flush, sync, close and rename over path when ok (what was written succeeded);
 * else, or when any step fails (err says which), remove the temporary file. */
sps_status sps_out_close(sps_out_file *o, int ok, char *err, size_t errlen);

#endif
