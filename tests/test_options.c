/* Unit tests of the option declarations and keyed sets (spsolve/options.h):
 * every declared option of every format, solver and preconditioner is complete
 * (name, help, a default that parses and lies in range), so a new option that
 * forgets one fails here; unknown names, bad and out-of-range values are
 * SPS_ERR_ARG naming the option; the typed setters see what the keyed ones set.
 * With the spsolve CLI as argv[1], every option a solver, preconditioner or
 * format declares must be a flag of `spsolve --help`, so the CLI cannot miss
 * a new declaration.
 * Ends with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include <limits.h>
#include <math.h>
#include <string.h>

static sps_context ctx;

static int contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

/* One declaration: complete, its default parses and lies in range, its choices parse. */
static void check_desc(const char *owner, const sps_option_desc *d)
{
    double v;
    char why[256];
    TU_CHECK(d->name && d->name[0] && strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(d->name),
             "%s: option name '%s' (lower case, digits, '-')", owner, d->name ? d->name : "(null)");
    TU_CHECK(d->help && strlen(d->help) > 8 && !strchr(d->help, '\n'), "%s: %s: a one-line help", owner, d->name);
    TU_CHECK(d->def != NULL, "%s: %s: no default", owner, d->name);
    if (!d->def) return;
    TU_CHECK(sps_option_parse(d, d->def, &v, why, sizeof why) == SPS_OK, "%s: %s: default '%s' does not parse: %s",
             owner, d->name, d->def, why);
    if (d->type != SPS_OPT_CHOICE)
        TU_CHECK(d->min <= d->max && v >= d->min && v <= d->max, "%s: %s: default %g outside %g..%g", owner, d->name, v,
                 d->min, d->max);
    TU_CHECK((d->type == SPS_OPT_CHOICE) <= (d->choices != NULL), "%s: %s: a choice without words", owner, d->name);
    if (d->choices) { /* every word parses */
        char w[64];
        for (const char *p = d->choices; *p;) {
            const size_t n = strcspn(p, "|");
            snprintf(w, sizeof w, "%.*s", (int)n, p);
            TU_CHECK(sps_option_parse(d, w, &v, why, sizeof why) == SPS_OK, "%s: %s: choice '%s': %s", owner, d->name, w,
                     why);
            p += n + (p[n] == '|');
        }
    }
}

static void check_table(const char *owner, const sps_option_desc *d, int n)
{
    TU_CHECK(n >= 0 && (n == 0 || d), "%s: %d options, table %p", owner, n, (const void *)d);
    for (int i = 0; i < n; i++) {
        check_desc(owner, &d[i]);
        for (int j = 0; j < i; j++)
            TU_CHECK(strcmp(d[i].name, d[j].name) != 0, "%s: option %s declared twice", owner, d[i].name);
    }
}

/* Walk the registries: formats (by id), solvers and preconditioners (by name). */
static void test_declarations(void)
{
    int nformats = 0;
    for (int f = 0; f < SPS_FMT_AUTO; f++) {
        const char *name = sps_format_name((sps_format)f);
        if (strcmp(name, "?") == 0) continue;
        nformats++;
        int n = -1;
        const sps_option_desc *d = sps_format_options_desc((sps_format)f, &n);
        check_table(name, d, n);
        sps_options o = NULL;
        TU_CHECK(sps_format_options_create((sps_format)f, &o) == SPS_OK && sps_options_check(o) == SPS_OK,
                 "%s: the defaults keep its rules", name);
        for (int i = 0; i < n; i++)
            TU_CHECK(o && strcmp(sps_options_get(o, d[i].name), d[i].def) == 0 && !sps_options_is_set(o, d[i].name),
                     "%s: %s reads its default", name, d[i].name);
        sps_options_destroy(o);
        /* one name, one meaning: a name declared by two formats has one type */
        for (int g = 0; g < f; g++) {
            int m = 0;
            const sps_option_desc *e = sps_format_options_desc((sps_format)g, &m);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++)
                    if (strcmp(d[i].name, e[j].name) == 0)
                        TU_CHECK(d[i].type == e[j].type, "%s and %s declare %s with different types", name,
                                 sps_format_name((sps_format)g), d[i].name);
        }
    }
    int listed = 1;
    for (const char *c = sps_format_list(); *c; c++) listed += *c == ',';
    TU_CHECK(nformats == listed, "formats walked: %d, listed %d (%s)", nformats, listed, sps_format_list());
    int n = -1;
    const sps_option_desc *d = sps_solver_options_desc(NULL, &n);
    TU_CHECK(n == 4 && !strcmp(d[3].name, "norm"), "every solver reads rtol, atol, maxit, norm (%d)", n);
    check_table("solvers", d, n);
    char list[256];
    snprintf(list, sizeof list, "%s", sps_solver_list());
    for (char *s = strtok(list, ", "); s; s = strtok(NULL, ", ")) {
        d = sps_solver_options_desc(s, &n);
        check_table(s, d, n);
    }
    d = sps_solver_options_desc("gmres", &n);
    TU_CHECK(n == 1 && strcmp(d[0].name, "restart") == 0, "gmres declares restart");
    snprintf(list, sizeof list, "%s", sps_precond_list());
    for (char *s = strtok(list, ", "); s; s = strtok(NULL, ", ")) {
        d = sps_precond_options_desc(s, &n);
        check_table(s, d, n);
    }
}

static void expect_set_error(sps_options o, const char *name, const char *value, const char *want)
{
    const sps_status s = sps_options_set(o, name, value);
    TU_CHECK(s == SPS_ERR_ARG && contains(sps_options_error(o), want), "set %s = %s: %s '%s' (want '%s')", name,
             value ? value : "(null)", sps_status_name(s), sps_options_error(o), want);
}

static void test_sets(void)
{
    sps_options o = NULL;
    TU_CHECK(sps_format_options_create(SPS_FMT_SELL, &o) == SPS_OK, "sell options");
    expect_set_error(o, "slice-hieght", "16", "unknown option 'slice-hieght' (sell reads slice-height, sort-window");
    expect_set_error(o, "slice-height", "24", "slice-height: expected one of 16, 32, got '24'");
    expect_set_error(o, "sort-window", "-1", "sort-window: expected an integer >= 0, got '-1'");
    expect_set_error(o, "sort-window", "12x", "sort-window: expected an integer >= 0, got '12x'");
    expect_set_error(o, "max-fill", "0.5", "max-fill: expected a finite number >= 1, got '0.5'");
    expect_set_error(o, "max-fill", "inf", "max-fill: expected a finite number >= 1, got 'inf'");
    expect_set_error(o, "force", "maybe", "force: expected one of false, true, off, on, no, yes, 0, 1, got 'maybe'");
    expect_set_error(o, "index-bits", "8", "index-bits: expected one of auto, 16, 32, got '8'");
    expect_set_error(o, "index-bits", NULL, "index-bits: NULL value");
    TU_CHECK(strcmp(sps_options_get(o, "slice-height"), "32") == 0, "a refused value leaves the default");
    /* rules between options: at check and at conversion */
    TU_CHECK(sps_options_set(o, "slice-height", "16") == SPS_OK && sps_options_set(o, "sort-window", "40") == SPS_OK,
             "values in range");
    TU_CHECK(sps_options_check(o) == SPS_ERR_ARG &&
                 contains(sps_options_error(o),
                          "sort-window: expected 0 or 1 (no sorting) or a multiple of the slice height 16, got 40"),
             "sell rule: '%s'", sps_options_error(o));
    sps_matrix A = NULL, B = (sps_matrix)&A;
    TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:8", SPS_F64, &A));
    TU_CHECK(sps_matrix_convert(A, SPS_FMT_SELL, o, &B) == SPS_ERR_ARG && B == NULL &&
                 contains(sps_context_error(ctx), "sell: sort-window"),
             "convert checks the rules: '%s'", sps_context_error(ctx));
    sps_context_clear_error(ctx);
    TU_CHECK(sps_options_set(o, "sort-window", "64") == SPS_OK && sps_options_set(o, "force", "on") == SPS_OK, "set");
    double v = 0;
    TU_CHECK(sps_options_get_value(o, "sort-window", &v) == SPS_OK && v == 64 && sps_options_is_set(o, "force") &&
                 sps_options_get_value(o, "force", &v) == SPS_OK && v == 1,
             "typed values");
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_SELL, o, &B));
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
    sps_options_destroy(o);
    /* a set of one's own declarations */
    static const sps_option_desc mine[] = {{.name = "level", .type = SPS_OPT_REAL, .def = "0.5", .min = 0, .max = 1,
                                            .help = "a level between 0 and 1"}};
    TU_CHECK(sps_options_create("mine", mine, 1, &o) == SPS_OK, "own declarations");
    expect_set_error(o, "level", "2", "level: expected a finite number in 0..1, got '2'");
    expect_set_error(o, "depth", "2", "unknown option 'depth' (mine reads level)");
    sps_options_destroy(o);
    sps_options_destroy(NULL);
}

static void test_solver_precond(void)
{
    sps_solver s = NULL;
    TU_OK(ctx, sps_solver_create_by_name(ctx, "gmres", &s));
    TU_OK(ctx, sps_solver_set_option(s, "restart", "50"));
    TU_OK(ctx, sps_solver_set_option(s, "rtol", "1e-10"));
    TU_OK(ctx, sps_solver_set_option(s, "maxit", "77"));
    sps_status st = sps_solver_set_option(s, "restart", "0");
    TU_CHECK(st == SPS_ERR_ARG && contains(sps_context_error(ctx), "restart: expected an integer >= 1, got '0'"),
             "restart 0: '%s'", sps_context_error(ctx));
    st = sps_solver_set_option(s, "rtol", "-1");
    TU_CHECK(st == SPS_ERR_ARG && contains(sps_context_error(ctx), "rtol: expected a finite number >= 0"),
             "rtol -1: '%s'", sps_context_error(ctx));
    sps_solver_destroy(s);
    TU_OK(ctx, sps_solver_create_by_name(ctx, "cg", &s));
    st = sps_solver_set_option(s, "restart", "30");
    TU_CHECK(st == SPS_ERR_ARG && contains(sps_context_error(ctx), "unknown option 'restart' (cg reads none)") &&
                 contains(sps_context_error(ctx), "rtol, atol, maxit"),
             "cg restart: '%s'", sps_context_error(ctx));
    sps_solver_destroy(s);
    sps_precond P = NULL;
    TU_OK(ctx, sps_precond_new(ctx, "jacobi", &P));
    st = sps_precond_set_option(P, "omega", "0.8");
    TU_CHECK(st == SPS_ERR_ARG &&
                 contains(sps_context_error(ctx), "unknown option 'omega' (jacobi reads jacobi-zero-diagonal)"),
             "jacobi omega: '%s'", sps_context_error(ctx));
    sps_precond_destroy(P);
    sps_context_clear_error(ctx);
}

/* "--NAME" as a flag of help: after a blank, followed by a blank or the end of a line. */
static int help_has_flag(const char *help, const char *name)
{
    char flag[128];
    snprintf(flag, sizeof flag, " --%s", name);
    for (const char *p = strstr(help, flag); p; p = strstr(p + 1, flag)) {
        const char after = p[strlen(flag)];
        if (after == ' ' || after == '\n') return 1;
    }
    return 0;
}

static void check_help_owner(const char *help, const char *kind, const char *owner, const sps_option_desc *d,
                             int n)
{
    for (int i = 0; i < n; i++)
        TU_CHECK(help_has_flag(help, d[i].name), "%s %s declares '%s' but spsolve --help has no --%s", kind, owner,
                 d[i].name, d[i].name);
}

/* Each entry of a registry list ("cg, bicgstab, gmres") to check_help_owner. */
static void check_help_list(const char *help, const char *kind, const char *list,
                            const sps_option_desc *(*desc)(const char *, int *))
{
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',') p++;
        char name[64];
        size_t len = strcspn(p, ", ");
        if (len == 0 || len >= sizeof name) break;
        memcpy(name, p, len);
        name[len] = 0;
        int n = 0;
        const sps_option_desc *d = desc(name, &n);
        check_help_owner(help, kind, name, d, n);
        p += len;
    }
}

static void test_cli_help(const char *spsolve)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --help", spsolve);
    FILE *f = popen(cmd, "r");
    TU_CHECK(f != NULL, "cannot run %s", cmd);
    if (!f) return;
    size_t len = 0, cap = 1 << 16;
    char *help = malloc(cap);
    size_t got;
    while (help && (got = fread(help + len, 1, cap - 1 - len, f)) > 0) len += got;
    const int rc = pclose(f);
    TU_CHECK(help && rc == 0 && len > 0 && len < cap - 1, "%s: exit %d, %zu bytes", cmd, rc, len);
    if (!help) return;
    help[len] = 0;
    int n = 0;
    const sps_option_desc *d = sps_solver_options_desc(NULL, &n);
    check_help_owner(help, "every", "solver", d, n);
    check_help_list(help, "solver", sps_solver_list(), sps_solver_options_desc);
    check_help_list(help, "preconditioner", sps_precond_list(), sps_precond_options_desc);
    for (int fmt = 0; fmt < SPS_FMT_AUTO; fmt++) {
        d = sps_format_options_desc((sps_format)fmt, &n);
        check_help_owner(help, "format", sps_format_name((sps_format)fmt), d, n);
    }
    free(help);
}

int main(int argc, char **argv)
{
    if (tu_cpu_context(&ctx)) return 1;
    test_declarations();
    test_sets();
    test_solver_precond();
    if (argc > 1) test_cli_help(argv[1]);
    sps_context_destroy(ctx);
    return tu_finish();
}
