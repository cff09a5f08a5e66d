#include "tools/transfer/TransferTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"
#include "transfer/TransferTickets.h"

#include "managers/FileOptions.h"

#include "mcp/McpServer.h"
#include "mcp/ToolCall.h"
#include "workspace/SessionWorkspaces.h"

namespace cmcp {

namespace {

// The file tools' rule for a name (FILE_ALLOWED_EXTENSIONS, FILE_ALLOW_NO_EXTENSION), so that a
// transfer moves no file that file_read or file_write would refuse.
std::optional<WorkspacePath> transferablePath(const QString &text, const Settings &settings,
                                              QString *error)
{
    std::optional<WorkspacePath> path = WorkspacePath::parse(text, error);
    if (!path)
        return std::nullopt;
    const QString problem = path->isRoot()
            ? QStringLiteral("names the workspace root, not a file")
            : FileOptions::fromSettings(settings).checkName(path->name());
    if (problem.isEmpty())
        return path;
    *error = QStringLiteral("%1: %2").arg(text, problem);
    return std::nullopt;
}

void issue(TransferTickets &transfers, SessionWorkspaces &workspaces, const Settings &settings,
           const std::shared_ptr<ToolCall> &call)
{
    QString error;
    const std::optional<Workspace> workspace = workspaces.forCall(*call, &error);
    const std::optional<WorkspacePath> path = workspace
            ? transferablePath(tools::stringArgument(call->arguments(), "path"), settings, &error)
            : std::nullopt;
    std::shared_ptr<const ContainedRoot> root = path
            ? ContainedRoot::open(workspace->path(), ContainedRoot::Resolver::Openat2, &error)
            : nullptr;
    const bool upload = tools::stringArgument(call->arguments(), "direction") == u"upload";
    const std::optional<TransferTickets::Issued> issued = root
            ? transfers.issue(call->principal(), *workspace, std::move(root), *path,
                              upload ? TransferTickets::Direction::Upload
                                     : TransferTickets::Direction::Download,
                              &error)
            : std::nullopt;
    if (!issued) {
        call->finish(ToolResult::structuredFailure(error));
        return;
    }
    call->finish(ToolResult::structured(tools::succeeded(
            {{QLatin1String("url"), issued->url},
             {QLatin1String("method"), upload ? QLatin1String("PUT") : QLatin1String("GET")},
             {QLatin1String("path"), path->display()},
             {QLatin1String("expires_in_seconds"), double(issued->expiresInSeconds)},
             {QLatin1String("max_bytes"), double(transfers.maxBytes())}})));
}

} // namespace

bool registerTransferTools(const ToolFamily &family, QString *)
{
    McpServer &server = family.server;
    const Settings &settings = family.settings;
    TransferTickets &transfers = *family.transfers;
    SessionWorkspaces &workspaces = SessionWorkspaces::of(server, settings);
    server.tools().add(tools::makeTool(
            "file_transfer", "A URL to download or upload a file",
            "A short-lived URL of this server to move one file of the workspace without base64 "
            "and beyond the file tools' size limit, with the MCP endpoint's Authorization header. "
            "download: GET it (Range resumes). upload: PUT the file, or parts in order with "
            "Content-Range: bytes first-last/total; it appears when the last byte arrives.",
            tools::withWorkspaceArgument(tools::schema(
                    R"({"type":"object","required":["path","direction"],"additionalProperties":false,"properties":{
        "path":{"type":"string","description":"Relative to the workspace root."},
        "direction":{"enum":["download","upload"]}}})")),
            tools::successOutput(
                    R"("url":{"type":"string"},"method":{"enum":["GET","PUT"]},"path":{"type":"string"},
                       "expires_in_seconds":{"type":"number"},"max_bytes":{"type":"number"})",
                    R"(["success","url","method"])"),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [&transfers, &workspaces, &settings](const std::shared_ptr<ToolCall> &call) {
                issue(transfers, workspaces, settings, call);
            }));
    return true;
}

} // namespace cmcp
