#include "common/AdminWorkspaceRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

QJsonObject WorkspaceRecord::toJson() const
{
    return {{QLatin1String("kind"), kind},
            {QLatin1String("workspaceId"), workspaceId},
            {QLatin1String("name"), name},
            {QLatin1String("owner"), owner},
            {QLatin1String("path"), path},
            {QLatin1String("usedBytes"),
             usedBytes ? QJsonValue(double(*usedBytes)) : QJsonValue(QJsonValue::Null)},
            {QLatin1String("quotaBytes"), double(quotaBytes)},
            {QLatin1String("checkpoints"),
             checkpoints ? QJsonValue(*checkpoints) : QJsonValue(QJsonValue::Null)},
            {QLatin1String("created"), json::timeText(created)},
            {QLatin1String("lastUsed"), json::timeText(lastUsed)},
            {QLatin1String("jobsRunning"), jobsRunning}};
}

WorkspaceRecord WorkspaceRecord::fromJson(const QJsonObject &object)
{
    WorkspaceRecord record;
    record.kind = json::text(object, "kind");
    record.workspaceId = json::text(object, "workspaceId");
    record.name = json::text(object, "name");
    record.owner = json::text(object, "owner");
    record.path = json::text(object, "path");
    if (json::field(object, "usedBytes").isDouble())
        record.usedBytes = json::integer(object, "usedBytes");
    record.quotaBytes = json::integer(object, "quotaBytes");
    if (json::field(object, "checkpoints").isDouble())
        record.checkpoints = int(json::integer(object, "checkpoints"));
    record.created = json::time(object, "created");
    record.lastUsed = json::time(object, "lastUsed");
    record.jobsRunning = int(json::integer(object, "jobsRunning"));
    return record;
}

QJsonObject ListWorkspacesResult::toJson() const
{
    return {{QLatin1String("workspaces"), json::array(workspaces)}};
}

ListWorkspacesResult ListWorkspacesResult::fromJson(const QJsonObject &object)
{
    return {json::records<WorkspaceRecord>(object, "workspaces")};
}

QJsonObject DeleteWorkspaceParams::toJson() const
{
    return {{QLatin1String("workspaceId"), workspaceId}};
}

std::optional<DeleteWorkspaceParams> DeleteWorkspaceParams::fromJson(const QJsonObject &object)
{
    const QString workspaceId = json::text(object, "workspaceId");
    if (workspaceId.isEmpty())
        return std::nullopt;
    return DeleteWorkspaceParams{workspaceId};
}

QJsonObject DeleteWorkspaceResult::toJson() const
{
    return {{QLatin1String("workspaceId"), workspaceId},
            {QLatin1String("name"), name},
            {QLatin1String("owner"), owner},
            {QLatin1String("jobsKilled"), jobsKilled}};
}

DeleteWorkspaceResult DeleteWorkspaceResult::fromJson(const QJsonObject &object)
{
    return {json::text(object, "workspaceId"), json::text(object, "name"),
            json::text(object, "owner"), int(json::integer(object, "jobsKilled"))};
}

} // namespace cmcp::admin
