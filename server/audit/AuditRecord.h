#pragma once

#include "audit/AuditChain.h"
#include "mcp/ToolCallRecord.h"

#include <QDateTime>

namespace cmcp {
struct ToolResult;
}

namespace cmcp::audit {

// The audit records of one tools/call, written straight to their JSON (AuditChain's seal adds seq,
// prev and hash). Arguments are cut to a bounded size and their secrets redacted
// (SecretRedaction.h); file contents (file_write's content, file_edit's texts) are kept as their
// length and sha256 only. Of a result only a summary is kept (isError, sizes, the error message of
// an unstructured error, the job accounting of the system tools), never its content: file
// contents, command output and environment values stay out of the log.
// `at` is the record's time, in ms since the epoch. Each is written into `fields`, emptied first
// (the log reuses one), or into a new one.
void callStartedRecord(RecordFields &fields, const ToolCallRecord &call, qint64 at);
// The arguments are in the call_started record of the same call id only.
void callFinishedRecord(RecordFields &fields, const ToolCallRecord &call, const ToolResult *result,
                        qint64 at);

inline RecordFields callStartedRecord(const ToolCallRecord &call,
                                      qint64 at = QDateTime::currentMSecsSinceEpoch())
{
    RecordFields fields;
    callStartedRecord(fields, call, at);
    return fields;
}

inline RecordFields callFinishedRecord(const ToolCallRecord &call, const ToolResult *result,
                                       qint64 at = QDateTime::currentMSecsSinceEpoch())
{
    RecordFields fields;
    callFinishedRecord(fields, call, result, at);
    return fields;
}

// A record's size is bounded whatever a client sends. The longest argument string kept whole, in
// characters; longer ones keep their start, length and sha256.
inline constexpr qsizetype MaxArgumentStringLength = 1024;
// The most members of one object or array of the arguments kept; the rest are counted.
inline constexpr qsizetype MaxArgumentMembers = 64;
// The longest argument name kept, in characters.
inline constexpr qsizetype MaxArgumentKeyLength = 128;
// How deep the arguments are kept; deeper objects and arrays are named, not kept.
inline constexpr int MaxArgumentDepth = 8;
// The characters of one call's arguments kept in all (keys and strings).
inline constexpr qsizetype MaxArgumentCharacters = 16 * 1024;
// The longest client name, session id, transport or tool name kept.
inline constexpr qsizetype MaxFieldLength = 256;
// The longest error message kept in a record, in characters.
inline constexpr qsizetype MaxErrorMessageLength = 2000;

} // namespace cmcp::audit
