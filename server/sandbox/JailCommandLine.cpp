#include "sandbox/JailCommandLine.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cmcp {

QStringList jailArguments(const JailDescriptors &descriptors, const QStringList &extra,
                          const QString &program, const QStringList &arguments)
{
    QStringList jail{QStringLiteral("--policy-fd"), QString::number(descriptors.policy),
                     QStringLiteral("--report-fd"), QString::number(descriptors.report)};
    if (descriptors.pass >= 0)
        jail << QStringLiteral("--pass-fd") << QString::number(descriptors.pass);
    if (descriptors.egress >= 0)
        jail << QStringLiteral("--egress-fd") << QString::number(descriptors.egress);
    if (descriptors.workspaceView >= 0)
        jail << QStringLiteral("--workspace-view-fd") << QString::number(descriptors.workspaceView);
    jail << extra << QStringLiteral("--") << program << arguments;
    return jail;
}

void keepOnlyJailDescriptors(const JailDescriptors &descriptors)
{
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    for (const int fd : {descriptors.policy, descriptors.report, descriptors.pass,
                         descriptors.egress, descriptors.workspaceView})
        if (fd >= 0)
            ::fcntl(fd, F_SETFD, 0);
}

} // namespace cmcp
