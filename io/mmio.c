/* libspsolve — Matrix Market reader/writer.  See mmio.h for the accepted
 * syntax and the design choices. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, newlocale/uselocale */
#endif

#include "mmio.h"
#include "atomic_out.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__GNUC__)
#define MM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define MM_LIKELY(x) __builtin_expect(!!(x), 1)
#define MM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MM_PRINTF(a, b)
#define MM_LIKELY(x) (x)
#define MM_UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------------------ */
/* Error helpers                                                              */

static void set_err(char *err, size_t errlen, const char *fmt, ...) MM_PRINTF(3, 4);
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap); /* truncates and always NUL-terminates */
    va_end(ap);
}

static sps_status alloc_fail(char *err, size_t errlen, size_t bytes)
{
    set_err(err, errlen, "out of memory allocating %zu bytes", bytes);
    return SPS_ERR_ALLOC;
}

/* Allocation of n elements of size sz with overflow check; at least one
 * element so that a successful result never holds NULL arrays. */
static void *alloc_n(size_t n, size_t sz, size_t *bytes)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / sz) {
        *bytes = SIZE_MAX;
        return NULL;
    }
    *bytes = n * sz;
    return malloc(*bytes);
}

static void *realloc_n(void *p, size_t n, size_t sz, size_t *bytes)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / sz) {
        *bytes = SIZE_MAX;
        return NULL;
    }
    *bytes = n * sz;
    return realloc(p, *bytes);
}

/* ------------------------------------------------------------------------ */
/* Character classes.  The text always ends with a NUL sentinel (embedded NULs
 * are rejected up front), so scanners may look one byte ahead freely.       */

enum { C_BLANK = 1, C_NL = 2, C_NUL = 4 };
static const unsigned char cls[256] = {
    [' '] = C_BLANK, ['\t'] = C_BLANK, ['\r'] = C_BLANK, ['\v'] = C_BLANK, ['\f'] = C_BLANK,
    ['\n'] = C_NL,   [0] = C_NUL,
};
#define IS_BLANK(ch) (cls[(unsigned char)(ch)] & C_BLANK)
/* a token ends at a blank, a newline or the end of the text */
#define IS_TERM(ch) (cls[(unsigned char)(ch)] != 0)
#define IS_DIGIT(ch) ((unsigned)((unsigned char)(ch) - '0') < 10u)

/* A file is read as a stream through a window of whole lines: [buf, end) holds
 * complete lines only (up to the last newline read so far; at the end of the
 * stream, the rest), *end is the NUL sentinel and the byte it covers is kept in
 * held.  refill() slides the window at a line start, where the parse holds no
 * other pointer into it: skip_noise() calls it, and every entry, the banner and
 * the size line begin there.  Memory stays at the window (4 MiB, more only for a
 * longer line, up to MM_MAX_LINE) plus the entries, whatever the stream's length
 * (a /dev/zero or an endless pipe no longer fills memory before the parse).  A
 * buffer (sps_mm_read_buffer) is one window with no source. */
enum { MM_WINDOW = 4 << 20, MM_MAX_LINE = 64 << 20, MM_RAW = 1 << 18 };

/* The bytes of a file, gunzipped when it starts with the gzip magic: inflate member
 * by member, so that a concatenation of gzip members reads as one text (as gzip -d
 * does) and bytes after the last member that start no other one are noticed (zlib's
 * gzread drops them silently) and reported as a warning. */
typedef struct {
    int fd;
    int gz;              /* 1: gzip; 0: plain, passed through */
    int in_eof, done;    /* the descriptor is exhausted; the gzip data has ended */
    z_stream zs;
    int zinit;
    unsigned char *in;   /* MM_RAW bytes of raw input: zs.next_in .. + zs.avail_in unread */
    int64_t trailing;    /* bytes after the last gzip member (-1: some, count unknown) */
} mm_src;

/* More raw input after the unread zs.avail_in bytes, moved to the front; 0, or -1
 * on a read error (errno). */
static int src_fill(mm_src *s)
{
    if (s->in_eof) return 0;
    if (s->zs.avail_in && s->zs.next_in != s->in) memmove(s->in, s->zs.next_in, s->zs.avail_in);
    s->zs.next_in = s->in;
    ssize_t r;
    do r = read(s->fd, s->in + s->zs.avail_in, MM_RAW - s->zs.avail_in);
    while (r < 0 && errno == EINTR);
    if (r < 0) return -1;
    if (r == 0) s->in_eof = 1;
    s->zs.avail_in += (uInt)r;
    return 0;
}

/* Up to want bytes of text into dst: their count, 0 at the end, -1 on an error
 * (message in why: errno's, or zlib's for corrupt or truncated gzip). */
static long src_read(mm_src *s, char *dst, size_t want, char *why, size_t whylen)
{
    if (!s->gz) { /* plain: what the first fill read, then the descriptor */
        if (s->zs.avail_in) {
            const size_t n = s->zs.avail_in < want ? s->zs.avail_in : want;
            memcpy(dst, s->zs.next_in, n);
            s->zs.next_in += n;
            s->zs.avail_in -= (uInt)n;
            return (long)n;
        }
        ssize_t r;
        do r = read(s->fd, dst, want);
        while (r < 0 && errno == EINTR);
        if (r < 0) snprintf(why, whylen, "%s", strerror(errno));
        return (long)r;
    }
    for (;;) {
        if (s->done) return 0;
        if (s->zs.avail_in == 0 && src_fill(s) < 0) {
            snprintf(why, whylen, "%s", strerror(errno));
            return -1;
        }
        s->zs.next_out = (Bytef *)dst;
        s->zs.avail_out = (uInt)want;
        const int z = inflate(&s->zs, Z_NO_FLUSH);
        const long got = (long)(want - s->zs.avail_out);
        if (z == Z_STREAM_END) { /* another member, or the end, or bytes that are neither */
            if (s->zs.avail_in < 2 && src_fill(s) < 0) {
                snprintf(why, whylen, "%s", strerror(errno));
                return -1;
            }
            if (s->zs.avail_in >= 2 && s->zs.next_in[0] == 0x1f && s->zs.next_in[1] == 0x8b) {
                inflateReset(&s->zs);
            } else {
                s->done = 1;
                if (s->zs.avail_in) { /* count them where the descriptor ends (a file; a pipe: read on) */
                    int64_t t = s->zs.avail_in;
                    for (int k = 0; k < 4096 && !s->in_eof; k++) { /* at most 1 GiB more */
                        s->zs.avail_in = 0;
                        if (src_fill(s) < 0) break;
                        t += s->zs.avail_in;
                    }
                    s->trailing = s->in_eof ? t : -1;
                }
            }
            if (got) return got;
            continue;
        }
        if (got) return got;
        if (z == Z_OK || z == Z_BUF_ERROR) { /* no output yet: it needs more input */
            if (s->in_eof) {
                snprintf(why, whylen, "gzip: unexpected end of file (truncated)");
                return -1;
            }
            if (src_fill(s) < 0) {
                snprintf(why, whylen, "%s", strerror(errno));
                return -1;
            }
            continue;
        }
        snprintf(why, whylen, "gzip: %s", s->zs.msg ? s->zs.msg : "corrupt data");
        return -1;
    }
}

typedef struct {
    const char *buf, *end; /* *end == '\0' */
    const char *name;
    int64_t line;          /* 1-based line of the current position */
    int allow_nonfinite;
    int allow_quaternion;
    const sps_mm_options *opt; /* the size-line limits (NULL: none) */
    char *err;
    size_t errlen;
    /* streaming (src != NULL) */
    mm_src *src;
    char *win;             /* the window's storage: the window, then the partial line after it */
    size_t cap, fill;      /* bytes allocated, bytes of data in win */
    char held;             /* the byte under the sentinel (when end < win + fill) */
    int eof;               /* the source is exhausted */
    int saw_nl, saw_cr;    /* for the CR-only hint */
    int last_nl;           /* the last byte read was a newline (eof_line) */
    int64_t consumed;      /* bytes slid out of the window so far */
    int64_t size_hint;     /* uncompressed size when known (a plain regular file), else -1 */
    sps_status st;         /* a failure of refill (its message is in err; later ones keep it) */
} mm_ctx;

/* "<name>:<line>: <what>" into the caller's buffer; st, or the stream's own failure. */
static sps_status vperr(const mm_ctx *c, sps_status st, int64_t line, const char *fmt, va_list ap)
{
    if (c->st != SPS_OK) return c->st; /* the stream failed first: that is the message */
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "%s:%lld: ", c->name, (long long)line);
        if (n >= 0 && (size_t)n < c->errlen) vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    }
    return st;
}

/* vperr with one status: perr, a malformed file (SPS_ERR_PARSE); arg_err, a well-formed file
 * that the caller's request does not fit (SPS_ERR_ARG: sps_mm_options.block, .vector) */
#define MM_ERR_FN(name, status)                                                                                  \
    static sps_status name(const mm_ctx *c, int64_t line, const char *fmt, ...) MM_PRINTF(3, 4);                \
    static sps_status name(const mm_ctx *c, int64_t line, const char *fmt, ...)                                 \
    {                                                                                                            \
        va_list ap;                                                                                              \
        va_start(ap, fmt);                                                                                       \
        const sps_status st = vperr(c, status, line, fmt, ap);                                                   \
        va_end(ap);                                                                                              \
        return st;                                                                                               \
    }
MM_ERR_FN(perr, SPS_ERR_PARSE)
MM_ERR_FN(arg_err, SPS_ERR_ARG)

/* Copy of the token at p for messages: at most 40 bytes, non-printable bytes
 * shown as '?', "..." appended when cut. */
typedef struct { char s[48]; } tokbuf;
static tokbuf tok_show(const char *p)
{
    tokbuf t;
    size_t n = 0;
    while (!IS_TERM(p[n]) && n < 40) {
        unsigned char ch = (unsigned char)p[n];
        t.s[n] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
        n++;
    }
    if (!IS_TERM(p[n])) {
        memcpy(t.s + n, "...", 3);
        n += 3;
    }
    t.s[n] = '\0';
    return t;
}

/* Line number to report when the text ends: the last line of the file. */
static int64_t eof_line(const mm_ctx *c)
{
    size_t len = (size_t)(c->end - c->buf);
    int64_t l = c->line;
    const int nl_last = c->src ? c->last_nl : len > 0 && c->end[-1] == '\n';
    if (nl_last && l > 1) l--;
    return l;
}

static const char *refill(mm_ctx *c, const char *p);

/* Skip blanks, blank lines and comment lines, starting at a line start.
 * Returns the first byte of the next content line (== end at EOF).  At the
 * window's end it slides the window (a stream): callers hold no other pointer. */
static inline const char *skip_noise(mm_ctx *c, const char *p)
{
    for (;;) {
        while (IS_BLANK(*p)) p++;
        if (*p == '\n') {
            p++;
            c->line++;
            continue;
        }
        if (MM_UNLIKELY(*p == '%')) {
            const char *nl = memchr(p, '\n', (size_t)(c->end - p));
            if (!nl) return c->end;
            p = nl + 1;
            c->line++;
            continue;
        }
        if (MM_UNLIKELY(p == c->end) && c->src && !c->eof) {
            p = refill(c, p);
            continue;
        }
        return p;
    }
}

/* Slide the window to start at p (a line start; the line and what follows are
 * kept) and read until it holds at least one more complete line or the stream
 * ends.  On a read error, a NUL byte or a line over MM_MAX_LINE: c->st and the
 * message are set and the window is left empty at its end (eof), so the parse
 * stops where it is and reports c->st. */
static const char *refill(mm_ctx *c, const char *p)
{
    char *w = c->win;
    if (c->end < w + c->fill) *(char *)c->end = c->held;
    const size_t keep = (size_t)(w + c->fill - p);
    c->consumed += (int64_t)(p - w);
    memmove(w, p, keep);
    c->fill = keep;
    sps_status st = SPS_OK;
    for (;;) {
        if (c->cap - c->fill < (MM_WINDOW >> 2) + 1) { /* a long line: grow, to a limit */
            if (c->cap >= (size_t)MM_MAX_LINE) {
                st = perr(c, c->line, "a line longer than %d MiB (not a Matrix Market file?)", MM_MAX_LINE >> 20);
                break;
            }
            char *nw = realloc(w, c->cap * 2);
            if (!nw) {
                set_err(c->err, c->errlen, "%s: out of memory for a %zu-byte read window", c->name, c->cap * 2);
                st = SPS_ERR_ALLOC;
                break;
            }
            c->win = w = nw;
            c->cap *= 2;
        }
        size_t want = c->cap - c->fill - 1;
        if (want > (1u << 30)) want = 1u << 30; /* inflate counts in uInt */
        char why[192];
        const long r = src_read(c->src, w + c->fill, want, why, sizeof why);
        if (r < 0) {
            set_err(c->err, c->errlen, "cannot read '%s': %s", c->name, why);
            st = SPS_ERR_IO;
            break;
        }
        if (r == 0) {
            c->eof = 1;
            break;
        }
        const char *nd = w + c->fill, *z = memchr(nd, '\0', (size_t)r);
        if (z) { /* binary or UTF-16: the scanners would stop at it */
            int64_t line = c->line;
            for (const char *q = w; q < z; q++) line += *q == '\n';
            st = perr(c, line, "unexpected NUL byte (binary file?)");
            break;
        }
        const int nl = memchr(nd, '\n', (size_t)r) != NULL;
        c->saw_nl |= nl;
        c->saw_cr |= memchr(nd, '\r', (size_t)r) != NULL;
        c->last_nl = nd[r - 1] == '\n';
        c->fill += (size_t)r;
        if (nl) break;
    }
    if (st != SPS_OK) {
        c->st = st;
        c->eof = 1;
        c->fill = 0;
    }
    char *e = w + c->fill;
    if (!c->eof) { /* the window ends after the last newline */
        while (e > w && e[-1] != '\n') e--;
    }
    c->held = *e;
    *e = '\0';
    c->buf = w;
    c->end = e;
    return w;
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                    */

/* Exact powers of ten: every one up to 1e22 is representable in a double. */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* x87 80-bit long double (64-bit significand, little-endian layout): used to
 * extend the fast path to the 16-19 digit tokens of round-trip output. */
#if (defined(__x86_64__) || defined(__i386__)) && LDBL_MANT_DIG == 64 && FLT_EVAL_METHOD == 0
#define MM_X87_EXT 1
/* 10^k = 2^k * 5^k is exact in a 64-bit significand while 5^k < 2^64 (k <= 27). */
static const long double pow10_ld[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                                         1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                                         1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
#else
#define MM_X87_EXT 0
#endif

/* Fast decimal -> double for plain tokens; exact (correctly rounded) or it
 * declines.  Returns 0 without consuming anything for every token it cannot
 * convert exactly, including malformed ones; the caller then tries strtod,
 * which decides between "valid" and "error".
 *  - Clinger: m <= 2^53 and |e| <= 22: m and 10^|e| are exact doubles, and one
 *    IEEE multiplication/division rounds correctly.
 *  - x87 (m < 2^64, |e| <= 27): m and 10^|e| are exact long doubles; the
 *    long double result is rounded once, and rounding it again to double
 *    gives the correctly rounded value unless it lies exactly on a midpoint
 *    between two doubles (low 11 of its 64 significand bits == 0x400): any
 *    midpoint strictly between the exact value and the long double result
 *    would itself be a closer long double.  Midpoints go to strtod. */
static inline int fast_double(const char **pp, double *out)
{
#if FLT_EVAL_METHOD == 0 /* excess precision (x87) would round twice */
    const char *p = *pp;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    } else if (*p == '+') {
        p++;
    }
    const char *start = p;
    uint64_t m = 0;
    while (*p == '0') p++; /* leading zeros are not significant */
    const char *ds = p;
    while (IS_DIGIT(*p)) {
        m = m * 10 + (uint64_t)(*p - '0');
        p++;
    }
    int64_t nd = p - ds; /* significant digits so far */
    int any = p != start;
    int64_t e10 = 0;
    if (*p == '.') {
        p++;
        const char *fs = p;
        if (nd == 0)
            while (*p == '0') p++;
        const char *fd = p;
        while (IS_DIGIT(*p)) {
            m = m * 10 + (uint64_t)(*p - '0');
            p++;
        }
        nd += p - fd;
        e10 -= p - fs;
        any |= p != fs;
    }
    if (!any) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '-') {
            eneg = 1;
            p++;
        } else if (*p == '+') {
            p++;
        }
        if (!IS_DIGIT(*p)) return 0;
        int64_t x = 0;
        while (IS_DIGIT(*p)) {
            if (x < 100000) x = x * 10 + (*p - '0');
            p++;
        }
        /* digits dropped past the cap: the fraction's leading zeros may still bring the value
           into range (0.000...3e1000000), so strtod decides */
        if (x >= 100000) return 0;
        e10 += eneg ? -x : x;
    }
    if (!IS_TERM(*p)) return 0;
    if (nd > 19) return 0; /* m may have overflowed */
    double d;
    if (m == 0) {
        d = 0.0;
    } else if (m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        d = (double)m;
        if (e10 < 0) d /= pow10_exact[-e10];
        else d *= pow10_exact[e10];
    }
#if MM_X87_EXT
    else if (e10 >= -27 && e10 <= 27) {
        long double r = (long double)m;
        if (e10 < 0) r /= pow10_ld[-e10];
        else r *= pow10_ld[e10];
        uint64_t sig;
        memcpy(&sig, &r, sizeof sig);
        if ((sig & 0x7FF) == 0x400) return 0;
        d = (double)r;
    }
#endif
    else {
        return 0;
    }
    *out = neg ? -d : d;
    *pp = p;
    return 1;
#else
    (void)pp;
    (void)out;
    return 0;
#endif
}

/* strtod on the token at *pp; the token must be consumed entirely.  Runs in
 * the C locale (see sps_mm_read_buffer), and the token is parsed in place:
 * strtod stops at the blank/newline/NUL that ends it. */
static sps_status slow_double(mm_ctx *c, const char **pp, double *out, const char *what)
{
    const char *tok = *pp;
    const char *te = tok;
    while (!IS_TERM(*te)) te++;
    char *e = NULL;
    errno = 0;
    double v = strtod(tok, &e);
    if (e != te || te == tok) return perr(c, c->line, "cannot parse %s '%s'", what, tok_show(tok).s);
    if (MM_UNLIKELY(!isfinite(v))) {
        if (errno == ERANGE)
            return perr(c, c->line, "%s '%s' is out of the double range", what, tok_show(tok).s);
        if (!c->allow_nonfinite)
            return perr(c, c->line, "non-finite value '%s'%s", tok_show(tok).s,
                        c->opt && c->opt->vector ? " (a vector must be finite)"
                                                 : " (allow it with the allow-nonfinite option)");
    }
    *out = v;
    *pp = te;
    return SPS_OK;
}

static inline sps_status parse_double(mm_ctx *c, const char **pp, double *out, const char *what)
{
    if (MM_LIKELY(fast_double(pp, out))) return SPS_OK;
    return slow_double(c, pp, out, what);
}

/* 1-based index token -> 0-based, checked against 1..lim.  Plain digits only. */
static inline int scan_index(const char **pp, int32_t lim, int32_t *out)
{
    const char *p = *pp;
    const char *s = p;
    uint64_t x = 0;
    while (IS_DIGIT(*p)) {
        if (x <= (uint64_t)INT64_MAX / 100) x = x * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p == s || !IS_TERM(*p) || x == 0 || x > (uint64_t)lim) return 0;
    *out = (int32_t)(x - 1);
    *pp = p;
    return 1;
}

/* Error message for an index token that scan_index refused. */
static sps_status index_error(mm_ctx *c, const char *p, const char *what, int32_t lim)
{
    const char *q = p;
    if (*q == '-') q++;
    const char *ds = q;
    while (IS_DIGIT(*q)) q++;
    if (q > ds && IS_TERM(*q))
        return perr(c, c->line, "%s index %s out of range 1..%ld", what, tok_show(p).s, (long)lim);
    return perr(c, c->line, "cannot parse %s index '%s'", what, tok_show(p).s);
}

/* Integer token of the size line.  Returns 0 ok, 1 not an integer, 2 overflow. */
static int scan_i64(const char **pp, int64_t *out)
{
    const char *p = *pp;
    int neg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    const char *s = p;
    uint64_t x = 0;
    int ovf = 0;
    while (IS_DIGIT(*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (x > ((uint64_t)INT64_MAX - d) / 10) ovf = 1;
        else x = x * 10 + d;
        p++;
    }
    if (p == s || !IS_TERM(*p)) return 1;
    *pp = p;
    if (ovf) return 2;
    *out = neg ? -(int64_t)x : (int64_t)x;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Banner and size line                                                       */

static int tok_eq_ci(const char *t, size_t n, const char *word)
{
    size_t k = strlen(word);
    if (n != k) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)t[i], b = (unsigned char)word[i];
        if (a >= 'A' && a <= 'Z') a = (unsigned char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = (unsigned char)(b - 'A' + 'a');
        if (a != b) return 0;
    }
    return 1;
}

static int contains_ci(const char *t, size_t n, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= n; i++)
        if (tok_eq_ci(t + i, k, word)) return 1;
    return 0;
}

/* Next blank-separated token on the current line; 0 at end of line. */
static int next_tok(const char **pp, const char **tok, size_t *len)
{
    const char *p = *pp;
    while (IS_BLANK(*p)) p++;
    if (*p == '\n' || *p == '\0') {
        *pp = p;
        return 0;
    }
    *tok = p;
    while (!IS_TERM(*p)) p++;
    *len = (size_t)(p - *tok);
    *pp = p;
    return 1;
}

static const char *field_name(sps_mm_field f)
{
    static const char *n[] = {"real", "integer", "pattern", "complex", "quaternion"};
    return n[f];
}
static const char *sym_name(sps_mm_symmetry s)
{
    static const char *n[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
    return n[s];
}

static sps_status parse_banner(mm_ctx *c, const char **pp, sps_mm_data *d)
{
    const char *p = *pp;
    if (c->end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3; /* UTF-8 BOM */
    for (;;) { /* leading blank lines, past the window's end on a stream (a line start there) */
        while (IS_BLANK(*p)) p++;
        if (*p == '\n') {
            p++;
            c->line++;
        } else if (p == c->end && c->src && !c->eof) {
            p = refill(c, p);
        } else {
            break;
        }
    }
    if (p == c->end) return perr(c, 1, "empty file (no %%%%MatrixMarket banner)");

    const char *t = p;
    size_t n = 0;
    next_tok(&p, &t, &n); /* cannot fail: p is at a non-blank byte */
    if (!tok_eq_ci(t, n, "%%MatrixMarket")) {
        if ((n >= 2 && t[0] == '%' && t[1] == '%') || contains_ci(t, n, "matrixmarket") ||
            contains_ci(t, n, "market"))
            return perr(c, c->line, "misspelled banner '%s' (expected %%%%MatrixMarket)", tok_show(t).s);
        return perr(c, c->line, "missing %%%%MatrixMarket banner (first line starts with '%s')",
                    tok_show(t).s);
    }
    static const char *const what[4] = {"object", "format", "field", "symmetry"};
    const char *tk[4];
    size_t tl[4];
    for (int i = 0; i < 4; i++)
        if (!next_tok(&p, &tk[i], &tl[i]))
            return perr(c, c->line, "incomplete banner: missing %s (expected '%%%%MatrixMarket matrix "
                                    "coordinate|array real|integer|pattern|complex|quaternion "
                                    "general|symmetric|skew-symmetric|hermitian')",
                        what[i]);
    if (!tok_eq_ci(tk[0], tl[0], "matrix"))
        return perr(c, c->line, "unsupported object '%s' (only 'matrix')", tok_show(tk[0]).s);

    if (tok_eq_ci(tk[1], tl[1], "coordinate")) d->is_array = 0;
    else if (tok_eq_ci(tk[1], tl[1], "array")) d->is_array = 1;
    else return perr(c, c->line, "unsupported format '%s' (coordinate or array)", tok_show(tk[1]).s);

    if (tok_eq_ci(tk[2], tl[2], "real")) d->field = SPS_MM_REAL;
    else if (tok_eq_ci(tk[2], tl[2], "integer")) d->field = SPS_MM_INTEGER;
    else if (tok_eq_ci(tk[2], tl[2], "pattern")) d->field = SPS_MM_PATTERN;
    else if (tok_eq_ci(tk[2], tl[2], "complex")) d->field = SPS_MM_COMPLEX;
    else if (tok_eq_ci(tk[2], tl[2], "quaternion")) d->field = SPS_MM_QUATERNION;
    else
        return perr(c, c->line, "unsupported field '%s' (real, integer, pattern, complex or quaternion)",
                    tok_show(tk[2]).s);

    if (tok_eq_ci(tk[3], tl[3], "general")) d->symmetry = SPS_MM_GENERAL;
    else if (tok_eq_ci(tk[3], tl[3], "symmetric")) d->symmetry = SPS_MM_SYMMETRIC;
    else if (tok_eq_ci(tk[3], tl[3], "skew-symmetric")) d->symmetry = SPS_MM_SKEW;
    else if (tok_eq_ci(tk[3], tl[3], "hermitian")) d->symmetry = SPS_MM_HERMITIAN;
    else
        return perr(c, c->line, "unsupported symmetry '%s' (general, symmetric, skew-symmetric or hermitian)",
                    tok_show(tk[3]).s);

    if (next_tok(&p, &t, &n)) return perr(c, c->line, "unexpected '%s' at the end of the banner", tok_show(t).s);

    if (d->is_array && d->field == SPS_MM_PATTERN)
        return perr(c, c->line, "unsupported combination: field 'pattern' with format 'array'");
    if (d->symmetry == SPS_MM_HERMITIAN && d->field != SPS_MM_COMPLEX && d->field != SPS_MM_QUATERNION)
        return perr(c, c->line,
                    "unsupported combination: symmetry 'hermitian' needs field 'complex' or 'quaternion', not '%s'",
                    field_name(d->field));
    if (d->symmetry == SPS_MM_SKEW && d->field == SPS_MM_PATTERN)
        return perr(c, c->line, "unsupported combination: symmetry 'skew-symmetric' with field 'pattern'");
    if (d->field == SPS_MM_QUATERNION && d->symmetry != SPS_MM_GENERAL && d->symmetry != SPS_MM_HERMITIAN)
        return perr(c, c->line,
                    "unsupported combination: symmetry '%s' with field 'quaternion' (the quaternion extension "
                    "defines general and hermitian only)",
                    sym_name(d->symmetry));
    if (d->field == SPS_MM_QUATERNION && c->opt && c->opt->block > 1)
        return arg_err(c, c->line, "the file holds quaternions; reading as %dx%d blocks takes a scalar file",
                       c->opt->block, c->opt->block);
    if (d->field == SPS_MM_QUATERNION && !c->allow_quaternion)
        return perr(c, c->line,
                    "quaternion Matrix Market files need a quaternion-aware reader (not supported by this "
                    "reader call)");

    if (*p == '\n') {
        p++;
        c->line++;
    }
    *pp = p;
    return SPS_OK;
}

static sps_status parse_size(mm_ctx *c, const char **pp, sps_mm_data *d, int64_t *nnz_decl)
{
    const char *p = skip_noise(c, *pp);
    if (p == c->end) return perr(c, eof_line(c), "missing size line");
    const int ntok = d->is_array ? 2 : 3;
    const char *shape = d->is_array ? "'rows cols'" : "'rows cols entries'";
    int64_t v[3] = {0, 0, 0};
    for (int i = 0; i < ntok; i++) {
        while (IS_BLANK(*p)) p++;
        if (*p == '\n' || *p == '\0') return perr(c, c->line, "bad size line: expected %s", shape);
        const char *t = p;
        int r = scan_i64(&p, &v[i]);
        if (r == 1) return perr(c, c->line, "bad size line: '%s' is not an integer", tok_show(t).s);
        if (r == 2 && i < 2) return perr(c, c->line, "size %s exceeds 32-bit index range", tok_show(t).s);
        if (r == 2) return perr(c, c->line, "entry count %s is too large", tok_show(t).s);
        if (v[i] < 0)
            return perr(c, c->line, "negative %s %lld in size line", i < 2 ? "size" : "entry count",
                        (long long)v[i]);
        if (i < 2 && v[i] > INT32_MAX)
            return perr(c, c->line, "size %lld exceeds 32-bit index range", (long long)v[i]);
    }
    const char *t = p;
    size_t n = 0;
    if (next_tok(&p, &t, &n))
        return perr(c, c->line, "bad size line: unexpected '%s' after %s", tok_show(t).s, shape);
    d->rows = (int32_t)v[0];
    d->cols = (int32_t)v[1];
    if (d->symmetry != SPS_MM_GENERAL && d->rows != d->cols)
        return perr(c, c->line, "%s matrix must be square, size line says %ld x %ld", sym_name(d->symmetry),
                    (long)d->rows, (long)d->cols);
    if (d->is_array) {
        int64_t r = d->rows, k = d->cols;
        if (d->symmetry == SPS_MM_GENERAL) *nnz_decl = r * k; /* < 2^62: cannot overflow */
        else if (d->symmetry == SPS_MM_SKEW) *nnz_decl = r * (r - 1) / 2;
        else *nnz_decl = r * (r + 1) / 2;
    } else {
        /* halved so that the symmetric expansion (at most 2x) fits int64 */
        if (v[2] > INT64_MAX / 2) return perr(c, c->line, "entry count %lld is too large", (long long)v[2]);
        *nnz_decl = v[2];
    }
    /* what the caller can refuse from the size line alone, before allocating */
    const sps_mm_options *o = c->opt;
    if (o && o->require_square && d->rows != d->cols)
        return perr(c, c->line, "the matrix is %ld x %ld: a linear system needs a square matrix", (long)d->rows,
                    (long)d->cols);
    /* blocks group scalars: known wrong before a large file's entries are read */
    if (o && o->block > 1 && (d->rows % o->block || d->cols % o->block))
        return arg_err(c, c->line, "the matrix is %ld x %ld, which does not divide into %dx%d blocks (%s %ld is not a "
                    "multiple of %d)", (long)d->rows, (long)d->cols, o->block, o->block,
                    d->rows % o->block ? "rows" : "columns", (long)(d->rows % o->block ? d->rows : d->cols), o->block);
    /* a right-hand side or a start vector: one row or one column, of the system's length.  Both
       are refused here, before the entries: a dense array of another shape would otherwise be read
       whole (gigabytes) before the vector reader saw its shape (SPS_ERR_ARG, as sps_vector_read_mtx
       has it: a well-formed file its caller cannot take) */
    if (o && o->vector && d->rows != 1 && d->cols != 1)
        return arg_err(c, c->line, "a vector must be n x 1 or 1 x n, the size line says %ld x %ld", (long)d->rows,
                       (long)d->cols);
    if (o && o->expect_len > 0 && (d->rows == 1 || d->cols == 1)) {
        const int q = d->field == SPS_MM_QUATERNION ? 4 : 1;
        const int64_t len = (int64_t)(d->rows == 1 ? d->cols : d->rows) * q;
        if (len != o->expect_len && q > 1)
            return perr(c, c->line, "a vector of %lld quaternions (%lld scalars) for a system of %lld rows of scalars",
                        (long long)len / 4, (long long)len, (long long)o->expect_len);
        if (len != o->expect_len)
            return perr(c, c->line, "a vector of %lld entries for a system of %lld rows", (long long)len,
                        (long long)o->expect_len);
    }
    /* a quaternion matrix acts as its 4n x 4m real expansion: that must index in 32 bits too */
    if (o && o->max_entries > 0 && d->field == SPS_MM_QUATERNION &&
        ((int64_t)d->rows * 4 > INT32_MAX || (int64_t)d->cols * 4 > INT32_MAX))
        return perr(c, c->line, "a %ld x %ld quaternion matrix acts as a %lld x %lld real one: past the 32-bit index "
                    "range", (long)d->rows, (long)d->cols, 4LL * d->rows, 4LL * d->cols);
    const int64_t nexp = d->symmetry == SPS_MM_GENERAL ? *nnz_decl : 2 * *nnz_decl; /* at most, mirrored */
    if (o && o->max_entries > 0 && nexp > o->max_entries)
        return perr(c, c->line, "%lld entries%s exceed the %lld a matrix can hold (32-bit row offsets)",
                    (long long)*nnz_decl, d->symmetry == SPS_MM_GENERAL ? "" : " (up to twice that, mirrored)",
                    (long long)o->max_entries);
    /* the triplets, the row offsets of the CSR built from them and its counters, sized by
     * the larger dimension (the fuzzer found 60-byte files asking for 11 GB through each:
     * 1442088707 x 3 and 3 x 999999999 matrices of one entry) */
    const int64_t per = 2 * (int64_t)sizeof(int32_t) + (int64_t)sizeof(double) * sps_mm_field_values(d->field);
    const double big = d->rows > d->cols ? (double)d->rows : (double)d->cols;
    const double need = (double)nexp * (double)per + ((double)d->rows + 1) * (double)sizeof(int64_t) +
                        (big + 1) * (double)sizeof(int64_t);
    if (o && o->max_bytes > 0 && need > (double)o->max_bytes)
        return perr(c, c->line, "reading the %ld x %ld matrix of %lld declared entries takes about %.3g GB, above the "
                    "limit of %.3g GB (--max-memory)", (long)d->rows, (long)d->cols, (long long)*nnz_decl,
                    need * 1e-9, (double)o->max_bytes * 1e-9);
    if (*p == '\n') {
        p++;
        c->line++;
    }
    *pp = p;
    return SPS_OK;
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                    */

typedef struct {
    int32_t *row, *col;
    double *val;
    int64_t cap; /* entries allocated */
    int nv;      /* doubles per entry: sps_mm_field_values(field) */
} mm_arrays;

static sps_status arrays_resize(mm_arrays *a, int64_t cap, char *err, size_t errlen)
{
    size_t b;
    void *r = realloc_n(a->row, (size_t)cap, sizeof(int32_t), &b);
    if (!r) return alloc_fail(err, errlen, b);
    a->row = r;
    void *k = realloc_n(a->col, (size_t)cap, sizeof(int32_t), &b);
    if (!k) return alloc_fail(err, errlen, b);
    a->col = k;
    void *v = realloc_n(a->val, (size_t)cap, sizeof(double) * (size_t)a->nv, &b);
    if (!v) return alloc_fail(err, errlen, b);
    a->val = v;
    a->cap = cap;
    return SPS_OK;
}

static void arrays_free(mm_arrays *a)
{
    free(a->row);
    free(a->col);
    free(a->val);
    a->row = a->col = NULL;
    a->val = NULL;
}

/* After an entry's last token: only blanks may follow before the newline. */
static inline sps_status end_of_entry(mm_ctx *c, const char **pp)
{
    const char *p = *pp;
    while (IS_BLANK(*p)) p++;
    if (MM_LIKELY(*p == '\n')) {
        *pp = p + 1;
        c->line++;
        return SPS_OK;
    }
    if (*p == '\0') {
        *pp = p;
        return SPS_OK;
    }
    return perr(c, c->line, "trailing garbage '%s' after the entry", tok_show(p).s);
}

/* Skip the blanks between two tokens; fails if the line ends first. */
static inline int to_token(const char **pp)
{
    const char *p = *pp;
    if (MM_UNLIKELY(!IS_BLANK(*p))) return 0;
    do p++;
    while (IS_BLANK(*p));
    *pp = p;
    return !(*p == '\n' || *p == '\0');
}

/* Names of the numbers after the first of a complex or quaternion value. */
static const char *part_name(const sps_mm_data *d, int p)
{
    static const char *const q[4] = {"value", "i part", "j part", "k part"};
    return d->field == SPS_MM_QUATERNION ? q[p] : "imaginary part";
}

/* Reads the nv value(s) of one entry at *pp (positioned at the first token's
 * separator for coordinate, or at the token for array when first != 0). */
static inline sps_status read_values(mm_ctx *c, const char **pp, const sps_mm_data *d, int nv, double *v,
                                     int first)
{
    const char *p = *pp;
    sps_status st;
    if (!first && !to_token(&p))
        return perr(c, c->line, "missing value after the indices (field '%s')", field_name(d->field));
    const char *t0 = p;
    if ((st = parse_double(c, &p, &v[0], "value")) != SPS_OK) return st;
    for (int k = 1; k < nv; k++) {
        if (!to_token(&p))
            return perr(c, c->line, "missing %s of a %s value", part_name(d, k), field_name(d->field));
        if ((st = parse_double(c, &p, &v[k], part_name(d, k))) != SPS_OK) return st;
    }
    if (MM_UNLIKELY(d->field == SPS_MM_INTEGER) && v[0] != trunc(v[0]))
        return perr(c, c->line, "non-integer value '%s' in an integer matrix", tok_show(t0).s);
    *pp = p;
    return SPS_OK;
}

/* A diagonal entry (i,i) of symmetric storage with value v: none in a
 * skew-symmetric matrix; a hermitian one is real (complex: zero imaginary part,
 * quaternion: zero vector part). */
static sps_status check_diagonal(mm_ctx *c, const sps_mm_data *d, int32_t i, const double *v)
{
    if (d->symmetry == SPS_MM_SKEW)
        return perr(c, c->line, "diagonal entry (%ld,%ld) in a skew-symmetric matrix", (long)i + 1, (long)i + 1);
    if (d->symmetry == SPS_MM_HERMITIAN && d->field == SPS_MM_COMPLEX && v[1] != 0)
        return perr(c, c->line,
                    "diagonal entry (%ld,%ld) of a hermitian matrix has a nonzero imaginary part (%.17g); a "
                    "hermitian diagonal must be real",
                    (long)i + 1, (long)i + 1, v[1]);
    if (d->symmetry == SPS_MM_HERMITIAN && d->field == SPS_MM_QUATERNION && (v[1] != 0 || v[2] != 0 || v[3] != 0))
        return perr(c, c->line,
                    "diagonal entry (%ld,%ld) of a hermitian quaternion matrix has a nonzero vector part "
                    "(b c d = %.17g %.17g %.17g); a hermitian diagonal must be real",
                    (long)i + 1, (long)i + 1, v[1], v[2], v[3]);
    return SPS_OK;
}

/* Move to entry k (of nnz_decl) past blank and comment lines, with room for it in
 * the arrays; a file that ends first is "expected N entries, file ends after k". */
static sps_status begin_entry(mm_ctx *c, const char **p, mm_arrays *a, int64_t k, int64_t nnz_decl)
{
    *p = skip_noise(c, *p);
    if (MM_UNLIKELY(*p == c->end))
        return perr(c, eof_line(c), "expected %lld entries, file ends after %lld", (long long)nnz_decl,
                    (long long)k);
    if (MM_UNLIKELY(k == a->cap)) /* doubling, never past the declared count */
        return arrays_resize(a, a->cap < (nnz_decl - 16) / 2 ? a->cap * 2 + 16 : nnz_decl, c->err, c->errlen);
    return SPS_OK;
}

static sps_status parse_coordinate(mm_ctx *c, const char **pp, sps_mm_data *d, int64_t nnz_decl, mm_arrays *a,
                                   int64_t *offdiag)
{
    const char *p = *pp;
    const int sym = d->symmetry != SPS_MM_GENERAL;
    const int has_val = d->field != SPS_MM_PATTERN;
    const int nv = a->nv;
    int tri = -1;       /* for symmetric storage: 0 lower, 1 upper, -1 none yet */
    int64_t tri_line = 0;
    int64_t off = 0;
    sps_status st;
    int64_t k = 0;
    while (k < nnz_decl) {
        if ((st = begin_entry(c, &p, a, k, nnz_decl)) != SPS_OK) return st;
        int32_t i, j;
        if (MM_UNLIKELY(!scan_index(&p, d->rows, &i))) return index_error(c, p, "row", d->rows);
        if (MM_UNLIKELY(!to_token(&p))) return perr(c, c->line, "missing column index");
        if (MM_UNLIKELY(!scan_index(&p, d->cols, &j))) return index_error(c, p, "column", d->cols);
        double *v = a->val + k * nv;
        if (has_val) {
            if ((st = read_values(c, &p, d, nv, v, 0)) != SPS_OK) return st;
        } else {
            v[0] = 1.0;
        }
        if (sym && i != j) {
            int up = i < j;
            if (MM_UNLIKELY(tri != up)) {
                if (tri >= 0)
                    return perr(c, c->line,
                                "entry (%ld,%ld) is in the %s triangle but the %s entries so far are in the "
                                "%s triangle (first at line %lld); store one triangle only",
                                (long)i + 1, (long)j + 1, up ? "upper" : "lower", sym_name(d->symmetry),
                                up ? "lower" : "upper", (long long)tri_line);
                tri = up;
                tri_line = c->line;
            }
            off++;
        } else if (MM_UNLIKELY(sym) && (st = check_diagonal(c, d, i, v)) != SPS_OK) {
            return st;
        }
        a->row[k] = i;
        a->col[k] = j;
        if ((st = end_of_entry(c, &p)) != SPS_OK) return st;
        k++;
    }
    *offdiag = off;
    *pp = p;
    return SPS_OK;
}

static sps_status parse_array(mm_ctx *c, const char **pp, sps_mm_data *d, int64_t nnz_decl, mm_arrays *a,
                              int64_t *offdiag)
{
    const char *p = *pp;
    const int nv = a->nv;
    const int32_t n = d->rows;
    /* column-major walk over the stored part: all rows (general), the lower
     * triangle with diagonal, or the strict lower triangle (skew) */
    const int general = d->symmetry == SPS_MM_GENERAL;
    const int32_t skip = d->symmetry == SPS_MM_SKEW ? 1 : 0;
    int32_t i = skip, j = 0;
    int64_t off = 0;
    sps_status st;
    int64_t k = 0;
    while (k < nnz_decl) {
        if ((st = begin_entry(c, &p, a, k, nnz_decl)) != SPS_OK) return st;
        double *v = a->val + k * nv;
        if ((st = read_values(c, &p, d, nv, v, 1)) != SPS_OK) return st;
        if (i == j && !general && (st = check_diagonal(c, d, i, v)) != SPS_OK) return st;
        a->row[k] = i;
        a->col[k] = j;
        off += i != j;
        if ((st = end_of_entry(c, &p)) != SPS_OK) return st;
        k++;
        if (++i == n) {
            j++;
            i = general ? 0 : j + skip;
        }
    }
    *offdiag = d->symmetry == SPS_MM_GENERAL ? 0 : off;
    *pp = p;
    return SPS_OK;
}

/* Append the mirror of every off-diagonal entry (symmetric storage): the
 * first value times s, the others (imaginary part, quaternion vector part)
 * times si, so hermitian conjugates a complex or quaternion value alike. */
static void mirror(const sps_mm_data *d, mm_arrays *a, int64_t nfile)
{
    const int nv = a->nv;
    const double s = d->symmetry == SPS_MM_SKEW ? -1.0 : 1.0;
    const double si = d->symmetry == SPS_MM_HERMITIAN ? -s : s; /* conjugate */
    int64_t m = nfile;
    for (int64_t k = 0; k < nfile; k++) {
        if (a->row[k] == a->col[k]) continue;
        a->row[m] = a->col[k];
        a->col[m] = a->row[k];
        a->val[m * nv] = s * a->val[k * nv];
        for (int p = 1; p < nv; p++) a->val[m * nv + p] = si * a->val[k * nv + p];
        m++;
    }
}

/* Parses the NUL-terminated text buf[0..len). */
static sps_status parse_text(mm_ctx *c, sps_mm_data *out)
{
    sps_mm_data d;
    memset(&d, 0, sizeof d);
    mm_arrays a = {NULL, NULL, NULL, 0, 1};
    sps_status st;

    /* Embedded NUL bytes (binary or UTF-16 files) would end the scanners early
     * (a stream's are caught as it is read). */
    const char *z = c->src ? NULL : memchr(c->buf, '\0', (size_t)(c->end - c->buf));
    if (z) {
        int64_t line = 1;
        for (const char *q = c->buf; q < z; q++) line += *q == '\n';
        return perr(c, line, "unexpected NUL byte (binary file?)");
    }

    const char *p = c->buf;
    if ((st = parse_banner(c, &p, &d)) != SPS_OK) return st;
    int64_t nnz_decl = 0;
    if ((st = parse_size(c, &p, &d, &nnz_decl)) != SPS_OK) return st;

    /* Preallocate no more entries than the remaining text can hold: each entry
     * needs at least 2*tokens bytes (token + separator), so a forged huge
     * count in a small file cannot trigger a huge allocation.  A stream of
     * unknown length (gzip, a pipe) starts from what its window holds and grows
     * with what it delivers (begin_entry). */
    a.nv = sps_mm_field_values(d.field);
    int tokens = (d.is_array ? 0 : 2) + (d.field == SPS_MM_PATTERN ? 0 : a.nv);
    int64_t left = (int64_t)(c->end - p);
    if (c->src && c->size_hint >= 0) left = c->size_hint - c->consumed - (int64_t)(p - c->buf);
    if (left < 0) left = 0; /* a file that grew since its fstat: the entries then grow as they come */
    int64_t bound = (left + 1) / (2 * tokens) + 1;
    int64_t cap = nnz_decl < bound ? nnz_decl : bound;
    if ((st = arrays_resize(&a, cap, c->err, c->errlen)) != SPS_OK) goto fail;

    int64_t off = 0;
    st = d.is_array ? parse_array(c, &p, &d, nnz_decl, &a, &off) : parse_coordinate(c, &p, &d, nnz_decl, &a, &off);
    if (st != SPS_OK) goto fail;

    p = skip_noise(c, p);
    if (c->st != SPS_OK) { /* the stream failed after the entries (a NUL byte, a corrupt gzip tail) */
        st = c->st;
        goto fail;
    }
    if (p != c->end) {
        st = perr(c, c->line, "more entries than the %lld declared", (long long)nnz_decl);
        goto fail;
    }

    d.nnz_file = nnz_decl;
    d.nnz = nnz_decl + off;
    if (d.nnz != a.cap && (st = arrays_resize(&a, d.nnz, c->err, c->errlen)) != SPS_OK) goto fail;
    if (off) mirror(&d, &a, nnz_decl);
    d.row = a.row;
    d.col = a.col;
    d.val = a.val;
    *out = d;
    return SPS_OK;
fail:
    arrays_free(&a);
    return st;
}

/* Parses c (a buffer, or a stream with its first window read) in the "C" numeric
 * locale: strtod honours LC_NUMERIC, and a caller's setlocale() (decimal comma)
 * must not change how files are read. */
static sps_status read_ctx(mm_ctx *c, sps_mm_data *out)
{
    locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
    sps_status st = parse_text(c, out);
    if (st != SPS_OK && c->st != SPS_OK) st = c->st; /* the stream's own failure is the cause */
    /* a file of CR-only line endings (old Mac) reads as one line: say so, not only where it broke */
    const int cr_only = c->src ? (!c->saw_nl && c->saw_cr)
                               : (!memchr(c->buf, '\n', (size_t)(c->end - c->buf)) &&
                                  memchr(c->buf, '\r', (size_t)(c->end - c->buf)));
    if (st == SPS_ERR_PARSE && c->err && c->errlen && cr_only) {
        const size_t l = strlen(c->err);
        snprintf(c->err + l, c->errlen - l,
                 " (the file has CR line endings only; convert them to LF, e.g. tr '\\r' '\\n')");
    }
    if (cloc) {
        uselocale(old);
        freelocale(cloc);
    }
    return st;
}

/* A context for the source named name, read with opt (NULL: defaults). */
static mm_ctx ctx_new(const char *name, const sps_mm_options *opt, char *err, size_t errlen)
{
    mm_ctx c = {.name = name,
                .line = 1,
                .allow_nonfinite = opt ? opt->allow_nonfinite : 0,
                .allow_quaternion = opt ? opt->allow_quaternion : 0,
                .opt = opt,
                .err = err,
                .errlen = errlen,
                .size_hint = -1};
    return c;
}

/* text[len] must be '\0'. */
static sps_status read_text(const char *text, size_t len, const char *name, const sps_mm_options *opt,
                            sps_mm_data *out, char *err, size_t errlen)
{
    mm_ctx c = ctx_new(name ? name : "<buffer>", opt, err, errlen);
    c.buf = text;
    c.end = text + len;
    return read_ctx(&c, out);
}

sps_status sps_mm_read_buffer(const char *buf, size_t len, const char *name, const sps_mm_options *opt,
                              sps_mm_data *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (out) memset(out, 0, sizeof *out);
    if (!out || (!buf && len)) {
        set_err(err, errlen, "sps_mm_read_buffer: NULL %s", out ? "buffer" : "output");
        return SPS_ERR_ARG;
    }
    if (len == SIZE_MAX) return alloc_fail(err, errlen, SIZE_MAX);
    /* Private NUL-terminated copy: the scanners rely on the sentinel. */
    size_t bytes;
    char *text = alloc_n(len + 1, 1, &bytes);
    if (!text) return alloc_fail(err, errlen, bytes);
    if (len) memcpy(text, buf, len);
    text[len] = '\0';
    sps_status st = read_text(text, len, name, opt, out, err, errlen);
    free(text);
    return st;
}

/* ------------------------------------------------------------------------ */
/* File reading                                                               */

/* Streams the file (gunzipped when it is gzip: zlib reads a plain file as is)
 * through a window of lines (mm_ctx).  One open descriptor: a pipe or a FIFO is
 * read once, from its start. */
sps_status sps_mm_read_file(const char *path, const sps_mm_options *opt, sps_mm_data *out, char *err,
                            size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (out) memset(out, 0, sizeof *out);
    if (!path || !out) {
        set_err(err, errlen, "sps_mm_read_file: NULL %s", path ? "output" : "path");
        return SPS_ERR_ARG;
    }
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        set_err(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return SPS_ERR_IO;
    }
    struct stat sb;
    const int stated = fstat(fd, &sb) == 0, regular = stated && S_ISREG(sb.st_mode);
    if (stated && S_ISDIR(sb.st_mode)) {
        close(fd);
        set_err(err, errlen, "cannot read '%s': it is a directory", path);
        return SPS_ERR_IO;
    }
    mm_src src;
    memset(&src, 0, sizeof src);
    src.fd = fd;
    mm_ctx c = ctx_new(path, opt, err, errlen);
    c.src = &src;
    c.cap = MM_WINDOW;
    sps_status st = SPS_OK;
    c.win = malloc(c.cap);
    src.in = malloc(MM_RAW);
    if (!c.win || !src.in) {
        set_err(err, errlen, "cannot read '%s': out of memory for its read buffers", path);
        st = SPS_ERR_ALLOC;
    } else if (src_fill(&src) < 0) {
        set_err(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        st = SPS_ERR_IO;
    } else {
        src.gz = src.zs.avail_in >= 2 && src.in[0] == 0x1f && src.in[1] == 0x8b;
        if (src.gz) {
            if (inflateInit2(&src.zs, 16 + MAX_WBITS) != Z_OK) { /* 16: gzip wrapper */
                set_err(err, errlen, "cannot read '%s': out of memory for the gzip reader", path);
                st = SPS_ERR_ALLOC;
            } else {
                src.zinit = 1;
            }
        }
        if (st == SPS_OK) {
            c.buf = c.end = c.win;
            refill(&c, c.win);
            if (regular && !src.gz) c.size_hint = (int64_t)sb.st_size; /* plain text: its size bounds the entries */
            st = read_ctx(&c, out);
        }
        if (st == SPS_OK && src.trailing > 0)
            snprintf(out->warning, sizeof out->warning,
                     "%s: %lld bytes after the gzip data ignored (they start no gzip member)", path,
                     (long long)src.trailing);
        else if (st == SPS_OK && src.trailing < 0)
            snprintf(out->warning, sizeof out->warning,
                     "%s: data after the gzip data ignored (it starts no gzip member)", path);
    }
    if (src.zinit) inflateEnd(&src.zs);
    free(src.in);
    free(c.win);
    close(fd);
    return st;
}

void sps_mm_data_free(sps_mm_data *d)
{
    if (!d) return;
    free(d->row);
    free(d->col);
    free(d->val);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------------------ */
/* Writers                                                                    */


static int write_header(FILE *f, const char *format, const char *field, const char *comment)
{
    if (fprintf(f, "%%%%MatrixMarket matrix %s %s general\n", format, field) < 0) return 0;
    if (comment && comment[0]) {
        const char *s = comment;
        for (;;) {
            const char *nl = strchr(s, '\n');
            size_t n = nl ? (size_t)(nl - s) : strlen(s);
            if (n && s[n - 1] == '\r') n--;
            if (fputs(n ? "% " : "%", f) < 0 || fwrite(s, 1, n, f) != n || fputc('\n', f) == EOF) return 0;
            if (!nl || !nl[1]) break;
            s = nl + 1;
        }
    }
    return 1;
}

/* One value with round-trip precision.  In single mode the value is first
 * rounded to float; values beyond the float range (which float data cannot
 * hold) are written exactly instead of as inf. */
static int put_val(FILE *f, double v, int single, const char *lead)
{
    if (single && fabs(v) <= FLT_MAX) return fprintf(f, "%s%.9g", lead, (double)(float)v) > 0;
    return fprintf(f, "%s%.17g", lead, v) > 0;
}

/* What the writers' kind argument names: the field word and the values per entry. */
static const struct {
    const char *field;
    int nv;
} kinds[] = {
    [SPS_MM_KIND_REAL] = {"real", 1},
    [SPS_MM_KIND_COMPLEX] = {"complex", 2},
    [SPS_MM_KIND_QUATERNION] = {"quaternion", 4},
};
static int kind_ok(int kind) { return kind >= 0 && kind < (int)(sizeof kinds / sizeof kinds[0]); }

/* The nv values of one entry, each after lead (the first after lead0). */
static int put_vals(FILE *f, const double *v, int nv, int single, const char *lead0)
{
    int ok = put_val(f, v[0], single, lead0);
    for (int p = 1; ok && p < nv; p++) ok = put_val(f, v[p], single, " ");
    return ok;
}

sps_status sps_mm_write_coo(const char *path, int32_t rows, int32_t cols, int64_t nnz, const int32_t *row0,
                            const int32_t *col0, const double *val, int kind, int single, const char *comment,
                            char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!path || rows < 0 || cols < 0 || nnz < 0 || (nnz > 0 && (!row0 || !col0)) || !kind_ok(kind)) {
        set_err(err, errlen, "sps_mm_write_coo: invalid argument (%s)",
                !path                   ? "NULL path"
                : (rows < 0 || cols < 0) ? "negative size"
                : nnz < 0                ? "negative nnz"
                : !kind_ok(kind)         ? "unknown value kind"
                                         : "NULL index array");
        return SPS_ERR_ARG;
    }
    for (int64_t k = 0; k < nnz; k++)
        if (row0[k] < 0 || row0[k] >= rows || col0[k] < 0 || col0[k] >= cols) {
            set_err(err, errlen, "sps_mm_write_coo: entry %lld (%ld,%ld) out of range for %ld x %ld (0-based)",
                    (long long)k, (long)row0[k], (long)col0[k], (long)rows, (long)cols);
            return SPS_ERR_ARG;
        }
    sps_out_file o;
    sps_status st = sps_out_open(&o, path, 0666, err, errlen);
    if (st != SPS_OK) return st;
    const int nv = kinds[kind].nv;
    int ok = write_header(o.f, "coordinate", val ? kinds[kind].field : "pattern", comment) &&
             fprintf(o.f, "%ld %ld %lld\n", (long)rows, (long)cols, (long long)nnz) > 0;
    for (int64_t k = 0; ok && k < nnz; k++) {
        ok = fprintf(o.f, "%ld %ld", (long)row0[k] + 1, (long)col0[k] + 1) > 0;
        if (ok && val) ok = put_vals(o.f, val + (size_t)k * (size_t)nv, nv, single, " ");
        ok = ok && fputc('\n', o.f) != EOF;
    }
    if (!ok) set_err(err, errlen, "cannot write '%s': %s", o.path, strerror(errno));
    return sps_out_close(&o, ok, err, errlen);
}

sps_status sps_mm_write_vector(const char *path, int32_t n, const double *val, int kind, int single,
                               const char *comment, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!path || n < 0 || (n > 0 && !val) || !kind_ok(kind)) {
        set_err(err, errlen, "sps_mm_write_vector: invalid argument (%s)",
                !path            ? "NULL path"
                : n < 0          ? "negative length"
                : !kind_ok(kind) ? "unknown value kind"
                                 : "NULL values");
        return SPS_ERR_ARG;
    }
    sps_out_file o;
    sps_status st = sps_out_open(&o, path, 0666, err, errlen);
    if (st != SPS_OK) return st;
    const int nv = kinds[kind].nv;
    int ok = write_header(o.f, "array", kinds[kind].field, comment) && fprintf(o.f, "%ld 1\n", (long)n) > 0;
    for (int32_t k = 0; ok && k < n; k++)
        ok = put_vals(o.f, val + (size_t)k * (size_t)nv, nv, single, "") && fputc('\n', o.f) != EOF;
    if (!ok) set_err(err, errlen, "cannot write '%s': %s", o.path, strerror(errno));
    return sps_out_close(&o, ok, err, errlen);
}
