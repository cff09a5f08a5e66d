#pragma once

#include <QJsonObject>

namespace cmcp::webschemas {

QJsonObject searchInput();
QJsonObject searchOutput();
QJsonObject scrapeInput();
QJsonObject scrapeOutput();
QJsonObject browseInput();
QJsonObject browseOutput();

} // namespace cmcp::webschemas
