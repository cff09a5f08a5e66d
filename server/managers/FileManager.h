#pragma once

#include "managers/FileOptions.h"
#include "base/LiveSnapshot.h"
#include "workspace/Workspace.h"

#include <QByteArray>
#include <QList>
#include <QMutex>
#include <QString>

#include <memory>
#include <optional>

namespace cmcp {

class ContainedRoot;
class WorkspacePath;

// A result or the message saying why there is none.
template<typename T>
struct FileOutcome
{
    std::optional<T> value;
    QString error;
    // Not done because it would not be cheap (see FileReadRequest::cheapOnly); neither value nor
    // error.
    bool deferred = false;

    static FileOutcome failure(QString message) { return {std::nullopt, std::move(message)}; }
    static FileOutcome deferredAsCostly() { return {std::nullopt, {}, true}; }
    bool ok() const { return value.has_value(); }
};

struct FileReadRequest
{
    QString path;
    QString encoding = QStringLiteral("utf-8"); // a text encoding Qt knows, or "base64"
    std::optional<qint64> offset = {}; // lines to skip (text only)
    std::optional<qint64> limit = {}; // most lines returned (text only)
    // Hand the text as UTF-8 in contentUtf8 rather than as a QString: a caller that writes it
    // out as UTF-8 (JSON) skips the conversions to UTF-16 and back.
    bool asUtf8 = false;
    // When set, only a whole read of a file of at most this many bytes is done; anything larger
    // (or a line window) comes back deferred, for the caller to redo off the event loop.
    std::optional<qint64> cheapOnly = {};
};

struct FileReadResult
{
    QString path;
    QString content; // empty when the request asked for contentUtf8
    QByteArray contentUtf8; // the same text as UTF-8, when the request asked for it
    qint64 size = 0; // of the whole file, in bytes
    double modified = 0; // seconds since the epoch
    QString sha256; // of the whole file, for file_write's if_match; empty for a line window
    std::optional<qint64> totalLines; // set when reading a line window
    bool endOfFile = true; // false when a line window stops before the end
};

struct FileWriteRequest
{
    QString path;
    QString content;
    QString encoding = QStringLiteral("utf-8");
    std::optional<QString> ifMatch = {}; // sha256 of the current content; "" = must not exist
};

struct FileWriteResult
{
    QString path;
    qint64 size = 0;
    QString sha256;
    bool created = false;
};

struct FileListRequest
{
    QString path = QStringLiteral("/");
    QString pattern = {}; // a glob on entry names; empty matches all
    bool recursive = false;
};

struct FileListEntry
{
    QString name;
    QString path;
    bool isDirectory = false;
    bool isSymlink = false;
    std::optional<qint64> size; // regular files only
    double modified = 0;
};

struct FileListResult
{
    QString path;
    QList<FileListEntry> entries;
    bool truncated = false; // FILE_LIST_MAX_ENTRIES was reached
};

struct FileDeleteResult
{
    QString path;
};

struct FileMoveRequest
{
    QString source;
    QString destination;
    bool overwrite = false;
};

struct FileMoveResult
{
    QString source;
    QString destination;
};

// The file operations on the workspace, with no knowledge of MCP. Every path goes through
// ContainedRoot, so the kernel keeps it inside; only regular files are read or written, and a
// write replaces its file atomically (temporary file, fsync, rename) or leaves it untouched.
// Thread-safe: calls may run on worker threads. Changes (write, delete, move) are serialised
// among themselves, which makes if_match a true compare-and-swap between calls of this manager;
// against jobs writing the same file directly it is a check, not a lock.
class FileManager
{
public:
    FileManager(Workspace workspace, std::shared_ptr<const ContainedRoot> root,
                FileOptions options);
    // Options that the admin channel may replace while the daemon runs, shared by the managers
    // of every session; each operation reads them once, at its start.
    FileManager(Workspace workspace, std::shared_ptr<const ContainedRoot> root,
                std::shared_ptr<const LiveSnapshot<FileOptions>> options);

    std::shared_ptr<const FileOptions> options() const { return m_options->current(); }
    const ContainedRoot &root() const { return *m_root; }
    const Workspace &workspace() const { return m_workspace; }
    // The session whose own workspace this manager's is (empty: the shared workspace), so that
    // the resource notifications of its files reach that session only.
    void setOwnerSession(const QString &sessionId) { m_ownerSession = sessionId; }
    const QString &ownerSession() const { return m_ownerSession; }

    FileOutcome<FileReadResult> read(const FileReadRequest &request) const;
    FileOutcome<FileWriteResult> write(const FileWriteRequest &request);
    FileOutcome<FileListResult> list(const FileListRequest &request) const;
    FileOutcome<FileDeleteResult> remove(const QString &path);
    FileOutcome<FileMoveResult> move(const FileMoveRequest &request);

    // The raw bytes of a regular file (bounded by maxBytes), for resources and editing.
    FileOutcome<QByteArray> readBytes(const QString &path, double *modified = nullptr) const;
    // Replaces a file with `data` under the same guard as write().
    FileOutcome<FileWriteResult> writeBytes(const QString &path, const QByteArray &data,
                                            const std::optional<QString> &ifMatch);

    static QString sha256Hex(const QByteArray &data);

private:
    FileOutcome<FileWriteResult> writeLocked(const WorkspacePath &path, const QString &shown,
                                             const QByteArray &data,
                                             const std::optional<QString> &ifMatch,
                                             const FileOptions &options);

    Workspace m_workspace;
    QString m_ownerSession;
    std::shared_ptr<const ContainedRoot> m_root;
    std::shared_ptr<const LiveSnapshot<FileOptions>> m_options;
    QMutex m_changes;
};

} // namespace cmcp
