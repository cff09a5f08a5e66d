#include "tools/workspace/WorkspaceTools.h"

#include "tools/workspace/NamedWorkspaceTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "common/Settings.h"

#include "managers/TreeDiff.h"
#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "tools/common/ToolWorkers.h"
#include "workspace/SessionWorkspaces.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QElapsedTimer>
#include <QJsonArray>

namespace cmcp {

namespace {

QJsonObject checkpointJson(const Checkpoint &checkpoint)
{
    return {{QLatin1String("checkpoint_id"), checkpoint.id},
            {QLatin1String("label"), checkpoint.label},
            {QLatin1String("created"), checkpoint.created.toString(Qt::ISODateWithMs)}};
}

// The workspace the call works in and its checkpoints; nullopt (the call finished with the
// reason) when it cannot be had.
std::optional<std::pair<Workspace, WorkspaceCheckpoints>>
checkpointsOf(SessionWorkspaces &workspaces, int maxCount, const std::shared_ptr<ToolCall> &call)
{
    QString error;
    const std::optional<Workspace> workspace = workspaces.forCall(*call, &error);
    if (!workspace) {
        call->finish(ToolResult::structuredFailure(error));
        return std::nullopt;
    }
    return std::pair{*workspace, WorkspaceCheckpoints(*workspace, maxCount)};
}

void checkpoint(SessionWorkspaces &workspaces, int maxCount, const std::shared_ptr<ToolCall> &call)
{
    const auto found = checkpointsOf(workspaces, maxCount, call);
    if (!found)
        return;
    QElapsedTimer clock;
    clock.start();
    QString error;
    const std::optional<Checkpoint> made =
            found->second.create(tools::stringArgument(call->arguments(), "label"), &error);
    if (!made) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QJsonObject value = checkpointJson(*made);
    value.insert(QLatin1String("elapsed_ms"), double(clock.nsecsElapsed()) / 1e6);
    call->finish(ToolResult::structured(tools::succeeded(value)));
}

void listCheckpoints(SessionWorkspaces &workspaces, int maxCount,
                     const std::shared_ptr<ToolCall> &call)
{
    const auto found = checkpointsOf(workspaces, maxCount, call);
    if (!found)
        return;
    QString error;
    const std::optional<QList<Checkpoint>> all = found->second.list(&error);
    if (!all) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    QJsonArray list;
    for (const Checkpoint &each : *all)
        list.append(checkpointJson(each));
    call->finish(ToolResult::structured(tools::succeeded({{QLatin1String("checkpoints"), list}})));
}

void restore(SessionWorkspaces &workspaces, int maxCount, const std::shared_ptr<ToolCall> &call)
{
    const auto found = checkpointsOf(workspaces, maxCount, call);
    if (!found)
        return;
    const QString id = tools::stringArgument(call->arguments(), "checkpoint_id");
    // A running job keeps the tree it was started in (its jail mounted it): restoring under it
    // would leave it writing to a tree nobody sees again.
    if (const int jobs = workspaces.jobsIn(found->first); jobs > 0) {
        call->finish(ToolResult::structuredFailure(
                QStringLiteral("restore refused: %1 job(s) are running in this workspace; end "
                               "them first (job_list, job_kill)")
                        .arg(jobs)));
        return;
    }
    QElapsedTimer clock;
    clock.start();
    QString error;
    if (!found->second.restore(id, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    workspaces.replaced(found->first);
    call->finish(ToolResult::structured(
            tools::succeeded({{QLatin1String("checkpoint_id"), id},
                              {QLatin1String("elapsed_ms"), double(clock.nsecsElapsed()) / 1e6}})));
}

// The walk of a tree a job may be changing as it is read takes up to the walk budget's time: it
// runs on a worker, so that no other call waits for it. The two directories are opened here, and
// the worker touches nothing else: a checkpoint deleted or a workspace restored meanwhile leaves
// it comparing the trees it opened.
void diff(SessionWorkspaces &workspaces, ToolWorkers &workers, int maxCount,
          const std::shared_ptr<ToolCall> &call)
{
    const auto found = checkpointsOf(workspaces, maxCount, call);
    if (!found)
        return;
    const WorkspaceCheckpoints &checkpoints = found->second;
    const QString from = tools::stringArgument(call->arguments(), "checkpoint_id");
    const QString to = tools::stringArgument(call->arguments(), "against");
    QString error;
    if (!checkpoints.find(from, &error) || (!to.isEmpty() && !checkpoints.find(to, &error))) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    const QString afterPath = to.isEmpty() ? found->first.path() : checkpoints.pathOf(to);
    auto trees = std::make_shared<std::pair<UniqueFd, UniqueFd>>(
            openDirectory(checkpoints.pathOf(from)), openDirectory(afterPath));
    if (!trees->first.isValid() || !trees->second.isValid()) {
        call->finish(ToolResult::structuredFailure(
                QStringLiteral("cannot open %1: %2")
                        .arg(trees->first.isValid() ? afterPath : checkpoints.pathOf(from),
                             errnoText(errno))));
        return;
    }
    workers.run(call, [trees]() -> ToolWorkers::Completion {
        const TreeDifference difference =
                diffTrees(trees->first.get(), trees->second.get(), TreeDiffLimits{});
        QJsonObject result = tools::succeeded({{QLatin1String("changes"), difference.changes},
                                               {QLatin1String("truncated"), difference.truncated}});
        if (difference.truncated)
            result.insert(QLatin1String("truncated_because"), difference.truncatedBecause);
        return {ToolResult::structured(result), {}};
    });
}

void deleteCheckpoint(SessionWorkspaces &workspaces, int maxCount,
                      const std::shared_ptr<ToolCall> &call)
{
    const auto found = checkpointsOf(workspaces, maxCount, call);
    if (!found)
        return;
    const QString id = tools::stringArgument(call->arguments(), "checkpoint_id");
    QString error;
    if (!found->second.remove(id, &error)) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured(tools::succeeded({{QLatin1String("checkpoint_id"), id}})));
}

} // namespace

bool registerWorkspaceTools(const ToolFamily &family, QString *)
{
    McpServer &server = family.server;
    const Settings &settings = family.settings;
    SessionWorkspaces &workspaces = SessionWorkspaces::of(server, settings);
    const bool checkpoints =
            WorkspaceCheckpoints(Workspace::fromSettings(settings)).unsupportedReason().isEmpty();
    registerNamedWorkspaceTools(server, settings, checkpoints);
    if (!checkpoints)
        return true;
    const int maxCount = int(settings.integer(u"SANDBOX_WORKSPACE_CHECKPOINTS_MAX"));
    const auto handler = [&workspaces, maxCount](void (*run)(SessionWorkspaces &, int,
                                                             const std::shared_ptr<ToolCall> &)) {
        return [&workspaces, maxCount, run](const std::shared_ptr<ToolCall> &call) {
            run(workspaces, maxCount, call);
        };
    };
    const char *idInput =
            R"({"type":"object","required":["checkpoint_id"],"additionalProperties":false,"properties":{
        "checkpoint_id":{"type":"string","pattern":"^cp_[0-9a-f]{32}$"}}})";
    const char *checkpointProperties =
            R"("checkpoint_id":{"type":"string"},"label":{"type":"string"},"created":{"type":"string"})";
    ToolRegistry &registry = server.tools();
    registry.add(tools::makeTool(
            "workspace_checkpoint", "Checkpoint the workspace",
            "Snapshots the workspace in milliseconds (copy on write) and returns its "
            "checkpoint_id, for workspace_restore, workspace_diff and workspace_fork.",
            tools::withWorkspaceArgument(tools::schema(
                    R"({"type":"object","additionalProperties":false,"properties":{
        "label":{"type":"string","maxLength":200}}})")),
            tools::successOutput(
                    (QByteArray(checkpointProperties) + R"(,"elapsed_ms":{"type":"number"})")
                            .constData(),
                    R"(["success","checkpoint_id"])"),
            {.readOnly = false, .destructive = false, .idempotent = false, .openWorld = false},
            handler(checkpoint)));
    registry.add(tools::makeTool(
            "workspace_checkpoints", "List the workspace's checkpoints",
            "The workspace's checkpoints, oldest first.",
            tools::withWorkspaceArgument(tools::schema(
                    R"({"type":"object","additionalProperties":false,"properties":{}})")),
            tools::successOutput(R"("checkpoints":{"type":"array","items":{"type":"object"}})",
                                 R"(["success","checkpoints"])"),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            handler(listCheckpoints)));
    registry.add(tools::makeTool(
            "workspace_restore", "Restore the workspace to a checkpoint",
            "Puts the workspace back as it was at the checkpoint, dropping every change since "
            "(the checkpoint stays). Refused while a job runs in it.",
            tools::withWorkspaceArgument(tools::schema(idInput)),
            tools::successOutput(
                    R"("checkpoint_id":{"type":"string"},"elapsed_ms":{"type":"number"})",
                    R"(["success","checkpoint_id"])"),
            {.readOnly = false, .destructive = true, .idempotent = true, .openWorld = false},
            handler(restore)));
    registry.add(tools::makeTool(
            "workspace_diff", "What changed since a checkpoint",
            "The paths added, removed and modified since the checkpoint (or up to the "
            "checkpoint `against`), with a unified diff of each modified text file.",
            tools::withWorkspaceArgument(tools::schema(
                    R"({"type":"object","required":["checkpoint_id"],"additionalProperties":false,"properties":{
        "checkpoint_id":{"type":"string","pattern":"^cp_[0-9a-f]{32}$"},
        "against":{"type":"string","pattern":"^cp_[0-9a-f]{32}$","description":"A later checkpoint, instead of now."}}})")),
            tools::successOutput(
                    R"("changes":{"type":"array","items":{"type":"object","required":["path","change"],"properties":{
                     "path":{"type":"string"},"change":{"enum":["added","removed","modified"]},"diff":{"type":"string"}}}},
                     "truncated":{"type":"boolean"},"truncated_because":{"type":"string"})",
                    R"(["success","changes","truncated"])"),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            [&workspaces, &workers = ToolWorkers::of(server),
             maxCount](const std::shared_ptr<ToolCall> &call) {
                diff(workspaces, workers, maxCount, call);
            }));
    registry.add(tools::makeTool(
            "workspace_checkpoint_delete", "Delete a checkpoint",
            "Deletes a checkpoint, freeing the space only it held.",
            tools::withWorkspaceArgument(tools::schema(idInput)),
            tools::successOutput(R"("checkpoint_id":{"type":"string"})",
                                 R"(["success","checkpoint_id"])"),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            handler(deleteCheckpoint)));
    return true;
}

} // namespace cmcp
