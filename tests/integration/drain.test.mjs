// Graceful drain: on SIGTERM a call in flight finishes and its client gets the result, while
// new requests get 503 with Retry-After and /health says "draining"; then the daemon exits 0.
// A call that outlives MCP_DRAIN_SECONDS is cut there, and a second SIGTERM exits at once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { openSession } from './lib/http.mjs';

async function callWait(daemon, session, ms, id = 1) {
    const response = await fetch(daemon.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                   'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
                               params: { name: 'test_wait', arguments: { ms } } }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
}

describe('graceful drain', { timeout: 60_000 }, () => {
    test('a call in flight finishes, new requests get 503, then the daemon exits 0', () => {
        return startDaemon({ settings: { MCP_DRAIN_SECONDS: 10 } }).then(daemon => withDiagnostics(daemon, async () => {
            const { session } = await openSession(daemon.url);
            const started = Date.now();
            const inFlight = callWait(daemon, session, 1500);
            await new Promise(resolve => setTimeout(resolve, 300)); // the call is running
            process.kill(daemon.pid, 'SIGTERM');
            await eventually(() => daemon.stderr().includes('draining'), { timeoutMs: 2000 });

            const health = await fetch(`${daemon.base}/health`);
            assert.equal(health.status, 503);
            assert.equal((await health.json()).status, 'draining');
            const refused = await callWait(daemon, session, 1, 2);
            assert.equal(refused.status, 503, refused.text);
            assert.equal(refused.retryAfter, '1');
            assert.match(refused.text, /shutting down/);

            const answered = await inFlight;
            assert.equal(answered.status, 200, answered.text);
            assert.match(answered.text, /waited_ms/);
            assert.ok(Date.now() - started >= 1400, 'the call ran its whole time');
            assert.ok(await eventually(() => daemon.exitStatus(), { timeoutMs: 5000 }), 'the daemon exits once drained');
            assert.deepEqual(daemon.exitStatus(), { code: 0, signal: null });
            await daemon.stop();
        }));
    });

    test('a call beyond MCP_DRAIN_SECONDS is cut, and a second SIGTERM exits at once', async () => {
        for (const second of [false, true]) {
            const daemon = await startDaemon({ settings: { MCP_DRAIN_SECONDS: second ? 30 : 1 } });
            await withDiagnostics(daemon, async () => {
                const { session } = await openSession(daemon.url);
                const inFlight = callWait(daemon, session, 20_000).catch(error => ({ error }));
                await new Promise(resolve => setTimeout(resolve, 300));
                const signalled = Date.now();
                process.kill(daemon.pid, 'SIGTERM');
                if (second) {
                    await eventually(() => daemon.stderr().includes('draining'), { timeoutMs: 2000 });
                    process.kill(daemon.pid, 'SIGTERM');
                }
                assert.ok(await eventually(() => daemon.exitStatus(), { timeoutMs: 5000 }), 'the daemon exits');
                const took = Date.now() - signalled;
                assert.ok(second ? took < 1500 : took >= 900 && took < 4000, `exited ${took} ms after SIGTERM`);
                assert.match(daemon.stderr(), second ? /received again/ : /still in flight after MCP_DRAIN_SECONDS/);
                const cut = await inFlight;
                assert.ok(cut.error || cut.status !== 200 || !/waited_ms/.test(cut.text), 'the cut call has no result');
                await daemon.stop();
            });
        }
    });
});
