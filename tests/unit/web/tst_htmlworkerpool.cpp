// The cmcp-html helpers: extraction out of the daemon's process, under seccomp. A page that makes
// gumbo abort (Debian builds it with assertions on) fails one task with a message, and the next
// task gets a fresh helper.

#include "web/HtmlWorkerPool.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace cmcp;

namespace {

QByteArray readData(const char *name)
{
    QFile file(QStringLiteral(CMCP_TEST_DATA "/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read test data %s", name);
    return file.readAll();
}

// Children of this process running `name`.
QList<qint64> childrenNamed(const QString &name)
{
    QList<qint64> found;
    const QString me = QString::number(QCoreApplication::applicationPid());
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QString text = QString::fromLatin1(stat.readAll());
        const qsizetype close = text.lastIndexOf(QLatin1Char(')'));
        const QString comm = text.mid(text.indexOf(QLatin1Char('(')) + 1,
                                      close - text.indexOf(QLatin1Char('(')) - 1);
        if (comm == name && text.mid(close + 2).split(QLatin1Char(' ')).value(1) == me)
            found.append(pid.toLongLong());
    }
    return found;
}

} // namespace

class TestHtmlWorkerPool : public QObject
{
    Q_OBJECT

    static HtmlTaskResult run(HtmlWorkerPool &pool, HtmlTask task)
    {
        std::optional<HtmlTaskResult> result;
        pool.run(std::move(task), [&](const HtmlTaskResult &r) { result = r; });
        if (!QTest::qWaitFor([&] { return result.has_value(); }, 15000))
            qFatal("no answer from the pool");
        return *result;
    }

    static HtmlTask page(const QByteArray &html, const QString &selector = {})
    {
        HtmlTask task;
        task.html = html;
        task.selector = selector;
        task.baseUrl = QStringLiteral("https://site.test/dir/page.html");
        return task;
    }

private Q_SLOTS:
    void extractsTitleTextAndMatches()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 2);
        const HtmlTaskResult readable =
                run(pool,
                    page("<title>T</title><nav>menu</nav><main><p>Hello <b>there</b></p></main>"));
        QVERIFY2(readable.ok, qPrintable(readable.error));
        QCOMPARE(readable.title, QStringLiteral("T"));
        QCOMPARE(readable.text, QStringLiteral("Hello there"));
        QCOMPARE(readable.matches, -1);

        HtmlTask markdown =
                page("<ul><li><a href='../a.html'>A</a></li><li>B</li></ul>", QStringLiteral("li"));
        markdown.markdown = true;
        const HtmlTaskResult selected = run(pool, markdown);
        QVERIFY2(selected.ok, qPrintable(selected.error));
        QCOMPARE(selected.matches, 2);
        QCOMPARE(selected.text, QStringLiteral("[A](https://site.test/a.html)\n\nB"));
    }

    void theHelperRunsUnderSeccomp()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 1);
        QVERIFY(run(pool, page("<p>x")).ok);
        const QList<qint64> helpers = childrenNamed(QStringLiteral("cmcp-html"));
        QCOMPARE(helpers.size(), 1);
        QFile status(QStringLiteral("/proc/%1/status").arg(helpers.first()));
        QVERIFY(status.open(QIODevice::ReadOnly));
        QVERIFY2(status.readAll().contains("Seccomp:\t2"),
                 "the helper is not in seccomp filter mode");
    }

    void aPageThatCrashesTheParserFailsOneTask()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 1);
        const HtmlTaskResult crashed = run(pool, page(readData("gumbo-assertion.html")));
        QVERIFY(!crashed.ok);
        QCOMPARE(crashed.error,
                 QStringLiteral("the HTML parser failed on this page (an assertion in gumbo)"));
        const HtmlTaskResult next = run(pool, page("<p>still here"));
        QVERIFY2(next.ok, qPrintable(next.error));
        QCOMPARE(next.text, QStringLiteral("still here"));
    }

    void tasksWaitForAFreeHelper()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 2);
        QList<HtmlTaskResult> results;
        for (int i = 0; i < 6; ++i)
            pool.run(page(QStringLiteral("<p>page %1").arg(i).toUtf8()),
                     [&](const HtmlTaskResult &r) { results.append(r); });
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 6, 15000);
        QStringList texts;
        for (const HtmlTaskResult &result : results)
            texts.append(result.text);
        texts.sort();
        QCOMPARE(texts,
                 (QStringList{QStringLiteral("page 0"), QStringLiteral("page 1"),
                              QStringLiteral("page 2"), QStringLiteral("page 3"),
                              QStringLiteral("page 4"), QStringLiteral("page 5")}));
        QVERIFY(childrenNamed(QStringLiteral("cmcp-html")).size() <= 2);
    }

    void theParseTimeLimitHolds()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 1);
        HtmlTask deep = page(QByteArray("<div>").repeated(200000));
        deep.timeMs = 300;
        QElapsedTimer clock;
        clock.start();
        const HtmlTaskResult result = run(pool, deep);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.contains(QLatin1String("could not be parsed within 300 ms")),
                 qPrintable(result.error));
        QVERIFY(clock.elapsed() < 3000);
    }

    void cancellingEndsTheHelper()
    {
        HtmlWorkerPool pool(QStringLiteral(CMCP_HTML_PROGRAM), 1);
        HtmlTask deep = page(QByteArray("<div>").repeated(200000));
        deep.timeMs = 20000;
        bool called = false;
        const quint64 id = pool.run(deep, [&](const HtmlTaskResult &) { called = true; });
        QTest::qWait(300);
        pool.cancel(id);
        QTRY_COMPARE(childrenNamed(QStringLiteral("cmcp-html")).size(), 0);
        QVERIFY(!called);
        QVERIFY(run(pool, page("<p>after")).ok);
    }

    void aMissingProgramIsReported()
    {
        HtmlWorkerPool pool(QStringLiteral("/nonexistent/cmcp-html"), 1);
        const HtmlTaskResult result = run(pool, page("<p>x"));
        QVERIFY(!result.ok);
        QVERIFY2(result.error.startsWith(
                         QLatin1String("cannot start the HTML parser /nonexistent/cmcp-html")),
                 qPrintable(result.error));
    }
};

QTEST_GUILESS_MAIN(TestHtmlWorkerPool)
#include "tst_htmlworkerpool.moc"
