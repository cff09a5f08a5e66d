#pragma once

#include "sandbox/JobRequest.h"
#include "sandbox/JobResult.h"
#include "sandbox/SandboxSupervisor.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace cmcp {

class ForkedJob;
class JailJob;
class TemplateCell;
class TemplateConnection;

// One kind's template (cmcp-jail --serve-template; the design is in jail/template.h): a
// jail built once, whose cells fork each call of that kind from an interpreter already running,
// each call with a uid, user and IPC namespaces, Landlock domain and seccomp filter of its own.
// It keeps `spareCells` cells waiting for calls and as many more as calls run at once; a cell
// left idle beyond those for a while is closed. A call that finds no idle cell starts cold
// (and a cell is made for the next). A template that ends is started again on a later call,
// and not more than once every few seconds, so a machine where templates cannot start does not
// spin.
class CallTemplate : public QObject
{
    Q_OBJECT
public:
    CallTemplate(SandboxSupervisor &supervisor, JobRequest request, QString socketPath,
                 int spareCells, QObject *parent = nullptr);
    // Ends the template, its cells and any call on them.
    ~CallTemplate() override;

    // An idle cell for one call of `principal`, armed with the call's uid
    // (TemplateCell::takeLease), taken until the call's end; null when none is idle (the call
    // starts cold), or the pool has no uid for `principal`.
    TemplateCell *takeCell(const QString &principal);
    // The call's job on `cell`, taken by takeCell: a cell that does not answer its kill is
    // killed through the template, and the cell is armed for its next call once the job has
    // given its uid back.
    void adopt(ForkedJob *job, TemplateCell *cell);
    // Takes no new call; once the calls in flight have ended, the template ends and this object
    // deletes itself.
    void retire();
    const QString &socketPath() const { return m_socketPath; }
    // {"state": "running"|"starting"|"stopped", "calls", "starts", "socket", "cells": {"idle",
    //  "busy", "starting", "made", "failed"}, "last_end", "last_cell_failure"}
    QJsonObject status() const;

    // Idle cells beyond the spare ones are closed after this long without a call.
    static constexpr int kIdleCellMs = 30000;

private:
    void start();
    void restartIfDue();
    void connectToMonitor();
    void onMonitorEnded(const JobResult &result);
    void onCellReady(TemplateCell *cell);
    void onCellFailed(const QString &why);
    void onCellGone(quint32 id);
    void onCallEnded(TemplateCell *cell);
    bool arm(TemplateCell *cell, const QString &principal = {});
    void dropCell(TemplateCell *cell);
    void requestCells();
    void closeIdleCells();
    void endIfRetiredAndIdle();

    SandboxSupervisor &m_supervisor;
    JobRequest m_request;
    const QString m_socketPath;
    const int m_spareCells;
    JailJob *m_monitor = nullptr;
    TemplateConnection *m_connection = nullptr;
    QList<TemplateCell *> m_idle; // most recently used last
    QHash<TemplateCell *, QElapsedTimer> m_idleSince;
    QSet<TemplateCell *> m_busy;
    // The cgroups of every cell the monitor has not said are gone: removed by the daemon when
    // the monitor is killed before it could.
    QHash<quint32, QStringList> m_cellCgroups;
    int m_requested = 0; // cells asked for and not answered yet
    QTimer m_idleTimer;
    QElapsedTimer m_cellFailedAt;
    qint64 m_cellRetryPauseMs = 1000;
    QDateTime m_endedAt;
    QString m_lastEnd;
    QString m_lastCellFailure;
    int m_starts = 0;
    int m_calls = 0;
    int m_cellsMade = 0;
    int m_cellsMadeSinceStart = 0;
    int m_cellsFailed = 0;
    bool m_retired = false;
};

} // namespace cmcp
