#include "managers/ShellLexer.h"

#include <algorithm>

using namespace Qt::Literals::StringLiterals;

namespace cmcp {

namespace {

bool isBlank(QChar c)
{
    return c == u' ' || c == u'\t';
}

// Characters that end an unquoted word (bash's metacharacters).
bool isMetacharacter(QChar c)
{
    return isBlank(c) || c == u'\n' || c == u';' || c == u'&' || c == u'|' || c == u'<' || c == u'>'
            || c == u'(' || c == u')';
}

bool isNameStart(QChar c)
{
    return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'_';
}

bool isNameChar(QChar c)
{
    return isNameStart(c) || (c >= u'0' && c <= u'9');
}

bool isDigit(QChar c)
{
    return c >= u'0' && c <= u'9';
}

// $@ $* $# $? $- $$ $! $0..$9
bool isSpecialParameter(QChar c)
{
    return isDigit(c) || QStringView(u"@*#?-$!").contains(c);
}

// Longest first, so that "&&" wins over "&" and "<<<" over "<<".
constexpr const char16_t *kOperators[] = {u";;&", u"<<<", u"<<-", u"&>>", u";;", u";&", u"&&",
                                          u"||",  u"|&",  u"&>",  u"<<",  u"<>", u"<&", u"<(",
                                          u">>",  u">|",  u">&",  u">(",  u"((", u";",  u"&",
                                          u"|",   u"<",   u">",   u"(",   u")"};

bool isRedirection(QStringView op)
{
    return op == u"<" || op == u">" || op == u">>" || op == u">|" || op == u"<>" || op == u"<&"
            || op == u">&" || op == u"&>" || op == u"&>>" || op == u"<<<";
}

} // namespace

ShellLexer::ShellLexer(const QString &command)
{
    removeLineContinuations(command);
}

// Bash drops a backslash-newline before it reads tokens, everywhere but in single quotes,
// $'...' and comments: "$\<newline>(id)" is a command substitution. Reading the text with
// them removed lets every later rule see what bash sees.
void ShellLexer::removeLineContinuations(const QString &command)
{
    enum class Context { Plain, SingleQuoted, AnsiCQuoted, DoubleQuoted, Comment };
    Context context = Context::Plain;
    bool atWordStart = true; // where an unquoted # starts a comment
    m_text.reserve(command.size());
    m_origin.reserve(command.size());
    const auto keep = [&](qsizetype offset) {
        m_text += command.at(offset);
        m_origin.append(offset);
    };
    for (qsizetype i = 0; i < command.size(); ++i) {
        const QChar c = command.at(i);
        const QChar next = i + 1 < command.size() ? command.at(i + 1) : QChar();
        switch (context) {
        case Context::Plain:
        case Context::DoubleQuoted:
            if (c == u'\\' && next == u'\n') {
                ++i;
                continue;
            }
            if (c == u'\\' && i + 1 < command.size()) {
                keep(i);
                keep(++i);
                atWordStart = false;
                continue;
            }
            if (context == Context::DoubleQuoted) {
                if (c == u'"')
                    context = Context::Plain;
            } else if (c == u'"') {
                context = Context::DoubleQuoted;
            } else if (c == u'$' && next == u'\'') {
                keep(i);
                keep(++i);
                context = Context::AnsiCQuoted;
                atWordStart = false;
                continue;
            } else if (c == u'\'') {
                context = Context::SingleQuoted;
            } else if (c == u'#' && atWordStart) {
                context = Context::Comment;
            }
            atWordStart = context == Context::Plain && isMetacharacter(c);
            break;
        case Context::SingleQuoted:
            if (c == u'\'')
                context = Context::Plain;
            break;
        case Context::AnsiCQuoted:
            if (c == u'\\' && i + 1 < command.size()) {
                keep(i);
                keep(++i);
                continue;
            }
            if (c == u'\'')
                context = Context::Plain;
            break;
        case Context::Comment:
            if (c == u'\n') {
                context = Context::Plain;
                atWordStart = true;
            }
            break;
        }
        keep(i);
    }
}

qsizetype ShellLexer::original(qsizetype offset) const
{
    if (offset < m_origin.size())
        return m_origin.at(offset);
    return m_origin.isEmpty() ? 0 : m_origin.constLast() + 1;
}

QChar ShellLexer::at(qsizetype offset) const
{
    return offset < m_text.size() ? m_text.at(offset) : QChar();
}

bool ShellLexer::fail(ShellIssue::Kind kind, const QString &message)
{
    if (m_issue.kind == ShellIssue::Kind::None)
        m_issue = {kind, message};
    return false;
}

bool ShellLexer::refuseConstruct(const QString &construct, qsizetype position, const QString &why)
{
    return fail(ShellIssue::Kind::Construct,
                u"%1 at position %2 is not allowed: %3"_s.arg(construct)
                        .arg(original(position))
                        .arg(why));
}

bool ShellLexer::nextIsOpenParenthesis() const
{
    qsizetype offset = m_pos;
    while (isBlank(at(offset)))
        ++offset;
    return at(offset) == u'(';
}

void ShellLexer::skipBlanksAndComments()
{
    for (;;) {
        if (isBlank(at(m_pos))) {
            ++m_pos;
        } else if (at(m_pos) == u'#') {
            while (m_pos < m_text.size() && m_text.at(m_pos) != u'\n')
                ++m_pos;
        } else {
            return;
        }
    }
}

ShellToken ShellLexer::next()
{
    if (m_issue.kind != ShellIssue::Kind::None)
        return {ShellToken::Kind::Issue, {}, {}, original(m_pos)};
    skipBlanksAndComments();
    if (m_pos >= m_text.size())
        return {ShellToken::Kind::End, {}, {}, original(m_pos)};
    const QChar c = m_text.at(m_pos);
    ShellToken token = (c == u'\n' || isMetacharacter(c)) ? readOperator() : readWord();
    if (m_issue.kind != ShellIssue::Kind::None)
        token.kind = ShellToken::Kind::Issue;
    token.position = original(token.position);
    return token;
}

ShellToken ShellLexer::readOperator()
{
    const qsizetype start = m_pos;
    if (m_text.at(m_pos) == u'\n') {
        ++m_pos;
        return {ShellToken::Kind::Operator, u"\n"_s, {}, start};
    }
    for (const char16_t *candidate : kOperators) {
        const QStringView op(candidate);
        if (!QStringView(m_text).mid(m_pos).startsWith(op))
            continue;
        m_pos += op.size();
        if (op == u"<(" || op == u">(") {
            refuseConstruct(u"process substitution %1...)"_s.arg(op), start,
                            u"it runs a command the command check cannot see"_s);
        } else if (op == u"<<" || op == u"<<-") {
            refuseConstruct(u"a here-document (<<)"_s, start,
                            u"the command check does not read here-documents; use echo or a "
                            u"here-string (<<<) instead"_s);
        }
        const auto kind =
                isRedirection(op) ? ShellToken::Kind::Redirection : ShellToken::Kind::Operator;
        return {kind, op.toString(), {}, start};
    }
    Q_UNREACHABLE();
    return {};
}

ShellToken ShellLexer::readWord()
{
    const qsizetype start = m_pos;
    ShellWord word;
    // Still reading the NAME of a possible NAME=value assignment.
    bool inAssignmentName = true;
    // Brace expansion needs an unquoted { then , or .. then }; "{}" alone stays literal.
    enum class Brace { None, Open, Separated, Expands } brace = Brace::None;
    bool bracketOpen = false; // a [ is a glob only with a ] after it: "[" alone is test's name
    while (m_pos < m_text.size()) {
        const QChar c = m_text.at(m_pos);
        if (isMetacharacter(c))
            break;
        if (inAssignmentName) {
            if (c == u'=' && !word.text.isEmpty()) {
                word.assignedName = word.text;
                inAssignmentName = false;
            } else if (c == u'+' && at(m_pos + 1) == u'=' && !word.text.isEmpty()) {
                word.assignedName = word.text;
                inAssignmentName = false;
            } else if (!(word.text.isEmpty() ? isNameStart(c) : isNameChar(c))) {
                inAssignmentName = false;
            }
        }
        if (c == u'\\') {
            if (m_pos + 1 < m_text.size()) {
                word.text += m_text.at(m_pos + 1);
                word.quoted = true;
                m_pos += 2;
            } else {
                word.text += c; // bash keeps a trailing backslash as it is
                ++m_pos;
            }
        } else if (c == u'\'') {
            if (!readSingleQuoted(word))
                break;
        } else if (c == u'"') {
            if (!readDoubleQuoted(word))
                break;
        } else if (c == u'$') {
            if (!readDollar(word, false))
                break;
        } else if (c == u'`') {
            refuseConstruct(u"command substitution `...`"_s, m_pos,
                            u"it runs a command the command check cannot see"_s);
            break;
        } else {
            if (word.isLiteral()) {
                if (c == u'*' || c == u'?')
                    word.expansion = u"glob %1"_s.arg(c);
                else if (c == u']' && bracketOpen)
                    word.expansion = u"glob [...]"_s;
                else if (c == u'~' && m_pos == start)
                    word.expansion = u"tilde expansion ~"_s;
            }
            bracketOpen = bracketOpen || c == u'[';
            if (c == u'{' && brace == Brace::None)
                brace = Brace::Open;
            else if (brace == Brace::Open && (c == u',' || (c == u'.' && at(m_pos + 1) == u'.')))
                brace = Brace::Separated;
            else if (c == u'}' && brace == Brace::Separated)
                brace = Brace::Expands;
            word.text += c;
            ++m_pos;
        }
    }
    if (m_issue.kind != ShellIssue::Kind::None)
        return {ShellToken::Kind::Issue, {}, {}, start};
    if (brace == Brace::Expands && word.isLiteral())
        word.expansion = u"brace expansion {...}"_s;

    // "2>file": a number right before < or > is the file descriptor of a redirection.
    const bool digitsOnly = !word.text.isEmpty() && !word.quoted
            && std::all_of(word.text.cbegin(), word.text.cend(), isDigit);
    if (digitsOnly && (at(m_pos) == u'<' || at(m_pos) == u'>')) {
        ShellToken redirection = readOperator();
        if (redirection.kind == ShellToken::Kind::Redirection) {
            redirection.op.prepend(word.text);
            redirection.position = start;
        }
        return redirection;
    }
    if (!word.assignedName.isEmpty() && word.text.endsWith(u'=') && at(m_pos) == u'(') {
        refuseConstruct(u"array assignment %1(...)"_s.arg(word.text), start,
                        u"the command check does not read array assignments"_s);
        return {ShellToken::Kind::Issue, {}, {}, start};
    }
    return {ShellToken::Kind::Word, {}, word, start};
}

bool ShellLexer::readSingleQuoted(ShellWord &word)
{
    const qsizetype start = m_pos;
    const qsizetype end = m_text.indexOf(u'\'', start + 1);
    if (end < 0)
        return fail(ShellIssue::Kind::Syntax,
                    u"unterminated single quote starting at position %1"_s.arg(original(start)));
    word.text += QStringView(m_text).sliced(start + 1, end - start - 1);
    word.quoted = true;
    m_pos = end + 1;
    return true;
}

bool ShellLexer::readDoubleQuoted(ShellWord &word)
{
    const qsizetype start = m_pos;
    word.quoted = true;
    ++m_pos;
    while (m_pos < m_text.size()) {
        const QChar c = m_text.at(m_pos);
        if (c == u'"') {
            ++m_pos;
            return true;
        }
        if (c == u'\\') {
            const QChar escaped = at(m_pos + 1);
            if (QStringView(u"$`\"\\").contains(escaped)) {
                word.text += escaped;
                m_pos += 2;
            } else {
                word.text += c; // inside double quotes other backslashes stay
                ++m_pos;
            }
        } else if (c == u'$') {
            if (!readDollar(word, true))
                return false;
        } else if (c == u'`') {
            return refuseConstruct(u"command substitution `...`"_s, m_pos,
                                   u"it runs a command the command check cannot see"_s);
        } else {
            word.text += c;
            ++m_pos;
        }
    }
    return fail(ShellIssue::Kind::Syntax,
                u"unterminated double quote starting at position %1"_s.arg(original(start)));
}

bool ShellLexer::readDollar(ShellWord &word, bool insideDoubleQuotes)
{
    const qsizetype start = m_pos;
    const QChar next = at(m_pos + 1);
    const QString runsCommand = u"it runs a command the command check cannot see"_s;
    if (next == u'(' && at(m_pos + 2) == u'(')
        return refuseConstruct(u"arithmetic expansion $((...))"_s, start,
                               u"bash evaluates array subscripts in it, which can run "
                               u"commands"_s);
    if (next == u'(')
        return refuseConstruct(u"command substitution $(...)"_s, start, runsCommand);
    if (next == u'[')
        return refuseConstruct(u"arithmetic expansion $[...]"_s, start,
                               u"bash evaluates array subscripts in it, which can run "
                               u"commands"_s);
    if (next == u'{')
        return readBracedParameter(word, insideDoubleQuotes);
    if (next == u'\'' && !insideDoubleQuotes)
        return readAnsiCQuoted(word);
    if (next == u'"' && !insideDoubleQuotes) {
        // $"..." is translated through a message catalogue: its result is not its text.
        if (word.isLiteral())
            word.expansion = u"locale translation $\"...\""_s;
        ++m_pos;
        return readDoubleQuoted(word);
    }
    qsizetype end = m_pos + 1;
    if (isNameStart(next)) {
        while (isNameChar(at(end)))
            ++end;
    } else if (isSpecialParameter(next)) {
        ++end;
    } else {
        word.text += u'$'; // a lone $ is literal
        ++m_pos;
        return true;
    }
    const QStringView expansion = QStringView(m_text).sliced(start, end - start);
    if (word.isLiteral())
        word.expansion = u"parameter expansion %1"_s.arg(expansion);
    word.text += expansion;
    m_pos = end;
    return true;
}

// $'...' decodes escapes such as \x69; its value is not checked, only kept apart as an
// expansion, so a command name can never hide in it.
bool ShellLexer::readAnsiCQuoted(ShellWord &word)
{
    const qsizetype start = m_pos;
    qsizetype end = m_pos + 2;
    while (end < m_text.size() && m_text.at(end) != u'\'')
        end += m_text.at(end) == u'\\' ? 2 : 1;
    if (end >= m_text.size())
        return fail(ShellIssue::Kind::Syntax,
                    u"unterminated $' quote starting at position %1"_s.arg(original(start)));
    if (word.isLiteral())
        word.expansion = u"ANSI-C quoting $'...'"_s;
    word.text += QStringView(m_text).sliced(start, end + 1 - start);
    word.quoted = true;
    m_pos = end + 1;
    return true;
}

// ${name}, ${#name}, ${name:-word} and the like. Forms that evaluate their content as code or
// arithmetic are refused: ${!name} and ${name[...]} (a subscript is arithmetic, and
// arithmetic on a value such as a[$(id)] runs id), ${name:offset} for the same reason unless
// the offset is a plain number, and ${name@P} (prompt expansion runs command substitutions).
bool ShellLexer::readBracedParameter(ShellWord &word, bool insideDoubleQuotes)
{
    const qsizetype start = m_pos;
    const QString arithmetic = u"bash evaluates it as arithmetic, which can run commands"_s;
    m_pos += 2;
    if (at(m_pos) == u'!')
        return refuseConstruct(u"indirect expansion ${!...}"_s, start,
                               u"its value names another variable, whose subscript can run "
                               u"commands"_s);
    if (at(m_pos) == u'#' && at(m_pos + 1) != u'}')
        ++m_pos;
    const qsizetype nameStart = m_pos;
    if (isNameStart(at(m_pos))) {
        while (isNameChar(at(m_pos)))
            ++m_pos;
    } else if (isDigit(at(m_pos))) {
        while (isDigit(at(m_pos)))
            ++m_pos;
    } else if (isSpecialParameter(at(m_pos))) {
        ++m_pos;
    }
    if (m_pos == nameStart)
        return fail(ShellIssue::Kind::Syntax,
                    u"bad substitution at position %1"_s.arg(original(start)));
    if (at(m_pos) == u'[')
        return refuseConstruct(u"array subscript ${name[...]}"_s, start, arithmetic);
    if (at(m_pos) == u'@' && at(m_pos + 1) == u'P')
        return refuseConstruct(u"prompt expansion ${name@P}"_s, start,
                               u"it runs the command substitutions in the value"_s);
    if (at(m_pos) == u':' && !QStringView(u"-=?+").contains(at(m_pos + 1))) {
        ++m_pos;
        while (m_pos < m_text.size() && m_text.at(m_pos) != u'}') {
            const QChar c = m_text.at(m_pos);
            if (!isDigit(c) && !isBlank(c) && c != u'-' && c != u':')
                return refuseConstruct(u"substring offset ${name:...}"_s, start,
                                       arithmetic + u" (only plain numbers are accepted)"_s);
            ++m_pos;
        }
    }
    if (!readParameterOperand(insideDoubleQuotes, start))
        return false;
    const QStringView expansion = QStringView(m_text).sliced(start, m_pos - start);
    if (word.isLiteral())
        word.expansion = u"parameter expansion %1"_s.arg(expansion);
    word.text += expansion;
    return true;
}

// Reads up to the } that closes the expansion at start. Nested quotes and expansions are
// read with the same rules as anywhere else, so a $(...) inside is refused too. Inside double
// quotes a single quote is an ordinary character here, as bash treats it for ${x:-'a'}; for
// the pattern operators bash quotes with it, and reading it as plain text then only makes
// this check stricter.
bool ShellLexer::readParameterOperand(bool insideDoubleQuotes, qsizetype start)
{
    ShellWord operand;
    while (m_pos < m_text.size()) {
        const QChar c = m_text.at(m_pos);
        if (c == u'}') {
            ++m_pos;
            return true;
        }
        if (c == u'\\') {
            m_pos += 2;
        } else if (c == u'\'' && !insideDoubleQuotes) {
            if (!readSingleQuoted(operand))
                return false;
        } else if (c == u'"') {
            if (!readDoubleQuoted(operand))
                return false;
        } else if (c == u'$') {
            if (!readDollar(operand, insideDoubleQuotes))
                return false;
        } else if (c == u'`') {
            return refuseConstruct(u"command substitution `...`"_s, m_pos,
                                   u"it runs a command the command check cannot see"_s);
        } else {
            ++m_pos;
        }
    }
    return fail(ShellIssue::Kind::Syntax,
                u"unterminated ${ starting at position %1"_s.arg(original(start)));
}

} // namespace cmcp
