#include "console/CallModel.h"

#include "console/CallStatus.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>

#include <algorithm>
#include <climits>

namespace cmcp {

namespace {

QString compactValue(const QJsonValue &value)
{
    if (value.isString())
        return u'"' + value.toString().simplified() + u'"';
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    return value.toVariant().toString();
}

} // namespace

QString CallModel::runningFigures(const admin::CallFigures &figures)
{
    return tr("%1 s · %2")
            .arg(double(figures.elapsedMs) / 1000.0, 0, 'f', 1)
            .arg(QLocale::c().formattedDataSize(figures.outputBytes, 1,
                                                QLocale::DataSizeTraditionalFormat));
}

CallModel::CallModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_batch.setInterval(100);
    m_batch.setSingleShot(true);
    connect(&m_batch, &QTimer::timeout, this, &CallModel::flush);
}

void CallModel::enqueue(const admin::CallRecord &call)
{
    m_queued.append(call);
    if (!m_batch.isActive())
        m_batch.start();
}

void CallModel::enqueueProgress(const admin::ProgressRecord &progress)
{
    m_queuedProgress.insert(progress.callId, progress.figures);
    if (!m_batch.isActive())
        m_batch.start();
}

void CallModel::flush()
{
    m_batch.stop();
    // Calls first: a call's progress may arrive in the batch that brings the call itself.
    if (!m_queued.isEmpty())
        applyCalls(std::exchange(m_queued, {}));
    if (!m_queuedProgress.isEmpty())
        applyProgress(std::exchange(m_queuedProgress, {}));
}

void CallModel::applyProgress(const QHash<qint64, admin::CallFigures> &progress)
{
    int firstChanged = INT_MAX;
    int lastChanged = -1;
    for (auto it = progress.cbegin(); it != progress.cend(); ++it) {
        const int row = m_rowOf.value(it.key(), -1);
        // A finished call's own figures (durationMs) are final.
        if (row < 0 || !m_calls.at(row).call.isRunning())
            continue;
        admin::CallRecord call = m_calls.at(row).call;
        call.figures = *it;
        m_calls[row] = makeRow(call);
        firstChanged = std::min(firstChanged, row);
        lastChanged = std::max(lastChanged, row);
    }
    if (lastChanged >= 0)
        Q_EMIT dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
}

void CallModel::applyCalls(const QList<admin::CallRecord> &queued)
{
    QList<admin::CallRecord> added;
    QHash<qint64, int> addedIndex;
    int firstChanged = INT_MAX;
    int lastChanged = -1;
    for (const admin::CallRecord &call : queued) {
        const qint64 id = call.callId;
        if (const auto row = m_rowOf.constFind(id); row != m_rowOf.cend()) {
            m_calls[*row] = makeRow(call);
            firstChanged = std::min(firstChanged, *row);
            lastChanged = std::max(lastChanged, *row);
        } else if (const auto index = addedIndex.constFind(id); index != addedIndex.cend()) {
            added[*index] = call;
        } else {
            addedIndex.insert(id, int(added.size()));
            added.append(call);
        }
    }
    if (lastChanged >= 0)
        Q_EMIT dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
    // Only the newest maxCalls of the batch can survive the trim below.
    if (added.size() > m_maxCalls)
        added = added.mid(added.size() - m_maxCalls);
    if (!added.isEmpty()) {
        const int first = int(m_calls.size());
        beginInsertRows({}, first, first + int(added.size()) - 1);
        m_calls.reserve(m_calls.size() + added.size());
        for (const admin::CallRecord &call : std::as_const(added)) {
            m_rowOf.insert(call.callId, int(m_calls.size()));
            m_calls.append(makeRow(call));
        }
        endInsertRows();
    }
    if (m_calls.size() > m_maxCalls) {
        const int excess = int(m_calls.size()) - m_maxCalls;
        beginRemoveRows({}, 0, excess - 1);
        m_calls.remove(0, excess);
        reindex();
        endRemoveRows();
    }
}

void CallModel::reset(const QList<admin::CallRecord> &calls)
{
    beginResetModel();
    m_queued.clear();
    m_queuedProgress.clear();
    QList<admin::CallRecord> sorted = calls;
    std::sort(sorted.begin(), sorted.end(),
              [](const admin::CallRecord &a, const admin::CallRecord &b) {
                  return a.callId < b.callId;
              });
    if (sorted.size() > m_maxCalls)
        sorted = sorted.mid(sorted.size() - m_maxCalls);
    m_calls.clear();
    for (const admin::CallRecord &call : std::as_const(sorted))
        m_calls.append(makeRow(call));
    reindex();
    endResetModel();
}

void CallModel::reindex()
{
    m_rowOf.clear();
    m_rowOf.reserve(m_calls.size());
    for (int row = 0; row < m_calls.size(); ++row)
        m_rowOf.insert(m_calls.at(row).call.callId, row);
}

int CallModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_calls.size());
}

int CallModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString CallModel::shortArguments(const QJsonObject &arguments, int maxLength)
{
    QStringList parts;
    for (auto it = arguments.begin(); it != arguments.end(); ++it)
        parts.append(it.key() + u'=' + compactValue(it.value()));
    QString text = parts.join(QStringLiteral(", "));
    if (text.size() > maxLength)
        text = text.left(maxLength - 1) + u'…';
    return text;
}

CallModel::Row CallModel::makeRow(const admin::CallRecord &call)
{
    Row row;
    row.call = call;
    row.cells[TimeColumn] = call.startedAt.toLocalTime().toString(QStringLiteral("HH:mm:ss.zzz"));
    row.cells[SessionColumn] = call.sessionId.left(8);
    row.cells[ClientColumn] = call.clientName;
    row.cells[ToolColumn] = call.tool;
    row.cells[ArgumentsColumn] = shortArguments(call.arguments);
    if (call.durationMs)
        row.cells[DurationColumn] = tr("%1 ms").arg(*call.durationMs);
    else if (call.figures)
        row.cells[DurationColumn] = runningFigures(*call.figures);
    row.cells[StatusColumn] = statusLabel(call.status);
    return row;
}

QVariant CallModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_calls.size() || index.column() >= ColumnCount)
        return {};
    const Row &row = m_calls.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return row.cells[index.column()];
    case CallRole:
        return QVariant::fromValue(row.call);
    case CallIdRole:
        return row.call.callId;
    case StatusRole:
        return row.call.status;
    case Qt::ForegroundRole:
        return index.column() == StatusColumn ? QVariant(statusColour(row.call.status))
                                              : QVariant();
    case Qt::ToolTipRole:
        if (index.column() == ArgumentsColumn)
            return QString::fromUtf8(QJsonDocument(row.call.arguments).toJson());
        return row.call.detail;
    case Qt::TextAlignmentRole:
        return index.column() == DurationColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                                                : QVariant();
    }
    return {};
}

QVariant CallModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case SessionColumn:
        return tr("Session");
    case ClientColumn:
        return tr("Client");
    case ToolColumn:
        return tr("Tool");
    case ArgumentsColumn:
        return tr("Arguments");
    case DurationColumn:
        return tr("Duration");
    case StatusColumn:
        return tr("Status");
    }
    return {};
}

} // namespace cmcp
