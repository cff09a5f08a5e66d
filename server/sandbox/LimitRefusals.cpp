#include "sandbox/LimitRefusals.h"

#include "posix/Btrfs.h"
#include "posix/UniqueFd.h"

#include <QFile>

#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

namespace {

// A job that failed in a workspace that is now (all but) full most likely failed for it: the
// kernel told it "Disk quota exceeded", and the result says which limit that was. The usage
// is what the last transaction committed, so the volume is synced first; only failed jobs in
// workspaces with a quota pay for that. Its limit in bytes, or nullopt.
std::optional<qint64> reachedWorkspaceQuota(const QString &workspace)
{
    const UniqueFd fd(
            ::open(QFile::encodeName(workspace).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.isValid() || !btrfs::isSubvolumeRoot(fd.get()))
        return std::nullopt;
    ::syncfs(fd.get());
    const std::optional<btrfs::QgroupUsage> usage = btrfs::usage(fd.get());
    if (!usage || usage->limitBytes == 0)
        return std::nullopt;
    // A write is refused whole when it does not fit: the last one may leave some room.
    const uint64_t slack = qMax<uint64_t>(2u << 20, usage->limitBytes / 50);
    if (usage->referencedBytes + slack < usage->limitBytes)
        return std::nullopt;
    return qint64(usage->limitBytes);
}

} // namespace

SandboxRefusal timeLimitRefusal(qint64 limitMs)
{
    return {QStringLiteral("time"),
            QStringLiteral("timeout"),
            {},
            QStringLiteral("the sandbox ended the job at its time limit of %1 ms").arg(limitMs)};
}

void appendSeccompRefusals(JobResult &result, const std::vector<SeccompDenial> &denials,
                           qint64 unnamed)
{
    for (const SeccompDenial &denial : denials) {
        const QString syscall = QString::fromStdString(denial.syscall);
        result.sandboxRefusals.append(
                {QStringLiteral("seccomp"),
                 QStringLiteral("denied_syscall"),
                 {},
                 QStringLiteral("the sandbox's seccomp filter refused %1 %2 time(s) (%3)")
                         .arg(syscall)
                         .arg(denial.count)
                         .arg(QString::fromStdString(denial.errnoName)),
                 syscall,
                 denial.count});
    }
    if (unnamed > 0)
        result.sandboxRefusals.append(
                {QStringLiteral("seccomp"),
                 QStringLiteral("denied_syscall"),
                 {},
                 QStringLiteral("the sandbox's seccomp filter refused %1 more call(s) of other "
                                "syscalls")
                         .arg(unnamed),
                 {},
                 unnamed});
}

void appendLimitRefusals(JobResult &result, const JailPolicy &policy, qint64 pidsRefused)
{
    const auto &cgroup = policy.cgroup;
    if (result.oomKilled)
        result.sandboxRefusals.append(
                {QStringLiteral("memory"),
                 QStringLiteral("memory_bytes"),
                 {},
                 QStringLiteral("the sandbox's memory limit%1 was reached: the kernel "
                                "killed a process of the job")
                         .arg(cgroup && cgroup->memoryBytes
                                      ? QStringLiteral(" (%1 MiB)")
                                                .arg(qulonglong(*cgroup->memoryBytes >> 20))
                                      : QString())});
    if (pidsRefused > 0)
        result.sandboxRefusals.append(
                {QStringLiteral("pids"),
                 QStringLiteral("pids"),
                 {},
                 QStringLiteral("the sandbox's process limit%1 refused %2 new process(es) "
                                "(fork/clone failed with EAGAIN)")
                         .arg(cgroup && cgroup->pids ? QStringLiteral(" (%1 at once)")
                                                               .arg(qulonglong(*cgroup->pids))
                                                     : QString())
                         .arg(pidsRefused)});
    if (result.exitCode.value_or(0) != 0 || result.signal)
        result.workspaceQuotaBytes =
                reachedWorkspaceQuota(QString::fromStdString(policy.workspace));
    if (result.workspaceQuotaBytes)
        result.sandboxRefusals.append(
                {QStringLiteral("quota"),
                 QStringLiteral("SANDBOX_WORKSPACE_QUOTA_MB"),
                 {},
                 QStringLiteral("the sandbox's workspace quota of %1 MiB was reached: writes "
                                "failed with EDQUOT/ENOSPC ('Disk quota exceeded')")
                         .arg(*result.workspaceQuotaBytes >> 20)});
}

} // namespace cmcp
