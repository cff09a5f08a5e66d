// Removing a session's workspace cannot be turned against the host. Through tool calls only, a
// job does everything it can to make root's removal of its workspace reach outside it: the
// attack seen in the wild (a background job that outlives its session through job_attach,
// waits for the removal to begin, and swaps its directories for links to a host directory),
// and the tricks that would let a job place a host file or mount inside its workspace (hard
// links, bind mounts, renaming the workspace itself). The victim is a root-owned 0755
// directory outside SANDBOX_ROOT; every one of its files must survive. Jobs switch to host
// uids, so this needs root (CI runs as root); without it the suite skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, sleep, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const JOB_KEEP_SECONDS = 2;

describe('workspace removal never leaves the workspace', needsRoot, () => {
    let daemon;
    let scratch;
    let sandbox;
    let victim;

    // The victim's files, relative to it: each must still be there at the end of every test.
    const victimFiles = ['keep.txt', 'sub/keep.txt', 'sub/deeper/keep.txt'];
    function assertVictimIntact() {
        for (const file of victimFiles)
            assert.ok(existsSync(join(victim, file)), `the victim lost ${file}`);
    }
    const sessionsDirectory = () => join(sandbox, 'sessions');
    const workspaces = () => existsSync(sessionsDirectory()) ? readdirSync(sessionsDirectory()) : [];

    async function session(name) {
        const client = new Client({ name, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url));
        await client.connect(transport);
        await client.listTools();
        const call = async (tool, args) => (await client.callTool({ name: tool, arguments: args })).structuredContent;
        const end = async () => {
            await transport.terminateSession();
            await client.close();
        };
        return { call, end };
    }

    // Reads a job's output until `pattern` shows (bounded).
    async function outputUntil(s, jobId, pattern, timeoutMs = 60_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const output = await s.call('job_output', { job_id: jobId, offset: 0 });
            if (pattern.test(output.output ?? ''))
                return output.output;
            if (Date.now() > deadline)
                throw new Error(`job output without ${pattern} after ${timeoutMs} ms: ${JSON.stringify(output)}`);
            await sleep(200);
        }
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-removal-'));
        chmodSync(scratch, 0o755);
        victim = join(scratch, 'victim');
        mkdirSync(join(victim, 'sub', 'deeper'), { recursive: true, mode: 0o755 });
        for (const file of victimFiles)
            writeFileSync(join(victim, file), 'host data');
        sandbox = join(scratch, 'sandbox');
        mkdirSync(sandbox, { mode: 0o755 });
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: 125000, SANDBOX_UID_COUNT: 16,
                SANDBOX_WORKSPACE: 'session', JOB_KEEP_SECONDS, PYTHON_TIMEOUT_MAX: 60,
                // The removal of a plain tree by descriptors is what is attacked here: a
                // subvolume on the workspace volume goes in one ioctl, with nothing to follow.
                SANDBOX_WORKSPACE_QUOTA_MB: 0,
            },
        });
    });

    after(async () => {
        await daemon?.stop();
        if (scratch)
            rmSync(scratch, { recursive: true, force: true });
    });

    test('a job taken over by job_attach keeps its workspace while it runs; links it plants never lead the removal out', () => withDiagnostics(daemon, async () => {
        // The job fills its workspace, then watches for the removal to begin; the moment a file
        // disappears it swaps each of 24 directories for a link to the victim.
        const code = `
import os, time
A = '/workspace/t/A'
os.makedirs(A)
for i in range(30000):
    open(f'{A}/{i}', 'w').close()
for i in range(24):
    os.makedirs(f'/workspace/t/D{i:02}/x')
    open(f'/workspace/t/D{i:02}/x/f', 'w').close()
print('ready', flush=True)
deadline = time.time() + ${JOB_KEEP_SECONDS + 6}
while time.time() < deadline:
    if len(os.listdir(A)) < 30000:
        for i in range(24):
            d = f'/workspace/t/D{i:02}'
            try:
                os.rename(d, d + '.old')
                os.symlink(${JSON.stringify(victim)}, d)
            except OSError as error:
                print('swap failed', error, flush=True)
        print('swapped', flush=True)
        break
    time.sleep(0.05)
print('files', len(os.listdir(A)), flush=True)
time.sleep(600)
`;
        const first = await session('first');
        const job = await first.call('system_run_python', { code, background: true });
        assert.equal(job.success, true, JSON.stringify(job));
        await outputUntil(first, job.job_id, /ready/);
        assert.equal(workspaces().length, 1, 'the session has one workspace');
        const [workspace] = workspaces();
        await first.end();

        const second = await session('second');
        const attached = await second.call('job_attach', { job_id: job.job_id });
        assert.equal(attached.success, true, JSON.stringify(attached));
        // Well past the keep time: the workspace of the ended session stays, complete, while
        // the job that was taken over runs in it.
        await sleep((JOB_KEEP_SECONDS + 3) * 1000);
        assertVictimIntact();
        assert.ok(existsSync(join(sessionsDirectory(), workspace)), 'the running job\'s workspace was removed under it');
        assert.equal(readdirSync(join(sessionsDirectory(), workspace, 't', 'A')).length, 30000);
        const output = await outputUntil(second, job.job_id, /files 30000/, 40_000);
        assert.doesNotMatch(output, /swapped/);

        // Its end lets the workspace go, whatever the job left in it.
        assert.equal((await second.call('job_kill', { job_id: job.job_id })).success, true);
        const removed = await eventually(() => workspaces().length === 0, { timeoutMs: 20_000, intervalMs: 100 });
        assert.ok(removed, `the workspace is still there after its last job ended: ${workspaces()}`);
        assertVictimIntact();
        await second.end();
    }));

    test('a job can neither link a host file into its workspace, nor mount there, nor move its workspace', () => withDiagnostics(daemon, async () => {
        // Each attempt prints its outcome; every one must fail.
        const code = `
import ctypes, ctypes.util, errno, json, os
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = 'succeeded'
    except OSError as error:
        results[name] = errno.errorcode.get(error.errno, str(error.errno))
os.makedirs('/workspace/m')
attempt('hard link to a host file', lambda: os.link('/usr/bin/python3', '/workspace/hard'))
attempt('hard link to /etc/passwd', lambda: os.link('/etc/passwd', '/workspace/passwd'))
attempt('rename the workspace', lambda: os.rename('/workspace', '/workspace.moved'))
attempt('rename the workspace from inside', lambda: os.rename('/workspace/../workspace', '/moved'))
attempt('remove the workspace', lambda: os.rmdir('/workspace'))
libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
def call(name, result):
    if result != 0:
        raise OSError(ctypes.get_errno(), name)
attempt('bind mount', lambda: call('mount', libc.mount(b'/usr', b'/workspace/m', None, 4096, None)))
attempt('tmpfs mount', lambda: call('mount', libc.mount(b'none', b'/workspace/m', b'tmpfs', 0, None)))
attempt('new mount namespace', lambda: call('unshare', libc.unshare(0x00020000 | 0x10000000)))
print(json.dumps(results))
`;
        const s = await session('tricks');
        const result = await s.call('system_run_python', { code, timeout: 30 });
        assert.equal(result.success, true, JSON.stringify(result));
        const outcomes = JSON.parse(result.output);
        assert.equal(Object.keys(outcomes).length, 8, result.output);
        console.log(`inside the job: ${result.output.trim()}`);
        for (const [attack, outcome] of Object.entries(outcomes))
            assert.notEqual(outcome, 'succeeded', `${attack} succeeded inside a job`);
        const [workspace] = workspaces();
        assert.ok(workspace);
        await s.end();
        const removed = await eventually(() => !existsSync(join(sessionsDirectory(), workspace)), { timeoutMs: 20_000, intervalMs: 100 });
        assert.ok(removed, 'the ended session\'s workspace was not removed');
        assertVictimIntact();
    }));
});
