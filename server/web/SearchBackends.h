#pragma once

#include "web/WebFetcher.h"

#include <QList>
#include <QString>
#include <QUrl>

#include <memory>

namespace cmcp {

class Settings;

struct SearchHit
{
    QString title;
    QString url;
    QString snippet;
};

struct SearchPage
{
    bool ok = false;
    QString error;
    QList<SearchHit> hits;
};

// One search service behind web_search: how to ask it (a GET through the egress gate) and how
// to read its answer. Titles and snippets come back as plain text (services mark up the query's
// words in HTML).
class SearchBackend
{
public:
    virtual ~SearchBackend() = default;
    virtual QString name() const = 0;
    virtual FetchRequest request(const QString &query, int count) const = 0;
    virtual SearchPage read(const FetchResult &response, int count) const = 0;
};

// A SearXNG instance's JSON API: GET <base>/search?q=…&format=json.
std::shared_ptr<SearchBackend> makeSearxngBackend(const QUrl &base);
// The Brave Search API: GET <endpoint>?q=…&count=… with X-Subscription-Token.
std::shared_ptr<SearchBackend> makeBraveBackend(const QUrl &endpoint, const QByteArray &apiKey);

// WEB_SEARCH_URL (SearXNG) first, then BRAVE_SEARCH_API_KEY (Brave); empty when neither is set.
QList<std::shared_ptr<SearchBackend>> searchBackendsFromSettings(const Settings &settings);

// Text with its tags taken out, character references decoded and whitespace collapsed: what a
// search service's highlighted snippet says.
QString plainText(const QString &markup);

} // namespace cmcp
