#pragma once

#include <QString>

namespace cmcp {

// The Python source system_run_python starts with `python3 -I -S -u -c`. It reads the call's
// nonce (one line) and then the user's code from stdin, runs the code in one namespace as
// __main__, prints a traceback as Python would (without its own frame), and writes
// "<nonce>\n<json>" on the descriptor named by CMCP_RESULT_FD, where json is
//   {"ran": true, "raised": bool, "exit_status": int|null, "result": any, "repr": bool}
// ("result" only when the code set _, "repr" true when _ was not JSON and result is its repr).
// Its exit status is the code's: sys.exit's, 1 after an exception, else 0.
//
// The nonce keeps output, stray writes and leftovers from posing as a result; it does not
// hide from the code itself, which runs in the same interpreter and decides _ anyway.
QString pythonRunnerSource();
// The same runner as a template's cell runs it (jail/template.h): the interpreter
// starts, defines the runner, and forks each call from there, which takes its nonce and code
// from the call's payload instead of stdin.
QString pythonZygoteSource();

} // namespace cmcp
