#include "tools/file/SessionFileManagers.h"

#include "workspace/ContainedRoot.h"
#include "managers/FileManager.h"
#include "mcp/ToolCall.h"
#include "workspace/SessionWorkspaces.h"

#include <spdlog/spdlog.h>

namespace cmcp {

SessionFileManagers::SessionFileManagers(SessionWorkspaces &workspaces,
                                         std::shared_ptr<const LiveSnapshot<FileOptions>> options,
                                         std::shared_ptr<FileManager> shared, QObject *parent)
    : QObject(parent),
      m_workspaces(workspaces),
      m_options(std::move(options)),
      m_shared(std::move(shared))
{
    // A session's manager goes when its session has ended; calls still running hold their own
    // reference.
    connect(&workspaces, &SessionWorkspaces::sessionEnded, this,
            [this](const QString &sessionId) { m_bySession.remove(sessionId); });
    connect(&workspaces, &SessionWorkspaces::workspaceReplaced, this,
            [this](const QString &path) { reopen(path); });
    connect(&workspaces, &SessionWorkspaces::workspaceRemoving, this,
            [this](const QString &path) { m_named.remove(path); });
}

void SessionFileManagers::reopen(const QString &path)
{
    m_named.remove(path);
    m_bySession.removeIf(
            [&path](const auto &entry) { return entry.value()->workspace().path() == path; });
    if (m_shared->workspace().path() != path)
        return;
    QString error;
    if (const std::shared_ptr<const ContainedRoot> root =
                ContainedRoot::open(path, m_shared->root().resolver(), &error))
        m_shared = std::make_shared<FileManager>(m_shared->workspace(), root, m_options);
    else
        spdlog::error("workspaces: cannot open the restored workspace {}: {}", path.toStdString(),
                      error.toStdString());
}

bool SessionFileManagers::perSession() const
{
    return m_workspaces.mode() == SessionWorkspaces::Mode::PerSession;
}

std::shared_ptr<FileManager> SessionFileManagers::forSession(const QString &sessionId,
                                                             QString *error)
{
    if (!perSession())
        return m_shared;
    if (auto existing = m_bySession.value(sessionId))
        return existing;
    const std::optional<Workspace> workspace = m_workspaces.forSession(sessionId, error);
    if (!workspace)
        return nullptr;
    const std::shared_ptr<const ContainedRoot> root =
            ContainedRoot::open(workspace->path(), m_shared->root().resolver(), error);
    if (!root)
        return nullptr;
    auto files = std::make_shared<FileManager>(*workspace, root, m_options);
    files->setOwnerSession(sessionId);
    m_bySession.insert(sessionId, files);
    return files;
}

std::shared_ptr<FileManager> SessionFileManagers::forCall(const ToolCall &call, QString *error)
{
    const std::optional<Workspace> workspace = m_workspaces.forCall(call, error);
    if (!workspace)
        return nullptr;
    if (workspace->path() == m_shared->workspace().path())
        return m_shared;
    if (!m_workspaces.named().contains(workspace->path()))
        return forSession(call.sessionId(), error);
    return forNamed(*workspace, error);
}

std::shared_ptr<FileManager> SessionFileManagers::forNamed(const Workspace &workspace,
                                                           QString *error)
{
    if (auto existing = m_named.value(workspace.path()))
        return existing;
    const std::shared_ptr<const ContainedRoot> root =
            ContainedRoot::open(workspace.path(), m_shared->root().resolver(), error);
    if (!root)
        return nullptr;
    auto files = std::make_shared<FileManager>(workspace, root, m_options);
    m_named.insert(workspace.path(), files);
    return files;
}

} // namespace cmcp
