#pragma once

#include <QHostAddress>
#include <QList>
#include <QString>

#include <functional>

class QObject;

namespace cmcp {

// Turns a host name into addresses, once per request: the egress gate checks what this returns
// and the connection goes to a checked address, never to a second answer. Tests substitute a
// resolver whose answers they choose (a rebinding name, a private answer).
class HostResolver
{
public:
    // Addresses in the resolver's order, or an error message when there are none.
    using Callback =
            std::function<void(const QList<QHostAddress> &addresses, const QString &error)>;

    virtual ~HostResolver() = default;
    // Calls back on `context`'s thread, and never once `context` is destroyed.
    virtual void resolve(const QString &host, QObject *context, Callback callback) = 0;
};

// The system's resolver (getaddrinfo through QHostInfo, off the calling thread).
class SystemHostResolver final : public HostResolver
{
public:
    void resolve(const QString &host, QObject *context, Callback callback) override;
};

} // namespace cmcp
