#pragma once

#include "egress/EgressPolicy.h"
#include "egress/HostResolver.h"

#include <QHostAddress>
#include <QList>

#include <functional>
#include <memory>

class QObject;

namespace cmcp {

// The gate's answer for one URL: refused (and why, naming the rule), or the checked target and
// the addresses a connection may go to.
struct EgressDecision
{
    QString refusal;
    EgressTarget target;
    // Every address the name resolved to passed the policy; IPv4 first, then the resolver's
    // order. A connection goes to one of these and to nothing else.
    QList<QHostAddress> addresses;

    bool allowed() const { return refusal.isEmpty(); }
};

// The one egress gate: the policy, applied to a URL and then to every address its host
// resolves to, with a single resolution per decision. A name that resolves to any refused
// address is refused as a whole, so an answer that mixes a public and a private address
// cannot be used to slip through.
class EgressGate
{
public:
    EgressGate(EgressPolicy policy, std::shared_ptr<HostResolver> resolver);

    using Callback = std::function<void(const EgressDecision &decision)>;
    // Always calls back later, on `context`'s thread (never once `context` is gone).
    void decide(const QUrl &url, QObject *context, Callback callback) const;
    // The same for an already checked target (CONNECT host:port in the browser's proxy).
    void decide(const EgressTarget &target, QObject *context, Callback callback) const;

private:
    EgressPolicy m_policy;
    std::shared_ptr<HostResolver> m_resolver;
};

} // namespace cmcp
