// cmcp-jail-bench: what the jail adds to starting a program. In one run, interleaved so that
// machine noise hits both alike, it starts the same program
//   bare:  fork/exec PROGRAM, wait
//   jail:  fork/exec cmcp-jail with every layer this machine has, which execs PROGRAM, wait
// and prints medians, p90 and the difference and ratio of the medians (markdown).
//
//   cmcp-jail-bench JAIL [ROUNDS] [PROGRAM ARGS...]     (as root; default 200 x /usr/bin/true)
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

double runOnce(const std::vector<char *> &argv)
{
    const auto start = Clock::now();
    pid_t pid = 0;
    if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        std::perror("posix_spawn");
        std::exit(2);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s failed with status %d\n", argv[0], status);
        std::exit(2);
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * double(v.size() - 1))];
}

} // namespace

int main(int argc, char *argv[])
{
    if (argc < 2 || ::geteuid() != 0) {
        std::fprintf(stderr, "usage (as root): cmcp-jail-bench JAIL [ROUNDS] [PROGRAM ARGS...]\n");
        return 2;
    }
    const std::string jail = argv[1];
    const int rounds = argc > 2 ? std::max(10, std::atoi(argv[2])) : 200;
    std::vector<std::string> program = {"/usr/bin/true"};
    if (argc > 3)
        program.assign(argv + 3, argv + argc);

    char dir[] = "/tmp/cmcp-jail-bench.XXXXXX";
    if (!::mkdtemp(dir))
        return 2;
    ::chmod(dir, 0755); // the job opens its workspace as its own uid
    const std::string workspace = std::string(dir) + "/ws";
    ::mkdir(workspace.c_str(), 0755);
    const unsigned uid = 100990;
    if (::chown(workspace.c_str(), uid, uid) != 0)
        return 2;
    // Every layer but AppArmor (reported unavailable on the machines this was written on; the
    // jail refuses a policy asking for it there), then the same without the two layers whose
    // cost is mostly the kernel's (cgroup migration, mount namespace teardown), and the
    // layers that need neither, so the table shows where the time goes.
    const std::string common = "{\"uid\":" + std::to_string(uid) + ",\"gid\":" + std::to_string(uid)
            + ",\"workspace\":\"" + workspace
            + "\",\"env\":{\"PATH\":\"/usr/bin:/bin\"},"
              "\"limits\":{\"processes\":64,\"open_files\":256,\"file_size_bytes\":104857600,"
              "\"cpu_seconds\":30},"
              "\"landlock\":{\"read\":[\"/etc\",\"/dev\"],\"execute\":[\"/usr\"],"
              "\"write\":[\"/tmp\",\"/dev/null\"]},"
              "\"seccomp\":{}";
    const std::string cgroup =
            ",\"cgroup\":{\"memory_bytes\":268435456,\"pids\":64,\"cpu_percent\":100}";
    const std::string namespaces = ",\"namespaces\":{}";
    struct Variant
    {
        std::string label, policy;
        std::vector<double> times;
        std::vector<char *> argv;
        std::string path;
    };
    std::vector<Variant> variants = {
            {"cmcp-jail, all layers",
             common + cgroup + namespaces
                     + ",\"layers\":[\"identity\",\"rlimits\",\"cgroup\",\"namespaces\","
                       "\"landlock\",\"seccomp\"]}",
             {},
             {},
             {}},
            {"cmcp-jail, all but cgroup",
             common + namespaces
                     + ",\"layers\":[\"identity\",\"rlimits\",\"namespaces\",\"landlock\","
                       "\"seccomp\"]}",
             {},
             {},
             {}},
            {"cmcp-jail, all but namespaces",
             common + cgroup
                     + ",\"layers\":[\"identity\",\"rlimits\",\"cgroup\",\"landlock\","
                       "\"seccomp\"]}",
             {},
             {},
             {}},
            {"cmcp-jail, identity rlimits landlock seccomp",
             common + ",\"layers\":[\"identity\",\"rlimits\",\"landlock\",\"seccomp\"]}",
             {},
             {},
             {}},
    };
    std::string policyFlag = "--policy";
    std::string dashes = "--";
    std::string jailPath = jail;
    for (std::size_t v = 0; v < variants.size(); ++v) {
        Variant &variant = variants[v];
        variant.path = std::string(dir) + "/policy" + std::to_string(v) + ".json";
        int fd = ::open(variant.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0
            || ::write(fd, variant.policy.data(), variant.policy.size())
                    != ssize_t(variant.policy.size()))
            return 2;
        ::close(fd);
        variant.argv = {jailPath.data(), policyFlag.data(), variant.path.data(), dashes.data()};
        for (auto &a : program)
            variant.argv.push_back(a.data());
        variant.argv.push_back(nullptr);
    }

    std::vector<char *> bare;
    for (auto &a : program)
        bare.push_back(a.data());
    bare.push_back(nullptr);

    for (int i = 0; i < 5; ++i) { // warm the page cache for all
        runOnce(bare);
        for (Variant &variant : variants)
            runOnce(variant.argv);
    }
    std::vector<double> tBare;
    for (int i = 0; i < rounds; ++i) {
        tBare.push_back(runOnce(bare));
        for (Variant &variant : variants)
            variant.times.push_back(runOnce(variant.argv));
    }
    const double mb = percentile(tBare, 0.5);
    std::printf("### Jail start overhead (%d rounds, interleaved, program: %s)\n\n", rounds,
                program[0].c_str());
    std::printf("| start | median ms | p90 ms | p99 ms | median - bare | ratio |\n"
                "|---|---:|---:|---:|---:|---:|\n");
    std::printf("| bare fork/exec | %.2f | %.2f | %.2f | | |\n", mb, percentile(tBare, 0.9),
                percentile(tBare, 0.99));
    for (const Variant &variant : variants) {
        const double m = percentile(variant.times, 0.5);
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.1fx |\n", variant.label.c_str(), m,
                    percentile(variant.times, 0.9), percentile(variant.times, 0.99), m - mb,
                    m / mb);
    }
    std::string cleanup = std::string("rm -rf ") + dir;
    return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
