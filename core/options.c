/* Options: declarations (spsolve/options.h), the one parser of values against
 * them, and the keyed sets formats, solvers and preconditioners read with
 * sps_opt_int / sps_opt_num.  Nothing here knows a format or a solver: the
 * owner hands over its declarations and, where some, its rules between options. */
#include "core/internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index of word in a '|'-separated list, or -1. */
static int word_index(const char *list, const char *word)
{
    const size_t len = strlen(word);
    int i = 0;
    for (const char *p = list; p; i++) {
        const char *bar = strchr(p, '|');
        const size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, word, len) == 0) return i;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* "expected one of a, b, c, got 'x'" from the list "a|b|c". */
static void expected_one_of(const char *list, const char *value, char *why, size_t len)
{
    size_t at = (size_t)snprintf(why, len, "expected one of ");
    for (const char *p = list; *p && at < len; p++) at += (size_t)snprintf(why + at, len - at, *p == '|' ? ", " : "%c", *p);
    if (at < len) snprintf(why + at, len - at, ", got '%s'", value);
}


static sps_status parse_int(const sps_option_desc *d, const char *value, double *out, char *why, size_t len)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(value, &end, 10);
    const int ok = end != value && *end == 0 && errno != ERANGE;
    if (d->choices) {
        if (!ok || word_index(d->choices, value) < 0) {
            if (why && len) expected_one_of(d->choices, value, why, len);
            return SPS_ERR_ARG;
        }
    } else if (!ok || (double)v < d->min || (double)v > d->max) {
        if (why && len && d->max >= (double)INT_MAX)
            snprintf(why, len, "expected an integer >= %.0f, got '%s'", d->min, value);
        else if (why && len)
            snprintf(why, len, "expected an integer in %.0f..%.0f, got '%s'", d->min, d->max, value);
        return SPS_ERR_ARG;
    }
    *out = (double)v;
    return SPS_OK;
}

static sps_status parse_real(const sps_option_desc *d, const char *value, double *out, char *why, size_t len)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(value, &end);
    if (end == value || *end != 0 || errno == ERANGE || !isfinite(v) || v < d->min || v > d->max) {
        /* say what was wrong: not a number, beyond double's range, or outside the option's */
        const char *what = end == value || *end != 0 ? "not a number"
                           : errno == ERANGE && fabs(v) < 1 ? "too small for a double: it would be 0"
                           : errno == ERANGE || !isfinite(v) ? "not a finite double"
                                                             : "out of range";
        if (why && len && isinf(d->max))
            snprintf(why, len, "expected a finite number >= %g, got '%s' (%s)", d->min, value, what);
        else if (why && len)
            snprintf(why, len, "expected a finite number in %g..%g, got '%s' (%s)", d->min, d->max, value, what);
        return SPS_ERR_ARG;
    }
    *out = v;
    return SPS_OK;
}

#define BOOL_WORDS "false|true|off|on|no|yes|0|1"

static sps_status parse_bool(const sps_option_desc *d, const char *value, double *out, char *why, size_t len)
{
    const int k = word_index(BOOL_WORDS, value);
    if (k < 0) {
        if (why && len) expected_one_of(BOOL_WORDS, value, why, len);
        return SPS_ERR_ARG;
    }
    const double v = k % 2;
    if (v < d->min || v > d->max) {
        if (why && len) snprintf(why, len, "expected %s (the only value), got '%s'", d->min > 0 ? "true" : "false", value);
        return SPS_ERR_ARG;
    }
    *out = v;
    return SPS_OK;
}

sps_status sps_option_parse(const sps_option_desc *d, const char *value, double *out, char *why, size_t len)
{
    if (why && len) why[0] = 0;
    if (!d || !value || !out) {
        if (why && len) snprintf(why, len, "NULL %s", !d ? "declaration" : !value ? "value" : "output");
        return SPS_ERR_ARG;
    }
    switch (d->type) {
    case SPS_OPT_INT: return parse_int(d, value, out, why, len);
    case SPS_OPT_REAL: return parse_real(d, value, out, why, len);
    case SPS_OPT_BOOL: return parse_bool(d, value, out, why, len);
    case SPS_OPT_CHOICE: {
        const int k = d->choices ? word_index(d->choices, value) : -1;
        if (k < 0) {
            if (why && len) expected_one_of(d->choices ? d->choices : "", value, why, len);
            return SPS_ERR_ARG;
        }
        *out = k;
        return SPS_OK;
    }
    }
    if (why && len) snprintf(why, len, "option type %d unknown", (int)d->type);
    return SPS_ERR_ARG;
}

static int find(const struct sps_options_s *o, const char *name)
{
    for (int i = 0; name && i < o->n; i++)
        if (strcmp(o->desc[i].name, name) == 0) return i;
    return -1;
}

sps_status sps_options_create_ruled(const char *owner, const sps_option_desc *desc, int n, sps_options_rule_fn rules,
                                    sps_options *out)
{
    if (!out || n < 0 || (n > 0 && !desc)) return SPS_ERR_ARG;
    *out = NULL;
    struct sps_options_s *o = calloc(1, sizeof *o);
    if (!o) return SPS_ERR_ALLOC;
    o->owner = owner ? owner : "options";
    o->desc = desc;
    o->n = n;
    o->rules = rules;
    o->val = calloc((size_t)n + 1, sizeof *o->val);
    o->given = calloc((size_t)n + 1, sizeof *o->given);
    if (!o->val || !o->given) {
        sps_options_destroy(o);
        return SPS_ERR_ALLOC;
    }
    for (int i = 0; i < n; i++)
        if (sps_option_parse(&desc[i], desc[i].def ? desc[i].def : "", &o->val[i], NULL, 0) != SPS_OK) {
            sps_options_destroy(o); /* a declaration whose default does not parse: tests walk every table */
            return SPS_ERR_ARG;
        }
    *out = o;
    return SPS_OK;
}

sps_status sps_options_create(const char *owner, const sps_option_desc *desc, int n, sps_options *o)
{
    return sps_options_create_ruled(owner, desc, n, NULL, o);
}

sps_status sps_options_set(sps_options o, const char *name, const char *value)
{
    if (!o) return SPS_ERR_ARG;
    const int i = find(o, name);
    if (i < 0) {
        size_t at = (size_t)snprintf(o->err, sizeof o->err, "unknown option '%s' (%s reads ", name ? name : "(null)",
                                     o->owner);
        for (int k = 0; k < o->n && at < sizeof o->err; k++)
            at += (size_t)snprintf(o->err + at, sizeof o->err - at, "%s%s", k ? ", " : "", o->desc[k].name);
        if (at < sizeof o->err) snprintf(o->err + at, sizeof o->err - at, "%s)", o->n ? "" : "none");
        return SPS_ERR_ARG;
    }
    char why[256];
    double v;
    if (sps_option_parse(&o->desc[i], value, &v, why, sizeof why) != SPS_OK) {
        snprintf(o->err, sizeof o->err, "%s: %s", name, why);
        return SPS_ERR_ARG;
    }
    char *copy = malloc(strlen(value) + 1);
    if (!copy) {
        snprintf(o->err, sizeof o->err, "%s: out of memory for its value", name);
        return SPS_ERR_ALLOC;
    }
    strcpy(copy, value);
    free(o->given[i]);
    o->given[i] = copy;
    o->val[i] = v;
    return SPS_OK;
}

const char *sps_options_get(sps_options o, const char *name)
{
    const int i = o ? find(o, name) : -1;
    return i < 0 ? NULL : o->given[i] ? o->given[i] : o->desc[i].def;
}

sps_status sps_options_get_value(sps_options o, const char *name, double *value)
{
    const int i = o ? find(o, name) : -1;
    if (i < 0 || !value) return SPS_ERR_ARG;
    *value = o->val[i];
    return SPS_OK;
}

int sps_options_is_set(sps_options o, const char *name)
{
    const int i = o ? find(o, name) : -1;
    return i >= 0 && o->given[i] != NULL;
}

sps_status sps_options_check(sps_options o)
{
    if (!o) return SPS_ERR_ARG;
    char why[256] = "";
    const char *name = o->rules ? o->rules(o, why, sizeof why) : NULL;
    if (!name) return SPS_OK;
    snprintf(o->err, sizeof o->err, "%s: %s", name, why);
    return SPS_ERR_ARG;
}

const char *sps_options_error(sps_options o) { return o ? o->err : "NULL options"; }

const sps_option_desc *sps_options_desc(sps_options o, int *n)
{
    if (n) *n = o ? o->n : 0;
    return o ? o->desc : NULL;
}

void sps_options_destroy(sps_options o)
{
    if (!o) return;
    for (int i = 0; o->given && i < o->n; i++) free(o->given[i]);
    free(o->given);
    free(o->val);
    free(o);
}

double sps_opt_num(sps_options o, const char *name)
{
    const int i = o ? find(o, name) : -1;
    return i < 0 ? NAN : o->val[i];
}

int sps_opt_int(sps_options o, const char *name)
{
    const int i = o ? find(o, name) : -1;
    return i < 0 ? 0 : (int)o->val[i];
}
