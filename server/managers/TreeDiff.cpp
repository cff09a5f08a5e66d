#include "managers/TreeDiff.h"

#include "managers/UnifiedDiff.h"
#include "posix/ErrnoText.h"
#include "posix/UniqueFd.h"
#include "workspace/DirectoryEntries.h"

#include <QFile>
#include <QJsonObject>
#include <QStringDecoder>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

UniqueFd openChild(int dirFd, const QByteArray &name)
{
    return UniqueFd(
            ::openat(dirFd, name.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

std::optional<QByteArray> readSmallFile(int dirFd, const QByteArray &name, qint64 maxBytes)
{
    const UniqueFd fd(::openat(dirFd, name.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat status
    {
    };
    if (!fd.isValid() || ::fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)
        || status.st_size > maxBytes)
        return std::nullopt;
    QByteArray bytes(qsizetype(status.st_size), Qt::Uninitialized);
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd.get(), bytes.data() + done, size_t(bytes.size() - done));
        if (got <= 0)
            return std::nullopt;
        done += got;
    }
    return bytes;
}

std::optional<QByteArray> linkTarget(int dirFd, const QByteArray &name)
{
    QByteArray target(4096, Qt::Uninitialized);
    const ssize_t length = ::readlinkat(dirFd, name.constData(), target.data(), target.size());
    if (length < 0)
        return std::nullopt;
    target.truncate(length);
    return target;
}

bool sameTime(const timespec &a, const timespec &b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

std::optional<QString> utf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder(bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

class Walk
{
public:
    Walk(int maxChanges, qint64 textDiffBytes, TreeDifference *difference)
        : m_maxChanges(maxChanges),
          m_textDiffBytes(textDiffBytes),
          m_difference(difference)
    {
    }

    // `before`/`after` may be invalid (-1): the subtree exists on one side only.
    void compare(int before, int after, const QString &prefix)
    {
        const QList<DirectoryEntry> left =
                before >= 0 ? readDirectory(before) : QList<DirectoryEntry>();
        const QList<DirectoryEntry> right =
                after >= 0 ? readDirectory(after) : QList<DirectoryEntry>();
        qsizetype i = 0;
        qsizetype j = 0;
        while (i < left.size() || j < right.size()) {
            const bool takeLeft =
                    j == right.size() || (i < left.size() && left[i].name < right[j].name);
            const bool takeRight =
                    i == left.size() || (j < right.size() && right[j].name < left[i].name);
            if (takeLeft) {
                removedOrAdded(before, left[i], prefix, QStringLiteral("removed"), true);
                ++i;
            } else if (takeRight) {
                removedOrAdded(after, right[j], prefix, QStringLiteral("added"), false);
                ++j;
            } else {
                both(before, after, left[i], right[j], prefix);
                ++i;
                ++j;
            }
        }
    }

private:
    QString pathOf(const QString &prefix, const QByteArray &name) const
    {
        return prefix + QFile::decodeName(name);
    }

    void record(const QString &path, const QString &change, const QString &diff = {})
    {
        if (m_difference->changes.size() >= m_maxChanges) {
            m_difference->truncated = true;
            return;
        }
        QJsonObject entry{{QStringLiteral("path"), path}, {QStringLiteral("change"), change}};
        if (!diff.isEmpty())
            entry.insert(QStringLiteral("diff"), diff);
        m_difference->changes.append(entry);
    }

    void removedOrAdded(int dirFd, const DirectoryEntry &entry, const QString &prefix,
                        const QString &change, bool onLeft)
    {
        const QString path = pathOf(prefix, entry.name);
        record(path, change);
        if (!S_ISDIR(entry.status.st_mode))
            return;
        const UniqueFd child = openChild(dirFd, entry.name);
        if (child.isValid())
            onLeft ? compare(child.get(), -1, path + QLatin1Char('/'))
                   : compare(-1, child.get(), path + QLatin1Char('/'));
    }

    void both(int before, int after, const DirectoryEntry &left, const DirectoryEntry &right,
              const QString &prefix)
    {
        const QString path = pathOf(prefix, left.name);
        const struct stat &a = left.status;
        const struct stat &b = right.status;
        if ((a.st_mode & S_IFMT) != (b.st_mode & S_IFMT)) {
            record(path, QStringLiteral("removed"));
            record(path, QStringLiteral("added"));
            return;
        }
        if (S_ISDIR(a.st_mode)) {
            if ((a.st_mode & 07777) != (b.st_mode & 07777))
                record(path, QStringLiteral("modified"));
            const UniqueFd l = openChild(before, left.name);
            const UniqueFd r = openChild(after, right.name);
            compare(l.get(), r.get(), path + QLatin1Char('/'));
            return;
        }
        if (S_ISLNK(a.st_mode)) {
            if (linkTarget(before, left.name) != linkTarget(after, right.name))
                record(path, QStringLiteral("modified"));
            return;
        }
        const bool sameMeta = a.st_size == b.st_size && sameTime(a.st_mtim, b.st_mtim)
                && (a.st_mode & 07777) == (b.st_mode & 07777);
        if (sameMeta && sameTime(a.st_ctim, b.st_ctim))
            return; // a snapshot keeps every time: an untouched file matches exactly
        if (!S_ISREG(a.st_mode)) {
            if (!sameMeta)
                record(path, QStringLiteral("modified"));
            return;
        }
        const std::optional<QByteArray> old = readSmallFile(before, left.name, m_textDiffBytes);
        const std::optional<QByteArray> now = readSmallFile(after, right.name, m_textDiffBytes);
        if (old && now && *old == *now && (a.st_mode & 07777) == (b.st_mode & 07777))
            return;
        if (sameMeta && !(old && now) && sameContent(before, after, left.name))
            return;
        const std::optional<QString> oldText = old ? utf8(*old) : std::nullopt;
        const std::optional<QString> newText = now ? utf8(*now) : std::nullopt;
        record(path, QStringLiteral("modified"),
               oldText && newText ? unifiedDiff(*oldText, *newText, path) : QString());
    }

    // Large files with equal size and mtime: compared in blocks.
    static bool sameContent(int before, int after, const QByteArray &name)
    {
        const UniqueFd a(::openat(before, name.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        const UniqueFd b(::openat(after, name.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!a.isValid() || !b.isValid())
            return false;
        QByteArray x(1 << 16, Qt::Uninitialized);
        QByteArray y(1 << 16, Qt::Uninitialized);
        for (;;) {
            const ssize_t m = ::read(a.get(), x.data(), size_t(x.size()));
            const ssize_t n = ::read(b.get(), y.data(), size_t(y.size()));
            if (m != n || m < 0)
                return false;
            if (m == 0)
                return true;
            if (std::memcmp(x.constData(), y.constData(), size_t(m)) != 0)
                return false;
        }
    }

    const int m_maxChanges;
    const qint64 m_textDiffBytes;
    TreeDifference *m_difference;
};

} // namespace

bool diffTrees(const QString &before, const QString &after, int maxChanges, qint64 textDiffBytes,
               TreeDifference *difference, QString *error)
{
    const UniqueFd left(
            ::open(QFile::encodeName(before).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const UniqueFd right(
            ::open(QFile::encodeName(after).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!left.isValid() || !right.isValid()) {
        *error = QStringLiteral("cannot open %1: %2")
                         .arg(left.isValid() ? after : before, errnoText(errno));
        return false;
    }
    Walk(maxChanges, textDiffBytes, difference).compare(left.get(), right.get(), QString());
    return true;
}

} // namespace cmcp
