#pragma once

#include "jail/protocol/Report.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// What cmcp-jail wrote on its --report-fd, as the jail writes it: its own structures
// (jail/protocol/Report.h), read by its own parser.
using JailStarted = jail::Started;
using JailRefusal = jail::Refusal;
using JailExit = jail::Exit;
using SeccompDenial = jail::SeccompDenial;

// Collects the records from the bytes of the report pipe as they arrive, in any split.
class JailReport
{
public:
    void addBytes(const QByteArray &bytes);
    // End of the pipe: a last line without its newline is still a record.
    void finish();

    const std::optional<JailStarted> &started() const { return m_started; }
    const std::optional<JailRefusal> &refusal() const { return m_refusal; }
    const std::optional<JailExit> &exit() const { return m_exit; }
    // Lines that were not a record this supervisor understands, each with why.
    const QStringList &errors() const { return m_errors; }

private:
    void parseLine(const QByteArray &line);

    QByteArray m_partialLine;
    bool m_overlongLine = false;
    std::optional<JailStarted> m_started;
    std::optional<JailRefusal> m_refusal;
    std::optional<JailExit> m_exit;
    QStringList m_errors;
};

} // namespace cmcp
