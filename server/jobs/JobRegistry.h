#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>

namespace cmcp {

class BackgroundJob;
class PrincipalProfiles;

// The background jobs of every session, each reachable only from the session that started it:
// a lookup with another session's id finds nothing, exactly as for an id that never existed.
// It enforces the caps on running jobs (per session, per principal and in total: a client that
// opens more sessions, or leaves detached jobs behind, still holds no more than its principal's
// share) and keeps a bounded number of
// finished jobs per session for job_status and job_output.
class JobRegistry : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        int perSession = 4; // JOB_MAX_PER_SESSION
        int total = 16; // JOB_MAX_TOTAL
        int finishedKeptPerSession = 16;
        // JOB_KEEP_SECONDS: how long a running job outlives its session, detached, waiting for
        // a new session of the same client to take it over with job_attach; 0: it is killed.
        int keepDetachedSeconds = 0;
        int perPrincipal = 16; // JOB_MAX_PER_PRINCIPAL, over all its sessions and detached jobs
    };

    explicit JobRegistry(Limits limits, QObject *parent = nullptr);
    ~JobRegistry() override;

    // A principal whose profile sets max_background_jobs has that cap instead of perPrincipal.
    // `profiles` outlives the registry.
    void useProfiles(const PrincipalProfiles *profiles) { m_profiles = profiles; }

    // Why `sessionId` of `principal` may not start another job now, naming the cap; empty when
    // it may.
    QString refusal(const QString &sessionId, const QString &principal) const;
    // Takes the job (not started yet or running); its id must be new.
    void add(BackgroundJob *job);
    // nullptr for an unknown id and for another session's job alike.
    BackgroundJob *find(const QString &sessionId, const QString &id) const;
    // Oldest first.
    QList<BackgroundJob *> jobsOf(const QString &sessionId) const;
    // Forgets the job: it is killed if still running, and deleted once it has ended.
    void remove(const QString &id);
    // The session has ended: every one of its jobs goes, as by remove(), except that with
    // keepDetachedSeconds its running jobs are detached and killed only if no session attaches
    // them in time.
    void endSession(const QString &sessionId);
    // Gives a detached job to `sessionId` of `principal`. The job id, 128 random bits only the
    // client that started the job was told, is the proof of ownership, and only within the
    // principal that started it: nullptr when no detached job of that principal has that id (a
    // job of a live session is never taken).
    BackgroundJob *attach(const QString &sessionId, const QString &principal, const QString &id);

    int running() const;
    int running(const QString &sessionId) const;

    // The message for an id this session cannot reach.
    static QString noSuchJob(const QString &id);

private:
    void onFinished(const QString &id);
    void dispose(BackgroundJob *job);
    QString totalRefusal() const;

    const Limits m_limits;
    const PrincipalProfiles *m_profiles = nullptr;
    QHash<QString, BackgroundJob *> m_jobs; // by id
    QList<QString> m_order; // ids, oldest first
};

} // namespace cmcp
