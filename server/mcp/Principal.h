#pragma once

#include <QString>

namespace cmcp {

// Who is calling, as the door that carried the request authenticated it. Everything a call
// leaves behind for later (jobs, output handles, tasks, workspaces) belongs to the principal that
// made it, and only that principal reaches it again: another principal's lookups answer exactly
// as an unknown id does, so ids can be neither guessed nor confirmed.
//
// Names come from the operator: one per bearer token (MCP_AUTH_TOKEN is "default",
// MCP_PRINCIPALS_FILE names more). Without authentication every client is "local": the loopback
// default trusts every local process alike, so they share one owner. stdio's one client is
// "local" too, being whoever started the daemon.
class Principal
{
public:
    explicit Principal(QString name) : m_name(std::move(name)) { }
    static Principal local() { return Principal(QStringLiteral("local")); }

    const QString &name() const { return m_name; }
    bool operator==(const Principal &other) const = default;

private:
    QString m_name;
};

} // namespace cmcp
