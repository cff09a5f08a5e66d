#pragma once

#include "common/AdminProtocol.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

// The admin channel's records of workspaces: every workspace the daemon keeps (the principals'
// named ones, the shared one, each session's own), and the request that deletes a named one.
namespace cmcp::admin {

// Workspace kinds.
inline constexpr char workspaceNamed[] = "named";
inline constexpr char workspaceShared[] = "shared";
inline constexpr char workspaceSession[] = "session";

// One workspace of a listWorkspaces reply.
struct WorkspaceRecord
{
    QString kind; // workspaceNamed, workspaceShared or workspaceSession
    QString workspaceId; // named: "ws_…", what deleteWorkspace takes; else its directory's name
    QString name; // named: the owner's name for it; session: the session's id; shared: "shared"
    QString owner; // named: the principal; else empty (the shared one is everyone's)
    QString path; // its directory on the host
    // What it holds now, as btrfs accounts it (the last committed transaction); nullopt when the
    // daemon cannot measure it (no workspace volume).
    std::optional<qint64> usedBytes;
    qint64 quotaBytes = 0; // 0: none
    // nullopt when it cannot have checkpoints (no workspace volume).
    std::optional<int> checkpoints;
    QDateTime created; // named only
    QDateTime lastUsed; // named only
    int jobsRunning = 0;

    QJsonObject toJson() const;
    static WorkspaceRecord fromJson(const QJsonObject &object);
};

// listWorkspaces: {} → this.
struct ListWorkspacesResult
{
    static constexpr const char *method = methodListWorkspaces;

    QList<WorkspaceRecord> workspaces; // named first (by owner, then name), then the others

    QJsonObject toJson() const;
    static ListWorkspacesResult fromJson(const QJsonObject &object);
};

// deleteWorkspace: deletes a named workspace as workspace_delete does (its jobs killed first).
struct DeleteWorkspaceParams
{
    static constexpr const char *method = methodDeleteWorkspace;

    QString workspaceId;

    QJsonObject toJson() const;
    // nullopt unless workspaceId is a string that is not empty.
    static std::optional<DeleteWorkspaceParams> fromJson(const QJsonObject &object);
};

struct DeleteWorkspaceResult
{
    QString workspaceId;
    QString name;
    QString owner;
    int jobsKilled = 0;

    QJsonObject toJson() const;
    static DeleteWorkspaceResult fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin
