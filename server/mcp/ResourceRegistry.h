#pragma once

#include "mcp/Principal.h"

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QRegularExpression>
#include <QString>

#include <functional>
#include <optional>

namespace cmcp {

struct ResourceReadResult
{
    QJsonArray contents; // {uri, mimeType, text} or {uri, mimeType, blob}
    int errorCode = 0; // a JSON-RPC error code when the read failed
    QString error;

    static ResourceReadResult success(const QJsonArray &contents) { return {contents, 0, {}}; }
    static ResourceReadResult failure(int code, const QString &message)
    {
        return {{}, code, message};
    }
};

using ResourceReadDone = std::function<void(const ResourceReadResult &)>;
// `variables` holds the values a template matched; empty for a direct resource. Must not block.
using ResourceReader = std::function<void(
        const QString &uri, const QHash<QString, QString> &variables, ResourceReadDone done)>;
using Completer = std::function<QStringList(const QString &argument, const QString &prefix)>;

struct ResourceDefinition
{
    QString uri;
    QString name;
    QString title;
    QString description;
    QString mimeType;
    std::optional<qint64> size;
    ResourceReader read;
};

// Resources that come and go with something outside the registry (the workspace's files), asked
// for at each resources/list; they are read through a template. Must not block for long.
using ResourceLister = std::function<QList<ResourceDefinition>()>;

// A family of resources named by an RFC 6570 template: `{name}` matches one path segment,
// `{+name}` matches the rest of the URI, slashes included.
struct ResourceTemplateDefinition
{
    QString uriTemplate;
    QString name;
    QString title;
    QString description;
    QString mimeType;
    ResourceReader read;
    Completer complete;
};

class ResourceRegistry : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    void addResource(ResourceDefinition resource);
    void addTemplate(ResourceTemplateDefinition resourceTemplate);
    void addLister(ResourceLister lister);
    const QList<ResourceDefinition> &resources() const { return m_resources; }
    // The fixed resources, then those of every lister.
    QList<ResourceDefinition> listAll() const;
    const QList<ResourceTemplateDefinition> &templates() const { return m_templates; }
    const ResourceTemplateDefinition *findTemplate(const QString &uriTemplate) const;

    struct Match
    {
        ResourceReader read;
        QHash<QString, QString> variables;
    };
    // Direct resources first, then templates in the order they were added.
    std::optional<Match> match(const QString &uri) const;

    // The session whose resources/list or resources/read is being served, and its principal:
    // the core sets them around each call, so that readers and listers can answer for that
    // session and for what its principal owns.
    const QString &callingSession() const { return m_callingSession; }
    const Principal &callingPrincipal() const { return m_callingPrincipal; }
    void setCaller(const QString &sessionId, const Principal &principal)
    {
        m_callingSession = sessionId;
        m_callingPrincipal = principal;
    }
    void clearCaller() { setCaller({}, Principal::local()); }

    // Tells subscribed sessions that the resource's content changed. `owner` names the only
    // session (Session::id) whose resource it is, as for a file of a session's own workspace;
    // empty for a resource every session shares.
    void notifyUpdated(const QString &uri, const QString &owner = {})
    {
        Q_EMIT updated(uri, owner);
    }

Q_SIGNALS:
    void listChanged();
    void updated(const QString &uri, const QString &owner);

private:
    struct CompiledTemplate
    {
        QRegularExpression pattern;
        QStringList variables;
    };
    static CompiledTemplate compile(const QString &uriTemplate);

    QList<ResourceDefinition> m_resources;
    QList<ResourceTemplateDefinition> m_templates;
    QList<ResourceLister> m_listers;
    QList<CompiledTemplate> m_compiled;
    QString m_callingSession;
    Principal m_callingPrincipal = Principal::local();
};

} // namespace cmcp
