#include "html/UrlResolution.h"

#include <optional>

namespace cmcp::html {

namespace {

struct Parts
{
    std::optional<std::string> scheme;
    std::optional<std::string> authority;
    std::string path;
    std::optional<std::string> query;
    std::optional<std::string> fragment;
};

bool isSchemeChar(char c, bool first)
{
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return first ? letter : letter || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

// RFC 3986, appendix B.
Parts split(std::string_view url)
{
    Parts parts;
    size_t i = 0;
    size_t colon = url.find(':');
    if (colon != std::string_view::npos && colon > 0) {
        bool scheme = true;
        for (size_t k = 0; k < colon && scheme; ++k)
            scheme = isSchemeChar(url[k], k == 0);
        if (scheme) {
            parts.scheme = std::string(url.substr(0, colon));
            i = colon + 1;
        }
    }
    if (url.substr(i, 2) == "//") {
        const size_t end = url.find_first_of("/?#", i + 2);
        parts.authority = std::string(url.substr(
                i + 2, end == std::string_view::npos ? std::string_view::npos : end - i - 2));
        i = end == std::string_view::npos ? url.size() : end;
    }
    const size_t pathEnd = url.find_first_of("?#", i);
    parts.path = std::string(url.substr(
            i, pathEnd == std::string_view::npos ? std::string_view::npos : pathEnd - i));
    i = pathEnd == std::string_view::npos ? url.size() : pathEnd;
    if (i < url.size() && url[i] == '?') {
        const size_t end = url.find('#', i);
        parts.query = std::string(url.substr(
                i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
        i = end == std::string_view::npos ? url.size() : end;
    }
    if (i < url.size() && url[i] == '#')
        parts.fragment = std::string(url.substr(i + 1));
    return parts;
}

// Section 5.2.4.
std::string removeDotSegments(std::string input)
{
    std::string output;
    auto dropLastSegment = [&output] {
        const size_t slash = output.rfind('/');
        output.erase(slash == std::string::npos ? 0 : slash);
    };
    while (!input.empty()) {
        if (input.rfind("../", 0) == 0) {
            input.erase(0, 3);
        } else if (input.rfind("./", 0) == 0) {
            input.erase(0, 2);
        } else if (input.rfind("/./", 0) == 0) {
            input.erase(0, 2);
        } else if (input == "/.") {
            input = "/";
        } else if (input.rfind("/../", 0) == 0) {
            input.erase(0, 3);
            dropLastSegment();
        } else if (input == "/..") {
            input = "/";
            dropLastSegment();
        } else if (input == "." || input == "..") {
            input.clear();
        } else {
            const size_t next = input.find('/', 1);
            const size_t length = next == std::string::npos ? input.size() : next;
            output.append(input, 0, length);
            input.erase(0, length);
        }
    }
    return output;
}

std::string join(const Parts &parts)
{
    std::string url;
    if (parts.scheme)
        url += *parts.scheme + ":";
    if (parts.authority)
        url += "//" + *parts.authority;
    url += parts.path;
    if (parts.query)
        url += "?" + *parts.query;
    if (parts.fragment)
        url += "#" + *parts.fragment;
    return url;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ')
        text.remove_prefix(1);
    while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ')
        text.remove_suffix(1);
    return text;
}

} // namespace

std::string resolveUrl(std::string_view base, std::string_view reference)
{
    reference = trimmed(reference);
    const Parts r = split(reference);
    if (r.scheme)
        return std::string(reference);
    const Parts b = split(base);
    if (!b.scheme)
        return std::string(reference);
    Parts t;
    t.scheme = b.scheme;
    t.fragment = r.fragment;
    if (r.authority) {
        t.authority = r.authority;
        t.path = removeDotSegments(r.path);
        t.query = r.query;
    } else {
        t.authority = b.authority;
        if (r.path.empty()) {
            t.path = b.path;
            t.query = r.query ? r.query : b.query;
        } else {
            if (r.path.front() == '/') {
                t.path = removeDotSegments(r.path);
            } else {
                // Section 5.2.3: merge with the base path.
                std::string merged;
                if (b.authority && b.path.empty())
                    merged = "/" + r.path;
                else {
                    const size_t slash = b.path.rfind('/');
                    merged = (slash == std::string::npos ? std::string()
                                                         : b.path.substr(0, slash + 1))
                            + r.path;
                }
                t.path = removeDotSegments(merged);
            }
            t.query = r.query;
        }
    }
    return join(t);
}

} // namespace cmcp::html
