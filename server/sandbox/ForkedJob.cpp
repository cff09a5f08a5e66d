#include "sandbox/ForkedJob.h"

#include "posix/ErrnoText.h"
#include "posix/Pipe.h"
#include "posix/ReadAvailable.h"
#include "sandbox/LimitRefusals.h"
#include "sandbox/TemplateCell.h"

#include <QDir>
#include <QSocketNotifier>
#include <QUuid>

#include <fcntl.h>
#include <sys/wait.h>

namespace cmcp {

ForkedJob::ForkedJob(JobSpec spec, TemplateCell *cell, QObject *parent)
    : Job(parent),
      m_spec(std::move(spec)),
      m_cell(cell),
      m_workspaceIdmapped(cell->armedWithWorkspaceView())
{
    m_timeoutTimer.setSingleShot(true);
    m_timeoutTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_timeoutTimer, &QTimer::timeout, this, [this] {
        m_timedOut = true;
        stop();
    });
    m_killTimer.setSingleShot(true);
    connect(&m_killTimer, &QTimer::timeout, this, [this] {
        if (!m_running || m_end)
            return;
        // Nothing more can be learned from the cell: its template ends it, the uid stays out
        // of the pool, and the call ends here with what it printed.
        m_unresponsive = true;
        if (m_cell)
            Q_EMIT cellUnresponsive(m_cell->id());
        m_error = QStringLiteral("the template's cell did not answer within %1 ms of the kill; "
                                 "it is being killed with its cgroup")
                          .arg(kKillAnswerMs);
        finish(collectResult());
    });
}

ForkedJob::~ForkedJob()
{
    if (m_running && m_cell && !m_end)
        m_cell->killCall(); // nobody waits for the answer; the cell still ends the call
    closeStream(m_out);
    closeStream(m_err);
    closeStream(m_channel);
}

void ForkedJob::setUidLease(UidLease lease)
{
    m_lease = std::move(lease);
}

void ForkedJob::setWorkspaceHold(std::shared_ptr<const void> hold)
{
    m_workspaceHold = std::move(hold);
}

bool ForkedJob::openStream(Stream &stream, UniqueFd &writeEnd, void (ForkedJob::*read)(),
                           QString *error)
{
    std::optional<PipePair> pipe = openPipe();
    if (!pipe) {
        *error = QStringLiteral("pipe for the call: ") + errnoText(errno);
        return false;
    }
    stream.fd = std::move(pipe->read);
    writeEnd = std::move(pipe->write);
    ::fcntl(stream.fd.get(), F_SETFL, ::fcntl(stream.fd.get(), F_GETFL) | O_NONBLOCK);
    stream.notifier = new QSocketNotifier(stream.fd.get(), QSocketNotifier::Read, this);
    connect(stream.notifier, &QSocketNotifier::activated, this, read);
    return true;
}

void ForkedJob::start()
{
    if (m_started)
        return;
    m_started = true;
    m_running = true;
    m_clock.start();
    const QString spillStem = m_spec.spillDirectory.isEmpty()
            ? QString()
            : QDir(m_spec.spillDirectory)
                      .filePath(QUuid::createUuid().toString(QUuid::WithoutBraces));
    const auto spillPath = [&](const char *suffix) {
        return spillStem.isEmpty() ? QString() : spillStem + QLatin1String(suffix);
    };
    m_stdout = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stdout"));
    m_stderr = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stderr"));

    QString error;
    UniqueFd outWrite, errWrite, channelWrite;
    const bool opened = openStream(m_out, outWrite, &ForkedJob::readStandardOutput, &error)
            && openStream(m_err, errWrite, &ForkedJob::readStandardError, &error)
            && (!m_spec.resultChannel
                || openStream(m_channel, channelWrite, &ForkedJob::readChannel, &error));
    if (opened && m_cell) {
        connect(m_cell, &TemplateCell::callRefused, this, &ForkedJob::onRefused);
        connect(m_cell, &TemplateCell::callDenied, this,
                [this](const std::vector<SeccompDenial> &denials, qint64 unnamed) {
                    m_denials = denials;
                    m_deniedUnnamed = unnamed;
                });
        connect(m_cell, &TemplateCell::callEnded, this, &ForkedJob::onEnded);
        connect(m_cell, &TemplateCell::gone, this, &ForkedJob::onCellGone);
        // Deleted: its template was ended, which ends its cell and call.
        connect(m_cell, &QObject::destroyed, this, &ForkedJob::onCellGone);
    }
    if (!opened
        || !(m_cell
             && m_cell->startCall(m_spec.policy.uid, m_spec.standardInput, outWrite.get(),
                                  errWrite.get(), channelWrite.get(), &error))) {
        if (!m_cell)
            error = QStringLiteral("the template's cell is gone");
        m_error = error;
        // Always after start() has returned, as for a job that ran.
        QMetaObject::invokeMethod(
                this, [this] { finish(collectResult()); }, Qt::QueuedConnection);
        return;
    }
    if (m_spec.timeoutMs > 0)
        m_timeoutTimer.start(m_spec.timeoutMs);
}

void ForkedJob::cancel()
{
    if (!m_running || m_stopping)
        return;
    m_cancelled = true;
    stop();
}

void ForkedJob::stop()
{
    if (!m_running || m_stopping || m_end)
        return;
    m_stopping = true;
    if (m_cell)
        m_cell->killCall();
    m_killTimer.start(kKillAnswerMs);
}

void ForkedJob::readStandardOutput()
{
    readOutput(JobStream::StandardOutput);
}

void ForkedJob::readStandardError()
{
    readOutput(JobStream::StandardError);
}

void ForkedJob::readOutput(JobStream which)
{
    const bool isStdout = which == JobStream::StandardOutput;
    Stream &stream = isStdout ? m_out : m_err;
    if (!stream.fd.isValid())
        return;
    OutputCapture &capture = isStdout ? *m_stdout : *m_stderr;
    const ReadEnd end = readAvailable(stream.fd.get(), [&](const char *data, std::size_t size) {
        const QByteArray bytes(data, qsizetype(size));
        capture.append(bytes);
        Q_EMIT outputReceived(which, bytes);
    });
    if (end != ReadEnd::WouldBlock) {
        closeStream(stream);
        finishIfDone();
    }
}

// Read as it arrives, so a call writing more than a pipe holds never blocks; beyond the cap the
// bytes are drained and dropped.
void ForkedJob::readChannel()
{
    if (!m_channel.fd.isValid())
        return;
    const ReadEnd end =
            readAvailable(m_channel.fd.get(), [this](const char *data, std::size_t size) {
                JailJob::keepChannelBytes(m_channelBytes, m_channelOverflowed, data, size);
            });
    if (end != ReadEnd::WouldBlock) {
        closeStream(m_channel);
        finishIfDone();
    }
}

void ForkedJob::closeStream(Stream &stream)
{
    // The notifier before the descriptor: the dispatcher still watches it.
    delete stream.notifier;
    stream.notifier = nullptr;
    stream.fd.reset();
}

void ForkedJob::onRefused(int code, const QString &layer, const QString &message)
{
    m_refusal = JobRefusal{layer, code, message};
}

void ForkedJob::onEnded(const cell_protocol::CallEnd &end)
{
    m_end = end;
    m_wallMs = m_clock.elapsed();
    // The cell goes on to other calls: what it says from now on is theirs.
    if (m_cell)
        m_cell->disconnect(this);
    finishIfDone();
}

void ForkedJob::onCellGone()
{
    if (m_end)
        return;
    m_wallMs = m_clock.elapsed();
    m_error = QStringLiteral("the template's cell ended during the call (its template ended "
                             "or was killed); the call was killed with it");
    finishIfDone();
}

// Once the cell said how the call ended and the output ends are closed: every process of the
// call is gone by then, so no byte is missing.
void ForkedJob::finishIfDone()
{
    if (!m_running || (!m_end && m_error.isEmpty()) || m_out.fd.isValid() || m_err.fd.isValid()
        || m_channel.fd.isValid())
        return;
    finish(collectResult());
}

void ForkedJob::finish(JobResult result)
{
    if (!m_running)
        return;
    m_running = false;
    m_timeoutTimer.stop();
    m_killTimer.stop();
    if (m_cell)
        m_cell->disconnect(this);
    closeStream(m_out);
    closeStream(m_err);
    closeStream(m_channel);
    m_stdout->finish();
    m_stderr->finish();
    // A call the cell confirmed ended, or whose cell died (its pid namespace with it), has no
    // process left; one whose cell did not answer may.
    if (m_unresponsive)
        m_lease.retire();
    else
        m_lease.release();
    m_workspaceHold.reset();
    Q_EMIT finished(result);
}

JobResult ForkedJob::collectResult() const
{
    JobResult result;
    result.timedOut = m_timedOut;
    result.cancelled = m_cancelled;
    result.insecure = m_spec.insecure;
    result.wallMs = m_end || !m_error.isEmpty() ? m_wallMs : m_clock.elapsed();
    result.standardOutput = m_stdout->captured();
    result.standardError = m_stderr->captured();
    result.error = m_error;
    result.channel = m_channelBytes;
    result.channelOverflowed = m_channelOverflowed;
    result.layers = jailLayerNames(m_spec.policy);
    if (m_workspaceIdmapped)
        result.layers.append(QStringLiteral("idmap"));
    if (m_timedOut)
        result.sandboxRefusals.append(timeLimitRefusal(m_spec.timeoutMs));
    if (m_refusal) {
        result.refusal = m_refusal;
        return result;
    }
    if (!m_end) {
        result.signal = SIGKILL;
        return result;
    }
    if (WIFEXITED(m_end->status))
        result.exitCode = WEXITSTATUS(m_end->status);
    else
        result.signal = WTERMSIG(m_end->status);
    result.cpuMs = qint64(m_end->cpuNanoseconds / 1000000);
    if (m_end->hasPeakMemory)
        result.peakMemoryKb = qint64(m_end->peakMemoryBytes / 1024);
    result.oomKilled = m_end->oomKilled;
    appendSeccompRefusals(result, m_denials, m_deniedUnnamed);
    appendLimitRefusals(result, m_spec.policy, qint64(m_end->pidsRefused));
    return result;
}

} // namespace cmcp
