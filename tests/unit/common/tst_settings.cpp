#include "common/EnvFile.h"
#include "common/SandboxIds.h"
#include "base/Logging.h"
#include "common/Settings.h"
#include "common/SettingsTable.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

using namespace cmcp;

namespace {

enum class Layer { DefaultFile, CustomFile, Environment, CommandLine };
using Assignments = QList<QPair<QString, QString>>;

QProcessEnvironment environmentOf(const Assignments &variables)
{
    QProcessEnvironment environment;
    for (const auto &[name, value] : variables)
        environment.insert(name, value);
    return environment;
}

// Runs `body` with stderr (fd 2) redirected into a file and returns what was written.
template<typename Body>
QByteArray captureStderr(const QString &path, Body body)
{
    std::fflush(stderr);
    const int saved = ::dup(2);
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
    body();
    spdlog::default_logger()->flush();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

} // namespace

Q_DECLARE_METATYPE(cmcp::SettingOrigin)
Q_DECLARE_METATYPE(Layer)

class TestSettings : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_fileCounter = 0;

    QString writeFile(const QByteArray &content)
    {
        const QString path = m_dir.filePath(QStringLiteral("settings-%1.env").arg(++m_fileCounter));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    // Loads with one value placed in one layer; `location` receives the file
    // name for file layers.
    std::optional<Settings> loadOne(Layer layer, const QString &name, const QString &value,
                                    QString *error, QString *location = nullptr)
    {
        SettingsSources sources;
        switch (layer) {
        case Layer::DefaultFile:
        case Layer::CustomFile: {
            const QString path =
                    writeFile("# a comment first\n" + name.toUtf8() + '=' + value.toUtf8() + '\n');
            if (location)
                *location = path;
            (layer == Layer::DefaultFile ? sources.defaultEnvFile : sources.customEnvFile) = path;
            break;
        }
        case Layer::Environment:
            sources.environment = environmentOf({{name, value}});
            break;
        case Layer::CommandLine:
            sources.commandLine = {{name, value}};
            break;
        }
        return Settings::load(sources, error);
    }

    static Settings defaults()
    {
        QString error;
        auto settings = Settings::load({}, &error);
        if (!settings)
            qFatal("built-in defaults do not load: %s", qPrintable(error));
        return *settings;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void defaultsEqualTheOriginal_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("value");
        const QList<QPair<const char *, const char *>> originals = {
                {"MCP_HOST", "127.0.0.1"},
                {"MCP_PORT", "8000"},
                {"DEBUG", "false"},
                {"LOG_LEVEL", "INFO"},
                {"LOG_FORMAT", "text"},
                {"SANDBOX_ROOT", "volume/sandbox"},
                {"BASH_ALLOWED_COMMANDS", "ls,cat,grep,find,echo,pwd,mkdir,touch"},
                {"BASH_TIMEOUT_DEFAULT", "30"},
                {"BASH_TIMEOUT_MAX", "120"},
                {"PYTHON_MEMORY_LIMIT", "256"},
                {"PYTHON_TIMEOUT_DEFAULT", "30"},
                {"PYTHON_TIMEOUT_MAX", "120"},
                {"FILE_MAX_SIZE_MB", "10"},
                {"FILE_ALLOWED_EXTENSIONS", "txt,md,csv,json,py"},
                {"WEB_TIMEOUT_DEFAULT", "30"},
                {"WEB_ALLOWED_DOMAINS", "*"},
                {"MCP_AUTH_TOKEN", ""},
                {"MCP_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]"},
                {"MCP_ALLOWED_ORIGINS", ""},
                {"MCP_MAX_BODY_MB", "32"},
                {"MCP_SSE_KEEPALIVE_SECONDS", "15"},
                {"MCP_SSE_MAX_BUFFER_KB", "1024"},
                {"MCP_MAX_SESSIONS", "10000"},
                {"MCP_SESSION_IDLE_SECONDS", "3600"},
        };
        for (const auto &[name, value] : originals)
            QTest::newRow(name) << QString::fromLatin1(name) << QString::fromLatin1(value);
    }

    void defaultsEqualTheOriginal()
    {
        QFETCH(QString, name);
        QFETCH(QString, value);
        const Settings settings = defaults();
        QCOMPARE(settings.text(name), value);
        QCOMPARE(settings.origin(name), SettingOrigin::BuiltIn);
    }

    void defaultsHaveTheirTypes()
    {
        const Settings settings = defaults();
        QCOMPARE(settings.integer(u"MCP_PORT"), 8000);
        QCOMPARE(settings.flag(u"DEBUG"), false);
        QCOMPARE(settings.list(u"BASH_ALLOWED_COMMANDS"),
                 QStringList({"ls", "cat", "grep", "find", "echo", "pwd", "mkdir", "touch"}));
        QCOMPARE(settings.list(u"MCP_ALLOWED_ORIGINS"), QStringList());
        QCOMPARE(settings.list(u"MCP_ALLOWED_HOSTS"),
                 QStringList({"localhost", "127.0.0.1", "[::1]"}));
    }

    void tableIsConsistent()
    {
        QSet<QString> names;
        for (const SettingSpec &spec : settingSpecs()) {
            const QString name = QString::fromLatin1(spec.name);
            QVERIFY2(!names.contains(name), qPrintable(name));
            names.insert(name);
            QCOMPARE(findSettingSpec(name), &spec);
            QVERIFY2(Settings::validateValue(spec, QString::fromUtf8(spec.defaultValue)).isEmpty(),
                     spec.name);
            QVERIFY2(QByteArray(spec.help).endsWith('.'), spec.name);
            QVERIFY2(*spec.group, spec.name);
            if (spec.type == SettingType::Integer)
                QVERIFY2(spec.minimum <= spec.maximum, spec.name);
            if (spec.type == SettingType::Choice)
                QVERIFY2(!spec.choices.isEmpty(), spec.name);
        }
        QCOMPARE(findSettingSpec(u"NO_SUCH_SETTING"), nullptr);
        QCOMPARE(findSettingSpec(u"mcp_port"), nullptr);
    }

    void layering()
    {
        SettingsSources sources;
        sources.defaultEnvFile =
                writeFile("MCP_PORT=1001\nBASH_TIMEOUT_DEFAULT=11\nPYTHON_TIMEOUT_DEFAULT=12\n"
                          "WEB_TIMEOUT_DEFAULT=13\n");
        sources.customEnvFile = writeFile("BASH_TIMEOUT_DEFAULT=21\nPYTHON_TIMEOUT_DEFAULT=22\n"
                                          "WEB_TIMEOUT_DEFAULT=23\n");
        sources.environment =
                environmentOf({{"PYTHON_TIMEOUT_DEFAULT", "32"}, {"WEB_TIMEOUT_DEFAULT", "33"}});
        sources.commandLine = {{"WEB_TIMEOUT_DEFAULT", "43"}};
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));

        QCOMPARE(settings->text(u"MCP_HOST"), "127.0.0.1");
        QCOMPARE(settings->origin(u"MCP_HOST"), SettingOrigin::BuiltIn);
        QCOMPARE(settings->integer(u"MCP_PORT"), 1001);
        QCOMPARE(settings->origin(u"MCP_PORT"), SettingOrigin::DefaultFile);
        QCOMPARE(settings->integer(u"BASH_TIMEOUT_DEFAULT"), 21);
        QCOMPARE(settings->origin(u"BASH_TIMEOUT_DEFAULT"), SettingOrigin::CustomFile);
        QCOMPARE(settings->integer(u"PYTHON_TIMEOUT_DEFAULT"), 32);
        QCOMPARE(settings->origin(u"PYTHON_TIMEOUT_DEFAULT"), SettingOrigin::Environment);
        QCOMPARE(settings->integer(u"WEB_TIMEOUT_DEFAULT"), 43);
        QCOMPARE(settings->origin(u"WEB_TIMEOUT_DEFAULT"), SettingOrigin::CommandLine);

        const QString printed = settings->printConfig();
        QVERIFY(printed.contains(
                QStringLiteral("# custom file %1:1\n").arg(sources.customEnvFile)));
        QVERIFY(printed.contains(
                QStringLiteral("# default file %1:1\n").arg(sources.defaultEnvFile)));
        QVERIFY(printed.contains(QStringLiteral("# command line\n")));
        QVERIFY(printed.contains(QStringLiteral("# environment\n")));
    }

    void originNames()
    {
        QCOMPARE(originName(SettingOrigin::BuiltIn), "built-in default");
        QCOMPARE(originName(SettingOrigin::DefaultFile), "default file");
        QCOMPARE(originName(SettingOrigin::CustomFile), "custom file");
        QCOMPARE(originName(SettingOrigin::Environment), "environment");
        QCOMPARE(originName(SettingOrigin::CommandLine), "command line");
        QCOMPARE(originName(SettingOrigin::AdminConsole), "admin console");
    }

    void badValuesAreRejected_data()
    {
        QTest::addColumn<Layer>("layer");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected"); // %1 stands for the file, where there is one

        const QString timeoutRange = QStringLiteral("must be an integer between 1 and 3600");
        const QString portRange = QStringLiteral("must be an integer between 0 and 65535");
        QTest::newRow("integer: not a number, custom file")
                << Layer::CustomFile << "BASH_TIMEOUT_MAX"
                << "abc"
                << "BASH_TIMEOUT_MAX=\"abc\" (from %1:2): " + timeoutRange;
        QTest::newRow("integer: not a number, default file")
                << Layer::DefaultFile << "PYTHON_TIMEOUT_MAX"
                << "ten"
                << "PYTHON_TIMEOUT_MAX=\"ten\" (from %1:2): " + timeoutRange;
        QTest::newRow("integer: trailing garbage")
                << Layer::Environment << "BASH_TIMEOUT_DEFAULT"
                << "30s"
                << "BASH_TIMEOUT_DEFAULT=\"30s\" (from environment): " + timeoutRange;
        QTest::newRow("integer: hexadecimal")
                << Layer::CommandLine << "MCP_PORT"
                << "0x1f90"
                << "MCP_PORT=\"0x1f90\" (from command line): " + portRange;
        QTest::newRow("integer: decimal point")
                << Layer::Environment << "MCP_PORT"
                << "80.0"
                << "MCP_PORT=\"80.0\" (from environment): " + portRange;
        QTest::newRow("integer: empty") << Layer::Environment << "MCP_PORT"
                                        << ""
                                        << "MCP_PORT=\"\" (from environment): " + portRange;
        QTest::newRow("integer: negative") << Layer::Environment << "MCP_PORT"
                                           << "-1"
                                           << "MCP_PORT=\"-1\" (from environment): " + portRange;
        QTest::newRow("integer: above range")
                << Layer::Environment << "MCP_PORT"
                << "65536"
                << "MCP_PORT=\"65536\" (from environment): " + portRange;
        QTest::newRow("integer: below range")
                << Layer::CommandLine << "BASH_TIMEOUT_DEFAULT"
                << "0"
                << "BASH_TIMEOUT_DEFAULT=\"0\" (from command line): " + timeoutRange;
        QTest::newRow("integer: overflow") << Layer::Environment << "PYTHON_MEMORY_LIMIT"
                                           << "99999999999999999999999"
                                           << "PYTHON_MEMORY_LIMIT=\"99999999999999999999999\" "
                                              "(from environment): must be an integer between "
                                              "16 and 65536";
        QTest::newRow("integer: file size")
                << Layer::Environment << "FILE_MAX_SIZE_MB"
                << "2048"
                << "FILE_MAX_SIZE_MB=\"2048\" (from environment): must be an "
                   "integer between 1 and 1024";
        QTest::newRow("boolean")
                << Layer::Environment << "DEBUG"
                << "maybe"
                << "DEBUG=\"maybe\" (from environment): must be true or false (also accepted: "
                   "1/0, yes/no, on/off)";
        QTest::newRow("boolean: number")
                << Layer::CustomFile << "DEBUG"
                << "2"
                << "DEBUG=\"2\" (from %1:2): must be true or false (also accepted: "
                   "1/0, yes/no, on/off)";
        QTest::newRow("choice: log level") << Layer::Environment << "LOG_LEVEL"
                                           << "loud"
                                           << "LOG_LEVEL=\"loud\" (from environment): must be one "
                                              "of trace, debug, info, warning, warn, error, "
                                              "critical, off";
        QTest::newRow("choice: log format")
                << Layer::CommandLine << "LOG_FORMAT"
                << "xml"
                << "LOG_FORMAT=\"xml\" (from command line): must be one of text, json";
        QTest::newRow("text: empty host") << Layer::Environment << "MCP_HOST"
                                          << ""
                                          << "MCP_HOST=\"\" (from environment): must not be empty";
        QTest::newRow("text: blank sandbox")
                << Layer::Environment << "SANDBOX_ROOT"
                << "   "
                << "SANDBOX_ROOT=\"   \" (from environment): must not be empty";
    }

    void badValuesAreRejected()
    {
        QFETCH(Layer, layer);
        QFETCH(QString, name);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        QString error;
        QString file;
        QVERIFY(!loadOne(layer, name, value, &error, &file));
        QCOMPARE(error, expected.contains(u"%1") ? expected.arg(file) : expected);
        QVERIFY(!error.contains(u'\n'));
    }

    void goodValuesAreAccepted()
    {
        QString error;
        auto settings = loadOne(Layer::Environment, "MCP_PORT", " 9001 ", &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"MCP_PORT"), 9001);
        QCOMPARE(settings->text(u"MCP_PORT"), "9001");

        settings = loadOne(Layer::Environment, "MCP_PORT", "0", &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"MCP_PORT"), 0);

        for (const char *yes : {"true", "TRUE", "1", "yes", "Yes", "on", "ON"}) {
            settings = loadOne(Layer::Environment, "DEBUG", yes, &error);
            QVERIFY2(settings && settings->flag(u"DEBUG"), yes);
        }
        for (const char *no : {"false", "False", "0", "no", "NO", "off", "Off"}) {
            settings = loadOne(Layer::Environment, "DEBUG", no, &error);
            QVERIFY2(settings && !settings->flag(u"DEBUG"), no);
        }
        for (const char *level :
             {"trace", "DEBUG", "Info", "WARNING", "warn", "error", "CRITICAL", "off"}) {
            settings = loadOne(Layer::Environment, "LOG_LEVEL", level, &error);
            QVERIFY2(settings, level);
            QCOMPARE(settings->text(u"LOG_LEVEL"), QString::fromLatin1(level));
        }
        settings = loadOne(Layer::Environment, "LOG_FORMAT", "JSON", &error);
        QVERIFY2(settings, qPrintable(error));
    }

    void listsAreTrimmedWithoutEmpties()
    {
        QString error;
        auto settings =
                loadOne(Layer::Environment, "BASH_ALLOWED_COMMANDS", " ls , ,cat,, grep ,", &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->list(u"BASH_ALLOWED_COMMANDS"), QStringList({"ls", "cat", "grep"}));

        settings = loadOne(Layer::Environment, "BASH_ALLOWED_COMMANDS", "", &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->list(u"BASH_ALLOWED_COMMANDS"), QStringList());
        QCOMPARE(settings->origin(u"BASH_ALLOWED_COMMANDS"), SettingOrigin::Environment);
    }

    void unknownNameInFileIsRejected_data()
    {
        QTest::addColumn<Layer>("layer");
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected"); // %1 is the file

        QTest::newRow("typo, custom file")
                << Layer::CustomFile << QByteArray("MCP_PORT=1\nBASH_TIMEOUT_MX=5\n")
                << "%1:2: unknown setting \"BASH_TIMEOUT_MX\" (did you mean "
                   "BASH_TIMEOUT_MAX?)";
        QTest::newRow("lower case, default file")
                << Layer::DefaultFile << QByteArray("# ports\n\nmcp_port=1\n")
                << "%1:3: unknown setting \"mcp_port\" (did you mean MCP_PORT?)";
        QTest::newRow("unrelated") << Layer::CustomFile << QByteArray("HOME=/root\n")
                                   << "%1:1: unknown setting \"HOME\"";
    }

    void unknownNameInFileIsRejected()
    {
        QFETCH(Layer, layer);
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        SettingsSources sources;
        const QString path = writeFile(content);
        (layer == Layer::DefaultFile ? sources.defaultEnvFile : sources.customEnvFile) = path;
        QString error;
        QVERIFY(!Settings::load(sources, &error));
        QCOMPARE(error, expected.arg(path));
    }

    void unknownNameOnCommandLineIsRejected()
    {
        SettingsSources sources;
        sources.commandLine = {{"MCP_PROT", "1"}};
        QString error;
        QVERIFY(!Settings::load(sources, &error));
        QCOMPARE(error,
                 "unknown setting \"MCP_PROT\" (from command line) (did you mean MCP_PORT?)");
    }

    void environmentIsConsultedOnlyForKnownNames()
    {
        SettingsSources sources;
        sources.environment = environmentOf({{"HOME", "/root"},
                                             {"mcp_port", "abc"},
                                             {"MCP_PORTS", "abc"},
                                             {"MCP_PORT", "9001"}});
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"MCP_PORT"), 9001);
    }

    void lineWithoutEqualsIsRejected()
    {
        SettingsSources sources;
        sources.customEnvFile = writeFile("# settings\n\nMCP_PORT 8000\n");
        QString error;
        QVERIFY(!Settings::load(sources, &error));
        QCOMPARE(error,
                 QStringLiteral("%1:3: expected NAME=VALUE, found \"MCP_PORT 8000\"")
                         .arg(sources.customEnvFile));
    }

    void requiredCustomFileMustBeReadable()
    {
        SettingsSources sources;
        sources.customEnvFile = m_dir.filePath(QStringLiteral("missing.env"));
        sources.customEnvFileRequired = true;
        QString error;
        QVERIFY(!Settings::load(sources, &error));
        QVERIFY2(error.startsWith(
                         QStringLiteral("cannot read config file %1: ").arg(sources.customEnvFile)),
                 qPrintable(error));

        sources.customEnvFile = m_dir.path();
        QVERIFY(!Settings::load(sources, &error));
        QVERIFY2(error.startsWith(QStringLiteral("cannot read config file %1: ").arg(m_dir.path())),
                 qPrintable(error));
    }

    void optionalMissingFilesAreSkipped()
    {
        SettingsSources sources;
        sources.defaultEnvFile = m_dir.filePath(QStringLiteral("no-default.env"));
        sources.customEnvFile = m_dir.filePath(QStringLiteral("no-custom.env"));
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"MCP_PORT"), 8000);
        QCOMPARE(settings->origin(u"MCP_PORT"), SettingOrigin::BuiltIn);
    }

    void envFileSyntax()
    {
        SettingsSources sources;
        sources.customEnvFile = writeFile("\xEF\xBB\xBF# comment\n"
                                          "   # indented comment\n"
                                          "\n"
                                          "export MCP_HOST = 0.0.0.0\n"
                                          "MCP_PORT\t=\t9001   \r\n"
                                          "SANDBOX_ROOT=\"/srv/my sandbox\"\n"
                                          "MCP_AUTH_TOKEN='se#cret \"x\"'\n"
                                          "BASH_ALLOWED_COMMANDS=ls,cat # the usual two\n"
                                          "WEB_ALLOWED_DOMAINS=a.example#b\n"
                                          "LOG_LEVEL=\"debug\"  # quoted, then a comment\n"
                                          "FILE_ALLOWED_EXTENSIONS=   # none\n"
                                          "MCP_ALLOWED_ORIGINS=''\n"
                                          "MCP_ALLOWED_HOSTS=#odd,host\n"
                                          "exporter=\n");
        QString error;
        QVERIFY(!Settings::load(sources, &error)); // "exporter" is a name, not the prefix
        QVERIFY2(error.endsWith(u":14: unknown setting \"exporter\""), qPrintable(error));

        QFile file(sources.customEnvFile);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.resize(file.size() - QByteArray("exporter=\n").size()));
        file.close();
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->text(u"MCP_HOST"), "0.0.0.0");
        QCOMPARE(settings->integer(u"MCP_PORT"), 9001);
        QCOMPARE(settings->text(u"SANDBOX_ROOT"), "/srv/my sandbox");
        QCOMPARE(settings->text(u"MCP_AUTH_TOKEN"), "se#cret \"x\"");
        QCOMPARE(settings->list(u"BASH_ALLOWED_COMMANDS"), QStringList({"ls", "cat"}));
        QCOMPARE(settings->text(u"WEB_ALLOWED_DOMAINS"), "a.example#b");
        QCOMPARE(settings->text(u"LOG_LEVEL"), "debug");
        QCOMPARE(settings->list(u"FILE_ALLOWED_EXTENSIONS"), QStringList());
        QCOMPARE(settings->origin(u"FILE_ALLOWED_EXTENSIONS"), SettingOrigin::CustomFile);
        QCOMPARE(settings->text(u"MCP_ALLOWED_ORIGINS"), "");
        QCOMPARE(settings->list(u"MCP_ALLOWED_HOSTS"), QStringList({"#odd", "host"}));
    }

    void envFileSyntaxErrors_data()
    {
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unterminated double quote") << "MCP_HOST=\"abc"
                                                   << "f.env:1: MCP_HOST has no closing \"";
        QTest::newRow("unterminated single quote") << "\nMCP_HOST='abc"
                                                   << "f.env:2: MCP_HOST has no closing '";
        QTest::newRow("text after quote")
                << "MCP_HOST=\"a\" b"
                << "f.env:1: MCP_HOST has text after its closing quote: \"b\"";
        QTest::newRow("no name") << "=5"
                                 << "f.env:1: \"\" is not a valid setting name";
        QTest::newRow("name starts with digit") << "1ABC=5"
                                                << "f.env:1: \"1ABC\" is not a valid setting name";
        QTest::newRow("name with dash") << "MCP-PORT=5"
                                        << "f.env:1: \"MCP-PORT\" is not a valid setting name";
        QTest::newRow("bare export") << "export"
                                     << "f.env:1: expected NAME=VALUE, found \"export\"";
        QTest::newRow("percent signs") << "50%1 %2"
                                       << "f.env:1: expected NAME=VALUE, found \"50%1 %2\"";
        QTest::newRow("bare word") << "# ok\nMCP_PORT"
                                   << "f.env:2: expected NAME=VALUE, found \"MCP_PORT\"";
    }

    void envFileSyntaxErrors()
    {
        QFETCH(QString, content);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!EnvFile::parse(content, QStringLiteral("f.env"), &error));
        QCOMPARE(error, expected);
    }

    void crossSettingRules_data()
    {
        QTest::addColumn<Assignments>("environment");
        QTest::addColumn<QString>("expected"); // empty: accepted

        QTest::newRow("bash default above max")
                << Assignments{{"BASH_TIMEOUT_DEFAULT", "200"}}
                << "BASH_TIMEOUT_DEFAULT=\"200\" (from environment): must not exceed "
                   "BASH_TIMEOUT_MAX=\"120\" (from built-in default)";
        QTest::newRow("python max below default")
                << Assignments{{"PYTHON_TIMEOUT_MAX", "10"}}
                << "PYTHON_TIMEOUT_DEFAULT=\"30\" (from built-in default): must not exceed "
                   "PYTHON_TIMEOUT_MAX=\"10\" (from environment)";
        QTest::newRow("body equal to file size")
                << Assignments{{"MCP_MAX_BODY_MB", "10"}}
                << "MCP_MAX_BODY_MB=\"10\" (from environment): must be greater than "
                   "FILE_MAX_SIZE_MB=\"10\" (from built-in default)";
        QTest::newRow("file size above body") << Assignments{{"FILE_MAX_SIZE_MB", "64"}}
                                              << "MCP_MAX_BODY_MB=\"32\" (from built-in default): "
                                                 "must be greater than FILE_MAX_SIZE_MB=\"64\" "
                                                 "(from environment)";
        QTest::newRow("default equal to max")
                << Assignments{{"BASH_TIMEOUT_DEFAULT", "120"}} << QString();
        QTest::newRow("both raised")
                << Assignments{{"PYTHON_TIMEOUT_DEFAULT", "600"}, {"PYTHON_TIMEOUT_MAX", "900"}}
                << QString();
        QTest::newRow("body raised with file size")
                << Assignments{{"FILE_MAX_SIZE_MB", "64"}, {"MCP_MAX_BODY_MB", "100"}} << QString();
        QTest::newRow("uid pool past the highest uid")
                << Assignments{{"SANDBOX_UID_BASE", "4294967000"}}
                << "SANDBOX_UID_BASE=\"4294967000\" (from environment) with "
                   "SANDBOX_UID_COUNT=\"1000\" (from built-in default): the last uid of the "
                   "pool would be above 4294967293";
        QTest::newRow("uid pool ending at the highest uid")
                << Assignments{{"SANDBOX_UID_BASE", "4294966294"}} << QString();
        QTest::newRow("system gid") << Assignments{{"SANDBOX_GID", "100"}}
                                    << "SANDBOX_GID=\"100\" (from environment): must be 0 (the "
                                       "same as SANDBOX_UID_BASE) or at least 1000";
        QTest::newRow("lowest gid") << Assignments{{"SANDBOX_GID", "1000"}} << QString();
        QTest::newRow("workspace uid in the pool")
                << Assignments{{"SANDBOX_WORKSPACE_UID", "100999"}}
                << "SANDBOX_WORKSPACE_UID=\"100999\" (from environment): must be 0, or at least "
                   "1000 and neither in the pool nor the browser worker's (SANDBOX_UID_BASE .. "
                   "SANDBOX_UID_BASE + SANDBOX_UID_COUNT)";
        QTest::newRow("workspace uid the browser's")
                << Assignments{{"SANDBOX_WORKSPACE_UID", "101000"}}
                << "SANDBOX_WORKSPACE_UID=\"101000\" (from environment): must be 0, or at least "
                   "1000 and neither in the pool nor the browser worker's (SANDBOX_UID_BASE .. "
                   "SANDBOX_UID_BASE + SANDBOX_UID_COUNT)";
        QTest::newRow("workspace uid past the browser's")
                << Assignments{{"SANDBOX_WORKSPACE_UID", "101001"}} << QString();
    }

    void workspaceOwnerIsNeitherAJobNorTheBrowser()
    {
        // The browser worker runs as the first uid after the pool (BrowserAccount): the owner of
        // every workspace's files is the one after it by default.
        QString error;
        const auto settings = Settings::load(SettingsSources{}, &error);
        QVERIFY2(settings, qPrintable(error));
        const SandboxIds ids = SandboxIds::fromSettings(*settings);
        QCOMPARE(ids.workspaceUid, ids.uidBase + ids.uidCount + 1);
        SettingsSources atTheTop;
        atTheTop.environment = environmentOf({{"SANDBOX_UID_BASE", "4294966294"}});
        const auto highest = Settings::load(atTheTop, &error);
        QVERIFY2(highest, qPrintable(error));
        QCOMPARE(SandboxIds::fromSettings(*highest).workspaceUid, SandboxIds::kNoUid);
    }

    void crossSettingRules()
    {
        QFETCH(Assignments, environment);
        QFETCH(QString, expected);
        SettingsSources sources;
        sources.environment = environmentOf(environment);
        QString error;
        const auto settings = Settings::load(sources, &error);
        if (expected.isEmpty()) {
            QVERIFY2(settings, qPrintable(error));
        } else {
            QVERIFY(!settings);
            QCOMPARE(error, expected);
        }
    }

    void crossSettingRulesApplyAfterLayering()
    {
        // The default file alone would break the rule; the environment repairs it.
        SettingsSources sources;
        sources.defaultEnvFile = writeFile("BASH_TIMEOUT_DEFAULT=200\n");
        sources.environment = environmentOf({{"BASH_TIMEOUT_MAX", "300"}});
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"BASH_TIMEOUT_DEFAULT"), 200);

        sources.environment = {};
        QVERIFY(!Settings::load(sources, &error));
        QCOMPARE(error,
                 QStringLiteral("BASH_TIMEOUT_DEFAULT=\"200\" (from %1:1): must not exceed "
                                "BASH_TIMEOUT_MAX=\"120\" (from built-in default)")
                         .arg(sources.defaultEnvFile));
    }

    void secretsAreMasked()
    {
        QString error;
        auto settings = loadOne(Layer::Environment, "MCP_AUTH_TOKEN", "s3cr3t-t0ken", &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->text(u"MCP_AUTH_TOKEN"), "s3cr3t-t0ken");
        const QString printed = settings->printConfig();
        QVERIFY(!printed.contains(u"s3cr3t"));
        QVERIFY(printed.contains(
                QRegularExpression(QStringLiteral("^MCP_AUTH_TOKEN=\\*{8} +# environment$"),
                                   QRegularExpression::MultilineOption)));

        const QString unset = defaults().printConfig();
        QVERIFY(unset.contains(
                QRegularExpression(QStringLiteral("^MCP_AUTH_TOKEN= +# built-in default$"),
                                   QRegularExpression::MultilineOption)));
    }

    void printConfigListsEverySettingAndReadsBack()
    {
        SettingsSources sources;
        sources.environment = environmentOf({{"SANDBOX_ROOT", "/srv/with space"},
                                             {"MCP_PORT", "9001"},
                                             {"WEB_ALLOWED_DOMAINS", "a.example, b.example"}});
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        const QString printed = settings->printConfig();
        const QStringList lines = printed.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), settingSpecs().size());
        for (qsizetype i = 0; i < lines.size(); ++i)
            QVERIFY2(lines.at(i).startsWith(QLatin1StringView(settingSpecs().at(i).name) + u'='),
                     qPrintable(lines.at(i)));
        QVERIFY(printed.contains(
                QRegularExpression(QStringLiteral("^MCP_PORT=9001 +# environment$"),
                                   QRegularExpression::MultilineOption)));

        SettingsSources again;
        again.customEnvFile = writeFile(printed.toUtf8());
        again.customEnvFileRequired = true;
        const auto reread = Settings::load(again, &error);
        QVERIFY2(reread, qPrintable(error));
        for (const SettingSpec &spec : settingSpecs())
            QCOMPARE(reread->text(QString::fromLatin1(spec.name)),
                     settings->text(QString::fromLatin1(spec.name)));
    }

    void debugLowersAnUnsetLogLevel_data()
    {
        QTest::addColumn<QByteArray>("defaultFile");
        QTest::addColumn<Assignments>("environment");
        QTest::addColumn<QString>("expectedLevel");
        QTest::addColumn<SettingOrigin>("expectedOrigin");

        QTest::newRow("debug, level unset") << QByteArray() << Assignments{{"DEBUG", "true"}}
                                            << "debug" << SettingOrigin::Environment;
        QTest::newRow("debug, level only in default file")
                << QByteArray("LOG_LEVEL=INFO\n") << Assignments{{"DEBUG", "yes"}} << "debug"
                << SettingOrigin::Environment;
        QTest::newRow("debug, level set")
                << QByteArray() << Assignments{{"DEBUG", "true"}, {"LOG_LEVEL", "WARNING"}}
                << "WARNING" << SettingOrigin::Environment;
        QTest::newRow("debug, level set to error")
                << QByteArray() << Assignments{{"DEBUG", "1"}, {"LOG_LEVEL", "error"}} << "error"
                << SettingOrigin::Environment;
        QTest::newRow("debug, default file already traces")
                << QByteArray("LOG_LEVEL=trace\n") << Assignments{{"DEBUG", "on"}} << "trace"
                << SettingOrigin::DefaultFile;
        QTest::newRow("no debug") << QByteArray() << Assignments{{"DEBUG", "false"}} << "INFO"
                                  << SettingOrigin::BuiltIn;
    }

    void debugLowersAnUnsetLogLevel()
    {
        QFETCH(QByteArray, defaultFile);
        QFETCH(Assignments, environment);
        QFETCH(QString, expectedLevel);
        QFETCH(SettingOrigin, expectedOrigin);
        SettingsSources sources;
        if (!defaultFile.isEmpty())
            sources.defaultEnvFile = writeFile(defaultFile);
        sources.environment = environmentOf(environment);
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->text(u"LOG_LEVEL"), expectedLevel);
        QCOMPARE(settings->origin(u"LOG_LEVEL"), expectedOrigin);
    }

    void debugLevelInCustomFileIsKept()
    {
        SettingsSources sources;
        sources.customEnvFile = writeFile("DEBUG=true\nLOG_LEVEL=INFO\n");
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->text(u"LOG_LEVEL"), "INFO");
    }

    void debugRuleFollowsSet()
    {
        Settings settings = defaults();
        QString error;
        QVERIFY2(settings.set(u"DEBUG", "true", SettingOrigin::AdminConsole, &error),
                 qPrintable(error));
        QCOMPARE(settings.text(u"LOG_LEVEL"), "debug");
        QCOMPARE(settings.origin(u"LOG_LEVEL"), SettingOrigin::AdminConsole);
        QVERIFY(settings.printConfig().contains(u"# admin console (lowered by DEBUG=true)\n"));
        QVERIFY2(settings.set(u"DEBUG", "false", SettingOrigin::AdminConsole, &error),
                 qPrintable(error));
        QCOMPARE(settings.text(u"LOG_LEVEL"), "INFO");
        QCOMPARE(settings.origin(u"LOG_LEVEL"), SettingOrigin::BuiltIn);
    }

    void setValidatesAndLeavesValuesOnError()
    {
        Settings settings = defaults();
        QString error;

        QVERIFY(!settings.set(u"BASH_TIMEOUT_MAX", "abc", SettingOrigin::AdminConsole, &error));
        QCOMPARE(error,
                 "BASH_TIMEOUT_MAX=\"abc\" (from admin console): must be an integer between 1 and "
                 "3600");
        QCOMPARE(settings.integer(u"BASH_TIMEOUT_MAX"), 120);
        QCOMPARE(settings.origin(u"BASH_TIMEOUT_MAX"), SettingOrigin::BuiltIn);

        QVERIFY(!settings.set(u"BASH_TIMEOUT_MAX", "10", SettingOrigin::AdminConsole, &error));
        QCOMPARE(error,
                 "BASH_TIMEOUT_DEFAULT=\"30\" (from built-in default): must not exceed "
                 "BASH_TIMEOUT_MAX=\"10\" (from admin console)");
        QCOMPARE(settings.integer(u"BASH_TIMEOUT_MAX"), 120);

        QVERIFY(!settings.set(u"FILE_MAX_SIZE_MB", "32", SettingOrigin::AdminConsole, &error));
        QCOMPARE(settings.integer(u"FILE_MAX_SIZE_MB"), 10);

        QVERIFY(!settings.set(u"NO_SUCH_SETTING", "1", SettingOrigin::AdminConsole, &error));
        QCOMPARE(error, "unknown setting \"NO_SUCH_SETTING\"");

        QVERIFY2(settings.set(u"BASH_TIMEOUT_MAX", " 300 ", SettingOrigin::AdminConsole, &error),
                 qPrintable(error));
        QCOMPARE(settings.integer(u"BASH_TIMEOUT_MAX"), 300);
        QCOMPARE(settings.text(u"BASH_TIMEOUT_MAX"), "300");
        QCOMPARE(settings.origin(u"BASH_TIMEOUT_MAX"), SettingOrigin::AdminConsole);
    }

    void shippedDefaultEnvMatchesTable()
    {
        const QString path = QFINDTESTDATA("../../../config/default.env");
        QVERIFY2(!path.isEmpty(), "config/default.env not found");

        QString error;
        const auto assignments = EnvFile::read(path, &error);
        QVERIFY2(assignments, qPrintable(error));
        QSet<QString> seen;
        for (const EnvAssignment &assignment : *assignments) {
            QVERIFY2(!seen.contains(assignment.name),
                     qPrintable(assignment.name + " is set twice"));
            seen.insert(assignment.name);
        }

        SettingsSources sources;
        sources.defaultEnvFile = path;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        for (const SettingSpec &spec : settingSpecs()) {
            const QString name = QString::fromLatin1(spec.name);
            QVERIFY2(settings->origin(name) == SettingOrigin::DefaultFile,
                     qPrintable(QStringLiteral("%1 is missing from config/default.env").arg(name)));
            QCOMPARE(settings->text(name), QString::fromUtf8(spec.defaultValue));
        }
        QCOMPARE(seen.size(), settingSpecs().size());
    }

    void shippedCustomEnvExampleLoads()
    {
        const QString path = QFINDTESTDATA("../../../config/custom.env.example");
        QVERIFY2(!path.isEmpty(), "config/custom.env.example not found");
        SettingsSources sources;
        sources.defaultEnvFile = QFINDTESTDATA("../../../config/default.env");
        sources.customEnvFile = path;
        sources.customEnvFileRequired = true;
        QString error;
        const auto settings = Settings::load(sources, &error);
        QVERIFY2(settings, qPrintable(error));
        QCOMPARE(settings->integer(u"MCP_PORT"), 9001);
        QCOMPARE(settings->origin(u"MCP_PORT"), SettingOrigin::CustomFile);
    }

    void markdownTableHasEverySetting()
    {
        const QStringList lines = settingsMarkdownTable().split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), settingSpecs().size() + 2);
        QCOMPARE(lines.at(0), "| Name | Default | Allowed | Description |");
        for (qsizetype i = 0; i < settingSpecs().size(); ++i) {
            const SettingSpec &spec = settingSpecs().at(i);
            const QString &row = lines.at(i + 2);
            QVERIFY2(row.startsWith(QStringLiteral("| `%1` |").arg(QLatin1StringView(spec.name))),
                     qPrintable(row));
            QCOMPARE(row.count(u'|') - row.count(QStringLiteral("\\|")), 5);
        }
        QVERIFY(settingsMarkdownTable().contains(u"| `MCP_PORT` | `8000` | 0..65535 |"));
        QVERIFY(settingsMarkdownTable().contains(u"| `MCP_AUTH_TOKEN` | *(empty)* | text |"));
    }

    void helpTextIsGroupedAndAligned()
    {
        const QString help = settingsHelpText();
        for (const SettingSpec &spec : settingSpecs()) {
            QVERIFY2(help.contains(QStringLiteral("\n%1:\n").arg(QLatin1StringView(spec.group)))
                             || help.startsWith(
                                     QStringLiteral("%1:\n").arg(QLatin1StringView(spec.group))),
                     spec.group);
            QVERIFY2(help.contains(QStringLiteral("  %1 ").arg(QLatin1StringView(spec.name))),
                     spec.name);
        }
        qsizetype descriptionColumn = -1;
        for (const QString &line : help.split(u'\n')) {
            // Words are never broken: a single word (a long URL default) may overrun alone.
            QVERIFY2(line.size() <= 80 || !line.trimmed().contains(u' '), qPrintable(line));
            const QRegularExpressionMatch entry =
                    QRegularExpression(QStringLiteral("^  [A-Z_]+ +(\\S)")).match(line);
            if (!entry.hasMatch())
                continue;
            if (descriptionColumn < 0)
                descriptionColumn = entry.capturedStart(1);
            QCOMPARE(entry.capturedStart(1), descriptionColumn);
        }
        QVERIFY(help.contains(u"Default: 8000; allowed: 0..65535."));
    }

    void loggingWritesJsonLinesToStderr()
    {
        const QtMessageHandler testHandler = qInstallMessageHandler(nullptr);
        const QLoggingCategory category("cmcp.test");
        const QByteArray output = captureStderr(m_dir.filePath(QStringLiteral("json.log")), [&] {
            setupLogging(QStringLiteral("WARN"), true);
            qInfo("not shown at warn level");
            qWarning("say \"hi\"\n\tbye \\ \x01 caf\xc3\xa9");
            qCCritical(category) << "boom";
            spdlog::error("direct {}", 42);
        });
        qInstallMessageHandler(testHandler);

        const QList<QByteArray> lines = output.split('\n');
        QCOMPARE(lines.size(), 4); // three messages and the empty rest after the last newline
        QVERIFY(lines.last().isEmpty());

        QJsonParseError parseError;
        const QJsonObject first = QJsonDocument::fromJson(lines.at(0), &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, lines.at(0).constData());
        QCOMPARE(first.value(u"level").toString(), "warning");
        QCOMPARE(first.value(u"logger").toString(), "cmcp");
        QCOMPARE(first.value(u"msg").toString(),
                 QString::fromUtf8("say \"hi\"\n\tbye \\ \x01 caf\xc3\xa9"));
        QVERIFY(QRegularExpression(
                        QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$"))
                        .match(first.value(u"time").toString())
                        .hasMatch());

        const QJsonObject second = QJsonDocument::fromJson(lines.at(1)).object();
        QCOMPARE(second.value(u"level").toString(), "error");
        QCOMPARE(second.value(u"logger").toString(), "cmcp.test");
        QCOMPARE(second.value(u"msg").toString(), "boom");

        const QJsonObject third = QJsonDocument::fromJson(lines.at(2)).object();
        QCOMPARE(third.value(u"msg").toString(), "direct 42");
        QCOMPARE(third.value(u"logger").toString(), "cmcp");
    }

    void loggingHumanFormatAndLevelChanges()
    {
        const QtMessageHandler testHandler = qInstallMessageHandler(nullptr);
        const QLoggingCategory category("cmcp.human");
        bool unknownLevelRefused = false;
        bool debugAccepted = false;
        bool offAccepted = false;
        const QByteArray output = captureStderr(m_dir.filePath(QStringLiteral("text.log")), [&] {
            setupLogging(QStringLiteral("info"), false);
            qDebug("hidden at info");
            qCInfo(category, "shown at info");
            unknownLevelRefused = !setLogLevel(QStringLiteral("loud"));
            debugAccepted = setLogLevel(QStringLiteral("Debug"));
            qDebug("shown at debug");
            offAccepted = setLogLevel(QStringLiteral("off"));
            qCritical("hidden when off");
        });
        qInstallMessageHandler(testHandler);
        QVERIFY(unknownLevelRefused);
        QVERIFY(debugAccepted);
        QVERIFY(offAccepted);

        const QList<QByteArray> lines = output.split('\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY2(QRegularExpression(
                         QStringLiteral("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} info +"
                                        "\\[cmcp\\.human\\] shown at info$"))
                         .match(QString::fromUtf8(lines.at(0)))
                         .hasMatch(),
                 lines.at(0).constData());
        QVERIFY2(lines.at(1).endsWith("debug    [cmcp] shown at debug"), lines.at(1).constData());
    }
};

QTEST_GUILESS_MAIN(TestSettings)
#include "tst_settings.moc"
