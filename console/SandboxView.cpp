#include "console/SandboxView.h"

#include "console/CallStatus.h"

#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>

namespace cmcp {

SandboxView::SandboxView(QWidget *parent) : QTableWidget(parent)
{
    setColumnCount(4);
    setHorizontalHeaderLabels({tr("Layer"), tr("State"), tr("Detail"), tr("Reason")});
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->hide();
    setEditTriggers(NoEditTriggers);
    setSelectionBehavior(SelectRows);
}

void SandboxView::setReport(const admin::SandboxReport &report)
{
    m_report = report;
    rebuild();
}

void SandboxView::setTemplates(const QJsonObject &templates)
{
    if (templates == m_templates)
        return;
    m_templates = templates;
    rebuild();
}

namespace {

QTableWidgetItem *stateItem(const QString &state, bool good, bool off)
{
    auto *item = new QTableWidgetItem(state);
    item->setForeground(statusColour(good          ? QStringLiteral("succeeded")
                                             : off ? QStringLiteral("cancelled")
                                                   : QStringLiteral("failed")));
    return item;
}

} // namespace

void SandboxView::rebuild()
{
    const QList<admin::SandboxLayerRecord> layers = m_report.layers();
    QStringList kinds = m_templates.keys();
    kinds.removeAll(QStringLiteral("enabled"));
    setRowCount(int(layers.size() + kinds.size()));
    int row = 0;
    for (const admin::SandboxLayerRecord &layer : layers) {
        const QString &state = layer.state;
        setItem(row, 0, new QTableWidgetItem(layer.name));
        setItem(row, 1, stateItem(state, state == u"available", state == u"disabled"));
        setItem(row, 2, new QTableWidgetItem(layer.detail));
        setItem(row, 3, new QTableWidgetItem(layer.reason));
        item(row, 0)->setToolTip(QString::fromUtf8(QJsonDocument(layer.reported).toJson()));
        ++row;
    }
    for (const QString &kind : kinds) {
        const QJsonObject status = m_templates.value(kind).toObject();
        const QJsonObject cells = status.value(QLatin1String("cells")).toObject();
        const QString state = status.value(QLatin1String("state")).toString();
        const auto count = [&](const char *key) { return cells.value(QLatin1String(key)).toInt(); };
        setItem(row, 0, new QTableWidgetItem(tr("%1 template").arg(kind)));
        setItem(row, 1, stateItem(state, state == u"running", state == u"starting"));
        setItem(row, 2,
                new QTableWidgetItem(tr("%1 calls · cells: %2 idle, %3 busy, %4 starting "
                                        "(%5 made, %6 failed) · started %7 time(s)")
                                             .arg(status.value(QLatin1String("calls")).toInt())
                                             .arg(count("idle"))
                                             .arg(count("busy"))
                                             .arg(count("starting"))
                                             .arg(count("made"))
                                             .arg(count("failed"))
                                             .arg(status.value(QLatin1String("starts")).toInt())));
        const QString lastCellFailure = status.value(QLatin1String("last_cell_failure")).toString();
        setItem(row, 3,
                new QTableWidgetItem(lastCellFailure.isEmpty()
                                             ? status.value(QLatin1String("last_end")).toString()
                                             : lastCellFailure));
        item(row, 0)->setToolTip(QString::fromUtf8(QJsonDocument(status).toJson()));
        ++row;
    }
    resizeColumnsToContents();
}

} // namespace cmcp
