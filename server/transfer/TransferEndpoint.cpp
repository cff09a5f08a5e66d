#include "transfer/TransferEndpoint.h"

#include "transfer/TransferTickets.h"

#include "posix/DirectorySync.h"
#include "posix/ErrnoText.h"
#include "posix/UniqueFd.h"
#include "transport/HttpServer.h"
#include "transport/HttpWire.h"
#include "transport/RequestHead.h"
#include "transport/StreamedBody.h"
#include "workspace/RegularFile.h"
#include "workspace/Workspace.h"

#include <QFile>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTcpSocket>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cmcp {

namespace {

using Ticket = TransferTickets::Ticket;

constexpr qint64 kChunkBytes = 256 * 1024;
// What the socket may hold unsent before the next chunk is read from disk.
constexpr qint64 kSocketBufferBytes = 1024 * 1024;

http::Answer answer(int status, const QJsonObject &body, http::Headers extra = {})
{
    return {status, QJsonDocument(body).toJson(QJsonDocument::Compact), std::move(extra)};
}

http::Answer failure(int status, const QString &why, http::Headers extra = {})
{
    return answer(status, {{QLatin1String("success"), false}, {QLatin1String("error"), why}},
                  std::move(extra));
}

StreamedBodyPlan refusedPlan(http::Answer refusal)
{
    StreamedBodyPlan plan;
    plan.refusal = std::move(refusal);
    return plan;
}

QString unknownUrl()
{
    return QStringLiteral("no such transfer URL (file_transfer issues them, for the principal "
                          "that asked)");
}

// Reads the file from `offset` as the socket drains, `left` bytes, then counts the response
// done. A child of the socket: it goes with it when the client hangs up.
class FileStreamer : public QObject
{
public:
    FileStreamer(QTcpSocket *socket, UniqueFd fd, qint64 offset, qint64 left)
        : QObject(socket),
          m_socket(socket),
          m_fd(std::move(fd)),
          m_offset(offset),
          m_left(left)
    {
        http::setStreaming(socket, true);
        connect(socket, &QTcpSocket::bytesWritten, this, &FileStreamer::pump);
        pump();
    }

private:
    void pump()
    {
        QByteArray chunk;
        while (m_left > 0 && m_socket->bytesToWrite() < kSocketBufferBytes) {
            chunk.resize(qsizetype(qMin(kChunkBytes, m_left)));
            const ssize_t got = ::pread(m_fd.get(), chunk.data(), size_t(chunk.size()), m_offset);
            if (got <= 0) {
                // The file shrank or failed under the download: the length promised cannot be
                // kept, so the connection ends and the client sees a short body.
                spdlog::warn("transfer: reading for a download failed at byte {}: {}", m_offset,
                             got < 0 ? errnoText(errno).toStdString() : "end of file");
                finish(true);
                return;
            }
            chunk.truncate(got);
            m_socket->write(chunk);
            m_offset += got;
            m_left -= got;
        }
        if (m_left == 0)
            finish(false);
    }

    void finish(bool broken)
    {
        disconnect(m_socket, nullptr, this, nullptr);
        http::setStreaming(m_socket, false);
        http::countResponse(m_socket);
        if (broken)
            m_socket->disconnectFromHost();
        deleteLater();
    }

    QTcpSocket *m_socket;
    UniqueFd m_fd;
    qint64 m_offset;
    qint64 m_left;
};

struct ByteRange
{
    qint64 first = 0;
    qint64 last = -1; // inclusive; -1: to the end
};

// "bytes=a-" or "bytes=a-b"; nullopt for anything else (several ranges, suffixes).
std::optional<ByteRange> parseRange(const QByteArray &header)
{
    static const QRegularExpression pattern(QStringLiteral("^bytes=(\\d{1,18})-(\\d{0,18})$"));
    const QRegularExpressionMatch match = pattern.match(QString::fromLatin1(header.trimmed()));
    if (!match.hasMatch())
        return std::nullopt;
    ByteRange range{match.captured(1).toLongLong(),
                    match.captured(2).isEmpty() ? -1 : match.captured(2).toLongLong()};
    if (range.last >= 0 && range.last < range.first)
        return std::nullopt;
    return range;
}

struct ContentRange
{
    qint64 first = 0;
    qint64 last = 0; // inclusive
    qint64 total = 0;
};

// "bytes a-b/total".
std::optional<ContentRange> parseContentRange(const QByteArray &header)
{
    static const QRegularExpression pattern(
            QStringLiteral("^bytes (\\d{1,18})-(\\d{1,18})/(\\d{1,18})$"));
    const QRegularExpressionMatch match = pattern.match(QString::fromLatin1(header.trimmed()));
    if (!match.hasMatch())
        return std::nullopt;
    ContentRange range{match.captured(1).toLongLong(), match.captured(2).toLongLong(),
                       match.captured(3).toLongLong()};
    if (range.last < range.first || range.last >= range.total)
        return std::nullopt;
    return range;
}

// The ticket of URL path `path` for this principal and method, or the refusal.
std::variant<http::Answer, std::shared_ptr<Ticket>>
ticketFor(TransferTickets &tickets, const QString &path, bool put, const Principal &principal)
{
    auto found = tickets.find(path.mid(TransferTickets::urlPrefix().size()), put, principal);
    const auto *refusal = std::get_if<TransferTickets::Refusal>(&found);
    if (!refusal)
        return std::get<std::shared_ptr<Ticket>>(found);
    switch (*refusal) {
    case TransferTickets::Refusal::Unknown:
        break;
    case TransferTickets::Refusal::Spent:
        return failure(410,
                       QStringLiteral("this upload URL was used to the end: ask "
                                      "file_transfer for another"));
    case TransferTickets::Refusal::DownloadOnly:
        return failure(405, QStringLiteral("a download URL takes GET only"), {{"Allow", "GET"}});
    case TransferTickets::Refusal::UploadOnly:
        return failure(405, QStringLiteral("an upload URL takes PUT only"), {{"Allow", "PUT"}});
    }
    return failure(404, unknownUrl());
}

void download(const QHttpServerRequest &request, QTcpSocket *socket, Ticket &ticket)
{
    RegularFile file = RegularFile::openForRead(*ticket.root, ticket.path);
    if (!file.ok()) {
        http::writeAnswer(socket, failure(404, file.error()));
        return;
    }
    const qint64 size = file.status().st_size;
    ByteRange range{0, size - 1};
    int status = 200;
    http::Headers headers{{"Content-Type", "application/octet-stream"}, {"Accept-Ranges", "bytes"}};
    if (const QByteArray asked = request.value("range"); !asked.isEmpty()) {
        const std::optional<ByteRange> parsed = parseRange(asked);
        if (!parsed || parsed->first >= size) {
            http::writeAnswer(
                    socket,
                    failure(416,
                            QStringLiteral("Range '%1' is not one range within the file's %2 "
                                           "bytes (bytes=first- or bytes=first-last)")
                                    .arg(QString::fromLatin1(asked))
                                    .arg(size),
                            {{"Content-Range", "bytes */" + QByteArray::number(size)}}));
            return;
        }
        range = {parsed->first, parsed->last < 0 ? size - 1 : qMin(parsed->last, size - 1)};
        status = 206;
        headers.append({"Content-Range",
                        "bytes " + QByteArray::number(range.first) + '-'
                                + QByteArray::number(range.last) + '/' + QByteArray::number(size)});
    }
    const qint64 length = size == 0 ? 0 : range.last - range.first + 1;
    QByteArray head =
            "HTTP/1.1 " + QByteArray::number(status) + ' ' + http::reasonPhrase(status) + "\r\n";
    for (const auto &[name, value] : headers)
        head += name + ": " + value + "\r\n";
    head += "Content-Length: " + QByteArray::number(length) + "\r\n\r\n";
    socket->write(head);
    UniqueFd fd(::dup(file.fd()));
    new FileStreamer(socket, std::move(fd), range.first, length);
}

void serve(TransferTickets &tickets, const QHttpServerRequest &request, QTcpSocket *socket,
           const Principal &principal)
{
    const bool get = request.method() == QHttpServerRequest::Method::Get;
    const bool put = request.method() == QHttpServerRequest::Method::Put;
    if (!get && !put) {
        http::writeAnswer(socket,
                          failure(405, QStringLiteral("a transfer URL takes GET or PUT"),
                                  {{"Allow", "GET, PUT"}}));
        return;
    }
    auto found = ticketFor(tickets, request.url().path(), put, principal);
    if (const auto *refusal = std::get_if<http::Answer>(&found)) {
        http::writeAnswer(socket, *refusal);
        return;
    }
    if (put) {
        // Uploads are streamed (receive()); only a PUT the framing could not tell for one, with
        // the URL in absolute form, arrives here.
        http::writeAnswer(socket,
                          failure(400,
                                  QStringLiteral("send the PUT to the URL's path "
                                                 "(PUT /transfer/..., not an absolute URL)")));
        return;
    }
    download(request, socket, *std::get<std::shared_ptr<Ticket>>(found));
}

// The body of a PUT from byte `first` has ended, whole or not (see StreamedBodyPlan).
http::Answer received(TransferTickets &tickets, const QString &token, Ticket &ticket, qint64 first,
                      qint64 written, int error)
{
    if (!ticket.temporary.isValid() || !tickets.holds(token))
        return failure(404, unknownUrl()); // expired while the body arrived
    if (error == ECONNABORTED) {
        // Cut off: what is on disk counts, and a part that starts there resumes it.
        ticket.received = first + written;
        spdlog::info("transfer: an upload to {} broke off after {} of {} bytes ({})",
                     ticket.path.display().toStdString(), ticket.received, ticket.total,
                     token.left(8).toStdString());
        return {};
    }
    if (error != 0) {
        ticket.discardTemporary();
        return failure(error == EDQUOT || error == ENOSPC ? 507 : 500,
                       QStringLiteral("the upload of %1 failed after %2 bytes and was "
                                      "discarded: %3%4")
                               .arg(ticket.path.display())
                               .arg(first + written)
                               .arg(errnoText(error),
                                    error == EDQUOT
                                            ? QStringLiteral(" (disk quota exceeded: the "
                                                             "workspace holds at most its quota)")
                                            : QString()));
    }
    ticket.received = first + written;
    if (ticket.received < ticket.total)
        return answer(202,
                      {{QLatin1String("success"), true},
                       {QLatin1String("received"), double(ticket.received)},
                       {QLatin1String("total"), double(ticket.total)}});
    // Whole: on disk first, then the name.
    const int fd = ticket.temporary.get();
    const QByteArray name = QFile::encodeName(ticket.path.name());
    struct stat existing
    {
    };
    const bool replaces =
            ::fstatat(ticket.parent.get(), name.constData(), &existing, AT_SYMLINK_NOFOLLOW) == 0;
    bool owned = false;
    if (replaces) {
        // The replaced file's owner (where this process may give it) and permissions stay.
        [[maybe_unused]] const int kept = ::fchown(fd, existing.st_uid, existing.st_gid);
        owned = ::fchmod(fd, existing.st_mode & 0777) == 0;
    } else {
        owned = ticket.workspace.adoptCreated(fd, false);
    }
    if (!owned || ::fsync(fd) != 0
        || ::renameat(ticket.parent.get(), ticket.temporaryName.constData(), ticket.parent.get(),
                      name.constData())
                != 0) {
        const int failed = errno;
        ticket.discardTemporary();
        return failure(500,
                       QStringLiteral("cannot put the upload in place at %1: %2")
                               .arg(ticket.path.display(), errnoText(failed)));
    }
    ticket.temporary = UniqueFd();
    fsyncDirectoryAt(ticket.parent.get(), ".");
    tickets.journal().forget(token);
    ticket.spent = true;
    spdlog::info("transfer: {} bytes uploaded to {} ({})", ticket.total,
                 ticket.path.display().toStdString(), token.left(8).toStdString());
    return answer(201,
                  {{QLatin1String("success"), true},
                   {QLatin1String("path"), ticket.path.display()},
                   {QLatin1String("size"), double(ticket.total)}});
}

StreamedBodyPlan receive(TransferTickets &tickets, const RequestHead &head,
                         const Principal &principal)
{
    auto found = ticketFor(tickets, head.path, head.method == "PUT", principal);
    if (auto *refusal = std::get_if<http::Answer>(&found))
        return refusedPlan(std::move(*refusal));
    const std::shared_ptr<Ticket> ticket = std::get<std::shared_ptr<Ticket>>(found);
    const qint64 length = head.contentLength();
    ContentRange part{0, length - 1, length};
    const QByteArray header = head.value("content-range");
    if (!header.isEmpty()) {
        const std::optional<ContentRange> parsed = parseContentRange(header);
        if (!parsed || parsed->last - parsed->first + 1 != length)
            return refusedPlan(failure(
                    400,
                    QStringLiteral("Content-Range '%1' is not bytes first-last/total for this "
                                   "body of %2 bytes")
                            .arg(QString::fromLatin1(header))
                            .arg(length)));
        part = *parsed;
    }
    if (part.total > tickets.maxBytes())
        return refusedPlan(failure(
                413,
                QStringLiteral("the file of %1 bytes is larger than TRANSFER_MAX_MB (%2 MB)")
                        .arg(part.total)
                        .arg(tickets.maxBytes() >> 20)));
    if (ticket->receiving)
        return refusedPlan(failure(409,
                                   QStringLiteral("another request is uploading to this URL now: "
                                                  "wait for its answer")));
    // A body without Content-Range is the whole file: it starts the upload afresh.
    if (header.isEmpty())
        ticket->discardTemporary();
    if ((ticket->total >= 0 && part.total != ticket->total) || part.first != ticket->received) {
        http::Headers extra;
        if (ticket->received > 0)
            extra.append({"Range", "bytes=0-" + QByteArray::number(ticket->received - 1)});
        return refusedPlan(answer(
                409,
                {{QLatin1String("success"), false},
                 {QLatin1String("error"),
                  QStringLiteral("this part starts at byte %1 of %2, but %3 of %4 have arrived: "
                                 "send the part that starts at %3")
                          .arg(part.first)
                          .arg(part.total)
                          .arg(ticket->received)
                          .arg(ticket->total >= 0 ? ticket->total : part.total)},
                 {QLatin1String("received"), double(ticket->received)}},
                extra));
    }
    if (!ticket->temporary.isValid()) {
        if (QString error; !tickets.journal().record(ticket->token, ticket->workspace.path(),
                                                     ticket->path, &error))
            return refusedPlan(failure(500, error));
        ::unlinkat(ticket->parent.get(), ticket->temporaryName.constData(), 0);
        ticket->temporary =
                UniqueFd(::openat(ticket->parent.get(), ticket->temporaryName.constData(),
                                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!ticket->temporary.isValid()) {
            const int failed = errno;
            tickets.journal().forget(ticket->token);
            return refusedPlan(failure(500,
                                       QStringLiteral("cannot create the upload's temporary "
                                                      "file: %1")
                                               .arg(errnoText(failed))));
        }
        ticket->total = part.total;
    }
    StreamedBodyPlan plan;
    plan.file = UniqueFd(::fcntl(ticket->temporary.get(), F_DUPFD_CLOEXEC, 0));
    if (!plan.file.isValid())
        return refusedPlan(
                failure(500, QStringLiteral("cannot write the upload: %1").arg(errnoText(errno))));
    plan.offset = part.first;
    ticket->receiving = true;
    const QString token = head.path.mid(TransferTickets::urlPrefix().size());
    plan.finish = [&tickets, ticket, token, part](qint64 written, int error) {
        ticket->receiving = false;
        return received(tickets, token, *ticket, part.first, written, error);
    };
    return plan;
}

} // namespace

void addTransferEndpoint(HttpServer &http, TransferTickets &tickets)
{
    http.addRoute(
            TransferTickets::urlPrefix(),
            [&tickets](const QHttpServerRequest &request, QTcpSocket *socket,
                       const Principal &principal) { serve(tickets, request, socket, principal); });
    http.setStreamedPutRoute(TransferTickets::urlPrefix(),
                             [&tickets](const RequestHead &head, const Principal &principal) {
                                 return receive(tickets, head, principal);
                             });
}

} // namespace cmcp
