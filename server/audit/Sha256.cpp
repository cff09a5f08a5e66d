#include "audit/Sha256.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace cmcp::audit {

namespace {

// Fetched once and kept for the life of the process (freeing it at exit could run after
// OpenSSL's own clean-up). Null if the provider has no SHA-256, and then the one-shot call
// below is used.
const EVP_MD *fetchedSha256()
{
    static EVP_MD *const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return md;
}

struct DigestContext
{
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    ~DigestContext() { EVP_MD_CTX_free(context); }
};

} // namespace

Sha256Digest sha256(QByteArrayView bytes)
{
    static_assert(Sha256Digest().size() == SHA256_DIGEST_LENGTH);
    thread_local DigestContext digest;
    Sha256Digest out;
    unsigned int length = 0;
    const EVP_MD *md = fetchedSha256();
    if (md && digest.context && EVP_DigestInit_ex2(digest.context, md, nullptr) == 1
        && EVP_DigestUpdate(digest.context, bytes.data(), size_t(bytes.size())) == 1
        && EVP_DigestFinal_ex(digest.context, out.data(), &length) == 1 && length == out.size())
        return out;
    SHA256(reinterpret_cast<const unsigned char *>(bytes.data()), size_t(bytes.size()), out.data());
    return out;
}

void appendHex(QByteArray &out, const Sha256Digest &digest)
{
    static constexpr char hex[] = "0123456789abcdef";
    const qsizetype at = out.size();
    out.resize(at + 2 * qsizetype(digest.size()));
    char *text = out.data() + at;
    for (const unsigned char byte : digest) {
        *text++ = hex[byte >> 4];
        *text++ = hex[byte & 0xf];
    }
}

} // namespace cmcp::audit
