/* spbench result tables: rows of preformatted cells, written as CSV or as a
 * Markdown table; files are written to a temporary name and renamed. */
#ifndef SPBENCH_TABLE_H
#define SPBENCH_TABLE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_table sb_table;

/* align: one character per column, 'l' or 'r' (Markdown alignment); NULL = all left.
 * Returns NULL when out of memory. */
sb_table *sb_table_new(int ncols, const char *const *head, const char *align);
void sb_table_free(sb_table *t);
/* Copies ncols cells (NULL is an empty cell).  Returns 0, or -1 when out of memory. */
int sb_table_add(sb_table *t, const char *const *cells);
int sb_table_rows(const sb_table *t);
/* RFC 4180 CSV: header line, then one line per row. */
void sb_table_csv(const sb_table *t, FILE *f);
/* GitHub Markdown table. */
void sb_table_markdown(const sb_table *t, FILE *f);

/* Write path through path.tmp.<pid>: emit(f, arg) writes the content; the file
 * is flushed, closed and renamed over path only when every write succeeded.
 * Returns 0, or -1 with a message in err. */
int sb_write_atomic(const char *path, void (*emit)(FILE *f, const void *arg), const void *arg, char *err,
                    size_t errlen);
/* mkdir -p.  Returns 0, or -1 with a message in err. */
int sb_mkdirs(const char *dir, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
