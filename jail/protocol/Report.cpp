// The one writer and the one reader of the jail's report records (Report.h).
#include "jail/protocol/Report.h"

#include "jail/protocol/ReportFields.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace cmcp::jail {

namespace {

using json = nlohmann::json;
namespace field = cmcp::jail_protocol::report;

json startedJson(const Started &started)
{
    return {{field::kEvent, field::kStarted},
            {field::kPid, started.pid},
            {field::kLayers, started.layers},
            {field::kCgroups, started.cgroups}};
}

json refusalJson(const Refusal &refusal)
{
    return {{field::kEvent, field::kRefused},
            {field::kLayer, refusal.layer},
            {field::kCode, refusal.code},
            {field::kMessage, refusal.message}};
}

json exitJson(const Exit &exit)
{
    json record = {{field::kEvent, field::kExit},       {field::kExitCode, nullptr},
                   {field::kSignal, nullptr},           {field::kWallMs, exit.wallMs},
                   {field::kCpuMs, exit.cpuMs},         {field::kPeakMemoryKb, nullptr},
                   {field::kOomKilled, exit.oomKilled}, {field::kPidsRefused, exit.pidsRefused},
                   {field::kKilled, exit.killed}};
    if (exit.exitCode)
        record[field::kExitCode] = *exit.exitCode;
    if (exit.signal)
        record[field::kSignal] = *exit.signal;
    if (exit.peakMemoryKb)
        record[field::kPeakMemoryKb] = *exit.peakMemoryKb;
    if (exit.seccompDenied) {
        json denied = json::array();
        for (const SeccompDenial &denial : *exit.seccompDenied)
            denied.push_back({{field::kSyscall, denial.syscall},
                              {field::kErrno, denial.errnoName},
                              {field::kCount, denial.count}});
        record[field::kSeccompDenied] = std::move(denied);
        if (exit.seccompDeniedUnnamed > 0)
            record[field::kSeccompDeniedUnnamed] = exit.seccompDeniedUnnamed;
    }
    return record;
}

// A whole number that a double holds exactly (what any JSON reader keeps), written as an
// integer or as a float with nothing after the point.
std::optional<std::int64_t> wholeNumber(const json &value)
{
    if (value.is_number_integer()) {
        if (value.is_number_unsigned() && value.get<std::uint64_t>() > (1ULL << 53))
            return std::nullopt;
        const std::int64_t number = value.get<std::int64_t>();
        if (number > (1LL << 53) || number < -(1LL << 53))
            return std::nullopt;
        return number;
    }
    if (!value.is_number_float())
        return std::nullopt;
    const double number = value.get<double>();
    if (std::trunc(number) != number || std::fabs(number) > 9007199254740992.0)
        return std::nullopt;
    return std::int64_t(number);
}

const json *member(const json &object, const char *key)
{
    const auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

std::optional<std::int64_t> requiredNumber(const json &object, const char *key)
{
    const json *value = member(object, key);
    return value ? wholeNumber(*value) : std::nullopt;
}

// A whole number or null, present either way.
bool nullableNumber(const json &object, const char *key, std::optional<std::int64_t> &out)
{
    const json *value = member(object, key);
    if (!value)
        return false;
    if (value->is_null()) {
        out.reset();
        return true;
    }
    out = wholeNumber(*value);
    return out.has_value();
}

// An absent key is the default; present, it must be a whole number >= 0.
bool optionalCount(const json &object, const char *key, std::int64_t &out)
{
    const json *value = member(object, key);
    if (!value)
        return true;
    const std::optional<std::int64_t> number = wholeNumber(*value);
    if (!number || *number < 0)
        return false;
    out = *number;
    return true;
}

bool stringList(const json *value, std::vector<std::string> &out)
{
    if (!value || !value->is_array())
        return false;
    for (const json &entry : *value) {
        if (!entry.is_string())
            return false;
        out.push_back(entry.get<std::string>());
    }
    return true;
}

std::optional<Started> parseStarted(const json &record)
{
    Started started;
    const std::optional<std::int64_t> pid = requiredNumber(record, field::kPid);
    if (!pid || *pid <= 0 || !stringList(member(record, field::kLayers), started.layers))
        return std::nullopt;
    started.pid = *pid;
    // Absent from jails that have no cgroup of their own to tell.
    if (const json *cgroups = member(record, field::kCgroups);
        cgroups && !stringList(cgroups, started.cgroups))
        return std::nullopt;
    return started;
}

std::optional<Refusal> parseRefusal(const json &record)
{
    const json *layer = member(record, field::kLayer);
    const json *message = member(record, field::kMessage);
    const std::optional<std::int64_t> code = requiredNumber(record, field::kCode);
    if (!layer || !layer->is_string() || !message || !message->is_string() || !code)
        return std::nullopt;
    return Refusal{layer->get<std::string>(), int(*code), message->get<std::string>()};
}

// "seccomp_denied": absent (not counted) or a list of {syscall, errno, count}.
bool parseSeccompDenied(const json &record, Exit &exit)
{
    const json *list = member(record, field::kSeccompDenied);
    if (!list)
        return true;
    if (!list->is_array())
        return false;
    std::vector<SeccompDenial> denied;
    for (const json &entry : *list) {
        if (!entry.is_object())
            return false;
        const json *syscall = member(entry, field::kSyscall);
        const json *errnoName = member(entry, field::kErrno);
        const std::optional<std::int64_t> count = requiredNumber(entry, field::kCount);
        if (!syscall || !syscall->is_string() || !errnoName || !errnoName->is_string() || !count
            || *count <= 0)
            return false;
        denied.push_back({syscall->get<std::string>(), errnoName->get<std::string>(), *count});
    }
    exit.seccompDenied = std::move(denied);
    return optionalCount(record, field::kSeccompDeniedUnnamed, exit.seccompDeniedUnnamed);
}

std::optional<Exit> parseExit(const json &record)
{
    Exit exit;
    std::optional<std::int64_t> exitCode, signal;
    const std::optional<std::int64_t> wall = requiredNumber(record, field::kWallMs);
    const std::optional<std::int64_t> cpu = requiredNumber(record, field::kCpuMs);
    const json *oomKilled = member(record, field::kOomKilled);
    const json *killed = member(record, field::kKilled);
    if (!nullableNumber(record, field::kExitCode, exitCode)
        || !nullableNumber(record, field::kSignal, signal)
        || !nullableNumber(record, field::kPeakMemoryKb, exit.peakMemoryKb)
        || !optionalCount(record, field::kPidsRefused, exit.pidsRefused) || !wall || !cpu
        || !oomKilled || !oomKilled->is_boolean() || !killed || !killed->is_boolean()
        || !parseSeccompDenied(record, exit))
        return std::nullopt;
    if (exitCode)
        exit.exitCode = int(*exitCode);
    if (signal)
        exit.signal = int(*signal);
    exit.wallMs = *wall;
    exit.cpuMs = *cpu;
    exit.oomKilled = oomKilled->get<bool>();
    exit.killed = killed->get<bool>();
    return exit;
}

} // namespace

std::string reportLine(const ReportRecord &record)
{
    const json object = std::visit(
            [](const auto &r) -> json {
                using R = std::decay_t<decltype(r)>;
                if constexpr (std::is_same_v<R, Started>)
                    return startedJson(r);
                else if constexpr (std::is_same_v<R, Refusal>)
                    return refusalJson(r);
                else
                    return exitJson(r);
            },
            record);
    return object.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<ReportRecord> parseReportLine(std::string_view line, std::string *error)
{
    const auto fail = [&](const std::string &why) -> std::optional<ReportRecord> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const std::string quoted(line.substr(0, 200));
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object())
        return fail("not a JSON object: " + quoted);
    const json *event = member(record, field::kEvent);
    const std::string name = event && event->is_string() ? event->get<std::string>() : "";
    std::optional<ReportRecord> parsed;
    if (name == field::kStarted) {
        if (auto started = parseStarted(record))
            parsed = std::move(*started);
    } else if (name == field::kRefused) {
        if (auto refusal = parseRefusal(record))
            parsed = std::move(*refusal);
    } else if (name == field::kExit) {
        if (auto exit = parseExit(record))
            parsed = std::move(*exit);
    }
    if (!parsed)
        return fail("unexpected record: " + quoted);
    return parsed;
}

} // namespace cmcp::jail
