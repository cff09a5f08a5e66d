// Faults (issue 9): SIGTERM while many file_write calls and their audit records are in flight.
// The daemon must exit on its own within the grace period, leave every file either absent or
// whole (no half-written file, no temporary file), and leave an audit log that verifies, with a
// record of every call whose result a client received.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { cmcpdPath, startDaemon } from './lib/daemon.mjs';

const contentOf = (client, i) => `${client}:${i}:`.padEnd(200 * 1024, String.fromCharCode(97 + (i % 26)));

describe('faults', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cmcp-faults-'));
    after(() => rmSync(scratch, { recursive: true, force: true }));

    test('SIGTERM during writes: files whole or absent, audit log verifiable', async () => {
        const sandbox = join(scratch, 'sandbox');
        const auditLog = join(scratch, 'audit.jsonl');
        const daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, AUDIT_LOG: auditLog } });
        const clients = [];
        for (let c = 0; c < 4; ++c) {
            const client = new Client({ name: `faults-${c}`, version: '1.0.0' });
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            clients.push(client);
        }
        const received = [];
        const calls = [];
        clients.forEach((client, c) => {
            for (let i = 0; i < 25; ++i) {
                const path = `c${c}/f${i}.txt`;
                calls.push(client.callTool({ name: 'file_write', arguments: { path, content: contentOf(c, i) } })
                    .then(result => { if (!result.isError) received.push(path); })
                    .catch(() => { /* the daemon went away mid-call */ }));
            }
        });
        // Stop while calls are still running.
        while (received.length < 5)
            await new Promise(resolve => setTimeout(resolve, 5));
        const exit = await daemon.stop(10_000);
        await Promise.all(calls);
        for (const client of clients)
            await client.close().catch(() => {});
        assert.equal(exit.signal, null, `cmcpd did not exit on SIGTERM within the grace period (${JSON.stringify(exit)})`);
        assert.equal(exit.code, 0);

        const workspace = join(sandbox, 'workspace');
        let files = 0;
        for (const dir of readdirSync(workspace)) {
            for (const name of readdirSync(join(workspace, dir))) {
                const match = /^f(\d+)\.txt$/.exec(name);
                assert.ok(match, `unexpected file ${dir}/${name} (a temporary file left behind?)`);
                const expected = contentOf(Number(dir.slice(1)), Number(match[1]));
                assert.equal(readFileSync(join(workspace, dir, name), 'utf8'), expected, `${dir}/${name} is not whole`);
                ++files;
            }
        }
        assert.ok(files >= received.length);
        console.log(`results received ${received.length} of ${calls.length}, files on disk ${files}`);

        const verdict = spawnSync(cmcpdPath(), ['--verify-audit', auditLog], { encoding: 'utf8', timeout: 30_000 });
        assert.equal(verdict.status, 0, verdict.stderr);
        const recorded = new Set(readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line))
            .filter(r => r.event === 'call_finished' && r.outcome === 'succeeded').map(r => r.call));
        assert.ok(recorded.size >= received.length, `${received.length} results received, ${recorded.size} recorded`);
    });
});
