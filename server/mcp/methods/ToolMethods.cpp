#include "mcp/McpServer.h"

#include "mcp/ProtocolVersion.h"
#include "mcp/RecordedCall.h"
#include "mcp/RunningCall.h"
#include "mcp/SchemaValidator.h"
#include "mcp/ToolCall.h"
#include "mcp/methods/JsonFields.h"

#include <QJsonArray>
#include <QPointer>

namespace cmcp {

namespace {

QJsonObject describeTool(const ToolDefinition &tool, const QString &version)
{
    QJsonObject object{{QLatin1String("name"), tool.name},
                       {QLatin1String("description"), tool.description},
                       {QLatin1String("inputSchema"), tool.inputSchema}};
    if (protocol::hasStructuredOutput(version)) {
        if (!tool.title.isEmpty())
            object.insert(QLatin1String("title"), tool.title);
        if (tool.outputSchema)
            object.insert(QLatin1String("outputSchema"), *tool.outputSchema);
    }
    if (protocol::hasToolAnnotations(version)) {
        QJsonObject annotations{{QLatin1String("readOnlyHint"), tool.annotations.readOnly},
                                {QLatin1String("destructiveHint"), tool.annotations.destructive},
                                {QLatin1String("idempotentHint"), tool.annotations.idempotent},
                                {QLatin1String("openWorldHint"), tool.annotations.openWorld}};
        if (!tool.title.isEmpty())
            annotations.insert(QLatin1String("title"), tool.title);
        object.insert(QLatin1String("annotations"), annotations);
    }
    if (protocol::isModern(version) && tool.taskSupport != TaskSupport::Forbidden)
        object.insert(QLatin1String("execution"),
                      QJsonObject{{QLatin1String("taskSupport"),
                                   tool.taskSupport == TaskSupport::Required
                                           ? QLatin1String("required")
                                           : QLatin1String("optional")}});
    return object;
}

} // namespace

void McpServer::addToolMethods()
{
    addMethod(QStringLiteral("tools/list"), &McpServer::listTools, schema(CursorOnlySchema));
    addMethod(QStringLiteral("tools/call"), &McpServer::callTool,
              schema(R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"},
            "arguments":{"type":"object"},"_meta":{"type":"object","properties":{"progressToken":{"type":["string","integer"]}}}}})"));
    acceptClientAnswers(QStringLiteral("tools/call"));
}

void McpServer::listTools(const Request &request)
{
    QJsonArray items;
    const QString &principal = request.session->principal().name();
    for (const ToolDefinition &tool : m_tools.tools()) {
        if (m_profiles.offersTool(principal, tool.name))
            items.append(describeTool(tool, request.session->protocolVersion()));
    }
    paginate(request, items, QStringLiteral("tools"));
}

void McpServer::callTool(const Request &request)
{
    const QString name = request.params.value(QLatin1String("name")).toString();
    const QJsonObject arguments = request.params.value(QLatin1String("arguments")).toObject();
    const QString &principal = request.session->principal().name();
    // A task's own call was counted and checked when the task was asked for.
    const bool taskRun = !request.session->taskId().isEmpty();
    if (!taskRun) {
        if (const qint64 waitMs = m_profiles.takeCall(principal); waitMs > 0) {
            refuseOverRate(request, name, arguments, waitMs);
            return;
        }
    }
    const bool offered = m_profiles.offersTool(principal, name);
    const ToolDefinition *tool = offered ? m_tools.find(name) : nullptr;
    const QJsonObject binding = stateBinding(request, name, arguments);
    QJsonObject answers;
    if (request.session->isStateless()) {
        const std::optional<QJsonObject> brought = clientAnswers(request, binding);
        if (!brought)
            return;
        answers = *brought;
        request.session->setInputAnswers(answers);
    }
    // The call of a task is recorded (and checked) where it runs, in the task's own session.
    if (tool && tool->taskSupport != TaskSupport::Forbidden && request.session->isStateless()
        && tasks::declared(request.session->clientCapabilities())) {
        startTask(request, *tool, answers);
        return;
    }
    RecordedCall recorded(*this, startCallRecord(request, name, arguments));
    if (!tool) {
        // A tool the profile does not offer is answered as one that does not exist, with the
        // reason added for the operator reading the audit log and the client alike.
        const QString message = offered
                ? QStringLiteral("unknown tool: %1").arg(name)
                : QStringLiteral("unknown tool: %1 (profile '%2' does not offer it: tools)")
                          .arg(name, m_profiles.profileName(principal));
        recorded.end(ToolCallOutcome::UnknownTool, offered ? QString() : message, nullptr,
                     [request, name, message] {
                         request.fail(jsonrpc::InvalidParams, message,
                                      QJsonObject{{QLatin1String("tool"), name}});
                     });
        return;
    }
    if (request.session->isStateless()) {
        QJsonObject missing;
        for (const QString &capability : tool->requiredClientCapabilities) {
            if (!request.session->clientCapabilities().contains(capability))
                missing.insert(capability, QJsonObject{});
        }
        if (!missing.isEmpty()) {
            const QString problem =
                    QStringLiteral("tool %1 needs the client capabilities %2, which this "
                                   "request's _meta does not declare")
                            .arg(name, missing.keys().join(QLatin1String(", ")));
            recorded.end(ToolCallOutcome::Failed, problem, nullptr, [request, problem, missing] {
                request.fail(jsonrpc::MissingRequiredClientCapability, problem,
                             QJsonObject{{QLatin1String("requiredCapabilities"), missing}});
            });
            return;
        }
        const bool tasksDeclared = tasks::declared(request.session->clientCapabilities());
        // A task's own call runs without the extension, lest it become a task again.
        if (tool->taskSupport == TaskSupport::Required && !tasksDeclared
            && request.session->taskId().isEmpty()) {
            const QString problem =
                    QStringLiteral("tool %1 runs only as a task, and this request's _meta does "
                                   "not declare the extension %2")
                            .arg(name, QLatin1String(tasks::ExtensionId));
            recorded.end(ToolCallOutcome::Failed, problem, nullptr, [request, problem] {
                request.fail(jsonrpc::MissingRequiredClientCapability, problem,
                             tasks::requiredCapabilityData());
            });
            return;
        }
    }
    const QString version = request.session->protocolVersion();
    const QString violation =
            SchemaValidator::validate(tool->inputSchema, arguments, QStringLiteral("arguments"));
    if (!violation.isEmpty()) {
        recorded.end(
                ToolCallOutcome::InvalidArguments, violation, nullptr,
                [request, version, name, violation] {
                    // Since 2025-11-25 the specification wants invalid arguments reported as a
                    // tool error, so that the model can correct itself; earlier revisions use
                    // -32602.
                    if (protocol::atLeast(version, protocol::V2025_11_25)) {
                        request.reply(QJsonObject{
                                {QLatin1String("content"),
                                 ToolResult::error(QStringLiteral("invalid arguments for %1: %2")
                                                           .arg(name, violation))
                                         .content},
                                {QLatin1String("isError"), true}});
                    } else {
                        request.fail(jsonrpc::InvalidParams, violation);
                    }
                });
        return;
    }

    if (const QString refusal = failClosedReason(); !refusal.isEmpty()) {
        const ToolResult refused = ToolResult::error(refusal);
        recorded.end(ToolCallOutcome::Failed, refusal, &refused,
                     [request, content = refused.content] {
                         request.reply(QJsonObject{{QLatin1String("content"), content},
                                                   {QLatin1String("isError"), true}});
                     });
        return;
    }

    auto running =
            std::make_shared<RunningCall>(std::move(recorded), request.session, request.key,
                                          request.serial, request.id, version, tool->outputSchema);
    const QJsonValue progressToken = request.params.value(QLatin1String("_meta"))
                                             .toObject()
                                             .value(QLatin1String("progressToken"));
    auto call = std::make_shared<ToolCall>(
            request.session, request.key, name, arguments, progressToken,
            [running](const ToolResult &result) { running->finish(result); });
    // A task's call waits for its answers in the task instead.
    if (request.session->isStateless() && request.session->taskId().isEmpty())
        call->setInputRequiredHandler([server = QPointer<McpServer>(this), running, binding,
                                       session = std::weak_ptr<Session>(request.session)](
                                              const QJsonObject &inputRequests) {
            const auto asking = session.lock();
            if (!server || !asking)
                return;
            running->finishInputRequired(inputRequests,
                                         server->sealAnswers(binding, asking->usedInputAnswers()));
        });
    // Whichever comes first, the tool's result or the cancellation, ends the record.
    request.session->setCancelHandler(request.key, [call, running](const QString &reason) {
        if (!call->isFinished() && !call->isCancelled())
            running->endCancelled(reason);
        call->cancel(reason);
    });
    const quint64 callId = running->record().callId;
    m_running.emplace(callId, std::move(running));
    connect(call.get(), &ToolCall::outputReported, this,
            [this, callId](qint64 outputBytes) { Q_EMIT toolCallOutput(callId, outputBytes); });
    // A copy: a handler that changes the tool list would otherwise run from moved storage.
    const ToolHandler handler = tool->handler;
    handler(call);
}

void McpServer::refuseOverRate(const Request &request, const QString &name,
                               const QJsonObject &arguments, qint64 waitMs)
{
    const QString profile = m_profiles.profileName(request.session->principal().name());
    const QString message = QStringLiteral("too many calls: profile '%1' allows %2 calls a "
                                           "second (call_rate); retry in %3 ms")
                                    .arg(profile)
                                    .arg(m_profiles.profileOf(request.session->principal().name())
                                                 ->callRate->perSecond)
                                    .arg(waitMs);
    const QJsonObject data{{QLatin1String("retryAfterMs"), waitMs},
                           {QLatin1String("profile"), profile},
                           {QLatin1String("rule"), QLatin1String("call_rate")}};
    RecordedCall recorded(*this, startCallRecord(request, name, arguments));
    recorded.end(ToolCallOutcome::Failed, message, nullptr,
                 [request, message, data] { request.fail(jsonrpc::RateLimited, message, data); });
}

} // namespace cmcp
