// Starts the real cmcpd for a test and guarantees it is gone afterwards.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const running = new Map(); // child -> its SANDBOX_ROOT
// Last resort: a test file that crashes or is interrupted must not leave a daemon behind.
process.on('exit', () => {
    for (const [child, sandboxRoot] of running) {
        try { child.kill('SIGKILL'); } catch { /* already gone */ }
        unmountVolume(sandboxRoot);
    }
});

// A daemon running as root mounts the workspace volume on <SANDBOX_ROOT>/volume (the quota is on
// by default) and unmounts it as it stops; one killed (SIGKILL) leaves it mounted, and then
// nothing could remove the directory: it is unmounted (lazily) once the daemon is gone.
function unmountVolume(sandboxRoot) {
    const mount = join(sandboxRoot, 'volume');
    try {
        if (statSync(mount).dev !== statSync(sandboxRoot).dev)
            execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
    } catch { /* not mounted, or already gone */ }
}

// The shared workspace (or with `name` 'sessions', the sessions' directory) on the host while a
// daemon runs with SANDBOX_ROOT `sandboxRoot`: on the workspace volume when it is mounted, else
// the plain directory.
export function hostWorkspace(sandboxRoot, name = 'workspace') {
    const onVolume = join(sandboxRoot, 'volume', name);
    return existsSync(join(sandboxRoot, 'volume', 'workspace')) ? onVolume : join(sandboxRoot, name);
}

const pdeathsigWrapper = ['/usr/bin/setpriv', '/bin/setpriv'].find(path => existsSync(path));

export function cmcpdPath() {
    const path = process.env.CMCPD;
    if (!path)
        throw new Error('set CMCPD to the cmcpd binary (ctest does this)');
    return path;
}

// The test build of the daemon, cmcpd with the conformance fixtures (the test tools, resources
// and prompts, test_wait among them): the shipped cmcpd has none.
export function conformanceDaemonPath() {
    const path = process.env.CMCPD_CONFORMANCE;
    if (!path)
        throw new Error('set CMCPD_CONFORMANCE to the cmcpd-conformance binary (ctest does this)');
    return path;
}

// A private working directory, so no volume/config/custom.env of the caller leaks into the daemon.
export function scratchDir() {
    return mkdtempSync(join(tmpdir(), 'cmcp-int-'));
}

// Removes the scratch working directory of a daemon a client started over stdio, once that
// process (`pid`) is gone: until then it may still write there, or have its workspace volume
// mounted at the default SANDBOX_ROOT inside. One still running after `timeoutMs` is killed
// first. True when it ended by itself.
export async function removeStdioScratch(pid, cwd, { timeoutMs = 5000 } = {}) {
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const ended = !pid || await eventually(() => !alive(), { timeoutMs });
    if (!ended) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
        await eventually(() => !alive(), { timeoutMs: 2000 });
    }
    unmountVolume(join(cwd, 'volume', 'sandbox'));
    rmSync(cwd, { recursive: true, force: true });
    return ended;
}

// Without root the jail cannot switch jobs to the uid pool: the identity layer is unavailable,
// and with the default SANDBOX_REQUIRE cmcpd refuses to start. These tests run no job, so without
// root they require no layer (a test that sets SANDBOX_REQUIRE itself still gets its value).
const sandboxDefaults = process.getuid() === 0 ? {} : { SANDBOX_REQUIRE: '' };

export function settingArgs(settings = {}) {
    return Object.entries({ ...sandboxDefaults, ...settings }).flatMap(([name, value]) => ['--set', `${name}=${value}`]);
}

// The caller's environment without cmcpd settings (MCP_AUTH_TOKEN, LOG_LEVEL, …), which would
// otherwise override the defaults the tests expect.
export function cleanEnv() {
    const settingName = /^(MCP_|LOG_|FILE_|BASH_|PYTHON_|WEB_|SANDBOX_|AUDIT_|DEBUG$)/;
    return Object.fromEntries(Object.entries(process.env).filter(([name]) => !settingName.test(name)));
}

function tail(text, lines = 40) {
    return text.split('\n').slice(-lines).join('\n');
}

// Spawns `cmcpd-conformance --port 0 [--set …] [args]` (with `fixtures` false the shipped
// `cmcpd`) and waits (bounded) for its "listening on http://127.0.0.1:PORT/mcp" line.
// The end of a job kills every process of its uid, so two daemons of tests running in parallel
// must not share uids: each daemon that is not given a pool gets 64 uids of its own, at a
// stride of 128 so that the browser's uid after each pool is no other daemon's job uid
// (130000 up to 181200; tests that choose their own pools stay outside that range).
let daemonsStarted = 0;
function ownUidPool() {
    const slot = (process.pid + 7919 * daemonsStarted++) % 400;
    return { SANDBOX_UID_BASE: 130000 + slot * 128, SANDBOX_UID_COUNT: 64 };
}

// A daemon with call templates (JOB_CALL_TEMPLATES, the default as root) makes their first
// cells in the background after it listens; each holds a socket of the daemon. Waiting for them
// (bounded: a host that cannot make cells leaves its calls cold) keeps them out of what a test
// measures after the start, its descriptor counts and its processes.
async function templatesSettled(base, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
        try {
            const health = await (await fetch(`${base}/health`)).json();
            const templates = health.call_templates ?? health.status?.call_templates;
            if (!templates?.enabled)
                return;
            // The daemon makes its templates before it listens: none now (per-session
            // workspaces, a gated network) means none to wait for.
            const kinds = Object.entries(templates).filter(([name]) => name !== 'enabled');
            if (kinds.every(([, t]) => t.state === 'running' || t.cells?.failed > 0))
                return;
        } catch {
            return; // no /health to ask (a token guards it, say): nothing to wait for
        }
        await new Promise(resolve => setTimeout(resolve, 50));
    }
}

// `cwd`: a working directory the caller owns (and removes) instead of a scratch one; `program`:
// another daemon binary than $CMCPD_CONFORMANCE (or with `fixtures` false, $CMCPD).
export async function startDaemon({ settings = {}, args = [], fixtures = true, timeoutMs = 10_000, cwd: ownCwd, program } = {}) {
    const cwd = ownCwd ?? scratchDir();
    const removeCwd = () => { if (!ownCwd) rmSync(cwd, { recursive: true, force: true }); };
    if (settings.SANDBOX_UID_BASE === undefined)
        settings = { ...ownUidPool(), ...settings };
    const argv = ['--host', '127.0.0.1', '--port', '0', ...settingArgs(settings), ...args];
    const daemon = program ?? (fixtures ? conformanceDaemonPath() : cmcpdPath());
    // With setpriv the kernel kills the daemon even when this test process dies by SIGKILL
    // (a ctest timeout); the 'exit' hook above covers every other ending.
    const [command, commandArgs] = pdeathsigWrapper
        ? [pdeathsigWrapper, ['--pdeathsig', 'KILL', '--', daemon, ...argv]]
        : [daemon, argv];
    const child = spawn(command, commandArgs, { cwd, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    const sandboxRoot = resolve(cwd, String(settings.SANDBOX_ROOT ?? 'volume/sandbox'));
    running.set(child, sandboxRoot);
    let stderr = '';
    let exit = null;
    const exited = new Promise(resolve => {
        const gone = result => {
            exit ??= result;
            running.delete(child);
            unmountVolume(sandboxRoot);
            resolve(exit);
        };
        child.on('exit', (code, signal) => gone({ code, signal }));
        // A binary that cannot be started emits 'error' and never 'exit'.
        child.on('error', error => { if (child.pid === undefined) gone({ code: null, signal: null, error: error.message }); });
    });

    const port = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`cmcpd did not report its port within ${timeoutMs} ms`)), timeoutMs);
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', chunk => {
            stderr += chunk;
            const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
            if (match) {
                clearTimeout(timer);
                resolve(Number(match[1]));
            }
        });
        exited.then(({ code, signal, error }) => {
            clearTimeout(timer);
            reject(new Error(error ? `cannot start ${daemon}: ${error}`
                                   : `cmcpd exited before listening (code ${code}, signal ${signal})`));
        });
    }).catch(async error => {
        child.kill('SIGKILL');
        await exited;
        removeCwd();
        error.message += `\n--- cmcpd stderr ---\n${tail(stderr)}`;
        throw error;
    });

    const base = `http://127.0.0.1:${port}`;
    await templatesSettled(base);
    return {
        port,
        // setpriv execs cmcpd: the child's pid is the daemon's.
        pid: child.pid,
        base,
        url: `${base}/mcp`,
        sseUrl: `${base}/sse`,
        stderr: () => stderr,
        stderrTail: (lines = 40) => tail(stderr, lines),
        exitStatus: () => exit,
        // SIGTERM (which drains: calls in flight may finish), a second SIGTERM after a second
        // (which exits at once), SIGKILL after `graceMs`; resolves with {code, signal} once the
        // process is gone.
        async stop(graceMs = 5000) {
            if (!exit) {
                child.kill('SIGTERM');
                const again = setTimeout(() => child.kill('SIGTERM'), Math.min(1000, graceMs / 2));
                const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
                await exited;
                clearTimeout(again);
                clearTimeout(timer);
            }
            removeCwd();
            return exit;
        },
    };
}

// Runs `body`; when it throws, prints the daemon's recent log so ctest --output-on-failure shows it.
export async function withDiagnostics(daemon, body) {
    try {
        return await body();
    } catch (error) {
        console.error(`--- cmcpd stderr (last lines) ---\n${daemon.stderrTail()}\n---`);
        throw error;
    }
}

export function sleep(ms) {
    return new Promise(resolve => setTimeout(resolve, ms));
}

// Polls `probe` until it returns a truthy value or `timeoutMs` passes; returns the last value.
export async function eventually(probe, { timeoutMs = 3000, intervalMs = 20 } = {}) {
    const deadline = Date.now() + timeoutMs;
    let value;
    for (;;) {
        value = await probe();
        if (value || Date.now() >= deadline)
            return value;
        await sleep(intervalMs);
    }
}

// Rejects when `promise` does not settle within `ms`.
export function within(ms, promise, what = 'operation') {
    let timer;
    return Promise.race([
        promise,
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms); }),
    ]).finally(() => clearTimeout(timer));
}
