#pragma once

#include <QHostAddress>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <optional>

namespace cmcp {

class Settings;

// What the egress gate decides on, taken from a URL: the scheme, the host in one canonical
// form and the port.
struct EgressTarget
{
    QString scheme; // http or https
    // Lower case, ASCII (international names in their xn-- form), without a trailing dot; an
    // IP address in its canonical notation (IPv6 without brackets).
    QString host;
    quint16 port = 0;
    // Set when the host is written as an IP address (in any notation QUrl or inet_aton read).
    std::optional<QHostAddress> literal;
    // An endpoint the operator configured (a search back end): exempt from the domain list and
    // the private-address rule, never from the rest of the gate.
    bool trusted = false;

    bool isDefaultPort() const;
    // host[:port] as the Host header and messages write it: IPv6 in brackets, the port only
    // when it is not the scheme's default.
    QString authority() const;
};

// Either the target, or why the URL is refused. A refusal names the rule that refused it.
struct EgressCheck
{
    std::optional<EgressTarget> target;
    QString refusal;
};

// The rules every outgoing web request of every web tool obeys, without any I/O: the daemon's
// fetcher and the browser worker's request interceptor and proxy decide with the same code.
//   - only http and https;
//   - WEB_ALLOWED_DOMAINS: `*`, or exact hosts and `*.example.com` wildcards (subdomains, not
//     example.com itself), case-insensitive, IDNs compared in their ACE form, each with an
//     optional `:port` (without one, any port);
//   - WEB_ALLOW_PRIVATE: unless true, an address that is not public (AddressRanges.h) is
//     refused, whether the URL names it (in any notation) or a name resolves to it.
class EgressPolicy
{
public:
    struct Options
    {
        QStringList allowedDomains{QStringLiteral("*")};
        bool allowPrivate = false;
        // Operator-configured endpoints (scheme://host[:port]) exempt from the domain list.
        QList<QUrl> trustedOrigins;
        // WEB_SEARCH_ALLOW_PRIVATE: the trusted origins exempt from the private-address rule
        // too (a SearXNG beside the daemon).
        bool trustedMayBePrivate = false;
        // The settings a refusal names: <prefix>_ALLOWED_DOMAINS, <prefix>_ALLOW_PRIVATE (the
        // web tools' WEB_..., jobs' JOB_NETWORK_...).
        QString settingPrefix = QStringLiteral("WEB");
    };

    // nullopt with the reason when an entry of allowedDomains or trustedOrigins cannot be read.
    static std::optional<EgressPolicy> create(const Options &options, QString *error);
    // WEB_ALLOWED_DOMAINS and WEB_ALLOW_PRIVATE, with the endpoints of the search back ends that
    // are configured (BRAVE_SEARCH_URL only with BRAVE_SEARCH_API_KEY) trusted.
    static std::optional<EgressPolicy> fromSettings(const Settings &settings, QString *error);

    // Everything that can be decided before the host is resolved: scheme, host form, the
    // domain list, and the address when the URL names one.
    EgressCheck checkUrl(const QUrl &url) const;
    // After resolution: nullopt when the target may be reached at `address`, else the refusal.
    std::optional<QString> checkAddress(const EgressTarget &target,
                                        const QHostAddress &address) const;

    bool allowsPrivate() const { return m_allowPrivate; }
    bool trustedMayBePrivate() const { return m_trustedMayBePrivate; }
    bool allowsAnyDomain() const { return m_anyDomain; }
    // The domain list as configured, for messages and the browser worker's command line.
    QStringList allowedDomains() const { return m_domainsAsWritten; }
    QStringList trustedOrigins() const;

private:
    struct DomainRule
    {
        QString host; // canonical; for a wildcard, the suffix without "*."
        bool wildcard = false;
        std::optional<quint16> port;
    };
    struct Origin
    {
        QString scheme;
        QString host;
        quint16 port = 0;
    };

    EgressPolicy() = default;
    bool domainAllowed(const EgressTarget &target) const;
    bool isTrusted(const EgressTarget &target) const;

    bool m_anyDomain = false;
    bool m_allowPrivate = false;
    bool m_trustedMayBePrivate = false;
    QString m_settingPrefix;
    QList<DomainRule> m_domains;
    QStringList m_domainsAsWritten;
    QList<Origin> m_trusted;
};

// The canonical host of a URL host or of a domain-list entry, as EgressTarget::host describes;
// nullopt when it is not a valid host. `literal` receives the address when the host is one.
std::optional<QString> canonicalHost(const QString &host, std::optional<QHostAddress> *literal);

} // namespace cmcp
