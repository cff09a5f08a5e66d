#include "daemon/StartupChecks.h"

#include "common/Settings.h"
#include "mcp/ServiceHealth.h"
#include "sandbox/SandboxProbe.h"
#include "sandbox/SandboxSupervisor.h"
#include "sandbox/WorkspaceReach.h"
#include "web/BrowserPool.h"
#include "web/HtmlWorkerPool.h"
#include "workspace/Workspace.h"

#include <QDir>
#include <QFileInfo>

namespace cmcp {

namespace {

// A helper program the daemon starts; "" when it can be started, else why not.
QString programProblem(const QString &path)
{
    const QFileInfo info(path);
    if (!info.exists())
        return QStringLiteral("no such file");
    if (!info.isFile() || !info.isExecutable())
        return QStringLiteral("not an executable file");
    return {};
}

void reportProgram(ServiceHealth &health, const QString &name, const QString &path,
                   const QStringList &tools)
{
    if (const QString problem = programProblem(path); !problem.isEmpty())
        health.report({name + QLatin1Char(' ') + path, problem,
                       QStringLiteral(
                               "build it (cmake --build build) or install it (cmake --install puts "
                               "it in <prefix>/libexec/container-mcp)"),
                       tools});
}

} // namespace

QString jobLayoutRefusal(const Settings &settings, const SandboxCapabilities &sandbox)
{
    // Jobs reach the workspace by its host path only on the host's root, and only pool uids
    // can be shut out of it: a daemon that is not root runs jobs as itself.
    if (!sandbox.root || !sandbox.isAvailable(u"identity") || sandbox.isAvailable(u"namespaces"))
        return {};
    const SandboxOptions options = SandboxOptions::fromSettings(settings);
    const QString workspace = Workspace::fromSettings(settings).path();
    const std::optional<ClosedDirectory> closed =
            firstClosedDirectory(workspace, options.uidBase, options.gid);
    return closed ? closedDirectoryRefusal(workspace, *closed, options.uidBase) : QString();
}

// Only with MCP_PRINCIPALS_FILE can there be principals to share with: without authentication
// every client is "local" and MCP_AUTH_TOKEN alone names one principal, so their sessions share
// JOB_MAX_PER_PRINCIPAL and JOB_MAX_PER_SESSION is what keeps them apart. (The uid pool keeps
// its own share, UidPool::reserve, whatever the caps.)
QString principalShareRefusal(const Settings &settings)
{
    if (settings.text(u"MCP_PRINCIPALS_FILE").isEmpty()
        && settings.text(u"MCP_POLICY_FILE").isEmpty())
        return {};
    const qint64 perPrincipal = settings.integer(u"JOB_MAX_PER_PRINCIPAL");
    const qint64 total = settings.integer(u"JOB_MAX_TOTAL");
    if (perPrincipal < total)
        return {};
    return QStringLiteral("JOB_MAX_PER_PRINCIPAL=%1 is not below JOB_MAX_TOTAL=%2: with "
                          "MCP_PRINCIPALS_FILE or MCP_POLICY_FILE naming several principals, "
                          "one of them could run every one of the %2 background jobs and leave "
                          "none to the others "
                          "(%1 >= %2); set JOB_MAX_PER_PRINCIPAL below JOB_MAX_TOTAL")
            .arg(perPrincipal)
            .arg(total);
}

void reportUnusableResources(ServiceHealth &health, const Settings &settings,
                             const SandboxCapabilities &sandbox)
{
    reportProgram(health, QStringLiteral("cmcp-jail"),
                  SandboxOptions::fromSettings(settings).jailProgram,
                  {QStringLiteral("system_run_command"), QStringLiteral("system_run_python")});
    reportProgram(health, QStringLiteral("cmcp-html"), HtmlWorkerPool::defaultProgram(),
                  {QStringLiteral("web_scrape")});
    reportProgram(health, QStringLiteral("cmcp-browser"), BrowserPool::defaultProgram(),
                  {QStringLiteral("web_browse")});
    // As root the browser worker runs as the uid after the job pool, with its home in a
    // directory of its own in the temporary directory: it must pass through every directory
    // above that one (a TMPDIR of 0700, as pam_tmpdir makes, shuts it out).
    if (sandbox.root) {
        const qint64 browser =
                settings.integer(u"SANDBOX_UID_BASE") + settings.integer(u"SANDBOX_UID_COUNT");
        const QString temporary = QDir::tempPath();
        if (const std::optional<ClosedDirectory> closed = firstClosedDirectory(
                    temporary + QStringLiteral("/home"), uid_t(browser), gid_t(browser)))
            health.report(
                    {QStringLiteral("browser home in %1").arg(temporary),
                     QStringLiteral("%1 is mode %2 (owner uid %3): the browser worker's uid %4 "
                                    "cannot pass through it to its home")
                             .arg(closed->path,
                                  QStringLiteral("%1").arg(uint(closed->mode), 4, 8,
                                                           QLatin1Char('0')))
                             .arg(closed->owner)
                             .arg(browser),
                     QStringLiteral("start cmcpd with TMPDIR set to a directory every user may "
                                    "search (e.g. TMPDIR=/tmp)"),
                     {QStringLiteral("web_browse")}});
    }
    // As root the cgroup tree is expected: without it jobs run, but with no memory limit for
    // the whole job tree, no count of its tasks and no sure kill of all of them.
    if (const SandboxLayer *cgroup = sandbox.layer(u"cgroup");
        sandbox.root && cgroup && !sandbox.isAvailable(u"cgroup"))
        health.report({QStringLiteral("cgroup tree /sys/fs/cgroup"),
                       cgroup->reason,
                       QStringLiteral("run cmcpd as root with a writable cgroup tree mounted at "
                                      "/sys/fs/cgroup"),
                       {}});
}

} // namespace cmcp
