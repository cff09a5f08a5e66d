// AdminServer in process, without a daemon around it: its socket is made with the owner's mode
// from the start, a console on it is greeted and gets its snapshot, a request it does not know is
// answered with an error and the connection carries on, a live socket is never taken over while
// a stale one is, and a peer of another user is refused by its credentials even when the
// socket's mode would let it in (as root; skips otherwise).

#include "admin/AdminServer.h"
#include "admin/AdminSettings.h"
#include "common/AdminProtocol.h"
#include "common/AdminSnapshotRecords.h"
#include "mcp/McpServer.h"
#include "workspace/SessionWorkspaces.h"

#include "OtherUserPeer.h"

#include <QElapsedTimer>
#include <QFile>
#include <QLocalSocket>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <memory>
#include <optional>

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cmcp;

namespace {

// A console speaking the protocol by hand, line by line.
class RawConsole
{
public:
    explicit RawConsole(const QString &path)
    {
        m_socket.connectToServer(path);
        m_connected = m_socket.waitForConnected(5000);
    }
    bool connected() const { return m_connected; }
    void write(const admin::Message &message) { m_socket.write(admin::encode(message)); }

    // The next message that is not an event: the server pushes events (the counters) to every
    // console as they happen, in between the answers.
    std::optional<admin::Message> nextAnswer()
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 10000) {
            while (!m_lines.isEmpty()) {
                auto message = admin::decode(m_lines.takeFirst().bytes, nullptr);
                if (!message || message->type != admin::MessageType::Event)
                    return message;
            }
            QTest::qWait(10); // the server answers on this thread's event loop
            m_lines.append(m_splitter.feed(m_socket.readAll()));
        }
        return std::nullopt;
    }

private:
    QLocalSocket m_socket;
    bool m_connected = false;
    admin::LineSplitter m_splitter;
    QList<admin::LineSplitter::Line> m_lines;
};

} // namespace

class TestAdminServer : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<McpServer> m_mcp;
    std::unique_ptr<AdminSettings> m_settings;
    std::unique_ptr<SessionWorkspaces> m_workspaces;
    std::unique_ptr<AdminServer> m_server;

    QString socketPath() const { return m_dir.filePath(QStringLiteral("admin.sock")); }
    QString customEnvFile() const { return m_dir.filePath(QStringLiteral("custom.env")); }

    std::unique_ptr<AdminServer> newServer()
    {
        admin::SandboxReport report;
        report.order = {QStringLiteral("identity"), QStringLiteral("seccomp")};
        return std::make_unique<AdminServer>(*m_mcp, *m_settings, *m_workspaces, report);
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_mcp = std::make_unique<McpServer>(ServerIdentity{});
        QString error;
        const std::optional<Settings> defaults = Settings::load(SettingsSources{}, &error);
        QVERIFY2(defaults, qPrintable(error));
        m_settings = std::make_unique<AdminSettings>(*defaults, customEnvFile());
        m_workspaces = std::make_unique<SessionWorkspaces>(
                Workspace(m_dir.filePath(QStringLiteral("root/workspace")), 0),
                SessionWorkspaces::Mode::Shared, 0);
        m_server = newServer();
        QVERIFY2(m_server->listen(socketPath(), std::nullopt, &error), qPrintable(error));
    }

    void cleanup()
    {
        m_server.reset();
        m_workspaces.reset();
        m_settings.reset();
        m_mcp.reset();
    }

    void theSocketIsTheOwnersAlone()
    {
        struct stat status
        {
        };
        QCOMPARE(::stat(QFile::encodeName(socketPath()).constData(), &status), 0);
        QVERIFY(S_ISSOCK(status.st_mode));
        QCOMPARE(status.st_mode & 0777, mode_t(0600));
    }

    void aConsoleIsGreetedAndGetsItsSnapshot()
    {
        RawConsole console(socketPath());
        QVERIFY(console.connected());
        auto hello = console.nextAnswer();
        QVERIFY(hello);
        QCOMPARE(int(hello->type), int(admin::MessageType::Hello));
        QCOMPARE(hello->program, QStringLiteral("cmcpd"));
        QCOMPARE(hello->version, admin::protocolVersion);

        console.write(admin::Message::hello(QStringLiteral("test"), QStringLiteral("1")));
        console.write(admin::Message::request(7, QLatin1String(admin::methodSnapshot)));
        const auto reply = console.nextAnswer();
        QVERIFY(reply);
        QCOMPARE(int(reply->type), int(admin::MessageType::Reply));
        QCOMPARE(reply->id, std::optional<qint64>(7));
        const admin::SnapshotRecord snapshot = admin::SnapshotRecord::fromJson(reply->body);
        QCOMPARE(snapshot.customEnvFile, customEnvFile());
        QVERIFY(!snapshot.config.isEmpty());
        QCOMPARE(snapshot.sandbox.order,
                 (QStringList{QStringLiteral("identity"), QStringLiteral("seccomp")}));
        QVERIFY(snapshot.sessions.isEmpty());
        QVERIFY(snapshot.calls.isEmpty());
    }

    void anUnknownRequestIsAnsweredAndTheConnectionCarriesOn()
    {
        RawConsole console(socketPath());
        QVERIFY(console.connected());
        QVERIFY(console.nextAnswer());
        console.write(admin::Message::hello(QStringLiteral("test"), QStringLiteral("1")));
        console.write(admin::Message::request(3, QStringLiteral("explode")));
        auto answer = console.nextAnswer();
        QVERIFY(answer);
        QCOMPARE(int(answer->type), int(admin::MessageType::Error));
        QCOMPARE(answer->errorCode, QString(admin::errorUnknownMethod));
        QCOMPARE(answer->id, std::optional<qint64>(3));
        console.write(admin::Message::request(4, QLatin1String(admin::methodSnapshot)));
        answer = console.nextAnswer();
        QVERIFY(answer);
        QCOMPARE(int(answer->type), int(admin::MessageType::Reply));
        QCOMPARE(answer->id, std::optional<qint64>(4));
    }

    void aLiveSocketIsNotTakenOverAStaleOneIs()
    {
        std::unique_ptr<AdminServer> second = newServer();
        QString error;
        QVERIFY(!second->listen(socketPath(), std::nullopt, &error));
        QVERIFY(!error.isEmpty());
        RawConsole stillServed(socketPath());
        QVERIFY(stillServed.connected());
        QVERIFY(stillServed.nextAnswer());

        // A socket file nobody listens on, as a daemon that was killed leaves it.
        const QString stalePath = m_dir.filePath(QStringLiteral("stale.sock"));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const QByteArray encoded = QFile::encodeName(stalePath);
        std::memcpy(address.sun_path, encoded.constData(), encoded.size());
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        ::close(fd);
        QVERIFY(second->listen(stalePath, std::nullopt, &error));
        RawConsole console(stalePath);
        QVERIFY(console.connected());
        const auto hello = console.nextAnswer();
        QVERIFY(hello);
        QCOMPARE(int(hello->type), int(admin::MessageType::Hello));
    }

    void anotherUserIsRefusedByItsCredentials()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to connect as another user");
        const QByteArray path = QFile::encodeName(socketPath());
        QCOMPARE(::chmod(QFile::encodeName(m_dir.path()).constData(), 0755), 0);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534), int(ConnectDenied));
        // A socket mode opened by mistake: SO_PEERCRED still refuses the stranger.
        QCOMPARE(::chmod(path.constData(), 0666), 0);
        QCOMPARE(connectAsOtherUser(path, 65534, 65534), int(Refused));
        // Root itself is let in.
        RawConsole console(socketPath());
        QVERIFY(console.connected());
        const auto hello = console.nextAnswer();
        QVERIFY(hello);
        QCOMPARE(int(hello->type), int(admin::MessageType::Hello));
    }
};

QTEST_GUILESS_MAIN(TestAdminServer)
#include "tst_adminserver.moc"
