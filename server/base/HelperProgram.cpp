#include "base/HelperProgram.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace cmcp {

QString helperProgram(const QString &name, const QString &buildFolder)
{
    const QDir here(QCoreApplication::applicationDirPath());
    const QString installed = here.filePath(name);
    if (QFileInfo(installed).isExecutable())
        return installed;
    return here.filePath(buildFolder + u'/' + name);
}

} // namespace cmcp
