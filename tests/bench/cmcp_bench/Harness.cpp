#include "Harness.h"

#include <cstdarg>
#include <cstdio>

namespace cmcp::bench {

void note(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    std::fputs("[cmcp-bench] ", stderr);
    std::vfprintf(stderr, format, args);
    std::fputc('\n', stderr);
    va_end(args);
}

Stats statsOf(std::vector<double> samples)
{
    Stats s;
    s.n = samples.size();
    if (samples.empty())
        return s;
    std::sort(samples.begin(), samples.end());
    auto rank = [&](double q) {
        const size_t r = size_t(std::ceil(q * double(samples.size())));
        return samples[std::min(samples.size() - 1, r == 0 ? 0 : r - 1)];
    };
    s.p50 = rank(0.50);
    s.p99 = rank(0.99);
    double sum = 0;
    for (double v : samples)
        sum += v;
    s.mean = sum / double(samples.size());
    s.max = samples.back();
    return s;
}

double median(std::vector<double> values)
{
    values.erase(
            std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
            values.end());
    if (values.empty())
        return NAN;
    std::sort(values.begin(), values.end());
    const size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string num(double v, int decimals)
{
    if (std::isnan(v))
        return "–";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

} // namespace cmcp::bench
