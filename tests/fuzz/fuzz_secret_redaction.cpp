// The secret redactor, which reads every string of every call's arguments before the audit log
// and the admin channel see them: it must take time linear in the text whatever the text (the
// fuzzer's timeout catches a pattern that backtracks), redact alike with either observer's
// placeholder, and lose a secret assigned on a line of its own whatever comes before it.
#include "base/SecretRedaction.h"
#include "FuzzSupport.h"

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));

    // Either placeholder read as one, in the text and in what the redactor wrote.
    const auto comparable = [](QString redacted) {
        return redacted.replace(QLatin1String(audit::RedactedValue), QLatin1String("<secret>"))
                .replace(QLatin1String(admin::MaskedValue), QLatin1String("<secret>"));
    };
    FUZZ_CHECK(comparable(redactInlineSecrets(text, QString::fromLatin1(audit::RedactedValue)))
               == comparable(redactInlineSecrets(text, QString::fromLatin1(admin::MaskedValue))));

    const QString secret = QStringLiteral("fuzz-secret-value");
    for (const QString &assignment :
         {QStringLiteral("DB_PASS=%1"), QStringLiteral("password = \"%1\""),
          QStringLiteral("export API_TOKEN='%1'")}) {
        const QString withSecret = text + u'\n' + assignment.arg(secret) + u'\n';
        FUZZ_CHECK(!redactInlineSecrets(withSecret, QString::fromLatin1(audit::RedactedValue))
                            .contains(secret));
    }
    return 0;
}
