// The schema validator with the daemon's own tool schemas and fuzzed arguments: what a model
// sends as tools/call arguments.
#include "tools/file/FileToolSchemas.h"
#include "FuzzSupport.h"
#include "mcp/SchemaValidator.h"
#include "tools/system/SystemToolSchemas.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QList>

#include <cstdint>

using namespace cmcp;

namespace {

const QList<QJsonObject> &toolSchemas()
{
    static const QList<QJsonObject> schemas{
            fileschemas::readInput(),       fileschemas::writeInput(),
            fileschemas::listInput(),       fileschemas::deleteInput(),
            fileschemas::moveInput(),       fileschemas::editInput(),
            fileschemas::searchInput(),     systemschemas::commandInput(),
            systemschemas::pythonInput(),   systemschemas::envInput(),
            fileschemas::readOutput(),      fileschemas::editOutput(),
            systemschemas::commandOutput(), systemschemas::pythonOutput(),
    };
    return schemas;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    // Arguments that are not JSON still reach the validator as a string or an array.
    const QJsonValue instance = document.isObject() ? QJsonValue(document.object())
            : document.isArray()                    ? QJsonValue(document.array())
                                                    : QJsonValue(QString::fromUtf8(bytes));
    for (const QJsonObject &schema : toolSchemas()) {
        const QString verdict = SchemaValidator::validate(schema, instance);
        // Our own schemas are valid: a failure names a location, never the schema.
        FUZZ_CHECK(!verdict.contains(QLatin1String("invalid schema")));
        // Validation is a function of its input.
        FUZZ_CHECK(SchemaValidator::validate(schema, instance) == verdict);
    }
    return 0;
}
