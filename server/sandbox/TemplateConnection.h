#pragma once

#include "posix/UniqueFd.h"

#include <QObject>
#include <QString>

class QSocketNotifier;

namespace cmcp {

class TemplateCell;

// The daemon's connection to a template's monitor (cmcp-jail --serve-template, see
// jail/template.h): asks for cells and hears when they are ready, could not be made, or
// ended. Closing it (deleting this object) ends the template with every cell and call.
class TemplateConnection : public QObject
{
    Q_OBJECT
public:
    explicit TemplateConnection(QObject *parent = nullptr);
    ~TemplateConnection() override;

    // Connects to the monitor's socket (a local socket: at once or not at all).
    bool connectTo(const QString &socketPath, QString *error);
    bool isConnected() const { return m_socket.isValid(); }
    // Asks for one more cell: cellReady or cellFailed answers.
    void requestCell();
    // Has the monitor kill a cell that no longer answers (its cgroup, and so its call).
    void killCell(quint32 id);

Q_SIGNALS:
    // A cell is being made, with these cgroup directories on the host.
    void cellCgroups(quint32 id, const QStringList &directories);
    // A new cell, with no parent: the receiver owns it.
    void cellReady(cmcp::TemplateCell *cell);
    void cellFailed(const QString &why);
    // A cell ended and the monitor removed its cgroups.
    void cellGone(quint32 id);
    // The monitor is gone (the template ended).
    void closed();

private:
    void readMessages();
    void send(char kind, quint32 cell);
    void close();

    UniqueFd m_socket;
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace cmcp
