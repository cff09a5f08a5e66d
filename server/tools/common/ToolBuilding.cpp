#include "tools/common/ToolBuilding.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace cmcp::tools {

QJsonObject schema(const char *jsonText)
{
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(jsonText));
    Q_ASSERT_X(document.isObject(), "tools::schema", jsonText);
    return document.object();
}

QJsonObject orFailure(const QJsonObject &success)
{
    static const QJsonObject failure =
            schema(R"({"type":"object","required":["success","error"],"properties":{
        "success":{"const":false},"error":{"type":"string"}}})");
    return QJsonObject{{QLatin1String("type"), QLatin1String("object")},
                       {QLatin1String("anyOf"), QJsonArray{success, failure}}};
}

QJsonObject successOutput(const QByteArray &properties, const char *required)
{
    return orFailure(schema(
            QStringLiteral(
                    R"({"type":"object","required":%2,"properties":{"success":{"const":true},%1}})")
                    .arg(QString::fromUtf8(properties), QLatin1String(required))
                    .toUtf8()
                    .constData()));
}

QJsonObject succeeded(QJsonObject value)
{
    value.insert(QLatin1String("success"), true);
    return value;
}

QJsonObject withWorkspaceArgument(QJsonObject input)
{
    static const QJsonObject argument = schema(
            R"({"type":"string","pattern":"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$","description":"Named workspace (default: this session's)."})");
    QJsonObject properties = input.value(QLatin1String("properties")).toObject();
    properties.insert(QLatin1String("workspace"), argument);
    input.insert(QLatin1String("properties"), properties);
    return input;
}

ToolDefinition makeTool(const char *name, const char *title, const char *description,
                        QJsonObject input, QJsonObject output, ToolAnnotations annotations,
                        ToolHandler handler, TaskSupport taskSupport)
{
    ToolDefinition tool;
    tool.name = QLatin1String(name);
    tool.title = QLatin1String(title);
    tool.description = QLatin1String(description);
    tool.inputSchema = std::move(input);
    tool.outputSchema = std::move(output);
    tool.annotations = annotations;
    tool.handler = std::move(handler);
    tool.taskSupport = taskSupport;
    return tool;
}

} // namespace cmcp::tools
