#include "web/HtmlWorkerPool.h"

#include "base/InstallLayout.h"
#include "web/WorkerQueue.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <csignal>

namespace cmcp {

namespace {

// Beyond the parse's own time limit, which the helper enforces: how long the pool waits
// before it kills a helper that does not answer.
constexpr int graceMs = 3000;

QString describeCrash(const QProcess &process)
{
    if (process.exitStatus() == QProcess::CrashExit) {
        const int signal = process.exitCode();
        // QProcess reports a crash without the signal on some platforms; say what is known.
        if (signal == SIGABRT)
            return QStringLiteral("the HTML parser failed on this page (an assertion in gumbo)");
        if (signal == SIGSYS)
            return QStringLiteral("the HTML parser was stopped by its seccomp filter on this page");
        return QStringLiteral("the HTML parser crashed on this page");
    }
    return QStringLiteral("the HTML parser exited (status %1) on this page")
            .arg(process.exitCode());
}

} // namespace

HtmlWorkerPool::HtmlWorkerPool(QString program, int maxWorkers, QObject *parent)
    : QObject(parent),
      m_program(std::move(program)),
      m_maxWorkers(std::max(1, maxWorkers))
{
}

HtmlWorkerPool::~HtmlWorkerPool()
{
    for (Worker *worker : std::as_const(m_workers)) {
        worker->process->disconnect(this);
        worker->process->kill();
        worker->process->waitForFinished(1000);
        delete worker;
    }
}

QString HtmlWorkerPool::defaultProgram()
{
    return helperProgram(QStringLiteral("cmcp-html"), QStringLiteral("web"));
}

quint64 HtmlWorkerPool::run(HtmlTask task, Callback callback)
{
    const quint64 id = m_nextId++;
    m_queue.append(Pending{id, std::move(task), std::move(callback)});
    QMetaObject::invokeMethod(this, &HtmlWorkerPool::dispatch, Qt::QueuedConnection);
    return id;
}

void HtmlWorkerPool::cancel(quint64 id)
{
    if (removeQueued(m_queue, id))
        return;
    for (Worker *worker : std::as_const(m_workers)) {
        if (worker->taskId == id) {
            // Its answer is no longer wanted and the parse may run for seconds: end it.
            worker->callback = nullptr;
            retire(worker);
            dispatch();
            return;
        }
    }
}

void HtmlWorkerPool::dispatch()
{
    while (!m_queue.isEmpty()) {
        Worker *idle = nullptr;
        for (Worker *worker : std::as_const(m_workers)) {
            if (worker->taskId == 0) {
                idle = worker;
                break;
            }
        }
        if (!idle && m_workers.size() < m_maxWorkers)
            idle = startWorker();
        if (!idle)
            return;
        assign(idle, m_queue.takeFirst());
    }
}

HtmlWorkerPool::Worker *HtmlWorkerPool::startWorker()
{
    auto *worker = new Worker;
    worker->process = new QProcess(this);
    worker->watchdog = new QTimer(worker->process);
    worker->watchdog->setSingleShot(true);
    worker->process->setProgram(m_program);
    worker->process->setProcessChannelMode(QProcess::SeparateChannels);
    worker->process->setStandardErrorFile(QProcess::nullDevice());
    worker->process->setProcessEnvironment(QProcessEnvironment());
    connect(worker->process, &QProcess::readyReadStandardOutput, this,
            [this, worker] { onOutput(worker); });
    connect(worker->process, &QProcess::finished, this,
            [this, worker] { onGone(worker, describeCrash(*worker->process)); });
    connect(worker->process, &QProcess::errorOccurred, this,
            [this, worker](QProcess::ProcessError error) {
                if (error == QProcess::FailedToStart)
                    onGone(worker,
                           QStringLiteral("cannot start the HTML parser %1: %2")
                                   .arg(m_program, worker->process->errorString()));
            });
    connect(worker->watchdog, &QTimer::timeout, this, [this, worker] {
        Callback callback = std::move(worker->callback);
        retire(worker);
        if (callback)
            callback({false,
                      QStringLiteral("the HTML parser did not answer in time; it was stopped"),
                      {},
                      {},
                      -1,
                      false});
        dispatch();
    });
    m_workers.append(worker);
    worker->process->start(QIODevice::ReadWrite);
    return worker;
}

void HtmlWorkerPool::assign(Worker *worker, Pending pending)
{
    worker->taskId = pending.id;
    worker->callback = std::move(pending.callback);
    worker->output.clear();
    const HtmlTask &task = pending.task;
    const QJsonObject header{{QStringLiteral("selector"), task.selector},
                             {QStringLiteral("format"),
                              task.markdown ? QStringLiteral("markdown") : QStringLiteral("text")},
                             {QStringLiteral("base"), task.baseUrl},
                             {QStringLiteral("max_bytes"), double(task.maxBytes)},
                             {QStringLiteral("time_ms"), task.timeMs},
                             {QStringLiteral("memory_bytes"), double(task.memoryBytes)},
                             {QStringLiteral("length"), double(task.html.size())}};
    worker->process->write(QJsonDocument(header).toJson(QJsonDocument::Compact) + '\n');
    worker->process->write(task.html);
    worker->watchdog->start(task.timeMs + graceMs);
}

void HtmlWorkerPool::onOutput(Worker *worker)
{
    worker->output.append(worker->process->readAllStandardOutput());
    const qsizetype newline = worker->output.indexOf('\n');
    if (newline < 0 || worker->taskId == 0)
        return;
    const QJsonObject reply = QJsonDocument::fromJson(worker->output.left(newline)).object();
    worker->output.remove(0, newline + 1);
    worker->watchdog->stop();
    worker->taskId = 0;
    Callback callback = std::move(worker->callback);
    worker->callback = nullptr;
    HtmlTaskResult result;
    result.ok = reply.value(QLatin1String("ok")).toBool();
    result.error = reply.value(QLatin1String("error")).toString();
    if (!result.ok && result.error.isEmpty())
        result.error = QStringLiteral("the HTML parser gave no usable answer");
    result.title = reply.value(QLatin1String("title")).toString();
    result.text = reply.value(QLatin1String("text")).toString();
    result.matches = reply.value(QLatin1String("matches")).toInt(-1);
    result.truncated = reply.value(QLatin1String("truncated")).toBool();
    if (callback)
        callback(result);
    dispatch();
}

void HtmlWorkerPool::onGone(Worker *worker, const QString &why)
{
    if (!m_workers.contains(worker))
        return;
    Callback callback = std::move(worker->callback);
    const bool busy = worker->taskId != 0;
    if (busy)
        spdlog::warn("web_scrape: {}", why.toStdString());
    retire(worker);
    if (busy && callback)
        callback({false, why, {}, {}, -1, false});
    dispatch();
}

void HtmlWorkerPool::retire(Worker *worker)
{
    if (!m_workers.removeOne(worker))
        return;
    worker->process->disconnect(this);
    worker->watchdog->stop();
    if (worker->process->state() != QProcess::NotRunning)
        worker->process->kill();
    // Reaped when it has gone; deleted then.
    QProcess *process = worker->process;
    connect(process, &QProcess::finished, process, &QObject::deleteLater);
    if (process->state() == QProcess::NotRunning)
        process->deleteLater();
    delete worker;
}

} // namespace cmcp
