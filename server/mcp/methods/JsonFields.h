#pragma once

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

// What the families of MCP methods share to write their rows of the method table and their
// results.
namespace cmcp {

// A params schema written as JSON text.
inline QJsonObject schema(const char *json)
{
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

// The params of a listing: an optional cursor (McpServer::paginate).
inline constexpr const char *CursorOnlySchema =
        R"({"type":"object","properties":{"cursor":{"type":"string"}}})";
inline constexpr const char *UriOnlySchema =
        R"({"type":"object","required":["uri"],"properties":{"uri":{"type":"string"}}})";

// Optional fields of a result are left out rather than sent empty.
inline void insertIfSet(QJsonObject &object, const char *key, const QString &value)
{
    if (!value.isEmpty())
        object.insert(QLatin1String(key), value);
}

} // namespace cmcp
