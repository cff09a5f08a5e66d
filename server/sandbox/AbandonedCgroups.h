#pragma once

#include <QStringList>

namespace cmcp {

// Removes the cgroup directories of a jail that died before it removed them (SIGKILLed from
// outside, or killed by the kernel): an empty cgroup nobody removes stays for good, and with it
// the kernel's memory for it. Only directories on a cgroup file system are touched, and only by
// rmdir, which the kernel refuses while a cgroup holds tasks; the job's last tasks may still be
// dying, so a busy directory is tried again for a few seconds, from the event loop.
void removeAbandonedCgroups(const QStringList &directories);

} // namespace cmcp
