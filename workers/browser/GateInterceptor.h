#pragma once

#include "egress/EgressPolicy.h"

#include <QWebEngineUrlRequestInterceptor>

namespace cmcp {

// Asks the egress policy about every request a page makes, before Chromium sends it: the
// scheme, the domain list and addresses written into the URL. What the policy refuses is
// blocked and reported; what it allows still goes through the worker's EgressProxy, which
// resolves the name once and connects to the checked address.
class GateInterceptor : public QWebEngineUrlRequestInterceptor
{
    Q_OBJECT
public:
    GateInterceptor(const EgressPolicy &policy, QObject *parent = nullptr);

    void interceptRequest(QWebEngineUrlRequestInfo &info) override;

Q_SIGNALS:
    void blocked(const QUrl &url, const QString &reason, bool mainFrame);
    // Every host a request went to (for attributing the proxy's refusals to this page).
    void requested(const QString &host);

private:
    const EgressPolicy m_policy;
};

} // namespace cmcp
