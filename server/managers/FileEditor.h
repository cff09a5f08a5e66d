#pragma once

#include "managers/FileManager.h"
#include "managers/TextEdits.h"

namespace cmcp {

struct FileEditRequest
{
    QString path;
    QList<TextEdit> edits;
    bool dryRun = false;
    std::optional<QString> ifMatch; // sha256 the file must have before the edit
};

struct FileEditResult
{
    QString path;
    QString diff; // unified; empty when the edits change nothing
    QList<AppliedEdit> applied;
    bool written = false; // false for a dry run or when nothing changed
    QString sha256; // of the content after the edits (written or, for a dry run, would be)
};

// file_edit: reads a UTF-8 file through `files`, applies the edits in memory (see
// applyTextEdits) and writes the result through FileManager's atomic write, so the same
// containment, extension and size rules hold. The write carries the hash of what was read as
// its if_match: another writer's change in between makes the edit fail instead of being lost.
FileOutcome<FileEditResult> editFile(FileManager &files, const FileEditRequest &request);

} // namespace cmcp
