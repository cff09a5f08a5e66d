#pragma once

#include "workspace/Workspace.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>

namespace cmcp {

struct Checkpoint
{
    QString id; // "cp_" and 32 hex digits
    QString label; // the caller's words, may be empty
    QDateTime created; // UTC
};

// The checkpoints of one workspace on the workspace volume: each a read-only btrfs snapshot of
// the workspace's subvolume, made in one system call whatever the tree's size, sharing every
// extent with the workspace until either side changes (copy on write). They live beside the
// workspace in <parent>/.checkpoints/<workspace name>/, root's and 0700: no job reaches them.
//
// Every step that could be cut short by a crash leaves a name start-up removes
// (removeLeftovers): a snapshot is made as <id>.partial and renamed once its description is
// on disk; a restore builds <name>.restoring beside the workspace and swaps it in with one
// atomic rename (RENAME_EXCHANGE).
class WorkspaceCheckpoints
{
public:
    // At most `maxCount` checkpoints (SANDBOX_WORKSPACE_CHECKPOINTS_MAX): each can keep up to
    // the workspace's quota alive once the files change, so the count bounds what one
    // workspace holds on the volume to (maxCount + 1) times its quota.
    explicit WorkspaceCheckpoints(Workspace workspace, int maxCount = 0);

    // Empty when the workspace can have checkpoints (a subvolume of the workspace volume), else
    // why not.
    QString unsupportedReason() const;

    std::optional<Checkpoint> create(const QString &label, QString *error) const;
    // Oldest first; an empty list when there are none.
    std::optional<QList<Checkpoint>> list(QString *error) const;
    std::optional<Checkpoint> find(const QString &id, QString *error) const;
    bool remove(const QString &id, QString *error) const;
    // Replaces the workspace by a writable snapshot of the checkpoint `id`, with the
    // workspace's quota. The caller makes sure no job runs in the workspace: a running job
    // keeps the tree it was started in, which this would leave behind.
    bool restore(const QString &id, QString *error) const;
    // The directory of the checkpoint `id`, read-only, for a diff.
    QString pathOf(const QString &id) const;

    // The checkpoints of the workspace at `workspacePath`, all of them (it is being removed).
    static void removeAllOf(const QString &workspacePath);
    // What a crash left half-made in the directory `parent` that holds workspaces: partial
    // snapshots and unfinished restores.
    static void removeLeftovers(const QString &parent);

private:
    QString directory() const;

    const Workspace m_workspace;
    const int m_maxCount;
};

} // namespace cmcp
