#include "sandbox/SandboxSupervisor.h"

#include "common/HelperProgram.h"
#include "common/Settings.h"

#include <unistd.h>

namespace cmcp {

SandboxOptions SandboxOptions::fromSettings(const Settings &settings)
{
    SandboxOptions options;
    options.jailProgram = defaultJailProgram();
    options.uidBase = uid_t(settings.integer(u"SANDBOX_UID_BASE"));
    options.uidCount = uid_t(settings.integer(u"SANDBOX_UID_COUNT"));
    const qint64 gid = settings.integer(u"SANDBOX_GID");
    options.gid = gid == 0 ? gid_t(options.uidBase) : gid_t(gid);
    options.outputCapBytes = settings.integer(u"SANDBOX_OUTPUT_CAP_KB") * 1024;
    options.insecure = settings.flag(u"SANDBOX_INSECURE");
    return options;
}

QString SandboxOptions::defaultJailProgram()
{
    return helperProgram(QStringLiteral("cmcp-jail"), QStringLiteral("jail"));
}

SandboxSupervisor::SandboxSupervisor(SandboxOptions options)
    : m_options(std::move(options)),
      m_pool(UidPool::create(m_options.uidBase, m_options.uidCount, m_options.gid))
{
}

JailJob *SandboxSupervisor::createJob(const JobRequest &request, QObject *parent, QString *error)
{
    std::optional<UidLease> lease = m_pool->acquire();
    if (!lease) {
        *error = QStringLiteral("all %1 sandbox uids are in use by running jobs "
                                "(SANDBOX_UID_COUNT); try again when one has finished")
                         .arg(m_options.uidCount);
        return nullptr;
    }
    JobSpec spec;
    static_cast<JobRequest &>(spec) = request;
    spec.jailProgram = m_options.jailProgram;
    // A daemon that is not root can map only its own ids into a job's user namespace (see
    // SandboxProbe: identity); the lease then only bounds the jobs running at once.
    const bool root = geteuid() == 0;
    spec.policy.uid = root ? lease->uid() : geteuid();
    spec.policy.gid = root ? lease->gid() : getegid();
    spec.outputCapBytes = m_options.outputCapBytes;
    spec.spillDirectory = m_options.spillDirectory;
    spec.insecure = m_options.insecure;
    spec.egress = m_options.egress;
    spec.poolFirst = m_options.uidBase;
    spec.poolCount = m_options.uidCount;
    std::shared_ptr<const void> hold = std::move(spec.workspaceHold);
    auto *job = new JailJob(std::move(spec), parent);
    job->setUidLease(std::move(*lease));
    job->setWorkspaceHold(std::move(hold));
    m_jobs->insert(job);
    QObject::connect(job, &QObject::destroyed, [jobs = m_jobs, job] { jobs->remove(job); });
    return job;
}

int SandboxSupervisor::cancelJobsIn(const QString &workspacePath)
{
    int cancelled = 0;
    for (JailJob *job : std::as_const(*m_jobs)) {
        if (job->isRunning() && job->workspace() == workspacePath) {
            job->cancel();
            ++cancelled;
        }
    }
    return cancelled;
}

} // namespace cmcp
