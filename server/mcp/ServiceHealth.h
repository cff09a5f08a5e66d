#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>

namespace cmcp {

// A resource the daemon found unusable at start-up, and the tools that cannot work without it.
// The daemon still serves (the other tools work), so this is said once at start and kept for
// /health, instead of every call of those tools failing with nothing said before.
struct Degradation
{
    QString resource; // what is unusable, with its path where it has one: "cmcp-jail /x/cmcp-jail"
    QString problem; // why: "not executable: No such file or directory"
    QString fix; // what makes it work: "build it (cmake --build build) or reinstall cmcpd"
    QStringList tools; // the tools that fail for it; empty: none fails, but less is kept
};

// Every degradation found at start-up, in the order found.
class ServiceHealth
{
public:
    // Records `degradation` and logs it as one warning line.
    void report(Degradation degradation);
    const QList<Degradation> &degradations() const { return m_degradations; }
    bool degraded() const { return !m_degradations.isEmpty(); }
    // [{"resource", "problem", "fix", "tools": [...]}, ...]
    QJsonArray toJson() const;

    // What start-up set up beyond the defaults, for /health to show whether or not it
    // works: {"workspace_quota": {"state": "available", "detail": ...}}.
    void describe(const QString &name, const QJsonObject &status) { m_status.insert(name, status); }
    // The same for something whose state changes while the daemon runs (the call templates):
    // `now` is asked each time /health is.
    void describeLive(const QString &name, std::function<QJsonObject()> now)
    {
        m_live.insert(name, std::move(now));
    }
    QJsonObject status() const;
    // One live description, as status() would give it; empty when there is none by that name.
    QJsonObject liveStatus(const QString &name) const;

private:
    QList<Degradation> m_degradations;
    QJsonObject m_status;
    QMap<QString, std::function<QJsonObject()>> m_live;
};

} // namespace cmcp
