#pragma once

#include <QString>

namespace cmcp {

// The sentence strerror gives for the errno value `error` ("No such file or directory"), in
// the locale's encoding: how every error message of the daemon words a failed system call.
QString errnoText(int error);

// The errno value's symbol ("ENOENT"), or "errno <n>" for a value without one: for reasons
// that people grep and compare across hosts, where a translated sentence would differ.
QString errnoName(int error);

} // namespace cmcp
