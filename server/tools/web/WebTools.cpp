#include "tools/web/WebTools.h"

#include "tools/common/ToolArguments.h"
#include "tools/common/ToolBuilding.h"
#include "tools/web/BrowserConfinement.h"

#include "base/InstallLayout.h"
#include "web/BrowserAccount.h"
#include "web/BrowserPool.h"
#include "egress/EgressGate.h"
#include "web/HtmlWorkerPool.h"
#include "base/LiveSettings.h"
#include "base/LiveSnapshot.h"
#include "mcp/McpServer.h"
#include "common/Settings.h"
#include "mcp/ToolCall.h"
#include "web/WebFetcher.h"
#include "web/WebPolicy.h"
#include "web/WebScraper.h"
#include "web/WebSearch.h"
#include "tools/web/WebToolSchemas.h"

#include <QJsonArray>
#include <QPointer>
#include <QThread>

#include <spdlog/spdlog.h>

namespace cmcp {

namespace {

// Every failure: isError with the message as text, and success false plus the message (and the
// URL when there is one) in structuredContent, as the original's results carry them.
ToolResult failure(const QString &message, const QString &url = {}, const QJsonArray &blocked = {})
{
    ToolResult result = ToolResult::text(message);
    result.isError = true;
    QJsonObject value{{QLatin1String("success"), false}, {QLatin1String("error"), message}};
    if (!url.isEmpty())
        value.insert(QLatin1String("url"), url);
    if (!blocked.isEmpty())
        value.insert(QLatin1String("blocked"), blocked);
    result.structuredContent = value;
    return result;
}

void scrape(WebScraper *scraper, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject arguments = call->arguments();
    ScrapeRequest request;
    request.url = QUrl(tools::stringArgument(arguments, "url"));
    request.selector = tools::stringArgument(arguments, "selector");
    request.markdown = tools::stringArgument(arguments, "format") == QLatin1String("markdown");
    const QString format = request.markdown ? QStringLiteral("markdown") : QStringLiteral("text");
    const quint64 id = scraper->scrape(request, [call, format](const ScrapeResult &result) {
        if (!result.success) {
            call->finish(failure(result.error, result.url));
            return;
        }
        QJsonObject value{{QLatin1String("success"), true},
                          {QLatin1String("url"), result.url},
                          {QLatin1String("title"), result.title},
                          {QLatin1String("content"), result.content},
                          {QLatin1String("format"), format},
                          {QLatin1String("status"), result.status},
                          {QLatin1String("content_type"), result.contentType},
                          {QLatin1String("truncated"), result.truncated}};
        if (result.matches >= 0)
            value.insert(QLatin1String("matches"), result.matches);
        call->finish(ToolResult::structured(value));
    });
    QObject::connect(call.get(), &ToolCall::cancelled, scraper,
                     [scraper, id] { scraper->cancel(id); });
}

void search(WebSearch *search, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject arguments = call->arguments();
    const QString query = tools::stringArgument(arguments, "query");
    const int count = int(tools::integerArgument(arguments, "max_results").value_or(10));
    const quint64 id = search->search(query, count, [call, query](const SearchOutcome &outcome) {
        if (!outcome.success) {
            call->finish(failure(outcome.error));
            return;
        }
        QJsonArray results;
        for (const SearchHit &hit : outcome.results)
            results.append(QJsonObject{{QLatin1String("title"), hit.title},
                                       {QLatin1String("url"), hit.url},
                                       {QLatin1String("snippet"), hit.snippet}});
        call->finish(ToolResult::structured({{QLatin1String("success"), true},
                                             {QLatin1String("query"), query},
                                             {QLatin1String("backend"), outcome.backend},
                                             {QLatin1String("results"), results}}));
    });
    QObject::connect(call.get(), &ToolCall::cancelled, search,
                     [search, id] { search->cancel(id); });
}

void browse(BrowserPool *browsers, const std::shared_ptr<ToolCall> &call)
{
    const QJsonObject arguments = call->arguments();
    BrowseCall request;
    request.url = QUrl(tools::stringArgument(arguments, "url"));
    request.waitFor = tools::stringArgument(arguments, "wait_for");
    request.text = tools::boolArgument(arguments, "text");
    request.screenshot = tools::boolArgument(arguments, "screenshot");
    request.principal = call->principal().name();
    const quint64 id = browsers->browse(request, [call](const BrowseOutcome &outcome) {
        if (!outcome.success) {
            call->finish(failure(outcome.error, {}, outcome.blocked));
            return;
        }
        QJsonObject value{{QLatin1String("success"), true},
                          {QLatin1String("url"), outcome.url},
                          {QLatin1String("title"), outcome.title},
                          {QLatin1String("content"), outcome.content},
                          {QLatin1String("format"), outcome.format},
                          {QLatin1String("truncated"), outcome.truncated},
                          {QLatin1String("blocked"), outcome.blocked}};
        if (!outcome.screenshotBase64.isEmpty())
            value.insert(QLatin1String("screenshot"), true);
        ToolResult result = ToolResult::structured(value);
        if (!outcome.screenshotBase64.isEmpty())
            result.content.append(QJsonObject{
                    {QLatin1String("type"), QLatin1String("image")},
                    {QLatin1String("data"), QString::fromLatin1(outcome.screenshotBase64)},
                    {QLatin1String("mimeType"), QLatin1String("image/png")}});
        call->finish(result);
    });
    QObject::connect(call.get(), &ToolCall::cancelled, browsers,
                     [browsers, id] { browsers->cancel(id); });
}

void logPolicy(const EgressPolicy &policy, const WebSearch &search)
{
    spdlog::info("web: egress to {}{}; non-public addresses {}",
                 policy.allowsAnyDomain() ? std::string("any domain")
                                          : policy.allowedDomains().join(u',').toStdString(),
                 policy.trustedOrigins().isEmpty() ? std::string()
                                                   : " and the search back ends "
                                 + policy.trustedOrigins().join(u',').toStdString(),
                 policy.allowsPrivate() ? "allowed (WEB_ALLOW_PRIVATE=true)" : "refused");
    if (!search.configured())
        spdlog::info("web_search: no back end (set WEB_SEARCH_URL or BRAVE_SEARCH_API_KEY)");
    else
        spdlog::info("web_search: back ends {}", search.backendNames().join(u',').toStdString());
}

// The egress rules and limits the web tools enforce, built from the WEB_* settings; nullopt with
// the reason when a setting cannot be used.
struct WebRules
{
    std::shared_ptr<const EgressPolicy> egress;
    std::shared_ptr<const WebPolicy> web;
    QStringList browserArguments;
};

std::optional<WebRules> webRulesFromSettings(const Settings &settings,
                                             const std::shared_ptr<HostResolver> &resolver,
                                             QString *error)
{
    std::optional<EgressPolicy> egress = EgressPolicy::fromSettings(settings, error);
    if (!egress)
        return std::nullopt;
    WebRules rules;
    rules.egress = std::make_shared<const EgressPolicy>(std::move(*egress));
    const qint64 maxBytes = settings.integer(u"WEB_MAX_BYTES");
    const int timeoutMs = int(settings.integer(u"WEB_TIMEOUT_DEFAULT") * 1000);
    rules.web = std::make_shared<const WebPolicy>(WebPolicy{
            std::make_shared<const EgressGate>(*rules.egress, resolver), maxBytes, timeoutMs});
    rules.browserArguments =
            BrowserPool::policyArguments(*rules.egress, maxBytes, timeoutMs,
                                         int(settings.integer(u"EGRESS_IDLE_SECONDS") * 1000));
    return rules;
}

// WEB_ALLOWED_DOMAINS, WEB_ALLOW_PRIVATE, WEB_MAX_BYTES and WEB_TIMEOUT_DEFAULT while the daemon
// runs: scrapes and searches from now on take the new policy (a running one keeps its gate
// through its redirects); web_browse sends its next pages to a worker started with the new rules.
void registerLiveWebSettings(LiveSettings &live,
                             const std::shared_ptr<LiveSnapshot<WebPolicy>> &current,
                             const std::shared_ptr<HostResolver> &resolver,
                             QPointer<BrowserPool> browsers, QPointer<WebSearch> searcher)
{
    live.add({QStringLiteral("WEB_ALLOWED_DOMAINS"), QStringLiteral("WEB_ALLOW_PRIVATE"),
              QStringLiteral("WEB_MAX_BYTES"), QStringLiteral("WEB_TIMEOUT_DEFAULT")},
             [current, resolver, browsers, searcher](const Settings &changed,
                                                     QString *error) -> LiveSettings::Install {
                 std::optional<WebRules> rules = webRulesFromSettings(changed, resolver, error);
                 if (!rules)
                     return {};
                 return [current, browsers, searcher, rules = std::move(*rules)] {
                     current->replace(rules.web);
                     if (browsers)
                         browsers->setPolicy(rules.browserArguments, rules.web->gate,
                                             rules.web->timeoutMs, rules.web->maxBytes);
                     if (searcher)
                         logPolicy(*rules.egress, *searcher);
                 };
             });
}

} // namespace

bool registerWebTools(const ToolFamily &family, QString *error)
{
    McpServer &server = family.server;
    const Settings &settings = family.settings;
    const SandboxCapabilities &sandbox = family.sandbox;
    LiveSettings *live = family.live;
    const auto resolver = std::make_shared<SystemHostResolver>();
    const std::optional<WebRules> rules = webRulesFromSettings(settings, resolver, error);
    if (!rules)
        return false;
    auto policy = std::make_shared<LiveSnapshot<WebPolicy>>(rules->web);

    auto *fetcher = new WebFetcher(rules->web->gate, &server);
    auto *parsers = new HtmlWorkerPool(HtmlWorkerPool::defaultProgram(),
                                       std::max(1, QThread::idealThreadCount()), &server);
    auto *scraper = new WebScraper(fetcher, parsers, policy, &server);
    auto *searcher = new WebSearch(fetcher, searchBackendsFromSettings(settings), policy, &server);
    BrowserPool::Options browserOptions;
    browserOptions.program = BrowserPool::defaultProgram();
    browserOptions.arguments = rules->browserArguments;
    browserOptions.gate = rules->web->gate;
    browserOptions.pagesPerWorker = int(settings.integer(u"WEB_BROWSER_PAGES_PER_WORKER"));
    browserOptions.maxWorkers = int(settings.integer(u"WEB_BROWSER_WORKERS"));
    browserOptions.idleWorkerMs = int(settings.integer(u"WEB_BROWSER_IDLE_SECONDS") * 1000);
    browserOptions.timeoutMs = rules->web->timeoutMs;
    browserOptions.maxBytes = rules->web->maxBytes;
    browserOptions.egressIdleMs = int(settings.integer(u"EGRESS_IDLE_SECONDS") * 1000);
    QString accountError;
    browserOptions.account = BrowserAccount::forDaemon(settings, &accountError);
    if (browserOptions.account)
        browserOptions.confinement = browserConfinement(settings, sandbox);
    if (!accountError.isEmpty()) {
        *error = accountError;
        return false;
    }
    auto *browsers = new BrowserPool(browserOptions, &server);
    if (settings.flag(u"WEB_BROWSER_PRESTART"))
        browsers->prestart();
    logPolicy(*rules->egress, *searcher);
    if (live)
        registerLiveWebSettings(*live, policy, resolver, browsers, searcher);

    ToolRegistry &registry = server.tools();
    registry.add(tools::makeTool(
            "web_search", "Search the web",
            "Searches the web; returns results with title, url and snippet.",
            webschemas::searchInput(), webschemas::searchOutput(),
            {.readOnly = true, .destructive = false, .idempotent = false, .openWorld = true},
            [searcher](const std::shared_ptr<ToolCall> &call) { search(searcher, call); }));
    registry.add(tools::makeTool(
            "web_scrape", "Scrape a web page",
            "Fetches a web page without running JavaScript and returns its readable text, or "
            "that of the elements a CSS selector picks, as text or Markdown, with its title. "
            "Use web_browse for pages that need scripts.",
            webschemas::scrapeInput(), webschemas::scrapeOutput(),
            {.readOnly = true, .destructive = false, .idempotent = true, .openWorld = true},
            [scraper](const std::shared_ptr<ToolCall> &call) { scrape(scraper, call); }));
    registry.add(tools::makeTool(
            "web_browse", "Browse a web page",
            "Loads a web page in a headless browser, runs its scripts, and returns the rendered "
            "HTML (or visible text), title and final URL; blocked lists requests the egress "
            "gate refused. Slower than web_scrape.",
            webschemas::browseInput(), webschemas::browseOutput(),
            {.readOnly = true, .destructive = false, .idempotent = false, .openWorld = true},
            [browsers](const std::shared_ptr<ToolCall> &call) { browse(browsers, call); }));
    return true;
}

} // namespace cmcp
