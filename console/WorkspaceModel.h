#pragma once

#include "common/AdminWorkspaceRecords.h"

#include <QAbstractTableModel>
#include <QList>

namespace cmcp {

// The workspaces of a listWorkspaces reply (AdminWorkspaceRecords.h): named ones with their
// owner, the shared one and the sessions' own.
class WorkspaceModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        KindColumn,
        OwnerColumn,
        SizeColumn,
        CheckpointsColumn,
        LastUsedColumn,
        JobsColumn,
        IdColumn,
        ColumnCount
    };
    enum Role { WorkspaceIdRole = Qt::UserRole + 1, KindRole, JobsRole };

    explicit WorkspaceModel(QObject *parent = nullptr);

    void reset(const QList<admin::WorkspaceRecord> &workspaces);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // "3.0 MB of 32 MB", "3.0 MB", "— of 32 MB" (not measurable), "—".
    static QString sizeText(const admin::WorkspaceRecord &workspace);

private:
    QList<admin::WorkspaceRecord> m_rows;
};

} // namespace cmcp
