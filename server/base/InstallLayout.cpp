#include "base/InstallLayout.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace cmcp {

namespace {

// Relative to the installed cmcpd's directory; CMake derives both from its install directories
// (GNUInstallDirs), so they follow CMAKE_INSTALL_LIBEXECDIR and CMAKE_INSTALL_DATADIR.
QString installedPath(const char *fromBinDir, const QString &name)
{
    return QDir::cleanPath(QCoreApplication::applicationDirPath() + u'/'
                           + QString::fromUtf8(fromBinDir) + u'/' + name);
}

} // namespace

QString helperProgram(const QString &name, const QString &buildFolder)
{
    const QString installed = installedPath(CMCP_HELPERS_FROM_BINDIR, name);
    if (QFileInfo(installed).isExecutable())
        return installed;
    return QDir(QCoreApplication::applicationDirPath()).filePath(buildFolder + u'/' + name);
}

QString installedDataFile(const QString &name)
{
    const QString installed = installedPath(CMCP_DATA_FROM_BINDIR, name);
    return QFileInfo::exists(installed) ? installed : QString();
}

} // namespace cmcp
