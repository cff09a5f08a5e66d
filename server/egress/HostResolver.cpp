#include "egress/HostResolver.h"

#include <QHostInfo>

namespace cmcp {

void SystemHostResolver::resolve(const QString &host, QObject *context, Callback callback)
{
    QHostInfo::lookupHost(host, context, [host, callback](const QHostInfo &info) {
        if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
            callback({},
                     QStringLiteral("cannot resolve %1: %2")
                             .arg(host,
                                  info.error() == QHostInfo::NoError ? QStringLiteral("no address")
                                                                     : info.errorString()));
            return;
        }
        callback(info.addresses(), {});
    });
}

} // namespace cmcp
