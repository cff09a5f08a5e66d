#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace cmcp {

// A path a client gave, checked and reduced to components below the workspace root. Parsing is
// only the first line of defence and the source of precise messages: containment itself is
// enforced by the kernel when the components are opened (see ContainedRoot), so a symbolic link
// cannot lead out whatever the text looks like.
class WorkspacePath
{
public:
    // Linux limits: PATH_MAX includes the terminating NUL, NAME_MAX does not.
    static constexpr qsizetype maxPathBytes = 4095;
    static constexpr qsizetype maxNameBytes = 255;

    // "a/b", "/a/b" (a leading / is the workspace root) and "./a//b/" name the same file; ".."
    // may step back but never above the root. Refused, with a message naming the problem: NUL,
    // invalid Unicode (unpaired surrogates, U+FFFD from undecodable bytes), over-long paths or
    // names, and ".." above the root. "" and "/" are the root itself.
    static std::optional<WorkspacePath> parse(const QString &text, QString *error);

    bool isRoot() const { return m_components.isEmpty(); }
    const QStringList &components() const { return m_components; }
    // The last component; empty for the root.
    QString name() const { return m_components.isEmpty() ? QString() : m_components.last(); }
    WorkspacePath parent() const;
    WorkspacePath child(const QString &name) const;

    // "a/b/c", or "." for the root: what openat2 gets relative to the workspace descriptor.
    QByteArray relativeBytes() const;
    // "a/b/c", or "/" for the root: what results show.
    QString display() const;

    bool operator==(const WorkspacePath &other) const { return m_components == other.m_components; }
    // True when this path is `other` or lies below it.
    bool isWithin(const WorkspacePath &other) const;

private:
    QStringList m_components;
};

} // namespace cmcp
