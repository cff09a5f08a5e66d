#include "SandboxView.h"

#include "CallStatus.h"

#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>

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

void SandboxView::setReport(const QJsonObject &report)
{
    // The probe's JSON keys layers by name; "order" (when present) gives the jail's order.
    const QJsonObject layers = report.value(QLatin1String("layers")).toObject();
    QStringList names;
    for (const QJsonValue &name : report.value(QLatin1String("order")).toArray())
        names.append(name.toString());
    if (names.isEmpty())
        names = layers.keys();
    setRowCount(int(names.size()));
    for (int row = 0; row < names.size(); ++row) {
        const QJsonObject layer = layers.value(names.at(row)).toObject();
        const QString state = layer.value(QLatin1String("state")).toString();
        auto *stateItem = new QTableWidgetItem(state);
        stateItem->setForeground(statusColour(state == u"available" ? QStringLiteral("succeeded")
                                              : state == u"disabled" ? QStringLiteral("cancelled")
                                                                     : QStringLiteral("failed")));
        setItem(row, 0, new QTableWidgetItem(names.at(row)));
        setItem(row, 1, stateItem);
        setItem(row, 2, new QTableWidgetItem(layer.value(QLatin1String("detail")).toString()));
        setItem(row, 3, new QTableWidgetItem(layer.value(QLatin1String("reason")).toString()));
        item(row, 0)->setToolTip(QString::fromUtf8(QJsonDocument(layer).toJson()));
    }
    resizeColumnsToContents();
}

} // namespace cmcp
