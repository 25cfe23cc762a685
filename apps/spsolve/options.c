/* spsolve CLI: option parsing (getopt_long), --help and --version.
 * Names of solvers, preconditioners, formats and generators come from the
 * library's registries, so the help and the errors list what this build has.
 * The parameters of the solvers, preconditioners and formats are the options
 * they declare (spsolve/options.h): one mechanism, over owner groups, makes
 * their flags, checks, --help lines and values from the declarations. */
#include "options.h"
#include "files.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    OPT_X0 = 256, OPT_SOLVER, OPT_PRECOND, OPT_FORMAT, OPT_BACKEND, OPT_DEVICE, OPT_PRECISION, OPT_MONITOR,
    OPT_HISTORY, OPT_JSON, OPT_NONFINITE, OPT_MAX_MEMORY, OPT_VERSION, OPT_BLOCK_SIZE, OPT_WRITE_EXPANSION, OPT_TUNE,
    OPT_TUNE_BUDGET, OPT_TUNE_CACHE,
    /* the declared parameters: OPT_PARAM + their index in params */
    OPT_PARAM, OPT_PARAM_END = OPT_PARAM + CLI_MAX_PARAMS
};

/* The fixed options; the declared parameters are appended from the declarations. */
static const struct option fixed_options[] = {
    {"matrix", required_argument, NULL, 'm'},
    {"rhs", required_argument, NULL, 'b'},
    {"x0", required_argument, NULL, OPT_X0},
    {"output", required_argument, NULL, 'o'},
    {"solver", required_argument, NULL, OPT_SOLVER},
    {"precond", required_argument, NULL, OPT_PRECOND},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"tune", no_argument, NULL, OPT_TUNE},
    {"tune-budget", required_argument, NULL, OPT_TUNE_BUDGET},
    {"tune-cache", required_argument, NULL, OPT_TUNE_CACHE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"monitor", no_argument, NULL, OPT_MONITOR},
    {"history", required_argument, NULL, OPT_HISTORY},
    {"json", no_argument, NULL, OPT_JSON},
    {"allow-nonfinite", no_argument, NULL, OPT_NONFINITE},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"block-size", required_argument, NULL, OPT_BLOCK_SIZE},
    {"write-expansion", required_argument, NULL, OPT_WRITE_EXPANSION},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
};
#define NFIXED ((int)(sizeof fixed_options / sizeof fixed_options[0]))
#define MAX_OWNERS 32

/* ---------------------------------------------------------------- owner groups */
/* The owners of declared options of one kind (the solvers, the preconditioners,
 * the formats of this build), in registry order (the order of the messages).
 * An owner named "" stands for every owner of the group (the options every
 * solver reads); its options are listed without owner names. */
typedef struct owner_group owner_group;
struct owner_group {
    const char *heading; /* the --help section */
    const char *picker;  /* the flag that picks the owner: a parameter it does not read is
                            warned about; NULL: picked later (the solver, from the matrix), no warning */
    const char *(*picked)(const cli_options *opt); /* the owner picked (with picker) */
    void (*owners)(owner_group *g);                /* fills name[] and n */
    const sps_option_desc *(*desc)(const char *owner, int *n);
    sps_status (*create)(const char *owner, sps_options *o); /* NULL: sps_options_create of desc */
    int n;
    const char *name[MAX_OWNERS];
    char names[512]; /* storage of names split from a registry list */
};

/* The entries of a comma-separated registry list ("cg, bicgstab, gmres") appended to g->name. */
static void owners_from_list(owner_group *g, const char *list)
{
    size_t at = 0;
    for (const char *p = list; p && *p && g->n < MAX_OWNERS;) {
        while (*p == ' ' || *p == ',') p++;
        size_t len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ') len--;
        if (len == 0 || at + len + 1 > sizeof g->names) break;
        memcpy(g->names + at, p, len);
        g->names[at + len] = 0;
        g->name[g->n++] = g->names + at;
        at += len + 1;
        p += strcspn(p, ",");
    }
}

/* Solvers: "" (rtol, atol, maxit: every solver) then each method. */
static void solver_owners(owner_group *g)
{
    g->name[g->n++] = "";
    owners_from_list(g, sps_solver_list());
}
static const sps_option_desc *solver_desc(const char *owner, int *n) { return sps_solver_options_desc(*owner ? owner : NULL, n); }

static void precond_owners(owner_group *g) { owners_from_list(g, sps_precond_list()); }
static const char *precond_picked(const cli_options *opt) { return opt->precond; }

/* Formats in sps_format order (the order of the messages), those of this build. */
static void format_owners(owner_group *g)
{
    for (int f = 0; f < SPS_FMT_AUTO && g->n < MAX_OWNERS; f++)
        if (strcmp(sps_format_name((sps_format)f), "?") != 0) g->name[g->n++] = sps_format_name((sps_format)f);
}
static const char *format_picked(const cli_options *opt)
{
    return opt->format == SPS_FMT_AUTO ? "auto" : sps_format_name(opt->format);
}
static const sps_option_desc *format_desc(const char *owner, int *n)
{
    sps_format f;
    if (sps_format_by_name(owner, &f) == SPS_OK) return sps_format_options_desc(f, n);
    *n = 0;
    return NULL;
}
/* with the format's rules between options */
static sps_status format_create(const char *owner, sps_options *o)
{
    sps_format f;
    return sps_format_by_name(owner, &f) == SPS_OK ? sps_format_options_create(f, o) : SPS_ERR_ARG;
}

enum { GROUP_SOLVER, GROUP_PRECOND, GROUP_FORMAT, NGROUPS };
static owner_group groups[NGROUPS] = {
    [GROUP_SOLVER] = {.heading = "Solver parameters (read by every solver or by the solvers named; ignored by "
                                 "the others)",
                      .owners = solver_owners, .desc = solver_desc},
    [GROUP_PRECOND] = {.heading = "Preconditioner parameters (each read by the preconditioners named; others "
                                  "warn)",
                       .picker = "precond", .picked = precond_picked, .owners = precond_owners,
                       .desc = sps_precond_options_desc},
    [GROUP_FORMAT] = {.heading = "Format parameters (each read by the formats named; ignored with a warning "
                                 "otherwise)",
                      .picker = "format", .picked = format_picked, .owners = format_owners, .desc = format_desc,
                      .create = format_create},
};

/* The index of owner name in g, or -1. */
static int group_owner(const owner_group *g, const char *name)
{
    for (int k = 0; name && k < g->n; k++)
        if (strcmp(g->name[k], name) == 0) return k;
    return -1;
}

/* Defaults the CLI sets apart from the declaration's: rtol follows the precision
 * (it is set, not given, when the solve is f32/c32 and --rtol is not). */
static const struct {
    const char *name, *value;
} single_defaults[] = {{"rtol", CLI_DEFAULT_RTOL_SINGLE}};

/* A parameter: an option some owners of group g declare, under the declaration
 * of the first of them; owners: a bit per owner of g declaring it.  Names are
 * unique over the groups and the fixed options (a second declaration of a name
 * in another group is not a flag of its own). */
typedef struct {
    const sps_option_desc *d;
    int g;
    unsigned owners;
} param;
static param params[CLI_MAX_PARAMS];
static int nparams;
static struct option long_options[NFIXED + CLI_MAX_PARAMS + 1];
/* ':' first: a missing value is ':', told apart from an unknown option */
static const char short_options[] = ":m:b:o:h";

static int param_find(const char *name)
{
    for (int k = 0; k < nparams; k++)
        if (strcmp(params[k].d->name, name) == 0) return k;
    return -1;
}

/* params and long_options from the declarations of every owner of every group. */
static void collect_params(void)
{
    if (nparams) return;
    memcpy(long_options, fixed_options, sizeof fixed_options);
    for (int g = 0; g < NGROUPS; g++) {
        owner_group *G = &groups[g];
        G->owners(G);
        for (int o = 0; o < G->n; o++) {
            int n = 0;
            const sps_option_desc *d = G->desc(G->name[o], &n);
            for (int i = 0; i < n; i++) {
                int k = param_find(d[i].name);
                if (k >= 0 && params[k].g != g) continue;
                if (k < 0) {
                    if (nparams == CLI_MAX_PARAMS) continue;
                    k = nparams++;
                    params[k] = (param){.d = &d[i], .g = g};
                    long_options[NFIXED + k] = (struct option){
                        d[i].name, d[i].type == SPS_OPT_BOOL ? no_argument : required_argument, NULL, OPT_PARAM + k};
                }
                params[k].owners |= 1u << o;
            }
        }
    }
}

/* One set of options per owner of every group, so that every value is checked
 * against each declaration of its name and the rules of each owner (a sort
 * window that does not fit the slice height is an error whatever --format). */
struct cli_sets {
    sps_options of[NGROUPS][MAX_OWNERS];
    unsigned char given[CLI_MAX_PARAMS];
};

static void sets_free(struct cli_sets *s)
{
    if (!s) return;
    for (int g = 0; g < NGROUPS; g++)
        for (int o = 0; o < MAX_OWNERS; o++) sps_options_destroy(s->of[g][o]);
    free(s);
}

static struct cli_sets *sets_make(void)
{
    struct cli_sets *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "spsolve: out of memory\n");
        return NULL;
    }
    for (int g = 0; g < NGROUPS; g++)
        for (int o = 0; o < groups[g].n; o++) {
            const char *name = groups[g].name[o];
            int n = 0;
            const sps_option_desc *d = groups[g].desc(name, &n);
            const sps_status st = groups[g].create ? groups[g].create(name, &s->of[g][o])
                                                   : sps_options_create(*name ? name : "every solver", d, n,
                                                                        &s->of[g][o]);
            if (st != SPS_OK) {
                fprintf(stderr, "spsolve: cannot make the options of %s: %s\n", *name ? name : "every solver",
                        st == SPS_ERR_ALLOC ? "out of memory" : sps_status_name(st));
                sets_free(s);
                return NULL;
            }
        }
    return s;
}

/* --NAME VALUE into every owner that declares NAME; messages "--NAME: why". */
static int param_set(struct cli_sets *s, int k, const char *value)
{
    const param *p = &params[k];
    for (int o = 0; o < groups[p->g].n; o++)
        if ((p->owners & (1u << o)) && sps_options_set(s->of[p->g][o], p->d->name, value) != SPS_OK) {
            fprintf(stderr, "spsolve: --%s\n", sps_options_error(s->of[p->g][o]));
            return 0;
        }
    return 1;
}

/* The owner names of bits, ", "-separated, into f. */
static void print_owners(FILE *f, const owner_group *g, unsigned bits)
{
    const char *sep = "";
    for (int o = 0; o < g->n; o++)
        if (bits & (1u << o)) {
            fprintf(f, "%s%s", sep, g->name[o]);
            sep = ", ";
        }
}

/* A parameter of group `only` (-1: of every group) that the picked owner does not
 * read is reported on stderr and ignored. */
static void warn_unread(const struct cli_sets *s, const cli_options *opt, int only)
{
    for (int k = 0; k < nparams; k++) {
        const owner_group *g = &groups[params[k].g];
        if (!s->given[k] || !g->picker || (only >= 0 && params[k].g != only)) continue;
        /* without --format the format is picked once the matrix is read (cli_choose_format) */
        if (only < 0 && params[k].g == GROUP_FORMAT && !opt->format_name) continue;
        const int o = group_owner(g, g->picked(opt));
        if (o >= 0 && (params[k].owners & (1u << o))) continue;
        fprintf(stderr, "spsolve: warning: --%s has no effect with --%s %s (it applies to ", params[k].d->name,
                g->picker, g->picked(opt));
        print_owners(stderr, g, params[k].owners);
        fprintf(stderr, ")\n");
    }
}

/* The rules between options of every owner, the warnings of warn_unread.  opt->fmt
 * is the picked format's set. */
static int sets_finish(struct cli_sets *s, cli_options *opt)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int o = 0; o < groups[g].n; o++)
            if (sps_options_check(s->of[g][o]) != SPS_OK) {
                fprintf(stderr, "spsolve: --%s\n", sps_options_error(s->of[g][o]));
                return 0;
            }
    warn_unread(s, opt, -1);
    const int single = opt->precision == SPS_F32 || opt->precision == SPS_C32;
    for (size_t i = 0; single && i < sizeof single_defaults / sizeof single_defaults[0]; i++) {
        const int k = param_find(single_defaults[i].name);
        if (k >= 0 && !s->given[k] && !param_set(s, k, single_defaults[i].value)) return 0;
    }
    /* --format auto: the picked format's defaults (format parameters were warned about above) */
    const int fo = group_owner(&groups[GROUP_FORMAT], format_picked(opt));
    opt->fmt = fo >= 0 ? s->of[GROUP_FORMAT][fo] : NULL;
    return 1;
}

/* The value of parameter name (from the first owner declaring it); def when none does. */
static double param_value(const struct cli_sets *s, const char *name, double def)
{
    const int k = param_find(name);
    double v = def;
    for (int o = 0; k >= 0 && o < groups[params[k].g].n; o++)
        if ((params[k].owners & (1u << o)) &&
            sps_options_get_value(s->of[params[k].g][o], name, &v) == SPS_OK)
            break;
    return v;
}

/* The values of the options owner (and the group's "" owner) reads, as given or
 * by default, to set(h, name, value). */
static sps_status group_apply(const cli_options *opt, int g, const char *owner,
                              sps_status (*set)(void *h, const char *name, const char *value), void *h)
{
    for (int o = 0; opt->sets && o < groups[g].n; o++) {
        if (*groups[g].name[o] && strcmp(groups[g].name[o], owner) != 0) continue;
        int n = 0;
        const sps_option_desc *d = sps_options_desc(opt->sets->of[g][o], &n);
        for (int i = 0; i < n; i++) {
            const sps_status st = set(h, d[i].name, sps_options_get(opt->sets->of[g][o], d[i].name));
            if (st != SPS_OK) return st;
        }
    }
    return SPS_OK;
}

static sps_status solver_set(void *h, const char *name, const char *value)
{
    return sps_solver_set_option((sps_solver)h, name, value);
}
static sps_status precond_set(void *h, const char *name, const char *value)
{
    return sps_precond_set_option((sps_precond)h, name, value);
}

sps_status cli_solver_set_options(const cli_options *opt, sps_solver s)
{
    return group_apply(opt, GROUP_SOLVER, sps_solver_name(s), solver_set, s);
}

sps_status cli_precond_set_options(const cli_options *opt, sps_precond P)
{
    return group_apply(opt, GROUP_PRECOND, opt->precond, precond_set, P);
}

int cli_list_contains(const char *list, const char *name)
{
    const size_t len = strlen(name);
    const char *p = list;
    while (p && *p) {
        while (*p == ' ' || *p == ',') p++;
        const char *end = strchr(p, ',');
        size_t tok = end ? (size_t)(end - p) : strlen(p);
        while (tok > 0 && p[tok - 1] == ' ') tok--;
        if (tok == len && len > 0 && strncmp(p, name, len) == 0) return 1;
        p = end;
    }
    return 0;
}

void cli_options_free(cli_options *opt)
{
    sets_free(opt->sets);
    opt->sets = NULL;
    opt->fmt = NULL;
}

void cli_choose_format(cli_options *opt)
{
    if (opt->format_name) return;
    if (opt->tune) { /* picked by the tuner (format auto): format parameters do not apply */
        warn_unread(opt->sets, opt, GROUP_FORMAT);
        return;
    }
    /* the model's pick (sps_matrix_auto_format: bcsr for compound entries), built with
     * its defaults: format parameters need the format named */
    opt->format = SPS_FMT_AUTO;
    opt->fmt = NULL;
    warn_unread(opt->sets, opt, GROUP_FORMAT);
}

int cli_format_options_changed(const cli_options *opt)
{
    int n = 0;
    const sps_option_desc *d = sps_options_desc(opt->fmt, &n);
    for (int i = 0; i < n; i++) {
        double v, def;
        if (sps_options_get_value(opt->fmt, d[i].name, &v) == SPS_OK &&
            sps_option_parse(&d[i], d[i].def, &def, NULL, 0) == SPS_OK && v != def)
            return 1;
    }
    return 0;
}

int cli_format_option_values(sps_options set, cli_fopt_value *out)
{
    int n = 0;
    const sps_option_desc *d = sps_options_desc(set, &n);
    if (n > CLI_MAX_FOPTS) n = CLI_MAX_FOPTS;
    for (int i = 0; i < n; i++) {
        cli_fopt_value *v = &out[i];
        snprintf(v->key_buf, sizeof v->key_buf, "%s", d[i].name);
        for (char *c = v->key_buf; *c; c++)
            if (*c == '-') *c = '_';
        v->key = v->key_buf;
        v->num = 0;
        v->str = NULL;
        sps_options_get_value(set, d[i].name, &v->num);
        switch (d[i].type) {
        case SPS_OPT_INT: v->kind = CLI_VAL_INT; break;
        case SPS_OPT_REAL: v->kind = CLI_VAL_NUM; break;
        case SPS_OPT_BOOL: v->kind = CLI_VAL_BOOL; break;
        case SPS_OPT_CHOICE:
            v->kind = CLI_VAL_STR;
            v->str = sps_options_get(set, d[i].name);
            break;
        }
    }
    return n;
}

/* The generator names ("poisson2d" of "poisson2d:N, poisson3d:N"): a -m value
 * that starts with one of them and a colon is generated, not read. */
static int is_generator_spec(const char *spec)
{
    const char *p = sps_matrix_generate_list();
    while (p && *p) {
        while (*p == ' ' || *p == ',') p++;
        const char *colon = strchr(p, ':');
        if (!colon) break;
        size_t len = (size_t)(colon - p);
        if (len > 0 && strncmp(spec, p, len) == 0 && spec[len] == ':') return 1;
        p = strchr(colon, ',');
    }
    return 0;
}

/* Help text is wrapped at this column, continuation lines indented to HELP_COL. */
#define HELP_WIDTH 96
#define HELP_COL 24

/* Words of text from column *col on, wrapped at HELP_WIDTH. */
static void put_wrapped(FILE *f, const char *text, int *col)
{
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        const int len = (int)strcspn(p, " ");
        if (*col + 1 + len > HELP_WIDTH && *col > HELP_COL) *col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
        else if (*col > HELP_COL) *col += fprintf(f, " ");
        *col += fprintf(f, "%.*s", len, p);
        p += len;
    }
}

/* The number that ends choice t (len chars) after a stem of *stem chars
 * ("sweeps:10": 10 after "sweeps:"), or -1 when t does not end in one (or in one
 * written with a leading zero, which "a..b" would not give back). */
static long choice_number(const char *t, size_t len, size_t *stem)
{
    size_t k = len;
    while (k > 0 && t[k - 1] >= '0' && t[k - 1] <= '9') k--;
    if (k == len || len - k > 9 || (t[k] == '0' && len - k > 1)) return -1;
    *stem = k;
    long v = 0;
    for (size_t i = k; i < len; i++) v = 10 * v + (t[i] - '0');
    return v;
}

/* The '|'-separated choices of a declaration, with runs of 3 or more consecutive
 * numbers of one stem written as a range: "auto|1|2|...|32" as "auto|1..32",
 * "exact|sweeps:1|...|sweeps:6|sweeps:8" as "exact|sweeps:1..6|sweeps:8".  Every
 * choice is listed (no fixed buffer cuts the list short) and the line stays
 * short enough to read.  Returns the characters written. */
static int put_choices(FILE *f, const char *choices)
{
    int col = 0;
    for (const char *p = choices; *p;) {
        const size_t len = strcspn(p, "|");
        size_t stem = 0, stem2 = 0;
        const long first = choice_number(p, len, &stem);
        long last = first;
        int count = 1;
        const char *q = p + len; /* the '|' (or NUL) after the run */
        while (first >= 0 && *q == '|') {
            const size_t len2 = strcspn(q + 1, "|");
            const long v = choice_number(q + 1, len2, &stem2);
            if (v != last + 1 || stem2 != stem || strncmp(q + 1, p, stem) != 0) break;
            last = v;
            count++;
            q += 1 + len2;
        }
        if (count >= 3) {
            col += fprintf(f, "%.*s%ld..%ld", (int)stem, p, first, last);
            p = q;
        } else {
            col += fprintf(f, "%.*s", (int)len, p);
            p += len;
        }
        if (*p == '|') {
            col += fprintf(f, "|");
            p++;
        }
    }
    return col;
}

/* printf to text[*at ..] (size chars in all), keeping *at within the buffer so
 * that a help text longer than it is cut, not written past. */
static void text_add(char *text, size_t size, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(text + *at, size - *at, fmt, ap);
    va_end(ap);
    if (n > 0) *at = *at + (size_t)n < size ? *at + (size_t)n : size - 1;
}

/* One declared parameter of group g:
 *   --NAME ARG          OWNERS: HELP (default D; range)
 * OWNERS are left out when every owner of the group reads it, or when HELP
 * itself starts with them ("cheby: ..."): said once, not twice. */
static void print_param(FILE *f, const param *p)
{
    const sps_option_desc *d = p->d;
    const owner_group *g = &groups[p->g];
    char text[1024], owners[512];
    int col = fprintf(f, "      --%s", d->name);
    if (d->choices) {
        col += fprintf(f, " "); /* a statement apart: the order of a sum's calls is unspecified */
        col += put_choices(f, d->choices);
    }
    else if (d->type == SPS_OPT_INT && d->max < INT_MAX) col += fprintf(f, " %.0f..%.0f", d->min, d->max);
    else if (d->type == SPS_OPT_INT) col += fprintf(f, " N");
    else if (d->type == SPS_OPT_REAL) col += fprintf(f, " X");
    if (col >= HELP_COL) col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
    else col += fprintf(f, "%*s", HELP_COL - col, "");
    size_t at = 0, no = 0;
    int every = 0;
    owners[0] = 0;
    for (int o = 0; o < g->n; o++) every |= (p->owners & (1u << o)) && !*g->name[o];
    for (int o = 0; o < g->n && !every; o++)
        if (p->owners & (1u << o)) text_add(owners, sizeof owners, &no, "%s%s", no ? ", " : "", g->name[o]);
    if (no > 0 && !(strncmp(d->help, owners, no) == 0 && d->help[no] == ':'))
        text_add(text, sizeof text, &at, "%s: ", owners);
    text_add(text, sizeof text, &at, "%s (default %s", d->help,
             d->type == SPS_OPT_BOOL ? (strcmp(d->def, "false") == 0 ? "off" : "on") : d->def);
    for (size_t i = 0; i < sizeof single_defaults / sizeof single_defaults[0]; i++)
        if (strcmp(single_defaults[i].name, d->name) == 0)
            text_add(text, sizeof text, &at, "; %s for f32/c32", single_defaults[i].value);
    if (d->type == SPS_OPT_INT && !d->choices && d->max >= INT_MAX) text_add(text, sizeof text, &at, "; N >= %.0f", d->min);
    if (d->type == SPS_OPT_REAL && isinf(d->max)) text_add(text, sizeof text, &at, "; X >= %g", d->min);
    else if (d->type == SPS_OPT_REAL) text_add(text, sizeof text, &at, "; X in %g..%g", d->min, d->max);
    text_add(text, sizeof text, &at, ")");
    put_wrapped(f, text, &col);
    fputc('\n', f);
}

/* The parameters of group g under its heading (nothing when it has none). */
static void print_group(FILE *f, int g)
{
    for (int k = 0, head = 0; k < nparams; k++) {
        if (params[k].g != g) continue;
        if (!head++) fprintf(f, "%s\n", groups[g].heading);
        print_param(f, &params[k]);
    }
}

/* One option's help whose text holds a list from a registry (its length unknown here):
 * the flags in the first HELP_COL columns, the text wrapped after them */
static void help_entry(FILE *f, const char *flags, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void help_entry(FILE *f, const char *flags, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int col = fprintf(f, "%-*s", HELP_COL, flags);
    put_wrapped(f, text, &col);
    fputc('\n', f);
}

static void print_help(FILE *f)
{
    fprintf(f,
            "usage: spsolve [-m A.mtx|GENERATOR] [-b b.mtx] [--x0 x0.mtx] [-o x.mtx] [options]\n"
            "\n"
            "Solve A x = b with a Krylov method of libspsolve and check the answer.\n"
            "\n"
            "Problem\n");
    help_entry(f, "  -m, --matrix SRC", "Matrix Market file (.mtx or .mtx.gz) or a generated problem (default: %s); "
               "generators: %s", CLI_DEFAULT_PROBLEM, sps_matrix_generate_list());
    fprintf(f,
            "  -b, --rhs FILE        right-hand side (default: b = A*1, and ||x-1||/||1|| is reported)\n"
            "      --x0 FILE         initial guess (default: 0)\n"
            "  -o, --output FILE     write x (Matrix Market array) when the solve converged\n"
            "      --allow-nonfinite accept NaN/Inf values in the matrix file\n"
            "      --max-memory SIZE refuse a -m file whose declared entries take more than SIZE\n"
            "                        to read, or whose solve's host vectors would (bytes, or with\n"
            "                        K, M, G, T; none: no limit; default: half the physical memory)\n"
            "      --block-size B    read the scalar -m file as BxB blocks (2..8; 1: scalar entries)\n"
            "      --write-expansion FILE\n"
            "                        write the scalar expansion of the matrix (Matrix Market)\n"
            "Solver\n"
            "      --solver NAME     %s (default: cg for a real symmetric or a hermitian\n"
            "                        matrix as declared by its source, else gmres)\n"
            "      --precond NAME    %s (default: none)\n",
            sps_solver_list(), sps_precond_list());
    print_group(f, GROUP_SOLVER);
    print_group(f, GROUP_PRECOND);
    fprintf(f, "Execution\n");
    help_entry(f, "      --format NAME", "storage format: %s; or auto (the default): picked from the matrix by a "
               "model of SpMV times (README, Choosing a format); format parameters need the format named",
               sps_format_list());
    fprintf(f,
            "      --tune            time the candidate formats on this matrix and device and take\n"
            "                        the fastest (implies --format auto; README, Tuning)\n"
            "      --tune-budget S   seconds --tune may spend timing (default 2; 0: the model's pick)\n"
            "      --tune-cache PATH tuning file (default $XDG_CACHE_HOME/spsolve/tune.json, else\n"
            "                        ~/.cache/spsolve/tune.json); off: none\n"
            "      --backend NAME    cpu, cuda or auto (default: auto = cuda when a GPU is usable)\n"
            "      --device N        CUDA device ordinal (default 0)\n"
            "      --precision P     f32 or f64 (default f64); complex files solve in c32/c64;\n"
            "                        c32/c64 force a complex solve\n");
    print_group(f, GROUP_FORMAT);
    fprintf(f,
            "Output\n"
            "      --monitor         print the residual of every iteration (to stderr with --json)\n"
            "      --history FILE    write iteration,residual as CSV\n"
            "      --json            print the summary as one JSON object on stdout\n"
            "  -h, --help            this text\n"
            "      --version         version and build\n"
            "\n"
            "Exit status: 0 converged; 1 usage, input or setup error; 2 solve ended without\n"
            "convergence (iteration limit, breakdown, NaN) or failed the residual check.\n"
            "\n"
            "This build: backends cpu%s%s.\n",
            sps_cuda_compiled() ? ", cuda" : "",
            sps_cuda_compiled() ? (sps_cuda_available() ? " (GPU available)" : " (no usable GPU)")
                                : " (built without CUDA)");
}

static void usage_hint(void) { fprintf(stderr, "Try 'spsolve --help' for more information.\n"); }

/* Whether path is the file, pipe or terminal of standard output (/dev/stdout, a link to it, or
 * the file stdout is redirected to). */
static int names_stdout(const char *path)
{
    struct stat a, b;
    return path && stat(path, &a) == 0 && fstat(1, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* --max-memory: bytes with an optional K/M/G/T (powers of 1024) suffix, or "none"
 * (no limit: -1); 0 is refused (the library reads 0 as the default). */
static int parse_size(const char *opt, const char *s, int64_t *out)
{
    if (strcmp(s, "none") == 0) {
        *out = -1;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    double mul = 1;
    if (end != s && *end) {
        const char *u = "KMGT", c0 = (char)(end[0] & ~0x20), *q = c0 ? strchr(u, c0) : NULL; /* ' ' -> 0 */
        if (q && (end[1] == 0 || ((end[1] == 'B' || end[1] == 'b') && end[2] == 0))) {
            for (const char *k = u; k <= q; k++) mul *= 1024;
            end += strlen(end);
        }
    }
    if (end == s || *end != 0 || errno == ERANGE || !(v * mul >= 1) || v * mul > 9.2e18) {
        fprintf(stderr, "spsolve: --%s: expected a size in bytes (e.g. 8G, 500M) or none, got '%s'\n", opt, s);
        return 0;
    }
    *out = (int64_t)(v * mul);
    return 1;
}

/* Strict integer parsing into lo..hi (hi = INT_MAX: no upper bound but int's). */
static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != 0 || errno == ERANGE || v < lo || v > hi) {
        if (hi == INT_MAX) fprintf(stderr, "spsolve: --%s: expected an integer >= %ld, got '%s'\n", opt, lo, s);
        else fprintf(stderr, "spsolve: --%s: expected an integer in %ld..%ld, got '%s'\n", opt, lo, hi, s);
        return 0;
    }
    *out = (int)v;
    return 1;
}

static cli_parse_result parse_argv(int argc, char **argv, cli_options *opt);

cli_parse_result cli_parse_options(int argc, char **argv, cli_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->matrix = CLI_DEFAULT_PROBLEM;
    opt->precond = "none";
    opt->format = SPS_FMT_AUTO;
    opt->backend = SPS_BACKEND_AUTO;
    opt->precision = SPS_F64;
    opt->block_size = 1;
    opt->tune_budget = -1; /* not given: the library's default */
    collect_params();
    if (!(opt->sets = sets_make())) return CLI_PARSE_EXIT_USAGE;
    const cli_parse_result r = parse_argv(argc, argv, opt);
    if (r != CLI_PARSE_RUN) cli_options_free(opt);
    return r;
}

/* getopt_long again over argv with the same options, reading none of the values:
 * a parse stopped at an error has not reached every option, and only getopt knows
 * which word is an option ("--jso" abbreviated) and which is an option's value
 * ("-o --json" names the output file). */
int cli_wants_json(int argc, char **argv)
{
    collect_params();
    opterr = 0;
    optind = 0;
    int c, json = 0;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) json |= c == OPT_JSON;
    return json;
}

/* getopt over argv; declared parameters into opt->sets. */
static cli_parse_result parse_argv(int argc, char **argv, cli_options *opt)
{
    opterr = 0; /* our own messages, with the usage hint */
    optind = 0; /* glibc: a full re-initialisation (a second parse, e.g. the fuzz harness, starts clean) */
    int c;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (c >= OPT_PARAM && c < OPT_PARAM + nparams) {
            opt->sets->given[c - OPT_PARAM] = 1;
            if (!param_set(opt->sets, c - OPT_PARAM, optarg ? optarg : "true")) return CLI_PARSE_EXIT_USAGE;
            continue;
        }
        switch (c) {
        case 'm': opt->matrix = optarg; break;
        case 'b': opt->rhs = optarg; break;
        case OPT_X0: opt->x0 = optarg; break;
        case 'o': opt->output = optarg; break;
        case OPT_HISTORY: opt->history = optarg; break;
        case OPT_SOLVER:
            if (!cli_list_contains(sps_solver_list(), optarg)) {
                fprintf(stderr, "spsolve: unknown solver '%s' (available: %s)\n", optarg, sps_solver_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->solver = optarg;
            break;
        case OPT_PRECOND:
            if (!cli_list_contains(sps_precond_list(), optarg)) {
                fprintf(stderr, "spsolve: unknown preconditioner '%s' (available: %s)\n", optarg,
                        sps_precond_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->precond = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "auto") == 0) {
                opt->format = SPS_FMT_AUTO; /* picked from the matrix (sps_matrix_auto_format) */
            } else if (sps_format_by_name(optarg, &opt->format) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown format '%s' (available: %s, auto)\n", optarg, sps_format_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->format_name = optarg;
            break;
        case OPT_BACKEND:
            if (sps_backend_from_name(optarg, &opt->backend) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown backend '%s' (available: cpu, cuda, auto)\n", optarg);
                return CLI_PARSE_EXIT_USAGE;
            }
            break;
        case OPT_DEVICE:
            if (!parse_int("device", optarg, 0, INT_MAX, &opt->device)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_PRECISION:
            if (sps_scalar_from_name(optarg, &opt->precision) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown precision '%s' (available: f32, f64, c32, c64)\n", optarg);
                return CLI_PARSE_EXIT_USAGE;
            }
            break;
        case OPT_TUNE: opt->tune = 1; break;
        case OPT_TUNE_BUDGET: {
            char *end = NULL;
            errno = 0;
            opt->tune_budget = strtod(optarg, &end);
            /* ERANGE to 0: 1e-400 would read as 0, the model's pick with nothing timed; a subnormal
               (1e-310, also ERANGE) is a positive budget as 1e-9 is */
            if (end == optarg || *end || (errno == ERANGE && opt->tune_budget == 0) || !isfinite(opt->tune_budget) ||
                opt->tune_budget < 0) {
                fprintf(stderr, "spsolve: --tune-budget: expected seconds >= 0, got '%s'\n", optarg);
                return CLI_PARSE_EXIT_USAGE;
            }
            break;
        }
        case OPT_TUNE_CACHE:
            if (!*optarg) { /* the library would read "" as its default file */
                fprintf(stderr, "spsolve: --tune-cache: expected a file or off, got ''\n");
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->tune_cache = optarg;
            break;
        case OPT_MONITOR: opt->monitor = 1; break;
        case OPT_JSON: opt->json = 1; break;
        case OPT_NONFINITE: opt->allow_nonfinite = 1; break;
        case OPT_MAX_MEMORY:
            if (!parse_size("max-memory", optarg, &opt->max_memory)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_BLOCK_SIZE:
            if (!parse_int("block-size", optarg, 1, 8, &opt->block_size)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_WRITE_EXPANSION: opt->write_expansion = optarg; break;
        case 'h': print_help(stdout); return CLI_PARSE_EXIT_OK;
        case OPT_VERSION:
            printf("spsolve %s (libspsolve %s; CUDA backend %s)\n", SPSOLVE_VERSION, sps_version(),
                   sps_cuda_compiled() ? "compiled in" : "not compiled in");
            return CLI_PARSE_EXIT_OK;
        case ':':
            /* optopt is the short letter, or a long option's code (>= 256) */
            if (optopt > 0 && optopt < 256) fprintf(stderr, "spsolve: option '-%c' needs a value\n", optopt);
            else fprintf(stderr, "spsolve: option '%s' needs a value\n", argv[optind - 1]);
            usage_hint();
            return CLI_PARSE_EXIT_USAGE;
        default:
            /* optopt: the short letter; a long option's code when it was given a value it does not take */
            if (optopt > 0 && optopt < 256) fprintf(stderr, "spsolve: unknown option '-%c'\n", optopt);
            else if (optopt >= 256) fprintf(stderr, "spsolve: option '%s' takes no value\n", argv[optind - 1]);
            else fprintf(stderr, "spsolve: unknown option '%s'\n", argv[optind - 1]);
            usage_hint();
            return CLI_PARSE_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "spsolve: unexpected argument '%s' (the matrix is given with -m)\n", argv[optind]);
        usage_hint();
        return CLI_PARSE_EXIT_USAGE;
    }
    if (opt->tune && opt->format_name && opt->format != SPS_FMT_AUTO) {
        fprintf(stderr, "spsolve: --tune picks the format: use it with --format auto or without --format\n");
        return CLI_PARSE_EXIT_USAGE;
    }
    /* --json: stdout holds the JSON object and nothing else.  The tuning file --tune writes is
     * an output as the others are: -o or --history written after it would replace it. */
    const char *const tune_file = opt->tune && opt->tune_cache && strcmp(opt->tune_cache, "off") ? opt->tune_cache
                                                                                                  : NULL;
    const char *const outs[] = {opt->output, opt->history, opt->write_expansion, tune_file};
    const char *const outn[] = {"-o", "--history", "--write-expansion", "--tune-cache"};
    enum { NOUTS = sizeof outs / sizeof outs[0] };
    for (int i = 0; i < NOUTS; i++) /* refused now, not after the solve it would have thrown away */
        if (outs[i] && !outs[i][0]) {
            fprintf(stderr, "spsolve: %s: an empty file name\n", outn[i]);
            return CLI_PARSE_EXIT_USAGE;
        }
    for (int i = 0; opt->json && i < NOUTS; i++)
        if (names_stdout(outs[i])) {
            fprintf(stderr, "spsolve: --json prints one JSON object on standard output: %s '%s' cannot write there\n",
                    outn[i], outs[i]);
            return CLI_PARSE_EXIT_USAGE;
        }
    if (opt->tune) opt->format = SPS_FMT_AUTO;
    else if (opt->tune_budget >= 0 || opt->tune_cache)
        fprintf(stderr, "spsolve: warning: --tune-budget and --tune-cache have no effect without --tune\n");
    if (!sets_finish(opt->sets, opt)) return CLI_PARSE_EXIT_USAGE;
    opt->matrix_generated = is_generator_spec(opt->matrix);
    if (opt->matrix_generated && opt->block_size > 1) {
        fprintf(stderr, "spsolve: --block-size reads a Matrix Market file; '%s' is a generated problem\n", opt->matrix);
        return CLI_PARSE_EXIT_USAGE;
    }
    /* No output may replace an input or another output: --write-expansion is written before -b
     * and --x0 are read, and the outputs are written one after another.  -o over --x0 is an
     * in-place restart, read before x is written. */
    const char *const ins[] = {opt->matrix_generated ? NULL : opt->matrix, opt->rhs, opt->x0};
    const char *const inn[] = {"-m", "-b", "--x0"};
    if (!files_outputs_ok("spsolve", ins, inn, 3, outs, outn, NOUTS, 0, 2)) return CLI_PARSE_EXIT_USAGE;
    /* the numbers the summary and the check report */
    opt->rtol = param_value(opt->sets, "rtol", 0);
    opt->atol = param_value(opt->sets, "atol", 0);
    opt->maxit = (int)param_value(opt->sets, "maxit", 0);
    opt->restart = (int)param_value(opt->sets, "restart", 0);
    opt->norm_inf = param_value(opt->sets, "norm", 0) == 1; /* the choice's index: 2 | inf */
    if (opt->rtol >= 1) /* ||b - A x0|| <= ||b|| holds for x0 = 0: converged before any iteration */
        fprintf(stderr, "spsolve: warning: --rtol %g >= 1: the initial guess is accepted as it is\n", opt->rtol);
    return CLI_PARSE_RUN;
}
