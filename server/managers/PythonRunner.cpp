#include "managers/PythonRunner.h"

#include "jail/protocol/CellProtocol.h"

namespace cmcp {

namespace {

// _cmcp_run(payload, channel): runs the call's code, its payload "<nonce>\n<code>", and reports
// on the descriptor `channel`. Standard input must be /dev/null already, CMCP_RESULT_FD gone
// from the environment and the umask 002.
QString runnerBody()
{
    // Imports are few and late: every module imported here is start-up time of every call.
    return QStringLiteral(R"PY(import sys, os
def _cmcp_run(payload, channel):
    nonce, _, code = payload.partition(b"\n")
    code = code.decode("utf-8", "surrogateescape")
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    raised, exit_status = False, None
    try:
        exec(compile(code, "<code>", "exec"), namespace)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            exit_status = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            exit_status = 1
    except BaseException as error:
        raised = True
        import linecache, traceback
        linecache.cache["<code>"] = (len(code), None, code.splitlines(True), "<code>")
        trace = error.__traceback__
        traceback.print_exception(type(error), error, trace.tb_next if trace else None)
    text = '{"ran": true, "raised": %s, "exit_status": %s' % (
        "true" if raised else "false", "null" if exit_status is None else int(exit_status))
    if "_" in namespace:
        import json
        try:
            text += ', "result": %s, "repr": false}' % json.dumps(namespace["_"], allow_nan=False)
        except Exception:
            try:
                shown = repr(namespace["_"])
            except Exception as error:
                shown = "<repr() failed: %s>" % type(error).__name__
            text += ', "result": %s, "repr": true}' % json.dumps(shown)
    else:
        text += "}"
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    frame = nonce + b"\n" + text.encode("utf-8", "surrogateescape")
    try:
        while frame:
            frame = frame[os.write(channel, frame):]
        os.close(channel)
    except OSError:
        pass
    return 1 if raised else (exit_status or 0)
)PY");
}

} // namespace

QString pythonRunnerSource()
{
    return runnerBody() + QStringLiteral(R"PY(def _cmcp_start():
    channel = int(os.environ.pop("CMCP_RESULT_FD"))
    os.umask(0o002)
    payload = sys.stdin.buffer.read()
    sys.stdin = open(os.devnull)
    return payload, channel
sys.exit(_cmcp_run(*_cmcp_start()))
)PY");
}

QString pythonZygoteSource()
{
    // The cell's interpreter, with the runner above defined (nothing of a call run), hands
    // itself to the zygote library, which returns only in each call's process with its payload.
    return runnerBody()
            + QStringLiteral(R"PY(import atexit
def _cmcp_serve():
    import ctypes, gc
    channel = int(os.environ.pop("CMCP_RESULT_FD"))
    os.umask(0o002)
    serve = getattr(ctypes.PyDLL("/proc/self/fd/%1"), "%2")
    serve.restype = ctypes.c_long
    serve.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    payload = ctypes.c_void_p()
    # What every call does around its own code, done once here (a call of `pass`, reported to
    # /dev/null), and every object there is kept out of the collector's way: in a call each
    # page written (a reference count, a cache, an import) is a copy, so the fewer the better.
    _cmcp_run(b"warm-up\npass", os.open(os.devnull, os.O_WRONLY))
    gc.freeze()
    size = serve(ctypes.byref(payload))
    if size < 0:
        sys.exit(1)
    return ctypes.string_at(payload, size), channel
def _cmcp_exit(status):
    # What the interpreter's exit does that the code can see (its threads waited for, its
    # atexit functions, its output flushed), not the rest: every object torn down, in a fork
    # that is about to end, where each page touched is copied first.
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)
_cmcp_exit(_cmcp_run(*_cmcp_serve()))
)PY")
                      .arg(cell_protocol::kZygoteLibraryFd)
                      .arg(QLatin1String(cell_protocol::kServeFunction));
}

} // namespace cmcp
