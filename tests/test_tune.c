/* The autotuner (sps_matrix_tune) on the CPU backend: the pick is no slower than
 * the reference it timed and multiplies like A; the tuning file round-trips (the
 * second tune times nothing), a corrupt one is ignored with a warning and replaced
 * by a valid one, other entries are kept, "off" writes nothing, a symbolic link is
 * never replaced; budget 0 is the model's pick; a compound matrix competes among
 * the compound formats only; sps_matrix_convert_spec refuses what does not parse.
 * argv[1]: a scratch directory (emptied of the files this test writes). */
#include "testutil.h"
#include "formats/tune.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sps_context ctx;
static char dir[512];

static void path_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static int exists(const char *p)
{
    struct stat sb;
    return lstat(p, &sb) == 0;
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    char *b = tu_xcalloc(1 << 20, 1);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    b[n] = '\0';
    fclose(f);
    return b;
}

static void spit(const char *p, const char *text)
{
    FILE *f = fopen(p, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static sps_tune_options opts(const char *cache, double budget)
{
    sps_tune_options o;
    sps_tune_options_default(&o);
    o.cache = cache;
    o.budget = budget;
    return o;
}

/* y = B x equals y = A x (x = 1..m): the tuned matrix is A in another storage. */
static void check_same_product(sps_matrix A, sps_matrix B, const char *what)
{
    sps_matrix_info_t ia;
    sps_matrix_info(A, &ia);
    const sps_index m = ia.cols * sps_entry_dim(ia.entry), n = ia.rows * sps_entry_dim(ia.entry);
    double *xh = tu_xcalloc((size_t)m, sizeof *xh), *ya = tu_xcalloc((size_t)n, sizeof *ya),
           *yb = tu_xcalloc((size_t)n, sizeof *yb);
    for (sps_index i = 0; i < m; i++) xh[i] = 1 + (i % 7);
    sps_vector x = NULL, y = NULL;
    sps_operator oa = NULL, ob = NULL;
    const double one = 1, zero = 0;
    TU_OK(ctx, sps_vector_from_host(ctx, m, SPS_F64, xh, &x));
    TU_OK(ctx, sps_vector_create(ctx, n, SPS_F64, &y));
    TU_OK(ctx, sps_operator_from_matrix(A, &oa));
    TU_OK(ctx, sps_operator_from_matrix(B, &ob));
    TU_OK(ctx, sps_operator_apply(oa, SPS_OP_N, &one, x, &zero, y));
    TU_OK(ctx, sps_vector_get(y, ya));
    TU_OK(ctx, sps_operator_apply(ob, SPS_OP_N, &one, x, &zero, y));
    TU_OK(ctx, sps_vector_get(y, yb));
    TU_CHECK(tu_relerr(SPS_F64, (size_t)n, yb, ya) < 1e-13, "%s: the tuned matrix multiplies like A", what);
    sps_operator_destroy(oa);
    sps_operator_destroy(ob);
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    free(xh);
    free(ya);
    free(yb);
}

static const sps_tune_candidate *find_cand(const sps_tune_result *r, const char *spec)
{
    for (int i = 0; i < r->ncandidates; i++)
        if (strcmp(r->candidates[i].spec, spec) == 0) return &r->candidates[i];
    return NULL;
}

static void test_tune_and_cache(sps_matrix A)
{
    char cache[600];
    path_of(cache, sizeof cache, "tune.json");
    remove(cache);
    sps_tune_options o = opts(cache, 30.0); /* generous: a loaded or sanitised build still times them all */
    sps_tune_result r;
    sps_matrix B = NULL;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(B != NULL, "a matrix comes back");
    TU_CHECK(!r.from_cache && !r.from_model, "first tune times (from_cache %d, from_model %d)", r.from_cache,
             r.from_model);
    TU_CHECK(r.timed >= 3, "csr and the padded formats are timed on the CPU (%d timed)", r.timed);
    TU_CHECK(r.default_ms > 0 && r.chosen_ms > 0 && r.chosen_ms <= r.default_ms,
             "the pick (%s, %.4f ms) is no slower than csr (%.4f ms)", r.choice, r.chosen_ms, r.default_ms);
    const sps_tune_candidate *ref = find_cand(&r, "csr");
    TU_CHECK(ref && ref->ms == r.default_ms && r.candidates[0].ms > 0 && !strcmp(r.candidates[0].spec, "csr"),
             "csr is timed first and is the reference");
    for (int i = 0; i < r.ncandidates; i++)
        if (r.candidates[i].ms > 0)
            TU_CHECK(r.chosen_ms * 0.97 <= r.candidates[i].ms, "the pick is the fastest timed, within 3%% (%s %.4f < %.4f)",
                     r.candidates[i].spec, r.candidates[i].ms, r.chosen_ms);
    const sps_tune_candidate *sell = find_cand(&r, "sell slice-height=32"), *ell = find_cand(&r, "ell");
    TU_CHECK(sell && sell->ms > 0 && ell && ell->ms > 0, "ell and sell are timed");
    const sps_tune_candidate *hola = find_cand(&r, "hola");
    TU_CHECK(hola && hola->ms < 0 && strstr(hola->skipped, "bit-reproducible"), "hola is skipped by default");
    TU_CHECK(!find_cand(&r, "csr csr-kernel=merge"), "the CPU leaves out csr's GPU kernels");
    TU_CHECK(r.warning[0] == '\0', "no warning (%s)", r.warning);
    TU_CHECK(!strcmp(r.cache_path, cache), "the cache path is reported (%s)", r.cache_path);
    check_same_product(A, B, "tuned");
    sps_matrix_destroy(B);
    char *text = slurp(cache);
    TU_CHECK(text && strstr(text, "\"spsolve-tune\": 1") && strstr(text, r.choice), "the tuning file holds the pick");
    free(text);
    const double first_s = r.time_s;

    /* second tune: from the file, nothing timed */
    sps_tune_result r2;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    TU_CHECK(r2.from_cache && r2.timed == 0 && r2.ncandidates == 0, "second tune from the cache (from_cache %d, %d timed)",
             r2.from_cache, r2.timed);
    TU_CHECK(!strcmp(r2.choice, r.choice) && r2.chosen_ms == r2.chosen_ms && fabs(r2.chosen_ms - r.chosen_ms) <= 1e-5 * r.chosen_ms + 1e-9,
             "same choice and time from the cache (%s %g vs %s %g)", r2.choice, r2.chosen_ms, r.choice, r.chosen_ms);
    TU_CHECK(r2.time_s < first_s, "the cached tune is faster (%.4f s vs %.4f s)", r2.time_s, first_s);
    TU_CHECK(B && sps_matrix_info(B, &(sps_matrix_info_t){0}) == SPS_OK, "a matrix from the cache");
    check_same_product(A, B, "cached");
    sps_matrix_destroy(B);

    /* another device's entry is kept beside ours */
    spit(cache, "{\"spsolve-tune\": 1, \"entries\": [{\"device\": \"other GPU\", \"runtime\": \"cuda 1\", "
                "\"library\": \"0.0.9\", \"matrix\": \"n=1\", \"search\": \"any\", \"choice\": \"ell\", \"chosen_ms\": 1, \"extra\": [1, {\"a\": null}]}],"
                " \"comment\": \"kept?\"}");
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    TU_CHECK(!r2.from_cache && r2.warning[0] == '\0', "a file without our key: tuned, no warning (%s)", r2.warning);
    sps_matrix_destroy(B);
    text = slurp(cache);
    TU_CHECK(text && strstr(text, "other GPU") && strstr(text, r2.choice), "other devices' entries are kept");
    free(text);

    /* corrupt, or not ours (another file named by mistake, a newer version's): ignored with a
       warning and left as it is, byte for byte (it had been replaced by a valid one) */
    const char *bad[] = {"{garbage", "", "[1, 2]", "{\"spsolve-tune\": 2, \"entries\": []}",
                         "{\"spsolve-tune\": 1, \"entries\": [{\"device\": \"x\"]}", "some notes\n"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        spit(cache, bad[k]);
        TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
        TU_CHECK(!r2.from_cache && strstr(r2.warning, "corrupt") && strstr(r2.warning, "not written"),
                 "corrupt file %zu: warning (%s)", k, r2.warning);
        sps_matrix_destroy(B);
        text = slurp(cache);
        TU_CHECK(text && !strcmp(text, bad[k]), "corrupt file %zu: left as it was ('%s')", k, text ? text : "gone");
        free(text);
    }
    /* an entry with a member of the wrong type is dropped, the others kept; then a valid file */
    spit(cache, "{\"spsolve-tune\": 1, \"entries\": [{\"device\": \"d\", \"runtime\": \"r\", \"library\": \"l\", "
                "\"matrix\": \"m\", \"search\": \"s\", \"choice\": null}, {\"device\": \"other GPU\", \"runtime\": "
                "\"cuda 1\", \"library\": \"0.0.9\", \"matrix\": \"n=1\", \"search\": \"any\", \"choice\": \"ell\", "
                "\"chosen_ms\": \"fast\"}]}");
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    TU_CHECK(!r2.from_cache && strstr(r2.warning, "1 incomplete entry dropped") && !strstr(r2.warning, "corrupt"),
             "a wrong-typed member drops its entry only (%s)", r2.warning);
    sps_matrix_destroy(B);
    text = slurp(cache);
    TU_CHECK(text && strstr(text, "other GPU") && strstr(text, r2.choice), "the other entry is kept, ours added");
    free(text);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    TU_CHECK(r2.from_cache && r2.warning[0] == '\0', "valid after (from_cache %d, %s)", r2.from_cache, r2.warning);
    sps_matrix_destroy(B);
    remove(cache); /* ours alone again: the next check edits the file's first choice */
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    sps_matrix_destroy(B);
    /* a cached choice that no longer builds: warned, tuned again */
    text = slurp(cache);
    char *at = text ? strstr(text, "\"choice\": \"") : NULL;
    if (at) {
        char *end = strchr(at + 11, '"');
        char fixed[1 << 12];
        snprintf(fixed, sizeof fixed, "%.*s\"choice\": \"sell slice-height=8%s", (int)(at - text), text, end);
        spit(cache, fixed);
        TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
        TU_CHECK(!r2.from_cache && r2.timed > 0 && strstr(r2.warning, "does not build"), "stale choice: tuned again (%s)",
                 r2.warning);
        sps_matrix_destroy(B);
    }
    free(text);
    /* what may compete is part of the key: a tune allowing hola has its own entry */
    sps_tune_options any = o;
    any.allow_nondeterministic = 1;
    TU_OK(ctx, sps_matrix_tune(A, &any, &B, &r2));
    TU_CHECK(!r2.from_cache && r2.timed > 0, "allowing non-deterministic kernels tunes again");
    sps_matrix_destroy(B);
    TU_OK(ctx, sps_matrix_tune(A, &any, &B, &r2));
    TU_CHECK(r2.from_cache, "... and then reads its own entry");
    sps_matrix_destroy(B);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r2));
    TU_CHECK(r2.from_cache, "the deterministic entry is still there");
    sps_matrix_destroy(B);
    TU_CHECK(sps_context_last_status(ctx) == SPS_OK, "the context holds no error from skipped candidates (%s)",
             sps_context_error(ctx));
}

/* The same pattern with other values: on the CPU values are kept plain whatever they hold,
 * so the key is the pattern's and the second tune comes from the file (the GPU tells them
 * apart: test_gpu_variants). */
static void test_cache_values(sps_matrix A)
{
    char cache[600];
    path_of(cache, sizeof cache, "values.json");
    remove(cache);
    sps_tune_options o = opts(cache, 30.0);
    sps_csr_host h;
    sps_matrix A2 = NULL, B = NULL;
    sps_tune_result r, r2;
    if (!TU_OK(ctx, sps_matrix_to_host(A, &h))) return;
    tu_rng rng;
    tu_rng_seed(&rng, 11);
    tu_fill_random(&rng, SPS_F64, (size_t)h.nnz, h.val);
    if (TU_OK(ctx, sps_matrix_from_csr_host(ctx, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &A2)) &&
        TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r))) {
        sps_matrix_destroy(B), B = NULL;
        if (TU_OK(ctx, sps_matrix_tune(A2, &o, &B, &r2)))
            TU_CHECK(!r.from_cache && r2.from_cache, "CPU: other values of one pattern share its key (from the file: %d, %d)",
                     r.from_cache, r2.from_cache);
    }
    char *text = slurp(cache);
    TU_CHECK(text && !strstr(text, "values="), "CPU: the key names no value class");
    free(text);
    sps_matrix_destroy(B);
    sps_matrix_destroy(A2);
    sps_csr_host_free(&h);
    remove(cache);
}

static void test_cache_paths(sps_matrix A)
{
    char xdg[600], file[700], target[600], link[600];
    path_of(xdg, sizeof xdg, "xdg");
    snprintf(file, sizeof file, "%s/spsolve/tune.json", xdg);
    remove(file);
    setenv("XDG_CACHE_HOME", xdg, 1);
    sps_tune_result r;
    sps_matrix B = NULL;

    /* off: nothing written anywhere */
    sps_tune_options o = opts("off", 2.0);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(!exists(file) && r.cache_path[0] == '\0' && !r.from_cache, "cache=off writes nothing");
    sps_matrix_destroy(B);

    /* the default path: $XDG_CACHE_HOME/spsolve/tune.json, its directory made */
    TU_OK(ctx, sps_matrix_tune(A, NULL, &B, NULL));
    TU_CHECK(exists(file), "the default tuning file is %s", file);
    sps_matrix_destroy(B);
    o = opts(NULL, 2.0);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(r.from_cache && !strcmp(r.cache_path, file), "the default file is read (%s)", r.cache_path);
    sps_matrix_destroy(B);

    /* budget 0: the model, untimed; the file neither read nor written */
    remove(file);
    o = opts(NULL, 0);
    sps_format model;
    TU_OK(ctx, sps_matrix_auto_format(A, &model, NULL));
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(r.from_model && r.timed == 0 && r.format == model && r.chosen_ms < 0 && !exists(file),
             "budget 0: the model's pick %s (got %s, from_model %d)", sps_format_name(model), r.choice, r.from_model);
    sps_matrix_destroy(B);

    /* a tiny budget: the reference only */
    o = opts("off", 1e-9);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(r.timed == 1 && !strcmp(r.choice, "csr") && r.skipped == r.ncandidates - 1, "a tiny budget times csr only");
    TU_CHECK(r.ncandidates > 1 && strstr(r.candidates[1].skipped, "budget"), "the rest are over the budget (%s)",
             r.ncandidates > 1 ? r.candidates[1].skipped : "");
    sps_matrix_destroy(B);

    /* a symbolic link is written through: it stays a link, its file gets the tuning file */
    path_of(target, sizeof target, "target.json");
    path_of(link, sizeof link, "link.json");
    remove(link);
    spit(target, "{\"spsolve-tune\": 1, \"entries\": []}");
    TU_CHECK(symlink(target, link) == 0, "symlink: %s", strerror(errno));
    char lock[700]; /* no lock file from an earlier run: where this store puts its own is checked below */
    snprintf(lock, sizeof lock, "%s.lock", target);
    remove(lock);
    snprintf(lock, sizeof lock, "%s.lock", link);
    remove(lock);
    o = opts(link, 2.0);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    sps_matrix_destroy(B);
    struct stat sb;
    char *t = slurp(target);
    TU_CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode) && t && strstr(t, "choice"),
             "written through the link (%s)", t ? t : "nothing");
    free(t);
    /* its lock is the file's, beside the file: another link to it takes the same one */
    snprintf(lock, sizeof lock, "%s.lock", target);
    TU_CHECK(exists(lock), "the lock beside the linked file (%s)", lock);
    snprintf(lock, sizeof lock, "%s.lock", link);
    TU_CHECK(!exists(lock), "no lock beside the link (%s)", lock);
    remove(lock);
    snprintf(lock, sizeof lock, "%s.lock", target);
    remove(lock);
    remove(link);
    remove(target);
    TU_CHECK(symlink(target, link) == 0, "dangling symlink");
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    sps_matrix_destroy(B);
    TU_CHECK(!exists(target) && lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "a dangling link is not followed");
    remove(link);
    /* a directory as the file: warned, nothing breaks */
    o = opts(dir, 2.0);
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(r.warning[0] != '\0' && B, "a directory as the tuning file: warned (%s)", r.warning);
    sps_matrix_destroy(B);

    /* non-deterministic kernels on request */
    o = opts("off", 30.0);
    o.allow_nondeterministic = 1;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    const sps_tune_candidate *h = find_cand(&r, "hola");
    TU_CHECK(h && h->ms > 0, "hola is timed when allowed (%s)", h ? h->skipped : "absent");
    sps_matrix_destroy(B);

    /* options out of range */
    o = opts("off", 2.0);
    o.runs = 4;
    TU_CHECK(sps_matrix_tune(A, &o, &B, &r) == SPS_ERR_ARG && !B, "runs 4 refused");
    o = opts("off", -1);
    TU_CHECK(sps_matrix_tune(A, &o, &B, &r) == SPS_ERR_ARG, "a negative budget refused");
    sps_context_clear_error(ctx);
}

static void test_padding_prune(void)
{
    /* one dense row: ell's model padding is far beyond max_fill */
    const sps_index n = 2000;
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *col = tu_xcalloc(3 * (size_t)n, sizeof *col);
    double *val = tu_xcalloc(3 * (size_t)n, sizeof *val);
    int64_t k = 0;
    for (sps_index i = 0; i < n; i++) {
        if (i == 0)
            for (sps_index j = 0; j < n; j++) col[k] = j, val[k++] = 1;
        else
            col[k] = i, val[k++] = 2;
        rp[i + 1] = (sps_index)k;
    }
    sps_matrix A = NULL, B = NULL;
    TU_OK(ctx, sps_matrix_from_csr(ctx, n, n, rp, col, val, SPS_F64, &A));
    sps_tune_options o = opts("off", 2.0);
    sps_tune_result r;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    const sps_tune_candidate *ell = find_cand(&r, "ell");
    TU_CHECK(ell && ell->ms < 0 && strstr(ell->skipped, "padding"), "ell pruned by the model (%s)",
             ell ? ell->skipped : "absent");
    check_same_product(A, B, "one dense row");
    sps_matrix_destroy(B);

    /* max_fill is part of the key: an entry tuned under a looser bound (its choice made sell-16
       here, as if it had won there) was handed to a tune of the default bound, sell padded 8.5x */
    char cache[600];
    path_of(cache, sizeof cache, "max_fill.json");
    remove(cache);
    o = opts(cache, 2.0);
    o.max_fill = 1e4;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    sps_matrix_destroy(B);
    char *text = slurp(cache), *at = text ? strstr(text, "\"choice\": \"") : NULL;
    if (TU_CHECK(at != NULL, "the loose bound's entry is written")) {
        char edited[1 << 12];
        snprintf(edited, sizeof edited, "%.*s\"choice\": \"sell slice-height=16%s", (int)(at - text), text,
                 strchr(at + 11, '"'));
        spit(cache, edited);
    }
    free(text);
    o.max_fill = 2.0;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(!r.from_cache && !strstr(r.choice, "sell"), "the default bound is tuned, not given sell (%s%s)",
             r.choice, r.from_cache ? " from the file" : "");
    sps_matrix_destroy(B);
    o.max_fill = 1e4;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    TU_CHECK(r.from_cache && !strcmp(r.choice, "sell slice-height=16"), "the loose bound reads its own entry (%s)",
             r.choice);
    sps_matrix_destroy(B);
    remove(cache);
    sps_matrix_destroy(A);
    free(rp);
    free(col);
    free(val);
}

static void test_compound(void)
{
    const sps_index n = 300;
    const int b = 3;
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *col = tu_xcalloc(3 * (size_t)n, sizeof *col);
    double *val = tu_xcalloc(3 * (size_t)n * b * b, sizeof *val);
    tu_rng rng;
    tu_rng_seed(&rng, 7);
    int64_t k = 0;
    for (sps_index i = 0; i < n; i++) {
        for (sps_index j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) col[k++] = j;
        rp[i + 1] = (sps_index)k;
    }
    tu_fill_random(&rng, SPS_F64, (size_t)k * b * b, val);
    sps_matrix A = NULL, B = NULL;
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, n, n, rp, col, val, sps_entry_block(b), SPS_F64, &A));
    sps_tune_options o = opts("off", 30.0);
    sps_tune_result r;
    TU_OK(ctx, sps_matrix_tune(A, &o, &B, &r));
    int only_compound = r.ncandidates > 0;
    for (int i = 0; i < r.ncandidates; i++) {
        char name[32];
        sps_format f;
        snprintf(name, sizeof name, "%.*s", (int)strcspn(r.candidates[i].spec, " "), r.candidates[i].spec);
        sps_matrix C = NULL;
        /* every candidate names a format that takes compound entries */
        if (sps_format_by_name(name, &f) != SPS_OK || sps_matrix_convert(A, f, NULL, &C) != SPS_OK) only_compound = 0;
        sps_matrix_destroy(C);
    }
    TU_CHECK(only_compound, "a compound matrix competes among compound formats only");
    TU_CHECK(find_cand(&r, "bcsr") && find_cand(&r, "bcsr entry-layout=soa"), "bcsr aos and soa are candidates");
    TU_CHECK(r.timed >= 2 && r.chosen_ms <= r.default_ms, "both layouts timed, the pick no slower (%s)", r.choice);
    sps_matrix_info_t info;
    TU_OK(ctx, sps_matrix_info(B, &info));
    TU_CHECK(info.entry.kind != SPS_ENTRY_SCALAR, "the pick holds compound entries");
    check_same_product(A, B, "compound");
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
    sps_context_clear_error(ctx);
    free(rp);
    free(col);
    free(val);
}

static void test_spec(sps_matrix A)
{
    sps_matrix B = NULL;
    TU_OK(ctx, sps_matrix_convert_spec(A, "sell slice-height=16 sort-window=64", &B));
    sps_matrix_info_t info;
    TU_OK(ctx, sps_matrix_info(B, &info));
    TU_CHECK(info.format == SPS_FMT_SELL, "spec builds sell");
    sps_matrix_destroy(B);
    TU_OK(ctx, sps_matrix_convert_spec(A, "csr csr-kernel=rows variant=csr_unroll=4", &B));
    sps_matrix_destroy(B);
    const char *bad[] = {"", "nosuch", "auto", "sell slice-height=8", "sell slice-height", "csr variant=bogus=1",
                         "csr variant=csr_unroll=3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        B = NULL;
        TU_CHECK(sps_matrix_convert_spec(A, bad[i], &B) == SPS_ERR_ARG && !B, "spec '%s' refused", bad[i]);
    }
    /* a word given twice is refused, naming it (the last one had been taken, and a second variant
       word had dropped the first's fields) */
    const char *twice[][2] = {{"sell slice-height=16 slice-height=32", "slice-height given twice"},
                              {"sell slice-height=32 slice-height=32", "slice-height given twice"},
                              {"csr variant=csr_unroll=2 variant=csr_minb=4", "variant given twice"}};
    for (size_t i = 0; i < sizeof twice / sizeof twice[0]; i++) {
        B = NULL;
        TU_CHECK(sps_matrix_convert_spec(A, twice[i][0], &B) == SPS_ERR_ARG && !B &&
                     strstr(sps_context_error(ctx), twice[i][1]),
                 "spec '%s' refused: %s", twice[i][0], sps_context_error(ctx));
        sps_matrix_destroy(B);
    }
    sps_context_clear_error(ctx);
}

/* Stores from 8 threads at once, each its own keys, into one file: every key is there at the
 * end (the read, merge and rename run under the file's lock; without it the last rename won
 * and 3-4 of 6 concurrent tunes' entries were lost). */
static void test_concurrent_store(void)
{
    char path[600];
    path_of(path, sizeof path, "concurrent.json");
    remove(path);
    enum { T = 8, R = 6 };
    int fails = 0;
#pragma omp parallel for num_threads(T) reduction(+ : fails)
    for (int t = 0; t < T; t++)
        for (int r = 0; r < R; r++) {
            sps_tune_entry e;
            memset(&e, 0, sizeof e);
            snprintf(e.key.device, sizeof e.key.device, "dev");
            snprintf(e.key.runtime, sizeof e.key.runtime, "rt");
            snprintf(e.key.library, sizeof e.key.library, "lib");
            snprintf(e.key.matrix, sizeof e.key.matrix, "thread %d round %d", t, r);
            snprintf(e.key.search, sizeof e.key.search, "deterministic");
            snprintf(e.choice, sizeof e.choice, "csr");
            e.chosen_ms = e.default_ms = e.tune_s = 1;
            char warn[512] = "";
            fails += sps_tune_cache_store(path, 0, &e, warn, sizeof warn) != 0;
        }
    TU_CHECK(fails == 0, "%d concurrent stores failed", fails);
    int found = 0;
    for (int t = 0; t < T; t++)
        for (int r = 0; r < R; r++) {
            sps_tune_key k;
            memset(&k, 0, sizeof k);
            snprintf(k.device, sizeof k.device, "dev");
            snprintf(k.runtime, sizeof k.runtime, "rt");
            snprintf(k.library, sizeof k.library, "lib");
            snprintf(k.matrix, sizeof k.matrix, "thread %d round %d", t, r);
            snprintf(k.search, sizeof k.search, "deterministic");
            sps_tune_entry hit;
            char warn[512] = "";
            found += sps_tune_cache_lookup(path, &k, &hit, warn, sizeof warn) == 1;
        }
    TU_CHECK(found == T * R, "concurrent stores: %d of %d entries in the file", found, T * R);
    remove(path);
}

/* The file standard output writes (`--tune-cache t.json >> t.json`) is never written into: a
 * store there wrote its entries through the stream, after the old ones, and the file no
 * longer parsed.  Warned, the file left as it was. */
static void test_store_into_stdout(void)
{
    char path[600];
    path_of(path, sizeof path, "stdout.json");
    const char *valid = "{\"spsolve-tune\": 1, \"entries\": []}\n";
    spit(path, valid);
    sps_tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.key.device, sizeof e.key.device, "dev");
    snprintf(e.key.matrix, sizeof e.key.matrix, "m");
    snprintf(e.choice, sizeof e.choice, "csr");
    char warn[512] = "";
    fflush(stdout);
    const int saved = dup(1);
    FILE *f = fopen(path, "ab");
    const int redirected = saved >= 0 && f && dup2(fileno(f), 1) == 1;
    const int rc = redirected ? sps_tune_cache_store(path, 0, &e, warn, sizeof warn) : -2;
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
    }
    if (f) fclose(f);
    TU_CHECK(redirected, "stdout redirected to %s", path);
    char *text = slurp(path);
    TU_CHECK(rc != 0 && strstr(warn, "not written"), "standard output's file: not written (%d, %s)", rc, warn);
    TU_CHECK(text && !strcmp(text, valid), "standard output's file left as it was ('%s')", text ? text : "gone");
    free(text);
    remove(path);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "test_tune.d");
    mkdir(dir, 0700);
    setenv("XDG_CACHE_HOME", dir, 1); /* never the user's own file */
    if (tu_cpu_context(&ctx)) return 1;
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:64", SPS_F64, &A));
    test_spec(A);
    test_tune_and_cache(A);
    test_cache_values(A);
    test_cache_paths(A);
    test_padding_prune();
    test_compound();
    test_concurrent_store();
    test_store_into_stdout();
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return tu_finish();
}
