#include "workspace/RegularFile.h"

#include "workspace/PathErrors.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

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

} // namespace cmcp
