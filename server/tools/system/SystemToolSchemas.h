#pragma once

#include <QJsonObject>

// Input and output schemas of system_run_command, system_run_python and system_env_var. The
// result names are the original's (stdout, stderr, exit_code, success; output, error, result,
// success; variables, requested_var), with the job's accounting record beside them.
namespace cmcp::systemschemas {

QJsonObject commandInput();
QJsonObject commandOutput();
QJsonObject pythonInput();
QJsonObject pythonOutput();
QJsonObject envInput();
QJsonObject envOutput();

} // namespace cmcp::systemschemas
