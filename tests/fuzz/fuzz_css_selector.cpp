// web_scrape's selector argument: any bytes to css::parseSelectorList, the parser a model's text
// reaches first. Checks that a refusal says why, and that an accepted list keeps the limits and
// the shape the matcher relies on.
#include "html/CssSelector.h"
#include "FuzzSupport.h"

#include <cstdint>

using namespace cmcp;

namespace {

bool isLowerCase(const std::string &text)
{
    for (const char c : text)
        if (c >= 'A' && c <= 'Z')
            return false;
    return true;
}

void checkCompound(const css::Compound &compound, int depth)
{
    FUZZ_CHECK(depth < 64); // :not nests only as deep as the text allows, far below this
    FUZZ_CHECK(isLowerCase(compound.tag));
    for (const std::string &id : compound.ids)
        FUZZ_CHECK(!id.empty());
    for (const std::string &name : compound.classes)
        FUZZ_CHECK(!name.empty());
    for (const css::AttributeSelector &attribute : compound.attributes) {
        FUZZ_CHECK(!attribute.name.empty() && isLowerCase(attribute.name));
        FUZZ_CHECK(attribute.match != css::AttributeSelector::Match::Exists
                   || attribute.value.empty());
    }
    for (const css::PseudoClass &pseudo : compound.pseudoClasses) {
        if (pseudo.kind == css::PseudoClass::Kind::Not)
            FUZZ_CHECK(!pseudo.negated.empty());
        else
            FUZZ_CHECK(pseudo.negated.empty());
        for (const css::Compound &negated : pseudo.negated)
            checkCompound(negated, depth + 1);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    const css::ParseResult result = css::parseSelectorList(text);

    // The verdict is a function of the text.
    const css::ParseResult again = css::parseSelectorList(text);
    FUZZ_CHECK(result.selectors.has_value() == again.selectors.has_value());
    FUZZ_CHECK(result.error == again.error);

    if (!result.selectors) {
        FUZZ_CHECK(!result.error.empty()); // a model must be told what to fix
        return 0;
    }
    FUZZ_CHECK(result.error.empty());
    FUZZ_CHECK(size <= 4096);
    const std::vector<css::ComplexSelector> &selectors = result.selectors->selectors;
    FUZZ_CHECK(!selectors.empty() && selectors.size() <= 256);
    for (const css::ComplexSelector &selector : selectors) {
        FUZZ_CHECK(!selector.compounds.empty() && selector.compounds.size() <= 64);
        FUZZ_CHECK(selector.combinators.size() + 1 == selector.compounds.size());
        for (const css::Compound &compound : selector.compounds)
            checkCompound(compound, 0);
    }
    return 0;
}
