// BrowserPool's handling of its workers, with a stand-in worker
// (support/data/fake-browser-worker.py) that speaks cmcp-browser's protocol: pages per worker, a
// crash in the middle of a page, cancellation, concurrency, a worker that cannot be started, and
// workers of one principal each.

#include "web/BrowserPool.h"

#include <QTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

class TestBrowserPool : public QObject
{
    Q_OBJECT

    static BrowserPool::Options options(int pagesPerWorker = 50, int concurrent = 4)
    {
        BrowserPool::Options made;
        made.program = QStringLiteral("/usr/bin/python3");
        made.arguments = {QStringLiteral(CMCP_TEST_DATA "/fake-browser-worker.py")};
        made.pagesPerWorker = pagesPerWorker;
        made.concurrentPages = concurrent;
        made.timeoutMs = 5000;
        return made;
    }

    static BrowseOutcome browse(BrowserPool &pool, const QString &url,
                                const QString &principal = {})
    {
        std::optional<BrowseOutcome> outcome;
        pool.browse({QUrl(url), {}, false, false, principal},
                    [&](const BrowseOutcome &o) { outcome = o; });
        if (!QTest::qWaitFor([&] { return outcome.has_value(); }, 15000))
            qFatal("no answer for %s", qPrintable(url));
        return *outcome;
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("the stand-in worker needs /usr/bin/python3");
    }

    void answersComeBack()
    {
        BrowserPool pool(options());
        const BrowseOutcome outcome = browse(pool, QStringLiteral("http://ok/page"));
        QVERIFY2(outcome.success, qPrintable(outcome.error));
        QCOMPARE(outcome.content, QStringLiteral("http://ok/page"));
        QCOMPARE(pool.workersStarted(), 1);
    }

    void aWorkerServesAtMostItsPages()
    {
        BrowserPool pool(options(2));
        for (int i = 0; i < 5; ++i)
            QVERIFY(browse(pool, QStringLiteral("http://ok/%1").arg(i)).success);
        // Workers 1 and 2 served two pages each, worker 3 one; each replacement started when
        // its predecessor got its last page, and one is kept warm after that: 3 or 4 in all.
        QVERIFY2(pool.workersStarted() >= 3 && pool.workersStarted() <= 4,
                 qPrintable(QString::number(pool.workersStarted())));
    }

    // New rules (a setting changed from the admin channel): the page loading finishes in the
    // worker started with the old rules; the next page goes to a worker started with the new.
    void newRulesGoToAFreshWorker()
    {
        BrowserPool pool(options());
        QCOMPARE(browse(pool, QStringLiteral("http://ok/first")).title, QString());
        std::optional<BrowseOutcome> loading;
        pool.browse({QUrl(QStringLiteral("http://slow/500")), {}, false, false},
                    [&](const BrowseOutcome &o) { loading = o; });
        QTest::qWait(100); // the page is with the worker
        pool.setPolicy(options().arguments + QStringList{QStringLiteral("--rules=new")}, nullptr,
                       5000, 1024);
        const BrowseOutcome next = browse(pool, QStringLiteral("http://ok/second"));
        QVERIFY2(next.success, qPrintable(next.error));
        QCOMPARE(next.title, QStringLiteral("--rules=new"));
        QVERIFY(QTest::qWaitFor([&] { return loading.has_value(); }, 5000));
        QVERIFY2(loading->success, qPrintable(loading->error));
        QCOMPARE(loading->title, QString());
        QCOMPARE(pool.workersStarted(), 2);
    }

    void aCrashFailsItsCallsAndANewWorkerTakesOver()
    {
        BrowserPool pool(options());
        std::optional<BrowseOutcome> slow;
        pool.browse({QUrl(QStringLiteral("http://slow/2000")), {}, false, false},
                    [&](const BrowseOutcome &o) { slow = o; });
        const BrowseOutcome crashed = browse(pool, QStringLiteral("http://crash/"));
        QVERIFY(!crashed.success);
        QVERIFY2(crashed.error.startsWith(
                         QLatin1String("the browser worker crashed (signal 11) while loading this "
                                       "page; a new worker is being started")),
                 qPrintable(crashed.error));
        // The other page the worker had fails the same way.
        QTRY_VERIFY(slow.has_value());
        QVERIFY(!slow->success);
        const BrowseOutcome after = browse(pool, QStringLiteral("http://ok/after"));
        QVERIFY2(after.success, qPrintable(after.error));
        QCOMPARE(pool.workersStarted(), 2);
    }

    void pagesBeyondTheConcurrencyWait()
    {
        BrowserPool pool(options(50, 2));
        QList<BrowseOutcome> done;
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < 4; ++i)
            pool.browse({QUrl(QStringLiteral("http://slow/400")), {}, false, false},
                        [&](const BrowseOutcome &o) { done.append(o); });
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 4, 10000);
        // Two at a time: at least two rounds of 400 ms.
        QVERIFY2(clock.elapsed() >= 800, qPrintable(QString::number(clock.elapsed())));
        for (const BrowseOutcome &outcome : done)
            QVERIFY(outcome.success);
    }

    void aCancelledCallIsNotAnswered()
    {
        BrowserPool pool(options());
        bool called = false;
        const quint64 id = pool.browse({QUrl(QStringLiteral("http://hang/")), {}, false, false},
                                       [&](const BrowseOutcome &) { called = true; });
        QTest::qWait(500);
        pool.cancel(id);
        const BrowseOutcome next = browse(pool, QStringLiteral("http://ok/next"));
        QVERIFY(!called);
        QVERIFY(next.success);
    }

    void aWorkerThatCannotStartFailsTheCallsWaitingForIt()
    {
        BrowserPool::Options broken = options();
        broken.program = QStringLiteral("/nonexistent/cmcp-browser");
        BrowserPool pool(broken);
        const BrowseOutcome outcome = browse(pool, QStringLiteral("http://ok/"));
        QVERIFY(!outcome.success);
        QVERIFY2(outcome.error.startsWith(QLatin1String(
                         "the browser worker could not be started (/nonexistent/cmcp-browser")),
                 qPrintable(outcome.error));
        // It is tried again with the next call, not in a loop meanwhile.
        QCOMPARE(pool.workersStarted(), 1);
        QVERIFY(!browse(pool, QStringLiteral("http://ok/")).success);
        QCOMPARE(pool.workersStarted(), 2);
    }

    // Chromium's sandbox is off inside the jail: a worker must hold one principal's pages only.
    void eachPrincipalHasAWorkerOfItsOwn()
    {
        BrowserPool pool(options());
        const qint64 alice = browse(pool, QStringLiteral("http://ok/a1"), u"alice"_s).workerPid;
        const qint64 bob = browse(pool, QStringLiteral("http://ok/b1"), u"bob"_s).workerPid;
        QVERIFY(alice > 0 && bob > 0);
        QVERIFY2(alice != bob, "two principals' pages were loaded by one worker");
        // Each one's next page goes to its own worker again, warm.
        QCOMPARE(browse(pool, QStringLiteral("http://ok/a2"), u"alice"_s).workerPid, alice);
        QCOMPARE(browse(pool, QStringLiteral("http://ok/b2"), u"bob"_s).workerPid, bob);
    }

    // Once a second principal has come, an unbound worker is kept warm for the next principal's
    // first page; it never loaded a page of anyone's before.
    void theWarmWorkerGoesToTheNextPrincipal()
    {
        BrowserPool pool(options());
        const qint64 alice = browse(pool, QStringLiteral("http://ok/a"), u"alice"_s).workerPid;
        const qint64 bob = browse(pool, QStringLiteral("http://ok/b"), u"bob"_s).workerPid;
        // Alice's, Bob's and the warm one.
        QTRY_COMPARE(pool.workersRunning(), 3);
        const int started = pool.workersStarted();
        const qint64 carol = browse(pool, QStringLiteral("http://ok/c"), u"carol"_s).workerPid;
        QVERIFY(carol != alice && carol != bob);
        // Carol took the warm worker; another warms up.
        QTRY_COMPARE(pool.workersStarted(), started + 1);
    }

    // With WEB_BROWSER_WORKERS running, a principal without a worker gets a fresh one in place of
    // another principal's idle worker, which ends: a worker never changes hands.
    void atTheLimitAnotherPrincipalsIdleWorkerEnds()
    {
        BrowserPool::Options limited = options();
        limited.maxWorkers = 2;
        BrowserPool pool(limited);
        const qint64 alice = browse(pool, QStringLiteral("http://ok/a"), u"alice"_s).workerPid;
        const qint64 bob = browse(pool, QStringLiteral("http://ok/b"), u"bob"_s).workerPid;
        const qint64 carol = browse(pool, QStringLiteral("http://ok/c"), u"carol"_s).workerPid;
        QVERIFY(alice != bob && carol != alice && carol != bob);
        QVERIFY2(pool.workersRunning() <= 2, qPrintable(QString::number(pool.workersRunning())));
        // Alice's was the idlest and ended; her next page starts another.
        const qint64 aliceAgain =
                browse(pool, QStringLiteral("http://ok/a2"), u"alice"_s).workerPid;
        QVERIFY(aliceAgain != alice && aliceAgain != bob && aliceAgain != carol);
        QVERIFY2(pool.workersRunning() <= 2, qPrintable(QString::number(pool.workersRunning())));
    }

    // A worker busy with its principal's page is not ended for another principal: that one's
    // page waits, then gets a fresh worker.
    void aBusyWorkerIsNotTakenFromItsPrincipal()
    {
        BrowserPool::Options single = options();
        single.maxWorkers = 1;
        BrowserPool pool(single);
        std::optional<BrowseOutcome> slow;
        pool.browse({QUrl(QStringLiteral("http://slow/800")), {}, false, false, u"alice"_s},
                    [&](const BrowseOutcome &o) { slow = o; });
        QTest::qWait(200); // the page is with Alice's worker
        const BrowseOutcome bob = browse(pool, QStringLiteral("http://ok/b"), u"bob"_s);
        QVERIFY(slow.has_value());
        QVERIFY2(slow->success && bob.success, qPrintable(slow->error + bob.error));
        QVERIFY(slow->workerPid != bob.workerPid);
        QCOMPARE(pool.workersStarted(), 2);
    }

    // Once there are several principals, a principal's worker with no page for
    // WEB_BROWSER_IDLE_SECONDS ends; the warm one stays. With one principal its worker stays.
    void anIdleWorkerEnds()
    {
        BrowserPool::Options brief = options();
        brief.idleWorkerMs = 200;
        BrowserPool pool(brief);
        const qint64 alice = browse(pool, QStringLiteral("http://ok/a"), u"alice"_s).workerPid;
        QTest::qWait(1500);
        QCOMPARE(pool.workersRunning(), 1);
        QCOMPARE(browse(pool, QStringLiteral("http://ok/a2"), u"alice"_s).workerPid, alice);
        const qint64 bob = browse(pool, QStringLiteral("http://ok/b"), u"bob"_s).workerPid;
        QTRY_COMPARE_WITH_TIMEOUT(pool.workersRunning(), 1, 5000);
        const qint64 aliceAgain =
                browse(pool, QStringLiteral("http://ok/a3"), u"alice"_s).workerPid;
        QVERIFY(aliceAgain != alice && aliceAgain != bob);
    }
};

QTEST_GUILESS_MAIN(TestBrowserPool)
#include "tst_browserpool.moc"
