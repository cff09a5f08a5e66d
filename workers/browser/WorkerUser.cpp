#include "workers/browser/WorkerUser.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace cmcp {

namespace {

bool parseId(const char *text, unsigned long &value)
{
    if (!text || !*text)
        return false;
    char *end = nullptr;
    errno = 0;
    value = std::strtoul(text, &end, 10);
    // 0 is root and (uid_t)-1 means "unchanged" to the set*id calls: neither is a worker user.
    return errno == 0 && *end == '\0' && text[0] != '-' && value != 0 && value < 4294967295UL;
}

// The value of --name N or --name=N at argv[i], advancing i past it; nullptr if argv[i] is
// another argument.
const char *optionValue(int argc, char **argv, int &i, const char *name, bool &present)
{
    const size_t length = std::strlen(name);
    if (std::strncmp(argv[i], name, length) != 0)
        return nullptr;
    if (argv[i][length] == '=') {
        present = true;
        return argv[i] + length + 1;
    }
    if (argv[i][length] != '\0')
        return nullptr;
    present = true;
    return i + 1 < argc ? argv[++i] : nullptr;
}

std::string errnoText(const char *what)
{
    return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

bool parseWorkerUser(int argc, char **argv, WorkerUser &user, bool &found, std::string &error)
{
    bool uidGiven = false;
    bool gidGiven = false;
    for (int i = 1; i < argc; ++i) {
        bool present = false;
        unsigned long value = 0;
        if (const char *text = optionValue(argc, argv, i, "--uid", present); present) {
            if (!parseId(text, value)) {
                error = "--uid needs a user id other than 0";
                return false;
            }
            user.uid = uid_t(value);
            uidGiven = true;
        } else if (const char *text = optionValue(argc, argv, i, "--gid", present); present) {
            if (!parseId(text, value)) {
                error = "--gid needs a group id other than 0";
                return false;
            }
            user.gid = gid_t(value);
            gidGiven = true;
        }
    }
    if (uidGiven != gidGiven) {
        error = "--uid and --gid go together";
        return false;
    }
    found = uidGiven;
    return true;
}

bool becomeWorkerUser(const WorkerUser &user, std::string &error)
{
    if (::setgroups(0, nullptr) != 0) {
        error = errnoText("setgroups(0)");
        return false;
    }
    if (::setresgid(user.gid, user.gid, user.gid) != 0) {
        error = errnoText("setresgid");
        return false;
    }
    if (::setresuid(user.uid, user.uid, user.uid) != 0) {
        error = errnoText("setresuid");
        return false;
    }
    if (::setuid(0) == 0 || ::setgid(0) == 0) {
        error = "root could be regained after the drop";
        return false;
    }
    // The change of user made the process non-dumpable, which leaves its /proc files owned by
    // root: Chromium's check for user namespaces then fails (its child cannot write its own
    // uid_map) and the renderers lose their namespace sandbox. Dumpable is what the program
    // would be had it been started as this user; only this user's processes gain anything.
    if (::prctl(PR_SET_DUMPABLE, 1) != 0) {
        error = errnoText("prctl(PR_SET_DUMPABLE)");
        return false;
    }
    return true;
}

} // namespace cmcp
