#include "base/UnguessableId.h"

#include <QByteArray>
#include <QRandomGenerator>

namespace cmcp {

QString unguessableId(const char *prefix)
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    const QByteArray bytes(reinterpret_cast<const char *>(words), sizeof words);
    return QLatin1String(prefix) + QString::fromLatin1(bytes.toHex());
}

} // namespace cmcp
