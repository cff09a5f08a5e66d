#pragma once

#include "common/AdminSnapshotRecords.h"

#include <QTableWidget>

namespace cmcp {

// The sandbox layer report the daemon probed at start-up: one row per layer, in the order the
// jail applies them, with its state, a summary and why it is unavailable.
class SandboxView : public QTableWidget
{
    Q_OBJECT
public:
    explicit SandboxView(QWidget *parent = nullptr);
    void setReport(const admin::SandboxReport &report);
};

} // namespace cmcp
