#pragma once

#include <QString>

namespace cmcp {

class LiveSettings;
class McpServer;
class Settings;

// Registers file_read, file_write, file_list, file_delete, file_move, file_edit and file_search,
// and the workspace as resources, on `server`. Opens (and creates) the workspace first; false with
// a reason when it cannot, which must stop start-up: tools that cannot reach their directory are
// worse than none. With `live`, the FILE_* options can be replaced while the daemon runs.
bool registerFileTools(McpServer &server, const Settings &settings, QString *error,
                       LiveSettings *live = nullptr);

} // namespace cmcp
