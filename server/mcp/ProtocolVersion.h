#pragma once

#include <QString>
#include <QStringList>

// The MCP revisions this server speaks, and what each one allows on the wire.
namespace cmcp::protocol {

inline const QString V2024_11_05 = QStringLiteral("2024-11-05");
inline const QString V2025_03_26 = QStringLiteral("2025-03-26");
inline const QString V2025_06_18 = QStringLiteral("2025-06-18");
inline const QString V2025_11_25 = QStringLiteral("2025-11-25");
inline const QString V2026_07_28 = QStringLiteral("2026-07-28");

// The legacy era: revisions that open a session with initialize. Newest first: the first entry
// is offered when initialize asks for one we do not know.
inline const QStringList &supportedVersions()
{
    static const QStringList versions{V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05};
    return versions;
}

inline bool isSupported(const QString &version)
{
    return supportedVersions().contains(version);
}

// The modern era: revisions whose every request carries its version, capabilities and client
// in params._meta, served without a session.
inline const QStringList &modernVersions()
{
    static const QStringList versions{V2026_07_28};
    return versions;
}

inline bool isModern(const QString &version)
{
    return modernVersions().contains(version);
}

// What server/discover and UnsupportedProtocolVersionError list: both eras, newest first.
inline const QStringList &allVersions()
{
    static const QStringList versions = modernVersions() + supportedVersions();
    return versions;
}

// The date strings order lexically as they order in time.
inline bool atLeast(const QString &negotiated, const QString &revision)
{
    return negotiated >= revision;
}

// JSON-RPC batches arrived in 2025-03-26 and left again in 2025-06-18.
inline bool allowsBatches(const QString &v)
{
    return v == V2025_03_26;
}
// Tool annotations and audio content arrived in 2025-03-26.
inline bool hasToolAnnotations(const QString &v)
{
    return atLeast(v, V2025_03_26);
}
// Structured tool output, output schemas, titles and elicitation arrived in 2025-06-18.
inline bool hasStructuredOutput(const QString &v)
{
    return atLeast(v, V2025_06_18);
}

} // namespace cmcp::protocol
