// The epoll event dispatcher of server/eventloop, installed as the daemon installs it: on the
// main thread, before the QCoreApplication exists. Socket notifiers on a socketpair fire for
// reading and writing, and may be disabled or deleted inside their own activation; changes of
// notifiers between two waits reach epoll once, before the next wait (a toggle costs nothing, a
// descriptor closed and reused in between is watched afresh; a write notifier just enabled is
// activated once without epoll, and watched by epoll only if it stays enabled); timers of
// each kind fire in order, repeat, and may be killed or restarted inside their own event;
// posted events, queued calls and zero timers run; another thread wakes a blocked loop.
// Timing checks allow 50 ms and more, for a loaded machine.

#include "eventloop/EpollEventDispatcher.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPointer>
#include <QSocketNotifier>
#include <QTemporaryFile>
#include <QTest>
#include <QTimer>

#include <cerrno>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <sys/socket.h>
#include <thread>
#include <vector>
#include <unistd.h>

using namespace cmcp;
using namespace std::chrono_literals;

namespace {

// Both ends of a local stream socket pair, closed at the end of the test.
struct SocketPair
{
    int fds[2] = {-1, -1};
    SocketPair() { QVERIFY(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0); }
    ~SocketPair()
    {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    void send(const char *bytes) const { QVERIFY(::write(fds[0], bytes, strlen(bytes)) > 0); }
};

// Runs the event loop for about `ms`, handing it everything that becomes ready.
void runLoopFor(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, Qt::PreciseTimer, &loop, &QEventLoop::quit);
    loop.exec();
}

// Counts its timer events; kills its timer in the first one when told to.
class TimerCounter : public QObject
{
public:
    bool killInOwnEvent = false;
    int events = 0;
    int timerId = 0;

protected:
    void timerEvent(QTimerEvent *event) override
    {
        QCOMPARE(event->timerId(), timerId);
        ++events;
        if (killInOwnEvent)
            killTimer(timerId);
    }
};

struct CustomEvent : QEvent
{
    CustomEvent() : QEvent(QEvent::User) { }
};

class EventCounter : public QObject
{
public:
    int events = 0;

protected:
    void customEvent(QEvent *event) override
    {
        if (event->type() == QEvent::User)
            ++events;
    }
};

} // namespace

class TestEpollDispatcher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void isTheMainThreadsDispatcher();
    void readAndWriteNotifiersFire();
    void notifierDisabledInsideItsActivationStops();
    void notifierDeletedInsideItsActivation();
    void siblingDeletedBeforeItsPendingActivation();
    void toggleBetweenWaitsCostsNoSystemCall();
    void deletedAfterBeingFoundReadyInTheSameBatch();
    void writerOfAFullSocketWaitsForRoom();
    void excludeSocketNotifiersHoldsThemBack();
    void regularFileIsAlwaysReady();
    void singleShotTimersFireInOrder();
    void veryCoarseTimerKeepsFullSeconds();
    void repeatingTimerRepeats();
    void timerKilledInsideItsOwnEvent();
    void timerRestartedInsideItsOwnEvent();
    void remainingTimeAndRegisteredTimers();
    void postedEventsQueuedCallsAndZeroTimersRun();
    void anotherThreadWakesABlockedLoop();
    void postsFromManyThreadsAreNeverLeftWaiting();
};

void TestEpollDispatcher::isTheMainThreadsDispatcher()
{
    QVERIFY(qobject_cast<EpollEventDispatcher *>(QAbstractEventDispatcher::instance()));
}

void TestEpollDispatcher::readAndWriteNotifiersFire()
{
    SocketPair pair;
    QSocketNotifier writable(pair.fds[0], QSocketNotifier::Write);
    QSocketNotifier readable(pair.fds[1], QSocketNotifier::Read);
    int writes = 0;
    int reads = 0;
    connect(&writable, &QSocketNotifier::activated, this, [&] {
        ++writes;
        writable.setEnabled(false);
        pair.send("ping");
    });
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        char buffer[16];
        if (::read(pair.fds[1], buffer, sizeof buffer) == 4)
            ++reads;
    });
    QTRY_COMPARE_WITH_TIMEOUT(reads, 1, 5000);
    QCOMPARE(writes, 1);
    // Drained: the level-triggered read notifier stays quiet until more arrives.
    runLoopFor(50);
    QCOMPARE(reads, 1);
    pair.send("pong");
    QTRY_COMPARE_WITH_TIMEOUT(reads, 2, 5000);
}

void TestEpollDispatcher::notifierDisabledInsideItsActivationStops()
{
    SocketPair pair;
    pair.send("unread");
    QSocketNotifier readable(pair.fds[1], QSocketNotifier::Read);
    int activations = 0;
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        ++activations;
        readable.setEnabled(false);
    });
    QTRY_COMPARE_WITH_TIMEOUT(activations, 1, 5000);
    // The bytes are still unread: enabled, it would fire on every iteration.
    runLoopFor(100);
    QCOMPARE(activations, 1);
    readable.setEnabled(true);
    QTRY_COMPARE_WITH_TIMEOUT(activations, 2, 5000);
}

void TestEpollDispatcher::notifierDeletedInsideItsActivation()
{
    SocketPair pair;
    pair.send("unread");
    QPointer<QSocketNotifier> readable = new QSocketNotifier(pair.fds[1], QSocketNotifier::Read);
    int activations = 0;
    connect(readable, &QSocketNotifier::activated, this, [&] {
        ++activations;
        delete readable.data();
    });
    QTRY_VERIFY_WITH_TIMEOUT(readable.isNull(), 5000);
    runLoopFor(100);
    QCOMPARE(activations, 1);
}

// Readable and writable at once, both found ready in one wait: the reader deletes the writer,
// whose activation is then pending and must not be delivered to freed memory.
void TestEpollDispatcher::siblingDeletedBeforeItsPendingActivation()
{
    SocketPair pair;
    pair.send("unread");
    QSocketNotifier readable(pair.fds[1], QSocketNotifier::Read);
    auto *writable = new QSocketNotifier(pair.fds[1], QSocketNotifier::Write);
    int reads = 0;
    int writes = 0;
    connect(writable, &QSocketNotifier::activated, this, [&] { ++writes; });
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        if (++reads == 1)
            delete writable;
        readable.setEnabled(false);
    });
    QTRY_COMPARE_WITH_TIMEOUT(reads, 1, 5000);
    runLoopFor(50);
    QCOMPARE(writes, 0);
}

EpollEventDispatcher &dispatcher()
{
    return *qobject_cast<EpollEventDispatcher *>(QAbstractEventDispatcher::instance());
}

// Disabled and enabled again before the loop waits, a notifier keeps its registration as it
// was: no epoll_ctl at all, and it still fires. The same for a write notifier switched on and
// off inside one activation, as Qt's sockets do around a write that completes at once. A change
// that stands costs one call; the last notifier of a descriptor goes at once.
void TestEpollDispatcher::toggleBetweenWaitsCostsNoSystemCall()
{
    SocketPair pair;
    QSocketNotifier readable(pair.fds[1], QSocketNotifier::Read);
    QSocketNotifier writable(pair.fds[1], QSocketNotifier::Write);
    writable.setEnabled(false);
    int reads = 0;
    int writes = 0;
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        char buffer[16];
        if (::read(pair.fds[1], buffer, sizeof buffer) > 0)
            ++reads;
        writable.setEnabled(true);
        writable.setEnabled(false);
    });
    connect(&writable, &QSocketNotifier::activated, this, [&] {
        ++writes;
        writable.setEnabled(false);
    });
    QCoreApplication::processEvents();
    const std::uint64_t registered = dispatcher().registrationCalls();
    for (int i = 0; i < 10; ++i) {
        writable.setEnabled(true);
        readable.setEnabled(false);
        readable.setEnabled(true);
        writable.setEnabled(false);
    }
    QCoreApplication::processEvents();
    QCOMPARE(dispatcher().registrationCalls(), registered);
    pair.send("ping");
    QTRY_COMPARE_WITH_TIMEOUT(reads, 1, 5000);
    runLoopFor(20);
    QCOMPARE(dispatcher().registrationCalls(), registered);
    QCOMPARE(writes, 0);

    // The writer on: presumed writable, it fires without asking epoll, and is off again in its
    // own activation, as a socket whose write went out at once.
    writable.setEnabled(true);
    QTRY_COMPARE_WITH_TIMEOUT(writes, 1, 5000);
    runLoopFor(20);
    QCOMPARE(writes, 1);
    QCOMPARE(dispatcher().registrationCalls(), registered);

    // The last notifier: removed at once, without waiting for the loop.
    readable.setEnabled(false);
    QCOMPARE(dispatcher().registrationCalls(), registered + 1);
    pair.send("unread");
    runLoopFor(50);
    QCOMPARE(reads, 1);
}

// A write notifier enabled on a socket with no room: its presumed activation finds the write
// would block, it stays enabled, and from then on epoll watches it: it fires again only once
// the peer has read and there is room.
void TestEpollDispatcher::writerOfAFullSocketWaitsForRoom()
{
    SocketPair pair;
    char block[4096] = {};
    while (::write(pair.fds[0], block, sizeof block) > 0) { }
    QCOMPARE(errno, EAGAIN);
    QSocketNotifier writable(pair.fds[0], QSocketNotifier::Write);
    int activations = 0;
    bool wrote = false;
    connect(&writable, &QSocketNotifier::activated, this, [&] {
        ++activations;
        if (::write(pair.fds[0], "x", 1) == 1) {
            wrote = true;
            writable.setEnabled(false);
        }
    });
    QTRY_COMPARE_WITH_TIMEOUT(activations, 1, 5000);
    runLoopFor(50);
    QCOMPARE(activations, 1);
    QVERIFY(!wrote);
    while (::read(pair.fds[1], block, sizeof block) > 0) { }
    QTRY_VERIFY_WITH_TIMEOUT(wrote, 5000);
    QCOMPARE(activations, 2);
}

// Two descriptors found ready in one wait; whichever is activated first deletes both notifiers,
// and puts another file under the other's descriptor number (as a socket closed and a new one
// accepted would) with a notifier of its own. The deleted notifier's pending activation must not
// be delivered, and the new file must be watched although its number's registration looked the
// same as before.
void TestEpollDispatcher::deletedAfterBeingFoundReadyInTheSameBatch()
{
    SocketPair first;
    SocketPair second;
    first.send("a");
    second.send("b");
    QSocketNotifier *notifiers[2] = {new QSocketNotifier(first.fds[1], QSocketNotifier::Read),
                                     new QSocketNotifier(second.fds[1], QSocketNotifier::Read)};
    const int numbers[2] = {first.fds[1], second.fds[1]};
    int activations[2] = {0, 0};
    int replacement[2] = {-1, -1};
    std::unique_ptr<QSocketNotifier> onReplacement;
    int replacementReads = 0;
    for (int self = 0; self < 2; ++self) {
        connect(notifiers[self], &QSocketNotifier::activated, this, [&, self] {
            ++activations[self];
            const int other = 1 - self;
            delete notifiers[other];
            notifiers[other] = nullptr;
            QVERIFY(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, replacement) == 0);
            // The other's number now names the new socket (its old file is closed by dup2).
            QVERIFY(::dup2(replacement[0], numbers[other]) == numbers[other]);
            ::close(replacement[0]);
            onReplacement =
                    std::make_unique<QSocketNotifier>(numbers[other], QSocketNotifier::Read);
            connect(onReplacement.get(), &QSocketNotifier::activated, this, [&, other] {
                char buffer[16];
                if (::read(numbers[other], buffer, sizeof buffer) > 0)
                    ++replacementReads;
            });
            QVERIFY(::write(replacement[1], "new", 3) == 3);
            notifiers[self]->setEnabled(false);
            notifiers[self]->deleteLater();
            notifiers[self] = nullptr;
        });
    }
    QTRY_COMPARE_WITH_TIMEOUT(replacementReads, 1, 5000);
    QCOMPARE(activations[0] + activations[1], 1);
    runLoopFor(50);
    QCOMPARE(activations[0] + activations[1], 1);
    onReplacement.reset();
    ::close(replacement[1]);
}

void TestEpollDispatcher::excludeSocketNotifiersHoldsThemBack()
{
    SocketPair pair;
    pair.send("unread");
    QSocketNotifier readable(pair.fds[1], QSocketNotifier::Read);
    int activations = 0;
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        ++activations;
        readable.setEnabled(false);
    });
    for (int i = 0; i < 10; ++i)
        QCoreApplication::processEvents(QEventLoop::ExcludeSocketNotifiers);
    QCOMPARE(activations, 0);
    QTRY_COMPARE_WITH_TIMEOUT(activations, 1, 5000);
}

// epoll refuses regular files, which poll() reports always ready: stdin redirected from a file
// must still be read.
void TestEpollDispatcher::regularFileIsAlwaysReady()
{
    QTemporaryFile file;
    QVERIFY(file.open());
    QSocketNotifier readable(file.handle(), QSocketNotifier::Read);
    int activations = 0;
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        ++activations;
        readable.setEnabled(false);
    });
    QTRY_COMPARE_WITH_TIMEOUT(activations, 1, 5000);
}

void TestEpollDispatcher::singleShotTimersFireInOrder()
{
    QList<int> fired;
    QList<qint64> at;
    QElapsedTimer clock;
    clock.start();
    const auto record = [&](int interval) {
        return [&, interval] {
            fired.append(interval);
            at.append(clock.elapsed());
        };
    };
    QTimer::singleShot(300, Qt::CoarseTimer, this, record(300));
    QTimer::singleShot(100, Qt::PreciseTimer, this, record(100));
    QTimer::singleShot(200, Qt::CoarseTimer, this, record(200));
    QTimer::singleShot(10, Qt::PreciseTimer, this, record(10));
    QTRY_COMPARE_WITH_TIMEOUT(fired.size(), 4, 5000);
    QCOMPARE(fired, QList<int>({10, 100, 200, 300}));
    for (int i = 0; i < fired.size(); ++i) {
        // Never early (a coarse timer is only ever late); late by no more than a loaded
        // machine explains.
        QVERIFY2(at[i] >= fired[i] - 1, qPrintable(QString::number(at[i])));
        QVERIFY2(at[i] <= fired[i] + 100, qPrintable(QString::number(at[i])));
    }
}

void TestEpollDispatcher::veryCoarseTimerKeepsFullSeconds()
{
    QElapsedTimer clock;
    clock.start();
    qint64 firedAt = -1;
    QTimer::singleShot(1000, Qt::VeryCoarseTimer, this, [&] { firedAt = clock.elapsed(); });
    QTRY_VERIFY_WITH_TIMEOUT(firedAt >= 0, 5000);
    // The nearest full second of the monotonic clock: half a second either way.
    QVERIFY2(firedAt >= 500 && firedAt <= 1600, qPrintable(QString::number(firedAt)));
}

void TestEpollDispatcher::repeatingTimerRepeats()
{
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    timer.setInterval(20);
    int ticks = 0;
    connect(&timer, &QTimer::timeout, this, [&] {
        if (++ticks == 5)
            timer.stop();
    });
    QElapsedTimer clock;
    clock.start();
    timer.start();
    QTRY_COMPARE_WITH_TIMEOUT(ticks, 5, 5000);
    QVERIFY2(clock.elapsed() >= 99, qPrintable(QString::number(clock.elapsed())));
    runLoopFor(100);
    QCOMPARE(ticks, 5);
}

void TestEpollDispatcher::timerKilledInsideItsOwnEvent()
{
    TimerCounter counter;
    counter.killInOwnEvent = true;
    counter.timerId = counter.startTimer(10ms, Qt::PreciseTimer);
    QTRY_COMPARE_WITH_TIMEOUT(counter.events, 1, 5000);
    runLoopFor(100);
    QCOMPARE(counter.events, 1);
    QCOMPARE(QAbstractEventDispatcher::instance()->remainingTime(counter.timerId), -1);
}

// QTimer::start() inside its own timeout kills the timer and registers a new one (often under
// the same id): the new interval counts.
void TestEpollDispatcher::timerRestartedInsideItsOwnEvent()
{
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    timer.setInterval(10);
    QElapsedTimer clock;
    QList<qint64> at;
    connect(&timer, &QTimer::timeout, this, [&] {
        at.append(clock.elapsed());
        if (at.size() == 1)
            timer.start(200);
        else
            timer.stop();
    });
    clock.start();
    timer.start();
    QTRY_COMPARE_WITH_TIMEOUT(at.size(), 2, 5000);
    QVERIFY2(at[1] - at[0] >= 199, qPrintable(QString::number(at[1] - at[0])));
}

void TestEpollDispatcher::remainingTimeAndRegisteredTimers()
{
    QObject owner;
    QAbstractEventDispatcher *dispatcher = QAbstractEventDispatcher::instance();
    const int precise = owner.startTimer(5000ms, Qt::PreciseTimer);
    const int coarse = owner.startTimer(3000ms, Qt::CoarseTimer);
    const int remaining = dispatcher->remainingTime(precise);
    QVERIFY2(remaining > 4900 && remaining <= 5000, qPrintable(QString::number(remaining)));
    const QList<QAbstractEventDispatcher::TimerInfo> timers = dispatcher->registeredTimers(&owner);
    QCOMPARE(timers.size(), 2);
    for (const QAbstractEventDispatcher::TimerInfo &info : timers) {
        QVERIFY(info.timerId == precise || info.timerId == coarse);
        QCOMPARE(info.interval, info.timerId == precise ? 5000 : 3000);
        QCOMPARE(info.timerType, info.timerId == precise ? Qt::PreciseTimer : Qt::CoarseTimer);
    }
    owner.killTimer(precise);
    QCOMPARE(dispatcher->remainingTime(precise), -1);
    QCOMPARE(dispatcher->registeredTimers(&owner).size(), 1);
    // Unregistered with their object.
    QVERIFY(dispatcher->unregisterTimers(&owner));
    QCOMPARE(dispatcher->remainingTime(coarse), -1);
    QVERIFY(dispatcher->registeredTimers(&owner).isEmpty());
}

void TestEpollDispatcher::postedEventsQueuedCallsAndZeroTimersRun()
{
    EventCounter counter;
    QCoreApplication::postEvent(&counter, new CustomEvent);
    QCoreApplication::postEvent(&counter, new CustomEvent);
    bool queued = false;
    bool zeroTimer = false;
    QMetaObject::invokeMethod(
            this, [&] { queued = true; }, Qt::QueuedConnection);
    QTimer::singleShot(0, this, [&] { zeroTimer = true; });
    QTRY_VERIFY_WITH_TIMEOUT(queued && zeroTimer && counter.events == 2, 5000);
}

void TestEpollDispatcher::anotherThreadWakesABlockedLoop()
{
    QEventLoop loop;
    // Only a guard: the loop must end long before it.
    QTimer::singleShot(10000, &loop, [&] { loop.exit(1); });
    QElapsedTimer clock;
    clock.start();
    std::thread poster([&] {
        std::this_thread::sleep_for(200ms);
        QMetaObject::invokeMethod(
                &loop, [&] { loop.exit(0); }, Qt::QueuedConnection);
    });
    const int result = loop.exec();
    poster.join();
    QCOMPARE(result, 0);
    QVERIFY2(clock.elapsed() >= 190 && clock.elapsed() < 5000,
             qPrintable(QString::number(clock.elapsed())));
}

// Threads that post to the loop and wait for each delivery, as the audit log's sync threads do:
// a wake-up lost between the loop's read of its eventfd and another thread's wakeUp() would
// leave a posted event waiting until something else woke the loop (here: the guard).
void TestEpollDispatcher::postsFromManyThreadsAreNeverLeftWaiting()
{
    constexpr int threads = 4;
    constexpr int roundTrips = 5000;
    QEventLoop loop;
    QTimer::singleShot(10000, &loop, [&] { loop.exit(1); });
    std::atomic<int> finished{0};
    std::atomic<int> stalls{0};
    std::vector<std::thread> posters;
    for (int t = 0; t < threads; ++t)
        posters.emplace_back([&] {
            for (int i = 0; i < roundTrips; ++i) {
                auto delivered = std::make_shared<std::promise<void>>();
                std::future<void> done = delivered->get_future();
                QMetaObject::invokeMethod(
                        &loop, [delivered] { delivered->set_value(); }, Qt::QueuedConnection);
                if (done.wait_for(2s) != std::future_status::ready) {
                    ++stalls;
                    break;
                }
            }
            if (++finished == threads)
                QMetaObject::invokeMethod(
                        &loop, [&] { loop.exit(0); }, Qt::QueuedConnection);
        });
    const int result = loop.exec();
    for (std::thread &poster : posters)
        poster.join();
    QCOMPARE(stalls.load(), 0);
    QCOMPARE(result, 0);
}

int main(int argc, char *argv[])
{
    QCoreApplication::setEventDispatcher(new EpollEventDispatcher);
    QCoreApplication app(argc, argv);
    TestEpollDispatcher test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_epolldispatcher.moc"
