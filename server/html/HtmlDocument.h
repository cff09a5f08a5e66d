// An HTML5 document parsed by gumbo within limits of time and memory.
//
// Gumbo's tree builder scans the stack of open elements for many tags, so deeply nested markup
// costs time that grows faster than its size (measured: 10,000 nested <div> 0.6 s, 20,000 4.8 s,
// 100,000 over 100 s). Every allocation gumbo makes goes through this class, which counts the
// memory, looks at the clock, and on exceeding a limit leaves the parse by longjmp and frees
// every block it handed out: a hostile page costs at most the limits, never a stuck thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

struct GumboInternalNode;
struct GumboInternalOutput;
using GumboNode = GumboInternalNode;

namespace cmcp::html {

struct ParseLimits
{
    std::chrono::milliseconds time{5000};
    size_t memoryBytes = size_t(512) * 1024 * 1024;
    // Set from another thread to stop the parse (a cancelled call).
    const std::atomic<bool> *cancel = nullptr;
};

class Document
{
public:
    // nullptr with the reason in `error` when a limit stopped the parse. Bytes that are not
    // UTF-8 are read as replacement characters (gumbo's rule). The document keeps its own copy
    // of the text: gumbo's tree points into it.
    static std::unique_ptr<Document> parse(std::string_view utf8, const ParseLimits &limits,
                                           std::string *error);
    ~Document();
    Document(const Document &) = delete;
    Document &operator=(const Document &) = delete;

    const GumboNode *document() const; // the document node
    const GumboNode *root() const; // the <html> element

    struct Arena; // gumbo's allocations (HtmlDocument.cpp)

private:
    Document() = default;

    std::string m_text;
    std::unique_ptr<Arena> m_arena;
    GumboInternalOutput *m_output = nullptr;
};

} // namespace cmcp::html
