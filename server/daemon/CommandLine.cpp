#include "daemon/CommandLine.h"

#include "audit/AuditVerifier.h"
#include "base/InstallLayout.h"
#include "common/SettingsTable.h"
#include "daemon/StartupFailure.h"
#include "tools/system/SystemTools.h"

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QProcessEnvironment>

#include <cstdio>

namespace cmcp {

namespace {

void writeOut(const QString &text)
{
    std::fputs(text.toUtf8().constData(), stdout);
}

QString defaultEnvFile()
{
    // Installed with the binary, or read from the source tree the binary was built from.
    const QString installed = installedDataFile(QStringLiteral("default.env"));
    if (!installed.isEmpty())
        return installed;
    return QStringLiteral(CMCP_SOURCE_DIR "/config/default.env");
}

// cmcpd --verify-audit FILE...: 0 when the chain is intact, 1 at the first broken record.
int verifyAuditLog(const QStringList &files)
{
    if (files.isEmpty())
        return startupFailure(
                2, QStringLiteral("--verify-audit needs the audit log file(s) (see cmcpd --help)"));
    const audit::Verdict verdict = audit::verifyFiles(files);
    std::fprintf(verdict.intact ? stdout : stderr, "%s\n", qPrintable(verdict.report()));
    return verdict.intact ? 0 : 1;
}

} // namespace

std::variant<ExitStatus, CommandLine> parseCommandLine(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("Container-MCP daemon: MCP tools for language models, in sandboxes."));
    const QCommandLineOption helpOption({QStringLiteral("h"), QStringLiteral("help")},
                                        QStringLiteral("Show this help and every setting."));
    const QCommandLineOption versionOption({QStringLiteral("v"), QStringLiteral("version")},
                                           QStringLiteral("Show the version."));
    const QCommandLineOption stdioOption(
            QStringLiteral("stdio"), QStringLiteral("Serve MCP on stdin/stdout instead of HTTP."));
    const QCommandLineOption testModeOption(
            QStringLiteral("test-mode"),
            QStringLiteral("The original project's name for --stdio."));
    const QCommandLineOption configOption(
            QStringLiteral("config"),
            QStringLiteral("Custom env file (default: volume/config/custom.env when present)."),
            QStringLiteral("FILE"));
    const QCommandLineOption hostOption(QStringLiteral("host"),
                                        QStringLiteral("Same as --set MCP_HOST=HOST."),
                                        QStringLiteral("HOST"));
    const QCommandLineOption portOption(
            QStringLiteral("port"),
            QStringLiteral("Same as --set MCP_PORT=PORT (0 picks a free port)."),
            QStringLiteral("PORT"));
    const QCommandLineOption setOption(
            QStringLiteral("set"),
            QStringLiteral("Set a setting; wins over files and the environment. Repeatable."),
            QStringLiteral("NAME=VALUE"));
    const QCommandLineOption printConfigOption(
            QStringLiteral("print-config"),
            QStringLiteral("Print the effective settings and where each came from, then exit."));
    const QCommandLineOption markdownOption(
            QStringLiteral("settings-markdown"),
            QStringLiteral("Print the settings table as Markdown, then exit."));
    const QCommandLineOption jobPoliciesOption(
            QStringLiteral("print-job-policies"),
            QStringLiteral("Print the programs and jail policies of the system tools' jobs as "
                           "JSON, then exit."));
    const QCommandLineOption verifyAuditOption(
            QStringLiteral("verify-audit"),
            QStringLiteral("Verify the hash chain of the audit log FILE... (one file or a rotated "
                           "sequence), then exit: 0 intact, 1 broken (the first broken record is "
                           "named)."));
    parser.addOptions({helpOption, versionOption, stdioOption, testModeOption, configOption,
                       hostOption, portOption, setOption, printConfigOption, markdownOption,
                       jobPoliciesOption, verifyAuditOption});
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("With --verify-audit: the audit log files."),
                                 QStringLiteral("[FILE...]"));
    if (!parser.parse(arguments))
        return ExitStatus{
                startupFailure(2, parser.errorText() + QStringLiteral(" (see cmcpd --help)"))};
    if (parser.isSet(verifyAuditOption))
        return ExitStatus{verifyAuditLog(parser.positionalArguments())};
    if (!parser.positionalArguments().isEmpty())
        return ExitStatus{
                startupFailure(2,
                               QStringLiteral("unexpected argument '%1' (see cmcpd --help)")
                                       .arg(parser.positionalArguments().first()))};
    if (parser.isSet(helpOption)) {
        writeOut(parser.helpText()
                 + QStringLiteral("\nSettings (environment variables, env files or --set):\n")
                 + settingsHelpText());
        return ExitStatus{0};
    }
    if (parser.isSet(versionOption)) {
        writeOut(QStringLiteral("cmcpd %1\n").arg(QStringLiteral(CMCP_VERSION)));
        return ExitStatus{0};
    }
    if (parser.isSet(markdownOption)) {
        writeOut(settingsMarkdownTable());
        return ExitStatus{0};
    }

    CommandLine commandLine;
    SettingsSources &sources = commandLine.sources;
    sources.defaultEnvFile = defaultEnvFile();
    sources.customEnvFile = parser.isSet(configOption) ? parser.value(configOption)
                                                       : QStringLiteral("volume/config/custom.env");
    sources.customEnvFileRequired = parser.isSet(configOption);
    sources.environment = QProcessEnvironment::systemEnvironment();
    if (parser.isSet(hostOption))
        sources.commandLine.append({QStringLiteral("MCP_HOST"), parser.value(hostOption)});
    if (parser.isSet(portOption))
        sources.commandLine.append({QStringLiteral("MCP_PORT"), parser.value(portOption)});
    for (const QString &assignment : parser.values(setOption)) {
        const qsizetype equals = assignment.indexOf(QLatin1Char('='));
        if (equals <= 0)
            return ExitStatus{startupFailure(
                    2, QStringLiteral("--set expects NAME=VALUE, got '%1'").arg(assignment))};
        sources.commandLine.append({assignment.left(equals), assignment.mid(equals + 1)});
    }
    commandLine.stdio = parser.isSet(stdioOption) || parser.isSet(testModeOption);
    commandLine.printConfig = parser.isSet(printConfigOption);
    commandLine.printJobPolicies = parser.isSet(jobPoliciesOption);
    return commandLine;
}

int printConfig(const Settings &settings)
{
    writeOut(settings.printConfig());
    return 0;
}

int printJobPolicies(const Settings &settings, const SandboxCapabilities &sandbox)
{
    QString error;
    const std::optional<QJsonObject> policies = systemJobPolicies(settings, sandbox, &error);
    if (!policies)
        return startupFailure(1, error);
    writeOut(QString::fromUtf8(QJsonDocument(*policies).toJson(QJsonDocument::Indented)));
    return 0;
}

} // namespace cmcp
