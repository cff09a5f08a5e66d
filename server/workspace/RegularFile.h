#pragma once

#include "workspace/ContainedRoot.h"

#include <QByteArray>
#include <QString>

#include <functional>
#include <sys/stat.h>

namespace cmcp {

// A regular file below the workspace, open for reading. Anything else (FIFO, socket, device,
// directory) is refused before it is ever opened for reading, so that no open blocks on a FIFO
// and no device driver sees an open; the file is looked up once with O_PATH, checked, then
// opened and checked to be the same inode, which defeats a swap in between.
class RegularFile
{
public:
    static RegularFile openForRead(const ContainedRoot &root, const WorkspacePath &path);
    // The entry `name` of an open directory that a walk found to be the regular file `seen`
    // (fstatat without following): opened with O_NOFOLLOW and refused unless it is still that
    // inode, so a name swapped for a link or a FIFO meanwhile is neither followed nor read.
    static RegularFile openEntry(int dirFd, const QByteArray &name, const struct stat &seen);

    bool ok() const { return m_fd.isValid(); }
    // Why it could not be opened; empty when ok().
    const QString &error() const { return m_error; }
    int fd() const { return m_fd.get(); }
    const struct stat &status() const { return m_status; }

    // Reads from the current position to the end; false (and `data` incomplete) when the file
    // holds more than `maxBytes` or reading fails.
    bool readAll(qint64 maxBytes, QByteArray *data, QString *error) const;

private:
    UniqueFd m_fd;
    struct stat m_status
    {
    };
    QString m_error;
};

double modifiedSeconds(const struct stat &status);

// Gives the regular file `name` of the open directory `dirFd` the content `data`, atomically:
// readers see the old content or the new one, never a part, and the new content is on disk
// before it has the name. `existing` is the status of the file it replaces (fstatat without
// following), null for a new file. A replaced file keeps its owner, group and permissions (not
// setuid, setgid or sticky); a new one is handed to `adoptNew` (the workspace's group and mode)
// before it gets its name. 0, or the errno of the step that failed; the name then still holds what
// it held.
int replaceFileAt(int dirFd, const QByteArray &name, const QByteArray &data,
                  const struct stat *existing, const std::function<bool(int fd)> &adoptNew);

} // namespace cmcp
