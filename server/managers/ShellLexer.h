#pragma once

#include <QList>
#include <QString>

namespace cmcp {

// A problem found while reading shell text. Syntax errors are what bash itself would reject;
// constructs are valid shell that the pre-check refuses because it cannot see what they run.
struct ShellIssue
{
    enum class Kind { None, Syntax, Construct };
    Kind kind = Kind::None;
    QString message; // names the problem and its position
};

// One word after quote removal, with what bash would still do to it.
struct ShellWord
{
    QString text; // quotes and escapes removed; expansions kept as written
    bool quoted = false; // some part was quoted or escaped, so it is never a reserved word
    // The first thing that makes bash's result differ from text (a parameter expansion, a
    // glob, brace or tilde expansion, $'...' or $"..." quoting), e.g. "parameter expansion
    // $x". Empty when the word is literal: bash will produce exactly text.
    QString expansion;
    QString assignedName; // NAME when the word is an unquoted NAME=value or NAME+=value

    bool isLiteral() const { return expansion.isEmpty(); }
    bool isUnquoted(QStringView keyword) const { return !quoted && text == keyword; }
};

struct ShellToken
{
    enum class Kind { Word, Operator, Redirection, End, Issue };
    Kind kind = Kind::End;
    QString op; // the operator or redirection as written, e.g. "&&", "2>", "\n"
    ShellWord word;
    qsizetype position = 0; // offset in the command text
};

// Splits a command into words, control operators and redirections the way bash reads them.
// It refuses at first sight what would run code the pre-check cannot inspect: command and
// process substitution, arithmetic expansion (bash evaluates array subscripts in it, and those
// can hold command substitutions), here-documents, indirect and prompt expansion.
class ShellLexer
{
public:
    explicit ShellLexer(const QString &command);

    // Kind::Issue ends the stream; issue() then says why.
    ShellToken next();
    const ShellIssue &issue() const { return m_issue; }
    // Whether "(" comes next, after blanks: a word followed by it starts a function definition.
    bool nextIsOpenParenthesis() const;

private:
    ShellToken readOperator();
    ShellToken readWord();
    bool readSingleQuoted(ShellWord &word);
    bool readDoubleQuoted(ShellWord &word);
    bool readDollar(ShellWord &word, bool insideDoubleQuotes);
    bool readAnsiCQuoted(ShellWord &word);
    bool readBracedParameter(ShellWord &word, bool insideDoubleQuotes);
    bool readParameterOperand(bool insideDoubleQuotes, qsizetype start);
    void skipBlanksAndComments();
    void removeLineContinuations(const QString &command);
    qsizetype original(qsizetype offset) const; // the offset in the command as given

    bool fail(ShellIssue::Kind kind, const QString &message);
    bool refuseConstruct(const QString &construct, qsizetype position, const QString &why);
    QChar at(qsizetype offset) const;

    QString m_text; // the command without its line continuations
    QList<qsizetype> m_origin; // for each character of m_text, its offset in the command
    qsizetype m_pos = 0;
    ShellIssue m_issue;
};

} // namespace cmcp
