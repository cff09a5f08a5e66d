#include "mcp/Session.h"

#include "mcp/ClientInput.h"
#include "mcp/JsonRpc.h"
#include "mcp/JsonWriter.h"

#include <QJsonArray>
#include <QTimer>

namespace cmcp {

namespace {

// Every result of the modern era says whether it is final (complete, unless it says otherwise:
// input_required, task).
QJsonObject withResultType(QJsonObject response)
{
    auto result = response.find(QLatin1String("result"));
    if (result == response.end())
        return response;
    QJsonObject body = result->toObject();
    if (!body.contains(QLatin1String("resultType"))) {
        body.insert(QLatin1String("resultType"), QLatin1String("complete"));
        *result = body;
    }
    return response;
}

} // namespace

Session::Session(const QString &id, const QString &transportName, SessionChannel *channel,
                 Principal principal)
    : m_id(id),
      m_transportName(transportName),
      m_channel(channel),
      m_principal(std::move(principal))
{
    m_idle.start();
}

Session::~Session() = default;

void Session::setNegotiated(const QString &version, const QJsonObject &clientInfo)
{
    m_protocolVersion = version;
    m_clientInfo = clientInfo;
}

void Session::addStatelessRequest(const QString &idKey, const std::shared_ptr<Session> &request)
{
    for (auto it = m_statelessRequests.begin(); it != m_statelessRequests.end();)
        it = it->expired() ? m_statelessRequests.erase(it) : std::next(it);
    m_statelessRequests.insert(idKey, request);
}

std::shared_ptr<Session> Session::statelessRequest(const QString &idKey) const
{
    return m_statelessRequests.value(idKey).lock();
}

quint64 Session::beginRequest(const QString &idKey, std::shared_ptr<PayloadTracker> tracker)
{
    tracker->expect(idKey);
    const quint64 serial = m_nextRequestSerial++;
    m_inFlight.insert_or_assign(idKey, InFlight{std::move(tracker), serial, {}});
    return serial;
}

void Session::setCancelHandler(const QString &idKey, std::function<void(const QString &)> handler)
{
    auto it = m_inFlight.find(idKey);
    if (it != m_inFlight.end())
        it->second.cancel = std::move(handler);
}

void Session::cancelRequest(const QString &idKey, const QString &reason,
                            const std::optional<QJsonObject> &response)
{
    auto it = m_inFlight.find(idKey);
    if (it == m_inFlight.end())
        return;
    // The client asked for no response: settle first so a late result is ignored, then stop the
    // work.
    auto cancel = std::move(it->second.cancel);
    settleRequest(idKey, it->second.serial, response);
    if (cancel)
        cancel(reason);
}

void Session::settleRequest(const QString &idKey, quint64 serial,
                            const std::optional<QJsonObject> &response)
{
    auto it = m_inFlight.find(idKey);
    if (it == m_inFlight.end() || it->second.serial != serial)
        return;
    std::shared_ptr<PayloadTracker> tracker = std::move(it->second.tracker);
    m_inFlight.erase(it);
    tracker->settle(idKey, m_stateless && response ? withResultType(*response) : response);
    if (m_inFlight.empty())
        Q_EMIT allSettled();
}

void Session::settleRequest(const QString &idKey, quint64 serial,
                            const QByteArray &serializedResponse)
{
    auto it = m_inFlight.find(idKey);
    if (it == m_inFlight.end() || it->second.serial != serial)
        return;
    std::shared_ptr<PayloadTracker> tracker = std::move(it->second.tracker);
    m_inFlight.erase(it);
    tracker->settle(idKey, serializedResponse);
    if (m_inFlight.empty())
        Q_EMIT allSettled();
}

void Session::sendRelated(const QString &idKey, const QJsonObject &message)
{
    auto it = m_inFlight.find(idKey);
    if (it != m_inFlight.end())
        it->second.tracker->sendRelated(message);
}

void Session::suspendRelated(const QString &idKey)
{
    auto it = m_inFlight.find(idKey);
    if (it != m_inFlight.end())
        it->second.tracker->suspend();
}

void Session::requestFromClient(const QString &relatedIdKey, const QString &method,
                                const QJsonObject &params, ClientReply reply, int timeoutMs,
                                const QString &inputKey)
{
    if (m_closed) {
        reply({}, QStringLiteral("the session has ended"));
        return;
    }
    if (m_stateless) {
        askStatelessClient(method, params, std::move(reply), inputKey);
        return;
    }
    // Ids of our own requests are never reused within a session.
    const QJsonValue id = QStringLiteral("cmcp-%1").arg(m_nextOutgoingId++);
    const QString key = jsonrpc::idKey(id);
    auto timer = std::make_unique<QTimer>();
    timer->setSingleShot(true);
    QObject::connect(timer.get(), &QTimer::timeout, this, [this, key, method, timeoutMs] {
        failOutgoing(key,
                     QStringLiteral("the client did not answer %1 within %2 ms")
                             .arg(method)
                             .arg(timeoutMs));
    });
    timer->start(timeoutMs);
    m_outgoing.emplace(key, Outgoing{std::move(reply), std::move(timer)});

    const QJsonObject request = jsonrpc::makeRequest(id, method, params);
    if (m_inFlight.contains(relatedIdKey))
        sendRelated(relatedIdKey, request);
    else
        sendUnrelated(request);
}

bool Session::deliverClientResponse(const QJsonObject &response)
{
    const QString key = jsonrpc::idKey(response.value(QLatin1String("id")));
    auto it = m_outgoing.find(key);
    if (it == m_outgoing.end())
        return false;
    ClientReply reply = std::move(it->second.reply);
    m_outgoing.erase(it);
    if (response.contains(QLatin1String("error"))) {
        const QJsonObject error = response.value(QLatin1String("error")).toObject();
        reply({},
              QStringLiteral("the client answered with error %1: %2")
                      .arg(error.value(QLatin1String("code")).toInt())
                      .arg(error.value(QLatin1String("message")).toString()));
    } else {
        reply(response.value(QLatin1String("result")).toObject(), {});
    }
    return true;
}

void Session::askStatelessClient(const QString &method, const QJsonObject &params,
                                 ClientReply reply, const QString &inputKey)
{
    const QString capability = clientinput::capabilityOf(method);
    if (capability.isEmpty()) {
        reply({},
              QStringLiteral("%1 is not a request a server may make of its client").arg(method));
        return;
    }
    if (!m_clientCapabilities.contains(capability)) {
        reply({},
              QStringLiteral("this request's _meta does not declare the client capability %1, "
                             "so %2 cannot be asked")
                      .arg(capability, method));
        return;
    }
    // Made up in the order of asking, so that the same call asks under the same keys again
    // when its client retries it.
    const QString key =
            inputKey.isEmpty() ? QStringLiteral("input-%1").arg(++m_inputRequestsMade) : inputKey;
    const QJsonObject request = clientinput::describe(method, params);
    if (!m_inputAnswers.contains(key)) {
        if (m_inputParking)
            m_inputParking(key, request, std::move(reply));
        else
            m_pendingInput.insert(key, request);
        return;
    }
    const QJsonValue answer = m_inputAnswers.value(key);
    const QString problem = clientinput::answerProblem(method, answer);
    if (problem.isEmpty())
        m_usedInputAnswers.insert(key, answer);
    // Later, as an answer from the client would come: the asker may not expect it inside
    // its own call.
    QTimer::singleShot(0, this, [reply = std::move(reply), answer, problem, key] {
        if (problem.isEmpty())
            reply(answer.toObject(), {});
        else
            reply({},
                  QStringLiteral("the client's answer to %1 is not valid: %2").arg(key, problem));
    });
}

void Session::failOutgoing(const QString &key, const QString &error)
{
    auto it = m_outgoing.find(key);
    if (it == m_outgoing.end())
        return;
    ClientReply reply = std::move(it->second.reply);
    m_outgoing.erase(it);
    reply({}, error);
}

void Session::sendUnrelated(const QJsonObject &message)
{
    if (!m_closed && m_channel)
        m_channel->sendUnrelated(message);
}

void Session::close(const QString &reason)
{
    if (m_closed)
        return;
    m_closed = true;
    m_channel = nullptr;
    QStringList inFlight;
    for (const auto &[key, request] : m_inFlight)
        inFlight.append(key);
    for (const QString &key : inFlight)
        cancelRequest(key, reason);
    while (!m_outgoing.empty())
        failOutgoing(m_outgoing.begin()->first, QStringLiteral("the session has ended"));
}

PayloadTracker::PayloadTracker(std::shared_ptr<Exchange> exchange, bool batch)
    : m_exchange(std::move(exchange)),
      m_batch(batch)
{
}

void PayloadTracker::expect(const QString &idKey)
{
    m_pending.insert(idKey);
    m_expectsReply = true;
}

void PayloadTracker::addResponse(const QJsonObject &response)
{
    m_responses.append({response, {}});
    m_expectsReply = true;
}

void PayloadTracker::seal()
{
    m_sealed = true;
    finishIfDone();
}

void PayloadTracker::settle(const QString &idKey, const std::optional<QJsonObject> &response)
{
    if (!m_pending.remove(idKey))
        return;
    if (response)
        m_responses.append({*response, {}});
    finishIfDone();
}

void PayloadTracker::settle(const QString &idKey, const QByteArray &serializedResponse)
{
    if (!m_pending.remove(idKey))
        return;
    m_responses.append({{}, serializedResponse});
    m_anySerialized = true;
    finishIfDone();
}

void PayloadTracker::finishIfDone()
{
    if (!m_sealed || !m_expectsReply || m_completed || !m_pending.isEmpty())
        return;
    m_completed = true;
    if (m_responses.isEmpty()) {
        m_exchange->complete(QJsonValue::Undefined);
    } else if (m_anySerialized) {
        // Serialized responses are joined as bytes, never parsed back into objects.
        auto append = [](QByteArray &out, const Response &response) {
            if (response.json.isEmpty())
                json::appendObject(out, response.object);
            else
                out += response.json;
        };
        if (!m_batch) {
            const Response &response = m_responses.first();
            m_exchange->completeSerialized(
                    response.json.isEmpty() ? json::serialize(response.object) : response.json);
            return;
        }
        QByteArray out;
        qsizetype size = 2;
        for (const Response &response : std::as_const(m_responses))
            size += response.json.size() + 256;
        out.reserve(size);
        out += '[';
        for (qsizetype i = 0; i < m_responses.size(); ++i) {
            if (i)
                out += ',';
            append(out, m_responses.at(i));
        }
        out += ']';
        m_exchange->completeSerialized(out);
    } else if (m_batch) {
        QJsonArray array;
        for (const Response &response : std::as_const(m_responses))
            array.append(response.object);
        m_exchange->complete(array);
    } else {
        m_exchange->complete(m_responses.first().object);
    }
}

} // namespace cmcp
