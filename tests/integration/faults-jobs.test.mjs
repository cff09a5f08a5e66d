// Faults around running jobs: the client goes away mid-call (Streamable HTTP: the POST
// aborted, then the session deleted or simply abandoned; legacy SSE: the stream closed), and a
// job's process is SIGKILLed from outside (the program it ran, its shell, its cmcp-jail); the
// job is found by a marker in its command line. Each ends with the leak check of
// lib/resources.mjs, and a second session is served after every fault. Jobs switch to host uids
// (125000-125015, apart from the other suites' pools), so this needs root (CI runs as root);
// without it the tests skip, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, SSEClientTransport, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { openSession, post } from './lib/http.mjs';
import { assertNoLeaks, descendantsOf, liveJailProcesses, resourcesOf } from './lib/resources.mjs';

const UID_BASE = 125000;
const UID_COUNT = 16;
const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
// How long a job may outlive the event that must end it. The system suite holds cancellation to
// 100 ms on a quiet daemon; here the leak checks of the other suites load the same 2 cores, and
// a sanitizer build answers several times slower.
const deathBoundMs = /asan/.test(process.env.CMCPD ?? '') ? 3000 : 1000;

// Live pids whose command line contains `marker` as one argument.
function pidsWithArgument(marker) {
    const found = [];
    for (const pid of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
        try {
            if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker))
                found.push(Number(pid));
        } catch { /* gone meanwhile */ }
    }
    return found;
}

// A sleep whose argument names it: `sleep 30.<n>` sleeps about 30 s and is found by its argument.
let markers = 0;
const markedSleep = () => `30.${String(++markers).padStart(4, '0')}${process.pid % 1000}`;

async function jobStarted(marker) {
    const pids = await eventually(() => { const found = pidsWithArgument(marker); return found.length ? found : null; },
                                  { timeoutMs: 10_000, intervalMs: 10 });
    assert.ok(pids, `the job "sleep ${marker}" did not start`);
    return pids;
}

async function jobGoneWithin(marker, ms, what) {
    const started = Date.now();
    const gone = await eventually(() => pidsWithArgument(marker).length === 0, { timeoutMs: ms + 5000, intervalMs: 10 });
    const elapsed = Date.now() - started;
    assert.ok(gone, `the job "sleep ${marker}" is still running ${elapsed} ms after ${what}`);
    assert.ok(elapsed <= ms, `the job "sleep ${marker}" took ${elapsed} ms to die after ${what} (bound ${ms} ms)`);
    return elapsed;
}

describe('faults: jobs', needsRoot, () => {
    let daemon;
    let sandbox;
    let keeper;
    let baseline;
    const figures = [];

    const connectHttp = async name => {
        const client = new Client({ name, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        return client;
    };
    // The daemon serves another session: a job runs and its result comes back.
    const stillServing = async () => {
        const result = await keeper.callTool({ name: 'system_run_command', arguments: { command: 'echo still serving' } });
        assert.ok(!result.isError, result.content?.[0]?.text);
        assert.equal(result.structuredContent.stdout, 'still serving\n');
    };
    const leakCheck = async what => {
        const outcome = await assertNoLeaks(daemon.pid, baseline, { uidBase: UID_BASE, uidCount: UID_COUNT });
        figures.push(`${what}: descriptors ${outcome.descriptors.join(' → ')}, VmRSS ${outcome.rssKb.join(' → ')} kB`);
    };

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-faults-jobs-'));
        chmodSync(sandbox, 0o755);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT,
                BASH_ALLOWED_COMMANDS: '*',
                // No job kept pre-started and no template, so every process under the daemon
                // after a test is a leak.
                BASH_WARM_JOBS: 0, PYTHON_WARM_JOBS: 0, JOB_CALL_TEMPLATES: false,
            },
        });
        keeper = await connectHttp('faults-keeper');
        // Warm-up, so that what is set up on first use is in the baseline.
        await stillServing();
        baseline = resourcesOf(daemon.pid, { uidBase: UID_BASE, uidCount: UID_COUNT });
        assert.deepEqual(baseline.descendants, [], 'no job should be running before the tests');
    });

    after(async () => {
        console.log(figures.join('\n'));
        await keeper?.close().catch(() => {});
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    // The specification lets a Streamable HTTP client resume a dropped POST stream, so a drop is
    // not a cancellation: the job runs on, and ending the session (DELETE) ends it.
    test('Streamable HTTP: the POST aborted, then the session deleted: the job dies', () => withDiagnostics(daemon, async () => {
        const { session, protocolVersion } = await openSession(daemon.url);
        const marker = markedSleep();
        const controller = new AbortController();
        const pending = post(daemon.url, { jsonrpc: '2.0', id: 1, method: 'tools/call',
            params: { name: 'system_run_command', arguments: { command: `sleep ${marker}` } } },
        { session, protocolVersion, signal: controller.signal }).catch(error => error);
        await jobStarted(marker);
        controller.abort();
        assert.equal((await pending).name, 'AbortError');
        await stillServing();
        assert.ok(pidsWithArgument(marker).length > 0, 'a dropped POST stream is resumable: the job runs on');
        const deleted = await fetch(daemon.url, { method: 'DELETE', headers: { 'mcp-session-id': session, 'mcp-protocol-version': protocolVersion } });
        assert.equal(deleted.status, 200);
        await deleted.arrayBuffer();
        figures.push(`HTTP POST aborted + DELETE: job gone after ${await jobGoneWithin(marker, deathBoundMs, 'DELETE')} ms`);
        await stillServing();
        await leakCheck('HTTP abort + DELETE');
    }));

    // A client that vanishes without DELETE: the job is bounded by its time limit, and then the
    // session holds nothing running.
    test('Streamable HTTP: the POST aborted and the client gone: the job ends at its time limit', () => withDiagnostics(daemon, async () => {
        const { session, protocolVersion } = await openSession(daemon.url);
        const marker = markedSleep();
        const controller = new AbortController();
        const pending = post(daemon.url, { jsonrpc: '2.0', id: 1, method: 'tools/call',
            params: { name: 'system_run_command', arguments: { command: `sleep ${marker}`, timeout: 2 } } },
        { session, protocolVersion, signal: controller.signal }).catch(error => error);
        await jobStarted(marker);
        const aborted = Date.now();
        controller.abort();
        await pending;
        await jobGoneWithin(marker, 2000 + deathBoundMs - (Date.now() - aborted), 'its 2 s time limit');
        await stillServing();
        await leakCheck('HTTP abort, client gone');
    }));

    test('legacy SSE: the stream closed mid-call: the job dies', () => withDiagnostics(daemon, async () => {
        const leaving = new Client({ name: 'faults-sse', version: '1.0.0' });
        await leaving.connect(new SSEClientTransport(new URL(daemon.sseUrl)));
        const marker = markedSleep();
        const pending = leaving.callTool({ name: 'system_run_command', arguments: { command: `sleep ${marker}` } })
            .then(() => 'answered', error => error);
        await jobStarted(marker);
        await leaving.close();
        figures.push(`SSE stream closed: job gone after ${await jobGoneWithin(marker, deathBoundMs, 'the stream closed')} ms`);
        assert.notEqual(await pending, 'answered');
        await stillServing();
        await leakCheck('SSE closed');
    }));

    // Both ends of a job: the program the command ran (the shell reports it), and the job's shell
    // itself (pid 1 of the job's pid namespace: its children go with it).
    test('the job SIGKILLed from outside: the call says so at once', () => withDiagnostics(daemon, async () => {
        const client = await connectHttp('faults-sigkill');
        const killAndWait = async (marker, choose) => {
            const pending = client.callTool({ name: 'system_run_command', arguments: { command: `sleep ${marker}` } });
            const [pid] = await jobStarted(marker);
            const killed = Date.now();
            process.kill(choose(pid), 'SIGKILL');
            const result = await pending;
            const elapsed = Date.now() - killed;
            assert.ok(elapsed < deathBoundMs, `the result came ${elapsed} ms after the kill`);
            assert.equal(result.structuredContent.success, false, JSON.stringify(result.structuredContent));
            assert.equal(result.structuredContent.exit_code, 137, JSON.stringify(result.structuredContent));
            return { result: result.structuredContent, elapsed };
        };

        const program = await killAndWait(markedSleep(), pid => pid);
        assert.match(program.result.stderr, /Killed\s+sleep 30\./);
        figures.push(`the job's program SIGKILLed: result after ${program.elapsed} ms`);

        const marker = markedSleep();
        const shell = await killAndWait(marker, pid => Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]));
        assert.equal(shell.result.signal, 9, JSON.stringify(shell.result));
        assert.equal(shell.result.message, 'the command was killed by signal 9');
        await jobGoneWithin(marker, deathBoundMs, 'its shell was killed');
        figures.push(`the job's shell SIGKILLed: result after ${shell.elapsed} ms`);
        await client.close();
        await stillServing();
        await leakCheck('job SIGKILLed');
    }));

    test('the job\'s cmcp-jail SIGKILLed from outside: the call fails clearly, the job dies', () => withDiagnostics(daemon, async () => {
        const client = await connectHttp('faults-sigkill-jail');
        const marker = markedSleep();
        const pending = client.callTool({ name: 'system_run_command', arguments: { command: `sleep ${marker}` } });
        await jobStarted(marker);
        const jails = descendantsOf(daemon.pid).filter(p => p.ppid === daemon.pid && p.comm === 'cmcp-jail');
        assert.equal(jails.length, 1, JSON.stringify(jails));
        const killed = Date.now();
        process.kill(jails[0].pid, 'SIGKILL');
        const result = await pending;
        const elapsed = Date.now() - killed;
        figures.push(`cmcp-jail SIGKILLed: result after ${elapsed} ms`);
        assert.ok(elapsed < deathBoundMs, `the result came ${elapsed} ms after the kill`);
        assert.equal(result.structuredContent.success, false, JSON.stringify(result.structuredContent));
        assert.equal(result.structuredContent.signal, 9);
        assert.equal(result.structuredContent.message, 'the command was killed by signal 9');
        assert.deepEqual(result.structuredContent.report_errors, ['cmcp-jail was killed by signal 9 before it reported how the job ended']);
        await jobGoneWithin(marker, deathBoundMs, 'its cmcp-jail was killed');
        // Only live processes count here; the leak check below waits for init's reaping.
        const running = () => liveJailProcesses(UID_BASE, UID_COUNT);
        assert.ok(await eventually(() => running().length === 0, { timeoutMs: deathBoundMs, intervalMs: 10 }),
                  `job processes outlived their cmcp-jail: ${running()}`);
        // Nor does its cgroup: the daemon removes what the killed jail could not.
        const cgroupsOf = pid => readdirSync('/sys/fs/cgroup').map(h => join('/sys/fs/cgroup', h, 'cmcp', `job-${pid}`))
            .concat(join('/sys/fs/cgroup/cmcp', `job-${pid}`)).filter(dir => existsSync(dir));
        assert.ok(await eventually(() => cgroupsOf(jails[0].pid).length === 0, { timeoutMs: 3000, intervalMs: 20 }),
                  `the killed jail's cgroups are left: ${cgroupsOf(jails[0].pid)}`);
        await client.close();
        await stillServing();
        await leakCheck('cmcp-jail SIGKILLed');
    }));
});
