// The system tools through the official TypeScript SDK client over Streamable HTTP:
// system_run_command with the default allow-list and its bypass list, system_run_python with
// its result channel, memory limit and partial output, system_env_var without the daemon's
// secrets, the workspace shared with the file tools, progress streaming, cancellation, and many
// calls at once. Jobs switch to the uid pool, so the job tests need root (CI runs as root);
// without it they skip, saying so. The pool is 120000-120063, apart from the other tests' uids.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, SSEClientTransport, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';
import { processesOf } from './lib/processes.mjs';

// CMCP_TEST_CALL_TEMPLATES=true runs every case again with calls forked from templates
// (JOB_CALL_TEMPLATES), under a pool of its own so that both runs may go in parallel.
const callTemplates = process.env.CMCP_TEST_CALL_TEMPLATES === 'true';
const UID_BASE = callTemplates ? 120700 : 120000;
const UID_COUNT = 64;
const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
// How soon a cancelled or abandoned job must be gone (100 ms); a sanitizer build of the daemon
// answers several times slower, so its pass gets more room.
// Killed at once, not at the job's own end (30 s): the bound leaves room for a loaded machine,
// which the tests must not mistake for a slow kill (speed is the benchmarks' business).
const killBoundMs = 1000;

// Python code that prints the host uid its job runs as (the second field of its uid map; inside,
// every job is 1000). Each running job has a uid of its own, so the uid names the job; the pool
// also keeps pre-started jobs waiting (PYTHON_WARM_JOBS), under other uids.
const printHostUid = "print('host-uid', open('/proc/self/uid_map').read().split()[1], flush=True)\n";
const hostUidIn = text => Number(/host-uid (\d+)/.exec(text)?.[1]);

describe('system tools', () => {
    let daemon;
    let client;
    let sandbox;
    let workspace;
    const secret = 'sk-test-secret-never-in-a-job';

    const call = (name, args, options) => client.callTool({ name, arguments: args }, undefined, options);
    const command = async (args, options) => {
        const result = await call('system_run_command', typeof args === 'string' ? { command: args } : args, options);
        assert.ok(!result.isError, `command failed to run: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };
    const python = async (args, options) => {
        const result = await call('system_run_python', typeof args === 'string' ? { code: args } : args, options);
        assert.ok(!result.isError, `python failed to run: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-system-'));
        // mkdtemp makes it 0700: the jobs' uids must be able to pass through to the workspace.
        chmodSync(sandbox, 0o755);
        // A secret of the daemon's environment, which no job and no answer may show.
        process.env.OPENAI_API_KEY = secret;
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT,
                PYTHON_MEMORY_LIMIT: 64, BASH_TIMEOUT_DEFAULT: 5, BASH_TIMEOUT_MAX: 5, PYTHON_TIMEOUT_DEFAULT: 5, PYTHON_TIMEOUT_MAX: 5,
                JOB_CALL_TEMPLATES: callTemplates,
            },
        });
        workspace = hostWorkspace(sandbox);
        delete process.env.OPENAI_API_KEY;
        client = new Client({ name: 'system-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        // Listing makes the SDK check every structuredContent against its outputSchema.
        await client.listTools();
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('the three tools are listed with their schemas', () => withDiagnostics(daemon, async () => {
        const { tools } = await client.listTools();
        const system = tools.filter(tool => tool.name.startsWith('system_'));
        assert.deepEqual(system.map(tool => tool.name).sort(), ['system_env_var', 'system_run_command', 'system_run_python']);
        for (const tool of system)
            assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
        const run = system.find(tool => tool.name === 'system_run_command');
        assert.deepEqual(run.inputSchema.required, ['command']);
        assert.ok(run.inputSchema.properties.working_dir && run.inputSchema.properties.timeout);
    }));

    test('system_run_command runs allowed programs in the workspace', needsRoot, () => withDiagnostics(daemon, async () => {
        const hi = await command('echo hi');
        assert.equal(hi.stdout, 'hi\n');
        assert.equal(hi.stderr, '');
        assert.equal(hi.exit_code, 0);
        assert.equal(hi.success, true);
        assert.equal(typeof hi.wall_ms, 'number');
        assert.ok(hi.layers.includes('identity') && hi.layers.includes('seccomp'), hi.layers.join());
        assert.equal(hi.timed_out, false);

        assert.equal((await command('pwd')).stdout, '/workspace\n');
        const made = await command('mkdir -p data/sub && touch data/sub/a.txt && echo "needle here" > data/b.txt && ls data && grep -r needle . && cat data/b.txt');
        assert.equal(made.success, true, made.stderr);
        assert.equal(made.stdout, 'b.txt\nsub\n./data/b.txt:needle here\nneedle here\n');
        const found = await command('find data -name "*.txt"');
        assert.deepEqual(found.stdout.split('\n').filter(Boolean).sort(), ['data/b.txt', 'data/sub/a.txt']);
        const inSub = await command({ command: 'pwd; ls', working_dir: 'data/sub' });
        assert.equal(inSub.stdout, '/workspace/data/sub\na.txt\n');
        // The command comes to the job on its stdin; the command itself reads /dev/null.
        assert.equal((await command('cat; echo after')).stdout, 'after\n');
        assert.equal((await command({ command: 'cat; echo after', working_dir: 'data' })).stdout, 'after\n');
        const failing = await command('ls missing-file');
        assert.equal(failing.success, false);
        assert.equal(failing.exit_code, 2);
        assert.match(failing.stderr, /missing-file/);
    }));

    test('system_run_command refuses bad arguments with a clear error', needsRoot, () => withDiagnostics(daemon, async () => {
        const refused = async (args, pattern) => {
            const result = await call('system_run_command', args);
            assert.equal(result.isError, true, JSON.stringify(args));
            // Schema violations are answered by the MCP core, as text only.
            assert.match(result.structuredContent?.error ?? result.content[0].text, pattern);
        };
        await refused({ command: '' }, /command is empty/);
        await refused({ command: 'ls', working_dir: '../..' }, /leaves the workspace/);
        await refused({ command: 'ls', working_dir: 'no/such/dir' }, /working_dir no\/such\/dir.*No such file/);
        await refused({ command: 'ls', timeout: 0 }, /timeout/);
    }));

    test('the bypass list is refused, naming the program or construct, and nothing runs', needsRoot, () => withDiagnostics(daemon, async () => {
        writeFileSync(join(workspace, 'script.txt'), 'id\n');
        const bypasses = [
            'ls; id', 'ls && id', 'echo $(id)', 'echo `id`', 'ls\nid', 'find . -exec id \\;',
            '/usr/bin/id', 'env id', 'xargs id </dev/null', 'bash -c id', "python3 -c 'import os; os.system(\"id\")'",
            'x=id; $x', "i''d", '"id"', '/usr/bin/i[d]', 'eval id', 'exec id', 'source script.txt', '. ./script.txt',
            'PATH=/usr/bin id', 'command id', 'ls | id', 'ls || id', '{ id; }', '(id)', 'cat <(id)',
        ];
        for (const bypass of bypasses) {
            const result = await call('system_run_command', { command: bypass });
            const text = JSON.stringify(result);
            assert.ok(!/uid=\d+/.test(text), `${JSON.stringify(bypass)} ran id: ${text}`);
            assert.equal(result.isError, true, `${JSON.stringify(bypass)} was not refused: ${text}`);
            assert.match(result.structuredContent.error, /\w/, bypass);
        }
        const named = await call('system_run_command', { command: 'ls; id' });
        assert.match(named.structuredContent.error, /\bid\b/);
    }));

    test('system_run_python: output, error, result and one namespace', needsRoot, () => withDiagnostics(daemon, async () => {
        const first = await python("import math\ndef area(r):\n    return math.pi * r * r\nprint('Hello, world!')\n_ = {'area': area(1), 'list': [1, 'two', None]}");
        assert.equal(first.output, 'Hello, world!\n');
        assert.equal(first.error, '');
        assert.deepEqual(first.result, { area: Math.PI, list: [1, 'two', null] });
        assert.equal(first.result_repr, false);
        assert.equal(first.success, true);

        const noResult = await python('x = 1');
        assert.equal(noResult.result, null);
        const repr = await python('_ = {1, 2}');
        assert.equal(repr.result, '{1, 2}');
        assert.equal(repr.result_repr, true);

        const raised = await python("print('partial')\nraise ValueError('boom')");
        assert.equal(raised.success, false);
        assert.equal(raised.output, 'partial\n');
        assert.match(raised.error, /File "<code>", line 2[\s\S]*ValueError: boom/);
        assert.doesNotMatch(raised.error, /_cmcp_run/);
        assert.equal((await python('def f(:\n  pass')).success, false);

        const exited = await python("import sys\nprint('before exit')\n_ = 5\nsys.exit(3)");
        assert.equal(exited.output, 'before exit\n');
        assert.equal(exited.exit_code, 3);
        assert.equal(exited.success, false);
        assert.equal(exited.result, 5);
        assert.equal((await python('import sys\nsys.exit(0)')).success, true);
        const hardExit = await python("import os\nprint('kept', end='')\nos._exit(4)");
        assert.equal(hardExit.output, 'kept');
        assert.equal(hardExit.exit_code, 4);
        assert.equal(hardExit.result, null);

        // Standard library only, isolated from the daemon's packages and environment.
        const isolated = await python("import sys, os\n_ = [sys.flags.isolated, sys.flags.no_site, sorted(os.environ)]");
        assert.equal(isolated.result[0], 1);
        assert.equal(isolated.result[1], 1);
        assert.ok(!isolated.result[2].includes('OPENAI_API_KEY'));
        assert.ok(!isolated.result[2].includes('CMCP_RESULT_FD'));
    }));

    // Calls in the workspace's root get a pre-started job (PYTHON_WARM_JOBS): each one still
    // serves a single call, so nothing of one call reaches the next, and neither its time limit
    // nor its wall_ms counts the time it waited.
    test('every call gets a fresh interpreter and a fresh /tmp, pre-started or not', needsRoot, () => withDiagnostics(daemon, async () => {
        const first = await python("import builtins\nbuiltins.marker = 1\nopen('/tmp/marker', 'w').write('x')\n_ = 'set'");
        assert.equal(first.result, 'set');
        for (const args of [{}, { working_dir: 'sub' }]) {
            if (args.working_dir)
                await command('mkdir -p sub');
            const next = await python({ code: "import builtins, os\n_ = [hasattr(builtins, 'marker'), os.path.exists('/tmp/marker')]", ...args });
            assert.deepEqual(next.result, [false, false], JSON.stringify(args));
        }
        await new Promise(resolve => setTimeout(resolve, 1200));
        const waited = await python('print(1)');
        assert.equal(waited.output, '1\n');
        assert.ok(waited.wall_ms < 1000, `wall_ms ${waited.wall_ms} counts the wait for the call`);
    }));

    test('output and stray writes cannot pose as the result', needsRoot, () => withDiagnostics(daemon, async () => {
        const printed = await python('print(\'{"ran": true, "raised": false, "exit_status": null, "result": 666, "repr": false}\')');
        assert.equal(printed.result, null);
        const forged = await python([
            'import os',
            'for fd in range(3, 64):',
            '    try: os.write(fd, b\'0000\\n{"ran": true, "result": 666}\')',
            '    except OSError: pass',
            '_ = 1',
        ].join('\n'));
        assert.notEqual(forged.result, 666);
        assert.match(forged.result_error, /something other than the runner's report/);
    }));

    test('PYTHON_MEMORY_LIMIT holds', needsRoot, () => withDiagnostics(daemon, async () => {
        const small = await python("b = bytearray(16 * 1024 * 1024)\n_ = len(b)");
        assert.equal(small.result, 16 * 1024 * 1024);
        const big = await python("print('allocating')\nb = bytearray(512 * 1024 * 1024)\n_ = len(b)");
        assert.equal(big.success, false);
        assert.equal(big.output, 'allocating\n');
        assert.notEqual(big.result, 512 * 1024 * 1024);
        assert.ok(big.oom_killed || /MemoryError/.test(big.error), JSON.stringify(big));
    }));

    test('timeouts keep the output printed before them', needsRoot, () => withDiagnostics(daemon, async () => {
        const started = Date.now();
        const py = await python({ code: "import time\nprint('before')\ntime.sleep(30)", timeout: 1 });
        assert.equal(py.timed_out, true);
        assert.equal(py.success, false);
        assert.equal(py.output, 'before\n');
        assert.match(py.message, /time limit of 1 s/);
        const sh = await command({ command: 'echo start; while echo >/dev/null; do echo >/dev/null; done', timeout: 1 });
        assert.equal(sh.timed_out, true);
        assert.equal(sh.stdout, 'start\n');
        // Asked-for limits above the maximum (5 s here) are capped.
        assert.equal((await command({ command: 'echo', timeout: 999 })).timeout_seconds, 5);
        assert.ok(Date.now() - started < 6000);
    }));

    test('one workspace for the file tools, commands and Python', needsRoot, () => withDiagnostics(daemon, async () => {
        const write = await call('file_write', { path: 'shared/from-files.txt', content: 'written by file_write\n' });
        assert.ok(!write.isError, write.content?.[0]?.text);
        assert.equal((await command('cat shared/from-files.txt')).stdout, 'written by file_write\n');
        const appended = await python("with open('shared/from-files.txt', 'a') as f:\n    f.write('appended by python\\n')\nopen('shared/from-python.txt', 'w').write('py')");
        assert.equal(appended.success, true, appended.error);
        assert.equal((await command({ command: 'cat from-files.txt from-python.txt', working_dir: 'shared' })).stdout,
                     'written by file_write\nappended by python\npy');
        await command('mkdir made && touch made/by-command.txt');
        const read = await call('file_read', { path: 'shared/from-python.txt' });
        assert.equal(read.structuredContent.content, 'py');
        const overwrite = await call('file_write', { path: 'made/by-command.txt', content: 'overwritten' });
        assert.ok(!overwrite.isError, overwrite.content?.[0]?.text);
        assert.ok(!(await call('file_write', { path: 'made/new.txt', content: 'x' })).isError);
        assert.ok(!(await call('file_delete', { path: 'made/by-command.txt' })).isError);
    }));

    test('system_env_var describes the jobs\' environment, never the daemon\'s secrets', needsRoot, () => withDiagnostics(daemon, async () => {
        const all = await call('system_env_var', {});
        assert.ok(!all.isError);
        const { variables } = all.structuredContent;
        assert.equal(variables.HOME, '/workspace');
        assert.equal(variables.PATH, '/cmcp/bin');
        assert.ok(!JSON.stringify(all).includes(secret));
        const home = await call('system_env_var', { var_name: 'HOME' });
        assert.equal(home.structuredContent.requested_var, '/workspace');
        for (const name of ['OPENAI_API_KEY', 'MCP_AUTH_TOKEN', 'SANDBOX_ROOT']) {
            const asked = await call('system_env_var', { var_name: name });
            assert.equal(asked.structuredContent.requested_var, null, name);
        }
        // What it describes is what a command sees.
        const env = await command('echo "$HOME|$PATH|$OPENAI_API_KEY"');
        assert.equal(env.stdout, '/workspace|/cmcp/bin|\n');
    }));

    test('no network: host listeners are out of reach', needsRoot, () => withDiagnostics(daemon, async () => {
        const server = createServer(socket => socket.end('HOST-REACHED'));
        await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address();
        try {
            const py = await python(`import socket\ntry:\n    socket.create_connection(('127.0.0.1', ${port}), timeout=2).recv(100)\n    print('reached')\nexcept OSError as e:\n    print('refused')`);
            assert.equal(py.output, 'refused\n');
            const sh = await command(`echo x > /dev/tcp/127.0.0.1/${port} && echo reached`);
            assert.doesNotMatch(sh.stdout, /reached/);
        } finally {
            server.close();
        }
    }));

    test('output streams as progress while the job runs', needsRoot, () => withDiagnostics(daemon, async () => {
        const progress = [];
        const started = Date.now();
        const result = await python("import time\nfor i in range(3):\n    print('line', i)\n    time.sleep(0.3)",
                                    { onprogress: p => progress.push({ ...p, at: Date.now() - started }) });
        assert.equal(result.output, 'line 0\nline 1\nline 2\n');
        const streamed = progress.map(p => p.message).join('\n');
        assert.equal(streamed, 'line 0\nline 1\nline 2');
        assert.ok(progress.length >= 2, JSON.stringify(progress));
        assert.ok(progress[0].at < 500, `the first line came after ${progress[0].at} ms`);
    }));

    test('cancellation kills the job at once', needsRoot, () => withDiagnostics(daemon, async () => {
        const controller = new AbortController();
        let uid;
        const pending = python({ code: `${printHostUid}import time\ntime.sleep(30)` },
                               { signal: controller.signal, onprogress: p => { uid = hostUidIn(p.message); controller.abort('test'); } });
        await assert.rejects(pending);
        const aborted = Date.now();
        assert.ok(uid >= UID_BASE && processesOf(uid).length > 0, `job uid ${uid}`);
        const gone = await eventually(() => processesOf(uid).length === 0, { timeoutMs: 2000, intervalMs: 5 });
        const elapsed = Date.now() - aborted;
        assert.ok(gone, `job processes still alive: ${processesOf(uid)}`);
        assert.ok(elapsed < killBoundMs, `the job took ${elapsed} ms to die`);
    }));

    // A legacy SSE client that goes away ends its session, and the session's calls with it.
    // (On Streamable HTTP a dropped POST stream is not a cancellation: the specification lets
    // the client resume it, so the job runs on until the session ends.)
    test('a client that disconnects takes its jobs with it at once', needsRoot, () => withDiagnostics(daemon, async () => {
        const leaving = new Client({ name: 'system-test-leaving', version: '1.0.0' });
        await leaving.connect(new SSEClientTransport(new URL(daemon.sseUrl)));
        let uid;
        leaving.callTool({ name: 'system_run_python', arguments: { code: `${printHostUid}import time\ntime.sleep(30)` } }, undefined,
                         { onprogress: p => { uid = hostUidIn(p.message); } }).catch(() => {});
        assert.ok(await eventually(() => uid, { timeoutMs: 5000, intervalMs: 5 }), 'the job did not start');
        assert.ok(processesOf(uid).length > 0);
        const left = Date.now();
        await leaving.close();
        const gone = await eventually(() => processesOf(uid).length === 0, { timeoutMs: 2000, intervalMs: 5 });
        const elapsed = Date.now() - left;
        assert.ok(gone, `job processes still alive: ${processesOf(uid)}`);
        assert.ok(elapsed < killBoundMs, `the job took ${elapsed} ms to die after the client left`);
    }));

    test('what a job leaves running dies with it', needsRoot, () => withDiagnostics(daemon, async () => {
        const result = await python(`${printHostUid}import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\n_ = 'parent done'`);
        assert.equal(result.result, 'parent done');
        const uid = hostUidIn(result.output);
        assert.ok(uid >= UID_BASE, result.output);
        assert.deepEqual(processesOf(uid), [], 'a daemonized child of the job survived it');
    }));

    test('many calls at once, each in its own jail, none waiting on another', needsRoot, () => withDiagnostics(daemon, async () => {
        const started = Date.now();
        const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
            python(`import os, time\ntime.sleep(1)\n_ = [${i}, os.getuid()]`)));
        const elapsed = Date.now() - started;
        results.forEach((result, i) => assert.deepEqual(result.result, [i, 1000]));
        assert.ok(elapsed < 4000, `12 one-second calls took ${elapsed} ms`);
        const commands = await Promise.all(Array.from({ length: 12 }, (_, i) => command(`echo ${i}`)));
        commands.forEach((result, i) => assert.equal(result.stdout, `${i}\n`));
    }));
});

describe('system_run_command with BASH_ALLOWED_COMMANDS=*', () => {
    let daemon;
    let client;
    let sandbox;

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-system-any-'));
        chmodSync(sandbox, 0o755);
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE + UID_COUNT, SANDBOX_UID_COUNT: 8, BASH_ALLOWED_COMMANDS: '*' },
        });
        client = new Client({ name: 'system-any-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('every program beneath /usr runs, still jailed', needsRoot, () => withDiagnostics(daemon, async () => {
        const run = async command => (await client.callTool({ name: 'system_run_command', arguments: { command } })).structuredContent;
        const id = await run('id -u; echo hi | wc -c; sh -c "echo nested"');
        assert.equal(id.stdout, '1000\n3\nnested\n', id.stderr);
        const contained = await run('cat /etc/shadow; ls /root; echo x > /usr/x');
        assert.equal(contained.stdout, '');
        assert.match(contained.stderr, /shadow: No such file/);
        assert.match(contained.stderr, /Read-only file system|Permission denied/);
    }));

    // A silent job still sends progress now and then: a client that resets its request timeout
    // on progress (12 s here) waits for a 14 s job instead of giving up. (Qt's coarse timers may
    // fire up to 5 % early, hence 9 s.)
    test('a long silent job keeps the client waiting with heartbeats', needsRoot, () => withDiagnostics(daemon, async () => {
        const beats = [];
        const started = Date.now();
        const result = await client.callTool({ name: 'system_run_command', arguments: { command: 'sleep 14; echo done' } }, undefined,
                                             { timeout: 12000, resetTimeoutOnProgress: true, onprogress: p => beats.push({ ...p, at: Date.now() - started }) });
        assert.equal(result.structuredContent.stdout, 'done\n');
        assert.ok(beats.length >= 1 && /^running for \d+ s$/.test(beats[0].message), JSON.stringify(beats));
        assert.ok(beats[0].at >= 9000 && beats[0].at < 12000, JSON.stringify(beats));
    }));
});

// A pool sized for the calls running at once serves them all: with templates, each template
// holds one uid and each idle cell the uid of its next call, and a cell is armed again only once
// its last call gave its uid back.
describe('a small uid pool', { skip: !callTemplates && 'runs with call templates (integration.system-templates)' }, () => {
    const SESSIONS = 8;
    const CALLS = 12;
    let daemon;
    let sandbox;

    before(async () => {
        if (!root)
            return;
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-system-pool-'));
        chmodSync(sandbox, 0o755);
        // The calls of every session, two templates, and an idle armed cell of each.
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: UID_BASE + UID_COUNT, SANDBOX_UID_COUNT: SESSIONS + 4 },
        });
    });

    after(async () => {
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    test(`${SESSIONS} sessions calling back to back are never refused a uid`, needsRoot, () => withDiagnostics(daemon, async () => {
        const clients = await Promise.all(Array.from({ length: SESSIONS }, async (_, i) => {
            const c = new Client({ name: `pool-${i}`, version: '1.0.0' });
            await c.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            return c;
        }));
        try {
            const refused = [];
            await Promise.all(clients.map(async c => {
                for (let i = 0; i < CALLS; ++i) {
                    const result = await c.callTool({ name: 'system_run_command', arguments: { command: 'echo hi' } });
                    if (result.isError || result.structuredContent?.stdout !== 'hi\n')
                        refused.push(result.content?.[0]?.text);
                }
            }));
            assert.deepEqual(refused, [], `${refused.length} of ${SESSIONS * CALLS} calls failed`);
        } finally {
            await Promise.all(clients.map(c => c.close().catch(() => {})));
        }
    }));
});
