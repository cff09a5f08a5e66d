#include "sandbox/JailReport.h"

#include "jail/protocol/ReportFields.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

namespace cmcp {

namespace {

namespace field = jail_protocol::report;

// The jail's records are a few hundred bytes; a longer line means a broken writer, and the
// daemon must not buffer without bound on its behalf.
constexpr qsizetype kMaxLineBytes = 64 * 1024;

// JSON numbers arrive as doubles: accept only whole numbers that fit in 53 bits.
std::optional<qint64> wholeNumber(const QJsonValue &value)
{
    if (!value.isDouble())
        return std::nullopt;
    const double number = value.toDouble();
    if (std::trunc(number) != number || std::fabs(number) > 9007199254740992.0)
        return std::nullopt;
    return qint64(number);
}

// A whole number or null; anything else (or absence) is an error.
bool optionalWholeNumber(const QJsonObject &object, const char *key, std::optional<qint64> &out)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isNull()) {
        out.reset();
        return true;
    }
    out = wholeNumber(value);
    return out.has_value();
}

std::optional<JailStarted> parseStarted(const QJsonObject &record)
{
    const std::optional<qint64> pid = wholeNumber(record.value(QLatin1String(field::kPid)));
    const QJsonValue layers = record.value(QLatin1String(field::kLayers));
    if (!pid || *pid <= 0 || !layers.isArray())
        return std::nullopt;
    JailStarted started;
    started.pid = *pid;
    for (const QJsonValue &layer : layers.toArray()) {
        if (!layer.isString())
            return std::nullopt;
        started.layers.append(layer.toString());
    }
    // Absent from jails that have no cgroup of their own to tell (a call forked from a template).
    for (const QJsonValue &dir : record.value(QLatin1String(field::kCgroups)).toArray()) {
        if (!dir.isString())
            return std::nullopt;
        started.cgroups.append(dir.toString());
    }
    return started;
}

std::optional<JailRefusal> parseRefusal(const QJsonObject &record)
{
    const QJsonValue layer = record.value(QLatin1String(field::kLayer));
    const QJsonValue message = record.value(QLatin1String(field::kMessage));
    const std::optional<qint64> code = wholeNumber(record.value(QLatin1String(field::kCode)));
    if (!layer.isString() || !message.isString() || !code)
        return std::nullopt;
    return JailRefusal{layer.toString(), int(*code), message.toString()};
}

// "seccomp_denied": absent (not counted) or a list of {syscall, errno, count}.
bool parseSeccompDenied(const QJsonObject &record, JailExit &exit)
{
    const QJsonValue list = record.value(QLatin1String(field::kSeccompDenied));
    if (list.isUndefined())
        return true;
    if (!list.isArray())
        return false;
    QList<SeccompDenial> denied;
    for (const QJsonValue &value : list.toArray()) {
        const QJsonObject entry = value.toObject();
        const QJsonValue syscall = entry.value(QLatin1String(field::kSyscall));
        const QJsonValue errnoName = entry.value(QLatin1String(field::kErrno));
        const std::optional<qint64> count = wholeNumber(entry.value(QLatin1String(field::kCount)));
        if (!syscall.isString() || !errnoName.isString() || !count || *count <= 0)
            return false;
        denied.append({syscall.toString(), errnoName.toString(), *count});
    }
    exit.seccompDenied = denied;
    std::optional<qint64> unnamed;
    if (record.contains(QLatin1String(field::kSeccompDeniedUnnamed))
        && (!optionalWholeNumber(record, field::kSeccompDeniedUnnamed, unnamed) || !unnamed
            || *unnamed < 0))
        return false;
    exit.seccompDeniedUnnamed = unnamed.value_or(0);
    return true;
}

std::optional<JailExit> parseExit(const QJsonObject &record)
{
    JailExit exit;
    std::optional<qint64> exitCode, signal, peak, pidsRefused;
    const std::optional<qint64> wall = wholeNumber(record.value(QLatin1String(field::kWallMs)));
    const std::optional<qint64> cpu = wholeNumber(record.value(QLatin1String(field::kCpuMs)));
    const QJsonValue oomKilled = record.value(QLatin1String(field::kOomKilled));
    const QJsonValue killed = record.value(QLatin1String(field::kKilled));
    if (!optionalWholeNumber(record, field::kExitCode, exitCode)
        || !optionalWholeNumber(record, field::kSignal, signal)
        || !optionalWholeNumber(record, field::kPeakMemoryKb, peak)
        || (record.contains(QLatin1String(field::kPidsRefused))
            && !optionalWholeNumber(record, field::kPidsRefused, pidsRefused))
        || !wall || !cpu || !oomKilled.isBool() || !killed.isBool()
        || !parseSeccompDenied(record, exit))
        return std::nullopt;
    if (exitCode)
        exit.exitCode = int(*exitCode);
    if (signal)
        exit.signal = int(*signal);
    exit.wallMs = *wall;
    exit.cpuMs = *cpu;
    exit.peakMemoryKb = peak;
    exit.oomKilled = oomKilled.toBool();
    exit.pidsRefused = pidsRefused.value_or(0);
    exit.killed = killed.toBool();
    return exit;
}

} // namespace

void JailReport::addBytes(const QByteArray &bytes)
{
    qsizetype start = 0;
    while (start < bytes.size()) {
        const qsizetype newline = bytes.indexOf('\n', start);
        const qsizetype end = newline < 0 ? bytes.size() : newline;
        if (!m_overlongLine)
            m_partialLine.append(bytes.constData() + start, end - start);
        if (m_partialLine.size() > kMaxLineBytes) {
            m_partialLine.clear();
            m_overlongLine = true;
        }
        if (newline < 0)
            break;
        if (m_overlongLine)
            m_errors.append(QStringLiteral("a line longer than %1 bytes").arg(kMaxLineBytes));
        else
            parseLine(m_partialLine);
        m_partialLine.clear();
        m_overlongLine = false;
        start = newline + 1;
    }
}

void JailReport::finish()
{
    if (m_overlongLine)
        m_errors.append(QStringLiteral("a line longer than %1 bytes").arg(kMaxLineBytes));
    else if (!m_partialLine.isEmpty())
        parseLine(m_partialLine);
    m_partialLine.clear();
    m_overlongLine = false;
}

void JailReport::parseLine(const QByteArray &line)
{
    if (line.trimmed().isEmpty())
        return;
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
    const QString quoted = QString::fromUtf8(line.left(200));
    if (!document.isObject()) {
        m_errors.append(QStringLiteral("not a JSON object: %1").arg(quoted));
        return;
    }
    const QJsonObject record = document.object();
    const QString event = record.value(QLatin1String(field::kEvent)).toString();
    bool understood = false;
    if (event == QLatin1String(field::kStarted)) {
        if (const auto started = parseStarted(record); started && !m_started) {
            m_started = started;
            understood = true;
        }
    } else if (event == QLatin1String(field::kRefused)) {
        if (const auto refusal = parseRefusal(record); refusal && !m_refusal) {
            m_refusal = refusal;
            understood = true;
        }
    } else if (event == QLatin1String(field::kExit)) {
        if (const auto exit = parseExit(record); exit && !m_exit) {
            m_exit = exit;
            understood = true;
        }
    }
    if (!understood)
        m_errors.append(QStringLiteral("unexpected record: %1").arg(quoted));
}

} // namespace cmcp
