#include "transport/RequestHead.h"

#include <QUrl>

namespace cmcp {

QByteArray RequestHead::value(QByteArrayView name) const
{
    for (auto header = headers.crbegin(); header != headers.crend(); ++header)
        if (header->first == name)
            return header->second;
    return {};
}

std::optional<RequestHead> RequestHead::parse(const QByteArray &block)
{
    const QList<QByteArray> lines = block.split('\n');
    const QList<QByteArray> request = lines.value(0).trimmed().split(' ');
    if (request.size() != 3 || !request[2].startsWith("HTTP/1.") || !request[1].startsWith('/'))
        return std::nullopt;
    RequestHead head;
    head.method = request[0];
    head.path = QUrl::fromEncoded(request[1]).path();
    head.target = request[1];
    for (qsizetype at = 1; at < lines.size(); ++at) {
        const qsizetype colon = lines[at].indexOf(':');
        if (colon > 0)
            head.headers.append({lines[at].left(colon).trimmed().toLower(),
                                 lines[at].mid(colon + 1).trimmed()});
    }
    return head;
}

} // namespace cmcp
