#include "workers/browser/BrowserWorker.h"

#include "workers/browser/BrowsePage.h"
#include "posix/WriteAll.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QWebEngineProfile>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace cmcp {

namespace {

constexpr qsizetype maxLineBytes = 1 << 20;

// A host as the policy writes it, from a proxy target: a URL or host:port.
QString hostOfTarget(const QString &target)
{
    const QUrl url = target.contains(QLatin1String("://"))
            ? QUrl(target)
            : QUrl(QStringLiteral("https://%1/").arg(target));
    std::optional<QHostAddress> literal;
    return canonicalHost(url.host(QUrl::FullyEncoded), &literal).value_or(QString());
}

} // namespace

BrowserWorker::BrowserWorker(EgressPolicy policy, qint64 maxBytes, QObject *parent)
    : QObject(parent),
      m_policy(std::move(policy)),
      m_maxBytes(maxBytes)
{
}

void BrowserWorker::start(const QString &sandboxOff)
{
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    m_input = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
    connect(m_input, &QSocketNotifier::activated, this, &BrowserWorker::onInput);
    // QtWebEngine starts Chromium (its browser side, the network service) with the first
    // profile: that happens here, so that "ready" means warm. Renderers are per page anyway
    // (every call has a profile of its own), so loading a page here would only delay the worker.
    delete new QWebEngineProfile;
    QJsonObject ready{{QStringLiteral("ready"), true},
                      {QStringLiteral("sandbox"), sandboxOff.isEmpty()}};
    if (!sandboxOff.isEmpty())
        ready.insert(QStringLiteral("sandbox_off"), sandboxOff);
    send(ready);
}

void BrowserWorker::onInput()
{
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n > 0) {
            m_buffer.append(chunk, n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        // End of input: the daemon is done with this worker.
        m_input->setEnabled(false);
        QCoreApplication::quit();
        return;
    }
    qsizetype newline;
    while ((newline = m_buffer.indexOf('\n')) >= 0) {
        const QByteArray line = m_buffer.left(newline);
        m_buffer.remove(0, newline + 1);
        handle(line);
    }
    if (m_buffer.size() > maxLineBytes)
        m_buffer.clear();
}

void BrowserWorker::handle(const QByteArray &line)
{
    const QJsonObject message = QJsonDocument::fromJson(line).object();
    // From a daemon whose gate serves this worker's network (--egress-port): a connection the
    // gate refused after resolution.
    if (message.contains(QLatin1String("refused"))) {
        onProxyRefused(message.value(QLatin1String("refused")).toString(),
                       message.value(QLatin1String("reason")).toString());
        return;
    }
    if (message.contains(QLatin1String("cancel"))) {
        const qint64 id = qint64(message.value(QLatin1String("cancel")).toDouble());
        if (QPointer<BrowsePage> page = m_pages.take(id))
            page->abandon();
        return;
    }
    BrowseRequest request;
    request.id = qint64(message.value(QLatin1String("id")).toDouble());
    request.url = QUrl(message.value(QLatin1String("url")).toString());
    request.waitFor = message.value(QLatin1String("wait_for")).toString();
    request.text = message.value(QLatin1String("text")).toBool();
    request.screenshot = message.value(QLatin1String("screenshot")).toBool();
    request.timeoutMs = message.value(QLatin1String("timeout_ms")).toInt(30000);
    request.maxBytes =
            qint64(message.value(QLatin1String("max_bytes")).toDouble(double(m_maxBytes)));
    auto *page = new BrowsePage(
            request, m_policy,
            [this](const QJsonObject &reply) {
                m_pages.remove(qint64(reply.value(QLatin1String("id")).toDouble()));
                send(reply);
            },
            this);
    m_pages.insert(request.id, page);
}

void BrowserWorker::onProxyRefused(const QString &target, const QString &reason)
{
    const QString host = hostOfTarget(target);
    for (const QPointer<BrowsePage> &page : std::as_const(m_pages)) {
        if (page)
            page->proxyRefused(host, target, reason);
    }
}

void BrowserWorker::send(const QJsonObject &message)
{
    const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    // A failure means the daemon is gone; the end of input will follow.
    writeAll(STDOUT_FILENO, line.constData(), size_t(line.size()));
}

} // namespace cmcp
