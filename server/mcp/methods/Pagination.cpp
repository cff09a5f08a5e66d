#include "mcp/McpServer.h"

#include <QJsonArray>

namespace cmcp {

namespace {

QString encodeCursor(qsizetype offset)
{
    return QString::fromLatin1(
            QByteArray("o:" + QByteArray::number(offset))
                    .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

std::optional<qsizetype> decodeCursor(const QString &cursor)
{
    const QByteArray raw = QByteArray::fromBase64(cursor.toLatin1(), QByteArray::Base64UrlEncoding);
    if (!raw.startsWith("o:"))
        return std::nullopt;
    bool ok = false;
    const qsizetype offset = raw.mid(2).toLongLong(&ok);
    if (!ok || offset < 0)
        return std::nullopt;
    return offset;
}

} // namespace

bool McpServer::paginate(const Request &request, const QJsonArray &items, const QString &key)
{
    qsizetype offset = 0;
    if (request.params.contains(QLatin1String("cursor"))) {
        const auto decoded = decodeCursor(request.params.value(QLatin1String("cursor")).toString());
        if (!decoded || *decoded > items.size()) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.cursor: not a cursor this server issued"));
            return false;
        }
        offset = *decoded;
    }
    QJsonObject result{{key, QJsonArray()}};
    QJsonArray page;
    for (qsizetype i = offset; i < items.size() && i < offset + m_pageSize; ++i)
        page.append(items[i]);
    result.insert(key, page);
    if (offset + m_pageSize < items.size())
        result.insert(QLatin1String("nextCursor"), encodeCursor(offset + m_pageSize));
    request.reply(result);
    return true;
}

} // namespace cmcp
