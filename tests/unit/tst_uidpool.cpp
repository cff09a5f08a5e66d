// UidPool: a distinct uid per running job, refusal when all are in use, and reuse as late as
// possible.

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
            std::optional<UidLease> lease = pool->acquire();
            QVERIFY(lease);
            QVERIFY(lease->uid() >= 100000 && lease->uid() < 100050);
            QCOMPARE(lease->gid(), gid_t(4242));
            uids.insert(lease->uid());
            leases.push_back(std::move(*lease));
        }
        QCOMPARE(uids.size(), 50);
        QCOMPARE(pool->available(), uid_t(0));
        QVERIFY(!pool->acquire());

        leases[17].release();
        QCOMPARE(pool->available(), uid_t(1));
        std::optional<UidLease> again = pool->acquire();
        QVERIFY(again);
        QCOMPARE(again->uid(), uid_t(100017));
        QVERIFY(!pool->acquire());
    }

    void destroyedLeaseGoesBack()
    {
        const auto pool = UidPool::create(100000, 1, 100000);
        {
            std::optional<UidLease> lease = pool->acquire();
            QVERIFY(lease);
            QVERIFY(!pool->acquire());
        }
        QVERIFY(pool->acquire());
    }

    void movedLeaseIsReleasedOnce()
    {
        const auto pool = UidPool::create(100000, 2, 100000);
        std::optional<UidLease> first = pool->acquire();
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
        QCOMPARE(pool->acquire()->uid(), uid_t(100000)); // released at once
        QCOMPARE(pool->acquire()->uid(), uid_t(100001));
        QCOMPARE(pool->acquire()->uid(), uid_t(100002));
        QCOMPARE(pool->acquire()->uid(), uid_t(100000));
    }

    void retiredUidNeverComesBack()
    {
        const auto pool = UidPool::create(100000, 2, 100000);
        std::optional<UidLease> lease = pool->acquire();
        QVERIFY(lease);
        lease->retire();
        lease.reset();
        QCOMPARE(pool->available(), uid_t(1));
        std::optional<UidLease> other = pool->acquire();
        QVERIFY(other);
        QCOMPARE(other->uid(), uid_t(100001));
        QVERIFY(!pool->acquire());
    }

    void leaseMayOutliveItsPool()
    {
        std::optional<UidLease> lease;
        {
            const auto pool = UidPool::create(100000, 1, 100000);
            lease = pool->acquire();
        }
        QVERIFY(lease->isValid());
        lease->release(); // must not touch the destroyed pool
        QVERIFY(!lease->isValid());
    }
};

QTEST_GUILESS_MAIN(TestUidPool)
#include "tst_uidpool.moc"
