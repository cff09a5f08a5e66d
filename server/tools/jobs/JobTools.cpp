#include "tools/jobs/JobTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "jobs/BackgroundJob.h"
#include "jobs/JobRegistry.h"
#include "jobs/JobRunner.h"
#include "mcp/McpServer.h"
#include "jobs/OutputHandleStore.h"
#include "mcp/ToolCall.h"

#include <QJsonArray>

namespace cmcp {

namespace {

constexpr qint64 kDefaultReadBytes = 64 * 1024;
constexpr qint64 kMaxReadBytes = 1024 * 1024;

// The window as text: invalid UTF-8 (a binary output) shows as replacement characters, offsets
// stay in bytes.
QJsonObject windowJson(const OutputWindow &window)
{
    return {{QLatin1String("output"), QString::fromUtf8(window.bytes)},
            {QLatin1String("offset"), double(window.offset)},
            {QLatin1String("next_offset"), double(window.nextOffset)},
            {QLatin1String("total_bytes"), double(window.totalBytes)}};
}

BackgroundJob *findJob(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    const QString id = tools::stringArgument(call->arguments(), "job_id");
    BackgroundJob *job = services.registry->find(call->sessionId(), id);
    if (!job)
        call->finish(ToolResult::structuredFailure(JobRegistry::noSuchJob(id)));
    return job;
}

void jobStatus(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    if (BackgroundJob *job = findJob(services, call)) {
        QJsonObject value = job->status();
        value.insert(QLatin1String("success"), true);
        call->finish(ToolResult::structured(value));
    }
}

void jobOutput(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    BackgroundJob *job = findJob(services, call);
    if (!job)
        return;
    const QJsonObject &arguments = call->arguments();
    const qint64 limit = qBound<qint64>(
            1, tools::integerArgument(arguments, "limit").value_or(kDefaultReadBytes),
            kMaxReadBytes);
    QString error;
    const std::optional<OutputWindow> window = job->output().read(
            tools::integerArgument(arguments, "offset").value_or(0), limit, &error);
    if (!window) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QJsonObject value = windowJson(*window);
    value.insert(QLatin1String("success"), true);
    value.insert(QLatin1String("job_id"), job->id());
    value.insert(QLatin1String("running"), job->isRunning());
    // Everything the job will ever print has been read.
    value.insert(QLatin1String("complete"),
                 !job->isRunning() && window->nextOffset == window->totalBytes);
    value.insert(QLatin1String("dropped_bytes"), double(job->output().droppedBytes()));
    call->finish(ToolResult::structured(value));
}

void jobWriteStdin(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    BackgroundJob *job = findJob(services, call);
    if (!job)
        return;
    const QByteArray data = tools::stringArgument(call->arguments(), "data").toUtf8();
    const bool close = tools::boolArgument(call->arguments(), "close");
    QString error;
    if (!job->writeInput(data, close, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured({{QLatin1String("success"), true},
                                         {QLatin1String("job_id"), job->id()},
                                         {QLatin1String("bytes_written"), double(data.size())},
                                         {QLatin1String("closed"), close}}));
}

// Answers once the job has ended, so that the reply says how.
void jobKill(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    BackgroundJob *job = findJob(services, call);
    if (!job)
        return;
    const auto answer = [](ToolCall *call, const BackgroundJob &job) {
        QJsonObject value = job.status();
        value.insert(QLatin1String("success"), true);
        call->finish(ToolResult::structured(value));
    };
    if (!job->isRunning()) {
        answer(call.get(), *job);
        return;
    }
    // Held weakly, and strongly while finishing: finishing may drop the core's last reference.
    const std::weak_ptr<ToolCall> weakCall = call;
    QObject::connect(job, &BackgroundJob::finished, call.get(), [weakCall, job, answer] {
        if (const std::shared_ptr<ToolCall> waiting = weakCall.lock())
            answer(waiting.get(), *job);
    });
    job->kill();
}

void jobAttach(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    const QString id = tools::stringArgument(call->arguments(), "job_id");
    BackgroundJob *job = services.registry->attach(call->sessionId(), call->principal().name(), id);
    if (!job) {
        call->finish(ToolResult::structuredFailure(
                JobRegistry::noSuchJob(id)
                + QStringLiteral("; only a job whose session has ended, kept for "
                                 "JOB_KEEP_SECONDS, can be attached")));
        return;
    }
    QJsonObject value = job->status();
    value.insert(QLatin1String("success"), true);
    call->finish(ToolResult::structured(value));
}

void jobList(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    QJsonArray jobs;
    for (const BackgroundJob *job : services.registry->jobsOf(call->sessionId()))
        jobs.append(job->status());
    call->finish(ToolResult::structured(
            {{QLatin1String("success"), true}, {QLatin1String("jobs"), jobs}}));
}

void outputRead(const JobServices &services, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject &arguments = call->arguments();
    const QString handle = tools::stringArgument(arguments, "handle");
    const qint64 length = qBound<qint64>(
            1, tools::integerArgument(arguments, "length").value_or(kDefaultReadBytes),
            kMaxReadBytes);
    QString error;
    const std::optional<OutputWindow> window = services.handles->read(
            call->sessionId(), handle, tools::integerArgument(arguments, "offset").value_or(0),
            length, &error);
    if (!window) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QJsonObject value = windowJson(*window);
    value.insert(QLatin1String("success"), true);
    value.insert(QLatin1String("handle"), handle);
    value.insert(QLatin1String("complete"), window->nextOffset == window->totalBytes);
    call->finish(ToolResult::structured(value));
}

// The handle a request names is mirrored into an Mcp-Param-Handle header by clients of the
// 2026-07-28 era, which is what a balancer routes on (server/base/ReplicaHandle.h).
QJsonObject jobIdInput()
{
    return tools::schema(
            R"({"type":"object","required":["job_id"],"additionalProperties":false,"properties":{
        "job_id":{"type":"string","x-mcp-header":"Handle"}}})");
}

// job_status's and job_kill's answer; job_list's entries.
const char *const kStatusProperties = R"({
        "success":{"const":true},
        "job_id":{"type":"string"},
        "tool":{"type":"string"},
        "summary":{"type":"string","description":"The command or the code's first line."},
        "interactive":{"type":"boolean"},
        "state":{"enum":["running","exited","killed","timed_out","failed"]},
        "started_at":{"type":"string"},
        "elapsed_ms":{"type":"number"},
        "output_bytes":{"type":"number","description":"Output kept so far, stdout and stderr interleaved."},
        "output_dropped_bytes":{"type":"number","description":"Output beyond JOB_OUTPUT_MAX_MB, not kept."},
        "timeout_seconds":{"type":"integer"},
        "result":{"type":"object","description":"Once ended: the tool's result without its output (exit_code, success, accounting)."}})";

QJsonObject statusOutput()
{
    QJsonObject success{
            {QLatin1String("type"), QLatin1String("object")},
            {QLatin1String("required"),
             QJsonArray{QLatin1String("success"), QLatin1String("job_id"), QLatin1String("state")}},
            {QLatin1String("properties"), tools::schema(kStatusProperties)}};
    return tools::orFailure(success);
}

QJsonObject windowProperties()
{
    return tools::schema(R"({
        "success":{"const":true},
        "output":{"type":"string","description":"The bytes of the window as UTF-8 text."},
        "offset":{"type":"number"},
        "next_offset":{"type":"number","description":"Where the next read continues (a window never ends inside a UTF-8 character)."},
        "total_bytes":{"type":"number"},
        "complete":{"type":"boolean","description":"Nothing is left to read."}})");
}

QJsonObject withProperties(QJsonObject properties, const QJsonObject &more,
                           const QJsonArray &required)
{
    for (auto it = more.begin(); it != more.end(); ++it)
        properties.insert(it.key(), it.value());
    return tools::orFailure({{QLatin1String("type"), QLatin1String("object")},
                             {QLatin1String("required"), required},
                             {QLatin1String("properties"), properties}});
}

} // namespace

bool registerJobTools(const ToolFamily &family, QString *)
{
    McpServer &server = family.server;
    const JobServices services = JobRunner::of(server, family.settings).services();
    ToolRegistry &registry = server.tools();
    const auto handler = [services](void (*run)(const JobServices &,
                                                const std::shared_ptr<ToolCall> &)) {
        return [services, run](const std::shared_ptr<ToolCall> &call) { run(services, call); };
    };
    // Annotations: {readOnly, destructive, idempotent, openWorld}.
    registry.add(tools::makeTool(
            "job_status", "Background job status",
            "A background job's state (running, exited, killed, timed_out, failed), run time, "
            "output size, and once ended the tool's result without its output.",
            jobIdInput(), statusOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(jobStatus)));
    registry.add(tools::makeTool(
            "job_output", "Read a background job's output",
            "Reads a background job's output (stdout and stderr interleaved) from a byte "
            "offset. Continue from next_offset; complete: the job ended and all was read.",
            tools::schema(
                    R"({"type":"object","required":["job_id"],"additionalProperties":false,"properties":{
        "job_id":{"type":"string","x-mcp-header":"Handle"},
        "offset":{"type":"integer","minimum":0,"default":0},
        "limit":{"type":"integer","minimum":1,"default":65536,"description":"Most bytes (at most 1048576)."}}})"),
            withProperties(
                    windowProperties(),
                    tools::schema(R"({"job_id":{"type":"string"},"running":{"type":"boolean"},
                                             "dropped_bytes":{"type":"number"}})"),
                    QJsonArray{QLatin1String("success"), QLatin1String("output"),
                               QLatin1String("next_offset")}),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(jobOutput)));
    registry.add(tools::makeTool(
            "job_write_stdin", "Write to a background job's input",
            "Writes to the stdin of a job started with interactive: true (include the newline); "
            "read the answer with job_output.",
            tools::schema(
                    R"({"type":"object","required":["job_id","data"],"additionalProperties":false,"properties":{
        "job_id":{"type":"string","x-mcp-header":"Handle"},
        "data":{"type":"string"},
        "close":{"type":"boolean","description":"Close stdin after writing."}}})"),
            withProperties(tools::schema(R"({"success":{"const":true},"job_id":{"type":"string"},
                                             "bytes_written":{"type":"number"},"closed":{"type":"boolean"}})"),
                           {},
                           QJsonArray{QLatin1String("success"), QLatin1String("bytes_written")}),
            {.readOnly = false, .destructive = false, .idempotent = false, .openWorld = false},
            handler(jobWriteStdin)));
    registry.add(tools::makeTool(
            "job_kill", "Stop a background job",
            "Kills a background job with everything it started; its output stays readable.",
            jobIdInput(), statusOutput(),
            {.readOnly = false, .destructive = true, .idempotent = true, .openWorld = false},
            handler(jobKill)));
    registry.add(tools::makeTool(
            "job_attach", "Take over a job of an ended session",
            "Makes a running job of an ended session of yours (before a reconnect) this "
            "session's, by its job_id.",
            jobIdInput(), statusOutput(),
            {.readOnly = false, .destructive = false, .idempotent = true, .openWorld = false},
            handler(jobAttach)));
    registry.add(tools::makeTool(
            "job_list", "List background jobs",
            "This session's background jobs, running and recently ended, with their status.",
            tools::schema(R"({"type":"object","additionalProperties":false,"properties":{}})"),
            withProperties(
                    tools::schema(
                            R"({"success":{"const":true},"jobs":{"type":"array","items":{"type":"object"}}})"),
                    {}, QJsonArray{QLatin1String("success"), QLatin1String("jobs")}),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(jobList)));
    registry.add(tools::makeTool(
            "output_read", "Read a truncated output",
            "Reads the whole output behind a stdout_handle or stderr_handle (given when output "
            "was cut to fit) from a byte offset. Handles expire.",
            tools::schema(
                    R"({"type":"object","required":["handle"],"additionalProperties":false,"properties":{
        "handle":{"type":"string","x-mcp-header":"Handle"},
        "offset":{"type":"integer","minimum":0,"default":0},
        "length":{"type":"integer","minimum":1,"default":65536,"description":"Most bytes (at most 1048576)."}}})"),
            withProperties(windowProperties(), tools::schema(R"({"handle":{"type":"string"}})"),
                           QJsonArray{QLatin1String("success"), QLatin1String("output"),
                                      QLatin1String("next_offset")}),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(outputRead)));
    return true;
}

} // namespace cmcp
