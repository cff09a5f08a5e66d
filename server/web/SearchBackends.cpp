#include "web/SearchBackends.h"

#include "common/Settings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrlQuery>

namespace cmcp {

namespace {

QString decodeReference(const QString &name)
{
    static const QHash<QString, QString> named{{QStringLiteral("amp"), QStringLiteral("&")},
                                               {QStringLiteral("lt"), QStringLiteral("<")},
                                               {QStringLiteral("gt"), QStringLiteral(">")},
                                               {QStringLiteral("quot"), QStringLiteral("\"")},
                                               {QStringLiteral("apos"), QStringLiteral("'")},
                                               {QStringLiteral("nbsp"), QStringLiteral(" ")},
                                               {QStringLiteral("hellip"), QStringLiteral("…")},
                                               {QStringLiteral("mdash"), QStringLiteral("—")},
                                               {QStringLiteral("ndash"), QStringLiteral("–")}};
    if (name.startsWith(QLatin1Char('#'))) {
        bool ok = false;
        const uint code = name.startsWith(QLatin1String("#x"), Qt::CaseInsensitive)
                ? name.mid(2).toUInt(&ok, 16)
                : name.mid(1).toUInt(&ok, 10);
        if (!ok || code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            return QStringLiteral("\uFFFD");
        const char32_t character = code;
        return QString::fromUcs4(&character, 1);
    }
    return named.value(name.toLower());
}

QJsonDocument jsonOf(const FetchResult &response, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(response.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        *error = QStringLiteral("the answer from %1 is not a JSON object (%2)")
                         .arg(response.url.toString(), parseError.errorString());
    return document;
}

class SearxngBackend final : public SearchBackend
{
public:
    explicit SearxngBackend(QUrl base) : m_base(std::move(base)) { }

    QString name() const override { return QStringLiteral("searxng"); }

    FetchRequest request(const QString &query, int) const override
    {
        QUrl url = m_base;
        QString path = url.path();
        if (!path.endsWith(QLatin1Char('/')))
            path += QLatin1Char('/');
        url.setPath(path + QLatin1String("search"));
        QUrlQuery parameters;
        parameters.addQueryItem(QStringLiteral("q"), query);
        parameters.addQueryItem(QStringLiteral("format"), QStringLiteral("json"));
        url.setQuery(parameters);
        FetchRequest request;
        request.url = url;
        request.headers = {{"Accept", "application/json"}};
        return request;
    }

    SearchPage read(const FetchResult &response, int count) const override
    {
        SearchPage page;
        if (response.status == 403) {
            page.error = QStringLiteral("SearXNG at %1 answered HTTP 403: its JSON format is "
                                        "probably not enabled (search.formats in its settings.yml "
                                        "must list json)")
                                 .arg(m_base.toString());
            return page;
        }
        if (response.status != 200) {
            page.error = QStringLiteral("SearXNG at %1 answered HTTP %2")
                                 .arg(m_base.toString())
                                 .arg(response.status);
            return page;
        }
        const QJsonDocument document = jsonOf(response, &page.error);
        if (!page.error.isEmpty())
            return page;
        for (const QJsonValue &value :
             document.object().value(QLatin1String("results")).toArray()) {
            const QJsonObject item = value.toObject();
            const QString url = item.value(QLatin1String("url")).toString();
            if (url.isEmpty())
                continue;
            page.hits.append({plainText(item.value(QLatin1String("title")).toString()), url,
                              plainText(item.value(QLatin1String("content")).toString())});
            if (page.hits.size() == count)
                break;
        }
        page.ok = true;
        return page;
    }

private:
    QUrl m_base;
};

class BraveBackend final : public SearchBackend
{
public:
    BraveBackend(QUrl endpoint, QByteArray key)
        : m_endpoint(std::move(endpoint)),
          m_key(std::move(key))
    {
    }

    QString name() const override { return QStringLiteral("brave"); }

    FetchRequest request(const QString &query, int count) const override
    {
        QUrl url = m_endpoint;
        QUrlQuery parameters;
        parameters.addQueryItem(QStringLiteral("q"), query);
        parameters.addQueryItem(QStringLiteral("count"), QString::number(count));
        url.setQuery(parameters);
        FetchRequest request;
        request.url = url;
        request.headers = {{"Accept", "application/json"}, {"X-Subscription-Token", m_key}};
        return request;
    }

    SearchPage read(const FetchResult &response, int count) const override
    {
        SearchPage page;
        if (response.status == 401 || response.status == 403) {
            page.error = QStringLiteral("Brave Search refused BRAVE_SEARCH_API_KEY (HTTP %1)")
                                 .arg(response.status);
            return page;
        }
        if (response.status == 429) {
            page.error = QStringLiteral("Brave Search's rate limit was reached (HTTP 429); try "
                                        "again later");
            return page;
        }
        if (response.status != 200) {
            page.error = QStringLiteral("Brave Search answered HTTP %1").arg(response.status);
            return page;
        }
        const QJsonDocument document = jsonOf(response, &page.error);
        if (!page.error.isEmpty())
            return page;
        const QJsonArray results = document.object()
                                           .value(QLatin1String("web"))
                                           .toObject()
                                           .value(QLatin1String("results"))
                                           .toArray();
        for (const QJsonValue &value : results) {
            const QJsonObject item = value.toObject();
            const QString url = item.value(QLatin1String("url")).toString();
            const QString title = item.value(QLatin1String("title")).toString();
            // The original required both.
            if (url.isEmpty() || title.isEmpty())
                continue;
            page.hits.append({plainText(title), url,
                              plainText(item.value(QLatin1String("description")).toString())});
            if (page.hits.size() == count)
                break;
        }
        page.ok = true;
        return page;
    }

private:
    QUrl m_endpoint;
    QByteArray m_key;
};

} // namespace

QString plainText(const QString &markup)
{
    QString out;
    out.reserve(markup.size());
    bool space = false;
    auto put = [&](const QString &text) {
        for (const QChar c : text) {
            if (c.isSpace()) {
                space = !out.isEmpty();
                continue;
            }
            if (space)
                out += QLatin1Char(' ');
            space = false;
            out += c;
        }
    };
    for (qsizetype i = 0; i < markup.size(); ++i) {
        const QChar c = markup.at(i);
        if (c == u'<') {
            const qsizetype end = markup.indexOf(QLatin1Char('>'), i);
            if (end > i
                && (i + 1 < markup.size()
                    && (markup.at(i + 1).isLetter() || markup.at(i + 1) == u'/'))) {
                i = end;
                continue;
            }
        } else if (c == u'&') {
            const qsizetype end = markup.indexOf(QLatin1Char(';'), i);
            if (end > i && end - i <= 10) {
                const QString decoded = decodeReference(markup.mid(i + 1, end - i - 1));
                if (!decoded.isEmpty()) {
                    put(decoded);
                    i = end;
                    continue;
                }
            }
        }
        put(QString(c));
    }
    return out;
}

std::shared_ptr<SearchBackend> makeSearxngBackend(const QUrl &base)
{
    return std::make_shared<SearxngBackend>(base);
}

std::shared_ptr<SearchBackend> makeBraveBackend(const QUrl &endpoint, const QByteArray &apiKey)
{
    return std::make_shared<BraveBackend>(endpoint, apiKey);
}

QList<std::shared_ptr<SearchBackend>> searchBackendsFromSettings(const Settings &settings)
{
    QList<std::shared_ptr<SearchBackend>> backends;
    if (const QString searxng = settings.text(u"WEB_SEARCH_URL"); !searxng.isEmpty())
        backends.append(makeSearxngBackend(QUrl(searxng)));
    if (const QString key = settings.text(u"BRAVE_SEARCH_API_KEY"); !key.isEmpty())
        backends.append(makeBraveBackend(QUrl(settings.text(u"BRAVE_SEARCH_URL")), key.toUtf8()));
    return backends;
}

} // namespace cmcp
