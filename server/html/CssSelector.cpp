#include "html/CssSelector.h"

#include <cstdint>
#include <limits>

namespace cmcp::css {

const char *const supportedSyntax =
        "type (p), universal (*), #id, .class, attributes ([a], [a=v], [a~=v], [a|=v], [a^=v], "
        "[a$=v], [a*=v], with an optional i flag), combinators (descendant, >, +, ~), "
        ":nth-child(An+B), :nth-last-child, :nth-of-type, :nth-last-of-type, :first-child, "
        ":last-child, :only-child, :first-of-type, :last-of-type, :only-of-type, :empty, :root, "
        ":not(compound, ...), and comma-separated lists";

namespace {

constexpr size_t maxLength = 4096;
constexpr size_t maxCompounds = 64;
constexpr size_t maxSelectors = 256;

bool isHexDigit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool isNameStart(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || u >= 0x80;
}

bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9') || c == '-';
}

void appendUtf8(std::string &out, uint32_t codePoint)
{
    if (codePoint == 0 || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF))
        codePoint = 0xFFFD;
    if (codePoint < 0x80) {
        out += char(codePoint);
    } else if (codePoint < 0x800) {
        out += char(0xC0 | (codePoint >> 6));
        out += char(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += char(0xE0 | (codePoint >> 12));
        out += char(0x80 | ((codePoint >> 6) & 0x3F));
        out += char(0x80 | (codePoint & 0x3F));
    } else {
        out += char(0xF0 | (codePoint >> 18));
        out += char(0x80 | ((codePoint >> 12) & 0x3F));
        out += char(0x80 | ((codePoint >> 6) & 0x3F));
        out += char(0x80 | (codePoint & 0x3F));
    }
}

std::string lowerAscii(std::string text)
{
    for (char &c : text) {
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    }
    return text;
}

class Parser
{
public:
    explicit Parser(std::string_view text) : m_text(text) { }

    ParseResult run()
    {
        SelectorList list;
        skipWhitespace();
        for (;;) {
            if (list.selectors.size() == maxSelectors)
                return fail("more than 256 selectors in the list");
            std::optional<ComplexSelector> complex = parseComplex();
            if (!complex)
                return failed();
            list.selectors.push_back(std::move(*complex));
            skipWhitespace();
            if (atEnd())
                break;
            if (peek() != ',')
                return fail(std::string("unexpected '") + peek() + "'");
            ++m_pos;
            skipWhitespace();
        }
        return {std::move(list), {}};
    }

private:
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek(size_t ahead = 0) const
    {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    void skipWhitespace()
    {
        while (!atEnd() && isWhitespace(peek()))
            ++m_pos;
    }

    ParseResult fail(const std::string &what)
    {
        if (m_error.empty())
            m_error = "invalid selector at character " + std::to_string(m_pos + 1) + ": " + what;
        return failed();
    }
    ParseResult unsupported(const std::string &what)
    {
        if (m_error.empty())
            m_error = "unsupported selector at character " + std::to_string(m_pos + 1) + ": " + what
                    + " (supported: " + supportedSyntax + ")";
        return failed();
    }
    ParseResult failed() { return {std::nullopt, m_error}; }

    std::optional<ComplexSelector> parseComplex()
    {
        ComplexSelector complex;
        for (;;) {
            if (complex.compounds.size() == maxCompounds) {
                fail("more than 64 compound selectors in one selector");
                return std::nullopt;
            }
            std::optional<Compound> compound = parseCompound(true);
            if (!compound)
                return std::nullopt;
            complex.compounds.push_back(std::move(*compound));
            const size_t before = m_pos;
            skipWhitespace();
            const bool sawWhitespace = m_pos > before;
            if (atEnd() || peek() == ',' || peek() == ')')
                return complex;
            Combinator combinator = Combinator::Descendant;
            if (peek() == '>' || peek() == '+' || peek() == '~') {
                combinator = peek() == '>' ? Combinator::Child
                        : peek() == '+'    ? Combinator::NextSibling
                                           : Combinator::SubsequentSibling;
                ++m_pos;
                skipWhitespace();
            } else if (!sawWhitespace) {
                fail(std::string("unexpected '") + peek() + "'");
                return std::nullopt;
            }
            complex.combinators.push_back(combinator);
        }
    }

    // `allowNot`: :not() takes compounds without a :not of their own.
    std::optional<Compound> parseCompound(bool allowNot)
    {
        Compound compound;
        bool any = false;
        if (peek() == '*') {
            ++m_pos;
            any = true;
            if (peek() == '|') {
                unsupported("namespace prefixes");
                return std::nullopt;
            }
        } else if (startsIdentifier()) {
            std::optional<std::string> name = parseIdentifier();
            if (!name)
                return std::nullopt;
            if (peek() == '|') {
                unsupported("namespace prefixes");
                return std::nullopt;
            }
            compound.tag = lowerAscii(std::move(*name));
            any = true;
        }
        for (;;) {
            const char c = peek();
            if (c == '#') {
                ++m_pos;
                std::optional<std::string> name = parseName();
                if (!name)
                    return std::nullopt;
                compound.ids.push_back(std::move(*name));
            } else if (c == '.') {
                ++m_pos;
                if (!startsIdentifier()) {
                    fail("expected a class name after '.'");
                    return std::nullopt;
                }
                std::optional<std::string> name = parseIdentifier();
                if (!name)
                    return std::nullopt;
                compound.classes.push_back(std::move(*name));
            } else if (c == '[') {
                std::optional<AttributeSelector> attribute = parseAttribute();
                if (!attribute)
                    return std::nullopt;
                compound.attributes.push_back(std::move(*attribute));
            } else if (c == ':') {
                std::optional<PseudoClass> pseudo = parsePseudo(allowNot);
                if (!pseudo)
                    return std::nullopt;
                compound.pseudoClasses.push_back(std::move(*pseudo));
            } else {
                break;
            }
            any = true;
        }
        if (!any) {
            if (atEnd())
                fail("expected a selector");
            else
                fail(std::string("unexpected '") + peek() + "'");
            return std::nullopt;
        }
        return compound;
    }

    bool startsIdentifier() const
    {
        const char c = peek();
        if (isNameStart(c) || (c == '\\' && peek(1) != '\n' && peek(1) != '\0'))
            return true;
        if (c == '-') {
            const char next = peek(1);
            return isNameStart(next) || next == '-'
                    || (next == '\\' && peek(2) != '\n' && peek(2) != '\0');
        }
        return false;
    }

    // Reads one escape after the backslash; false at a backslash that escapes nothing.
    bool parseEscape(std::string &out)
    {
        ++m_pos; // the backslash
        if (atEnd() || peek() == '\n') {
            fail("a backslash that escapes nothing");
            return false;
        }
        if (isHexDigit(peek())) {
            uint32_t codePoint = 0;
            int digits = 0;
            while (digits < 6 && isHexDigit(peek())) {
                const char h = peek();
                codePoint = codePoint * 16 + uint32_t(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                ++m_pos;
                ++digits;
            }
            if (isWhitespace(peek()))
                ++m_pos;
            appendUtf8(out, codePoint);
            return true;
        }
        out += peek();
        ++m_pos;
        return true;
    }

    // A run of name characters and escapes (the part after '#', or an identifier's rest).
    std::optional<std::string> parseName()
    {
        std::string name;
        while (!atEnd()) {
            if (peek() == '\\') {
                if (!parseEscape(name))
                    return std::nullopt;
            } else if (isNameChar(peek())) {
                name += peek();
                ++m_pos;
            } else {
                break;
            }
        }
        if (name.empty()) {
            fail("expected a name");
            return std::nullopt;
        }
        return name;
    }

    std::optional<std::string> parseIdentifier()
    {
        if (!startsIdentifier()) {
            fail("expected a name");
            return std::nullopt;
        }
        return parseName();
    }

    std::optional<std::string> parseString()
    {
        const char quote = peek();
        ++m_pos;
        std::string value;
        while (!atEnd() && peek() != quote) {
            if (peek() == '\n') {
                fail("a line break inside a string");
                return std::nullopt;
            }
            if (peek() == '\\') {
                if (peek(1) == '\n') {
                    m_pos += 2;
                    continue;
                }
                if (!parseEscape(value))
                    return std::nullopt;
            } else {
                value += peek();
                ++m_pos;
            }
        }
        if (atEnd()) {
            fail("a string without its closing quote");
            return std::nullopt;
        }
        ++m_pos;
        return value;
    }

    std::optional<AttributeSelector> parseAttribute()
    {
        ++m_pos; // [
        skipWhitespace();
        AttributeSelector attribute;
        if (peek() == '*' || peek() == '|') {
            unsupported("namespace prefixes");
            return std::nullopt;
        }
        std::optional<std::string> name = parseIdentifier();
        if (!name)
            return std::nullopt;
        if (peek() == '|' && peek(1) != '=') {
            unsupported("namespace prefixes");
            return std::nullopt;
        }
        attribute.name = lowerAscii(std::move(*name));
        skipWhitespace();
        if (peek() == ']') {
            ++m_pos;
            return attribute;
        }
        using Match = AttributeSelector::Match;
        const char c = peek();
        if (c == '=') {
            attribute.match = Match::Equals;
            ++m_pos;
        } else if ((c == '~' || c == '|' || c == '^' || c == '$' || c == '*') && peek(1) == '=') {
            attribute.match = c == '~' ? Match::Includes
                    : c == '|'         ? Match::DashMatch
                    : c == '^'         ? Match::Prefix
                    : c == '$'         ? Match::Suffix
                                       : Match::Substring;
            m_pos += 2;
        } else {
            fail("expected ], =, ~=, |=, ^=, $= or *= in an attribute selector");
            return std::nullopt;
        }
        skipWhitespace();
        std::optional<std::string> value;
        if (peek() == '"' || peek() == '\'')
            value = parseString();
        else if (startsIdentifier())
            value = parseIdentifier();
        else if (!atEnd() && (isNameChar(peek()) || peek() == '-'))
            // Unquoted values that are not identifiers (a number): taken as written.
            value = parseName();
        else {
            fail("expected a value in an attribute selector");
            return std::nullopt;
        }
        if (!value)
            return std::nullopt;
        attribute.value = std::move(*value);
        skipWhitespace();
        if (peek() == 'i' || peek() == 'I' || peek() == 's' || peek() == 'S') {
            attribute.ignoreCase = peek() == 'i' || peek() == 'I';
            ++m_pos;
            skipWhitespace();
        }
        if (peek() != ']') {
            fail("expected ] to end the attribute selector");
            return std::nullopt;
        }
        ++m_pos;
        return attribute;
    }

    std::optional<PseudoClass> parsePseudo(bool allowNot)
    {
        const size_t colon = m_pos;
        ++m_pos;
        if (peek() == ':') {
            ++m_pos;
            std::string name = startsIdentifier() ? parseIdentifier().value_or("") : "";
            m_pos = colon;
            unsupported("pseudo-element '::" + name + "' (it selects no element of the document)");
            return std::nullopt;
        }
        std::optional<std::string> rawName = parseIdentifier();
        if (!rawName)
            return std::nullopt;
        const std::string name = lowerAscii(*rawName);
        using Kind = PseudoClass::Kind;
        PseudoClass pseudo;
        const bool function = peek() == '(';
        struct Plain
        {
            const char *name;
            Kind kind;
        };
        static const Plain plainKinds[] = {
                {"first-child", Kind::FirstChild},
                {"last-child", Kind::LastChild},
                {"only-child", Kind::OnlyChild},
                {"first-of-type", Kind::FirstOfType},
                {"last-of-type", Kind::LastOfType},
                {"only-of-type", Kind::OnlyOfType},
                {"empty", Kind::Empty},
                {"root", Kind::Root},
        };
        static const Plain nthKinds[] = {
                {"nth-child", Kind::NthChild},
                {"nth-last-child", Kind::NthLastChild},
                {"nth-of-type", Kind::NthOfType},
                {"nth-last-of-type", Kind::NthLastOfType},
        };
        if (!function) {
            for (const Plain &plain : plainKinds) {
                if (name == plain.name) {
                    pseudo.kind = plain.kind;
                    return pseudo;
                }
            }
        } else {
            for (const Plain &nth : nthKinds) {
                if (name == nth.name) {
                    pseudo.kind = nth.kind;
                    ++m_pos;
                    std::optional<Nth> value = parseNth();
                    if (!value)
                        return std::nullopt;
                    pseudo.nth = *value;
                    return pseudo;
                }
            }
            if (name == "not") {
                if (!allowNot) {
                    m_pos = colon;
                    unsupported(":not() inside :not()");
                    return std::nullopt;
                }
                pseudo.kind = Kind::Not;
                ++m_pos;
                for (;;) {
                    skipWhitespace();
                    std::optional<Compound> compound = parseCompound(false);
                    if (!compound)
                        return std::nullopt;
                    pseudo.negated.push_back(std::move(*compound));
                    if (pseudo.negated.size() > maxSelectors) {
                        fail("more than 256 selectors in :not()");
                        return std::nullopt;
                    }
                    skipWhitespace();
                    if (peek() == ',') {
                        ++m_pos;
                        continue;
                    }
                    if (peek() == ')') {
                        ++m_pos;
                        return pseudo;
                    }
                    if (atEnd())
                        fail("expected ) to close :not(");
                    else if (peek() == '>' || peek() == '+' || peek() == '~' || startsIdentifier()
                             || peek() == '*' || peek() == '.' || peek() == '#' || peek() == '['
                             || peek() == ':')
                        unsupported("combinators inside :not() (it takes compound selectors)");
                    else
                        fail(std::string("unexpected '") + peek() + "' in :not()");
                    return std::nullopt;
                }
            }
        }
        m_pos = colon;
        unsupported("pseudo-class ':" + *rawName + (function ? "()" : "") + "'");
        return std::nullopt;
    }

    // An+B inside the parentheses, up to and including ')'.
    std::optional<Nth> parseNth()
    {
        const size_t close = m_text.find(')', m_pos);
        if (close == std::string_view::npos) {
            fail("expected ) after An+B");
            return std::nullopt;
        }
        std::string argument;
        for (size_t i = m_pos; i < close; ++i) {
            if (!isWhitespace(m_text[i]))
                argument += char(m_text[i] >= 'A' && m_text[i] <= 'Z' ? m_text[i] - 'A' + 'a'
                                                                      : m_text[i]);
        }
        if (argument.find("of") != std::string::npos) {
            unsupported("the 'of S' form of :nth-child()");
            return std::nullopt;
        }
        Nth nth;
        if (argument == "odd") {
            nth = {2, 1};
        } else if (argument == "even") {
            nth = {2, 0};
        } else {
            const size_t n = argument.find('n');
            auto parseInteger = [](std::string_view digits, long *value) {
                if (digits.empty() || digits.size() > 9)
                    return false;
                long result = 0;
                for (char d : digits) {
                    if (d < '0' || d > '9')
                        return false;
                    result = result * 10 + (d - '0');
                }
                *value = result;
                return true;
            };
            bool ok = true;
            std::string_view text(argument);
            if (n == std::string::npos) {
                long sign = 1;
                if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
                    sign = text[0] == '-' ? -1 : 1;
                    text.remove_prefix(1);
                }
                ok = parseInteger(text, &nth.b);
                nth.b *= sign;
            } else {
                std::string_view coefficient = text.substr(0, n);
                std::string_view rest = text.substr(n + 1);
                if (coefficient.empty() || coefficient == "+")
                    nth.a = 1;
                else if (coefficient == "-")
                    nth.a = -1;
                else {
                    long sign = 1;
                    if (coefficient[0] == '+' || coefficient[0] == '-') {
                        sign = coefficient[0] == '-' ? -1 : 1;
                        coefficient.remove_prefix(1);
                    }
                    ok = parseInteger(coefficient, &nth.a);
                    nth.a *= sign;
                }
                if (ok && !rest.empty()) {
                    if (rest[0] != '+' && rest[0] != '-')
                        ok = false;
                    else {
                        const long sign = rest[0] == '-' ? -1 : 1;
                        ok = parseInteger(rest.substr(1), &nth.b);
                        nth.b *= sign;
                    }
                }
            }
            if (!ok) {
                fail("expected An+B, odd or even, not '" + argument + "'");
                return std::nullopt;
            }
        }
        m_pos = close + 1;
        return nth;
    }

    std::string_view m_text;
    size_t m_pos = 0;
    std::string m_error;
};

} // namespace

bool Nth::matches(long position) const
{
    if (a == 0)
        return position == b;
    // position = a*n + b with an integer n >= 0.
    const long difference = position - b;
    if (difference % a != 0)
        return false;
    return difference / a >= 0;
}

ParseResult parseSelectorList(std::string_view text)
{
    if (text.size() > maxLength)
        return {std::nullopt, "invalid selector: longer than 4096 bytes"};
    if (text.find('\0') != std::string_view::npos)
        return {std::nullopt, "invalid selector: it contains a NUL character"};
    return Parser(text).run();
}

} // namespace cmcp::css
