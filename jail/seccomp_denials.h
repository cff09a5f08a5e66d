// The monitor's side of the seccomp filter's user notifications: every call the job's filter
// denies arrives on the listener, is answered at once with the errno the filter stands for
// (deniedErrno, never "continue"), and is counted by syscall name. A call nobody denied never
// reaches it: the cost is nil for a job the filter refuses nothing.
#pragma once

#include "jail/protocol/Report.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cmcp::jail {

class SeccompDenials
{
public:
    enum class Answer {
        Answered, // a denied call was answered (or its task died meanwhile) and counted
        Gone, // its task was killed before it could be received: nothing waits
        Broken, // the listener failed: stop listening (the kernel then fails such calls)
    };
    // Receives one notification from `listener` and answers it.
    Answer answerOne(int listener);

    // By name, at most kMaxNames distinct syscalls (the filter denies fewer); calls beyond go
    // to unnamed().
    std::vector<SeccompDenial> counts() const;
    std::uint64_t unnamed() const { return m_unnamed; }

    static constexpr std::size_t kMaxNames = 64;

private:
    // (architecture, syscall number) -> calls answered.
    std::map<std::pair<std::uint32_t, int>, std::uint64_t> m_counts;
    std::uint64_t m_unnamed = 0;
};

} // namespace cmcp::jail
