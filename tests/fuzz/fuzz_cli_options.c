/* libFuzzer harness: spsolve's option parser (apps/spsolve/options.c) on argument
 * vectors cut from arbitrary bytes (NUL-separated, at most 32 arguments), then the
 * format choice it makes for a parsed command line.  The parser reports on stderr
 * and returns a status; it must never crash, leak or exit. */
#include "../../apps/spsolve/options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAXARG = 32 };
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAXARG + 2];
    int argc = 0;
    argv[argc++] = (char *)"spsolve";
    for (size_t i = 0; i < size && argc <= MAXARG; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    argv[argc] = NULL;
    cli_options opt;
    if (cli_parse_options(argc, argv, &opt) == CLI_PARSE_RUN) cli_choose_format(&opt);
    cli_options_free(&opt);
    free(buf);
    return 0;
}
