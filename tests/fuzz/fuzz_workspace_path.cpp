// Workspace path resolution: any text a model gives as a path either is refused with a message
// or becomes components that stay below the workspace root.
#include "FuzzSupport.h"
#include "workspace/WorkspacePath.h"

#include <cstdint>

using namespace cmcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));
    QString error;
    const std::optional<WorkspacePath> path = WorkspacePath::parse(text, &error);
    if (!path) {
        FUZZ_CHECK(!error.isEmpty());
        return 0;
    }
    for (const QString &component : path->components()) {
        FUZZ_CHECK(!component.isEmpty());
        FUZZ_CHECK(component != QLatin1String(".") && component != QLatin1String(".."));
        FUZZ_CHECK(!component.contains(QLatin1Char('/')) && !component.contains(QChar(0)));
        FUZZ_CHECK(component.toUtf8().size() <= WorkspacePath::maxNameBytes);
    }
    const QByteArray relative = path->relativeBytes();
    FUZZ_CHECK(!relative.startsWith('/'));
    FUZZ_CHECK(relative.size() <= WorkspacePath::maxPathBytes);
    FUZZ_CHECK(path->isWithin(WorkspacePath::parse(QString(), &error).value()));
    // What results show parses back to the same path.
    const std::optional<WorkspacePath> again = WorkspacePath::parse(path->display(), &error);
    FUZZ_CHECK(again && *again == *path);
    if (!path->isRoot())
        FUZZ_CHECK(path->isWithin(path->parent()) && path->parent().child(path->name()) == *path);
    return 0;
}
