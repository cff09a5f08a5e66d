/* The zygote library as a bash loadable builtin (template.h): a cell's bash runs
 *
 *   enable -f /proc/self/fd/3 cmcp_zygote && cmcp_zygote
 *
 * `cmcp_zygote` serves the cell's calls and returns only in each call's process, made into the
 * call, with the command's status: it evaluates the command as the eval builtin does, so that a
 * command runs as `eval "$command"` would (its messages say "eval: line N"). A call's process is
 * a fork bash did not make, so what bash computed about its own process at start-up is brought
 * up to date first: $$, $PPID and the seed of $RANDOM (every call would otherwise draw the same
 * numbers). $UID and $EUID need nothing: the cell's bash started as uid 1000, which every call
 * is inside its namespace. Written in C because bash's headers are C. */
#include <config.h>

#include <unistd.h>

#include "builtins.h"
#include "externs.h"
#include "shell.h"
#include "variables.h"
/* After shell.h, whose types it uses. */
#include "common.h"

/* Weak: python3 loads this library too, and has none of bash's symbols. */
#pragma weak dollar_dollar_pid
#pragma weak set_ppid
#pragma weak seedrand
#pragma weak evalstring

/* zygote_cell.cpp */
extern long cmcp_cell_serve(char **payload);

static int cmcp_zygote_builtin(WORD_LIST *list)
{
    char *payload = NULL;
    (void)list;
    if (cmcp_cell_serve(&payload) < 0)
        return EXECUTION_FAILURE;
    dollar_dollar_pid = getpid();
    set_ppid();
    seedrand();
    /* Takes the payload (freed once parsed). */
    return evalstring(payload, "eval", SEVAL_NOHIST);
}

static char *cmcp_zygote_doc[] = {
    "Serve a Container-MCP template's calls (cmcp-jail only).",
    "",
    "Returns in each call's process, with its command's status.",
    (char *)NULL,
};

struct builtin cmcp_zygote_struct = {
    "cmcp_zygote", cmcp_zygote_builtin, BUILTIN_ENABLED, cmcp_zygote_doc, "cmcp_zygote", 0,
};
