// The notifications are received and answered with the kernel's two ioctls directly:
// libseccomp's seccomp_notify_receive/respond turn every failure into ECANCELED, and the
// monitor must tell "the task is gone" (ENOENT, carry on) from a failing listener.
#include "jail/seccomp_denials.h"

#include "jail/seccomp_filter.h"

#include <seccomp.h>

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cmcp::jail {

SeccompDenials::Answer SeccompDenials::answerOne(int listener)
{
    // The kernel refuses (EINVAL) a request buffer that is not all zeroes.
    seccomp_notif request{};
    int rc;
    do
        rc = ::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &request);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return errno == ENOENT ? Answer::Gone : Answer::Broken;
    // Only the jail's own filter notifies this listener (a job cannot add a filter with a
    // listener of its own below it: the kernel refuses a second one with EBUSY), and a job's
    // own filter that denies the call outranks the notification, so it never arrives here.
    seccomp_notif_resp response{};
    response.id = request.id;
    response.error = -deniedErrno(request.data.nr);
    response.val = 0;
    response.flags = 0; // never SECCOMP_USER_NOTIF_FLAG_CONTINUE: the call stays denied
    do
        rc = ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
    while (rc != 0 && errno == EINTR);
    // ENOENT: the task was killed meanwhile; the call was denied all the same.
    if (rc != 0 && errno != ENOENT)
        return Answer::Broken;

    const auto key = std::make_pair(request.data.arch, request.data.nr);
    if (auto it = m_counts.find(key); it != m_counts.end())
        ++it->second;
    else if (m_counts.size() < kMaxNames)
        m_counts.emplace(key, 1);
    else
        ++m_unnamed;
    return Answer::Answered;
}

std::vector<SeccompDenial> SeccompDenials::counts() const
{
    std::vector<SeccompDenial> out;
    for (const auto &[key, count] : m_counts) {
        SeccompDenial entry;
        char *name = seccomp_syscall_resolve_num_arch(key.first, key.second);
        entry.syscall = name ? name : "syscall " + std::to_string(key.second);
        std::free(name);
        const int err = deniedErrno(key.second);
        const char *errnoName = ::strerrorname_np(err);
        entry.errnoName = errnoName ? errnoName : std::to_string(err);
        entry.count = std::int64_t(count);
        out.push_back(std::move(entry));
    }
    return out;
}

} // namespace cmcp::jail
