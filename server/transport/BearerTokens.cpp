#include "transport/BearerTokens.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRegularExpression>

namespace cmcp {

namespace {

QByteArray sha256(const QByteArray &bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
}

// Compares without stopping at the first difference.
bool sameDigest(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char difference = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        difference |= static_cast<unsigned char>(a[i] ^ b[i]);
    return difference == 0;
}

} // namespace

void BearerTokens::add(const Principal &principal, const QByteArray &digest)
{
    m_entries.push_back(Entry{principal, digest});
}

bool BearerTokens::addFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("MCP_PRINCIPALS_FILE %1: %2").arg(path, file.errorString());
        return false;
    }
    static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    static const QRegularExpression digest(QStringLiteral("^[0-9a-fA-F]{64}$"));
    int lineNumber = 0;
    while (!file.atEnd()) {
        ++lineNumber;
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const QStringList fields = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        const auto fail = [&](const QString &problem) {
            *error = QStringLiteral("MCP_PRINCIPALS_FILE %1 line %2: %3")
                             .arg(path)
                             .arg(lineNumber)
                             .arg(problem);
            return false;
        };
        if (fields.size() != 2)
            return fail(QStringLiteral("expected `<name> <sha256 of the token in hex>`"));
        if (!name.match(fields[0]).hasMatch())
            return fail(QStringLiteral("the name '%1' is not 1 to 64 of A-Z a-z 0-9 . _ -")
                                .arg(fields[0]));
        if (fields[0] == Principal::local().name())
            return fail(QStringLiteral("the name 'local' is kept for clients without a token"));
        if (!digest.match(fields[1]).hasMatch())
            return fail(QStringLiteral("the digest of '%1' is not 64 hex digits (sha256sum)")
                                .arg(fields[0]));
        for (const Entry &entry : m_entries) {
            if (entry.principal.name() == fields[0])
                return fail(QStringLiteral("the name '%1' appears twice").arg(fields[0]));
        }
        add(Principal(fields[0]), QByteArray::fromHex(fields[1].toLatin1()));
    }
    return true;
}

QSet<QString> BearerTokens::names() const
{
    QSet<QString> names;
    for (const Entry &entry : m_entries)
        names.insert(entry.principal.name());
    return names;
}

std::optional<Principal> BearerTokens::principalFor(const QByteArray &authorization) const
{
    if (!required())
        return Principal::local();
    if (!authorization.startsWith("Bearer "))
        return std::nullopt;
    const QByteArray presented = sha256(authorization.mid(7).trimmed());
    std::optional<Principal> found;
    for (const Entry &entry : m_entries) {
        if (sameDigest(presented, entry.digest) && !found)
            found = entry.principal;
    }
    if (const std::shared_ptr<const PrincipalPolicy> policy =
                m_profiles ? m_profiles->policy() : nullptr) {
        for (const PolicyPrincipal &entry : policy->principals) {
            if (sameDigest(presented, entry.digest) && !found)
                found = Principal(entry.name);
        }
    }
    return found;
}

} // namespace cmcp
