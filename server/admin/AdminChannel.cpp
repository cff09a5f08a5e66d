#include "admin/AdminChannel.h"

#include "admin/AdminServer.h"
#include "admin/AdminSettings.h"
#include "base/Logging.h"
#include "mcp/McpServer.h"
#include "sandbox/SandboxProbe.h"
#include "workspace/SessionWorkspaces.h"

#include <spdlog/spdlog.h>

namespace cmcp {

std::unique_ptr<AdminServer> openAdminChannel(McpServer &mcp, AdminSettings &settings,
                                              const SandboxCapabilities &sandbox)
{
    const QString path = settings.settings().text(u"ADMIN_SOCKET");
    if (path.compare(u"off", Qt::CaseInsensitive) == 0) {
        spdlog::info("admin channel off (ADMIN_SOCKET=off)");
        return nullptr;
    }
    QString error;
    std::optional<gid_t> group;
    if (const QString groupName = settings.settings().text(u"ADMIN_GROUP"); !groupName.isEmpty()) {
        group = AdminServer::groupId(groupName, &error);
        if (!group) {
            mcp.health().report({QStringLiteral("admin socket %1").arg(path),
                                 error,
                                 QStringLiteral("set ADMIN_GROUP to an existing group, or empty"),
                                 {}});
            return nullptr;
        }
    }
    // The report keys layers by name; the order is the one the jail applies them in.
    admin::SandboxReport report{sandbox.toJson(), {}};
    for (const SandboxLayer &layer : sandbox.layers)
        report.order.append(layer.name);
    // The same instance the tools use (made on first use): the console sees their workspaces.
    auto server = std::make_unique<AdminServer>(
            mcp, settings, SessionWorkspaces::of(mcp, settings.settings()), report);
    if (!server->listen(path, group, &error)) {
        mcp.health().report({QStringLiteral("admin socket %1").arg(path),
                             error,
                             QStringLiteral("set ADMIN_SOCKET to a path in a directory cmcpd "
                                            "can write, or ADMIN_SOCKET=off"),
                             {}});
        return nullptr;
    }
    server->forwardLogs();
    return server;
}

// The log level, and every setting the tools registered in `tools` (their policies, swapped
// atomically per call; see LiveSettings).
void registerLiveSettings(AdminSettings &settings, const LiveSettings &tools)
{
    settings.addLive({QStringLiteral("LOG_LEVEL"), QStringLiteral("DEBUG")},
                     [](const Settings &changed, QString *) -> LiveSettings::Install {
                         return [level = changed.text(u"LOG_LEVEL")] { setLogLevel(level); };
                     });
    settings.addLive(tools);
}

} // namespace cmcp
