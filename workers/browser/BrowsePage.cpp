#include "workers/browser/BrowsePage.h"

#include "egress/EgressPolicy.h"
#include "egress/EgressProxy.h"
#include "workers/browser/GateInterceptor.h"

#include <QBuffer>
#include <QJsonDocument>
#include <QWebEngineLoadingInfo>
#include <QWebEngineNewWindowRequest>
#include <QWebEnginePage>
#include <QWebEngineProfile>
#include <QWebEngineScript>
#include <QWebEngineDownloadRequest>
#include <QWebEngineSettings>
#include <QWebEngineView>

namespace cmcp {

namespace {

constexpr int pollMs = 50;
constexpr int quietMs = 500;
constexpr int maxBlockedReported = 100;

// A page that answers every dialog at once: offscreen nobody would, and a modal dialog would
// stop the worker.
class HeadlessPage : public QWebEnginePage
{
public:
    using QWebEnginePage::QWebEnginePage;

protected:
    void javaScriptAlert(const QUrl &, const QString &) override { }
    bool javaScriptConfirm(const QUrl &, const QString &) override { return false; }
    bool javaScriptPrompt(const QUrl &, const QString &, const QString &, QString *) override
    {
        return false;
    }
    void javaScriptConsoleMessage(JavaScriptConsoleMessageLevel, const QString &, int,
                                  const QString &) override
    {
    }
};

QString cutUtf8(const QString &text, qint64 maxBytes, bool *truncated)
{
    QByteArray utf8 = text.toUtf8();
    *truncated = utf8.size() > maxBytes;
    if (!*truncated)
        return text;
    utf8.truncate(maxBytes);
    // Drop a partial character at the end.
    while (!utf8.isEmpty() && (uchar(utf8.back()) & 0xC0) == 0x80)
        utf8.chop(1);
    if (!utf8.isEmpty() && uchar(utf8.back()) >= 0xC0)
        utf8.chop(1);
    return QString::fromUtf8(utf8);
}

QString jsString(const QString &text)
{
    const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(array.mid(1, array.size() - 2));
}

} // namespace

BrowsePage::BrowsePage(const BrowseRequest &request, const EgressPolicy &policy, Reply reply,
                       QObject *parent)
    : QObject(parent),
      m_request(request),
      m_reply(std::move(reply))
{
    // No storage name: off the record, in memory, gone with the page.
    m_profile = new QWebEngineProfile(this);
    m_profile->setHttpCacheType(QWebEngineProfile::MemoryHttpCache);
    m_profile->setPersistentCookiesPolicy(QWebEngineProfile::NoPersistentCookies);
    connect(m_profile, &QWebEngineProfile::downloadRequested, this,
            [](QWebEngineDownloadRequest *download) { download->cancel(); });
    auto *interceptor = new GateInterceptor(policy, this);
    m_profile->setUrlRequestInterceptor(interceptor);
    connect(interceptor, &GateInterceptor::requested, this,
            [this](const QString &host) { m_hosts.insert(host); });
    connect(interceptor, &GateInterceptor::blocked, this,
            [this](const QUrl &url, const QString &reason, bool mainFrame) {
                if (mainFrame && m_mainRefusal.isEmpty() && !m_loaded)
                    m_mainRefusal = reason;
                addBlocked(url.toString(), reason);
            });

    m_page = new HeadlessPage(m_profile, this);
    QWebEngineSettings *settings = m_page->settings();
    settings->setAttribute(QWebEngineSettings::PluginsEnabled, false);
    settings->setAttribute(QWebEngineSettings::JavascriptCanOpenWindows, false);
    settings->setAttribute(QWebEngineSettings::LocalContentCanAccessRemoteUrls, false);
    settings->setAttribute(QWebEngineSettings::LocalContentCanAccessFileUrls, false);
    settings->setAttribute(QWebEngineSettings::DnsPrefetchEnabled, false);
    settings->setAttribute(QWebEngineSettings::WebRTCPublicInterfacesOnly, true);
    settings->setAttribute(QWebEngineSettings::PdfViewerEnabled, false);
    connect(m_page, &QWebEnginePage::newWindowRequested, this,
            [](QWebEngineNewWindowRequest &) { /* no pop-ups: nothing opens */ });
    connect(m_page, &QWebEnginePage::featurePermissionRequested, this,
            [this](const QUrl &origin, QWebEnginePage::Feature feature) {
                m_page->setFeaturePermission(origin, feature,
                                             QWebEnginePage::PermissionDeniedByUser);
            });
    connect(m_page, &QWebEnginePage::loadingChanged, this,
            [this](const QWebEngineLoadingInfo &info) {
                if (info.status() == QWebEngineLoadingInfo::LoadFailedStatus
                    && m_loadError.isEmpty())
                    m_loadError = info.errorString();
            });
    connect(m_page, &QWebEnginePage::loadFinished, this, &BrowsePage::onLoadFinished);
    // The daemon, which sees the worker's cgroup, tells a renderer its memory limit killed.
    connect(m_page, &QWebEnginePage::renderProcessTerminated, this,
            [this](QWebEnginePage::RenderProcessTerminationStatus, int exitCode) {
                fail(QStringLiteral("the page's renderer process ended (exit code %1)")
                             .arg(exitCode));
            });

    if (m_request.screenshot) {
        m_view = new QWebEngineView;
        m_view->setAttribute(Qt::WA_DontShowOnScreen);
        m_view->setPage(m_page);
        m_view->resize(1280, 800);
        m_view->show();
    }

    m_deadline.setSingleShot(true);
    m_deadline.setTimerType(Qt::PreciseTimer);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        if (!m_loaded)
            fail(QStringLiteral("%1 did not finish loading within %2 s (WEB_TIMEOUT_DEFAULT)")
                         .arg(m_request.url.toString())
                         .arg(m_request.timeoutMs / 1000.0));
        else
            fail(QStringLiteral("wait_for '%1' was not met within %2 s (WEB_TIMEOUT_DEFAULT)")
                         .arg(m_request.waitFor)
                         .arg(m_request.timeoutMs / 1000.0));
    });
    m_deadline.start(m_request.timeoutMs);
    m_poll.setSingleShot(true);
    connect(&m_poll, &QTimer::timeout, this, &BrowsePage::waitThenCollect);

    // The first check needs no page: a refused URL is answered without starting a load.
    const EgressCheck check = policy.checkUrl(m_request.url);
    if (!check.target) {
        QMetaObject::invokeMethod(
                this, [this, refusal = check.refusal] { fail(refusal); }, Qt::QueuedConnection);
        return;
    }
    m_page->load(m_request.url);
}

BrowsePage::~BrowsePage()
{
    // The page must go before its profile, and the view does not own the page.
    delete m_view;
    delete m_page;
    m_page = nullptr;
}

void BrowsePage::proxyRefused(const QString &host, const QString &target, const QString &reason)
{
    if (!m_hosts.contains(host))
        return;
    if (!m_loaded && m_mainRefusal.isEmpty()
        && m_request.url.host(QUrl::FullyEncoded).toLower() == host)
        m_mainRefusal = reason;
    addBlocked(target, reason);
}

void BrowsePage::abandon()
{
    m_done = true;
    deleteLater();
}

void BrowsePage::addBlocked(const QString &url, const QString &reason)
{
    if (m_blocked.size() < maxBlockedReported)
        m_blocked.append(
                QJsonObject{{QStringLiteral("url"), url}, {QStringLiteral("reason"), reason}});
}

void BrowsePage::onLoadFinished(bool ok)
{
    if (m_done || m_loaded)
        return;
    if (!m_mainRefusal.isEmpty()) {
        fail(m_mainRefusal);
        return;
    }
    if (!ok) {
        fail(QStringLiteral("%1 could not be loaded: %2")
                     .arg(m_request.url.toString(),
                          m_loadError.isEmpty() ? QStringLiteral("load failed") : m_loadError));
        return;
    }
    if (m_page->title() == QLatin1String(EgressProxy::pageTitle)) {
        // The proxy answered for the page itself (plain http: a refusal that has not reached
        // this page by signal yet, or a server it could not reach): its text says why.
        m_page->toPlainText([this](const QString &text) { fail(text.trimmed()); });
        return;
    }
    m_loaded = true;
    waitThenCollect();
}

void BrowsePage::waitThenCollect()
{
    if (m_done)
        return;
    const QString &waitFor = m_request.waitFor;
    if (waitFor.isEmpty() || waitFor == QLatin1String("load")) {
        collect();
        return;
    }
    QString script;
    if (waitFor == QLatin1String("quiet")) {
        // Milliseconds since the DOM last changed, as a MutationObserver in the isolated world
        // sees it (the page's own scripts cannot touch it).
        script = QStringLiteral(
                "(() => { const q = window.__cmcpQuiet || (window.__cmcpQuiet = (() => {"
                " const s = { last: performance.now() };"
                " new MutationObserver(() => { s.last = performance.now(); }).observe(document,"
                " { subtree: true, childList: true, attributes: true, characterData: true });"
                " return s; })()); return performance.now() - q.last; })()");
    } else {
        script = QStringLiteral("(() => { try { return document.querySelector(%1) !== null; }"
                                " catch (e) { return 'invalid'; } })()")
                         .arg(jsString(waitFor));
    }
    m_page->runJavaScript(
            script, QWebEngineScript::ApplicationWorld, [this](const QVariant &value) {
                if (m_done)
                    return;
                if (value.toString() == QLatin1String("invalid")) {
                    fail(QStringLiteral(
                                 "wait_for '%1' is neither load, quiet nor a valid CSS selector")
                                 .arg(m_request.waitFor));
                    return;
                }
                const bool met = m_request.waitFor == QLatin1String("quiet")
                        ? value.toDouble() >= quietMs
                        : value.toBool();
                if (met)
                    collect();
                else
                    m_poll.start(pollMs);
            });
}

void BrowsePage::collect()
{
    if (m_done)
        return;
    auto withContent = [this](const QString &content) { finishWithContent(content); };
    if (m_request.text)
        m_page->toPlainText(withContent);
    else
        m_page->toHtml(withContent);
}

void BrowsePage::finishWithContent(const QString &content)
{
    if (m_done)
        return;
    bool truncated = false;
    QJsonObject reply{{QStringLiteral("ok"), true},
                      {QStringLiteral("url"), m_page->url().toString()},
                      {QStringLiteral("title"), m_page->title()},
                      {QStringLiteral("content"), cutUtf8(content, m_request.maxBytes, &truncated)},
                      {QStringLiteral("format"),
                       m_request.text ? QStringLiteral("text") : QStringLiteral("html")},
                      {QStringLiteral("blocked"), m_blocked}};
    reply.insert(QStringLiteral("truncated"), truncated);
    if (m_view) {
        QBuffer png;
        png.open(QIODevice::WriteOnly);
        m_view->grab().save(&png, "PNG");
        reply.insert(QStringLiteral("screenshot"), QString::fromLatin1(png.data().toBase64()));
    }
    answer(reply);
}

void BrowsePage::fail(const QString &error)
{
    if (m_done)
        return;
    answer(QJsonObject{{QStringLiteral("ok"), false},
                       {QStringLiteral("error"), error},
                       {QStringLiteral("blocked"), m_blocked}});
}

void BrowsePage::answer(QJsonObject reply)
{
    m_done = true;
    m_deadline.stop();
    m_poll.stop();
    reply.insert(QStringLiteral("id"), double(m_request.id));
    m_reply(reply);
    deleteLater();
}

} // namespace cmcp
