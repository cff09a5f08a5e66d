// Faults: the workspace's disk fills. A 2 MiB tmpfs is mounted as SANDBOX_ROOT, so the
// workspace and the jobs' output files (spill) share it (mounting needs root; CI runs as root,
// elsewhere the suite skips, saying so). Every write that does not fit must fail with an error
// naming the cause, leave no partial or temporary file, keep the earlier files whole, and the
// daemon must keep serving; once space is freed, writes succeed again. Ends with the leak check
// of lib/resources.mjs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';
import { assertNoLeaks, resourcesOf } from './lib/resources.mjs';
import { toolCalls } from './lib/tools.mjs';

const UID_BASE = 125100;
const UID_COUNT = 8;
const DISK_BYTES = 2 * 1024 * 1024;
const noSpace = /no space left on the workspace's file system/;

// Files of the workspace, by relative path, with their contents.
function filesIn(dir, prefix = '') {
    const files = {};
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = prefix + entry.name;
        if (entry.isDirectory())
            Object.assign(files, filesIn(join(dir, entry.name), `${path}/`));
        else
            files[path] = readFileSync(join(dir, entry.name), 'latin1');
    }
    return files;
}

const chunk = (tag, bytes) => `${tag}:`.padEnd(bytes, tag.slice(-1));

describe('faults: the workspace disk fills', { skip: process.getuid() !== 0 && 'needs root to mount a small tmpfs (CI runs as root)' }, () => {
    let sandbox;
    let mounted = false;
    let workspace;
    let daemon;
    let client;
    let transport;
    let baseline;
    const { call, ok, refused } = toolCalls(() => client);
    // Every file the daemon wrote successfully, with its content: all must stay whole.
    const written = {};
    const assertWorkspaceHolds = (extra = {}) => {
        const onDisk = filesIn(workspace);
        assert.deepEqual(Object.keys(onDisk).filter(name => /\.cmcp-write-|\.tmp$/.test(name)), [],
                         'a temporary file was left behind');
        for (const [path, content] of Object.entries({ ...written, ...extra }))
            assert.ok(onDisk[path] === content, `${path} is not whole (${onDisk[path]?.length} bytes on disk, ${content.length} expected)`);
        return onDisk;
    };

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-faults-disk-'));
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES},mode=0755`, 'tmpfs', sandbox]);
        mounted = true;
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT,
                BASH_ALLOWED_COMMANDS: 'head,cat,rm,tr', BASH_WARM_JOBS: 0, PYTHON_WARM_JOBS: 0,
                SANDBOX_OUTPUT_CAP_KB: 1,
            },
        });
        workspace = hostWorkspace(sandbox);
        // Warm-up in a session of its own: every tool used here runs once, with contents as
        // large as the test's, so that the heap the daemon keeps for such calls (it keeps up to
        // 32 MiB, see server/main.cpp) is in the baseline. Then the session ends and the daemon
        // trims its heap (2 s later).
        const warmTransport = new StreamableHTTPClientTransport(new URL(daemon.url));
        client = new Client({ name: 'faults-disk-warm-up', version: '1.0.0' });
        await client.connect(warmTransport);
        await ok('file_write', { path: 'warm.txt', content: chunk('warm', 900 * 1024) });
        await ok('file_read', { path: 'warm.txt' });
        await ok('file_edit', { path: 'warm.txt', edits: [{ old_text: 'warm:', new_text: 'hot:' }] });
        await ok('file_delete', { path: 'warm.txt' });
        await call('system_run_command', { command: 'cat /dev/null' });
        await warmTransport.terminateSession();
        await client.close();
        await new Promise(resolve => setTimeout(resolve, 2500));
        baseline = resourcesOf(daemon.pid, { uidBase: UID_BASE, uidCount: UID_COUNT });

        client = new Client({ name: 'faults-disk', version: '1.0.0' });
        transport = new StreamableHTTPClientTransport(new URL(daemon.url));
        await client.connect(transport);
    });

    after(async () => {
        await client?.close().catch(() => {});
        await daemon?.stop();
        if (mounted)
            spawnSync('umount', ['-l', sandbox]);
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    test('a file larger than the disk: a clean error, nothing left behind', () => withDiagnostics(daemon, async () => {
        await refused('file_write', { path: 'big.txt', content: chunk('big', DISK_BYTES + 4096) }, noSpace);
        assertWorkspaceHolds();
        assert.deepEqual(readdirSync(workspace), []);
    }));

    test('writes until the disk is full: each whole or refused cleanly', () => withDiagnostics(daemon, async () => {
        let refusedCount = 0;
        for (let i = 0; i < 12; ++i) {
            const path = `fill/f${i}.txt`;
            const content = chunk(`f${i}`, 256 * 1024);
            const result = await call('file_write', { path, content });
            if (result.isError) {
                assert.match(result.structuredContent.error, noSpace);
                ++refusedCount;
            } else {
                written[path] = content;
            }
        }
        assert.ok(refusedCount > 0 && Object.keys(written).length > 0, `${refusedCount} refused, ${Object.keys(written).length} written`);
        assertWorkspaceHolds();
    }));

    test('file_edit and a replacing file_write on a full disk keep the old content', () => withDiagnostics(daemon, async () => {
        const [path] = Object.keys(written);
        await refused('file_edit', { path, edits: [{ old_text: path.replace(/^fill\//, '').replace(/\.txt$/, ':'), new_text: 'edited:' }] }, noSpace);
        await refused('file_write', { path, content: chunk('replacement', 256 * 1024) }, noSpace);
        assertWorkspaceHolds();
        // A move within the disk needs no space: it works and keeps the content.
        const moved = path.replace('fill/', 'moved-');
        await ok('file_move', { source: path, destination: moved });
        written[moved] = written[path];
        delete written[path];
        assertWorkspaceHolds();
        assert.equal((await ok('file_read', { path: moved })).content, written[moved]);
    }));

    test('a command writing into the full disk fails with its own "No space left" error', () => withDiagnostics(daemon, async () => {
        const result = await call('system_run_command', { command: 'head -c 1048576 /dev/zero > fill/by-command.bin' });
        assert.notEqual(result.structuredContent.exit_code, 0, JSON.stringify(result.structuredContent));
        assert.match(result.structuredContent.stderr ?? result.content[0].text, /No space left on device/);
        // The shell's redirection is the command's own file: it is its to clean up.
        await call('system_run_command', { command: 'rm -f fill/by-command.bin' });
        assertWorkspaceHolds();
    }));

    // Output beyond SANDBOX_OUTPUT_CAP_KB goes to a spill file on the same disk, which the writes
    // above left with less than one 256 KB file of room: 600,000 bytes cannot fit.
    test('job output that cannot be spilled: the result says so, the head and tail are kept', () => withDiagnostics(daemon, async () => {
        const spill = join(sandbox, 'spill');
        const before = readdirSync(spill);
        const run = await call('system_run_command', { command: 'head -c 600000 /dev/zero | tr "\\0" z' });
        assert.ok(!run.isError, run.content?.[0]?.text);
        const result = run.structuredContent;
        assert.equal(result.exit_code, 0);
        assert.equal(result.stdout_bytes, 600000);
        assert.equal(result.truncated, true);
        assert.equal(result.stdout_handle, undefined, 'a handle to output that was not kept');
        assert.match(result.spill_errors.join('\n'), /No space left on device/);
        assert.match(result.stdout, /^z+\n\[\.\.\. \d+ bytes omitted of 600000 \.\.\.\]\nz+$/);
        assert.deepEqual(readdirSync(spill), before, 'a partial spill file was left behind');

        const job = await ok('system_run_command', { command: 'head -c 600000 /dev/zero | tr "\\0" z', background: true });
        const status = await eventually(async () => {
            const current = await ok('job_status', { job_id: job.job_id });
            return current.state === 'running' ? null : current;
        }, { timeoutMs: 10_000, intervalMs: 50 });
        assert.equal(status.state, 'exited', JSON.stringify(status));
        assert.equal(status.result.stdout_bytes, 600000);
        assert.ok(status.output_dropped_bytes > 0, `the job's log says nothing of what it could not keep: ${JSON.stringify(status)}`);
        const output = await ok('job_output', { job_id: job.job_id });
        assert.equal(output.dropped_bytes, status.output_dropped_bytes);
        assertWorkspaceHolds();
    }));

    test('after space is freed, writes succeed again and the daemon left nothing behind', () => withDiagnostics(daemon, async () => {
        for (const path of Object.keys(written).slice(0, 3)) {
            await ok('file_delete', { path });
            delete written[path];
        }
        const content = chunk('after', 512 * 1024);
        await ok('file_write', { path: 'after.txt', content });
        written['after.txt'] = content;
        assert.equal((await ok('file_read', { path: 'after.txt' })).content, content);
        assertWorkspaceHolds();
        // The daemon gives idle heap back 2 s after a session closes (malloc_trim): the check
        // waits for that, after the session ends (DELETE).
        await transport.terminateSession();
        await client.close();
        client = null;
        const outcome = await assertNoLeaks(daemon.pid, baseline, { uidBase: UID_BASE, uidCount: UID_COUNT });
        console.log(`descriptors ${outcome.descriptors.join(' → ')}, VmRSS ${outcome.rssKb.join(' → ')} kB`);
    }));
});
