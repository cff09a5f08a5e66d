#pragma once

#include <string>

namespace cmcp {

// Whether Chromium's own sandbox can work in this process: it needs an unprivileged user
// namespace in which it may write its id maps and chroot. Some systems refuse that (the
// sysctls that forbid unprivileged user namespaces, or Ubuntu's AppArmor restriction of them
// to profiled programs); Chromium would then refuse to start at all. Checked in a child
// process, before any thread exists. False with the reason when the sandbox cannot work.
bool chromiumSandboxUsable(std::string &whyNot);

} // namespace cmcp
