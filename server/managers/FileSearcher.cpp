#include "managers/FileSearcher.h"

#include "workspace/BreadthFirstWalk.h"
#include "workspace/ContainedRoot.h"
#include "workspace/DirectoryEntries.h"
#include "workspace/PathErrors.h"
#include "workspace/RegularFile.h"
#include "workspace/WorkspacePath.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QRegularExpression>

#include <fcntl.h>
#include <functional>

namespace cmcp {

namespace {

constexpr qsizetype binaryProbeBytes = 8192;

// Finds the first match in a line: its column from 0, or -1.
using LineMatcher = std::function<qsizetype(QStringView line)>;

std::optional<LineMatcher> makeMatcher(const FileSearchRequest &request,
                                       const FileSearchLimits &limits, QString *error)
{
    const Qt::CaseSensitivity cs = request.ignoreCase ? Qt::CaseInsensitive : Qt::CaseSensitive;
    if (!request.regex) {
        const QString needle = request.pattern;
        return [needle, cs](QStringView line) { return line.indexOf(needle, 0, cs); };
    }
    QRegularExpression::PatternOptions options = QRegularExpression::UseUnicodePropertiesOption;
    if (request.ignoreCase)
        options |= QRegularExpression::CaseInsensitiveOption;
    // QRegularExpression has no API for PCRE2's match limit, whose default (ten million steps
    // per match) lets one line of a catastrophic pattern run for seconds; PCRE2 reads a lower
    // limit from the pattern's start, where a client's own (*LIMIT_MATCH=...) can only lower it
    // further. A line whose match hits the limit counts as not matching; the search's deadline,
    // checked after every line, ends the rest.
    const QString limited = QStringLiteral("(*LIMIT_MATCH=%1)(*LIMIT_DEPTH=%2)")
                                    .arg(limits.regexMatchLimit)
                                    .arg(limits.regexDepthLimit)
            + request.pattern;
    const QRegularExpression expression(limited, options);
    if (!expression.isValid()) {
        *error = QStringLiteral("pattern is not a valid regular expression: %1 at offset %2")
                         .arg(expression.errorString())
                         .arg(expression.patternErrorOffset()
                              - (limited.size() - request.pattern.size()));
        return std::nullopt;
    }
    expression.optimize();
    const qsizetype subjectChars = limits.regexSubjectChars;
    return [expression, subjectChars](QStringView line) -> qsizetype {
        const QString subject = line.first(qMin(line.size(), subjectChars)).toString();
        const QRegularExpressionMatch match = expression.match(subject);
        return match.hasMatch() ? match.capturedStart() : -1;
    };
}

QString excerpt(QStringView line, qsizetype column, int width)
{
    while (line.endsWith(QLatin1Char('\r')) || line.endsWith(QLatin1Char('\n')))
        line.chop(1);
    if (line.size() <= width)
        return line.toString();
    // Keep some text before the match, so a match far along a long line is still shown.
    const qsizetype start = qBound(qsizetype(0), column - width / 4, line.size() - width);
    QString text = line.sliced(start, width).toString();
    if (start > 0)
        text.prepend(QChar(0x2026));
    if (start + width < line.size())
        text.append(QChar(0x2026));
    return text;
}

class Search
{
public:
    Search(const FileManager &files, const FileSearchRequest &request,
           const FileSearchLimits &limits, LineMatcher matcher)
        : m_options(files.options()),
          m_request(request),
          m_limits(limits),
          m_maxResults(qBound(1, request.maxResults, limits.maxResults)),
          m_matcher(std::move(matcher)),
          m_deadline(limits.timeLimit)
    {
        if (!request.glob.isEmpty())
            m_glob = QRegularExpression::fromWildcard(request.glob, Qt::CaseSensitive);
    }

    bool globIsValid() const { return m_request.glob.isEmpty() || m_glob.isValid(); }
    FileSearchResult &result() { return m_result; }

    // One file met by the walk; false once a limit stops the search.
    bool visit(const RegularFile &file, const WorkspacePath &path)
    {
        if (stopped())
            return false;
        if (file.status().st_size > m_options->maxBytes) {
            ++m_result.skippedLarge;
            return true;
        }
        if (m_result.filesScanned >= m_limits.maxFiles)
            return stop(QStringLiteral("max_files"));
        if (m_bytesRead + file.status().st_size > m_limits.maxBytes)
            return stop(QStringLiteral("max_bytes"));
        ++m_result.filesScanned;
        QByteArray bytes;
        QString error;
        if (!file.readAll(m_options->maxBytes, &bytes, &error))
            return true; // grew past the bound or vanished meanwhile: not searchable now
        m_bytesRead += bytes.size();
        if (bytes.left(binaryProbeBytes).contains('\0')) {
            ++m_result.skippedBinary;
            return true;
        }
        searchText(QString::fromUtf8(bytes), path.display());
        return !stopped();
    }

    bool wants(const QString &name) const
    {
        return m_options->checkName(name).isEmpty()
                && (m_request.glob.isEmpty() || m_glob.match(name).hasMatch());
    }

    // A walk cut short by its own bounds leaves the search incomplete too, unless the search
    // had already stopped for a reason of its own.
    void walkEnded(const WalkBudget &budget)
    {
        if (m_result.truncated)
            return;
        switch (budget.bound()) {
        case WalkBudget::Bound::None:
            return;
        case WalkBudget::Bound::Depth:
            stop(QStringLiteral("depth"));
            return;
        case WalkBudget::Bound::Time:
            stop(QStringLiteral("time"));
            return;
        case WalkBudget::Bound::Entries:
        case WalkBudget::Bound::Bytes:
            stop(QStringLiteral("max_names"));
            return;
        }
    }

    bool stopped()
    {
        if (m_result.truncated)
            return true;
        if (m_deadline.hasExpired()) {
            m_result.truncated = true;
            m_result.truncatedBy = QStringLiteral("time");
        }
        return m_result.truncated;
    }

private:
    bool stop(const QString &reason)
    {
        m_result.truncated = true;
        m_result.truncatedBy = reason;
        return false;
    }

    void searchText(const QString &text, const QString &path)
    {
        qsizetype start = 0;
        qint64 lineNumber = 0;
        while (start < text.size()) {
            qsizetype end = text.indexOf(QLatin1Char('\n'), start);
            if (end < 0)
                end = text.size();
            ++lineNumber;
            const QStringView line = QStringView(text).sliced(start, end - start);
            const qsizetype column = m_matcher(line);
            if (column >= 0) {
                if (m_result.matches.size() >= m_maxResults) {
                    stop(QStringLiteral("max_results"));
                    return;
                }
                m_result.matches.append(
                        {path, lineNumber, column + 1, excerpt(line, column, m_limits.lineChars)});
            }
            // A slow pattern is cut off within a file too, after any line: one line's match is
            // bounded by the match limit, so the deadline is overrun by one line's work at most.
            if (stopped())
                return;
            start = end + 1;
        }
    }

    // FILE_* as they were when the search began, for all of it.
    const std::shared_ptr<const FileOptions> m_options;
    const FileSearchRequest &m_request;
    const FileSearchLimits &m_limits;
    const int m_maxResults;
    LineMatcher m_matcher;
    QRegularExpression m_glob;
    QDeadlineTimer m_deadline;
    FileSearchResult m_result;
    qint64 m_bytesRead = 0;
};

} // namespace

FileOutcome<FileSearchResult> searchFiles(const FileManager &files,
                                          const FileSearchRequest &request,
                                          const FileSearchLimits &limits)
{
    using Outcome = FileOutcome<FileSearchResult>;
    if (request.pattern.isEmpty())
        return Outcome::failure(QStringLiteral("pattern is empty"));
    if (request.pattern.size() > limits.maxPatternChars)
        return Outcome::failure(QStringLiteral("pattern is too long: %1 characters, at most %2")
                                        .arg(request.pattern.size())
                                        .arg(limits.maxPatternChars));
    if (request.glob.contains(QLatin1Char('/')))
        return Outcome::failure(QStringLiteral("glob '%1' holds a '/': it matches file names; "
                                               "choose the directory with path")
                                        .arg(request.glob));
    QString error;
    std::optional<LineMatcher> matcher = makeMatcher(request, limits, &error);
    if (!matcher)
        return Outcome::failure(error);
    const std::optional<WorkspacePath> top = WorkspacePath::parse(request.path, &error);
    if (!top)
        return Outcome::failure(QStringLiteral("%1: %2").arg(request.path, error));

    Search search(files, request, limits, std::move(*matcher));
    if (!search.globIsValid())
        return Outcome::failure(QStringLiteral("glob '%1' is not a valid glob").arg(request.glob));
    search.result().path = top->display();

    ContainedRoot::Opened start = files.root().openBeneath(*top, O_PATH, 0, true);
    struct stat status
    {
    };
    if (!start.ok())
        return Outcome::failure(
                QStringLiteral("%1: %2").arg(request.path, describePathError(start.error)));
    if (::fstat(start.fd.get(), &status) != 0)
        return Outcome::failure(
                QStringLiteral("%1: %2").arg(request.path, describePathError(errno)));
    if (S_ISREG(status.st_mode)) {
        const QString problem = files.options()->checkName(top->name());
        if (!problem.isEmpty())
            return Outcome::failure(QStringLiteral("%1: %2").arg(request.path, problem));
        const RegularFile file = RegularFile::openForRead(files.root(), *top);
        if (!file.ok())
            return Outcome::failure(QStringLiteral("%1: %2").arg(request.path, file.error()));
        search.visit(file, *top);
        return {search.result(), {}};
    }
    if (!S_ISDIR(status.st_mode))
        return Outcome::failure(QStringLiteral("%1: not a directory or regular file: it is %2")
                                        .arg(request.path, describeFileType(status.st_mode)));

    ContainedRoot::Opened directory =
            files.root().openBeneath(*top, O_RDONLY | O_DIRECTORY, 0, true);
    if (!directory.ok())
        return Outcome::failure(
                QStringLiteral("%1: %2").arg(request.path, describePathError(directory.error)));
    WalkBudget::Limits walkLimits;
    walkLimits.time = limits.timeLimit;
    WalkBudget budget(walkLimits);
    BreadthFirstWalk walk(files.root(), std::move(directory.fd), *top, budget);
    while (!search.stopped()) {
        const std::optional<BreadthFirstWalk::Directory> current = walk.next();
        if (!current)
            break;
        for (const DirectoryEntry &entry : current->entries) {
            const QString name = QFile::decodeName(entry.name);
            // Symbolic links are neither followed nor entered: S_ISLNK matches neither branch.
            if (S_ISDIR(entry.status.st_mode)) {
                walk.enter(*current, entry);
            } else if (S_ISREG(entry.status.st_mode) && search.wants(name)) {
                const RegularFile file =
                        RegularFile::openEntry(current->fd.get(), entry.name, entry.status);
                if (file.ok() && !search.visit(file, current->path.child(name)))
                    break;
            }
        }
    }
    search.walkEnded(budget);
    return {search.result(), {}};
}

} // namespace cmcp
