#pragma once

#include "common/AdminCallRecords.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QTimer>

namespace cmcp {

// The live table of tool calls. Calls arrive as call records (AdminCallRecords.h) and are applied
// in batches, at most every batchInterval, so that thousands of events a second cost the view a
// few resets of a range rather than one signal each. The oldest calls beyond maxCalls are
// forgotten.
class CallModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        SessionColumn,
        ClientColumn,
        ToolColumn,
        ArgumentsColumn,
        DurationColumn,
        StatusColumn,
        ColumnCount
    };
    enum Role { CallRole = Qt::UserRole + 1, CallIdRole, StatusRole };

    explicit CallModel(QObject *parent = nullptr);

    void setMaxCalls(int count) { m_maxCalls = qMax(1, count); }
    int maxCalls() const { return m_maxCalls; }
    void setBatchInterval(int milliseconds) { m_batch.setInterval(milliseconds); }

    // Queues a new or updated call (matched by callId); applied at the next batch.
    void enqueue(const admin::CallRecord &call);
    // Queues a running call's progress: the latest of a call is applied at the next batch, and
    // dropped if the call has finished by then.
    void enqueueProgress(const admin::ProgressRecord &progress);
    // Applies the queued calls and progress now.
    void flush();
    // Replaces everything with a snapshot's calls (in flight and recent).
    void reset(const QList<admin::CallRecord> &calls);

    const admin::CallRecord &call(int row) const { return m_calls.at(row).call; }
    int rowOfCall(qint64 callId) const { return m_rowOf.value(callId, -1); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // A running call's progress for people: "2.5 s · 1.2 kB" (elapsed time, output so far).
    static QString runningFigures(const admin::CallFigures &figures);
    // The arguments on one line, shortened: `command="ls -la", path="x"`.
    static QString shortArguments(const QJsonObject &arguments, int maxLength = 80);

private:
    // A call with its cells' texts, made once when it arrives rather than at every paint and
    // every filter pass.
    struct Row
    {
        admin::CallRecord call;
        QString cells[ColumnCount];
    };
    static Row makeRow(const admin::CallRecord &call);
    void applyCalls(const QList<admin::CallRecord> &queued);
    void applyProgress(const QHash<qint64, admin::CallFigures> &progress);
    void reindex();

    QList<Row> m_calls;
    QHash<qint64, int> m_rowOf; // callId → row
    QList<admin::CallRecord> m_queued;
    QHash<qint64, admin::CallFigures> m_queuedProgress; // callId → its latest figures
    QTimer m_batch;
    int m_maxCalls = 5000;
};

} // namespace cmcp
