#include "sandbox/JailJob.h"

#include "posix/UniqueFd.h"

#include "posix/DescriptorPassing.h"
#include "posix/ErrnoText.h"
#include "posix/Pipe.h"
#include "posix/ReadAvailable.h"
#include "posix/WriteAll.h"
#include "sandbox/AbandonedCgroups.h"
#include "sandbox/JailCommandLine.h"
#include "sandbox/LimitRefusals.h"
#include "sandbox/UidReaper.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QSocketNotifier>
#include <QUuid>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cmcp {

namespace {

// The jail's policy parser refuses uids below this (jail/protocol/Policy.h, kMinId): anything
// lower is not a pool uid and is never reaped.
constexpr qint64 kLowestJobUid = 1000;

// Both ends close-on-exec (so no other child inherits them) and above 2: 0..2 become the
// jail's stdio, and cmcp-jail refuses a --report-fd (and every other descriptor) of 2 or less.
std::optional<PipePair> makePipe(QString *error)
{
    std::optional<PipePair> pipe = openPipeAboveStdio();
    if (!pipe)
        *error = QStringLiteral("pipe for cmcp-jail: ") + errnoText(errno);
    return pipe;
}

// The egress channel: a datagram socket pair, so the listener comes as one message.
std::optional<PipePair> makeEgressChannel(QString *error)
{
    std::optional<PipePair> pair = openSocketPairAboveStdio();
    if (!pair)
        *error = QStringLiteral("socketpair for the egress channel: ") + errnoText(errno);
    return pair;
}

// The rule a gate refusal names: "refused (JOB_NETWORK_ALLOW_PRIVATE): ..." gives
// JOB_NETWORK_ALLOW_PRIVATE.
QString refusalRule(const QString &reason)
{
    static const QLatin1String prefix("refused (");
    const qsizetype end = reason.indexOf(QLatin1String("):"));
    if (!reason.startsWith(prefix) || end < 0)
        return QStringLiteral("egress");
    return reason.mid(prefix.size(), end - prefix.size());
}

// The whole policy goes into the pipe before the jail starts, so nothing has to be written
// later, and no write can block: the pipe is grown first when the policy would not fit.
bool writePolicy(int fd, const QByteArray &policy, QString *error)
{
    const int capacity = fcntl(fd, F_GETPIPE_SZ);
    if (capacity < policy.size() && fcntl(fd, F_SETPIPE_SZ, int(policy.size())) < policy.size()) {
        *error = QStringLiteral("the policy (%1 bytes) does not fit a pipe: %2")
                         .arg(policy.size())
                         .arg(errnoText(errno));
        return false;
    }
    const std::size_t size = std::size_t(policy.size());
    if (writeAll(fd, policy.constData(), size) != size) {
        *error = QStringLiteral("writing the policy: ") + errnoText(errno);
        return false;
    }
    return true;
}

} // namespace

JailJob::JailJob(JobSpec spec, QObject *parent)
    : Job(parent),
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
        // No result to give any more; the job still must not outlive this object. SIGTERM
        // lets the jail kill the job and remove its cgroup (a SIGKILLed jail leaves the cgroup
        // behind for good); SIGKILL follows if it does not end, reaching the job through its
        // parent-death signal.
        m_process->disconnect(this);
        m_process->terminate();
        if (!m_process->waitForFinished(kKillGraceMs)) {
            m_process->kill();
            m_process->waitForFinished(1000);
        }
        m_running = false;
        reapLeftovers();
    }
    closeReportPipe();
    closeChannelPipe();
    closeEgress();
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
    createOutputCaptures();

    // Qt 6.4's QProcess leaks a pipe descriptor on every start whose exec fails (measured: one
    // per attempt, two per call with the warm pool), so under load a missing jail used up the
    // daemon's descriptors. The common cause is refused here, before QProcess is involved.
    if (!QFileInfo(m_spec.jailProgram).isExecutable()) {
        finishWithError(QStringLiteral("cannot start cmcp-jail (%1): not an executable file")
                                .arg(m_spec.jailProgram));
        return;
    }
    QString error;
    std::optional<JailEnds> ends = openPipes(&error);
    if (!ends) {
        finishWithError(error);
        return;
    }
    launchJail(*ends);
    // The child holds its copies now (or never will): the daemon's are not needed.
    ends.reset();
    giveStandardInput();
    if (m_spec.timeoutMs > 0 && !m_spec.awaitInput)
        m_timeoutTimer.start(m_spec.timeoutMs);
}

void JailJob::createOutputCaptures()
{
    const QString spillStem = m_spec.spillDirectory.isEmpty()
            ? QString()
            : QDir(m_spec.spillDirectory).filePath(m_id);
    const auto spillPath = [&](const char *suffix) {
        return spillStem.isEmpty() ? QString() : spillStem + QLatin1String(suffix);
    };
    m_stdout = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stdout"));
    m_stderr = std::make_unique<OutputCapture>(m_spec.outputCapBytes, spillPath(".stderr"));
}

// The result channel first: its number goes into the policy's environment. Then the policy,
// whole in its pipe before the jail starts, and the report pipe. The daemon reads the channel
// and the report as they come. Empty when a pipe fails, and nothing of what was made stays open
// but the read ends already watched, which finishWithError closes.
std::optional<JailJob::JailEnds> JailJob::openPipes(QString *error)
{
    JailEnds ends;
    JailPolicy policy = m_spec.policy;
    if (m_spec.resultChannel) {
        std::optional<PipePair> channel = makePipe(error);
        if (!channel)
            return std::nullopt;
        ends.channelWrite = std::move(channel->write);
        m_channelFd = std::move(channel->read);
        m_channelNotifier = watchReadEnd(m_channelFd.get(), &JailJob::readChannel);
        policy.setEnv(kResultChannelVariable, std::to_string(ends.channelWrite.get()));
    }

    if (policy.namespaces && policy.namespaces->egressPort) {
        if (!m_spec.egress) {
            *error = QStringLiteral("the job's network goes through the egress gate, but this "
                                    "daemon has no gate for jobs");
            return std::nullopt;
        }
        std::optional<PipePair> channel = makeEgressChannel(error);
        if (!channel)
            return std::nullopt;
        ends.egress = std::move(channel->write);
        m_egressFd = std::move(channel->read);
        m_egressNotifier = watchReadEnd(m_egressFd.get(), &JailJob::readEgress);
    }

    // A template's calls get their views one by one, as they are armed (CallTemplate).
    if (m_spec.workspaceIdmap && policy.wants(jail::Layer::Namespaces)
        && m_spec.serveTemplate.isEmpty()) {
        ends.workspaceView = m_spec.workspaceIdmap->viewFor(
                QString::fromStdString(policy.workspace), policy.uid, error);
        if (!ends.workspaceView.isValid())
            return std::nullopt;
        m_workspaceIdmapped = true;
    }

    // The typed policy writes only keys the jail knows; should that ever break, the job fails
    // here, on the daemon's side, and no jail starts.
    QString refusal;
    const QByteArray policyText = jailPolicyText(policy, &refusal);
    if (policyText.isEmpty()) {
        *error = QStringLiteral("cmcp-jail would refuse the job's policy (%1); no jail was started")
                         .arg(refusal);
        return std::nullopt;
    }
    std::optional<PipePair> policyPipe = makePipe(error);
    if (!policyPipe)
        return std::nullopt;
    const bool policyWritten = writePolicy(policyPipe->write.get(), policyText, error);
    policyPipe->write.reset();
    if (!policyWritten)
        return std::nullopt;
    std::optional<PipePair> reportPipe = makePipe(error);
    if (!reportPipe)
        return std::nullopt;
    ends.policy = std::move(policyPipe->read);
    ends.reportWrite = std::move(reportPipe->write);
    m_reportFd = std::move(reportPipe->read);
    m_reportNotifier = watchReadEnd(m_reportFd.get(), &JailJob::readReport);
    return ends;
}

// Non-blocking, so that `read` drains what is there and returns to the event loop.
QSocketNotifier *JailJob::watchReadEnd(int fd, void (JailJob::*read)())
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    auto *notifier = new QSocketNotifier(fd, QSocketNotifier::Read, this);
    connect(notifier, &QSocketNotifier::activated, this, read);
    return notifier;
}

void JailJob::launchJail(const JailEnds &ends)
{
    const JailDescriptors descriptors{ends.policy.get(), ends.reportWrite.get(),
                                      ends.channelWrite.get(), ends.egress.get(),
                                      ends.workspaceView.get()};
    QStringList templateOptions;
    if (!m_spec.serveTemplate.isEmpty())
        templateOptions << QStringLiteral("--serve-template") << m_spec.serveTemplate
                        << QStringLiteral("--template-uids")
                        << QStringLiteral("%1:%2").arg(m_spec.poolFirst).arg(m_spec.poolCount);
    m_process = new QProcess(this);
    m_process->setProgram(m_spec.jailProgram);
    m_process->setArguments(
            jailArguments(descriptors, templateOptions, m_spec.program, m_spec.arguments));
    // Nothing of the daemon's environment (secrets included) reaches the jail; the job's
    // environment is the policy's "env".
    m_process->setProcessEnvironment(QProcessEnvironment());
    m_process->setWorkingDirectory(QStringLiteral("/"));
    if (m_spec.standardInput.isEmpty() && !m_spec.awaitInput && !m_spec.interactiveInput)
        m_process->setStandardInputFile(QProcess::nullDevice());
    m_process->setChildProcessModifier([descriptors] { keepOnlyJailDescriptors(descriptors); });
    connect(m_process, &QProcess::readyReadStandardOutput, this,
            [this] { readOutput(JobStream::StandardOutput); });
    connect(m_process, &QProcess::readyReadStandardError, this,
            [this] { readOutput(JobStream::StandardError); });
    connect(m_process, &QProcess::finished, this, &JailJob::onProcessFinished);
    connect(m_process, &QProcess::errorOccurred, this, &JailJob::onProcessError);
    m_process->start();
}

void JailJob::giveStandardInput()
{
    if (m_spec.standardInput.isEmpty())
        return;
    m_process->write(m_spec.standardInput);
    if (!m_spec.interactiveInput)
        m_process->closeWriteChannel();
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
    if (!m_reportFd.isValid())
        return;
    const ReadEnd end = readAvailable(m_reportFd.get(), [this](const char *data, std::size_t size) {
        m_report.addBytes(QByteArray(data, qsizetype(size)));
    });
    if (end != ReadEnd::WouldBlock && m_reportNotifier) // at the end it would fire forever
        m_reportNotifier->setEnabled(false);
    if (!m_startReported && m_report.started()) {
        m_startReported = true;
        Q_EMIT jailStarted();
    }
}

// Read as it arrives, so a job writing more than a pipe holds never blocks; beyond the cap the
// bytes are drained and dropped.
void JailJob::keepChannelBytes(QByteArray &channel, bool &overflowed, const char *data,
                               std::size_t size)
{
    const qint64 room = kResultChannelCapBytes - channel.size();
    if (qint64(size) > room)
        overflowed = true;
    channel.append(data, qMin<qint64>(qint64(size), qMax<qint64>(room, 0)));
}

void JailJob::readChannel()
{
    if (!m_channelFd.isValid())
        return;
    const ReadEnd end =
            readAvailable(m_channelFd.get(), [this](const char *data, std::size_t size) {
                keepChannelBytes(m_channel, m_channelOverflowed, data, size);
            });
    if (end != ReadEnd::WouldBlock && m_channelNotifier)
        m_channelNotifier->setEnabled(false);
}

// The listener of the job's network namespace, once: from here on the egress gate serves it.
void JailJob::readEgress()
{
    if (!m_egressFd.isValid())
        return;
    bool ended = false;
    UniqueFd listener = receiveDescriptor(m_egressFd.get(), &ended);
    ended = ended || listener.isValid(); // one message is all the jail sends
    if (listener.isValid() && !m_egressServer) {
        QString error;
        m_egressServer = m_spec.egress->serve(
                std::move(listener),
                [this](const QString &target, const QString &reason) {
                    noteRefusal({QStringLiteral("egress"), refusalRule(reason), target,
                                 QStringLiteral("the sandbox refused a connection to %1: %2")
                                         .arg(target, reason)});
                },
                this, &error);
        if (!m_egressServer)
            spdlog::error("sandbox job {}: cannot serve its network: {}", m_id.toStdString(),
                          error.toStdString());
    }
    if (ended) {
        delete m_egressNotifier;
        m_egressNotifier = nullptr;
        m_egressFd.reset();
    }
}

void JailJob::closeEgress()
{
    delete m_egressNotifier;
    m_egressNotifier = nullptr;
    m_egressFd.reset();
    delete m_egressServer;
    m_egressServer = nullptr;
}

void JailJob::noteRefusal(SandboxRefusal refusal)
{
    if (m_refusals.size() >= kMaxListedRefusals) {
        ++m_refusalsLeftOut;
        return;
    }
    m_refusals.append(std::move(refusal));
}

void JailJob::closeChannelPipe()
{
    delete m_channelNotifier;
    m_channelNotifier = nullptr;
    m_channelFd.reset();
}

void JailJob::closeReportPipe()
{
    if (m_reportNotifier) {
        m_reportNotifier->setEnabled(false);
        delete m_reportNotifier;
        m_reportNotifier = nullptr;
    }
    m_reportFd.reset();
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
    // A jail that ended without saying how (killed from outside) could not remove the cgroups.
    if (m_report.started() && !m_report.exit() && !m_report.refusal())
        removeAbandonedCgroups(fromJailStrings(m_report.started()->cgroups));
    // The job and everything it started are gone, so is every writer of the channel.
    readChannel();
    closeChannelPipe();
    closeEgress();
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
    closeEgress();
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
    const qint64 uid = m_spec.policy.uid;
    if (uid < kLowestJobUid || !UidReaper::canReap())
        return;
    const auto &started = m_report.started();
    if (m_report.exit() && started
        && std::ranges::find(started->layers, "namespaces") != started->layers.end())
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
    result.standardOutput = m_stdout->captured();
    result.standardError = m_stderr->captured();
    result.reportErrors = m_report.errors();
    result.error = m_reapError;
    result.channel = m_channel;
    result.channelOverflowed = m_channelOverflowed;
    if (const auto &started = m_report.started())
        result.layers = fromJailStrings(started->layers);
    if (m_workspaceIdmapped)
        result.layers.append(QStringLiteral("idmap"));
    result.sandboxRefusals = m_refusals;
    result.sandboxRefusalsLeftOut = m_refusalsLeftOut;
    // The timer's: a warm job's limit is given with its input, not in its spec.
    if (m_timedOut)
        result.sandboxRefusals.append(timeLimitRefusal(m_timeoutTimer.interval()));

    if (const auto &refusal = m_report.refusal()) {
        result.refusal = JobRefusal{QString::fromStdString(refusal->layer), refusal->code,
                                    QString::fromStdString(refusal->message)};
    } else if (const auto &exit = m_report.exit()) {
        result.exitCode = exit->exitCode;
        result.signal = exit->signal;
        result.wallMs = qMax<qint64>(0, qint64(exit->wallMs) - m_waitedMs);
        result.cpuMs = exit->cpuMs;
        result.peakMemoryKb = exit->peakMemoryKb;
        result.oomKilled = exit->oomKilled;
        if (exit->seccompDenied)
            appendSeccompRefusals(result, *exit->seccompDenied, exit->seccompDeniedUnnamed);
        appendLimitRefusals(result, m_spec.policy, exit->pidsRefused);
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
