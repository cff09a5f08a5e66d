// How much of the console's event loop a stream of tool calls takes: calls arrive as
// started + finished events, are applied in batches every 100 ms by CallModel, through the
// filter proxy, into a table view on the offscreen platform. Reports the time each batch took
// (median and worst) and how far the history grew, for a given event rate.
//   cmcp-console-bench [--calls N] [--rate CALLS_PER_SECOND] [--max-calls M]

#include "common/AdminCallRecords.h"
#include "console/CallModel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>
#include <cstdio>

using namespace cmcp;

namespace {

admin::CallRecord call(qint64 id, bool finished)
{
    QJsonObject object{{"callId", double(id)},
                       {"sessionId", "0123456789abcdef"},
                       {"clientName", "bench"},
                       {"tool", id % 3 ? "file_read" : "system_run_command"},
                       {"arguments", QJsonObject{{"path", QStringLiteral("notes/%1.txt").arg(id)}}},
                       {"startedAt", "2026-01-01T10:00:00.000Z"},
                       {"status", finished ? "succeeded" : "running"}};
    if (finished)
        object.insert("durationMs", 3);
    return admin::CallRecord::fromJson(object);
}

} // namespace

int main(int argc, char *argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption callsOption("calls", "Calls to stream (default 20000).", "N", "20000");
    const QCommandLineOption rateOption("rate", "Calls per second (default 5000).", "R", "5000");
    const QCommandLineOption maxOption("max-calls", "History kept by the model (default 5000).",
                                       "M", "5000");
    const QCommandLineOption noProxyOption("no-proxy", "Show the model without the filter proxy.");
    parser.addOptions({callsOption, rateOption, maxOption, noProxyOption});
    parser.process(app);
    const int calls = std::max(1, parser.value(callsOption).toInt());
    const int perBatch = std::max(1, parser.value(rateOption).toInt() / 10); // one batch per 100 ms

    CallModel model;
    model.setMaxCalls(parser.value(maxOption).toInt());
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setFilterKeyColumn(-1);
    proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy.setFilterFixedString("file");
    QTableView view;
    if (parser.isSet(noProxyOption))
        view.setModel(&model);
    else
        view.setModel(&proxy);
    view.resize(1100, 600);
    view.show();
    QCoreApplication::processEvents();

    QList<double> batchMs;
    QList<double> flushMs; // the model and proxy alone, without the view's layout and paint
    QElapsedTimer total;
    total.start();
    for (int first = 1; first <= calls; first += perBatch) {
        const int last = std::min(calls, first + perBatch - 1);
        for (int id = first; id <= last; ++id) {
            model.enqueue(call(id, false));
            model.enqueue(call(id, true));
        }
        QElapsedTimer timer;
        timer.start();
        model.flush();
        flushMs.append(timer.nsecsElapsed() / 1e6);
        view.scrollToBottom();
        view.repaint();
        QCoreApplication::processEvents();
        batchMs.append(timer.nsecsElapsed() / 1e6);
    }
    std::sort(batchMs.begin(), batchMs.end());
    std::sort(flushMs.begin(), flushMs.end());
    std::printf("calls %d in batches of %d (%d events each): batch median %.2f ms, p99 %.2f ms, "
                "worst %.2f ms; "
                "model and proxy alone median %.2f ms; rows kept %d of %d; total %.0f ms\n",
                calls, perBatch, 2 * perBatch, batchMs.at(batchMs.size() / 2),
                batchMs.at(std::min<qsizetype>(batchMs.size() - 1, batchMs.size() * 99 / 100)),
                batchMs.last(), flushMs.at(flushMs.size() / 2), model.rowCount(), model.maxCalls(),
                total.nsecsElapsed() / 1e6);
    return 0;
}
