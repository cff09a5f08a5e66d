#include "web/WebSearch.h"

namespace cmcp {

WebSearch::WebSearch(WebFetcher *fetcher, QList<std::shared_ptr<SearchBackend>> backends,
                     qint64 maxBytes, int timeoutMs, QObject *parent)
    : WebSearch(fetcher, std::move(backends),
                std::make_shared<LiveSnapshot<WebPolicy>>(
                        std::make_shared<const WebPolicy>(WebPolicy{nullptr, maxBytes, timeoutMs})),
                parent)
{
}

WebSearch::WebSearch(WebFetcher *fetcher, QList<std::shared_ptr<SearchBackend>> backends,
                     std::shared_ptr<const LiveSnapshot<WebPolicy>> policy, QObject *parent)
    : QObject(parent),
      m_fetcher(fetcher),
      m_backends(std::move(backends)),
      m_policy(std::move(policy))
{
}

QStringList WebSearch::backendNames() const
{
    QStringList names;
    for (const auto &backend : m_backends)
        names.append(backend->name());
    return names;
}

quint64 WebSearch::search(const QString &query, int count, Callback callback)
{
    const quint64 id = m_nextId++;
    Running running;
    running.query = query;
    running.count = count;
    running.callback = std::move(callback);
    running.policy = m_policy->current();
    m_running.insert(id, std::move(running));
    if (m_backends.isEmpty()) {
        QMetaObject::invokeMethod(
                this,
                [this, id] {
                    if (Running done = m_running.take(id); done.callback)
                        done.callback({false,
                                       QStringLiteral("web_search has no search back end: set "
                                                      "WEB_SEARCH_URL (a SearXNG instance with its "
                                                      "JSON format enabled) or "
                                                      "BRAVE_SEARCH_API_KEY (the Brave Search "
                                                      "API)"),
                                       {},
                                       {}});
                },
                Qt::QueuedConnection);
        return id;
    }
    ask(id);
    return id;
}

void WebSearch::ask(quint64 id)
{
    Running &running = m_running[id];
    const std::shared_ptr<SearchBackend> backend = m_backends.at(running.backend);
    FetchRequest request = backend->request(running.query, running.count);
    request.maxBytes = running.policy->maxBytes;
    request.timeoutMs = running.policy->timeoutMs;
    request.gate = running.policy->gate;
    running.fetchId = m_fetcher->fetch(request, [this, id, backend](const FetchResult &response) {
        auto found = m_running.find(id);
        if (found == m_running.end())
            return;
        const SearchPage page = response.ok ? backend->read(response, found->count)
                                            : SearchPage{false, response.error, {}};
        if (page.ok) {
            Running done = m_running.take(id);
            done.callback({true, {}, page.hits, backend->name()});
            return;
        }
        // The back ends' own messages name their service; a failed fetch gets its name here.
        found->errors.append(response.ok
                                     ? page.error
                                     : QStringLiteral("%1: %2").arg(backend->name(), page.error));
        if (++found->backend < m_backends.size()) {
            ask(id);
            return;
        }
        Running done = m_running.take(id);
        done.callback({false, done.errors.join(QStringLiteral("; ")), {}, {}});
    });
}

void WebSearch::cancel(quint64 id)
{
    const auto found = m_running.find(id);
    if (found == m_running.end())
        return;
    m_fetcher->abort(found->fetchId);
    m_running.erase(found);
}

} // namespace cmcp
