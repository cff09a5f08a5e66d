#include "jobs/CallTemplate.h"

#include "sandbox/AbandonedCgroups.h"
#include "sandbox/ForkedJob.h"
#include "sandbox/JailJob.h"
#include "sandbox/TemplateCell.h"
#include "sandbox/TemplateConnection.h"

#include <QFileInfo>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// Between two starts of a template that ended: calls start cold meanwhile.
constexpr qint64 kRestartPauseMs = 5000;
// After a cell could not be made, none is asked for during this, doubled after each failure
// in a row up to the longest: a host that refuses cells is not asked every second.
constexpr qint64 kCellRetryPauseMs = 1000;
constexpr qint64 kLongestCellRetryPauseMs = 60000;

} // namespace

CallTemplate::CallTemplate(SandboxSupervisor &supervisor, JobRequest request, QString socketPath,
                           int spareCells, QObject *parent)
    : QObject(parent),
      m_supervisor(supervisor),
      m_request(std::move(request)),
      m_socketPath(std::move(socketPath)),
      m_spareCells(qMax(1, spareCells))
{
    // Every call's result channel is at the same descriptor: the cells' environment names it.
    if (m_request.resultChannel)
        m_request.policy.setEnv(JailJob::kResultChannelVariable,
                                std::to_string(cell_protocol::kCallChannelFd));
    // Standard input stays open: closing it ends the template.
    m_request.awaitInput = true;
    m_request.standardInput.clear();
    m_request.timeoutMs = 0;
    m_request.resultChannel = false;
    m_request.serveTemplate = m_socketPath;
    m_idleTimer.setInterval(kIdleCellMs / 3);
    connect(&m_idleTimer, &QTimer::timeout, this, &CallTemplate::closeIdleCells);
    m_idleTimer.start();
    start();
}

CallTemplate::~CallTemplate()
{
    // The cells first: each closed socket ends its cell, then the monitor's connection.
    qDeleteAll(m_idle);
    qDeleteAll(m_busy);
    delete m_connection;
    if (!m_monitor)
        return;
    m_monitor->disconnect(this);
    if (m_monitor->isRunning())
        m_monitor->provideInput({}, 0); // standard input closes: the template ends
    // The job object lives until the monitor has ended (and kills it if the daemon ends first).
    m_monitor->setParent(nullptr);
    connect(m_monitor, &JailJob::finished, m_monitor, &QObject::deleteLater);
    if (!m_monitor->isRunning())
        m_monitor->deleteLater();
}

void CallTemplate::start()
{
    QString error;
    JailJob *job = m_supervisor.createJob(m_request, this, &error);
    if (!job) {
        m_lastEnd = error;
        m_endedAt = QDateTime::currentDateTimeUtc();
        return;
    }
    m_monitor = job;
    ++m_starts;
    m_cellsMadeSinceStart = 0;
    connect(job, &JailJob::jailStarted, this, &CallTemplate::connectToMonitor);
    connect(job, &JailJob::finished, this, &CallTemplate::onMonitorEnded);
    job->start();
}

// The monitor listens once its template is ready, and reports its start after.
void CallTemplate::connectToMonitor()
{
    auto *connection = new TemplateConnection(this);
    QString error;
    if (!connection->connectTo(m_socketPath, &error)) {
        delete connection;
        spdlog::warn("sandbox: the {} template: {}; calls start cold",
                     m_request.program.toStdString(), error.toStdString());
        return;
    }
    m_connection = connection;
    connect(connection, &TemplateConnection::cellCgroups, this,
            [this](quint32 id, const QStringList &dirs) { m_cellCgroups.insert(id, dirs); });
    connect(connection, &TemplateConnection::cellReady, this, &CallTemplate::onCellReady);
    connect(connection, &TemplateConnection::cellFailed, this, &CallTemplate::onCellFailed);
    connect(connection, &TemplateConnection::cellGone, this, &CallTemplate::onCellGone);
    requestCells();
}

void CallTemplate::onMonitorEnded(const JobResult &result)
{
    m_lastEnd = result.endReason();
    m_endedAt = QDateTime::currentDateTimeUtc();
    m_monitor->deleteLater();
    m_monitor = nullptr;
    delete m_connection;
    m_connection = nullptr;
    m_requested = 0;
    // Every cell died with the template; a busy one's call learns so from its own socket.
    qDeleteAll(m_idle);
    m_idle.clear();
    m_idleSince.clear();
    // A monitor killed from outside could not remove its cells' cgroups.
    QStringList abandoned;
    for (const QStringList &dirs : std::as_const(m_cellCgroups))
        abandoned += dirs;
    m_cellCgroups.clear();
    removeAbandonedCgroups(abandoned);
    if (m_retired) {
        endIfRetiredAndIdle();
        return;
    }
    spdlog::warn("sandbox: the {} template ended ({}); calls start cold until it is replaced",
                 m_request.program.toStdString(), m_lastEnd.toStdString());
}

void CallTemplate::restartIfDue()
{
    if (!m_monitor && !m_retired
        && (!m_endedAt.isValid()
            || m_endedAt.msecsTo(QDateTime::currentDateTimeUtc()) >= kRestartPauseMs))
        start();
}

// Enough cells asked for that `m_spareCells` wait idle once they are made.
void CallTemplate::requestCells()
{
    if (!m_connection || m_retired
        || (m_cellFailedAt.isValid() && m_cellFailedAt.elapsed() < m_cellRetryPauseMs))
        return;
    while (m_idle.size() + m_requested < m_spareCells) {
        m_connection->requestCell();
        ++m_requested;
    }
}

void CallTemplate::onCellReady(TemplateCell *cell)
{
    m_requested = qMax(0, m_requested - 1);
    ++m_cellsMade;
    ++m_cellsMadeSinceStart;
    m_cellRetryPauseMs = kCellRetryPauseMs;
    cell->setParent(this);
    if (m_retired) {
        delete cell;
        return;
    }
    connect(cell, &TemplateCell::callEnded, this, [this, cell] { onCallEnded(cell); });
    connect(cell, &TemplateCell::gone, this, [this, cell] { dropCell(cell); });
    connect(cell, &TemplateCell::armFailed, this, [this](const QString &why) {
        ++m_cellsFailed;
        m_lastCellFailure = why;
        spdlog::warn("sandbox: a cell of the {} template could not prepare a call ({}); it ends",
                     m_request.program.toStdString(), why.toStdString());
    });
    arm(cell);
    m_idle.append(cell);
    m_idleSince[cell].start();
}

// The next call's uid, for the cell to prepare that call with ahead of it: the server's own
// until a call takes the cell, or `principal`'s when its call is what arms it. Without a uid
// for it the cell waits unarmed; takeCell arms it when a call comes.
bool CallTemplate::arm(TemplateCell *cell, const QString &principal)
{
    if (cell->isArmed())
        return true;
    QString error;
    std::optional<UidLease> lease = m_supervisor.leaseUid(principal, &error);
    if (!lease)
        return false;
    UniqueFd view;
    if (m_supervisor.showsWorkspacesAsOwn()) {
        view = m_supervisor.workspaceView(QString::fromStdString(m_request.policy.workspace),
                                          lease->uid(), &error);
        if (!view.isValid()) {
            spdlog::warn("sandbox: a cell of the {} template cannot be armed: {}",
                         m_request.program.toStdString(), error.toStdString());
            return false;
        }
    }
    return cell->arm(std::move(*lease), std::move(view));
}

void CallTemplate::onCellFailed(const QString &why)
{
    m_requested = qMax(0, m_requested - 1);
    ++m_cellsFailed;
    m_lastCellFailure = why;
    m_cellFailedAt.start();
    spdlog::warn("sandbox: the {} template could not make a cell ({}); calls start cold, the next "
                 "cell is asked for in {} s",
                 m_request.program.toStdString(), why.toStdString(), m_cellRetryPauseMs / 1000);
    QTimer::singleShot(m_cellRetryPauseMs, this, &CallTemplate::requestCells);
    m_cellRetryPauseMs = qMin(2 * m_cellRetryPauseMs, kLongestCellRetryPauseMs);
}

void CallTemplate::onCellGone(quint32 id)
{
    m_cellCgroups.remove(id);
}

TemplateCell *CallTemplate::takeCell(const QString &principal)
{
    if (m_retired)
        return nullptr;
    restartIfDue();
    for (qsizetype i = m_idle.size() - 1; i >= 0; --i) {
        if (m_idle.at(i)->isGone()) {
            m_idleSince.remove(m_idle.at(i));
            m_idle.takeAt(i)->deleteLater();
        }
    }
    // The warmest armed cell: an unarmed one needs a free uid, and the pool may have none while
    // an armed cell holds one (a cell made while every uid was taken stays unarmed).
    qsizetype chosen = -1;
    for (qsizetype i = m_idle.size() - 1; i >= 0 && chosen < 0; --i) {
        if (m_idle.at(i)->isArmed())
            chosen = i;
    }
    if (chosen < 0 && !m_idle.isEmpty() && arm(m_idle.last(), principal))
        chosen = m_idle.size() - 1;
    TemplateCell *cell = nullptr;
    if (chosen >= 0) {
        cell = m_idle.takeAt(chosen);
        m_idleSince.remove(cell);
        m_busy.insert(cell);
        ++m_calls;
    }
    requestCells();
    // None when no cell is idle (the call starts cold) or no uid is free (neither can it).
    return cell;
}

void CallTemplate::adopt(ForkedJob *job, TemplateCell *cell)
{
    connect(job, &ForkedJob::cellUnresponsive, this, [this](quint32 id) {
        if (m_connection)
            m_connection->killCell(id);
    });
    // The job gives its uid back when it finishes, just after its cell reported the end. The
    // cell is armed then, not at the end report: arming at once took a second uid for every
    // busy cell meanwhile, and a pool sized for the calls running at once ran out.
    connect(job, &Job::finished, cell, [this, cell] {
        if (m_idle.contains(cell))
            arm(cell);
    });
}

void CallTemplate::onCallEnded(TemplateCell *cell)
{
    if (!m_busy.remove(cell))
        return;
    if (m_retired || cell->isGone()) {
        cell->deleteLater();
        endIfRetiredAndIdle();
        return;
    }
    // Armed once its job has given the call's uid back (adopt), or by takeCell.
    m_idle.append(cell);
    m_idleSince[cell].start();
}

void CallTemplate::dropCell(TemplateCell *cell)
{
    m_busy.remove(cell);
    m_idle.removeOne(cell);
    m_idleSince.remove(cell);
    cell->deleteLater();
    endIfRetiredAndIdle();
    requestCells();
}

// The cells beyond the spare ones that no call used for kIdleCellMs: a burst of calls made
// them, and each holds a process, a cgroup and a network namespace.
void CallTemplate::closeIdleCells()
{
    while (m_idle.size() > m_spareCells) {
        TemplateCell *oldest = m_idle.first();
        if (m_idleSince.value(oldest).elapsed() < kIdleCellMs)
            return;
        m_idle.removeFirst();
        m_idleSince.remove(oldest);
        delete oldest;
    }
}

void CallTemplate::retire()
{
    m_retired = true;
    qDeleteAll(m_idle);
    m_idle.clear();
    m_idleSince.clear();
    endIfRetiredAndIdle();
}

void CallTemplate::endIfRetiredAndIdle()
{
    if (m_retired && m_busy.isEmpty())
        deleteLater();
}

QJsonObject CallTemplate::status() const
{
    QJsonObject status{
            // Running once calls can fork from it: a cell of this start was made.
            {QStringLiteral("state"),
             m_monitor ? (m_connection && m_cellsMadeSinceStart > 0 ? QStringLiteral("running")
                                                                    : QStringLiteral("starting"))
                       : QStringLiteral("stopped")},
            {QStringLiteral("calls"), m_calls},
            {QStringLiteral("starts"), m_starts},
            {QStringLiteral("socket"), QFileInfo(m_socketPath).fileName()},
            {QStringLiteral("cells"),
             QJsonObject{{QStringLiteral("idle"), int(m_idle.size())},
                         {QStringLiteral("busy"), int(m_busy.size())},
                         {QStringLiteral("starting"), m_requested},
                         {QStringLiteral("made"), m_cellsMade},
                         {QStringLiteral("failed"), m_cellsFailed}}},
    };
    if (!m_lastEnd.isEmpty())
        status.insert(QStringLiteral("last_end"), m_lastEnd);
    if (!m_lastCellFailure.isEmpty())
        status.insert(QStringLiteral("last_cell_failure"), m_lastCellFailure);
    return status;
}

} // namespace cmcp
