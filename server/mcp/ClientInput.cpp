#include "mcp/ClientInput.h"

#include "mcp/SchemaValidator.h"

#include <QHash>
#include <QJsonDocument>

namespace cmcp::clientinput {

namespace {

struct Kind
{
    const char *capability;
    const char *answerSchema;
};

// The answer schemas check what a tool relies on, not every field the specification defines:
// further fields are the client's business.
const QHash<QString, Kind> &kinds()
{
    static const QHash<QString, Kind> known{
            {QStringLiteral("elicitation/create"),
             {"elicitation",
              R"({"type":"object","required":["action"],"properties":{
                "action":{"enum":["accept","decline","cancel"]},"content":{"type":"object"}}})"}},
            {QStringLiteral("sampling/createMessage"),
             {"sampling",
              R"({"type":"object","required":["role","content"],"properties":{
                "role":{"type":"string"},"model":{"type":"string"},
                "content":{"type":["object","array"]}}})"}},
            {QStringLiteral("roots/list"),
             {"roots",
              R"({"type":"object","required":["roots"],"properties":{"roots":{"type":"array",
                "items":{"type":"object","required":["uri"],"properties":{"uri":{"type":"string"}}}}}})"}},
    };
    return known;
}

} // namespace

QString capabilityOf(const QString &method)
{
    const auto it = kinds().constFind(method);
    return it == kinds().cend() ? QString() : QString::fromLatin1(it->capability);
}

QJsonObject describe(const QString &method, const QJsonObject &params)
{
    return {{QLatin1String("method"), method}, {QLatin1String("params"), params}};
}

QString answerProblem(const QString &method, const QJsonValue &answer)
{
    const auto it = kinds().constFind(method);
    if (it == kinds().cend())
        return QStringLiteral("%1 is not a request a client answers").arg(method);
    static QHash<QString, QJsonObject> schemas;
    auto schema = schemas.constFind(method);
    if (schema == schemas.cend())
        schema = schemas.insert(method,
                                QJsonDocument::fromJson(QByteArray(it->answerSchema)).object());
    return SchemaValidator::validate(*schema, answer, QStringLiteral("answer"));
}

} // namespace cmcp::clientinput
