// Readable text, or Markdown, from an HTML5 tree: what web_scrape returns. Plain C++ over gumbo,
// without Qt; htmlToText and extractPage parse and extract in one call, the entry points a fuzzer
// uses. They run gumbo in the calling process: Debian's gumbo is built with assertions and aborts
// on some markup (tests/unit/support/data/gumbo-assertion.html), which is why the daemon calls them
// only inside cmcp-html. A fuzzer will find that abort first.
#pragma once

#include "html/HtmlDocument.h"

#include <functional>
#include <string>
#include <string_view>

namespace cmcp::html {

enum class TextFormat { Text, Markdown };

struct TextOptions
{
    TextFormat format = TextFormat::Text;
    // The page as a reader sees it: start at <main>, [role=main] or the first <article> when
    // there is one, and leave out navigation, asides, forms, and headers and footers outside
    // articles. Used without a selector; a selector's elements are taken whole.
    bool readable = false;
    // Makes link and image targets absolute (Markdown); used as written when unset.
    std::function<std::string(std::string_view)> resolveUrl;
    // Text beyond this many bytes is cut off (at a character boundary); 0: no limit.
    size_t maxBytes = 0;
};

struct ExtractedText
{
    std::string text;
    bool truncated = false; // maxBytes cut it short
};

// The text of `node` and everything beneath it. Scripts, styles, templates, hidden elements
// (hidden, aria-hidden="true", display:none) and other content a reader does not see are left
// out; blocks become lines and paragraphs, whitespace collapses as a browser collapses it, <pre>
// keeps its own. Markdown adds headings, emphasis, code, links, images, lists, quotes, tables.
// Iterative: no recursion over the tree.
ExtractedText extractText(const GumboNode *node, const TextOptions &options);

// Where `readable` starts: <main>, [role=main], the first <article>, else <body>, else the root.
const GumboNode *readableRoot(const Document &document);

// The document's <title>, whitespace collapsed; empty when there is none.
std::string documentTitle(const Document &document);

struct HtmlText
{
    bool ok = false;
    std::string error; // when the parse was stopped by a limit
    std::string title;
    std::string text;
    bool truncated = false;
};

// Parses `html` (UTF-8) and extracts its title and text (readable when options.readable).
HtmlText htmlToText(std::string_view html, const TextOptions &options, const ParseLimits &limits);

} // namespace cmcp::html

namespace cmcp::html {

struct PageText
{
    bool ok = false;
    std::string error; // an unusable selector, or a parse limit
    std::string title;
    std::string text;
    long matches = -1; // elements the selector matched; -1 without one
    bool truncated = false;
};

// web_scrape's whole extraction: parse, then the text of every element the selector list
// matches (blank-line separated), or the readable text of the page without a selector. Links
// in Markdown are resolved against `baseUrl`.
PageText extractPage(std::string_view html, std::string_view selector, TextFormat format,
                     std::string_view baseUrl, size_t maxBytes, const ParseLimits &limits);

} // namespace cmcp::html
