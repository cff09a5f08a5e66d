#pragma once

#include "jail/protocol/CellProtocol.h"
#include "posix/UniqueFd.h"
#include "sandbox/JailReport.h"
#include "sandbox/UidPool.h"

#include <QObject>
#include <QString>

#include <sys/types.h>

class QSocketNotifier;

namespace cmcp {

// One cell of a template (jail/template.h): a process in the template's jail that
// forks each call it is given from an interpreter already running, one call at a time. The
// daemon holds the cell's socket; closing it (deleting this object) ends the cell.
class TemplateCell : public QObject
{
    Q_OBJECT
public:
    TemplateCell(quint32 id, UniqueFd socket, QObject *parent = nullptr);
    ~TemplateCell() override;

    quint32 id() const { return m_id; }
    bool isGone() const { return !m_socket.isValid(); }

    // Gives the cell the uid of its next call, which it prepares that call's process with
    // before the call comes (cell_protocol::ArmRequest). The lease is the cell's until
    // takeLease(), or until the cell is gone. `workspaceView`: the template's workspace as that
    // uid's own (SandboxSupervisor::workspaceView), which the call attaches; invalid: none.
    bool arm(UidLease lease, UniqueFd workspaceView);
    bool isArmed() const { return m_lease.isValid(); }
    // Whether the call armed now sees its workspace as its own user's (WorkspaceIdmap).
    bool armedWithWorkspaceView() const { return m_armedWithWorkspaceView; }
    // The armed uid's lease, for the call's job (which then gives it back when it ends).
    UidLease takeLease() { return std::move(m_lease); }
    // Hands the cell a call: its uid (the armed one), its payload, its descriptors (the call's
    // standard output and error, its result channel or -1). False, with `why`, when the cell
    // cannot take it.
    bool startCall(uid_t uid, const QByteArray &payload, int output, int error, int channel,
                   QString *why);
    // Asks the cell to kill the call that runs.
    void killCall();

Q_SIGNALS:
    // The call failed closed before any of its code ran; callEnded follows.
    void callRefused(int code, const QString &layer, const QString &message);
    // What the call's seccomp filter denied (when it denied anything); callEnded follows.
    void callDenied(const std::vector<cmcp::SeccompDenial> &denials, qint64 unnamed);
    // The call and every process it started are gone; the cell takes the next.
    void callEnded(const cmcp::cell_protocol::CallEnd &end);
    // The process armed for the next call failed before it came (why); the cell ends.
    void armFailed(const QString &why);
    // The cell is gone (its template ended, or it was killed).
    void gone();

private:
    void readMessages();
    void close();

    const quint32 m_id;
    UniqueFd m_socket;
    QSocketNotifier *m_notifier = nullptr;
    UidLease m_lease; // of the uid the cell is armed with
    bool m_armedWithWorkspaceView = false;
};

} // namespace cmcp
