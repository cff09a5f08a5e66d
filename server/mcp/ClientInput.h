#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

// What a request asks of its client while it is served: the user (elicitation), the client's
// model (sampling) or its roots. The 2025 revisions send such a request to the client; the
// modern era (2026-07-28 on) has no requests from server to client, so the request is answered
// with an input_required result naming what it needs (multi round-trip requests), and the
// client retries it with the answers.
namespace cmcp {

// One question, under a key the client's answer is filed by.
struct InputRequest
{
    QString key;
    QString method; // elicitation/create, sampling/createMessage or roots/list
    QJsonObject params;
};

namespace clientinput {

// The client capability `method` needs (elicitation, sampling, roots), or empty when a server
// may not ask a client for it.
QString capabilityOf(const QString &method);
// The wire form of an input request: {method, params}.
QJsonObject describe(const QString &method, const QJsonObject &params);
// Why `answer` is not a valid client answer to `method` (an ElicitResult, CreateMessageResult
// or ListRootsResult), or empty when it is.
QString answerProblem(const QString &method, const QJsonValue &answer);

} // namespace clientinput
} // namespace cmcp
