#include "managers/PythonRunner.h"

#include "jail/protocol/CellProtocol.h"

namespace cmcp {

namespace {

// _cmcp_run(payload): the call's nonce and code, as "<nonce>\n<code>".
QString runnerBody()
{
    // Imports are few and late: every module imported here is start-up time of every call.
    return QStringLiteral(R"PY(import sys, os
def _cmcp_run(payload):
    channel = int(os.environ.pop("CMCP_RESULT_FD"))
    os.umask(0o002)
    nonce, _, code = payload.partition(b"\n")
    code = code.decode("utf-8", "surrogateescape")
    sys.stdin = open(os.devnull)
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
    return runnerBody() + QStringLiteral("sys.exit(_cmcp_run(sys.stdin.buffer.read()))\n");
}

QString pythonZygoteSource()
{
    // The cell's interpreter, with the runner above defined (nothing of a call run), hands
    // itself to the zygote library, which returns only in each call's process with its payload.
    return runnerBody()
            + QStringLiteral(R"PY(def _cmcp_serve():
    import ctypes
    serve = getattr(ctypes.PyDLL("/proc/self/fd/%1"), "%2")
    serve.restype = ctypes.c_long
    serve.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    payload = ctypes.c_void_p()
    size = serve(ctypes.byref(payload))
    if size < 0:
        sys.exit(1)
    return ctypes.string_at(payload, size)
sys.exit(_cmcp_run(_cmcp_serve()))
)PY")
                      .arg(cell_protocol::kZygoteLibraryFd)
                      .arg(QLatin1String(cell_protocol::kServeFunction));
}

} // namespace cmcp
