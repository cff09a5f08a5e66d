#pragma once

#include "sandbox/JobPolicy.h"

#include <QString>
#include <QStringView>

#include <optional>

namespace cmcp {

class Settings;

// What system_run_command and system_run_python are both configured with, each under its own
// prefix (BASH_TIMEOUT_MAX, PYTHON_TIMEOUT_MAX, …). Read in one place, so that the two tools
// cannot read or apply the same setting differently.
struct JobToolOptions
{
    int timeoutDefaultSeconds = 30; // <PREFIX>_TIMEOUT_DEFAULT
    int timeoutMaxSeconds = 120; // <PREFIX>_TIMEOUT_MAX
    JobNetwork network = JobNetwork::Off; // <PREFIX>_NETWORK
    QString apparmorProfile; // <PREFIX>_APPARMOR_PROFILE
    int warmJobs = 1; // <PREFIX>_WARM_JOBS

    // `prefix` is the tool's settings prefix without its underscore: "BASH" or "PYTHON".
    static JobToolOptions fromSettings(const Settings &settings, QStringView prefix);

    // The seconds a job may run: what the call asked for, else the default, never above the
    // maximum.
    int timeoutSeconds(std::optional<qint64> requested) const;
};

} // namespace cmcp
