#pragma once

#include <QString>
#include <QStringList>

#include <chrono>

namespace cmcp {

class Settings;

// What the file tools may touch and how much: the FILE_* settings. Immutable; the admin channel
// replaces the whole set (FileManager holds it in a LiveSnapshot).
struct FileOptions
{
    qint64 maxBytes = 10 * 1024 * 1024;
    QStringList allowedExtensions{QStringLiteral("txt"), QStringLiteral("md"),
                                  QStringLiteral("csv"), QStringLiteral("json"),
                                  QStringLiteral("py")};
    bool allowNoExtension = false;
    int listMaxEntries = 1000;
    std::chrono::seconds searchTimeLimit{10};

    static FileOptions fromSettings(const Settings &settings);

    // "" when a file called `name` may be read, written or moved; otherwise why not. The
    // extension is what follows the last dot, compared case-insensitively; "*" allows any;
    // ".bashrc" and "Makefile" have none.
    QString checkName(const QString &name) const;
};

} // namespace cmcp
