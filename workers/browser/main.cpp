// cmcp-browser: web_browse's QtWebEngine worker. The daemon starts it and talks to it in JSON
// lines (BrowserWorker.h); it never links WebEngine itself.
//
// Every connection Chromium makes goes through an EgressProxy, given to Chromium with
// --proxy-server and no bypass, not even for loopback: the proxy asks the egress gate, resolves
// each name once and connects to the checked address, so DNS rebinding cannot slip past. With
// --egress-port the worker runs in a network namespace of its own (a root daemon's, under
// cmcp-jail) and the proxy is the daemon's, serving the namespace's one listener on
// 127.0.0.1:PORT with the web tools' gate; otherwise it is in this process (its own thread).
// Before that, a request interceptor asks the gate's policy about each request and blocks what
// it refuses without any connection.
//
// Usage: cmcp-browser [--allowed-domains LIST] [--allow-private] [--trusted-origin URL]...
//                     [--max-bytes N] [--timeout-ms N] [--uid UID --gid GID] [--egress-port N]

#include "workers/browser/BrowserWorker.h"
#include "egress/EgressGate.h"
#include "egress/EgressProxy.h"
#include "workers/browser/SandboxProbe.h"
#include "workers/browser/WorkerUser.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QThread>

#include <cstdio>
#include <string>
#include <unistd.h>

using namespace cmcp;

#ifdef CMCP_ADDRESS_SANITIZER
// In sanitizer builds: Chromium frees objects through base-class pointers of other sizes and
// keeps memory until exit by design, which AddressSanitizer would report against the worker.
// Its checks stay on for everything else, this program's code included.
extern "C" const char *__asan_default_options()
{
    return "new_delete_type_mismatch=0:alloc_dealloc_mismatch=0:detect_leaks=0:"
           "detect_container_overflow=0";
}
#endif

namespace {

// --egress-port: a root daemon started this worker under cmcp-jail, whose gate serves the
// worker's network namespace.
bool servedByDaemonGate(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        if (argument == "--egress-port" || argument.rfind("--egress-port=", 0) == 0)
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    // Before anything else is loaded: become the worker's own user when the daemon says so.
    WorkerUser user;
    bool dropRequested = false;
    std::string dropError;
    if (!parseWorkerUser(argc, argv, user, dropRequested, dropError)
        || (dropRequested && !becomeWorkerUser(user, dropError))) {
        std::fprintf(stderr, "cmcp-browser: %s\n", dropError.c_str());
        return 2;
    }
    // QtWebEngine in a process without a screen: the offscreen platform, contexts shared before
    // the application exists, and Chromium's own sandbox off when running as root or where it
    // cannot work (Chromium refuses to start otherwise; FACTS.md). The daemon is told, and says
    // so in its log.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    std::string sandboxOff;
    if (geteuid() == 0)
        sandboxOff = "the worker runs as root";
    else if (servedByDaemonGate(argc, argv))
        // Under cmcp-jail: its namespace allows no user namespace below it, and its seccomp
        // filter refuses unshare. Not even probed, so that filter's count of refused calls is
        // only ever something Chromium or a page tried.
        sandboxOff = "cmcp-jail allows no user namespace below its own";
    else
        chromiumSandboxUsable(sandboxOff);
    if (!sandboxOff.empty())
        qputenv("QTWEBENGINE_DISABLE_SANDBOX", "1");
    QCoreApplication::setAttribute(Qt::AA_ShareOpenGLContexts);
    // QApplication, not just QGuiApplication: screenshots grab a QWebEngineView (a widget).
    QApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cmcp-browser"));
    // A screenshot's view is the only window, and closing it must not end the worker: the
    // worker ends at the end of its input.
    QApplication::setQuitOnLastWindowClosed(false);

    QCommandLineParser parser;
    const QCommandLineOption domainsOption(QStringLiteral("allowed-domains"),
                                           QStringLiteral("WEB_ALLOWED_DOMAINS"),
                                           QStringLiteral("LIST"), QStringLiteral("*"));
    const QCommandLineOption privateOption(QStringLiteral("allow-private"),
                                           QStringLiteral("WEB_ALLOW_PRIVATE=true"));
    const QCommandLineOption trustedOption(QStringLiteral("trusted-origin"),
                                           QStringLiteral("An origin exempt from the domain list."),
                                           QStringLiteral("URL"));
    const QCommandLineOption trustedPrivateOption(QStringLiteral("trusted-may-be-private"),
                                                  QStringLiteral("WEB_SEARCH_ALLOW_PRIVATE=true"));
    const QCommandLineOption maxBytesOption(QStringLiteral("max-bytes"),
                                            QStringLiteral("WEB_MAX_BYTES"), QStringLiteral("N"),
                                            QStringLiteral("10485760"));
    const QCommandLineOption timeoutOption(QStringLiteral("timeout-ms"),
                                           QStringLiteral("Connection time limit"),
                                           QStringLiteral("N"), QStringLiteral("30000"));
    const QCommandLineOption idleOption(QStringLiteral("egress-idle-ms"),
                                        QStringLiteral("EGRESS_IDLE_SECONDS, in milliseconds"),
                                        QStringLiteral("N"), QStringLiteral("300000"));
    const QCommandLineOption maxConnectionsOption(
            QStringLiteral("egress-max-connections"),
            QStringLiteral("Connections open at once through the proxy"), QStringLiteral("N"),
            QStringLiteral("128"));
    const QCommandLineOption egressPortOption(
            QStringLiteral("egress-port"),
            QStringLiteral("The daemon's gate listens on 127.0.0.1:N (no proxy in this process)"),
            QStringLiteral("N"));
    // Read above, before QApplication; declared so that the parser accepts them.
    const QCommandLineOption uidOption(QStringLiteral("uid"), QStringLiteral("User to run as"),
                                       QStringLiteral("UID"));
    const QCommandLineOption gidOption(QStringLiteral("gid"), QStringLiteral("Group to run as"),
                                       QStringLiteral("GID"));
    parser.addOptions({domainsOption, privateOption, trustedOption, trustedPrivateOption,
                       maxBytesOption, timeoutOption, uidOption, gidOption, egressPortOption,
                       idleOption, maxConnectionsOption});
    if (!parser.parse(app.arguments())) {
        std::fprintf(stderr, "cmcp-browser: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    EgressPolicy::Options options;
    options.allowedDomains =
            parser.value(domainsOption).split(QLatin1Char(','), Qt::SkipEmptyParts);
    options.allowPrivate = parser.isSet(privateOption);
    options.trustedMayBePrivate = parser.isSet(trustedPrivateOption);
    for (const QString &origin : parser.values(trustedOption))
        options.trustedOrigins.append(QUrl(origin));
    QString error;
    const std::optional<EgressPolicy> policy = EgressPolicy::create(options, &error);
    if (!policy) {
        std::fprintf(stderr, "cmcp-browser: %s\n", qPrintable(error));
        return 2;
    }
    const qint64 maxBytes = parser.value(maxBytesOption).toLongLong();

    quint16 port = 0;
    QThread proxyThread;
    EgressProxy *proxy = nullptr;
    if (parser.isSet(egressPortOption)) {
        bool valid = false;
        const uint given = parser.value(egressPortOption).toUInt(&valid);
        if (!valid || given == 0 || given > 65535) {
            std::fprintf(stderr, "cmcp-browser: --egress-port: not a port: %s\n",
                         qPrintable(parser.value(egressPortOption)));
            return 2;
        }
        port = quint16(given);
    } else {
        // The proxy lives in a thread of its own: relaying bytes never waits for page work.
        auto gate =
                std::make_shared<const EgressGate>(*policy, std::make_shared<SystemHostResolver>());
        proxyThread.setObjectName(QStringLiteral("egress-proxy"));
        // On the host's loopback every local user could reach it: only this worker's uid (its
        // Chromium processes) is served.
        EgressProxy::Options proxyOptions;
        proxyOptions.maxResponseBytes = maxBytes;
        proxyOptions.connectTimeoutMs = parser.value(timeoutOption).toInt();
        proxyOptions.maxConnections = parser.value(maxConnectionsOption).toLongLong();
        proxyOptions.idleTimeoutMs = parser.value(idleOption).toInt();
        proxyOptions.onlyPeerUid = ::getuid();
        proxy = new EgressProxy(gate, proxyOptions);
        proxy->moveToThread(&proxyThread);
        QObject::connect(&proxyThread, &QThread::finished, proxy, &QObject::deleteLater);
        proxyThread.start();
        QMetaObject::invokeMethod(
                proxy, [proxy, &port] { port = proxy->listen(); }, Qt::BlockingQueuedConnection);
        if (port == 0) {
            std::fprintf(stderr, "cmcp-browser: the egress proxy cannot listen on loopback\n");
            proxyThread.quit();
            proxyThread.wait();
            return 1;
        }
    }

    // Read by QtWebEngine when the first profile is made, below. "<-loopback>" removes
    // Chromium's implicit bypass for localhost: loopback goes through the gate too.
    QByteArray flags = qgetenv("QTWEBENGINE_CHROMIUM_FLAGS");
    flags += " --proxy-server=http://127.0.0.1:" + QByteArray::number(port)
            + " --proxy-bypass-list=<-loopback>"
              " --disable-quic --dns-prefetch-disable --no-pings"
              " --force-webrtc-ip-handling-policy=disable_non_proxied_udp"
              " --webrtc-ip-handling-policy=disable_non_proxied_udp"
              " --disable-background-timer-throttling --disable-renderer-backgrounding"
              " --disable-backgrounding-occluded-windows";
    qputenv("QTWEBENGINE_CHROMIUM_FLAGS", flags.trimmed());

    BrowserWorker worker(*policy, maxBytes);
    if (proxy)
        QObject::connect(proxy, &EgressProxy::refused, &worker, &BrowserWorker::onProxyRefused,
                         Qt::QueuedConnection);
    worker.start(QString::fromStdString(sandboxOff));
    const int status = app.exec();
    proxyThread.quit();
    proxyThread.wait();
    return status;
}
