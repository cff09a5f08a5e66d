// cmcpd: the Container-MCP daemon. Loads the layered settings, then serves MCP over HTTP
// (Streamable HTTP at /mcp, legacy SSE at /sse) or over stdio.

#include "AdminChannel.h"
#include "AdminServer.h"
#include "AdminSettings.h"

#include "AuditLog.h"
#include "AuditVerifier.h"
#include "ConformanceFixtures.h"
#include "FileTools.h"
#include "HttpOptions.h"
#include "HttpServer.h"
#include "JobTools.h"
#include "LiveSettings.h"
#include "Logging.h"
#include "McpServer.h"
#include "SandboxProbe.h"
#include "SandboxRequirements.h"
#include "SandboxSupervisor.h"
#include "Settings.h"
#include "SettingsTable.h"
#include "StdioTransport.h"
#include "SystemTools.h"
#include "ToolResult.h"
#include "WebTools.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QPointer>
#include <QSocketNotifier>

#include <spdlog/spdlog.h>

#include <QTimer>

#include <csignal>
#include <malloc.h>
#include <sys/resource.h>
#include <cstdio>
#include <sys/signalfd.h>
#include <unistd.h>

using namespace cmcp;

namespace {

// SIGINT and SIGTERM end the event loop cleanly. They are blocked before any thread starts and
// read from a signalfd, so no code runs in signal context.
void quitOnTerminationSignals(QCoreApplication &app)
{
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    const int fd = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        return;
    auto *notifier = new QSocketNotifier(fd, QSocketNotifier::Read, &app);
    QObject::connect(notifier, &QSocketNotifier::activated, &app, [fd, &app] {
        signalfd_siginfo info;
        if (::read(fd, &info, sizeof info) == sizeof info)
            spdlog::info("signal {} received: shutting down", info.ssi_signo);
        app.quit();
    });
}

// Every session holds a socket: take all the descriptors the hard limit allows (systemd and
// shells often leave the soft limit at 1,024, far below MCP_MAX_SESSIONS).
void raiseDescriptorLimit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

// glibc keeps the heap of closed sessions mapped; after a burst of closes, give it back
// (measured: RSS 63 MB → 21 MB after five cycles of 1,000 sessions).
void trimHeapAfterSessionsClose(McpServer &mcp)
{
    auto *debounce = new QTimer(&mcp);
    debounce->setSingleShot(true);
    debounce->setInterval(2000);
    QObject::connect(debounce, &QTimer::timeout, [] { malloc_trim(0); });
    QObject::connect(&mcp, &McpServer::sessionClosed, debounce, [debounce] {
        if (!debounce->isActive())
            debounce->start();
    });
}

// SANDBOX_REQUIRE against the probe: a misspelt layer (2, a bad setting) or a required layer
// the machine lacks (1) stops start-up with one line, unless SANDBOX_INSECURE accepts the
// weaker isolation, which is then said loudly here and in every job result. 0: carry on.
int checkSandboxRequirements(const SandboxCapabilities &sandbox, const Settings &settings)
{
    const QStringList required = settings.list(u"SANDBOX_REQUIRE");
    if (const QString unknown = SandboxRequirements::unknownLayers(sandbox, required);
        !unknown.isEmpty()) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(unknown));
        return 2;
    }
    const SandboxOptions options = SandboxOptions::fromSettings(settings);
    const QStringList missing = SandboxRequirements::missingLayers(sandbox, required);
    if (!missing.isEmpty() && !options.insecure) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(SandboxRequirements::refusal(missing)));
        return 1;
    }
    if (!missing.isEmpty())
        spdlog::warn("sandbox: SANDBOX_INSECURE=1: running without required layers: {}; every "
                     "job result is marked insecure",
                     missing.join(QStringLiteral("; ")).toStdString());
    else if (options.insecure)
        spdlog::warn("sandbox: SANDBOX_INSECURE=1: every job result is marked insecure");
    // Not root (a container): jobs keep the daemon's uid, in user namespaces of their own.
    const std::string jobIds = sandbox.root
            ? fmt::format("uids {}..{}, gid {}", options.uidBase, options.uidBase + options.uidCount - 1, options.gid)
            : fmt::format("this daemon's uid {} (not root)", geteuid());
    spdlog::info("sandbox: jobs run as {}; required layers: {}", jobIds,
                 required.isEmpty() ? std::string("none")
                                    : required.join(QLatin1Char(',')).toStdString());
    if (!QFileInfo(options.jailProgram).isExecutable())
        spdlog::warn("sandbox: no cmcp-jail at {}: every job will fail to start",
                     options.jailProgram.toStdString());
    return 0;
}

QString defaultEnvFile()
{
    // Installed next to the binary, or read from the source tree the binary was built from.
    const QString installed = QDir::cleanPath(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/container-mcp/default.env"));
    if (QFileInfo::exists(installed))
        return installed;
    return QStringLiteral(CMCP_SOURCE_DIR "/config/default.env");
}

// cmcpd --verify-audit FILE...: 0 when the chain is intact, 1 at the first broken record.
int verifyAuditLog(const QStringList &files)
{
    if (files.isEmpty()) {
        std::fprintf(stderr, "cmcpd: --verify-audit needs the audit log file(s) (see cmcpd --help)\n");
        return 2;
    }
    const audit::Verdict verdict = audit::verifyFiles(files);
    std::fprintf(verdict.intact ? stdout : stderr, "%s\n", qPrintable(verdict.report()));
    return verdict.intact ? 0 : 1;
}

// The audit log records every tool call before its result goes out (McpServer emits the signals
// synchronously); with AUDIT_REQUIRED a call whose record cannot be written fails closed.
std::unique_ptr<AuditLog> startAuditLog(McpServer &mcp, const Settings &settings, QString *error)
{
    error->clear();
    const AuditOptions options = AuditOptions::fromSettings(settings);
    if (options.path.isEmpty()) {
        spdlog::warn("audit: AUDIT_LOG is empty: tool calls are not audited");
        return nullptr;
    }
    auto log = std::make_unique<AuditLog>(options);
    if (!log->open(error)) {
        if (options.required)
            return nullptr;
        spdlog::error("audit: {}; AUDIT_REQUIRED is off: serving without an audit log", error->toStdString());
        error->clear();
    }
    QObject::connect(&mcp, &McpServer::toolCallStarted, log.get(), &AuditLog::recordCallStarted, Qt::DirectConnection);
    QObject::connect(&mcp, &McpServer::toolCallFinished, log.get(), &AuditLog::recordCallFinished, Qt::DirectConnection);
    if (options.required)
        mcp.setFailClosedCheck([audit = QPointer<AuditLog>(log.get())] {
            return audit ? audit->failClosedReason() : QString();
        });
    return log;
}

void writeOut(const QString &text)
{
    std::fputs(text.toUtf8().constData(), stdout);
}

} // namespace

int main(int argc, char *argv[])
{
    // Large tool results (megabytes of JSON) are built in fresh buffers on every call. By default
    // glibc maps such buffers on their own or returns a freed heap top to the kernel at once, so
    // each call faulted its memory in anew: a third of the daemon's CPU for a 1 MB file_read.
    // Buffers up to 32 MiB now come from the heap and stay there for the next call; idle memory
    // still goes back, through the malloc_trim after sessions close.
    constexpr int keepBytes = 32 * 1024 * 1024;
    mallopt(M_MMAP_THRESHOLD, keepBytes);
    mallopt(M_TRIM_THRESHOLD, keepBytes);

    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cmcpd"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CMCP_VERSION));
    quitOnTerminationSignals(app);

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Container-MCP daemon: MCP tools for language models, in sandboxes."));
    const QCommandLineOption helpOption({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help and every setting."));
    const QCommandLineOption versionOption({QStringLiteral("v"), QStringLiteral("version")}, QStringLiteral("Show the version."));
    const QCommandLineOption stdioOption(QStringLiteral("stdio"), QStringLiteral("Serve MCP on stdin/stdout instead of HTTP."));
    const QCommandLineOption testModeOption(QStringLiteral("test-mode"), QStringLiteral("The original project's name for --stdio."));
    const QCommandLineOption configOption(QStringLiteral("config"), QStringLiteral("Custom env file (default: volume/config/custom.env when present)."), QStringLiteral("FILE"));
    const QCommandLineOption hostOption(QStringLiteral("host"), QStringLiteral("Same as --set MCP_HOST=HOST."), QStringLiteral("HOST"));
    const QCommandLineOption portOption(QStringLiteral("port"), QStringLiteral("Same as --set MCP_PORT=PORT (0 picks a free port)."), QStringLiteral("PORT"));
    const QCommandLineOption setOption(QStringLiteral("set"), QStringLiteral("Set a setting; wins over files and the environment. Repeatable."), QStringLiteral("NAME=VALUE"));
    const QCommandLineOption printConfigOption(QStringLiteral("print-config"), QStringLiteral("Print the effective settings and where each came from, then exit."));
    const QCommandLineOption markdownOption(QStringLiteral("settings-markdown"), QStringLiteral("Print the settings table as Markdown (for the README), then exit."));
    const QCommandLineOption jobPoliciesOption(QStringLiteral("print-job-policies"), QStringLiteral("Print the programs and jail policies of the system tools' jobs as JSON, then exit."));
    const QCommandLineOption verifyAuditOption(QStringLiteral("verify-audit"), QStringLiteral("Verify the hash chain of the audit log FILE... (one file or a rotated sequence), then exit: 0 intact, 1 broken (the first broken record is named)."));
    const QCommandLineOption fixturesOption(QStringLiteral("conformance-fixtures"), QStringLiteral("Register the MCP conformance suite's test tools, resources and prompts."));
    parser.addOptions({helpOption, versionOption, stdioOption, testModeOption, configOption, hostOption, portOption,
                       setOption, printConfigOption, markdownOption, jobPoliciesOption, fixturesOption,
                       verifyAuditOption});
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("With --verify-audit: the audit log files."), QStringLiteral("[FILE...]"));
    if (!parser.parse(app.arguments())) {
        std::fprintf(stderr, "cmcpd: %s (see cmcpd --help)\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(verifyAuditOption))
        return verifyAuditLog(parser.positionalArguments());
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "cmcpd: unexpected argument '%s' (see cmcpd --help)\n", qPrintable(parser.positionalArguments().first()));
        return 2;
    }
    if (parser.isSet(helpOption)) {
        writeOut(parser.helpText() + QStringLiteral("\nSettings (environment variables, env files or --set):\n") + settingsHelpText());
        return 0;
    }
    if (parser.isSet(versionOption)) {
        writeOut(QStringLiteral("cmcpd %1\n").arg(QStringLiteral(CMCP_VERSION)));
        return 0;
    }
    if (parser.isSet(markdownOption)) {
        writeOut(settingsMarkdownTable());
        return 0;
    }

    SettingsSources sources;
    sources.defaultEnvFile = defaultEnvFile();
    sources.customEnvFile = parser.isSet(configOption) ? parser.value(configOption) : QStringLiteral("volume/config/custom.env");
    sources.customEnvFileRequired = parser.isSet(configOption);
    sources.environment = QProcessEnvironment::systemEnvironment();
    if (parser.isSet(hostOption))
        sources.commandLine.append({QStringLiteral("MCP_HOST"), parser.value(hostOption)});
    if (parser.isSet(portOption))
        sources.commandLine.append({QStringLiteral("MCP_PORT"), parser.value(portOption)});
    for (const QString &assignment : parser.values(setOption)) {
        const qsizetype equals = assignment.indexOf(QLatin1Char('='));
        if (equals <= 0) {
            std::fprintf(stderr, "cmcpd: --set expects NAME=VALUE, got '%s'\n", qPrintable(assignment));
            return 2;
        }
        sources.commandLine.append({assignment.left(equals), assignment.mid(equals + 1)});
    }
    QString error;
    const std::optional<Settings> settings = Settings::load(sources, &error);
    if (!settings) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
        return 2;
    }
    if (parser.isSet(printConfigOption)) {
        writeOut(settings->printConfig());
        return 0;
    }
    setupLogging(settings->text(u"LOG_LEVEL"), settings->text(u"LOG_FORMAT") == QLatin1String("json"));

    // Once at start-up: what this machine offers every jail, one log line per layer.
    const SandboxCapabilities sandbox = SandboxProbe::run();
    for (const QString &line : sandbox.table().split(QLatin1Char('\n')))
        spdlog::info("sandbox: {}", line.toStdString());
    if (const int refused = checkSandboxRequirements(sandbox, *settings))
        return refused;
    if (parser.isSet(jobPoliciesOption)) {
        const std::optional<QJsonObject> policies = systemJobPolicies(*settings, sandbox, &error);
        if (!policies) {
            std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
            return 1;
        }
        writeOut(QString::fromUtf8(QJsonDocument(*policies).toJson(QJsonDocument::Indented)));
        return 0;
    }

    raiseDescriptorLimit();
    McpServer mcp(ServerIdentity{});
    trimHeapAfterSessionsClose(mcp);
    mcp.setMaxSessions(int(settings->integer(u"MCP_MAX_SESSIONS")));
    // What each tool family lets the admin channel change while it runs.
    LiveSettings live;
    if (!registerFileTools(mcp, *settings, &error, &live)) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
        return 1;
    }
    registerJobTools(mcp, *settings);
    if (!registerSystemTools(mcp, *settings, sandbox, &error, &live)) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
        return 1;
    }
    if (!registerWebTools(mcp, *settings, &error, &live)) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
        return 1;
    }
    const std::unique_ptr<AuditLog> auditLog = startAuditLog(mcp, *settings, &error);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "cmcpd: %s (AUDIT_REQUIRED=true)\n", qPrintable(error));
        return 1;
    }
    if (parser.isSet(fixturesOption)) {
        spdlog::warn("conformance fixtures registered: test tools are exposed (never use this in production)");
        registerConformanceFixtures(mcp);
    }

    AdminSettings adminSettings(*settings, sources.customEnvFile);
    registerLiveSettings(adminSettings, live);
    const std::unique_ptr<AdminServer> admin = openAdminChannel(mcp, adminSettings, sandbox);

    if (parser.isSet(stdioOption) || parser.isSet(testModeOption)) {
        StdioTransport stdio(mcp);
        QObject::connect(&stdio, &StdioTransport::finished, &app, &QCoreApplication::quit, Qt::QueuedConnection);
        stdio.start();
        return app.exec();
    }

    HttpServer http(mcp, HttpOptions::fromSettings(*settings));
    const quint16 port = http.start(&error);
    if (port == 0) {
        std::fprintf(stderr, "cmcpd: %s\n", qPrintable(error));
        return 1;
    }
    const QString host = settings->text(u"MCP_HOST");
    const QString base = QStringLiteral("http://%1:%2").arg(host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host).arg(port);
    spdlog::info("listening on {0}/mcp (Streamable HTTP) and {0}/sse (legacy SSE)", base.toStdString());
    return app.exec();
}
