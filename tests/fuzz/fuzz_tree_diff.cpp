// The tree walk of workspace_diff over trees a job could build: the input is a program that makes
// two trees (directories, chains, files of any bytes, FIFOs, links out and in, hard links, names
// of any bytes). Whatever the trees, the diff ends within its bounds and every change it names is
// a path inside the trees, no deeper than the depth bound allows; a tree compared with itself has
// no change; and a complete diff from A to B adds exactly what the one from B to A removes.
#include "FuzzSupport.h"
#include "managers/TreeDiff.h"
#include "posix/TreeRemoval.h"
#include "posix/UniqueFd.h"

#include <QJsonObject>
#include <QSet>

#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace cmcp;

namespace {

constexpr int kMaxDepth = 8;

// Reads the input a byte at a time; zeros once it is spent.
class Input
{
public:
    Input(const uint8_t *data, size_t size) : m_data(data), m_size(size) { }
    bool empty() const { return m_at >= m_size; }
    uint8_t byte() { return m_at < m_size ? m_data[m_at++] : 0; }
    std::string name()
    {
        // Names of any bytes but '/' and NUL, and never "." or "..": 1 to 8 of them.
        std::string text;
        const int length = 1 + byte() % 8;
        for (int i = 0; i < length; ++i) {
            const uint8_t c = byte();
            text.push_back(c == 0 || c == '/' ? 'x' : char(c));
        }
        if (text == "." || text == "..")
            text = "n";
        return text;
    }

private:
    const uint8_t *m_data;
    size_t m_size;
    size_t m_at = 0;
};

// Builds below `top` what the input says, keeping a stack of open directories.
void build(int top, Input &input, int steps)
{
    std::vector<UniqueFd> stack;
    stack.emplace_back(::dup(top));
    for (int step = 0; step < steps && !input.empty(); ++step) {
        const int here = stack.back().get();
        const uint8_t op = input.byte() % 9;
        const std::string name = input.name();
        switch (op) {
        case 0: // a directory, entered
            if (::mkdirat(here, name.c_str(), 0755) == 0 && stack.size() < 40) {
                UniqueFd child(::openat(here, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
                if (child.isValid())
                    stack.push_back(std::move(child));
            }
            break;
        case 1: // back up
            if (stack.size() > 1)
                stack.pop_back();
            break;
        case 2: { // a file of bytes from the input
            const UniqueFd file(::openat(here, name.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK,
                                         0644));
            if (file.isValid()) {
                std::string content(input.byte() % 64, '\0');
                for (char &c : content)
                    c = char(input.byte());
                (void)!::write(file.get(), content.data(), content.size());
            }
            break;
        }
        case 3:
            ::symlinkat(input.byte() % 2 ? "/" : "../../..", here, name.c_str());
            break;
        case 4:
            ::mkfifoat(here, name.c_str(), 0644);
            break;
        case 5: { // a chain deeper than the walk enters
            UniqueFd current(::dup(here));
            const int levels = kMaxDepth + 3 + input.byte() % 8;
            for (int level = 0; level < levels; ++level) {
                if (::mkdirat(current.get(), name.c_str(), 0755) != 0)
                    break;
                current = UniqueFd(
                        ::openat(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
                if (!current.isValid())
                    break;
            }
            break;
        }
        case 6: // a hard link to a file of the same directory, if there is one by that name
            ::linkat(here, name.c_str(), here, (name + "h").c_str(), 0);
            break;
        case 7: { // a mode, never through a link: the trees hold links to / and above
            const UniqueFd target(
                    ::openat(here, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (target.isValid())
                ::fchmod(target.get(), input.byte() % 2 ? 0600 : 0755);
            break;
        }
        case 8:
            ::unlinkat(here, name.c_str(), input.byte() % 2 ? AT_REMOVEDIR : 0);
            break;
        }
    }
}

TreeDiffLimits limits()
{
    TreeDiffLimits limits;
    limits.maxChanges = 200;
    limits.textDiffBytes = 32;
    limits.walk.maxDepth = kMaxDepth;
    limits.walk.maxEntries = 5000;
    limits.walk.time = std::chrono::seconds(5);
    return limits;
}

QSet<QString> pathsOf(const TreeDifference &difference, const char *change)
{
    QSet<QString> paths;
    for (const QJsonValue &entry : difference.changes)
        if (entry[QLatin1String("change")].toString() == QLatin1String(change))
            paths.insert(entry[QLatin1String("path")].toString());
    return paths;
}

void checkShape(const TreeDifference &difference)
{
    FUZZ_CHECK(difference.changes.size() <= 200);
    FUZZ_CHECK(difference.truncated == !difference.truncatedBecause.isEmpty());
    for (const QJsonValue &entry : difference.changes) {
        const QString path = entry[QLatin1String("path")].toString();
        FUZZ_CHECK(!path.isEmpty() && !path.startsWith(QLatin1Char('/')));
        FUZZ_CHECK(path.count(QLatin1Char('/')) <= kMaxDepth);
    }
}

} // namespace

mode_t modeOf(const char *path)
{
    struct stat status
    {
    };
    FUZZ_CHECK(::stat(path, &status) == 0);
    return status.st_mode;
}

// The directory each input's trees are made in, removed when the fuzzer exits.
struct Scratch
{
    Scratch()
    {
        const char *tmp = std::getenv("TMPDIR");
        path = std::string(tmp && *tmp ? tmp : "/tmp") + "/fuzz-tree-diff-XXXXXX";
        FUZZ_CHECK(::mkdtemp(path.data()) != nullptr);
        rootMode = modeOf("/");
        mode = modeOf(path.c_str());
    }
    ~Scratch() { ::rmdir(path.c_str()); }
    std::string path;
    mode_t rootMode = 0;
    mode_t mode = 0;
};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const Scratch scratch;
    const UniqueFd top(::open(scratch.path.c_str(), O_RDONLY | O_DIRECTORY));
    FUZZ_CHECK(top.isValid());
    FUZZ_CHECK(::mkdirat(top.get(), "a", 0755) == 0 && ::mkdirat(top.get(), "b", 0755) == 0);
    {
        const UniqueFd a(::openat(top.get(), "a", O_RDONLY | O_DIRECTORY));
        const UniqueFd b(::openat(top.get(), "b", O_RDONLY | O_DIRECTORY));
        Input input(data, size);
        build(a.get(), input, 64);
        build(b.get(), input, 64);

        const TreeDifference itself = diffTrees(a.get(), a.get(), limits());
        checkShape(itself);
        FUZZ_CHECK(itself.changes.isEmpty());

        const TreeDifference forward = diffTrees(a.get(), b.get(), limits());
        const TreeDifference backward = diffTrees(b.get(), a.get(), limits());
        checkShape(forward);
        checkShape(backward);
        if (!forward.truncated && !backward.truncated) {
            FUZZ_CHECK(pathsOf(forward, "added") == pathsOf(backward, "removed"));
            FUZZ_CHECK(pathsOf(forward, "removed") == pathsOf(backward, "added"));
        }
    }
    QString error;
    FUZZ_CHECK(removeTreeAt(top.get(), "a", &error) && removeTreeAt(top.get(), "b", &error));
    // The trees hold links to / and above: nothing outside them may have changed.
    FUZZ_CHECK(modeOf("/") == scratch.rootMode && modeOf(scratch.path.c_str()) == scratch.mode);
    return 0;
}
