#include "ConsoleSession.h"

#include "CallModel.h"
#include "SessionModel.h"

namespace cmcp {

namespace {

QString errorText(const QString &code, const QString &message)
{
    return message.isEmpty() ? code : message;
}

} // namespace

ConsoleSession::ConsoleSession(AdminClient &client, QObject *parent)
    : QObject(parent), m_client(client), m_calls(new CallModel(this)), m_sessions(new SessionModel(this))
{
    connect(&client, &AdminClient::connected, this, [this] {
        m_client.request(QLatin1String(admin::methodSubscribeLog), {{QLatin1String("level"), QStringLiteral("info")}});
        refresh();
    });
    connect(&client, &AdminClient::eventReceived, this, &ConsoleSession::onEvent);
}

void ConsoleSession::refresh()
{
    m_client.request(QLatin1String(admin::methodSnapshot), {}, [this](const QJsonObject &result, const QString &code, const QString &) {
        if (code.isEmpty())
            applySnapshot(result);
    });
}

void ConsoleSession::applySnapshot(const QJsonObject &result)
{
    QList<QJsonObject> calls;
    for (const QJsonValue &call : result.value(QLatin1String("recentCalls")).toArray())
        calls.append(call.toObject());
    for (const QJsonValue &call : result.value(QLatin1String("calls")).toArray())
        calls.append(call.toObject());
    m_calls->reset(calls);
    m_sessions->reset(result.value(QLatin1String("sessions")).toArray());
    m_config = result.value(QLatin1String("config")).toArray();
    m_sandbox = result.value(QLatin1String("sandbox")).toObject();
    m_counters = result.value(QLatin1String("counters")).toObject();
    Q_EMIT configChanged();
    Q_EMIT sandboxChanged();
    Q_EMIT countersChanged();
}

void ConsoleSession::onEvent(const QString &event, const QJsonObject &data)
{
    if (event == QLatin1String(admin::eventCallStarted)) {
        const QJsonObject call = data.value(QLatin1String("call")).toObject();
        m_calls->enqueue(call);
        m_sessions->callStarted(call.value(QLatin1String("sessionId")).toString(),
                                call.value(QLatin1String("clientName")).toString());
    } else if (event == QLatin1String(admin::eventCallFinished)) {
        m_calls->enqueue(data.value(QLatin1String("call")).toObject());
    } else if (event == QLatin1String(admin::eventCallProgress)) {
        m_calls->enqueueProgress(data);
    } else if (event == QLatin1String(admin::eventSessionOpened)) {
        m_sessions->opened(data);
    } else if (event == QLatin1String(admin::eventSessionClosed)) {
        m_sessions->closed(data.value(QLatin1String("sessionId")).toString());
    } else if (event == QLatin1String(admin::eventCounters)) {
        m_counters = data;
        Q_EMIT countersChanged();
    } else if (event == QLatin1String(admin::eventSettingChanged)) {
        updateSetting(data.value(QLatin1String("setting")).toObject());
    } else if (event == QLatin1String(admin::eventLog)) {
        Q_EMIT logLine(data);
    } else if (event == QLatin1String(admin::eventDropped)) {
        // We missed events: what we show may be stale, so start again from a snapshot.
        m_dropped += quint64(data.value(QLatin1String("count")).toDouble());
        refresh();
    }
}

void ConsoleSession::updateSetting(const QJsonObject &setting)
{
    const QString name = setting.value(QLatin1String("name")).toString();
    for (qsizetype i = 0; i < m_config.size(); ++i) {
        if (m_config.at(i).toObject().value(QLatin1String("name")).toString() == name) {
            m_config.replace(i, setting);
            Q_EMIT configChanged();
            return;
        }
    }
}

void ConsoleSession::cancelCall(qint64 callId, Done done)
{
    m_client.request(QLatin1String(admin::methodCancelCall), {{QLatin1String("callId"), double(callId)}},
                     [done](const QJsonObject &, const QString &code, const QString &message) {
                         if (done)
                             done(code.isEmpty() ? QString() : errorText(code, message));
                     });
}

void ConsoleSession::closeSession(const QString &sessionId, Done done)
{
    m_client.request(QLatin1String(admin::methodCloseSession), {{QLatin1String("sessionId"), sessionId}},
                     [done](const QJsonObject &, const QString &code, const QString &message) {
                         if (done)
                             done(code.isEmpty() ? QString() : errorText(code, message));
                     });
}

void ConsoleSession::setSetting(const QString &name, const QString &value,
                                std::function<void(const QString &, const QString &)> done)
{
    m_client.request(QLatin1String(admin::methodSetSetting), {{QLatin1String("name"), name}, {QLatin1String("value"), value}},
                     [done](const QJsonObject &result, const QString &code, const QString &message) {
                         if (!code.isEmpty()) {
                             done(errorText(code, message), {});
                             return;
                         }
                         QString note = result.value(QLatin1String("appliedLive")).toBool()
                                 ? tr("applied now and saved")
                                 : tr("saved; applies after a restart");
                         if (const QString extra = result.value(QLatin1String("note")).toString(); !extra.isEmpty())
                             note += QStringLiteral(" (%1)").arg(extra);
                         done({}, note);
                     });
}

} // namespace cmcp
