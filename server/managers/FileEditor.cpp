#include "managers/FileEditor.h"

#include "managers/TextCodec.h"
#include "managers/UnifiedDiff.h"
#include "workspace/WorkspacePath.h"

namespace cmcp {

FileOutcome<FileEditResult> editFile(FileManager &files, const FileEditRequest &request)
{
    using Outcome = FileOutcome<FileEditResult>;
    if (request.edits.isEmpty())
        return Outcome::failure(QStringLiteral("edits is empty: give at least one "
                                               "{old_text, new_text}"));
    const FileOutcome<QByteArray> read = files.readBytes(request.path);
    if (!read.ok())
        return Outcome::failure(read.error);
    const QByteArray &before = *read.value;
    const QString readHash = FileManager::sha256Hex(before);
    if (request.ifMatch && request.ifMatch->toLower() != readHash)
        return Outcome::failure(QStringLiteral("%1: if_match mismatch: the file changed since it "
                                               "was read (its sha256 is now %2)")
                                        .arg(request.path, readHash));

    QString error;
    const std::optional<TextCodec> utf8 = TextCodec::forName(QStringLiteral("utf-8"), &error);
    const std::optional<QString> text = utf8->decode(before, &error);
    if (!text)
        return Outcome::failure(QStringLiteral("%1: file_edit edits UTF-8 text, and this file is "
                                               "not valid UTF-8")
                                        .arg(request.path));
    const TextEditsOutcome edited = applyTextEdits(*text, request.edits);
    if (!edited.text)
        return Outcome::failure(QStringLiteral("%1: %2").arg(request.path, edited.error));
    const std::optional<QByteArray> after = utf8->encode(*edited.text, &error);
    if (!after)
        return Outcome::failure(QStringLiteral("%1: %2").arg(request.path, error));

    // The path as results show it; readBytes has parsed it already.
    const QString shown = WorkspacePath::parse(request.path, &error)->display();
    FileEditResult result;
    result.path = shown;
    result.diff = unifiedDiff(*text, *edited.text, shown);
    result.applied = edited.applied;
    result.sha256 = FileManager::sha256Hex(*after);
    if (request.dryRun || *after == before)
        return {result, {}};
    const FileOutcome<FileWriteResult> written = files.writeBytes(request.path, *after, readHash);
    if (!written.ok())
        return Outcome::failure(written.error);
    result.written = true;
    return {result, {}};
}

} // namespace cmcp
