#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace cmcp {

struct TextEdit
{
    QString oldText;
    QString newText;
};

struct AppliedEdit
{
    qsizetype line = 0; // first line replaced, counted from 1 in the text the edit was applied to
    bool exact = true; // false when found only by the line-by-line comparison
};

struct TextEditsOutcome
{
    std::optional<QString> text;
    QList<AppliedEdit> applied; // one per edit, in order
    QString error; // names the edit as edits[i]
};

// Applies `edits` in order, each to the result of the ones before it, as file_edit does. Each
// old_text must occur exactly once. It is looked for as it is first; when absent, line by line
// with line endings and trailing whitespace ignored (models often drop a trailing blank or send
// \n for a file's \r\n). Leading whitespace always counts, so indentation is never guessed. The
// replaced text takes the file's dominant line ending, whatever new_text used, so a CRLF file
// stays CRLF.
TextEditsOutcome applyTextEdits(const QString &text, const QList<TextEdit> &edits);

// "\r\n" when most line breaks of `text` are CRLF, otherwise "\n".
QString dominantLineEnding(const QString &text);

} // namespace cmcp
