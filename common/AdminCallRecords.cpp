#include "common/AdminCallRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::Absent;
using json::member;

// A call's figures stand flat in the call's object, and in the progress object.
constexpr auto kFigures = json::fields(member("elapsedMs", &CallFigures::elapsedMs),
                                       member("outputBytes", &CallFigures::outputBytes));
constexpr auto kCall = json::fields(
        member("callId", &CallRecord::callId), member("sessionId", &CallRecord::sessionId),
        member("transport", &CallRecord::transport), member("clientName", &CallRecord::clientName),
        member("tool", &CallRecord::tool), member("arguments", &CallRecord::arguments),
        member("startedAt", &CallRecord::startedAt), member("status", &CallRecord::status),
        member("durationMs", &CallRecord::durationMs, Absent::Omitted),
        member("detail", &CallRecord::detail, Absent::Omitted),
        member("accounting", &CallRecord::accounting, Absent::Omitted),
        member("outputHead", &CallRecord::outputHead, Absent::Omitted),
        member("outputTail", &CallRecord::outputTail, Absent::Omitted));
constexpr auto kProgress = json::fields(member("callId", &ProgressRecord::callId));
constexpr auto kStarted = json::fields(member("call", &CallStartedEvent::call));
constexpr auto kFinished = json::fields(member("call", &CallFinishedEvent::call));
constexpr auto kCancel = json::fields(member("callId", &CancelCallParams::callId));

} // namespace

QJsonObject CallRecord::toJson() const
{
    QJsonObject object = kCall.write(*this);
    if (figures)
        kFigures.writeInto(object, *figures);
    return object;
}

CallRecord CallRecord::fromJson(const QJsonObject &object)
{
    CallRecord call = kCall.read(object);
    if (object.contains(QLatin1String("elapsedMs")))
        call.figures = kFigures.read(object);
    return call;
}

QJsonObject ProgressRecord::toJson() const
{
    QJsonObject object = kProgress.write(*this);
    kFigures.writeInto(object, figures);
    return object;
}

ProgressRecord ProgressRecord::fromJson(const QJsonObject &object)
{
    ProgressRecord progress = kProgress.read(object);
    progress.figures = kFigures.read(object);
    return progress;
}

CMCP_ADMIN_RECORD_JSON(CallStartedEvent, kStarted)

CMCP_ADMIN_RECORD_JSON(CallFinishedEvent, kFinished)

QJsonObject CancelCallParams::toJson() const
{
    return kCancel.write(*this);
}

std::optional<CancelCallParams> CancelCallParams::fromJson(const QJsonObject &object)
{
    const QJsonValue callId = json::field(object, "callId");
    if (!callId.isDouble() || callId.toDouble() < 1)
        return std::nullopt;
    return CancelCallParams{qint64(callId.toDouble())};
}

} // namespace cmcp::admin
