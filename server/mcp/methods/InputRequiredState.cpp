#include "mcp/McpServer.h"

#include "mcp/ClientInput.h"
#include "mcp/methods/JsonFields.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QPointer>

namespace cmcp {

void McpServer::acceptClientAnswers(const QString &method)
{
    // Multi round-trip requests: a retry brings the answers, and the state it was handed.
    QJsonObject &paramsSchema = m_statelessMethods[method].paramsSchema;
    QJsonObject properties = paramsSchema.value(QLatin1String("properties")).toObject();
    properties.insert(QLatin1String("inputResponses"),
                      schema(R"({"type":"object","additionalProperties":{"type":"object"}})"));
    properties.insert(QLatin1String("requestState"), schema(R"({"type":"string"})"));
    paramsSchema.insert(QLatin1String("properties"), properties);
}

QJsonObject McpServer::stateBinding(const Request &request, const QString &name,
                                    const QJsonObject &arguments)
{
    const QByteArray digest = QCryptographicHash::hash(
            QJsonDocument(arguments).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256);
    return {{QLatin1String("method"), request.method},
            {QLatin1String("name"), name},
            {QLatin1String("arguments"), QString::fromLatin1(digest.toHex())},
            {QLatin1String("owner"), Session::ownerKey(request.session->principal())}};
}

std::optional<QJsonObject> McpServer::clientAnswers(const Request &request,
                                                    const QJsonObject &binding)
{
    QJsonObject answers;
    if (const QJsonValue state = request.params.value(QLatin1String("requestState"));
        !state.isUndefined()) {
        const auto opened =
                m_requestStates.open(state.toString(), QDateTime::currentMSecsSinceEpoch());
        if (const auto *problem = std::get_if<QString>(&opened)) {
            request.fail(jsonrpc::InvalidParams, QStringLiteral("params.") + *problem);
            return std::nullopt;
        }
        const QJsonObject &payload = std::get<QJsonObject>(opened);
        if (payload.value(QLatin1String("for")).toObject() != binding) {
            request.fail(jsonrpc::InvalidParams,
                         QStringLiteral("params.requestState was issued for another request (a "
                                        "different method, %1, arguments or principal)")
                                 .arg(request.method == QLatin1String("prompts/get")
                                              ? QLatin1String("prompt")
                                              : QLatin1String("tool")));
            return std::nullopt;
        }
        answers = payload.value(QLatin1String("answers")).toObject();
    }
    const QJsonObject responses = request.params.value(QLatin1String("inputResponses")).toObject();
    for (auto it = responses.begin(); it != responses.end(); ++it)
        answers.insert(it.key(), it.value());
    return answers;
}

QString McpServer::sealAnswers(const QJsonObject &binding, const QJsonObject &answers) const
{
    return m_requestStates.seal(
            {{QLatin1String("for"), binding}, {QLatin1String("answers"), answers}},
            QDateTime::currentMSecsSinceEpoch());
}

bool McpServer::replyInputRequired(const Request &request, const QList<InputRequest> &questions,
                                   const QJsonObject &answers, const QJsonObject &binding)
{
    QJsonObject missing;
    QJsonObject used;
    for (const InputRequest &question : questions) {
        const QString capability = clientinput::capabilityOf(question.method);
        if (!request.session->clientCapabilities().contains(capability)) {
            request.fail(jsonrpc::MissingRequiredClientCapability,
                         QStringLiteral("%1 needs the client capability %2, which this request's "
                                        "_meta does not declare")
                                 .arg(request.method, capability),
                         QJsonObject{{QLatin1String("requiredCapabilities"),
                                      QJsonObject{{capability, QJsonObject{}}}}});
            return true;
        }
        const QJsonValue answer = answers.value(question.key);
        if (!answer.isUndefined() && clientinput::answerProblem(question.method, answer).isEmpty())
            used.insert(question.key, answer);
        else
            missing.insert(question.key, clientinput::describe(question.method, question.params));
    }
    if (missing.isEmpty())
        return false;
    request.reply(QJsonObject{{QLatin1String("resultType"), QLatin1String("input_required")},
                              {QLatin1String("inputRequests"), missing},
                              {QLatin1String("requestState"), sealAnswers(binding, used)}});
    return true;
}

void McpServer::askInTurn(const Request &request, QList<InputRequest> questions,
                          QJsonObject answers, std::function<void(const QJsonObject &)> then)
{
    if (questions.isEmpty())
        return then(answers);
    const InputRequest question = questions.takeFirst();
    request.session->requestFromClient(
            request.key, question.method, question.params,
            [server = QPointer<McpServer>(this), request, questions, answers, then,
             key = question.key](const QJsonObject &result, const QString &error) mutable {
                if (!server)
                    return;
                if (!error.isEmpty())
                    return request.fail(jsonrpc::RequestFailed,
                                        QStringLiteral("%1 asked its client, and got no answer: %2")
                                                .arg(request.method, error));
                answers.insert(key, result);
                server->askInTurn(request, questions, answers, then);
            },
            60000);
}

} // namespace cmcp
