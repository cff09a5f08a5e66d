#pragma once

#include "common/AdminProtocol.h"

#include <QDateTime>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>

// The admin channel's records of tool calls: what the daemon says of a call, of its progress,
// and the request that cancels one.
namespace cmcp::admin {

// A running call's time so far and the bytes of output its job has written (stdout and
// stderr).
struct CallFigures
{
    qint64 elapsedMs = 0;
    qint64 outputBytes = 0;
};

// The "call" object: one tool call as the daemon shows it.
struct CallRecord
{
    static constexpr char running[] = "running";

    qint64 callId = 0;
    QString sessionId;
    QString transport;
    QString clientName;
    QString tool;
    // Secrets redacted and strings beyond 4,096 characters cut, by the daemon.
    QJsonObject arguments;
    QDateTime startedAt;
    // "running", or how it ended: succeeded, failed, invalid_arguments, unknown_tool,
    // broke_output_schema, cancelled, input_required (it asked its client, who retries it).
    QString status;
    // Once finished:
    std::optional<qint64> durationMs;
    QString detail; // sent only when not empty
    std::optional<QJsonObject> accounting; // a structured result, long strings cut
    std::optional<QString> outputHead; // the start of an unstructured result's text
    std::optional<QString> outputTail; // its end, when it is longer than the head
    // While running: the last progress, once its job has written output.
    std::optional<CallFigures> figures;

    bool isRunning() const { return status == QLatin1String(running); }

    QJsonObject toJson() const;
    static CallRecord fromJson(const QJsonObject &object);
};

// The "progress" object: a running call's figures, at most one per call every
// progressIntervalMs, and only while it produces output.
struct ProgressRecord
{
    static constexpr const char *event = eventCallProgress;

    qint64 callId = 0;
    CallFigures figures;

    QJsonObject toJson() const;
    static ProgressRecord fromJson(const QJsonObject &object);
};

struct CallStartedEvent
{
    static constexpr const char *event = eventCallStarted;

    CallRecord call;

    QJsonObject toJson() const;
    static CallStartedEvent fromJson(const QJsonObject &object);
};

struct CallFinishedEvent
{
    static constexpr const char *event = eventCallFinished;

    CallRecord call;

    QJsonObject toJson() const;
    static CallFinishedEvent fromJson(const QJsonObject &object);
};

// cancelCall: its reply's result is empty.
struct CancelCallParams
{
    static constexpr const char *method = methodCancelCall;

    qint64 callId = 0;

    QJsonObject toJson() const;
    // nullopt unless callId is a number of at least 1.
    static std::optional<CancelCallParams> fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin

Q_DECLARE_METATYPE(cmcp::admin::CallRecord)
