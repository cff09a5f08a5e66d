// cmcp-console: watches and steers a running cmcpd through its admin channel.

#include "console/AdminClient.h"
#include "console/ConsoleSession.h"
#include "console/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QProcessEnvironment>
#include <QTimer>

#include <cstdio>

using namespace cmcp;

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("cmcp-console"));
    QApplication::setApplicationVersion(QStringLiteral(CMCP_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
            "Container-MCP console: live tool calls, sessions and settings of a running cmcpd."));
    parser.addHelpOption();
    parser.addVersionOption();
    // The daemon's default (ADMIN_SOCKET) is relative to its working directory.
    const QString defaultSocket = QProcessEnvironment::systemEnvironment().value(
            QStringLiteral("ADMIN_SOCKET"), QStringLiteral("volume/run/admin.sock"));
    const QCommandLineOption socketOption(
            QStringLiteral("socket"),
            QStringLiteral("The daemon's admin socket (default: $ADMIN_SOCKET or %1).")
                    .arg(defaultSocket),
            QStringLiteral("PATH"), defaultSocket);
    const QCommandLineOption screenshotOption(
            QStringLiteral("screenshot"),
            QStringLiteral("Save a picture of the window to FILE after --screenshot-after "
                           "milliseconds, then quit (for the documentation)."),
            QStringLiteral("FILE"));
    const QCommandLineOption screenshotAfterOption(
            QStringLiteral("screenshot-after"),
            QStringLiteral("Delay before --screenshot, in milliseconds (default 3000)."),
            QStringLiteral("MS"), QStringLiteral("3000"));
    const QCommandLineOption tabOption(
            QStringLiteral("tab"),
            QStringLiteral("Show the tab TITLE at start (e.g. Workspaces), as for --screenshot."),
            QStringLiteral("TITLE"));
    parser.addOptions({socketOption, screenshotOption, screenshotAfterOption, tabOption});
    parser.process(app);
    // Desktops set an icon theme; bare X servers and the offscreen platform do not.
    QIcon::setFallbackThemeName(QStringLiteral("Adwaita"));

    AdminClient client;
    ConsoleSession session(client);
    MainWindow window(session);
    if (parser.isSet(tabOption) && !window.showTab(parser.value(tabOption))) {
        std::fprintf(stderr, "cmcp-console: no tab %s\n", qPrintable(parser.value(tabOption)));
        return 2;
    }
    window.show();
    client.open(parser.value(socketOption));
    if (parser.isSet(screenshotOption)) {
        QTimer::singleShot(parser.value(screenshotAfterOption).toInt(), &window, [&] {
            window.showLatestCall();
            QTimer::singleShot(200, &window, [&] {
                const QString file = parser.value(screenshotOption);
                if (!window.grab().save(file)) {
                    std::fprintf(stderr, "cmcp-console: cannot save %s\n", qPrintable(file));
                    app.exit(1);
                    return;
                }
                app.quit();
            });
        });
    }
    return app.exec();
}
