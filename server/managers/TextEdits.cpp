#include "managers/TextEdits.h"

namespace cmcp {

namespace {

QString withLineEnding(QString text, const QString &lineEnding)
{
    text.replace(QLatin1String("\r\n"), QLatin1String("\n"));
    if (lineEnding != QLatin1String("\n"))
        text.replace(QLatin1Char('\n'), lineEnding);
    return text;
}

QStringView withoutTrailingSpace(QStringView line)
{
    qsizetype end = line.size();
    while (end > 0 && line[end - 1].isSpace())
        --end;
    return line.first(end);
}

// Where every occurrence of `needle` starts, overlapping ones included: "aa" occurs twice in
// "aaa", and replacing either would be a guess.
QList<qsizetype> exactMatches(const QString &text, const QString &needle)
{
    QList<qsizetype> starts;
    for (qsizetype at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1))
        starts.append(at);
    return starts;
}

struct Line
{
    qsizetype start = 0;
    qsizetype contentEnd = 0; // before the line break
    qsizetype end = 0; // after the line break
};

QList<Line> splitLines(const QString &text)
{
    QList<Line> lines;
    qsizetype start = 0;
    while (start < text.size()) {
        const qsizetype newline = text.indexOf(QLatin1Char('\n'), start);
        if (newline < 0) {
            lines.append({start, text.size(), text.size()});
            break;
        }
        const qsizetype contentEnd =
                newline > start && text[newline - 1] == QLatin1Char('\r') ? newline - 1 : newline;
        lines.append({start, contentEnd, newline + 1});
        start = newline + 1;
    }
    return lines;
}

struct Region
{
    qsizetype start = 0;
    qsizetype end = 0;
};

// Runs of whole lines equal to `needle`'s lines once trailing whitespace (\r included) is
// removed from both. A needle ending in a line break takes the last line's break with it.
QList<Region> lineMatches(const QString &text, const QString &needle)
{
    QString wanted = needle;
    wanted.replace(QLatin1String("\r\n"), QLatin1String("\n"));
    const bool takesLastBreak = wanted.endsWith(QLatin1Char('\n'));
    if (takesLastBreak)
        wanted.chop(1);
    QList<QStringView> wantedLines;
    for (QStringView line : QStringView(wanted).split(QLatin1Char('\n')))
        wantedLines.append(withoutTrailingSpace(line));

    const QList<Line> lines = splitLines(text);
    QList<Region> regions;
    for (qsizetype first = 0; first + wantedLines.size() <= lines.size(); ++first) {
        bool equal = true;
        for (qsizetype j = 0; equal && j < wantedLines.size(); ++j) {
            const Line &line = lines[first + j];
            const QStringView content =
                    QStringView(text).sliced(line.start, line.contentEnd - line.start);
            equal = withoutTrailingSpace(content) == wantedLines[j];
        }
        if (equal) {
            const Line &last = lines[first + wantedLines.size() - 1];
            regions.append({lines[first].start, takesLastBreak ? last.end : last.contentEnd});
        }
    }
    return regions;
}

qsizetype lineNumberAt(const QString &text, qsizetype position)
{
    return QStringView(text).first(position).count(QLatin1Char('\n')) + 1;
}

} // namespace

QString dominantLineEnding(const QString &text)
{
    qsizetype crlf = 0;
    qsizetype lf = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] != QLatin1Char('\n'))
            continue;
        if (i > 0 && text[i - 1] == QLatin1Char('\r'))
            ++crlf;
        else
            ++lf;
    }
    return crlf > lf ? QStringLiteral("\r\n") : QStringLiteral("\n");
}

TextEditsOutcome applyTextEdits(const QString &original, const QList<TextEdit> &edits)
{
    TextEditsOutcome outcome;
    const QString lineEnding = dominantLineEnding(original);
    QString text = original;
    for (qsizetype i = 0; i < edits.size(); ++i) {
        const TextEdit &edit = edits[i];
        const QString name = QStringLiteral("edits[%1]").arg(i);
        if (edit.oldText.isEmpty()) {
            outcome.error = name
                    + QStringLiteral(": old_text is empty; it must quote the text "
                                     "to replace");
            return outcome;
        }
        Region region;
        bool exact = true;
        const QList<qsizetype> starts = exactMatches(text, edit.oldText);
        if (starts.size() == 1) {
            region = {starts.first(), starts.first() + edit.oldText.size()};
        } else if (starts.size() > 1) {
            outcome.error = name
                    + QStringLiteral(": old_text occurs %1 times (first at lines %2 and %3); "
                                     "include more surrounding text so that it occurs once")
                              .arg(starts.size())
                              .arg(lineNumberAt(text, starts[0]))
                              .arg(lineNumberAt(text, starts[1]));
            return outcome;
        } else {
            const QList<Region> regions = lineMatches(text, edit.oldText);
            if (regions.isEmpty()) {
                outcome.error = name
                        + QStringLiteral(": old_text was not found, neither exactly nor line by "
                                         "line ignoring line endings and trailing whitespace "
                                         "(leading whitespace must match)");
                return outcome;
            }
            if (regions.size() > 1) {
                outcome.error = name
                        + QStringLiteral(": old_text matches %1 places once line endings and "
                                         "trailing whitespace are ignored (first at lines %2 and "
                                         "%3); include more surrounding lines so that it matches "
                                         "one")
                                  .arg(regions.size())
                                  .arg(lineNumberAt(text, regions[0].start))
                                  .arg(lineNumberAt(text, regions[1].start));
                return outcome;
            }
            region = regions.first();
            exact = false;
        }
        outcome.applied.append({lineNumberAt(text, region.start), exact});
        text.replace(region.start, region.end - region.start,
                     withLineEnding(edit.newText, lineEnding));
    }
    outcome.text = text;
    return outcome;
}

} // namespace cmcp
