#include "managers/CommandPrecheck.h"

#include "managers/LaunchingOptions.h"
#include "managers/ShellLexer.h"

using namespace Qt::Literals::StringLiterals;

namespace cmcp {

namespace {

// Builtins that run or load code given as text, or change what a later name runs. The
// check models the shell; these change the meaning of what it has just read, so they are
// refused even when listed.
bool runsShellCode(QStringView name)
{
    static const QStringList names{u"eval"_s,    u"exec"_s,    u"source"_s, u"."_s,
                                   u"command"_s, u"builtin"_s, u"enable"_s, u"trap"_s,
                                   u"alias"_s,   u"hash"_s,    u"fc"_s};
    return names.contains(name);
}

// Variables that decide which file a name runs or make a starting program load code.
bool changesWhatRuns(QStringView name)
{
    static const QStringList names{
            u"PATH"_s,      u"ENV"_s,      u"BASH_ENV"_s,           u"GCONV_PATH"_s,
            u"SHELLOPTS"_s, u"BASHOPTS"_s, u"BASH_LOADABLES_PATH"_s};
    return names.contains(name) || name.startsWith(u"LD_");
}

// Keywords this check does not read. Each would otherwise be taken for a command name.
QString unreadKeywordReason(QStringView word)
{
    if (word == u"[[")
        return u"the conditional command [[ ... ]] is not allowed: it evaluates arithmetic, "
               u"which can run commands"_s;
    if (word == u"case" || word == u"select")
        return u"the %1 statement is not supported by the command check"_s.arg(word);
    if (word == u"function")
        return u"function definitions are not allowed: a function can take the name of an "
               u"allowed program"_s;
    if (word == u"coproc")
        return u"coproc is not allowed: the command check does not read it"_s;
    return {};
}

// Recognised only unquoted and where a command name may start, as bash does.
bool isReservedWord(QStringView word)
{
    static const QStringList words{u"!"_s,     u"time"_s, u"{"_s,    u"}"_s,  u"if"_s,
                                   u"then"_s,  u"elif"_s, u"else"_s, u"fi"_s, u"while"_s,
                                   u"until"_s, u"do"_s,   u"done"_s, u"for"_s};
    return words.contains(word);
}

QString quoted(QStringView text)
{
    return u'"' + text.toString() + u'"';
}

QString shownOperator(QStringView op)
{
    return op == u"\n" ? u"a newline"_s : u'`' + op.toString() + u'`';
}

// Walks the tokens of one command through bash's grammar, just far enough to know which words
// are command names, and applies the rules documented in CommandPrecheck.h.
class CommandWalker
{
public:
    CommandWalker(const QString &command, const QStringList &allowedPrograms)
        : m_lexer(command),
          m_allowed(allowedPrograms)
    {
        m_unrestricted = m_allowed.contains(u"*"_s);
    }

    PrecheckVerdict run();

private:
    enum class Place {
        CommandStart, // reserved words are recognised here
        CommandPrefix, // after an assignment or redirection: the command name may follow
        Arguments,
        AfterCompound, // after ), }, fi or done: only redirections and separators
        ForName,
        ForInOrDo,
        ForWords,
        ExpectDo,
    };

    // Each handler returns whether to read on: false after a refusal or at the end.
    bool handleWord(const ShellToken &token);
    bool handleRedirection(const ShellToken &token);
    bool handleOperator(const ShellToken &token);
    bool handleReservedWord(const ShellToken &token);
    bool handleForWord(const ShellToken &token);
    bool handleCommandName(const ShellWord &word, qsizetype position);
    bool handleArgument(const ShellWord &word);
    bool handleEnd();
    bool openBlock(const QString &closer);
    bool closeBlock(const QString &closer, qsizetype position);
    bool requireCommandBefore(QStringView what, qsizetype position);

    bool syntaxError(const QString &message);
    bool refusePolicy(const QString &message);
    bool refuseConstruct(const QString &message);
    QString allowedListText() const;

    ShellLexer m_lexer;
    QStringList m_allowed;
    bool m_unrestricted = false;

    Place m_place = Place::CommandStart;
    QStringList m_openBlocks; // the closer each open block waits for: ")", "}", "fi", "done"
    bool m_needCommand = false; // after |, &&, ||, !, or a block opener
    bool m_afterTime = false; // "time -p": the -p is not a command name
    QString m_program; // the command name of the simple command being read
    bool m_done = false; // a construct ended the check in unrestricted mode

    QStringList m_programs;
    QString m_refusal;
};

PrecheckVerdict CommandWalker::run()
{
    for (;;) {
        const ShellToken token = m_lexer.next();
        bool carryOn = false;
        switch (token.kind) {
        case ShellToken::Kind::Issue:
            if (m_lexer.issue().kind == ShellIssue::Kind::Syntax)
                syntaxError(m_lexer.issue().message);
            else
                refuseConstruct(m_lexer.issue().message);
            break;
        case ShellToken::Kind::End:
            handleEnd();
            break;
        case ShellToken::Kind::Redirection:
            carryOn = handleRedirection(token);
            break;
        case ShellToken::Kind::Operator:
            carryOn = handleOperator(token);
            break;
        case ShellToken::Kind::Word:
            carryOn = handleWord(token);
            break;
        }
        if (!carryOn || m_done)
            break;
    }
    const bool allowed = m_refusal.isEmpty();
    return {allowed, m_refusal, m_programs};
}

bool CommandWalker::handleRedirection(const ShellToken &token)
{
    if (m_place == Place::ForName || m_place == Place::ForInOrDo || m_place == Place::ExpectDo)
        return syntaxError(
                u"unexpected redirection %1 at position %2"_s.arg(token.op).arg(token.position));
    const ShellToken target = m_lexer.next();
    if (target.kind == ShellToken::Kind::Issue)
        return true; // the next round reports the lexer's issue
    if (target.kind != ShellToken::Kind::Word)
        return syntaxError(u"expected a file name after %1 at position %2"_s.arg(token.op).arg(
                token.position));
    // A redirection target is never run; a redirection before the name starts the command.
    m_needCommand = false;
    m_afterTime = false;
    if (m_place == Place::CommandStart)
        m_place = Place::CommandPrefix;
    return true;
}

bool CommandWalker::handleEnd()
{
    if (m_place == Place::ForName || m_place == Place::ForInOrDo || m_place == Place::ForWords
        || m_place == Place::ExpectDo)
        return syntaxError(u"the for loop is incomplete at the end of the command"_s);
    if (m_needCommand)
        return syntaxError(u"a command is missing at the end of the command"_s);
    if (!m_openBlocks.isEmpty())
        return syntaxError(
                u"`%1` is missing at the end of the command"_s.arg(m_openBlocks.constLast()));
    return false;
}

bool CommandWalker::handleOperator(const ShellToken &token)
{
    const QString &op = token.op;
    const qsizetype position = token.position;
    m_afterTime = false;

    if (op == u"\n" && (m_place == Place::CommandStart || m_place == Place::ExpectDo))
        return true; // blank lines, and newlines after | && || or before do
    if (m_place == Place::ForName && op == u"((")
        return refuseConstruct(u"the arithmetic for loop for ((...)) at position %1 is not "
                               u"allowed: bash evaluates array subscripts in it, which can run "
                               u"commands"_s.arg(position));
    if (m_place == Place::ForInOrDo && op == u"\n")
        return true; // "for name" may be followed by in or do on the next line
    if (m_place == Place::ForName)
        return syntaxError(u"expected a variable name after `for`, found %1 at position %2"_s
                                   .arg(shownOperator(op))
                                   .arg(position));
    if (m_place == Place::ForInOrDo || m_place == Place::ForWords) {
        if (op != u";" && op != u"\n")
            return syntaxError(
                    u"unexpected %1 in a for loop at position %2"_s.arg(shownOperator(op))
                            .arg(position));
        m_place = Place::ExpectDo;
        return true;
    }
    if (m_place == Place::ExpectDo)
        return syntaxError(
                u"expected `do`, found %1 at position %2"_s.arg(shownOperator(op)).arg(position));

    if (op == u"((")
        return m_place == Place::CommandStart
                ? refuseConstruct(u"the arithmetic command ((...)) at position %1 is not "
                                  u"allowed: bash evaluates array subscripts in it, which can "
                                  u"run commands"_s.arg(position))
                : syntaxError(u"unexpected `((` at position %1"_s.arg(position));
    if (op == u"(") {
        if (m_place == Place::CommandStart)
            return openBlock(u")"_s);
        return syntaxError(u"unexpected `(` at position %1"_s.arg(position));
    }
    if (op == u")")
        return closeBlock(u")"_s, position);
    if (op == u";;" || op == u";&" || op == u";;&")
        return syntaxError(u"unexpected %1 at position %2 (only valid in a case statement)"_s
                                   .arg(shownOperator(op))
                                   .arg(position));

    // ; & \n | |& && ||
    if (m_place == Place::CommandStart && op != u"\n")
        return syntaxError(u"expected a command before %1 at position %2"_s.arg(shownOperator(op))
                                   .arg(position));
    if (!requireCommandBefore(shownOperator(op), position))
        return false;
    m_place = Place::CommandStart;
    m_needCommand = op != u";" && op != u"&" && op != u"\n";
    return true;
}

bool CommandWalker::handleWord(const ShellToken &token)
{
    const ShellWord &word = token.word;
    switch (m_place) {
    case Place::ForName:
    case Place::ForInOrDo:
    case Place::ForWords:
    case Place::ExpectDo:
        return handleForWord(token);
    case Place::AfterCompound:
        return syntaxError(
                u"unexpected word %1 at position %2"_s.arg(quoted(word.text)).arg(token.position));
    case Place::Arguments:
        return handleArgument(word);
    case Place::CommandStart:
        if (m_afterTime && (word.isUnquoted(u"-p") || word.isUnquoted(u"--")))
            return true;
        m_afterTime = false;
        if (!word.quoted) {
            const QString unread = unreadKeywordReason(word.text);
            if (!unread.isEmpty())
                return refuseConstruct(u"%1 (position %2)"_s.arg(unread).arg(token.position));
            if (isReservedWord(word.text))
                return handleReservedWord(token);
        }
        [[fallthrough]];
    case Place::CommandPrefix:
        m_needCommand = false;
        if (!word.assignedName.isEmpty()) {
            m_place = Place::CommandPrefix;
            if (!m_unrestricted && changesWhatRuns(word.assignedName))
                return refusePolicy(
                        u"assigning %1 is not allowed: it changes which program a "
                        u"name runs or makes a program load other code"_s.arg(word.assignedName));
            return true;
        }
        return handleCommandName(word, token.position);
    }
    return false;
}

bool CommandWalker::handleReservedWord(const ShellToken &token)
{
    const QString &word = token.word.text;
    const qsizetype position = token.position;
    if (word == u"!") {
        m_needCommand = true;
    } else if (word == u"time") {
        m_afterTime = true;
    } else if (word == u"{") {
        return openBlock(u"}"_s);
    } else if (word == u"}" || word == u"fi" || word == u"done") {
        return closeBlock(word, position);
    } else if (word == u"if" || word == u"while" || word == u"until") {
        return openBlock(word == u"if" ? u"fi"_s : u"done"_s);
    } else if (word == u"for") {
        openBlock(u"done"_s);
        m_place = Place::ForName;
    } else { // then, elif, else, do: each continues the block its closer belongs to
        const QString closer = word == u"do" ? u"done"_s : u"fi"_s;
        if (m_openBlocks.isEmpty() || m_openBlocks.constLast() != closer)
            return syntaxError(u"unexpected `%1` at position %2"_s.arg(word).arg(position));
        if (!requireCommandBefore(u'`' + word + u'`', position))
            return false;
        m_needCommand = true;
    }
    return true;
}

bool CommandWalker::handleForWord(const ShellToken &token)
{
    const ShellWord &word = token.word;
    switch (m_place) {
    case Place::ForName:
        if (word.quoted || word.text.isEmpty() || !word.isLiteral()
            || !word.assignedName.isEmpty()) {
            return syntaxError(u"expected a variable name after `for`, found %1 at "
                               u"position %2"_s.arg(quoted(word.text))
                                       .arg(token.position));
        }
        m_place = Place::ForInOrDo;
        return true;
    case Place::ForInOrDo:
        if (word.isUnquoted(u"in")) {
            m_place = Place::ForWords;
            return true;
        }
        [[fallthrough]];
    case Place::ExpectDo:
        if (!word.isUnquoted(u"do"))
            return syntaxError(u"expected `do`, found %1 at position %2"_s.arg(quoted(word.text))
                                       .arg(token.position));
        m_place = Place::CommandStart;
        m_needCommand = true;
        return true;
    default:
        return true; // the list a for loop walks: arguments, never command names
    }
}

bool CommandWalker::handleCommandName(const ShellWord &word, qsizetype position)
{
    if (m_lexer.nextIsOpenParenthesis())
        return refuseConstruct(
                u"the function definition %1() at position %2 is not allowed: "
                u"a function can take the name of an allowed program"_s.arg(word.text)
                        .arg(position));
    m_place = Place::Arguments;
    m_program = word.text;
    m_programs.append(word.text);
    if (m_unrestricted)
        return true;
    if (!word.isLiteral())
        return refusePolicy(u"the %1 at position %2 cannot be a command name: the program it "
                            u"names is only known when it runs; name the program literally "
                            u"(allowed: %3)"_s.arg(word.expansion)
                                    .arg(position)
                                    .arg(allowedListText()));
    if (word.text.contains(u'/')) {
        const QString name = word.text.section(u'/', -1);
        const QString hint = m_allowed.contains(name) ? u"write %1 instead"_s.arg(quoted(name))
                                                      : u"allowed: %1"_s.arg(allowedListText());
        return refusePolicy(u"%1 is a path, not a program name: programs are run by name "
                            u"only (%2)"_s.arg(quoted(word.text), hint));
    }
    if (runsShellCode(word.text))
        return refusePolicy(u"%1 is not allowed: it runs or loads shell code the command check "
                            u"cannot see"_s.arg(quoted(word.text)));
    if (!m_allowed.contains(word.text))
        return refusePolicy(u"%1 is not an allowed program (allowed: %2)"_s.arg(quoted(word.text),
                                                                                allowedListText()));
    return true;
}

bool CommandWalker::handleArgument(const ShellWord &word)
{
    if (m_unrestricted || !hasLaunchingOptions(m_program))
        return true;
    if (!word.isLiteral())
        return refusePolicy(u"the arguments of %1 must be literal, but %2 contains a %3: it "
                            u"could turn into an option that runs another program; write it "
                            u"out, quoting glob characters"_s.arg(m_program, quoted(word.text),
                                                                  word.expansion));
    const QString option = launchingOption(m_program, word.text);
    if (!option.isEmpty())
        return refusePolicy(
                u"%1 %2 is not allowed: it runs another program"_s.arg(m_program, option));
    return true;
}

bool CommandWalker::openBlock(const QString &closer)
{
    m_openBlocks.append(closer);
    m_place = Place::CommandStart;
    m_needCommand = true;
    return true;
}

bool CommandWalker::closeBlock(const QString &closer, qsizetype position)
{
    if (m_openBlocks.isEmpty() || m_openBlocks.constLast() != closer)
        return syntaxError(u"unexpected `%1` at position %2"_s.arg(closer).arg(position));
    if (!requireCommandBefore(u'`' + closer + u'`', position))
        return false;
    m_openBlocks.removeLast();
    m_place = Place::AfterCompound;
    return true;
}

bool CommandWalker::requireCommandBefore(QStringView what, qsizetype position)
{
    if (m_needCommand)
        return syntaxError(
                u"expected a command before %1 at position %2"_s.arg(what).arg(position));
    return true;
}

bool CommandWalker::syntaxError(const QString &message)
{
    if (m_refusal.isEmpty())
        m_refusal = u"syntax error: "_s + message;
    return false;
}

bool CommandWalker::refusePolicy(const QString &message)
{
    if (m_refusal.isEmpty())
        m_refusal = message;
    return false;
}

// In unrestricted mode a construct ends the check without a refusal: every program may run,
// so whatever the construct runs is allowed, and the jail still holds.
bool CommandWalker::refuseConstruct(const QString &message)
{
    if (m_unrestricted) {
        m_done = true;
        return true;
    }
    return refusePolicy(message);
}

QString CommandWalker::allowedListText() const
{
    return m_allowed.join(u", "_s);
}

QStringList cleanedAllowedList(const QStringList &allowedPrograms)
{
    QStringList cleaned;
    for (const QString &name : allowedPrograms) {
        const QString trimmed = name.trimmed();
        if (!trimmed.isEmpty() && !cleaned.contains(trimmed))
            cleaned.append(trimmed);
    }
    return cleaned;
}

} // namespace

PrecheckVerdict precheckCommand(const QString &command, const QStringList &allowedPrograms)
{
    const QStringList allowed = cleanedAllowedList(allowedPrograms);
    // bash reads a NUL as the end of its -c text but the check would read on: refuse it.
    const qsizetype nul = command.indexOf(QChar(u'\0'));
    if (nul >= 0)
        return {false, u"the command contains a NUL character at position %1"_s.arg(nul), {}};
    if (command.trimmed().isEmpty())
        return {false, u"the command is empty"_s, {}};
    if (allowed.isEmpty())
        return {false, u"no program is allowed: BASH_ALLOWED_COMMANDS is empty"_s, {}};
    return CommandWalker(command, allowed).run();
}

} // namespace cmcp
