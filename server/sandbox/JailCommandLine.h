// How the daemon starts cmcp-jail: its options for the descriptors it is handed and the program
// it confines, and the descriptors that alone pass into it. Every launcher of the jail in the
// daemon (JailJob for jobs and templates, ConfinedProcess for long-lived workers) starts it with
// these, so that there is one command line to read.
#pragma once

#include <QString>
#include <QStringList>

namespace cmcp {

// The descriptors the jail is handed, each above 2 (0..2 become the jail's stdio); -1: none.
struct JailDescriptors
{
    int policy = -1; // --policy-fd: the policy, whole, then end of file
    int report = -1; // --report-fd: the jail's JSON-lines report
    int pass = -1; // --pass-fd: left open for the job (a call's result channel)
    int egress = -1; // --egress-fd: the listener of the job's network namespace comes over it
    int workspaceView = -1; // --workspace-view-fd: the workspace as the job's own (WorkspaceIdmap)
};

// cmcp-jail's arguments: the descriptors, `extra` (a template's options), then "--", the
// program and its arguments.
QStringList jailArguments(const JailDescriptors &descriptors, const QStringList &extra,
                          const QString &program, const QStringList &arguments);

// For QProcess::setChildProcessModifier, in the forked child before exec, with system calls
// only: every descriptor above 2 gets close-on-exec (also ones the daemon inherited without it),
// then `descriptors` lose it, in this child alone. The jail starts with stdio and its
// descriptors, nothing else. On kernels before 5.11 close_range cannot mark: the jail still
// closes every descriptor of the job.
void keepOnlyJailDescriptors(const JailDescriptors &descriptors);

} // namespace cmcp
