#pragma once

#include <cstddef>
#include <functional>

namespace cmcp {

enum class ReadEnd {
    WouldBlock, // everything there was read; more may come
    EndOfFile, // the writer closed: a notifier on the descriptor would now fire forever
    Failed, // errno says why
};

// Reads what a non-blocking descriptor holds now, handing each chunk to `sink`, going on after
// EINTR, until it would block or ends. Plain libc, no Qt.
ReadEnd readAvailable(int fd, const std::function<void(const char *data, std::size_t size)> &sink);

} // namespace cmcp
