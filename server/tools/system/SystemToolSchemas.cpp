#include "tools/system/SystemToolSchemas.h"

#include "tools/common/ToolBuilding.h"

#include <QJsonArray>

namespace cmcp::systemschemas {

namespace {

// A call's result: the tool's own, a failure, or a job that goes on in the background.
QJsonObject orFailure(const QJsonObject &finished)
{
    static const QJsonObject started = tools::schema(
            R"({"type":"object","required":["success","job_id","status"],"properties":{
        "success":{"const":true},
        "job_id":{"type":"string","description":"The background job; pass it to job_output, job_status, job_write_stdin, job_kill."},
        "status":{"const":"running"},
        "interactive":{"type":"boolean"},
        "timeout_seconds":{"type":"integer"},
        "note":{"type":"string"}}})");
    QJsonObject schema = tools::orFailure(finished);
    QJsonArray alternatives = schema.value(QLatin1String("anyOf")).toArray();
    alternatives.append(started);
    schema.insert(QLatin1String("anyOf"), alternatives);
    return schema;
}

// The accounting record of the job (JobResult::toJson) and how the call ended.
QJsonObject withAccounting(QJsonObject schema)
{
    static const QJsonObject accounting = tools::schema(R"({
        "exit_code":{"type":"integer","description":"The exit status; 128 + the signal number when a signal ended the job."},
        "signal":{"type":["integer","null"]},
        "timed_out":{"type":"boolean"},
        "cancelled":{"type":"boolean"},
        "oom_killed":{"type":"boolean","description":"The memory limit was reached and the job was killed."},
        "truncated":{"type":"boolean","description":"Output beyond SANDBOX_OUTPUT_CAP_KB was cut out of the middle."},
        "wall_ms":{"type":"integer"},
        "cpu_ms":{"type":["integer","null"]},
        "peak_memory_kb":{"type":["integer","null"]},
        "layers":{"type":"array","items":{"type":"string"},"description":"Isolation layers the jail applied."},
        "insecure":{"type":"boolean"},
        "timeout_seconds":{"type":"integer","description":"The time limit the job ran under."},
        "message":{"type":"string","description":"How the job ended when it did not end on its own (timeout, memory limit, signal, cancellation), and what the sandbox refused it."},
        "stdout_handle":{"type":"string","description":"Set when stdout was cut to fit: read all of it with output_read."},
        "stderr_handle":{"type":"string","description":"Set when stderr was cut to fit: read all of it with output_read."},
        "truncation_note":{"type":"string"},
        "sandbox_refusals":{"type":"array","description":"What the sandbox refused the job while it ran: connections the egress gate refused (layer egress, the rule and the target), syscalls the seccomp filter denied (layer seccomp, the syscall and how many calls) and limits it reached (time, memory, pids, and the workspace quota: layer quota, rule SANDBOX_WORKSPACE_QUOTA_MB, when the job failed with its workspace full).","items":{"type":"object","required":["layer","rule","message"],"properties":{"layer":{"type":"string"},"rule":{"type":"string"},"target":{"type":"string"},"syscall":{"type":"string"},"count":{"type":"integer"},"message":{"type":"string"}}}},
        "sandbox_refusals_left_out":{"type":"integer","description":"Refusals beyond the listed ones."},
        "job_id":{"type":"string","description":"With yield_ms, when the output was cut: read all of it with job_output."},
        "note":{"type":"string"}})");
    QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
    for (auto it = accounting.begin(); it != accounting.end(); ++it)
        properties.insert(it.key(), it.value());
    schema.insert(QLatin1String("properties"), properties);
    return schema;
}

} // namespace

QJsonObject commandInput()
{
    return tools::schema(
            R"({"type":"object","required":["command"],"additionalProperties":false,"properties":{
        "command":{"type":"string","description":"The bash command."},
        "background":{"type":"boolean","description":"Return a job_id at once, for job_output and job_status."},
        "yield_ms":{"type":"integer","minimum":0,"description":"Wait this long, then return a job_id if still running."},
        "interactive":{"type":"boolean","description":"Background, with stdin open for job_write_stdin."},
        "working_dir":{"type":"string","description":"Directory relative to the workspace root."},
        "timeout":{"type":"integer","minimum":1,"description":"Time limit in seconds."}}})");
}

QJsonObject commandOutput()
{
    return orFailure(withAccounting(tools::schema(
            R"({"type":"object","required":["success","stdout","stderr","exit_code"],"properties":{
        "success":{"type":"boolean","description":"The command exited with status 0 within its time limit."},
        "stdout":{"type":"string"},
        "stderr":{"type":"string"}}})")));
}

QJsonObject pythonInput()
{
    return tools::schema(
            R"({"type":"object","required":["code"],"additionalProperties":false,"properties":{
        "code":{"type":"string","description":"Python 3 code, run as __main__; set _ to return a value. With interactive, job_write_stdin then feeds the interpreter."},
        "background":{"type":"boolean","description":"Return a job_id at once, for job_output and job_status."},
        "yield_ms":{"type":"integer","minimum":0,"description":"Wait this long, then return a job_id if still running."},
        "interactive":{"type":"boolean","description":"Background, with stdin open for job_write_stdin."},
        "working_dir":{"type":"string","description":"Directory relative to the workspace root."},
        "timeout":{"type":"integer","minimum":1,"description":"Time limit in seconds."}}})");
}

QJsonObject pythonOutput()
{
    return orFailure(withAccounting(tools::schema(
            R"({"type":"object","required":["success","output","error","result"],"properties":{
        "success":{"type":"boolean","description":"The code ran to its end without an exception (sys.exit(0) counts as success)."},
        "output":{"type":"string","description":"What the code printed on stdout."},
        "error":{"type":"string","description":"What it printed on stderr, tracebacks included."},
        "result":{"description":"The value of _ after the code ran, as JSON; null when _ was not set."},
        "result_repr":{"type":"boolean","description":"_ was not JSON-serialisable: result is its repr()."},
        "result_error":{"type":"string","description":"Why the result could not be read."}}})")));
}

QJsonObject envInput()
{
    return tools::schema(R"({"type":"object","additionalProperties":false,"properties":{
        "var_name":{"type":"string","description":"One variable to return as requested_var."}}})");
}

QJsonObject envOutput()
{
    return tools::orFailure(
            tools::schema(R"({"type":"object","required":["success","variables"],"properties":{
        "success":{"const":true},
        "variables":{"type":"object","additionalProperties":{"type":"string"},"description":"The environment sandboxed commands and code see."},
        "requested_var":{"type":["string","null"],"description":"The value of var_name; null when it is not set there."}}})"));
}

} // namespace cmcp::systemschemas
