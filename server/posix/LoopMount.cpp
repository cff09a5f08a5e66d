#include "posix/LoopMount.h"

#include "posix/ErrnoText.h"
#include "posix/UniqueFd.h"

#include <QFile>

#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <cerrno>
#include <fcntl.h>

namespace cmcp {

bool mountImage(const QString &image, const QString &target, const char *type, unsigned long flags,
                QString *error)
{
    const UniqueFd file(::open(QFile::encodeName(image).constData(), O_RDWR | O_CLOEXEC));
    if (!file.isValid()) {
        *error = QStringLiteral("cannot open %1: %2").arg(image, errnoText(errno));
        return false;
    }
    const UniqueFd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
    if (!control.isValid()) {
        *error = QStringLiteral("cannot open /dev/loop-control: %1").arg(errnoText(errno));
        return false;
    }
    // Another process may take the free device between asking and configuring it: ask again.
    for (int attempt = 0; attempt < 8; ++attempt) {
        const int number = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
        if (number < 0) {
            *error = QStringLiteral("no free loop device: %1").arg(errnoText(errno));
            return false;
        }
        const QByteArray device = "/dev/loop" + QByteArray::number(number);
        const UniqueFd loop(::open(device.constData(), O_RDWR | O_CLOEXEC));
        if (!loop.isValid()) {
            *error = QStringLiteral("cannot open %1: %2")
                             .arg(QString::fromLatin1(device), errnoText(errno));
            return false;
        }
        loop_config config{};
        config.fd = uint32_t(file.get());
        config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        if (::ioctl(loop.get(), LOOP_CONFIGURE, &config) != 0) {
            if (errno == EBUSY)
                continue;
            *error = QStringLiteral("cannot attach %1 to %2: %3")
                             .arg(image, QString::fromLatin1(device), errnoText(errno));
            return false;
        }
        if (::mount(device.constData(), QFile::encodeName(target).constData(), type, flags, nullptr)
            != 0) {
            *error = QStringLiteral("cannot mount %1 (%2) on %3: %4")
                             .arg(image, QString::fromLatin1(device), target, errnoText(errno));
            return false; // closing `loop` detaches the device (autoclear)
        }
        return true;
    }
    *error = QStringLiteral("every free loop device was taken by another process meanwhile");
    return false;
}

} // namespace cmcp
