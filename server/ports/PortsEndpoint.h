#pragma once

namespace cmcp {

class HttpServer;
class PublishedPorts;

// The door of the published ports on the daemon's HTTP listener: /ports/<token>/... takes its
// connection out of the HTTP parser (HttpServer::setTakenConnectionRoute) and forwards it to the
// port's server (PortForwarder), the rest of the path and the query as the server's request
// target. A public port needs only its URL; a private one the bearer token of the principal that
// published it: without a token 401, with another principal's 404, as for an unknown, revoked or
// expired token, so that tokens can be neither guessed nor confirmed. "/ports/<token>" without
// its slash is redirected to it, so that the server's relative links resolve under the prefix.
// `ports` must outlive `http`.
void addPortsEndpoint(HttpServer &http, PublishedPorts &ports);

} // namespace cmcp
