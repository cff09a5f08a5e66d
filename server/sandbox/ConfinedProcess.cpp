#include "sandbox/ConfinedProcess.h"

#include "posix/DescriptorPassing.h"
#include "posix/Pipe.h"
#include "posix/ReadAvailable.h"
#include "posix/WriteAll.h"
#include "sandbox/JailCommandLine.h"

#include <QJsonDocument>
#include <QProcess>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <string>

namespace cmcp {

ConfinedProcess::ConfinedProcess(QProcess *process) : QObject(process), m_process(process) { }

ConfinedProcess *ConfinedProcess::confine(QProcess *process, Spec spec, QString *error)
{
    QString refusal;
    const QByteArray text = jailPolicyText(spec.policy, &refusal);
    if (text.isEmpty()) {
        *error = QStringLiteral("cmcp-jail would refuse its policy: %1").arg(refusal);
        return nullptr;
    }
    const bool egress = spec.policy.namespaces && spec.policy.namespaces->egressPort;
    // Above 2: 0..2 become the jail's stdio.
    std::optional<PipePair> policy = openPipeAboveStdio();
    std::optional<PipePair> report = openPipeAboveStdio();
    std::optional<PipePair> egressChannel =
            egress ? openSocketPairAboveStdio() : std::optional<PipePair>(PipePair{});
    if (!policy || !report || !egressChannel
        || writeAll(policy->write.get(), text.constData(), std::size_t(text.size()))
                != std::size_t(text.size())) {
        *error = QString::fromLocal8Bit(std::strerror(errno));
        return nullptr;
    }
    policy->write.reset();

    auto *confined = new ConfinedProcess(process);
    const JailDescriptors descriptors{policy->read.get(), report->write.get(), -1,
                                      egress ? egressChannel->write.get() : -1};
    process->setProgram(spec.jailProgram);
    process->setArguments(jailArguments(descriptors, {}, spec.program, spec.arguments));
    process->setProcessEnvironment(QProcessEnvironment());
    process->setChildProcessModifier([descriptors] { keepOnlyJailDescriptors(descriptors); });
    // The child's copies are taken at start(); the daemon keeps the report's read end and the
    // egress channel's.
    confined->m_policyJailEnd = std::move(policy->read);
    confined->m_reportJailEnd = std::move(report->write);
    confined->m_report = std::move(report->read);
    if (egress) {
        confined->m_egressJailEnd = std::move(egressChannel->write);
        confined->m_egressChannel = std::move(egressChannel->read);
        confined->m_egressListener = std::move(spec.egressListener);
        confined->m_egressNotifier = new QSocketNotifier(confined->m_egressChannel.get(),
                                                         QSocketNotifier::Read, confined);
        connect(confined->m_egressNotifier, &QSocketNotifier::activated, confined,
                &ConfinedProcess::receiveEgressListener);
    }
    return confined;
}

void ConfinedProcess::started()
{
    m_policyJailEnd.reset();
    m_reportJailEnd.reset();
    m_egressJailEnd.reset();
}

// The listener, once: one message is all the jail sends.
void ConfinedProcess::receiveEgressListener()
{
    bool ended = false;
    UniqueFd listener = receiveDescriptor(m_egressChannel.get(), &ended);
    if (listener.isValid()) {
        if (m_egressListener)
            m_egressListener(std::move(listener));
        ended = true;
    }
    if (ended) {
        delete m_egressNotifier;
        m_egressNotifier = nullptr;
        m_egressChannel.reset();
    }
}

pid_t ConfinedProcess::programPid() const
{
    const qint64 jailPid = m_process->processId();
    std::ifstream children("/proc/" + std::to_string(jailPid) + "/task/" + std::to_string(jailPid)
                           + "/children");
    pid_t child = 0;
    children >> child;
    return child;
}

JailReport ConfinedProcess::takeReport()
{
    JailReport report;
    if (!m_report.isValid())
        return report;
    fcntl(m_report.get(), F_SETFL, fcntl(m_report.get(), F_GETFL) | O_NONBLOCK);
    readAvailable(m_report.get(), [&report](const char *data, std::size_t size) {
        report.addBytes(QByteArray(data, qsizetype(size)));
    });
    m_report.reset();
    report.finish();
    return report;
}

} // namespace cmcp
