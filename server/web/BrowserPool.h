#pragma once

#include "posix/UniqueFd.h"

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <functional>
#include <memory>
#include <optional>

#include <sys/types.h>

class QProcess;
class QTimer;

namespace cmcp {

class BrowserAccount;
class EgressGate;
class EgressPolicy;

struct BrowseCall
{
    QUrl url;
    QString waitFor; // load (empty), quiet or a CSS selector
    bool text = false;
    bool screenshot = false;
    // Whose page it is: only workers of this principal load it.
    QString principal;
};

struct BrowseOutcome
{
    bool success = false;
    QString error;
    QString url;
    QString title;
    QString content;
    QString format;
    bool truncated = false;
    QJsonArray blocked; // requests the gate refused: {url, reason}
    QByteArray screenshotBase64; // PNG
    qint64 workerPid = 0; // the process that served the page (cmcp-jail's, when confined)
};

// The daemon's side of web_browse: cmcp-browser workers, spoken to in JSON lines.
//
// A worker serves one principal: Chromium's own sandbox is off inside the jail, so a renderer
// exploited by one principal's page holds the whole worker, and must find no other principal's
// pages there. A worker is bound to the principal of its first page and loads only that
// principal's pages from then on. Once pages of a second principal have come (or with
// prestart), one unbound worker is kept warm, and the first page of a principal without a worker
// takes it. At most `maxWorkers` workers run at once:
// a principal that needs one when they all run ends an idle worker of another principal (never
// hands it over) and gets a fresh one. Once there have been several principals, a bound worker
// with no page for `idleWorkerMs` ends, so that a burst of principals does not hold memory.
//
// A worker serves at most `pagesPerWorker` pages (and a confined one no more once its memory
// reaches `retireAboveBytes`) and is then replaced; a worker that crashes fails the calls it had
// with a clear error and is replaced at once. Up to `concurrentPages` pages load in a worker at
// the same time; more calls wait in order.
class BrowserPool : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString program;
        QStringList arguments; // the egress policy, as cmcp-browser reads it
        int pagesPerWorker = 50;
        int concurrentPages = 4;
        int maxWorkers = 4; // WEB_BROWSER_WORKERS, the warm one included
        int idleWorkerMs = 60000; // WEB_BROWSER_IDLE_SECONDS
        int timeoutMs = 30000; // a page's limit; the worker enforces it
        qint64 maxBytes = 10 * 1024 * 1024;
        // A connection of a worker through its gate with no byte moving for this long is
        // closed (EGRESS_IDLE_SECONDS), whether the daemon's gate serves it or the worker's own.
        int egressIdleMs = 300 * 1000;
        // The user workers run as (a root daemon's), or none to run them as the daemon.
        std::shared_ptr<const BrowserAccount> account;
        // The gate of the web tools' rules (the same as `arguments` give the worker): it decides
        // every connection of a confined worker, whose network namespace has no other way out.
        std::shared_ptr<const EgressGate> gate;
        // With an account: each worker starts under cmcp-jail as that user, with no_new_privs,
        // rlimits and a cgroup of its own holding these limits (the whole browser, Chromium's
        // helpers included), in namespaces of its own (user, mount, pid, network) with the
        // jail's minimal root, where nothing of the host's home or /tmp is. Its network
        // namespace has loopback alone and one listener on it, which the jail hands to the
        // daemon: the daemon serves it with `gate` (an EgressProxy), so Chromium's every
        // connection leaves through the daemon. A worker the cgroup's OOM killer ended is said
        // to be so. With `landlock` the worker writes only its home, its /tmp and /dev/shm,
        // reads the rest of its minimal root and executes only itself and `executables`; with
        // `seccomp` it runs under the jail's job filter (denials counted in the jail's report
        // and logged when the worker ends). Each is set when this kernel has the layer.
        struct Confinement
        {
            QString jailProgram;
            qint64 memoryBytes = 0; // WEB_BROWSER_MEMORY_MB
            qint64 pids = 0; // WEB_BROWSER_PIDS
            // A worker whose cgroup holds at least this much anonymous and shared memory after
            // a page is replaced, so that what a worker keeps from its pages cannot starve the
            // next ones (WEB_BROWSER_RETIRE_PERCENT of memoryBytes); 0: only by count.
            qint64 retireAboveBytes = 0;
            bool landlock = false;
            bool seccomp = false;
            // What Chromium starts besides the worker: its helper process (QtWebEngineProcess)
            // and the ELF loader, by their real paths beneath /usr.
            QStringList executables;
        };
        std::optional<Confinement> confinement;
    };

    // Connections one worker may have open through its gate at once: Chromium opens at most 32
    // to a proxy for pages, its WebSockets aside, and a worker loads 4 pages at once.
    static constexpr qsizetype kMaxEgressConnectionsPerWorker = 128;

    explicit BrowserPool(Options options, QObject *parent = nullptr);
    ~BrowserPool() override;

    // cmcp-browser beside the running program, or in browser/ beneath it (the build tree).
    static QString defaultProgram();
    // The command line that gives cmcp-browser the same rules as `policy`.
    static QStringList policyArguments(const EgressPolicy &policy, qint64 maxBytes, int timeoutMs,
                                       int egressIdleMs);

    // New rules (policyArguments, a page's time and size): pages already in a worker finish
    // under the rules it was started with; the next ones go to a worker started with these.
    void setPolicy(QStringList arguments, std::shared_ptr<const EgressGate> gate, int timeoutMs,
                   qint64 maxBytes);

    // Starts a worker now rather than at the first call.
    void prestart();
    int workersStarted() const { return m_workersStarted; }
    int workersRunning() const { return int(m_workers.size()); }

    using Callback = std::function<void(const BrowseOutcome &outcome)>;
    // Calls back exactly once, later, unless cancelled first.
    quint64 browse(const BrowseCall &call, Callback callback);
    void cancel(quint64 id);

private:
    struct Worker;
    struct Pending
    {
        quint64 id;
        BrowseCall call;
        Callback callback;
    };

    Worker *startWorker(const std::optional<QString> &principal = std::nullopt);
    void serveEgress(Worker *worker, UniqueFd listener);
    QString jailVerdict(Worker *worker) const;
    static pid_t confinedWorkerPid(Worker *worker);
    void dispatch();
    Worker *workerFor(const QString &principal);
    void provideWorkers();
    void retire(Worker *worker);
    void endWorker(Worker *worker);
    void send(Worker *worker, Pending pending);
    void onOutput(Worker *worker);
    void onGone(Worker *worker, const QString &why);
    void finishPage(Worker *worker, quint64 id, const BrowseOutcome &outcome);
    void drainIfDone(Worker *worker);
    void retireIfMemoryHigh(Worker *worker);

    Options m_options;
    QList<Worker *> m_workers; // every running worker, draining ones included
    QList<Pending> m_queue;
    quint64 m_nextId = 1;
    int m_workersStarted = 0;
    bool m_sandboxOffReported = false; // said once per daemon, not once per worker
    bool m_wanted = false; // a call has come: keep a worker warm from now on
    QString m_firstPrincipal;
    int m_principalsSeen = 0; // 0, 1, or 2 for "more than one"
};

} // namespace cmcp
