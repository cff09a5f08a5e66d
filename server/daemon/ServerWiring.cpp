#include "daemon/ServerWiring.h"

#include "admin/AdminChannel.h"
#include "admin/AdminServer.h"
#include "admin/AdminSettings.h"
#include "audit/AuditLog.h"
#include "daemon/CommandLine.h"
#include "tools/file/FileTools.h"
#include "tools/jobs/JobTools.h"
#include "transport/HttpOptions.h"
#include "ports/PortsEndpoint.h"
#include "ports/PublishedPorts.h"
#include "tools/ports/PortTools.h"
#include "transfer/TransferEndpoint.h"
#include "transfer/TransferTickets.h"
#include "tools/transfer/TransferTools.h"
#include "transport/HttpServer.h"
#include "base/LiveSettings.h"
#include "mcp/McpServer.h"
#include "daemon/GracefulDrain.h"
#include "daemon/ProcessSetup.h"
#include "sandbox/SandboxRequirements.h"
#include "sandbox/SandboxSupervisor.h"
#include "sandbox/WorkspaceIdmap.h"
#include "common/Settings.h"
#include "daemon/StartupChecks.h"
#include "daemon/StartupFailure.h"
#include "base/ReplicaHandle.h"
#include "transport/StdioTransport.h"
#include "tools/system/SystemTools.h"
#include "mcp/ToolResult.h"
#include "tools/web/WebTools.h"
#include "tools/workspace/WorkspaceTools.h"
#include "workspace/Workspace.h"
#include "workspace/WorkspaceVolume.h"

#include <QDateTime>
#include <QFile>
#include <QJsonObject>

#include <QCoreApplication>
#include <QPointer>

#include <spdlog/spdlog.h>

#include <memory>
#include <variant>

#include <unistd.h>

namespace cmcp {

namespace {

// AUDIT_LOG is empty: tool calls are not audited, and the daemon serves.
struct AuditingOff
{
};
// AUDIT_REQUIRED and the log cannot be opened: start-up stops, for `reason`.
struct AuditLogRefused
{
    QString reason;
};
// The log records every call while it lives; it may not be open when AUDIT_REQUIRED is off.
using AuditLogStart = std::variant<AuditingOff, std::unique_ptr<AuditLog>, AuditLogRefused>;

// The audit log records every tool call before its result goes out (McpServer emits the signals
// synchronously and sends the result once the log has synced the record); with AUDIT_REQUIRED a
// call whose record cannot be written or synced fails closed.
AuditLogStart startAuditLog(McpServer &mcp, const Settings &settings)
{
    const AuditOptions options = AuditOptions::fromSettings(settings);
    if (options.path.isEmpty()) {
        spdlog::warn("audit: AUDIT_LOG is empty: tool calls are not audited");
        return AuditingOff{};
    }
    auto log = std::make_unique<AuditLog>(options);
    if (QString error; !log->open(&error)) {
        if (options.required)
            return AuditLogRefused{error};
        mcp.health().report({QStringLiteral("audit log %1").arg(options.path),
                             error
                                     + QStringLiteral("; AUDIT_REQUIRED is off: calls are served "
                                                      "and not audited"),
                             QStringLiteral("make AUDIT_LOG a file cmcpd can create and append "
                                            "to, or set AUDIT_REQUIRED=true to refuse to serve "
                                            "without it"),
                             {}});
    }
    QObject::connect(&mcp, &McpServer::toolCallStarted, log.get(), &AuditLog::recordCallStarted,
                     Qt::DirectConnection);
    QObject::connect(&mcp, &McpServer::toolCallFinished, log.get(), &AuditLog::recordCallFinished,
                     Qt::DirectConnection);
    mcp.setRecordDurabilityWait(
            [audit = QPointer<AuditLog>(log.get())](std::function<void()> then) {
                if (audit)
                    audit->whenDurable(std::move(then));
                else
                    then();
            });
    if (options.required)
        mcp.setFailClosedCheck([audit = QPointer<AuditLog>(log.get())] {
            return audit ? audit->failClosedReason() : QString();
        });
    return log;
}

// Every tool family the daemon serves; each adds to `live` what the admin channel may change
// while it runs. file_transfer issues its URLs from `transfers`, port_publish from `ports`.
// False with `error` when a
// family's settings cannot be used.
bool registerToolFamilies(McpServer &mcp, const Settings &settings,
                          const SandboxCapabilities &sandbox, LiveSettings &live,
                          TransferTickets &transfers, PublishedPorts &ports, QString *error)
{
    const ToolFamily family{mcp, settings, sandbox, &live, &transfers, &ports};
    for (const RegisterToolFamily registerFamily :
         {registerFileTools, registerJobTools, registerWorkspaceTools, registerTransferTools,
          registerPortTools, registerSystemTools, registerWebTools}) {
        if (!registerFamily(family, error))
            return false;
    }
    return true;
}

// Publications and revocations of ports are not tool calls when a port expires or its job ends:
// the registry's own records go to the log, a revocation's with the port's traffic.
void auditPublishedPorts(PublishedPorts &ports, AuditLog &log)
{
    const auto append = [audit = QPointer<AuditLog>(&log)](const QJsonObject &record) {
        if (audit)
            audit->append(record, false);
    };
    QObject::connect(&ports, &PublishedPorts::published, &log, append);
    QObject::connect(&ports, &PublishedPorts::revoked, &log, append);
}

// MCP_POLICY_FILE: the profiles of the principals it names, whose tokens the HTTP door accepts
// beside `tokens`' own. Read now, and again on SIGHUP or the console's reloadPolicy; each reload
// is audited, and one that fails keeps the policy in force.
bool startPrincipalPolicy(McpServer &mcp, BearerTokens &tokens, const QString &path,
                          AuditLog *audit, QString *error)
{
    PrincipalProfiles &profiles = mcp.profiles();
    QSet<QString> tools;
    for (const ToolDefinition &tool : mcp.tools().tools())
        tools.insert(tool.name);
    profiles.setKnownTools(std::move(tools));
    profiles.setNamesTaken(tokens.names());
    if (!profiles.load(path, error))
        return false;
    tokens.usePolicy(&profiles);
    const std::shared_ptr<const PrincipalPolicy> policy = profiles.policy();
    spdlog::info("policy: {}: {} profiles, {} principals", path.toStdString(),
                 policy->profiles.size(), policy->principals.size());
    if (audit) {
        const auto now = [] { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); };
        QObject::connect(&profiles, &PrincipalProfiles::reloaded, audit,
                         [audit, now](const QString &file, int profileCount, int principalCount) {
                             audit->append(QJsonObject{
                                     {QLatin1String("event"), QLatin1String("policy_reloaded")},
                                     {QLatin1String("time"), now()},
                                     {QLatin1String("file"), file},
                                     {QLatin1String("profiles"), profileCount},
                                     {QLatin1String("principals"), principalCount}});
                         });
        QObject::connect(&profiles, &PrincipalProfiles::reloadFailed, audit,
                         [audit, now](const QString &file, const QString &why) {
                             audit->append(QJsonObject{{QLatin1String("event"),
                                                        QLatin1String("policy_reload_failed")},
                                                       {QLatin1String("time"), now()},
                                                       {QLatin1String("file"), file},
                                                       {QLatin1String("error"), why}});
                         });
    }
    setReloadHandler([&profiles] {
        spdlog::info("SIGHUP received: reloading MCP_POLICY_FILE");
        QString ignored;
        profiles.reload(&ignored);
    });
    return true;
}

QString httpBase(const QString &host, quint16 port)
{
    const QString bracketed =
            host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host;
    return QStringLiteral("http://%1:%2").arg(bracketed).arg(port);
}

} // namespace

namespace {

SandboxLayer quotaLayer(const WorkspaceVolume &volume)
{
    SandboxLayer layer;
    layer.name = QStringLiteral("quota");
    layer.reason = volume.reason();
    layer.detail = volume.detail();
    switch (volume.state()) {
    case WorkspaceVolume::State::Off:
        layer.state = SandboxLayerState::Disabled;
        break;
    case WorkspaceVolume::State::Available:
        layer.state = SandboxLayerState::Available;
        break;
    case WorkspaceVolume::State::Unavailable:
        layer.state = SandboxLayerState::Unavailable;
        break;
    }
    return layer;
}

// Whether calls fork from templates (JOB_CALL_TEMPLATES, jail/template.h): what the
// supervisor needs for them, and the namespaces layer, whose minimal root a template builds.
SandboxLayer templatesLayer(const SandboxCapabilities &sandbox, const Settings &settings)
{
    SandboxLayer layer;
    layer.name = QStringLiteral("templates");
    layer.detail = QStringLiteral("calls fork from interpreters running in a jail built once per "
                                  "kind");
    const SandboxLayer *namespaces = sandbox.layer(u"namespaces");
    const QString unavailable = SandboxOptions::fromSettings(settings).templatesUnavailable();
    if (!settings.flag(u"JOB_CALL_TEMPLATES")) {
        layer.state = SandboxLayerState::Disabled;
        layer.reason = QStringLiteral("JOB_CALL_TEMPLATES=false: each call builds its own jail");
    } else if (!unavailable.isEmpty()) {
        layer.reason = unavailable;
    } else if (!namespaces || namespaces->state != SandboxLayerState::Available) {
        layer.reason = QStringLiteral("needs the namespaces layer");
    } else {
        layer.state = SandboxLayerState::Available;
    }
    return layer;
}

// Whether a job sees its workspace's files as its own user's (WorkspaceIdmap): what a root
// daemon can show through idmapped mounts of the file system that keeps the workspaces.
SandboxLayer idmapLayer(const SandboxCapabilities &sandbox, const Settings &settings)
{
    SandboxLayer layer;
    layer.name = QStringLiteral("idmap");
    const SandboxOptions options = SandboxOptions::fromSettings(settings);
    layer.detail = QStringLiteral("workspace files are the job's own user's (stored as uid %1)")
                           .arg(options.workspaceUid);
    const SandboxLayer *namespaces = sandbox.layer(u"namespaces");
    if (!namespaces || namespaces->state != SandboxLayerState::Available) {
        layer.reason = QStringLiteral("needs the namespaces layer");
        return layer;
    }
    layer.reason = WorkspaceIdmap::unavailableReason(
            Workspace::fromSettings(settings).storeDirectory(), options.workspaceUid, options.gid);
    if (layer.reason.isEmpty())
        layer.state = SandboxLayerState::Available;
    return layer;
}

// /health says whether workspaces have their quota; one asked for and unavailable is a
// degradation (the tools work, without the limit). The default that cannot be had here (not
// root, no btrfs or loop devices) is said in workspace_quota and the start-up table only.
QJsonObject layerStatus(const SandboxLayer &layer)
{
    QJsonObject status{{QStringLiteral("state"), sandboxLayerStateName(layer.state)}};
    if (!layer.detail.isEmpty())
        status.insert(QStringLiteral("detail"), layer.detail);
    if (!layer.reason.isEmpty())
        status.insert(QStringLiteral("reason"), layer.reason);
    return status;
}

void reportWorkspaceQuota(ServiceHealth &health, const WorkspaceVolume &volume)
{
    health.describe(QStringLiteral("workspace_quota"), layerStatus(quotaLayer(volume)));
    if (volume.state() == WorkspaceVolume::State::Unavailable && volume.askedFor())
        health.report({QStringLiteral("workspace quota"),
                       volume.reason(),
                       QStringLiteral("run cmcpd as root on a kernel with btrfs and loop "
                                      "devices, with btrfs-progs installed, or set "
                                      "SANDBOX_WORKSPACE_QUOTA_MB=0"),
                       {}});
}

} // namespace

SandboxCapabilities probeSandbox(const WorkspaceVolume &volume, const Settings &settings)
{
    SandboxCapabilities sandbox = SandboxProbe::run();
    sandbox.layers.append(quotaLayer(volume));
    sandbox.layers.append(templatesLayer(sandbox, settings));
    sandbox.layers.append(idmapLayer(sandbox, settings));
    for (const QString &line : sandbox.table().split(QLatin1Char('\n')))
        spdlog::info("sandbox: {}", line.toStdString());
    return sandbox;
}

int checkSandboxRequirements(const SandboxCapabilities &sandbox, const Settings &settings)
{
    const QStringList required = settings.list(u"SANDBOX_REQUIRE");
    if (const QString unknown = SandboxRequirements::unknownLayers(sandbox, required);
        !unknown.isEmpty())
        return startupFailure(2, unknown);
    const SandboxOptions options = SandboxOptions::fromSettings(settings);
    const QStringList missing = SandboxRequirements::missingLayers(sandbox, required);
    if (!missing.isEmpty() && !options.insecure)
        return startupFailure(1, SandboxRequirements::refusal(missing));
    if (!missing.isEmpty())
        spdlog::warn("sandbox: SANDBOX_INSECURE=1: running without required layers: {}; every "
                     "job result is marked insecure",
                     missing.join(QStringLiteral("; ")).toStdString());
    else if (options.insecure)
        spdlog::warn("sandbox: SANDBOX_INSECURE=1: every job result is marked insecure");
    // Not root (a container): jobs keep the daemon's uid, in user namespaces of their own.
    const std::string jobIds = sandbox.root
            ? fmt::format("uids {}..{}, gid {}", options.uidBase,
                          options.uidBase + options.uidCount - 1, options.gid)
            : fmt::format("this daemon's uid {} (not root)", geteuid());
    spdlog::info("sandbox: jobs run as {}; required layers: {}", jobIds,
                 required.isEmpty() ? std::string("none")
                                    : required.join(QLatin1Char(',')).toStdString());
    return 0;
}

namespace {

// The key replicas share to accept each other's requestStates: the file's bytes, at least
// RequestStateSigner::MinimumKeyBytes of them (e.g. `head -c 32 /dev/urandom`).
std::optional<QByteArray> readRequestStateKey(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("MCP_REQUEST_STATE_KEY_FILE %1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    const QByteArray key = file.read(4096);
    if (key.size() < RequestStateSigner::MinimumKeyBytes) {
        *error = QStringLiteral("MCP_REQUEST_STATE_KEY_FILE %1 holds %2 bytes: a key needs at "
                                "least %3 (e.g. head -c 32 /dev/urandom > %1)")
                         .arg(path)
                         .arg(key.size())
                         .arg(RequestStateSigner::MinimumKeyBytes);
        return std::nullopt;
    }
    return key;
}

} // namespace

int runServer(QCoreApplication &app, const CommandLine &commandLine, const Settings &settings,
              const SandboxCapabilities &sandbox, const WorkspaceVolume &volume,
              const ServerAdditions &addToServer)
{
    if (QString error; !setReplicaId(settings.text(u"MCP_REPLICA_ID"), &error))
        return startupFailure(2, error);
    if (const QString refusal = principalShareRefusal(settings); !refusal.isEmpty())
        return startupFailure(2, refusal);
    McpServer mcp(ServerIdentity{});
    reportWorkspaceQuota(mcp.health(), volume);
    trimHeapAfterSessionsClose(mcp);
    mcp.setMaxSessions(int(settings.integer(u"MCP_MAX_SESSIONS")));
    mcp.setMaxTasksPerPrincipal(int(settings.integer(u"TASKS_MAX_PER_PRINCIPAL")));
    if (const QString keyFile = settings.text(u"MCP_REQUEST_STATE_KEY_FILE"); !keyFile.isEmpty()) {
        QString error;
        const std::optional<QByteArray> key = readRequestStateKey(keyFile, &error);
        if (!key)
            return startupFailure(1, error);
        mcp.setRequestStateKey(*key);
    }
    if (const QString tasksDir = settings.text(u"TASKS_DIR"); !tasksDir.isEmpty()) {
        if (QString error; !mcp.keepTasksIn(tasksDir, &error))
            return startupFailure(1, error);
    }
    LiveSettings live;
    // The transfer URLs' tickets: issued by file_transfer, served by the HTTP door (on stdio
    // there is none, and the tool says so). A child of the server, gone with it, after the door.
    TransferTickets &transfers = *new TransferTickets(settings, &mcp);
    // The published ports, the same way: port_publish refuses on stdio, which has no door.
    PublishedPorts &ports = *new PublishedPorts(PortsLimits::fromSettings(settings), &mcp);
    mcp.health().describeLive(QStringLiteral("published_ports"),
                              [&ports] { return ports.summary(); });
    if (QString error;
        !registerToolFamilies(mcp, settings, sandbox, live, transfers, ports, &error))
        return startupFailure(1, error);
    if (const QString refusal = jobLayoutRefusal(settings, sandbox); !refusal.isEmpty())
        return startupFailure(1, refusal);
    reportUnusableResources(mcp.health(), settings, sandbox);
    // Whether jobs see their workspace's files as their own user's (the idmap layer).
    if (const SandboxLayer *home = sandbox.layer(u"idmap"))
        mcp.health().describe(QStringLiteral("workspace_home"), layerStatus(*home));
    const AuditLogStart audit = startAuditLog(mcp, settings);
    if (const auto *refused = std::get_if<AuditLogRefused>(&audit))
        return startupFailure(1, refused->reason + QStringLiteral(" (AUDIT_REQUIRED=true)"));
    if (const auto *log = std::get_if<std::unique_ptr<AuditLog>>(&audit))
        auditPublishedPorts(ports, **log);
    if (addToServer)
        addToServer(mcp);

    AdminSettings adminSettings(settings, commandLine.sources.customEnvFile);
    registerLiveSettings(adminSettings, live);
    const std::unique_ptr<AdminServer> admin = openAdminChannel(mcp, adminSettings, sandbox);

    const int drainMs = int(settings.integer(u"MCP_DRAIN_SECONDS") * 1000);
    const auto quit = [&app] { app.quit(); };
    if (commandLine.stdio) {
        if (!settings.text(u"MCP_POLICY_FILE").isEmpty())
            spdlog::warn("policy: MCP_POLICY_FILE applies to HTTP principals only: stdio's one "
                         "client is 'local', with the global settings");
        StdioTransport stdio(mcp);
        QObject::connect(&stdio, &StdioTransport::finished, &app, &QCoreApplication::quit,
                         Qt::QueuedConnection);
        GracefulDrain drain(
                mcp, drainMs, [] { return qint64(0); }, quit);
        setTerminationHandler([&drain](int signal) { drain.onSignal(signal); });
        stdio.start();
        const int status = app.exec();
        setTerminationHandler({});
        return status;
    }

    QString error;
    std::optional<HttpOptions> httpOptions = HttpOptions::fromSettings(settings, &error);
    if (!httpOptions)
        return startupFailure(2, error);
    if (const QString policyFile = settings.text(u"MCP_POLICY_FILE"); !policyFile.isEmpty()) {
        const auto *log = std::get_if<std::unique_ptr<AuditLog>>(&audit);
        if (!startPrincipalPolicy(mcp, httpOptions->tokens, policyFile, log ? log->get() : nullptr,
                                  &error))
            return startupFailure(2, error);
    }
    // Anyone who reaches a port off loopback could run commands in the sandbox: without a token
    // that is the operator's explicit choice (a proxy in front that authenticates), never a
    // default.
    if (!httpOptions->tokens.required() && !httpOptions->address.isNull()
        && !httpOptions->address.isLoopback()
        && !settings.flag(u"MCP_ALLOW_UNAUTHENTICATED_REMOTE"))
        return startupFailure(
                2,
                QStringLiteral("refusing to serve MCP_HOST=%1 (not a loopback address) without "
                               "authentication: set MCP_AUTH_TOKEN, MCP_PRINCIPALS_FILE or "
                               "MCP_POLICY_FILE, or MCP_ALLOW_UNAUTHENTICATED_REMOTE=true if a "
                               "proxy in front authenticates every client")
                        .arg(settings.text(u"MCP_HOST")));
    HttpServer http(mcp, std::move(*httpOptions));
    addTransferEndpoint(http, transfers);
    addPortsEndpoint(http, ports);
    const quint16 port = http.start(&error);
    if (port == 0)
        return startupFailure(1, error);
    transfers.setBase(httpBase(settings.text(u"MCP_HOST"), port));
    ports.setBase(httpBase(settings.text(u"MCP_HOST"), port));
    GracefulDrain drain(
            mcp, drainMs, [&http] { return http.unsentBytes(); }, quit);
    setTerminationHandler([&drain](int signal) { drain.onSignal(signal); });
    spdlog::info("listening on {0}/mcp (Streamable HTTP) and {0}/sse (legacy SSE)",
                 httpBase(settings.text(u"MCP_HOST"), port).toStdString());
    const int status = app.exec();
    setTerminationHandler({});
    setReloadHandler({});
    return status;
}

} // namespace cmcp
