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
    // Empty: the job reads /dev/null. For a call forked from a template, the payload the cell's
    // program reads instead (the call itself reads /dev/null).
    QByteArray standardInput;
    int timeoutMs = 0; // wall-clock limit from the start; 0: none
    // A pipe the job gets as one extra descriptor (cmcp-jail --pass-fd; a call forked from a
    // template has it at cell_protocol::kCallChannelFd), for a result that must not travel in its
    // output. Its number is in the job's environment as JailJob::kResultChannelVariable; what the
    // job writes there ends up in JobResult::channel, at most JailJob::kResultChannelCapBytes.
    bool resultChannel = false;
    // Started ahead of its call: standard input stays an open pipe and the time limit does not
    // run until provideInput(). Used to have a job started and waiting when a call arrives.
    bool awaitInput = false;
    // Standard input stays an open pipe for the job's whole life: writeInput() feeds it, for
    // interactive programs (a REPL) run as background jobs. standardInput, if any, goes first.
    bool interactiveInput = false;
    // This job is a template itself, making cells for the daemon's connection to this socket
    // (cmcp-jail --serve-template, mapping the supervisor's whole uid pool; see
    // jail/template.h); its standard input closing ends it.
    QString serveTemplate;
    // Whose call the job serves: the principal its uid counts against in the pool
    // (UidPool::acquire); empty for the server's own jobs (templates, jobs started ahead).
    QString principal;
    // Kept while the job runs (JailJob::setWorkspaceHold); null: none.
    std::shared_ptr<const void> workspaceHold;
};

} // namespace cmcp
