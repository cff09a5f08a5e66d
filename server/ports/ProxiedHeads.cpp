#include "ports/ProxiedHeads.h"

#include <QList>

#include <algorithm>
#include <string_view>

namespace cmcp::proxy {

namespace {

bool isTokenCharacter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool isToken(QByteArrayView name)
{
    return !name.isEmpty() && std::all_of(name.begin(), name.end(), isTokenCharacter);
}

bool hasControlCharacter(QByteArrayView value)
{
    return std::any_of(value.begin(), value.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return (byte < 0x20 && byte != '\t') || byte == 0x7f;
    });
}

// The names a Connection header lists, lower case.
QList<QByteArray> connectionOptions(const QList<QPair<QByteArray, QByteArray>> &headers)
{
    QList<QByteArray> options;
    for (const auto &[name, value] : headers) {
        if (name == "connection") {
            for (const QByteArray &option : value.split(','))
                options.append(option.trimmed().toLower());
        }
    }
    return options;
}

bool isHopByHop(const QByteArray &name, const QList<QByteArray> &connectionNamed)
{
    static const QList<QByteArray> always{
            "connection",          "keep-alive", "proxy-connection", "proxy-authenticate",
            "proxy-authorization", "te",         "trailer",          "upgrade",
            "transfer-encoding",   "expect"};
    return always.contains(name) || connectionNamed.contains(name);
}

// Splits a head's block into its first line and its headers (names lower case).
QByteArray splitHead(const QByteArray &block, QList<QPair<QByteArray, QByteArray>> *headers)
{
    const QList<QByteArray> lines = block.split('\n');
    for (qsizetype at = 1; at < lines.size(); ++at) {
        const qsizetype colon = lines[at].indexOf(':');
        if (colon > 0)
            headers->append({lines[at].left(colon).trimmed().toLower(),
                             lines[at].mid(colon + 1).trimmed()});
    }
    return lines.value(0).trimmed();
}

// A Location the client can follow: one on the server's own address or an absolute path is put
// under the published prefix; one elsewhere is left as it is, for the client alone to judge.
QByteArray rewrittenLocation(const QByteArray &location, QByteArrayView publicPrefix, quint16 port)
{
    const QByteArray port_ = QByteArray::number(port);
    for (const QByteArray &own :
         {QByteArray("http://127.0.0.1:" + port_), QByteArray("http://localhost:" + port_),
          QByteArray("http://[::1]:" + port_)}) {
        if (location.startsWith(own)) {
            const QByteArray rest = location.mid(own.size());
            if (rest.isEmpty() || rest.startsWith('/') || rest.startsWith('?'))
                return publicPrefix.toByteArray() + (rest.startsWith('/') ? rest.mid(1) : rest);
        }
    }
    if (location.startsWith('/') && !location.startsWith("//"))
        return publicPrefix.toByteArray() + location.mid(1);
    return location;
}

} // namespace

QString headProblem(const RequestHead &head)
{
    for (const auto &[name, value] : head.headers) {
        if (!isToken(name))
            return QStringLiteral("a header name is not an HTTP token");
        if (hasControlCharacter(value))
            return QStringLiteral("the value of header %1 holds a control character")
                    .arg(QString::fromLatin1(name));
    }
    if (hasControlCharacter(head.target))
        return QStringLiteral("the request target holds a control character");
    return {};
}

bool wantsWebSocket(const RequestHead &head)
{
    return head.value("upgrade").trimmed().compare("websocket", Qt::CaseInsensitive) == 0
            && connectionOptions(head.headers).contains("upgrade");
}

QByteArray upstreamRequest(const RequestHead &head, QByteArrayView target, quint16 port,
                           QByteArrayView publicPrefix, bool upgrade, qint64 bodyLength)
{
    const QList<QByteArray> connectionNamed = connectionOptions(head.headers);
    QByteArray out = head.method + ' ' + target.toByteArray() + " HTTP/1.1\r\n";
    out += "Host: 127.0.0.1:" + QByteArray::number(port) + "\r\n";
    for (const auto &[name, value] : head.headers) {
        if (isHopByHop(name, connectionNamed) || name == "host" || name == "authorization"
            || name == "content-length" || name == "forwarded" || name.startsWith("x-forwarded-"))
            continue;
        out += name + ": " + value + "\r\n";
    }
    out += "X-Forwarded-Host: " + head.value("host") + "\r\n";
    out += "X-Forwarded-Proto: http\r\n";
    out += "X-Forwarded-Prefix: " + publicPrefix.chopped(1).toByteArray() + "\r\n";
    if (bodyLength > 0 || head.method == "POST" || head.method == "PUT" || head.method == "PATCH")
        out += "Content-Length: " + QByteArray::number(bodyLength) + "\r\n";
    if (upgrade)
        out += "Connection: Upgrade\r\nUpgrade: websocket\r\n";
    else
        out += "Connection: close\r\n";
    out += "\r\n";
    return out;
}

std::optional<ResponseHead> downstreamResponse(const QByteArray &upstreamHead,
                                               QByteArrayView publicPrefix, quint16 port,
                                               bool upgradeAsked, QString *error)
{
    QList<QPair<QByteArray, QByteArray>> headers;
    const QByteArray statusLine = splitHead(upstreamHead, &headers);
    const QList<QByteArray> parts = statusLine.split(' ');
    bool numeric = false;
    const int status = parts.value(1).toInt(&numeric);
    if (parts.size() < 2 || !parts[0].startsWith("HTTP/1.") || !numeric || status < 100
        || status > 599) {
        *error = QStringLiteral("the job's server did not answer HTTP/1.x");
        return std::nullopt;
    }
    const bool upgraded = status == 101;
    if (upgraded && !upgradeAsked) {
        *error = QStringLiteral("the job's server switched protocols unasked");
        return std::nullopt;
    }
    const QList<QByteArray> connectionNamed = connectionOptions(headers);
    ResponseHead response;
    response.status = status;
    response.block = statusLine + "\r\n";
    for (const auto &[name, value] : headers) {
        // The body is relayed as it comes, so its framing (Transfer-Encoding) stays with it.
        if (name != "transfer-encoding" && isHopByHop(name, connectionNamed))
            continue;
        if (hasControlCharacter(value) || !isToken(name))
            continue;
        const QByteArray written =
                name == "location" ? rewrittenLocation(value, publicPrefix, port) : value;
        response.block += name + ": " + written + "\r\n";
    }
    response.block += upgraded ? QByteArray("Connection: Upgrade\r\nUpgrade: websocket\r\n")
                               : QByteArray("Connection: close\r\n");
    response.block += "\r\n";
    return response;
}

} // namespace cmcp::proxy
