#pragma once

namespace cmcp {

class McpServer;
class Settings;
class TransferTickets;

// Registers file_transfer on `server`: a short-lived URL, a ticket of `transfers` that the HTTP
// door serves (TransferEndpoint), to download or upload one file of the workspace the call works
// in, without base64. `transfers` outlives `server`'s calls.
void registerTransferTools(McpServer &server, const Settings &settings, TransferTickets &transfers);

} // namespace cmcp
