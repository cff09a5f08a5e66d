#pragma once

#include "sandbox/JailPolicy.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

namespace cmcp {

// One job as a tool asks for it, from the tool to the jail: the supervisor adds the uid, the gid
// and its bounds (JobSpec) and nothing else.
struct JobRequest
{
    QString program; // the job's program, as cmcp-jail resolves it (policy PATH)
    QStringList arguments;
    JailPolicy policy; // without uid and gid until the supervisor sets them
    QByteArray standardInput; // empty: the job reads /dev/null
    int timeoutMs = 0; // wall-clock limit from the start; 0: none
    // A pipe the job gets as one extra descriptor (cmcp-jail --pass-fd), for a result that must
    // not travel in its output. Its number is in the job's environment as
    // JailJob::kResultChannelVariable; what the job writes there ends up in JobResult::channel,
    // at most JailJob::kResultChannelCapBytes.
    bool resultChannel = false;
    // Started ahead of its call: standard input stays an open pipe and the time limit does not
    // run until provideInput(). Used to have a job started and waiting when a call arrives.
    bool awaitInput = false;
    // Standard input stays an open pipe for the job's whole life: writeInput() feeds it, for
    // interactive programs (a REPL) run as background jobs. standardInput, if any, goes first.
    bool interactiveInput = false;
    // A template's socket (cmcp-jail --via-template): the job is a fork of that template when it
    // takes it, else it starts cold as without one. Empty: always cold.
    QString viaTemplate;
    // This job is a template itself, serving calls on this socket (cmcp-jail --serve-template,
    // mapping the supervisor's whole uid pool); its standard input closing retires it.
    QString serveTemplate;
    // Kept while the job runs (JailJob::setWorkspaceHold); null: none.
    std::shared_ptr<const void> workspaceHold;
};

} // namespace cmcp
