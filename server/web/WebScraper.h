#pragma once

#include "web/HtmlWorkerPool.h"
#include "base/LiveSnapshot.h"
#include "web/WebFetcher.h"
#include "web/WebPolicy.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QUrl>

#include <functional>
#include <memory>

namespace cmcp {

struct ScrapeRequest
{
    QUrl url;
    QString selector; // empty: the readable text of the whole page
    bool markdown = false;
};

struct ScrapeResult
{
    bool success = false;
    QString error;
    QString url; // the final URL, after redirects
    QString title;
    QString content;
    int status = 0;
    QString contentType;
    int matches = -1; // elements the selector matched; -1 without a selector
    bool truncated = false; // the text was cut at the size limit
};

// web_scrape: fetches a page through the egress gate (WebFetcher), decodes it to UTF-8, and has a
// cmcp-html helper parse it with gumbo, pick parts with a CSS selector and turn them into text
// or Markdown. A selector is checked before anything is fetched; the parse gets what is left of
// WEB_TIMEOUT_DEFAULT after the fetch.
class WebScraper : public QObject
{
    Q_OBJECT
public:
    // Fixed limits, through the fetcher's gate.
    WebScraper(WebFetcher *fetcher, HtmlWorkerPool *parsers, qint64 maxBytes, int timeoutMs,
               QObject *parent = nullptr);
    // Limits and gate the admin channel may replace; each scrape reads them once, at its start.
    WebScraper(WebFetcher *fetcher, HtmlWorkerPool *parsers,
               std::shared_ptr<const LiveSnapshot<WebPolicy>> policy, QObject *parent = nullptr);

    using Callback = std::function<void(const ScrapeResult &result)>;
    // Calls back exactly once, later, unless cancelled first. Returns an id for cancel().
    quint64 scrape(const ScrapeRequest &request, Callback callback);
    void cancel(quint64 id);

private:
    struct Running
    {
        quint64 fetchId = 0;
        quint64 parseId = 0; // set once the page is with a parser
    };
    void parse(quint64 id, const ScrapeRequest &request, const FetchResult &fetched,
               const WebPolicy &policy, qint64 startedMs, Callback callback);

    WebFetcher *m_fetcher;
    HtmlWorkerPool *m_parsers;
    std::shared_ptr<const LiveSnapshot<WebPolicy>> m_policy;
    QHash<quint64, Running> m_running;
    quint64 m_nextId = 1;
};

} // namespace cmcp
