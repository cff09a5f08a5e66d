#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace cmcp {

// One NAME=VALUE assignment of an env file, with the line it came from so
// that errors can point at it.
struct EnvAssignment
{
    QString name;
    QString value;
    int line = 0;
};

// Reads the env files of the configuration layers. The syntax is the common
// subset of dotenv and shell:
//   # comment             blank lines are ignored too
//   NAME=value            whitespace around '=' and the value is trimmed
//   export NAME=value     the shell's prefix is accepted
//   NAME="value"          single or double quotes keep the text verbatim
//   NAME=value  # note    unquoted: '#' after whitespace starts a comment
// Anything else is an error naming file:line; names are checked for syntax
// only, since which names exist is the settings table's business.
class EnvFile
{
public:
    // Errors are one line: "<fileName>:<line>: <problem>".
    static std::optional<QList<EnvAssignment>> parse(const QString &content,
                                                     const QString &fileName, QString *error);
    // Reads the file as UTF-8 and parses it; an unreadable file is an error.
    static std::optional<QList<EnvAssignment>> read(const QString &path, QString *error);
};

} // namespace cmcp
