// cmcp-audit-bench: what the audit log costs a tool call. Appends the two records of
// a typical call (call_started with its arguments, call_finished with a result summary) through
// AuditLog, N times, in three modes, and prints the median, p90 and p99 per call:
//   durable   write(2) both, fdatasync(2) after call_finished (the daemon shares its syncs between
//             the calls that wait at once, on a thread: this is one call alone)
//   no-sync   the records as the daemon writes them (AuditLog::recordCallStarted and
//             recordCallFinished), without the fdatasync (the price of durability is the
//             difference)
//   records   building and sealing the records only (JSON, redaction, SHA-256) in reused buffers,
//             as the log does, no file
// Usage: cmcp-audit-bench [DIRECTORY] [CALLS]   (default: the current directory, 2000)
// The directory decides the file system measured (ext4, overlay, tmpfs...). Not part of ctest.

#include "audit/AuditChain.h"
#include "audit/AuditLog.h"
#include "audit/AuditRecord.h"
#include "mcp/ToolResult.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sys/vfs.h>
#include <vector>

using namespace cmcp;
using Clock = std::chrono::steady_clock;

namespace {

ToolCallRecord typicalCall(quint64 id)
{
    ToolCallRecord call;
    call.callId = id;
    call.sessionId = QStringLiteral("0f3c1a6e-5b7d-4c2e-9a1b-2d3e4f5a6b7c");
    call.transport = QStringLiteral("streamable-http");
    call.clientName = QStringLiteral("bench");
    call.tool = QStringLiteral("system_run_command");
    call.arguments = QJsonObject{
            {QStringLiteral("command"), QStringLiteral("ls -la | grep notes && cat data/notes.md")},
            {QStringLiteral("timeout"), 30}};
    call.startedAt = QDateTime::currentDateTimeUtc();
    call.durationMs = 12;
    return call;
}

ToolResult typicalResult()
{
    return ToolResult::structured({{QStringLiteral("success"), true},
                                   {QStringLiteral("exit_code"), 0},
                                   {QStringLiteral("stdout"), QString(600, QLatin1Char('x'))},
                                   {QStringLiteral("stderr"), QString()},
                                   {QStringLiteral("wall_ms"), 11},
                                   {QStringLiteral("cpu_ms"), 3},
                                   {QStringLiteral("timed_out"), false}});
}

struct Figures
{
    double median, p90, p99;
};

Figures summarize(std::vector<double> micros)
{
    std::sort(micros.begin(), micros.end());
    auto at = [&micros](double q) {
        return micros[std::min(micros.size() - 1, size_t(q * double(micros.size())))];
    };
    return {at(0.5), at(0.9), at(0.99)};
}

Figures measure(const QString &directory, int calls, const char *mode)
{
    QTemporaryDir scratch(directory + QStringLiteral("/cmcp-audit-bench-XXXXXX"));
    AuditOptions options;
    options.path = scratch.filePath(QStringLiteral("audit.jsonl"));
    AuditLog log(options);
    QString error;
    if (std::string(mode) != "records" && !log.open(&error)) {
        std::fprintf(stderr, "cannot open %s: %s\n", qPrintable(options.path), qPrintable(error));
        std::exit(1);
    }
    const ToolResult result = typicalResult();
    std::vector<double> micros;
    micros.reserve(size_t(calls));
    QByteArray prev = audit::genesisHash();
    audit::RecordFields fields;
    audit::SealedRecord sealed;
    for (int i = 0; i < calls; ++i) {
        const ToolCallRecord call = typicalCall(quint64(i));
        const auto start = Clock::now();
        if (std::string(mode) == "records") {
            const qint64 at = QDateTime::currentMSecsSinceEpoch();
            audit::callStartedRecord(fields, call, at);
            audit::seal(fields, quint64(2 * i + 1), prev, sealed);
            std::swap(prev, sealed.hash);
            audit::callFinishedRecord(fields, call, &result, at);
            audit::seal(fields, quint64(2 * i + 2), prev, sealed);
            std::swap(prev, sealed.hash);
        } else if (std::string(mode) == "no-sync") {
            log.recordCallStarted(call);
            log.recordCallFinished(call, &result);
        } else if (!log.append(audit::callStartedRecord(call), false)
                   || !log.append(audit::callFinishedRecord(call, &result), true)) {
            std::fprintf(stderr, "append failed: %s\n", qPrintable(log.lastError()));
            std::exit(1);
        }
        if (!log.lastError().isEmpty()) {
            std::fprintf(stderr, "append failed: %s\n", qPrintable(log.lastError()));
            std::exit(1);
        }
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    return summarize(std::move(micros));
}

const char *fileSystemName(const QString &directory)
{
    struct statfs info
    {
    };
    if (statfs(QFile::encodeName(directory).constData(), &info) != 0)
        return "?";
    switch (info.f_type) {
    case 0xEF53:
        return "ext4";
    case 0x01021994:
        return "tmpfs";
    case 0x794c7630:
        return "overlayfs";
    case 0x9123683E:
        return "btrfs";
    case 0x58465342:
        return "xfs";
    default:
        return "other";
    }
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    spdlog::set_level(spdlog::level::warn);
    const QString directory = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QDir::currentPath();
    const int calls = argc > 2 ? std::max(10, std::atoi(argv[2])) : 2000;
    std::printf("audit log cost per tool call (2 records), %d calls, in %s (%s)\n\n", calls,
                qPrintable(directory), fileSystemName(directory));
    std::printf("| mode | median µs | p90 µs | p99 µs |\n|---|---:|---:|---:|\n");
    for (const char *mode : {"records", "no-sync", "durable"}) {
        const Figures f = measure(directory, calls, mode);
        std::printf("| %s | %.1f | %.1f | %.1f |\n", mode, f.median, f.p90, f.p99);
    }
    return 0;
}
