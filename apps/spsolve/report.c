/* spsolve CLI: the summary (human-readable or JSON) and the history CSV.
 * Every JSON key is documented in README.md (Command-line tool); keep the two in step. */
#include "report.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static double per_iteration(const cli_report *r)
{
    return r->res.iterations > 0 ? r->t_solve / r->res.iterations : 0.0;
}

static const char *outcome(const cli_report *r)
{
    if (r->converged && r->verified) return "converged";
    if (r->converged) return "FAILED CHECK (solver reported convergence, the recomputed residual disagrees)";
    return "NOT CONVERGED";
}

/* The format parameters as "key value, key value" (summary). */
static void print_format_options(FILE *f, const cli_report *r)
{
    cli_fopt_value v[CLI_MAX_FOPTS];
    const int n = cli_format_option_values(r->format_opts, v);
    if (n == 0) return;
    fprintf(f, "%-10s", "");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s%s ", i ? ", " : " ", v[i].key);
        switch (v[i].kind) {
        case CLI_VAL_INT: fprintf(f, "%d", (int)v[i].num); break;
        case CLI_VAL_NUM: fprintf(f, "%g", v[i].num); break;
        case CLI_VAL_BOOL: fputs(v[i].num != 0 ? "on" : "off", f); break;
        case CLI_VAL_STR: fputs(v[i].str, f); break;
        }
    }
    fputc('\n', f);
}

const char *cli_entry_name(sps_entry_desc e)
{
    static const char *const blocks[] = {"block2", "block3", "block4", "block5", "block6", "block7", "block8"};
    if (e.kind == SPS_ENTRY_BLOCK && e.block >= 2 && e.block <= 8) return blocks[e.block - 2];
    return e.kind == SPS_ENTRY_QUATERNION ? "quaternion" : "scalar";
}

/* --tune: the choice, its time against csr's, what was timed, how long it took. */
static void print_tune(FILE *f, const sps_tune_result *t)
{
    fprintf(f, "%-10s tuned: %s", "", t->choice);
    if (t->chosen_ms >= 0) fprintf(f, ", SpMV %.4f ms (reference %.4f ms)", t->chosen_ms, t->default_ms);
    if (t->from_cache) fprintf(f, ", from %s", t->cache_path);
    else fprintf(f, ", %d timed, %d skipped", t->timed, t->skipped);
    fprintf(f, ", tuning %.3f s\n", t->time_s);
}

void cli_print_summary(FILE *f, const cli_report *r)
{
    const sps_matrix_info_t *in = &r->info;
    fprintf(f, "spsolve %s\n", SPSOLVE_VERSION);
    fprintf(f, "%-10s %s (%s)\n", "matrix", r->matrix_source, r->matrix_kind);
    fprintf(f, "%-10s %d x %d, nnz %lld, %s, %s", "", (int)in->rows, (int)in->cols, (long long)in->nnz,
            sps_symmetry_name(in->symmetry), sps_scalar_name(in->scalar));
    const int d = sps_entry_dim(in->entry);
    if (in->entry.kind != SPS_ENTRY_SCALAR)
        fprintf(f, ", %s entries (%d x %d scalars)", cli_entry_name(in->entry), (int)in->rows * d, (int)in->cols * d);
    fputc('\n', f);
    fprintf(f, "%-10s %s, %.3f MB (%lld stored entries, padding %.1f%% of nnz", "format", in->format_name,
            (double)in->bytes / 1e6, (long long)in->stored_entries, in->fill_percent);
    if (in->index_bits == 16) fprintf(f, ", 16-bit columns");
    if (in->value_dict > 0) fprintf(f, ", values as 1-byte indices into a table of %d", in->value_dict);
    fprintf(f, ")\n");
    if (r->format_auto) fprintf(f, "%-10s picked by --format auto: %s\n", "", r->format_auto);
    if (r->tune) print_tune(f, r->tune);
    print_format_options(f, r);
    fprintf(f, "%-10s %s: %s\n", "backend", r->backend, r->device);
    if (r->backend_reason && *r->backend_reason) fprintf(f, "%-10s (auto: %s)\n", "", r->backend_reason);
    if (r->rhs_source) fprintf(f, "%-10s %s\n", "rhs", r->rhs_source);
    else fprintf(f, "%-10s b = A*1 (generated)\n", "rhs");
    fprintf(f, "%-10s %s\n", "x0", r->x0_source ? r->x0_source : "0");
    fprintf(f, "%-10s %s", "solver", r->solver);
    if (strcmp(r->solver, "gmres") == 0) fprintf(f, "(%d)", r->restart);
    fprintf(f, ", preconditioner %s\n", r->precond);
    if (r->precond_warning) fprintf(f, "%-10s %s\n", "", r->precond_warning);
    const int inf = r->opt && r->opt->norm_inf;
    fprintf(f, "%-10s %s, rtol %g, atol %g, maxit %d\n", "stop", inf ? CLI_STOPPING_RULE_INF : CLI_STOPPING_RULE,
            r->rtol, r->atol, r->maxit);
    fprintf(f, "%-10s %s: %s after %d iterations\n", "result", outcome(r), sps_reason_name(r->res.reason),
            r->res.iterations);
    fprintf(f, "%-10s %s = %.3e (recomputed on the host; solver: %.3e), tolerance %.3e\n", "residual",
            CLI_RELATIVE_RESIDUAL(inf), r->true_relative_residual, r->res.relative_residual,
            r->rhs_norm > 0 ? r->tolerance / r->rhs_norm : r->tolerance);
    if (r->have_error) fprintf(f, "%-10s ||x-1||/||1|| = %.3e\n", "error", r->error_vs_ones);
    fprintf(f, "%-10s read %.3f s, convert %.3f s, setup %.3f s, solve %.3f s (%.3f ms/iteration), total %.3f s\n",
            "time", r->t_read, r->t_convert, r->t_setup, r->t_solve, 1e3 * per_iteration(r), r->t_total);
    if (r->t_pc_setup > 0 || r->t_pc_apply > 0)
    {
        fprintf(f, "%-10s %s: setup %.3f s, one application %.3f ms", "", r->precond, r->t_pc_setup,
                1e3 * r->t_pc_apply);
        if (r->t_spmv > 0) fprintf(f, " = %.2f SpMV (A*x %.3f ms)", r->t_pc_apply / r->t_spmv, 1e3 * r->t_spmv);
        fprintf(f, ", timed apart from the solve\n");
    }
    if (r->output_written) fprintf(f, "%-10s x written to %s\n", "output", r->output_written);
    if (r->history_written) fprintf(f, "%-10s residual history written to %s\n", "history", r->history_written);
    if (r->expansion_written)
        fprintf(f, "%-10s scalar expansion of the matrix written to %s\n", "expansion", r->expansion_written);
}

/* ---------------------------------------------------------------- JSON */
/* The length of the well-formed UTF-8 sequence at p (1..4), or 0 when the bytes
 * there are not one (Unicode's Table 3-7): JSON text must be UTF-8 (RFC 8259),
 * and the strings printed here are paths and messages holding whatever bytes
 * the user or the file system gave.  Overlong forms, surrogates (U+D800..DFFF)
 * and code points above U+10FFFF are refused by the ranges of the second byte;
 * a sequence cut short by the terminating NUL fails its continuation test. */
static int utf8_sequence(const unsigned char *p)
{
    const unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2;  /* 0xc0, 0xc1: overlong forms of ASCII */
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;      /* below: overlong */
        else if (c == 0xed) hi = 0x9f; /* above: surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;      /* below: overlong */
        else if (c == 0xf4) hi = 0x8f; /* above: beyond U+10FFFF */
    } else
        return 0; /* a continuation byte, or 0xf5..0xff */
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * well-formed UTF-8 passed through, each byte of an ill-formed sequence
 * replaced by U+FFFD, written as its escape so that the output stays ASCII there
 * (the next byte starts the next try: one U+FFFD a byte, nothing swallowed). */
static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else if (*p >= 0x80) {
                const int n = utf8_sequence(p);
                if (n == 0) fputs("\\ufffd", f);
                else fwrite(p, 1, (size_t)n, f);
                p += n ? n : 1;
                continue;
            } else
                fputc(*p, f);
        }
        p++;
    }
    fputc('"', f);
}

/* round-trip precision; NaN and Inf as null (JSON has neither) */
static void json_number(FILE *f, double v) { app_json_number(f, 17, v); }

/* Key helpers: `first` keeps the commas right without a trailing one. */
typedef struct {
    FILE *f;
    int indent;
    int first;
} jw;

static void key(jw *w, const char *k)
{
    fprintf(w->f, "%s\n%*s\"%s\": ", w->first ? "" : ",", w->indent, "", k);
    w->first = 0;
}
static void kstr(jw *w, const char *k, const char *v) { key(w, k); json_string(w->f, v); }
static void knum(jw *w, const char *k, double v) { key(w, k); json_number(w->f, v); }
static void kint(jw *w, const char *k, long long v) { key(w, k); fprintf(w->f, "%lld", v); }
static void kbool(jw *w, const char *k, int v) { key(w, k); fputs(v ? "true" : "false", w->f); }
static void open_obj(jw *w, const char *k)
{
    key(w, k);
    fputc('{', w->f);
    w->indent += 2;
    w->first = 1;
}
static void close_obj(jw *w)
{
    w->indent -= 2;
    fprintf(w->f, "\n%*s}", w->indent, "");
    w->first = 0;
}

/* matrix.format_options: the parameters the format was built with (typed). */
static void json_format_options(jw *w, const cli_report *r)
{
    cli_fopt_value v[CLI_MAX_FOPTS];
    const int n = cli_format_option_values(r->format_opts, v);
    open_obj(w, "format_options");
    for (int i = 0; i < n; i++) {
        switch (v[i].kind) {
        case CLI_VAL_INT: kint(w, v[i].key, (long long)v[i].num); break;
        case CLI_VAL_NUM: knum(w, v[i].key, v[i].num); break;
        case CLI_VAL_BOOL: kbool(w, v[i].key, v[i].num != 0); break;
        case CLI_VAL_STR: kstr(w, v[i].key, v[i].str); break;
        }
    }
    close_obj(w);
}

/* matrix.tune: what --tune did (null without it). */
static void json_tune(jw *w, const sps_tune_result *t)
{
    if (!t) {
        key(w, "tune");
        fputs("null", w->f);
        return;
    }
    open_obj(w, "tune");
    kstr(w, "choice", t->choice);
    knum(w, "time_s", t->time_s);
    kbool(w, "from_cache", t->from_cache);
    kbool(w, "from_model", t->from_model);
    knum(w, "chosen_ms", t->chosen_ms >= 0 ? t->chosen_ms : NAN);
    knum(w, "default_ms", t->default_ms >= 0 ? t->default_ms : NAN);
    kint(w, "timed", t->timed);
    kint(w, "skipped", t->skipped);
    kstr(w, "cache", t->cache_path[0] ? t->cache_path : NULL);
    kstr(w, "warning", t->warning[0] ? t->warning : NULL);
    key(w, "candidates");
    fputc('[', w->f);
    for (int i = 0; i < t->ncandidates; i++) {
        const sps_tune_candidate *c = &t->candidates[i];
        fprintf(w->f, "%s\n%*s{\"spec\": ", i ? "," : "", w->indent + 2, "");
        json_string(w->f, c->spec);
        fputs(", \"ms\": ", w->f);
        json_number(w->f, c->ms >= 0 ? c->ms : NAN);
        fputs(", \"skipped\": ", w->f);
        json_string(w->f, c->skipped[0] ? c->skipped : NULL);
        fputc('}', w->f);
    }
    fprintf(w->f, t->ncandidates ? "\n%*s]" : "]", w->indent, "");
    close_obj(w);
}

void cli_print_json_error(FILE *f, int exit_code, const char *message)
{
    jw w = {f, 2, 1};
    fputc('{', f);
    kstr(&w, "spsolve_version", SPSOLVE_VERSION);
    kstr(&w, "status", "error");
    kint(&w, "exit_code", exit_code);
    kstr(&w, "message", message);
    fputs("\n}\n", f);
}

void cli_print_json(FILE *f, const cli_report *r)
{
    const sps_matrix_info_t *in = &r->info;
    jw w = {f, 2, 1};
    fputc('{', f);
    kstr(&w, "spsolve_version", SPSOLVE_VERSION);
    open_obj(&w, "matrix");
    kstr(&w, "source", r->matrix_source);
    kstr(&w, "kind", r->matrix_kind);
    kstr(&w, "read_warning", r->read_warning);
    kint(&w, "rows", in->rows);
    kint(&w, "cols", in->cols);
    kint(&w, "nnz", in->nnz);
    kstr(&w, "symmetry", sps_symmetry_name(in->symmetry));
    kstr(&w, "scalar", sps_scalar_name(in->scalar));
    kstr(&w, "entry", cli_entry_name(in->entry));
    kstr(&w, "format", in->format_name);
    kstr(&w, "format_auto", r->format_auto);
    kint(&w, "bytes", (long long)in->bytes);
    kint(&w, "stored_entries", in->stored_entries);
    knum(&w, "fill_percent", in->fill_percent);
    kint(&w, "index_bits", in->index_bits);
    kint(&w, "value_dict", in->value_dict);
    json_format_options(&w, r);
    json_tune(&w, r->tune);
    close_obj(&w);
    open_obj(&w, "rhs");
    kstr(&w, "source", r->rhs_source);
    kstr(&w, "read_warning", r->rhs_warning);
    kbool(&w, "generated", r->rhs_source == NULL);
    knum(&w, "norm", r->rhs_norm);
    close_obj(&w);
    kstr(&w, "x0", r->x0_source);
    kstr(&w, "x0_read_warning", r->x0_warning);
    open_obj(&w, "backend");
    kstr(&w, "name", r->backend);
    kstr(&w, "device", r->device);
    kstr(&w, "auto_reason", r->backend_reason && *r->backend_reason ? r->backend_reason : NULL);
    close_obj(&w);
    open_obj(&w, "solver");
    kstr(&w, "name", r->solver);
    kstr(&w, "precond", r->precond);
    kstr(&w, "precond_warning", r->precond_warning);
    kstr(&w, "stopping_rule", r->opt && r->opt->norm_inf ? CLI_STOPPING_RULE_INF : CLI_STOPPING_RULE);
    knum(&w, "rtol", r->rtol);
    knum(&w, "atol", r->atol);
    kint(&w, "maxit", r->maxit);
    if (strcmp(r->solver, "gmres") == 0) kint(&w, "restart", r->restart);
    else { key(&w, "restart"); fputs("null", f); }
    close_obj(&w);
    open_obj(&w, "result");
    kbool(&w, "converged", r->converged && r->verified);
    kbool(&w, "solver_converged", r->converged);
    kbool(&w, "verified", r->verified);
    kstr(&w, "status", sps_status_name(r->status));
    kstr(&w, "reason", sps_reason_name(r->res.reason));
    kint(&w, "iterations", r->res.iterations);
    knum(&w, "solver_residual_norm", r->res.residual_norm);
    knum(&w, "solver_relative_residual", r->res.relative_residual);
    knum(&w, "true_residual_norm", r->true_residual_norm);
    knum(&w, "true_relative_residual", r->true_relative_residual);
    knum(&w, "tolerance", r->tolerance);
    if (r->have_error) knum(&w, "error_vs_ones", r->error_vs_ones);
    else { key(&w, "error_vs_ones"); fputs("null", f); }
    close_obj(&w);
    open_obj(&w, "time");
    knum(&w, "read", r->t_read);
    knum(&w, "convert", r->t_convert);
    knum(&w, "setup", r->t_setup);
    knum(&w, "solve", r->t_solve);
    knum(&w, "per_iteration", per_iteration(r));
    knum(&w, "precond_setup", r->t_pc_setup);
    knum(&w, "precond_apply", r->t_pc_apply);
    knum(&w, "spmv", r->t_spmv);
    knum(&w, "check", r->t_check);
    knum(&w, "total", r->t_total);
    close_obj(&w);
    kstr(&w, "output", r->output_written);
    kstr(&w, "history", r->history_written);
    kstr(&w, "expansion", r->expansion_written);
    kint(&w, "exit_code", r->exit_code);
    fputs("\n}\n", f);
}

/* ---------------------------------------------------------------- history */
int cli_write_history(sps_context ctx, const char *path, const double *history, int len)
{
    /* the library's writer: whole or not at all, links written through, devices into */
    if (sps_history_write_csv(ctx, path, history, len) == SPS_OK) return 0;
    fprintf(stderr, "spsolve: %s\n", sps_context_error(ctx));
    return -1;
}
