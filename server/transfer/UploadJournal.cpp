#include "transfer/UploadJournal.h"

#include "posix/DirectoryNames.h"
#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "posix/OpenDirectory.h"
#include "posix/OwnDirectory.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStringList>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

constexpr qint64 kMaxRecordBytes = 64 * 1024;

// The record's text, read without following a link and only from a regular file.
std::optional<QByteArray> readRecord(int directoryFd, const QByteArray &name)
{
    const UniqueFd file(::openat(directoryFd, name.constData(),
                                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat status = {};
    if (!file.isValid() || ::fstat(file.get(), &status) != 0 || !S_ISREG(status.st_mode))
        return std::nullopt;
    QByteArray text(kMaxRecordBytes, Qt::Uninitialized);
    const ssize_t got = ::read(file.get(), text.data(), size_t(text.size()));
    if (got < 0)
        return std::nullopt;
    text.truncate(got);
    return text;
}

} // namespace

UploadJournal::UploadJournal(QString sandboxRoot)
    : m_sandboxRoot(QDir::cleanPath(sandboxRoot)),
      m_directory(m_sandboxRoot + QStringLiteral("/transfers"))
{
}

QByteArray UploadJournal::temporaryName(const QString &token)
{
    return ".cmcp-upload-" + token.toLatin1();
}

int UploadJournal::directoryFd(QString *error)
{
    if (!m_directoryFd.isValid())
        m_directoryFd = openOwnDirectory(m_directory, 0700, error);
    return m_directoryFd.get();
}

bool UploadJournal::record(const QString &token, const QString &workspaceDirectory,
                           const WorkspacePath &target, QString *error)
{
    const QString workspace = QDir::cleanPath(workspaceDirectory);
    if (!workspace.startsWith(m_sandboxRoot + u'/')) {
        *error = QStringLiteral("cannot record the upload: its workspace %1 is not beneath "
                                "SANDBOX_ROOT %2")
                         .arg(workspaceDirectory, m_sandboxRoot);
        return false;
    }
    QString why;
    const int directory = directoryFd(&why);
    if (directory < 0) {
        *error = QStringLiteral("cannot record the upload: %1").arg(why);
        return false;
    }
    const QByteArray name = token.toLatin1();
    const QByteArray text =
            (workspace.mid(m_sandboxRoot.size() + 1) + u'\n' + target.display() + u'\n').toUtf8();
    const UniqueFd file(::openat(directory, name.constData(),
                                 O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file.isValid() || ::write(file.get(), text.constData(), size_t(text.size())) != text.size()
        || ::fsync(file.get()) != 0 || !fsyncDirectoryAt(directory, ".")) {
        *error = QStringLiteral("cannot record the upload in %1: %2")
                         .arg(m_directory, errnoText(errno));
        ::unlinkat(directory, name.constData(), 0);
        return false;
    }
    return true;
}

void UploadJournal::forget(const QString &token)
{
    if (m_directoryFd.isValid())
        ::unlinkat(m_directoryFd.get(), token.toLatin1().constData(), 0);
}

bool UploadJournal::removeRecorded(int sandboxRootFd, const QByteArray &record, QString *why)
{
    static const QRegularExpression tokenForm(QStringLiteral("^tr_[0-9a-f]{32}$"));
    const QString token = QString::fromLatin1(record);
    if (!tokenForm.match(token).hasMatch()) {
        *why = QStringLiteral("not the name of an upload");
        return false;
    }
    const std::optional<QByteArray> text = readRecord(m_directoryFd.get(), record);
    if (!text) {
        *why = QStringLiteral("not a regular file that can be read");
        return false;
    }
    const QStringList lines = QString::fromUtf8(*text).split(u'\n');
    if (lines.size() < 2) {
        *why = QStringLiteral("not a workspace and a target on two lines");
        return false;
    }
    // Records written before they were made relative name the workspace by its absolute path.
    QString workspace = lines[0];
    if (workspace.startsWith(m_sandboxRoot + u'/'))
        workspace = workspace.mid(m_sandboxRoot.size() + 1);
    const UniqueFd workspaceFd = openDirectoryBeneath(sandboxRootFd, workspace);
    if (!workspaceFd.isValid()) {
        if (errno == ENOENT)
            return false; // a workspace gone since took the temporary file with it
        *why = QStringLiteral("its workspace '%1' is not a directory beneath SANDBOX_ROOT "
                              "reached without symbolic links (%2)")
                       .arg(lines[0], errnoText(errno));
        return false;
    }
    QString parseError;
    const std::optional<WorkspacePath> target = WorkspacePath::parse(lines[1], &parseError);
    if (!target) {
        *why = QStringLiteral("its target '%1': %2").arg(lines[1], parseError);
        return false;
    }
    const QStringList parent = target->parent().components();
    const UniqueFd parentFd = parent.isEmpty()
            ? UniqueFd(::fcntl(workspaceFd.get(), F_DUPFD_CLOEXEC, 0))
            : openDirectoryBeneath(workspaceFd.get(), parent.join(u'/'));
    if (!parentFd.isValid()) {
        if (errno == ENOENT)
            return false; // a directory removed since took the temporary file with it
        *why = QStringLiteral("the directory of its target '%1' is not reached without symbolic "
                              "links (%2)")
                       .arg(lines[1], errnoText(errno));
        return false;
    }
    return ::unlinkat(parentFd.get(), temporaryName(token).constData(), 0) == 0;
}

int UploadJournal::removeLeftovers()
{
    QString error;
    if (directoryFd(&error) < 0) {
        spdlog::warn("transfer: the records of unfinished uploads are not read, nothing is "
                     "removed: {}",
                     error.toStdString());
        return 0;
    }
    int listError = 0;
    const QList<QByteArray> records = directoryNames(m_directoryFd.get(), &listError);
    if (listError != 0)
        spdlog::warn("transfer: cannot list {}: {}", m_directory.toStdString(),
                     errnoText(listError).toStdString());
    const UniqueFd sandboxRootFd(::open(QFile::encodeName(m_sandboxRoot).constData(),
                                        O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    int removed = 0;
    for (const QByteArray &record : records) {
        QString why;
        if (sandboxRootFd.isValid() && removeRecorded(sandboxRootFd.get(), record, &why))
            ++removed;
        else if (!why.isEmpty())
            spdlog::warn("transfer: dropped the upload record {}/{} without acting on it: {}",
                         m_directory.toStdString(), record.toStdString(), why.toStdString());
        ::unlinkat(m_directoryFd.get(), record.constData(), 0);
    }
    if (removed > 0)
        spdlog::info("transfer: removed {} temporary file(s) of uploads a previous run left "
                     "unfinished",
                     removed);
    return removed;
}

} // namespace cmcp
