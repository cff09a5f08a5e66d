#pragma once

#include <QString>
#include <QStringList>

namespace cmcp {

struct PrecheckVerdict
{
    bool allowed = false;
    QString reason; // why the command is refused, naming the program or construct; empty if allowed
    QStringList programs; // command names found, in order; complete only when allowed
};

// The daemon's early check of a system_run_command command against BASH_ALLOWED_COMMANDS.
// It gives a clear refusal before anything starts; security does not rest on it, since the
// jail lets only the allowed program files be executed. It reads the command as bash would
// and refuses, in this order of discovery:
//  - syntax errors bash would report (unterminated quotes, unbalanced ( ) { } if/fi, ...),
//    naming the problem and its position;
//  - constructs that run code the check cannot see: command and process substitution,
//    arithmetic expansion and the (( )) and [[ ]] commands (array subscripts in arithmetic can
//    run commands), here-documents, function definitions, indirect and prompt expansion,
//    array assignments, and the case, select, function and coproc keywords it does not read;
//  - command names that are not literal (an expansion, glob, brace or tilde expansion, $'...'),
//    contain a '/' (the jail's PATH holds exactly the allowed programs, so a name is all that
//    is needed, and a path could name a script in the workspace), are shell builtins that run
//    or load code or change how names resolve (eval, exec, source, ., command, builtin,
//    enable, trap, alias, hash, fc), even when listed, or are not listed;
//  - assignments to variables that change which code runs (PATH, ENV, BASH_ENV, LD_*, ...);
//  - options of allowed programs that run another program (find -exec and the others in
//    LaunchingOptions.cpp), and arguments of those programs that are not literal, since an
//    expansion or a glob could turn into such an option.
// Expansions in argument position are accepted: their results are only ever arguments.
// Programs that run other programs by design (env, xargs, nohup, bash, python3, ...) are
// refused only because they are not listed; an administrator who lists one accepts what it
// can run, within the jail.
//
// allowedPrograms holds names such as "ls". An empty list allows nothing. "*" is the
// unrestricted mode: every program may run (still jailed), so no name, option or assignment is
// refused, and a construct the check does not read ends the check with an allowed verdict;
// only syntax errors are refused.
PrecheckVerdict precheckCommand(const QString &command, const QStringList &allowedPrograms);

} // namespace cmcp
