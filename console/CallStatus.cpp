#include "console/CallStatus.h"

#include <QCoreApplication>

namespace cmcp {

QString statusLabel(const QString &status)
{
    if (status == u"running")
        return QCoreApplication::translate("CallStatus", "running");
    if (status == u"succeeded")
        return QCoreApplication::translate("CallStatus", "ok");
    if (status == u"failed")
        return QCoreApplication::translate("CallStatus", "failed");
    if (status == u"cancelled")
        return QCoreApplication::translate("CallStatus", "cancelled");
    if (status == u"invalid_arguments")
        return QCoreApplication::translate("CallStatus", "bad arguments");
    if (status == u"unknown_tool")
        return QCoreApplication::translate("CallStatus", "unknown tool");
    if (status == u"broke_output_schema")
        return QCoreApplication::translate("CallStatus", "bad output");
    if (status == u"input_required")
        return QCoreApplication::translate("CallStatus", "asked client");
    return status;
}

QColor statusColour(const QString &status)
{
    if (status == u"running")
        return QColor(0x1f, 0x6f, 0xd0); // blue
    if (status == u"succeeded")
        return QColor(0x2e, 0x8b, 0x3a); // green
    if (status == u"cancelled")
        return QColor(0xb0, 0x7a, 0x00); // amber
    if (status == u"input_required")
        return QColor(0x6a, 0x4c, 0x9c); // violet: waits for the client's retry, no failure
    return QColor(0xc6, 0x28, 0x28); // red: every kind of failure
}

} // namespace cmcp
