#pragma once

#include <QString>
#include <QStringView>

// The secret redactor as it was before it learned to skip the patterns a text cannot match: every
// pattern run on every string, every secret word searched for as Qt folds case. The daemon's
// redactor (server/base/SecretRedaction.h) must redact exactly what this one does, which
// tst_secretredaction checks over random and adversarial strings.
namespace cmcp::reference {

QString redactInlineSecrets(QString text, const QString &placeholder);
bool looksLikeSecretKey(QStringView key);

} // namespace cmcp::reference
