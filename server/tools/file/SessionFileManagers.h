#pragma once

#include "managers/FileOptions.h"
#include "base/LiveSnapshot.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <memory>

namespace cmcp {

class FileManager;
class SessionWorkspaces;
class ToolCall;
class Workspace;

// The FileManager each session's file tools and resources use: the one of the shared workspace,
// or in per-session mode one per session, opened (with its kernel-contained root) on the
// session's first use and dropped when its workspace is removed; a named workspace's likewise. A
// manager holds its workspace's directory open: when a checkpoint's restore puts another tree in
// its place, the manager is opened again on the new one.
class SessionFileManagers : public QObject
{
    Q_OBJECT
public:
    // `options` is shared by every session's manager: one replacement reaches them all.
    SessionFileManagers(SessionWorkspaces &workspaces,
                        std::shared_ptr<const LiveSnapshot<FileOptions>> options,
                        std::shared_ptr<FileManager> shared, QObject *parent = nullptr);

    bool perSession() const;
    // nullptr with a reason when the session's workspace cannot be created or opened.
    std::shared_ptr<FileManager> forSession(const QString &sessionId, QString *error);
    // The manager of the workspace `call` works in (SessionWorkspaces::forCall): a named one's
    // is opened on first use and dropped when the workspace is deleted.
    std::shared_ptr<FileManager> forCall(const ToolCall &call, QString *error);
    // The manager of the named workspace at `workspace` (one of NamedWorkspaces'), opened on
    // first use and dropped when the workspace is deleted.
    std::shared_ptr<FileManager> forNamed(const Workspace &workspace, QString *error);
    SessionWorkspaces &workspaces() { return m_workspaces; }

private:
    void reopen(const QString &path);

    SessionWorkspaces &m_workspaces;
    const std::shared_ptr<const LiveSnapshot<FileOptions>> m_options;
    std::shared_ptr<FileManager> m_shared;
    QHash<QString, std::shared_ptr<FileManager>> m_bySession;
    QHash<QString, std::shared_ptr<FileManager>> m_named; // workspace path -> its manager
};

} // namespace cmcp
