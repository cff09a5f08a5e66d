#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <array>

namespace cmcp::audit {

using Sha256Digest = std::array<unsigned char, 32>;

// SHA-256 of `bytes`, by OpenSSL (which uses the CPU's SHA extensions where it has them), with
// the algorithm fetched from the provider once and a digest context per thread. OpenSSL 3's
// one-shot SHA256() fetches the algorithm again on every call and allocates a context: that was
// most of a record's hashing, on records of a few hundred bytes.
Sha256Digest sha256(QByteArrayView bytes);

// `digest` appended to `out` as 64 lowercase hex digits.
void appendHex(QByteArray &out, const Sha256Digest &digest);

} // namespace cmcp::audit
