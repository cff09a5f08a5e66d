#include "managers/FileOptions.h"

#include "common/Settings.h"

namespace cmcp {

FileOptions FileOptions::fromSettings(const Settings &settings)
{
    FileOptions options;
    options.maxBytes = settings.integer(u"FILE_MAX_SIZE_MB") * 1024 * 1024;
    options.allowedExtensions = settings.list(u"FILE_ALLOWED_EXTENSIONS");
    options.allowNoExtension = settings.flag(u"FILE_ALLOW_NO_EXTENSION");
    options.listMaxEntries = int(settings.integer(u"FILE_LIST_MAX_ENTRIES"));
    options.searchTimeLimit = std::chrono::seconds(settings.integer(u"FILE_SEARCH_SECONDS"));
    return options;
}

QString FileOptions::checkName(const QString &name) const
{
    const qsizetype dot = name.lastIndexOf(QLatin1Char('.'));
    const bool hasExtension = dot > 0 && dot < name.size() - 1;
    if (!hasExtension) {
        if (allowNoExtension)
            return {};
        return QStringLiteral("'%1' has no extension, and FILE_ALLOW_NO_EXTENSION is off; allowed "
                              "extensions: %2")
                .arg(name, allowedExtensions.join(QStringLiteral(", ")));
    }
    const QString extension = name.mid(dot + 1);
    for (const QString &allowed : allowedExtensions) {
        if (allowed == QLatin1String("*") || allowed.compare(extension, Qt::CaseInsensitive) == 0)
            return {};
    }
    return QStringLiteral("extension '.%1' is not in FILE_ALLOWED_EXTENSIONS (%2)")
            .arg(extension, allowedExtensions.join(QStringLiteral(", ")));
}

} // namespace cmcp
