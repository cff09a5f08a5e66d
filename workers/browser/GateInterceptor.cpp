#include "workers/browser/GateInterceptor.h"

namespace cmcp {

GateInterceptor::GateInterceptor(const EgressPolicy &policy, QObject *parent)
    : QWebEngineUrlRequestInterceptor(parent),
      m_policy(policy)
{
}

void GateInterceptor::interceptRequest(QWebEngineUrlRequestInfo &info)
{
    const QUrl url = info.requestUrl();
    const QString scheme = url.scheme();
    // Content that never leaves the process.
    if (scheme == QLatin1String("data") || scheme == QLatin1String("blob")
        || scheme == QLatin1String("about"))
        return;
    const bool mainFrame = info.resourceType() == QWebEngineUrlRequestInfo::ResourceTypeMainFrame;
    const EgressCheck check = m_policy.checkUrl(url);
    if (!check.target) {
        info.block(true);
        Q_EMIT blocked(url, check.refusal, mainFrame);
        return;
    }
    Q_EMIT requested(check.target->host);
}

} // namespace cmcp
