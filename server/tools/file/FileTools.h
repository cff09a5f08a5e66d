#pragma once

#include "tools/common/ToolFamily.h"

namespace cmcp {

// Registers file_read, file_write, file_list, file_delete, file_move, file_edit and file_search,
// and the workspace as resources, on `server`. Opens (and creates) the workspace first; false with
// a reason when it cannot, which must stop start-up: tools that cannot reach their directory are
// worse than none. With `live`, the FILE_* options can be replaced while the daemon runs.
bool registerFileTools(const ToolFamily &family, QString *error);

} // namespace cmcp
