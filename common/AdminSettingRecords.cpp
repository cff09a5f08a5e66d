#include "common/AdminSettingRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::member;

constexpr auto kSetting = json::fields(
        member("name", &SettingRecord::name), member("group", &SettingRecord::group),
        member("type", &SettingRecord::type), member("value", &SettingRecord::value),
        member("origin", &SettingRecord::origin), member("help", &SettingRecord::help),
        member("allowed", &SettingRecord::allowed), member("choices", &SettingRecord::choices),
        member("live", &SettingRecord::live), member("secret", &SettingRecord::secret));
constexpr auto kSettingChanged = json::fields(member("setting", &SettingChangedEvent::setting));
constexpr auto kSetSetting = json::fields(member("name", &SetSettingParams::name),
                                          member("value", &SetSettingParams::value));
constexpr auto kSetSettingResult =
        json::fields(member("setting", &SetSettingResult::setting),
                     member("appliedLive", &SetSettingResult::appliedLive),
                     member("restartRequired", &SetSettingResult::restartRequired),
                     member("note", &SetSettingResult::note));

} // namespace

CMCP_ADMIN_RECORD_JSON(SettingRecord, kSetting)

CMCP_ADMIN_RECORD_JSON(SettingChangedEvent, kSettingChanged)

QJsonObject SetSettingParams::toJson() const
{
    return kSetSetting.write(*this);
}

std::optional<SetSettingParams> SetSettingParams::fromJson(const QJsonObject &object)
{
    const QString name = json::text(object, "name");
    const QJsonValue value = json::field(object, "value");
    if (name.isEmpty() || !value.isString())
        return std::nullopt;
    return SetSettingParams{name, value.toString()};
}

CMCP_ADMIN_RECORD_JSON(SetSettingResult, kSetSettingResult)

} // namespace cmcp::admin
