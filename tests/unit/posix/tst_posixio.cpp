// The descriptor helpers of server/posix: writeAll gets every byte through a pipe that takes
// them a little at a time while signals interrupt it, and says why when it cannot; openPipe's
// ends are close-on-exec; fsyncDirectoryAt opens directories only.

#include "posix/DirectorySync.h"
#include "posix/Pipe.h"
#include "posix/WriteAll.h"

#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/time.h>
#include <thread>
#include <unistd.h>

using namespace cmcp;

namespace {

std::atomic<int> g_interrupts = 0;

void countInterrupt(int)
{
    ++g_interrupts;
}

} // namespace

class TestPosixIo : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void writeAllGetsEveryByteToASlowReader();
    void writeAllSaysWhyItStopped();
    void openPipeEndsAreCloseOnExec();
    void fsyncDirectoryAtOpensDirectoriesOnly();
};

// Four MiB through a 64 KiB pipe read 4 KiB at a time, with SIGALRM (no SA_RESTART) every
// millisecond: writes come back partial or with EINTR, and every byte still arrives, in order.
void TestPosixIo::writeAllGetsEveryByteToASlowReader()
{
    QByteArray data(4 * 1024 * 1024, Qt::Uninitialized);
    for (qsizetype i = 0; i < data.size(); ++i)
        data[i] = char((i * 7 + i / 4096) & 0xff);
    std::optional<PipePair> pipe = openPipe();
    QVERIFY(pipe);

    // The reader thread keeps SIGALRM blocked, so the interrupts land on the writing thread.
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    QCOMPARE(pthread_sigmask(SIG_BLOCK, &alarm, nullptr), 0);
    QByteArray received;
    std::thread reader([&] {
        char chunk[4096];
        for (;;) {
            const ssize_t n = ::read(pipe->read.get(), chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return;
            received.append(chunk, n);
            if (received.size() % (64 * 1024) == 0)
                ::usleep(500);
        }
    });

    struct sigaction action = {};
    action.sa_handler = countInterrupt;
    sigemptyset(&action.sa_mask);
    struct sigaction previous = {};
    QCOMPARE(sigaction(SIGALRM, &action, &previous), 0);
    const itimerval every{{0, 1000}, {0, 1000}};
    QCOMPARE(setitimer(ITIMER_REAL, &every, nullptr), 0);
    QCOMPARE(pthread_sigmask(SIG_UNBLOCK, &alarm, nullptr), 0);

    const std::size_t written = writeAll(pipe->write.get(), data.constData(), size_t(data.size()));

    const itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    sigaction(SIGALRM, &previous, nullptr);
    pipe->write.reset();
    reader.join();

    QCOMPARE(written, size_t(data.size()));
    QCOMPARE(received.size(), data.size());
    QVERIFY(received == data);
    QVERIFY2(g_interrupts > 0, "no signal arrived during the write: EINTR was not exercised");
}

void TestPosixIo::writeAllSaysWhyItStopped()
{
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full < 0)
        QSKIP("no /dev/full");
    errno = 0;
    QCOMPARE(writeAll(full, "data", 4), size_t(0));
    QCOMPARE(errno, ENOSPC);
    ::close(full);

    // A reader that is gone: EPIPE (SIGPIPE ignored, as the daemon does).
    std::optional<PipePair> pipe = openPipe();
    QVERIFY(pipe);
    pipe->read.reset();
    const auto previous = std::signal(SIGPIPE, SIG_IGN);
    errno = 0;
    const std::size_t written = writeAll(pipe->write.get(), "data", 4);
    const int error = errno;
    std::signal(SIGPIPE, previous);
    QCOMPARE(written, size_t(0));
    QCOMPARE(error, EPIPE);
}

void TestPosixIo::openPipeEndsAreCloseOnExec()
{
    std::optional<PipePair> pipe = openPipe();
    QVERIFY(pipe);
    QVERIFY(pipe->read.isValid() && pipe->write.isValid());
    QVERIFY(::fcntl(pipe->read.get(), F_GETFD) & FD_CLOEXEC);
    QVERIFY(::fcntl(pipe->write.get(), F_GETFD) & FD_CLOEXEC);
    QCOMPARE(writeAll(pipe->write.get(), "x", 1), size_t(1));
    char got = 0;
    QCOMPARE(::read(pipe->read.get(), &got, 1), ssize_t(1));
    QCOMPARE(got, 'x');
}

void TestPosixIo::fsyncDirectoryAtOpensDirectoriesOnly()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(QStringLiteral("file")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    const QByteArray path = QFile::encodeName(dir.path());
    QVERIFY(fsyncDirectoryAt(AT_FDCWD, path.constData()));
    const int dirFd = ::open(path.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(dirFd >= 0);
    QVERIFY(fsyncDirectoryAt(dirFd, "."));
    errno = 0;
    QVERIFY(!fsyncDirectoryAt(dirFd, "file"));
    QCOMPARE(errno, ENOTDIR);
    errno = 0;
    QVERIFY(!fsyncDirectoryAt(dirFd, "missing"));
    QCOMPARE(errno, ENOENT);
    ::close(dirFd);
}

QTEST_GUILESS_MAIN(TestPosixIo)
#include "tst_posixio.moc"
