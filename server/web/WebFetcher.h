#pragma once

#include "egress/EgressGate.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QPair>
#include <QSslCertificate>
#include <QUrl>

#include <functional>
#include <memory>

class QNetworkAccessManager;

namespace cmcp {

struct FetchRequest
{
    QUrl url;
    // Sent to the URL's own origin (Accept to every hop): an API key never follows a redirect
    // elsewhere. Host is the gate's to set.
    QList<QPair<QByteArray, QByteArray>> headers;
    qint64 maxBytes = 10 * 1024 * 1024; // WEB_MAX_BYTES
    int timeoutMs = 30000; // WEB_TIMEOUT_DEFAULT, for all hops together
    int maxRedirects = 10;
    // The gate every hop of this fetch passes (a snapshot of the live policy); null: the
    // fetcher's own.
    std::shared_ptr<const EgressGate> gate;
};

struct FetchResult
{
    // A final response (any status but a followed redirect) arrived within the limits.
    bool ok = false;
    QString error; // why not: a refusal naming its rule, a limit, a network error
    QUrl url; // the last URL requested (the final one after redirects)
    QList<QUrl> redirects; // every Location followed, in order
    int status = 0;
    QByteArray reason;
    QByteArray contentType; // the Content-Type header as sent
    QByteArray body; // decompressed; at most maxBytes
    QHostAddress address; // the checked address the final response came from
};

// GET over HTTP(S) through the egress gate, for web_scrape and web_search. Each hop's URL is
// decided by the gate (one resolution), and the request goes to the checked address itself:
// the URL given to Qt names the IP, the Host header and the TLS peer name (SNI and certificate
// check, QNetworkRequest::setPeerVerifyName) name the host. Redirects are followed by hand and
// every hop is decided again. The body is cut off at maxBytes by aborting the download, and the
// whole fetch, redirects included, ends at timeoutMs. No proxy, cookies, cache or HTTP/2 (which
// would send the IP as :authority).
class WebFetcher : public QObject
{
    Q_OBJECT
public:
    using Callback = std::function<void(const FetchResult &result)>;

    explicit WebFetcher(std::shared_ptr<const EgressGate> gate, QObject *parent = nullptr);
    ~WebFetcher() override;

    // Calls back exactly once, later, unless aborted first. Returns an id for abort().
    quint64 fetch(const FetchRequest &request, Callback callback);
    // Stops a running fetch without calling it back; unknown or finished ids are ignored.
    void abort(quint64 id);

    // Certificate authorities trusted beside the system's (the tests' own CA).
    void addCaCertificates(const QList<QSslCertificate> &certificates);

private:
    friend class FetchJob;
    void finished(quint64 id);

    std::shared_ptr<const EgressGate> m_gate;
    QNetworkAccessManager *m_network;
    QList<QSslCertificate> m_extraCertificates;
    QHash<quint64, class FetchJob *> m_jobs;
    quint64 m_nextId = 1;
};

} // namespace cmcp
