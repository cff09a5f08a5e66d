#pragma once

#include <QString>

namespace cmcp {

// A unified diff of two texts, line by line, with `context` unchanged lines around each change,
// under the headers "--- a/<path>" and "+++ b/<path>", as git and patch(1) read it. Lines are
// compared with their line breaks, so a changed line ending shows as a change; lines are shown
// without them, and "\ No newline at end of file" marks a last line that lacks one. Empty when
// the texts are equal. The edit script is minimal (Myers) up to a bound on the differences;
// beyond it the differing middle is shown as removed and added whole, which stays correct.
QString unifiedDiff(const QString &before, const QString &after, const QString &path,
                    int context = 3);

} // namespace cmcp
