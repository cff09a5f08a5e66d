#pragma once

#include "common/AdminSnapshotRecords.h"

#include <QTableWidget>

namespace cmcp {

// The sandbox layer report the daemon probed at start-up: one row per layer, in the order the
// jail applies them, with its state, a summary and why it is unavailable; then one row per call
// template as it is now (its state, calls and cells; the counters refresh it).
class SandboxView : public QTableWidget
{
    Q_OBJECT
public:
    explicit SandboxView(QWidget *parent = nullptr);
    void setReport(const admin::SandboxReport &report);
    // The call_templates object of /health (the counters' `templates`).
    void setTemplates(const QJsonObject &templates);

private:
    void rebuild();

    admin::SandboxReport m_report;
    QJsonObject m_templates;
};

} // namespace cmcp
