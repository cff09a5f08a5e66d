#include "tools/workspace/NamedWorkspaceTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "common/Settings.h"

#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"
#include "workspace/SessionWorkspaces.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QElapsedTimer>
#include <QJsonArray>

namespace cmcp {

namespace {

QJsonObject describe(const NamedWorkspace &workspace)
{
    return {{QLatin1String("name"), workspace.name},
            {QLatin1String("workspace_id"), workspace.id},
            {QLatin1String("quota_mb"), double(workspace.workspace.quotaBytes() >> 20)},
            {QLatin1String("created"), workspace.created.toString(Qt::ISODateWithMs)}};
}

std::optional<qint64> sizeArgument(const QJsonObject &arguments)
{
    return tools::integerArgument(arguments, "size_mb");
}

void create(SessionWorkspaces &workspaces, const std::shared_ptr<ToolCall> &call)
{
    QString error;
    const std::optional<NamedWorkspace> made = workspaces.named().create(
            call->principal(), tools::stringArgument(call->arguments(), "name"),
            sizeArgument(call->arguments()), &error);
    if (!made) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured(tools::succeeded(describe(*made))));
}

void list(SessionWorkspaces &workspaces, const std::shared_ptr<ToolCall> &call)
{
    const QString selected = workspaces.selected(call->sessionId());
    QJsonArray all;
    QJsonValue open = QJsonValue::Null;
    for (const NamedWorkspace &each : workspaces.named().of(call->principal())) {
        all.append(describe(each));
        if (each.id == selected)
            open = each.name;
    }
    call->finish(ToolResult::structured(
            tools::succeeded({{QLatin1String("workspaces"), all}, {QLatin1String("open"), open}})));
}

void open(SessionWorkspaces &workspaces, const std::shared_ptr<ToolCall> &call)
{
    if (call->sessionId().isEmpty()) {
        call->finish(ToolResult::structuredFailure(QStringLiteral(
                "workspace_open needs a session (a request without one names its workspace "
                "in each call's `workspace` argument)")));
        return;
    }
    const QString nameOrId = tools::stringArgument(call->arguments(), "workspace");
    if (nameOrId.isEmpty()) {
        workspaces.select(call->sessionId(), {});
        call->finish(ToolResult::structured(
                tools::succeeded({{QLatin1String("open"), QJsonValue::Null}})));
        return;
    }
    QString error;
    const std::optional<NamedWorkspace> found =
            workspaces.named().find(call->principal(), nameOrId, &error);
    if (!found) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    workspaces.select(call->sessionId(), found->id);
    call->finish(ToolResult::structured(
            tools::succeeded({{QLatin1String("open"), found->name},
                              {QLatin1String("workspace"), describe(*found)}})));
}

void remove(SessionWorkspaces &workspaces, const std::shared_ptr<ToolCall> &call)
{
    QString error;
    const std::optional<NamedWorkspace> found = workspaces.named().find(
            call->principal(), tools::stringArgument(call->arguments(), "workspace"), &error);
    if (!found) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    const int jobs = workspaces.jobsIn(found->workspace);
    if (!workspaces.removeNamed(*found, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured(tools::succeeded(
            {{QLatin1String("name"), found->name}, {QLatin1String("jobs_killed"), jobs}})));
}

void fork(SessionWorkspaces &workspaces, int maxCount, const std::shared_ptr<ToolCall> &call)
{
    QString error;
    const std::optional<Workspace> source = workspaces.forCall(*call, &error);
    const WorkspaceCheckpoints checkpoints(source.value_or(Workspace()), maxCount);
    const QString id = tools::stringArgument(call->arguments(), "checkpoint_id");
    if (!source || !checkpoints.find(id, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QElapsedTimer clock;
    clock.start();
    const std::optional<NamedWorkspace> made = workspaces.named().fork(
            call->principal(), tools::stringArgument(call->arguments(), "name"),
            checkpoints.pathOf(id), sizeArgument(call->arguments()), &error);
    if (!made) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QJsonObject value = describe(*made);
    value.insert(QLatin1String("checkpoint_id"), id);
    value.insert(QLatin1String("elapsed_ms"), double(clock.nsecsElapsed()) / 1e6);
    call->finish(ToolResult::structured(tools::succeeded(value)));
}

const char *kDescribed =
        R"("name":{"type":"string"},"workspace_id":{"type":"string"},"quota_mb":{"type":"number"},"created":{"type":"string"})";

} // namespace

void registerNamedWorkspaceTools(McpServer &server, const Settings &settings, bool canFork)
{
    SessionWorkspaces &workspaces = SessionWorkspaces::of(server, settings);
    const auto handler = [&workspaces](void (*run)(SessionWorkspaces &,
                                                   const std::shared_ptr<ToolCall> &)) {
        return [&workspaces, run](const std::shared_ptr<ToolCall> &call) { run(workspaces, call); };
    };
    const char *nameAndSize =
            R"("name":{"type":"string","pattern":"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$","description":"Your name for it."},
        "size_mb":{"type":"integer","minimum":1,"description":"Its quota in MB."})";
    const char *target =
            R"({"type":"object","required":["workspace"],"additionalProperties":false,"properties":{
        "workspace":{"type":"string","minLength":1,"description":"Its name or workspace_id."}}})";
    ToolRegistry &registry = server.tools();
    registry.add(tools::makeTool(
            "workspace_create", "Create a named workspace",
            "Creates an empty workspace of yours that outlives sessions and restarts until "
            "workspace_delete. Work in it with a tool's `workspace` argument or workspace_open.",
            tools::schema(
                    QByteArray(
                            R"({"type":"object","required":["name"],"additionalProperties":false,"properties":{)")
                            .append(nameAndSize)
                            .append("}}")
                            .constData()),
            tools::successOutput(kDescribed, R"(["success","name","workspace_id"])"),
            {.readOnly = false, .destructive = false, .idempotent = false, .openWorld = false},
            handler(create)));
    registry.add(tools::makeTool(
            "workspace_list", "List your named workspaces",
            "Your named workspaces, and which one this session has open (null: its own).",
            tools::schema(R"({"type":"object","additionalProperties":false,"properties":{}})"),
            tools::successOutput(
                    R"("workspaces":{"type":"array","items":{"type":"object"}},"open":{"type":["string","null"]})",
                    R"(["success","workspaces"])"),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(list)));
    registry.add(tools::makeTool(
            "workspace_open", "Work in a named workspace",
            "Makes the named workspace this session's default for file and job tools; without "
            "`workspace`, back to the session's own.",
            tools::schema(R"({"type":"object","additionalProperties":false,"properties":{
        "workspace":{"type":"string","description":"Its name or workspace_id."}}})"),
            tools::successOutput(
                    R"("open":{"type":["string","null"]},"workspace":{"type":"object"})",
                    R"(["success","open"])"),
            {.readOnly = false, .destructive = false, .idempotent = true, .openWorld = false},
            handler(open)));
    registry.add(tools::makeTool(
            "workspace_delete", "Delete a named workspace",
            "Deletes a named workspace with its files and checkpoints, killing its jobs.",
            tools::schema(target),
            tools::successOutput(R"("name":{"type":"string"},"jobs_killed":{"type":"integer"})",
                                 R"(["success","name"])"),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            handler(remove)));
    if (!canFork)
        return;
    const int maxCount = int(settings.integer(u"SANDBOX_WORKSPACE_CHECKPOINTS_MAX"));
    registry.add(tools::makeTool(
            "workspace_fork", "Fork a workspace from a checkpoint",
            "Creates a named workspace from a checkpoint of the workspace this call works in, "
            "in milliseconds (copy on write); the two are independent from then on.",
            tools::withWorkspaceArgument(tools::schema(
                    QByteArray(
                            R"({"type":"object","required":["checkpoint_id","name"],"additionalProperties":false,"properties":{
        "checkpoint_id":{"type":"string","pattern":"^cp_[0-9a-f]{32}$"},)")
                            .append(nameAndSize)
                            .append("}}")
                            .constData())),
            tools::successOutput(
                    QByteArray(kDescribed)
                            .append(R"(,"checkpoint_id":{"type":"string"},"elapsed_ms":{"type":"number"})"),
                    R"(["success","name","workspace_id"])"),
            {.readOnly = false, .destructive = false, .idempotent = false, .openWorld = false},
            [&workspaces, maxCount](const std::shared_ptr<ToolCall> &call) {
                fork(workspaces, maxCount, call);
            }));
}

} // namespace cmcp
