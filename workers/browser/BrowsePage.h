#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <cstdint>
#include <QUrl>

#include <functional>

class QWebEnginePage;
class QWebEngineProfile;
class QWebEngineView;

namespace cmcp {

class EgressPolicy;

struct BrowseRequest
{
    qint64 id = 0;
    QUrl url;
    QString waitFor; // "load", "quiet" or a CSS selector
    bool text = false;
    bool screenshot = false;
    int timeoutMs = 30000;
    qint64 maxBytes = 10 * 1024 * 1024;
};

// One web_browse: an off-the-record profile of its own (no cookie or storage of another call is
// visible), the gate's interceptor, a page (in a 1280x800 view when a screenshot is wanted), the
// wait, and the answer as a JSON object for the daemon. Deletes itself after answering.
class BrowsePage : public QObject
{
    Q_OBJECT
public:
    using Reply = std::function<void(const QJsonObject &reply)>;

    BrowsePage(const BrowseRequest &request, const EgressPolicy &policy, Reply reply,
               QObject *parent = nullptr);
    ~BrowsePage() override;

    // A refusal of the worker's proxy (after resolution) for `host`: reported if this page
    // asked for that host.
    void proxyRefused(const QString &host, const QString &target, const QString &reason);
    // Stops without answering (the call was cancelled).
    void abandon();

private:
    void onLoadFinished(bool ok);
    void waitThenCollect();
    void collect();
    void finishWithContent(const QString &content);
    void fail(const QString &error);
    void answer(QJsonObject reply);
    void addBlocked(const QString &url, const QString &reason);

    BrowseRequest m_request;
    Reply m_reply;
    QWebEngineProfile *m_profile = nullptr;
    QWebEnginePage *m_page = nullptr;
    QWebEngineView *m_view = nullptr;
    QTimer m_deadline;
    QTimer m_poll;
    QSet<QString> m_hosts;
    QJsonArray m_blocked;
    QString m_mainRefusal;
    QString m_loadError;
    bool m_loaded = false;
    bool m_done = false;
};

} // namespace cmcp
