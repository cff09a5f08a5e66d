#pragma once

#include "posix/UniqueFd.h"

#include <QString>

#include <functional>

class QObject;

namespace cmcp {

// The daemon's side of a job's network: the job's own network namespace has loopback alone,
// and its one way out is a socket listening on that loopback, which the jail hands to the
// daemon (cmcp-jail --egress-fd). Whatever implements this accepts every connection on it and
// lets each through only as the egress gate decides.
class JobEgress
{
public:
    virtual ~JobEgress() = default;

    // A connection the gate refused: what the job asked for and the rule that refused it.
    using Refused = std::function<void(const QString &target, const QString &reason)>;
    // Serves `listener` until the returned object (a child of `parent`) is deleted, which
    // closes the listener and every connection of it. nullptr with `error` when it cannot.
    virtual QObject *serve(UniqueFd listener, Refused refused, QObject *parent, QString *error) = 0;
};

} // namespace cmcp
