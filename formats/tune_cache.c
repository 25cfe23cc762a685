/* The autotuner's tuning file: the key of a matrix on a device, and a JSON file of
 * tuned results read and rewritten whole.
 *
 *   {
 *     "spsolve-tune": 1,
 *     "entries": [
 *       {"device": "CPU (OpenMP, 2 threads)", "runtime": "cpu openmp-201511 threads 2",
 *        "library": "0.1.0", "matrix": "n=1024 m=1024 nnz=4992 ... hash=...", "search": "deterministic",
 *        "choice": "sell slice-height=16", "chosen_ms": 0.0123, "default_ms": 0.0151, "tune_s": 0.41}
 *     ]
 *   }
 *
 * An entry matches when all five key strings are equal; members this version does
 * not know are skipped (and not written back), and an entry with a member of ours of
 * the wrong type is dropped.  A file that does not parse as such an object (another
 * file named by mistake, a newer version's) is ignored with a warning and left as it
 * is: a store then writes nothing.  Writes go to a temporary file beside the target
 * (created exclusively, never through a link), synced, then renamed over it, as
 * io/mmio.c writes; a target that is a symbolic link or not a regular file is never
 * replaced (nor read when it is not a regular file: a FIFO would block), nor is the file
 * standard output or error writes (io/atomic_out.c would write into it).  A store
 * reads, merges and writes under an exclusive lock of "<file>.lock" beside it, so
 * concurrent tunes keep each other's entries. */
#define _XOPEN_SOURCE 700 /* realpath (XSI), beside the build's _POSIX_C_SOURCE */
#include "formats/tune.h"
#include "io/atomic_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TUNE_FILE_VERSION 1
#define TUNE_FILE_MAX_BYTES (64u << 20)

void sps_tune_warn(char *warn, size_t wl, const char *fmt, ...)
{
    if (!warn || !wl) return;
    size_t used = strlen(warn);
    if (used && used + 2 < wl) {
        memcpy(warn + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= wl) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(warn + used, wl - used, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ the key */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

void sps_tune_key_of(sps_matrix A, const sps_index *rowptr, const sps_index *col, int table, sps_tune_key *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->device, sizeof k->device, "%s", sps_context_device_name(A->ctx));
    snprintf(k->runtime, sizeof k->runtime, "%s", sps_ex(A->ctx)->device_version);
    snprintf(k->library, sizeof k->library, "%s", sps_version());
    /* row lengths: extremes and counts of 0, 1, 2-3, 4-7, ..., >= 2^10 */
    int64_t lo = A->n ? INT64_MAX : 0, hi = 0, hist[12] = {0};
    for (sps_index i = 0; i < A->n; i++) {
        const int64_t l = rowptr[i + 1] - rowptr[i];
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
        int b = 0;
        while (b < 11 && (1ll << b) <= l) b++;
        hist[b]++;
    }
    uint64_t h = 14695981039346656037ull;
    h = fnv1a(h, rowptr, ((size_t)A->n + 1) * sizeof *rowptr);
    h = fnv1a(h, col, (size_t)(rowptr[A->n] - rowptr[0]) * sizeof *col);
    int w = snprintf(k->matrix, sizeof k->matrix, "n=%ld m=%ld nnz=%lld entry=%s t=%s rows=%lld..%lld hist=",
                     (long)A->n, (long)A->m, (long long)A->nnz, sps_entry_name(A->entry), sps_scalar_name(A->t),
                     (long long)lo, (long long)hi);
    for (int b = 0; b < 12 && w > 0 && (size_t)w < sizeof k->matrix; b++)
        w += snprintf(k->matrix + w, sizeof k->matrix - w, "%s%lld", b ? "," : "", (long long)hist[b]);
    if (w > 0 && (size_t)w < sizeof k->matrix)
        snprintf(k->matrix + w, sizeof k->matrix - w, " hash=%016llx%s", (unsigned long long)h,
                 table ? " values=table" : "");
}

/* ------------------------------------------------------------------ where */
const char *sps_tune_cache_path(const char *opt, char *path, size_t len, int *create_dir, char *warn, size_t wl)
{
    *create_dir = 0;
    if (opt && strcmp(opt, "off") == 0) return NULL;
    if (opt && opt[0]) {
        if ((size_t)snprintf(path, len, "%s", opt) >= len) {
            sps_tune_warn(warn, wl, "tuning file path too long; not used");
            return NULL;
        }
        return path;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') /* the XDG spec: a relative value is ignored */
        n = snprintf(path, len, "%s/spsolve/tune.json", xdg);
    else if (home && home[0])
        n = snprintf(path, len, "%s/.cache/spsolve/tune.json", home);
    else {
        sps_tune_warn(warn, wl, "no tuning file: neither XDG_CACHE_HOME nor HOME is set");
        return NULL;
    }
    if (n < 0 || (size_t)n >= len) {
        sps_tune_warn(warn, wl, "tuning file path too long; not used");
        return NULL;
    }
    *create_dir = 1;
    return path;
}

/* mkdir -p of the directory holding path (0700: a user's cache). */
static int make_parent(const char *path)
{
    char d[1024];
    if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d) return -1;
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return 0;
    *slash = '\0';
    for (char *p = d + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(d, 0700) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(d, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* ------------------------------------------------------------------ JSON in */
typedef struct {
    const char *p, *e;
    int line;
    const char *err;
} jp;

static void jws(jp *j)
{
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        if (*j->p == '\n') j->line++;
        j->p++;
    }
}
static int jfail(jp *j, const char *what)
{
    if (!j->err) j->err = what;
    return 0;
}
static int jlit(jp *j, char c)
{
    jws(j);
    if (j->p >= j->e || *j->p != c) return 0;
    j->p++;
    return 1;
}
static int jhex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string into out (cap bytes, NULL: skip it): 1, or 2 when it was longer than cap
 * (out holds its beginning), 0 on a syntax error. */
static int jstring(jp *j, char *out, size_t cap)
{
    if (!jlit(j, '"')) return jfail(j, "expected a string");
    size_t n = 0;
    int trunc = 0;
    while (j->p < j->e && *j->p != '"') {
        unsigned c = (unsigned char)*j->p++;
        char buf[4];
        size_t k = 1;
        if (c < 0x20) return jfail(j, "control character in a string");
        buf[0] = (char)c;
        if (c == '\\') {
            if (j->p >= j->e) break;
            const char x = *j->p++;
            const char *esc = strchr("\"\\/bfnrt", x);
            if (esc) {
                buf[0] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
            } else if (x == 'u') {
                unsigned u = 0;
                for (int i = 0; i < 4; i++) {
                    const int h = j->p < j->e ? jhex(*j->p++) : -1;
                    if (h < 0) return jfail(j, "bad \\u escape");
                    u = u << 4 | (unsigned)h;
                }
                if (u >= 0xd800 && u < 0xe000) return jfail(j, "surrogate \\u escape");
                if (u < 0x80) buf[0] = (char)u;
                else if (u < 0x800) buf[0] = (char)(0xc0 | u >> 6), buf[1] = (char)(0x80 | (u & 63)), k = 2;
                else
                    buf[0] = (char)(0xe0 | u >> 12), buf[1] = (char)(0x80 | ((u >> 6) & 63)),
                    buf[2] = (char)(0x80 | (u & 63)), k = 3;
            } else {
                return jfail(j, "bad escape in a string");
            }
        }
        if (out && !trunc && n + k < cap) {
            memcpy(out + n, buf, k);
            n += k;
        } else {
            trunc = 1;
        }
    }
    if (j->p >= j->e) return jfail(j, "unterminated string");
    j->p++;
    if (out) out[n] = '\0';
    return trunc && out ? 2 : 1;
}

static int jnumber(jp *j, double *v)
{
    jws(j);
    char buf[64];
    size_t n = 0;
    while (j->p + n < j->e && n < sizeof buf - 1 && strchr("+-0123456789.eE", j->p[n])) n++;
    memcpy(buf, j->p, n);
    buf[n] = '\0';
    char *end;
    *v = n ? strtod(buf, &end) : 0;
    if (!n || *end) return jfail(j, "expected a number");
    j->p += n;
    return 1;
}

/* Any value, skipped (depth-limited). */
static int jskip(jp *j, int depth)
{
    if (depth > 64) return jfail(j, "nested too deep");
    jws(j);
    if (j->p >= j->e) return jfail(j, "unexpected end");
    const char c = *j->p;
    if (c == '"') return jstring(j, NULL, 0);
    if (c == '{' || c == '[') {
        const char close = c == '{' ? '}' : ']';
        j->p++;
        if (jlit(j, close)) return 1;
        do {
            if (c == '{' && (!jstring(j, NULL, 0) || !(jlit(j, ':') || jfail(j, "expected ':'")))) return 0;
            if (!jskip(j, depth + 1)) return 0;
        } while (jlit(j, ','));
        return jlit(j, close) || jfail(j, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        const size_t n = strlen(words[i]);
        if ((size_t)(j->e - j->p) >= n && memcmp(j->p, words[i], n) == 0) {
            j->p += n;
            return 1;
        }
    }
    double v;
    return jnumber(j, &v);
}

/* One entry object; *ok = 0 when a key member is missing (the entry is dropped). */
static int jentry(jp *j, sps_tune_entry *e, int *ok)
{
    memset(e, 0, sizeof *e);
    e->chosen_ms = e->default_ms = e->tune_s = -1;
    unsigned have = 0;
    if (!jlit(j, '{')) return jfail(j, "expected an entry object");
    if (!jlit(j, '}')) {
        do {
            char name[32];
            if (!jstring(j, name, sizeof name)) return 0; /* a long name: no member of ours */
            if (!jlit(j, ':')) return jfail(j, "expected ':'");
            struct {
                const char *name;
                char *s;
                size_t cap;
                double *v;
            } const m[] = {
                {"device", e->key.device, sizeof e->key.device, NULL},
                {"runtime", e->key.runtime, sizeof e->key.runtime, NULL},
                {"library", e->key.library, sizeof e->key.library, NULL},
                {"matrix", e->key.matrix, sizeof e->key.matrix, NULL},
                {"search", e->key.search, sizeof e->key.search, NULL},
                {"choice", e->choice, sizeof e->choice, NULL},
                {"chosen_ms", NULL, 0, &e->chosen_ms},
                {"default_ms", NULL, 0, &e->default_ms},
                {"tune_s", NULL, 0, &e->tune_s},
            };
            int i = 0, nm = (int)(sizeof m / sizeof m[0]);
            while (i < nm && strcmp(m[i].name, name) != 0) i++;
            if (i == nm) {
                if (!jskip(j, 1)) return 0;
            } else {
                /* a value of another type (a string for a number, null) is no value of ours: the
                   entry is dropped, not the file */
                jws(j);
                const int is_str = j->p < j->e && *j->p == '"';
                if (is_str != !!m[i].s) {
                    if (!jskip(j, 1)) return 0;
                    continue;
                }
                const int r = m[i].s ? jstring(j, m[i].s, m[i].cap) : jnumber(j, m[i].v);
                if (!r) return 0;
                if (r == 1) have |= 1u << i; /* a truncated string is no value of ours */
            }
        } while (jlit(j, ','));
        if (!jlit(j, '}')) return jfail(j, "expected ',' or '}' in an entry");
    }
    *ok = (have & 0x3f) == 0x3f; /* the key strings and the choice */
    return 1;
}

typedef struct {
    sps_tune_entry *v;
    size_t n, cap;
    int dropped;
} entry_list;

static int list_push(entry_list *l, const sps_tune_entry *e)
{
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 16;
        sps_tune_entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) return 0;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *e;
    return 1;
}

static int parse_file(const char *buf, size_t len, entry_list *l, int *line, const char **why)
{
    jp j = {buf, buf + len, 1, NULL};
    int version_ok = 0;
    if (!jlit(&j, '{')) {
        jfail(&j, "expected a JSON object");
        goto bad;
    }
    if (!jlit(&j, '}')) {
        do {
            char name[32];
            if (!jstring(&j, name, sizeof name)) goto bad;
            if (!jlit(&j, ':')) {
                jfail(&j, "expected ':'");
                goto bad;
            }
            if (strcmp(name, "spsolve-tune") == 0) {
                double v;
                if (!jnumber(&j, &v)) goto bad;
                if (v != TUNE_FILE_VERSION) {
                    jfail(&j, "not version 1 of the tuning file");
                    goto bad;
                }
                version_ok = 1;
            } else if (strcmp(name, "entries") == 0) {
                if (!jlit(&j, '[')) {
                    jfail(&j, "expected an array of entries");
                    goto bad;
                }
                if (!jlit(&j, ']')) {
                    do {
                        sps_tune_entry e;
                        int ok = 0;
                        if (!jentry(&j, &e, &ok)) goto bad;
                        if (!ok) l->dropped++;
                        else if (!list_push(l, &e)) {
                            jfail(&j, "out of memory");
                            goto bad;
                        }
                    } while (jlit(&j, ','));
                    if (!jlit(&j, ']')) {
                        jfail(&j, "expected ',' or ']' after an entry");
                        goto bad;
                    }
                }
            } else if (!jskip(&j, 1)) {
                goto bad;
            }
        } while (jlit(&j, ','));
        if (!jlit(&j, '}')) {
            jfail(&j, "expected ',' or '}'");
            goto bad;
        }
    }
    jws(&j);
    if (j.p != j.e) {
        jfail(&j, "text after the object");
        goto bad;
    }
    if (!version_ok) {
        jfail(&j, "no \"spsolve-tune\": 1 member");
        goto bad;
    }
    return 1;
bad:
    *line = j.line;
    *why = j.err ? j.err : "malformed";
    l->n = 0;
    return 0;
}

/* Read the file into l: 1 when it was read (or absent: l empty), 0 when ignored (warned). */
static int read_file(const char *path, entry_list *l, char *warn, size_t wl)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        sps_tune_warn(warn, wl, "tuning file '%s' ignored: %s", path, strerror(errno));
        return 0;
    }
    struct stat sb;
    char *buf = NULL;
    int ok = 0;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        sps_tune_warn(warn, wl, "tuning file '%s' ignored: not a regular file", path);
    } else if ((uint64_t)sb.st_size > TUNE_FILE_MAX_BYTES) {
        sps_tune_warn(warn, wl, "tuning file '%s' ignored: larger than %u MiB", path, TUNE_FILE_MAX_BYTES >> 20);
    } else if (!(buf = malloc((size_t)sb.st_size + 1))) {
        sps_tune_warn(warn, wl, "tuning file '%s' ignored: out of memory", path);
    } else {
        size_t got = 0;
        ssize_t r = 1;
        while (got < (size_t)sb.st_size && (r = read(fd, buf + got, (size_t)sb.st_size - got)) > 0) got += (size_t)r;
        int line = 0;
        const char *why = NULL;
        if (r < 0)
            sps_tune_warn(warn, wl, "tuning file '%s' ignored: %s", path, strerror(errno));
        else if (!(ok = parse_file(buf, got, l, &line, &why)))
            sps_tune_warn(warn, wl, "tuning file '%s' is corrupt (line %d: %s): ignored", path, line, why);
        else if (l->dropped)
            sps_tune_warn(warn, wl, "tuning file '%s': %d incomplete entr%s dropped", path, l->dropped,
                          l->dropped == 1 ? "y" : "ies");
    }
    free(buf);
    close(fd);
    return ok;
}

static int key_eq(const sps_tune_key *a, const sps_tune_key *b)
{
    return !strcmp(a->device, b->device) && !strcmp(a->runtime, b->runtime) && !strcmp(a->library, b->library) &&
           !strcmp(a->matrix, b->matrix) && !strcmp(a->search, b->search);
}

int sps_tune_cache_lookup(const char *path, const sps_tune_key *k, sps_tune_entry *hit, char *warn, size_t wl)
{
    entry_list l = {0};
    int found = 0;
    if (read_file(path, &l, warn, wl))
        for (size_t i = 0; i < l.n && !found; i++)
            if (key_eq(&l.v[i].key, k)) {
                *hit = l.v[i];
                found = 1;
            }
    free(l.v);
    return found;
}

/* ------------------------------------------------------------------ JSON out */
static void jput(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}
static double jnum(double v) { return v == v && v > -1e300 && v < 1e300 ? v : -1; }

static int write_entries(FILE *f, const entry_list *l)
{
    fprintf(f, "{\n  \"spsolve-tune\": %d,\n  \"entries\": [", TUNE_FILE_VERSION);
    for (size_t i = 0; i < l->n; i++) {
        const sps_tune_entry *e = &l->v[i];
        fputs(i ? ",\n    {" : "\n    {", f);
        const char *names[] = {"device", "runtime", "library", "matrix", "search", "choice"};
        const char *vals[] = {e->key.device, e->key.runtime, e->key.library, e->key.matrix, e->key.search, e->choice};
        for (int m = 0; m < 6; m++) {
            fprintf(f, "%s\"%s\": ", m ? ", " : "", names[m]);
            jput(f, vals[m]);
        }
        fprintf(f, ", \"chosen_ms\": %.6g, \"default_ms\": %.6g, \"tune_s\": %.4g}", jnum(e->chosen_ms),
                jnum(e->default_ms), jnum(e->tune_s));
    }
    fputs(l->n ? "\n  ]\n}\n" : "]\n}\n", f);
    return !ferror(f);
}

static int write_file(const char *path, const entry_list *l, char *warn, size_t wl)
{
    char err[600] = "";
    sps_out_file o;
    if (sps_out_open(&o, path, 0644, err, sizeof err) != SPS_OK) {
        sps_tune_warn(warn, wl, "tuning file '%s' not written: %s", path, err);
        return -1;
    }
    /* a tuning file is replaced whole or not at all: sps_out_open writes the file of standard
     * output or error (or a descriptor's name) through that stream, at its offset, which put the
     * merged entries after the old ones (`spsolve --tune --tune-cache t.json >> t.json`): two
     * objects and a summary, a file no tune could read again */
    if (o.direct) {
        sps_out_close(&o, 0, err, sizeof err);
        sps_tune_warn(warn, wl, "tuning file '%s' not written: it is a stream of this process (standard output's "
                      "or error's file, a descriptor), not replaced", path);
        return -1;
    }
    const int ok = write_entries(o.f, l);
    if (!ok) snprintf(err, sizeof err, "a write failed: %s", strerror(errno)); /* close says nothing then */
    if (sps_out_close(&o, ok, err, sizeof err) != SPS_OK) {
        sps_tune_warn(warn, wl, "tuning file '%s' not written: %s", path, err);
        return -1;
    }
    return 0;
}

/* An exclusive lock of "<file>.lock" beside the file path names once links are resolved (so
 * two links to one file take one lock; the lock itself is never opened through a link),
 * held while the descriptor is open; -1 where none can be had (the store goes on unlocked)
 * or where path is no regular file (nothing is written there then). */
static int lock_beside(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) return -1; /* /dev/null, a directory: never ours */
    char *real = realpath(path, NULL); /* NULL for a file not made yet: its own name then */
    const char *file = real ? real : path;
    const size_t n = strlen(file) + 6;
    char *lp = malloc(n);
    if (lp) snprintf(lp, n, "%s.lock", file);
    free(real);
    if (!lp) return -1;
    int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    free(lp);
    if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int sps_tune_cache_store(const char *path, int create_dir, const sps_tune_entry *e, char *warn, size_t wl)
{
    if (create_dir && make_parent(path) != 0) {
        sps_tune_warn(warn, wl, "tuning file '%s' not written: cannot create its directory: %s", path,
                      strerror(errno));
        return -1;
    }
    entry_list l = {0};
    int rc = -1;
    const int lock = lock_beside(path);
    /* the entries as they are now (another process may have added some since the
     * lookup), read quietly: an unreadable file was warned about at the lookup, and is
     * not ours to overwrite */
    if (!read_file(path, &l, NULL, 0)) {
        sps_tune_warn(warn, wl, "tuning file '%s' not written: it is not a tuning file this version reads (left as "
                      "it is)", path);
        goto out;
    }
    size_t i = 0;
    while (i < l.n && !key_eq(&l.v[i].key, &e->key)) i++;
    if (i < l.n) l.v[i] = *e;
    else if (!list_push(&l, e)) {
        sps_tune_warn(warn, wl, "tuning file '%s' not written: out of memory", path);
        goto out;
    }
    rc = write_file(path, &l, warn, wl);
out:
    if (lock >= 0) close(lock); /* the lock goes with the descriptor */
    free(l.v);
    return rc;
}
