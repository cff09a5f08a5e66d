#pragma once

#include "mcp/Principal.h"
#include "mcp/PrincipalProfiles.h"

#include <QByteArray>
#include <QString>

#include <optional>
#include <vector>

namespace cmcp {

// Which principal a bearer token speaks for. MCP_AUTH_TOKEN is the principal "default";
// MCP_PRINCIPALS_FILE adds one named principal per line, `<name> <sha256 of the token in hex>`,
// so the file holds no token an onlooker could replay. With no token at all, authentication is
// off and every request is Principal::local().
class BearerTokens
{
public:
    // Adds the principal whose token hashes (SHA-256) to `digest`.
    void add(const Principal &principal, const QByteArray &digest);
    // Reads MCP_PRINCIPALS_FILE's format; false with `error` naming the file, line and problem.
    bool addFile(const QString &path, QString *error);

    // The principals of MCP_POLICY_FILE too, as the policy in force names them (a reload adds
    // and removes principals and changes tokens). `profiles` outlives this object.
    void usePolicy(const PrincipalProfiles *profiles) { m_profiles = profiles; }
    // The names MCP_AUTH_TOKEN and MCP_PRINCIPALS_FILE gave, which the policy may not reuse.
    QSet<QString> names() const;

    // Once a policy file is in use a token is always required, even if a reload leaves it
    // naming no principal.
    bool required() const { return !m_entries.empty() || (m_profiles && m_profiles->hasPolicy()); }
    // Null when a token is required and `authorization` carries none that is known. Every entry
    // is compared, digest to digest, so the time taken says nothing about a guess.
    std::optional<Principal> principalFor(const QByteArray &authorization) const;

private:
    struct Entry
    {
        Principal principal;
        QByteArray digest;
    };
    std::vector<Entry> m_entries;
    const PrincipalProfiles *m_profiles = nullptr;
};

} // namespace cmcp
