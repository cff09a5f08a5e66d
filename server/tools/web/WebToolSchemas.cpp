#include "tools/web/WebToolSchemas.h"

#include "html/CssSelector.h"
#include "tools/common/ToolBuilding.h"

#include <QJsonArray>

namespace cmcp::webschemas {

using tools::orFailure;

QJsonObject searchInput()
{
    return tools::schema(
            R"({"type":"object","required":["query"],"additionalProperties":false,"properties":{
        "query":{"type":"string","minLength":1,"maxLength":2000},
        "max_results":{"type":"integer","minimum":1,"maximum":20,"default":10}}})");
}

QJsonObject searchOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","query","results"],"properties":{
        "success":{"const":true},
        "query":{"type":"string"},
        "backend":{"type":"string","description":"The search service that answered: searxng or brave."},
        "results":{"type":"array","items":{"type":"object","required":["title","url","snippet"],"properties":{
            "title":{"type":"string"},"url":{"type":"string"},"snippet":{"type":"string"}}}}}})"));
}

QJsonObject scrapeInput()
{
    QJsonObject input = tools::schema(
            R"({"type":"object","required":["url"],"additionalProperties":false,"properties":{
        "url":{"type":"string","minLength":1,"description":"http or https URL of the page."},
        "selector":{"type":"string","maxLength":4096},
        "format":{"type":"string","enum":["text","markdown"],"default":"text","description":"markdown keeps headings, links, lists, tables and code."}}})");
    QJsonObject properties = input.value(QLatin1String("properties")).toObject();
    QJsonObject selector = properties.value(QLatin1String("selector")).toObject();
    selector.insert(QLatin1String("description"),
                    QStringLiteral("CSS selector; the text of each match is returned. Supported: "
                                   "%1.")
                            .arg(QString::fromUtf8(css::supportedSyntax)));
    properties.insert(QLatin1String("selector"), selector);
    input.insert(QLatin1String("properties"), properties);
    return input;
}

QJsonObject scrapeOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","url","title","content"],"properties":{
        "success":{"const":true},
        "url":{"type":"string","description":"The final URL, after redirects."},
        "title":{"type":"string"},
        "content":{"type":"string"},
        "format":{"type":"string"},
        "status":{"type":"integer","description":"The HTTP status."},
        "content_type":{"type":"string"},
        "matches":{"type":"integer","description":"Elements the selector matched."},
        "truncated":{"type":"boolean","description":"The content was cut at WEB_MAX_BYTES."}}})"));
}

QJsonObject browseInput()
{
    return tools::schema(
            R"({"type":"object","required":["url"],"additionalProperties":false,"properties":{
        "url":{"type":"string","minLength":1,"description":"http or https URL of the page."},
        "wait_for":{"type":"string","maxLength":4096,"description":"load (default), quiet (no DOM change for 500 ms), or a CSS selector to wait for."},
        "text":{"type":"boolean","default":false,"description":"Return visible text, not HTML."},
        "screenshot":{"type":"boolean","default":false,"description":"Add a 1280x800 PNG."}}})");
}

QJsonObject browseOutput()
{
    return orFailure(tools::schema(
            R"({"type":"object","required":["success","url","title","content"],"properties":{
        "success":{"const":true},
        "url":{"type":"string","description":"The final URL, after redirects and script navigation."},
        "title":{"type":"string"},
        "content":{"type":"string","description":"The rendered HTML after scripts ran (its visible text with text: true)."},
        "format":{"type":"string","enum":["html","text"]},
        "truncated":{"type":"boolean","description":"The content was cut at WEB_MAX_BYTES."},
        "blocked":{"type":"array","description":"Requests of the page the egress gate refused.","items":{"type":"object","required":["url","reason"],"properties":{
            "url":{"type":"string"},"reason":{"type":"string"}}}},
        "screenshot":{"type":"boolean","description":"A screenshot follows as an image content item."}}})"));
}

} // namespace cmcp::webschemas
