#pragma once

namespace cmcp {

class HttpServer;
class TransferTickets;

// The door of the transfer URLs on the HTTP transport: /transfer/<token> for the tickets of
// `tickets`, which must outlive `http`. The request must carry the same bearer token rules as
// /mcp, and a URL of another principal answers as an unknown one.
//
// A download (GET) streams the file from disk as the socket drains (a Range of bytes resumes a
// broken one); memory stays flat whatever the size. An upload (PUT) is streamed as well: its
// body never passes through Qt's parser (HttpServer::setStreamedPutRoute), so one PUT of the
// whole file or parts of any size with Content-Range (bytes first-last/total; without it the
// body is the whole file and starts the upload afresh) go to a temporary name beside the target,
// in order, renamed onto it once the last byte is on disk: the name holds the old content or
// the whole new one, never a part. A part that does not start where the received bytes end gets
// 409 with the Range received so far, to resume from; a body cut off keeps what reached the
// disk, to resume from there. A finished upload spends its ticket.
void addTransferEndpoint(HttpServer &http, TransferTickets &tickets);

} // namespace cmcp
