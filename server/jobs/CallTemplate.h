#pragma once

#include "sandbox/JobRequest.h"
#include "sandbox/JobResult.h"
#include "sandbox/SandboxSupervisor.h"

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QString>

namespace cmcp {

class JailJob;

// One kind's template: a jail built once, from which each call of that kind forks a process of
// its own (cmcp-jail --serve-template; the design is in server/jail/template.h). The template
// holds a uid of the pool for itself; each call still leases its own, and its own cgroup, /tmp
// and pid namespace. A template that ends is started again on the next call, which starts cold
// meanwhile (cmcp-jail --via-template falls back to a cold start whenever no template takes
// the job), and not more than once every few seconds, so a machine where templates cannot start
// does not spin. Deleting it retires the template: no new call, calls in flight finish.
class CallTemplate : public QObject
{
    Q_OBJECT
public:
    CallTemplate(SandboxSupervisor &supervisor, JobRequest request, QString socketPath,
                 QObject *parent = nullptr);
    ~CallTemplate() override;

    // The socket a call's job hands itself to (JobRequest::viaTemplate); empty while no
    // template runs (and, if it is time, starts one).
    QString socketForCall();
    const QString &socketPath() const { return m_socketPath; }
    // A call handed to the template by a job started ahead with socketPath() (counted in
    // status()); a template that ended is started again here too, when it is time.
    void countCall();
    // {"state": "running"|"starting"|"stopped", "calls": N, "starts": N, "socket": "<name>",
    //  "last_end": "..."}
    QJsonObject status() const;

Q_SIGNALS:
    // The template ended (it is started again on a later call): the jobs forked from it and kept
    // waiting ended with it.
    void ended();

private:
    void start();
    void restartIfDue();
    void onEnded(const JobResult &result);

    SandboxSupervisor &m_supervisor;
    JobRequest m_request;
    const QString m_socketPath;
    JailJob *m_job = nullptr;
    QDateTime m_startedAt;
    QDateTime m_endedAt;
    QString m_lastEnd;
    int m_starts = 0;
    int m_calls = 0;
};

} // namespace cmcp
