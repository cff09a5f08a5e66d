#include "sandbox/SandboxSupervisor.h"

#include "base/InstallLayout.h"
#include "common/SandboxIds.h"
#include "common/Settings.h"

#include <QDir>
#include <QFileInfo>

#include <unistd.h>

namespace cmcp {

SandboxOptions SandboxOptions::fromSettings(const Settings &settings)
{
    SandboxOptions options;
    options.jailProgram = defaultJailProgram();
    const SandboxIds ids = SandboxIds::fromSettings(settings);
    options.uidBase = ids.uidBase;
    options.uidCount = ids.uidCount;
    options.gid = ids.gid;
    options.workspaceUid = ids.workspaceUid;
    options.outputCapBytes = settings.integer(u"SANDBOX_OUTPUT_CAP_KB") * 1024;
    options.insecure = settings.flag(u"SANDBOX_INSECURE");
    return options;
}

QString SandboxOptions::defaultJailProgram()
{
    return helperProgram(QStringLiteral("cmcp-jail"), QStringLiteral("jail"));
}

QString SandboxOptions::templatesUnavailable() const
{
    if (geteuid() != 0)
        return QStringLiteral("needs a root daemon (a template maps the whole uid pool)");
    if (uidBase <= 1000)
        return QStringLiteral("needs SANDBOX_UID_BASE above 1000 (uid 1000 is the template's "
                              "own in its user namespace)");
    const QString library =
            QFileInfo(jailProgram).dir().filePath(QStringLiteral("libcmcp-zygote.so"));
    if (!QFileInfo(library).isReadable())
        return QStringLiteral("the zygote library %1 is missing").arg(library);
    return {};
}

SandboxSupervisor::SandboxSupervisor(SandboxOptions options)
    : m_options(std::move(options)),
      m_pool(UidPool::create(m_options.uidBase, m_options.uidCount, m_options.gid))
{
}

QString SandboxSupervisor::showWorkspacesAsOwn(const QString &directory)
{
    const QString unavailable =
            WorkspaceIdmap::unavailableReason(directory, m_options.workspaceUid, m_options.gid);
    if (unavailable.isEmpty())
        m_idmap = std::make_shared<WorkspaceIdmap>(m_options.workspaceUid, m_options.gid);
    return unavailable;
}

UniqueFd SandboxSupervisor::workspaceView(const QString &path, uid_t uid, QString *error)
{
    return m_idmap ? m_idmap->viewFor(path, uid, error) : UniqueFd();
}

std::optional<UidLease> SandboxSupervisor::leaseUid(const QString &holder, QString *error)
{
    std::optional<UidLease> lease = m_pool->acquire(holder);
    if (lease)
        return lease;
    if (m_pool->available() == 0 || holder.isEmpty())
        *error = QStringLiteral("all %1 sandbox uids are in use by running jobs "
                                "(SANDBOX_UID_COUNT); try again when one has finished")
                         .arg(m_options.uidCount);
    else
        *error = QStringLiteral("principal '%1' already holds %2 of the %3 sandbox uids; the last "
                                "%4 are kept for principals that hold none (a tenth of "
                                "SANDBOX_UID_COUNT); try again when one of its jobs has finished")
                         .arg(holder)
                         .arg(m_pool->heldBy(holder))
                         .arg(m_options.uidCount)
                         .arg(m_pool->reserve());
    return lease;
}

JobSpec SandboxSupervisor::specFor(const JobRequest &request, const UidLease &lease) const
{
    JobSpec spec;
    static_cast<JobRequest &>(spec) = request;
    spec.jailProgram = m_options.jailProgram;
    // A daemon that is not root can map only its own ids into a job's user namespace (see
    // SandboxProbe: identity); the lease then only bounds the jobs running at once.
    const bool root = geteuid() == 0;
    spec.policy.uid = root ? lease.uid() : geteuid();
    spec.policy.gid = root ? lease.gid() : getegid();
    spec.outputCapBytes = m_options.outputCapBytes;
    spec.spillDirectory = m_options.spillDirectory;
    spec.insecure = m_options.insecure;
    spec.egress = m_options.egress;
    spec.poolFirst = m_options.uidBase;
    spec.poolCount = m_options.uidCount;
    // A daemon that is not root runs every job as itself, the workspace's owner already.
    if (root)
        spec.workspaceIdmap = m_idmap;
    spec.workspaceHold.reset(); // given to the job itself, to go with its uid lease
    return spec;
}

void SandboxSupervisor::track(Job *job)
{
    m_jobs->insert(job);
    QObject::connect(job, &QObject::destroyed, [jobs = m_jobs, job] { jobs->remove(job); });
}

JailJob *SandboxSupervisor::createJob(const JobRequest &request, QObject *parent, QString *error)
{
    std::optional<UidLease> lease = leaseUid(request.principal, error);
    if (!lease)
        return nullptr;
    auto *job = new JailJob(specFor(request, *lease), parent);
    job->setUidLease(std::move(*lease));
    job->setWorkspaceHold(request.workspaceHold);
    track(job);
    return job;
}

ForkedJob *SandboxSupervisor::createForkedJob(const JobRequest &request, TemplateCell *cell,
                                              UidLease lease, QObject *parent)
{
    lease.passTo(request.principal);
    auto *job = new ForkedJob(specFor(request, lease), cell, parent);
    job->setUidLease(std::move(lease));
    job->setWorkspaceHold(request.workspaceHold);
    track(job);
    return job;
}

int SandboxSupervisor::cancelJobsIn(const QString &workspacePath)
{
    int cancelled = 0;
    for (Job *job : std::as_const(*m_jobs)) {
        if (job->isRunning() && job->workspace() == workspacePath) {
            job->cancel();
            ++cancelled;
        }
    }
    return cancelled;
}

} // namespace cmcp
