#pragma once

#include <QString>

namespace cmcp {

// An identifier nobody can guess: `prefix` followed by 128 bits from the system's random source
// (getrandom) as 32 hex digits. Session ids are such ids (without a prefix), as they are bearer
// secrets on the HTTP transports; so are job ids and output handles, so that knowing one's own
// ids tells nothing about another session's.
QString unguessableId(const char *prefix);

} // namespace cmcp
