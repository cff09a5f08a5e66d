#include "managers/FileManager.h"

#include "workspace/BreadthFirstWalk.h"
#include "workspace/ContainedRoot.h"
#include "workspace/DirectoryEntries.h"
#include "workspace/PathErrors.h"
#include "workspace/RegularFile.h"
#include "managers/TextCodec.h"
#include "workspace/WorkspacePath.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMutexLocker>
#include <QRegularExpression>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

QString failed(const QString &shown, const QString &problem)
{
    return QStringLiteral("%1: %2").arg(shown.isEmpty() ? QStringLiteral("\"\"") : shown, problem);
}

// Parses a path that must name a file (not the root) whose extension the settings allow.
std::optional<WorkspacePath> parseFilePath(const QString &text, const FileOptions *options,
                                           QString *error)
{
    QString problem;
    std::optional<WorkspacePath> path = WorkspacePath::parse(text, &problem);
    if (path && path->isRoot())
        problem = QStringLiteral("names the workspace root, not a file");
    else if (path && options)
        problem = options->checkName(path->name());
    if (!problem.isEmpty()) {
        *error = failed(text, problem);
        return std::nullopt;
    }
    return path;
}

// What file_read and file_write check before they touch the file: the path, which must name a
// file the settings allow, and the text encoding, which must be one the daemon knows.
struct TextFileTarget
{
    WorkspacePath path;
    TextCodec codec;
};

std::optional<TextFileTarget> parseTextFileTarget(const QString &text, const QString &encoding,
                                                  const FileOptions &options, QString *error)
{
    std::optional<WorkspacePath> path = parseFilePath(text, &options, error);
    if (!path)
        return std::nullopt;
    std::optional<TextCodec> codec = TextCodec::forName(encoding, error);
    if (!codec)
        return std::nullopt;
    return TextFileTarget{std::move(*path), std::move(*codec)};
}

struct LineWindow
{
    QByteArray bytes;
    qint64 totalLines = 0;
};

// Streams the file, keeping only lines [offset, offset + limit): lets a model page through a
// file larger than FILE_MAX_SIZE_MB while what it gets back stays within the bound.
std::optional<LineWindow> readLineWindow(const RegularFile &file, qint64 offset, qint64 limit,
                                         qint64 maxBytes, QString *error)
{
    LineWindow window;
    qint64 line = 0;
    bool lineHasBytes = false;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(file.fd(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *error = describePathError(errno);
            return std::nullopt;
        }
        if (got == 0)
            break;
        const char *start = buffer;
        const char *end = buffer + got;
        while (start < end) {
            const char *newline = static_cast<const char *>(std::memchr(start, '\n', end - start));
            const char *pieceEnd = newline ? newline + 1 : end;
            if (line >= offset && line - offset < limit) {
                if (window.bytes.size() + (pieceEnd - start) > maxBytes) {
                    *error = QStringLiteral("the requested lines hold more than %1 bytes; ask "
                                            "for fewer with limit")
                                     .arg(maxBytes);
                    return std::nullopt;
                }
                window.bytes.append(start, pieceEnd - start);
            }
            lineHasBytes = !newline;
            if (newline)
                ++line;
            start = pieceEnd;
        }
    }
    window.totalLines = line + (lineHasBytes ? 1 : 0);
    return window;
}

// The current content's hash for if_match, read without following a symbolic link.
std::optional<QString> currentHash(int parentFd, const QByteArray &leaf, qint64 maxBytes)
{
    UniqueFd fd(::openat(parentFd, leaf.constData(),
                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st
    {
    };
    if (!fd.isValid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)
        || st.st_size > maxBytes)
        return std::nullopt;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return std::nullopt;
        if (got == 0)
            break;
        hash.addData(QByteArrayView(buffer, got));
    }
    return QString::fromLatin1(hash.result().toHex());
}

} // namespace

FileManager::FileManager(Workspace workspace, std::shared_ptr<const ContainedRoot> root,
                         FileOptions options)
    : FileManager(std::move(workspace), std::move(root),
                  std::make_shared<LiveSnapshot<FileOptions>>(
                          std::make_shared<const FileOptions>(std::move(options))))
{
}

FileManager::FileManager(Workspace workspace, std::shared_ptr<const ContainedRoot> root,
                         std::shared_ptr<const LiveSnapshot<FileOptions>> options)
    : m_workspace(std::move(workspace)),
      m_root(std::move(root)),
      m_options(std::move(options))
{
}

QString FileManager::sha256Hex(const QByteArray &data)
{
    // libcrypto, not QCryptographicHash: Qt 6.4 feeds its SHA-256 one byte at a time, which was
    // the largest part of a 1 MB file_read's CPU; libcrypto uses the CPU's SHA extensions.
    unsigned char digest[SHA256_DIGEST_LENGTH];
    unsigned int length = 0;
    if (!EVP_Digest(data.constData(), size_t(data.size()), digest, &length, EVP_sha256(), nullptr))
        return QString::fromLatin1(
                QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
    return QString::fromLatin1(
            QByteArray::fromRawData(reinterpret_cast<const char *>(digest), int(length)).toHex());
}

FileOutcome<FileReadResult> FileManager::read(const FileReadRequest &request) const
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    using Outcome = FileOutcome<FileReadResult>;
    QString error;
    const std::optional<TextFileTarget> target =
            parseTextFileTarget(request.path, request.encoding, *options, &error);
    if (!target)
        return Outcome::failure(error);
    const auto &[path, codec] = *target;
    const bool window = request.offset || request.limit;
    if (window && !codec.isAsciiCompatible())
        return Outcome::failure(failed(request.path,
                                       QStringLiteral("offset and limit count lines, "
                                                      "which needs utf-8 or latin-1")));

    const RegularFile file = RegularFile::openForRead(*m_root, path);
    if (!file.ok())
        return Outcome::failure(failed(request.path, file.error()));

    if (request.cheapOnly && (window || file.status().st_size > *request.cheapOnly))
        return Outcome::deferredAsCostly();

    FileReadResult result;
    result.path = path.display();
    result.size = file.status().st_size;
    result.modified = modifiedSeconds(file.status());
    QByteArray bytes;
    if (window) {
        const std::optional<LineWindow> lines =
                readLineWindow(file, request.offset.value_or(0),
                               request.limit.value_or(std::numeric_limits<qint64>::max()),
                               options->maxBytes, &error);
        if (!lines)
            return Outcome::failure(failed(request.path, error));
        bytes = lines->bytes;
        result.totalLines = lines->totalLines;
        result.endOfFile = request.offset.value_or(0) + request.limit.value_or(lines->totalLines)
                >= lines->totalLines;
    } else {
        if (file.status().st_size > options->maxBytes)
            return Outcome::failure(failed(
                    request.path,
                    QStringLiteral("file is too large: %1 bytes, FILE_MAX_SIZE_MB allows %2; read "
                                   "it in parts with offset and limit")
                            .arg(file.status().st_size)
                            .arg(options->maxBytes)));
        if (!file.readAll(options->maxBytes, &bytes, &error))
            return Outcome::failure(failed(request.path, error));
        result.size = bytes.size();
        result.sha256 = sha256Hex(bytes);
    }
    if (request.asUtf8) {
        std::optional<QByteArray> content = codec.decodeToUtf8(bytes, &error);
        if (!content)
            return Outcome::failure(failed(request.path, error));
        result.contentUtf8 = std::move(*content);
        return {result, {}};
    }
    const std::optional<QString> content = codec.decode(bytes, &error);
    if (!content)
        return Outcome::failure(failed(request.path, error));
    result.content = *content;
    return {result, {}};
}

FileOutcome<QByteArray> FileManager::readBytes(const QString &text, double *modified) const
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    QString error;
    const std::optional<WorkspacePath> path = parseFilePath(text, options.get(), &error);
    if (!path)
        return FileOutcome<QByteArray>::failure(error);
    const RegularFile file = RegularFile::openForRead(*m_root, *path);
    QByteArray bytes;
    if (!file.ok() || !file.readAll(options->maxBytes, &bytes, &error))
        return FileOutcome<QByteArray>::failure(failed(text, file.ok() ? error : file.error()));
    if (modified)
        *modified = modifiedSeconds(file.status());
    return {bytes, {}};
}

FileOutcome<FileWriteResult> FileManager::write(const FileWriteRequest &request)
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    using Outcome = FileOutcome<FileWriteResult>;
    QString error;
    const std::optional<TextFileTarget> target =
            parseTextFileTarget(request.path, request.encoding, *options, &error);
    if (!target)
        return Outcome::failure(error);
    const auto &[path, codec] = *target;
    const std::optional<QByteArray> data = codec.encode(request.content, &error);
    if (!data)
        return Outcome::failure(failed(request.path, error));
    QMutexLocker lock(&m_changes);
    return writeLocked(path, request.path, *data, request.ifMatch, *options);
}

FileOutcome<FileWriteResult> FileManager::writeBytes(const QString &text, const QByteArray &data,
                                                     const std::optional<QString> &ifMatch)
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    QString error;
    const std::optional<WorkspacePath> path = parseFilePath(text, options.get(), &error);
    if (!path)
        return FileOutcome<FileWriteResult>::failure(error);
    QMutexLocker lock(&m_changes);
    return writeLocked(*path, text, data, ifMatch, *options);
}

FileOutcome<FileWriteResult> FileManager::writeLocked(const WorkspacePath &path,
                                                      const QString &shown, const QByteArray &data,
                                                      const std::optional<QString> &ifMatch,
                                                      const FileOptions &options)
{
    using Outcome = FileOutcome<FileWriteResult>;
    if (data.size() > options.maxBytes)
        return Outcome::failure(failed(shown,
                                       QStringLiteral("content is too large: %1 bytes, "
                                                      "FILE_MAX_SIZE_MB allows %2")
                                               .arg(data.size())
                                               .arg(options.maxBytes)));
    const ContainedRoot::Opened parent = m_root->openParent(path, true, &m_workspace);
    if (!parent.ok())
        return Outcome::failure(failed(shown, describePathError(parent.error)));
    const QByteArray leaf = QFile::encodeName(path.name());

    struct stat existing
    {
    };
    const bool exists =
            ::fstatat(parent.fd.get(), leaf.constData(), &existing, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT)
        return Outcome::failure(failed(shown, describePathError(errno)));
    if (exists && !S_ISREG(existing.st_mode))
        return Outcome::failure(failed(shown,
                                       QStringLiteral("not a regular file: it is %1; only "
                                                      "regular files are written")
                                               .arg(describeFileType(existing.st_mode))));
    if (ifMatch) {
        if (ifMatch->isEmpty() && exists)
            return Outcome::failure(failed(shown,
                                           QStringLiteral("if_match mismatch: the file "
                                                          "exists (\"\" means it must not)")));
        if (!ifMatch->isEmpty()) {
            const std::optional<QString> current =
                    exists ? currentHash(parent.fd.get(), leaf, options.maxBytes) : std::nullopt;
            if (current != ifMatch->toLower())
                return Outcome::failure(failed(
                        shown,
                        exists ? QStringLiteral("if_match mismatch: the file changed since "
                                                "it was read (its sha256 is now %1)")
                                         .arg(current.value_or(QStringLiteral("unknown")))
                               : QStringLiteral("if_match mismatch: the file does not exist")));
        }
    }

    // A new file goes to the sandbox group, as everything created in the workspace.
    const int error = replaceFileAt(parent.fd.get(), leaf, data, exists ? &existing : nullptr,
                                    [this](int fd) { return m_workspace.adoptCreated(fd, false); });
    if (error != 0)
        return Outcome::failure(failed(shown, describePathError(error)));

    FileWriteResult result;
    result.path = path.display();
    result.size = data.size();
    result.sha256 = sha256Hex(data);
    result.created = !exists;
    return {result, {}};
}

FileOutcome<FileListResult> FileManager::list(const FileListRequest &request) const
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    using Outcome = FileOutcome<FileListResult>;
    QString error;
    const std::optional<WorkspacePath> path = WorkspacePath::parse(request.path, &error);
    if (!path)
        return Outcome::failure(failed(request.path, error));
    ContainedRoot::Opened top = m_root->openBeneath(*path, O_RDONLY | O_DIRECTORY, 0, true);
    if (!top.ok())
        return Outcome::failure(failed(request.path, describePathError(top.error)));

    QRegularExpression pattern;
    if (!request.pattern.isEmpty()) {
        pattern = QRegularExpression::fromWildcard(request.pattern, Qt::CaseSensitive);
        if (!pattern.isValid())
            return Outcome::failure(
                    QStringLiteral("pattern '%1' is not a valid glob").arg(request.pattern));
    }

    FileListResult result;
    result.path = path->display();
    // Without a pattern every name read is listed, so the walk need read no more names than it
    // may list (and one to tell a longer listing): resources/list lists on the event loop.
    WalkBudget::Limits limits;
    if (request.pattern.isEmpty())
        limits.maxEntries = options->listMaxEntries + 1;
    WalkBudget budget(limits);
    BreadthFirstWalk walk(*m_root, std::move(top.fd), *path, budget);
    while (!result.truncated) {
        const std::optional<BreadthFirstWalk::Directory> directory = walk.next();
        if (!directory)
            break;
        for (const DirectoryEntry &entry : directory->entries) {
            const QString name = QFile::decodeName(entry.name);
            const bool isDirectory = S_ISDIR(entry.status.st_mode);
            // A symbolic link is listed, never walked into.
            if (request.recursive && isDirectory)
                walk.enter(*directory, entry);
            if (!request.pattern.isEmpty() && !pattern.match(name).hasMatch())
                continue;
            if (result.entries.size() >= options->listMaxEntries) {
                result.truncated = true;
                break;
            }
            FileListEntry item;
            item.name = name;
            item.path = directory->path.child(name).display();
            item.isDirectory = isDirectory;
            item.isSymlink = S_ISLNK(entry.status.st_mode);
            if (S_ISREG(entry.status.st_mode))
                item.size = entry.status.st_size;
            item.modified = modifiedSeconds(entry.status);
            result.entries.append(item);
        }
    }
    // A walk cut short by its budget (depth, names, time) is a truncated listing too.
    if (!budget.shortfall().isEmpty())
        result.truncated = true;
    return {result, {}};
}

FileOutcome<FileDeleteResult> FileManager::remove(const QString &text)
{
    using Outcome = FileOutcome<FileDeleteResult>;
    QString error;
    const std::optional<WorkspacePath> path = parseFilePath(text, nullptr, &error);
    if (!path)
        return Outcome::failure(error);
    QMutexLocker lock(&m_changes);
    const ContainedRoot::Opened parent = m_root->openParent(*path, false, nullptr);
    if (!parent.ok())
        return Outcome::failure(failed(text, describePathError(parent.error)));
    const QByteArray leaf = QFile::encodeName(path->name());
    struct stat st
    {
    };
    if (::fstatat(parent.fd.get(), leaf.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return Outcome::failure(failed(text, describePathError(errno)));
    // The name itself goes: a symbolic link is removed, not what it points to.
    if (::unlinkat(parent.fd.get(), leaf.constData(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0)
        return Outcome::failure(failed(text, describePathError(errno)));
    return {FileDeleteResult{path->display()}, {}};
}

FileOutcome<FileMoveResult> FileManager::move(const FileMoveRequest &request)
{
    const std::shared_ptr<const FileOptions> options = m_options->current();
    using Outcome = FileOutcome<FileMoveResult>;
    QString error;
    const std::optional<WorkspacePath> source = parseFilePath(request.source, nullptr, &error);
    if (!source)
        return Outcome::failure(error);
    const std::optional<WorkspacePath> destination =
            parseFilePath(request.destination, nullptr, &error);
    if (!destination)
        return Outcome::failure(error);
    if (*source == *destination)
        return Outcome::failure(QStringLiteral("source and destination are the same path: %1")
                                        .arg(source->display()));

    QMutexLocker lock(&m_changes);
    const ContainedRoot::Opened from = m_root->openParent(*source, false, nullptr);
    if (!from.ok())
        return Outcome::failure(failed(request.source, describePathError(from.error)));
    const QByteArray fromLeaf = QFile::encodeName(source->name());
    struct stat st
    {
    };
    if (::fstatat(from.fd.get(), fromLeaf.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return Outcome::failure(failed(request.source, describePathError(errno)));
    // Directories carry no extension; for anything else both names must be allowed, or a
    // rename would turn an allowed file into a forbidden one and back.
    if (!S_ISDIR(st.st_mode)) {
        for (const auto &[shown, path] :
             {std::pair(request.source, *source), std::pair(request.destination, *destination)}) {
            const QString problem = options->checkName(path.name());
            if (!problem.isEmpty())
                return Outcome::failure(failed(shown, problem));
        }
    }
    const ContainedRoot::Opened to = m_root->openParent(*destination, true, &m_workspace);
    if (!to.ok())
        return Outcome::failure(failed(request.destination, describePathError(to.error)));
    const QByteArray toLeaf = QFile::encodeName(destination->name());
    const unsigned flags = request.overwrite ? 0 : RENAME_NOREPLACE;
    if (::renameat2(from.fd.get(), fromLeaf.constData(), to.fd.get(), toLeaf.constData(), flags)
        != 0) {
        const int error = errno;
        if (error == EEXIST)
            return Outcome::failure(failed(request.destination,
                                           QStringLiteral("already exists; pass overwrite: true "
                                                          "to replace it")));
        return Outcome::failure(failed(request.source, describePathError(error)));
    }
    return {FileMoveResult{source->display(), destination->display()}, {}};
}

} // namespace cmcp
