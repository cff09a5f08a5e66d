// HTML to readable text and Markdown, and the parse limits that keep a hostile page from
// holding a thread: deep nesting stops at the time limit, large pages at the memory limit.

#include "html/CssMatcher.h"
#include "html/CssSelector.h"
#include "html/HtmlDocument.h"
#include "html/HtmlText.h"

#include <QElapsedTimer>
#include <QTest>

using namespace cmcp;
using html::TextFormat;

namespace {

QString text(const std::string &page, TextFormat format = TextFormat::Text, bool readable = false)
{
    html::TextOptions options;
    options.format = format;
    options.readable = readable;
    options.resolveUrl = [](std::string_view url) {
        return url.substr(0, 1) == "/" ? "https://site.test" + std::string(url) : std::string(url);
    };
    const html::HtmlText result = html::htmlToText(page, options, {});
    if (!result.ok)
        return QStringLiteral("error: ") + QString::fromStdString(result.error);
    return QString::fromStdString(result.text);
}

QString toMarkdown(const std::string &page)
{
    return text(page, TextFormat::Markdown);
}

} // namespace

class TestHtmlText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void plainText_data()
    {
        QTest::addColumn<QString>("html");
        QTest::addColumn<QString>("expected");
        const QList<QPair<const char *, const char *>> cases = {
                {"<p>Hello <b>world</b></p><p>Second</p>", "Hello world\n\nSecond"},
                {"<p>a<script>evil()</script>b</p><style>p{color:red}</style>", "ab"},
                {"<p>  a \n\n b  </p>", "a b"},
                {"a<br>b<br><br>c", "a\nb\n\nc"},
                {"<div>one</div><div>two</div>", "one\ntwo"},
                {"<h1>Title</h1>text", "Title\n\ntext"},
                {"<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>after",
                 "- one\n- two\n  - inner\n\nafter"},
                {"<ol start=3><li>a<li>b</ol>", "3. a\n4. b"},
                {"<pre>  x\n    y</pre>", "  x\n    y"},
                {"<p hidden>secret</p><p aria-hidden=true>secret</p><p style='display: "
                 "none'>secret</p><p>shown</p>",
                 "shown"},
                {"<body><noscript>enable js</noscript><template><p>t</p></template><p>x</p>", "x"},
                {"<p>&amp; &lt; &eacute; &#x1F600;</p>", "& < \xc3\xa9 \xf0\x9f\x98\x80"},
                {"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>",
                 "a | b\nc | d"},
                {"<p>x<img src=/i.png alt=pic>y</p>", "xy"},
                {"<p>bad \xff bytes</p>", "bad \xef\xbf\xbd bytes"},
        };
        for (const auto &[page, expected] : cases)
            QTest::newRow(page) << QString::fromUtf8(page) << QString::fromUtf8(expected);
    }

    void plainText()
    {
        QFETCH(QString, html);
        QFETCH(QString, expected);
        QCOMPARE(text(html.toStdString()), expected);
    }

    void markdown_data()
    {
        QTest::addColumn<QString>("html");
        QTest::addColumn<QString>("expected");
        const QList<QPair<const char *, const char *>> cases = {
                {"<h2>Title</h2><p>See <a href=\"/x\">this <em>link</em></a> and "
                 "<code>code()</code>.</p>",
                 "## Title\n\nSee [this *link*](https://site.test/x) and `code()`."},
                {"<p>a<b></b>b<a href=/y></a>c</p>", "abc"},
                {"<p>a <b> bold </b> b</p>", "a **bold** b"},
                {"<blockquote><p>q1</p><p>q2</p></blockquote>", "> q1\n\n> q2"},
                {"<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
                 "| A | B |\n| --- | --- |\n| 1 | 2 |"},
                {"<pre><code>x = 1\ny = 2</code></pre>", "```\nx = 1\ny = 2\n```"},
                {"<img src=\"/i.png\" alt=\"An [image]\">",
                 "![An \\[image\\]](https://site.test/i.png)"},
                {"<a href=\"javascript:alert(1)\">click</a>", "click"},
                {"<ol><li>one</li><li>two</li></ol>", "1. one\n2. two"},
                {"<p>x</p><hr><p>y</p>", "x\n\n---\n\ny"},
        };
        for (const auto &[page, expected] : cases)
            QTest::newRow(page) << QString::fromUtf8(page) << QString::fromUtf8(expected);
    }

    void markdown()
    {
        QFETCH(QString, html);
        QFETCH(QString, expected);
        QCOMPARE(toMarkdown(html.toStdString()), expected);
    }

    void readableLeavesOutThePageFurniture()
    {
        const std::string page = "<html><head><title>T</title></head><body>"
                                 "<header>Site banner</header><nav><a href=/>Home</a></nav>"
                                 "<main><article><header><h1>Story</h1></header><p>Body text.</p>"
                                 "<aside>Related</aside><form><p>Search</p></form><footer>By "
                                 "someone</footer></article></main>"
                                 "<footer>Copyright</footer></body></html>";
        QCOMPARE(text(page, TextFormat::Text, true),
                 QStringLiteral("Story\n\nBody text.\n\nBy someone"));
        // Without the readable view, everything visible is there.
        QVERIFY(text(page).contains(QLatin1String("Copyright")));
    }

    void readableFallsBackToTheBody()
    {
        QCOMPARE(text("<body><nav>menu</nav><div>content</div></body>", TextFormat::Text, true),
                 QStringLiteral("content"));
    }

    void titleIsCollapsed()
    {
        const html::HtmlText result = html::htmlToText("<title>  My \n Page </title><p>x", {}, {});
        QCOMPARE(result.title, std::string("My Page"));
    }

    void aSelectedScriptIsReturnedAsWritten()
    {
        std::string error;
        const auto document = html::Document::parse(
                "<script type=\"application/ld+json\">{\"@type\": \"Article\"}</script>", {},
                &error);
        const css::ParseResult selector =
                css::parseSelectorList("script[type='application/ld+json']");
        const auto found = css::select(document->document(), *selector.selectors);
        QCOMPARE(found.size(), size_t(1));
        QCOMPARE(html::extractText(found[0], {}).text, std::string("{\"@type\": \"Article\"}"));
    }

    void outputIsCutAtACharacterBoundary()
    {
        html::TextOptions options;
        options.maxBytes = 101;
        std::string page = "<p>";
        for (int i = 0; i < 200; ++i)
            page += "\xc3\xa9"; // é, two bytes
        const html::HtmlText result = html::htmlToText(page, options, {});
        QVERIFY(result.truncated);
        QVERIFY(result.text.size() <= 101);
        QCOMPARE(QString::fromUtf8(result.text.c_str()).toUtf8().toStdString(), result.text);
        QCOMPARE(result.text.size() % 2, size_t(0));
    }

    void deepTreesNeedNoRecursion()
    {
        std::string page;
        for (int i = 0; i < 5000; ++i)
            page += "<div><span>";
        page += "<b>deep</b>";
        QCOMPARE(text(page), QStringLiteral("deep"));
        QCOMPARE(toMarkdown(page), QStringLiteral("**deep**"));
    }

    void deepNestingStopsAtTheTimeLimit()
    {
        std::string page;
        for (int i = 0; i < 200000; ++i)
            page += "<div>";
        html::ParseLimits limits;
        limits.time = std::chrono::milliseconds(300);
        QElapsedTimer clock;
        clock.start();
        const html::HtmlText result = html::htmlToText(page, {}, limits);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.find("could not be parsed within 300 ms") != std::string::npos,
                 result.error.c_str());
        QVERIFY2(clock.elapsed() < 1500, qPrintable(QString::number(clock.elapsed())));
    }

    void largePagesStopAtTheMemoryLimit()
    {
        std::string page;
        for (int i = 0; i < 100000; ++i)
            page += "<p class=x>y";
        html::ParseLimits limits;
        limits.memoryBytes = 4 * 1024 * 1024;
        const html::HtmlText result = html::htmlToText(page, {}, limits);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.find("needs more than 4 MB") != std::string::npos,
                 result.error.c_str());
        // The same page parses with room to do so.
        QVERIFY(html::htmlToText(page, {}, {}).ok);
    }

    void cancellationStopsTheParse()
    {
        std::string page;
        for (int i = 0; i < 100000; ++i)
            page += "<div>";
        std::atomic<bool> cancel{true};
        html::ParseLimits limits;
        limits.cancel = &cancel;
        const html::HtmlText result = html::htmlToText(page, {}, limits);
        QVERIFY(!result.ok);
        QCOMPARE(result.error, std::string("the parse was cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestHtmlText)
#include "tst_htmltext.moc"
