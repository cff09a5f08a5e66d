#include "eventloop/EpollEventDispatcher.h"

#include "posix/ErrnoText.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QTimerEvent>

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <ctime>

namespace cmcp {

namespace {

constexpr std::int64_t nsPerMs = 1000 * 1000;
constexpr std::int64_t nsPerSecond = 1000 * nsPerMs;

// Ready descriptors taken from the kernel per epoll_wait(); more simply wait for the next
// iteration, which follows at once because the registrations are level-triggered.
constexpr int maxEventsPerWait = 256;

std::int64_t monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t(now.tv_sec) * nsPerSecond + now.tv_nsec;
}

// The epoll events one kind of notifier waits for.
std::uint32_t eventsFor(int type)
{
    switch (type) {
    case QSocketNotifier::Read:
        return EPOLLIN;
    case QSocketNotifier::Write:
        return EPOLLOUT;
    case QSocketNotifier::Exception:
        return EPOLLPRI;
    }
    return 0;
}

const char *typeName(int type)
{
    switch (type) {
    case QSocketNotifier::Read:
        return "read";
    case QSocketNotifier::Write:
        return "write";
    default:
        return "exception";
    }
}

UniqueFd makeEpoll()
{
    UniqueFd fd(epoll_create1(EPOLL_CLOEXEC));
    if (!fd.isValid())
        qFatal("epoll_create1: %s", qPrintable(errnoText(errno)));
    return fd;
}

void watchForReading(int epollFd, int fd)
{
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, &event) != 0)
        qFatal("epoll_ctl: %s", qPrintable(errnoText(errno)));
}

} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent)
    : QAbstractEventDispatcher(parent),
      m_epoll(makeEpoll()),
      m_wakeUpOnly(makeEpoll())
{
    // Without its epoll set and its eventfd the loop cannot run at all: there is no way to
    // report this to a caller of a constructor that Qt's installation path never checks.
    m_eventFd = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!m_eventFd.isValid())
        qFatal("eventfd: %s", qPrintable(errnoText(errno)));
    watchForReading(m_epoll.get(), m_eventFd.get());
    watchForReading(m_wakeUpOnly.get(), m_eventFd.get());
}

EpollEventDispatcher::~EpollEventDispatcher() = default;

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted.store(false, std::memory_order_relaxed);
    Q_EMIT awake();
    QCoreApplication::sendPostedEvents();

    // An event posted while we sleep, from this thread or another, comes with wakeUp(), which
    // makes the eventfd readable: so blocking here never leaves a posted event waiting.
    const bool mayWait = (flags & QEventLoop::WaitForMoreEvents)
            && !m_interrupted.load(std::memory_order_relaxed);
    if (mayWait)
        Q_EMIT aboutToBlock();
    if (m_interrupted.load(std::memory_order_relaxed))
        return false;

    applyRegistrationChanges();
    const bool includeSockets = !(flags & QEventLoop::ExcludeSocketNotifiers);
    int timeoutMs = 0;
    if (mayWait && !(includeSockets && (m_alwaysReady > 0 || !m_presumedWritable.empty())))
        timeoutMs = timeoutForNextTimer(monotonicNs());
    int activated = waitAndActivateSockets(timeoutMs, includeSockets);
    activated += activateTimers();
    return activated > 0;
}

// Waits up to `timeoutMs` (-1: without limit) and activates what is ready: the wake-up, and
// unless excluded the socket notifiers. Returns how many it activated.
int EpollEventDispatcher::waitAndActivateSockets(int timeoutMs, bool includeSockets)
{
    epoll_event events[maxEventsPerWait];
    const int epollFd = includeSockets ? m_epoll.get() : m_wakeUpOnly.get();
    const int ready = epoll_wait(epollFd, events, maxEventsPerWait, timeoutMs);
    if (ready < 0) {
        // EINTR: a signal handler ran; the caller's loop simply comes back.
        if (errno != EINTR)
            qWarning("epoll_wait: %s", qPrintable(errnoText(errno)));
        return 0;
    }

    // On the stack for the usual few, so that an iteration allocates nothing.
    PendingList pending;
    int activated = 0;
    for (int i = 0; i < ready; ++i) {
        const int fd = events[i].data.fd;
        const std::uint32_t revents = events[i].events;
        if (fd == m_eventFd.get()) {
            // Cleared after the read: a wakeUp() that finds the flag still set has posted an
            // event that the next sendPostedEvents() delivers before anything blocks, and one
            // after the clear writes again. Cleared before, a wakeUp() between the clear and
            // the read would write, have its write read here and leave the flag set with
            // nothing to read: every later wakeUp() would then skip its write, and a loop
            // about to block would sleep on their events.
            eventfd_t value = 0;
            eventfd_read(m_eventFd.get(), &value);
            m_wakeUpPending.store(false, std::memory_order_release);
            ++activated;
            continue;
        }
        const auto found = m_watched.find(fd);
        if (found == m_watched.end())
            continue;
        const Watched &watched = found->second;
        // As Qt's poll()-based dispatcher does: a hang-up or an error wakes the reader, which
        // then reads the end of the stream or the error; an error also wakes a writer, and a
        // hang-up does when nobody reads, lest level-triggered reports repeat for nobody.
        QSocketNotifier *reader = watched.notifiers[QSocketNotifier::Read];
        QSocketNotifier *writer = watched.notifiers[QSocketNotifier::Write];
        QSocketNotifier *exception = watched.notifiers[QSocketNotifier::Exception];
        if (reader && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
            pending.push_back(reader);
        if (writer && (revents & (EPOLLOUT | EPOLLERR | (reader ? 0u : std::uint32_t(EPOLLHUP))))
            && !found->second.presumedWritable)
            pending.push_back(writer);
        if (exception && (revents & EPOLLPRI))
            pending.push_back(exception);
    }
    // After what epoll found, so that a reader runs before the writer of its descriptor, as when
    // both are found ready.
    std::vector<std::pair<int, QSocketNotifier *>> presumed;
    if (includeSockets && !m_presumedWritable.empty()) {
        presumed.swap(m_presumedWritable);
        for (const auto &[fd, writer] : presumed) {
            if (writer)
                pending.push_back(writer);
        }
    }
    if (includeSockets && m_alwaysReady > 0) {
        // Descriptors epoll cannot watch (regular files) are always ready, as poll() says.
        for (const auto &[fd, watched] : m_watched) {
            if (!watched.alwaysReady)
                continue;
            for (QSocketNotifier *notifier : watched.notifiers) {
                if (notifier)
                    pending.push_back(notifier);
            }
        }
    }
    if (pending.empty())
        return activated;

    // A notifier found ready here may also sit in the list of an outer processEvents() (this
    // one runs in a nested loop): it is activated once, here.
    for (PendingList *outer : m_pending) {
        for (QSocketNotifier *&entry : *outer) {
            if (entry && std::find(pending.begin(), pending.end(), entry) != pending.end())
                entry = nullptr;
        }
    }
    m_pending.push_back(&pending);
    QEvent event(QEvent::SockAct);
    for (QSocketNotifier *&entry : pending) {
        // Blanked when an earlier handler disabled or deleted this notifier.
        QSocketNotifier *notifier = std::exchange(entry, nullptr);
        if (!notifier)
            continue;
        QCoreApplication::sendEvent(notifier, &event);
        ++activated;
    }
    m_pending.pop_back();
    // A presumed writer still enabled had no room: from now on epoll watches it.
    for (const auto &[fd, writer] : presumed) {
        const auto found = m_watched.find(fd);
        if (writer && found != m_watched.end()
            && found->second.notifiers[QSocketNotifier::Write] == writer)
            noteChange(fd, found->second);
    }
    return activated;
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    const int type = notifier->type();
    if (fd < 0 || type < QSocketNotifier::Read || type > QSocketNotifier::Exception)
        return;
    Watched &watched = m_watched[fd];
    if (watched.notifiers[type] && watched.notifiers[type] != notifier)
        qWarning("EpollEventDispatcher: a second %s notifier for descriptor %d replaces the first",
                 typeName(type), fd);
    watched.notifiers[type] = notifier;
    noteChange(fd, watched);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    forgetPending(notifier);
    const int fd = int(notifier->socket());
    const int type = notifier->type();
    const auto found = m_watched.find(fd);
    if (found == m_watched.end() || type < QSocketNotifier::Read
        || type > QSocketNotifier::Exception || found->second.notifiers[type] != notifier)
        return;
    Watched &watched = found->second;
    watched.notifiers[type] = nullptr;
    if (type == QSocketNotifier::Write)
        watched.presumedWritable = false;
    if (watched.notifiers[0] || watched.notifiers[1] || watched.notifiers[2]) {
        noteChange(fd, watched);
        return;
    }
    // The last notifier of a descriptor goes at once: it usually goes because the descriptor is
    // about to be closed, and its number may name another file before the next wait, which a
    // deferred removal could not tell from the old one.
    if (watched.alwaysReady)
        --m_alwaysReady;
    else if (watched.events)
        epollControl(EPOLL_CTL_DEL, fd, 0); // ENOENT, EBADF: closed first, and dropped with it
    m_watched.erase(found);
}

void EpollEventDispatcher::noteChange(int fd, Watched &watched)
{
    if (!watched.changed) {
        watched.changed = true;
        m_changed.push_back(fd);
    }
}

// Called before every wait: the registrations of the descriptors whose notifiers changed
// follow the notifiers now, whatever happened to them in between.
void EpollEventDispatcher::applyRegistrationChanges()
{
    for (const int fd : m_changed) {
        const auto found = m_watched.find(fd);
        if (found == m_watched.end())
            continue;
        found->second.changed = false;
        if (!updateRegistration(fd, found->second))
            m_watched.erase(found);
    }
    m_changed.clear();
}

int EpollEventDispatcher::epollControl(int operation, int fd, std::uint32_t events)
{
    ++m_registrationCalls;
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    return epoll_ctl(m_epoll.get(), operation, fd, operation == EPOLL_CTL_DEL ? nullptr : &event);
}

// Brings the descriptor's epoll registration to the union of its notifiers' events; returns
// false when no notifier is left.
bool EpollEventDispatcher::updateRegistration(int fd, Watched &watched)
{
    std::uint32_t wanted = 0;
    for (int type = QSocketNotifier::Read; type <= QSocketNotifier::Exception; ++type) {
        if (watched.notifiers[type])
            wanted |= eventsFor(type);
    }
    if (!wanted)
        return false; // unregisterSocketNotifier() removed the registration
    if ((wanted & EPOLLOUT) && !(watched.events & EPOLLOUT) && !watched.alwaysReady) {
        if (!watched.presumedWritable) {
            watched.presumedWritable = true;
            m_presumedWritable.emplace_back(fd, watched.notifiers[QSocketNotifier::Write]);
            wanted &= ~std::uint32_t(EPOLLOUT);
        } else {
            watched.presumedWritable = false; // activated, still enabled: it needs epoll
        }
    }
    if (watched.alwaysReady || wanted == watched.events)
        return true;
    int result = 0;
    if (!watched.events) {
        result = epollControl(EPOLL_CTL_ADD, fd, wanted);
        // A descriptor number closed while registered and open again as another file.
        if (result != 0 && errno == EEXIST)
            result = epollControl(EPOLL_CTL_MOD, fd, wanted);
    } else {
        result = epollControl(EPOLL_CTL_MOD, fd, wanted);
        if (result != 0 && errno == ENOENT)
            result = epollControl(EPOLL_CTL_ADD, fd, wanted);
    }
    if (result != 0) {
        if (errno == EPERM) {
            // A regular file (stdin redirected from one): poll() reports it always ready.
            watched.alwaysReady = true;
            ++m_alwaysReady;
        } else {
            qWarning("EpollEventDispatcher: cannot watch descriptor %d: %s", fd,
                     qPrintable(errnoText(errno)));
        }
        watched.events = 0;
        return true;
    }
    watched.events = wanted;
    return true;
}

void EpollEventDispatcher::forgetPending(QSocketNotifier *notifier)
{
    for (PendingList *list : m_pending)
        std::replace(list->begin(), list->end(), notifier, static_cast<QSocketNotifier *>(nullptr));
    for (auto &[fd, writer] : m_presumedWritable) {
        if (writer == notifier)
            writer = nullptr;
    }
}

// Qt's timer kinds, as Qt's own dispatcher reads them: a precise timer keeps its
// millisecond; a coarse one may be late by up to 5 % of its interval, which lets timers of
// similar deadlines share a wake-up; a very coarse one keeps full seconds.
std::int64_t EpollEventDispatcher::firstDeadline(const Timer &timer, std::int64_t expectedNs) const
{
    const qint64 interval = timer.intervalMs;
    switch (timer.type) {
    case Qt::PreciseTimer:
        return expectedNs;
    case Qt::CoarseTimer:
        if (interval > 20 && interval < 20000) {
            // The coarsest of these steps within 5 % of the interval: deadlines round up to a
            // multiple of it on the monotonic clock.
            static constexpr std::int64_t stepsMs[] = {500, 200, 100, 50, 20, 10, 5, 2, 1};
            const std::int64_t slackMs = interval / 20;
            for (const std::int64_t stepMs : stepsMs) {
                if (stepMs <= slackMs) {
                    const std::int64_t step = stepMs * nsPerMs;
                    return (expectedNs + step - 1) / step * step;
                }
            }
            return expectedNs;
        }
        if (interval <= 20)
            return expectedNs;
        [[fallthrough]];
    case Qt::VeryCoarseTimer:
        // The nearest full second.
        return (expectedNs + nsPerSecond / 2) / nsPerSecond * nsPerSecond;
    }
    return expectedNs;
}

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                                         QObject *object)
{
    if (timerId < 1 || interval < 0 || !object) {
        qWarning("EpollEventDispatcher::registerTimer: invalid arguments");
        return;
    }
    // A known id is replaced, not duplicated.
    unregisterTimer(timerId);
    Timer timer;
    timer.object = object;
    timer.intervalMs = interval;
    timer.type = timerType;
    if (timerType == Qt::VeryCoarseTimer || (timerType == Qt::CoarseTimer && interval >= 20000)) {
        // Whole seconds, rounded to the nearest.
        timer.type = Qt::VeryCoarseTimer;
        timer.intervalMs = (interval + 500) / 1000 * 1000;
    }
    timer.expectedNs = monotonicNs() + timer.intervalMs * nsPerMs;
    timer.deadlineNs = firstDeadline(timer, timer.expectedNs);
    timer.serial = m_nextSerial++;
    m_deadlines.emplace(timer.deadlineNs, timerId);
    m_timersByObject.emplace(object, timerId);
    m_timers.emplace(timerId, timer);
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    const auto found = m_timers.find(timerId);
    if (found == m_timers.end())
        return false;
    m_deadlines.erase({found->second.deadlineNs, timerId});
    const auto [first, last] = m_timersByObject.equal_range(found->second.object);
    for (auto it = first; it != last; ++it) {
        if (it->second == timerId) {
            m_timersByObject.erase(it);
            break;
        }
    }
    m_timers.erase(found);
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    const auto [first, last] = m_timersByObject.equal_range(object);
    if (first == last)
        return false;
    for (auto it = first; it != last; ++it) {
        const auto found = m_timers.find(it->second);
        m_deadlines.erase({found->second.deadlineNs, it->second});
        m_timers.erase(found);
    }
    m_timersByObject.erase(first, last);
    return true;
}

QList<QAbstractEventDispatcher::TimerInfo>
EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> infos;
    const auto [first, last] = m_timersByObject.equal_range(object);
    for (auto it = first; it != last; ++it) {
        const Timer &timer = m_timers.at(it->second);
        infos.append(TimerInfo(it->second, int(timer.intervalMs), timer.type));
    }
    return infos;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    const auto found = m_timers.find(timerId);
    if (found == m_timers.end())
        return -1;
    const std::int64_t left = found->second.deadlineNs - monotonicNs();
    return left <= 0 ? 0 : int(std::min<std::int64_t>((left + nsPerMs - 1) / nsPerMs, INT_MAX));
}

// Milliseconds until the first timer that is not being delivered is due, rounded up so that the
// wait does not end just before it; -1 without such a timer.
int EpollEventDispatcher::timeoutForNextTimer(std::int64_t nowNs) const
{
    for (const auto &[deadline, timerId] : m_deadlines) {
        if (m_timers.at(timerId).delivering)
            continue;
        if (deadline <= nowNs)
            return 0;
        return int(std::min<std::int64_t>((deadline - nowNs + nsPerMs - 1) / nsPerMs, INT_MAX));
    }
    return -1;
}

// Delivers each timer due now once. Those that a handler arms again with a zero interval wait
// for the next iteration, so that they cannot starve the sockets.
int EpollEventDispatcher::activateTimers()
{
    if (m_deadlines.empty())
        return 0;
    const std::int64_t nowNs = monotonicNs();
    QVarLengthArray<std::pair<int, std::uint64_t>, 16> due;
    for (const auto &[deadline, timerId] : m_deadlines) {
        if (deadline > nowNs)
            break;
        const Timer &timer = m_timers.at(timerId);
        if (!timer.delivering)
            due.emplace_back(timerId, timer.serial);
    }
    int activated = 0;
    for (const auto &[timerId, serial] : due) {
        // Killed, or killed and its id started again, by an earlier handler.
        const auto found = m_timers.find(timerId);
        if (found == m_timers.end() || found->second.serial != serial)
            continue;
        Timer &timer = found->second;
        // The next deadline is set before the event, so that the handler's remainingTime()
        // and a killTimer() from inside it see this timer as it will be.
        m_deadlines.erase({timer.deadlineNs, timerId});
        timer.expectedNs += timer.intervalMs * nsPerMs;
        if (timer.expectedNs < nowNs)
            timer.expectedNs = nowNs + timer.intervalMs * nsPerMs;
        timer.deadlineNs = firstDeadline(timer, timer.expectedNs);
        m_deadlines.emplace(timer.deadlineNs, timerId);
        timer.delivering = true;
        QObject *object = timer.object;

        QTimerEvent event(timerId);
        QCoreApplication::sendEvent(object, &event);
        ++activated;

        const auto after = m_timers.find(timerId);
        if (after != m_timers.end() && after->second.serial == serial)
            after->second.delivering = false;
    }
    return activated;
}

void EpollEventDispatcher::wakeUp()
{
    // One write per sleep: posting many events from another thread costs one system call.
    if (!m_wakeUpPending.exchange(true, std::memory_order_acq_rel))
        eventfd_write(m_eventFd.get(), 1);
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.store(true, std::memory_order_relaxed);
    wakeUp();
}

} // namespace cmcp
