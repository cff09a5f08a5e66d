#include "html/HtmlText.h"

#include "html/CssMatcher.h"
#include "html/UrlResolution.h"

#include <gumbo.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace cmcp::html {

namespace {

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

bool isElement(const GumboNode *node)
{
    return node && (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE);
}

const char *attribute(const GumboNode *element, const char *name)
{
    const GumboAttribute *found = gumbo_get_attribute(&element->v.element.attributes, name);
    return found ? found->value : nullptr;
}

std::string lower(std::string_view text)
{
    std::string out(text);
    for (char &c : out) {
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    }
    return out;
}

// Content no reader sees: never part of the text.
bool isInvisible(const GumboNode *element)
{
    switch (element->v.element.tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT: // a browser with scripts shows the page without it
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_TITLE:
    case GUMBO_TAG_META:
    case GUMBO_TAG_LINK:
    case GUMBO_TAG_BASE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_AUDIO:
    case GUMBO_TAG_VIDEO:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_INPUT:
        return true;
    default:
        break;
    }
    if (element->type == GUMBO_NODE_TEMPLATE || attribute(element, "hidden"))
        return true;
    if (const char *ariaHidden = attribute(element, "aria-hidden");
        ariaHidden && lower(ariaHidden) == "true")
        return true;
    if (const char *style = attribute(element, "style")) {
        std::string compact;
        for (const char *c = style; *c; ++c) {
            if (!isSpace(*c))
                compact += char(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        }
        if (compact.find("display:none") != std::string::npos
            || compact.find("visibility:hidden") != std::string::npos)
            return true;
    }
    return false;
}

bool isRawText(GumboTag tag)
{
    return tag == GUMBO_TAG_SCRIPT || tag == GUMBO_TAG_STYLE || tag == GUMBO_TAG_TEXTAREA
            || tag == GUMBO_TAG_NOSCRIPT || tag == GUMBO_TAG_TITLE;
}

// Page furniture the readable view leaves out.
bool isFurniture(const GumboNode *element, bool insideArticle)
{
    switch (element->v.element.tag) {
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_FORM:
        return true;
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
        return !insideArticle;
    default:
        break;
    }
    if (const char *role = attribute(element, "role")) {
        const std::string r = lower(role);
        return r == "navigation" || r == "complementary" || r == "search"
                || (!insideArticle && (r == "banner" || r == "contentinfo"));
    }
    return false;
}

// Blank lines around paragraphs, single line breaks around other blocks.
int blockBreaks(GumboTag tag)
{
    switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_FIELDSET:
        return 2;
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_CENTER:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DIR:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_HGROUP:
    case GUMBO_TAG_HTML:
    case GUMBO_TAG_LEGEND:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_MENU:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_UL:
        return 1;
    default:
        return 0;
    }
}

// Builds the text: collapses whitespace, places line breaks, and emits Markdown markers only
// around text that is there (an empty <b></b> leaves no "****").
class Writer
{
public:
    explicit Writer(size_t maxBytes) : m_maxBytes(maxBytes) { }

    bool full() const { return m_full; }
    std::string finish()
    {
        while (!m_out.empty() && isSpace(m_out.back()))
            m_out.pop_back();
        return std::move(m_out);
    }

    // Asks for `breaks` newlines (1: line, 2: paragraph) before the next text.
    void requestBreak(int breaks)
    {
        m_pendingBreaks = std::max(m_pendingBreaks, breaks);
        m_pendingSpace = false;
    }
    // <br>: each adds a line, up to one blank line.
    void lineBreak() { m_pendingBreaks = std::min(m_pendingBreaks + 1, 2); }

    // Text as HTML renders it: runs of whitespace become one space.
    void text(std::string_view text)
    {
        for (char c : text) {
            if (isSpace(c)) {
                m_pendingSpace = true;
                continue;
            }
            put(c);
        }
    }
    // Preformatted text: kept as it is, line by line.
    void preformatted(std::string_view text)
    {
        for (char c : text) {
            if (c == '\r')
                continue;
            if (c == '\n') {
                flushOpeners();
                append('\n');
                m_atLineStart = true;
                continue;
            }
            put(c, true);
        }
    }

    // A marker that opens around text (**, [, `, "# "): written just before the next character.
    size_t deferOpen(std::string_view marker)
    {
        const size_t before = m_openers.size();
        m_openers += marker;
        return before;
    }
    // Closes what deferOpen returned `mark` for: the closing marker when the opener was
    // written, nothing (and the opener forgotten) when no text came.
    void close(size_t mark, std::string_view closing)
    {
        if (m_openers.size() > mark) {
            m_openers.resize(mark);
            return;
        }
        for (char c : closing)
            append(c);
    }
    // Whether the opener deferred at `mark` has been written.
    bool opened(size_t mark) const { return m_openers.size() <= mark; }

    // Markup written as it is, as if it were text (a table's pipes, a code fence).
    void markup(std::string_view text)
    {
        for (char c : text)
            put(c, true);
    }

    void pushLinePrefix(std::string_view prefix) { m_linePrefix += prefix; }
    void popLinePrefix(size_t length) { m_linePrefix.resize(m_linePrefix.size() - length); }

private:
    void put(char c, bool keepSpaces = false)
    {
        if (m_pendingBreaks > 0 && !m_out.empty()) {
            while (!m_out.empty() && (m_out.back() == ' ' || m_out.back() == '\t'))
                m_out.pop_back();
            int have = 0;
            for (auto it = m_out.rbegin(); it != m_out.rend() && *it == '\n' && have < 2; ++it)
                ++have;
            for (int i = have; i < m_pendingBreaks; ++i)
                append('\n');
            m_atLineStart = true;
        }
        m_pendingBreaks = 0;
        if (m_atLineStart) {
            for (char p : m_linePrefix)
                append(p);
            m_atLineStart = false;
            m_pendingSpace = false;
        }
        if (m_pendingSpace && !m_out.empty() && !isSpace(m_out.back()))
            append(' ');
        m_pendingSpace = false;
        flushOpeners();
        if (!keepSpaces && isSpace(c))
            c = ' ';
        append(c);
    }

    void flushOpeners()
    {
        for (char o : m_openers)
            append(o);
        m_openers.clear();
    }

    void append(char c)
    {
        if (m_full)
            return;
        if (m_maxBytes && m_out.size() >= m_maxBytes) {
            // Cut at a character boundary: drop a partial UTF-8 sequence at the end.
            while (!m_out.empty() && (static_cast<unsigned char>(m_out.back()) & 0xC0) == 0x80)
                m_out.pop_back();
            if (!m_out.empty() && static_cast<unsigned char>(m_out.back()) >= 0xC0)
                m_out.pop_back();
            m_full = true;
            return;
        }
        m_out += c;
    }

    std::string m_out;
    std::string m_openers;
    std::string m_linePrefix;
    int m_pendingBreaks = 0;
    bool m_pendingSpace = false;
    bool m_atLineStart = true;
    bool m_full = false;
    size_t m_maxBytes;
};

// What to do when an element's subtree has been written.
struct Frame
{
    const GumboNode *element = nullptr;
    unsigned nextChild = 0;
    int breaksAfter = 0;
    size_t openerMark = SIZE_MAX;
    std::string closing; // Markdown after the element's text: "**", "](url)"
    size_t linePrefixLength = 0;
    bool preformatted = false;
    bool insideArticle = false;
    bool fencedCode = false;
    int listDepth = 0;
    long orderedCounter = 0; // an <ol>'s next number (0: not an ordered list)
    int tableRow = -1; // within a table: the index of the current row
    int cellIndex = 0; // within a row: the next cell's index
    int cellCount = 0; // within a row: how many cells it has
};

int headingLevel(GumboTag tag)
{
    switch (tag) {
    case GUMBO_TAG_H1:
        return 1;
    case GUMBO_TAG_H2:
        return 2;
    case GUMBO_TAG_H3:
        return 3;
    case GUMBO_TAG_H4:
        return 4;
    case GUMBO_TAG_H5:
        return 5;
    case GUMBO_TAG_H6:
        return 6;
    default:
        return 0;
    }
}

int countCells(const GumboNode *row)
{
    int cells = 0;
    const GumboVector &children = row->v.element.children;
    for (unsigned i = 0; i < children.length; ++i) {
        const auto *child = static_cast<const GumboNode *>(children.data[i]);
        if (isElement(child)
            && (child->v.element.tag == GUMBO_TAG_TD || child->v.element.tag == GUMBO_TAG_TH))
            ++cells;
    }
    return cells;
}

class Extractor
{
public:
    Extractor(const TextOptions &options) : m_options(options), m_writer(options.maxBytes) { }

    ExtractedText run(const GumboNode *node)
    {
        if (!node)
            return {};
        if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE
            || node->type == GUMBO_NODE_CDATA) {
            m_writer.text(node->v.text.text);
            return {m_writer.finish(), m_writer.full()};
        }
        // A script, style or template picked on purpose (JSON-LD, say): its text as written.
        if (isElement(node) && isRawText(node->v.element.tag)) {
            std::string raw;
            const GumboVector &children = node->v.element.children;
            for (unsigned i = 0; i < children.length; ++i) {
                const auto *child = static_cast<const GumboNode *>(children.data[i]);
                if (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_WHITESPACE)
                    raw += child->v.text.text;
            }
            m_writer.preformatted(raw);
            return {m_writer.finish(), m_writer.full()};
        }
        Frame base;
        base.element = node;
        if (node->type == GUMBO_NODE_DOCUMENT) {
            m_stack.push_back(base);
        } else if (isElement(node)) {
            open(node, base);
        }
        while (!m_stack.empty() && !m_writer.full()) {
            Frame &top = m_stack.back();
            const GumboVector &children = top.element->type == GUMBO_NODE_DOCUMENT
                    ? top.element->v.document.children
                    : top.element->v.element.children;
            if (top.nextChild >= children.length) {
                Frame done = std::move(top);
                m_stack.pop_back();
                closeFrame(done);
                continue;
            }
            const auto *child = static_cast<const GumboNode *>(children.data[top.nextChild++]);
            switch (child->type) {
            case GUMBO_NODE_TEXT:
            case GUMBO_NODE_WHITESPACE:
            case GUMBO_NODE_CDATA:
                if (top.preformatted)
                    m_writer.preformatted(child->v.text.text);
                else
                    m_writer.text(child->v.text.text);
                break;
            case GUMBO_NODE_ELEMENT:
                open(child, top);
                break;
            default:
                break;
            }
        }
        return {m_writer.finish(), m_writer.full()};
    }

private:
    bool markdown() const { return m_options.format == TextFormat::Markdown; }

    std::string resolved(const char *url) const
    {
        return m_options.resolveUrl ? m_options.resolveUrl(url) : std::string(url);
    }

    // Starts an element: writes what comes before its content and pushes its frame (unless it
    // has nothing to show).
    void open(const GumboNode *element, const Frame &parent)
    {
        if (isInvisible(element))
            return;
        const GumboTag tag = element->v.element.tag;
        const bool insideArticle =
                parent.insideArticle || tag == GUMBO_TAG_ARTICLE || tag == GUMBO_TAG_MAIN;
        if (m_options.readable && isFurniture(element, parent.insideArticle))
            return;
        Frame frame;
        frame.element = element;
        frame.insideArticle = insideArticle;
        frame.preformatted = parent.preformatted || tag == GUMBO_TAG_PRE;
        frame.listDepth = parent.listDepth;
        frame.breaksAfter = blockBreaks(tag);
        // Lists nested in a list item: one break, not a paragraph.
        if ((tag == GUMBO_TAG_UL || tag == GUMBO_TAG_OL) && parent.listDepth > 0)
            frame.breaksAfter = 1;
        else if (tag == GUMBO_TAG_UL || tag == GUMBO_TAG_OL)
            frame.breaksAfter = 2;
        if (frame.breaksAfter)
            m_writer.requestBreak(frame.breaksAfter);

        switch (tag) {
        case GUMBO_TAG_BR:
            m_writer.lineBreak();
            return;
        case GUMBO_TAG_HR:
            if (markdown())
                m_writer.markup("---");
            m_writer.requestBreak(2);
            return;
        case GUMBO_TAG_IMG:
            if (markdown()) {
                const char *src = attribute(element, "src");
                const char *alt = attribute(element, "alt");
                if (src && *src && std::strncmp(src, "data:", 5) != 0)
                    m_writer.markup("![" + escapeBrackets(alt ? alt : "") + "](" + resolved(src)
                                    + ")");
            }
            return;
        case GUMBO_TAG_UL:
        case GUMBO_TAG_OL:
            frame.listDepth = parent.listDepth + 1;
            if (tag == GUMBO_TAG_OL) {
                const char *start = attribute(element, "start");
                frame.orderedCounter = start ? std::max(1L, std::strtol(start, nullptr, 10)) : 1;
            }
            break;
        case GUMBO_TAG_LI: {
            // A list item picked on its own (a selector's match) is its text, without a bullet.
            if (m_stack.empty())
                break;
            const long number = m_stack.empty() ? 0 : m_stack.back().orderedCounter;
            if (number > 0 && m_stack.back().element->v.element.tag == GUMBO_TAG_OL)
                ++m_stack.back().orderedCounter;
            const std::string indent(size_t(std::max(0, parent.listDepth - 1)) * 2, ' ');
            const std::string bullet = number > 0 ? std::to_string(number) + ". " : "- ";
            frame.openerMark = m_writer.deferOpen(indent + bullet);
            break;
        }
        case GUMBO_TAG_BLOCKQUOTE:
            if (markdown()) {
                m_writer.pushLinePrefix("> ");
                frame.linePrefixLength = 2;
            }
            break;
        case GUMBO_TAG_PRE:
            if (markdown() && !parent.preformatted) {
                m_writer.markup("```");
                m_writer.requestBreak(1);
                frame.fencedCode = true;
            }
            break;
        case GUMBO_TAG_TR:
            if (!m_stack.empty()) {
                Frame *table = tableFrame();
                if (table)
                    frame.tableRow = ++table->tableRow;
            }
            frame.cellCount = countCells(element);
            if (markdown())
                frame.openerMark = m_writer.deferOpen("| ");
            break;
        case GUMBO_TAG_TABLE:
            frame.tableRow = -1;
            break;
        case GUMBO_TAG_TD:
        case GUMBO_TAG_TH:
            if (Frame *row = rowFrame()) {
                if (row->cellIndex++ > 0)
                    m_writer.markup(" | ");
            }
            break;
        default:
            break;
        }
        if (markdown())
            openMarkdown(element, frame);
        m_stack.push_back(std::move(frame));
    }

    void openMarkdown(const GumboNode *element, Frame &frame)
    {
        const GumboTag tag = element->v.element.tag;
        if (const int level = headingLevel(tag)) {
            frame.openerMark = m_writer.deferOpen(std::string(size_t(level), '#') + " ");
            return;
        }
        switch (tag) {
        case GUMBO_TAG_STRONG:
        case GUMBO_TAG_B:
            frame.openerMark = m_writer.deferOpen("**");
            frame.closing = "**";
            break;
        case GUMBO_TAG_EM:
        case GUMBO_TAG_I:
            frame.openerMark = m_writer.deferOpen("*");
            frame.closing = "*";
            break;
        case GUMBO_TAG_CODE:
            if (!frame.preformatted) {
                frame.openerMark = m_writer.deferOpen("`");
                frame.closing = "`";
            }
            break;
        case GUMBO_TAG_A: {
            const char *href = attribute(element, "href");
            if (href && *href && std::strncmp(href, "javascript:", 11) != 0) {
                frame.openerMark = m_writer.deferOpen("[");
                frame.closing = "](" + resolved(href) + ")";
            }
            break;
        }
        default:
            break;
        }
    }

    void closeFrame(const Frame &frame)
    {
        const GumboTag tag = frame.element->type == GUMBO_NODE_DOCUMENT
                ? GUMBO_TAG_UNKNOWN
                : frame.element->v.element.tag;
        if (frame.openerMark != SIZE_MAX) {
            if (tag == GUMBO_TAG_TR && markdown()) {
                const bool wrote = m_writer.opened(frame.openerMark);
                m_writer.close(frame.openerMark, " |");
                if (wrote && frame.tableRow == 0) {
                    m_writer.requestBreak(1);
                    std::string separator = "|";
                    for (int i = 0; i < std::max(1, frame.cellCount); ++i)
                        separator += " --- |";
                    m_writer.markup(separator);
                }
            } else {
                m_writer.close(frame.openerMark, frame.closing);
            }
        }
        if (frame.linePrefixLength)
            m_writer.popLinePrefix(frame.linePrefixLength);
        if (frame.fencedCode) {
            m_writer.requestBreak(1);
            m_writer.markup("```");
        }
        if (frame.breaksAfter)
            m_writer.requestBreak(frame.breaksAfter);
    }

    Frame *tableFrame()
    {
        for (auto it = m_stack.rbegin(); it != m_stack.rend(); ++it) {
            if (it->element->type == GUMBO_NODE_ELEMENT
                && it->element->v.element.tag == GUMBO_TAG_TABLE)
                return &*it;
        }
        return nullptr;
    }

    Frame *rowFrame()
    {
        for (auto it = m_stack.rbegin(); it != m_stack.rend(); ++it) {
            if (it->element->type != GUMBO_NODE_ELEMENT)
                continue;
            if (it->element->v.element.tag == GUMBO_TAG_TR)
                return &*it;
            if (it->element->v.element.tag == GUMBO_TAG_TABLE)
                return nullptr;
        }
        return nullptr;
    }

    static std::string escapeBrackets(std::string_view text)
    {
        std::string out;
        for (char c : text) {
            if (c == '[' || c == ']')
                out += '\\';
            out += isSpace(c) ? ' ' : c;
        }
        return out;
    }

    const TextOptions &m_options;
    Writer m_writer;
    std::vector<Frame> m_stack;
};

const GumboNode *firstElement(const GumboNode *root, GumboTag tag, const char *roleValue = nullptr)
{
    // Document order, iteratively, via the selector engine's traversal.
    css::SelectorList list;
    css::ComplexSelector selector;
    css::Compound compound;
    if (tag != GUMBO_TAG_UNKNOWN)
        compound.tag = gumbo_normalized_tagname(tag);
    if (roleValue)
        compound.attributes.push_back(
                {"role", css::AttributeSelector::Match::Equals, roleValue, true});
    selector.compounds.push_back(compound);
    list.selectors.push_back(selector);
    const std::vector<const GumboNode *> found = css::select(root, list, 1);
    return found.empty() ? nullptr : found.front();
}

} // namespace

ExtractedText extractText(const GumboNode *node, const TextOptions &options)
{
    return Extractor(options).run(node);
}

const GumboNode *readableRoot(const Document &document)
{
    const GumboNode *root = document.root();
    if (const GumboNode *main = firstElement(root, GUMBO_TAG_MAIN))
        return main;
    if (const GumboNode *main = firstElement(root, GUMBO_TAG_UNKNOWN, "main"))
        return main;
    if (const GumboNode *article = firstElement(root, GUMBO_TAG_ARTICLE))
        return article;
    if (const GumboNode *body = firstElement(root, GUMBO_TAG_BODY))
        return body;
    return root;
}

std::string documentTitle(const Document &document)
{
    const GumboNode *title = firstElement(document.root(), GUMBO_TAG_TITLE);
    if (!title)
        return {};
    std::string text;
    const GumboVector &children = title->v.element.children;
    for (unsigned i = 0; i < children.length; ++i) {
        const auto *child = static_cast<const GumboNode *>(children.data[i]);
        if (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_WHITESPACE)
            text += child->v.text.text;
    }
    std::string collapsed;
    bool space = false;
    for (char c : text) {
        if (isSpace(c)) {
            space = !collapsed.empty();
            continue;
        }
        if (space)
            collapsed += ' ';
        space = false;
        collapsed += c;
    }
    return collapsed;
}

HtmlText htmlToText(std::string_view html, const TextOptions &options, const ParseLimits &limits)
{
    HtmlText result;
    const std::unique_ptr<Document> document = Document::parse(html, limits, &result.error);
    if (!document)
        return result;
    result.ok = true;
    result.title = documentTitle(*document);
    const ExtractedText extracted =
            extractText(options.readable ? readableRoot(*document) : document->root(), options);
    result.text = extracted.text;
    result.truncated = extracted.truncated;
    return result;
}

} // namespace cmcp::html

namespace cmcp::html {

PageText extractPage(std::string_view html, std::string_view selector, TextFormat format,
                     std::string_view baseUrl, size_t maxBytes, const ParseLimits &limits)
{
    PageText page;
    std::optional<css::SelectorList> selectors;
    if (!selector.empty()) {
        css::ParseResult parsed = css::parseSelectorList(selector);
        if (!parsed.selectors) {
            page.error = parsed.error;
            return page;
        }
        selectors = std::move(parsed.selectors);
    }
    const std::unique_ptr<Document> document = Document::parse(html, limits, &page.error);
    if (!document)
        return page;
    page.ok = true;
    page.title = documentTitle(*document);
    TextOptions options;
    options.format = format;
    options.maxBytes = maxBytes;
    const std::string base(baseUrl);
    options.resolveUrl = [base](std::string_view url) { return resolveUrl(base, url); };
    if (!selectors) {
        options.readable = true;
        ExtractedText text = extractText(readableRoot(*document), options);
        page.text = std::move(text.text);
        page.truncated = text.truncated;
        return page;
    }
    const std::vector<const GumboNode *> elements = css::select(document->document(), *selectors);
    page.matches = long(elements.size());
    for (const GumboNode *element : elements) {
        if (maxBytes && page.text.size() >= maxBytes) {
            page.truncated = true;
            break;
        }
        TextOptions each = options;
        if (maxBytes)
            each.maxBytes = maxBytes - page.text.size();
        const ExtractedText text = extractText(element, each);
        page.truncated = page.truncated || text.truncated;
        if (text.text.empty())
            continue;
        if (!page.text.empty())
            page.text += "\n\n";
        page.text += text.text;
    }
    return page;
}

} // namespace cmcp::html
