#include "Options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace cmcp::bench {

namespace {

std::vector<int> intList(const std::string &text)
{
    std::vector<int> out;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ','))
        if (!item.empty())
            out.push_back(std::atoi(item.c_str()));
    return out;
}

} // namespace

void usage()
{
    std::printf(
            "usage: cmcp-bench [options]\n"
            "  --parts LIST          comma-separated: core,floor,http,sse,stdio,throughput,memory "
            "(default all)\n"
            "  --n N                 sequential tools/call per transport and run (default 5000)\n"
            "  --core-n N            in-process tools/call per run (default 20000)\n"
            "  --warmup N            calls before measuring (default 200)\n"
            "  --paced-us US         also measure calls US apart, as a slower client (the SDK) "
            "sends them; n/4 calls (default 1000, 0: off)\n"
            "  --repeat R            runs of each latency part, interleaved; medians are reported "
            "(default 3)\n"
            "  --concurrency LIST    concurrent Streamable HTTP sessions, e.g. 50,200 (default "
            "50,200)\n"
            "  --calls K             calls per session in the throughput part (default 200)\n"
            "  --idle N              idle sessions for the memory part (default 1000)\n"
            "  --idle-cycles N       open/close cycles of the idle sessions (default 2; RSS is "
            "reported after each)\n"
            "  --no-idle-streamable  measure only legacy SSE sessions in the memory part\n"
            "  --daemon-nofile N     soft RLIMIT_NOFILE for the spawned daemon (default: inherit "
            "the raised limit)\n"
            "  --idle-watch S        seconds the daemon's idle CPU is watched with the sessions "
            "open (default 1)\n"
            "  --daemon-set N=V      pass --set N=V to every spawned cmcpd (repeatable)\n"
            "  --max-seconds S       bound on the whole run (default 600)\n"
            "  --cmcpd PATH          daemon to spawn (default: ../../server/cmcpd-conformance "
            "beside this binary)\n");
}

std::optional<Options> parseOptions(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        const size_t eq = arg.find('=');
        const bool flag = arg == "--no-idle-streamable" || arg == "--help" || arg == "-h";
        if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else if (!flag) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "cmcp-bench: %s needs a value\n", arg.c_str());
                return std::nullopt;
            }
            value = argv[++i];
        }
        if (arg == "--help" || arg == "-h") {
            usage();
            std::exit(0);
        } else if (arg == "--parts") {
            o.parts.clear();
            std::stringstream stream(value);
            std::string item;
            while (std::getline(stream, item, ','))
                o.parts.insert(item);
        } else if (arg == "--n") {
            o.n = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--core-n") {
            o.coreN = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--warmup") {
            o.warmup = std::max(0, std::atoi(value.c_str()));
        } else if (arg == "--paced-us") {
            o.pacedUs = std::clamp(std::atoi(value.c_str()), 0, 100000);
        } else if (arg == "--repeat") {
            o.repeat = std::clamp(std::atoi(value.c_str()), 1, 50);
        } else if (arg == "--concurrency") {
            o.concurrency = intList(value);
        } else if (arg == "--calls") {
            o.callsPerSession = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--idle") {
            o.idleSessions = std::max(1, std::atoi(value.c_str()));
        } else if (arg == "--idle-cycles") {
            o.idleCycles = std::clamp(std::atoi(value.c_str()), 1, 20);
        } else if (arg == "--no-idle-streamable") {
            o.idleStreamable = false;
        } else if (arg == "--daemon-nofile") {
            o.daemonNofile = std::atol(value.c_str());
        } else if (arg == "--idle-watch") {
            o.idleWatchSeconds = std::clamp(std::atof(value.c_str()), 0.1, 120.0);
        } else if (arg == "--daemon-set") {
            o.daemonSettings.push_back(value);
        } else if (arg == "--max-seconds") {
            o.maxSeconds = std::max(1.0, std::atof(value.c_str()));
        } else if (arg == "--cmcpd") {
            o.cmcpd = value;
        } else {
            std::fprintf(stderr, "cmcp-bench: unknown option %s (see --help)\n", arg.c_str());
            return std::nullopt;
        }
    }
    return o;
}

} // namespace cmcp::bench
