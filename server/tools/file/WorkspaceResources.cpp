#include "tools/file/WorkspaceResources.h"

#include "managers/FileManager.h"
#include "mcp/JsonRpc.h"
#include "mcp/ResourceRegistry.h"
#include "tools/file/SessionFileManagers.h"
#include "workspace/NamedWorkspaces.h"
#include "workspace/SessionWorkspaces.h"

#include <QStringDecoder>
#include <QUrl>

#include <functional>

namespace cmcp::workspaceresources {

namespace {

const QString scheme = QStringLiteral("file:///");
const QString namedScheme = QStringLiteral("workspace://");

bool isTextual(const QString &mimeType)
{
    return mimeType.startsWith(QLatin1String("text/"))
            || mimeType == QLatin1String("application/json")
            || mimeType == QLatin1String("application/xml")
            || mimeType == QLatin1String("application/yaml");
}

void read(const std::shared_ptr<FileManager> &files, const QString &uri,
          const QHash<QString, QString> &variables, const ResourceReadDone &done)
{
    const QString path =
            QUrl::fromPercentEncoding(variables.value(QStringLiteral("path")).toUtf8());
    const FileOutcome<QByteArray> bytes = files->readBytes(path);
    if (!bytes.ok()) {
        done(ResourceReadResult::failure(jsonrpc::ResourceNotFound, bytes.error));
        return;
    }
    const QString mimeType = mimeTypeFor(path.section(QLatin1Char('/'), -1));
    if (isTextual(mimeType)) {
        QStringDecoder decoder(QStringConverter::Utf8, QStringConverter::Flag::Stateless);
        const QString text = decoder.decode(*bytes.value);
        if (!decoder.hasError()) {
            done(ResourceReadResult::success({QJsonObject{{QLatin1String("uri"), uri},
                                                          {QLatin1String("mimeType"), mimeType},
                                                          {QLatin1String("text"), text}}}));
            return;
        }
    }
    const QString blobType =
            isTextual(mimeType) ? QStringLiteral("application/octet-stream") : mimeType;
    done(ResourceReadResult::success(
            {QJsonObject{{QLatin1String("uri"), uri},
                         {QLatin1String("mimeType"), blobType},
                         {QLatin1String("blob"), QString::fromLatin1(bytes.value->toBase64())}}}));
}

// `uriOf` and `nameOf` turn a path in the workspace into the resource's URI and name.
QList<ResourceDefinition> listFiles(const std::shared_ptr<FileManager> &files,
                                    const std::function<QString(const QString &)> &uriOf,
                                    const std::function<QString(const QString &)> &nameOf)
{
    QList<ResourceDefinition> resources;
    const std::shared_ptr<const FileOptions> options = files->options();
    const FileOutcome<FileListResult> listing =
            files->list(FileListRequest{QStringLiteral("/"), QString(), true});
    if (!listing.ok())
        return resources;
    for (const FileListEntry &entry : listing.value->entries) {
        if (entry.isDirectory || entry.isSymlink || !entry.size
            || !options->checkName(entry.name).isEmpty())
            continue;
        ResourceDefinition resource;
        resource.uri = uriOf(entry.path);
        resource.name = nameOf(entry.path);
        resource.mimeType = mimeTypeFor(entry.name);
        resource.size = entry.size;
        resources.append(resource);
    }
    return resources;
}

QString encodedPath(const QString &workspacePath)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(workspacePath, "/"));
}

// The files of the caller's principal's named workspaces: workspace://<workspace_id>/<path>.
// Only the owner lists or reads them; any other name or id answers as one nobody has.
void registerNamedOn(ResourceRegistry &registry, SessionFileManagers *managers)
{
    ResourceTemplateDefinition namedFile;
    namedFile.uriTemplate = namedScheme + QStringLiteral("{workspace}/{+path}");
    namedFile.name = QStringLiteral("named-workspace-file");
    namedFile.title = QStringLiteral("Named workspace file");
    namedFile.description = QStringLiteral(
            "A file of one of your named workspaces, by its workspace_id (or name) and its path "
            "relative to that workspace's root.");
    namedFile.read = [&registry, managers](const QString &uri,
                                           const QHash<QString, QString> &variables,
                                           ResourceReadDone done) {
        NamedWorkspaces &named = managers->workspaces().named();
        const QString nameOrId =
                QUrl::fromPercentEncoding(variables.value(QStringLiteral("workspace")).toUtf8());
        QString error;
        const std::optional<NamedWorkspace> workspace =
                named.find(registry.callingPrincipal(), nameOrId, &error);
        const std::shared_ptr<FileManager> files =
                workspace ? managers->forNamed(workspace->workspace, &error) : nullptr;
        if (!files) {
            done(ResourceReadResult::failure(
                    workspace ? jsonrpc::InternalError : jsonrpc::ResourceNotFound, error));
            return;
        }
        named.touch(workspace->id);
        read(files, uri, variables, done);
    };
    registry.addTemplate(std::move(namedFile));
    // Each workspace's listing is bounded by FILE_LIST_MAX_ENTRIES and a principal has at most
    // SANDBOX_WORKSPACE_NAMED_MAX of them; resources/list pages through the whole.
    registry.addLister([&registry, managers] {
        QList<ResourceDefinition> resources;
        for (const NamedWorkspace &each :
             managers->workspaces().named().of(registry.callingPrincipal())) {
            QString error;
            const std::shared_ptr<FileManager> files = managers->forNamed(each.workspace, &error);
            if (!files)
                continue;
            const QString id = each.id;
            const QString name = each.name;
            resources += listFiles(
                    files, [&id](const QString &path) { return namedUriFor(id, path); },
                    [&name](const QString &path) { return name + QLatin1Char('/') + path; });
        }
        return resources;
    });
}

} // namespace

QString uriFor(const QString &workspacePath)
{
    return scheme + encodedPath(workspacePath);
}

QString namedUriFor(const QString &workspaceId, const QString &workspacePath)
{
    return namedScheme + workspaceId + QLatin1Char('/') + encodedPath(workspacePath);
}

QString mimeTypeFor(const QString &name)
{
    static const QHash<QString, QString> byExtension{
            {QStringLiteral("txt"), QStringLiteral("text/plain")},
            {QStringLiteral("md"), QStringLiteral("text/markdown")},
            {QStringLiteral("csv"), QStringLiteral("text/csv")},
            {QStringLiteral("json"), QStringLiteral("application/json")},
            {QStringLiteral("py"), QStringLiteral("text/x-python")},
            {QStringLiteral("html"), QStringLiteral("text/html")},
            {QStringLiteral("xml"), QStringLiteral("application/xml")},
            {QStringLiteral("yaml"), QStringLiteral("application/yaml")},
            {QStringLiteral("yml"), QStringLiteral("application/yaml")},
            {QStringLiteral("sh"), QStringLiteral("text/x-shellscript")},
            {QStringLiteral("js"), QStringLiteral("text/javascript")},
            {QStringLiteral("png"), QStringLiteral("image/png")},
            {QStringLiteral("jpg"), QStringLiteral("image/jpeg")},
            {QStringLiteral("jpeg"), QStringLiteral("image/jpeg")},
            {QStringLiteral("gif"), QStringLiteral("image/gif")},
            {QStringLiteral("pdf"), QStringLiteral("application/pdf")},
    };
    const qsizetype dot = name.lastIndexOf(QLatin1Char('.'));
    if (dot <= 0)
        return QStringLiteral("text/plain");
    return byExtension.value(name.mid(dot + 1).toLower(),
                             QStringLiteral("application/octet-stream"));
}

void registerOn(ResourceRegistry &registry, SessionFileManagers *managers)
{
    // The calling session's files; nothing when its workspace cannot be had.
    const auto filesOfCaller = [&registry, managers](QString *error) {
        return managers->forSession(registry.callingSession(), error);
    };
    ResourceTemplateDefinition workspaceFile;
    workspaceFile.uriTemplate = scheme + QStringLiteral("{+path}");
    workspaceFile.name = QStringLiteral("workspace-file");
    workspaceFile.title = QStringLiteral("Workspace file");
    workspaceFile.description =
            QStringLiteral("A file of the workspace (the session's own with "
                           "SANDBOX_WORKSPACE=session), by its path relative to the workspace "
                           "root.");
    workspaceFile.read = [filesOfCaller](const QString &uri,
                                         const QHash<QString, QString> &variables,
                                         ResourceReadDone done) {
        QString error;
        const std::shared_ptr<FileManager> files = filesOfCaller(&error);
        if (!files) {
            done(ResourceReadResult::failure(jsonrpc::InternalError, error));
            return;
        }
        read(files, uri, variables, done);
    };
    registry.addTemplate(std::move(workspaceFile));
    registry.addLister([filesOfCaller] {
        QString error;
        const std::shared_ptr<FileManager> files = filesOfCaller(&error);
        return files ? listFiles(files, uriFor, [](const QString &path) { return path; })
                     : QList<ResourceDefinition>();
    });
    registerNamedOn(registry, managers);
}

} // namespace cmcp::workspaceresources
