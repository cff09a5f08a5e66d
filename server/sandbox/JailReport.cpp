#include "sandbox/JailReport.h"

#include <variant>

namespace cmcp {

namespace {

// The jail's records are a few hundred bytes; a longer line means a broken writer, and the
// daemon must not buffer without bound on its behalf.
constexpr qsizetype kMaxLineBytes = 64 * 1024;

// Keeps the first record of its kind; a second one is the jail's error.
template<typename Record>
bool keepFirst(std::optional<Record> &kept, Record &&record)
{
    if (kept)
        return false;
    kept = std::move(record);
    return true;
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
    std::string error;
    std::optional<jail::ReportRecord> record =
            jail::parseReportLine(std::string_view(line.constData(), size_t(line.size())), &error);
    if (!record) {
        m_errors.append(QString::fromStdString(error));
        return;
    }
    const bool kept = std::visit(
            [this](auto &&r) {
                using R = std::decay_t<decltype(r)>;
                if constexpr (std::is_same_v<R, JailStarted>)
                    return keepFirst(m_started, std::move(r));
                else if constexpr (std::is_same_v<R, JailRefusal>)
                    return keepFirst(m_refusal, std::move(r));
                else
                    return keepFirst(m_exit, std::move(r));
            },
            std::move(*record));
    if (!kept)
        m_errors.append(
                QStringLiteral("unexpected record: %1").arg(QString::fromUtf8(line.left(200))));
}

} // namespace cmcp
