#include "tools/transfer/UploadJournal.h"

#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "posix/UniqueFd.h"
#include "workspace/ContainedRoot.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

QByteArray UploadJournal::temporaryName(const QString &token)
{
    return ".cmcp-upload-" + token.toLatin1();
}

bool UploadJournal::record(const QString &token, const QString &workspaceDirectory,
                           const WorkspacePath &target, QString *error)
{
    const QByteArray directory = QFile::encodeName(m_directory);
    if (::mkdir(directory.constData(), 0700) != 0 && errno != EEXIST) {
        *error = QStringLiteral("cannot make %1: %2").arg(m_directory, errnoText(errno));
        return false;
    }
    const QByteArray text = (workspaceDirectory + u'\n' + target.display() + u'\n').toUtf8();
    const UniqueFd file(::open(QFile::encodeName(entry(token)).constData(),
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file.isValid() || ::write(file.get(), text.constData(), size_t(text.size())) != text.size()
        || ::fsync(file.get()) != 0 || !fsyncDirectoryAt(AT_FDCWD, directory.constData())) {
        *error = QStringLiteral("cannot record the upload in %1: %2")
                         .arg(m_directory, errnoText(errno));
        ::unlink(QFile::encodeName(entry(token)).constData());
        return false;
    }
    return true;
}

void UploadJournal::forget(const QString &token)
{
    ::unlink(QFile::encodeName(entry(token)).constData());
}

int UploadJournal::removeLeftovers()
{
    static const QRegularExpression tokenForm(QStringLiteral("^tr_[0-9a-f]{32}$"));
    int removed = 0;
    const QStringList tokens = QDir(m_directory).entryList(QDir::Files | QDir::Hidden);
    for (const QString &token : tokens) {
        QFile file(entry(token));
        const QStringList lines = file.open(QIODevice::ReadOnly)
                ? QString::fromUtf8(file.read(64 * 1024)).split(u'\n')
                : QStringList();
        QString error;
        const std::optional<WorkspacePath> target =
                tokenForm.match(token).hasMatch() && lines.size() >= 2
                ? WorkspacePath::parse(lines[1], &error)
                : std::nullopt;
        // Resolved beneath the workspace as on every request: a record cannot reach elsewhere.
        const std::shared_ptr<const ContainedRoot> root = target
                ? ContainedRoot::open(lines[0], ContainedRoot::Resolver::Openat2, &error)
                : nullptr;
        if (root) {
            const ContainedRoot::Opened parent = root->openParent(*target, false, nullptr);
            if (parent.ok()
                && ::unlinkat(parent.fd.get(), temporaryName(token).constData(), 0) == 0)
                ++removed;
        }
        // A workspace gone since, or a directory removed, took the temporary file with it.
        forget(token);
    }
    if (removed > 0)
        spdlog::info("transfer: removed {} temporary file(s) of uploads a previous run left "
                     "unfinished",
                     removed);
    return removed;
}

} // namespace cmcp
