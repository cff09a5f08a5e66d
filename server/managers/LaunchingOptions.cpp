#include "managers/LaunchingOptions.h"

using namespace Qt::Literals::StringLiterals;

namespace cmcp {

namespace {

enum class OptionStyle {
    Primary, // find's -exec: the whole argument
    Long, // --to-command, also abbreviated (--to-com) and with =value, as getopt_long reads it
    Short, // -I: anywhere in a cluster such as -xvI
};

struct LaunchingOption
{
    QStringView program;
    QStringView option;
    OptionStyle style;
};

// The programs an administrator may plausibly list whose options run another program. It is
// a courtesy that explains a refusal early; the jail is what keeps the other program from
// running. Interpreters (awk, sed's e command, perl, python3) run programs through their
// program text, which no option table can judge: listing one accepts what it can do.
constexpr LaunchingOption kLaunchingOptions[] = {
        {u"find", u"-exec", OptionStyle::Primary},
        {u"find", u"-execdir", OptionStyle::Primary},
        {u"find", u"-ok", OptionStyle::Primary},
        {u"find", u"-okdir", OptionStyle::Primary},
        {u"tar", u"--to-command", OptionStyle::Long},
        {u"tar", u"--use-compress-program", OptionStyle::Long},
        {u"tar", u"--checkpoint-action", OptionStyle::Long},
        {u"tar", u"--info-script", OptionStyle::Long},
        {u"tar", u"--new-volume-script", OptionStyle::Long},
        {u"tar", u"--rsh-command", OptionStyle::Long},
        {u"tar", u"-I", OptionStyle::Short},
        {u"tar", u"-F", OptionStyle::Short},
        {u"sort", u"--compress-program", OptionStyle::Long},
        {u"split", u"--filter", OptionStyle::Long},
        {u"rsync", u"--rsh", OptionStyle::Long},
        {u"rsync", u"--rsync-path", OptionStyle::Long},
        {u"rsync", u"-e", OptionStyle::Short},
        {u"rg", u"--pre", OptionStyle::Long},
};

bool sets(const LaunchingOption &rule, QStringView argument)
{
    switch (rule.style) {
    case OptionStyle::Primary:
        return argument == rule.option;
    case OptionStyle::Long: {
        if (!argument.startsWith(u"--") || argument.size() == 2)
            return false;
        const qsizetype equals = argument.indexOf(u'=');
        return rule.option.startsWith(equals < 0 ? argument : argument.first(equals));
    }
    case OptionStyle::Short:
        return argument.startsWith(u'-') && !argument.startsWith(u"--")
                && argument.sliced(1).contains(rule.option.at(1));
    }
    return false;
}

} // namespace

bool hasLaunchingOptions(QStringView program)
{
    for (const LaunchingOption &rule : kLaunchingOptions) {
        if (rule.program == program)
            return true;
    }
    return false;
}

QString launchingOption(QStringView program, QStringView argument)
{
    for (const LaunchingOption &rule : kLaunchingOptions) {
        if (rule.program == program && sets(rule, argument))
            return rule.option.toString();
    }
    return {};
}

} // namespace cmcp
