// Faults: the browser worker (cmcp-browser) is SIGKILLed while several web_browse calls
// load pages from a loopback fixture (lib/webfixture.mjs). The calls it had must fail with a
// clear error, the next calls must succeed on a new worker, and no Chromium process of the dead
// worker may be left (they are not the daemon's descendants once orphaned, so they are looked up
// by pid). Ends with the leak check of lib/resources.mjs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { toolCalls } from './lib/tools.mjs';
import { eventually, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { assertNoLeaks, descendantsOf, resourcesOf } from './lib/resources.mjs';
import { ALLOWED, startWebFixture } from './lib/webfixture.mjs';

// How soon the calls a crashed worker had must be answered; a sanitizer build of the daemon is
// several times slower.
const answerBoundMs = /asan/.test(process.env.CMCPD ?? '') ? 6000 : 2000;

// The process tree of the daemon's browser worker: the worker and its Chromium processes.
function browserTree(daemonPid) {
    const tree = descendantsOf(daemonPid);
    // A root daemon's worker runs under cmcp-jail, one level further down.
    const jails = new Set(tree.filter(p => p.ppid === daemonPid && p.comm === 'cmcp-jail').map(p => p.pid));
    const worker = tree.find(p => (p.ppid === daemonPid || jails.has(p.ppid)) && p.comm === 'cmcp-browser');
    return worker ? [worker, ...descendantsOf(worker.pid)] : [];
}

// The same process still alive (and not a new one that reused its pid).
const stillAlive = p => existsSync(`/proc/${p.pid}/stat`)
    && readFileSync(`/proc/${p.pid}/stat`, 'utf8').includes(`(${p.comm})`);

describe('faults: the browser worker crashes under load', () => {
    let fixture;
    let daemon;
    let client;
    let baseline;
    const { call, ok } = toolCalls(() => client);

    before(async () => {
        fixture = await startWebFixture();
        daemon = await startDaemon({
            fixtures: false,
            settings: { WEB_ALLOW_PRIVATE: 'true', WEB_ALLOWED_DOMAINS: ALLOWED, WEB_TIMEOUT_DEFAULT: 10 },
        });
        client = new Client({ name: 'faults-browser', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        // Warm-up: the worker is started and kept warm; it belongs to the baseline.
        await ok('web_browse', { url: fixture.url('/static.html') });
        baseline = resourcesOf(daemon.pid);
    });

    after(async () => {
        await client?.close().catch(() => {});
        await daemon?.stop();
        await fixture?.stop();
    });

    test('in-flight calls fail clearly, the next ones succeed, no Chromium process is left', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        // Four pages load at once in a worker (its concurrency); /slow never finishes loading.
        const inFlight = Array.from({ length: 4 }, (_, i) => call('web_browse', { url: fixture.url(`/slow?${i}`) }));
        assert.ok(await eventually(() => fixture.hits(ALLOWED, '/slow').length === 4, { timeoutMs: 10_000 }),
                  `pages loading: ${fixture.hits(ALLOWED, '/slow').length}`);
        // A fifth call waits for a free page; it is not the worker's yet.
        const queued = call('web_browse', { url: fixture.url('/static.html') });
        const tree = browserTree(daemon.pid);
        assert.ok(tree.length > 1, `the worker and its Chromium processes: ${JSON.stringify(tree)}`);
        const killed = Date.now();
        process.kill(tree[0].pid, 'SIGKILL');

        const results = await Promise.all(inFlight);
        const elapsed = Date.now() - killed;
        for (const result of results) {
            assert.equal(result.isError, true, JSON.stringify(result.structuredContent));
            assert.match(result.structuredContent.error, /^the browser worker crashed \(signal 9\) while loading this page; a new worker is being started/);
        }
        assert.ok(elapsed < answerBoundMs, `the in-flight calls were answered ${elapsed} ms after the crash`);
        // The queued call either ran on the new worker or failed with the same clear error.
        const waited = await queued;
        if (waited.isError)
            assert.match(waited.structuredContent.error, /browser worker crashed/);
        else
            assert.equal(waited.structuredContent.title, 'Static fixture');

        for (let i = 0; i < 3; ++i)
            assert.equal((await ok('web_browse', { url: fixture.url('/static.html') })).title, 'Static fixture');
        const orphans = await eventually(() => { const left = tree.filter(stillAlive); return left.length ? null : left; },
                                         { timeoutMs: 5000, intervalMs: 50 });
        assert.deepEqual(orphans, [], `processes of the killed worker still alive: ${JSON.stringify(tree.filter(stillAlive))}`);
        const fresh = browserTree(daemon.pid);
        assert.ok(fresh.length > 0 && fresh[0].pid !== tree[0].pid, 'a new worker serves');
        console.log(`worker tree of ${tree.length} processes killed; in-flight calls answered after ${elapsed} ms`);
        // The new worker's tree replaces the old one: no more processes under the daemon than
        // after the warm-up.
        const outcome = await assertNoLeaks(daemon.pid, baseline);
        console.log(`descriptors ${outcome.descriptors.join(' → ')}, VmRSS ${outcome.rssKb.join(' → ')} kB`);
    }));
});
