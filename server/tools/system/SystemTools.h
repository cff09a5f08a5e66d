#pragma once

#include "tools/common/ToolFamily.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace cmcp {

// Registers system_run_command, system_run_python and system_env_var on `server`. Resolves the
// allowed programs and the interpreter (with the files each needs) once, here; false with a
// reason when one cannot be used, which must stop start-up. With `live`, the BASH_* and PYTHON_*
// policies can be replaced while the daemon runs. The jobs run through the server's JobRunner.
bool registerSystemTools(const ToolFamily &family, QString *error);

// {"command": {"program", "arguments", "policy"}, "python": {"program", "policy"}}: the
// programs and policies (a command job reads its command on standard input) (without uid and gid)
// the two tools' jobs run under, for cmcpd --print-job-policies and the security tests that run
// them through cmcp-jail directly, past the daemon's pre-check.
std::optional<QJsonObject> systemJobPolicies(const Settings &settings,
                                             const SandboxCapabilities &capabilities,
                                             QString *error);

} // namespace cmcp
