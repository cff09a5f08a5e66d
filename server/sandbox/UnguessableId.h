#pragma once

#include <QString>

namespace cmcp {

// An identifier nobody can guess: `prefix` followed by 128 bits from the system's random source
// (getrandom) as 32 hex digits. Job ids and output handles are such ids, so that knowing one's
// own ids tells nothing about another session's.
QString unguessableId(const char *prefix);

} // namespace cmcp
