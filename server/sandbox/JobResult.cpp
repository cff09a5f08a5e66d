#include "sandbox/JobResult.h"

#include <QJsonArray>

namespace cmcp {

namespace {

QJsonValue optionalNumber(const std::optional<qint64> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

QJsonValue optionalNumber(const std::optional<int> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

} // namespace

QString CapturedStream::text() const
{
    if (!truncated)
        return QString::fromUtf8(head);
    const qint64 omitted = totalBytes - head.size() - tail.size();
    return QString::fromUtf8(head)
            + QStringLiteral("\n[... %1 bytes omitted of %2 ...]\n").arg(omitted).arg(totalBytes)
            + QString::fromUtf8(tail);
}

QJsonObject JobResult::toJson() const
{
    QJsonObject json{
            {QStringLiteral("exit_code"), optionalNumber(exitCode)},
            {QStringLiteral("signal"), optionalNumber(signal)},
            {QStringLiteral("timed_out"), timedOut},
            {QStringLiteral("cancelled"), cancelled},
            {QStringLiteral("oom_killed"), oomKilled},
            {QStringLiteral("truncated"), truncated()},
            {QStringLiteral("wall_ms"), wallMs},
            {QStringLiteral("cpu_ms"), optionalNumber(cpuMs)},
            {QStringLiteral("peak_memory_kb"), optionalNumber(peakMemoryKb)},
            {QStringLiteral("layers"), QJsonArray::fromStringList(layers)},
            {QStringLiteral("insecure"), insecure},
            {QStringLiteral("stdout"), standardOutput.text()},
            {QStringLiteral("stderr"), standardError.text()},
            {QStringLiteral("stdout_bytes"), standardOutput.totalBytes},
            {QStringLiteral("stderr_bytes"), standardError.totalBytes},
    };
    if (workspaceQuotaBytes)
        json.insert(QStringLiteral("workspace_quota_mb"), *workspaceQuotaBytes >> 20);
    if (!standardOutput.spillPath.isEmpty())
        json.insert(QStringLiteral("stdout_spill"), standardOutput.spillPath);
    if (!standardError.spillPath.isEmpty())
        json.insert(QStringLiteral("stderr_spill"), standardError.spillPath);
    QStringList spillErrors;
    for (const CapturedStream *stream : {&standardOutput, &standardError}) {
        if (!stream->spillError.isEmpty())
            spillErrors.append(stream->spillError);
    }
    if (!spillErrors.isEmpty())
        json.insert(QStringLiteral("spill_errors"), QJsonArray::fromStringList(spillErrors));
    if (refusal) {
        json.insert(QStringLiteral("refused"),
                    QJsonObject{{QStringLiteral("layer"), refusal->layer},
                                {QStringLiteral("code"), refusal->code},
                                {QStringLiteral("message"), refusal->message}});
    }
    if (!sandboxRefusals.isEmpty()) {
        QJsonArray refusals;
        for (const SandboxRefusal &r : sandboxRefusals) {
            QJsonObject entry{{QStringLiteral("layer"), r.layer},
                              {QStringLiteral("rule"), r.rule},
                              {QStringLiteral("message"), r.message}};
            if (!r.target.isEmpty())
                entry.insert(QStringLiteral("target"), r.target);
            if (!r.syscall.isEmpty())
                entry.insert(QStringLiteral("syscall"), r.syscall);
            if (r.count > 0)
                entry.insert(QStringLiteral("count"), r.count);
            refusals.append(entry);
        }
        json.insert(QStringLiteral("sandbox_refusals"), refusals);
    }
    if (sandboxRefusalsLeftOut > 0)
        json.insert(QStringLiteral("sandbox_refusals_left_out"), sandboxRefusalsLeftOut);
    if (!error.isEmpty())
        json.insert(QStringLiteral("error"), error);
    if (!reportErrors.isEmpty())
        json.insert(QStringLiteral("report_errors"), QJsonArray::fromStringList(reportErrors));
    return json;
}

QString JobResult::endReason() const
{
    if (refusal)
        return QStringLiteral("the sandbox refused it (%1): %2")
                .arg(refusal->layer, refusal->message);
    if (!error.isEmpty())
        return error;
    if (exitCode)
        return QStringLiteral("exit code %1").arg(*exitCode);
    if (signal)
        return QStringLiteral("signal %1").arg(*signal);
    return QStringLiteral("no reason reported");
}

} // namespace cmcp
