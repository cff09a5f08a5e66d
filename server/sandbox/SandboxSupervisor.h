#pragma once

#include "sandbox/ForkedJob.h"
#include "sandbox/JailJob.h"
#include "sandbox/UidPool.h"
#include "sandbox/JobEgress.h"
#include "sandbox/JobRequest.h"

#include <QSet>
#include <QString>

#include <sys/types.h>

#include <memory>

namespace cmcp {

class Settings;

// The supervisor's bounds, from the SANDBOX_* settings.
struct SandboxOptions
{
    QString jailProgram; // cmcp-jail
    uid_t uidBase = 100000;
    uid_t uidCount = 1000;
    gid_t gid = 100000;
    uid_t workspaceUid = 101000; // owns the workspaces' files on disk (WorkspaceIdmap)
    qint64 outputCapBytes = 256 * 1024; // per stream
    QString spillDirectory; // empty: overflowing output is not kept
    bool insecure = false;
    // Serves the jobs whose network goes through the egress gate; null: such a job fails to
    // start, saying so.
    std::shared_ptr<JobEgress> egress;

    // Everything but spillDirectory, which the tools' workspace layout decides; jailProgram is
    // defaultJailProgram().
    static SandboxOptions fromSettings(const Settings &settings);
    // cmcp-jail beside the running program (installed), or in its build tree's jail/.
    static QString defaultJailProgram();
    // Why calls cannot fork from templates here (jail/template.h), whatever the
    // kernel's layers: a template maps the whole uid pool, which only root may, with uid 1000
    // its own inside (so the pool must lie above it), and its cells load the zygote library
    // beside cmcp-jail. Empty when they can.
    QString templatesUnavailable() const;
};

// Hands out jobs, each with a host uid of its own from the pool for as long as it runs.
class SandboxSupervisor
{
public:
    explicit SandboxSupervisor(SandboxOptions options);

    const SandboxOptions &options() const { return m_options; }
    void setEgress(std::shared_ptr<JobEgress> egress) { m_options.egress = std::move(egress); }
    uid_t uidsAvailable() const { return m_pool->available(); }

    // From now on every job sees its workspace as its own user's (WorkspaceIdmap), when the
    // workspaces kept in `directory` can be shown so here; otherwise why not (and jobs see
    // workspaces as they are on disk).
    QString showWorkspacesAsOwn(const QString &directory);
    bool showsWorkspacesAsOwn() const { return m_idmap != nullptr; }
    // The workspace at `path` as a job of `uid` sees it as its own, detached (for a template's
    // cell to arm a call with); invalid when workspaces are shown as on disk, or with `error`.
    UniqueFd workspaceView(const QString &path, uid_t uid, QString *error);

    // A job ready to start (connect its signals, then start()), owned by `parent`, its uid
    // counted against request.principal. Refused, with nullptr and a message a model can act
    // on, when the pool has no uid for that principal (UidPool::acquire).
    JailJob *createJob(const JobRequest &request, QObject *parent, QString *error);
    // A uid of the pool for `holder` (a principal; empty: the server's own), for a job to come;
    // empty, with a message a model can act on, when the pool has none for it.
    std::optional<UidLease> leaseUid(const QString &holder, QString *error);
    // A call's job forked from a template's `cell` (ForkedJob), with the uid the cell was armed
    // with (TemplateCell::takeLease), which now counts against request.principal.
    ForkedJob *createForkedJob(const JobRequest &request, TemplateCell *cell, UidLease lease,
                               QObject *parent);
    // Kills every running job placed in the workspace at `path` (it is being deleted); returns
    // how many.
    int cancelJobsIn(const QString &workspacePath);

private:
    JobSpec specFor(const JobRequest &request, const UidLease &lease) const;
    void track(Job *job);

    SandboxOptions m_options;
    std::shared_ptr<UidPool> m_pool;
    std::shared_ptr<WorkspaceIdmap> m_idmap;
    // Every job made and not yet deleted; shared with each job's destruction, which may come
    // after this object's.
    std::shared_ptr<QSet<Job *>> m_jobs = std::make_shared<QSet<Job *>>();
};

} // namespace cmcp
