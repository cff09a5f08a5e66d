// A cell's counters (jail/cgroup_counters.h), read through descriptors of interface files
// as the kernel writes them, in a temporary directory standing in for a cgroup: v1 (cpuacct,
// memory, pids) and v2 (cpu.stat, memory.peak, memory.events), alone and side by side as on a
// hybrid host.
#include "jail/cgroup_counters.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace cmcp::jail;

namespace {

void write(const QString &dir, const char *name, const QByteArray &text)
{
    QFile file(dir + QLatin1Char('/') + QLatin1String(name));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

QByteArray read(const QString &dir, const char *name)
{
    QFile file(dir + QLatin1Char('/') + QLatin1String(name));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void closeAll(const std::vector<CounterFile> &counters)
{
    for (const CounterFile &counter : counters)
        ::close(counter.fd);
}

} // namespace

class TestCgroupCounters : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsVersionOne()
    {
        QTemporaryDir dir;
        const QString path = dir.path();
        write(path, "cpuacct.usage", "123456789\n");
        write(path, "memory.max_usage_in_bytes", "4096000\n");
        write(path, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        write(path, "pids.events", "max 3\n");
        const std::vector<CounterFile> counters = openCounters({{path.toStdString()}});
        QCOMPARE(counters.size(), std::size_t(4));
        const CounterReading reading = readCounters(counters);
        QCOMPARE(reading.cpuNanoseconds.value_or(0), std::uint64_t(123456789));
        QCOMPARE(reading.peakMemoryBytes.value_or(0), std::uint64_t(4096000));
        QCOMPARE(reading.oomKills, std::uint64_t(2));
        QCOMPARE(reading.pidsRefused, std::uint64_t(3));
        // The peak starts afresh through the same descriptor it is read from.
        QVERIFY(resetPeakMemory(counters));
        QCOMPARE(read(path, "memory.max_usage_in_bytes").left(1), QByteArray("0"));
        closeAll(counters);
    }

    void readsVersionTwoAndSumsHierarchies()
    {
        QTemporaryDir v1, v2;
        write(v1.path(), "memory.max_usage_in_bytes", "100\n");
        write(v1.path(), "pids.events", "max 1\n");
        write(v2.path(), "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n");
        write(v2.path(), "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
        write(v2.path(), "pids.events", "max 2\n");
        const std::vector<CounterFile> counters =
                openCounters({{v1.path().toStdString(), v2.path().toStdString()}});
        const CounterReading reading = readCounters(counters);
        QCOMPARE(reading.cpuNanoseconds.value_or(0), std::uint64_t(1500000));
        QCOMPARE(reading.peakMemoryBytes.value_or(0), std::uint64_t(100));
        QCOMPARE(reading.oomKills, std::uint64_t(1));
        QCOMPARE(reading.pidsRefused, std::uint64_t(3)); // both hierarchies count their forks
        closeAll(counters);
    }

    void missingFilesAreUnknownNotZero()
    {
        QTemporaryDir dir;
        write(dir.path(), "pids.events", "max 0\n");
        const std::vector<CounterFile> counters = openCounters({{dir.path().toStdString()}});
        const CounterReading reading = readCounters(counters);
        QVERIFY(!reading.cpuNanoseconds);
        QVERIFY(!reading.peakMemoryBytes);
        // Without a peak file there is nothing to reset: the peak must not be reported.
        QVERIFY(!resetPeakMemory(counters));
        closeAll(counters);
    }

    void garbledValuesAreNotRead()
    {
        QTemporaryDir dir;
        write(dir.path(), "cpuacct.usage", "12ab\n");
        write(dir.path(), "memory.oom_control", "oom_kill_disable 0\noom_killer 9\n");
        const std::vector<CounterFile> counters = openCounters({{dir.path().toStdString()}});
        const CounterReading reading = readCounters(counters);
        QVERIFY(!reading.cpuNanoseconds);
        QCOMPARE(reading.oomKills, std::uint64_t(0));
        closeAll(counters);
    }
};

QTEST_GUILESS_MAIN(TestCgroupCounters)
#include "tst_cgroupcounters.moc"
