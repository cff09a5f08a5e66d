#include "jobs/JobServices.h"

#include "common/Settings.h"
#include "workspace/Workspace.h"

#include <QDir>
#include <QFile>

#include <sys/stat.h>

namespace cmcp {

QString JobServices::fileDirectoryFromSettings(const Settings &settings)
{
    return Workspace::sandboxRoot(settings) + QStringLiteral("/spill");
}

bool JobServices::prepareFileDirectory(const QString &directory, QString *error)
{
    if (!QDir().mkpath(directory) || ::chmod(QFile::encodeName(directory).constData(), 0700) != 0) {
        *error = QStringLiteral("cannot create the output directory %1").arg(directory);
        return false;
    }
    QDir dir(directory);
    for (const QString &name : dir.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        if (!dir.remove(name)) {
            *error = QStringLiteral("cannot remove %1, left by a previous run")
                             .arg(dir.filePath(name));
            return false;
        }
    }
    return true;
}

} // namespace cmcp
