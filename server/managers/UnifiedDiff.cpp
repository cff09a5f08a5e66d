#include "managers/UnifiedDiff.h"

#include <QList>
#include <QStringView>

#include <vector>

namespace cmcp {

namespace {

// Beyond this many inserted plus deleted lines the search stops: its memory grows with the
// square of the differences.
constexpr int maxDifferences = 2000;

enum class Op { Equal, Delete, Insert };

struct Step
{
    Op op;
    qsizetype line; // index in `before` for Equal and Delete, in `after` for Insert
};

QList<QStringView> splitKeepingBreaks(const QString &text)
{
    QList<QStringView> lines;
    qsizetype start = 0;
    while (start < text.size()) {
        const qsizetype newline = text.indexOf(QLatin1Char('\n'), start);
        const qsizetype end = newline < 0 ? text.size() : newline + 1;
        lines.append(QStringView(text).sliced(start, end - start));
        start = end;
    }
    return lines;
}

// Myers' O((N+M)D) shortest edit script between a[aBegin, aEnd) and b[bBegin, bEnd); false when
// it needs more than maxDifferences steps.
bool myers(const QList<QStringView> &a, qsizetype aBegin, qsizetype aEnd,
           const QList<QStringView> &b, qsizetype bBegin, qsizetype bEnd, QList<Step> *steps)
{
    const int n = int(aEnd - aBegin);
    const int m = int(bEnd - bBegin);
    const int limit = qMin(n + m, maxDifferences);
    // trace[d] holds V for diagonals -d..d after step d.
    std::vector<std::vector<int>> trace;
    std::vector<int> v(2 * limit + 3, 0);
    const int offset = limit + 1;
    int found = -1;
    for (int d = 0; d <= limit && found < 0; ++d) {
        for (int k = -d; k <= d; k += 2) {
            int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                    ? v[offset + k + 1]
                    : v[offset + k - 1] + 1;
            int y = x - k;
            while (x < n && y < m && a[aBegin + x] == b[bBegin + y]) {
                ++x;
                ++y;
            }
            v[offset + k] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
        trace.emplace_back(v.begin() + offset - d, v.begin() + offset + d + 1);
    }
    if (found < 0)
        return false;

    QList<Step> reversed;
    int x = n;
    int y = m;
    for (int d = found; d > 0; --d) {
        const std::vector<int> &previous = trace[d - 1];
        auto at = [&](int k) { return previous[k + d - 1]; };
        const int k = x - y;
        const int previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
        const int previousX = at(previousK);
        const int previousY = previousX - previousK;
        while (x > previousX && y > previousY) {
            --x;
            --y;
            reversed.append({Op::Equal, aBegin + x});
        }
        if (x == previousX)
            reversed.append({Op::Insert, bBegin + previousY});
        else
            reversed.append({Op::Delete, aBegin + previousX});
        x = previousX;
        y = previousY;
    }
    while (x > 0) {
        --x;
        reversed.append({Op::Equal, aBegin + x});
    }
    for (qsizetype i = reversed.size() - 1; i >= 0; --i)
        steps->append(reversed[i]);
    return true;
}

QList<Step> editScript(const QList<QStringView> &a, const QList<QStringView> &b)
{
    qsizetype prefix = 0;
    while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix])
        ++prefix;
    qsizetype suffix = 0;
    while (suffix < a.size() - prefix && suffix < b.size() - prefix
           && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
        ++suffix;

    QList<Step> steps;
    for (qsizetype i = 0; i < prefix; ++i)
        steps.append({Op::Equal, i});
    const qsizetype aEnd = a.size() - suffix;
    const qsizetype bEnd = b.size() - suffix;
    if (!myers(a, prefix, aEnd, b, prefix, bEnd, &steps)) {
        for (qsizetype i = prefix; i < aEnd; ++i)
            steps.append({Op::Delete, i});
        for (qsizetype i = prefix; i < bEnd; ++i)
            steps.append({Op::Insert, i});
    }
    for (qsizetype i = aEnd; i < a.size(); ++i)
        steps.append({Op::Equal, i});
    return steps;
}

void appendLine(QString *out, QChar marker, QStringView line)
{
    out->append(marker);
    const bool hasBreak = line.endsWith(QLatin1Char('\n'));
    QStringView shown = hasBreak ? line.chopped(1) : line;
    if (shown.endsWith(QLatin1Char('\r')))
        shown.chop(1);
    out->append(shown);
    out->append(QLatin1Char('\n'));
    if (!hasBreak)
        out->append(QLatin1String("\\ No newline at end of file\n"));
}

QString range(qsizetype firstIndex, qsizetype count)
{
    // As diff(1): a range of no lines names the line before it.
    return QStringLiteral("%1,%2").arg(count == 0 ? firstIndex : firstIndex + 1).arg(count);
}

} // namespace

QString unifiedDiff(const QString &before, const QString &after, const QString &path, int context)
{
    const QList<QStringView> a = splitKeepingBreaks(before);
    const QList<QStringView> b = splitKeepingBreaks(after);
    const QList<Step> steps = editScript(a, b);

    // Position in `before` and `after` reached before each step.
    QList<qsizetype> aAt(steps.size() + 1, 0);
    QList<qsizetype> bAt(steps.size() + 1, 0);
    for (qsizetype i = 0; i < steps.size(); ++i) {
        aAt[i + 1] = aAt[i] + (steps[i].op != Op::Insert ? 1 : 0);
        bAt[i + 1] = bAt[i] + (steps[i].op != Op::Delete ? 1 : 0);
    }

    QString out;
    qsizetype floor = 0;
    for (qsizetype i = 0; i < steps.size();) {
        if (steps[i].op == Op::Equal) {
            ++i;
            continue;
        }
        const qsizetype start = qMax(floor, i - context);
        // A hunk runs on while the next change is close enough for the contexts to touch.
        qsizetype lastChange = i;
        qsizetype j = i;
        for (; j < steps.size(); ++j) {
            if (steps[j].op != Op::Equal)
                lastChange = j;
            else if (j - lastChange > 2 * context)
                break;
        }
        const qsizetype end = qMin(steps.size(), lastChange + 1 + context);
        if (out.isEmpty())
            out = QStringLiteral("--- a/%1\n+++ b/%1\n").arg(path);
        out += QStringLiteral("@@ -%1 +%2 @@\n")
                       .arg(range(aAt[start], aAt[end] - aAt[start]),
                            range(bAt[start], bAt[end] - bAt[start]));
        for (qsizetype s = start; s < end; ++s) {
            const Step &step = steps[s];
            switch (step.op) {
            case Op::Equal:
                appendLine(&out, QLatin1Char(' '), a[step.line]);
                break;
            case Op::Delete:
                appendLine(&out, QLatin1Char('-'), a[step.line]);
                break;
            case Op::Insert:
                appendLine(&out, QLatin1Char('+'), b[step.line]);
                break;
            }
        }
        floor = end;
        i = end;
    }
    return out;
}

} // namespace cmcp
