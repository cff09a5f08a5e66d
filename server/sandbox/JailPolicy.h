#pragma once

#include "jail/protocol/Policy.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace cmcp {

// The policy cmcp-jail reads, as the daemon holds it: the jail's own structure
// (jail/protocol/Policy.h, whose comments say what each field does), so that the two sides cannot
// disagree on a field, a key or a default. The daemon edits fields and never JSON; the jail's
// writer, jail::policyJson, is the one place that spells the keys. uid and gid stay 0 until the
// supervisor gives the job a uid of its pool.
using JailPolicy = jail::Policy;

// What the jail will read for `policy`, checked with the jail's own parser first: empty, with
// `error` naming what the jail would refuse (an unknown layer, a relative path, a layer's object
// without its layer…), so that such a policy is the daemon's error and no jail starts for it.
QByteArray jailPolicyText(const JailPolicy &policy, QString *error);

// What jail::policyJson writes, as an object: for descriptions of the policy, not for the jail.
QJsonObject jailPolicyObject(const JailPolicy &policy);

// Qt's types into the jail's, and back.
std::vector<std::string> toJailStrings(const QStringList &list);
QStringList fromJailStrings(const std::vector<std::string> &strings);
std::vector<std::pair<std::string, std::string>>
toJailEnvironment(const QList<QPair<QString, QString>> &environment);
// The names of the layers the policy asks for, in its order.
QStringList jailLayerNames(const JailPolicy &policy);

} // namespace cmcp
