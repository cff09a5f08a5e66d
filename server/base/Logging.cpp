#include "base/Logging.h"

#include <QByteArray>
#include <QMessageLogContext>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cmcp {

namespace {

const char *const mainLoggerName = "cmcp";
// %* is the message with its control characters escaped (EscapedMessage).
const char *const humanPattern = "%Y-%m-%d %H:%M:%S.%e %^%-8l%$ [%n] %*";
// The longest message written, in bytes: a client's text quoted in a message (a name, a path)
// cannot make one line of megabytes.
constexpr size_t MaxMessageBytes = 16 * 1024;

// Serialises the creation of per-category loggers and re-setup.
std::mutex loggersMutex;

std::optional<spdlog::level::level_enum> parseLevel(const QString &level)
{
    const QString lower = level.trimmed().toLower();
    if (lower == u"trace")
        return spdlog::level::trace;
    if (lower == u"debug")
        return spdlog::level::debug;
    if (lower == u"info")
        return spdlog::level::info;
    if (lower == u"warning" || lower == u"warn")
        return spdlog::level::warn;
    if (lower == u"error")
        return spdlog::level::err;
    if (lower == u"critical")
        return spdlog::level::critical;
    if (lower == u"off")
        return spdlog::level::off;
    return std::nullopt;
}

void append(spdlog::memory_buf_t &dest, std::string_view text)
{
    dest.append(text.data(), text.data() + text.size());
}

void appendJsonString(spdlog::memory_buf_t &dest, std::string_view text)
{
    // Bytes that are not valid UTF-8 would make the line invalid JSON: route
    // such text through QString, which replaces them with U+FFFD.
    QByteArray repaired;
    const bool ascii =
            std::all_of(text.begin(), text.end(), [](char c) { return (unsigned char)c < 0x80; });
    if (!ascii) {
        repaired = QString::fromUtf8(text.data(), qsizetype(text.size())).toUtf8();
        text = std::string_view(repaired.constData(), size_t(repaired.size()));
    }
    dest.push_back('"');
    for (const char c : text) {
        switch (c) {
        case '"':
            append(dest, "\\\"");
            break;
        case '\\':
            append(dest, "\\\\");
            break;
        case '\n':
            append(dest, "\\n");
            break;
        case '\r':
            append(dest, "\\r");
            break;
        case '\t':
            append(dest, "\\t");
            break;
        default:
            if ((unsigned char)c < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", (unsigned)(unsigned char)c);
                append(dest, escaped);
            } else {
                dest.push_back(c);
            }
        }
    }
    dest.push_back('"');
}

// The message cut to MaxMessageBytes, saying so.
std::string_view boundedMessage(const spdlog::details::log_msg &msg, bool &cut)
{
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    cut = payload.size() > MaxMessageBytes;
    return cut ? payload.substr(0, MaxMessageBytes) : payload;
}

constexpr std::string_view cutMarker = "… [message cut]";

// The human format's message: one line whatever a client managed to put in it. A newline,
// a carriage return or an escape sequence in a quoted name would otherwise forge a line of the
// log or rewrite the operator's terminal; each control character is written as \n, \r, \t or
// \xHH, and a backslash as \\, so that the escaping itself cannot be forged either.
class EscapedMessage final : public spdlog::custom_flag_formatter
{
public:
    void format(const spdlog::details::log_msg &msg, const std::tm &,
                spdlog::memory_buf_t &dest) override
    {
        bool cut = false;
        for (const char c : boundedMessage(msg, cut)) {
            const auto byte = (unsigned char)c;
            if (c == '\\')
                append(dest, "\\\\");
            else if (c == '\n')
                append(dest, "\\n");
            else if (c == '\r')
                append(dest, "\\r");
            else if (c == '\t')
                append(dest, "\\t");
            else if (byte < 0x20 || byte == 0x7f) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\x%02x", unsigned(byte));
                append(dest, escaped);
            } else {
                dest.push_back(c);
            }
        }
        if (cut)
            append(dest, cutMarker);
    }

    std::unique_ptr<custom_flag_formatter> clone() const override
    {
        return std::make_unique<EscapedMessage>();
    }
};

std::unique_ptr<spdlog::formatter> humanFormatter()
{
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<EscapedMessage>('*').set_pattern(humanPattern);
    return formatter;
}

// {"time":"2025-01-31T12:00:00.123Z","level":"info","logger":"cmcp","msg":"..."}
class JsonFormatter final : public spdlog::formatter
{
public:
    void format(const spdlog::details::log_msg &msg, spdlog::memory_buf_t &dest) override
    {
        using namespace std::chrono;
        const std::time_t seconds = system_clock::to_time_t(msg.time);
        const auto millis = duration_cast<milliseconds>(msg.time.time_since_epoch()).count() % 1000;
        std::tm utc{};
        gmtime_r(&seconds, &utc);
        char time[40];
        const size_t length = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &utc);
        std::snprintf(time + length, sizeof time - length, ".%03dZ", int(millis));

        append(dest, "{\"time\":\"");
        append(dest, time);
        append(dest, "\",\"level\":");
        const auto level = spdlog::level::to_string_view(msg.level);
        appendJsonString(dest, std::string_view(level.data(), level.size()));
        append(dest, ",\"logger\":");
        appendJsonString(dest, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
        append(dest, ",\"msg\":");
        bool cut = false;
        const std::string_view message = boundedMessage(msg, cut);
        appendJsonString(dest, cut ? std::string(message).append(cutMarker) : message);
        append(dest, "}\n");
    }

    std::unique_ptr<spdlog::formatter> clone() const override
    {
        return std::make_unique<JsonFormatter>();
    }
};

spdlog::level::level_enum levelFor(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg:
        return spdlog::level::debug;
    case QtInfoMsg:
        return spdlog::level::info;
    case QtWarningMsg:
        return spdlog::level::warn;
    case QtCriticalMsg:
        return spdlog::level::err;
    case QtFatalMsg:
        return spdlog::level::critical;
    }
    return spdlog::level::info;
}

// One spdlog logger per Qt category, so that the category shows as the
// logger name; created on first use with the current sink, format and level.
std::shared_ptr<spdlog::logger> loggerForCategory(const char *category)
{
    if (!category || qstrcmp(category, "default") == 0)
        return spdlog::default_logger();
    std::lock_guard lock(loggersMutex);
    if (auto existing = spdlog::get(category))
        return existing;
    const std::vector<spdlog::sink_ptr> &sinks = spdlog::default_logger()->sinks();
    auto logger = std::make_shared<spdlog::logger>(category, sinks.begin(), sinks.end());
    spdlog::initialize_logger(logger); // applies the registry's format and level, and registers it
    return logger;
}

void routeQtMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    const auto logger = loggerForCategory(context.category);
    const QByteArray utf8 = message.toUtf8();
    logger->log(levelFor(type), spdlog::string_view_t(utf8.constData(), size_t(utf8.size())));
    if (type == QtFatalMsg)
        logger->flush(); // Qt aborts when the handler returns
}

} // namespace

void setupLogging(const QString &level, bool json)
{
    const auto parsedLevel = parseLevel(level);
    {
        std::lock_guard lock(loggersMutex);
        spdlog::sink_ptr sink;
        if (json)
            sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        else
            sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(); // colours only on a
                                                                            // terminal

        // Category loggers still hold the previous sink: drop them, they are
        // recreated on their next message.
        std::vector<std::string> names;
        spdlog::apply_all([&names](const std::shared_ptr<spdlog::logger> &logger) {
            names.push_back(logger->name());
        });
        const std::string defaultName =
                spdlog::default_logger() ? spdlog::default_logger()->name() : std::string();
        for (const std::string &name : names) {
            if (name != defaultName)
                spdlog::drop(name);
        }

        spdlog::set_default_logger(std::make_shared<spdlog::logger>(mainLoggerName, sink));
        if (json)
            spdlog::set_formatter(std::make_unique<JsonFormatter>());
        else
            spdlog::set_formatter(humanFormatter());
        spdlog::set_level(parsedLevel.value_or(spdlog::level::info));
    }
    qInstallMessageHandler(routeQtMessage);
    if (!parsedLevel)
        spdlog::warn("unknown log level \"{}\", using info", level.toStdString());
}

bool setLogLevel(const QString &level)
{
    const auto parsedLevel = parseLevel(level);
    if (!parsedLevel)
        return false;
    spdlog::set_level(*parsedLevel);
    return true;
}

} // namespace cmcp
