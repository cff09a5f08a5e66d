#pragma once

#include "common/AdminCallRecords.h"
#include "common/AdminProtocol.h"
#include "common/AdminSessionRecords.h"
#include "common/AdminSettingRecords.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

// The admin channel's records of the daemon as a whole: its counters, its sandbox, the snapshot
// a console starts from, and the event that says a console missed events (and should take a new
// snapshot).
namespace cmcp::admin {

// The "counters" object, also sent as an event once a second while it changes.
struct CountersRecord
{
    static constexpr const char *event = eventCounters;

    qint64 sessionsOpen = 0;
    qint64 callsStarted = 0;
    qint64 callsFinished = 0;
    qint64 callsInFlight = 0;
    qint64 callsFailed = 0;
    qint64 eventsDropped = 0; // events not sent to slow consoles, in all
    qint64 peersRefused = 0; // connections refused for their credentials
    // The call templates as /health describes them (call_templates): each kind's state, calls
    // and cells; empty without templates.
    QJsonObject templates;

    bool operator==(const CountersRecord &) const = default;

    QJsonObject toJson() const;
    static CountersRecord fromJson(const QJsonObject &object);
};

// One sandbox layer of the report.
struct SandboxLayerRecord
{
    QString name;
    QString state; // available, unavailable or disabled
    QString detail;
    QString reason; // why it is not available
    QJsonObject reported; // all the probe says of it: the above and its facts
};

// The sandbox probe's report. The probe owns its fields (SandboxCapabilities::toJson in the
// daemon); the admin channel passes them on and adds the order of the layers.
struct SandboxReport
{
    QJsonObject probe; // layers keyed by name, and the probe's figures
    QStringList order; // the layers' names in the order the jail applies them

    // In `order`, or by name when the report gives none.
    QList<SandboxLayerRecord> layers() const;

    QJsonObject toJson() const;
    static SandboxReport fromJson(const QJsonObject &object);
};

// The reply to snapshot (which takes no parameters): everything a console shows.
struct SnapshotRecord
{
    QList<SessionRecord> sessions;
    QList<CallRecord> calls; // in flight
    QList<CallRecord> recentCalls; // finished, the newest last
    QList<SettingRecord> config; // in the settings table's order
    QString customEnvFile; // where changed settings are saved
    SandboxReport sandbox;
    CountersRecord counters;

    QJsonObject toJson() const;
    static SnapshotRecord fromJson(const QJsonObject &object);
};

// Events were dropped for a slow console: what it shows may be stale.
struct DroppedEvent
{
    static constexpr const char *event = eventDropped;

    qint64 count = 0; // since the last such event
    qint64 total = 0; // since the console connected

    QJsonObject toJson() const;
    static DroppedEvent fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin
