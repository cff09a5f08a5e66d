#include "common/AdminSnapshotRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::Absent;
using json::member;

constexpr auto kCounters =
        json::fields(member("sessionsOpen", &CountersRecord::sessionsOpen),
                     member("callsStarted", &CountersRecord::callsStarted),
                     member("callsFinished", &CountersRecord::callsFinished),
                     member("callsInFlight", &CountersRecord::callsInFlight),
                     member("callsFailed", &CountersRecord::callsFailed),
                     member("eventsDropped", &CountersRecord::eventsDropped),
                     member("peersRefused", &CountersRecord::peersRefused),
                     member("templates", &CountersRecord::templates, Absent::Omitted));
constexpr auto kSnapshot = json::fields(
        member("sessions", &SnapshotRecord::sessions), member("calls", &SnapshotRecord::calls),
        member("recentCalls", &SnapshotRecord::recentCalls),
        member("config", &SnapshotRecord::config),
        member("customEnvFile", &SnapshotRecord::customEnvFile),
        member("sandbox", &SnapshotRecord::sandbox), member("counters", &SnapshotRecord::counters));
constexpr auto kDropped =
        json::fields(member("count", &DroppedEvent::count), member("total", &DroppedEvent::total));

} // namespace

CMCP_ADMIN_RECORD_JSON(CountersRecord, kCounters)

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
    report.order = json::read<QStringList>(object, "order");
    return report;
}

CMCP_ADMIN_RECORD_JSON(SnapshotRecord, kSnapshot)

CMCP_ADMIN_RECORD_JSON(DroppedEvent, kDropped)

} // namespace cmcp::admin
