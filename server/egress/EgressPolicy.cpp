#include "egress/EgressPolicy.h"

#include "egress/AddressRanges.h"
#include "common/Settings.h"

#include <algorithm>
#include <arpa/inet.h>

namespace cmcp {

namespace {

constexpr quint16 httpPort = 80;
constexpr quint16 httpsPort = 443;

quint16 defaultPort(const QString &scheme)
{
    return scheme == QLatin1String("https") ? httpsPort : httpPort;
}

bool isHostNameCharacter(QChar c)
{
    return (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9') || c == u'-' || c == u'_'
            || c == u'.';
}

QString privateAdvice(const QString &prefix)
{
    return QStringLiteral("set %1_ALLOW_PRIVATE=true to reach loopback, private, link-local and "
                          "other non-public addresses")
            .arg(prefix);
}

} // namespace

bool EgressTarget::isDefaultPort() const
{
    return port == defaultPort(scheme);
}

QString EgressTarget::authority() const
{
    const QString shownHost =
            host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host;
    return isDefaultPort() ? shownHost : shownHost + QLatin1Char(':') + QString::number(port);
}

std::optional<QString> canonicalHost(const QString &rawHost, std::optional<QHostAddress> *literal)
{
    QString host = rawHost.trimmed();
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
        host = host.mid(1, host.size() - 2);
    if (host.contains(QLatin1Char(':'))) {
        // A scope id (fe80::1%eth0) would pick an interface: never needed for the web.
        QHostAddress address;
        if (host.contains(QLatin1Char('%')) || !address.setAddress(host)
            || address.protocol() != QAbstractSocket::IPv6Protocol)
            return std::nullopt;
        *literal = address;
        return address.toString();
    }
    if (host.endsWith(QLatin1Char('.')))
        host.chop(1);
    if (host.isEmpty())
        return std::nullopt;
    // Every notation inet_aton reads (2130706433, 0x7f.1, 0177.0.0.1, 127.1) is an address,
    // written canonically: the resolver would read it the same way.
    const QByteArray latin1 = host.toLatin1();
    in_addr ipv4{};
    if (QString::fromLatin1(latin1) == host && inet_aton(latin1.constData(), &ipv4) != 0) {
        const QHostAddress address(quint32(ntohl(ipv4.s_addr)));
        *literal = address;
        return address.toString();
    }
    const QString ace = QString::fromLatin1(QUrl::toAce(host)).toLower();
    if (ace.isEmpty() || ace.startsWith(QLatin1Char('.')) || ace.contains(QLatin1String(".."))
        || !std::all_of(ace.cbegin(), ace.cend(), isHostNameCharacter))
        return std::nullopt;
    literal->reset();
    return ace;
}

std::optional<EgressPolicy> EgressPolicy::create(const Options &options, QString *error)
{
    EgressPolicy policy;
    policy.m_allowPrivate = options.allowPrivate;
    policy.m_trustedMayBePrivate = options.trustedMayBePrivate;
    policy.m_settingPrefix = options.settingPrefix;
    for (const QString &written : options.allowedDomains) {
        const QString entry = written.trimmed();
        if (entry.isEmpty())
            continue;
        policy.m_domainsAsWritten.append(entry);
        if (entry == QLatin1String("*")) {
            policy.m_anyDomain = true;
            continue;
        }
        auto invalid = [&] {
            *error = QStringLiteral("WEB_ALLOWED_DOMAINS: '%1' is not *, a host name or "
                                    "*.domain, with an optional :port (no scheme, no path)")
                             .arg(entry);
            return std::nullopt;
        };
        DomainRule rule;
        QString host = entry;
        // host:port, [v6]:port or a bare IPv6 address (several colons, no port).
        const qsizetype colon = host.lastIndexOf(QLatin1Char(':'));
        const bool bracketed = host.startsWith(QLatin1Char('['));
        if (colon > 0 && (bracketed ? host.at(colon - 1) == u']' : host.count(u':') == 1)) {
            bool ok = false;
            const uint port = host.mid(colon + 1).toUInt(&ok);
            if (!ok || port == 0 || port > 65535)
                return invalid();
            rule.port = quint16(port);
            host.truncate(colon);
        }
        if (host.startsWith(QLatin1String("*."))) {
            rule.wildcard = true;
            host = host.mid(2);
        }
        std::optional<QHostAddress> literal;
        const std::optional<QString> canonical = canonicalHost(host, &literal);
        if (!canonical || (rule.wildcard && literal))
            return invalid();
        rule.host = *canonical;
        policy.m_domains.append(rule);
    }
    for (const QUrl &origin : options.trustedOrigins) {
        std::optional<QHostAddress> literal;
        const QString scheme = origin.scheme().toLower();
        const std::optional<QString> host =
                canonicalHost(origin.host(QUrl::FullyEncoded), &literal);
        if (!origin.isValid() || !host
            || (scheme != QLatin1String("http") && scheme != QLatin1String("https"))) {
            *error = QStringLiteral("trusted origin '%1' is not an http or https URL")
                             .arg(origin.toString());
            return std::nullopt;
        }
        policy.m_trusted.append({scheme, *host, quint16(origin.port(defaultPort(scheme)))});
    }
    return policy;
}

std::optional<EgressPolicy> EgressPolicy::fromSettings(const Settings &settings, QString *error)
{
    Options options;
    options.allowedDomains = settings.list(u"WEB_ALLOWED_DOMAINS");
    options.allowPrivate = settings.flag(u"WEB_ALLOW_PRIVATE");
    options.trustedMayBePrivate = settings.flag(u"WEB_SEARCH_ALLOW_PRIVATE");
    for (const char *name : {"WEB_SEARCH_URL", "BRAVE_SEARCH_URL"}) {
        const QString written = settings.text(QString::fromLatin1(name));
        if (written.isEmpty())
            continue;
        // An endpoint is trusted only while its back end is in use: BRAVE_SEARCH_URL has a
        // default, which must not open a host to every web tool when no key is configured.
        if (qstrcmp(name, "BRAVE_SEARCH_URL") == 0
            && settings.text(u"BRAVE_SEARCH_API_KEY").isEmpty())
            continue;
        const QUrl url(written);
        const QString scheme = url.scheme().toLower();
        if (!url.isValid() || url.host().isEmpty()
            || (scheme != QLatin1String("http") && scheme != QLatin1String("https"))) {
            *error = QStringLiteral("%1: '%2' is not an http or https URL")
                             .arg(QLatin1String(name), written);
            return std::nullopt;
        }
        options.trustedOrigins.append(url);
    }
    return create(options, error);
}

QStringList EgressPolicy::trustedOrigins() const
{
    QStringList origins;
    for (const Origin &origin : m_trusted) {
        EgressTarget target{origin.scheme, origin.host, origin.port, std::nullopt, true};
        origins.append(origin.scheme + QLatin1String("://") + target.authority());
    }
    return origins;
}

bool EgressPolicy::domainAllowed(const EgressTarget &target) const
{
    if (m_anyDomain)
        return true;
    for (const DomainRule &rule : m_domains) {
        if (rule.port && *rule.port != target.port)
            continue;
        if (rule.wildcard ? target.host.endsWith(QLatin1Char('.') + rule.host)
                          : target.host == rule.host)
            return true;
    }
    return false;
}

bool EgressPolicy::isTrusted(const EgressTarget &target) const
{
    for (const Origin &origin : m_trusted) {
        if (origin.scheme == target.scheme && origin.host == target.host
            && origin.port == target.port)
            return true;
    }
    return false;
}

EgressCheck EgressPolicy::checkUrl(const QUrl &url) const
{
    if (!url.isValid())
        return {std::nullopt,
                QStringLiteral("refused (URL): '%1' is not a valid URL: %2")
                        .arg(url.toString(), url.errorString())};
    EgressTarget target;
    target.scheme = url.scheme().toLower();
    if (target.scheme.isEmpty())
        return {std::nullopt,
                QStringLiteral("refused (scheme): '%1' has no scheme; only http:// and https:// "
                               "URLs can be fetched")
                        .arg(url.toString())};
    if (target.scheme != QLatin1String("http") && target.scheme != QLatin1String("https"))
        return {std::nullopt,
                QStringLiteral("refused (scheme): only http and https URLs can be fetched, not "
                               "'%1:'")
                        .arg(target.scheme)};
    const std::optional<QString> host =
            canonicalHost(url.host(QUrl::FullyEncoded), &target.literal);
    if (!host)
        return {std::nullopt,
                QStringLiteral("refused (URL): '%1' has no valid host").arg(url.toString())};
    target.host = *host;
    const int port = url.port(defaultPort(target.scheme));
    if (port <= 0 || port > 65535)
        return {std::nullopt,
                QStringLiteral("refused (URL): '%1' has no valid port").arg(url.toString())};
    target.port = quint16(port);
    target.trusted = isTrusted(target);
    if (!target.trusted && !domainAllowed(target))
        return {std::nullopt,
                QStringLiteral("refused (%1_ALLOWED_DOMAINS): %2 is not an allowed domain "
                               "(allowed: %3)")
                        .arg(m_settingPrefix, target.authority(),
                             m_domainsAsWritten.isEmpty() ? QStringLiteral("none")
                                                          : m_domainsAsWritten.join(u", "))};
    if (target.literal) {
        if (std::optional<QString> refusal = checkAddress(target, *target.literal))
            return {std::nullopt, *refusal};
    }
    return {target, {}};
}

std::optional<QString> EgressPolicy::checkAddress(const EgressTarget &target,
                                                  const QHostAddress &address) const
{
    if (m_allowPrivate || (target.trusted && m_trustedMayBePrivate))
        return std::nullopt;
    const AddressRange range = classifyAddress(address);
    if (range.isPublic)
        return std::nullopt;
    const QString what = target.literal
            ? QStringLiteral("%1 is a non-public address").arg(address.toString())
            : QStringLiteral("%1 resolves to %2, a non-public address")
                      .arg(target.host, address.toString());
    if (target.trusted)
        return QStringLiteral("refused (WEB_SEARCH_ALLOW_PRIVATE): the search back end %1 (%2); "
                              "set WEB_SEARCH_ALLOW_PRIVATE=true to let the search back ends "
                              "be on non-public addresses")
                .arg(what, range.description);
    return QStringLiteral("refused (%1_ALLOW_PRIVATE): %2 (%3); %4")
            .arg(m_settingPrefix, what, range.description, privateAdvice(m_settingPrefix));
}

} // namespace cmcp
