#include "console/WorkspaceModel.h"

#include <QLocale>

namespace cmcp {

WorkspaceModel::WorkspaceModel(QObject *parent) : QAbstractTableModel(parent) { }

void WorkspaceModel::reset(const QList<admin::WorkspaceRecord> &workspaces)
{
    beginResetModel();
    m_rows = workspaces;
    endResetModel();
}

int WorkspaceModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int WorkspaceModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString WorkspaceModel::sizeText(const admin::WorkspaceRecord &workspace)
{
    const QLocale locale = QLocale::c();
    const QString used = workspace.usedBytes
            ? locale.formattedDataSize(*workspace.usedBytes, 1, QLocale::DataSizeSIFormat)
            : QStringLiteral("—");
    if (workspace.quotaBytes <= 0)
        return used;
    return tr("%1 of %2")
            .arg(used,
                 locale.formattedDataSize(workspace.quotaBytes, 0, QLocale::DataSizeSIFormat));
}

QVariant WorkspaceModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const admin::WorkspaceRecord &row = m_rows.at(index.row());
    switch (role) {
    case WorkspaceIdRole:
        return row.workspaceId;
    case KindRole:
        return row.kind;
    case JobsRole:
        return row.jobsRunning;
    case Qt::ToolTipRole:
        return row.path;
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case NameColumn:
        return row.name;
    case KindColumn:
        return row.kind;
    case OwnerColumn:
        return row.owner.isEmpty() ? tr("(everyone)") : row.owner;
    case SizeColumn:
        return sizeText(row);
    case CheckpointsColumn:
        return row.checkpoints ? QString::number(*row.checkpoints) : QStringLiteral("—");
    case LastUsedColumn:
        return row.lastUsed.isValid()
                ? row.lastUsed.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                : QString();
    case JobsColumn:
        return row.jobsRunning;
    case IdColumn:
        return row.workspaceId;
    }
    return {};
}

QVariant WorkspaceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Workspace");
    case KindColumn:
        return tr("Kind");
    case OwnerColumn:
        return tr("Owner");
    case SizeColumn:
        return tr("Used of quota");
    case CheckpointsColumn:
        return tr("Checkpoints");
    case LastUsedColumn:
        return tr("Last used");
    case JobsColumn:
        return tr("Jobs");
    case IdColumn:
        return tr("Id");
    }
    return {};
}

} // namespace cmcp
