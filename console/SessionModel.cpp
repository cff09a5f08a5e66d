#include "console/SessionModel.h"

#include <algorithm>

namespace cmcp {

SessionModel::SessionModel(QObject *parent) : QAbstractTableModel(parent) { }

void SessionModel::reset(const QList<admin::SessionRecord> &sessions)
{
    beginResetModel();
    m_rows = sessions;
    endResetModel();
}

int SessionModel::rowOf(const QString &sessionId) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).sessionId == sessionId)
            return row;
    }
    return -1;
}

void SessionModel::opened(const admin::SessionOpenedEvent &session)
{
    if (rowOf(session.sessionId) >= 0)
        return;
    const int row = int(m_rows.size());
    beginInsertRows({}, row, row);
    m_rows.append(
            admin::SessionRecord{session.sessionId, session.transport, {}, session.openedAt, 0});
    endInsertRows();
}

void SessionModel::closed(const QString &sessionId)
{
    const int row = rowOf(sessionId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_rows.removeAt(row);
    endRemoveRows();
}

void SessionModel::callStarted(const QString &sessionId, const QString &clientName)
{
    const int row = rowOf(sessionId);
    if (row < 0)
        return;
    ++m_rows[row].calls;
    if (!clientName.isEmpty())
        m_rows[row].clientName = clientName;
    Q_EMIT dataChanged(index(row, ClientColumn), index(row, CallsColumn));
}

void SessionModel::setNow(const QDateTime &now)
{
    m_now = now;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, AgeColumn), index(int(m_rows.size()) - 1, AgeColumn));
}

int SessionModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SessionModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString SessionModel::ageText(qint64 seconds)
{
    if (seconds < 60)
        return tr("%1 s").arg(seconds);
    if (seconds < 3600)
        return tr("%1 min").arg(seconds / 60);
    return tr("%1 h %2 min").arg(seconds / 3600).arg((seconds % 3600) / 60);
}

QVariant SessionModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const admin::SessionRecord &row = m_rows.at(index.row());
    if (role == SessionIdRole)
        return row.sessionId;
    if (role == Qt::ToolTipRole && index.column() == SessionColumn)
        return row.sessionId;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case SessionColumn:
        return row.sessionId.left(8);
    case TransportColumn:
        return row.transport;
    case ClientColumn:
        return row.clientName;
    case CallsColumn:
        return row.calls;
    case AgeColumn: {
        const QDateTime now = m_now.isValid() ? m_now : QDateTime::currentDateTimeUtc();
        return row.openedAt.isValid() ? ageText(std::max<qint64>(0, row.openedAt.secsTo(now)))
                                      : QString();
    }
    }
    return {};
}

QVariant SessionModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SessionColumn:
        return tr("Session");
    case TransportColumn:
        return tr("Transport");
    case ClientColumn:
        return tr("Client");
    case CallsColumn:
        return tr("Calls");
    case AgeColumn:
        return tr("Age");
    }
    return {};
}

} // namespace cmcp
