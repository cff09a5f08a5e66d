#include "base/ReplicaHandle.h"

#include "base/UnguessableId.h"

#include <QRegularExpression>

namespace cmcp {

namespace {
QString &storedReplicaId()
{
    static QString id;
    return id;
}
} // namespace

bool setReplicaId(const QString &id, QString *error)
{
    static const QRegularExpression shape(QStringLiteral("^[a-z0-9-]{1,63}$"));
    if (!id.isEmpty() && !shape.match(id).hasMatch()) {
        *error = QStringLiteral("MCP_REPLICA_ID '%1' must be 1 to 63 lowercase letters, digits "
                                "and '-' (it ends every job id, output handle and task id)")
                         .arg(id);
        return false;
    }
    storedReplicaId() = id;
    return true;
}

const QString &replicaId()
{
    return storedReplicaId();
}

QString replicaHandle(const char *prefix)
{
    const QString handle = unguessableId(prefix);
    return replicaId().isEmpty() ? handle : handle + u'.' + replicaId();
}

} // namespace cmcp
