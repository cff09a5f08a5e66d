#pragma once

#include <string>
#include <string_view>

namespace cmcp::html {

// RFC 3986, section 5.2: `reference` resolved against the absolute URL `base` (the page's
// final URL). Plain C++, for Markdown links made outside the daemon; whitespace around the
// reference is dropped, and a reference that is absolute already comes back as it is.
std::string resolveUrl(std::string_view base, std::string_view reference);

} // namespace cmcp::html
