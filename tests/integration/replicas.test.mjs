// Three cmcpd replicas behind HAProxy configured from the shipped ingress (container/k8s/
// ingress.yaml, through lib/haproxy.mjs), driven by the official SDK client over Streamable HTTP.
// Every session sticks to the replica that opened it (each replica's audit log shows which one
// answered), and so do the jobs and output handles it addresses by id. One replica is killed
// (SIGKILL) while clients call in a loop: the clients of the other replicas see no failed call,
// the killed replica's clients get a clear error and a new session lands on a live replica.
// Then another replica is stopped with SIGTERM under load: it drains (its calls in flight
// finish, /health answers 503), HAProxy takes it out, and again the other clients see no failed
// call. The surviving replicas' audit logs verify.
//
// Beside the sessions, clients of the 2026-07-28 revision (the SDK v2 client, pinned to it) send
// every request without a session: those are spread over the replicas, and what they address by
// handle (a job, an output handle, a task) reaches the replica that made it, routed by the name
// of the replica each handle ends in (MCP_REPLICA_ID, learned by HAProxy from the Mcp-Replica
// header of that replica's answers). They call in the same loops through the kill and the drain,
// and see no failed call either.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '../clients/node_modules/@modelcontextprotocol/client/dist/index.mjs';
import { cmcpdPath, eventually, sleep, startDaemon, within } from './lib/daemon.mjs';
import { haproxyMissing, startHaproxy } from './lib/haproxy.mjs';

const root = process.getuid() === 0;
const REPLICAS = ['alpha', 'beta', 'gamma'];
// Pools of their own (126000-126383), apart from the other suites' and from startDaemon's.
const UID_BASE = 126000;
const UID_STRIDE = 128;
const UID_COUNT = 16;
const CLIENTS = 6;
const STATELESS_CLIENTS = 3;
const MODERN = '2026-07-28';
const DRAIN_SECONDS = 10;
const CALL_TIMEOUT_MS = 10_000;
const sessionGone = /HTTP 404/;

const records = path => (existsSync(path) ? readFileSync(path, 'utf8') : '')
    .split('\n').filter(Boolean).flatMap(line => { try { return [JSON.parse(line)]; } catch { return []; } });
// The SDK's HTTP errors carry the status as `code`; fetch's "fetch failed" says what failed in
// its cause.
const failureText = error => `${error.code ? `HTTP ${error.code}: ` : ''}${error.message}${error.cause ? `: ${error.cause.message}` : ''}`;
const verify = file => spawnSync(cmcpdPath(), ['--verify-audit', file], { encoding: 'utf8', timeout: 30_000 });

// One kind of client per protocol era; `open` returns {name, sessionId, call(tool, args), close()}.
const clientKinds = {
    '2025-11-25 session': async (url, name) => {
        const sdk = new Client({ name, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(url));
        await sdk.connect(transport);
        return {
            name,
            sessionId: transport.sessionId,
            call: (tool, args) => sdk.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }),
            close: () => within(2000, sdk.close(), 'closing the client').catch(() => {}),
        };
    },
};
// Every response's Mcp-Replica header, in the order the responses came: a client's calls are
// sequential, so the last one names the replica that answered its last call.
clientKinds['2026-07-28 stateless'] = async (url, name) => {
    const answeredBy = [];
    const recordingFetch = async (input, init) => {
        const response = await fetch(input, init);
        answeredBy.push(response.headers.get('mcp-replica'));
        return response;
    };
    const sdk = new ModernClient({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await sdk.connect(new ModernTransport(new URL(url), { fetch: recordingFetch }));
    assert.equal(sdk.getProtocolEra(), 'modern');
    // The tool definitions say which arguments go into Mcp-Param-* headers too.
    await sdk.listTools();
    return {
        name,
        stateless: true,
        answeredBy,
        call: (tool, args) => sdk.callTool({ name: tool, arguments: args }, { timeout: CALL_TIMEOUT_MS }),
        close: () => within(2000, sdk.close(), 'closing the client').catch(() => {}),
    };
};
const openClient = clientKinds['2025-11-25 session'];
// A replica's name, as the handles it makes end in it.
const replicaOfHandle = handle => /\.([a-z0-9-]+)$/.exec(handle)?.[1];

// One request of the 2026-07-28 revision, raw, with the headers a client mirrors: the message
// and the replica that answered it.
async function modernRequest(url, method, params, { id = 1 } = {}) {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN, 'mcp-method': method };
    if (method.startsWith('tasks/'))
        headers['mcp-name'] = params.taskId;
    else if (method === 'tools/call')
        headers['mcp-name'] = params.name;
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
    const text = await response.text();
    const message = response.headers.get('content-type')?.includes('text/event-stream')
        ? JSON.parse(text.split('\n').filter(line => line.startsWith('data:') && line.length > 5).at(-1).slice(5))
        : JSON.parse(text);
    return { status: response.status, replica: response.headers.get('mcp-replica'), message };
}
const TASKS = 'io.modelcontextprotocol/tasks';
const withTasks = () => ({
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'replicas-tasks', version: '0' },
});

const skip = haproxyMissing();
describe('replicas behind HAProxy with the ingress configuration', { skip: skip ?? false, timeout: 60_000 }, () => {
    let scratch;
    const replicas = {};
    let proxy;
    const clients = [];
    const statelessClients = [];

    // The replica whose audit log has calls of `sessionId` (all of them, if sessions stick).
    const replicasOf = sessionId => REPLICAS.filter(name =>
        records(replicas[name].auditLog).some(record => record.session === sessionId));
    const callsIn = (name, sessionId) =>
        records(replicas[name].auditLog).filter(r => r.event === 'call_finished' && r.session === sessionId).length;

    async function open(name) {
        const client = await openClient(proxy.url, name);
        clients.push(client);
        return client;
    }

    // Calls `tool` in a loop until `stop.done`, or until a failure matches `until`.
    async function callLoop(client, stop, { tool = 'test_wait', args = { ms: 5 }, until } = {}) {
        const outcome = { client: client.name, ok: 0, failed: [] };
        while (!stop.done) {
            try {
                const result = await client.call(tool, args);
                if (result.isError)
                    outcome.failed.push(`tool error: ${result.content?.[0]?.text}`);
                else
                    outcome.ok++;
            } catch (error) {
                outcome.failed.push(failureText(error));
            }
            if (until && outcome.failed.length && until.test(outcome.failed.at(-1)))
                break;
        }
        return outcome;
    }

    // New sessions, one after another, each making one call, until `stop.done`.
    async function newcomerLoop(stop, label) {
        const outcome = { client: label, ok: 0, failed: [], landedOn: [] };
        for (let i = 0; !stop.done; i++) {
            try {
                const client = await openClient(proxy.url, `${label}-${i}`);
                const result = await client.call('test_wait', { ms: 1 });
                if (result.isError)
                    outcome.failed.push(`tool error: ${result.content?.[0]?.text}`);
                else
                    outcome.ok++;
                outcome.landedOn.push(...replicasOf(client.sessionId));
                await client.close();
            } catch (error) {
                outcome.failed.push(`${new Date().toISOString()} ${label}-${i}: ${failureText(error)}`);
            }
        }
        return outcome;
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-replicas-'));
        chmodSync(scratch, 0o755);
        for (const [index, name] of REPLICAS.entries()) {
            const dir = join(scratch, name);
            mkdirSync(join(dir, 'sandbox'), { recursive: true, mode: 0o755 });
            const auditLog = join(dir, 'audit.jsonl');
            const daemon = await startDaemon({
                settings: {
                    SANDBOX_ROOT: join(dir, 'sandbox'), AUDIT_LOG: auditLog, ADMIN_SOCKET: join(dir, 'admin.sock'),
                    SANDBOX_UID_BASE: UID_BASE + index * UID_STRIDE, SANDBOX_UID_COUNT: UID_COUNT,
                    SANDBOX_WORKSPACE: 'session', MCP_DRAIN_SECONDS: DRAIN_SECONDS, MCP_REPLICA_ID: name,
                    BASH_ALLOWED_COMMANDS: 'echo,sleep', BASH_TIMEOUT_DEFAULT: 10, SANDBOX_OUTPUT_CAP_KB: 1,
                },
            });
            replicas[name] = { name, daemon, auditLog };
        }
        proxy = await startHaproxy(REPLICAS.map(name => ({ name, port: replicas[name].daemon.port })));
        for (let i = 0; i < CLIENTS; i++) {
            const client = await open(`client-${i}`);
            // One call puts the session in its replica's audit log.
            const result = await client.call('test_wait', { ms: 1 });
            assert.ok(!result.isError);
        }
        for (let i = 0; i < STATELESS_CLIENTS; i++) {
            const client = await clientKinds['2026-07-28 stateless'](proxy.url, `stateless-${i}`);
            clients.push(client);
            statelessClients.push(client);
        }
    });

    after(async () => {
        for (const client of clients)
            await client.close();
        await proxy?.stop();
        for (const { daemon } of Object.values(replicas))
            await daemon.stop(3000);
        if (scratch)
            rmSync(scratch, { recursive: true, force: true });
    });

    // Diagnostics for a failed assertion: each daemon's and HAProxy's log tail.
    async function withLogs(body) {
        try {
            return await body();
        } catch (error) {
            for (const { name, daemon } of Object.values(replicas))
                console.error(`--- ${name} stderr ---\n${daemon.stderrTail(20)}`);
            // Its request log without the requests that went well.
            const unusual = proxy?.stderr().split('\n').filter(line => !/ 20[02] \d+ - - ---- /.test(line));
            console.error(`--- haproxy ---\n${unusual?.slice(-60).join('\n')}`);
            throw error;
        }
    }

    const sessionClients = () => clients.filter(c => !c.stateless);

    test('every session sticks to one replica, and the sessions are spread over all three', () => withLogs(async () => {
        for (const client of sessionClients()) {
            for (let i = 0; i < 5; i++)
                assert.ok(!(await client.call('test_wait', { ms: 1 })).isError);
            const owners = replicasOf(client.sessionId);
            assert.equal(owners.length, 1, `${client.name}'s calls were answered by ${JSON.stringify(owners)}`);
            assert.equal(callsIn(owners[0], client.sessionId), 6);
            client.replica = owners[0];
        }
        assert.deepEqual([...new Set(sessionClients().map(c => c.replica))].sort(), [...REPLICAS].sort(),
                         'HAProxy balances new sessions over the replicas');
    }));

    test('requests without a session are spread over all three replicas', () => withLogs(async () => {
        for (const client of statelessClients) {
            client.answeredBy.length = 0;
            for (let i = 0; i < 6; i++)
                assert.ok(!(await client.call('test_wait', { ms: 1 })).isError);
        }
        const answeredBy = statelessClients.flatMap(c => c.answeredBy);
        assert.ok(answeredBy.every(name => REPLICAS.includes(name)), `answered by ${JSON.stringify(answeredBy)}`);
        assert.deepEqual([...new Set(answeredBy)].sort(), [...REPLICAS].sort(), 'HAProxy balances stateless requests over the replicas');
    }));

    test('jobs and output handles made without a session are routed to the replica they name', { skip: root ? false : 'needs root: jobs switch to host uids of the pool' }, () => withLogs(async () => {
        const expected = Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join('');
        for (const client of statelessClients) {
            // Several jobs per client, so that round robin puts them on every replica.
            const jobs = [];
            for (let i = 0; i < REPLICAS.length; i++) {
                const started = await client.call('system_run_command', {
                    command: `echo start-${client.name}-${i}; sleep 1; echo end-${client.name}-${i}`, background: true,
                });
                assert.ok(!started.isError, started.content?.[0]?.text);
                const id = started.structuredContent.job_id;
                assert.equal(replicaOfHandle(id), client.answeredBy.at(-1), `${id} names the replica that started it`);
                jobs.push({ id, i });
            }
            assert.deepEqual([...new Set(jobs.map(job => replicaOfHandle(job.id)))].sort(), [...REPLICAS].sort());
            for (const { id, i } of jobs) {
                let text = '';
                let offset = 0;
                const done = await eventually(async () => {
                    const window = await client.call('job_output', { job_id: id, offset, limit: 4096 });
                    assert.ok(!window.isError, window.content?.[0]?.text);
                    assert.equal(client.answeredBy.at(-1), replicaOfHandle(id), `job_output of ${id} reached another replica`);
                    text += window.structuredContent.output;
                    offset = window.structuredContent.next_offset;
                    return window.structuredContent.complete;
                }, { timeoutMs: 10_000, intervalMs: 100 });
                assert.ok(done, `${id} did not complete: ${JSON.stringify(text)}`);
                assert.equal(text, `start-${client.name}-${i}\nend-${client.name}-${i}\n`);
            }
            // An output cut to SANDBOX_OUTPUT_CAP_KB leaves a handle, read back in windows.
            const big = await client.call('system_run_python', { code: 'for i in range(300): print("line", i)' });
            assert.ok(!big.isError, big.content?.[0]?.text);
            const handle = big.structuredContent.stdout_handle;
            assert.equal(replicaOfHandle(handle), client.answeredBy.at(-1));
            let text = '';
            for (let offset = 0, complete = false; !complete;) {
                const window = await client.call('output_read', { handle, offset, length: 1000 });
                assert.ok(!window.isError, window.content?.[0]?.text);
                assert.equal(client.answeredBy.at(-1), replicaOfHandle(handle), `output_read of ${handle} reached another replica`);
                text += window.structuredContent.output;
                offset = window.structuredContent.next_offset;
                complete = window.structuredContent.complete;
            }
            assert.equal(text, expected);
        }
    }));

    test('tasks made without a session are polled on the replica they name', () => withLogs(async () => {
        const tasks = [];
        for (let i = 0; i < REPLICAS.length; i++) {
            const created = await modernRequest(proxy.url, 'tools/call',
                { name: 'slow_compute', arguments: { seconds: 1, label: `T${i}` }, _meta: withTasks() });
            assert.equal(created.status, 200, JSON.stringify(created.message));
            const { taskId, resultType } = created.message.result;
            assert.equal(resultType, 'task');
            assert.equal(replicaOfHandle(taskId), created.replica, `${taskId} names the replica that made it`);
            tasks.push({ taskId, label: `T${i}` });
        }
        assert.deepEqual([...new Set(tasks.map(t => replicaOfHandle(t.taskId)))].sort(), [...REPLICAS].sort());
        for (const { taskId, label } of tasks) {
            let task;
            assert.ok(await eventually(async () => {
                const polled = await modernRequest(proxy.url, 'tasks/get', { taskId, _meta: withTasks() });
                assert.equal(polled.replica, replicaOfHandle(taskId), `tasks/get of ${taskId} reached another replica`);
                assert.ok(polled.message.result, JSON.stringify(polled.message));
                task = polled.message.result;
                return task.status !== 'working';
            }, { timeoutMs: 10_000, intervalMs: 100 }), `${taskId} still working`);
            assert.equal(task.status, 'completed');
            assert.equal(task.result.content[0].text, `${label}: computed in 1 s`);
        }
    }));

    test('jobs and output handles addressed by id reach the replica that owns them', { skip: root ? false : 'needs root: jobs switch to host uids of the pool' }, () => withLogs(async () => {
        const jobs = await Promise.all(sessionClients().map(async client => {
            const started = await client.call('system_run_command', {
                command: `echo start-${client.name}; sleep 1; echo end-${client.name}`, background: true,
            });
            assert.ok(!started.isError, started.content?.[0]?.text);
            return { client, id: started.structuredContent.job_id };
        }));
        for (const { client, id } of jobs) {
            let text = '';
            let offset = 0;
            const done = await eventually(async () => {
                const window = await client.call('job_output', { job_id: id, offset, limit: 4096 });
                assert.ok(!window.isError, window.content?.[0]?.text);
                text += window.structuredContent.output;
                offset = window.structuredContent.next_offset;
                return window.structuredContent.complete;
            }, { timeoutMs: 10_000, intervalMs: 100 });
            assert.ok(done, `${client.name}'s job did not complete: ${JSON.stringify(text)}`);
            assert.equal(text, `start-${client.name}\nend-${client.name}\n`);
            assert.deepEqual(replicasOf(client.sessionId), [client.replica], 'the job calls went to the session\'s replica');
        }
    }));

    test('SIGKILL of one replica under load: no failed call for the clients of the others', () => withLogs(async () => {
        const victim = sessionClients()[0].replica;
        const ofVictim = sessionClients().filter(c => c.replica === victim);
        // The stateless clients are nobody's: they are among the others.
        const others = clients.filter(c => c.replica !== victim);
        const stop = { done: false };
        const loops = others.map(client => callLoop(client, stop));
        // 404 is how a server says a session is unknown; MCP clients then open a new one.
        const victimLoops = ofVictim.map(client => callLoop(client, stop, { args: { ms: 50 }, until: sessionGone }));
        await sleep(500);
        const killedAt = Date.now();
        process.kill(replicas[victim].daemon.pid, 'SIGKILL');
        const newcomers = newcomerLoop(stop, 'after-kill');
        await proxy.waitForState(victim, /^DOWN/, 10_000);
        const takenOutMs = Date.now() - killedAt;
        await sleep(500);
        stop.done = true;
        const outcomes = await Promise.all(loops);
        const victimOutcomes = await Promise.all(victimLoops);
        const newcomerOutcome = await newcomers;

        const failedAmongSurvivors = outcomes.reduce((sum, o) => sum + o.failed.length, 0);
        const callsAmongSurvivors = outcomes.reduce((sum, o) => sum + o.ok + o.failed.length, 0);
        const statelessCalls = outcomes.filter((o, i) => others[i].stateless).reduce((sum, o) => sum + o.ok + o.failed.length, 0);
        console.log(`failed calls during a replica kill among clients of surviving replicas: ${failedAmongSurvivors} of ${callsAmongSurvivors} (${statelessCalls} without a session); `
                    + `new sessions opened meanwhile: ${newcomerOutcome.ok} ok, ${newcomerOutcome.failed.length} failed; `
                    + `HAProxy took the replica out after ${takenOutMs} ms`);
        assert.deepEqual(outcomes.map(o => o.failed), others.map(() => []), 'a client of a surviving replica saw a failed call');
        assert.ok(outcomes.every(o => o.ok > 0), 'every surviving client kept calling');
        assert.deepEqual(newcomerOutcome.failed, [], 'a new session failed while the replica was dying');
        assert.ok(newcomerOutcome.ok > 0);
        assert.ok(!newcomerOutcome.landedOn.includes(victim), 'a new session landed on the killed replica');

        // The killed replica's clients: a clear error, then a new session on a live replica.
        for (const [index, outcome] of victimOutcomes.entries()) {
            console.log(`${outcome.client} (of the killed replica) got: ${outcome.failed.map(f => f.slice(0, 120)).join(' | then ')}`);
            // At most the call in flight at the kill fails on the broken connection; the next
            // one is told that the session is gone.
            assert.ok(outcome.failed.length >= 1 && outcome.failed.length <= 2, JSON.stringify(outcome));
            assert.match(outcome.failed.at(-1), sessionGone);
            const again = await open(`${ofVictim[index].name}-again`);
            assert.ok(!(await again.call('test_wait', { ms: 1 })).isError);
            again.replica = replicasOf(again.sessionId)[0];
            assert.ok(again.replica && again.replica !== victim, `the new session landed on ${again.replica}`);
        }
        replicas[victim].gone = true;
    }));

    test('SIGTERM of a replica under load drains it: no failed call for the other clients', () => withLogs(async () => {
        const live = clients.filter(c => c.stateless || (c.replica && !replicas[c.replica].gone));
        const victim = live.find(c => !c.stateless).replica;
        const ofVictim = live.filter(c => c.replica === victim);
        const others = live.filter(c => c.replica !== victim);
        assert.ok(others.length > 0, 'a client on the other live replica');
        const stop = { done: false };
        const loops = others.map(client => callLoop(client, stop));
        // Long calls, so that some are in flight when the signal arrives: they must finish.
        const inFlight = ofVictim.map(client => client.call('test_wait', { ms: 1500 }));
        await sleep(300);
        process.kill(replicas[victim].daemon.pid, 'SIGTERM');
        await eventually(() => replicas[victim].daemon.stderr().includes('draining'), { timeoutMs: 2000 });
        const newcomers = newcomerLoop(stop, 'during-drain');
        await proxy.waitForState(victim, /^(DOWN|NOLB|MAINT)/, 10_000);
        const finished = await Promise.all(inFlight.map(call => call.catch(error => ({ error }))));
        for (const result of finished)
            assert.ok(!result.error && !result.isError, `a call in flight on the draining replica was cut: ${result.error?.message}`);
        assert.ok(await eventually(() => replicas[victim].daemon.exitStatus(), { timeoutMs: DRAIN_SECONDS * 1000 }),
                  'the drained replica exits');
        assert.deepEqual(replicas[victim].daemon.exitStatus(), { code: 0, signal: null });
        await sleep(300);
        stop.done = true;
        const outcomes = await Promise.all(loops);
        const newcomerOutcome = await newcomers;
        const failed = outcomes.reduce((sum, o) => sum + o.failed.length, 0);
        console.log(`failed calls during a replica drain among the other clients: ${failed} of ${outcomes.reduce((s, o) => s + o.ok + o.failed.length, 0)}; `
                    + `new sessions opened meanwhile: ${newcomerOutcome.ok} ok, ${newcomerOutcome.failed.length} failed`);
        assert.deepEqual(outcomes.map(o => o.failed), others.map(() => []));
        assert.deepEqual(newcomerOutcome.failed, [], 'a new session failed while a replica drained');
        assert.ok(newcomerOutcome.ok > 0 && !newcomerOutcome.landedOn.includes(victim));
        replicas[victim].gone = true;
    }));

    test('the audit logs of the replicas that were not killed verify', () => withLogs(async () => {
        for (const name of REPLICAS) {
            const { daemon, auditLog } = replicas[name];
            if (daemon.exitStatus()?.signal === 'SIGKILL')
                continue;
            const verdict = verify(auditLog);
            assert.equal(verdict.status, 0, `${name}: ${verdict.stdout}${verdict.stderr}`);
            assert.ok(records(auditLog).filter(r => r.event === 'call_finished').length > 0);
        }
    }));
});
