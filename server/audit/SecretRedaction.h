#pragma once

#include <QJsonObject>
#include <QStringView>

namespace cmcp::audit {

// The placeholder written instead of a secret's value.
inline constexpr char RedactedValue[] = "[redacted]";

// Whether a key names something secret (token, password, secret, key, authorization, cookie,
// credential...), case-insensitively and anywhere in the name: "api_key", "X-Auth-Token",
// "db_password". It errs on the side of redacting ("keyword" is redacted too).
bool looksLikeSecretKey(QStringView key);

// `arguments` with the value of every secret-looking key replaced by RedactedValue, at any depth
// (objects inside arrays included), whatever the value's type.
QJsonObject redactSecrets(const QJsonObject &arguments);

} // namespace cmcp::audit
