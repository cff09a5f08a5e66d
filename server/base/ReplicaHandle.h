#pragma once

#include <QString>

namespace cmcp {

// Several daemons behind one balancer: requests without a session (the 2026-07-28 era) go to
// any of them, but a job, an output handle or a task lives in the daemon that made it. With
// MCP_REPLICA_ID set, such a handle ends in `.<id>` and the daemon's answers to stateless
// requests carry `Mcp-Replica: <id>`; the balancer learns from that header which of its servers
// an id names, and sends a request whose Mcp-Name or Mcp-Param-* header names a handle to it
// (container/k8s/ingress.yaml). Without an id, handles are as unguessableId makes them.

// Set once at start-up, before any handle is made. False with `error` for an id that is not
// 1 to 63 lowercase letters, digits and '-' (a Kubernetes pod name is one).
bool setReplicaId(const QString &id, QString *error);
const QString &replicaId();

// unguessableId(prefix), followed by `.<replica id>` when one is set.
QString replicaHandle(const char *prefix);

} // namespace cmcp
