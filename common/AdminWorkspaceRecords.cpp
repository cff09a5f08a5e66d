#include "common/AdminWorkspaceRecords.h"

#include "common/AdminRecordJson.h"

namespace cmcp::admin {

namespace {

using json::Absent;
using json::member;

constexpr auto kWorkspace = json::fields(
        member("kind", &WorkspaceRecord::kind),
        member("workspaceId", &WorkspaceRecord::workspaceId),
        member("name", &WorkspaceRecord::name), member("owner", &WorkspaceRecord::owner),
        member("path", &WorkspaceRecord::path),
        member("usedBytes", &WorkspaceRecord::usedBytes, Absent::Null),
        member("quotaBytes", &WorkspaceRecord::quotaBytes),
        member("checkpoints", &WorkspaceRecord::checkpoints, Absent::Null),
        member("created", &WorkspaceRecord::created),
        member("lastUsed", &WorkspaceRecord::lastUsed),
        member("jobsRunning", &WorkspaceRecord::jobsRunning));
constexpr auto kList = json::fields(member("workspaces", &ListWorkspacesResult::workspaces));
constexpr auto kDelete = json::fields(member("workspaceId", &DeleteWorkspaceParams::workspaceId));
constexpr auto kDeleted = json::fields(member("workspaceId", &DeleteWorkspaceResult::workspaceId),
                                       member("name", &DeleteWorkspaceResult::name),
                                       member("owner", &DeleteWorkspaceResult::owner),
                                       member("jobsKilled", &DeleteWorkspaceResult::jobsKilled));

} // namespace

CMCP_ADMIN_RECORD_JSON(WorkspaceRecord, kWorkspace)

CMCP_ADMIN_RECORD_JSON(ListWorkspacesResult, kList)

QJsonObject DeleteWorkspaceParams::toJson() const
{
    return kDelete.write(*this);
}

std::optional<DeleteWorkspaceParams> DeleteWorkspaceParams::fromJson(const QJsonObject &object)
{
    DeleteWorkspaceParams params = kDelete.read(object);
    if (params.workspaceId.isEmpty())
        return std::nullopt;
    return params;
}

CMCP_ADMIN_RECORD_JSON(DeleteWorkspaceResult, kDeleted)

} // namespace cmcp::admin
