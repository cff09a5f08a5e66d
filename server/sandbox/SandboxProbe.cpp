#include "sandbox/SandboxProbe.h"

#include "posix/ErrnoText.h"
#include "posix/Pipe.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>

#include <sys/apparmor.h>

#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

// Debian 12's headers stop at Landlock ABI 2; only the version query is needed here.
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#  define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#  define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_openat2
#  define SYS_openat2 437 // glibc 2.36 has no wrapper
#endif

namespace cmcp {

namespace {

SandboxLayer available(const char *name, const QString &detail, QJsonObject facts = {})
{
    return {QString::fromLatin1(name), SandboxLayerState::Available, {}, detail, std::move(facts)};
}

SandboxLayer unavailable(const char *name, const QString &reason, const QString &detail = {},
                         QJsonObject facts = {})
{
    return {QString::fromLatin1(name), SandboxLayerState::Unavailable, reason, detail,
            std::move(facts)};
}

qint64 hardLimit(int resource)
{
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_max == RLIM_INFINITY)
        return -1;
    return qint64(limit.rlim_max);
}

QString limitText(qint64 value)
{
    return value < 0 ? QStringLiteral("unlimited") : QString::number(value);
}

// The namespaces are tried in a child so the daemon's own namespaces never change, and because
// unshare(CLONE_NEWUSER) refuses multithreaded callers. Between fork and _exit the child may
// only make async-signal-safe calls: another thread may hold the malloc lock at fork time.
// Returns {errno of unshare(CLONE_NEWUSER), errno of unshare(the others)}, 0 for success.
std::pair<int, int> probeNamespaces(QString *failure)
{
    std::optional<PipePair> pipe = openPipe();
    if (!pipe) {
        *failure = QStringLiteral("pipe2: ") + errnoName(errno);
        return {-1, -1};
    }
    const pid_t pid = fork();
    if (pid < 0) {
        *failure = QStringLiteral("fork: ") + errnoName(errno);
        return {-1, -1};
    }
    if (pid == 0) {
        int results[2];
        results[0] = unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
        results[1] =
                unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
                        == 0
                ? 0
                : errno;
        const ssize_t written = ::write(pipe->write.get(), results, sizeof results);
        _exit(written == ssize_t(sizeof results) ? 0 : 1);
    }
    pipe->write.reset();
    int results[2] = {-1, -1};
    ssize_t got;
    do
        got = ::read(pipe->read.get(), results, sizeof results);
    while (got < 0 && errno == EINTR);
    pipe->read.reset();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (got != ssize_t(sizeof results)) {
        *failure = QStringLiteral("probe child ended without a result");
        return {-1, -1};
    }
    return {results[0], results[1]};
}

void probeNamespaceLayers(SandboxCapabilities &caps)
{
    QString failure;
    const auto [userErrno, otherErrno] = probeNamespaces(&failure);
    if (!failure.isEmpty()) {
        caps.layers.append(unavailable("userns", failure));
        caps.layers.append(unavailable("namespaces", failure));
        return;
    }
    if (userErrno == 0)
        caps.layers.append(available("userns", QStringLiteral("unshare(CLONE_NEWUSER) works")));
    else
        caps.layers.append(unavailable(
                "userns", QStringLiteral("unshare(CLONE_NEWUSER): ") + errnoName(userErrno)));
    const QString kinds = QStringLiteral("mount, pid, net, ipc, uts");
    if (otherErrno == 0)
        caps.layers.append(available("namespaces", kinds));
    else
        caps.layers.append(unavailable(
                "namespaces", QStringLiteral("unshare(%1): %2").arg(kinds, errnoName(otherErrno))));
}

void probeLandlock(SandboxCapabilities &caps)
{
    const long abi =
            syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        const int error = errno;
        // ENOSYS: not built in; EOPNOTSUPP: built in but not in the boot's lsm= list.
        const QString why = error == ENOSYS ? QStringLiteral("kernel has no Landlock")
                : error == EOPNOTSUPP       ? QStringLiteral("Landlock disabled at boot")
                                            : QStringLiteral("Landlock refused");
        caps.layers.append(unavailable(
                "landlock",
                QStringLiteral("%1 (landlock_create_ruleset: %2)").arg(why, errnoName(error))));
        return;
    }
    caps.landlockAbi = int(abi);
    // A job's Landlock denials are not in its sandbox_refusals: before ABI 7 (Linux 6.15) the
    // kernel tells only the calling process (EACCES); from ABI 7 it also writes them to the
    // kernel's audit log, which the daemon does not read.
    const QString denials = abi >= 7
            ? QStringLiteral("denials not counted per job (the kernel logs them to the audit "
                             "log only)")
            : QStringLiteral("denials not counted per job (the kernel reports them only to the "
                             "job)");
    caps.layers.append(available(
            "landlock", QStringLiteral("ABI %1; %2").arg(abi).arg(denials),
            {{QStringLiteral("abi"), int(abi)}, {QStringLiteral("denialsCounted"), false}}));
}

bool seccompActionAvailable(quint32 action)
{
    return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

void probeSeccomp(SandboxCapabilities &caps)
{
    const int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
    if (mode < 0) {
        caps.layers.append(unavailable("seccomp",
                                       QStringLiteral("kernel has no seccomp (PR_GET_SECCOMP: %1)")
                                               .arg(errnoName(errno))));
        return;
    }
    if (!seccompActionAvailable(SECCOMP_RET_ERRNO)) {
        caps.layers.append(
                unavailable("seccomp",
                            QStringLiteral("no filter mode (SECCOMP_GET_ACTION_AVAIL ERRNO: %1)")
                                    .arg(errnoName(errno))));
        return;
    }
    caps.seccompUserNotif = seccompActionAvailable(SECCOMP_RET_USER_NOTIF);
    // Mode 2 means the daemon itself already runs under a filter (a container): jails stack theirs.
    // With user notifications each job's denied calls are counted (sandbox_refusals).
    QString detail = QStringLiteral("filter, errno")
            + (caps.seccompUserNotif ? QStringLiteral(", user-notif: denials counted per job")
                                     : QStringLiteral(" (no user-notif: denials not counted)"));
    if (mode != 0)
        detail += QStringLiteral("; daemon already in mode %1").arg(mode);
    caps.layers.append(available("seccomp", detail,
                                 {{QStringLiteral("daemonMode"), mode},
                                  {QStringLiteral("userNotif"), caps.seccompUserNotif},
                                  {QStringLiteral("denialsCounted"), caps.seccompUserNotif}}));
}

bool isFilesystem(const char *path, long magic)
{
    struct statfs info
    {
    };
    return statfs(path, &info) == 0 && long(info.f_type) == magic;
}

// v1 hierarchies from /proc/self/mountinfo: controller name -> mount point.
QList<QPair<QString, QString>> cgroupV1Mounts()
{
    QList<QPair<QString, QString>> mounts;
    QFile file(QStringLiteral("/proc/self/mountinfo"));
    if (!file.open(QIODevice::ReadOnly))
        return mounts;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const qsizetype dash = line.indexOf(" - ");
        if (dash < 0)
            continue;
        const QList<QByteArray> before = line.left(dash).split(' ');
        const QList<QByteArray> after = line.mid(dash + 3).split(' ');
        if (before.size() < 5 || after.size() < 3 || after[0] != "cgroup")
            continue;
        for (const QByteArray &option : after[2].split(',')) {
            if (option != "rw" && option != "ro" && !option.contains('='))
                mounts.append({QString::fromLatin1(option), QString::fromLatin1(before[4])});
        }
    }
    return mounts;
}

void probeCgroups(SandboxCapabilities &caps)
{
    const char *const root = "/sys/fs/cgroup";
    QString v2Root;
    if (isFilesystem(root, CGROUP2_SUPER_MAGIC)) {
        caps.cgroupMode = CgroupMode::Unified;
        v2Root = QString::fromLatin1(root);
    } else if (isFilesystem(root, TMPFS_MAGIC)) {
        const bool unified = isFilesystem("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC);
        caps.cgroupMode = unified ? CgroupMode::Hybrid : CgroupMode::Legacy;
        if (unified)
            v2Root = QStringLiteral("/sys/fs/cgroup/unified");
    }
    if (caps.cgroupMode == CgroupMode::None) {
        caps.layers.append(
                unavailable("cgroup", QStringLiteral("no cgroup filesystem at /sys/fs/cgroup")));
        return;
    }

    QString memoryDir;
    QStringList v1Controllers;
    for (const auto &[controller, mountPoint] : cgroupV1Mounts()) {
        v1Controllers.append(controller);
        if (controller == QLatin1String("memory"))
            memoryDir = mountPoint;
    }
    QStringList v2Controllers;
    if (!v2Root.isEmpty()) {
        QFile file(v2Root + QStringLiteral("/cgroup.controllers"));
        if (file.open(QIODevice::ReadOnly))
            v2Controllers = QString::fromLatin1(file.readAll())
                                    .simplified()
                                    .split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (memoryDir.isEmpty() && v2Controllers.contains(QLatin1String("memory")))
            memoryDir = v2Root;
    }

    caps.cgroupControllers = v1Controllers + v2Controllers;

    // Writable means the supervisor can make a per-job cgroup where memory limits apply.
    QString reason;
    if (memoryDir.isEmpty()) {
        reason = QStringLiteral("no memory controller in any hierarchy");
    } else {
        const QByteArray child =
                QFile::encodeName(memoryDir + QStringLiteral("/cmcp-probe-%1").arg(getpid()));
        if (mkdir(child.constData(), 0700) != 0)
            reason = QStringLiteral("cannot create a cgroup in %1 (mkdir: %2)")
                             .arg(memoryDir, errnoName(errno));
        else if (rmdir(child.constData()) != 0)
            reason = QStringLiteral("cannot remove a probe cgroup in %1 (rmdir: %2)")
                             .arg(memoryDir, errnoName(errno));
        else
            caps.cgroupWritable = true;
    }

    const QString mode = cgroupModeName(caps.cgroupMode);
    const QString detail =
            QStringLiteral("%1; v1: %2; v2: %3")
                    .arg(mode,
                         v1Controllers.isEmpty() ? QStringLiteral("none")
                                                 : v1Controllers.join(QLatin1Char(',')),
                         v2Controllers.isEmpty() ? QStringLiteral("none")
                                                 : v2Controllers.join(QLatin1Char(',')));
    const QJsonObject facts{
            {QStringLiteral("mode"), mode},
            {QStringLiteral("writable"), caps.cgroupWritable},
            {QStringLiteral("memoryHierarchy"), memoryDir},
            {QStringLiteral("controllers"), QJsonArray::fromStringList(caps.cgroupControllers)}};
    if (caps.cgroupWritable)
        caps.layers.append(
                available("cgroup", detail + QStringLiteral("; writable: ") + memoryDir, facts));
    else
        caps.layers.append(unavailable("cgroup", reason, detail, facts));
}

// The jail resolves workspace paths with RESOLVE_BENEATH: it must both work inside a directory
// and refuse to climb out of it.
void probeOpenat2(SandboxCapabilities &caps)
{
    QTemporaryDir dir;
    const int dirFd = dir.isValid()
            ? ::open(QFile::encodeName(dir.path()).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC)
            : -1;
    if (dirFd < 0) {
        caps.layers.append(
                unavailable("openat2", QStringLiteral("no temporary directory to probe in")));
        return;
    }
    open_how how{};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const long inside = syscall(SYS_openat2, dirFd, ".", &how, sizeof how);
    const int insideErrno = errno;
    if (inside >= 0)
        ::close(int(inside));
    const long outside = syscall(SYS_openat2, dirFd, "..", &how, sizeof how);
    const int outsideErrno = errno;
    if (outside >= 0)
        ::close(int(outside));
    ::close(dirFd);
    if (inside < 0)
        caps.layers.append(unavailable(
                "openat2", QStringLiteral("openat2(RESOLVE_BENEATH): ") + errnoName(insideErrno)));
    else if (outside >= 0 || outsideErrno != EXDEV)
        caps.layers.append(unavailable(
                "openat2",
                QStringLiteral("RESOLVE_BENEATH let \"..\" through (%1)")
                        .arg(outside >= 0 ? QStringLiteral("opened") : errnoName(outsideErrno))));
    else
        caps.layers.append(
                available("openat2", QStringLiteral("RESOLVE_BENEATH refuses \"..\" (EXDEV)")));
}

void probeAppArmor(SandboxCapabilities &caps)
{
    errno = 0;
    if (aa_is_enabled() == 1) {
        caps.layers.append(available("apparmor", QStringLiteral("enabled")));
        return;
    }
    // libapparmor's errno codes (aa_is_enabled(2)).
    const int error = errno;
    const QString why = error == ENOSYS ? QStringLiteral("kernel has no AppArmor")
            : error == ECANCELED        ? QStringLiteral("AppArmor disabled at boot")
            : error == ENOENT ? QStringLiteral("AppArmor enabled but securityfs is not mounted")
            : error == EPERM || error == EACCES ? QStringLiteral("AppArmor state not readable")
                                                : QStringLiteral("AppArmor unavailable");
    caps.layers.append(unavailable(
            "apparmor", QStringLiteral("%1 (aa_is_enabled: %2)").arg(why, errnoName(error)), {},
            {{QStringLiteral("errno"), errnoName(error)}}));
}

} // namespace

QString cgroupModeName(CgroupMode mode)
{
    switch (mode) {
    case CgroupMode::Unified:
        return QStringLiteral("v2 unified");
    case CgroupMode::Hybrid:
        return QStringLiteral("hybrid");
    case CgroupMode::Legacy:
        return QStringLiteral("v1");
    case CgroupMode::None:
        break;
    }
    return QStringLiteral("none");
}

QString sandboxLayerStateName(SandboxLayerState state)
{
    switch (state) {
    case SandboxLayerState::Available:
        return QStringLiteral("available");
    case SandboxLayerState::Disabled:
        return QStringLiteral("disabled");
    case SandboxLayerState::Unavailable:
        break;
    }
    return QStringLiteral("unavailable");
}

const SandboxLayer *SandboxCapabilities::layer(QStringView name) const
{
    for (const SandboxLayer &entry : layers) {
        if (entry.name == name)
            return &entry;
    }
    return nullptr;
}

bool SandboxCapabilities::isAvailable(QStringView name) const
{
    const SandboxLayer *entry = layer(name);
    return entry && entry->state == SandboxLayerState::Available;
}

QString SandboxCapabilities::table() const
{
    qsizetype nameWidth = 5;
    for (const SandboxLayer &entry : layers)
        nameWidth = qMax(nameWidth, entry.name.size());
    const qsizetype stateWidth = 11; // "unavailable"
    QStringList lines{QStringLiteral("layer").leftJustified(nameWidth) + QStringLiteral("  ")
                      + QStringLiteral("state").leftJustified(stateWidth)
                      + QStringLiteral("  detail")};
    for (const SandboxLayer &entry : layers) {
        QString text = entry.reason;
        if (!entry.detail.isEmpty())
            text += (text.isEmpty() ? QString() : QStringLiteral("; ")) + entry.detail;
        lines.append(entry.name.leftJustified(nameWidth) + QStringLiteral("  ")
                     + sandboxLayerStateName(entry.state).leftJustified(stateWidth)
                     + QStringLiteral("  ") + text);
    }
    return lines.join(QLatin1Char('\n'));
}

QJsonObject SandboxCapabilities::toJson() const
{
    QJsonObject byName;
    for (const SandboxLayer &entry : layers) {
        QJsonObject object = entry.facts;
        object.insert(QStringLiteral("state"), sandboxLayerStateName(entry.state));
        object.insert(QStringLiteral("detail"), entry.detail);
        if (!entry.reason.isEmpty())
            object.insert(QStringLiteral("reason"), entry.reason);
        byName.insert(entry.name, object);
    }
    return {{QStringLiteral("layers"), byName},
            {QStringLiteral("root"), root},
            {QStringLiteral("landlockAbi"), landlockAbi},
            {QStringLiteral("seccompUserNotif"), seccompUserNotif},
            {QStringLiteral("cgroupMode"), cgroupModeName(cgroupMode)},
            {QStringLiteral("cgroupWritable"), cgroupWritable},
            {QStringLiteral("nofileHard"), nofileHard},
            {QStringLiteral("nprocHard"), nprocHard}};
}

SandboxCapabilities SandboxProbe::run()
{
    SandboxCapabilities caps;
    // Identity first, like the jail: without root (CAP_SETUID) there is no pool of host uids to
    // drop to.
    caps.root = geteuid() == 0;
    if (caps.root)
        caps.layers.append(available(
                "identity", QStringLiteral("running as root: jails drop to the uid pool")));
    caps.nofileHard = hardLimit(RLIMIT_NOFILE);
    caps.nprocHard = hardLimit(RLIMIT_NPROC);
    caps.layers.append(
            available("rlimits",
                      QStringLiteral("hard nofile %1, nproc %2")
                              .arg(limitText(caps.nofileHard), limitText(caps.nprocHard)),
                      {{QStringLiteral("nofileHard"), caps.nofileHard},
                       {QStringLiteral("nprocHard"), caps.nprocHard}}));
    probeCgroups(caps);
    probeNamespaceLayers(caps);
    if (!caps.root) {
        // Not root (a container's daemon user): jobs cannot switch to the uid pool, but the jail
        // can still shed every privilege inside a user namespace of the job's own, where the
        // daemon's uid is mapped to the job's. The mount and pid namespaces, Landlock and seccomp
        // then keep the job away from the daemon's files and process.
        const SandboxLayer identity = caps.isAvailable(u"userns") && caps.isAvailable(u"namespaces")
                ? available("identity",
                            QStringLiteral("not root (euid %1): jobs keep this uid, mapped "
                                           "alone into a user namespace of their own")
                                    .arg(geteuid()))
                : unavailable("identity",
                              QStringLiteral("not root (euid %1) and no user namespaces: jails "
                                             "can neither switch to the uid pool nor map this uid")
                                      .arg(geteuid()));
        caps.layers.prepend(identity);
    }
    probeOpenat2(caps);
    probeLandlock(caps);
    probeSeccomp(caps);
    probeAppArmor(caps);
    return caps;
}

} // namespace cmcp
