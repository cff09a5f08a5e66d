// Background jobs, per-session workspaces and output handles through the official TypeScript SDK
// client over Streamable HTTP: a 90-second job outlives a client whose requests time out after
// 60 s and is read to its end; an interactive Python session keeps its state across
// job_write_stdin calls; two sessions with SANDBOX_WORKSPACE=session see neither each other's
// files nor jobs nor handles, whatever ids, handles or paths they try; truncated output is read
// through its handle until the handle expires; the caps refuse the job after the limit; a
// session's end kills its jobs. Jobs switch to host uids, so this needs root (CI runs as root);
// without it the suite skips, saying so. The pool is 123000-123031, apart from the other suites.
import { describe, test, before, after } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, sleep, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';
import { processesOf } from './lib/processes.mjs';

const UID_BASE = 123000;
const UID_COUNT = 32;
const HANDLE_SECONDS = 3;
const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
// The clients' request timeout, a third of the SDK's default (60 s) to keep the run short, and
// the daemon's call limit (BASH_TIMEOUT_MAX below): the long background job outlives both.
const REQUEST_TIMEOUT_MS = 20_000;
const CALL_LIMIT_SECONDS = 10;
const LONG_JOB_SECONDS = 30;

describe('background jobs, session workspaces, output handles', needsRoot, () => {
    let daemon;
    let sandbox;
    const clients = [];

    // A session of its own: an SDK client with a Streamable HTTP session.
    async function session(name) {
        const client = new Client({ name, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url));
        await client.connect(transport);
        // Listing makes the SDK check every structuredContent against its outputSchema.
        await client.listTools();
        clients.push(client);
        const call = (tool, args) =>
            client.callTool({ name: tool, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
        const ok = async (tool, args) => {
            const result = await call(tool, args);
            assert.ok(!result.isError, `${tool} ${JSON.stringify(args)} failed: ${result.content?.[0]?.text}`);
            assert.equal(result.structuredContent.success, true);
            return result.structuredContent;
        };
        const refused = async (tool, args, pattern) => {
            const result = await call(tool, args);
            assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)} should fail: ${result.content?.[0]?.text}`);
            assert.match(result.structuredContent.error, pattern);
            return result.structuredContent.error;
        };
        // Reads a job's output from `offset` until `done(text)` or the job's end.
        const readOutput = async (jobId, done = () => false, timeoutMs = 20_000) => {
            let text = '';
            let offset = 0;
            const deadline = Date.now() + timeoutMs;
            for (;;) {
                const window = await ok('job_output', { job_id: jobId, offset, limit: 4096 });
                assert.equal(window.offset, offset);
                text += window.output;
                offset = window.next_offset;
                if (window.complete || done(text))
                    return { text, window };
                if (Date.now() > deadline)
                    throw new Error(`job output not done within ${timeoutMs} ms: ${JSON.stringify(text)}`);
                if (window.next_offset === window.total_bytes)
                    await sleep(250);
            }
        };
        return { client, transport, call, ok, refused, readOutput };
    }

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-jobs-'));
        chmodSync(sandbox, 0o755);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT,
                SANDBOX_WORKSPACE: 'session', SANDBOX_OUTPUT_CAP_KB: 1,
                OUTPUT_HANDLE_SECONDS: HANDLE_SECONDS, JOB_MAX_PER_SESSION: 2, JOB_MAX_TOTAL: 3,
                BASH_ALLOWED_COMMANDS: 'echo,sleep,cat,ls',
                BASH_TIMEOUT_DEFAULT: CALL_LIMIT_SECONDS, BASH_TIMEOUT_MAX: CALL_LIMIT_SECONDS,
                PYTHON_TIMEOUT_DEFAULT: CALL_LIMIT_SECONDS, PYTHON_TIMEOUT_MAX: CALL_LIMIT_SECONDS,
            },
        });
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    // Started first, read to its end by the last test: the other tests run meanwhile.
    let longJob;

    test(`a ${LONG_JOB_SECONDS}-second job starts in the background and returns its id at once`, () => withDiagnostics(daemon, async () => {
        const s = await session('long');
        const started = Date.now();
        const ticks = Array.from({ length: LONG_JOB_SECONDS / 10 }, (_, i) => i + 1).join(' ');
        const job = await s.ok('system_run_command', {
            command: `for i in ${ticks}; do echo tick $i; sleep 10; done; echo finished`,
            background: true,
        });
        assert.ok(Date.now() - started < 5000, 'background returns at once');
        assert.match(job.job_id, /^job_[0-9a-f]{32}$/);
        assert.equal(job.status, 'running');
        assert.equal(job.timeout_seconds, 3600);
        longJob = { s, id: job.job_id, started };
    }));

    test('yield_ms returns the usual result of a quick job and the id of a slow one', () => withDiagnostics(daemon, async () => {
        const s = await session('yield');
        const quick = await s.ok('system_run_command', { command: 'echo quick', yield_ms: 5000 });
        assert.equal(quick.stdout, 'quick\n');
        assert.equal(quick.exit_code, 0);
        assert.equal(quick.job_id, undefined);
        const slow = await s.ok('system_run_command', { command: 'sleep 2; echo late', yield_ms: 300 });
        assert.equal(slow.status, 'running');
        const { text, window } = await s.readOutput(slow.job_id);
        assert.equal(text, 'late\n');
        assert.equal(window.complete, true);
        const status = await s.ok('job_status', { job_id: slow.job_id });
        assert.equal(status.state, 'exited');
        assert.equal(status.result.exit_code, 0);
        assert.equal(status.result.success, true);
    }));

    test('an interactive Python session keeps its state across job_write_stdin calls', () => withDiagnostics(daemon, async () => {
        const s = await session('repl');
        const repl = await s.ok('system_run_python', { code: 'base = 40', interactive: true });
        assert.equal(repl.interactive, true);
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: 'x = base + 1\n' });
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: 'def twice(v):\n    return 2 * v\n\n' });
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: 'print("answer", x + 1, twice(x))\n' });
        const { text } = await s.readOutput(repl.job_id, out => out.includes('answer'));
        assert.match(text, /answer 42 82/);
        // Expression values are echoed, as in any REPL.
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: 'x * 100\n' });
        await s.readOutput(repl.job_id, out => out.includes('4100'));
        // The REPL works in the session's workspace: the file tools of the session see its files.
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: 'open("from-repl.txt", "w").write("made in the repl")\n' });
        const file = await eventually(async () => {
            const result = await s.call('file_read', { path: 'from-repl.txt' });
            return result.isError ? null : result.structuredContent;
        }, { timeoutMs: 10_000, intervalMs: 100 });
        assert.equal(file?.content, 'made in the repl');
        const list = await s.ok('job_list', {});
        assert.ok(list.jobs.some(job => job.job_id === repl.job_id && job.state === 'running'));
        // End of input ends the interpreter.
        await s.ok('job_write_stdin', { job_id: repl.job_id, data: '', close: true });
        const ended = await eventually(async () => {
            const status = await s.ok('job_status', { job_id: repl.job_id });
            return status.state !== 'running' && status;
        }, { timeoutMs: 10_000, intervalMs: 100 });
        assert.equal(ended.state, 'exited');
        assert.equal(ended.result.exit_code, 0);
        await s.refused('job_write_stdin', { job_id: repl.job_id, data: 'x\n' }, /has ended/);
    }));

    test('a job not started interactive refuses input', () => withDiagnostics(daemon, async () => {
        const s = await session('not-interactive');
        const job = await s.ok('system_run_command', { command: 'sleep 5', background: true });
        await s.refused('job_write_stdin', { job_id: job.job_id, data: 'x\n' }, /not started with interactive: true/);
        const killed = await s.ok('job_kill', { job_id: job.job_id });
        assert.equal(killed.state, 'killed');
        // An interactive command reads what job_write_stdin sends, after its command.
        const cat = await s.ok('system_run_command', { command: 'cat', interactive: true });
        await s.ok('job_write_stdin', { job_id: cat.job_id, data: 'echoed back\n', close: true });
        const { text } = await s.readOutput(cat.job_id);
        assert.equal(text, 'echoed back\n');
    }));

    test('two sessions see neither each other\'s files, resources, jobs nor handles', () => withDiagnostics(daemon, async () => {
        const a = await session('alice');
        const b = await session('bob');
        await a.ok('file_write', { path: 'secret.txt', content: 'alice only' });
        await b.refused('file_read', { path: 'secret.txt' }, /not found|does not exist|no such/i);
        assert.deepEqual((await b.ok('file_list', { path: '/' })).entries, []);
        const aResources = await a.client.listResources();
        assert.ok(aResources.resources.some(r => r.uri === 'file:///secret.txt'));
        const bResources = await b.client.listResources();
        assert.ok(!bResources.resources.some(r => r.uri === 'file:///secret.txt'));
        await assert.rejects(b.client.readResource({ uri: 'file:///secret.txt' }));
        assert.equal((await a.client.readResource({ uri: 'file:///secret.txt' })).contents[0].text, 'alice only');

        // Bob's jobs run in his own workspace.
        const bobCat = (await b.call('system_run_command', { command: 'ls -a; cat secret.txt' })).structuredContent;
        assert.equal(bobCat.success, false);
        assert.notEqual(bobCat.exit_code, 0);
        assert.doesNotMatch(bobCat.stdout, /alice only|secret/);
        const aliceCat = await a.ok('system_run_command', { command: 'cat secret.txt' });
        assert.equal(aliceCat.stdout, 'alice only');

        // Path tricks: relative escapes, and the real host path of Alice's workspace, which the
        // attacker is assumed to know.
        const sessionsDir = hostWorkspace(sandbox, 'sessions');
        const names = readdirSync(sessionsDir);
        const alicePath = names.map(name => join(sessionsDir, name)).find(path => existsSync(join(path, 'secret.txt')));
        assert.ok(alicePath, 'alice has a workspace of her own under sessions/');
        // A link Bob makes to Alice's real path leads nowhere, for his file tools or his jobs.
        await b.ok('system_run_python', { code: `import os\nos.symlink(${JSON.stringify(alicePath + '/secret.txt')}, 'link.txt')\nos.symlink(${JSON.stringify(alicePath)}, 'dir.txt')` });
        await b.refused('file_read', { path: 'link.txt' }, /./);
        await b.refused('file_read', { path: 'dir.txt/secret.txt' }, /./);
        const viaLink = (await b.call('system_run_command', { command: 'cat link.txt dir.txt/secret.txt' })).structuredContent;
        assert.doesNotMatch(viaLink.stdout, /alice only/);
        for (const path of ['../secret.txt', `../${alicePath.split('/').pop()}/secret.txt`, `${alicePath}/secret.txt`, '/../../secret.txt'])
            await b.refused('file_read', { path }, /./);
        const probe = await b.ok('system_run_python', {
            code: [
                'import os',
                `targets = [${JSON.stringify(alicePath + '/secret.txt')}, "../secret.txt", ${JSON.stringify(sessionsDir)}, "/proc/1/root" + ${JSON.stringify(alicePath + '/secret.txt')}]`,
                'leaks = []',
                'for t in targets:',
                '    try:',
                '        leaks.append((t, open(t).read() if not os.path.isdir(t) else os.listdir(t)))',
                '    except OSError:',
                '        pass',
                '_ = leaks',
            ].join('\n'),
        });
        assert.deepEqual(probe.result, [], `bob reached alice's files: ${JSON.stringify(probe.result)}`);

        // Jobs: Alice's id means nothing to Bob, for every job tool.
        const aliceJob = await a.ok('system_run_python', { code: 'import sys\nfor line in sys.stdin: print(line)', interactive: true });
        for (const tool of ['job_status', 'job_output', 'job_kill'])
            await b.refused(tool, { job_id: aliceJob.job_id }, /^no such job/);
        await b.refused('job_write_stdin', { job_id: aliceJob.job_id, data: 'injected\n' }, /^no such job/);
        assert.deepEqual((await b.ok('job_list', {})).jobs, []);
        // A guessed id of the right shape is no better.
        await b.refused('job_status', { job_id: 'job_' + '0'.repeat(32) }, /^no such job/);
        const aliceStatus = await a.ok('job_status', { job_id: aliceJob.job_id });
        assert.equal(aliceStatus.state, 'running', 'bob\'s job_kill left alice\'s job alone');
        await a.ok('job_write_stdin', { job_id: aliceJob.job_id, data: 'hello\n', close: true });
        const { text } = await a.readOutput(aliceJob.job_id);
        assert.doesNotMatch(text, /injected/);
        assert.match(text, /hello/);

        // Handles: Alice's truncated output is hers alone.
        const big = await a.ok('system_run_python', { code: 'for i in range(500): print("line", i)' });
        assert.equal(big.truncated, true);
        assert.match(big.stdout_handle, /^out_[0-9a-f]{32}$/);
        assert.match(big.truncation_note, /output_read/);
        await b.refused('output_read', { handle: big.stdout_handle }, /^no such output handle/);
    }));

    test('output_read returns a truncated output whole, then the handle expires', () => withDiagnostics(daemon, async () => {
        const s = await session('handles');
        const expected = Array.from({ length: 500 }, (_, i) => `line ${i}\n`).join('');
        const big = await s.ok('system_run_python', { code: 'for i in range(500): print("line", i)' });
        assert.equal(big.truncated, true);
        assert.ok(big.output.length < expected.length);
        let text = '';
        let offset = 0;
        for (;;) {
            const window = await s.ok('output_read', { handle: big.stdout_handle, offset, length: 1000 });
            text += window.output;
            offset = window.next_offset;
            if (window.complete)
                break;
        }
        assert.equal(text, expected);
        await s.refused('output_read', { handle: big.stdout_handle, offset: expected.length + 1 }, /beyond/);
        await sleep(HANDLE_SECONDS * 1000 + 500);
        await s.refused('output_read', { handle: big.stdout_handle }, /has expired/);
        // The complete copies are gone with their handles.
        const spill = readdirSync(join(sandbox, 'spill'));
        assert.ok(!spill.some(name => name.endsWith('.stdout')), `spill files left: ${spill}`);
    }));

    test('the caps refuse the job after the limit with a clear error', () => withDiagnostics(daemon, async () => {
        const s = await session('caps');
        const first = await s.ok('system_run_command', { command: 'sleep 30', background: true });
        const second = await s.ok('system_run_command', { command: 'sleep 30', background: true });
        await s.refused('system_run_command', { command: 'sleep 30', background: true },
                        /already runs 2 background jobs.*JOB_MAX_PER_SESSION/);
        // The long job of another session makes three in all: the server's cap.
        const other = await session('caps-other');
        await other.refused('system_run_python', { code: 'pass', background: true },
                            /already runs 3 background jobs.*JOB_MAX_TOTAL/);
        await s.ok('job_kill', { job_id: first.job_id });
        await other.ok('system_run_command', { command: 'echo room again', background: true });
        await s.ok('job_kill', { job_id: second.job_id });
    }));

    test('a session\'s end kills its jobs', () => withDiagnostics(daemon, async () => {
        const s = await session('ending');
        const job = await s.ok('system_run_command', { command: 'cat /proc/self/uid_map; sleep 60', background: true });
        const { text } = await s.readOutput(job.job_id, out => /\d+\s+\d+\s+\d+/.test(out));
        const uid = Number(text.trim().split(/\s+/)[1]);
        assert.ok(uid >= UID_BASE && uid < UID_BASE + UID_COUNT, `job uid ${uid}`);
        assert.ok(processesOf(uid).length > 0);
        await s.transport.terminateSession();
        const gone = await eventually(() => processesOf(uid).length === 0, { timeoutMs: 5000, intervalMs: 50 });
        assert.ok(gone, `processes of uid ${uid} survived the session`);
    }));

    test(`the ${LONG_JOB_SECONDS}-second job survived the ${REQUEST_TIMEOUT_MS / 1000}-second request timeout and the ${CALL_LIMIT_SECONDS}-second call limit and is read to its end`, () => withDiagnostics(daemon, async () => {
        assert.ok(longJob, 'the long job started');
        const { s, id, started } = longJob;
        const { text, window } = await s.readOutput(id, () => false, (LONG_JOB_SECONDS + 30) * 1000);
        assert.ok(Date.now() - started >= LONG_JOB_SECONDS * 1000 - 1000);
        assert.equal(window.complete, true);
        const ticks = Array.from({ length: LONG_JOB_SECONDS / 10 }, (_, i) => `tick ${i + 1}\n`).join('');
        assert.equal(text, `${ticks}finished\n`);
        const status = await s.ok('job_status', { job_id: id });
        assert.equal(status.state, 'exited');
        assert.equal(status.result.exit_code, 0);
        assert.ok(status.elapsed_ms >= LONG_JOB_SECONDS * 1000 - 1000);
    }));
});

describe('jobs kept for reconnection (JOB_KEEP_SECONDS)', needsRoot, () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
    let daemon;
    let sandbox;
    let keys;

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-jobs-keep-'));
        chmodSync(sandbox, 0o755);
        keys = mkdtempSync(join(tmpdir(), 'cmcp-jobs-principals-'));
        const principals = join(keys, 'principals');
        const digest = text => createHash('sha256').update(text).digest('hex');
        writeFileSync(principals, `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE + UID_COUNT, SANDBOX_UID_COUNT: 8,
                JOB_KEEP_SECONDS: 30, BASH_ALLOWED_COMMANDS: 'echo,sleep', MCP_PRINCIPALS_FILE: principals,
            },
        });
    });

    after(async () => {
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
        if (keys)
            rmSync(keys, { recursive: true, force: true });
    });

    // A 2025 session of `who` (alice unless told).
    const connect = async (name, who = 'alice') => {
        const client = new Client({ name, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: { authorization: `Bearer ${tokens[who]}` } } });
        await client.connect(transport);
        await client.listTools();
        const call = async (tool, args) => (await client.callTool({ name: tool, arguments: args })).structuredContent;
        return { client, transport, call };
    };

    test('a new session takes over a job of an ended session by its id, and only then', () => withDiagnostics(daemon, async () => {
        const first = await connect('first');
        const job = await first.call('system_run_command', { command: 'echo before; sleep 2; echo after', background: true });
        assert.equal(job.success, true);
        const thief = await connect('thief');
        // While its session lives, nobody else can take it.
        assert.match((await thief.call('job_attach', { job_id: job.job_id })).error, /^no such job/);
        await first.transport.terminateSession();
        await first.client.close();
        const second = await connect('second');
        assert.match((await second.call('job_status', { job_id: job.job_id })).error, /^no such job/);
        const attached = await second.call('job_attach', { job_id: job.job_id });
        assert.equal(attached.success, true, JSON.stringify(attached));
        assert.equal(attached.state, 'running');
        // Taken once: the thief is too late.
        assert.match((await thief.call('job_attach', { job_id: job.job_id })).error, /^no such job/);
        const done = await eventually(async () => {
            const status = await second.call('job_status', { job_id: job.job_id });
            return status.state !== 'running' && status;
        }, { timeoutMs: 10_000, intervalMs: 100 });
        assert.equal(done.state, 'exited');
        const output = await second.call('job_output', { job_id: job.job_id });
        assert.equal(output.output, 'before\nafter\n');
        await second.client.close();
        await thief.client.close();
    }));

    test("another principal cannot take over a detached job, even with its id; its own principal can", () => withDiagnostics(daemon, async () => {
        const first = await connect('alice-first');
        const job = await first.call('system_run_command', { command: 'sleep 3', background: true });
        assert.equal(job.success, true, JSON.stringify(job));
        await first.transport.terminateSession();
        await first.client.close();
        const bob = await connect('bob', 'bob');
        for (const tool of ['job_attach', 'job_status', 'job_kill'])
            assert.match((await bob.call(tool, { job_id: job.job_id })).error, /^no such job/, tool);
        const modern = await fetch(daemon.url, { method: 'POST', headers: {
            'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${tokens.bob}`,
            'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'job_attach',
            'mcp-param-handle': job.job_id }, // the tool marks job_id with x-mcp-header
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'job_attach', arguments: { job_id: job.job_id },
                _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }) });
        const text = await modern.text();
        assert.match(text, /no such job/, 'a stateless request of bob cannot take it either');
        const again = await connect('alice-again');
        const attached = await again.call('job_attach', { job_id: job.job_id });
        assert.equal(attached.success, true, JSON.stringify(attached));
        await again.call('job_kill', { job_id: job.job_id });
        await again.client.close();
        await bob.client.close();
    }));
});
