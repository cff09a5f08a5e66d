// Syscalls the jail's seccomp filter denies a job are counted by name in the call's
// sandbox_refusals (and its audit record), while the job itself still gets the filter's errno;
// a job the filter denied nothing lists no seccomp refusal. Jobs switch to host uids, so this
// needs root (CI runs as root); without it the suite skips.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };

// ptrace(PTRACE_TRACEME) 3 times, mount 2 times, keyctl once: the errno of each call.
const deniedCalls = `
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a) for a in args])
    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), '?')
_ = [call(101, 0, 0, 0, 0) for _ in range(3)] + [call(165, 0, 0, 0, 0, 0) for _ in range(2)] + [call(250, 0, 0xfffffffd, 1)]
`;

describe('seccomp denials in sandbox_refusals', needsRoot, () => {
    test('each denied syscall is named with its count; a clean job lists none', { timeout: 90_000 }, async () => {
        const scratch = mkdtempSync(join(tmpdir(), 'cmcp-seccomp-denials-'));
        const auditLog = join(scratch, 'audit.jsonl');
        const daemon = await startDaemon({ fixtures: false, settings: { AUDIT_LOG: auditLog } });
        const client = new Client({ name: 'seccomp-denials', version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            await withDiagnostics(daemon, async () => {
                const run = async code => {
                    const result = await client.callTool({ name: 'system_run_python', arguments: { code } }, undefined, { timeout: 60_000 });
                    assert.ok(!result.isError, JSON.stringify(result.structuredContent ?? result.content));
                    return result.structuredContent;
                };
                const out = await run(deniedCalls);
                assert.ok(out.layers.includes('seccomp'), JSON.stringify(out.layers));
                assert.deepEqual(out.result, ['EPERM', 'EPERM', 'EPERM', 'EPERM', 'EPERM', 'EPERM'], 'the job still saw EPERM');
                const seccomp = (out.sandbox_refusals ?? []).filter(x => x.layer === 'seccomp');
                assert.deepEqual(seccomp.map(x => [x.syscall, x.count]).sort(), [['keyctl', 1], ['mount', 2], ['ptrace', 3]], JSON.stringify(out.sandbox_refusals));
                assert.ok(seccomp.every(x => x.rule === 'denied_syscall'));
                assert.match(seccomp.find(x => x.syscall === 'ptrace').message, /seccomp filter refused ptrace 3 time\(s\) \(EPERM\)/);
                assert.match(out.message, /seccomp filter refused/);
                assert.ok(await eventually(() => readFileSync(auditLog, 'utf8').includes(
                    '{"count":3,"layer":"seccomp","rule":"denied_syscall","syscall":"ptrace"}')), 'the audit record lists the denials');

                // Threads and a fork (glibc asks clone3 first for a thread, which is not counted).
                const clean = await run(`
import os, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(0)
_ = os.waitpid(pid, 0)[1]`);
                assert.equal(clean.result, 0, JSON.stringify(clean));
                assert.deepEqual((clean.sandbox_refusals ?? []).filter(x => x.layer === 'seccomp'), []);
            });
        } finally {
            await client.close().catch(() => {});
            await daemon.stop();
            rmSync(scratch, { recursive: true, force: true });
        }
    });
});
