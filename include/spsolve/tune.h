/* libspsolve — the autotuner: the fastest storage of a matrix, timed on its backend.
 *
 * sps_matrix_tune builds the candidates for A (the scalar formats, CSR's kernels
 * and launch variants for a scalar matrix; every compound format of the registry
 * and its layouts for a block or quaternion matrix), prunes them by a model, times
 * SpMV of the survivors on A's own backend within a budget and returns the fastest
 * as a new matrix.  The winner is remembered in a tuning file, so a second tune of
 * the same matrix on the same device and library version times nothing.  README
 * "Choosing a format" documents the candidates, the model and the file.
 *
 *   sps_tune_options o;
 *   sps_tune_options_default(&o);
 *   o.budget = 1.0;
 *   sps_tune_result r;
 *   sps_matrix B;
 *   if (sps_matrix_tune(A, &o, &B, &r) == SPS_OK) printf("%s: %.3f ms\n", r.choice, r.chosen_ms);
 *
 * The library never prints: problems with the tuning file are in r.warning. */
#ifndef SPSOLVE_TUNE_H
#define SPSOLVE_TUNE_H
#include "spsolve/types.h"
#include "spsolve/matrix.h"
#ifdef __cplusplus
extern "C" {
#endif

/** How sps_matrix_tune searches (sps_tune_options_default sets every field). */
typedef struct {
    double budget;     /**< seconds for building and timing candidates (default 2).  0: time nothing, not
                            even the reference, and take the model's pick (sps_matrix_auto_format) untimed
                            (from_model); the tuning file is then neither read nor written.  Above 0 the
                            reference (csr with its defaults; a compound matrix: bcsr with its defaults)
                            is timed first whatever the budget, the other candidates while it lasts. */
    int runs;          /**< timed runs of each candidate, the median is its time (default 7, at least 5) */
    int warmup;        /**< untimed products before them (default 2, at least 1) */
    double max_fill;   /**< skip a candidate whose stored entries (padding included) would exceed
                            max_fill x nnz, by the row-length model before building it and by its
                            footprint after (default 2; at least 1) */
    const char *cache; /**< the tuning file: NULL the default ($XDG_CACHE_HOME/spsolve/tune.json, else
                            $HOME/.cache/spsolve/tune.json), "off" none, else its path */
    int allow_nondeterministic; /**< let kernels that are not bit-reproducible compete (hola; default 0) */
} sps_tune_options;

/** The defaults of every field. */
SPS_API void sps_tune_options_default(sps_tune_options *o);

#define SPS_TUNE_SPEC_LEN 128
#define SPS_TUNE_MAX_CANDIDATES 64

/** One candidate of a tune. */
typedef struct {
    char spec[SPS_TUNE_SPEC_LEN]; /**< what sps_matrix_convert_spec builds: "sell slice-height=16" */
    double ms;                    /**< median SpMV time in ms; negative when not timed */
    char skipped[128];            /**< why not timed ("" when timed): pruned by the model, refused by the
                                       format, over the budget, the product failed */
} sps_tune_candidate;

/** What sps_matrix_tune did. */
typedef struct {
    char choice[SPS_TUNE_SPEC_LEN]; /**< the chosen spec (sps_matrix_convert_spec builds it again) */
    sps_format format;              /**< the format of the matrix returned */
    double chosen_ms;               /**< its median SpMV time in ms (recorded in the file when from_cache;
                                         negative when nothing was timed: from_model) */
    double default_ms;              /**< the same for the reference (csr with its defaults; a compound
                                         matrix: bcsr with its defaults) */
    double time_s;                  /**< wall time of the whole call: cache, builds, timing */
    int timed, skipped;             /**< candidates timed, and skipped (each with its reason below) */
    int from_cache;                 /**< the choice came from the tuning file: nothing was timed */
    int from_model;                 /**< budget 0, or the reference could not be timed: the model's pick */
    char cache_path[512];           /**< the tuning file used, "" when off */
    char warning[512];              /**< what went wrong with the tuning file, "" when nothing did */
    int ncandidates;                /**< entries of candidates[] (in the order they were considered) */
    sps_tune_candidate candidates[SPS_TUNE_MAX_CANDIDATES];
} sps_tune_result;

/** Build the fastest candidate for A into *B (a new matrix in A's context; A is unchanged)
 *  and describe the search in *res (may be NULL).  opt NULL: the defaults.  Candidates that
 *  fail to build or to run are skipped with their reason; failures of the tuning file are
 *  warnings (res->warning), never errors.  Errors: SPS_ERR_ARG (NULL A or B, an option out
 *  of range), and those of building the chosen matrix. */
SPS_API sps_status sps_matrix_tune(sps_matrix A, const sps_tune_options *opt, sps_matrix *B, sps_tune_result *res);

/** Convert A as a spec says: "format[ option=value ...][ variant=field=value,...]", the
 *  format's options by name (spsolve/options.h) and a launch variant of its kernels
 *  (kernels/launch.h: csr_unroll=4, pad_split=2, ...; ignored by the CPU backend).  The
 *  form of sps_tune_result.choice.  SPS_ERR_ARG naming what does not parse or is given twice. */
SPS_API sps_status sps_matrix_convert_spec(sps_matrix A, const char *spec, sps_matrix *B);

#ifdef __cplusplus
}
#endif
#endif
