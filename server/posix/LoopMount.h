#pragma once

#include <QString>

namespace cmcp {

// Mounts the file system in the image file `image` on the directory `target` through a free
// loop device (nosuid, nodev, noexec is the caller's choice in `flags`). The loop device is
// set to clear itself: it goes when the file system is unmounted, so nothing is left to
// detach. False with a reason naming the step that failed.
bool mountImage(const QString &image, const QString &target, const char *type, unsigned long flags,
                QString *error);

} // namespace cmcp
