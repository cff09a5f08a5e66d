#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace cmcp {

// Checks untrusted JSON (tool arguments, structured results) against our own JSON Schemas.
// Supports the JSON Schema 2020-12 subset that MCP tool schemas use; annotation keywords and
// keywords it does not know are ignored. A supported keyword whose value is malformed, an
// unresolvable $ref or a $ref cycle is reported as an invalid schema, so a broken schema fails
// closed instead of silently accepting everything.
class SchemaValidator
{
public:
    // Returns an empty string when `value` satisfies `schema`, otherwise one message naming
    // the location and the rule, e.g. "arguments.timeout: must be an integer, got string \"abc\"".
    // `rootName` is the name the location starts with.
    static QString validate(const QJsonObject &schema, const QJsonValue &value,
                            const QString &rootName = QStringLiteral("arguments"));
};

} // namespace cmcp
