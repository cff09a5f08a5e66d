// The audit log verifier: `cmcpd --verify-audit` reads files that whoever tampered with them
// wrote. Any bytes must give a verdict, never a crash; and a file it calls intact must hold only
// well-formed records, one per line.
#include "audit/AuditChain.h"
#include "audit/AuditVerifier.h"
#include "FuzzSupport.h"

#include <QFile>
#include <QTemporaryDir>

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static QTemporaryDir directory;
    static const QString path = directory.filePath(QStringLiteral("audit.jsonl"));
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    {
        QFile file(path);
        FUZZ_CHECK(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        FUZZ_CHECK(file.write(bytes) == bytes.size());
    }
    const audit::Verdict verdict = audit::verifyFiles({path});
    FUZZ_CHECK(!verdict.report().isEmpty());
    if (!verdict.intact) {
        FUZZ_CHECK(!verdict.reason.isEmpty());
        return 0;
    }
    FUZZ_CHECK(bytes.endsWith('\n'));
    const QList<QByteArray> lines = bytes.chopped(1).split('\n');
    FUZZ_CHECK(quint64(lines.size()) == verdict.records && verdict.lastSeq == verdict.records);
    for (const QByteArray &line : lines) {
        const audit::OpenedRecord record = audit::open(line);
        FUZZ_CHECK(record.problem.isEmpty() && record.hashMatches);
    }
    return 0;
}
