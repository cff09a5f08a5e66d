#pragma once

#include <QString>

namespace cmcp {

class LiveSettings;
class McpServer;
class PublishedPorts;
class Settings;
class TransferTickets;
struct SandboxCapabilities;

// What a family of tools is registered with, so that each family's register function takes this
// one argument and a new family adds no parameter list: the server its tools go to, the settings
// they read, what the sandbox can do on this kernel, the live settings the admin channel may
// change (a family adds its own), the store of file_transfer's tickets and the registry of
// published ports. All outlive the server's calls.
struct ToolFamily
{
    McpServer &server;
    const Settings &settings;
    const SandboxCapabilities &sandbox;
    LiveSettings *live = nullptr;
    TransferTickets *transfers = nullptr;
    PublishedPorts *ports = nullptr;
};

// Registers one family's tools on family.server; false with `error` when its settings cannot be
// used, which must stop start-up.
using RegisterToolFamily = bool (*)(const ToolFamily &family, QString *error);

} // namespace cmcp
