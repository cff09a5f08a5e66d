#pragma once

#include "base/LiveSnapshot.h"
#include "web/SearchBackends.h"
#include "web/WebPolicy.h"

#include <QHash>
#include <QObject>

#include <functional>

namespace cmcp {

struct SearchOutcome
{
    bool success = false;
    QString error;
    QList<SearchHit> results;
    QString backend; // the one that answered
};

// web_search: asks the configured back ends in order (SearXNG, then Brave), through the egress
// gate, until one answers; when all fail, the error says what each said.
class WebSearch : public QObject
{
    Q_OBJECT
public:
    // Fixed limits, through the fetcher's gate.
    WebSearch(WebFetcher *fetcher, QList<std::shared_ptr<SearchBackend>> backends, qint64 maxBytes,
              int timeoutMs, QObject *parent = nullptr);
    // Limits and gate the admin channel may replace; each search reads them once, at its start.
    WebSearch(WebFetcher *fetcher, QList<std::shared_ptr<SearchBackend>> backends,
              std::shared_ptr<const LiveSnapshot<WebPolicy>> policy, QObject *parent = nullptr);

    bool configured() const { return !m_backends.isEmpty(); }
    QStringList backendNames() const;

    using Callback = std::function<void(const SearchOutcome &outcome)>;
    // Calls back exactly once, later, unless cancelled first.
    quint64 search(const QString &query, int count, Callback callback);
    void cancel(quint64 id);

private:
    struct Running
    {
        QString query;
        int count = 10;
        qsizetype backend = 0;
        QStringList errors;
        quint64 fetchId = 0;
        Callback callback;
        std::shared_ptr<const WebPolicy> policy; // for every back end asked
    };
    void ask(quint64 id);

    WebFetcher *m_fetcher;
    QList<std::shared_ptr<SearchBackend>> m_backends;
    std::shared_ptr<const LiveSnapshot<WebPolicy>> m_policy;
    QHash<quint64, Running> m_running;
    quint64 m_nextId = 1;
};

} // namespace cmcp
