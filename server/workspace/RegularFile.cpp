#include "workspace/RegularFile.h"

#include "posix/DirectorySync.h"
#include "workspace/PathErrors.h"
#include "posix/WriteAll.h"

#include <QRandomGenerator>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

namespace {

QByteArray temporaryName()
{
    return QByteArrayLiteral(".cmcp-write-")
            + QByteArray::number(QRandomGenerator::system()->generate64(), 16) + ".tmp";
}

// An unnamed file is given its name through /proc/self/fd (linkat with AT_EMPTY_PATH would need
// CAP_DAC_READ_SEARCH); without /proc the writes use named temporary files.
bool procLinksWork()
{
    static const bool available = ::access("/proc/self/fd", X_OK) == 0;
    return available;
}

} // namespace

RegularFile RegularFile::openForRead(const ContainedRoot &root, const WorkspacePath &path)
{
    RegularFile file;
    const ContainedRoot::Opened located = root.openBeneath(path, O_PATH, 0, true);
    if (!located.ok()) {
        file.m_error = describePathError(located.error);
        return file;
    }
    struct stat first
    {
    };
    if (::fstat(located.fd.get(), &first) != 0) {
        file.m_error = describePathError(errno);
        return file;
    }
    if (!S_ISREG(first.st_mode)) {
        file.m_error =
                QStringLiteral("not a regular file: it is %1").arg(describeFileType(first.st_mode));
        return file;
    }
    // O_NONBLOCK and O_NOCTTY: should the name now be a FIFO or a terminal, the open still
    // returns at once, and the inode check below refuses it.
    ContainedRoot::Opened opened =
            root.openBeneath(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, true);
    if (!opened.ok()) {
        file.m_error = describePathError(opened.error);
        return file;
    }
    if (::fstat(opened.fd.get(), &file.m_status) != 0) {
        file.m_error = describePathError(errno);
        return file;
    }
    if (file.m_status.st_dev != first.st_dev || file.m_status.st_ino != first.st_ino
        || !S_ISREG(file.m_status.st_mode)) {
        file.m_error = QStringLiteral("the file was replaced while being opened; try again");
        return file;
    }
    file.m_fd = std::move(opened.fd);
    return file;
}

RegularFile RegularFile::openEntry(int dirFd, const QByteArray &name, const struct stat &seen)
{
    RegularFile file;
    if (!S_ISREG(seen.st_mode)) {
        file.m_error =
                QStringLiteral("not a regular file: it is %1").arg(describeFileType(seen.st_mode));
        return file;
    }
    UniqueFd fd(::openat(dirFd, name.constData(),
                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd.isValid()) {
        file.m_error = describePathError(errno);
        return file;
    }
    if (::fstat(fd.get(), &file.m_status) != 0) {
        file.m_error = describePathError(errno);
        return file;
    }
    if (file.m_status.st_dev != seen.st_dev || file.m_status.st_ino != seen.st_ino
        || !S_ISREG(file.m_status.st_mode)) {
        file.m_error = QStringLiteral("the file was replaced while being opened; try again");
        return file;
    }
    file.m_fd = std::move(fd);
    return file;
}

bool RegularFile::readAll(qint64 maxBytes, QByteArray *data, QString *error) const
{
    data->clear();
    // The size may have changed since fstat: read until EOF, but never past the bound.
    data->reserve(qMin<qint64>(m_status.st_size, maxBytes) + 1);
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(m_fd.get(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *error = describePathError(errno);
            return false;
        }
        if (got == 0)
            return true;
        if (data->size() + got > maxBytes) {
            *error = QStringLiteral("file is too large: more than %1 bytes").arg(maxBytes);
            return false;
        }
        data->append(buffer, got);
    }
}

double modifiedSeconds(const struct stat &status)
{
    return double(status.st_mtim.tv_sec) + double(status.st_mtim.tv_nsec) / 1e9;
}

int replaceFileAt(int dirFd, const QByteArray &name, const QByteArray &data,
                  const struct stat *existing, const std::function<bool(int fd)> &adoptNew)
{
    // The new content goes to an unnamed file (O_TMPFILE) in the target's directory and gets a
    // name only once complete and on disk, so a daemon killed meanwhile leaves nothing in the
    // workspace. File systems without O_TMPFILE get a named temporary file, removed on failure
    // (but not after a kill).
    UniqueFd fd(procLinksWork() ? ::openat(dirFd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0664)
                                : -1);
    const bool unnamed = fd.isValid();
    const QByteArray temporary = temporaryName();
    if (!unnamed)
        fd = UniqueFd(::openat(dirFd, temporary.constData(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0664));
    if (!fd.isValid())
        return errno;
    bool named = !unnamed;
    auto discard = [&](int error) {
        if (named)
            ::unlinkat(dirFd, temporary.constData(), 0);
        return error;
    };
    if (writeAll(fd.get(), data.constData(), size_t(data.size())) != size_t(data.size()))
        return discard(errno);
    if (existing) {
        if (::geteuid() == 0 && ::fchown(fd.get(), existing->st_uid, existing->st_gid) != 0)
            return discard(errno);
        // The permissions are kept, never setuid, setgid or sticky: the daemon runs as root,
        // and a job that marked its file setuid must not get its chosen content written into
        // a setuid file on the host.
        if (::fchmod(fd.get(), existing->st_mode & 0777) != 0)
            return discard(errno);
    } else if (!adoptNew(fd.get())) {
        return discard(errno);
    }
    if (::fsync(fd.get()) != 0)
        return discard(errno);
    if (unnamed) {
        const QByteArray self = "/proc/self/fd/" + QByteArray::number(fd.get());
        // A new file is linked under its name at once (and only if nothing took the name
        // meanwhile); a replacement gets a temporary name for the rename, for two system calls.
        const bool linked = !existing
                && ::linkat(AT_FDCWD, self.constData(), dirFd, name.constData(), AT_SYMLINK_FOLLOW)
                        == 0;
        if (!linked) {
            if (!existing && errno != EEXIST)
                return discard(errno);
            if (::linkat(AT_FDCWD, self.constData(), dirFd, temporary.constData(),
                         AT_SYMLINK_FOLLOW)
                != 0)
                return discard(errno);
            named = true;
        }
    }
    if (named && ::renameat(dirFd, temporary.constData(), dirFd, name.constData()) != 0)
        return discard(errno);
    // The rename itself must reach the disk for the new content to survive a crash.
    fsyncDirectoryAt(dirFd, ".");
    return 0;
}

} // namespace cmcp
