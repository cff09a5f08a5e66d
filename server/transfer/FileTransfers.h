#pragma once

#include "mcp/Principal.h"
#include "transfer/UploadJournal.h"
#include "transport/HttpWire.h"
#include "transport/RequestHead.h"
#include "transport/StreamedBody.h"
#include "workspace/ContainedRoot.h"
#include "workspace/Workspace.h"
#include "workspace/WorkspacePath.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <variant>

class QHttpServerRequest;
class QTcpSocket;

namespace cmcp {

class McpServer;
class Settings;

// Files moved over the daemon's HTTP port instead of through base64 in tool calls: the tool
// file_transfer hands out a URL, /transfer/<128 random bits>, for one direction, one path of
// one workspace and one principal, for TRANSFER_URL_SECONDS. The request must carry the same
// bearer token rules as /mcp, and a URL of another principal answers as an unknown one.
//
// A download (GET) streams the file from disk as the socket drains (a Range of bytes resumes a
// broken one); memory stays flat whatever the size. An upload (PUT) is streamed as well: its
// body never passes through Qt's parser (HttpServer::setStreamedPutRoute), so one PUT of the
// whole file or parts of any size with Content-Range (bytes first-last/total; without it the
// body is the whole file and starts the upload afresh) go to a temporary name beside the target,
// in order, renamed onto it once the last byte is on disk: the name holds the old content or
// the whole new one, never a part. A part that does not start where the received bytes end gets
// 409 with the Range received so far, to resume from; a body cut off keeps what reached the
// disk, to resume from there. A finished upload's URL is spent. URLs end with the daemon; the
// temporary files of a daemon that crashed are removed when the next one starts (UploadJournal). A
// principal holds at most 64 URLs that have not expired (each keeps its workspace's directory
// open).
class FileTransfers : public QObject
{
    Q_OBJECT
public:
    enum class Direction { Download, Upload };

    FileTransfers(const Settings &settings, QObject *parent = nullptr);
    ~FileTransfers() override;

    // The one instance of `server`, made on first use.
    static FileTransfers &of(McpServer &server, const Settings &settings);

    // Where URLs point: "http://127.0.0.1:8080" (set once the port is known).
    void setBase(const QString &base) { m_base = base; }

    struct Issued
    {
        QString path; // "/transfer/<token>"
        QString url; // m_base + path
        qint64 expiresInSeconds = 0;
    };
    // A URL for `path` of `workspace` (whose files `root` reaches) and `principal`. Refused
    // with a reason when the path is not one (checked again when it is used).
    std::optional<Issued> issue(const Principal &principal, const Workspace &workspace,
                                std::shared_ptr<const ContainedRoot> root,
                                const WorkspacePath &path, Direction direction, QString *error);

    // The door: GET of /transfer/<token> (through Qt's parser), and the head of a PUT, judged
    // before its body is read.
    void serve(const QHttpServerRequest &request, QTcpSocket *socket, const Principal &principal);
    StreamedBodyPlan receive(const RequestHead &head, const Principal &principal);

    qint64 maxBytes() const { return m_maxBytes; }

    struct Ticket;

private:
    // The ticket of URL path `path` for this principal and method, or the refusal.
    std::variant<http::Answer, std::shared_ptr<Ticket>> find(const QString &path, bool put,
                                                             const Principal &principal);
    void download(const QHttpServerRequest &request, QTcpSocket *socket, Ticket &ticket);
    // The body of a PUT from byte `first` has ended, whole or not (see StreamedBodyPlan).
    http::Answer received(const QString &token, Ticket &ticket, qint64 first, qint64 written,
                          int error);
    void forgetExpired();

    const int m_seconds;
    const qint64 m_maxBytes;
    QString m_base;
    UploadJournal m_journal;
    QHash<QString, std::shared_ptr<Ticket>> m_tickets;
    QTimer m_sweep;
};

} // namespace cmcp
