// The workspace quota (SANDBOX_WORKSPACE_QUOTA_MB), through the official SDK client: the kernel
// stops a jailed job (dd, Python) that writes past it, and its result names the limit; file_write
// past it is refused naming the setting and leaves no file behind; the workspace is intact and
// usable afterwards; a per-session workspace has the quota too; /health and the start-up table
// say the quota is in force. Needs root, btrfs and loop devices; exits 77 (skipped) otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';

import { withDiagnostics } from './lib/daemon.mjs';
import { rawHttp } from './lib/http.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from './lib/quota.mjs';

skipWithoutQuota();

const QUOTA_MB = 48;
const COMMANDS = 'dd,rm,ls,cat,sync,sha256sum';

describe('workspace quota', () => {
    let daemon;
    let sandbox;
    let s;

    before(async () => {
        ({ daemon, sandbox } = await startQuotaDaemon({ quotaMb: QUOTA_MB, settings: { BASH_ALLOWED_COMMANDS: COMMANDS } }));
        s = await quotaSession(daemon);
    });
    after(async () => {
        await s?.close();
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    const assertQuotaMessage = job => {
        assert.notEqual(job.exit_code, 0, JSON.stringify(job));
        assert.equal(job.workspace_quota_mb, QUOTA_MB, JSON.stringify(job));
        assert.match(job.message, /SANDBOX_WORKSPACE_QUOTA_MB/);
        assert.match(job.message, new RegExp(`${QUOTA_MB} MB`));
    };

    test('the start-up table and /health say the quota is in force', () => withDiagnostics(daemon, async () => {
        assert.match(daemon.stderr(), new RegExp(`sandbox: quota +available +btrfs qgroups, ${QUOTA_MB} MB per workspace`));
        const health = JSON.parse((await rawHttp({ port: daemon.port })).text);
        assert.equal(health.workspace_quota.state, 'available');
        assert.match(health.workspace_quota.detail, /btrfs qgroups/);
    }));

    test('a file written before the quota is reached survives it', () => withDiagnostics(daemon, async () => {
        await s.ok('file_write', { path: 'keep/notes.txt', content: 'kept\n' });
    }));

    test('dd writing past the quota is stopped by the kernel, and the result names the limit', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', { command: `dd if=/dev/zero of=big bs=1M count=${QUOTA_MB * 4}` });
        assertQuotaMessage(job);
        assert.match(JSON.stringify(job), /Disk quota exceeded/);
        const listed = await s.ok('file_list', { path: '.' });
        const big = listed.entries.find(entry => entry.name === 'big');
        assert.ok(big.size < QUOTA_MB * 1024 * 1024, `big is ${big.size} bytes, more than the quota`);
    }));

    test('file_write past the quota is refused naming the setting, and leaves no file', () => withDiagnostics(daemon, async () => {
        const result = await s.call('file_write', { path: 'keep/late.txt', content: 'x'.repeat(4 * 1024 * 1024) });
        assert.equal(result.isError, true, JSON.stringify(result.structuredContent));
        assert.match(result.structuredContent.error, /disk quota exceeded.*SANDBOX_WORKSPACE_QUOTA_MB/);
        const listed = await s.ok('file_list', { path: 'keep' });
        assert.deepEqual(listed.entries.map(entry => entry.name), ['notes.txt']);
        const read = await s.ok('file_read', { path: 'keep/notes.txt' });
        assert.equal(read.content, 'kept\n');
    }));

    test('after deleting, the workspace takes writes again', () => withDiagnostics(daemon, async () => {
        await s.ok('file_delete', { path: 'big' });
        const written = await s.ok('file_write', { path: 'keep/late.txt', content: 'x'.repeat(4 * 1024 * 1024) });
        assert.equal(written.size, 4 * 1024 * 1024);
    }));

    test('Python writing past the quota is stopped, and the result names the limit', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_python', {
            code: [
                'block = b"p" * (1 << 20)',
                'with open("python.bin", "wb") as out:',
                `    for _ in range(${QUOTA_MB * 4}):`,
                '        out.write(block)',
            ].join('\n'),
        });
        assertQuotaMessage(job);
        assert.match(JSON.stringify(job), /Disk quota exceeded/);
        await s.ok('file_delete', { path: 'python.bin' });
    }));

    test('a job that fails in a workspace with room is not blamed on the quota', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', { command: 'cat missing-file' });
        assert.notEqual(job.exit_code, 0);
        assert.equal(job.workspace_quota_mb, undefined);
    }));
});

describe('per-session workspaces have the quota too', () => {
    let daemon;
    let sandbox;

    before(async () => {
        ({ daemon, sandbox } = await startQuotaDaemon({
            quotaMb: 16, settings: { SANDBOX_WORKSPACE: 'session', BASH_ALLOWED_COMMANDS: COMMANDS },
        }));
    });
    after(async () => {
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    test('each session is stopped at its own quota, and one full session leaves the other its room', () => withDiagnostics(daemon, async () => {
        const a = await quotaSession(daemon, 'a');
        const b = await quotaSession(daemon, 'b');
        try {
            const full = await a.ok('system_run_command', { command: 'dd if=/dev/zero of=big bs=1M count=64' });
            assert.equal(full.workspace_quota_mb, 16, JSON.stringify(full));
            const room = await b.ok('system_run_command', { command: 'dd if=/dev/zero of=big bs=1M count=8' });
            assert.equal(room.exit_code, 0, JSON.stringify(room));
        } finally {
            await a.close();
            await b.close();
        }
    }));
});
