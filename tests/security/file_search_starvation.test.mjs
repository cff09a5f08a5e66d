// One session's searches cannot starve the others. The file tools' workers are shared; a session
// fills them with file_search calls whose pattern backtracks without end ((a+)+$ on lines of
// a's that end otherwise). Another session's 2 MB file_write must still finish before any of
// those searches, and each search must end at its time limit with an error that says so,
// rather than holding its worker for minutes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

// As many as the file tools' workers: enough to take them all were there no bound per session.
const SEARCHES = 4;
// Each search's time limit: long beside the write, which must not wait for one.
const SEARCH_SECONDS = 4;
// Far longer than any search may run: a safety net, not the assertion.
const CALL_TIMEOUT_MS = 150_000;

describe('file_search cannot starve other sessions', () => {
    let scratch;
    let daemon;
    const clients = [];

    async function session(name) {
        const client = new Client({ name, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        clients.push(client);
        return async (tool, args) => client.callTool({ name: tool, arguments: args }, undefined,
            { timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS });
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-search-starve-'));
        daemon = await startDaemon({ fixtures: false,
            settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), FILE_SEARCH_SECONDS: SEARCH_SECONDS } });
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test('a catastrophic pattern from one session; another session writes meanwhile', { timeout: 170_000 }, () => withDiagnostics(daemon, async () => {
        const attacker = await session('attacker');
        const victim = await session('victim');
        // Lines that (a+)+$ cannot match, each worth an exponential number of attempts.
        const line = `${'a'.repeat(28)}!\n`;
        for (let i = 0; i < 4; ++i) {
            const written = await attacker('file_write', { path: `bait${i}.txt`, content: line.repeat(30_000) });
            assert.ok(!written.isError, JSON.stringify(written));
        }

        const order = [];
        const searches = Array.from({ length: SEARCHES }, (_, i) =>
            attacker('file_search', { pattern: '(a+)+$', regex: true, path: '/' })
                .then(result => { order.push(`search ${i}`); return result; }));
        // The searches reach the daemon before the write. Were one late, the write could only
        // win more easily: the pause cannot make this test fail when the bound holds.
        await new Promise(resolve => setTimeout(resolve, 500));
        const write = victim('file_write', { path: 'big.txt', content: 'v'.repeat(2 * 1024 * 1024) })
            .then(result => { order.push('write'); return result; });

        const written = await write;
        assert.ok(!written.isError, JSON.stringify(written));
        assert.equal(order[0], 'write', `the victim's write finished after ${order.join(', ')}`);

        for (const result of await Promise.all(searches)) {
            assert.equal(result.isError, true, `a catastrophic search succeeded: ${JSON.stringify(result).slice(0, 300)}`);
            assert.match(result.content[0].text, new RegExp(`time limit of ${SEARCH_SECONDS} s \\(FILE_SEARCH_SECONDS\\)`));
        }
    }));
});
