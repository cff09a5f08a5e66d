// Matching parsed CSS selectors (CssSelector.h) against a gumbo tree.
#pragma once

#include "html/CssSelector.h"

#include <cstddef>
#include <vector>

struct GumboInternalNode;
using GumboNode = GumboInternalNode;

namespace cmcp::css {

// The elements beneath `root` (root itself included) that match any selector of the list, in
// document order, each once; at most `limit` of them. Iterative: no recursion over the tree,
// whatever its depth. Matching backtracks only as far as WebKit's matcher does (a failed
// descendant or sibling search fails the whole selector), so its cost stays polynomial.
std::vector<const GumboNode *> select(const GumboNode *root, const SelectorList &selectors,
                                      size_t limit = 10000);

// The lower-case tag name of an element, for unknown elements too ("my-widget").
std::string tagName(const GumboNode *element);

} // namespace cmcp::css
