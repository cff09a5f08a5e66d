// The audit log through the real daemon and the official SDK client: every call is in the log
// before its result reaches the client, secrets are not, `cmcpd --verify-audit` accepts the log
// and names the line someone edited; with AUDIT_REQUIRED a full disk (a small tmpfs, as root)
// fails calls closed and the log verifies again once space is back.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { cmcpdPath, startDaemon, withDiagnostics } from './lib/daemon.mjs';

const records = path => readFileSync(path, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line));
const verify = (...files) => spawnSync(cmcpdPath(), ['--verify-audit', ...files], { encoding: 'utf8', timeout: 30_000 });
const isRoot = process.getuid() === 0;

async function connect(daemon) {
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    return client;
}

describe('audit log', () => {
    let scratch;
    let daemon;
    let client;
    let auditLog;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-audit-'));
        auditLog = join(scratch, 'logs', 'audit.jsonl');
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), AUDIT_LOG: auditLog } });
        client = await connect(daemon);
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test('every call is recorded durably before its result arrives, without secrets', () => withDiagnostics(daemon, async () => {
        const finishedFor = tool => records(auditLog).filter(r => r.event === 'call_finished' && r.tool === tool);

        const written = await client.callTool({ name: 'file_write', arguments: { path: 'notes.md', content: 'hello' } });
        assert.ok(!written.isError);
        // Read right after the response: the record was written before the response was sent.
        let [finished] = finishedFor('file_write');
        assert.equal(finished.outcome, 'succeeded');
        assert.equal(finished.client, 'audit-test');
        assert.equal(finished.transport, 'streamable-http');
        assert.equal(finished.result.isError, false);
        const started = records(auditLog).find(r => r.event === 'call_started' && r.call === finished.call);
        // What a file tool writes is kept as its length and sha256, not as text.
        const helloSha = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
        assert.deepEqual(started.arguments, { path: 'notes.md', content: `[5 bytes in all, sha256 ${helloSha}]` });

        const refused = await client.callTool({ name: 'file_read', arguments: { path: '../../etc/passwd' } });
        assert.equal(refused.isError, true);
        [finished] = finishedFor('file_read');
        assert.equal(finished.outcome, 'failed');
        assert.equal(finished.result.isError, true);

        const invalid = await client.callTool({ name: 'file_read', arguments: { path: 'x.md', api_token: 'hunter2-token' } });
        assert.equal(invalid.isError, true);
        assert.equal(finishedFor('file_read').at(-1).outcome, 'invalid_arguments');
        await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }));
        assert.equal(finishedFor('no_such_tool')[0].outcome, 'unknown_tool');

        const text = readFileSync(auditLog, 'utf8');
        assert.ok(!text.includes('hunter2'), 'a secret argument reached the audit log');
        assert.ok(text.includes('"api_token":"[redacted]"'));
        const events = records(auditLog).map(r => r.event);
        assert.equal(events[0], 'audit_opened');
        assert.equal(events.filter(e => e === 'call_started').length, 4);
        assert.equal(events.filter(e => e === 'call_finished').length, 4);
        assert.deepEqual(records(auditLog).map(r => r.seq), events.map((_, i) => i + 1));
    }));

    test('--verify-audit accepts the log and names the line that was edited', () => withDiagnostics(daemon, async () => {
        const intact = verify(auditLog);
        assert.equal(intact.status, 0, intact.stderr);
        assert.match(intact.stdout, /audit log intact: 9 records/);

        const copy = join(scratch, 'edited.jsonl');
        const lines = readFileSync(auditLog, 'utf8').split('\n');
        const target = lines.findIndex(line => line.includes('"outcome":"failed"'));
        assert.ok(target > 0);
        lines[target] = lines[target].replace('"outcome":"failed"', '"outcome":"succeeded"');
        writeFileSync(copy, lines.join('\n'));
        const broken = verify(copy);
        assert.equal(broken.status, 1);
        assert.match(broken.stderr, new RegExp(`BROKEN at ${copy} line ${target + 1}: edited`));

        const deleted = join(scratch, 'deleted.jsonl');
        writeFileSync(deleted, readFileSync(auditLog, 'utf8').split('\n').filter((_, i) => i !== 2).join('\n'));
        const gap = verify(deleted);
        assert.equal(gap.status, 1);
        assert.match(gap.stderr, /line 3: deleted: record 3 is missing/);
        assert.equal(verify().status, 2);
    }));
});

describe('audit log on a full disk', { skip: !isRoot && 'needs root to mount a small tmpfs' }, () => {
    let scratch;
    let disk;
    let daemon;
    let client;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-audit-full-'));
        disk = join(scratch, 'disk');
        mkdirSync(disk);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', disk]);
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), AUDIT_LOG: join(disk, 'audit.jsonl'), AUDIT_REQUIRED: 'true' },
        });
        client = await connect(daemon);
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        if (disk)
            spawnSync('umount', ['-l', disk]);
        rmSync(scratch, { recursive: true, force: true });
    });

    test('AUDIT_REQUIRED fails calls closed while the log cannot be written, then recovers', () => withDiagnostics(daemon, async () => {
        const filler = join(disk, 'filler');
        // Fill the disk up to the last byte (tmpfs refuses the write that would not fit).
        for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 2)) {
            try {
                writeFileSync(filler, Buffer.alloc(size), { flag: 'a' });
            } catch (error) {
                assert.equal(error.code, 'ENOSPC');
            }
        }
        // tmpfs counts whole pages: the log's last page still takes a few records.
        const write = path => client.callTool({ name: 'file_write', arguments: { path, content: 'x'.repeat(900) } });
        const auditRefusal = /audit log cannot be written .*No space left on device/;
        let first = 0;
        for (let i = 1; i <= 40 && !first; ++i) {
            const result = await write(`fill${i}.md`);
            if (result.isError) {
                assert.match(result.content[0].text, auditRefusal);
                first = i;
            }
        }
        assert.ok(first > 0, 'no call failed closed on a full disk');
        // Now not even a call's start can be recorded: the call is refused before it runs.
        const refused = await write('never.md');
        assert.equal(refused.isError, true);
        assert.match(refused.content[0].text, auditRefusal);
        assert.ok(!existsSync(join(scratch, 'sandbox', 'workspace', 'never.md')));
        assert.match(daemon.stderr(), /audit: cannot write to the audit log .*No space left on device/);

        rmSync(filler);
        const written = await client.callTool({ name: 'file_write', arguments: { path: 'later.md', content: 'y' } });
        assert.ok(!written.isError, written.content[0].text);
        const log = records(join(disk, 'audit.jsonl'));
        assert.ok(log.some(r => r.event === 'records_lost' && r.count >= 1));
        const verdict = verify(join(disk, 'audit.jsonl'));
        assert.equal(verdict.status, 0, verdict.stderr);
        assert.match(verdict.stdout, /recorded \d+ record\(s\) lost/);
    }));
});
