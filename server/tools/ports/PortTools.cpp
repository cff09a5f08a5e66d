#include "tools/ports/PortTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "jobs/BackgroundJob.h"
#include "jobs/JobRegistry.h"
#include "jobs/JobRunner.h"
#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"
#include "ports/PublishedPorts.h"

#include <QJsonArray>

#include <algorithm>
#include <climits>

namespace cmcp {

namespace {

void publish(PublishedPorts &ports, const JobServices &services,
             const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject &arguments = call->arguments();
    const QString jobId = tools::stringArgument(arguments, "job_id");
    const BackgroundJob *job = services.registry->find(call->sessionId(), jobId);
    if (!job) {
        call->finish(ToolResult::structuredFailure(JobRegistry::noSuchJob(jobId)));
        return;
    }
    if (!job->isRunning()) {
        call->finish(ToolResult::structuredFailure(
                QStringLiteral("job %1 has ended: start the server again, in the background, "
                               "and publish its port then")
                        .arg(jobId)));
        return;
    }
    PublishedPorts::Request request;
    request.jobId = jobId;
    request.jobPid = job->jobPid();
    request.port = int(tools::integerArgument(arguments, "port").value_or(0));
    request.isPublic = tools::boolArgument(arguments, "public");
    if (const std::optional<qint64> seconds =
                tools::integerArgument(arguments, "expires_in_seconds"))
        request.expiresInSeconds = int(std::clamp<qint64>(*seconds, 0, INT_MAX));
    QString error;
    const std::shared_ptr<const PublishedPorts::Port> port =
            ports.publish(call->principal(), request, &error);
    if (!port) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured(tools::succeeded(ports.describe(*port))));
}

void list(PublishedPorts &ports, const std::shared_ptr<ToolCall> &call)
{
    QJsonArray listed;
    for (const std::shared_ptr<const PublishedPorts::Port> &port : ports.portsOf(call->principal()))
        listed.append(ports.describe(*port));
    call->finish(ToolResult::structured(tools::succeeded({{QLatin1String("ports"), listed}})));
}

void revoke(PublishedPorts &ports, const std::shared_ptr<ToolCall> &call)
{
    const QString token = tools::stringArgument(call->arguments(), "token");
    if (!ports.revoke(call->principal(), token)) {
        call->finish(ToolResult::structuredFailure(
                QStringLiteral("no published port of yours has token '%1' (revoked already, "
                               "expired, or its job ended)")
                        .arg(token)));
        return;
    }
    call->finish(ToolResult::structured(
            tools::succeeded({{QLatin1String("token"), token}, {QLatin1String("revoked"), true}})));
}

// port_publish's answer and port_list's entries.
const char *const kPortProperties =
        R"("token":{"type":"string","description":"The URL's secret; port_revoke takes it."},
           "url":{"type":"string","description":"Where the port is reached, with any path and query after it."},
           "job_id":{"type":"string"},"port":{"type":"integer"},"public":{"type":"boolean"},
           "published_at":{"type":"string"},"expires_at":{"type":"string"},
           "connections":{"type":"number"},"open_connections":{"type":"integer"},
           "bytes_in":{"type":"number"},"bytes_out":{"type":"number"})";

} // namespace

bool registerPortTools(const ToolFamily &family, QString *)
{
    McpServer &server = family.server;
    PublishedPorts &ports = *family.ports;
    const JobServices services = JobRunner::of(server, family.settings).services();
    ToolRegistry &registry = server.tools();
    registry.add(tools::makeTool(
            "port_publish", "Publish a job's server at a URL",
            "Makes a TCP port that a running background job of this session listens on (inside "
            "its own network, on 127.0.0.1) reachable over HTTP at a URL of this server, with a "
            "token of its own: web pages, APIs, server-sent events and WebSockets. Private (the "
            "default): requests need the same Authorization header as the MCP endpoint. public: "
            "the URL alone is enough, for a person's browser (when the operator allows it). The "
            "URL stops working at expires_in_seconds (default PORTS_DEFAULT_SECONDS), when the "
            "job ends, or with port_revoke. Start the server first, e.g. system_run_command "
            "{command: 'python3 -m http.server 8000', background: true}.",
            tools::schema(
                    R"({"type":"object","required":["job_id","port"],"additionalProperties":false,"properties":{
        "job_id":{"type":"string","x-mcp-header":"Handle","description":"The background job whose server listens."},
        "port":{"type":"integer","minimum":1,"maximum":65535,"description":"The TCP port it listens on, on 127.0.0.1 or all addresses."},
        "public":{"type":"boolean","description":"Reachable by anyone with the URL, without a bearer token (default false)."},
        "expires_in_seconds":{"type":"integer","minimum":1,"description":"How long the URL works (default PORTS_DEFAULT_SECONDS, at most PORTS_MAX_SECONDS)."}}})"),
            tools::successOutput(kPortProperties, R"(["success","token","url"])"),
            {.readOnly = false, .destructive = false, .idempotent = false, .openWorld = true},
            [&ports, services](const std::shared_ptr<ToolCall> &call) {
                publish(ports, services, call);
            }));
    registry.add(tools::makeTool(
            "port_list", "List published ports",
            "The ports this principal has published and that still work, oldest first, with "
            "their URLs, expiry and traffic so far.",
            tools::schema(R"({"type":"object","additionalProperties":false,"properties":{}})"),
            tools::successOutput(R"("ports":{"type":"array","items":{"type":"object"}})",
                                 R"(["success","ports"])"),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            [&ports](const std::shared_ptr<ToolCall> &call) { list(ports, call); }));
    registry.add(tools::makeTool(
            "port_revoke", "Stop publishing a port",
            "Revokes a published port by its token: its URL answers 404 from now on and its "
            "open connections close. The job's server keeps running.",
            tools::schema(
                    R"({"type":"object","required":["token"],"additionalProperties":false,"properties":{
        "token":{"type":"string","description":"The token port_publish returned."}}})"),
            tools::successOutput(R"("token":{"type":"string"},"revoked":{"const":true})",
                                 R"(["success","token"])"),
            {.readOnly = false, .destructive = true, .idempotent = true, .openWorld = false},
            [&ports](const std::shared_ptr<ToolCall> &call) { revoke(ports, call); }));
    return true;
}

} // namespace cmcp
