#include "tools/file/FileTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"

#include "workspace/ContainedRoot.h"
#include "managers/FileEditor.h"
#include "managers/FileManager.h"
#include "managers/FileSearcher.h"
#include "tools/common/ToolWorkers.h"
#include "tools/file/FileToolSchemas.h"
#include "base/LiveSettings.h"
#include "mcp/McpServer.h"
#include "tools/file/SessionFileManagers.h"
#include "workspace/SessionWorkspaces.h"
#include "common/Settings.h"
#include "mcp/ToolCall.h"
#include "tools/file/WorkspaceResources.h"

#include <QJsonArray>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

using Completion = ToolWorkers::Completion;

// Every failure: isError with the message as text, and success false plus the message in
// structuredContent, as the original's results carry them.
Completion failure(const QString &message)
{
    ToolResult result = ToolResult::text(message);
    result.isError = true;
    result.structuredContent =
            QJsonObject{{QLatin1String("success"), false}, {QLatin1String("error"), message}};
    return {result, {}};
}

// Tells the subscribers of `files`' workspace that these files changed: with a workspace of
// its own, its session only. When files appeared or vanished in the shared workspace, every
// session hears that the list changed; a session's own workspace has no list to tell others of.
std::function<void()> announce(ResourceRegistry *resources, const FileManager &files,
                               QStringList changedPaths, bool listChanged)
{
    if (!resources)
        return {};
    return [resources, owner = files.ownerSession(), changedPaths, listChanged] {
        for (const QString &path : changedPaths)
            resources->notifyUpdated(workspaceresources::uriFor(path), owner);
        if (listChanged && owner.isEmpty())
            Q_EMIT resources->listChanged();
    };
}

// Files up to this size are read on the event loop, larger ones on a worker thread.
constexpr qint64 kCheapReadBytes = 64 * 1024;

std::optional<Completion> readFile(FileManager &files, const QJsonObject &arguments,
                                   std::optional<qint64> cheapOnly)
{
    FileReadRequest request;
    request.cheapOnly = cheapOnly;
    request.path = tools::stringArgument(arguments, "path");
    request.encoding = tools::stringArgument(arguments, "encoding", request.encoding);
    request.offset = tools::integerArgument(arguments, "offset");
    request.limit = tools::integerArgument(arguments, "limit");
    request.asUtf8 = true;
    const FileOutcome<FileReadResult> outcome = files.read(request);
    if (outcome.deferred)
        return std::nullopt;
    if (!outcome.ok())
        return failure(outcome.error);
    const FileReadResult &read = *outcome.value;
    // The content is serialized from its UTF-8 bytes; the value holds it for the outputSchema
    // check only, as Latin-1 (one copy, the form QJsonValue keeps ASCII in) when it is ASCII.
    const QByteArray &text = read.contentUtf8;
    const QJsonValue content = QtPrivate::isAscii(QLatin1StringView(text))
            ? QJsonValue(QLatin1StringView(text))
            : QJsonValue(QString::fromUtf8(text));
    QJsonObject value{{QLatin1String("success"), true},
                      {QLatin1String("path"), read.path},
                      {QLatin1String("content"), content},
                      {QLatin1String("size"), double(read.size)},
                      {QLatin1String("modified"), read.modified}};
    if (!read.sha256.isEmpty())
        value.insert(QLatin1String("sha256"), read.sha256);
    if (read.totalLines) {
        value.insert(QLatin1String("total_lines"), double(*read.totalLines));
        value.insert(QLatin1String("end_of_file"), read.endOfFile);
    }
    return Completion{ToolResult::structured(value, {{QStringLiteral("content"), text}}), {}};
}

Completion writeFile(FileManager &files, ResourceRegistry *resources, const QJsonObject &arguments)
{
    FileWriteRequest request;
    request.path = tools::stringArgument(arguments, "path");
    request.content = tools::stringArgument(arguments, "content");
    request.encoding = tools::stringArgument(arguments, "encoding", request.encoding);
    if (const QJsonValue ifMatch = arguments.value(QLatin1String("if_match")); ifMatch.isString())
        request.ifMatch = ifMatch.toString();
    const FileOutcome<FileWriteResult> outcome = files.write(request);
    if (!outcome.ok())
        return failure(outcome.error);
    const FileWriteResult &written = *outcome.value;
    return {ToolResult::structured({{QLatin1String("success"), true},
                                    {QLatin1String("path"), written.path},
                                    {QLatin1String("size"), double(written.size)},
                                    {QLatin1String("sha256"), written.sha256},
                                    {QLatin1String("created"), written.created}}),
            announce(resources, files, {written.path}, written.created)};
}

Completion listFiles(FileManager &files, const QJsonObject &arguments)
{
    FileListRequest request;
    request.path = tools::stringArgument(arguments, "path", request.path);
    request.pattern = tools::stringArgument(arguments, "pattern");
    request.recursive = tools::boolArgument(arguments, "recursive");
    const FileOutcome<FileListResult> outcome = files.list(request);
    if (!outcome.ok())
        return failure(outcome.error);
    QJsonArray entries;
    for (const FileListEntry &entry : outcome.value->entries) {
        entries.append(QJsonObject{{QLatin1String("name"), entry.name},
                                   {QLatin1String("path"), entry.path},
                                   {QLatin1String("is_directory"), entry.isDirectory},
                                   {QLatin1String("is_symlink"), entry.isSymlink},
                                   {QLatin1String("size"),
                                    entry.size ? QJsonValue(double(*entry.size)) : QJsonValue()},
                                   {QLatin1String("modified"), entry.modified}});
    }
    return {ToolResult::structured({{QLatin1String("success"), true},
                                    {QLatin1String("path"), outcome.value->path},
                                    {QLatin1String("entries"), entries},
                                    {QLatin1String("truncated"), outcome.value->truncated}}),
            {}};
}

Completion deleteFile(FileManager &files, ResourceRegistry *resources, const QJsonObject &arguments)
{
    const FileOutcome<FileDeleteResult> outcome =
            files.remove(tools::stringArgument(arguments, "path"));
    if (!outcome.ok())
        return failure(outcome.error);
    return {ToolResult::structured({{QLatin1String("success"), true},
                                    {QLatin1String("path"), outcome.value->path}}),
            announce(resources, files, {outcome.value->path}, true)};
}

Completion moveFile(FileManager &files, ResourceRegistry *resources, const QJsonObject &arguments)
{
    FileMoveRequest request;
    request.source = tools::stringArgument(arguments, "source");
    request.destination = tools::stringArgument(arguments, "destination");
    request.overwrite = tools::boolArgument(arguments, "overwrite");
    const FileOutcome<FileMoveResult> outcome = files.move(request);
    if (!outcome.ok())
        return failure(outcome.error);
    const FileMoveResult &moved = *outcome.value;
    return {ToolResult::structured({{QLatin1String("success"), true},
                                    {QLatin1String("source"), moved.source},
                                    {QLatin1String("destination"), moved.destination}}),
            announce(resources, files, {moved.source, moved.destination}, true)};
}

Completion editFile(FileManager &files, ResourceRegistry *resources, const QJsonObject &arguments)
{
    FileEditRequest request;
    request.path = tools::stringArgument(arguments, "path");
    for (const QJsonValue &edit : arguments.value(QLatin1String("edits")).toArray()) {
        const QJsonObject object = edit.toObject();
        request.edits.append({tools::stringArgument(object, "old_text"),
                              tools::stringArgument(object, "new_text")});
    }
    request.dryRun = tools::boolArgument(arguments, "dry_run");
    if (const QJsonValue ifMatch = arguments.value(QLatin1String("if_match")); ifMatch.isString())
        request.ifMatch = ifMatch.toString();
    const FileOutcome<FileEditResult> outcome = cmcp::editFile(files, request);
    if (!outcome.ok())
        return failure(outcome.error);
    const FileEditResult &edited = *outcome.value;
    QJsonArray applied;
    for (const AppliedEdit &edit : edited.applied)
        applied.append(
                QJsonObject{{QLatin1String("line"), double(edit.line)},
                            {QLatin1String("match"),
                             edit.exact ? QLatin1String("exact") : QLatin1String("whitespace")}});
    QJsonObject value{
            {QLatin1String("success"), true},         {QLatin1String("path"), edited.path},
            {QLatin1String("diff"), edited.diff},     {QLatin1String("written"), edited.written},
            {QLatin1String("sha256"), edited.sha256}, {QLatin1String("edits"), applied}};
    const ToolResult result = ToolResult::structured(value);
    if (!edited.written)
        return {result, {}};
    return {result, announce(resources, files, {edited.path}, false)};
}

Completion searchFiles(const FileManager &files, const QJsonObject &arguments)
{
    FileSearchRequest request;
    request.pattern = tools::stringArgument(arguments, "pattern");
    request.path = tools::stringArgument(arguments, "path", request.path);
    request.glob = tools::stringArgument(arguments, "glob");
    request.regex = tools::boolArgument(arguments, "regex");
    request.ignoreCase = tools::boolArgument(arguments, "ignore_case");
    request.maxResults =
            int(tools::integerArgument(arguments, "max_results").value_or(request.maxResults));
    const std::chrono::seconds timeLimit = files.options()->searchTimeLimit;
    FileSearchLimits limits;
    limits.timeLimit = timeLimit;
    const FileOutcome<FileSearchResult> outcome = cmcp::searchFiles(files, request, limits);
    if (!outcome.ok())
        return failure(outcome.error);
    const FileSearchResult &found = *outcome.value;
    if (found.truncatedBy == u"time" && found.matches.isEmpty())
        return failure(QStringLiteral("file_search reached its time limit of %1 s "
                                      "(FILE_SEARCH_SECONDS) after %2 file(s) without a match: "
                                      "narrow path or glob, or simplify the pattern (nested "
                                      "repetition such as (a+)+ backtracks without end)")
                               .arg(timeLimit.count())
                               .arg(found.filesScanned));
    QJsonArray matches;
    for (const FileSearchMatch &match : found.matches)
        matches.append(QJsonObject{{QLatin1String("path"), match.path},
                                   {QLatin1String("line"), double(match.line)},
                                   {QLatin1String("column"), double(match.column)},
                                   {QLatin1String("text"), match.text}});
    QJsonObject value{{QLatin1String("success"), true},
                      {QLatin1String("path"), found.path},
                      {QLatin1String("matches"), matches},
                      {QLatin1String("truncated"), found.truncated},
                      {QLatin1String("files_scanned"), double(found.filesScanned)},
                      {QLatin1String("skipped_binary"), double(found.skippedBinary)},
                      {QLatin1String("skipped_large"), double(found.skippedLarge)}};
    if (found.truncated)
        value.insert(QLatin1String("truncated_by"), found.truncatedBy);
    return {ToolResult::structured(value), {}};
}

using Operation = std::function<Completion(FileManager &files, const QJsonObject &arguments)>;
using CheapOperation =
        std::function<std::optional<Completion>(FileManager &files, const QJsonObject &arguments)>;

// The calling session's FileManager is chosen on the event loop's thread; the work runs on a
// worker with its own reference to it, unless the cheap attempt already did it on the loop.
ToolDefinition fileTool(ToolWorkers *runner, SessionFileManagers *managers, const char *name,
                        const char *title, const char *description, QJsonObject input,
                        QJsonObject output, ToolAnnotations annotations, Operation operation,
                        CheapOperation cheapAttempt = {})
{
    return tools::makeTool(
            name, title, description, tools::withWorkspaceArgument(std::move(input)),
            std::move(output), annotations,
            [runner, managers, operation, cheapAttempt](const std::shared_ptr<ToolCall> &call) {
                QString error;
                std::shared_ptr<FileManager> files = managers->forCall(*call, &error);
                if (!files) {
                    call->finish(failure(error).result);
                    return;
                }
                const QJsonObject arguments = call->arguments();
                ToolWorkers::CheapAttempt attempt;
                if (cheapAttempt)
                    attempt = [cheapAttempt, files, arguments] {
                        return cheapAttempt(*files, arguments);
                    };
                runner->run(
                        call,
                        [operation, files, arguments] { return operation(*files, arguments); },
                        attempt);
            });
}

} // namespace

bool registerFileTools(const ToolFamily &family, QString *error)
{
    McpServer &server = family.server;
    const Settings &settings = family.settings;
    LiveSettings *live = family.live;
    const Workspace workspace = Workspace::fromSettings(settings);
    if (!workspace.ensureExists(error))
        return false;
    const std::shared_ptr<const ContainedRoot> root =
            ContainedRoot::open(workspace.path(), ContainedRoot::Resolver::Openat2, error);
    if (!root)
        return false;
    spdlog::info(
            "files: workspace {} (group {}), paths resolved by {}", workspace.path().toStdString(),
            workspace.ownershipApplies() ? std::to_string(workspace.sandboxGid()) : "unchanged",
            root->resolver() == ContainedRoot::Resolver::Openat2
                    ? "openat2 RESOLVE_BENEATH"
                    : "a per-component O_NOFOLLOW walk (no openat2: symbolic links are not "
                      "followed)");

    auto options = std::make_shared<LiveSnapshot<FileOptions>>(
            std::make_shared<const FileOptions>(FileOptions::fromSettings(settings)));
    if (live)
        live->add({QStringLiteral("FILE_MAX_SIZE_MB"), QStringLiteral("FILE_ALLOWED_EXTENSIONS"),
                   QStringLiteral("FILE_ALLOW_NO_EXTENSION"),
                   QStringLiteral("FILE_LIST_MAX_ENTRIES"), QStringLiteral("FILE_SEARCH_SECONDS")},
                  [options](const Settings &changed, QString *) -> LiveSettings::Install {
                      auto next = std::make_shared<const FileOptions>(
                              FileOptions::fromSettings(changed));
                      return [options, next] { options->replace(next); };
                  });
    auto shared = std::make_shared<FileManager>(workspace, root, options);
    auto *managers = new SessionFileManagers(SessionWorkspaces::of(server, settings), options,
                                             shared, &server);
    ToolWorkers *runner = &ToolWorkers::of(server);
    // A file's change is told to the sessions of its workspace only (announce).
    ResourceRegistry *resources = &server.resources();
    ToolRegistry &tools = server.tools();
    tools.add(fileTool(
            runner, managers, "file_read", "Read a file",
            "Reads a file of the workspace: content, size, modified and sha256 (file_write's "
            "if_match). offset/limit read a window of lines; encoding base64 reads binary.",
            fileschemas::readInput(), fileschemas::readOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            [](FileManager &f, const QJsonObject &a) { return *readFile(f, a, std::nullopt); },
            [](FileManager &f, const QJsonObject &a) { return readFile(f, a, kCheapReadBytes); }));
    tools.add(fileTool(
            runner, managers, "file_write", "Write a file",
            "Writes a whole file of the workspace atomically, creating missing parent "
            "directories; if_match guards against concurrent changes.",
            fileschemas::writeInput(), fileschemas::writeOutput(),
            {.readOnly = false, .destructive = true, .idempotent = true, .openWorld = false},
            [resources](FileManager &f, const QJsonObject &a) {
                return writeFile(f, resources, a);
            }));
    tools.add(fileTool(
            runner, managers, "file_list", "List a directory",
            "Lists a directory of the workspace: name, path, is_directory, size and modified "
            "of each entry. Symbolic links are listed, not followed.",
            fileschemas::listInput(), fileschemas::listOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            [](FileManager &f, const QJsonObject &a) { return listFiles(f, a); }));
    tools.add(fileTool(
            runner, managers, "file_delete", "Delete a file",
            "Deletes a file, symbolic link (not its target) or empty directory of the "
            "workspace.",
            fileschemas::deleteInput(), fileschemas::deleteOutput(),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [resources](FileManager &f, const QJsonObject &a) {
                return deleteFile(f, resources, a);
            }));
    tools.add(fileTool(
            runner, managers, "file_move", "Move or rename a file",
            "Moves or renames a file or directory within the workspace, creating missing "
            "parent directories.",
            fileschemas::moveInput(), fileschemas::moveOutput(),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [resources](FileManager &f, const QJsonObject &a) {
                return moveFile(f, resources, a);
            }));
    tools.add(fileTool(
            runner, managers, "file_edit", "Edit a file",
            "Replaces text in a UTF-8 file of the workspace and returns a unified diff. Each "
            "old_text must occur exactly once. Prefer it to rewriting a file with file_write.",
            fileschemas::editInput(), fileschemas::editOutput(),
            {.readOnly = false, .destructive = true, .idempotent = false, .openWorld = false},
            [resources](FileManager &f, const QJsonObject &a) {
                return editFile(f, resources, a);
            }));
    tools.add(fileTool(
            runner, managers, "file_search", "Search file contents",
            "Finds the lines of the workspace's text files that contain pattern (literal, or "
            "a regular expression with regex: true): path, line, column and text of each. "
            "Binary files and symbolic links are skipped.",
            fileschemas::searchInput(), fileschemas::searchOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = false},
            [](FileManager &f, const QJsonObject &a) { return searchFiles(f, a); }));
    workspaceresources::registerOn(server.resources(), managers);
    return true;
}

} // namespace cmcp
