#pragma once

#include "egress/EgressPolicy.h"

#include <QHash>
#include <QObject>
#include <QPointer>

class QSocketNotifier;

namespace cmcp {

class BrowsePage;

// cmcp-browser's loop: requests as JSON lines on stdin ({"id", "url", "wait_for", "text",
// "screenshot", "timeout_ms", "max_bytes"}, {"cancel": id}, or {"refused": target, "reason"}
// from the daemon's gate when it serves the worker's network), answers as JSON lines on stdout,
// one per request, in the order pages finish. The worker quits at the end of its input.
class BrowserWorker : public QObject
{
    Q_OBJECT
public:
    BrowserWorker(EgressPolicy policy, qint64 maxBytes, QObject *parent = nullptr);

    // `sandboxOff`: why Chromium's sandbox is off in this worker, or empty when it is on; the
    // "ready" message tells the daemon.
    void start(const QString &sandboxOff);

public Q_SLOTS:
    // A connection the gate refused after resolution: from the EgressProxy thread, or from the
    // daemon whose gate serves the worker.
    void onProxyRefused(const QString &target, const QString &reason);

private:
    void onInput();
    void handle(const QByteArray &line);
    void send(const QJsonObject &message);

    EgressPolicy m_policy;
    qint64 m_maxBytes;
    QSocketNotifier *m_input = nullptr;
    QByteArray m_buffer;
    QHash<qint64, QPointer<BrowsePage>> m_pages;
};

} // namespace cmcp
