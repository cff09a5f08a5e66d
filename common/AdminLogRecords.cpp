#include "common/AdminLogRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::member;

constexpr auto kLogLine =
        json::fields(member("level", &LogLineEvent::level), member("logger", &LogLineEvent::logger),
                     member("text", &LogLineEvent::text), member("time", &LogLineEvent::time));
constexpr auto kSubscribe = json::fields(member("level", &SubscribeLogParams::level));
constexpr auto kSubscribed = json::fields(member("level", &SubscribeLogResult::level));

} // namespace

CMCP_ADMIN_RECORD_JSON(LogLineEvent, kLogLine)

CMCP_ADMIN_RECORD_JSON(SubscribeLogParams, kSubscribe)

CMCP_ADMIN_RECORD_JSON(SubscribeLogResult, kSubscribed)

} // namespace cmcp::admin
