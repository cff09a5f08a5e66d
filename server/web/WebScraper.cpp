#include "web/WebScraper.h"

#include "html/CssSelector.h"
#include "web/PageText.h"

#include <QDateTime>

namespace cmcp {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

ScrapeResult failure(const QString &error, const QString &url = {})
{
    ScrapeResult result;
    result.error = error;
    result.url = url;
    return result;
}

} // namespace

WebScraper::WebScraper(WebFetcher *fetcher, HtmlWorkerPool *parsers, qint64 maxBytes, int timeoutMs,
                       QObject *parent)
    : WebScraper(fetcher, parsers,
                 std::make_shared<LiveSnapshot<WebPolicy>>(std::make_shared<const WebPolicy>(
                         WebPolicy{nullptr, maxBytes, timeoutMs})),
                 parent)
{
}

WebScraper::WebScraper(WebFetcher *fetcher, HtmlWorkerPool *parsers,
                       std::shared_ptr<const LiveSnapshot<WebPolicy>> policy, QObject *parent)
    : QObject(parent),
      m_fetcher(fetcher),
      m_parsers(parsers),
      m_policy(std::move(policy))
{
}

quint64 WebScraper::scrape(const ScrapeRequest &request, Callback callback)
{
    const quint64 id = m_nextId++;
    // A selector that cannot be used is refused before anything is fetched.
    if (!request.selector.isEmpty()) {
        const css::ParseResult parsed = css::parseSelectorList(request.selector.toStdString());
        if (!parsed.selectors) {
            const ScrapeResult refused = failure(QString::fromStdString(parsed.error));
            QMetaObject::invokeMethod(
                    this, [callback, refused] { callback(refused); }, Qt::QueuedConnection);
            return id;
        }
    }
    const std::shared_ptr<const WebPolicy> policy = m_policy->current();
    FetchRequest fetch;
    fetch.url = request.url;
    fetch.maxBytes = policy->maxBytes;
    fetch.timeoutMs = policy->timeoutMs;
    fetch.gate = policy->gate;
    const qint64 started = nowMs();
    Running running;
    running.fetchId = m_fetcher->fetch(
            fetch, [this, id, request, policy, started, callback](const FetchResult &fetched) {
                if (!m_running.contains(id))
                    return;
                if (!fetched.ok) {
                    m_running.remove(id);
                    callback(failure(fetched.error, fetched.url.toString()));
                    return;
                }
                if (fetched.status >= 400) {
                    m_running.remove(id);
                    const QString reason = QString::fromLatin1(fetched.reason).trimmed();
                    callback(failure(
                            QStringLiteral("HTTP %1%2 from %3")
                                    .arg(fetched.status)
                                    .arg(reason.isEmpty() ? QString() : QLatin1Char(' ') + reason,
                                         fetched.url.toString()),
                            fetched.url.toString()));
                    return;
                }
                parse(id, request, fetched, *policy, started, callback);
            });
    m_running.insert(id, running);
    return id;
}

void WebScraper::parse(quint64 id, const ScrapeRequest &request, const FetchResult &fetched,
                       const WebPolicy &policy, qint64 startedMs, Callback callback)
{
    ScrapeResult result;
    result.url = fetched.url.toString();
    result.status = fetched.status;
    result.contentType = QString::fromLatin1(fetched.contentType);
    const BodyKind kind = bodyKind(fetched.contentType, fetched.body);
    if (kind == BodyKind::Binary) {
        m_running.remove(id);
        callback(failure(QStringLiteral("%1 is not a text page (Content-Type: %2)")
                                 .arg(result.url, result.contentType),
                         result.url));
        return;
    }
    QByteArray utf8 = bodyAsUtf8(fetched.contentType, fetched.body, kind);
    if (kind == BodyKind::Text) {
        m_running.remove(id);
        if (!request.selector.isEmpty()) {
            callback(failure(QStringLiteral("a selector needs an HTML page; %1 is %2")
                                     .arg(result.url, result.contentType),
                             result.url));
            return;
        }
        result.success = true;
        result.truncated = utf8.size() > policy.maxBytes;
        result.content = QString::fromUtf8(utf8.left(policy.maxBytes));
        callback(result);
        return;
    }
    HtmlTask task;
    task.selector = request.selector;
    task.markdown = request.markdown;
    task.baseUrl = fetched.url.toString(QUrl::FullyEncoded);
    task.maxBytes = policy.maxBytes;
    // What is left of the call's time, but never less than a second for the parse.
    task.timeMs = int(std::max<qint64>(1000, policy.timeoutMs - (nowMs() - startedMs)));
    // gumbo needs about 20 bytes of tree per byte of dense markup.
    task.memoryBytes = std::max<qint64>(qint64(256) << 20, qint64(utf8.size()) * 40);
    task.html = std::move(utf8);
    m_running[id].parseId = m_parsers->run(
            std::move(task), [this, id, result, callback](const HtmlTaskResult &parsed) {
                if (!m_running.remove(id))
                    return;
                ScrapeResult done = result;
                if (!parsed.ok) {
                    done.error = parsed.error;
                    callback(done);
                    return;
                }
                done.success = true;
                done.title = parsed.title;
                done.content = parsed.text;
                done.matches = parsed.matches;
                done.truncated = parsed.truncated;
                callback(done);
            });
}

void WebScraper::cancel(quint64 id)
{
    const auto found = m_running.find(id);
    if (found == m_running.end())
        return;
    m_fetcher->abort(found->fetchId);
    if (found->parseId)
        m_parsers->cancel(found->parseId);
    m_running.erase(found);
}

} // namespace cmcp
