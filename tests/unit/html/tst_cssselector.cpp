// The CSS selector engine against a fixture page (support/data/selectors.html, every element with
// an id): each supported form picks exactly the elements a browser's querySelectorAll picks, and
// each unsupported or broken selector is refused with a message saying so.

#include "html/CssMatcher.h"
#include "html/CssSelector.h"
#include "html/HtmlDocument.h"

#include <gumbo.h>

#include <QElapsedTimer>
#include <QFile>
#include <QTest>

using namespace cmcp;

namespace {

std::string readFixture()
{
    QFile file(QStringLiteral(CMCP_TEST_DATA "/selectors.html"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read selectors.html");
    return file.readAll().toStdString();
}

QString idsOf(const std::vector<const GumboNode *> &elements)
{
    QStringList ids;
    for (const GumboNode *element : elements) {
        const GumboAttribute *id = gumbo_get_attribute(&element->v.element.attributes, "id");
        ids.append(id ? QString::fromUtf8(id->value) : QStringLiteral("?"));
    }
    return ids.join(QLatin1Char(' '));
}

} // namespace

class TestCssSelector : public QObject
{
    Q_OBJECT

    std::unique_ptr<html::Document> m_document;

    QString select(const QString &selector)
    {
        const css::ParseResult parsed = css::parseSelectorList(selector.toStdString());
        if (!parsed.selectors)
            return QStringLiteral("error: ") + QString::fromStdString(parsed.error);
        return idsOf(css::select(m_document->document(), *parsed.selectors));
    }

private Q_SLOTS:
    void initTestCase()
    {
        std::string error;
        m_document = html::Document::parse(readFixture(), {}, &error);
        QVERIFY2(m_document, error.c_str());
    }

    void selects_data()
    {
        QTest::addColumn<QString>("selector");
        QTest::addColumn<QString>("ids");
        const QList<QPair<const char *, const char *>> cases = {
                {"p", "p1 p2 p3 p4 p5 p6"},
                {"#p2", "p2"},
                {".box", "d1 d2"},
                {".box.inner", "d2"},
                {"DIV.box", "d1 d2"}, // type selectors ignore case in HTML
                {".BOX", ""}, // classes do not
                {"div.box > p", "p3"},
                {"main p", "p1 p2 p3 p4 p5"},
                {"main > p", "p1 p2"},
                {"#d1 span", "s1"},
                {"#d1 > span", ""},
                {"h1 + p", "p1"},
                {"h1 ~ p", "p1 p2"},
                {"h2 + p + p", "p5"},
                {"p ~ em", "em1"},
                {"li:nth-child(2n+1)", "li1 li3 li5"},
                {"li:nth-child(odd)", "li1 li3 li5"},
                {"li:nth-child(even)", "li2 li4"},
                {"li:nth-child(3)", "li3"},
                {"li:nth-child( -n + 2 )", "li1 li2"},
                {"li:nth-child(n+4)", "li4 li5"},
                {"li:nth-last-child(1)", "li5"},
                {"ul li:nth-last-of-type(2)", "li4"},
                {":first-child", "head title top nav home h1 b1 ext p3 s1 li1 h2 p6"},
                {"p:first-of-type", "p1 p3 p4 p6"},
                {"p:last-of-type", "p2 p3 p5 p6"},
                {"p:only-of-type", "p3 p6"},
                {"span:only-child", "s1"},
                {"section > *:last-child", "em1"},
                {"body > *:nth-of-type(1)", "top main foot"},
                {"p:empty", "p4 p5"},
                {":root", "root"},
                {"a[href]", "home docs ext"},
                {"a[href^='https']", "ext"},
                {"a[href$=\".pdf\"]", "ext"},
                {"a[href*=example]", "ext"},
                {"[rel~=nofollow]", "ext"},
                {"[rel~=no]", ""},
                {"[lang|=en]", "root p2"},
                {"[data-kind=docs i]", "docs"},
                {"[data-kind=docs]", ""},
                {"[data-kind=Docs s]", "docs"},
                {"[title='Hello World']", "s1"},
                {"[data-x='1']", "w1"},
                {"[data-x=1]", "w1"},
                {"li:not(.odd-one)", "li1 li3 li4 li5"},
                {"li:not(:first-child, .last)", "li2 li3 li4"},
                {"main :not(p):not(div)", "h1 b1 ext s1 list li1 li2 li3 li4 li5 sec h2 em1 w1"},
                {"h1, h2", "h1 h2"},
                {"h2, h1", "h1 h2"}, // document order, whatever the list's order
                {"p, .lead", "p1 p2 p3 p4 p5 p6"}, // each element once
                {"my-widget", "w1"},
                {"MY-WIDGET", "w1"},
                {"header a.link.current", "docs"},
                {"#\\70 1", "p1"}, // a CSS escape: \70 is 'p'
                {"title", "title"},
                {"  p  >  b  ", "b1"},
        };
        for (const auto &[selector, ids] : cases)
            QTest::newRow(selector) << QString::fromUtf8(selector) << QString::fromUtf8(ids);
    }

    void selects()
    {
        QFETCH(QString, selector);
        QFETCH(QString, ids);
        QCOMPARE(select(selector), ids);
    }

    void everyElementOnce()
    {
        QCOMPARE(select(QStringLiteral("*")).split(QLatin1Char(' ')).size(), 32);
    }

    void refuses_data()
    {
        QTest::addColumn<QString>("selector");
        QTest::addColumn<QString>("message");
        const QList<QPair<const char *, const char *>> cases = {
                {"a:hover", "unsupported selector at character 2: pseudo-class ':hover'"},
                {":has(p)", "unsupported selector at character 1: pseudo-class ':has()'"},
                {"p::before", "unsupported selector at character 2: pseudo-element '::before'"},
                {"svg|rect", "unsupported selector at character 4: namespace prefixes"},
                {"li:nth-child(2n+1 of .item)",
                 "unsupported selector at character 14: the 'of S' form"},
                {":not(div p)", "unsupported selector at character 10: combinators inside :not()"},
                {":not(:not(p))", "unsupported selector at character 6: :not() inside :not()"},
                {"p >", "invalid selector at character 4: expected a selector"},
                {"[href", "invalid selector at character 6: expected ], =,"},
                {"p,,", "invalid selector at character 3: unexpected ','"},
                {"", "invalid selector at character 1: expected a selector"},
                {":nth-child(x)",
                 "invalid selector at character 12: expected An+B, odd or even, not 'x'"},
                {"a[href=\"open]",
                 "invalid selector at character 14: a string without its closing quote"},
                {"p}", "invalid selector at character 2: unexpected '}'"},
                {".", "invalid selector at character 2: expected a class name after '.'"},
                {":not(p", "invalid selector at character 7: expected ) to close :not("},
        };
        for (const auto &[selector, message] : cases)
            QTest::newRow(selector) << QString::fromUtf8(selector) << QString::fromUtf8(message);
    }

    void refuses()
    {
        QFETCH(QString, selector);
        QFETCH(QString, message);
        const css::ParseResult parsed = css::parseSelectorList(selector.toStdString());
        QVERIFY(!parsed.selectors);
        const QString error = QString::fromStdString(parsed.error);
        QVERIFY2(error.startsWith(message), qPrintable(error));
        if (error.startsWith(QLatin1String("unsupported")))
            QVERIFY(error.contains(QLatin1String("(supported: type (p)")));
    }

    void limitsTheInput()
    {
        QVERIFY(!css::parseSelectorList(std::string(5000, 'a')).selectors);
        std::string longChain = "a";
        for (int i = 0; i < 70; ++i)
            longChain += " a";
        QVERIFY(css::parseSelectorList(longChain).error.find("more than 64") != std::string::npos);
        QVERIFY(!css::parseSelectorList(std::string("p\0q", 3)).selectors);
    }

    void backtrackingStaysCheap()
    {
        // 2,000 nested divs and a selector that a naive matcher would backtrack through for
        // every ancestor combination.
        std::string deep;
        for (int i = 0; i < 2000; ++i)
            deep += "<div>";
        deep += "<span>x</span>";
        std::string error;
        const std::unique_ptr<html::Document> document = html::Document::parse(deep, {}, &error);
        QVERIFY(document);
        const css::ParseResult parsed =
                css::parseSelectorList("div div div div div div div div div div p span");
        QVERIFY(parsed.selectors);
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(css::select(document->document(), *parsed.selectors).size(), size_t(0));
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    }
};

QTEST_GUILESS_MAIN(TestCssSelector)
#include "tst_cssselector.moc"
