#include "common/AdminSessionRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::member;

constexpr auto kSession = json::fields(member("sessionId", &SessionRecord::sessionId),
                                       member("transport", &SessionRecord::transport),
                                       member("clientName", &SessionRecord::clientName),
                                       member("openedAt", &SessionRecord::openedAt),
                                       member("calls", &SessionRecord::calls));
constexpr auto kOpened = json::fields(member("sessionId", &SessionOpenedEvent::sessionId),
                                      member("transport", &SessionOpenedEvent::transport),
                                      member("openedAt", &SessionOpenedEvent::openedAt));
constexpr auto kClosed = json::fields(member("sessionId", &SessionClosedEvent::sessionId),
                                      member("reason", &SessionClosedEvent::reason));
constexpr auto kClose = json::fields(member("sessionId", &CloseSessionParams::sessionId));

} // namespace

CMCP_ADMIN_RECORD_JSON(SessionRecord, kSession)

CMCP_ADMIN_RECORD_JSON(SessionOpenedEvent, kOpened)

CMCP_ADMIN_RECORD_JSON(SessionClosedEvent, kClosed)

QJsonObject CloseSessionParams::toJson() const
{
    return kClose.write(*this);
}

std::optional<CloseSessionParams> CloseSessionParams::fromJson(const QJsonObject &object)
{
    CloseSessionParams params = kClose.read(object);
    if (params.sessionId.isEmpty())
        return std::nullopt;
    return params;
}

} // namespace cmcp::admin
