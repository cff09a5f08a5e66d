#pragma once

#include "workspace/WorkspacePath.h"

#include <QByteArray>
#include <QString>

namespace cmcp {

// The temporary files of the uploads under way, recorded in a directory of the daemon's own
// (<SANDBOX_ROOT>/transfers: one file per upload, named by its token, holding the workspace's
// directory and the target's path) from before each is made until it is renamed or removed.
// Transfer URLs live in memory and end with the daemon, so no temporary file outlives it
// usefully: a daemon started after a crash removes each one recorded (removeLeftovers()) rather
// than leave half an upload beside its target forever.
class UploadJournal
{
public:
    explicit UploadJournal(QString directory) : m_directory(std::move(directory)) { }

    // The name of the temporary file of upload `token`, beside its target.
    static QByteArray temporaryName(const QString &token);

    // Durably, before the temporary file is made; false with `error` when it cannot be.
    bool record(const QString &token, const QString &workspaceDirectory,
                const WorkspacePath &target, QString *error);
    void forget(const QString &token);
    // Removes the temporary file of every upload recorded, and the records; how many there were.
    int removeLeftovers();

private:
    QString entry(const QString &token) const { return m_directory + u'/' + token; }

    const QString m_directory;
};

} // namespace cmcp
