#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringView>

// One redactor for everything that stores or shows a tool call's arguments: the audit log and
// the admin channel. Two redactors drifted apart once (the console showed a command's
// "Authorization: Bearer ..." that the audit log masked), so what counts as a secret is decided
// here only; each observer chooses only the placeholder it writes instead.
namespace cmcp {

// Whether a key names something secret, case-insensitively and anywhere in the name: "api_key",
// "X-Auth-Token", "db_password", "passphrase", "sessionKey", "cookie". It errs on the side of
// redacting ("keyword" and "bypass" are redacted too).
bool looksLikeSecretKey(QStringView key);

// `arguments` with the value of every secret-looking key replaced by `placeholder`, whatever the
// value's type, at any depth (objects inside arrays included); in every other string, secrets
// written inline as in a command line ("Authorization: Bearer abc", "PASSWORD=abc",
// "--api-key abc") keep their name and lose their value.
QJsonObject redactSecrets(const QJsonObject &arguments, const QString &placeholder);
// The same for one value.
QJsonValue redactSecrets(const QJsonValue &value, const QString &placeholder);
// The secrets written inline in `text` (as in any string of the arguments) redacted.
QString redactInlineSecrets(QString text, const QString &placeholder);
// The values in `text` assigned to a name that says they are secret, in a shell's, a
// configuration file's or a program's syntax ("DB_PASS=abc", password = "abc"), redacted: one of
// the forms redactInlineSecrets knows.
QString redactSecretAssignments(QString text, const QString &placeholder);

} // namespace cmcp

namespace cmcp::audit {

// The placeholder the audit log writes instead of a secret's value.
inline constexpr char RedactedValue[] = "[redacted]";

using cmcp::looksLikeSecretKey;
// redactSecrets with the audit log's placeholder.
QJsonObject redactSecrets(const QJsonObject &arguments);

} // namespace cmcp::audit

namespace cmcp::admin {

// The placeholder the admin channel shows instead of a secret: a redacted argument, or the value
// of a secret setting.
inline constexpr char MaskedValue[] = "********";

// redactSecrets with the admin channel's placeholder.
QJsonObject redactSecrets(const QJsonObject &arguments);

} // namespace cmcp::admin
