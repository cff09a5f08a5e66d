#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace cmcp {

// Disabled is never set by the probe: the daemon marks layers its configuration turns off,
// so the table can tell "the kernel cannot" from "we chose not to".
enum class SandboxLayerState { Available, Unavailable, Disabled };

struct SandboxLayer
{
    QString name; // stable key, also used in JSON and SANDBOX_REQUIRE
    SandboxLayerState state = SandboxLayerState::Unavailable;
    QString reason; // why it is unavailable, with the errno name; empty when available
    QString detail; // short human summary, e.g. "ABI 7"
    QJsonObject facts; // machine-readable values behind the detail
};

enum class CgroupMode { None, Legacy, Hybrid, Unified };

// What this machine offers the jail, probed once at start-up.
struct SandboxCapabilities
{
    QList<SandboxLayer> layers; // in the order the jail applies them

    // The values the jail needs to size its work, typed.
    bool root = false;
    int landlockAbi = 0; // 0 when Landlock is unavailable
    bool seccompUserNotif = false;
    CgroupMode cgroupMode = CgroupMode::None;
    bool cgroupWritable = false;
    QStringList cgroupControllers; // v1 controllers with a hierarchy, then v2 ones
    qint64 nofileHard = -1; // -1: unlimited
    qint64 nprocHard = -1; // -1: unlimited

    const SandboxLayer *layer(QStringView name) const;
    bool isAvailable(QStringView name) const;
    // One aligned line per layer after a header line, no trailing newline.
    QString table() const;
    // {"layers": {name: {state, reason?, detail, ...facts}}, "root", "landlockAbi", ...}
    QJsonObject toJson() const;
};

QString cgroupModeName(CgroupMode mode);
QString sandboxLayerStateName(SandboxLayerState state);

class SandboxProbe
{
public:
    // Safe to call from a multithreaded process: namespace probing happens in a forked child
    // that only makes async-signal-safe calls. Takes a few milliseconds.
    static SandboxCapabilities run();
};

} // namespace cmcp
