#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QTimer>

namespace cmcp {

// The live table of tool calls. Calls arrive as "call" objects (AdminProtocol.h) and are applied
// in batches, at most every batchInterval, so that thousands of events a second cost the view a
// few resets of a range rather than one signal each. The oldest calls beyond maxCalls are
// forgotten.
class CallModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, SessionColumn, ClientColumn, ToolColumn, ArgumentsColumn,
                  DurationColumn, StatusColumn, ColumnCount };
    enum Role { CallRole = Qt::UserRole + 1, CallIdRole, StatusRole };

    explicit CallModel(QObject *parent = nullptr);

    void setMaxCalls(int count) { m_maxCalls = qMax(1, count); }
    int maxCalls() const { return m_maxCalls; }
    void setBatchInterval(int milliseconds) { m_batch.setInterval(milliseconds); }

    // Queues a new or updated call (matched by callId); applied at the next batch.
    void enqueue(const QJsonObject &call);
    // Queues a running call's progress (a progress object, AdminProtocol.h): the latest of a
    // call is applied at the next batch, and dropped if the call has finished by then.
    void enqueueProgress(const QJsonObject &progress);
    // Applies the queued calls and progress now.
    void flush();
    // Replaces everything with a snapshot's calls (in flight and recent).
    void reset(const QList<QJsonObject> &calls);

    QJsonObject call(int row) const { return m_calls.at(row).call; }
    int rowOfCall(qint64 callId) const { return m_rowOf.value(callId, -1); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // A running call's progress for people: "2.5 s · 1.2 kB" (elapsed time, output so far).
    static QString runningFigures(const QJsonObject &call);
    // The arguments on one line, shortened: `command="ls -la", path="x"`.
    static QString shortArguments(const QJsonObject &arguments, int maxLength = 80);

private:
    // A call with its cells' texts, made once when it arrives rather than at every paint and
    // every filter pass.
    struct Row
    {
        QJsonObject call;
        qint64 callId = 0;
        QString status;
        QString cells[ColumnCount];
    };
    static Row makeRow(const QJsonObject &call);
    void applyCalls(const QList<QJsonObject> &queued);
    void applyProgress(const QHash<qint64, QJsonObject> &progress);
    void reindex();

    QList<Row> m_calls;
    QHash<qint64, int> m_rowOf; // callId → row
    QList<QJsonObject> m_queued;
    QHash<qint64, QJsonObject> m_queuedProgress; // callId → its latest progress
    QTimer m_batch;
    int m_maxCalls = 5000;
};

} // namespace cmcp
