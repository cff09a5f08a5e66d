#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// A rate of tool calls: a token bucket that refills `perSecond` tokens a second and holds at most
// `burst`; each call takes one.
struct CallRate
{
    double perSecond = 0;
    double burst = 0;
    bool operator==(const CallRate &) const = default;
};

// What a profile changes for the principals that name it. Each rule left unset keeps the global
// setting it overrides, so an empty profile is the default one.
struct Profile
{
    QString name;
    std::optional<QStringList> tools; // the tools offered; every other one is as if unknown
    std::optional<CallRate> callRate; // none: calls are not limited
    std::optional<int> maxBackgroundJobs; // JOB_MAX_PER_PRINCIPAL
    std::optional<int> maxForegroundJobs; // JOB_FOREGROUND_MAX_PER_PRINCIPAL
    std::optional<int> namedWorkspaces; // SANDBOX_WORKSPACE_NAMED_MAX
    std::optional<qint64> namedWorkspaceMb; // SANDBOX_WORKSPACE_NAMED_MAX_MB
};

// A principal of the policy file: its name, the SHA-256 of its bearer token and its profile
// (empty: the default one, the global settings).
struct PolicyPrincipal
{
    QString name;
    QByteArray digest;
    QString profile;
};

// MCP_POLICY_FILE: profiles and the principals that use them, in an INI-like text.
//
//   # a comment
//   [profile readers]
//   tools = file_read, file_list
//   call_rate = 5, 10
//   [principal alice]
//   token_sha256 = <64 hex digits>     (or token_file = <a file holding the token>)
//   profile = readers
//
// Every error names the file, the line and the field; a key the parser does not know is one.
struct PrincipalPolicy
{
    QString path;
    QHash<QString, Profile> profiles;
    QList<PolicyPrincipal> principals;

    // Reads and validates the file at `path`; token files are read relative to its directory.
    static std::optional<PrincipalPolicy> read(const QString &path, QString *error);
    // The same for `text`, as if read from `path`.
    static std::optional<PrincipalPolicy> parse(const QByteArray &text, const QString &path,
                                                QString *error);

    // The principal named `name`, or null.
    const PolicyPrincipal *principal(const QString &name) const;
};

} // namespace cmcp
