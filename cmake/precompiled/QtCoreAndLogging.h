// What nearly every source of the daemon's Qt libraries includes: Qt Core's containers, JSON
// and objects, spdlog, and the standard library's usual headers. Each library compiles this once
// as a precompiled header instead of once per source (cmake/PrecompiledHeaders.cmake).
#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <spdlog/spdlog.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
