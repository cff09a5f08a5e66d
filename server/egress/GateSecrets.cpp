#include "egress/GateSecrets.h"

#include <QUrl>

#include <cctype>

namespace cmcp {

namespace {

constexpr quint16 kHttpsPort = 443;

QString hostPort(const QString &host, quint16 port)
{
    const QString shown =
            host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host;
    return port == kHttpsPort ? shown : shown + QLatin1Char(':') + QString::number(port);
}

bool isHopHeader(const QByteArray &lowerName)
{
    return lowerName == "connection" || lowerName == "keep-alive" || lowerName == "proxy-connection"
            || lowerName == "proxy-authorization" || lowerName == "upgrade" || lowerName == "te"
            || lowerName == "trailer";
}

bool isToken(const QByteArray &text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text)
        if (!(std::isalnum(static_cast<unsigned char>(c))
              || QByteArrayView("!#$%&'*+-.^_`|~").contains(c)))
            return false;
    return true;
}

} // namespace

std::optional<GateSecret> GateSecret::withPresentation(const QString &text, QString *error)
{
    const QStringList words = text.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    GateSecret secret;
    const QString kind = words.value(0).toLower();
    if (kind == QLatin1String("bearer") && words.size() == 1) {
        secret.presentation = Presentation::Bearer;
    } else if (kind == QLatin1String("basic") && words.size() == 1) {
        secret.presentation = Presentation::Basic;
    } else if ((kind == QLatin1String("header") || kind == QLatin1String("query"))
               && words.size() == 2 && isToken(words.at(1).toLatin1())) {
        secret.presentation =
                kind == QLatin1String("header") ? Presentation::Header : Presentation::Query;
        secret.field = words.at(1).toLatin1();
        if (secret.presentation == Presentation::Header && isHopHeader(secret.field.toLower())) {
            *error = QStringLiteral("'%1' is a hop-by-hop header, which proxies drop")
                             .arg(words.at(1));
            return std::nullopt;
        }
    } else {
        *error = QStringLiteral("'%1' is not a way to present a secret: write bearer, basic, "
                                "header <name> or query <name>")
                         .arg(text);
        return std::nullopt;
    }
    return secret;
}

QString GateSecret::presentationText() const
{
    switch (presentation) {
    case Presentation::Bearer:
        return QStringLiteral("bearer");
    case Presentation::Basic:
        return QStringLiteral("basic");
    case Presentation::Header:
        return QStringLiteral("header ") + QString::fromLatin1(field);
    case Presentation::Query:
        return QStringLiteral("query ") + QString::fromLatin1(field);
    }
    return {};
}

bool GateSecret::boundTo(const QString &host, quint16 port) const
{
    return hosts.contains(hostPort(host, port));
}

SecretBindings::SecretBindings(QList<GateSecret> secrets) : m_secrets(std::move(secrets)) { }

const GateSecret *SecretBindings::forTarget(const QString &host, quint16 port) const
{
    for (const GateSecret &secret : m_secrets)
        if (secret.boundTo(host, port))
            return &secret;
    return nullptr;
}

PresentedRequest presentSecret(const GateSecret &secret, const QByteArray &head,
                               const QString &host, quint16 port)
{
    PresentedRequest out;
    const qsizetype lineEnd = head.indexOf("\r\n");
    const QList<QByteArray> requestLine = head.left(lineEnd).split(' ');
    if (lineEnd <= 0 || requestLine.size() != 3 || !requestLine.at(1).startsWith('/')
        || requestLine.at(2) != "HTTP/1.1") {
        out.refusal = QStringLiteral("the request is not an HTTP/1.1 request for a path");
        return out;
    }
    QByteArray target = requestLine.at(1);
    const QByteArray authorization = secret.presentation == GateSecret::Presentation::Header
            ? secret.field.toLower()
            : QByteArray("authorization");
    QList<QByteArray> kept;
    int hostHeaders = 0;
    bool length = false;
    bool chunked = false;
    for (const QByteArray &rawLine : head.mid(lineEnd + 2).split('\n')) {
        const QByteArray line = rawLine.endsWith('\r') ? rawLine.chopped(1) : rawLine;
        if (line.isEmpty())
            continue;
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0 || line.front() == ' ' || line.front() == '\t') {
            out.refusal = QStringLiteral("the request has a malformed header line");
            return out;
        }
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "host") {
            ++hostHeaders;
            const QString asked = QString::fromLatin1(value).toLower();
            const bool named = asked == hostPort(host, port)
                    || (port == kHttpsPort
                        && asked == hostPort(host, port) + QLatin1String(":443"));
            if (!named) {
                out.refusal = QStringLiteral("the request's Host header '%1' is not the host "
                                             "the connection was opened for (%2)")
                                      .arg(asked, hostPort(host, port));
                return out;
            }
        }
        if (name == "content-length")
            length = true;
        if (name == "transfer-encoding")
            chunked = true;
        if (isHopHeader(name) || name == authorization)
            continue;
        kept.append(line);
    }
    if (hostHeaders != 1) {
        out.refusal = QStringLiteral("the request must have exactly one Host header (it has %1)")
                              .arg(hostHeaders);
        return out;
    }
    if (length && chunked) {
        out.refusal = QStringLiteral("the request has both Content-Length and Transfer-Encoding");
        return out;
    }
    switch (secret.presentation) {
    case GateSecret::Presentation::Bearer:
        kept.append("Authorization: Bearer " + secret.value);
        break;
    case GateSecret::Presentation::Basic:
        kept.append("Authorization: Basic " + secret.value.toBase64());
        break;
    case GateSecret::Presentation::Header:
        kept.append(secret.field + ": " + secret.value);
        break;
    case GateSecret::Presentation::Query: {
        const qsizetype fragment = target.indexOf('#');
        if (fragment >= 0)
            target.truncate(fragment);
        target += (target.contains('?') ? '&' : '?')
                + QUrl::toPercentEncoding(QString::fromLatin1(secret.field)) + '='
                + QUrl::toPercentEncoding(QString::fromUtf8(secret.value));
        break;
    }
    }
    kept.append("Connection: close");
    out.head = requestLine.at(0) + ' ' + target + " HTTP/1.1\r\n" + kept.join("\r\n") + "\r\n\r\n";
    return out;
}

} // namespace cmcp
