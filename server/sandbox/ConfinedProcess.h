#pragma once

#include "posix/UniqueFd.h"
#include "sandbox/JailPolicy.h"
#include "sandbox/JailReport.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <sys/types.h>

#include <functional>
#include <memory>

class QProcess;
class QSocketNotifier;

namespace cmcp {

// A long-lived program under cmcp-jail that the daemon speaks to over its stdin and stdout (a
// browser worker's JSON lines), rather than a job run for its result (JailJob). The caller owns
// the QProcess and its I/O; this gives it the jail: the policy handed over on a pipe, the report
// read when the program has ended, the listener of its network namespace when the policy has
// an egress port. It lives as a child of the process.
class ConfinedProcess : public QObject
{
    Q_OBJECT
public:
    struct Spec
    {
        QString jailProgram;
        QString program; // as the jail execs it (with programFromHost, its host path)
        QStringList arguments;
        JailPolicy policy;
        // Called once with the listener of the program's network namespace, when the policy
        // has namespaces.egressPort: whoever serves it is the program's one way out.
        std::function<void(UniqueFd listener)> egressListener;
    };

    // Makes `process` start cmcp-jail with `spec`: its program, arguments and an empty
    // environment (the program's is the policy's "env"), with only the jail's descriptors
    // passed. The caller then connects to the process, starts it, and calls started(). Null,
    // with `error` set and `process` untouched, when the policy cannot be handed to the jail
    // (one with a key the jail does not know, or a pipe that fails): no jail is started.
    static ConfinedProcess *confine(QProcess *process, Spec spec, QString *error);

    // After QProcess::start(): the jail holds its ends of the pipes, the daemon's go.
    void started();

    // The program as the host sees it: the jail's one child (its job process, which became the
    // program); 0 when there is none.
    pid_t programPid() const;

    // What the jail reported, read whole once the process has ended.
    JailReport takeReport();

private:
    explicit ConfinedProcess(QProcess *process);
    void receiveEgressListener();

    QProcess *m_process;
    UniqueFd m_policyJailEnd, m_reportJailEnd, m_egressJailEnd; // held until the jail started
    UniqueFd m_report;
    UniqueFd m_egressChannel;
    QSocketNotifier *m_egressNotifier = nullptr;
    std::function<void(UniqueFd)> m_egressListener;
};

} // namespace cmcp
