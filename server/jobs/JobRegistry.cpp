#include "jobs/JobRegistry.h"

#include "jobs/BackgroundJob.h"
#include "mcp/PrincipalProfiles.h"

#include <QTimer>

namespace cmcp {

JobRegistry::JobRegistry(Limits limits, QObject *parent) : QObject(parent), m_limits(limits) { }

JobRegistry::~JobRegistry()
{
    // Children: each BackgroundJob deletes its jail job, which kills what still runs.
    m_jobs.clear();
}

QString JobRegistry::refusal(const QString &sessionId, const QString &principal) const
{
    if (running(sessionId) >= m_limits.perSession)
        return QStringLiteral("this session already runs %1 background jobs, the most allowed "
                              "(JOB_MAX_PER_SESSION); wait for one to end or stop one with "
                              "job_kill")
                .arg(m_limits.perSession);
    int ofPrincipal = 0;
    for (const BackgroundJob *job : m_jobs)
        ofPrincipal += job->isRunning() && job->description().principal == principal ? 1 : 0;
    if (const std::shared_ptr<const Profile> profile =
                m_profiles ? m_profiles->profileOf(principal) : nullptr;
        profile && profile->maxBackgroundJobs) {
        if (ofPrincipal < *profile->maxBackgroundJobs)
            return running() >= m_limits.total ? totalRefusal() : QString();
        return QStringLiteral("principal '%1' already runs %2 background jobs over all its "
                              "sessions, the most its profile '%3' allows "
                              "(max_background_jobs); wait for one to end or stop one with "
                              "job_kill")
                .arg(principal)
                .arg(ofPrincipal)
                .arg(profile->name);
    }
    if (ofPrincipal >= m_limits.perPrincipal)
        return QStringLiteral("principal '%1' already runs %2 background jobs over all its "
                              "sessions, the most allowed (JOB_MAX_PER_PRINCIPAL); wait for one "
                              "to end or stop one with job_kill")
                .arg(principal)
                .arg(m_limits.perPrincipal);
    return running() >= m_limits.total ? totalRefusal() : QString();
}

QString JobRegistry::totalRefusal() const
{
    return QStringLiteral("the server already runs %1 background jobs, the most allowed "
                          "in total (JOB_MAX_TOTAL); try again when one has ended")
            .arg(m_limits.total);
}

void JobRegistry::add(BackgroundJob *job)
{
    Q_ASSERT(!m_jobs.contains(job->id()));
    job->setParent(this);
    m_jobs.insert(job->id(), job);
    m_order.append(job->id());
    connect(job, &BackgroundJob::finished, this, &JobRegistry::onFinished);
}

BackgroundJob *JobRegistry::find(const QString &sessionId, const QString &id) const
{
    BackgroundJob *job = m_jobs.value(id);
    return job && !sessionId.isEmpty() && job->sessionId() == sessionId ? job : nullptr;
}

QList<BackgroundJob *> JobRegistry::jobsOf(const QString &sessionId) const
{
    QList<BackgroundJob *> jobs;
    for (const QString &id : m_order) {
        BackgroundJob *job = m_jobs.value(id);
        if (job->sessionId() == sessionId)
            jobs.append(job);
    }
    return jobs;
}

void JobRegistry::remove(const QString &id)
{
    BackgroundJob *job = m_jobs.take(id);
    if (!job)
        return;
    m_order.removeOne(id);
    dispose(job);
}

void JobRegistry::endSession(const QString &sessionId)
{
    if (sessionId.isEmpty())
        return; // detached jobs belong to no session
    for (BackgroundJob *job : jobsOf(sessionId)) {
        if (m_limits.keepDetachedSeconds <= 0 || !job->isRunning()) {
            remove(job->id());
            continue;
        }
        job->setSessionId(QString());
        const QString id = job->id();
        QTimer::singleShot(std::chrono::seconds(m_limits.keepDetachedSeconds), job, [this, id] {
            if (BackgroundJob *left = m_jobs.value(id); left && left->sessionId().isEmpty())
                remove(id);
        });
    }
}

BackgroundJob *JobRegistry::attach(const QString &sessionId, const QString &principal,
                                   const QString &id)
{
    BackgroundJob *job = m_jobs.value(id);
    if (!job || !job->sessionId().isEmpty() || sessionId.isEmpty()
        || job->description().principal != principal)
        return nullptr;
    job->setSessionId(sessionId);
    return job;
}

int JobRegistry::running() const
{
    int count = 0;
    for (const BackgroundJob *job : m_jobs)
        count += job->isRunning() ? 1 : 0;
    return count;
}

int JobRegistry::running(const QString &sessionId) const
{
    int count = 0;
    for (const BackgroundJob *job : m_jobs)
        count += job->isRunning() && job->sessionId() == sessionId ? 1 : 0;
    return count;
}

QString JobRegistry::noSuchJob(const QString &id)
{
    return QStringLiteral("no such job: %1 (job ids belong to the session that started the job)")
            .arg(id);
}

// A job that ended stays readable; beyond the per-session bound the oldest ended job goes.
void JobRegistry::onFinished(const QString &id)
{
    BackgroundJob *job = m_jobs.value(id);
    if (!job)
        return;
    QList<BackgroundJob *> ended;
    for (BackgroundJob *other : jobsOf(job->sessionId())) {
        if (!other->isRunning())
            ended.append(other);
    }
    while (ended.size() > m_limits.finishedKeptPerSession)
        remove(ended.takeFirst()->id());
}

// The jail job ends gracefully (the jail kills the whole tree and reports) before its objects
// go; deleting a running job would block the event loop on a SIGKILL and a wait.
void JobRegistry::dispose(BackgroundJob *job)
{
    disconnect(job, nullptr, this, nullptr);
    if (job->isRunning()) {
        connect(job, &BackgroundJob::finished, job, &QObject::deleteLater);
        job->kill();
    } else {
        job->deleteLater();
    }
}

} // namespace cmcp
