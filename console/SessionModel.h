#pragma once

#include "common/AdminSessionRecords.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>

namespace cmcp {

// The MCP sessions open on the daemon (session records, AdminSessionRecords.h).
class SessionModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        SessionColumn,
        TransportColumn,
        ClientColumn,
        CallsColumn,
        AgeColumn,
        ColumnCount
    };
    enum Role { SessionIdRole = Qt::UserRole + 1 };

    explicit SessionModel(QObject *parent = nullptr);

    void reset(const QList<admin::SessionRecord> &sessions);
    void opened(const admin::SessionOpenedEvent &session);
    void closed(const QString &sessionId);
    // A call started in the session: count it and learn the client's name.
    void callStarted(const QString &sessionId, const QString &clientName);
    // Ages are computed against this time (the view refreshes it); by default, now.
    void setNow(const QDateTime &now);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    static QString ageText(qint64 seconds);

private:
    int rowOf(const QString &sessionId) const;

    QList<admin::SessionRecord> m_rows;
    QDateTime m_now;
};

} // namespace cmcp
