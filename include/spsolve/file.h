/* libspsolve — output files written whole or not at all, as the library's own
 * writers write theirs (Matrix Market, the tuning file, the residual history), for
 * programs that write their own results (the apps' meshes, pictures and VTU files).
 *
 *   sps_outfile o;
 *   FILE *f;
 *   char err[256];
 *   if (sps_outfile_open("out.vtu", &o, &f, err, sizeof err) != SPS_OK) { report err; }
 *   int ok = fprintf(f, ...) >= 0;
 *   if (sps_outfile_close(o, ok, err, sizeof err) != SPS_OK) { report err; }
 *
 * What is written goes to a new temporary file beside the target (created with
 * O_EXCL | O_NOFOLLOW: never through a link planted at its name), which close flushes,
 * syncs and renames over the target; on any failure, or when the caller says the
 * writing failed, the temporary file is removed and the target stays as it was.  A
 * regular file replaced keeps its permissions.  Nothing but a regular file is ever
 * replaced: a symbolic link is written through (the file it names is the target; a
 * link to nothing is refused); a device, FIFO or socket is written into directly
 * (`/dev/null` stays a device); a descriptor's name (`/dev/stdout`, `/dev/fd/N`,
 * `/proc/self/fd/N`) is written through a duplicate of that descriptor, at its offset,
 * whatever it is open on (a terminal, a pipe, a redirected file: not replaced); a
 * directory is refused.  Messages name the path as given. */
#ifndef SPSOLVE_FILE_H
#define SPSOLVE_FILE_H
#include "spsolve/types.h"

#include <stddef.h>
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif

/** An output file between sps_outfile_open and sps_outfile_close. */
typedef struct sps_outfile_s *sps_outfile;

/** Open path for writing: *o the handle, *f the stream to write to (until close).
 *  SPS_ERR_IO (or SPS_ERR_ALLOC, SPS_ERR_ARG) with err saying why; nothing is then
 *  created and *o, *f are NULL.  err may be NULL (errlen 0). */
SPS_API sps_status sps_outfile_open(const char *path, sps_outfile *o, FILE **f, char *err, size_t errlen);
/** Finish o (closing its stream): ok non-zero when everything written succeeded, then
 *  the file replaces the target; 0 to abandon it (the target stays as it was, SPS_ERR_IO
 *  returned without a message).  A failure to flush, sync or rename is SPS_ERR_IO with
 *  err.  o is freed in every case; NULL is a no-op returning SPS_OK. */
SPS_API sps_status sps_outfile_close(sps_outfile o, int ok, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
