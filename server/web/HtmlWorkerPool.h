#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>

class QProcess;
class QTimer;

namespace cmcp {

struct HtmlTask
{
    QByteArray html; // UTF-8
    QString selector; // empty: the readable text of the page
    bool markdown = false;
    QString baseUrl; // links in Markdown are made absolute against it
    qint64 maxBytes = 0; // the text's limit; 0: none
    int timeMs = 5000; // the parse's time limit
    qint64 memoryBytes = qint64(256) << 20; // the parse's memory limit
};

struct HtmlTaskResult
{
    bool ok = false;
    QString error;
    QString title;
    QString text;
    int matches = -1;
    bool truncated = false;
};

// Extractions run by cmcp-html helpers (workers/html), each a process of its own under
// seccomp, one page at a time: a page that crashes the parser ends one helper and fails one
// call with a message, never the daemon. At most `maxWorkers` run at once, later tasks wait;
// one helper is kept after first use, so a call pays no process start.
class HtmlWorkerPool : public QObject
{
    Q_OBJECT
public:
    HtmlWorkerPool(QString program, int maxWorkers, QObject *parent = nullptr);
    ~HtmlWorkerPool() override;

    // cmcp-html beside the running program, or in web/ beneath its directory (the build tree).
    static QString defaultProgram();

    using Callback = std::function<void(const HtmlTaskResult &result)>;
    // Calls back exactly once, later, unless cancelled first.
    quint64 run(HtmlTask task, Callback callback);
    void cancel(quint64 id);

private:
    struct Worker
    {
        QProcess *process = nullptr;
        QTimer *watchdog = nullptr;
        quint64 taskId = 0; // 0: idle
        Callback callback;
        QByteArray output;
    };
    struct Pending
    {
        quint64 id;
        HtmlTask task;
        Callback callback;
    };

    void dispatch();
    Worker *startWorker();
    void assign(Worker *worker, Pending pending);
    void onOutput(Worker *worker);
    void onGone(Worker *worker, const QString &why);
    void retire(Worker *worker);

    QString m_program;
    int m_maxWorkers;
    QList<Worker *> m_workers;
    QList<Pending> m_queue;
    quint64 m_nextId = 1;
};

} // namespace cmcp
