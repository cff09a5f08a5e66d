#include "tools/system/SystemToolResults.h"

#include "jobs/OutputHandleStore.h"

#include <QStringList>

namespace cmcp::systemresults {

void addOutputHandles(QJsonObject &value, const JobResult &result, OutputHandleStore *handles,
                      const QString &sessionId)
{
    QStringList notes;
    const auto add = [&](const CapturedStream &stream, const char *field, const char *name) {
        if (!stream.truncated)
            return;
        if (stream.spillPath.isEmpty()) {
            notes.append(QStringLiteral("%1 was cut to fit and its complete copy could not be "
                                        "kept (%2)")
                                 .arg(QLatin1String(name), stream.spillError));
            return;
        }
        const QString handle = handles->add(sessionId, stream.spillPath, stream.totalBytes);
        value.insert(QLatin1String(field), handle);
        notes.append(QStringLiteral("%1 was cut to fit (%2 bytes in all): read all of it with "
                                    "output_read(\"%3\", offset)")
                             .arg(QLatin1String(name))
                             .arg(stream.totalBytes)
                             .arg(handle));
    };
    add(result.standardOutput, "stdout_handle", "stdout");
    add(result.standardError, "stderr_handle", "stderr");
    if (!notes.isEmpty())
        value.insert(QLatin1String("truncation_note"), notes.join(QStringLiteral("; ")));
}

std::optional<QString> notRun(const JobResult &result)
{
    if (result.refusal) {
        // cmcp-jail's line is "cmcp-jail: <layer>: <what failed>"; the layer is named below.
        QString message = result.refusal->message;
        const QString prefix = QStringLiteral("cmcp-jail: %1: ").arg(result.refusal->layer);
        if (message.startsWith(prefix))
            message = message.mid(prefix.size());
        // The working directory is checked beneath the workspace by the jail (openat2).
        if (message.startsWith(QLatin1String("cwd ")))
            return QStringLiteral("working_dir %1").arg(message.mid(4));
        return QStringLiteral("the sandbox refused to start the job (%1): %2")
                .arg(result.refusal->layer, message);
    }
    if (!result.exitCode && !result.signal && !result.error.isEmpty())
        return result.error;
    return std::nullopt;
}

QJsonObject accounting(const JobResult &result, int timeoutSeconds, const QString &what)
{
    QJsonObject json = result.toJson();
    for (const char *key : {"stdout", "stderr", "stdout_spill", "stderr_spill"})
        json.remove(QLatin1String(key));
    const int exitCode = result.exitCode ? *result.exitCode : 128 + result.signal.value_or(0);
    json.insert(QLatin1String("exit_code"), exitCode);
    json.insert(QLatin1String("timeout_seconds"), timeoutSeconds);
    QString message;
    bool quotaSaid = false;
    if (result.timedOut)
        message = QStringLiteral("%1 was killed after its time limit of %2 s; the output up to "
                                 "then is kept")
                          .arg(what)
                          .arg(timeoutSeconds);
    else if (result.cancelled)
        message = QStringLiteral("%1 was cancelled").arg(what);
    else if (result.oomKilled)
        message = QStringLiteral("%1 was killed: it reached its memory limit").arg(what);
    else if (result.signal)
        message = QStringLiteral("%1 was killed by signal %2").arg(what).arg(*result.signal);
    else if (result.workspaceQuotaBytes) {
        message = QStringLiteral("%1 failed with its workspace full: it holds the %2 MB that "
                                 "SANDBOX_WORKSPACE_QUOTA_MB allows, and writes past it fail "
                                 "with 'Disk quota exceeded'")
                          .arg(what)
                          .arg(*result.workspaceQuotaBytes >> 20);
        quotaSaid = true;
    }
    // A "Permission denied", "Operation not permitted" or "403" in the output, told apart: what the
    // sandbox refused (the first few; sandbox_refusals lists them all). Time and memory are said
    // above, and so is the quota unless the job ended for something said before it (a job
    // killed at its time limit may have filled its workspace too).
    constexpr int kNamed = 3;
    int named = 0, more = int(result.sandboxRefusalsLeftOut);
    for (const SandboxRefusal &refusal : result.sandboxRefusals) {
        const bool quota = refusal.layer == QLatin1String("quota");
        if (refusal.layer != QLatin1String("egress") && refusal.layer != QLatin1String("pids")
            && refusal.layer != QLatin1String("seccomp") && !(quota && !quotaSaid))
            continue;
        if (named++ >= kNamed) {
            ++more;
            continue;
        }
        message += (message.isEmpty() ? QString() : QStringLiteral("; ")) + refusal.message;
    }
    if (more > 0)
        message += QStringLiteral("; and %1 more refusals (sandbox_refusals)").arg(more);
    if (!message.isEmpty())
        json.insert(QLatin1String("message"), message);
    return json;
}

} // namespace cmcp::systemresults
