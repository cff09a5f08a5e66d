#include "CallModel.h"

#include "CallStatus.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <climits>

namespace cmcp {

namespace {

qint64 callIdOf(const QJsonObject &call)
{
    return qint64(call.value(QLatin1String("callId")).toDouble());
}

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

CallModel::CallModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_batch.setInterval(100);
    m_batch.setSingleShot(true);
    connect(&m_batch, &QTimer::timeout, this, &CallModel::flush);
}

void CallModel::enqueue(const QJsonObject &call)
{
    m_queued.append(call);
    if (!m_batch.isActive())
        m_batch.start();
}

void CallModel::flush()
{
    m_batch.stop();
    if (m_queued.isEmpty())
        return;
    const QList<QJsonObject> queued = std::exchange(m_queued, {});
    QList<QJsonObject> added;
    QHash<qint64, int> addedIndex;
    int firstChanged = INT_MAX;
    int lastChanged = -1;
    for (const QJsonObject &call : queued) {
        const qint64 id = callIdOf(call);
        if (const auto row = m_rowOf.constFind(id); row != m_rowOf.cend()) {
            m_calls[*row] = call;
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
        for (const QJsonObject &call : std::as_const(added)) {
            m_rowOf.insert(callIdOf(call), int(m_calls.size()));
            m_calls.append(call);
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

void CallModel::reset(const QList<QJsonObject> &calls)
{
    beginResetModel();
    m_queued.clear();
    m_calls = calls.size() > m_maxCalls ? calls.mid(calls.size() - m_maxCalls) : calls;
    std::sort(m_calls.begin(), m_calls.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return callIdOf(a) < callIdOf(b);
    });
    reindex();
    endResetModel();
}

void CallModel::reindex()
{
    m_rowOf.clear();
    m_rowOf.reserve(m_calls.size());
    for (int row = 0; row < m_calls.size(); ++row)
        m_rowOf.insert(callIdOf(m_calls.at(row)), row);
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

QVariant CallModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_calls.size())
        return {};
    const QJsonObject &call = m_calls.at(index.row());
    const QString status = call.value(QLatin1String("status")).toString();
    switch (role) {
    case CallRole:
        return call;
    case CallIdRole:
        return callIdOf(call);
    case StatusRole:
        return status;
    case Qt::ForegroundRole:
        return index.column() == StatusColumn ? QVariant(statusColour(status)) : QVariant();
    case Qt::ToolTipRole:
        if (index.column() == ArgumentsColumn)
            return QString::fromUtf8(QJsonDocument(call.value(QLatin1String("arguments")).toObject()).toJson());
        return call.value(QLatin1String("detail")).toString();
    case Qt::TextAlignmentRole:
        return index.column() == DurationColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case TimeColumn:
        return QDateTime::fromString(call.value(QLatin1String("startedAt")).toString(), Qt::ISODateWithMs)
                .toLocalTime()
                .toString(QStringLiteral("HH:mm:ss.zzz"));
    case SessionColumn:
        return call.value(QLatin1String("sessionId")).toString().left(8);
    case ClientColumn:
        return call.value(QLatin1String("clientName")).toString();
    case ToolColumn:
        return call.value(QLatin1String("tool")).toString();
    case ArgumentsColumn:
        return shortArguments(call.value(QLatin1String("arguments")).toObject());
    case DurationColumn:
        return call.contains(QLatin1String("durationMs"))
                ? QStringLiteral("%1 ms").arg(qint64(call.value(QLatin1String("durationMs")).toDouble()))
                : QString();
    case StatusColumn:
        return statusLabel(status);
    }
    return {};
}

QVariant CallModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn: return tr("Time");
    case SessionColumn: return tr("Session");
    case ClientColumn: return tr("Client");
    case ToolColumn: return tr("Tool");
    case ArgumentsColumn: return tr("Arguments");
    case DurationColumn: return tr("Duration");
    case StatusColumn: return tr("Status");
    }
    return {};
}

} // namespace cmcp
