#include "managers/JobToolOptions.h"

#include "common/Settings.h"

namespace cmcp {

JobToolOptions JobToolOptions::fromSettings(const Settings &settings, QStringView prefix)
{
    const auto name = [prefix](const char *suffix) {
        return prefix.toString() + QLatin1Char('_') + QLatin1String(suffix);
    };
    JobToolOptions options;
    options.timeoutDefaultSeconds = int(settings.integer(name("TIMEOUT_DEFAULT")));
    options.timeoutMaxSeconds = int(settings.integer(name("TIMEOUT_MAX")));
    options.network = JobPolicy::networkFromSetting(settings.text(name("NETWORK")));
    options.apparmorProfile = settings.text(name("APPARMOR_PROFILE"));
    options.warmJobs = int(settings.integer(name("WARM_JOBS")));
    return options;
}

int JobToolOptions::timeoutSeconds(std::optional<qint64> requested) const
{
    return int(qMin<qint64>(requested.value_or(timeoutDefaultSeconds), timeoutMaxSeconds));
}

} // namespace cmcp
