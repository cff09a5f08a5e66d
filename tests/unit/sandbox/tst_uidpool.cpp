// UidPool: a distinct uid per running job, refusal when all are in use, reuse as late as
// possible, and the reserve no one principal (nor the server's own uses) can take.

#include "sandbox/UidPool.h"

#include <QSet>
#include <QTest>

using namespace cmcp;

class TestUidPool : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void handsOutDistinctUidsInRangeThenRefuses()
    {
        const auto pool = UidPool::create(100000, 50, 4242);
        std::vector<UidLease> leases;
        QSet<uid_t> uids;
        for (int i = 0; i < 50; ++i) {
            std::optional<UidLease> lease = pool->acquire(QStringLiteral("p%1").arg(i));
            QVERIFY(lease);
            QVERIFY(lease->uid() >= 100000 && lease->uid() < 100050);
            QCOMPARE(lease->gid(), gid_t(4242));
            uids.insert(lease->uid());
            leases.push_back(std::move(*lease));
        }
        QCOMPARE(uids.size(), 50);
        QCOMPARE(pool->available(), uid_t(0));
        QVERIFY(!pool->acquire(QStringLiteral("newcomer")));

        leases[17].release();
        QCOMPARE(pool->available(), uid_t(1));
        std::optional<UidLease> again = pool->acquire(QStringLiteral("p17"));
        QVERIFY(again);
        QCOMPARE(again->uid(), uid_t(100017));
        QVERIFY(!pool->acquire(QStringLiteral("newcomer")));
    }

    void destroyedLeaseGoesBack()
    {
        const auto pool = UidPool::create(100000, 1, 100000);
        {
            std::optional<UidLease> lease = pool->acquire(QStringLiteral("a"));
            QVERIFY(lease);
            QVERIFY(!pool->acquire(QStringLiteral("a")));
        }
        QVERIFY(pool->acquire(QStringLiteral("a")));
    }

    void movedLeaseIsReleasedOnce()
    {
        const auto pool = UidPool::create(100000, 2, 100000);
        std::optional<UidLease> first = pool->acquire(QStringLiteral("a"));
        QVERIFY(first);
        UidLease moved = std::move(*first);
        QVERIFY(!first->isValid());
        first.reset();
        QCOMPARE(pool->available(), uid_t(1));
        moved.release();
        moved.release();
        QCOMPARE(pool->available(), uid_t(2));
    }

    void roundRobinDelaysReuse()
    {
        const auto pool = UidPool::create(100000, 3, 100000);
        QCOMPARE(pool->acquire(QStringLiteral("a"))->uid(), uid_t(100000)); // released at once
        QCOMPARE(pool->acquire(QStringLiteral("a"))->uid(), uid_t(100001));
        QCOMPARE(pool->acquire(QStringLiteral("a"))->uid(), uid_t(100002));
        QCOMPARE(pool->acquire(QStringLiteral("a"))->uid(), uid_t(100000));
    }

    void retiredUidNeverComesBack()
    {
        const auto pool = UidPool::create(100000, 2, 100000);
        std::optional<UidLease> lease = pool->acquire(QStringLiteral("a"));
        QVERIFY(lease);
        lease->retire();
        lease.reset();
        QCOMPARE(pool->available(), uid_t(1));
        std::optional<UidLease> other = pool->acquire(QStringLiteral("a"));
        QVERIFY(other);
        QCOMPARE(other->uid(), uid_t(100001));
        QVERIFY(!pool->acquire(QStringLiteral("b")));
    }

    // One principal takes all but the reserve, a tenth of the pool; each principal that holds
    // none gets one of the reserve, and the server's own uses get none of it.
    void reserveIsKeptForPrincipalsHoldingNone()
    {
        const auto pool = UidPool::create(100000, 50, 100000);
        QCOMPARE(pool->reserve(), uid_t(5));
        std::vector<UidLease> leases;
        while (std::optional<UidLease> lease = pool->acquire(QStringLiteral("greedy")))
            leases.push_back(std::move(*lease));
        QCOMPARE(leases.size(), size_t(45));
        QCOMPARE(pool->heldBy(QStringLiteral("greedy")), uid_t(45));
        QVERIFY(!pool->acquire(QString()));
        for (int i = 0; i < 5; ++i) {
            const QString other = QStringLiteral("other%1").arg(i);
            std::optional<UidLease> lease = pool->acquire(other);
            QVERIFY(lease);
            // Holding one, it has no more claim on the reserve than the greedy one.
            QVERIFY(!pool->acquire(other));
            leases.push_back(std::move(*lease));
        }
        QCOMPARE(pool->available(), uid_t(0));
        QVERIFY(!pool->acquire(QStringLiteral("late")));
        leases.front().release();
        QVERIFY(!pool->acquire(QStringLiteral("greedy")));
        QVERIFY(pool->acquire(QStringLiteral("late")));
    }

    // The server's own lease taken by a principal's call counts as that principal's; a retired
    // uid is no longer anyone's.
    void passedAndRetiredLeasesAreCounted()
    {
        const auto pool = UidPool::create(100000, 10, 100000);
        QCOMPARE(pool->reserve(), uid_t(1));
        std::optional<UidLease> armed = pool->acquire(QString());
        QVERIFY(armed);
        armed->passTo(QStringLiteral("a"));
        QCOMPARE(pool->heldBy(QString()), uid_t(0));
        QCOMPARE(pool->heldBy(QStringLiteral("a")), uid_t(1));
        std::optional<UidLease> second = pool->acquire(QStringLiteral("a"));
        QVERIFY(second);
        second->retire();
        QCOMPARE(pool->heldBy(QStringLiteral("a")), uid_t(1));
        armed->release();
        QCOMPARE(pool->heldBy(QStringLiteral("a")), uid_t(0));
        QCOMPARE(pool->available(), uid_t(9));
    }

    // A pool of one uid keeps no reserve: it would close the pool to everyone.
    void poolOfOneKeepsNoReserve()
    {
        const auto pool = UidPool::create(100000, 1, 100000);
        QCOMPARE(pool->reserve(), uid_t(0));
        QVERIFY(pool->acquire(QString()));
    }

    void leaseMayOutliveItsPool()
    {
        std::optional<UidLease> lease;
        {
            const auto pool = UidPool::create(100000, 1, 100000);
            lease = pool->acquire(QStringLiteral("a"));
        }
        QVERIFY(lease->isValid());
        lease->release(); // must not touch the destroyed pool
        QVERIFY(!lease->isValid());
    }
};

QTEST_GUILESS_MAIN(TestUidPool)
#include "tst_uidpool.moc"
