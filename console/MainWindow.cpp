#include "console/MainWindow.h"

#include "console/AdminClient.h"
#include "console/CallDetail.h"
#include "console/CallModel.h"
#include "console/ConsoleSession.h"
#include "console/SandboxView.h"
#include "console/SessionModel.h"
#include "console/SettingsEditor.h"
#include "console/WorkspaceModel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QIcon>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QFontDatabase>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

namespace cmcp {

namespace {

QTableView *makeTable(QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->setWordWrap(false);
    return view;
}

} // namespace

MainWindow::MainWindow(ConsoleSession &session, QWidget *parent)
    : QMainWindow(parent),
      m_session(session)
{
    setWindowTitle(tr("Container-MCP console"));
    setWindowIcon(QIcon::fromTheme(QStringLiteral("utilities-system-monitor")));
    m_tabs = new QTabWidget(this);
    m_tabs->addTab(makeCallsPage(), QIcon::fromTheme(QStringLiteral("system-run")), tr("&Calls"));
    m_tabs->addTab(makeSessionsPage(), QIcon::fromTheme(QStringLiteral("network-workgroup")),
                   tr("S&essions"));
    m_tabs->addTab(makeWorkspacesPage(), QIcon::fromTheme(QStringLiteral("drive-harddisk")),
                   tr("&Workspaces"));
    m_tabs->addTab(new SettingsEditor(session, this),
                   QIcon::fromTheme(QStringLiteral("preferences-system")), tr("Se&ttings"));
    m_sandbox = new SandboxView(this);
    m_tabs->addTab(m_sandbox, QIcon::fromTheme(QStringLiteral("security-high")), tr("Sand&box"));
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(2000);
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_tabs->addTab(m_log, QIcon::fromTheme(QStringLiteral("text-x-generic")), tr("&Log"));
    setCentralWidget(m_tabs);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_tabs->currentWidget() == m_workspaceView->parentWidget()
            && m_session.client().state() == AdminClient::State::Connected)
            m_session.refreshWorkspaces();
    });

    m_connection = new QLabel(this);
    m_counters = new QLabel(this);
    statusBar()->addWidget(m_connection, 1);
    statusBar()->addPermanentWidget(m_counters);
    createActions();

    connect(&session.client(), &AdminClient::stateChanged, this,
            &MainWindow::updateConnectionState);
    connect(&session.client(), &AdminClient::errorReceived, this,
            [this](const QString &, const QString &message) {
                statusBar()->showMessage(message, 10000);
            });
    connect(&session, &ConsoleSession::countersChanged, this, &MainWindow::updateCounters);
    connect(&session, &ConsoleSession::sandboxChanged, this,
            [this] { m_sandbox->setReport(m_session.sandbox()); });
    connect(&session, &ConsoleSession::logLine, this, [this](const admin::LogLineEvent &line) {
        m_log->appendPlainText(QStringLiteral("%1 %2 [%3] %4")
                                       .arg(line.time.toString(Qt::ISODateWithMs),
                                            line.level.leftJustified(8), line.logger, line.text));
    });
    // Session ages tick.
    auto *clock = new QTimer(this);
    connect(clock, &QTimer::timeout, this, [this] {
        m_session.sessions().setNow(QDateTime::currentDateTimeUtc());
        // Workspaces change without events (usage, jobs): the view asks again while shown.
        if (m_tabs->currentWidget() == m_workspaceView->parentWidget()
            && m_session.client().state() == AdminClient::State::Connected)
            m_session.refreshWorkspaces();
    });
    clock->start(5000);
    updateConnectionState();
    updateCounters();
    resize(1100, 680);
}

QWidget *MainWindow::makeCallsPage()
{
    auto *page = new QWidget(this);
    m_filter = new QLineEdit(page);
    m_filter->setPlaceholderText(
            tr("Filter calls by tool, client, session, arguments or status (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_filter->addAction(QIcon::fromTheme(QStringLiteral("edit-find")), QLineEdit::LeadingPosition);

    m_callProxy = new QSortFilterProxyModel(this);
    m_callProxy->setSourceModel(&m_session.calls());
    m_callProxy->setFilterKeyColumn(-1);
    m_callProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(m_filter, &QLineEdit::textChanged, m_callProxy,
            &QSortFilterProxyModel::setFilterFixedString);

    m_callView = makeTable(page);
    m_callView->setModel(m_callProxy);
    QHeaderView *header = m_callView->horizontalHeader();
    header->resizeSection(CallModel::TimeColumn, 100);
    header->resizeSection(CallModel::SessionColumn, 80);
    header->resizeSection(CallModel::ClientColumn, 110);
    header->resizeSection(CallModel::ToolColumn, 150);
    header->resizeSection(CallModel::ArgumentsColumn, 330);
    // Wide enough for a running call's progress ("12.3 s · 45.6 kB").
    header->resizeSection(CallModel::DurationColumn, 130);
    connect(m_callView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MainWindow::showSelectedCall);
    connect(&m_session.calls(), &QAbstractItemModel::dataChanged, this,
            &MainWindow::showSelectedCall);
    // Follow new calls while the view is scrolled to the bottom.
    connect(m_callProxy, &QAbstractItemModel::rowsAboutToBeInserted, this, [this] {
        QScrollBar *bar = m_callView->verticalScrollBar();
        m_callView->setProperty("follow", bar->value() == bar->maximum());
    });
    connect(m_callProxy, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_callView->property("follow").toBool())
            m_callView->scrollToBottom();
    });

    m_detail = new QPlainTextEdit(page);
    m_detail->setObjectName(QStringLiteral("callDetail"));
    m_detail->setReadOnly(true);
    m_detail->setPlaceholderText(tr("Select a call to see its arguments, output and accounting."));
    m_detail->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    auto *splitter = new QSplitter(Qt::Vertical, page);
    splitter->addWidget(m_callView);
    splitter->addWidget(m_detail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(page);
    layout->addWidget(m_filter);
    layout->addWidget(splitter, 1);
    return page;
}

QWidget *MainWindow::makeSessionsPage()
{
    m_sessionView = makeTable(this);
    m_sessionView->setModel(&m_session.sessions());
    m_sessionView->horizontalHeader()->resizeSection(SessionModel::SessionColumn, 120);
    m_sessionView->horizontalHeader()->resizeSection(SessionModel::ClientColumn, 200);
    return m_sessionView;
}

QWidget *MainWindow::makeWorkspacesPage()
{
    auto *page = new QWidget(this);
    m_workspaceView = makeTable(page);
    m_workspaceView->setModel(&m_session.workspaces());
    QHeaderView *header = m_workspaceView->horizontalHeader();
    header->resizeSection(WorkspaceModel::NameColumn, 150);
    header->resizeSection(WorkspaceModel::KindColumn, 80);
    header->resizeSection(WorkspaceModel::OwnerColumn, 110);
    header->resizeSection(WorkspaceModel::SizeColumn, 150);
    header->resizeSection(WorkspaceModel::CheckpointsColumn, 95);
    header->resizeSection(WorkspaceModel::LastUsedColumn, 150);
    header->resizeSection(WorkspaceModel::JobsColumn, 50);
    auto *note = new QLabel(tr("Named workspaces of every principal, the shared workspace and "
                               "the sessions' own. Only a named workspace can be deleted; its "
                               "jobs are killed first."),
                            page);
    note->setWordWrap(true);
    auto *layout = new QVBoxLayout(page);
    layout->addWidget(note);
    layout->addWidget(m_workspaceView, 1);
    return page;
}

bool MainWindow::showTab(const QString &title)
{
    for (int index = 0; index < m_tabs->count(); ++index) {
        if (m_tabs->tabText(index).remove(QLatin1Char('&')).compare(title, Qt::CaseInsensitive)
            == 0) {
            m_tabs->setCurrentIndex(index);
            return true;
        }
    }
    return false;
}

void MainWindow::deleteSelectedWorkspace()
{
    showTab(tr("Workspaces"));
    const QModelIndex current = m_workspaceView->currentIndex();
    if (!current.isValid() || current.data(WorkspaceModel::KindRole).toString() != u"named") {
        statusBar()->showMessage(tr("Select a named workspace to delete it."), 5000);
        return;
    }
    const QString id = current.data(WorkspaceModel::WorkspaceIdRole).toString();
    const QString name = current.siblingAtColumn(WorkspaceModel::NameColumn).data().toString();
    const QString owner = current.siblingAtColumn(WorkspaceModel::OwnerColumn).data().toString();
    const int jobs = current.data(WorkspaceModel::JobsRole).toInt();
    const auto answer = QMessageBox::warning(
            this, tr("Delete workspace"),
            tr("Delete the workspace \"%1\" of %2 (%3) with its files and checkpoints?\n\n"
               "%n running job(s) in it will be killed first. This cannot be undone.",
               nullptr, jobs)
                    .arg(name, owner, id),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes)
        return;
    m_session.deleteWorkspace(
            id, [self = QPointer<MainWindow>(this), name](const QString &error, int killed) {
                if (self)
                    self->statusBar()->showMessage(
                            error.isEmpty()
                                    ? tr("Workspace %1 deleted; %n job(s) killed.", nullptr, killed)
                                              .arg(name)
                                    : tr("Cannot delete workspace %1: %2").arg(name, error),
                            8000);
            });
}

void MainWindow::createActions()
{
    QToolBar *toolbar = addToolBar(tr("Actions"));
    toolbar->setObjectName(QStringLiteral("actions"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

    m_cancelAction = toolbar->addAction(QIcon::fromTheme(QStringLiteral("process-stop")),
                                        tr("Cancel call"), this, &MainWindow::cancelSelectedCall);
    m_cancelAction->setShortcut(QKeySequence::Delete);
    m_cancelAction->setToolTip(tr("Cancel the selected running call (Del)"));
    m_copyAction = toolbar->addAction(QIcon::fromTheme(QStringLiteral("edit-copy")), tr("Copy"),
                                      this, &MainWindow::copySelectedCall);
    m_copyAction->setShortcut(QKeySequence::Copy);
    m_copyAction->setToolTip(tr("Copy the selected call as JSON (Ctrl+C)"));
    // Del and Ctrl+C act on the call table only: in the filter and the detail pane they edit
    // and copy text as usual.
    for (QAction *action : {m_cancelAction, m_copyAction}) {
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        m_callView->addAction(action);
    }
    m_closeSessionAction =
            toolbar->addAction(QIcon::fromTheme(QStringLiteral("window-close")),
                               tr("Close session"), this, &MainWindow::closeSelectedSession);
    m_closeSessionAction->setToolTip(tr("Close the selected MCP session"));
    m_deleteWorkspaceAction =
            toolbar->addAction(QIcon::fromTheme(QStringLiteral("edit-delete")),
                               tr("Delete workspace"), this, &MainWindow::deleteSelectedWorkspace);
    m_deleteWorkspaceAction->setToolTip(
            tr("Delete the selected named workspace; its running jobs are killed first"));
    toolbar->addSeparator();
    QAction *refresh = toolbar->addAction(QIcon::fromTheme(QStringLiteral("view-refresh")),
                                          tr("Refresh"), &m_session, &ConsoleSession::refresh);
    refresh->setShortcut(QKeySequence::Refresh);
    auto *find = new QAction(this);
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, this, [this] {
        m_tabs->setCurrentIndex(0);
        m_filter->setFocus();
        m_filter->selectAll();
    });
    addAction(find);
}

void MainWindow::updateConnectionState()
{
    const AdminClient &client = m_session.client();
    switch (client.state()) {
    case AdminClient::State::Connected:
        m_connection->setText(
                tr("Connected to cmcpd %1 at %2").arg(client.serverVersion(), client.socketPath()));
        break;
    case AdminClient::State::Connecting:
        m_connection->setText(tr("Connecting to %1…").arg(client.socketPath()));
        break;
    case AdminClient::State::Disconnected:
        m_connection->setText(tr("Disconnected from %1: %2 — retrying")
                                      .arg(client.socketPath(), client.lastError()));
        break;
    }
    const bool connected = client.state() == AdminClient::State::Connected;
    m_cancelAction->setEnabled(connected);
    m_closeSessionAction->setEnabled(connected);
    m_deleteWorkspaceAction->setEnabled(connected);
}

void MainWindow::updateCounters()
{
    const admin::CountersRecord &counters = m_session.counters();
    m_sandbox->setTemplates(counters.templates);
    m_counters->setText(tr("%1 sessions · %2 running · %3 calls · %4 failed · %5 events dropped")
                                .arg(counters.sessionsOpen)
                                .arg(counters.callsInFlight)
                                .arg(counters.callsFinished)
                                .arg(counters.callsFailed)
                                .arg(m_session.droppedEvents()));
}

qint64 MainWindow::selectedCallId() const
{
    const QModelIndex current = m_callView->currentIndex();
    return current.isValid() ? current.data(CallModel::CallIdRole).toLongLong() : 0;
}

void MainWindow::showSelectedCall()
{
    const QModelIndex current = m_callView->currentIndex();
    m_detail->setPlainText(current.isValid() ? callDetailText(
                                   current.data(CallModel::CallRole).value<admin::CallRecord>())
                                             : QString());
}

void MainWindow::showLatestCall()
{
    m_session.calls().flush();
    for (int row = m_callProxy->rowCount() - 1; row >= 0; --row) {
        const QModelIndex index = m_callProxy->index(row, 0);
        if (index.data(CallModel::StatusRole).toString() != u"running") {
            m_callView->setCurrentIndex(index);
            return;
        }
    }
}

void MainWindow::cancelSelectedCall()
{
    const QModelIndex current = m_callView->currentIndex();
    if (!current.isValid() || current.data(CallModel::StatusRole).toString() != u"running") {
        statusBar()->showMessage(tr("Select a running call to cancel it."), 5000);
        return;
    }
    const qint64 callId = selectedCallId();
    m_session.cancelCall(callId, [self = QPointer<MainWindow>(this), callId](const QString &error) {
        if (self)
            self->statusBar()->showMessage(
                    error.isEmpty() ? tr("Call %1 cancelled.").arg(callId)
                                    : tr("Cannot cancel call %1: %2").arg(callId).arg(error),
                    8000);
    });
}

void MainWindow::copySelectedCall()
{
    if (m_tabs->currentIndex() != 0 || !m_callView->currentIndex().isValid())
        return;
    const auto call =
            m_callView->currentIndex().data(CallModel::CallRole).value<admin::CallRecord>();
    QApplication::clipboard()->setText(
            QString::fromUtf8(QJsonDocument(call.toJson()).toJson(QJsonDocument::Indented)));
    statusBar()->showMessage(tr("Call copied."), 3000);
}

void MainWindow::closeSelectedSession()
{
    m_tabs->setCurrentIndex(1);
    const QModelIndex current = m_sessionView->currentIndex();
    if (!current.isValid()) {
        statusBar()->showMessage(tr("Select a session to close it."), 5000);
        return;
    }
    const QString sessionId = current.data(SessionModel::SessionIdRole).toString();
    m_session.closeSession(
            sessionId, [self = QPointer<MainWindow>(this), sessionId](const QString &error) {
                if (self)
                    self->statusBar()->showMessage(
                            error.isEmpty()
                                    ? tr("Session %1 closed.").arg(sessionId)
                                    : tr("Cannot close session %1: %2").arg(sessionId, error),
                            8000);
            });
}

} // namespace cmcp
