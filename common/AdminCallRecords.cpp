#include "common/AdminCallRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

void insertFigures(QJsonObject &object, const CallFigures &figures)
{
    object.insert(QLatin1String("elapsedMs"), double(figures.elapsedMs));
    object.insert(QLatin1String("outputBytes"), double(figures.outputBytes));
}

CallFigures figuresOf(const QJsonObject &object)
{
    return {json::integer(object, "elapsedMs"), json::integer(object, "outputBytes")};
}

} // namespace

QJsonObject CallRecord::toJson() const
{
    QJsonObject object{
            {QLatin1String("callId"), double(callId)},
            {QLatin1String("sessionId"), sessionId},
            {QLatin1String("transport"), transport},
            {QLatin1String("clientName"), clientName},
            {QLatin1String("tool"), tool},
            {QLatin1String("arguments"), arguments},
            {QLatin1String("startedAt"), json::timeText(startedAt)},
            {QLatin1String("status"), status},
    };
    if (durationMs)
        object.insert(QLatin1String("durationMs"), double(*durationMs));
    if (!detail.isEmpty())
        object.insert(QLatin1String("detail"), detail);
    if (accounting)
        object.insert(QLatin1String("accounting"), *accounting);
    if (outputHead)
        object.insert(QLatin1String("outputHead"), *outputHead);
    if (outputTail)
        object.insert(QLatin1String("outputTail"), *outputTail);
    if (figures)
        insertFigures(object, *figures);
    return object;
}

CallRecord CallRecord::fromJson(const QJsonObject &object)
{
    const auto has = [&object](const char *key) { return object.contains(QLatin1String(key)); };
    CallRecord call;
    call.callId = json::integer(object, "callId");
    call.sessionId = json::text(object, "sessionId");
    call.transport = json::text(object, "transport");
    call.clientName = json::text(object, "clientName");
    call.tool = json::text(object, "tool");
    call.arguments = json::field(object, "arguments").toObject();
    call.startedAt = json::time(object, "startedAt");
    call.status = json::text(object, "status");
    if (has("durationMs"))
        call.durationMs = json::integer(object, "durationMs");
    call.detail = json::text(object, "detail");
    if (has("accounting"))
        call.accounting = json::field(object, "accounting").toObject();
    if (has("outputHead"))
        call.outputHead = json::text(object, "outputHead");
    if (has("outputTail"))
        call.outputTail = json::text(object, "outputTail");
    if (has("elapsedMs"))
        call.figures = figuresOf(object);
    return call;
}

QJsonObject ProgressRecord::toJson() const
{
    QJsonObject object{{QLatin1String("callId"), double(callId)}};
    insertFigures(object, figures);
    return object;
}

ProgressRecord ProgressRecord::fromJson(const QJsonObject &object)
{
    return {json::integer(object, "callId"), figuresOf(object)};
}

QJsonObject CallStartedEvent::toJson() const
{
    return {{QLatin1String("call"), call.toJson()}};
}

CallStartedEvent CallStartedEvent::fromJson(const QJsonObject &object)
{
    return {CallRecord::fromJson(json::field(object, "call").toObject())};
}

QJsonObject CallFinishedEvent::toJson() const
{
    return {{QLatin1String("call"), call.toJson()}};
}

CallFinishedEvent CallFinishedEvent::fromJson(const QJsonObject &object)
{
    return {CallRecord::fromJson(json::field(object, "call").toObject())};
}

QJsonObject CancelCallParams::toJson() const
{
    return {{QLatin1String("callId"), double(callId)}};
}

std::optional<CancelCallParams> CancelCallParams::fromJson(const QJsonObject &object)
{
    const QJsonValue callId = json::field(object, "callId");
    if (!callId.isDouble() || callId.toDouble() < 1)
        return std::nullopt;
    return CancelCallParams{qint64(callId.toDouble())};
}

} // namespace cmcp::admin
