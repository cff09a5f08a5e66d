// cmcpd started without root, as in the container image: the jail cannot switch jobs to the uid
// pool, so it maps the daemon's own uid alone into each job's user namespace. Jobs must still
// run, as uid 1000 inside with no capability, in their minimal root, unable to read the daemon's
// files or see its process. The default workspace quota, which it cannot enforce, is said so
// without degrading. Run as root (CI), the daemon is started as nobody through setpriv.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { cleanEnv, cmcpdPath, settingArgs } from './lib/daemon.mjs';

const NOBODY = 65534;
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find(path => existsSync(path));
const skip = process.getuid() !== 0 ? 'needs root, to start the daemon as nobody (CI runs as root)'
           : !setpriv ? 'needs setpriv (util-linux) to start the daemon as nobody' : false;

// Starts `daemon` as nobody with `settings`; resolves with the child and its port once it listens.
function startAsNobody(daemon, settings, onStderr) {
    const args = ['--host', '127.0.0.1', '--port', '0', ...settingArgs(settings)];
    const child = spawn(setpriv, ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups',
        '--pdeathsig', 'KILL', '--', daemon, ...args], { cwd: dirname(dirname(daemon)), env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no port within 10 s:\n${stderr}`)), 10_000);
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', chunk => {
            stderr += chunk;
            onStderr(chunk);
            const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
            if (match) { clearTimeout(timer); resolve({ child, port: Number(match[1]) }); }
        });
        child.on('exit', code => { clearTimeout(timer); reject(new Error(`cmcpd exited (${code}):\n${stderr}`)); });
    });
}

describe('a daemon that is not root', { skip }, () => {
    let dir;
    let child;
    let client;
    let stderr = '';
    const secretFile = () => join(dir, 'daemon-only.txt');

    const call = async (name, args) => {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
        assert.ok(!result.isError, `${name}: ${result.content?.[0]?.text}\n--- cmcpd ---\n${stderr.slice(-3000)}`);
        return result.structuredContent;
    };

    before(async () => {
        dir = mkdtempSync(join(tmpdir(), 'cmcp-nonroot-'));
        chownSync(dir, NOBODY, NOBODY);
        writeFileSync(secretFile(), 'only the daemon reads this\n');
        chownSync(secretFile(), NOBODY, NOBODY);
        // The daemon and its jail as installed, in a directory nobody can reach: the build tree
        // may lie below one only root can search (a clone under /root, mode 0700).
        const bin = join(dir, 'bin');
        mkdirSync(bin, { mode: 0o755 });
        const daemon = join(bin, 'cmcpd');
        copyFileSync(cmcpdPath(), daemon);
        // Where an installed cmcpd looks for its helpers first (docs/install.md).
        const helpers = join(dir, 'libexec', 'container-mcp');
        mkdirSync(helpers, { recursive: true, mode: 0o755 });
        chmodSync(join(dir, 'libexec'), 0o755);
        const jail = join(helpers, 'cmcp-jail');
        copyFileSync(join(dirname(cmcpdPath()), 'jail', 'cmcp-jail'), jail);
        for (const program of [daemon, jail])
            chmodSync(program, 0o755);
        let port;
        ({ child, port } = await startAsNobody(daemon, { SANDBOX_ROOT: join(dir, 'sandbox'), SANDBOX_REQUIRE: 'identity,namespaces,seccomp', SANDBOX_WORKSPACE_QUOTA_MB: 64 },
            chunk => { stderr += chunk; }));
        client = new Client({ name: 'nonroot-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    });

    after(async () => {
        await client?.close();
        child?.kill('SIGKILL');
        if (dir)
            rmSync(dir, { recursive: true, force: true });
    });

    test('says how jobs run', () => {
        assert.match(stderr, /jobs run as this daemon's uid 65534 \(not root\)/);
        assert.match(stderr, /identity.*not root \(euid 65534\): jobs keep this uid/);
    });

    test('says the workspace quota asked for is unavailable, and offers no checkpoints or forks', async () => {
        assert.match(stderr, /sandbox: quota +unavailable +not root: only root can mount the workspace volume; workspaces have no quota/);
        assert.match(stderr, /degraded: workspace quota: not root/);
        const names = (await client.listTools()).tools.map(tool => tool.name);
        // Named workspaces are plain directories then.
        assert.deepEqual(names.filter(name => name.startsWith('workspace_')).sort(),
            ['workspace_create', 'workspace_delete', 'workspace_list', 'workspace_open'], names.join(', '));
    });

    test('the default quota it cannot enforce is said at start and in /health, without degrading', async () => {
        let text = '';
        const { child: second, port } = await startAsNobody(join(dir, 'bin', 'cmcpd'),
            {
                SANDBOX_ROOT: join(dir, 'default-sandbox'), SANDBOX_REQUIRE: 'identity,namespaces,seccomp',
                ADMIN_SOCKET: join(dir, 'default-admin.sock'), AUDIT_LOG: join(dir, 'default-audit.jsonl'),
            },
            chunk => { text += chunk; });
        try {
            assert.match(text, /sandbox: quota +unavailable +not root: only root can mount the workspace volume; workspaces have no quota \(the default SANDBOX_WORKSPACE_QUOTA_MB cannot be enforced here\)/);
            assert.doesNotMatch(text, /degraded: workspace quota/);
            const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
            assert.equal(health.workspace_quota.state, 'unavailable');
            assert.match(health.workspace_quota.reason, /cannot be enforced here/);
            assert.ok(!health.degraded.some(entry => /quota/.test(JSON.stringify(entry))), JSON.stringify(health.degraded));
        } finally {
            second.kill('SIGKILL');
        }
    });

    test('a command runs jailed, with the identity and namespaces layers', async () => {
        const run = await call('system_run_command', { command: 'echo hi > hi.txt && cat hi.txt' });
        assert.equal(run.stdout, 'hi\n', run.stderr);
        for (const layer of ['identity', 'namespaces', 'seccomp'])
            assert.ok(run.layers.includes(layer), run.layers.join());
    });

    test('a Python job is uid 1000 with no capability and cannot reach the daemon', async () => {
        const run = await call('system_run_python', {
            code: [
                'import os',
                "status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)",
                `try:\n    open(${JSON.stringify(secretFile())}).read()\n    secret = 'read'\nexcept OSError as e:\n    secret = type(e).__name__`,
                "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
                "_ = {'uid': os.getuid(), 'capEff': status['CapEff'].strip(), 'capBnd': status['CapBnd'].strip(), 'secret': secret, 'pids': pids}",
            ].join('\n'),
        });
        assert.equal(run.success, true, run.error);
        assert.equal(run.result.uid, 1000);
        assert.equal(run.result.capEff, '0000000000000000');
        assert.equal(run.result.capBnd, '0000000000000000');
        assert.notEqual(run.result.secret, 'read');
        // Its own pid namespace: the jail's init and the job, never the daemon.
        assert.ok(run.result.pids.every(pid => pid < 10), run.result.pids.join());
    });
});
