#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace cmcp {

class Settings;

// How the tools take settings changed while the daemon runs (from the admin channel). Each tool
// family registers, for the settings it reads, a `Prepare` step that builds its new policy from
// the changed settings, off to the side, and returns the `Install` step that swaps it in (a
// LiveSnapshot::replace). Preparing may fail with a reason (a program of BASH_ALLOWED_COMMANDS
// that does not exist): the change is then refused and nothing is saved or applied.
class LiveSettings
{
public:
    using Install = std::function<void()>;
    using Prepare = std::function<Install(const Settings &changed, QString *error)>;

    struct Entry
    {
        QStringList names;
        Prepare prepare;
    };

    void add(QStringList names, Prepare prepare)
    {
        m_entries.append({std::move(names), std::move(prepare)});
    }
    const QList<Entry> &entries() const { return m_entries; }

private:
    QList<Entry> m_entries;
};

} // namespace cmcp
