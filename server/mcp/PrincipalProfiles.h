#pragma once

#include "mcp/PrincipalPolicy.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>

#include <memory>

namespace cmcp {

// The policy in force (MCP_POLICY_FILE): which profile each principal has, replaced whole by a
// reload that validates, and the call-rate bucket of each principal. Every layer that enforces a
// rule asks it at the moment it enforces, so a reload changes the next call, not only new
// sessions. Without a policy every principal has the default profile: the global settings.
class PrincipalProfiles : public QObject
{
    Q_OBJECT
public:
    explicit PrincipalProfiles(QObject *parent = nullptr) : QObject(parent) { }

    // The tools a profile may name (those the server registered); a policy naming another is
    // refused, as a typo would otherwise hide a tool from its principals for good.
    void setKnownTools(QSet<QString> tools) { m_knownTools = std::move(tools); }
    // Principal names given elsewhere (MCP_AUTH_TOKEN, MCP_PRINCIPALS_FILE): a policy that
    // names one again is refused, lest one name stand for two tokens.
    void setNamesTaken(QSet<QString> names) { m_namesTaken = std::move(names); }
    // Reads `path` and, when it is valid, puts it in force (and keeps it for reload()).
    bool load(const QString &path, QString *error);
    // Reads the file again: the new policy replaces the old only when it is valid; otherwise the
    // old stays and `error` says why. Emits reloaded or reloadFailed. False without a file.
    bool reload(QString *error);
    // Puts `policy` in force, when it names only known tools.
    bool apply(PrincipalPolicy policy, QString *error);

    bool hasPolicy() const { return m_policy != nullptr; }
    QString path() const { return m_path; }
    // The policy in force, to authenticate its principals' tokens; null without one.
    std::shared_ptr<const PrincipalPolicy> policy() const { return m_policy; }

    // The profile of `principal`; null for the default one (the global settings).
    std::shared_ptr<const Profile> profileOf(const QString &principal) const;
    // The name of `principal`'s profile, "default" for the global settings.
    QString profileName(const QString &principal) const;

    // Whether `principal` is offered `tool`.
    bool offersTool(const QString &principal, const QString &tool) const;

    // Takes one call from `principal`'s bucket: 0 when it may go on, else how many milliseconds
    // until a call would be allowed (the bucket is left as it was).
    qint64 takeCall(const QString &principal);

Q_SIGNALS:
    void reloaded(const QString &path, int profiles, int principals);
    void reloadFailed(const QString &path, const QString &error);

private:
    struct Bucket
    {
        double tokens = 0;
        qint64 refilledAtMs = 0;
    };

    QString m_path;
    std::shared_ptr<const PrincipalPolicy> m_policy;
    QSet<QString> m_knownTools;
    QSet<QString> m_namesTaken;
    QHash<QString, Bucket> m_buckets;
    QElapsedTimer m_clock;
};

} // namespace cmcp
