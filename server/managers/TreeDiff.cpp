#include "managers/TreeDiff.h"

#include "managers/UnifiedDiff.h"
#include "posix/UniqueFd.h"
#include "workspace/DirectoryEntries.h"
#include "workspace/RegularFile.h"

#include <QFile>
#include <QJsonObject>
#include <QStringDecoder>

#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cmcp {

namespace {

// The directory `entry` of `dirFd`, only if it is still the directory the listing saw: a name
// swapped meanwhile for a link, a FIFO or another directory is not entered.
UniqueFd openListedDirectory(int dirFd, const DirectoryEntry &entry)
{
    UniqueFd fd(::openat(dirFd, entry.name.constData(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat now
    {
    };
    if (!fd.isValid() || ::fstat(fd.get(), &now) != 0 || now.st_dev != entry.status.st_dev
        || now.st_ino != entry.status.st_ino)
        return {};
    return fd;
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

// One directory of the walk: its entries on either side, merged in name order. A side whose
// descriptor is -1 does not have the directory (the subtree was added or removed).
struct Level
{
    UniqueFd ownBefore;
    UniqueFd ownAfter;
    int before = -1;
    int after = -1;
    QString prefix;
    int depth = 0;
    QList<DirectoryEntry> left;
    QList<DirectoryEntry> right;
    qsizetype i = 0;
    qsizetype j = 0;

    bool done() const { return i == left.size() && j == right.size(); }
};

class Walk
{
public:
    explicit Walk(const TreeDiffLimits &limits) : m_limits(limits), m_budget(limits.walk) { }

    TreeDifference run(int before, int after)
    {
        Level top;
        top.before = before;
        top.after = after;
        if (list(top))
            m_levels.push_back(std::move(top));
        while (!m_levels.empty() && !stopped() && m_budget.inTime()) {
            if (m_levels.back().done()) {
                m_levels.pop_back();
                continue;
            }
            std::optional<Level> deeper = step(m_levels.back());
            if (deeper)
                m_levels.push_back(std::move(*deeper));
        }
        if (m_full) {
            m_difference.truncated = true;
            m_difference.truncatedBecause =
                    QStringLiteral("more than %1 changes").arg(m_limits.maxChanges);
        } else if (!m_budget.shortfall().isEmpty()) {
            m_difference.truncated = true;
            m_difference.truncatedBecause = m_budget.shortfall();
        }
        return std::move(m_difference);
    }

private:
    bool stopped() const { return m_full || m_budget.spent(); }

    // Lists both sides of `level`; false once the budget of names is spent.
    bool list(Level &level)
    {
        for (const auto &[fd, entries] :
             {std::pair{level.before, &level.left}, std::pair{level.after, &level.right}}) {
            if (fd < 0)
                continue;
            // One name more than is left tells a directory that overdraws the budget.
            *entries = readDirectory(fd, qsizetype(m_budget.entriesLeft() + 1));
            if (!m_budget.spendEntries(entries->size()))
                return false;
        }
        return true;
    }

    // Handles the next name of `level`; a directory to compare next is returned, to be entered.
    std::optional<Level> step(Level &level)
    {
        const bool takeLeft = level.j == level.right.size()
                || (level.i < level.left.size()
                    && level.left[level.i].name < level.right[level.j].name);
        const bool takeRight = !takeLeft
                && (level.i == level.left.size()
                    || level.right[level.j].name < level.left[level.i].name);
        if (takeLeft)
            return oneSide(level, level.left[level.i++], true);
        if (takeRight)
            return oneSide(level, level.right[level.j++], false);
        const DirectoryEntry left = level.left[level.i++];
        const DirectoryEntry right = level.right[level.j++];
        return both(level, left, right);
    }

    QString pathOf(const Level &level, const QByteArray &name) const
    {
        return level.prefix + QFile::decodeName(name);
    }

    void record(const QString &path, const QString &change, const QString &diff = {})
    {
        if (m_difference.changes.size() >= m_limits.maxChanges) {
            m_full = true;
            return;
        }
        QJsonObject entry{{QStringLiteral("path"), path}, {QStringLiteral("change"), change}};
        if (!diff.isEmpty())
            entry.insert(QStringLiteral("diff"), diff);
        m_difference.changes.append(entry);
    }

    // The level below `parent` for the directories given (either may be invalid), listed; none
    // when it is too deep or the budget is spent.
    std::optional<Level> enter(const Level &parent, const QString &path, UniqueFd before,
                               UniqueFd after)
    {
        if (!m_budget.mayEnter(parent.depth + 1) || (!before.isValid() && !after.isValid()))
            return std::nullopt;
        Level level;
        level.before = before.get();
        level.after = after.get();
        level.ownBefore = std::move(before);
        level.ownAfter = std::move(after);
        level.prefix = path + QLatin1Char('/');
        level.depth = parent.depth + 1;
        if (!list(level))
            return std::nullopt;
        return level;
    }

    std::optional<Level> oneSide(const Level &level, const DirectoryEntry &entry, bool onLeft)
    {
        const QString path = pathOf(level, entry.name);
        record(path, onLeft ? QStringLiteral("removed") : QStringLiteral("added"));
        if (!S_ISDIR(entry.status.st_mode) || stopped())
            return std::nullopt;
        UniqueFd child = openListedDirectory(onLeft ? level.before : level.after, entry);
        return onLeft ? enter(level, path, std::move(child), {})
                      : enter(level, path, {}, std::move(child));
    }

    std::optional<Level> both(const Level &level, const DirectoryEntry &left,
                              const DirectoryEntry &right)
    {
        const QString path = pathOf(level, left.name);
        const struct stat &a = left.status;
        const struct stat &b = right.status;
        if ((a.st_mode & S_IFMT) != (b.st_mode & S_IFMT)) {
            record(path, QStringLiteral("removed"));
            record(path, QStringLiteral("added"));
            return std::nullopt;
        }
        if (S_ISDIR(a.st_mode)) {
            if ((a.st_mode & 07777) != (b.st_mode & 07777))
                record(path, QStringLiteral("modified"));
            if (stopped())
                return std::nullopt;
            return enter(level, path, openListedDirectory(level.before, left),
                         openListedDirectory(level.after, right));
        }
        if (S_ISLNK(a.st_mode)) {
            if (linkTarget(level.before, left.name) != linkTarget(level.after, right.name))
                record(path, QStringLiteral("modified"));
            return std::nullopt;
        }
        const bool sameMeta = a.st_size == b.st_size && sameTime(a.st_mtim, b.st_mtim)
                && (a.st_mode & 07777) == (b.st_mode & 07777);
        if (sameMeta && sameTime(a.st_ctim, b.st_ctim))
            return std::nullopt; // a snapshot keeps every time: an untouched file matches exactly
        if (!S_ISREG(a.st_mode)) {
            if (!sameMeta)
                record(path, QStringLiteral("modified"));
            return std::nullopt;
        }
        const RegularFile oldFile = RegularFile::openEntry(level.before, left.name, a);
        const RegularFile newFile = RegularFile::openEntry(level.after, right.name, b);
        const std::optional<QByteArray> old = smallContent(oldFile);
        const std::optional<QByteArray> now = smallContent(newFile);
        if (old && now && *old == *now && (a.st_mode & 07777) == (b.st_mode & 07777))
            return std::nullopt;
        if (sameMeta && !(old && now) && sameContent(oldFile, newFile))
            return std::nullopt;
        const std::optional<QString> oldText = old ? utf8(*old) : std::nullopt;
        const std::optional<QString> newText = now ? utf8(*now) : std::nullopt;
        record(path, QStringLiteral("modified"),
               oldText && newText ? unifiedDiff(*oldText, *newText, path) : QString());
        return std::nullopt;
    }

    // The content of a file small enough for a text diff; none for a larger one or a file that
    // could not be opened as the regular file listed.
    std::optional<QByteArray> smallContent(const RegularFile &file)
    {
        if (!file.ok() || file.status().st_size > m_limits.textDiffBytes)
            return std::nullopt;
        QByteArray bytes;
        QString ignored;
        if (!file.readAll(m_limits.textDiffBytes, &bytes, &ignored)
            || !m_budget.spendBytes(bytes.size()))
            return std::nullopt;
        return bytes;
    }

    // Large files with equal size and mtime: compared in blocks, from where smallContent left
    // them (it reads nothing of a file larger than a text diff).
    bool sameContent(const RegularFile &before, const RegularFile &after)
    {
        if (!before.ok() || !after.ok() || ::lseek(before.fd(), 0, SEEK_SET) != 0
            || ::lseek(after.fd(), 0, SEEK_SET) != 0)
            return false;
        QByteArray x(1 << 16, Qt::Uninitialized);
        QByteArray y(1 << 16, Qt::Uninitialized);
        for (;;) {
            const ssize_t m = ::read(before.fd(), x.data(), size_t(x.size()));
            const ssize_t n = ::read(after.fd(), y.data(), size_t(y.size()));
            if (m != n || m < 0)
                return false;
            if (m == 0)
                return true;
            if (std::memcmp(x.constData(), y.constData(), size_t(m)) != 0
                || !m_budget.spendBytes(2 * m) || !m_budget.inTime())
                return false;
        }
    }

    const TreeDiffLimits m_limits;
    WalkBudget m_budget;
    TreeDifference m_difference;
    std::vector<Level> m_levels;
    bool m_full = false;
};

} // namespace

TreeDifference diffTrees(int beforeFd, int afterFd, const TreeDiffLimits &limits)
{
    return Walk(limits).run(beforeFd, afterFd);
}

} // namespace cmcp
