#include "sandbox/JailPolicy.h"

#include <QJsonDocument>

namespace cmcp {

QByteArray jailPolicyText(const JailPolicy &policy, QString *error)
{
    const std::string text = jail::policyJson(policy);
    jail::Policy parsed;
    std::string refusal;
    if (!jail::parsePolicy(text, parsed, refusal)) {
        *error = QString::fromStdString(refusal);
        return {};
    }
    return QByteArray::fromStdString(text);
}

QJsonObject jailPolicyObject(const JailPolicy &policy)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(jail::policyJson(policy))).object();
}

std::vector<std::string> toJailStrings(const QStringList &list)
{
    std::vector<std::string> strings;
    strings.reserve(std::size_t(list.size()));
    for (const QString &item : list)
        strings.push_back(item.toStdString());
    return strings;
}

QStringList fromJailStrings(const std::vector<std::string> &strings)
{
    QStringList list;
    list.reserve(qsizetype(strings.size()));
    for (const std::string &string : strings)
        list.append(QString::fromStdString(string));
    return list;
}

std::vector<std::pair<std::string, std::string>>
toJailEnvironment(const QList<QPair<QString, QString>> &environment)
{
    std::vector<std::pair<std::string, std::string>> jail;
    jail.reserve(std::size_t(environment.size()));
    for (const auto &[name, value] : environment)
        jail.emplace_back(name.toStdString(), value.toStdString());
    return jail;
}

QStringList jailLayerNames(const JailPolicy &policy)
{
    QStringList names;
    for (jail::Layer layer : policy.layers)
        names.append(QLatin1String(jail::layerName(layer)));
    return names;
}

} // namespace cmcp
