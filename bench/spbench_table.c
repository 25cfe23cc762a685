/* spbench result tables (see spbench_table.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "spbench_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sb_table {
    int ncols, nrows, cap;
    char **head;  /* ncols */
    char *align;  /* ncols */
    char **cells; /* nrows * ncols */
};

static char *dup_str(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

sb_table *sb_table_new(int ncols, const char *const *head, const char *align)
{
    if (ncols < 1) return NULL;
    sb_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ncols = ncols;
    t->head = calloc((size_t)ncols, sizeof *t->head);
    t->align = calloc((size_t)ncols + 1, 1);
    if (!t->head || !t->align) {
        sb_table_free(t);
        return NULL;
    }
    for (int c = 0; c < ncols; c++) {
        t->align[c] = (align && align[c] == 'r') ? 'r' : 'l';
        if (!(t->head[c] = dup_str(head[c]))) {
            sb_table_free(t);
            return NULL;
        }
    }
    return t;
}

void sb_table_free(sb_table *t)
{
    if (!t) return;
    for (int c = 0; t->head && c < t->ncols; c++) free(t->head[c]);
    for (long i = 0; t->cells && i < (long)t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->head);
    free(t->align);
    free(t->cells);
    free(t);
}

int sb_table_add(sb_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        char **c = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *c);
        if (!c) return -1;
        t->cells = c;
        t->cap = cap;
    }
    char **row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
    for (int c = 0; c < t->ncols; c++) {
        if (!(row[c] = dup_str(cells[c]))) {
            while (c-- > 0) free(row[c]);
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

int sb_table_rows(const sb_table *t) { return t ? t->nrows : 0; }

static void csv_cell(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_line(FILE *f, char *const *cells, int n)
{
    for (int c = 0; c < n; c++) {
        if (c) fputc(',', f);
        csv_cell(f, cells[c]);
    }
    fputc('\n', f);
}

void sb_table_csv(const sb_table *t, FILE *f)
{
    csv_line(f, t->head, t->ncols);
    for (int i = 0; i < t->nrows; i++) csv_line(f, t->cells + (size_t)i * (size_t)t->ncols, t->ncols);
}

static void md_line(FILE *f, char *const *cells, int n)
{
    fputc('|', f);
    for (int c = 0; c < n; c++) {
        fputc(' ', f);
        for (const char *s = cells[c]; *s; s++) {
            if (*s == '|') fputc('\\', f);
            fputc(*s == '\n' ? ' ' : *s, f);
        }
        fputs(" |", f);
    }
    fputc('\n', f);
}

void sb_table_markdown(const sb_table *t, FILE *f)
{
    md_line(f, t->head, t->ncols);
    fputc('|', f);
    for (int c = 0; c < t->ncols; c++) fputs(t->align[c] == 'r' ? " ---: |" : " --- |", f);
    fputc('\n', f);
    for (int i = 0; i < t->nrows; i++) md_line(f, t->cells + (size_t)i * (size_t)t->ncols, t->ncols);
}

int sb_write_atomic(const char *path, void (*emit)(FILE *f, const void *arg), const void *arg, char *err,
                    size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    emit(f, arg);
    int bad = ferror(f) || fflush(f) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(saved));
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s -> %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int sb_mkdirs(const char *dir, char *err, size_t errlen)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0) return 0;
    if (n >= sizeof buf) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", dir);
        return -1;
    }
    return 0;
}
