#include "workspace/NamedWorkspaces.h"

#include "common/Settings.h"
#include "mcp/PrincipalProfiles.h"
#include "base/UnguessableId.h"
#include "posix/Btrfs.h"
#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "posix/OwnDirectory.h"
#include "posix/UniqueFd.h"
#include "workspace/DirectoryEntries.h"
#include "workspace/WorkspaceCheckpoints.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

const QString kJson = QStringLiteral(".json");

bool isWorkspaceId(const QString &id)
{
    static const QRegularExpression pattern(QStringLiteral("^ws_[0-9a-f]{32}$"));
    return pattern.match(id).hasMatch();
}

} // namespace

QString NamedWorkspaces::noSuchWorkspace(const QString &nameOrId)
{
    return QStringLiteral("no such workspace: %1 (workspace_list lists yours)").arg(nameOrId);
}

NamedWorkspaces::NamedWorkspaces(const Workspace &pattern, Limits limits)
    : m_directory(pattern.storeDirectory() + QStringLiteral("/named")),
      m_sandboxGid(pattern.sandboxGid()),
      m_owner(pattern.owner()),
      m_defaultQuotaBytes(pattern.quotaBytes()),
      m_limits(limits)
{
}

NamedWorkspaces::Limits NamedWorkspaces::limitsFromSettings(const Settings &settings)
{
    return {int(settings.integer(u"SANDBOX_WORKSPACE_NAMED_MAX")),
            settings.integer(u"SANDBOX_WORKSPACE_NAMED_MAX_MB"),
            settings.integer(u"SANDBOX_WORKSPACE_NAMED_IDLE_SECONDS")};
}

bool NamedWorkspaces::validName(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    return pattern.match(name).hasMatch();
}

int NamedWorkspaces::load()
{
    m_byId.clear();
    const UniqueFd top = openDirectory(m_directory);
    if (!top.isValid())
        return 0;
    WorkspaceCheckpoints::removeLeftovers(m_directory);
    const QList<DirectoryEntry> entries = readDirectory(top.get());
    const auto present = [&entries](const QByteArray &name, bool directory) {
        return std::any_of(entries.cbegin(), entries.cend(), [&](const DirectoryEntry &entry) {
            return entry.name == name && S_ISDIR(entry.status.st_mode) == directory;
        });
    };
    for (const DirectoryEntry &entry : entries) {
        const QString fileName = QFile::decodeName(entry.name);
        if (S_ISDIR(entry.status.st_mode)) {
            if (isWorkspaceId(fileName) && !present(entry.name + kJson.toUtf8(), false)) {
                spdlog::info("workspaces: removing {}/{}, a named workspace never described "
                             "(a creation cut short) or half deleted",
                             m_directory.toStdString(), fileName.toStdString());
                removeHalfMade(entry.name);
            }
            continue;
        }
        const QString id = fileName.section(QLatin1Char('.'), 0, 0);
        if (!isWorkspaceId(id))
            continue;
        if (fileName != id + kJson) {
            // A description's temporary copy, never renamed into place.
            ::unlinkat(top.get(), entry.name.constData(), 0);
            continue;
        }
        if (!present(QFile::encodeName(id), true)) {
            ::unlinkat(top.get(), entry.name.constData(), 0);
            continue;
        }
        QFile file(m_directory + QLatin1Char('/') + fileName);
        const QJsonObject json = file.open(QIODevice::ReadOnly)
                ? QJsonDocument::fromJson(file.readAll()).object()
                : QJsonObject();
        const QString name = json.value(QLatin1String("name")).toString();
        const QString owner = json.value(QLatin1String("owner")).toString();
        if (!validName(name) || owner.isEmpty()) {
            spdlog::warn("workspaces: {} is not a description of a named workspace; left alone",
                         file.fileName().toStdString());
            continue;
        }
        const qint64 quotaBytes = qint64(json.value(QLatin1String("quota_bytes")).toDouble());
        const QDateTime created = QDateTime::fromString(
                json.value(QLatin1String("created")).toString(), Qt::ISODateWithMs);
        const QDateTime lastUsed = QDateTime::fromString(
                json.value(QLatin1String("last_used")).toString(), Qt::ISODateWithMs);
        m_byId.insert(id,
                      {id, name, owner, created,
                       Workspace(m_directory + QLatin1Char('/') + id, m_sandboxGid,
                                 m_defaultQuotaBytes > 0 ? quotaBytes : 0, m_owner),
                       lastUsed.isValid() ? lastUsed : created});
        m_lastUsedOnDisk.insert(id, m_byId.value(id).lastUsed);
    }
    return int(m_byId.size());
}

void NamedWorkspaces::removeHalfMade(const QByteArray &name) const
{
    Workspace::removeWithCheckpoints(m_directory + QLatin1Char('/') + QFile::decodeName(name));
}

std::optional<qint64> NamedWorkspaces::admit(const Principal &owner, const QString &name,
                                             std::optional<qint64> sizeMb, QString *error) const
{
    if (!validName(name)) {
        *error = QStringLiteral("invalid workspace name '%1': 1 to 64 letters, digits, '.', '_' "
                                "or '-', starting with a letter or digit")
                         .arg(name);
        return std::nullopt;
    }
    const QList<NamedWorkspace> own = of(owner);
    if (std::any_of(own.cbegin(), own.cend(),
                    [&name](const NamedWorkspace &each) { return each.name == name; })) {
        *error = QStringLiteral("you already have a workspace named '%1'").arg(name);
        return std::nullopt;
    }
    const std::shared_ptr<const Profile> profile =
            m_profiles ? m_profiles->profileOf(owner.name()) : nullptr;
    if (profile && profile->namedWorkspaces) {
        if (own.size() >= *profile->namedWorkspaces) {
            *error = QStringLiteral("principal '%1' has %2 named workspaces, as many as its "
                                    "profile '%3' allows (named_workspaces): delete one first "
                                    "(workspace_delete)")
                             .arg(owner.name())
                             .arg(own.size())
                             .arg(profile->name);
            return std::nullopt;
        }
    } else if (own.size() >= m_limits.perPrincipal) {
        *error = QStringLiteral("principal '%1' has %2 named workspaces, as many as "
                                "SANDBOX_WORKSPACE_NAMED_MAX allows: delete one first "
                                "(workspace_delete)")
                         .arg(owner.name())
                         .arg(own.size());
        return std::nullopt;
    }
    // A quota of 0 bytes means none at all to the volume: a size below 1 must never reach it.
    if (sizeMb && *sizeMb < 1) {
        *error = QStringLiteral("size_mb %1 is less than 1").arg(*sizeMb);
        return std::nullopt;
    }
    const bool profileSize = profile && profile->namedWorkspaceMb;
    const qint64 maxQuotaMb = profileSize ? *profile->namedWorkspaceMb : m_limits.maxQuotaMb;
    if (sizeMb && *sizeMb > maxQuotaMb) {
        *error = profileSize
                ? QStringLiteral("size_mb %1 is more than profile '%2' allows "
                                 "(named_workspace_mb %3)")
                          .arg(*sizeMb)
                          .arg(profile->name)
                          .arg(maxQuotaMb)
                : QStringLiteral("size_mb %1 is more than SANDBOX_WORKSPACE_NAMED_MAX_MB (%2)")
                          .arg(*sizeMb)
                          .arg(maxQuotaMb);
        return std::nullopt;
    }
    if (!quotaEnforced())
        return 0;
    return std::min(sizeMb.value_or(m_defaultQuotaBytes >> 20), maxQuotaMb) << 20;
}

bool NamedWorkspaces::ensureDirectory(QString *error) const
{
    // By descriptor: a link planted at its name would have root chmod whatever it names.
    QString why;
    if (openOwnDirectory(m_directory, 0711, &why).isValid())
        return true;
    *error = QStringLiteral("cannot create the directory of named workspaces: %1").arg(why);
    return false;
}

std::optional<NamedWorkspace> NamedWorkspaces::complete(NamedWorkspace made, QString *error)
{
    // Makes the directory (or, for a fork's snapshot, sets its quota) and gives its top to the
    // sandbox group; the description comes last.
    if (!made.workspace.ensureExists(error) || !describe(made, error)) {
        removeHalfMade(QFile::encodeName(made.id));
        return std::nullopt;
    }
    return made;
}

bool NamedWorkspaces::describe(const NamedWorkspace &workspace, QString *error)
{
    QSaveFile description(m_directory + QLatin1Char('/') + workspace.id + kJson);
    const QJsonObject json{
            {QStringLiteral("name"), workspace.name},
            {QStringLiteral("owner"), workspace.owner},
            {QStringLiteral("created"), workspace.created.toString(Qt::ISODateWithMs)},
            {QStringLiteral("quota_bytes"), double(workspace.workspace.quotaBytes())}};
    if (!description.open(QIODevice::WriteOnly)
        || !description.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)
        || description.write(QJsonDocument(json).toJson(QJsonDocument::Compact)) < 0
        || !description.commit()) {
        *error = QStringLiteral("cannot record the workspace '%1': %2")
                         .arg(workspace.name, description.errorString());
        return false;
    }
    const UniqueFd top = openDirectory(m_directory);
    if (top.isValid())
        fsyncDirectoryAt(top.get(), ".");
    m_byId.insert(workspace.id, workspace);
    m_lastUsedOnDisk.insert(workspace.id, workspace.lastUsed);
    return true;
}

void NamedWorkspaces::touch(const QString &id)
{
    const auto found = m_byId.find(id);
    if (found == m_byId.end())
        return;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    found->lastUsed = now;
    if (m_lastUsedOnDisk.value(id).secsTo(now) < 60)
        return;
    if (QString error; !describe(*found, &error))
        spdlog::warn("workspaces: {}", error.toStdString());
}

QList<NamedWorkspace> NamedWorkspaces::idle() const
{
    QList<NamedWorkspace> unused;
    if (m_limits.idleSeconds <= 0)
        return unused;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (const NamedWorkspace &each : m_byId) {
        if (each.lastUsed.msecsTo(now) > m_limits.idleSeconds * 1000)
            unused.append(each);
    }
    return unused;
}

std::optional<NamedWorkspace> NamedWorkspaces::create(const Principal &owner, const QString &name,
                                                      std::optional<qint64> sizeMb, QString *error)
{
    const std::optional<qint64> quotaBytes = admit(owner, name, sizeMb, error);
    if (!quotaBytes)
        return std::nullopt;
    if (!ensureDirectory(error))
        return std::nullopt;
    const QString id = unguessableId("ws_");
    const QDateTime now = QDateTime::currentDateTimeUtc();
    return complete(
            {id, name, owner.name(), now,
             Workspace(m_directory + QLatin1Char('/') + id, m_sandboxGid, *quotaBytes, m_owner),
             now},
            error);
}

std::optional<NamedWorkspace> NamedWorkspaces::fork(const Principal &owner, const QString &name,
                                                    const QString &checkpointPath,
                                                    std::optional<qint64> sizeMb, QString *error)
{
    if (!quotaEnforced()) {
        *error = QStringLiteral("a fork needs the workspace volume (SANDBOX_WORKSPACE_QUOTA_MB > "
                                "0, cmcpd as root, btrfs)");
        return std::nullopt;
    }
    const std::optional<qint64> quotaBytes = admit(owner, name, sizeMb, error);
    if (!quotaBytes)
        return std::nullopt;
    if (!ensureDirectory(error))
        return std::nullopt;
    const UniqueFd source = openDirectory(checkpointPath);
    const UniqueFd target = openDirectory(m_directory);
    if (!source.isValid() || !target.isValid()) {
        *error = QStringLiteral("cannot open the checkpoint or %1: %2")
                         .arg(m_directory, errnoText(errno));
        return std::nullopt;
    }
    const QString id = unguessableId("ws_");
    if (const int failed =
                btrfs::snapshot(source.get(), target.get(), QFile::encodeName(id), false)) {
        *error = QStringLiteral("cannot snapshot the checkpoint: %1").arg(errnoText(failed));
        return std::nullopt;
    }
    const QDateTime now = QDateTime::currentDateTimeUtc();
    return complete(
            {id, name, owner.name(), now,
             Workspace(m_directory + QLatin1Char('/') + id, m_sandboxGid, *quotaBytes, m_owner),
             now},
            error);
}

std::optional<NamedWorkspace> NamedWorkspaces::find(const Principal &owner, const QString &nameOrId,
                                                    QString *error) const
{
    if (const auto byId = m_byId.constFind(nameOrId);
        byId != m_byId.cend() && byId->owner == owner.name())
        return *byId;
    for (const NamedWorkspace &each : m_byId) {
        if (each.owner == owner.name() && each.name == nameOrId)
            return each;
    }
    *error = noSuchWorkspace(nameOrId);
    return std::nullopt;
}

QList<NamedWorkspace> NamedWorkspaces::of(const Principal &owner) const
{
    QList<NamedWorkspace> own;
    for (const NamedWorkspace &each : m_byId) {
        if (each.owner == owner.name())
            own.append(each);
    }
    std::sort(own.begin(), own.end(),
              [](const NamedWorkspace &a, const NamedWorkspace &b) { return a.name < b.name; });
    return own;
}

QList<NamedWorkspace> NamedWorkspaces::all() const
{
    QList<NamedWorkspace> everyone(m_byId.cbegin(), m_byId.cend());
    std::sort(everyone.begin(), everyone.end(),
              [](const NamedWorkspace &a, const NamedWorkspace &b) {
                  return std::tie(a.owner, a.name) < std::tie(b.owner, b.name);
              });
    return everyone;
}

std::optional<NamedWorkspace> NamedWorkspaces::byId(const QString &id) const
{
    if (const auto found = m_byId.constFind(id); found != m_byId.cend())
        return *found;
    return std::nullopt;
}

bool NamedWorkspaces::forget(const NamedWorkspace &workspace, QString *error)
{
    const QString description = m_directory + QLatin1Char('/') + workspace.id + kJson;
    if (::unlink(QFile::encodeName(description).constData()) != 0 && errno != ENOENT) {
        *error = QStringLiteral("cannot delete the workspace '%1': %2")
                         .arg(workspace.name, errnoText(errno));
        return false;
    }
    if (const UniqueFd top = openDirectory(m_directory); top.isValid())
        fsyncDirectoryAt(top.get(), ".");
    m_byId.remove(workspace.id);
    m_lastUsedOnDisk.remove(workspace.id);
    return true;
}

} // namespace cmcp
