#include "console/CallDetail.h"

#include "console/CallStatus.h"

#include <QCoreApplication>
#include <QJsonDocument>

namespace cmcp {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("CallDetail", text);
}

QString indentedJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented)).trimmed();
}

} // namespace

QString callDetailText(const admin::CallRecord &call)
{
    QString text;
    text += tr("Call %1: %2 — %3\n").arg(call.callId).arg(call.tool, statusLabel(call.status));
    text += tr("Session %1 (%2), client %3\n").arg(call.sessionId, call.transport, call.clientName);
    text += tr("Started %1").arg(call.startedAt.toString(Qt::ISODateWithMs));
    if (call.durationMs)
        text += tr(", took %1 ms").arg(*call.durationMs);
    else if (call.figures)
        text += tr(", running: %1 s so far, %2 bytes of output")
                        .arg(double(call.figures->elapsedMs) / 1000.0, 0, 'f', 1)
                        .arg(call.figures->outputBytes);
    text += u'\n';
    if (!call.detail.isEmpty())
        text += tr("Detail: %1\n").arg(call.detail);
    text += tr("\nArguments:\n") + indentedJson(call.arguments) + u'\n';
    if (call.accounting)
        text += tr("\nResult:\n") + indentedJson(*call.accounting) + u'\n';
    if (call.outputHead)
        text += tr("\nOutput (head):\n") + *call.outputHead + u'\n';
    if (call.outputTail)
        text += tr("\nOutput (tail):\n") + *call.outputTail + u'\n';
    return text;
}

} // namespace cmcp
