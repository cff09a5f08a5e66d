#include "html/CssMatcher.h"

#include <gumbo.h>

#include <cstring>
#include <string_view>
#include <unordered_map>

namespace cmcp::css {

namespace {

bool isElement(const GumboNode *node)
{
    return node && (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE);
}

const GumboVector *childrenOf(const GumboNode *node)
{
    if (node->type == GUMBO_NODE_DOCUMENT)
        return &node->v.document.children;
    if (isElement(node))
        return &node->v.element.children;
    return nullptr;
}

const GumboNode *childAt(const GumboVector *children, unsigned index)
{
    return static_cast<const GumboNode *>(children->data[index]);
}

const GumboNode *parentElement(const GumboNode *element)
{
    return isElement(element->parent) ? element->parent : nullptr;
}

const GumboNode *previousElementSibling(const GumboNode *element)
{
    const GumboVector *siblings = element->parent ? childrenOf(element->parent) : nullptr;
    if (!siblings)
        return nullptr;
    for (unsigned i = unsigned(element->index_within_parent); i-- > 0;) {
        const GumboNode *sibling = childAt(siblings, i);
        if (isElement(sibling))
            return sibling;
    }
    return nullptr;
}

bool equalsIgnoringAsciiCase(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = char(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = char(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

size_t find(std::string_view haystack, std::string_view needle, bool ignoreCase)
{
    if (!ignoreCase)
        return haystack.find(needle);
    if (needle.size() > haystack.size())
        return std::string_view::npos;
    for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
        if (equalsIgnoringAsciiCase(haystack.substr(i, needle.size()), needle))
            return i;
    }
    return std::string_view::npos;
}

// Whether `word` is one of the whitespace-separated words of `list`.
bool containsWord(std::string_view list, std::string_view word, bool ignoreCase)
{
    if (word.empty())
        return false;
    size_t i = 0;
    while (i < list.size()) {
        while (i < list.size() && isWhitespace(list[i]))
            ++i;
        size_t end = i;
        while (end < list.size() && !isWhitespace(list[end]))
            ++end;
        const std::string_view candidate = list.substr(i, end - i);
        if (ignoreCase ? equalsIgnoringAsciiCase(candidate, word) : candidate == word)
            return true;
        i = end;
    }
    return false;
}

const char *attributeValue(const GumboNode *element, const char *name)
{
    const GumboAttribute *attribute = gumbo_get_attribute(&element->v.element.attributes, name);
    return attribute ? attribute->value : nullptr;
}

bool matchesAttribute(const GumboNode *element, const AttributeSelector &selector)
{
    const char *raw = attributeValue(element, selector.name.c_str());
    if (!raw)
        return false;
    const std::string_view value(raw);
    const std::string_view wanted(selector.value);
    const bool fold = selector.ignoreCase;
    using Match = AttributeSelector::Match;
    switch (selector.match) {
    case Match::Exists:
        return true;
    case Match::Equals:
        return fold ? equalsIgnoringAsciiCase(value, wanted) : value == wanted;
    case Match::Includes:
        return containsWord(value, wanted, fold);
    case Match::DashMatch:
        if (fold ? equalsIgnoringAsciiCase(value, wanted) : value == wanted)
            return true;
        return value.size() > wanted.size() && value[wanted.size()] == '-'
                && (fold ? equalsIgnoringAsciiCase(value.substr(0, wanted.size()), wanted)
                         : value.substr(0, wanted.size()) == wanted);
    case Match::Prefix:
        return !wanted.empty() && value.size() >= wanted.size()
                && (fold ? equalsIgnoringAsciiCase(value.substr(0, wanted.size()), wanted)
                         : value.substr(0, wanted.size()) == wanted);
    case Match::Suffix:
        return !wanted.empty() && value.size() >= wanted.size()
                && (fold ? equalsIgnoringAsciiCase(value.substr(value.size() - wanted.size()),
                                                   wanted)
                         : value.substr(value.size() - wanted.size()) == wanted);
    case Match::Substring:
        return !wanted.empty() && find(value, wanted, fold) != std::string_view::npos;
    }
    return false;
}

// An element's place among its element siblings, counted once per parent.
struct Position
{
    long index = 0; // 1-based among element siblings
    long count = 0;
    long typeIndex = 0; // 1-based among element siblings of the same type
    long typeCount = 0;
};

class Matcher
{
public:
    explicit Matcher(size_t budget) : m_budget(budget) { }

    bool exhausted() const { return m_budget == 0; }

    bool matches(const GumboNode *element, const ComplexSelector &selector)
    {
        return matchFrom(element, selector, selector.compounds.size() - 1) == Result::Matches;
    }

private:
    enum class Result { Matches, FailsLocally, FailsAllSiblings, FailsCompletely };

    Result matchFrom(const GumboNode *element, const ComplexSelector &selector, size_t index)
    {
        if (m_budget == 0)
            return Result::FailsCompletely;
        --m_budget;
        if (!matchesCompound(element, selector.compounds[index]))
            return Result::FailsLocally;
        if (index == 0)
            return Result::Matches;
        switch (selector.combinators[index - 1]) {
        case Combinator::Descendant:
            for (const GumboNode *ancestor = parentElement(element); ancestor;
                 ancestor = parentElement(ancestor)) {
                const Result result = matchFrom(ancestor, selector, index - 1);
                if (result == Result::Matches || result == Result::FailsCompletely)
                    return result;
            }
            return Result::FailsCompletely;
        case Combinator::Child: {
            const GumboNode *parent = parentElement(element);
            return parent ? matchFrom(parent, selector, index - 1) : Result::FailsCompletely;
        }
        case Combinator::NextSibling: {
            const GumboNode *sibling = previousElementSibling(element);
            return sibling ? matchFrom(sibling, selector, index - 1) : Result::FailsAllSiblings;
        }
        case Combinator::SubsequentSibling:
            for (const GumboNode *sibling = previousElementSibling(element); sibling;
                 sibling = previousElementSibling(sibling)) {
                const Result result = matchFrom(sibling, selector, index - 1);
                if (result != Result::FailsLocally)
                    return result;
            }
            return Result::FailsAllSiblings;
        }
        return Result::FailsCompletely;
    }

    bool matchesCompound(const GumboNode *element, const Compound &compound)
    {
        if (!compound.tag.empty() && tagName(element) != compound.tag)
            return false;
        for (const std::string &id : compound.ids) {
            const char *value = attributeValue(element, "id");
            if (!value || id != value)
                return false;
        }
        if (!compound.classes.empty()) {
            const char *value = attributeValue(element, "class");
            if (!value)
                return false;
            for (const std::string &name : compound.classes) {
                if (!containsWord(value, name, false))
                    return false;
            }
        }
        for (const AttributeSelector &attribute : compound.attributes) {
            if (!matchesAttribute(element, attribute))
                return false;
        }
        for (const PseudoClass &pseudo : compound.pseudoClasses) {
            if (!matchesPseudo(element, pseudo))
                return false;
        }
        return true;
    }

    bool matchesPseudo(const GumboNode *element, const PseudoClass &pseudo)
    {
        using Kind = PseudoClass::Kind;
        if (pseudo.kind == Kind::Root)
            return element->parent && element->parent->type == GUMBO_NODE_DOCUMENT;
        if (pseudo.kind == Kind::Empty) {
            const GumboVector &children = element->v.element.children;
            for (unsigned i = 0; i < children.length; ++i) {
                if (childAt(&children, i)->type != GUMBO_NODE_COMMENT)
                    return false;
            }
            return true;
        }
        if (pseudo.kind == Kind::Not) {
            for (const Compound &compound : pseudo.negated) {
                if (matchesCompound(element, compound))
                    return false;
            }
            return true;
        }
        // Children of the document are not counted (:first-child does not match <html>).
        if (!parentElement(element))
            return false;
        const Position position = positionOf(element);
        switch (pseudo.kind) {
        case Kind::NthChild:
            return pseudo.nth.matches(position.index);
        case Kind::NthLastChild:
            return pseudo.nth.matches(position.count - position.index + 1);
        case Kind::NthOfType:
            return pseudo.nth.matches(position.typeIndex);
        case Kind::NthLastOfType:
            return pseudo.nth.matches(position.typeCount - position.typeIndex + 1);
        case Kind::FirstChild:
            return position.index == 1;
        case Kind::LastChild:
            return position.index == position.count;
        case Kind::OnlyChild:
            return position.count == 1;
        case Kind::FirstOfType:
            return position.typeIndex == 1;
        case Kind::LastOfType:
            return position.typeIndex == position.typeCount;
        case Kind::OnlyOfType:
            return position.typeCount == 1;
        default:
            return false;
        }
    }

    Position positionOf(const GumboNode *element)
    {
        auto found = m_positions.find(element);
        if (found != m_positions.end())
            return found->second;
        // Count every child of this parent once.
        const GumboVector *siblings = childrenOf(element->parent);
        std::unordered_map<std::string, long> typeCounts;
        long count = 0;
        for (unsigned i = 0; i < siblings->length; ++i) {
            const GumboNode *sibling = childAt(siblings, i);
            if (!isElement(sibling))
                continue;
            ++count;
            ++typeCounts[tagName(sibling)];
        }
        std::unordered_map<std::string, long> typeSeen;
        long index = 0;
        for (unsigned i = 0; i < siblings->length; ++i) {
            const GumboNode *sibling = childAt(siblings, i);
            if (!isElement(sibling))
                continue;
            const std::string type = tagName(sibling);
            m_positions[sibling] = Position{++index, count, ++typeSeen[type], typeCounts[type]};
        }
        return m_positions[element];
    }

    std::unordered_map<const GumboNode *, Position> m_positions;
    size_t m_budget;
};

// The next node in document order beneath `root`, not entering <template> contents (they are
// not part of the document, as querySelectorAll does not enter them either).
const GumboNode *nextInOrder(const GumboNode *node, const GumboNode *root)
{
    if (node->type == GUMBO_NODE_ELEMENT && node->v.element.children.length > 0)
        return childAt(&node->v.element.children, 0);
    if (node->type == GUMBO_NODE_DOCUMENT && node->v.document.children.length > 0)
        return childAt(&node->v.document.children, 0);
    while (node && node != root) {
        const GumboNode *parent = node->parent;
        const GumboVector *siblings = parent ? childrenOf(parent) : nullptr;
        if (siblings && node->index_within_parent + 1 < siblings->length)
            return childAt(siblings, unsigned(node->index_within_parent + 1));
        node = parent;
    }
    return nullptr;
}

} // namespace

std::string tagName(const GumboNode *element)
{
    const GumboElement &data = element->v.element;
    if (data.tag != GUMBO_TAG_UNKNOWN)
        return gumbo_normalized_tagname(data.tag);
    // The name as written in the start tag ("<My-Widget data-x=1>"). Read here rather than by
    // gumbo_tag_from_original_text, which asserts on elements gumbo made up (no '<' there).
    const GumboStringPiece &piece = data.original_tag;
    if (!piece.data || piece.length < 2 || piece.data[0] != '<')
        return {};
    std::string name;
    for (size_t i = 1; i < piece.length; ++i) {
        char c = piece.data[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>')
            break;
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
        name += c;
    }
    return name;
}

std::vector<const GumboNode *> select(const GumboNode *root, const SelectorList &selectors,
                                      size_t limit)
{
    std::vector<const GumboNode *> found;
    // Compound checks allowed in all: bounds a selector built to backtrack at length.
    Matcher matcher(50'000'000);
    for (const GumboNode *node = root; node && found.size() < limit && !matcher.exhausted();
         node = nextInOrder(node, root)) {
        if (!isElement(node))
            continue;
        for (const ComplexSelector &selector : selectors.selectors) {
            if (!selector.compounds.empty() && matcher.matches(node, selector)) {
                found.push_back(node);
                break;
            }
        }
    }
    return found;
}

} // namespace cmcp::css
