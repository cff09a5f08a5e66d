#include "workspace/WorkspacePath.h"

namespace cmcp {

namespace {

bool hasInvalidUnicode(const QString &text)
{
    // JSON parsers turn undecodable bytes into U+FFFD; a name holding it would not be the name
    // the client meant, so it is refused rather than created.
    return !text.isValidUtf16() || text.contains(QChar::ReplacementCharacter);
}

QString shortened(const QString &text)
{
    return text.size() <= 40 ? text : text.left(37) + QStringLiteral("...");
}

} // namespace

std::optional<WorkspacePath> WorkspacePath::parse(const QString &text, QString *error)
{
    if (text.contains(QChar(0))) {
        *error = QStringLiteral("path contains a NUL byte");
        return std::nullopt;
    }
    if (hasInvalidUnicode(text)) {
        *error = QStringLiteral("path is not valid Unicode (an unpaired surrogate or undecodable "
                                "bytes shown as U+FFFD)");
        return std::nullopt;
    }
    const qsizetype bytes = text.toUtf8().size();
    if (bytes > maxPathBytes) {
        *error = QStringLiteral("path is too long: %1 bytes, at most %2")
                         .arg(bytes)
                         .arg(maxPathBytes);
        return std::nullopt;
    }
    WorkspacePath path;
    for (const QString &component : text.split(QLatin1Char('/'), Qt::SkipEmptyParts)) {
        if (component == QLatin1String("."))
            continue;
        if (component == QLatin1String("..")) {
            if (path.m_components.isEmpty()) {
                *error = QStringLiteral("path escapes the workspace: '..' goes above its root");
                return std::nullopt;
            }
            path.m_components.removeLast();
            continue;
        }
        const qsizetype nameBytes = component.toUtf8().size();
        if (nameBytes > maxNameBytes) {
            *error = QStringLiteral("path component '%1' is too long: %2 bytes, at most %3")
                             .arg(shortened(component))
                             .arg(nameBytes)
                             .arg(maxNameBytes);
            return std::nullopt;
        }
        path.m_components.append(component);
    }
    return path;
}

WorkspacePath WorkspacePath::parent() const
{
    WorkspacePath result = *this;
    if (!result.m_components.isEmpty())
        result.m_components.removeLast();
    return result;
}

WorkspacePath WorkspacePath::child(const QString &name) const
{
    WorkspacePath result = *this;
    result.m_components.append(name);
    return result;
}

QByteArray WorkspacePath::relativeBytes() const
{
    return isRoot() ? QByteArrayLiteral(".") : m_components.join(QLatin1Char('/')).toUtf8();
}

QString WorkspacePath::display() const
{
    return isRoot() ? QStringLiteral("/") : m_components.join(QLatin1Char('/'));
}

bool WorkspacePath::isWithin(const WorkspacePath &other) const
{
    if (other.m_components.size() > m_components.size())
        return false;
    for (qsizetype i = 0; i < other.m_components.size(); ++i) {
        if (m_components[i] != other.m_components[i])
            return false;
    }
    return true;
}

} // namespace cmcp
