/* libspsolve — what the autotuner (formats/tune.c) and its tuning file
 * (formats/tune_cache.c) share: the key of a tuned result and the file's entries. */
#ifndef SPS_FORMATS_TUNE_H
#define SPS_FORMATS_TUNE_H

#include "formats/format.h"

#include <stddef.h>

/* What a tuned result holds for: the device, its software stack, the library,
 * the matrix (sps_tune_key_of) and the candidates allowed. */
typedef struct {
    char device[256];  /* sps_context_device_name */
    char runtime[128]; /* sps_exec.device_version: "cpu openmp-201511 threads 2", "cuda driver ..." */
    char library[32];  /* the library version */
    char matrix[320];  /* the fingerprint */
    char search[64];   /* what was allowed to compete: "deterministic" or "any" (allow_nondeterministic),
                          then " max_fill=X" where max_fill is not its default */
} sps_tune_key;

/* One entry of the tuning file. */
typedef struct {
    sps_tune_key key;
    char choice[SPS_TUNE_SPEC_LEN]; /* sps_matrix_convert_spec's spec */
    double chosen_ms, default_ms, tune_s;
} sps_tune_entry;

/* The key of A in its context: n, m, nnz, entry and scalar type, the row lengths'
 * extremes and a histogram of them (powers of two), a 64-bit FNV-1a hash of rowptr and
 * col (host copies: rowptr n + 1 entries, col rowptr[n]), and " values=table" where
 * table (A's values would be kept as a table: sps_vdict_fits, on the GPU only). */
void sps_tune_key_of(sps_matrix A, const sps_index *rowptr, const sps_index *col, int table, sps_tune_key *k);

/* The tuning file for the option value opt (NULL: the default path, "off": none).
 * Returns path, or NULL for none (why in warn when that is not what was asked);
 * *create_dir: the default's directory may be created. */
const char *sps_tune_cache_path(const char *opt, char *path, size_t len, int *create_dir, char *warn, size_t wl);

/* Look k up in the file at path: 1 and *hit when found, else 0.  A missing file is
 * no warning; an unreadable or corrupt one is ignored with a warning appended to warn. */
int sps_tune_cache_lookup(const char *path, const sps_tune_key *k, sps_tune_entry *hit, char *warn, size_t wl);

/* Record e in the file at path, keeping the entries of other keys (a corrupt file's
 * entries are lost: it is replaced by a valid one): written beside it and renamed
 * over it.  A path that is a symbolic link or not a regular file is never replaced.
 * Returns 0, or -1 with why appended to warn. */
int sps_tune_cache_store(const char *path, int create_dir, const sps_tune_entry *e, char *warn, size_t wl);

/* Append "; "-separated text to warn. */
void sps_tune_warn(char *warn, size_t wl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
