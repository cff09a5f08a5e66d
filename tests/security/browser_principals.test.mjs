// A browser worker holds the pages of one principal only. Chromium's own sandbox is off inside
// cmcp-jail, so a renderer that one principal's page subverts holds its whole worker process:
// no other principal's page may be loaded there. Two principals (bearer tokens of
// MCP_PRINCIPALS_FILE) browse the local web fixture through one daemon: their pages are loaded
// by two workers (seen in /proc, and named in the daemon's log), and a principal's next page by
// its own worker again.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { browserWorkers } from '../integration/lib/processes.mjs';
import { ALLOWED, startWebFixture } from '../integration/lib/webfixture.mjs';

describe('browser workers of one principal each', { timeout: 150_000 }, () => {
    const tokens = { alice: 'alice-browser-token-0123456789', bob: 'bob-browser-token-9876543210' };
    const clients = {};
    let scratch;
    let fixture;
    let daemon;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-browser-principals-'));
        const principals = join(scratch, 'principals');
        const digest = text => createHash('sha256').update(text).digest('hex');
        writeFileSync(principals, Object.entries(tokens).map(([name, token]) => `${name} ${digest(token)}\n`).join(''));
        fixture = await startWebFixture();
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_AUTH_TOKEN: 'default-browser-token-555', MCP_PRINCIPALS_FILE: principals,
                WEB_ALLOW_PRIVATE: 'true', WEB_ALLOWED_DOMAINS: ALLOWED, WEB_TIMEOUT_DEFAULT: 20,
            },
        });
        for (const [name, token] of Object.entries(tokens)) {
            clients[name] = new Client({ name: `browser-${name}`, version: '1.0.0' });
            await clients[name].connect(new StreamableHTTPClientTransport(new URL(daemon.url),
                { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        }
    });

    after(async () => {
        for (const client of Object.values(clients))
            await client.close().catch(() => {});
        await daemon?.stop();
        await fixture?.stop();
        if (scratch)
            rmSync(scratch, { recursive: true, force: true });
    });

    async function browse(principal) {
        const result = await clients[principal].callTool({ name: 'web_browse', arguments: { url: fixture.url('/static.html') } });
        assert.ok(!result.isError, `${principal}'s page failed: ${result.content?.[0]?.text}`);
        assert.equal(result.structuredContent.title, 'Static fixture');
    }

    // The workers the daemon said it bound to a principal, in order.
    const boundTo = principal => [...daemon.stderr().matchAll(/browser worker (\d+) serves the pages of principal '([^']*)' only/g)]
        .filter(match => match[2] === principal).map(match => Number(match[1]));

    test('two principals\' pages load in two workers, and each one\'s next page in its own', () => withDiagnostics(daemon, async () => {
        await browse('alice');
        const aliceAlone = browserWorkers(daemon.pid);
        assert.equal(aliceAlone.length, 1, `workers after one principal's page: ${aliceAlone}`);
        await browse('bob');
        const both = browserWorkers(daemon.pid);
        assert.ok(both.some(pid => !aliceAlone.includes(pid)),
                  `bob's page was loaded with no worker but alice's (${aliceAlone}) running: ${both}`);

        const [aliceWorker] = boundTo('alice');
        const [bobWorker] = boundTo('bob');
        assert.ok(aliceWorker && bobWorker, 'the daemon names the worker of each principal');
        assert.notEqual(aliceWorker, bobWorker);
        assert.deepEqual(aliceAlone, [aliceWorker]);
        assert.ok(both.includes(bobWorker), `bob's worker ${bobWorker} is not among ${both}`);

        // Warm and their own: no other worker is bound to either of them.
        await browse('alice');
        await browse('bob');
        assert.deepEqual(boundTo('alice'), [aliceWorker]);
        assert.deepEqual(boundTo('bob'), [bobWorker]);
        const after = browserWorkers(daemon.pid);
        assert.ok(after.includes(aliceWorker) && after.includes(bobWorker), `workers now: ${after}`);
    }));
});
