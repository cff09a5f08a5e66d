#include "console/SandboxView.h"

#include "console/CallStatus.h"

#include <QHeaderView>
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

void SandboxView::setReport(const admin::SandboxReport &report)
{
    const QList<admin::SandboxLayerRecord> layers = report.layers();
    setRowCount(int(layers.size()));
    for (int row = 0; row < layers.size(); ++row) {
        const admin::SandboxLayerRecord &layer = layers.at(row);
        const QString &state = layer.state;
        auto *stateItem = new QTableWidgetItem(state);
        stateItem->setForeground(statusColour(state == u"available" ? QStringLiteral("succeeded")
                                                      : state == u"disabled"
                                                      ? QStringLiteral("cancelled")
                                                      : QStringLiteral("failed")));
        setItem(row, 0, new QTableWidgetItem(layer.name));
        setItem(row, 1, stateItem);
        setItem(row, 2, new QTableWidgetItem(layer.detail));
        setItem(row, 3, new QTableWidgetItem(layer.reason));
        item(row, 0)->setToolTip(QString::fromUtf8(QJsonDocument(layer.reported).toJson()));
    }
    resizeColumnsToContents();
}

} // namespace cmcp
