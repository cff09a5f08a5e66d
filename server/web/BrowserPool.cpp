#include "web/BrowserPool.h"

#include "base/InstallLayout.h"
#include "web/BrowserAccount.h"
#include "egress/EgressGate.h"
#include "egress/EgressPolicy.h"
#include "egress/EgressProxy.h"
#include "web/MemoryCgroup.h"
#include "web/WorkerQueue.h"
#include "sandbox/ConfinedProcess.h"
#include "sandbox/JailPolicy.h"
#include "sandbox/JailReport.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cmcp {

namespace {

// Beyond a page's own limit, which the worker enforces, before a silent worker is killed.
constexpr int graceMs = 10000;
constexpr int startLimitMs = 60000;

// The worker gets what a Qt program and Chromium need from the daemon's environment, and no
// token or key of the daemon's.
QProcessEnvironment workerEnvironment()
{
    const QProcessEnvironment daemon = QProcessEnvironment::systemEnvironment();
    QProcessEnvironment environment;
    for (const QString &name : daemon.keys()) {
        if (name == QLatin1String("PATH") || name == QLatin1String("HOME")
            || name == QLatin1String("TMPDIR") || name == QLatin1String("LANG")
            || name.startsWith(QLatin1String("LC_")) || name == QLatin1String("XDG_RUNTIME_DIR")
            || name.startsWith(QLatin1String("QTWEBENGINE_"))
            || name == QLatin1String("QT_QPA_PLATFORM") || name == QLatin1String("QT_LOGGING_RULES")
            || name.startsWith(QLatin1String("FONTCONFIG_")))
            environment.insert(name, daemon.value(name));
    }
    if (!environment.contains(QStringLiteral("QT_QPA_PLATFORM")))
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return environment;
}

// Where a confined worker's home appears inside its minimal root, and the port of its network
// namespace's one listener (Chromium's proxy), which the daemon serves.
constexpr const char *confinedHome = "/home/browser";
constexpr int confinedEgressPort = 3128;

// cmcp-jail's policy for a confined worker: the account's uid, its home as the workspace, the
// worker's environment and nothing else, a cgroup with the pool's limits, and namespaces with
// the jail's minimal root: /usr read-only, no host home, no host /tmp, a network namespace whose
// only way out is the listener the daemon serves. The program is held from the host (a build
// tree's worker lives outside /usr) and nothing else of its directory is visible. Chromium's own
// sandbox cannot be built in there (it needs user namespaces, which the jail's namespace forbids
// below it): the worker turns it off and the jail's layers contain the whole browser instead.
//
// Landlock, where the kernel has it: the minimal root's /usr, /etc, /proc and /dev are read
// only (fonts, ICU data, locales, its processes' /proc entries), writable are only the home
// (its profile and caches), its private /tmp and /dev/shm (Chromium's shared memory between
// its processes). Nothing else may be written even where the mount or the file's mode would
// let it (/dev/null, /proc/<pid>/ files of its own processes). Execute: the worker itself and
// Chromium's helper process with the ELF loader, nothing else. TCP is left to the network
// namespace, whose one listener is the gate's: Landlock's TCP rule would refuse that too.
//
// seccomp: the jail's job filter (no ptrace, mount, namespaces, bpf, keyrings, io_uring, ...).
// Chromium without its own sandbox needs none of what it refuses; the network stays open to
// socket() (Chromium reaches its proxy over TCP inside its namespace).
JailPolicy confinedPolicy(const BrowserAccount &account,
                          const BrowserPool::Options::Confinement &confinement,
                          const QProcessEnvironment &environment)
{
    JailPolicy policy;
    policy.uid = account.uid();
    policy.gid = account.gid();
    policy.workspace = account.home().toStdString();
    for (const QString &name : environment.keys())
        policy.setEnv(name.toStdString(), environment.value(name).toStdString());
    policy.layers = {jail::Layer::Identity, jail::Layer::Rlimits, jail::Layer::Cgroup,
                     jail::Layer::Namespaces};
    policy.cgroup = jail::CgroupPolicy{};
    policy.cgroup->memoryBytes = std::uint64_t(confinement.memoryBytes);
    policy.cgroup->pids = std::uint64_t(confinement.pids);
    jail::NamespacesPolicy namespaces;
    namespaces.egressPort = confinedEgressPort;
    namespaces.hostname = "browser";
    namespaces.workspaceAt = confinedHome;
    namespaces.tmpSizeMb = 256;
    namespaces.programFromHost = true;
    policy.namespaces = namespaces;
    if (confinement.landlock) {
        policy.layers.push_back(jail::Layer::Landlock);
        policy.landlock = jail::LandlockPolicy{{"/usr", "/etc", "/proc", "/dev"},
                                               toJailStrings(confinement.executables),
                                               {"/tmp", "/dev/shm"},
                                               true};
    }
    if (confinement.seccomp) {
        policy.layers.push_back(jail::Layer::Seccomp);
        policy.seccomp.network = true;
    }
    return policy;
}

// What the jail's seccomp filter refused a worker, from its exit record: each syscall with its
// errno and count, once, when the worker has ended. Nothing when nothing was refused.
void logSeccompDenials(const JailExit &exit)
{
    std::string denied;
    const auto add = [&denied](const std::string &entry) {
        denied += (denied.empty() ? "" : ", ") + entry;
    };
    for (const SeccompDenial &count : exit.seccompDenied.value_or(std::vector<SeccompDenial>()))
        add(count.syscall + " (" + count.errnoName + ") " + std::to_string(count.count) + "×");
    if (exit.seccompDeniedUnnamed > 0)
        add("unnamed " + std::to_string(exit.seccompDeniedUnnamed) + "×");
    if (!denied.empty())
        spdlog::warn("web_browse: the browser worker's seccomp filter refused it: {}", denied);
}

QString describeEnd(const QProcess &process)
{
    if (process.exitStatus() == QProcess::CrashExit)
        return QStringLiteral("crashed (signal %1)").arg(process.exitCode());
    return QStringLiteral("exited (status %1)").arg(process.exitCode());
}

} // namespace

struct BrowserPool::Worker
{
    QProcess *process = nullptr;
    QTimer *watchdog = nullptr;
    QElapsedTimer started;
    bool ready = false;
    bool draining = false;
    // A confined worker's jail (a child of the process): its report, read when it is gone, and
    // its network's listener, served by a proxy of the daemon's gate (a child of the process
    // too, so it goes with the worker).
    ConfinedProcess *jail = nullptr;
    std::shared_ptr<const EgressGate> gate;
    // The principal whose pages it loads, from its first page (or from its start, when it was
    // started for a principal) to its end; none while it is the warm spare.
    std::optional<QString> principal;
    QElapsedTimer idle; // since its last page finished
    int pagesSent = 0;
    QHash<quint64, Callback> inFlight;
    QHash<quint64, qint64> deadlines; // id -> ms since start at which the page is overdue
    // A confined worker's memory cgroup's OOM kills when each page was sent.
    QHash<quint64, std::uint64_t> oomKillsAtSend;
    QByteArray output;
    QByteArray errors;
};

BrowserPool::BrowserPool(Options options, QObject *parent)
    : QObject(parent),
      m_options(std::move(options))
{
}

BrowserPool::~BrowserPool()
{
    for (Worker *worker : std::as_const(m_workers)) {
        worker->process->disconnect(this);
        worker->process->closeWriteChannel();
        if (!worker->process->waitForFinished(2000))
            worker->process->kill();
        worker->process->waitForFinished(1000);
        delete worker;
    }
}

QString BrowserPool::defaultProgram()
{
    return helperProgram(QStringLiteral("cmcp-browser"), QStringLiteral("browser"));
}

QStringList BrowserPool::policyArguments(const EgressPolicy &policy, qint64 maxBytes, int timeoutMs,
                                         int egressIdleMs)
{
    QStringList arguments{QStringLiteral("--allowed-domains"), policy.allowedDomains().join(u',')};
    if (policy.allowsPrivate())
        arguments.append(QStringLiteral("--allow-private"));
    if (policy.trustedMayBePrivate())
        arguments.append(QStringLiteral("--trusted-may-be-private"));
    for (const QString &origin : policy.trustedOrigins())
        arguments << QStringLiteral("--trusted-origin") << origin;
    arguments << QStringLiteral("--max-bytes") << QString::number(maxBytes)
              << QStringLiteral("--timeout-ms")
              << QString::number(timeoutMs)
              // For the worker's own proxy, when it has one (a worker not confined).
              << QStringLiteral("--egress-idle-ms") << QString::number(egressIdleMs)
              << QStringLiteral("--egress-max-connections")
              << QString::number(kMaxEgressConnectionsPerWorker);
    return arguments;
}

void BrowserPool::prestart()
{
    m_wanted = true;
    provideWorkers();
}

quint64 BrowserPool::browse(const BrowseCall &call, Callback callback)
{
    m_wanted = true;
    if (m_principalsSeen == 0) {
        m_principalsSeen = 1;
        m_firstPrincipal = call.principal;
    } else if (call.principal != m_firstPrincipal) {
        m_principalsSeen = 2;
    }
    const quint64 id = m_nextId++;
    m_queue.append(Pending{id, call, std::move(callback)});
    QMetaObject::invokeMethod(this, &BrowserPool::dispatch, Qt::QueuedConnection);
    return id;
}

void BrowserPool::cancel(quint64 id)
{
    if (removeQueued(m_queue, id))
        return;
    for (Worker *worker : std::as_const(m_workers)) {
        if (worker->inFlight.remove(id)) {
            worker->deadlines.remove(id);
            worker->oomKillsAtSend.remove(id);
            worker->process->write(
                    QJsonDocument(QJsonObject{{QStringLiteral("cancel"), double(id)}})
                            .toJson(QJsonDocument::Compact)
                    + '\n');
            drainIfDone(worker);
            dispatch();
            return;
        }
    }
}

void BrowserPool::setPolicy(QStringList arguments, std::shared_ptr<const EgressGate> gate,
                            int timeoutMs, qint64 maxBytes)
{
    m_options.arguments = std::move(arguments);
    m_options.gate = std::move(gate);
    m_options.timeoutMs = timeoutMs;
    m_options.maxBytes = maxBytes;
    const QList<Worker *> workers = m_workers;
    for (Worker *worker : workers)
        endWorker(worker);
    dispatch();
}

BrowserPool::Worker *BrowserPool::startWorker(const std::optional<QString> &principal)
{
    auto *worker = new Worker;
    worker->principal = principal;
    worker->idle.start();
    worker->process = new QProcess(this);
    worker->watchdog = new QTimer(worker->process);
    worker->watchdog->setInterval(1000);
    worker->process->setProgram(m_options.program);
    QStringList arguments = m_options.arguments;
    QProcessEnvironment environment = workerEnvironment();
    if (m_options.account) {
        arguments += m_options.account->workerArguments();
        // Chromium's profile, caches and runtime files go where that user may write.
        environment.insert(QStringLiteral("HOME"), m_options.account->home());
        environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), m_options.account->home());
        // The daemon's directory may be closed to that user.
        worker->process->setWorkingDirectory(m_options.account->home());
    }
    if (m_options.account && m_options.confinement) {
        // The jail becomes the account's user itself; the worker is told nothing of it.
        for (const QString &argument : m_options.account->workerArguments())
            arguments.removeOne(argument);
        // Inside its minimal root: its home where the jail binds it, its own /tmp.
        environment.insert(QStringLiteral("HOME"), QLatin1String(confinedHome));
        environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), QLatin1String(confinedHome));
        environment.remove(QStringLiteral("TMPDIR"));
        arguments << QStringLiteral("--egress-port") << QString::number(confinedEgressPort);
        ConfinedProcess::Spec spec;
        spec.jailProgram = m_options.confinement->jailProgram;
        spec.program = m_options.program;
        spec.arguments = arguments;
        spec.policy = confinedPolicy(*m_options.account, *m_options.confinement, environment);
        spec.egressListener = [this, worker](UniqueFd listener) {
            serveEgress(worker, std::move(listener));
        };
        QString error;
        worker->jail = m_options.gate
                ? ConfinedProcess::confine(worker->process, std::move(spec), &error)
                : nullptr;
        if (!worker->jail) {
            // Never a worker less confined than configured: this one fails to start.
            const QString why =
                    QStringLiteral("could not be started: its policy cannot be handed to "
                                   "cmcp-jail (%1)")
                            .arg(m_options.gate ? error
                                                : QString::fromLocal8Bit(std::strerror(errno)));
            m_workers.append(worker);
            ++m_workersStarted;
            QMetaObject::invokeMethod(
                    this, [this, worker, why] { onGone(worker, why); }, Qt::QueuedConnection);
            return worker;
        }
        worker->gate = m_options.gate;
    } else {
        worker->process->setArguments(arguments);
        worker->process->setProcessEnvironment(environment);
    }
    connect(worker->process, &QProcess::readyReadStandardOutput, this,
            [this, worker] { onOutput(worker); });
    connect(worker->process, &QProcess::readyReadStandardError, this, [worker] {
        // Chromium's own chatter: kept for a crash report, logged at debug level.
        const QByteArray chunk = worker->process->readAllStandardError();
        worker->errors = (worker->errors + chunk).right(4096);
        for (const QByteArray &line : chunk.split('\n')) {
            if (!line.trimmed().isEmpty())
                spdlog::debug("cmcp-browser: {}", line.trimmed().toStdString());
        }
    });
    connect(worker->process, &QProcess::finished, this,
            [this, worker] { onGone(worker, describeEnd(*worker->process)); });
    connect(worker->process, &QProcess::errorOccurred, this,
            [this, worker](QProcess::ProcessError error) {
                if (error == QProcess::FailedToStart)
                    onGone(worker,
                           QStringLiteral("could not be started (%1: %2)")
                                   .arg(m_options.program, worker->process->errorString()));
            });
    connect(worker->watchdog, &QTimer::timeout, this, [this, worker] {
        // With one principal only, its worker is the warm one and stays.
        if (worker->principal && m_principalsSeen > 1 && worker->ready && worker->inFlight.isEmpty()
            && worker->idle.elapsed() > m_options.idleWorkerMs) {
            endWorker(worker);
            return;
        }
        const qint64 now = worker->started.elapsed();
        if (!worker->ready && now > startLimitMs) {
            worker->process->kill();
            return;
        }
        for (auto it = worker->deadlines.cbegin(); it != worker->deadlines.cend(); ++it) {
            if (now > it.value()) {
                spdlog::warn("web_browse: the browser worker did not answer in time; killing it");
                worker->process->kill();
                return;
            }
        }
    });
    m_workers.append(worker);
    ++m_workersStarted;
    worker->started.start();
    worker->watchdog->start();
    worker->process->start();
    if (worker->jail)
        worker->jail->started();
    return worker;
}

// The listener of a confined worker's network namespace, once: from here on the daemon's gate
// serves it, under the rules the worker was started with. A refusal is told to the worker,
// which names it in the result of the page that asked.
void BrowserPool::serveEgress(Worker *worker, UniqueFd listener)
{
    EgressProxy::Options options;
    options.maxResponseBytes = m_options.maxBytes;
    options.connectTimeoutMs = m_options.timeoutMs;
    options.maxConnections = kMaxEgressConnectionsPerWorker;
    options.idleTimeoutMs = m_options.egressIdleMs;
    auto *proxy = new EgressProxy(worker->gate, options, worker->process);
    if (proxy->serveListening(listener.get())) {
        (void)listener.release(); // the proxy's server closes it now
        QProcess *process = worker->process;
        connect(proxy, &EgressProxy::refused, process,
                [process](const QString &target, const QString &reason) {
                    process->write(QJsonDocument(QJsonObject{{QStringLiteral("refused"), target},
                                                             {QStringLiteral("reason"), reason}})
                                           .toJson(QJsonDocument::Compact)
                                   + '\n');
                });
    } else {
        delete proxy;
        spdlog::error("web_browse: the browser worker's network cannot be served");
    }
}

// Each waiting page, in order, goes to a worker of its principal with room for it; a page whose
// principal's worker is starting or full waits without holding up other principals' pages.
void BrowserPool::dispatch()
{
    for (qsizetype i = 0; i < m_queue.size();) {
        Worker *worker = workerFor(m_queue.at(i).call.principal);
        if (!worker) {
            ++i;
            continue;
        }
        send(worker, m_queue.takeAt(i));
        if (worker->pagesSent >= m_options.pagesPerWorker)
            retire(worker);
    }
    provideWorkers();
}

// The worker of `principal` that may take a page now: its own, or the warm spare, which becomes
// its own. None while its own is starting or full.
BrowserPool::Worker *BrowserPool::workerFor(const QString &principal)
{
    Worker *spare = nullptr;
    for (Worker *worker : std::as_const(m_workers)) {
        if (worker->draining)
            continue;
        if (worker->principal == principal)
            return worker->ready && worker->inFlight.size() < m_options.concurrentPages ? worker
                                                                                        : nullptr;
        if (!worker->principal && worker->ready && !spare)
            spare = worker;
    }
    if (spare)
        spare->principal = principal;
    return spare;
}

// A worker for each principal with pages waiting and none of its own, within maxWorkers: the
// spare (even while it starts), a fresh one, or, when all run, a fresh one in place of an idle
// worker of another principal, which ends first. Then the warm spare, if there is room.
void BrowserPool::provideWorkers()
{
    const auto running = [this] { return int(m_workers.size()); };
    for (const Pending &pending : std::as_const(m_queue)) {
        const QString &principal = pending.call.principal;
        Worker *spare = nullptr;
        bool hasOwn = false;
        for (Worker *worker : std::as_const(m_workers)) {
            if (worker->draining)
                continue;
            hasOwn = hasOwn || worker->principal == principal;
            if (!worker->principal && !spare)
                spare = worker;
        }
        if (hasOwn)
            continue;
        if (spare) {
            spare->principal = principal;
            continue;
        }
        if (running() < m_options.maxWorkers) {
            startWorker(principal);
            continue;
        }
        // Room is being made already while a worker with no pages is on its way out.
        const bool ending = std::any_of(m_workers.cbegin(), m_workers.cend(), [](Worker *w) {
            return w->draining && w->inFlight.isEmpty();
        });
        if (ending)
            break;
        Worker *idlest = nullptr;
        for (Worker *worker : std::as_const(m_workers))
            if (!worker->draining && worker->inFlight.isEmpty()
                && (!idlest || worker->idle.elapsed() > idlest->idle.elapsed()))
                idlest = worker;
        if (!idlest)
            break; // every worker is loading pages: the page waits for one to finish
        spdlog::info("web_browse: {} browser workers run (WEB_BROWSER_WORKERS); the idle one of "
                     "another principal ends to make room",
                     running());
        endWorker(idlest);
        break;
    }
    // The spare is for a principal's first page; a pool that has served one principal only (the
    // local one, or a daemon with one token) would only pay for it.
    if (!m_wanted || running() >= m_options.maxWorkers || m_principalsSeen == 1)
        return;
    for (Worker *worker : std::as_const(m_workers))
        if (!worker->draining && !worker->principal)
            return;
    startWorker();
}

// A worker that has served its pages: it finishes them while its successor, bound to the same
// principal, starts (when there is room; otherwise the principal's next page starts it).
void BrowserPool::retire(Worker *worker)
{
    endWorker(worker);
    if (worker->principal && int(m_workers.size()) < m_options.maxWorkers)
        startWorker(worker->principal);
}

// A worker takes no more pages and quits once it has answered those it has.
void BrowserPool::endWorker(Worker *worker)
{
    if (worker->draining)
        return;
    worker->draining = true;
    drainIfDone(worker);
}

void BrowserPool::send(Worker *worker, Pending pending)
{
    const BrowseCall &call = pending.call;
    if (worker->pagesSent == 0) {
        // The worker's pid as the host sees it (the jail's child, when confined), so that an
        // operator can find it.
        const qint64 pid = m_options.confinement && m_options.account
                ? confinedWorkerPid(worker)
                : worker->process->processId();
        spdlog::info("web_browse: browser worker {} serves the pages of principal '{}' only", pid,
                     call.principal.toStdString());
    }
    const QJsonObject request{{QStringLiteral("id"), double(pending.id)},
                              {QStringLiteral("url"), call.url.toString(QUrl::FullyEncoded)},
                              {QStringLiteral("wait_for"), call.waitFor},
                              {QStringLiteral("text"), call.text},
                              {QStringLiteral("screenshot"), call.screenshot},
                              {QStringLiteral("timeout_ms"), m_options.timeoutMs},
                              {QStringLiteral("max_bytes"), double(m_options.maxBytes)}};
    worker->process->write(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
    worker->inFlight.insert(pending.id, std::move(pending.callback));
    if (m_options.confinement && m_options.account)
        worker->oomKillsAtSend.insert(pending.id, memoryCgroupOomKills(confinedWorkerPid(worker)));
    worker->deadlines.insert(pending.id, worker->started.elapsed() + m_options.timeoutMs + graceMs);
    ++worker->pagesSent;
}

void BrowserPool::onOutput(Worker *worker)
{
    worker->output.append(worker->process->readAllStandardOutput());
    qsizetype newline;
    while ((newline = worker->output.indexOf('\n')) >= 0) {
        const QJsonObject message = QJsonDocument::fromJson(worker->output.left(newline)).object();
        worker->output.remove(0, newline + 1);
        if (message.value(QLatin1String("ready")).toBool()) {
            worker->ready = true;
            spdlog::info("web_browse: browser worker {} ready in {} ms",
                         worker->process->processId(), worker->started.elapsed());
            if (!message.value(QLatin1String("sandbox")).toBool() && !m_sandboxOffReported) {
                m_sandboxOffReported = true;
                const std::string why =
                        message.value(QLatin1String("sandbox_off")).toString().toStdString();
                if (m_options.account && m_options.confinement)
                    spdlog::info("web_browse: Chromium's sandbox is off in the browser workers "
                                 "({}); cmcp-jail contains each whole worker instead (its own "
                                 "uid, user, mount, pid and network namespaces, a cgroup{}{})",
                                 why, m_options.confinement->landlock ? ", Landlock" : "",
                                 m_options.confinement->seccomp ? ", seccomp" : "");
                else
                    spdlog::warn("web_browse: Chromium's sandbox is off in the browser workers "
                                 "({}); pages are confined only by the worker's user and the "
                                 "egress gate",
                                 why);
            }
            continue;
        }
        const quint64 id = quint64(message.value(QLatin1String("id")).toDouble());
        BrowseOutcome outcome;
        outcome.success = message.value(QLatin1String("ok")).toBool();
        outcome.error = message.value(QLatin1String("error")).toString();
        outcome.url = message.value(QLatin1String("url")).toString();
        outcome.title = message.value(QLatin1String("title")).toString();
        outcome.content = message.value(QLatin1String("content")).toString();
        outcome.format = message.value(QLatin1String("format")).toString();
        outcome.truncated = message.value(QLatin1String("truncated")).toBool();
        outcome.blocked = message.value(QLatin1String("blocked")).toArray();
        outcome.screenshotBase64 = message.value(QLatin1String("screenshot")).toString().toLatin1();
        outcome.workerPid = worker->process->processId();
        // The worker cannot see its cgroup from inside its namespaces; the daemon can.
        const std::optional<std::uint64_t> killsAtSend = worker->oomKillsAtSend.contains(id)
                ? std::optional(worker->oomKillsAtSend.take(id))
                : std::nullopt;
        if (!outcome.success && killsAtSend
            && outcome.error.startsWith(QLatin1String("the page's renderer process ended"))
            && memoryCgroupOomKills(confinedWorkerPid(worker)) > *killsAtSend)
            outcome.error = QStringLiteral("the page's renderer was killed by the browser's "
                                           "memory limit (WEB_BROWSER_MEMORY_MB=%1): the page "
                                           "needed more memory than the browser may have")
                                    .arg(m_options.confinement->memoryBytes >> 20);
        finishPage(worker, id, outcome);
        retireIfMemoryHigh(worker);
    }
    dispatch();
}

void BrowserPool::retireIfMemoryHigh(Worker *worker)
{
    if (worker->draining || !m_options.confinement || !m_options.account
        || m_options.confinement->retireAboveBytes <= 0)
        return;
    const pid_t pid = confinedWorkerPid(worker);
    const std::uint64_t resident = memoryCgroupResidentBytes(pid);
    if (resident < std::uint64_t(m_options.confinement->retireAboveBytes))
        return;
    // Its pages in flight finish; the next calls go to a fresh worker.
    spdlog::info("web_browse: browser worker {} holds {} MiB after {} page(s), at least "
                 "WEB_BROWSER_RETIRE_PERCENT of its limit: a fresh worker takes the next pages",
                 pid, resident >> 20, worker->pagesSent);
    retire(worker);
}

void BrowserPool::finishPage(Worker *worker, quint64 id, const BrowseOutcome &outcome)
{
    const Callback callback = worker->inFlight.take(id);
    worker->deadlines.remove(id);
    worker->oomKillsAtSend.remove(id);
    if (worker->inFlight.isEmpty())
        worker->idle.start();
    drainIfDone(worker);
    if (callback)
        callback(outcome);
}

void BrowserPool::drainIfDone(Worker *worker)
{
    // Its input ends: the worker quits once it has answered.
    if (worker->draining && worker->inFlight.isEmpty())
        worker->process->closeWriteChannel();
}

// What cmcp-jail reported about a confined worker's end, when it says more than the exit
// status: the cgroup's OOM killer, or a layer that refused to start it. Empty otherwise.
QString BrowserPool::jailVerdict(Worker *worker) const
{
    if (!worker->jail)
        return {};
    const JailReport report = worker->jail->takeReport();
    if (const std::optional<JailExit> &exit = report.exit()) {
        logSeccompDenials(*exit);
        if (exit->oomKilled)
            return QStringLiteral("was killed by its memory limit (WEB_BROWSER_MEMORY_MB=%1): "
                                  "a page needed more memory than the browser may have")
                    .arg(m_options.confinement->memoryBytes >> 20);
        // The worker's own end, as if it were the daemon's child (the jail's status is 128 + N).
        if (exit->signal)
            return QStringLiteral("crashed (signal %1)").arg(*exit->signal);
    }
    if (const std::optional<JailRefusal> &refusal = report.refusal())
        return QStringLiteral("could not be started: cmcp-jail refused it (%1: %2)")
                .arg(QString::fromStdString(refusal->layer),
                     QString::fromStdString(refusal->message));
    return {};
}

// The worker's pid as the host sees it: the jail's child; 0 for a worker not confined.
pid_t BrowserPool::confinedWorkerPid(Worker *worker)
{
    return worker->jail ? worker->jail->programPid() : 0;
}

void BrowserPool::onGone(Worker *worker, const QString &exitWhy)
{
    if (!m_workers.removeOne(worker))
        return;
    const QString verdict = jailVerdict(worker);
    // Its jail has said all it will: nothing more comes over its channels.
    delete worker->jail;
    worker->jail = nullptr;
    const QString why = verdict.isEmpty() ? exitWhy : verdict;
    worker->process->disconnect(this);
    worker->watchdog->stop();
    const QHash<quint64, Callback> lost = std::move(worker->inFlight);
    const bool expected = worker->draining && lost.isEmpty();
    if (expected)
        spdlog::debug("web_browse: a browser worker ended after its last page");
    else
        spdlog::warn("web_browse: the browser worker {}{}", why.toStdString(),
                     worker->errors.isEmpty() ? std::string()
                                              : "; its last words: "
                                     + worker->errors.right(300).trimmed().toStdString());
    QProcess *process = worker->process;
    process->deleteLater();
    const bool neverReady = !worker->ready;
    delete worker;
    // A worker that never became ready fails the calls waiting for it too, rather than start
    // another that fails the same way in a loop; the next call tries again.
    if (neverReady && !expected) {
        const QList<Pending> waiting = std::exchange(m_queue, {});
        for (const Pending &pending : waiting)
            pending.callback({false,
                              QStringLiteral("the browser worker %1").arg(why),
                              {},
                              {},
                              {},
                              {},
                              false,
                              {},
                              {}});
        m_wanted = false;
    }
    for (auto it = lost.cbegin(); it != lost.cend(); ++it) {
        if (it.value())
            it.value()({false,
                        QStringLiteral("the browser worker %1 while loading this page; a new "
                                       "worker is being started, so the call can be tried again")
                                .arg(why),
                        {},
                        {},
                        {},
                        {},
                        false,
                        {},
                        {}});
    }
    dispatch();
}

} // namespace cmcp
