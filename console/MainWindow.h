#pragma once

#include <QMainWindow>

class QAction;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

namespace cmcp {

class ConsoleSession;
class SandboxView;

// Wires the session's models to the views and the actions to the session; it holds no state of
// its own beyond the selection.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(ConsoleSession &session, QWidget *parent = nullptr);

    // For tests and the screenshot script.
    QTableView *callView() const { return m_callView; }
    QLineEdit *filterEdit() const { return m_filter; }
    QTableView *workspaceView() const { return m_workspaceView; }
    // Shows the tab whose title (without its '&') is `title`; false when there is none.
    bool showTab(const QString &title);
    // Selects the newest finished call, so that the detail pane shows it.
    void showLatestCall();

private:
    QWidget *makeCallsPage();
    QWidget *makeSessionsPage();
    QWidget *makeWorkspacesPage();
    void createActions();
    void updateConnectionState();
    void updateCounters();
    void showSelectedCall();
    qint64 selectedCallId() const;
    void cancelSelectedCall();
    void copySelectedCall();
    void closeSelectedSession();
    void deleteSelectedWorkspace();

    ConsoleSession &m_session;
    QTabWidget *m_tabs = nullptr;
    QLineEdit *m_filter = nullptr;
    QSortFilterProxyModel *m_callProxy = nullptr;
    QTableView *m_callView = nullptr;
    QPlainTextEdit *m_detail = nullptr;
    QTableView *m_sessionView = nullptr;
    QTableView *m_workspaceView = nullptr;
    QAction *m_deleteWorkspaceAction = nullptr;
    SandboxView *m_sandbox = nullptr;
    QPlainTextEdit *m_log = nullptr;
    QLabel *m_connection = nullptr;
    QLabel *m_counters = nullptr;
    QAction *m_cancelAction = nullptr;
    QAction *m_copyAction = nullptr;
    QAction *m_closeSessionAction = nullptr;
};

} // namespace cmcp
