#pragma once

#include "managers/FileOptions.h"
#include "common/LiveSnapshot.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <memory>

namespace cmcp {

class FileManager;
class SessionWorkspaces;

// The FileManager each session's file tools and resources use: the one of the shared workspace,
// or in per-session mode one per session, opened (with its kernel-contained root) on the
// session's first use and dropped when its workspace is removed.
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

private:
    SessionWorkspaces &m_workspaces;
    const std::shared_ptr<const LiveSnapshot<FileOptions>> m_options;
    const std::shared_ptr<FileManager> m_shared;
    QHash<QString, std::shared_ptr<FileManager>> m_bySession;
};

} // namespace cmcp
