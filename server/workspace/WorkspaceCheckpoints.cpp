#include "workspace/WorkspaceCheckpoints.h"

#include "base/UnguessableId.h"
#include "posix/Btrfs.h"
#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "posix/OwnDirectory.h"
#include "posix/UniqueFd.h"
#include "workspace/DirectoryEntries.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>

namespace cmcp {

namespace {

const QString kCheckpoints = QStringLiteral(".checkpoints");
const QByteArray kPartial = ".partial";
const QByteArray kRestoring = ".restoring";

bool isCheckpointId(const QString &id)
{
    static const QRegularExpression pattern(QStringLiteral("^cp_[0-9a-f]{32}$"));
    return pattern.match(id).hasMatch();
}

QString noSuchCheckpoint(const QString &id)
{
    return QStringLiteral("no such checkpoint: %1 (workspace_checkpoints lists this "
                          "workspace's)")
            .arg(id);
}

// Deletes the subvolume `name` of `parentFd`, or the plain tree a failed step left.
void deleteEntry(int parentFd, const QByteArray &name)
{
    if (const int error = btrfs::deleteSubvolume(parentFd, name); error != 0 && error != ENOENT)
        spdlog::warn("workspaces: cannot delete the subvolume {}: {}", name.toStdString(),
                     errnoText(error).toStdString());
}

} // namespace

WorkspaceCheckpoints::WorkspaceCheckpoints(Workspace workspace, int maxCount)
    : m_workspace(std::move(workspace)),
      m_maxCount(maxCount)
{
}

QString WorkspaceCheckpoints::directory() const
{
    const QFileInfo info(m_workspace.path());
    return info.absolutePath() + QLatin1Char('/') + kCheckpoints + QLatin1Char('/')
            + info.fileName();
}

QString WorkspaceCheckpoints::pathOf(const QString &id) const
{
    return directory() + QLatin1Char('/') + id;
}

QString WorkspaceCheckpoints::unsupportedReason() const
{
    if (m_workspace.quotaBytes() <= 0)
        return QStringLiteral("checkpoints need the workspace volume (SANDBOX_WORKSPACE_QUOTA_MB "
                              "> 0, cmcpd as root, btrfs): this workspace is a plain directory");
    return {};
}

std::optional<Checkpoint> WorkspaceCheckpoints::create(const QString &label, QString *error) const
{
    const std::optional<QList<Checkpoint>> existing = list(error);
    if (!existing)
        return std::nullopt;
    if (existing->size() >= m_maxCount) {
        *error = QStringLiteral("the workspace has %1 checkpoints, as many as "
                                "SANDBOX_WORKSPACE_CHECKPOINTS_MAX allows: delete one first "
                                "(workspace_checkpoint_delete)")
                         .arg(existing->size());
        return std::nullopt;
    }
    // Both levels root's and 0700, each made and checked through a descriptor: a link planted at
    // either name is refused rather than given that mode in place of what it names.
    const QString dir = directory();
    const QString checkpointsRoot = QFileInfo(dir).absolutePath();
    QString why;
    const UniqueFd checkpointsRootFd = openOwnDirectory(checkpointsRoot, 0700, &why);
    const UniqueFd target = checkpointsRootFd.isValid()
            ? openOwnDirectoryAt(checkpointsRootFd.get(),
                                 QFile::encodeName(QFileInfo(dir).fileName()), 0700, dir, &why)
            : UniqueFd();
    if (!target.isValid()) {
        *error = QStringLiteral("cannot create the checkpoint directory: %1").arg(why);
        return std::nullopt;
    }
    const UniqueFd source = openDirectory(m_workspace.path());
    if (!source.isValid() || !target.isValid()) {
        *error = QStringLiteral("cannot open the workspace or its checkpoints: %1")
                         .arg(errnoText(errno));
        return std::nullopt;
    }
    Checkpoint checkpoint{unguessableId("cp_"), label, QDateTime::currentDateTimeUtc()};
    const QByteArray name = QFile::encodeName(checkpoint.id);
    if (const int failed = btrfs::snapshot(source.get(), target.get(), name + kPartial, true)) {
        *error = QStringLiteral("cannot snapshot the workspace: %1").arg(errnoText(failed));
        return std::nullopt;
    }
    QSaveFile description(dir + QLatin1Char('/') + checkpoint.id + QStringLiteral(".json"));
    const QJsonObject json{
            {QStringLiteral("label"), label},
            {QStringLiteral("created"), checkpoint.created.toString(Qt::ISODateWithMs)}};
    const bool described = description.open(QIODevice::WriteOnly)
            && description.write(QJsonDocument(json).toJson(QJsonDocument::Compact)) >= 0
            && description.commit();
    if (!described
        || ::renameat(target.get(), (name + kPartial).constData(), target.get(), name.constData())
                != 0) {
        *error = QStringLiteral("cannot record the checkpoint: %1")
                         .arg(described ? errnoText(errno) : description.errorString());
        deleteEntry(target.get(), name + kPartial);
        return std::nullopt;
    }
    fsyncDirectoryAt(target.get(), ".");
    return checkpoint;
}

std::optional<QList<Checkpoint>> WorkspaceCheckpoints::list(QString *error) const
{
    if (*error = unsupportedReason(); !error->isEmpty())
        return std::nullopt;
    QList<Checkpoint> found;
    const UniqueFd dir = openDirectory(directory());
    if (!dir.isValid())
        return found; // none made yet
    for (const DirectoryEntry &entry : readDirectory(dir.get())) {
        const QString id = QFile::decodeName(entry.name);
        if (!S_ISDIR(entry.status.st_mode) || !isCheckpointId(id))
            continue;
        QFile file(directory() + QLatin1Char('/') + id + QStringLiteral(".json"));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        found.append({id, json.value(QLatin1String("label")).toString(),
                      QDateTime::fromString(json.value(QLatin1String("created")).toString(),
                                            Qt::ISODateWithMs)});
    }
    std::sort(found.begin(), found.end(),
              [](const Checkpoint &a, const Checkpoint &b) { return a.created < b.created; });
    return found;
}

std::optional<Checkpoint> WorkspaceCheckpoints::find(const QString &id, QString *error) const
{
    const std::optional<QList<Checkpoint>> all = list(error);
    if (!all)
        return std::nullopt;
    for (const Checkpoint &checkpoint : *all) {
        if (checkpoint.id == id)
            return checkpoint;
    }
    *error = noSuchCheckpoint(id);
    return std::nullopt;
}

bool WorkspaceCheckpoints::remove(const QString &id, QString *error) const
{
    if (!find(id, error))
        return false;
    const UniqueFd dir = openDirectory(directory());
    if (const int failed = btrfs::deleteSubvolume(dir.get(), QFile::encodeName(id))) {
        *error = QStringLiteral("cannot delete the checkpoint %1: %2").arg(id, errnoText(failed));
        return false;
    }
    ::unlinkat(dir.get(), QFile::encodeName(id + QStringLiteral(".json")).constData(), 0);
    return true;
}

bool WorkspaceCheckpoints::restore(const QString &id, QString *error) const
{
    if (!find(id, error))
        return false;
    const QFileInfo info(m_workspace.path());
    const UniqueFd parent = openDirectory(info.absolutePath());
    const UniqueFd checkpoint = openDirectory(pathOf(id));
    if (!parent.isValid() || !checkpoint.isValid()) {
        *error = QStringLiteral("cannot open the checkpoint %1: %2").arg(id, errnoText(errno));
        return false;
    }
    const QByteArray name = QFile::encodeName(info.fileName());
    const QByteArray staging = name + kRestoring;
    deleteEntry(parent.get(), staging); // a restore cut short before
    if (const int failed = btrfs::snapshot(checkpoint.get(), parent.get(), staging, false)) {
        *error = QStringLiteral("cannot snapshot the checkpoint %1: %2").arg(id, errnoText(failed));
        return false;
    }
    const UniqueFd restored(::openat(parent.get(), staging.constData(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    const int limited = restored.isValid()
            ? btrfs::limitReferencedBytes(restored.get(), uint64_t(m_workspace.quotaBytes()))
            : errno;
    if (limited != 0
        || ::renameat2(parent.get(), staging.constData(), parent.get(), name.constData(),
                       RENAME_EXCHANGE)
                != 0) {
        *error = QStringLiteral("cannot put the checkpoint %1 in place: %2")
                         .arg(id, errnoText(limited != 0 ? limited : errno));
        deleteEntry(parent.get(), staging);
        return false;
    }
    fsyncDirectoryAt(parent.get(), ".");
    // The tree it replaced, now under the staging name.
    deleteEntry(parent.get(), staging);
    return true;
}

void WorkspaceCheckpoints::removeAllOf(const QString &workspacePath)
{
    const QFileInfo info(workspacePath);
    const UniqueFd checkpoints =
            openDirectory(info.absolutePath() + QLatin1Char('/') + kCheckpoints);
    if (!checkpoints.isValid())
        return;
    const QByteArray name = QFile::encodeName(info.fileName());
    const UniqueFd own(::openat(checkpoints.get(), name.constData(),
                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!own.isValid())
        return;
    for (const DirectoryEntry &entry : readDirectory(own.get())) {
        if (S_ISDIR(entry.status.st_mode))
            deleteEntry(own.get(), entry.name);
        else
            ::unlinkat(own.get(), entry.name.constData(), 0);
    }
    ::unlinkat(checkpoints.get(), name.constData(), AT_REMOVEDIR);
}

void WorkspaceCheckpoints::removeLeftovers(const QString &parent)
{
    const UniqueFd top = openDirectory(parent);
    if (!top.isValid())
        return;
    for (const DirectoryEntry &entry : readDirectory(top.get())) {
        if (entry.name.endsWith(kRestoring)) {
            spdlog::info("workspaces: removing {}/{}, left by a restore cut short",
                         parent.toStdString(), entry.name.toStdString());
            deleteEntry(top.get(), entry.name);
        }
    }
    const UniqueFd checkpoints(::openat(top.get(), QFile::encodeName(kCheckpoints).constData(),
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!checkpoints.isValid())
        return;
    for (const DirectoryEntry &workspace : readDirectory(checkpoints.get())) {
        const UniqueFd own(::openat(checkpoints.get(), workspace.name.constData(),
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!own.isValid())
            continue;
        for (const DirectoryEntry &entry : readDirectory(own.get())) {
            const QByteArray &name = entry.name;
            const bool partial = name.endsWith(kPartial);
            // A description whose snapshot never got its name.
            const bool orphan = name.endsWith(".json")
                    && ::faccessat(own.get(), name.left(name.size() - 5).constData(), F_OK,
                                   AT_SYMLINK_NOFOLLOW)
                            != 0;
            if (partial)
                deleteEntry(own.get(), name);
            else if (orphan)
                ::unlinkat(own.get(), name.constData(), 0);
            if (partial || orphan)
                spdlog::info("workspaces: removed the half-made checkpoint {}", name.toStdString());
        }
    }
}

} // namespace cmcp
