// The schema validator with fuzzed schemas and instances: a broken schema must fail closed, never
// crash, loop or recurse without bound ($ref cycles). Input: schema JSON, a NUL byte, instance
// JSON.
#include "FuzzSupport.h"
#include "mcp/SchemaValidator.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype split = bytes.indexOf('\0');
    const QJsonDocument schema = QJsonDocument::fromJson(split < 0 ? bytes : bytes.left(split));
    if (!schema.isObject())
        return 0;
    const QJsonDocument instanceDocument =
            QJsonDocument::fromJson(split < 0 ? QByteArray("{}") : bytes.mid(split + 1));
    const QJsonValue instance = instanceDocument.isArray() ? QJsonValue(instanceDocument.array())
                                                           : QJsonValue(instanceDocument.object());
    const QString verdict = SchemaValidator::validate(schema.object(), instance);
    FUZZ_CHECK(SchemaValidator::validate(schema.object(), instance) == verdict);
    return 0;
}
