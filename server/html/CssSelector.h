// CSS selectors, parsed from text: the part of Selectors Level 3 (and a little of Level 4) that
// picks parts of a static document. Plain C++ without Qt or gumbo, so that a fuzzer can call
// parseSelectorList on arbitrary bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cmcp::css {

// Whitespace as CSS and HTML define it, for selectors and for attribute word lists alike.
inline bool isWhitespace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

// What web_scrape's selector argument accepts (its description and docs/web-tools.md quote it).
extern const char *const supportedSyntax;

struct AttributeSelector
{
    enum class Match {
        Exists, // [name]
        Equals, // [name=value]
        Includes, // [name~=value]: one of the whitespace-separated words
        DashMatch, // [name|=value]: value, or value followed by '-'
        Prefix, // [name^=value]
        Suffix, // [name$=value]
        Substring, // [name*=value]
    };
    std::string name; // lower case
    Match match = Match::Exists;
    std::string value;
    bool ignoreCase = false; // the `i` flag
};

// An+B: matches the positions (1-based) a*n + b for some n >= 0.
struct Nth
{
    long a = 0;
    long b = 0;
    bool matches(long position) const;
};

struct Compound;

struct PseudoClass
{
    enum class Kind {
        NthChild,
        NthLastChild,
        NthOfType,
        NthLastOfType,
        FirstChild,
        LastChild,
        OnlyChild,
        FirstOfType,
        LastOfType,
        OnlyOfType,
        Empty,
        Root,
        Not,
    };
    Kind kind = Kind::FirstChild;
    Nth nth; // the nth-* kinds
    std::vector<Compound> negated; // :not(a, b): matches elements that match none of these
};

// Simple selectors that one element must all match: `div.note[lang]:first-child`.
struct Compound
{
    std::string tag; // lower case; empty for any element (`*` or none written)
    std::vector<std::string> ids;
    std::vector<std::string> classes;
    std::vector<AttributeSelector> attributes;
    std::vector<PseudoClass> pseudoClasses;
};

enum class Combinator {
    Descendant, // a b
    Child, // a > b
    NextSibling, // a + b
    SubsequentSibling, // a ~ b
};

struct ComplexSelector
{
    std::vector<Compound> compounds; // left to right; the last one is the subject
    std::vector<Combinator> combinators; // combinators[i] joins compounds[i] and compounds[i + 1]
};

struct SelectorList
{
    std::vector<ComplexSelector> selectors;
};

struct ParseResult
{
    std::optional<SelectorList> selectors;
    // When selectors is empty: what is wrong or unsupported, and where (1-based character).
    std::string error;
};

// Never throws, whatever the bytes; refuses input longer than 4,096 bytes or deeper than the
// limits of the grammar above (64 compounds per selector, 256 selectors per list).
ParseResult parseSelectorList(std::string_view text);

} // namespace cmcp::css
