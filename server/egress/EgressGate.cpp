#include "egress/EgressGate.h"

#include <QMetaObject>
#include <QObject>

#include <algorithm>

namespace cmcp {

namespace {

void callLater(QObject *context, const EgressGate::Callback &callback, EgressDecision decision)
{
    QMetaObject::invokeMethod(
            context, [callback, decision = std::move(decision)] { callback(decision); },
            Qt::QueuedConnection);
}

} // namespace

EgressGate::EgressGate(EgressPolicy policy, std::shared_ptr<HostResolver> resolver)
    : m_policy(std::move(policy)),
      m_resolver(std::move(resolver))
{
}

void EgressGate::decide(const QUrl &url, QObject *context, Callback callback) const
{
    const EgressCheck check = m_policy.checkUrl(url);
    if (!check.target) {
        callLater(context, callback, EgressDecision{check.refusal, {}, {}});
        return;
    }
    decide(*check.target, context, std::move(callback));
}

void EgressGate::decide(const EgressTarget &target, QObject *context, Callback callback) const
{
    if (target.literal) {
        EgressDecision decision{{}, target, {*target.literal}};
        if (std::optional<QString> refusal = m_policy.checkAddress(target, *target.literal))
            decision.refusal = *refusal;
        callLater(context, callback, std::move(decision));
        return;
    }
    // The policy is copied into the callback: a decision never outlives its rules.
    const EgressPolicy policy = m_policy;
    m_resolver->resolve(
            target.host, context,
            [policy, target, callback](const QList<QHostAddress> &addresses, const QString &error) {
                EgressDecision decision{{}, target, {}};
                if (!error.isEmpty()) {
                    decision.refusal = error;
                    callback(decision);
                    return;
                }
                for (const QHostAddress &address : addresses) {
                    if (std::optional<QString> refusal = policy.checkAddress(target, address)) {
                        decision.refusal = *refusal;
                        callback(decision);
                        return;
                    }
                }
                decision.addresses = addresses;
                std::stable_partition(decision.addresses.begin(), decision.addresses.end(),
                                      [](const QHostAddress &address) {
                                          return address.protocol()
                                                  == QAbstractSocket::IPv4Protocol;
                                      });
                callback(decision);
            });
}

} // namespace cmcp
