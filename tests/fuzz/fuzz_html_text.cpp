// web_scrape's extraction above the HTML parser: the text extractor (plain and Markdown, whole
// page or readable view, with a byte limit), the CSS matcher and the link resolution, run on
// document trees built from the fuzz input.
//
// Why not feed the bytes to gumbo: Debian's gumbo is built with assertions and aborts on some
// markup (tests/unit/support/data/gumbo-assertion.html). The daemon is safe from that because it
// parses only inside the cmcp-html helper process, whose death is a clean tool error; but in this
// process the fuzzer would stop at gumbo's known abort again and again, and every finding would
// be gumbo's, in code we do not ship. So the target builds gumbo's output structure directly:
// any nesting of any tags (shapes gumbo's tree builder never makes included), attributes, text
// with multi-byte characters, comments and templates, with the parent and index links gumbo
// guarantees. That covers all of our own code that reads a page.
#include "html/CssMatcher.h"
#include "html/CssSelector.h"
#include "FuzzSupport.h"
#include "html/HtmlText.h"
#include "html/UrlResolution.h"

#include <gumbo.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace cmcp;

namespace {

// Reads the fuzz input front to back; past the end it yields zeros.
class Input
{
public:
    Input(const uint8_t *data, size_t size) : m_data(data), m_size(size) { }
    bool atEnd() const { return m_at >= m_size; }
    uint8_t byte() { return m_at < m_size ? m_data[m_at++] : 0; }
    std::string_view bytes(size_t count)
    {
        count = std::min(count, m_size - std::min(m_at, m_size));
        const std::string_view taken(reinterpret_cast<const char *>(m_data + m_at), count);
        m_at += count;
        return taken;
    }

private:
    const uint8_t *m_data;
    size_t m_size;
    size_t m_at = 0;
};

// Text as gumbo hands it over: always valid UTF-8. Bytes from 0x80 up stand for characters that
// matter to the extractor (no-break and zero-width spaces, two- to four-byte sequences).
std::string utf8Text(std::string_view raw)
{
    static const char *const wide[] = {"\u00a0", "\u00e9",     "\u200b", "\u2028",
                                       "\u4e2d", "\U0001F600", "\u0301", "\ufeff"};
    std::string text;
    for (const char c : raw) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x80)
            text += wide[b % std::size(wide)];
        else
            text += b == 0 ? ' ' : c;
    }
    return text;
}

const char *const attributeNames[] = {"class", "id",      "hidden", "aria-hidden", "style", "role",
                                      "href",  "src",     "alt",    "lang",        "title", "start",
                                      "type",  "colspan", "data-x", "CLASS"};
const char *const unknownTags[] = {"<my-widget>", "<X-Y data-a=1>", "<svg:rect/>", "<a",
                                   "<",           "<Main>"};
const char *const whitespace[] = {" ", "\n", "\t", "\r\n", "  \n\n  ", "\f"};

// Owns a document tree in gumbo's structures; the vectors point into storage that stays put.
class Tree
{
public:
    explicit Tree(Input &input)
    {
        m_document = newNode(GUMBO_NODE_DOCUMENT, nullptr);
        m_root = newNode(GUMBO_NODE_ELEMENT, m_document);
        m_root->v.element.tag = GUMBO_TAG_HTML;
        std::vector<GumboNode *> open{m_root};
        while (!input.atEnd()) {
            const uint8_t op = input.byte();
            const unsigned argument = op >> 3;
            GumboNode *current = open.back();
            switch (op & 7) {
            case 0:
            case 1:
            case 7: {
                GumboNode *element =
                        newNode((op & 7) == 7 ? GUMBO_NODE_TEMPLATE : GUMBO_NODE_ELEMENT, current);
                element->v.element.tag = (op & 7) == 7 ? GUMBO_TAG_TEMPLATE
                                                       : GumboTag(input.byte() % GUMBO_TAG_LAST);
                if (element->v.element.tag == GUMBO_TAG_UNKNOWN) {
                    const char *written = unknownTags[argument % std::size(unknownTags)];
                    element->v.element.original_tag = {written, strlen(written)};
                }
                open.push_back(element);
                break;
            }
            case 2:
                if (open.size() > 1)
                    open.pop_back();
                break;
            case 3:
                newText(GUMBO_NODE_TEXT, current, utf8Text(input.bytes(argument + 1)));
                break;
            case 4:
                newText(GUMBO_NODE_WHITESPACE, current,
                        whitespace[argument % std::size(whitespace)]);
                break;
            case 5:
                if (current->type == GUMBO_NODE_ELEMENT || current->type == GUMBO_NODE_TEMPLATE)
                    addAttribute(current, attributeNames[argument % std::size(attributeNames)],
                                 utf8Text(input.bytes(input.byte() % 24)));
                break;
            case 6:
                newText(argument & 1 ? GUMBO_NODE_CDATA : GUMBO_NODE_COMMENT, current,
                        utf8Text(input.bytes(argument / 2 + 1)));
                break;
            }
        }
        // The vectors are filled only now, when no storage moves any more.
        for (size_t i = 0; i < m_nodes.size(); ++i) {
            GumboNode &node = m_nodes[i];
            std::vector<void *> &children = m_children[i];
            GumboVector vector{children.data(), unsigned(children.size()),
                               unsigned(children.size())};
            if (node.type == GUMBO_NODE_DOCUMENT)
                node.v.document.children = vector;
            else if (node.type == GUMBO_NODE_ELEMENT || node.type == GUMBO_NODE_TEMPLATE) {
                node.v.element.children = vector;
                std::vector<void *> &attributes = m_attributes[i];
                node.v.element.attributes = {attributes.data(), unsigned(attributes.size()),
                                             unsigned(attributes.size())};
            }
        }
    }

    const GumboNode *document() const { return m_document; }
    const GumboNode *root() const { return m_root; }

private:
    GumboNode *newNode(GumboNodeType type, GumboNode *parent)
    {
        GumboNode &node = m_nodes.emplace_back();
        m_children.emplace_back();
        m_attributes.emplace_back();
        m_index[&node] = m_nodes.size() - 1;
        node.type = type;
        node.parent = parent;
        if (type == GUMBO_NODE_ELEMENT || type == GUMBO_NODE_TEMPLATE)
            node.v.element.tag_namespace = GUMBO_NAMESPACE_HTML;
        if (parent) {
            std::vector<void *> &siblings = m_children[indexOf(parent)];
            node.index_within_parent = siblings.size();
            siblings.push_back(&node);
        }
        return &node;
    }

    void newText(GumboNodeType type, GumboNode *parent, std::string text)
    {
        const std::string &kept = m_strings.emplace_back(std::move(text));
        GumboNode *node = newNode(type, parent);
        node->v.text.text = kept.c_str();
        node->v.text.original_text = {kept.data(), kept.size()};
    }

    void addAttribute(GumboNode *element, const char *name, std::string value)
    {
        const std::string &kept = m_strings.emplace_back(std::move(value));
        GumboAttribute &attribute = m_attributeStorage.emplace_back();
        attribute.attr_namespace = GUMBO_ATTR_NAMESPACE_NONE;
        attribute.name = name;
        attribute.original_name = {name, strlen(name)};
        attribute.value = kept.c_str();
        attribute.original_value = {kept.data(), kept.size()};
        m_attributes[indexOf(element)].push_back(&attribute);
    }

    // A node's number, in creation order, indexes its children and attributes.
    size_t indexOf(const GumboNode *node) const { return m_index.at(node); }

    std::deque<GumboNode> m_nodes;
    std::deque<std::vector<void *>> m_children;
    std::deque<std::vector<void *>> m_attributes;
    std::deque<GumboAttribute> m_attributeStorage;
    std::deque<std::string> m_strings;
    std::map<const GumboNode *, size_t> m_index;
    GumboNode *m_document = nullptr;
    GumboNode *m_root = nullptr;
};

bool isValidUtf8(const std::string &text)
{
    for (size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const size_t length = lead < 0x80 ? 1
                : (lead >> 5) == 6        ? 2
                : (lead >> 4) == 14       ? 3
                : (lead >> 3) == 30       ? 4
                                          : 0;
        if (length == 0 || i + length > text.size())
            return false;
        for (size_t k = 1; k < length; ++k)
            if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
                return false;
        i += length;
    }
    return true;
}

void checkExtracted(const html::ExtractedText &extracted, size_t maxBytes)
{
    FUZZ_CHECK(isValidUtf8(extracted.text));
    if (maxBytes)
        FUZZ_CHECK(extracted.text.size() <= maxBytes);
    else
        FUZZ_CHECK(!extracted.truncated);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input input(data, size);
    const uint8_t flags = input.byte();
    const std::string_view selector = input.bytes(input.byte());
    const Tree tree(input);

    static const size_t limits[] = {0, 1, 7, 64};
    html::TextOptions options;
    options.format = flags & 1 ? html::TextFormat::Markdown : html::TextFormat::Text;
    options.maxBytes = limits[(flags >> 2) & 3];
    options.resolveUrl = [](std::string_view url) {
        return html::resolveUrl("https://example.org/a/b?q#f", url);
    };

    if (selector.empty()) {
        options.readable = flags & 2;
        checkExtracted(html::extractText(tree.root(), options), options.maxBytes);
        return 0;
    }
    const css::ParseResult parsed = css::parseSelectorList(selector);
    if (!parsed.selectors)
        return 0;
    const std::vector<const GumboNode *> matched =
            css::select(tree.document(), *parsed.selectors, 64);
    FUZZ_CHECK(matched.size() <= 64);
    const std::set<const GumboNode *> distinct(matched.begin(), matched.end());
    FUZZ_CHECK(distinct.size() == matched.size());
    for (const GumboNode *element : matched) {
        FUZZ_CHECK(element->type == GUMBO_NODE_ELEMENT || element->type == GUMBO_NODE_TEMPLATE);
        checkExtracted(html::extractText(element, options), options.maxBytes);
    }
    return 0;
}
