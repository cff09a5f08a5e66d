// cmcp-bench's measurement harness: the clock, the deadlines that bound every loop, progress
// notes on stderr, the statistics of a run's samples and how the figures are printed.
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace cmcp::bench {

using Clock = std::chrono::steady_clock;

inline double usBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::micro>(b - a).count();
}

// A progress line on stderr (stdout carries only the report).
void note(const char *format, ...);

struct Deadline
{
    Clock::time_point end;
    static Deadline in(double seconds)
    {
        return {Clock::now() + std::chrono::microseconds(qint64(seconds * 1e6))};
    }
    bool passed() const { return Clock::now() >= end; }
    int msLeft() const
    {
        const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
        return int(std::clamp<qint64>(left, 0, 1000000));
    }
    // The earlier of this deadline and one `seconds` from now.
    Deadline capped(double seconds) const
    {
        const Deadline other = in(seconds);
        return other.end < end ? other : *this;
    }
};

struct Stats
{
    size_t n = 0;
    double p50 = NAN, p99 = NAN, mean = NAN, max = NAN;
};

Stats statsOf(std::vector<double> samples);
// The median of the values that are not NaN; NaN when there are none.
double median(std::vector<double> values);
// `v` with `decimals` decimals, "–" for NaN (a figure that was not measured).
std::string num(double v, int decimals = 1);

// One run of a latency part: a sample per call, and the daemon's CPU time per call.
struct Run
{
    std::vector<double> samples; // µs
    double serverCpuUs = NAN; // the daemon's CPU time per call
    std::string error;
};

// What a part of the run came to. main() exits with status 1 at once when a part could not
// start its daemon; otherwise it runs the next part and exits 1 at the end if any part failed.
enum class PartOutcome { Passed, Failed, CouldNotStart };

} // namespace cmcp::bench
