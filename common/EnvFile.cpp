#include "common/EnvFile.h"

#include <QFile>
#include <QStringList>

namespace cmcp {

namespace {

bool isValidName(QStringView name)
{
    if (name.isEmpty() || name.front().isDigit())
        return false;
    for (QChar c : name) {
        if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != u'_')
            return false;
    }
    return true;
}

// The unquoted value of `rest` (the text after '='), without its trailing
// comment: '#' starts one only after whitespace, so "a#b" and "NAME=#x" keep
// their '#' (tokens and URL fragments may contain one) while "NAME= # note"
// is empty.
QString stripInlineComment(const QString &rest)
{
    for (qsizetype i = 1; i < rest.size(); ++i) {
        if (rest.at(i) == u'#' && rest.at(i - 1).isSpace())
            return rest.left(i).trimmed();
    }
    return rest.trimmed();
}

} // namespace

std::optional<QList<EnvAssignment>> EnvFile::parse(const QString &content, const QString &fileName,
                                                   QString *error)
{
    QList<EnvAssignment> assignments;
    const QStringList lines = content.split(u'\n');
    for (qsizetype index = 0; index < lines.size(); ++index) {
        const int lineNumber = int(index + 1);
        const auto fail = [&](const QString &problem) {
            if (error)
                *error = QStringLiteral("%1:%2: %3")
                                 .arg(fileName, QString::number(lineNumber), problem);
            return std::nullopt;
        };

        QString line = lines.at(index).trimmed();
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        if (line.startsWith(u"export") && line.size() > 6 && line.at(6).isSpace())
            line = line.mid(7).trimmed();

        const qsizetype equals = line.indexOf(u'=');
        if (equals < 0)
            return fail(QStringLiteral("expected NAME=VALUE, found \"%1\"").arg(line));
        const QString name = line.left(equals).trimmed();
        if (!isValidName(name))
            return fail(QStringLiteral("\"%1\" is not a valid setting name").arg(name));

        const QString rest = line.mid(equals + 1);
        QString value = rest.trimmed();
        if (value.startsWith(u'"') || value.startsWith(u'\'')) {
            const QChar quote = value.front();
            const qsizetype closing = value.indexOf(quote, 1);
            if (closing < 0)
                return fail(QStringLiteral("%1 has no closing %2").arg(name, quote));
            const QString after = value.mid(closing + 1).trimmed();
            if (!after.isEmpty() && !after.startsWith(u'#'))
                return fail(QStringLiteral("%1 has text after its closing quote: \"%2\"")
                                    .arg(name, after));
            value = value.mid(1, closing - 1);
        } else {
            value = stripInlineComment(rest);
        }
        assignments.append({name, value, lineNumber});
    }
    return assignments;
}

std::optional<QList<EnvAssignment>> EnvFile::read(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("cannot read config file %1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    const QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError) {
        if (error)
            *error = QStringLiteral("cannot read config file %1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    QString content = QString::fromUtf8(bytes);
    if (content.startsWith(QChar(0xFEFF)))
        content.remove(0, 1);
    return parse(content, path, error);
}

} // namespace cmcp
