#include "CallDetail.h"

#include "CallStatus.h"

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

QString callDetailText(const QJsonObject &call)
{
    if (call.isEmpty())
        return {};
    const auto field = [&call](const char *key) { return call.value(QLatin1String(key)).toString(); };
    QString text;
    text += tr("Call %1: %2 — %3\n")
                    .arg(qint64(call.value(QLatin1String("callId")).toDouble()))
                    .arg(field("tool"), statusLabel(field("status")));
    text += tr("Session %1 (%2), client %3\n").arg(field("sessionId"), field("transport"), field("clientName"));
    text += tr("Started %1").arg(field("startedAt"));
    if (call.contains(QLatin1String("durationMs")))
        text += tr(", took %1 ms").arg(qint64(call.value(QLatin1String("durationMs")).toDouble()));
    else if (call.contains(QLatin1String("elapsedMs")))
        text += tr(", running: %1 s so far, %2 bytes of output")
                        .arg(call.value(QLatin1String("elapsedMs")).toDouble() / 1000.0, 0, 'f', 1)
                        .arg(qint64(call.value(QLatin1String("outputBytes")).toDouble()));
    text += u'\n';
    if (!field("detail").isEmpty())
        text += tr("Detail: %1\n").arg(field("detail"));
    text += tr("\nArguments:\n") + indentedJson(call.value(QLatin1String("arguments")).toObject()) + u'\n';
    if (call.contains(QLatin1String("accounting")))
        text += tr("\nResult:\n") + indentedJson(call.value(QLatin1String("accounting")).toObject()) + u'\n';
    if (call.contains(QLatin1String("outputHead")))
        text += tr("\nOutput (head):\n") + field("outputHead") + u'\n';
    if (call.contains(QLatin1String("outputTail")))
        text += tr("\nOutput (tail):\n") + field("outputTail") + u'\n';
    return text;
}

} // namespace cmcp
