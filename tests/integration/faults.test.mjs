// Faults: SIGTERM while many file_write calls and their audit records are in flight.
// The daemon must exit on its own within the grace period, leave every file either absent or
// whole (no half-written file, no temporary file), and leave an audit log that verifies, with a
// record of every call whose result a client received. Then restarts: stopped with sessions
// open (and once killed outright), the daemon starts again on the same state, cleans what the
// previous run left, continues the audit chain, and tells reconnecting clients plainly that
// their session is gone. The other faults have files of their own (faults-*.test.mjs).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, SSEClientTransport, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { cmcpdPath, eventually, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { openSession, post, SseReader } from './lib/http.mjs';
import { jailProcesses, liveJailProcesses } from './lib/resources.mjs';

// These tests read the workspace and the sessions' directories on the host after the daemon has
// gone, which the workspace volume (unmounted with it) would hide: they keep plain directories.
const PLAIN_WORKSPACE = { SANDBOX_WORKSPACE_QUOTA_MB: 0 };

const contentOf = (client, i) => `${client}:${i}:`.padEnd(200 * 1024, String.fromCharCode(97 + (i % 26)));

describe('faults', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cmcp-faults-'));
    after(() => rmSync(scratch, { recursive: true, force: true }));

    // 4 sessions, 25 file_write calls of 200 KB each, all in flight; resolves once `enough` results
    // have arrived, with the paths received so far (the list goes on growing) and all the calls.
    async function writesInFlight(daemon, enough) {
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
        while (received.length < enough)
            await new Promise(resolve => setTimeout(resolve, 5));
        // Called once the daemon is gone: the results it sent before are read, and the calls it
        // never answered are ended by closing their clients (else each would wait out the
        // client's request timeout).
        const settled = async () => {
            await Promise.race([Promise.all(calls), sleep(2000)]);
            for (const client of clients)
                await client.close().catch(() => {});
            await Promise.all(calls);
        };
        return { received, calls, settled };
    }

    // Every file in the workspace is one the clients wrote, whole; none is temporary.
    function assertFilesWholeOrAbsent(workspace, received) {
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
        return files;
    }

    test('SIGTERM during writes: files whole or absent, audit log verifiable', async () => {
        const sandbox = join(scratch, 'sandbox');
        const auditLog = join(scratch, 'audit.jsonl');
        const daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, AUDIT_LOG: auditLog, ...PLAIN_WORKSPACE } });
        // Stop while calls are still running.
        const { received, calls, settled } = await writesInFlight(daemon, 5);
        const exit = await daemon.stop(10_000);
        await settled();
        assert.equal(exit.signal, null, `cmcpd did not exit on SIGTERM within the grace period (${JSON.stringify(exit)})`);
        assert.equal(exit.code, 0);

        const files = assertFilesWholeOrAbsent(join(sandbox, 'workspace'), received);
        console.log(`results received ${received.length} of ${calls.length}, files on disk ${files}`);

        const verdict = spawnSync(cmcpdPath(), ['--verify-audit', auditLog], { encoding: 'utf8', timeout: 30_000 });
        assert.equal(verdict.status, 0, verdict.stderr);
        const recorded = new Set(readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line))
            .filter(r => r.event === 'call_finished' && r.outcome === 'succeeded').map(r => r.call));
        assert.ok(recorded.size >= received.length, `${received.length} results received, ${recorded.size} recorded`);
    });

    // Killed outright, the daemon cleans nothing up: a file being written must never have had a
    // name until it was whole and on disk.
    test('SIGKILL during writes: files whole or absent, no temporary file', async () => {
        const sandbox = join(scratch, 'sigkill');
        const daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, ...PLAIN_WORKSPACE } });
        const { received, calls, settled } = await writesInFlight(daemon, 5);
        process.kill(daemon.pid, 'SIGKILL');
        const exit = await daemon.stop();
        await settled();
        assert.equal(exit.signal, 'SIGKILL');
        const files = assertFilesWholeOrAbsent(join(sandbox, 'workspace'), received);
        console.log(`killed after ${received.length} results of ${calls.length}; files on disk ${files}`);
    });

    test('restart with sessions open: leftovers cleaned, audit chain continued, old sessions told plainly', {
        skip: process.getuid() !== 0 && 'needs root: jobs switch to host uids of the pool (CI runs as root)',
    }, async () => {
        const UID_BASE = 125200;
        const UID_COUNT = 8;
        // mkdtemp made the scratch directory 0700: the jobs' uids must pass through it.
        chmodSync(scratch, 0o755);
        const sandbox = join(scratch, 'restart');
        mkdirSync(sandbox);
        chmodSync(sandbox, 0o755);
        const auditLog = join(scratch, 'restart-audit.jsonl');
        const spill = join(sandbox, 'spill');
        const sessions = join(sandbox, 'sessions');
        const settings = {
            SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT, AUDIT_LOG: auditLog,
            SANDBOX_WORKSPACE: 'session', SANDBOX_OUTPUT_CAP_KB: 1, ...PLAIN_WORKSPACE, BASH_ALLOWED_COMMANDS: 'head,sleep,tr',
        };
        const connectHttp = async (url, name) => {
            const client = new Client({ name, version: '1.0.0' });
            await client.connect(new StreamableHTTPClientTransport(new URL(url)));
            return client;
        };
        const callOk = async (client, name, args) => {
            const result = await client.callTool({ name, arguments: args });
            assert.ok(!result.isError, `${name}: ${result.content?.[0]?.text}`);
            return result.structuredContent;
        };
        const sessionsInLog = () => new Set(readFileSync(auditLog, 'utf8').split('\n').filter(Boolean)
            .map(line => JSON.parse(line)).filter(r => r.event === 'call_finished').map(r => r.session));

        // Whatever fails, no daemon, client or stream is left to keep the test process alive.
        const cleanups = [];
        try {
            await restartScenario();
        } finally {
            for (const cleanup of cleanups.reverse())
                await cleanup().catch(() => {});
        }

        async function restartScenario() {
            // First run: sessions on both transports, a spilled output, a background job's log.
            const first = await startDaemon({ fixtures: false, settings });
            cleanups.push(() => first.stop());
            const port = first.port;
            const sdkClient = await connectHttp(first.url, 'restart-sdk');
            cleanups.push(() => sdkClient.close());
            let raw;
            let legacyPostUrl;
            const legacyStream = new AbortController();
            cleanups.push(async () => legacyStream.abort());
            await withDiagnostics(first, async () => {
                await callOk(sdkClient, 'file_write', { path: 'kept.txt', content: 'first run' });
                const spilled = await callOk(sdkClient, 'system_run_command', { command: 'head -c 4000 /dev/zero | tr "\\0" x' });
                assert.ok(spilled.stdout_handle, `no spill handle: ${JSON.stringify(spilled)}`);
                await callOk(sdkClient, 'system_run_command', { command: 'sleep 30', background: true });
                raw = await openSession(first.url);
                const stream = await fetch(first.sseUrl, { headers: { accept: 'text/event-stream' }, signal: legacyStream.signal });
                legacyPostUrl = new URL((await new SseReader(stream).nextEvent()).data, first.sseUrl);
                assert.ok(readdirSync(spill).length > 0, 'the first run spilled nothing');
                assert.ok(readdirSync(sessions).length > 0, 'the first run made no session workspace');
            });
            const exit = await first.stop(10_000);
            assert.deepEqual(exit, { code: 0, signal: null }, 'SIGTERM with sessions open must end the daemon cleanly');
            assert.deepEqual(liveJailProcesses(UID_BASE, UID_COUNT), [], 'a job survived its daemon');

            // Second run, same port and state: sessions of the first are gone, plainly.
            const second = await startDaemon({ fixtures: false, settings, args: ['--port', String(port)] });
            cleanups.push(() => second.stop());
            await withDiagnostics(second, async () => {
                assert.equal(second.port, port);
                assert.deepEqual(readdirSync(spill), [], 'spill files of the previous run are still there');
                assert.deepEqual(readdirSync(sessions), [], 'session workspaces of the previous run are still there');

                const stale = await post(second.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, raw);
                assert.equal(stale.status, 404);
                assert.match((await stale.json()).error.message, /^session not found \(it ended or never existed\): initialize a new one$/);
                const staleLegacy = await fetch(legacyPostUrl, { method: 'POST', headers: { 'content-type': 'application/json' },
                    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
                assert.equal(staleLegacy.status, 404);
                assert.match((await staleLegacy.json()).error.message, /^session not found: open a new stream at \/sse$/);
                await assert.rejects(sdkClient.callTool({ name: 'file_list', arguments: {} }), { code: 404, message: /session not found \(it ended or never existed\): initialize a new one/ });

                // Re-initializing works on both transports.
                const again = await connectHttp(second.url, 'restart-sdk-again');
                cleanups.push(() => again.close());
                await callOk(again, 'file_write', { path: 'second.txt', content: 'second run' });
                const legacy = new Client({ name: 'restart-sse-again', version: '1.0.0' });
                cleanups.push(() => legacy.close());
                await legacy.connect(new SSEClientTransport(new URL(second.sseUrl)));
                await callOk(legacy, 'file_list', {});
                // Then the daemon is killed outright, a job running and output spilled.
                await callOk(again, 'system_run_command', { command: 'head -c 4000 /dev/zero | tr "\\0" y' });
                await callOk(again, 'system_run_command', { command: 'sleep 30', background: true });
                assert.ok(readdirSync(spill).length > 0);
                // A background call returns as its jail starts, before the jail has become the
                // job's uid: wait (bounded) for the job to run as it.
                const running = await eventually(() => jailProcesses(UID_BASE, UID_COUNT).length > 0, { timeoutMs: 10_000, intervalMs: 50 });
                assert.ok(running, 'the background job is not running');
                process.kill(second.pid, 'SIGKILL');
                assert.deepEqual(await second.stop(), { code: null, signal: 'SIGKILL' });
                // Each job's cmcp-jail is told of its daemon's death by the kernel (PR_SET_PDEATHSIG).
                const orphans = await eventually(() => liveJailProcesses(UID_BASE, UID_COUNT).length === 0, { timeoutMs: 3000, intervalMs: 20 });
                assert.ok(orphans, `jobs outlived the killed daemon: ${liveJailProcesses(UID_BASE, UID_COUNT)}`);
                await again.close().catch(() => {});
                await legacy.close().catch(() => {});
            });
            assert.ok(readdirSync(spill).length > 0 && readdirSync(sessions).length > 0, 'the killed run left nothing to clean');

            // Third run, after the crash: leftovers cleaned, the chain goes on.
            const third = await startDaemon({ fixtures: false, settings });
            cleanups.push(() => third.stop());
            await withDiagnostics(third, async () => {
                assert.deepEqual(readdirSync(spill), [], 'spill files of the killed run are still there');
                assert.deepEqual(readdirSync(sessions), [], 'session workspaces of the killed run are still there');
                const client = await connectHttp(third.url, 'restart-after-crash');
                cleanups.push(() => client.close());
                await callOk(client, 'file_write', { path: 'third.txt', content: 'third run' });
                await client.close();
            });
            legacyStream.abort();
            await sdkClient.close().catch(() => {});
            assert.deepEqual(await third.stop(10_000), { code: 0, signal: null });

            // The three runs are one chain that verifies.
            const verdict = spawnSync(cmcpdPath(), ['--verify-audit', auditLog], { encoding: 'utf8', timeout: 30_000 });
            assert.equal(verdict.status, 0, verdict.stderr);
            assert.ok(sessionsInLog().size >= 4, `calls of the three runs in the log: ${[...sessionsInLog()]}`);
        }
    });
});
