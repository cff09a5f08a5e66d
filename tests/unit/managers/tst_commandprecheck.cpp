// Commands are written as ordinary string literals: moc 6.4 generates nothing for a test file
// whose raw string literals contain a double quote.

#include "managers/CommandPrecheck.h"

#include <QtTest>

using namespace cmcp;
using namespace Qt::Literals::StringLiterals;

namespace {

const QStringList kDefaultAllowed{u"ls"_s,   u"cat"_s, u"grep"_s,  u"find"_s,
                                  u"echo"_s, u"pwd"_s, u"mkdir"_s, u"touch"_s};

} // namespace

class TestCommandPrecheck : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void refusesBypasses_data();
    void refusesBypasses();
    void acceptsOrdinaryCommands_data();
    void acceptsOrdinaryCommands();
    void reportsSyntaxErrorsWithPosition_data();
    void reportsSyntaxErrorsWithPosition();
    void refusalListsTheAllowedPrograms();
    void listsTheProgramsFound();
    void emptyAllowedListAllowsNothing();
    void emptyCommandIsRefused();
    void unrestrictedModeRefusesOnlySyntaxErrors_data();
    void unrestrictedModeRefusesOnlySyntaxErrors();
    void listedLaunchersAreAllowed();
    void codeRunningBuiltinsAreRefusedEvenWhenListed();
    void refusesLaunchingOptionsOfOtherPrograms_data();
    void refusesLaunchingOptionsOfOtherPrograms();
};

void TestCommandPrecheck::refusesBypasses_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("reason"); // a part of the reason, naming the program or construct

    const QString id = u"\"id\" is not an allowed program"_s;
    const QString commandSubstitution = u"command substitution $(...) at position"_s;

    // The usual ways around an allow list: chaining, substitution, newlines, find -exec, paths,
    // programs that run others, quoting tricks, globs, eval and exec, scripts.
    QTest::newRow("semicolon") << u"ls; id"_s << id;
    QTest::newRow("and") << u"ls && id"_s << id;
    QTest::newRow("dollar substitution") << u"echo $(id)"_s << commandSubstitution;
    QTest::newRow("backticks") << u"echo `id`"_s << u"command substitution `...`"_s;
    QTest::newRow("newline") << u"ls\nid"_s << id;
    QTest::newRow("find -exec") << u"find . -exec id \\;"_s << u"find -exec is not allowed"_s;
    QTest::newRow("absolute path") << u"/usr/bin/id"_s << u"\"/usr/bin/id\" is a path"_s;
    QTest::newRow("env") << u"env id"_s << u"\"env\" is not an allowed program"_s;
    QTest::newRow("xargs") << u"ls | xargs id"_s << u"\"xargs\" is not an allowed program"_s;
    QTest::newRow("bash -c") << u"bash -c id"_s << u"\"bash\" is not an allowed program"_s;
    QTest::newRow("python3 -c") << u"python3 -c 'import os; os.system(\"id\")'"_s
                                << u"\"python3\" is not an allowed program"_s;
    QTest::newRow("variable as command") << u"x=id; $x"_s
                                         << u"parameter expansion $x at position 6 cannot be "
                                            u"a command name"_s;
    QTest::newRow("single-quote trick") << u"'i'd"_s << id;
    QTest::newRow("backslash trick") << u"i\\d"_s << id;
    QTest::newRow("double-quote trick") << u"\"i\"d"_s << id;
    QTest::newRow("glob path") << u"/usr/bin/i?"_s << u"glob ?"_s;
    QTest::newRow("glob star") << u"*"_s << u"glob *"_s;
    QTest::newRow("eval") << u"eval id"_s
                          << u"\"eval\" is not allowed: it runs or loads shell code"_s;
    QTest::newRow("exec") << u"exec id"_s << u"\"exec\" is not allowed"_s;
    QTest::newRow("script run by path") << u"echo id > s.sh; ./s.sh"_s << u"\"./s.sh\" is a path"_s;
    QTest::newRow("script run by sh")
            << u"echo id > s.sh; sh s.sh"_s << u"\"sh\" is not an allowed program"_s;

    // Every other separator.
    QTest::newRow("or") << u"ls || id"_s << id;
    QTest::newRow("pipe") << u"ls | id"_s << id;
    QTest::newRow("pipe stderr") << u"ls |& id"_s << id;
    QTest::newRow("background") << u"ls & id"_s << id;
    QTest::newRow("after comment line") << u"ls # comment\nid"_s << id;
    QTest::newRow("line continuation") << u"i\\\nd"_s << id;
    QTest::newRow("continuation inside $(")
            << u"echo \"$\\\n(id)\""_s << u"command substitution $(...) at position 6"_s;
    QTest::newRow("continuation inside &&") << u"ls &\\\n& id"_s << id;
    QTest::newRow("continuation does not extend a comment") << u"ls # x \\\nid"_s << id;
    QTest::newRow("hash inside a word is no comment") << u"echo $'x'#y; id"_s << id;
    QTest::newRow("NUL") << QString(u"ls"_s + QChar(u'\0') + u"; id"_s)
                         << u"NUL character at position 2"_s;
    QTest::newRow("test bracket") << u"[ -f x ]"_s << u"\"[\" is not an allowed program"_s;
    QTest::newRow("arithmetic for")
            << u"for ((i=0; i<2; i++)); do ls; done"_s << u"arithmetic for loop"_s;

    // Command names in every place bash looks for one.
    QTest::newRow("after assignment") << u"x=1 id"_s << id;
    QTest::newRow("after redirection") << u">out id"_s << id;
    QTest::newRow("after fd redirection") << u"2>&1 id"_s << id;
    QTest::newRow("subshell") << u"(id)"_s << id;
    QTest::newRow("brace group") << u"{ id; }"_s << id;
    QTest::newRow("negation") << u"! id"_s << id;
    QTest::newRow("time") << u"time -p id"_s << id;
    QTest::newRow("if condition") << u"if id; then ls; fi"_s << id;
    QTest::newRow("then branch") << u"if ls; then id; fi"_s << id;
    QTest::newRow("else branch") << u"if ls; then ls; else id; fi"_s << id;
    QTest::newRow("while body") << u"while ls; do id; done"_s << id;
    QTest::newRow("for body") << u"for f in a b; do id; done"_s << id;
    QTest::newRow("after a block") << u"{ ls; } && id"_s << id;
    QTest::newRow("quoted keyword is a name")
            << u"'if' ls"_s << u"\"if\" is not an allowed program"_s;

    // Substitutions hidden inside other expansions.
    QTest::newRow("substitution in quotes") << u"echo \"$(id)\""_s << commandSubstitution;
    QTest::newRow("substitution in default") << u"echo ${x:-$(id)}"_s << commandSubstitution;
    QTest::newRow("substitution in assignment") << u"x=$(id) ls"_s << commandSubstitution;
    QTest::newRow("substitution in redirection") << u"ls > $(id)"_s << commandSubstitution;
    QTest::newRow("backticks in quotes") << u"echo \"`id`\""_s << u"command substitution `...`"_s;
    QTest::newRow("process substitution in") << u"cat <(id)"_s << u"process substitution <(...)"_s;
    QTest::newRow("process substitution out") << u"ls >(id)"_s << u"process substitution >(...)"_s;
    QTest::newRow("arithmetic expansion")
            << u"echo $((a[1]))"_s << u"arithmetic expansion $((...))"_s;
    QTest::newRow("old arithmetic") << u"echo $[1]"_s << u"arithmetic expansion $[...]"_s;
    QTest::newRow("arithmetic command") << u"((x=1))"_s << u"arithmetic command ((...))"_s;
    QTest::newRow("conditional command") << u"[[ -f x ]]"_s << u"conditional command [[ ... ]]"_s;
    QTest::newRow("indirect expansion") << u"echo ${!x}"_s << u"indirect expansion ${!...}"_s;
    QTest::newRow("array subscript") << u"echo ${a[$i]}"_s << u"array subscript"_s;
    QTest::newRow("substring offset") << u"echo ${x:$i}"_s << u"substring offset"_s;
    QTest::newRow("prompt expansion") << u"echo ${x@P}"_s << u"prompt expansion ${name@P}"_s;
    QTest::newRow("array assignment") << u"a=(x) ls"_s << u"array assignment a=(...)"_s;
    QTest::newRow("here-document") << u"cat <<EOF\nx\nEOF"_s << u"a here-document (<<)"_s;

    // Names that are not literal.
    QTest::newRow("braced variable") << u"${x}"_s << u"parameter expansion ${x}"_s;
    QTest::newRow("variable after assignment") << u"x=1 $y"_s << u"parameter expansion $y"_s;
    QTest::newRow("ansi-c quoting") << u"$'\\x69d'"_s << u"ANSI-C quoting"_s;
    QTest::newRow("locale quoting") << u"$\"id\""_s << u"locale translation"_s;
    QTest::newRow("brace expansion") << u"{id,}"_s << u"brace expansion"_s;
    QTest::newRow("tilde expansion") << u"~x"_s << u"tilde expansion"_s;
    QTest::newRow("relative path") << u"bin/id"_s << u"\"bin/id\" is a path"_s;
    QTest::newRow("path to allowed program") << u"/bin/ls"_s << u"write \"ls\" instead"_s;

    // Shell code and name resolution.
    QTest::newRow("source") << u"source s.sh"_s << u"\"source\" is not allowed"_s;
    QTest::newRow("dot") << u". ./s.sh"_s << u"\".\" is not allowed"_s;
    QTest::newRow("command builtin") << u"command id"_s << u"\"command\" is not allowed"_s;
    QTest::newRow("builtin builtin") << u"builtin eval id"_s << u"\"builtin\" is not allowed"_s;
    QTest::newRow("enable") << u"enable -f x.so id"_s << u"\"enable\" is not allowed"_s;
    QTest::newRow("trap") << u"trap id EXIT"_s << u"\"trap\" is not allowed"_s;
    QTest::newRow("alias") << u"alias ls=id"_s << u"\"alias\" is not allowed"_s;
    QTest::newRow("hash") << u"hash -p /usr/bin/id ls; ls"_s << u"\"hash\" is not allowed"_s;
    QTest::newRow("function definition") << u"f() { id; }"_s << u"function definition f()"_s;
    QTest::newRow("function shadowing an allowed name")
            << u"ls () { id; }; ls"_s << u"function definition ls()"_s;
    QTest::newRow("function keyword") << u"function f { id; }"_s << u"function definitions"_s;
    QTest::newRow("coproc") << u"coproc id"_s << u"coproc is not allowed"_s;
    QTest::newRow("case") << u"case x in x) id;; esac"_s << u"the case statement"_s;
    QTest::newRow("nohup") << u"nohup id"_s << u"\"nohup\" is not an allowed program"_s;
    QTest::newRow("PATH assignment") << u"PATH=. ls"_s << u"assigning PATH"_s;
    QTest::newRow("PATH set alone") << u"PATH=/tmp; ls"_s << u"assigning PATH"_s;
    QTest::newRow("LD_PRELOAD") << u"LD_PRELOAD=./x.so ls"_s << u"assigning LD_PRELOAD"_s;
    QTest::newRow("BASH_ENV") << u"BASH_ENV=x ls"_s << u"assigning BASH_ENV"_s;

    // find's other ways to run a program, and ways to spell them.
    QTest::newRow("find -execdir") << u"find . -execdir id {} +"_s << u"find -execdir"_s;
    QTest::newRow("find -ok") << u"find . -ok id \\;"_s << u"find -ok"_s;
    QTest::newRow("find -okdir") << u"find . -okdir id \\;"_s << u"find -okdir"_s;
    QTest::newRow("find quoted -exec") << u"find . -ex'ec' id \\;"_s << u"find -exec"_s;
    QTest::newRow("find -exec from a variable")
            << u"find . $o id \\;"_s << u"arguments of find must be literal"_s;
    QTest::newRow("find -exec from a glob")
            << u"find . -e* id \\;"_s << u"arguments of find must be literal"_s;
    QTest::newRow("find -exec from braces")
            << u"find . -{exec,x} id \\;"_s << u"arguments of find must be literal"_s;
    QTest::newRow("find after a pipe") << u"ls | find . -exec id \\;"_s << u"find -exec"_s;
}

void TestCommandPrecheck::refusesBypasses()
{
    QFETCH(QString, command);
    QFETCH(QString, reason);
    const PrecheckVerdict verdict = precheckCommand(command, kDefaultAllowed);
    QVERIFY2(!verdict.allowed, qPrintable(command));
    QVERIFY2(verdict.reason.contains(reason), qPrintable(verdict.reason));
}

void TestCommandPrecheck::acceptsOrdinaryCommands_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QStringList>("programs");

    QTest::newRow("ls -la") << u"ls -la"_s << QStringList{u"ls"_s};
    QTest::newRow("pipe and redirection")
            << u"cat a.txt | grep foo > out.txt"_s << QStringList{u"cat"_s, u"grep"_s};
    QTest::newRow("and") << u"mkdir -p a/b && touch a/b/c"_s << QStringList{u"mkdir"_s, u"touch"_s};
    QTest::newRow("separator in quotes") << u"echo \"hello; world\""_s << QStringList{u"echo"_s};
    QTest::newRow("find -name quoted glob") << u"find . -name '*.txt'"_s << QStringList{u"find"_s};
    QTest::newRow("grep -r") << u"grep -r 'x' ."_s << QStringList{u"grep"_s};
    QTest::newRow("variable argument") << u"echo $HOME"_s << QStringList{u"echo"_s};
    QTest::newRow("variable in quotes") << u"echo \"$HOME/x\""_s << QStringList{u"echo"_s};
    QTest::newRow("default value")
            << u"echo ${HOME:-/tmp} ${#HOME} ${x:1:2} ${x//a/b}"_s << QStringList{u"echo"_s};
    QTest::newRow("substitution in single quotes")
            << u"echo '$(id)' '`id`'"_s << QStringList{u"echo"_s};
    QTest::newRow("escaped substitution") << u"echo \\$\\(id\\)"_s << QStringList{u"echo"_s};
    QTest::newRow("comment") << u"ls # ; id"_s << QStringList{u"ls"_s};
    QTest::newRow("keywords as arguments") << u"echo if then done id"_s << QStringList{u"echo"_s};
    QTest::newRow("glob argument") << u"ls *.txt a?"_s << QStringList{u"ls"_s};
    QTest::newRow("brace argument") << u"echo a{b,c}"_s << QStringList{u"echo"_s};
    QTest::newRow("redirections") << u"ls > out 2>&1 &"_s << QStringList{u"ls"_s};
    QTest::newRow("here-string") << u"grep -c x <<< \"text\""_s << QStringList{u"grep"_s};
    QTest::newRow("assignment prefix") << u"LC_ALL=C ls"_s << QStringList{u"ls"_s};
    QTest::newRow("subshell") << u"(ls; pwd) > out"_s << QStringList{u"ls"_s, u"pwd"_s};
    QTest::newRow("brace group") << u"{ ls; pwd; }"_s << QStringList{u"ls"_s, u"pwd"_s};
    QTest::newRow("if") << u"if ls a; then echo yes; elif ls b; then pwd; else echo no; fi"_s
                        << QStringList{u"ls"_s, u"echo"_s, u"ls"_s, u"pwd"_s, u"echo"_s};
    QTest::newRow("for") << u"for f in *.txt; do cat \"$f\"; done"_s << QStringList{u"cat"_s};
    QTest::newRow("for on lines") << u"for f in a b\ndo\n  echo $f\ndone"_s
                                  << QStringList{u"echo"_s};
    QTest::newRow("while") << u"while ls x; do touch y; done"_s << QStringList{u"ls"_s, u"touch"_s};
    QTest::newRow("lines") << u"ls\n\npwd\n"_s << QStringList{u"ls"_s, u"pwd"_s};
    QTest::newRow("and across lines") << u"ls &&\n  pwd"_s << QStringList{u"ls"_s, u"pwd"_s};
    QTest::newRow("negation and time")
            << u"! grep -q x a.txt; time ls"_s << QStringList{u"grep"_s, u"ls"_s};
    QTest::newRow("find literal braces") << u"find . -name '{}' -print"_s << QStringList{u"find"_s};
    QTest::newRow("quoted allowed name") << u"'ls' -l"_s << QStringList{u"ls"_s};
    QTest::newRow("continued name") << u"l\\\ns -la"_s << QStringList{u"ls"_s};
    QTest::newRow("for with in on its own line")
            << u"for x\nin a b\ndo echo $x; done"_s << QStringList{u"echo"_s};
}

void TestCommandPrecheck::acceptsOrdinaryCommands()
{
    QFETCH(QString, command);
    QFETCH(QStringList, programs);
    const PrecheckVerdict verdict = precheckCommand(command, kDefaultAllowed);
    QVERIFY2(verdict.allowed, qPrintable(verdict.reason));
    QVERIFY(verdict.reason.isEmpty());
    QCOMPARE(verdict.programs, programs);
}

void TestCommandPrecheck::reportsSyntaxErrorsWithPosition_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("reason");

    QTest::newRow("single quote") << u"echo 'abc"_s
                                  << u"unterminated single quote starting at position 5"_s;
    QTest::newRow("double quote") << u"echo \"abc"_s
                                  << u"unterminated double quote starting at position 5"_s;
    QTest::newRow("ansi-c quote") << u"echo $'abc"_s
                                  << u"unterminated $' quote starting at position 5"_s;
    QTest::newRow("parameter") << u"echo ${x"_s << u"unterminated ${ starting at position 5"_s;
    QTest::newRow("bad substitution") << u"echo ${}"_s << u"bad substitution at position 5"_s;
    QTest::newRow("trailing pipe") << u"ls |"_s << u"a command is missing at the end"_s;
    QTest::newRow("double and") << u"ls && && ls"_s
                                << u"expected a command before `&&` at position 6"_s;
    QTest::newRow("leading separator")
            << u"; ls"_s << u"expected a command before `;` at position 0"_s;
    QTest::newRow("open subshell") << u"(ls"_s << u"`)` is missing"_s;
    QTest::newRow("stray parenthesis") << u"ls)"_s << u"unexpected `)` at position 2"_s;
    QTest::newRow("missing fi") << u"if ls; then pwd"_s << u"`fi` is missing"_s;
    QTest::newRow("empty then") << u"if ls; then fi"_s
                                << u"expected a command before `fi` at position 12"_s;
    QTest::newRow("redirection without target")
            << u"ls >"_s << u"expected a file name after > at position 3"_s;
    QTest::newRow("word after subshell")
            << u"(ls) id"_s << u"unexpected word \"id\" at position 5"_s;
    QTest::newRow("incomplete for") << u"for f in a b"_s << u"for loop is incomplete"_s;
}

void TestCommandPrecheck::reportsSyntaxErrorsWithPosition()
{
    QFETCH(QString, command);
    QFETCH(QString, reason);
    const PrecheckVerdict verdict = precheckCommand(command, kDefaultAllowed);
    QVERIFY2(!verdict.allowed, qPrintable(command));
    QVERIFY2(verdict.reason.startsWith(u"syntax error: "_s), qPrintable(verdict.reason));
    QVERIFY2(verdict.reason.contains(reason), qPrintable(verdict.reason));
}

void TestCommandPrecheck::refusalListsTheAllowedPrograms()
{
    const PrecheckVerdict verdict = precheckCommand(u"id"_s, kDefaultAllowed);
    QCOMPARE(verdict.reason,
             u"\"id\" is not an allowed program (allowed: ls, cat, grep, find, echo, pwd, mkdir, "
             u"touch)"_s);
}

void TestCommandPrecheck::listsTheProgramsFound()
{
    const PrecheckVerdict verdict =
            precheckCommand(u"cat a | grep b && ls; echo c"_s, kDefaultAllowed);
    QVERIFY(verdict.allowed);
    QCOMPARE(verdict.programs, (QStringList{u"cat"_s, u"grep"_s, u"ls"_s, u"echo"_s}));
}

void TestCommandPrecheck::emptyAllowedListAllowsNothing()
{
    const QString reason = u"no program is allowed: BASH_ALLOWED_COMMANDS is empty"_s;
    QCOMPARE(precheckCommand(u"ls"_s, {}).reason, reason);
    QCOMPARE(precheckCommand(u"echo hi"_s, {u""_s, u" "_s}).reason, reason);
    QVERIFY(!precheckCommand(u"ls"_s, {}).allowed);
}

void TestCommandPrecheck::emptyCommandIsRefused()
{
    const PrecheckVerdict verdict = precheckCommand(u"  \n "_s, kDefaultAllowed);
    QVERIFY(!verdict.allowed);
    QCOMPARE(verdict.reason, u"the command is empty"_s);
}

void TestCommandPrecheck::unrestrictedModeRefusesOnlySyntaxErrors_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<bool>("allowed");

    QTest::newRow("any program") << u"id -u"_s << true;
    QTest::newRow("path") << u"/usr/bin/id"_s << true;
    QTest::newRow("substitution") << u"echo $(id)"_s << true;
    QTest::newRow("find -exec") << u"find . -exec id \\;"_s << true;
    QTest::newRow("eval") << u"eval id"_s << true;
    QTest::newRow("PATH") << u"PATH=/tmp ls"_s << true;
    QTest::newRow("here-document") << u"cat <<EOF\nx\nEOF"_s << true;
    QTest::newRow("function") << u"f() { id; }; f"_s << true;
    QTest::newRow("unterminated quote") << u"echo 'x"_s << false;
    QTest::newRow("unbalanced") << u"(ls"_s << false;
}

void TestCommandPrecheck::unrestrictedModeRefusesOnlySyntaxErrors()
{
    QFETCH(QString, command);
    QFETCH(bool, allowed);
    const PrecheckVerdict verdict = precheckCommand(command, {u"*"_s});
    QCOMPARE(verdict.allowed, allowed);
    QCOMPARE(verdict.reason.startsWith(u"syntax error: "_s), !allowed);
}

void TestCommandPrecheck::listedLaunchersAreAllowed()
{
    const QStringList allowed{u"ls"_s, u"bash"_s, u"env"_s, u"xargs"_s};
    QVERIFY(precheckCommand(u"bash -c id"_s, allowed).allowed);
    QVERIFY(precheckCommand(u"env A=1 id"_s, allowed).allowed);
    QVERIFY(precheckCommand(u"ls | xargs id"_s, allowed).allowed);
    QVERIFY(!precheckCommand(u"bash -c id; id"_s, allowed).allowed);
}

void TestCommandPrecheck::codeRunningBuiltinsAreRefusedEvenWhenListed()
{
    const QStringList allowed{u"ls"_s, u"eval"_s, u"source"_s};
    const PrecheckVerdict verdict = precheckCommand(u"eval ls"_s, allowed);
    QVERIFY(!verdict.allowed);
    QVERIFY2(verdict.reason.contains(u"\"eval\" is not allowed"_s), qPrintable(verdict.reason));
    QVERIFY(!precheckCommand(u"source x"_s, allowed).allowed);
}

void TestCommandPrecheck::refusesLaunchingOptionsOfOtherPrograms_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("reason"); // empty: allowed

    QTest::newRow("tar plain") << u"tar -xzf a.tar.gz"_s << QString();
    QTest::newRow("tar --to-command")
            << u"tar -xf a.tar --to-command=id"_s << u"tar --to-command is not allowed"_s;
    QTest::newRow("tar abbreviated") << u"tar -xf a.tar --to-com id"_s << u"tar --to-command"_s;
    QTest::newRow("tar -I in a cluster") << u"tar -xvI id -f a.tar"_s << u"tar -I"_s;
    QTest::newRow("tar checkpoint action")
            << u"tar --checkpoint-action=exec=id -cf a.tar ."_s << u"tar --checkpoint-action"_s;
    QTest::newRow("sort plain") << u"sort -r a.txt"_s << QString();
    QTest::newRow("sort compress program")
            << u"sort --compress-program=id a.txt"_s << u"sort --compress-program"_s;
    QTest::newRow("rsync -e") << u"rsync -ae id a b"_s << u"rsync -e"_s;
    QTest::newRow("tar argument from a variable")
            << u"tar $opt"_s << u"arguments of tar must be literal"_s;
}

void TestCommandPrecheck::refusesLaunchingOptionsOfOtherPrograms()
{
    QFETCH(QString, command);
    QFETCH(QString, reason);
    const PrecheckVerdict verdict = precheckCommand(command, {u"tar"_s, u"sort"_s, u"rsync"_s});
    QCOMPARE(verdict.allowed, reason.isEmpty());
    QVERIFY2(verdict.reason.contains(reason), qPrintable(verdict.reason));
}

QTEST_GUILESS_MAIN(TestCommandPrecheck)
#include "tst_commandprecheck.moc"
