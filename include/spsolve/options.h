/* libspsolve — self-describing options.
 *
 * Every format, solver and preconditioner declares the options it reads: name,
 * type, default, range or choices, one help line (sps_format_options_desc,
 * sps_solver_options_desc, sps_precond_options_desc).  Values are given by name
 * as strings, as a command line or a configuration file holds them, and checked
 * against the declaration in one place: an unknown name, a value that does not
 * parse or lies out of range is SPS_ERR_ARG naming the option.
 *
 *   sps_options o;
 *   sps_format_options_create(SPS_FMT_SELL, &o);
 *   sps_options_set(o, "slice-height", "16");
 *   sps_options_set(o, "sort-window", "1024");
 *   sps_matrix_convert(A, SPS_FMT_SELL, o, &B);
 *   sps_options_destroy(o);
 *
 * A solver or preconditioner holds its own options: sps_solver_set_option,
 * sps_precond_set_option. */
#ifndef SPSOLVE_OPTIONS_H
#define SPSOLVE_OPTIONS_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SPS_OPT_INT = 0, /**< an integer in [min, max] (max >= INT_MAX: no upper bound) */
    SPS_OPT_REAL,    /**< a finite number in [min, max] (max = HUGE_VAL: no upper bound) */
    SPS_OPT_BOOL,    /**< true/false (also on/off, yes/no, 1/0); min = max = 1: always true */
    SPS_OPT_CHOICE   /**< one of the words of choices */
} sps_option_type;

/** One declared option. */
typedef struct {
    const char *name;     /**< lower case, words joined by '-': "slice-height" */
    sps_option_type type;
    const char *def;      /**< the default, written as a value ("32", "10", "false", "auto") */
    double min, max;      /**< INT, REAL, BOOL: the range, both ends included */
    const char *choices;  /**< CHOICE: the words, '|'-separated ("auto|16|32"); INT: the only values
                               allowed ("16|32"), or NULL */
    const char *help;     /**< one line: what it does, for which format/solver */
} sps_option_desc;

/** A set of option values for one owner (a format, a solver, a preconditioner). */
typedef struct sps_options_s *sps_options;

/** Parse value as option d.  On success *out is the value (INT, REAL; BOOL 0/1;
 *  CHOICE the index of the word) and SPS_OK is returned; else SPS_ERR_ARG and why
 *  (when not NULL) says what was expected: "expected an integer in 32..256, got '16'". */
SPS_API sps_status sps_option_parse(const sps_option_desc *d, const char *value, double *out, char *why,
                                    size_t len);

/** An empty set for the n options of desc (kept by pointer: static tables), named
 *  owner ("sell") in messages; every option at its default. */
SPS_API sps_status sps_options_create(const char *owner, const sps_option_desc *desc, int n, sps_options *o);
/** A set for the options of format fmt (sps_format_options_desc); its rules between
 *  options are checked by sps_options_check and by sps_matrix_convert. */
SPS_API sps_status sps_format_options_create(sps_format fmt, sps_options *o);
/** Set option name to value (copied).  Unknown name, bad value or out of range:
 *  SPS_ERR_ARG, o unchanged, and sps_options_error(o) says which and why. */
SPS_API sps_status sps_options_set(sps_options o, const char *name, const char *value);
/** The value of name as set, else its default; NULL for a name o does not declare. */
SPS_API const char *sps_options_get(sps_options o, const char *name);
/** The parsed value of name (as sps_option_parse gives it); SPS_ERR_ARG for an unknown name. */
SPS_API sps_status sps_options_get_value(sps_options o, const char *name, double *value);
/** Nonzero when name was set (to any value, the default included). */
SPS_API int sps_options_is_set(sps_options o, const char *name);
/** The rules between options of the owner (sell: sort-window a multiple of
 *  slice-height; csr: csr-kernel hola has no cached A^T): SPS_ERR_ARG and
 *  sps_options_error when one is broken. */
SPS_API sps_status sps_options_check(sps_options o);
/** What the last failed call on o found: "slice-height: expected one of 16, 32, got '8'". */
SPS_API const char *sps_options_error(sps_options o);
/** The declarations o was made for, and their count. */
SPS_API const sps_option_desc *sps_options_desc(sps_options o, int *n);
/** Destroy a set.  NULL is ignored. */
SPS_API void sps_options_destroy(sps_options o);

/** The options format fmt declares (*n of them; NULL and 0 for none or an unknown format). */
SPS_API const sps_option_desc *sps_format_options_desc(sps_format fmt, int *n);
/** The options solver method name declares (sps_solver_list()); NULL and 0 for none. */
SPS_API const sps_option_desc *sps_solver_options_desc(const char *name, int *n);
/** The options preconditioner name declares (sps_precond_list()); NULL and 0 for none. */
SPS_API const sps_option_desc *sps_precond_options_desc(const char *name, int *n);

#ifdef __cplusplus
}
#endif
#endif
