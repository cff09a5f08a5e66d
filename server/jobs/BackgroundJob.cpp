#include "jobs/BackgroundJob.h"

#include "sandbox/JailJob.h"

#include <QFile>

namespace cmcp {

namespace {

// The output fields of the system tools' results: a background job's output is read with
// job_output, so its status leaves them out.
const char *const kOutputFields[] = {"stdout", "stderr",        "output",
                                     "error",  "stdout_handle", "stderr_handle"};

} // namespace

BackgroundJob::BackgroundJob(QString id, QString sessionId, Description description, JailJob *job,
                             std::unique_ptr<JobOutputLog> log, ResultMaker makeResult)
    : JobAdapter(job, std::move(makeResult)),
      m_jailJob(job),
      m_id(std::move(id)),
      m_sessionId(std::move(sessionId)),
      m_description(std::move(description)),
      m_log(std::move(log))
{
}

BackgroundJob::~BackgroundJob() = default;

void BackgroundJob::start()
{
    m_startedAt = QDateTime::currentDateTimeUtc();
    m_clock.start();
    job()->start();
}

void BackgroundJob::onOutput(JobStream, const QByteArray &bytes)
{
    m_log->append(bytes);
}

void BackgroundJob::onFinished(const JobResult &result)
{
    m_elapsedAtEndMs = m_clock.elapsed();
    m_result = result;
    // The jail's capture spilled what exceeded its cap; the log holds all of it already.
    for (const CapturedStream *stream : {&result.standardOutput, &result.standardError}) {
        if (!stream->spillPath.isEmpty())
            QFile::remove(stream->spillPath);
    }
    Q_EMIT finished(m_id);
}

ToolResult BackgroundJob::toolResult() const
{
    return m_result ? makeResult(*m_result) : ToolResult();
}

bool BackgroundJob::writeInput(const QByteArray &bytes, bool closeAfter, QString *error)
{
    if (!m_description.interactive) {
        *error = QStringLiteral("job %1 was not started with interactive: true; its standard "
                                "input is closed")
                         .arg(m_id);
        return false;
    }
    if (!isRunning()) {
        *error = QStringLiteral("job %1 has ended; nothing reads its input").arg(m_id);
        return false;
    }
    if (!bytes.isEmpty() && !m_jailJob->writeInput(bytes)) {
        *error = QStringLiteral("could not write to job %1's standard input").arg(m_id);
        return false;
    }
    if (closeAfter)
        m_jailJob->closeInput();
    return true;
}

void BackgroundJob::kill()
{
    if (!isRunning())
        return;
    m_killed = true;
    job()->cancel();
}

QString BackgroundJob::state() const
{
    if (!m_result)
        return QStringLiteral("running");
    if (m_killed || m_result->cancelled)
        return QStringLiteral("killed");
    if (m_result->timedOut)
        return QStringLiteral("timed_out");
    if (m_result->refusal || (!m_result->exitCode && !m_result->signal))
        return QStringLiteral("failed");
    return QStringLiteral("exited");
}

QJsonObject BackgroundJob::status() const
{
    QJsonObject json{
            {QStringLiteral("job_id"), m_id},
            {QStringLiteral("tool"), m_description.tool},
            {QStringLiteral("summary"), m_description.summary},
            {QStringLiteral("interactive"), m_description.interactive},
            {QStringLiteral("state"), state()},
            {QStringLiteral("started_at"), m_startedAt.toString(Qt::ISODateWithMs)},
            {QStringLiteral("elapsed_ms"), double(m_result ? m_elapsedAtEndMs : m_clock.elapsed())},
            {QStringLiteral("output_bytes"), double(m_log->keptBytes())},
            {QStringLiteral("output_dropped_bytes"), double(m_log->droppedBytes())},
            {QStringLiteral("timeout_seconds"), m_description.timeoutSeconds}};
    if (m_result) {
        QJsonObject result = toolResult().structuredContent.value_or(QJsonObject());
        for (const char *field : kOutputFields)
            result.remove(QLatin1String(field));
        json.insert(QStringLiteral("result"), result);
    }
    return json;
}

} // namespace cmcp
