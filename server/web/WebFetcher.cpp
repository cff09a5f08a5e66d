#include "web/WebFetcher.h"

#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QSslConfiguration>
#include <QTimer>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

const QByteArray userAgent =
        QByteArrayLiteral("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                          "Container-MCP/" CMCP_VERSION);

bool isRedirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Errors after which nothing was exchanged with the server: the next checked address is tried.
bool failedToConnect(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
        return true;
    default:
        return false;
    }
}

} // namespace

// One fetch: its hops, its deadline, its reply.
class FetchJob : public QObject
{
public:
    FetchJob(WebFetcher *fetcher, quint64 id, FetchRequest request, WebFetcher::Callback callback)
        : QObject(fetcher),
          m_fetcher(fetcher),
          m_id(id),
          m_request(std::move(request)),
          m_gate(m_request.gate ? m_request.gate : fetcher->m_gate),
          m_callback(std::move(callback))
    {
        m_deadline.setSingleShot(true);
        // A coarse timer may fire 5 % early: a limit is a limit.
        m_deadline.setTimerType(Qt::PreciseTimer);
        connect(&m_deadline, &QTimer::timeout, this, [this] {
            fail(QStringLiteral("no complete answer from %1 within %2 s (WEB_TIMEOUT_DEFAULT)")
                         .arg(m_result.url.toString())
                         .arg(m_request.timeoutMs / 1000.0));
        });
    }

    ~FetchJob() override { dropReply(); }

    void start()
    {
        m_deadline.start(m_request.timeoutMs);
        hop(m_request.url);
    }

private:
    void hop(const QUrl &url)
    {
        m_result.url = url;
        m_gate->decide(url, this, [this](const EgressDecision &decision) {
            if (!decision.allowed()) {
                fail(m_result.redirects.isEmpty()
                             ? decision.refusal
                             : QStringLiteral("%1 (redirected to %2)")
                                       .arg(decision.refusal, m_result.url.toString()));
                return;
            }
            m_decision = decision;
            m_addressIndex = 0;
            send();
        });
    }

    void send()
    {
        const EgressTarget &target = m_decision.target;
        const QHostAddress &address = m_decision.addresses.at(m_addressIndex);
        QUrl connectUrl = m_result.url;
        connectUrl.setUserInfo({});
        connectUrl.setFragment({});
        connectUrl.setHost(address.toString());
        connectUrl.setPort(target.port);
        QNetworkRequest request(connectUrl);
        request.setRawHeader("Host", target.authority().toLatin1());
        if (target.scheme == QLatin1String("https") && !target.literal)
            request.setPeerVerifyName(target.host);
        if (!m_fetcher->m_extraCertificates.isEmpty()) {
            QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
            tls.addCaCertificates(m_fetcher->m_extraCertificates);
            request.setSslConfiguration(tls);
        }
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                             QNetworkRequest::ManualRedirectPolicy);
        request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                             QNetworkRequest::AlwaysNetwork);
        request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
        request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
        // Qt's own decompression-bomb check would stop large, well-compressed pages that are
        // within WEB_MAX_BYTES; the cap below bounds the decompressed bytes instead.
        request.setDecompressedSafetyCheckThreshold(-1);
        request.setRawHeader("User-Agent", userAgent);
        request.setRawHeader("Accept-Language", "en-US,en;q=0.8");
        // The caller's headers (an API key among them) go to the origin it asked for, and to
        // no other that a redirect names.
        const bool sameOrigin = m_result.url.scheme() == m_request.url.scheme()
                && m_result.url.host().compare(m_request.url.host(), Qt::CaseInsensitive) == 0
                && m_result.url.port(target.port) == m_request.url.port(target.port);
        bool acceptSet = false;
        for (const auto &[name, value] : m_request.headers) {
            const bool accept = name.compare("accept", Qt::CaseInsensitive) == 0;
            if (!sameOrigin && !accept)
                continue;
            request.setRawHeader(name, value);
            acceptSet = acceptSet || accept;
        }
        if (!acceptSet)
            request.setRawHeader("Accept",
                                 "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
        spdlog::debug("web: GET {} at {}", m_result.url.toString().toStdString(),
                      address.toString().toStdString());
        m_result.body.clear();
        m_result.status = 0;
        m_reply = m_fetcher->m_network->get(request);
        connect(m_reply, &QNetworkReply::metaDataChanged, this, &FetchJob::onMetaData);
        connect(m_reply, &QNetworkReply::readyRead, this, &FetchJob::onReadyRead);
        connect(m_reply, &QNetworkReply::finished, this, &FetchJob::onFinished);
    }

    void onMetaData()
    {
        m_result.status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (isRedirect(m_result.status))
            return;
        const QVariant length = m_reply->header(QNetworkRequest::ContentLengthHeader);
        // Content-Length counts the encoded bytes; a compressed body is checked as it inflates.
        if (length.isValid() && length.toLongLong() > m_request.maxBytes
            && m_reply->rawHeader("Content-Encoding").isEmpty())
            fail(tooLarge());
    }

    void onReadyRead()
    {
        if (isRedirect(m_result.status)) {
            // A redirect's body is not used: drained, never kept.
            m_reply->skip(m_reply->bytesAvailable());
            return;
        }
        m_result.body.append(m_reply->read(m_request.maxBytes + 1 - m_result.body.size()));
        if (m_result.body.size() > m_request.maxBytes)
            fail(tooLarge());
    }

    void onFinished()
    {
        QNetworkReply *reply = m_reply;
        const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (!status.isValid()) {
            if (failedToConnect(reply->error())
                && m_addressIndex + 1 < m_decision.addresses.size()) {
                dropReply();
                ++m_addressIndex;
                send();
                return;
            }
            fail(QStringLiteral("cannot fetch %1: %2")
                         .arg(m_result.url.toString(), reply->errorString()));
            return;
        }
        m_result.status = status.toInt();
        if (isRedirect(m_result.status)) {
            const QByteArray location = reply->rawHeader("Location");
            if (location.isEmpty()) {
                succeed(reply);
                return;
            }
            if (m_result.redirects.size() >= m_request.maxRedirects) {
                fail(QStringLiteral("more than %1 redirects, the last to %2")
                             .arg(m_request.maxRedirects)
                             .arg(QString::fromLatin1(location)));
                return;
            }
            const QUrl next = m_result.url.resolved(QUrl::fromEncoded(location));
            m_result.redirects.append(next);
            dropReply();
            hop(next);
            return;
        }
        // Anything left in the buffer (readyRead may not have drained it).
        onReadyRead();
        if (m_done)
            return;
        // HTTP statuses come as errors of 200 and above (404 is ContentNotFoundError); below 100
        // the transfer itself broke off, so the body is incomplete.
        if (reply->error() > QNetworkReply::NoError && reply->error() < 100) {
            fail(QStringLiteral("the answer from %1 broke off: %2")
                         .arg(m_result.url.toString(), reply->errorString()));
            return;
        }
        succeed(reply);
    }

    QString tooLarge() const
    {
        return QStringLiteral("the response from %1 is larger than WEB_MAX_BYTES (%2 bytes); the "
                              "download was stopped")
                .arg(m_result.url.toString())
                .arg(m_request.maxBytes);
    }

    void succeed(QNetworkReply *reply)
    {
        m_result.ok = true;
        m_result.reason =
                reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray();
        m_result.contentType = reply->rawHeader("Content-Type");
        m_result.address = m_decision.addresses.value(m_addressIndex);
        finish();
    }

    void fail(const QString &error)
    {
        m_result.ok = false;
        m_result.error = error;
        m_result.body.clear();
        finish();
    }

    void finish()
    {
        if (m_done)
            return;
        m_done = true;
        m_deadline.stop();
        dropReply();
        const WebFetcher::Callback callback = std::move(m_callback);
        const FetchResult result = std::move(m_result);
        m_fetcher->finished(m_id);
        callback(result);
    }

    void dropReply()
    {
        if (!m_reply)
            return;
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }

    WebFetcher *m_fetcher;
    const quint64 m_id;
    const FetchRequest m_request;
    const std::shared_ptr<const EgressGate> m_gate;
    WebFetcher::Callback m_callback;
    FetchResult m_result;
    EgressDecision m_decision;
    qsizetype m_addressIndex = 0;
    QPointer<QNetworkReply> m_reply;
    QTimer m_deadline;
    bool m_done = false;
};

WebFetcher::WebFetcher(std::shared_ptr<const EgressGate> gate, QObject *parent)
    : QObject(parent),
      m_gate(std::move(gate)),
      m_network(new QNetworkAccessManager(this))
{
    // A proxy would resolve names itself, behind the gate's back.
    m_network->setProxy(QNetworkProxy::NoProxy);
    m_network->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
    m_network->setStrictTransportSecurityEnabled(false);
}

WebFetcher::~WebFetcher() = default;

quint64 WebFetcher::fetch(const FetchRequest &request, Callback callback)
{
    const quint64 id = m_nextId++;
    auto *job = new FetchJob(this, id, request, std::move(callback));
    m_jobs.insert(id, job);
    job->start();
    return id;
}

void WebFetcher::abort(quint64 id)
{
    if (FetchJob *job = m_jobs.take(id))
        job->deleteLater();
}

void WebFetcher::finished(quint64 id)
{
    if (FetchJob *job = m_jobs.take(id))
        job->deleteLater();
}

void WebFetcher::addCaCertificates(const QList<QSslCertificate> &certificates)
{
    m_extraCertificates.append(certificates);
}

} // namespace cmcp
