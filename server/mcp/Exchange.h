#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

namespace cmcp {

// One inbound payload (a message or a batch) and the way back to the client that sent it.
// Each transport implements it: a POST's response (JSON or an SSE stream) for Streamable HTTP,
// the session's event stream for legacy SSE, stdout for stdio.
class Exchange
{
public:
    virtual ~Exchange() = default;
    // A notification or a server-to-client request that belongs to one of the payload's requests
    // (progress, log messages, sampling). Sent while the payload is being answered.
    virtual void sendRelated(const QJsonObject &message) = 0;
    // Every request of the payload is settled. `responses` is one response object, an array for a
    // batch, or undefined when nothing is to be answered (all requests were cancelled).
    virtual void complete(const QJsonValue &responses) = 0;
    // The same with the responses already serialized as compact JSON (an object, or an array for
    // a batch): large tool results travel as bytes. Transports write them as they are; the default
    // parses them back for complete().
    virtual void completeSerialized(const QByteArray &responses)
    {
        const QJsonDocument document = QJsonDocument::fromJson(responses);
        complete(document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object()));
    }
    // The server asks the client to come back for the rest (SEP-1699 polling): end the live
    // stream now and keep what follows for the client's reconnection. Transports that cannot
    // resume keep the channel open instead.
    virtual void suspend() { }
};

// Messages that belong to no client request (list changes, resource updates) take the session's
// own channel: the GET stream for Streamable HTTP, the event stream for SSE, stdout for stdio.
class SessionChannel
{
public:
    virtual ~SessionChannel() = default;
    virtual void sendUnrelated(const QJsonObject &message) = 0;
};

} // namespace cmcp
