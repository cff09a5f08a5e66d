#pragma once

#include "managers/FileManager.h"

#include <chrono>

namespace cmcp {

struct FileSearchRequest
{
    QString pattern;
    QString path = QStringLiteral("/"); // a directory (searched recursively) or one file
    QString glob; // on file names, e.g. *.py; empty matches all
    bool regex = false; // literal text unless set
    bool ignoreCase = false;
    int maxResults = 100;
};

struct FileSearchMatch
{
    QString path;
    qint64 line = 0; // from 1
    qint64 column = 0; // from 1, in UTF-16 code units, of the first match on the line
    QString text; // the line, cut to FileSearchLimits::lineChars around the match
};

struct FileSearchResult
{
    QString path;
    QList<FileSearchMatch> matches;
    qint64 filesScanned = 0;
    qint64 skippedBinary = 0; // a NUL byte in the first 8 KiB
    qint64 skippedLarge = 0; // over FILE_MAX_SIZE_MB
    bool truncated = false;
    // "max_results", "max_files", "max_bytes", "time", or the walk's own bounds: "depth" (deeper
    // directories were not searched), "max_names" (the walk listed as many names as it may)
    QString truncatedBy;
};

// Bounds that keep one search from holding a worker for long, whatever the workspace holds.
struct FileSearchLimits
{
    int maxResults = 1000; // ceiling of the request's max_results
    qint64 maxFiles = 10000;
    qint64 maxBytes = qint64(256) * 1024 * 1024; // read in all
    std::chrono::milliseconds timeLimit{10000};
    int lineChars = 200;
    // A regular expression sees at most this much of a line: backtracking grows with the
    // subject, and PCRE2's own match limit then stops a catastrophic pattern in bounded time.
    int regexSubjectChars = 4096;
    // PCRE2's match and depth limits for one line (its defaults are ten million each): a line
    // costs a few milliseconds at most, whatever the pattern.
    int regexMatchLimit = 100000;
    int regexDepthLimit = 10000;
    int maxPatternChars = 1000;
};

// file_search: the lines of the workspace's text files that contain `pattern`. Walks from
// `path` the way file_list does, entering directories by name with O_NOFOLLOW and skipping
// symbolic links, so nothing outside is read and no link inside is followed. Only files whose
// extension file_read would accept are searched; binary files and files over FILE_MAX_SIZE_MB
// are skipped and counted. One match per line; results stop at max_results, files at maxFiles,
// bytes at maxBytes, time at timeLimit, each reported through `truncated` and `truncatedBy`.
FileOutcome<FileSearchResult> searchFiles(const FileManager &files,
                                          const FileSearchRequest &request,
                                          const FileSearchLimits &limits = {});

} // namespace cmcp
