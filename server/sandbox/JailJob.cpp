#include "JailJob.h"

#include "UidReaper.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QSocketNotifier>
#include <QUuid>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cmcp {

namespace {

// The jail's policy parser refuses uids below this (server/jail/policy.h, kMinId): anything
// lower is not a pool uid and is never reaped.
constexpr qint64 kLowestJobUid = 1000;

QString errnoText(const char *what)
{
    return QStringLiteral("%1: %2").arg(QLatin1String(what),
                                        QString::fromLocal8Bit(strerror(errno)));
}

// Both ends close-on-exec (so no other child inherits them) and above 2: 0..2 become the
// jail's stdio, and cmcp-jail refuses a --report-fd of 2 or less.
bool makePipe(int fds[2], QString *error)
{
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *error = errnoText("pipe2");
        return false;
    }
    for (int end = 0; end < 2; ++end) {
        if (fds[end] > 2)
            continue;
        const int moved = fcntl(fds[end], F_DUPFD_CLOEXEC, 3);
        if (moved < 0) {
            *error = errnoText("fcntl(F_DUPFD_CLOEXEC)");
            ::close(fds[0]);
            ::close(fds[1]);
            return false;
        }
        ::close(fds[end]);
        fds[end] = moved;
    }
    return true;
}

// The whole policy goes into the pipe before the jail starts, so nothing has to be written
// later, and no write can block: the pipe is grown first when the policy would not fit.
bool writePolicy(int fd, const QByteArray &policy, QString *error)
{
    const int capacity = fcntl(fd, F_GETPIPE_SZ);
    if (capacity < policy.size() && fcntl(fd, F_SETPIPE_SZ, int(policy.size())) < policy.size()) {
        *error = QStringLiteral("the policy (%1 bytes) does not fit a pipe: %2")
                         .arg(policy.size())
                         .arg(QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    qsizetype written = 0;
    while (written < policy.size()) {
        const ssize_t n = ::write(fd, policy.constData() + written, policy.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *error = errnoText("writing the policy");
            return false;
        }
        written += n;
    }
    return true;
}

CapturedStream capturedStream(const OutputCapture &capture)
{
    CapturedStream stream;
    stream.head = capture.head();
    stream.tail = capture.tail();
    stream.totalBytes = capture.totalBytes();
    stream.truncated = capture.truncated();
    stream.spillPath = capture.spillPath();
    stream.spillError = capture.spillError();
    return stream;
}

} // namespace

JailJob::JailJob(JobSpec spec, QObject *parent)
    : QObject(parent),
      m_spec(std::move(spec)),
      m_id(QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    m_timeoutTimer.setSingleShot(true);
    m_timeoutTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_timeoutTimer, &QTimer::timeout, this, [this] {
        if (!m_running || m_stopping)
            return;
        m_timedOut = true;
        stop();
    });
    m_killTimer.setSingleShot(true);
    m_killTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_killTimer, &QTimer::timeout, this, [this] {
        if (m_running)
            m_process->kill();
    });
}

JailJob::~JailJob()
{
    if (m_running) {
        // No result to give any more; the job still must not outlive this object. SIGKILL
        // reaches the jail, and the job through its parent-death signal.
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(1000);
        m_running = false;
        reapLeftovers();
    }
    closeReportPipe();
    closeChannelPipe();
    if (!m_reapError.isEmpty())
        m_lease.retire();
}

void JailJob::setUidLease(UidLease lease)
{
    m_lease = std::move(lease);
}

void JailJob::setWorkspaceHold(std::shared_ptr<const void> hold)
{
    m_workspaceHold = std::move(hold);
}

void JailJob::start()
{
    if (m_started)
        return;
    m_started = true;
    m_running = true;
    m_clock.start();

    const QString spillStem = m_spec.spillDirectory.isEmpty()
            ? QString()
            : QDir(m_spec.spillDirectory).filePath(m_id);
    const auto spillPath = [&](const char *suffix) {
        return spillStem.isEmpty() ? QString() : spillStem + QLatin1String(suffix);
    };
    m_stdout = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stdout"));
    m_stderr = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stderr"));

    // Qt 6.4's QProcess leaks a pipe descriptor on every start whose exec fails (measured: one
    // per attempt, two per call with the warm pool), so under load a missing jail used up the
    // daemon's descriptors. The common cause is refused here, before QProcess is involved.
    if (!QFileInfo(m_spec.jailProgram).isExecutable()) {
        finishWithError(QStringLiteral("cannot start cmcp-jail (%1): not an executable file")
                                .arg(m_spec.jailProgram));
        return;
    }

    QString error;
    // The result channel first: its number goes into the policy's environment.
    int channelWriteFd = -1;
    JailPolicy policy = m_spec.policy;
    if (m_spec.resultChannel) {
        int channelPipe[2];
        if (!makePipe(channelPipe, &error)) {
            finishWithError(error);
            return;
        }
        channelWriteFd = channelPipe[1];
        m_channelFd = channelPipe[0];
        fcntl(m_channelFd, F_SETFL, fcntl(m_channelFd, F_GETFL) | O_NONBLOCK);
        m_channelNotifier = new QSocketNotifier(m_channelFd, QSocketNotifier::Read, this);
        connect(m_channelNotifier, &QSocketNotifier::activated, this, &JailJob::readChannel);
        policy.setEnv(QLatin1String(kResultChannelVariable), QString::number(channelWriteFd));
    }
    const auto closeChannelWriteEnd = [&channelWriteFd] {
        if (channelWriteFd >= 0)
            ::close(channelWriteFd);
        channelWriteFd = -1;
    };

    int policyPipe[2];
    if (!makePipe(policyPipe, &error)) {
        closeChannelWriteEnd();
        finishWithError(error);
        return;
    }
    const bool policyWritten = writePolicy(
            policyPipe[1], QJsonDocument(policy.toJson()).toJson(QJsonDocument::Compact), &error);
    ::close(policyPipe[1]);
    int reportPipe[2];
    if (!policyWritten || !makePipe(reportPipe, &error)) {
        ::close(policyPipe[0]);
        closeChannelWriteEnd();
        finishWithError(error);
        return;
    }
    const int policyFd = policyPipe[0];
    const int reportWriteFd = reportPipe[1];
    m_reportFd = reportPipe[0];
    fcntl(m_reportFd, F_SETFL, fcntl(m_reportFd, F_GETFL) | O_NONBLOCK);
    m_reportNotifier = new QSocketNotifier(m_reportFd, QSocketNotifier::Read, this);
    connect(m_reportNotifier, &QSocketNotifier::activated, this, &JailJob::readReport);

    QStringList jailArguments{QStringLiteral("--policy-fd"), QString::number(policyFd),
                              QStringLiteral("--report-fd"), QString::number(reportWriteFd)};
    if (channelWriteFd >= 0)
        jailArguments << QStringLiteral("--pass-fd") << QString::number(channelWriteFd);
    jailArguments << QStringLiteral("--") << m_spec.program << m_spec.arguments;
    m_process = new QProcess(this);
    m_process->setProgram(m_spec.jailProgram);
    m_process->setArguments(jailArguments);
    // Nothing of the daemon's environment (secrets included) reaches the jail; the job's
    // environment is the policy's "env".
    m_process->setProcessEnvironment(QProcessEnvironment());
    m_process->setWorkingDirectory(QStringLiteral("/"));
    if (m_spec.standardInput.isEmpty() && !m_spec.awaitInput && !m_spec.interactiveInput)
        m_process->setStandardInputFile(QProcess::nullDevice());
    // In the forked child, before exec, with system calls only: every descriptor above 2 gets
    // close-on-exec (also ones the daemon inherited without it), then the pipes lose it, in
    // this child alone. The jail starts with stdio and its pipes, nothing else. On kernels
    // before 5.11 close_range cannot mark: the jail still closes every descriptor of the job.
    m_process->setChildProcessModifier([policyFd, reportWriteFd, channelWriteFd] {
        ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
        ::fcntl(policyFd, F_SETFD, 0);
        ::fcntl(reportWriteFd, F_SETFD, 0);
        if (channelWriteFd >= 0)
            ::fcntl(channelWriteFd, F_SETFD, 0);
    });
    connect(m_process, &QProcess::readyReadStandardOutput, this,
            [this] { readOutput(JobStream::StandardOutput); });
    connect(m_process, &QProcess::readyReadStandardError, this,
            [this] { readOutput(JobStream::StandardError); });
    connect(m_process, &QProcess::finished, this, &JailJob::onProcessFinished);
    connect(m_process, &QProcess::errorOccurred, this, &JailJob::onProcessError);

    m_process->start();
    // The child holds its copies now (or never will): the daemon's are not needed.
    ::close(policyFd);
    ::close(reportWriteFd);
    closeChannelWriteEnd();
    if (!m_spec.standardInput.isEmpty()) {
        m_process->write(m_spec.standardInput);
        if (!m_spec.interactiveInput)
            m_process->closeWriteChannel();
    }
    if (m_spec.timeoutMs > 0 && !m_spec.awaitInput)
        m_timeoutTimer.start(m_spec.timeoutMs);
}

void JailJob::provideInput(const QByteArray &input, int timeoutMs)
{
    if (!m_spec.awaitInput || m_inputProvided || !m_running || !m_process)
        return;
    m_inputProvided = true;
    m_waitedMs = m_clock.elapsed();
    m_process->write(input);
    m_process->closeWriteChannel();
    if (timeoutMs > 0)
        m_timeoutTimer.start(timeoutMs);
}

bool JailJob::writeInput(const QByteArray &bytes)
{
    if (!m_spec.interactiveInput || !m_running || m_stopping || !m_process)
        return false;
    return m_process->write(bytes) == bytes.size();
}

void JailJob::closeInput()
{
    if (m_spec.interactiveInput && m_running && m_process)
        m_process->closeWriteChannel();
}

void JailJob::cancel()
{
    if (!m_running || m_stopping)
        return;
    m_cancelled = true;
    stop();
}

void JailJob::stop()
{
    if (!m_running || m_stopping || !m_process)
        return;
    m_stopping = true;
    // The jail answers SIGTERM by killing the job's whole tree and reporting how it ended.
    m_process->terminate();
    m_killTimer.start(kKillGraceMs);
}

void JailJob::readOutput(JobStream stream)
{
    if (!m_process)
        return;
    const bool isStdout = stream == JobStream::StandardOutput;
    const QByteArray bytes =
            isStdout ? m_process->readAllStandardOutput() : m_process->readAllStandardError();
    if (bytes.isEmpty())
        return;
    (isStdout ? m_stdout : m_stderr)->append(bytes);
    Q_EMIT outputReceived(stream, bytes);
}

void JailJob::readReport()
{
    if (m_reportFd < 0)
        return;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(m_reportFd, buffer, sizeof buffer);
        if (n > 0) {
            m_report.addBytes(QByteArray(buffer, n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && m_reportNotifier)
            m_reportNotifier->setEnabled(false); // end of file: it would fire forever
        return;
    }
}

// Read as it arrives, so a job writing more than a pipe holds never blocks; beyond the cap the
// bytes are drained and dropped.
void JailJob::readChannel()
{
    if (m_channelFd < 0)
        return;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(m_channelFd, buffer, sizeof buffer);
        if (n > 0) {
            const qint64 room = kResultChannelCapBytes - m_channel.size();
            if (n > room)
                m_channelOverflowed = true;
            m_channel.append(buffer, qMin<qint64>(n, qMax<qint64>(room, 0)));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && m_channelNotifier)
            m_channelNotifier->setEnabled(false);
        return;
    }
}

void JailJob::closeChannelPipe()
{
    delete m_channelNotifier;
    m_channelNotifier = nullptr;
    if (m_channelFd >= 0) {
        ::close(m_channelFd);
        m_channelFd = -1;
    }
}

void JailJob::closeReportPipe()
{
    if (m_reportNotifier) {
        m_reportNotifier->setEnabled(false);
        delete m_reportNotifier;
        m_reportNotifier = nullptr;
    }
    if (m_reportFd >= 0) {
        ::close(m_reportFd);
        m_reportFd = -1;
    }
}

void JailJob::onProcessFinished(int exitCode, QProcess::ExitStatus status)
{
    if (!m_running)
        return;
    m_running = false;
    m_timeoutTimer.stop();
    m_killTimer.stop();
    readOutput(JobStream::StandardOutput);
    readOutput(JobStream::StandardError);
    // The jail wrote its last record before exiting: it is in the pipe now.
    readReport();
    m_report.finish();
    closeReportPipe();
    // The job and everything it started are gone, so is every writer of the channel.
    readChannel();
    closeChannelPipe();
    m_stdout->finish();
    m_stderr->finish();
    reapLeftovers();

    const JobResult result = collectResult(exitCode, status);
    if (m_reapError.isEmpty())
        m_lease.release();
    else
        m_lease.retire();
    // Nothing of the job runs any more (or its uid stays retired): its workspace may go.
    m_workspaceHold.reset();
    Q_EMIT finished(result);
}

void JailJob::onProcessError(QProcess::ProcessError error)
{
    // Every other error comes with finished(); a failed start comes alone.
    if (error != QProcess::FailedToStart || !m_running)
        return;
    finishWithError(QStringLiteral("cannot start cmcp-jail (%1): %2")
                            .arg(m_spec.jailProgram, m_process->errorString()));
}

void JailJob::finishWithError(const QString &error)
{
    m_running = false;
    m_timeoutTimer.stop();
    m_killTimer.stop();
    closeReportPipe();
    closeChannelPipe();
    JobResult result;
    result.insecure = m_spec.insecure;
    result.error = error;
    result.wallMs = m_clock.elapsed();
    m_lease.release();
    m_workspaceHold.reset();
    // Always after start() has returned, as for a job that ran.
    QMetaObject::invokeMethod(
            this, [this, result] { Q_EMIT finished(result); }, Qt::QueuedConnection);
}

// With a job uid of its own, whatever still runs as that uid once the jail is gone was left
// behind by the job (with the pid-namespace layer there is nothing; without it, daemonized
// descendants). Killing them here means no process of a finished job survives, whichever
// layers the policy chose.
//
// A job that ran in a pid namespace (the jail reported it started with the namespaces layer)
// and whose end the jail reported leaves nothing: the job was the namespace's init, and the
// kernel kills every other process of the namespace and waits for them before init's exit
// can be collected, which the jail did before it reported. The reaper, a fork of the daemon
// that blocks the event loop, is then skipped.
void JailJob::reapLeftovers()
{
    const qint64 uid = m_spec.policy.uid ? qint64(*m_spec.policy.uid) : -1;
    if (uid < kLowestJobUid || !UidReaper::canReap())
        return;
    const auto &started = m_report.started();
    if (m_report.exit() && started && started->layers.contains(QLatin1String("namespaces")))
        return;
    QString error;
    if (!UidReaper::killAllProcessesOf(uid_t(uid), &error)) {
        m_reapError = QStringLiteral("processes of uid %1 may have survived the job: %2")
                              .arg(uid)
                              .arg(error);
        spdlog::error("sandbox job {}: {}; the uid is kept out of the pool", m_id.toStdString(),
                      m_reapError.toStdString());
    }
}

JobResult JailJob::collectResult(int exitCode, QProcess::ExitStatus status)
{
    JobResult result;
    result.timedOut = m_timedOut;
    result.cancelled = m_cancelled;
    result.insecure = m_spec.insecure;
    result.wallMs = m_clock.elapsed() - m_waitedMs;
    result.standardOutput = capturedStream(*m_stdout);
    result.standardError = capturedStream(*m_stderr);
    result.reportErrors = m_report.errors();
    result.error = m_reapError;
    result.channel = m_channel;
    result.channelOverflowed = m_channelOverflowed;
    if (const auto &started = m_report.started())
        result.layers = started->layers;

    if (const auto &refusal = m_report.refusal()) {
        result.refusal = JobRefusal{refusal->layer, refusal->code, refusal->message};
    } else if (const auto &exit = m_report.exit()) {
        result.exitCode = exit->exitCode;
        result.signal = exit->signal;
        result.wallMs = qMax<qint64>(0, qint64(exit->wallMs) - m_waitedMs);
        result.cpuMs = exit->cpuMs;
        result.peakMemoryKb = exit->peakMemoryKb;
        result.oomKilled = exit->oomKilled;
    } else {
        // The jail itself was killed (SIGKILL after the grace) or did not report: its own exit
        // status is all there is; cpu and memory stay unknown.
        if (status == QProcess::CrashExit)
            result.signal = exitCode; // QProcess gives the signal number here
        else
            result.exitCode = exitCode;
        result.reportErrors.append(
                status == QProcess::CrashExit
                        ? QStringLiteral("cmcp-jail was killed by signal %1 before it reported "
                                         "how the job ended")
                                  .arg(exitCode)
                        : QStringLiteral("cmcp-jail exited (status %1) without reporting how the "
                                         "job ended")
                                  .arg(exitCode));
    }
    return result;
}

} // namespace cmcp
