#pragma once

#include "posix/UniqueFd.h"
#include "workspace/WorkspacePath.h"

#include <QByteArray>
#include <QString>

namespace cmcp {

// The temporary files of the uploads under way, recorded in a directory of the daemon's own
// (<SANDBOX_ROOT>/transfers: one file per upload, named by its token, holding the workspace's
// directory relative to SANDBOX_ROOT and the target's path) from before each is made until it
// is renamed or removed. Transfer URLs live in memory and end with the daemon, so no temporary
// file outlives it usefully: a daemon started after a crash removes each one recorded
// (removeLeftovers()) rather than leave half an upload beside its target forever.
//
// Start-up acts on what the records say, and anyone who could write a record could aim that
// removal anywhere: a record is therefore only ever read through descriptors, the directory
// opened without following a link and checked to be the daemon's, the workspace opened beneath
// SANDBOX_ROOT and the target's directory beneath the workspace, one component at a time with
// no symbolic link on the way. A record naming anything else is dropped with a log line.
class UploadJournal
{
public:
    explicit UploadJournal(QString sandboxRoot);

    // The name of the temporary file of upload `token`, beside its target.
    static QByteArray temporaryName(const QString &token);

    // Durably, before the temporary file is made; false with `error` when it cannot be (a
    // workspace outside SANDBOX_ROOT included).
    bool record(const QString &token, const QString &workspaceDirectory,
                const WorkspacePath &target, QString *error);
    void forget(const QString &token);
    // Removes the temporary file of every upload recorded, and the records; how many there were.
    int removeLeftovers();

private:
    // The journal's directory, opened (and made) on first use; invalid with `error` when it
    // cannot be opened as a directory of the daemon's own.
    int directoryFd(QString *error);
    // The temporary file `record` (the record's name) describes, removed when the record is
    // sound; false with `why` when the record was dropped without acting on it.
    bool removeRecorded(int sandboxRootFd, const QByteArray &record, QString *why);

    const QString m_sandboxRoot;
    const QString m_directory;
    UniqueFd m_directoryFd;
};

} // namespace cmcp
