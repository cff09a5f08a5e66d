// The jail's policy parser (jail/protocol/Policy.cpp): what it accepts and the defaults it fills
// in, and every kind of refusal with the one-line message the daemon shows after
// "cmcp-jail: policy: " (malformed JSON, duplicate and unknown keys, wrong types, values out of
// range, paths that are not clean, layer objects without their layer). A refused policy leaves
// the caller's Policy untouched. And the one writer of the same keys (policyJson), which the
// daemon sends through (server/sandbox/JailPolicy): it writes every key the jail reads and no
// other, and a policy the jail would refuse is refused by the daemon before a jail starts.

#include "jail/protocol/Policy.h"
#include "jail/protocol/PolicyFields.h"
#include "sandbox/JailPolicy.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <functional>
#include <string>

using namespace cmcp::jail;
using json = nlohmann::json;

// The parser speaks std::string: let failed comparisons show the values.
namespace QTest {
template<>
inline char *toString(const std::string &text)
{
    return toString(QByteArray::fromStdString(text));
}
} // namespace QTest

namespace {

// The smallest policy the parser accepts: the mandatory keys and the identity layer.
json minimal()
{
    return {{"uid", 1000},
            {"gid", 1000},
            {"workspace", "/srv/ws"},
            {"env", {{"PATH", "/usr/bin"}}},
            {"layers", json::array({"identity"})}};
}

// The minimal policy with `layers` requested and `edit` applied.
QByteArray policyWith(const std::vector<std::string> &layers,
                      const std::function<void(json &)> &edit)
{
    json policy = minimal();
    for (const std::string &layer : layers)
        policy["layers"].push_back(layer);
    edit(policy);
    return QByteArray::fromStdString(policy.dump());
}

QByteArray policyWith(const std::function<void(json &)> &edit)
{
    return policyWith({}, edit);
}

// Paths "/usr/lib/p0" ... for the limits on list sizes.
json manyPaths(int count)
{
    json paths = json::array();
    for (int i = 0; i < count; ++i)
        paths.push_back("/usr/lib/p" + std::to_string(i));
    return paths;
}

bool parse(const QByteArray &text, Policy &policy, std::string &error)
{
    return parsePolicy(text.toStdString(), policy, error);
}

// A policy as the daemon builds one, every field set, every layer requested.
Policy everyFieldOfThePolicy()
{
    Policy policy;
    policy.uid = 1000;
    policy.gid = 1000;
    policy.workspace = "/srv/ws";
    policy.cwd = "sub";
    policy.env = {{"PATH", "/cmcp/bin"}};
    policy.limits = {60, 1 << 20, 64, 32, 1ULL << 30};
    policy.seccomp.network = true;
    policy.landlock = LandlockPolicy{{"/usr"}, {"/usr/bin/bash"}, {"/tmp"}, true};
    NamespacesPolicy namespaces;
    namespaces.egressPort = 3128;
    namespaces.hostname = "box";
    namespaces.workspaceAt = "/workspace";
    namespaces.tmpSizeMb = 16;
    namespaces.execPaths = std::vector<std::string>{"/usr/bin/bash"};
    namespaces.bin = {"/usr/bin/bash"};
    namespaces.programFromHost = true;
    policy.namespaces = namespaces;
    policy.cgroup = CgroupPolicy{1 << 24, 16, 100, "job-1"};
    policy.apparmor = ApparmorPolicy{"cmcp-job-bash"};
    for (const char *layer : cmcp::jail_protocol::policy::kLayerNames)
        policy.layers.push_back(*layerNamed(layer));
    return policy;
}

// The keys of `object` (the policy, or its object under `name`), sorted.
QStringList keysOf(const QJsonObject &policy, const char *name)
{
    QStringList keys = (*name ? policy.value(QLatin1String(name)).toObject() : policy).keys();
    keys.sort();
    return keys;
}

QStringList declaredKeys(const char *name)
{
    QStringList keys;
    for (const char *key : cmcp::jail_protocol::policy::keysOf(name))
        keys.append(QLatin1String(key));
    keys.sort();
    return keys;
}

} // namespace

class TestJailPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void minimalPolicyGetsTheDefaults()
    {
        Policy policy;
        std::string error;
        QVERIFY2(parse(policyWith([](json &) {}), policy, error), error.c_str());
        QCOMPARE(policy.uid, uid_t(1000));
        QCOMPARE(policy.gid, gid_t(1000));
        QCOMPARE(policy.workspace, std::string("/srv/ws"));
        QCOMPARE(policy.cwd, std::string());
        QCOMPARE(policy.env.size(), size_t(1));
        QCOMPARE(policy.env[0].first, std::string("PATH"));
        QCOMPARE(policy.env[0].second, std::string("/usr/bin"));
        QVERIFY(policy.layers == std::vector<Layer>{Layer::Identity});
        QVERIFY(policy.wants(Layer::Identity));
        QVERIFY(!policy.wants(Layer::Seccomp));
        QVERIFY(!policy.limits.cpuSeconds && !policy.limits.fileSizeBytes
                && !policy.limits.openFiles && !policy.limits.processes
                && !policy.limits.addressSpaceBytes);
        QVERIFY(!policy.seccomp.network);
        QVERIFY(!policy.landlock && !policy.namespaces && !policy.cgroup && !policy.apparmor);
        QCOMPARE(policy.jobWorkspace(), std::string("/srv/ws"));
    }

    void everyLayerWithEveryKey()
    {
        const QByteArray text = policyWith(
                {"seccomp", "landlock", "namespaces", "cgroup", "apparmor", "rlimits"},
                [](json &p) {
                    p["cwd"] = "sub/dir";
                    p["env"]["HOME"] = "/workspace";
                    p["limits"] = {{"cpu_seconds", 10},
                                   {"file_size_bytes", 1 << 20},
                                   {"open_files", 64},
                                   {"processes", 32},
                                   {"address_space_bytes", 1ull << 32}};
                    p["landlock"] = {{"read", json::array({"/usr", "/etc/ssl"})},
                                     {"execute", json::array({"/usr/bin/ls"})},
                                     {"write", json::array({"/tmp"})},
                                     {"network", true}};
                    p["seccomp"] = {{"network", true}};
                    p["namespaces"] = {{"network", true},
                                       {"hostname", "job-7"},
                                       {"workspace_at", "/home/job"},
                                       {"tmp_size_mb", 128},
                                       {"exec_paths", json::array({"/usr/bin/ls"})},
                                       {"bin", json::array({"/usr/bin/ls", "/usr/bin/cat"})}};
                    p["cgroup"] = {{"memory_bytes", 1 << 26},
                                   {"pids", 64},
                                   {"cpu_percent", 50},
                                   {"name", "job-1.a_b"}};
                    p["apparmor"] = {{"profile", "cmcp-job-bash"}};
                });
        Policy policy;
        std::string error;
        QVERIFY2(parse(text, policy, error), error.c_str());
        QCOMPARE(policy.cwd, std::string("sub/dir"));
        QCOMPARE(policy.env.size(), size_t(2));
        // In the order given, not the order the jail applies them in.
        QVERIFY(policy.layers
                == (std::vector<Layer>{Layer::Identity, Layer::Seccomp, Layer::Landlock,
                                       Layer::Namespaces, Layer::Cgroup, Layer::Apparmor,
                                       Layer::Rlimits}));
        QCOMPARE(*policy.limits.cpuSeconds, std::uint64_t(10));
        QCOMPARE(*policy.limits.fileSizeBytes, std::uint64_t(1) << 20);
        QCOMPARE(*policy.limits.openFiles, std::uint64_t(64));
        QCOMPARE(*policy.limits.processes, std::uint64_t(32));
        QCOMPARE(*policy.limits.addressSpaceBytes, std::uint64_t(1) << 32);
        QVERIFY(policy.landlock);
        QVERIFY(policy.landlock->read == (std::vector<std::string>{"/usr", "/etc/ssl"}));
        QVERIFY(policy.landlock->execute == std::vector<std::string>{"/usr/bin/ls"});
        QVERIFY(policy.landlock->write == std::vector<std::string>{"/tmp"});
        QVERIFY(policy.landlock->network);
        QVERIFY(policy.seccomp.network);
        QVERIFY(policy.namespaces);
        QVERIFY(policy.namespaces->network);
        QCOMPARE(policy.namespaces->hostname, std::string("job-7"));
        QCOMPARE(policy.namespaces->workspaceAt, std::string("/home/job"));
        QCOMPARE(policy.namespaces->tmpSizeMb, std::uint64_t(128));
        QVERIFY(policy.namespaces->execPaths
                && *policy.namespaces->execPaths == std::vector<std::string>{"/usr/bin/ls"});
        QVERIFY(policy.namespaces->bin
                == (std::vector<std::string>{"/usr/bin/ls", "/usr/bin/cat"}));
        QVERIFY(policy.cgroup);
        QCOMPARE(*policy.cgroup->memoryBytes, std::uint64_t(1) << 26);
        QCOMPARE(*policy.cgroup->pids, std::uint64_t(64));
        QCOMPARE(*policy.cgroup->cpuPercent, std::uint64_t(50));
        QCOMPARE(policy.cgroup->name, std::string("job-1.a_b"));
        QVERIFY(policy.apparmor);
        QCOMPARE(policy.apparmor->profile, std::string("cmcp-job-bash"));
        // With namespaces the job sees the workspace where the policy mounts it.
        QCOMPARE(policy.jobWorkspace(), std::string("/home/job"));
    }

    // "seccomp", "namespaces" and "cgroup" may be left out when their layer is requested.
    void optionalLayerObjectsGetTheirDefaults()
    {
        Policy policy;
        std::string error;
        QVERIFY2(parse(policyWith({"seccomp", "namespaces", "cgroup"}, [](json &) {}), policy,
                       error),
                 error.c_str());
        QVERIFY(!policy.seccomp.network);
        QVERIFY(policy.namespaces);
        QVERIFY(!policy.namespaces->network);
        QCOMPARE(policy.namespaces->hostname, std::string("sandbox"));
        QCOMPARE(policy.namespaces->workspaceAt, std::string("/workspace"));
        QCOMPARE(policy.namespaces->tmpSizeMb, std::uint64_t(64));
        QVERIFY(!policy.namespaces->execPaths);
        QVERIFY(policy.namespaces->bin.empty());
        QVERIFY(policy.cgroup);
        QVERIFY(!policy.cgroup->memoryBytes && !policy.cgroup->pids && !policy.cgroup->cpuPercent);
        QCOMPARE(policy.cgroup->name, std::string());
        QCOMPARE(policy.jobWorkspace(), std::string("/workspace"));
    }

    void boundsAreInclusive_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::newRow("uid and gid 1000") << policyWith([](json &) {});
        QTest::newRow("uid 4294967293") << policyWith([](json &p) { p["uid"] = 4294967293u; });
        QTest::newRow("cpu_seconds 2^30") << policyWith({"rlimits"}, [](json &p) {
            p["limits"] = {{"cpu_seconds", 1 << 30}};
        });
        QTest::newRow("open_files 2^62") << policyWith({"rlimits"}, [](json &p) {
            p["limits"] = {{"open_files", 1ull << 62}};
        });
        QTest::newRow("tmp_size_mb 1") << policyWith({"namespaces"}, [](json &p) {
            p["namespaces"] = {{"tmp_size_mb", 1}};
        });
        QTest::newRow("tmp_size_mb 4096") << policyWith({"namespaces"}, [](json &p) {
            p["namespaces"] = {{"tmp_size_mb", 4096}};
        });
        QTest::newRow("memory_bytes 1 MiB") << policyWith({"cgroup"}, [](json &p) {
            p["cgroup"] = {{"memory_bytes", 1 << 20}};
        });
        QTest::newRow("memory_bytes 2^50") << policyWith({"cgroup"}, [](json &p) {
            p["cgroup"] = {{"memory_bytes", 1ull << 50}};
        });
        QTest::newRow("pids 4194304") << policyWith({"cgroup"}, [](json &p) {
            p["cgroup"] = {{"pids", 4194304}};
        });
        QTest::newRow("cpu_percent 100000") << policyWith({"cgroup"}, [](json &p) {
            p["cgroup"] = {{"cpu_percent", 100000}};
        });
        QTest::newRow("hostname of 63") << policyWith({"namespaces"}, [](json &p) {
            p["namespaces"] = {{"hostname", std::string(63, 'h')}};
        });
        QTest::newRow("cgroup name of 64") << policyWith({"cgroup"}, [](json &p) {
            p["cgroup"] = {{"name", std::string(64, 'n')}};
        });
        QTest::newRow("profile of 128") << policyWith({"apparmor"}, [](json &p) {
            p["apparmor"] = {{"profile", std::string(128, 'p')}};
        });
        QTest::newRow("256 landlock paths") << policyWith({"landlock"}, [](json &p) {
            p["landlock"] = {{"read", manyPaths(256)}};
        });
        QTest::newRow("256 bin programs") << policyWith({"namespaces"}, [](json &p) {
            p["namespaces"] = {{"bin", manyPaths(256)}};
        });
        QTest::newRow("an empty env") << policyWith([](json &p) { p["env"] = json::object(); });
    }

    void boundsAreInclusive()
    {
        QFETCH(QByteArray, text);
        Policy policy;
        std::string error;
        QVERIFY2(parse(text, policy, error), error.c_str());
    }

    // With namespaces, Landlock's paths and the overlap check speak of the job's view.
    void landlockOverlapUsesTheJobsWorkspace()
    {
        Policy policy;
        std::string error;
        QVERIFY2(parse(policyWith({"namespaces", "landlock"},
                                  [](json &p) {
                                      p["landlock"] = {{"execute", json::array({"/srv/ws/bin"})}};
                                  }),
                       policy, error),
                 error.c_str());
        QVERIFY(!parse(policyWith({"namespaces", "landlock"},
                                  [](json &p) {
                                      p["landlock"] = {{"execute", json::array({"/workspace/a"})}};
                                  }),
                       policy, error));
        QCOMPARE(error,
                 std::string("landlock.execute: \"/workspace/a\" overlaps the writable "
                             "\"/workspace\" (a job must not run programs it wrote)"));
    }

    void malformedJsonIsRefused_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("unterminated object") << QByteArray("{\"uid\": 1000");
        QTest::newRow("trailing comma") << QByteArray("{\"uid\": 1000,}");
        QTest::newRow("a comment") << QByteArray("/* policy */ {}");
        QTest::newRow("single quotes") << QByteArray("{'uid': 1000}");
        QTest::newRow("two documents") << QByteArray("{} {}");
        QTest::newRow("invalid UTF-8") << QByteArray("{\"workspace\": \"/srv/\xff\"}");
        QTest::newRow("NaN") << QByteArray("{\"uid\": NaN}");
    }

    void malformedJsonIsRefused()
    {
        QFETCH(QByteArray, text);
        Policy policy;
        std::string error;
        QVERIFY(!parse(text, policy, error));
        // nlohmann's own message after ours: it says where and what.
        QVERIFY2(error.rfind("not valid JSON: [json.exception.parse_error.", 0) == 0,
                 error.c_str());
        QVERIFY2(error.find("parse error at ") != std::string::npos, error.c_str());
        QVERIFY(error.find('\n') == std::string::npos);
    }

    // nlohmann's message quotes the token it stopped at, however long: it is cut.
    void longJsonErrorsAreCut()
    {
        Policy policy;
        std::string error;
        QVERIFY(!parse("{\"workspace\": \"" + QByteArray(5000, 'a'), policy, error));
        QVERIFY2(error.rfind("not valid JSON: [json.exception.parse_error.", 0) == 0,
                 error.c_str());
        QVERIFY2(error.size() <= std::string("not valid JSON: ").size() + 400 + 3, error.c_str());
        QVERIFY2(error.size() >= 3 && error.compare(error.size() - 3, 3, "\u2026") == 0,
                 error.c_str());
    }

    // Valid JSON, but a number that no C++ type holds: a refusal with nlohmann's message, not an
    // exception out of the jail.
    void numbersBeyondDoubleAreRefused()
    {
        Policy policy;
        std::string error;
        QVERIFY(!parse(
                R"({"uid":1e400,"gid":1000,"workspace":"/w","env":{},"layers":["identity"]})",
                policy, error));
        QCOMPARE(error,
                 std::string("not valid JSON: [json.exception.out_of_range.406] number overflow "
                             "parsing '1e400'"));
    }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("message");
        auto row = [](const char *name, const QByteArray &text, const QByteArray &message) {
            QTest::newRow(name) << text << message;
        };
        // What a clean path is, in every message about one.
        const QByteArray clean = R"m((no "//", no "." or ".." component, no trailing "/"))m";

        // Not an object, duplicate keys, unknown keys, missing keys.
        row("an array", "[]", "the policy must be a JSON object");
        row("a string", "\"policy\"", "the policy must be a JSON object");
        row("null", "null", "the policy must be a JSON object");
        row("duplicate top-level key",
            R"({"uid":1000,"uid":1001,"gid":1000,"workspace":"/w","env":{},"layers":["identity"]})",
            "uid: duplicate key");
        row("duplicate nested key",
            R"({"uid":1000,"gid":1000,"workspace":"/w","env":{"A":"1","A":"2"},"layers":[]})",
            "A: duplicate key");
        row("unknown top-level key", policyWith([](json &p) { p["extra"] = 1; }),
            "extra: unknown key");
        row("unknown limits key",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"stack_bytes", 1}};
                       }),
            "limits.stack_bytes: unknown key");
        row("unknown landlock key",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"mount", true}};
                       }),
            "landlock.mount: unknown key");
        row("unknown seccomp key",
            policyWith({"seccomp"},
                       [](json &p) {
                           p["seccomp"] = {{"ptrace", true}};
                       }),
            "seccomp.ptrace: unknown key");
        row("unknown namespaces key",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"pid", true}};
                       }),
            "namespaces.pid: unknown key");
        row("unknown cgroup key",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"io_weight", 5}};
                       }),
            "cgroup.io_weight: unknown key");
        row("apparmor with another key",
            policyWith({"apparmor"},
                       [](json &p) {
                           p["apparmor"] = {{"profile", "cmcp-job-bash"}, {"mode", "enforce"}};
                       }),
            "apparmor: must be an object with exactly the key \"profile\"");
        row("apparmor without a profile",
            policyWith({"apparmor"}, [](json &p) { p["apparmor"] = json::object(); }),
            "apparmor: must be an object with exactly the key \"profile\"");
        row("no uid", policyWith([](json &p) { p.erase("uid"); }), "uid: missing");
        row("no gid", policyWith([](json &p) { p.erase("gid"); }), "gid: missing");
        row("no workspace", policyWith([](json &p) { p.erase("workspace"); }),
            "workspace: missing");
        row("no env", policyWith([](json &p) { p.erase("env"); }), "env: missing");
        row("no layers", policyWith([](json &p) { p.erase("layers"); }), "layers: missing");

        // Wrong types.
        row("uid as a string", policyWith([](json &p) { p["uid"] = "1000"; }),
            "uid: must be a non-negative integer");
        row("uid as a float", policyWith([](json &p) { p["uid"] = 1000.0; }),
            "uid: must be a non-negative integer");
        row("uid as a bool", policyWith([](json &p) { p["uid"] = true; }),
            "uid: must be a non-negative integer");
        row("negative gid", policyWith([](json &p) { p["gid"] = -1000; }),
            "gid: must be a non-negative integer");
        row("uid beyond 64 bits",
            R"({"uid":18446744073709551616,"gid":1000,"workspace":"/w","env":{},"layers":[]})",
            "uid: must be a non-negative integer");
        row("workspace as a number", policyWith([](json &p) { p["workspace"] = 5; }),
            "workspace: must be a string");
        row("cwd as an array", policyWith([](json &p) { p["cwd"] = json::array(); }),
            "cwd: must be a string");
        row("env as an array", policyWith([](json &p) { p["env"] = json::array({"A=1"}); }),
            "env: must be an object of strings");
        row("env value as a number", policyWith([](json &p) { p["env"]["N"] = 1; }),
            "env.N: must be a string");
        row("layers as a string", policyWith([](json &p) { p["layers"] = "identity"; }),
            "layers: must be an array of layer names");
        row("a layer as a number", policyWith([](json &p) { p["layers"].push_back(3); }),
            "layers: must be an array of layer names");
        row("limits as an array",
            policyWith({"rlimits"}, [](json &p) { p["limits"] = json::array(); }),
            "limits: must be an object");
        row("a limit as a string",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"open_files", "64"}};
                       }),
            "limits.open_files: must be a non-negative integer");
        row("landlock as a string",
            policyWith({"landlock"}, [](json &p) { p["landlock"] = "/usr"; }),
            "landlock: must be an object");
        row("landlock read as a string",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"read", "/usr"}};
                       }),
            "landlock.read: must be an array of absolute paths");
        row("a landlock path as a number",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"write", json::array({7})}};
                       }),
            "landlock.write: must be an array of absolute paths");
        row("landlock network as a number",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"network", 0}};
                       }),
            "landlock.network: must be true or false");
        row("seccomp as an array",
            policyWith({"seccomp"}, [](json &p) { p["seccomp"] = json::array(); }),
            "seccomp: must be an object");
        row("seccomp network as a string",
            policyWith({"seccomp"},
                       [](json &p) {
                           p["seccomp"] = {{"network", "no"}};
                       }),
            "seccomp.network: must be true or false");
        row("egress_port with the host's network",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"network", true}, {"egress_port", 3128}};
                       }),
            "namespaces.egress_port: only with \"network\": false (the job's own network "
            "namespace)");
        row("egress_port 0",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"egress_port", 0}};
                       }),
            "namespaces.egress_port: 0 is outside [1, 65535]");
        row("namespaces as a bool",
            policyWith({"namespaces"}, [](json &p) { p["namespaces"] = true; }),
            "namespaces: must be an object");
        row("hostname as a number",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"hostname", 1}};
                       }),
            "namespaces.hostname: must be a string");
        row("tmp_size_mb as a string",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"tmp_size_mb", "64"}};
                       }),
            "namespaces.tmp_size_mb: must be a non-negative integer");
        row("exec_paths as a string",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"exec_paths", "/usr/bin"}};
                       }),
            "namespaces.exec_paths: must be an array of at most 256 paths beneath /usr");
        row("a bin entry as a number",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"bin", json::array({1})}};
                       }),
            "namespaces.bin: must be a string");
        row("cgroup as a number", policyWith({"cgroup"}, [](json &p) { p["cgroup"] = 1; }),
            "cgroup: must be an object");
        row("cgroup name as a number",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"name", 1}};
                       }),
            "cgroup.name: must be a string");
        row("pids as a float",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"pids", 1.5}};
                       }),
            "cgroup.pids: must be a non-negative integer");
        row("profile as a number",
            policyWith({"apparmor"},
                       [](json &p) {
                           p["apparmor"] = {{"profile", 1}};
                       }),
            "apparmor.profile: must be a string");

        // Out of range.
        row("uid 0", policyWith([](json &p) { p["uid"] = 0; }),
            "uid: 0 is outside [1000, 4294967293]");
        row("uid 999", policyWith([](json &p) { p["uid"] = 999; }),
            "uid: 999 is outside [1000, 4294967293]");
        row("uid (uid_t)-2", policyWith([](json &p) { p["uid"] = 4294967294u; }),
            "uid: 4294967294 is outside [1000, 4294967293]");
        row("gid 1", policyWith([](json &p) { p["gid"] = 1; }),
            "gid: 1 is outside [1000, 4294967293]");
        row("cpu_seconds 0",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"cpu_seconds", 0}};
                       }),
            "limits.cpu_seconds: 0 is outside [1, 1073741824]");
        row("cpu_seconds 2^30 + 1",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"cpu_seconds", (1 << 30) + 1}};
                       }),
            "limits.cpu_seconds: 1073741825 is outside [1, 1073741824]");
        row("processes 2^62 + 1",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"processes", (1ull << 62) + 1}};
                       }),
            "limits.processes: 4611686018427387905 is outside [1, 4611686018427387904]");
        row("tmp_size_mb 0",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"tmp_size_mb", 0}};
                       }),
            "namespaces.tmp_size_mb: 0 is outside [1, 4096]");
        row("tmp_size_mb 4097",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"tmp_size_mb", 4097}};
                       }),
            "namespaces.tmp_size_mb: 4097 is outside [1, 4096]");
        row("memory_bytes below 1 MiB",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"memory_bytes", (1 << 20) - 1}};
                       }),
            "cgroup.memory_bytes: 1048575 is outside [1048576, 1125899906842624]");
        row("pids 4194305",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"pids", 4194305}};
                       }),
            "cgroup.pids: 4194305 is outside [1, 4194304]");
        row("cpu_percent 0",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"cpu_percent", 0}};
                       }),
            "cgroup.cpu_percent: 0 is outside [1, 100000]");
        row("257 landlock paths",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"read", manyPaths(257)}};
                       }),
            "landlock.read: more than 256 paths");
        row("257 exec_paths",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"exec_paths", manyPaths(257)}};
                       }),
            "namespaces.exec_paths: must be an array of at most 256 paths beneath /usr");

        // Paths and names.
        row("workspace /", policyWith([](json &p) { p["workspace"] = "/"; }),
            "workspace: \"/\" must be an absolute path other than / " + clean);
        row("relative workspace", policyWith([](json &p) { p["workspace"] = "srv/ws"; }),
            "workspace: \"srv/ws\" must be an absolute path other than / " + clean);
        row("workspace with ..", policyWith([](json &p) { p["workspace"] = "/srv/../etc"; }),
            "workspace: \"/srv/../etc\" must be an absolute path other than / " + clean);
        row("workspace with //", policyWith([](json &p) { p["workspace"] = "/srv//ws"; }),
            "workspace: \"/srv//ws\" must be an absolute path other than / " + clean);
        row("absolute cwd", policyWith([](json &p) { p["cwd"] = "/etc"; }),
            "cwd: \"/etc\" must be a relative path " + clean);
        row("cwd with ..", policyWith([](json &p) { p["cwd"] = "a/../../b"; }),
            "cwd: \"a/../../b\" must be a relative path " + clean);
        row("empty variable name", policyWith([](json &p) { p["env"][""] = "x"; }),
            "env.: invalid variable name");
        row("variable name with =", policyWith([](json &p) { p["env"]["A=B"] = "x"; }),
            "env.A=B: invalid variable name");
        row("NUL in a value", policyWith([](json &p) { p["env"]["A"] = std::string("a\0b", 3); }),
            "env.A: contains a NUL byte");
        row("unknown layer", policyWith([](json &p) { p["layers"].push_back("selinux"); }),
            "layers: unknown layer \"selinux\"");
        row("layer twice", policyWith({"seccomp", "seccomp"}, [](json &) {}),
            "layers: \"seccomp\" listed twice");
        row("no identity layer", policyWith([](json &p) { p["layers"] = json::array(); }),
            "layers: \"identity\" is mandatory (the job must never run as host uid 0)");
        row("relative landlock path",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"read", json::array({"usr"})}};
                       }),
            "landlock.read: \"usr\" must be an absolute path " + clean);
        row("landlock path with a trailing slash",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"write", json::array({"/tmp/"})}};
                       }),
            "landlock.write: \"/tmp/\" must be an absolute path " + clean);
        row("execute beneath the workspace",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"execute", json::array({"/srv/ws/bin/tool"})}};
                       }),
            "landlock.execute: \"/srv/ws/bin/tool\" overlaps the writable \"/srv/ws\" (a job must "
            "not run programs it wrote)");
        row("execute above the workspace",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"execute", json::array({"/srv"})}};
                       }),
            "landlock.execute: \"/srv\" overlaps the writable \"/srv/ws\" (a job must not run "
            "programs it wrote)");
        row("execute beneath a write path",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"write", json::array({"/opt"})},
                                            {"execute", json::array({"/opt/tool"})}};
                       }),
            "landlock.execute: \"/opt/tool\" overlaps the writable \"/opt\" (a job must not run "
            "programs it wrote)");
        row("empty hostname",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"hostname", ""}};
                       }),
            "namespaces.hostname: 1-63 letters, digits or '-'");
        row("hostname with _",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"hostname", "a_b"}};
                       }),
            "namespaces.hostname: 1-63 letters, digits or '-'");
        row("hostname of 64",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"hostname", std::string(64, 'h')}};
                       }),
            "namespaces.hostname: 1-63 letters, digits or '-'");
        row("workspace_at /",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/"}};
                       }),
            "namespaces.workspace_at: \"/\" must be an absolute path other than / " + clean);
        row("workspace_at with ..",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/home/../etc"}};
                       }),
            "namespaces.workspace_at: \"/home/../etc\" must be an absolute path other than / "
                    + clean);
        row("workspace_at below /usr",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/usr/ws"}};
                       }),
            "namespaces.workspace_at: may not be at or below /usr");
        row("workspace_at /tmp",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/tmp"}};
                       }),
            "namespaces.workspace_at: may not be at or below /tmp");
        row("workspace_at below /proc",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/proc/1"}};
                       }),
            "namespaces.workspace_at: may not be at or below /proc");
        row("exec_paths /usr itself",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"exec_paths", json::array({"/usr"})}};
                       }),
            "namespaces.exec_paths: \"/usr\" must be a clean absolute path beneath /usr (not "
            "/usr itself)");
        row("exec_paths outside /usr",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"exec_paths", json::array({"/usrlocal/bin"})}};
                       }),
            "namespaces.exec_paths: \"/usrlocal/bin\" must be a clean absolute path beneath /usr "
            "(not /usr itself)");
        row("bin with ..",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"bin", json::array({"/usr/bin/../../bin/sh"})}};
                       }),
            "namespaces.bin: \"/usr/bin/../../bin/sh\" must be a clean absolute path beneath "
            "/usr (not /usr itself)");
        row("two programs of one name",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {
                                   {"bin", json::array({"/usr/bin/ls", "/usr/local/bin/ls"})}};
                       }),
            "namespaces.bin: two programs named \"ls\"");
        row("empty cgroup name",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"name", ""}};
                       }),
            "cgroup.name: 1-64 of [A-Za-z0-9_.-], not . or ..");
        row("cgroup name ..",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"name", ".."}};
                       }),
            "cgroup.name: 1-64 of [A-Za-z0-9_.-], not . or ..");
        row("cgroup name with /",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"name", "a/b"}};
                       }),
            "cgroup.name: 1-64 of [A-Za-z0-9_.-], not . or ..");
        row("cgroup name of 65",
            policyWith({"cgroup"},
                       [](json &p) {
                           p["cgroup"] = {{"name", std::string(65, 'n')}};
                       }),
            "cgroup.name: 1-64 of [A-Za-z0-9_.-], not . or ..");
        row("empty profile",
            policyWith({"apparmor"},
                       [](json &p) {
                           p["apparmor"] = {{"profile", ""}};
                       }),
            "apparmor.profile: 1-128 of [A-Za-z0-9_.-]");
        row("profile with a space",
            policyWith({"apparmor"},
                       [](json &p) {
                           p["apparmor"] = {{"profile", "cmcp job"}};
                       }),
            "apparmor.profile: 1-128 of [A-Za-z0-9_.-]");
        row("profile of 129",
            policyWith({"apparmor"},
                       [](json &p) {
                           p["apparmor"] = {{"profile", std::string(129, 'p')}};
                       }),
            "apparmor.profile: 1-128 of [A-Za-z0-9_.-]");

        // Every path spelt one way, the way QDir::cleanPath spells it, so that paths compare as
        // they are spelt: a trailing "/" is refused like "//", "." and "..".
        row("workspace with a trailing slash",
            policyWith([](json &p) { p["workspace"] = "/srv/ws/"; }),
            "workspace: \"/srv/ws/\" must be an absolute path other than / " + clean);
        row("workspace with /./", policyWith([](json &p) { p["workspace"] = "/srv/./ws"; }),
            "workspace: \"/srv/./ws\" must be an absolute path other than / " + clean);
        row("workspace beginning with //", policyWith([](json &p) { p["workspace"] = "//srv/ws"; }),
            "workspace: \"//srv/ws\" must be an absolute path other than / " + clean);
        row("cwd with a trailing slash", policyWith([](json &p) { p["cwd"] = "sub/"; }),
            "cwd: \"sub/\" must be a relative path " + clean);
        row("cwd with //", policyWith([](json &p) { p["cwd"] = "a//b"; }),
            "cwd: \"a//b\" must be a relative path " + clean);
        row("workspace_at with a trailing slash",
            policyWith({"namespaces"},
                       [](json &p) {
                           p["namespaces"] = {{"workspace_at", "/ws/"}};
                       }),
            "namespaces.workspace_at: \"/ws/\" must be an absolute path other than / " + clean);
        row("landlock path with //",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"read", json::array({"/usr//lib"})}};
                       }),
            "landlock.read: \"/usr//lib\" must be an absolute path " + clean);

        // Every message is one line: what it quotes from the policy has its control characters,
        // quotes and backslashes escaped, and is cut after 200 bytes.
        row("unknown key with a newline", policyWith([](json &p) { p["a\nb"] = 1; }),
            "\"a\\nb\": unknown key");
        row("unknown limits key with a tab",
            policyWith({"rlimits"},
                       [](json &p) {
                           p["limits"] = {{"a\tb", 1}};
                       }),
            "limits.\"a\\tb\": unknown key");
        row("duplicate key of a control character",
            R"({"uid":1000,"gid":1000,"workspace":"/w","env":{"\u0001":"1","\u0001":"2"},"layers":[]})",
            "\"\\x01\": duplicate key");
        row("variable name with = and a newline",
            policyWith([](json &p) { p["env"]["A=\n"] = "x"; }),
            "env.\"A=\\n\": invalid variable name");
        row("unknown layer with a carriage return and quotes",
            policyWith([](json &p) { p["layers"].push_back("se\r\"linux\\"); }),
            "layers: unknown layer \"se\\r\\\"linux\\\\\"");
        row("path with a newline",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {{"read", json::array({"/usr/\nlib/"})}};
                       }),
            "landlock.read: \"/usr/\\nlib/\" must be an absolute path " + clean);
        row("path with line separators",
            policyWith([](json &p) { p["workspace"] = "/srv/\u00e9\u0085\u2028\u2029\x7f/"; }),
            "workspace: \"/srv/\u00e9\\xc2\\x85\\xe2\\x80\\xa8\\xe2\\x80\\xa9\\x7f/\" must be an "
            "absolute path other than / "
                    + clean);
        row("long path",
            policyWith({"landlock"},
                       [](json &p) {
                           p["landlock"] = {
                                   {"read", json::array({"/" + std::string(300, 'a') + "/"})}};
                       }),
            "landlock.read: \"/" + QByteArray(199, 'a') + "\u2026\" must be an absolute path "
                    + clean);
        row("long path cut between characters", policyWith([](json &p) {
                std::string path = "/";
                for (int i = 0; i < 150; ++i)
                    path += "\u00e9";
                p["workspace"] = path + "/";
            }),
            "workspace: \"/" + QByteArray("\u00e9").repeated(99)
                    + "\u2026\" must be an absolute path other than / " + clean);
        row("long path cut before an escape",
            policyWith([](json &p) { p["workspace"] = "/" + std::string(198, 'a') + "\n/"; }),
            "workspace: \"/" + QByteArray(198, 'a')
                    + "\u2026\" must be an absolute path other than / " + clean);

        // A layer's object exactly when the layer is requested.
        row("limits without rlimits", policyWith([](json &p) {
                p["limits"] = {{"open_files", 64}};
            }),
            "limits: given but the \"rlimits\" layer is not requested");
        row("landlock without its layer",
            policyWith([](json &p) { p["landlock"] = json::object(); }),
            "landlock: given but the \"landlock\" layer is not requested");
        row("seccomp without its layer", policyWith([](json &p) { p["seccomp"] = json::object(); }),
            "seccomp: given but the \"seccomp\" layer is not requested");
        row("namespaces without its layer",
            policyWith([](json &p) { p["namespaces"] = json::object(); }),
            "namespaces: given but the \"namespaces\" layer is not requested");
        row("cgroup without its layer", policyWith([](json &p) { p["cgroup"] = json::object(); }),
            "cgroup: given but the \"cgroup\" layer is not requested");
        row("apparmor without its layer", policyWith([](json &p) {
                p["apparmor"] = {{"profile", "cmcp-job-bash"}};
            }),
            "apparmor: given but the \"apparmor\" layer is not requested");
        row("landlock layer without its object", policyWith({"landlock"}, [](json &) {}),
            "landlock: missing (the \"landlock\" layer is requested)");
        row("apparmor layer without its object", policyWith({"apparmor"}, [](json &) {}),
            "apparmor: missing (the \"apparmor\" layer is requested)");
    }

    void refusals()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, message);
        Policy policy;
        policy.uid = 4242;
        policy.workspace = "/untouched";
        std::string error;
        QVERIFY2(!parse(text, policy, error), text.constData());
        QCOMPARE(QByteArray::fromStdString(error), message);
        QVERIFY(error.find('\n') == std::string::npos);
        // A refusal leaves what the caller holds as it was.
        QCOMPARE(policy.uid, uid_t(4242));
        QCOMPARE(policy.workspace, std::string("/untouched"));
        QVERIFY(policy.layers.empty());
    }

    void layerNames()
    {
        QCOMPARE(std::string(layerName(Layer::Identity)), std::string("identity"));
        QCOMPARE(std::string(layerName(Layer::Rlimits)), std::string("rlimits"));
        QCOMPARE(std::string(layerName(Layer::Cgroup)), std::string("cgroup"));
        QCOMPARE(std::string(layerName(Layer::Namespaces)), std::string("namespaces"));
        QCOMPARE(std::string(layerName(Layer::Landlock)), std::string("landlock"));
        QCOMPARE(std::string(layerName(Layer::Seccomp)), std::string("seccomp"));
        QCOMPARE(std::string(layerName(Layer::Apparmor)), std::string("apparmor"));
    }

    void readsAPolicyFileWhole()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray text = policyWith([](json &) {});
        const QString path = dir.filePath(QStringLiteral("policy.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        // More than one read's worth, so that the pieces are put together.
        const QByteArray padded = text + QByteArray(20000, ' ');
        QCOMPARE(file.write(padded), padded.size());
        file.close();
        std::string read, error;
        QVERIFY2(readPolicyFile(path.toStdString(), read, error), error.c_str());
        QCOMPARE(QByteArray::fromStdString(read), padded);
        Policy policy;
        QVERIFY2(parsePolicy(read, policy, error), error.c_str());

        const std::string missing = dir.filePath(QStringLiteral("missing.json")).toStdString();
        QVERIFY(!readPolicyFile(missing, read, error));
        QCOMPARE(error, "opening " + missing + ": No such file or directory");
    }

    void policiesOverOneMebibyteAreRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("big.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QCOMPARE(file.write(QByteArray(1 << 20, ' ')), qint64(1 << 20));
        file.close();
        std::string read, error;
        QVERIFY2(readPolicyFile(path.toStdString(), read, error), error.c_str());
        QCOMPARE(read.size(), size_t(1) << 20);

        QVERIFY(file.open(QIODevice::Append));
        QCOMPARE(file.write(" "), qint64(1));
        file.close();
        QVERIFY(!readPolicyFile(path.toStdString(), read, error));
        QCOMPARE(error, std::string("policy larger than 1 MiB"));
    }

    void readsAPolicyFromADescriptor()
    {
        int fds[2];
        QCOMPARE(::pipe2(fds, O_CLOEXEC), 0);
        const QByteArray text = policyWith([](json &) {});
        QCOMPARE(::write(fds[1], text.constData(), size_t(text.size())), ssize_t(text.size()));
        ::close(fds[1]);
        std::string read, error;
        QVERIFY2(readPolicyFd(fds[0], read, error), error.c_str());
        ::close(fds[0]);
        QCOMPARE(QByteArray::fromStdString(read), text);

        QVERIFY(!readPolicyFd(fds[0], read, error));
        QCOMPARE(error, "reading policy fd " + std::to_string(fds[0]) + ": Bad file descriptor");
    }
    // The one writer and the jail's reader speak the same keys: a policy with every field set
    // is written with exactly the keys the protocol declares, object by object (so none the jail
    // reads is missing from the writer, program_from_host included), and the jail reads back the
    // very policy that was written.
    void theWriterWritesEveryKeyTheJailReadsAndNoOther()
    {
        const Policy policy = everyFieldOfThePolicy();
        const QJsonObject written = cmcp::jailPolicyObject(policy);
        for (const char *name :
             {"", "limits", "landlock", "seccomp", "namespaces", "cgroup", "apparmor"})
            QCOMPARE(keysOf(written, name), declaredKeys(name));

        Policy parsed;
        std::string error;
        QVERIFY2(parsePolicy(policyJson(policy), parsed, error), error.c_str());
        QVERIFY(parsed == policy);
    }

    // Written only when set: the policies of jobs that do not use it stay as they were.
    void programFromHostIsLeftOutWhenNotSet()
    {
        Policy policy = everyFieldOfThePolicy();
        policy.namespaces->programFromHost = false;
        QVERIFY(!cmcp::jailPolicyObject(policy)
                         .value(QLatin1String("namespaces"))
                         .toObject()
                         .contains(QLatin1String("program_from_host")));
    }

    // The daemon holds the jail's own structure, so a key or a layer the jail does not know
    // cannot be written (the test above); and whatever else the jail would refuse, the daemon
    // refuses first, with the jail's own message, by reading what it would send with the jail's
    // parser: jailPolicyText is empty and JailJob starts no jail.
    void aPolicyTheJailWouldRefuseIsRefusedByTheDaemon_data()
    {
        QTest::addColumn<int>("change");
        QTest::addColumn<QString>("error");
        QTest::newRow("relative workspace")
                << 0
                << QStringLiteral("workspace: \"srv/ws\" must be an absolute path other than / "
                                  "(no \"//\", no \".\" or \"..\" component, no trailing \"/\")");
        QTest::newRow("an object without its layer")
                << 1
                << QStringLiteral("landlock: given but the \"landlock\" layer is not requested");
        QTest::newRow("a layer twice") << 2 << QStringLiteral("layers: \"rlimits\" listed twice");
        QTest::newRow("a path that is not clean")
                << 3
                << QStringLiteral("landlock.read: \"/usr/../etc\" must be an absolute path (no "
                                  "\"//\", no \".\" or \"..\" component, no trailing \"/\")");
    }

    void aPolicyTheJailWouldRefuseIsRefusedByTheDaemon()
    {
        QFETCH(int, change);
        QFETCH(QString, error);
        Policy policy = everyFieldOfThePolicy();
        switch (change) {
        case 0:
            policy.workspace = "srv/ws";
            break;
        case 1:
            std::erase(policy.layers, Layer::Landlock);
            break;
        case 2:
            policy.layers.push_back(Layer::Rlimits);
            break;
        case 3:
            policy.landlock->read = {"/usr/../etc"};
            break;
        }
        QString daemonError;
        QVERIFY(cmcp::jailPolicyText(policy, &daemonError).isEmpty());
        QVERIFY2(daemonError.contains(error), qPrintable(daemonError));

        Policy parsed;
        std::string jailError;
        QVERIFY(!parsePolicy(policyJson(policy), parsed, jailError));
        QCOMPARE(QString::fromStdString(jailError), error);
    }
};

QTEST_GUILESS_MAIN(TestJailPolicy)
#include "tst_jailpolicy.moc"
