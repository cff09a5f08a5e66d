// Policy parsing: strict JSON, every key known, every type checked. Nothing here touches
// process state; main.cpp decides what to do with a refused policy.
#include "jail/protocol/Policy.h"

#include "jail/protocol/PolicyFields.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <tuple>

namespace cmcp::jail {

namespace {

using json = nlohmann::json;
namespace field = cmcp::jail_protocol::policy;

constexpr std::size_t kMaxPolicyBytes = 1 << 20;
// Paths in any one list of the policy.
constexpr std::size_t kMaxPaths = 256;

struct LayerEntry
{
    const char *name;
    Layer layer;
};

constexpr LayerEntry kLayers[] = {
        {field::kLayerIdentity, Layer::Identity}, {field::kLayerRlimits, Layer::Rlimits},
        {field::kLayerCgroup, Layer::Cgroup},     {field::kLayerNamespaces, Layer::Namespaces},
        {field::kLayerLandlock, Layer::Landlock}, {field::kLayerSeccomp, Layer::Seccomp},
        {field::kLayerApparmor, Layer::Apparmor},
};

bool hasNul(const std::string &s)
{
    return s.find('\0') != std::string::npos;
}

// The most bytes of an offending value an error quotes, and of nlohmann's own message (which
// quotes the token it stopped at, however long).
constexpr std::size_t kQuotedMax = 200;
constexpr std::size_t kJsonMessageMax = 400;

// The length of the UTF-8 sequence at text[i] when it is a valid one of a character that
// breaks no line: not a C1 control (U+0085 is a newline to some readers), not U+2028 or
// U+2029. 0 for anything else, which is then escaped byte by byte.
std::size_t printableUtf8(const std::string &text, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned lead = byte(i);
    if (lead < 0xC2 || lead >= 0xF5)
        return 0; // ASCII, a continuation byte, an overlong or beyond U+10FFFF
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (i + length > text.size())
        return 0;
    char32_t c = lead & (0x7F >> length);
    for (std::size_t k = i + 1; k < i + length; ++k) {
        if ((byte(k) & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (byte(k) & 0x3F);
    }
    constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000}; // below: overlong
    const bool valid = c >= kLeast[length] && c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF);
    const bool breaksLines = c <= 0x9F || c == 0x2028 || c == 0x2029;
    return valid && !breaksLines ? length : 0;
}

// `text` on one line: control characters, backslashes and double quotes escaped (\n, \t, \r,
// \\, \", else \xHH), and cut after `max` bytes with "…". The jail's messages end up in the
// daemon's log and in a tool's result, one line each: a newline copied from a policy must not
// start a line of its own there.
std::string escaped(const std::string &text, std::size_t max)
{
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        std::string piece;
        std::size_t used = 1; // bytes of `text` that `piece` stands for
        if (c == '\n')
            piece = "\\n";
        else if (c == '\t')
            piece = "\\t";
        else if (c == '\r')
            piece = "\\r";
        else if (c == '\\' || c == '"')
            piece = {'\\', static_cast<char>(c)};
        else if (c >= 0x20 && c < 0x7F)
            piece = std::string(1, static_cast<char>(c));
        else if (const std::size_t length = printableUtf8(text, i); length > 0) {
            piece = text.substr(i, length);
            used = length;
        } else
            piece = {'\\', 'x', kHex[c >> 4], kHex[c & 0xF]};
        if (out.size() + piece.size() > max) {
            out += "\u2026";
            break;
        }
        out += piece;
        i += used;
    }
    return out;
}

// An offending value as an error names it: in double quotes, escaped and capped.
std::string quotedValue(const std::string &value)
{
    return '"' + escaped(value, kQuotedMax) + '"';
}

// A key of the policy or a file name as an error names it: as it is when it needs no escaping
// (every key the parser knows, and most it does not), else quoted.
std::string plainOrQuoted(const std::string &key)
{
    return escaped(key, kQuotedMax) == key ? key : quotedValue(key);
}

// A non-negative JSON integer (not a float, not a bool, not negative) within [min, max].
bool readUnsigned(const json &obj, const char *key, std::uint64_t min, std::uint64_t max,
                  std::uint64_t &out, std::string &error)
{
    const json &v = obj.at(key);
    if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned())) {
        error = std::string(key) + ": must be a non-negative integer";
        return false;
    }
    out = v.get<std::uint64_t>();
    if (out < min || out > max) {
        error = std::string(key) + ": " + std::to_string(out) + " is outside ["
                + std::to_string(min) + ", " + std::to_string(max) + "]";
        return false;
    }
    return true;
}

// No "." or ".." components, no empty components except a leading "/" (absolute) or none.
bool cleanComponents(const std::string &path)
{
    std::size_t i = 0;
    while (i <= path.size()) {
        std::size_t j = path.find('/', i);
        if (j == std::string::npos)
            j = path.size();
        std::string part = path.substr(i, j - i);
        if (part == "." || part == "..")
            return false;
        if (part.empty() && i != 0 && j != path.size())
            return false; // "a//b"
        i = j + 1;
    }
    return true;
}

bool parseLimits(const json &v, Limits &out, std::string &error)
{
    if (!v.is_object()) {
        error = "limits: must be an object";
        return false;
    }
    // Upper bounds are sanity bounds; the kernel refuses anything above the hard limit.
    constexpr std::uint64_t kBig = std::uint64_t(1) << 62;
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &key = it.key();
        std::uint64_t n = 0;
        std::optional<std::uint64_t> *slot = nullptr;
        std::uint64_t max = kBig;
        if (key == field::kCpuSeconds) {
            slot = &out.cpuSeconds;
            max = 1u << 30;
        } else if (key == field::kFileSizeBytes)
            slot = &out.fileSizeBytes;
        else if (key == field::kOpenFiles)
            slot = &out.openFiles;
        else if (key == field::kProcesses)
            slot = &out.processes;
        else if (key == field::kAddressSpaceBytes)
            slot = &out.addressSpaceBytes;
        else {
            error = "limits." + plainOrQuoted(key) + ": unknown key";
            return false;
        }
        std::string e;
        if (!readUnsigned(v, key.c_str(), 1, max, n, e)) {
            error = "limits." + e;
            return false;
        }
        *slot = n;
    }
    return true;
}

// `path` is `dir` or beneath it (both absolute and clean).
bool beneathOrEqual(const std::string &path, const std::string &dir)
{
    if (dir == "/")
        return true;
    return path == dir
            || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0
                && path[dir.size()] == '/');
}

// An absolute, clean path (see cleanComponents), without a trailing slash.
bool absoluteClean(const std::string &path)
{
    return !path.empty() && path[0] == '/' && !hasNul(path) && cleanComponents(path)
            && (path.size() == 1 || path.back() != '/');
}

// A relative, clean path without a trailing slash ("cwd"; empty is the workspace itself).
bool relativeClean(const std::string &path)
{
    return path.empty()
            || (path[0] != '/' && !hasNul(path) && cleanComponents(path) && path.back() != '/');
}

// What a clean path is, as the errors say it: one spelling per path, the one the daemon's
// QDir::cleanPath gives, so that paths compare as they are spelt (a workspace "/srv/ws/"
// would not contain "/srv/ws/bin" when the Landlock paths are checked against it).
constexpr const char *kCleanRule = "(no \"//\", no \".\" or \"..\" component, no trailing \"/\")";

bool readString(const json &obj, const std::string &where, std::string &out, std::string &error)
{
    if (!obj.is_string()) {
        error = where + ": must be a string";
        return false;
    }
    out = obj.get<std::string>();
    return true;
}

bool readBool(const json &obj, const std::string &where, bool &out, std::string &error)
{
    if (!obj.is_boolean()) {
        error = where + ": must be true or false";
        return false;
    }
    out = obj.get<bool>();
    return true;
}

// An array of at most kMaxPaths clean absolute paths beneath /usr (not /usr itself): the
// namespaces layer's "exec_paths" and "bin".
bool readPathsBeneathUsr(const json &v, const std::string &where, std::vector<std::string> &out,
                         std::string &error)
{
    if (!v.is_array() || v.size() > kMaxPaths) {
        error = where + ": must be an array of at most " + std::to_string(kMaxPaths)
                + " paths beneath /usr";
        return false;
    }
    for (const json &e : v) {
        std::string path;
        if (!readString(e, where, path, error))
            return false;
        if (!absoluteClean(path) || path == "/usr" || !beneathOrEqual(path, "/usr")) {
            error = where + ": " + quotedValue(path)
                    + " must be a clean absolute path beneath /usr (not /usr itself)";
            return false;
        }
        out.push_back(std::move(path));
    }
    return true;
}

// The "landlock" object; see LandlockPolicy in Policy.h for the semantics.
bool parseLandlock(const json &v, const std::string &workspace, LandlockPolicy &out,
                   std::string &error)
{
    if (!v.is_object()) {
        error = "landlock: must be an object";
        return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &key = it.key();
        const std::string where = "landlock." + plainOrQuoted(key);
        if (key == field::kNetwork) {
            if (!readBool(it.value(), where, out.network, error))
                return false;
            continue;
        }
        std::vector<std::string> *list = key == field::kRead ? &out.read
                : key == field::kExecute                     ? &out.execute
                : key == field::kWrite                       ? &out.write
                                                             : nullptr;
        if (!list) {
            error = where + ": unknown key";
            return false;
        }
        if (!it.value().is_array()) {
            error = where + ": must be an array of absolute paths";
            return false;
        }
        if (it.value().size() > kMaxPaths) {
            error = where + ": more than " + std::to_string(kMaxPaths) + " paths";
            return false;
        }
        for (const json &e : it.value()) {
            if (!e.is_string()) {
                error = where + ": must be an array of absolute paths";
                return false;
            }
            std::string path = e.get<std::string>();
            if (!absoluteClean(path)) {
                error = where + ": " + quotedValue(path) + " must be an absolute path "
                        + kCleanRule;
                return false;
            }
            list->push_back(std::move(path));
        }
    }
    std::vector<std::string> writable = out.write;
    writable.push_back(workspace);
    for (const std::string &x : out.execute)
        for (const std::string &w : writable)
            if (beneathOrEqual(x, w) || beneathOrEqual(w, x)) {
                error = "landlock.execute: " + quotedValue(x) + " overlaps the writable "
                        + quotedValue(w) + " (a job must not run programs it wrote)";
                return false;
            }
    return true;
}

// The "seccomp" object; see SeccompPolicy in Policy.h.
bool parseSeccomp(const json &v, SeccompPolicy &out, std::string &error)
{
    if (!v.is_object()) {
        error = "seccomp: must be an object";
        return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key() != field::kNetwork) {
            error = "seccomp." + plainOrQuoted(it.key()) + ": unknown key";
            return false;
        }
        if (!readBool(it.value(), "seccomp.network", out.network, error))
            return false;
    }
    return true;
}

// The "namespaces" object; see NamespacesPolicy in Policy.h.
bool parseNamespaces(const json &v, NamespacesPolicy &out, std::string &error)
{
    if (!v.is_object()) {
        error = "namespaces: must be an object";
        return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &key = it.key();
        const std::string where = "namespaces." + plainOrQuoted(key);
        if (key == field::kNetwork) {
            if (!readBool(it.value(), where, out.network, error))
                return false;
        } else if (key == field::kProgramFromHost) {
            if (!readBool(it.value(), where, out.programFromHost, error))
                return false;
        } else if (key == field::kHostname) {
            if (!readString(it.value(), where, out.hostname, error))
                return false;
            bool ok = !out.hostname.empty() && out.hostname.size() <= 63;
            for (char c : out.hostname)
                ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-');
            if (!ok) {
                error = where + ": 1-63 letters, digits or '-'";
                return false;
            }
        } else if (key == field::kWorkspaceAt) {
            if (!readString(it.value(), where, out.workspaceAt, error))
                return false;
            if (!absoluteClean(out.workspaceAt) || out.workspaceAt == "/") {
                error = where + ": " + quotedValue(out.workspaceAt)
                        + " must be an absolute path other than / " + kCleanRule;
                return false;
            }
            for (const char *system :
                 {"/usr", "/etc", "/dev", "/proc", "/tmp", "/lib", "/lib64", "/bin", "/sbin"})
                if (beneathOrEqual(out.workspaceAt, system)) {
                    error = where + ": may not be at or below " + system;
                    return false;
                }
        } else if (key == field::kEgressPort) {
            std::uint64_t port = 0;
            if (!readUnsigned(v, key.c_str(), 1, 65535, port, error)) {
                error = "namespaces." + error;
                return false;
            }
            out.egressPort = static_cast<std::uint16_t>(port);
        } else if (key == field::kTmpSizeMb) {
            if (!readUnsigned(v, key.c_str(), 1, 4096, out.tmpSizeMb, error)) {
                error = "namespaces." + error;
                return false;
            }
        } else if (key == field::kExecPaths) {
            out.execPaths.emplace();
            if (!readPathsBeneathUsr(it.value(), where, *out.execPaths, error))
                return false;
        } else if (key == field::kBin) {
            if (!readPathsBeneathUsr(it.value(), where, out.bin, error))
                return false;
            // Linked by name into one directory: two programs may not share a name.
            std::set<std::string> names;
            for (const std::string &path : out.bin)
                if (!names.insert(path.substr(path.rfind('/') + 1)).second) {
                    error = where + ": two programs named "
                            + quotedValue(path.substr(path.rfind('/') + 1));
                    return false;
                }
        } else {
            error = where + ": unknown key";
            return false;
        }
    }
    return true;
}

// The "cgroup" object; see CgroupPolicy in Policy.h.
bool parseCgroup(const json &v, CgroupPolicy &out, std::string &error)
{
    if (!v.is_object()) {
        error = "cgroup: must be an object";
        return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &key = it.key();
        std::optional<std::uint64_t> *slot = nullptr;
        std::uint64_t min = 1, max = 0;
        if (key == field::kMemoryBytes) {
            slot = &out.memoryBytes;
            min = 1 << 20;
            max = std::uint64_t(1) << 50;
        } else if (key == field::kPids) {
            slot = &out.pids;
            max = 4194304;
        } else if (key == field::kCpuPercent) {
            slot = &out.cpuPercent;
            max = 100000;
        } else if (key == field::kName) {
            if (!readString(it.value(), "cgroup.name", out.name, error))
                return false;
            bool ok = !out.name.empty() && out.name.size() <= 64 && out.name != "."
                    && out.name != "..";
            for (char c : out.name)
                ok = ok
                        && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'
                            || c == '-');
            if (!ok) {
                error = "cgroup.name: 1-64 of [A-Za-z0-9_.-], not . or ..";
                return false;
            }
            continue;
        } else {
            error = "cgroup." + plainOrQuoted(key) + ": unknown key";
            return false;
        }
        std::uint64_t n = 0;
        if (!readUnsigned(v, key.c_str(), min, max, n, error)) {
            error = "cgroup." + error;
            return false;
        }
        *slot = n;
    }
    return true;
}

// The "apparmor" object; see ApparmorPolicy in Policy.h.
bool parseApparmor(const json &v, ApparmorPolicy &out, std::string &error)
{
    if (!v.is_object() || v.size() != 1 || !v.contains(field::kProfile)) {
        error = "apparmor: must be an object with exactly the key \"profile\"";
        return false;
    }
    if (!readString(v[field::kProfile], "apparmor.profile", out.profile, error))
        return false;
    bool ok = !out.profile.empty() && out.profile.size() <= 128;
    for (char c : out.profile)
        ok = ok
                && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'
                    || c == '-');
    if (!ok) {
        error = "apparmor.profile: 1-128 of [A-Za-z0-9_.-]";
        return false;
    }
    return true;
}

} // namespace

const char *layerName(Layer layer)
{
    for (const auto &e : kLayers)
        if (e.layer == layer)
            return e.name;
    return "?";
}

std::optional<Layer> layerNamed(std::string_view name)
{
    for (const auto &e : kLayers)
        if (name == e.name)
            return e.layer;
    return std::nullopt;
}

void Policy::setEnv(const std::string &name, const std::string &value)
{
    for (auto &[existing, current] : env) {
        if (existing == name) {
            current = value;
            return;
        }
    }
    env.emplace_back(name, value);
}

const std::string *Policy::envValue(std::string_view name) const
{
    for (const auto &[existing, value] : env)
        if (existing == name)
            return &value;
    return nullptr;
}

const std::string &Policy::jobWorkspace() const
{
    return namespaces ? namespaces->workspaceAt : workspace;
}

bool Policy::wants(Layer layer) const
{
    for (Layer l : layers)
        if (l == layer)
            return true;
    return false;
}

bool parsePolicy(const std::string &text, Policy &out, std::string &error)
{
    // Duplicate keys are refused: nlohmann silently keeps the last one, which would let two
    // readers of the same policy disagree.
    std::vector<std::set<std::string>> seen;
    std::string duplicate;
    json::parser_callback_t cb = [&](int, json::parse_event_t event, json &parsed) {
        if (event == json::parse_event_t::object_start)
            seen.emplace_back();
        else if (event == json::parse_event_t::object_end) {
            if (!seen.empty())
                seen.pop_back();
        } else if (event == json::parse_event_t::key && !seen.empty()) {
            std::string k = parsed.get<std::string>();
            if (!seen.back().insert(k).second && duplicate.empty())
                duplicate = k;
        }
        return true;
    };
    json doc;
    try {
        doc = json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
    } catch (const json::exception &e) {
        // parse_error, and out_of_range for a number no C++ type holds ("1e400"): a refusal,
        // never an exception out of the jail (which would end it in std::terminate).
        error = "not valid JSON: " + escaped(e.what(), kJsonMessageMax);
        return false;
    }
    if (!duplicate.empty()) {
        error = plainOrQuoted(duplicate) + ": duplicate key";
        return false;
    }
    if (!doc.is_object()) {
        error = "the policy must be a JSON object";
        return false;
    }

    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (!field::isOneOf(field::kPolicyKeys, it.key())) {
            error = plainOrQuoted(it.key()) + ": unknown key";
            return false;
        }
    }
    auto require = [&](const char *key) {
        if (doc.contains(key))
            return true;
        error = std::string(key) + ": missing";
        return false;
    };

    Policy p;
    std::uint64_t id = 0;
    // (uid_t)-1 is "no change" to setresuid; the one below it is the overflow id on many systems.
    constexpr std::uint64_t kMaxId = 0xFFFFFFFDu;
    if (!require(field::kUid) || !readUnsigned(doc, field::kUid, kMinId, kMaxId, id, error))
        return false;
    p.uid = static_cast<uid_t>(id);
    if (!require(field::kGid) || !readUnsigned(doc, field::kGid, kMinId, kMaxId, id, error))
        return false;
    p.gid = static_cast<gid_t>(id);
    for (const char *key : {field::kWorkspace, field::kEnv, field::kLayers})
        if (!require(key))
            return false;

    const json &ws = doc[field::kWorkspace];
    if (!ws.is_string()) {
        error = "workspace: must be a string";
        return false;
    }
    p.workspace = ws.get<std::string>();
    if (!absoluteClean(p.workspace) || p.workspace == "/") {
        error = "workspace: " + quotedValue(p.workspace) + " must be an absolute path other than / "
                + kCleanRule;
        return false;
    }

    if (doc.contains(field::kCwd)) {
        const json &cwd = doc[field::kCwd];
        if (!cwd.is_string()) {
            error = "cwd: must be a string";
            return false;
        }
        p.cwd = cwd.get<std::string>();
        if (!relativeClean(p.cwd)) {
            error = "cwd: " + quotedValue(p.cwd) + " must be a relative path " + kCleanRule;
            return false;
        }
    }

    const json &env = doc[field::kEnv];
    if (!env.is_object()) {
        error = "env: must be an object of strings";
        return false;
    }
    for (auto it = env.begin(); it != env.end(); ++it) {
        const std::string &name = it.key();
        if (name.empty() || name.find('=') != std::string::npos || hasNul(name)) {
            error = "env." + plainOrQuoted(name) + ": invalid variable name";
            return false;
        }
        if (!it.value().is_string()) {
            error = "env." + plainOrQuoted(name) + ": must be a string";
            return false;
        }
        std::string value = it.value().get<std::string>();
        if (hasNul(value)) {
            error = "env." + plainOrQuoted(name) + ": contains a NUL byte";
            return false;
        }
        p.env.emplace_back(name, std::move(value));
    }

    if (doc.contains(field::kLimits) && !parseLimits(doc[field::kLimits], p.limits, error))
        return false;

    const json &layers = doc[field::kLayers];
    if (!layers.is_array()) {
        error = "layers: must be an array of layer names";
        return false;
    }
    for (const json &l : layers) {
        if (!l.is_string()) {
            error = "layers: must be an array of layer names";
            return false;
        }
        const std::string name = l.get<std::string>();
        const LayerEntry *found = nullptr;
        for (const auto &e : kLayers)
            if (name == e.name)
                found = &e;
        if (!found) {
            error = "layers: unknown layer " + quotedValue(name);
            return false;
        }
        if (p.wants(found->layer)) {
            error = "layers: \"" + name + "\" listed twice";
            return false;
        }
        p.layers.push_back(found->layer);
    }
    // The jail is started by a root daemon: without the identity layer the job would run as
    // host uid 0, which is no jail at all.
    if (!p.wants(Layer::Identity)) {
        error = "layers: \"identity\" is mandatory (the job must never run as host uid 0)";
        return false;
    }
    if (doc.contains(field::kLimits) && !p.wants(Layer::Rlimits)) {
        error = "limits: given but the \"rlimits\" layer is not requested";
        return false;
    }
    // A layer's object is given exactly when the layer is requested ("seccomp" may be omitted).
    auto layerObject = [&](const char *key, Layer layer, bool optional) {
        if (doc.contains(key) && !p.wants(layer)) {
            error = std::string(key) + ": given but the \"" + key + "\" layer is not requested";
            return false;
        }
        if (!optional && p.wants(layer) && !doc.contains(key)) {
            error = std::string(key) + ": missing (the \"" + key + "\" layer is requested)";
            return false;
        }
        return true;
    };
    for (auto [key, layer, optional] : {std::tuple{field::kLandlock, Layer::Landlock, false},
                                        std::tuple{field::kNamespaces, Layer::Namespaces, true},
                                        std::tuple{field::kCgroup, Layer::Cgroup, true},
                                        std::tuple{field::kApparmor, Layer::Apparmor, false},
                                        std::tuple{field::kSeccomp, Layer::Seccomp, true}})
        if (!layerObject(key, layer, optional))
            return false;

    if (p.wants(Layer::Namespaces)) {
        p.namespaces.emplace();
        if (doc.contains(field::kNamespaces)
            && !parseNamespaces(doc[field::kNamespaces], *p.namespaces, error))
            return false;
        if (p.namespaces->egressPort && p.namespaces->network) {
            error = "namespaces.egress_port: only with \"network\": false (the job's own "
                    "network namespace)";
            return false;
        }
    }
    if (p.wants(Layer::Cgroup)) {
        p.cgroup.emplace();
        if (doc.contains(field::kCgroup) && !parseCgroup(doc[field::kCgroup], *p.cgroup, error))
            return false;
    }
    if (p.wants(Layer::Apparmor)) {
        p.apparmor.emplace();
        if (!parseApparmor(doc[field::kApparmor], *p.apparmor, error))
            return false;
    }
    if (doc.contains(field::kLandlock)) {
        p.landlock.emplace();
        // Landlock paths are the job's view: inside the minimal root with namespaces.
        if (!parseLandlock(doc[field::kLandlock], p.jobWorkspace(), *p.landlock, error))
            return false;
    }

    if (doc.contains(field::kSeccomp) && !parseSeccomp(doc[field::kSeccomp], p.seccomp, error))
        return false;

    out = std::move(p);
    return true;
}

bool readPolicyFd(int fd, std::string &text, std::string &error)
{
    text.clear();
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            error = std::string("reading policy fd ") + std::to_string(fd) + ": "
                    + std::strerror(errno);
            return false;
        }
        if (n == 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > kMaxPolicyBytes) {
            error = "policy larger than 1 MiB";
            return false;
        }
    }
    return true;
}

bool readPolicyFile(const std::string &path, std::string &text, std::string &error)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        error = "opening " + plainOrQuoted(path) + ": " + std::strerror(errno);
        return false;
    }
    bool ok = readPolicyFd(fd, text, error);
    ::close(fd);
    return ok;
}

} // namespace cmcp::jail
