// The command pre-check: the shell lexer and the verdict on every command a model sends to
// system_run_command, with a typical allow list and in the unrestricted mode.
#include "managers/CommandPrecheck.h"
#include "FuzzSupport.h"
#include "managers/ShellLexer.h"

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString command =
            QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));

    ShellLexer lexer(command);
    // Every token consumes input: the stream ends within a bound.
    for (qsizetype tokens = 0;; ++tokens) {
        FUZZ_CHECK(tokens <= command.size() + 2);
        const ShellToken token = lexer.next();
        if (token.kind == ShellToken::Kind::End)
            break;
        if (token.kind == ShellToken::Kind::Issue) {
            FUZZ_CHECK(lexer.issue().kind != ShellIssue::Kind::None);
            break;
        }
    }

    static const QStringList allowList{QStringLiteral("ls"), QStringLiteral("cat"),
                                       QStringLiteral("grep"), QStringLiteral("find"),
                                       QStringLiteral("echo")};
    const PrecheckVerdict verdict = precheckCommand(command, allowList);
    FUZZ_CHECK(verdict.allowed == verdict.reason.isEmpty());
    if (verdict.allowed)
        for (const QString &program : verdict.programs)
            FUZZ_CHECK(allowList.contains(program));
    const PrecheckVerdict anything = precheckCommand(command, {QStringLiteral("*")});
    // The unrestricted mode refuses only what bash itself would refuse: a subset.
    if (verdict.allowed)
        FUZZ_CHECK(anything.allowed);
    return 0;
}
