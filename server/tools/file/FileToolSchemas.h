#pragma once

#include <QJsonObject>

namespace cmcp::fileschemas {

// Input and output JSON Schemas of the file tools. Field names follow the original
// Container-MCP (content, size, modified, success, path, entries, is_directory, source,
// destination); additions are named in the descriptions.
QJsonObject readInput();
QJsonObject readOutput();
QJsonObject writeInput();
QJsonObject writeOutput();
QJsonObject listInput();
QJsonObject listOutput();
QJsonObject deleteInput();
QJsonObject deleteOutput();
QJsonObject moveInput();
QJsonObject moveOutput();
QJsonObject editInput();
QJsonObject editOutput();
QJsonObject searchInput();
QJsonObject searchOutput();

} // namespace cmcp::fileschemas
