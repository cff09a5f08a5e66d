#include "jobs/JobServices.h"

#include "common/Settings.h"
#include "posix/OwnDirectory.h"
#include "posix/TreeRemoval.h"
#include "workspace/Workspace.h"

namespace cmcp {

QString JobServices::fileDirectoryFromSettings(const Settings &settings)
{
    return Workspace::sandboxRoot(settings) + QStringLiteral("/spill");
}

bool JobServices::prepareFileDirectory(const QString &directory, QString *error)
{
    const UniqueFd opened = openOwnDirectory(directory, 0700, error);
    if (!opened.isValid())
        return false;
    if (QString why; !removeTreeContents(opened.get(), &why)) {
        *error = QStringLiteral("cannot empty %1 of what a previous run left: %2")
                         .arg(directory, why);
        return false;
    }
    return true;
}

} // namespace cmcp
