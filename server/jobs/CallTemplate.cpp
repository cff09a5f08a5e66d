#include "jobs/CallTemplate.h"

#include "sandbox/JailJob.h"

#include <QFile>
#include <QFileInfo>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// Between two starts of a template that ended: calls start cold meanwhile.
constexpr qint64 kRestartPauseMs = 5000;

} // namespace

CallTemplate::CallTemplate(SandboxSupervisor &supervisor, JobRequest request, QString socketPath,
                           QObject *parent)
    : QObject(parent),
      m_supervisor(supervisor),
      m_request(std::move(request)),
      m_socketPath(std::move(socketPath))
{
    // Standard input stays open: closing it retires the template.
    m_request.awaitInput = true;
    m_request.standardInput.clear();
    m_request.timeoutMs = 0;
    m_request.resultChannel = false;
    m_request.serveTemplate = m_socketPath;
    start();
}

CallTemplate::~CallTemplate()
{
    if (!m_job)
        return;
    // Retired: it takes no new call and ends when the calls in flight have; the job object
    // lives until then (and kills the template if the daemon ends first).
    m_job->disconnect(this);
    m_job->setParent(nullptr);
    connect(m_job, &JailJob::finished, m_job, &QObject::deleteLater);
    if (m_job->isRunning())
        m_job->provideInput({}, 0);
    else
        m_job->deleteLater();
}

void CallTemplate::start()
{
    QString error;
    JailJob *job = m_supervisor.createJob(m_request, this, &error);
    if (!job) {
        m_lastEnd = error;
        m_endedAt = QDateTime::currentDateTimeUtc();
        return;
    }
    m_job = job;
    ++m_starts;
    m_startedAt = QDateTime::currentDateTimeUtc();
    connect(job, &JailJob::finished, this, &CallTemplate::onEnded);
    job->start();
}

void CallTemplate::onEnded(const JobResult &result)
{
    m_lastEnd = result.endReason();
    m_endedAt = QDateTime::currentDateTimeUtc();
    m_job->deleteLater();
    m_job = nullptr;
    spdlog::warn("sandbox: the {} template ended ({}); calls start cold until it is replaced",
                 m_request.program.toStdString(), m_lastEnd.toStdString());
    Q_EMIT ended();
}

void CallTemplate::restartIfDue()
{
    if (!m_job
        && (!m_endedAt.isValid()
            || m_endedAt.msecsTo(QDateTime::currentDateTimeUtc()) >= kRestartPauseMs))
        start();
}

void CallTemplate::countCall()
{
    ++m_calls;
    restartIfDue();
}

QString CallTemplate::socketForCall()
{
    if (!m_job) {
        restartIfDue();
        return {};
    }
    // Until the template listens, the call's job finds no socket and starts cold.
    if (!QFile::exists(m_socketPath))
        return {};
    ++m_calls;
    return m_socketPath;
}

QJsonObject CallTemplate::status() const
{
    QJsonObject status{
            {QStringLiteral("state"),
             m_job ? (QFile::exists(m_socketPath) ? QStringLiteral("running")
                                                  : QStringLiteral("starting"))
                   : QStringLiteral("stopped")},
            {QStringLiteral("calls"), m_calls},
            {QStringLiteral("starts"), m_starts},
            {QStringLiteral("socket"), QFileInfo(m_socketPath).fileName()},
    };
    if (!m_lastEnd.isEmpty())
        status.insert(QStringLiteral("last_end"), m_lastEnd);
    return status;
}

} // namespace cmcp
