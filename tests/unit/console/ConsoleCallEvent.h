// A tool call as the admin channel describes it to the console, for the console's tests.
#pragma once

#include "common/AdminCallRecords.h"

#include <QJsonObject>
#include <QString>

inline QJsonObject consoleCallEvent(qint64 id, const QString &status,
                                    const QString &tool = QStringLiteral("file_read"))
{
    QJsonObject object{{"callId", double(id)},
                       {"sessionId", "abcdef0123456789"},
                       {"clientName", "client"},
                       {"tool", tool},
                       {"arguments", QJsonObject{{"path", "notes.txt"}}},
                       {"startedAt", "2026-01-01T10:00:00.000Z"},
                       {"status", status}};
    if (status != u"running")
        object.insert("durationMs", 12);
    return object;
}

// The same call as the console's models take it, read from the event.
inline cmcp::admin::CallRecord consoleCall(qint64 id, const QString &status,
                                           const QString &tool = QStringLiteral("file_read"))
{
    return cmcp::admin::CallRecord::fromJson(consoleCallEvent(id, status, tool));
}
