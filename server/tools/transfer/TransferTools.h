#pragma once

namespace cmcp {

class McpServer;
class Settings;

// Registers file_transfer on `server`: a short-lived URL of the HTTP door (FileTransfers) to
// download or upload one file of the workspace the call works in, without base64.
void registerTransferTools(McpServer &server, const Settings &settings);

} // namespace cmcp
