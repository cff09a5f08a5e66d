#pragma once

#include "common/AdminProtocol.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include <optional>

// The admin channel's records of MCP sessions: the sessions open, their opening and closing, and
// the request that closes one.
namespace cmcp::admin {

// The "session" object of a snapshot.
struct SessionRecord
{
    QString sessionId;
    QString transport;
    QString clientName;
    QDateTime openedAt;
    int calls = 0;

    QJsonObject toJson() const;
    static SessionRecord fromJson(const QJsonObject &object);
};

// A session opened: its client is not known yet (it names itself in its first call).
struct SessionOpenedEvent
{
    static constexpr const char *event = eventSessionOpened;

    QString sessionId;
    QString transport;
    QDateTime openedAt;

    QJsonObject toJson() const;
    static SessionOpenedEvent fromJson(const QJsonObject &object);
};

struct SessionClosedEvent
{
    static constexpr const char *event = eventSessionClosed;

    QString sessionId;
    QString reason;

    QJsonObject toJson() const;
    static SessionClosedEvent fromJson(const QJsonObject &object);
};

// closeSession: its reply's result is empty.
struct CloseSessionParams
{
    static constexpr const char *method = methodCloseSession;

    QString sessionId;

    QJsonObject toJson() const;
    // nullopt unless sessionId is a string that is not empty.
    static std::optional<CloseSessionParams> fromJson(const QJsonObject &object);
};

} // namespace cmcp::admin
