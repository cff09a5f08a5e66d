#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// A credential the operator gave the daemon for jobs to use without ever holding it: the egress
// gate adds it to requests to the hosts it is bound to, after the gate's rules let the request
// through (SecretTunnel). Its value lives in the daemon's memory only.
struct GateSecret
{
    // How the credential goes into a request.
    enum class Presentation {
        Bearer, // Authorization: Bearer <value>
        Basic, // Authorization: Basic base64(<value>), the value being "user:password"
        Header, // <field>: <value>
        Query, // ?<field>=<value> appended to the request target
    };

    QString name;
    QByteArray value;
    Presentation presentation = Presentation::Bearer;
    QByteArray field; // the header or query parameter name of Header and Query
    // "host" (port 443) or "host:port", lower case; an IPv6 literal in brackets.
    QStringList hosts;

    // "bearer", "basic", "header X-Api-Key", "query key": how configuration writes it.
    static std::optional<GateSecret> withPresentation(const QString &text, QString *error);
    QString presentationText() const;
    bool boundTo(const QString &host, quint16 port) const;
};

// The secrets one job may have presented: those of its principal's profile.
class SecretBindings
{
public:
    SecretBindings() = default;
    explicit SecretBindings(QList<GateSecret> secrets);

    bool isEmpty() const { return m_secrets.isEmpty(); }
    // The secret bound to host:port (the gate's canonical host), or none.
    const GateSecret *forTarget(const QString &host, quint16 port) const;
    const QList<GateSecret> &secrets() const { return m_secrets; }

private:
    QList<GateSecret> m_secrets;
};

// The first request head of an intercepted connection with the secret put in, or why it is not
// sent at all (the connection is then answered with the refusal).
struct PresentedRequest
{
    QByteArray head; // request line and headers, ending with the empty line
    QString refusal;
};

// Rewrites `head` (one HTTP/1.1 request head, up to and including "\r\n\r\n") for `secret`,
// sent to `host`:`port` over TLS: its Host header must name that host (a request written for
// another name is refused rather than given the credential); the client's own credential in the
// same field and every hop-by-hop header are dropped; "Connection: close" ends the connection
// after this one exchange, so that no later request on it goes out unchecked.
PresentedRequest presentSecret(const GateSecret &secret, const QByteArray &head,
                               const QString &host, quint16 port);

} // namespace cmcp
