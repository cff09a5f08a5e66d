#pragma once

#include <QString>

#include <cstdio>

namespace cmcp {

// How cmcpd says it cannot go on: one line `cmcpd: <message>` on stderr (scripts and the tests
// match on it), then the exit status, so that callers write `return startupFailure(2, …)`.
// 2 is a wrong command line or setting, 1 anything else that stops start-up.
inline int startupFailure(int exitStatus, const QString &message)
{
    std::fprintf(stderr, "cmcpd: %s\n", qPrintable(message));
    return exitStatus;
}

} // namespace cmcp
