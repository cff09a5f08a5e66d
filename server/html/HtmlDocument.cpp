#include "html/HtmlDocument.h"

#include <gumbo.h>

#include <csetjmp>
#include <cstdlib>

namespace cmcp::html {

// Every block gumbo holds, on a doubly linked list, so that all of them can be freed at once:
// after a parse left by longjmp, and when the document goes (no recursion over a deep tree).
struct Document::Arena
{
    struct alignas(16) Block
    {
        Block *previous;
        Block *next;
        size_t size;
    };

    Block head{&head, &head, 0};
    size_t live = 0;
    size_t limit = 0;
    std::chrono::steady_clock::time_point deadline;
    const std::atomic<bool> *cancel = nullptr;
    unsigned allocations = 0;
    const char *stoppedBy = nullptr;
    std::jmp_buf escape;

    ~Arena()
    {
        Block *block = head.next;
        while (block != &head) {
            Block *next = block->next;
            std::free(block);
            block = next;
        }
    }

    [[noreturn]] void stop(const char *why)
    {
        stoppedBy = why;
        std::longjmp(escape, 1);
    }

    static void *allocate(void *userdata, size_t size)
    {
        auto *arena = static_cast<Arena *>(userdata);
        if (size > arena->limit - arena->live)
            arena->stop("memory");
        // The clock every 16 allocations: a tag at the bottom of a deep stack costs well under
        // a millisecond, so the deadline is never overrun by much.
        if ((++arena->allocations & 15) == 0) {
            if (std::chrono::steady_clock::now() > arena->deadline)
                arena->stop("time");
            if (arena->cancel && arena->cancel->load(std::memory_order_relaxed))
                arena->stop("cancel");
        }
        auto *block = static_cast<Block *>(std::malloc(sizeof(Block) + size));
        if (!block)
            arena->stop("memory");
        block->size = size;
        block->previous = &arena->head;
        block->next = arena->head.next;
        arena->head.next->previous = block;
        arena->head.next = block;
        arena->live += size;
        return block + 1;
    }

    static void deallocate(void *userdata, void *pointer)
    {
        if (!pointer)
            return;
        auto *arena = static_cast<Arena *>(userdata);
        Block *block = static_cast<Block *>(pointer) - 1;
        block->previous->next = block->next;
        block->next->previous = block->previous;
        arena->live -= block->size;
        std::free(block);
    }
};

namespace {

// No object with a destructor lives in this frame: leaving it by longjmp skips nothing.
[[gnu::noinline]] GumboOutput *parseOrEscape(Document::Arena *arena, const GumboOptions *options,
                                             const char *data, size_t size)
{
    if (setjmp(arena->escape) != 0)
        return nullptr;
    return gumbo_parse_with_options(options, data, size);
}

} // namespace

std::unique_ptr<Document> Document::parse(std::string_view utf8, const ParseLimits &limits,
                                          std::string *error)
{
    std::unique_ptr<Document> document(new Document);
    document->m_text.assign(utf8);
    document->m_arena = std::make_unique<Arena>();
    Arena *arena = document->m_arena.get();
    arena->limit = limits.memoryBytes;
    arena->deadline = std::chrono::steady_clock::now() + limits.time;
    arena->cancel = limits.cancel;
    GumboOptions options = kGumboDefaultOptions;
    options.allocator = &Arena::allocate;
    options.deallocator = &Arena::deallocate;
    options.userdata = arena;
    options.max_errors = 0; // parse errors are not reported: recording them costs time
    document->m_output =
            parseOrEscape(arena, &options, document->m_text.data(), document->m_text.size());
    if (document->m_output)
        return document;
    const std::string why = arena->stoppedBy ? arena->stoppedBy : "memory";
    if (why == "time")
        *error = "the page's HTML could not be parsed within " + std::to_string(limits.time.count())
                + " ms (it is too large or too deeply nested)";
    else if (why == "cancel")
        *error = "the parse was cancelled";
    else
        *error = "the page's HTML needs more than " + std::to_string(limits.memoryBytes >> 20)
                + " MB to parse";
    return nullptr;
}

// The arena frees every block: gumbo_destroy_output would recurse over the tree.
Document::~Document() = default;

const GumboNode *Document::document() const
{
    return m_output->document;
}

const GumboNode *Document::root() const
{
    return m_output->root;
}

} // namespace cmcp::html
