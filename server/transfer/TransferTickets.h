#pragma once

#include "mcp/Principal.h"
#include "posix/UniqueFd.h"
#include "transfer/UploadJournal.h"
#include "workspace/ContainedRoot.h"
#include "workspace/Workspace.h"
#include "workspace/WorkspacePath.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <optional>
#include <variant>

namespace cmcp {

class Settings;

// Files moved over the daemon's HTTP port instead of through base64 in tool calls: the tool
// file_transfer has a ticket issued here and hands out its URL, /transfer/<128 random bits>,
// for one direction, one path of one workspace and one principal, for TRANSFER_URL_SECONDS.
// The door that serves the URLs is TransferEndpoint; this store knows nothing of HTTP, so that
// the tool which issues tickets needs no transport.
//
// Tickets end with the daemon; the temporary files of a daemon that crashed are removed when
// the next one starts (UploadJournal). A principal holds at most 64 tickets that have not
// expired (each keeps its workspace's directory open). A finished upload's ticket is spent.
class TransferTickets : public QObject
{
    Q_OBJECT
public:
    enum class Direction { Download, Upload };

    explicit TransferTickets(const Settings &settings, QObject *parent = nullptr);
    ~TransferTickets() override;

    // The path every transfer URL starts with: "/transfer/".
    static QString urlPrefix();

    // Where URLs point: "http://127.0.0.1:8080" (set once the port is known; without it, as on
    // stdio, no ticket is issued).
    void setBase(const QString &base) { m_base = base; }

    struct Issued
    {
        QString path; // "/transfer/<token>"
        QString url; // m_base + path
        qint64 expiresInSeconds = 0;
    };
    // A ticket for `path` of `workspace` (whose files `root` reaches) and `principal`. Refused
    // with a reason when the path is not one (checked again when it is used).
    std::optional<Issued> issue(const Principal &principal, const Workspace &workspace,
                                std::shared_ptr<const ContainedRoot> root,
                                const WorkspacePath &path, Direction direction, QString *error);

    // TRANSFER_MAX_MB, in bytes: the largest file an upload may make.
    qint64 maxBytes() const { return m_maxBytes; }

    // One issued ticket, and the state of its upload while parts of it arrive.
    struct Ticket
    {
        Principal principal = Principal::local(); // set by issue()
        Workspace workspace;
        std::shared_ptr<const ContainedRoot> root;
        WorkspacePath path;
        Direction direction = Direction::Download;
        QDeadlineTimer expires;
        // An upload: the directory of the target, the temporary file, what has arrived.
        UniqueFd parent;
        QByteArray temporaryName;
        UniqueFd temporary;
        qint64 total = -1;
        qint64 received = 0;
        bool spent = false;
        bool receiving = false; // a request's body is being written now
        UploadJournal *journal = nullptr; // where the temporary file is recorded while it exists
        QString token;

        void discardTemporary();
    };

    // Why find() gives no ticket.
    enum class Refusal {
        Unknown, // none of this token, or another principal's
        Spent, // an upload used to the end
        DownloadOnly, // a download's ticket asked to take an upload
        UploadOnly, // an upload's ticket asked to give a download
    };
    // The live ticket of `token` for this principal and direction (`upload`), or the refusal.
    std::variant<Refusal, std::shared_ptr<Ticket>> find(const QString &token, bool upload,
                                                        const Principal &principal);
    // Whether `token` still names a ticket (an upload's body may outlast its expiry).
    bool holds(const QString &token) const { return m_tickets.contains(token); }
    UploadJournal &journal() { return m_journal; }

private:
    void forgetExpired();

    const int m_seconds;
    const qint64 m_maxBytes;
    QString m_base;
    UploadJournal m_journal;
    QHash<QString, std::shared_ptr<Ticket>> m_tickets;
    QTimer m_sweep;
};

} // namespace cmcp
