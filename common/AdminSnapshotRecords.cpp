#include "common/AdminSnapshotRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

QJsonObject CountersRecord::toJson() const
{
    QJsonObject object{{QLatin1String("sessionsOpen"), double(sessionsOpen)},
                       {QLatin1String("callsStarted"), double(callsStarted)},
                       {QLatin1String("callsFinished"), double(callsFinished)},
                       {QLatin1String("callsInFlight"), double(callsInFlight)},
                       {QLatin1String("callsFailed"), double(callsFailed)},
                       {QLatin1String("eventsDropped"), double(eventsDropped)},
                       {QLatin1String("peersRefused"), double(peersRefused)}};
    if (!templates.isEmpty())
        object.insert(QLatin1String("templates"), templates);
    return object;
}

CountersRecord CountersRecord::fromJson(const QJsonObject &object)
{
    CountersRecord counters;
    counters.sessionsOpen = json::integer(object, "sessionsOpen");
    counters.callsStarted = json::integer(object, "callsStarted");
    counters.callsFinished = json::integer(object, "callsFinished");
    counters.callsInFlight = json::integer(object, "callsInFlight");
    counters.callsFailed = json::integer(object, "callsFailed");
    counters.eventsDropped = json::integer(object, "eventsDropped");
    counters.peersRefused = json::integer(object, "peersRefused");
    counters.templates = json::field(object, "templates").toObject();
    return counters;
}

QList<SandboxLayerRecord> SandboxReport::layers() const
{
    const QJsonObject byName = json::field(probe, "layers").toObject();
    const QStringList names = order.isEmpty() ? byName.keys() : order;
    QList<SandboxLayerRecord> list;
    for (const QString &name : names) {
        const QJsonObject layer = byName.value(name).toObject();
        list.append(SandboxLayerRecord{name, json::text(layer, "state"),
                                       json::text(layer, "detail"), json::text(layer, "reason"),
                                       layer});
    }
    return list;
}

QJsonObject SandboxReport::toJson() const
{
    QJsonObject object = probe;
    object.insert(QLatin1String("order"), QJsonArray::fromStringList(order));
    return object;
}

SandboxReport SandboxReport::fromJson(const QJsonObject &object)
{
    SandboxReport report;
    report.probe = object;
    report.probe.remove(QLatin1String("order"));
    report.order = json::texts(object, "order");
    return report;
}

QJsonObject SnapshotRecord::toJson() const
{
    return {{QLatin1String("sessions"), json::array(sessions)},
            {QLatin1String("calls"), json::array(calls)},
            {QLatin1String("recentCalls"), json::array(recentCalls)},
            {QLatin1String("config"), json::array(config)},
            {QLatin1String("customEnvFile"), customEnvFile},
            {QLatin1String("sandbox"), sandbox.toJson()},
            {QLatin1String("counters"), counters.toJson()}};
}

SnapshotRecord SnapshotRecord::fromJson(const QJsonObject &object)
{
    SnapshotRecord snapshot;
    snapshot.sessions = json::records<SessionRecord>(object, "sessions");
    snapshot.calls = json::records<CallRecord>(object, "calls");
    snapshot.recentCalls = json::records<CallRecord>(object, "recentCalls");
    snapshot.config = json::records<SettingRecord>(object, "config");
    snapshot.customEnvFile = json::text(object, "customEnvFile");
    snapshot.sandbox = SandboxReport::fromJson(json::field(object, "sandbox").toObject());
    snapshot.counters = CountersRecord::fromJson(json::field(object, "counters").toObject());
    return snapshot;
}

QJsonObject DroppedEvent::toJson() const
{
    return {{QLatin1String("count"), double(count)}, {QLatin1String("total"), double(total)}};
}

DroppedEvent DroppedEvent::fromJson(const QJsonObject &object)
{
    return {json::integer(object, "count"), json::integer(object, "total")};
}

} // namespace cmcp::admin
