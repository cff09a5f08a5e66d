// A workspace behaves as one user's home, through the official SDK client: every call runs as
// a pool uid of its own on the host, yet each sees the files of earlier calls and of the file
// tools as its own user's (uid 1000 inside): git works across calls, chmod works on a file the
// file tools wrote, a 0600 file made by one call is read by the next. On disk the files belong
// to one uid no job runs as (SANDBOX_WORKSPACE_UID). A tree written before, owned by root and by
// pool uids, is given to that uid when a call next uses it. Two principals working at once
// still reach nothing of each other's. Needs root (jobs switch uids; idmapped mounts need
// CAP_SYS_ADMIN); without it, or on a kernel that cannot idmap, it skips saying why.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { startDaemon, withDiagnostics } from './lib/daemon.mjs';

const UID_BASE = 188000;
const UID_COUNT = 16;
const WORKSPACE_UID = 188500;
const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };

describe('a workspace is one user\'s home', needsRoot, () => {
    let scratch;
    let daemon;
    let idmapped = true;
    let unavailable = '';
    const clients = [];

    // Where a named workspace is on the host: on the workspace volume when the daemon has one.
    const namedWorkspace = id => {
        const onVolume = join(scratch, 'sandbox', 'volume', 'named', id);
        return existsSync(onVolume) ? onVolume : join(scratch, 'sandbox', 'named', id);
    };

    async function session(principal) {
        const client = new Client({ name: `${principal}-home`, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: { authorization: `Bearer ${tokens[principal]}` } } });
        await client.connect(transport);
        clients.push(client);
        const call = (tool, args) => client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
        const ok = async (tool, args) => {
            const result = await call(tool, args);
            assert.ok(!result.isError, `${tool} ${JSON.stringify(args)} failed: ${JSON.stringify(result.structuredContent ?? result.content)}`);
            return result.structuredContent;
        };
        // A shell command's stdout; fails the test when the command fails.
        const sh = async (workspace, command) => {
            const result = await ok('system_run_command', { workspace, command });
            assert.equal(result.exit_code, 0, `${command}: ${result.stderr}`);
            return result.stdout;
        };
        return { call, ok, sh };
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-home-'));
        const digest = text => createHash('sha256').update(text).digest('hex');
        writeFileSync(join(scratch, 'principals'), `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: join(scratch, 'principals'),
                SANDBOX_UID_BASE: UID_BASE, SANDBOX_UID_COUNT: UID_COUNT, SANDBOX_WORKSPACE_UID: WORKSPACE_UID,
                BASH_ALLOWED_COMMANDS: '*',
            },
        });
        const health = await (await fetch(daemon.url.replace(/\/mcp$/, '/health'))).json();
        const home = health.workspace_home ?? health.status?.workspace_home;
        assert.ok(home, `/health says nothing of workspace_home: ${JSON.stringify(health)}`);
        idmapped = home.state === 'available';
        unavailable = home.reason;
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        if (scratch)
            rmSync(scratch, { recursive: true, force: true });
    });

    const skipUnlessIdmapped = t => {
        if (!idmapped) {
            t.skip(`jobs cannot see the workspace as their own here: ${unavailable}`);
            return true;
        }
        return false;
    };

    let aliceHome;

    test('git commits across calls, each call its own pool uid', t => withDiagnostics(daemon, async () => {
        if (skipUnlessIdmapped(t))
            return;
        const alice = await session('alice');
        aliceHome = (await alice.ok('workspace_create', { name: 'home' })).workspace_id;
        const ids = await alice.ok('system_run_command', { workspace: 'home', command: 'id -u; stat -c %u .' });
        assert.equal(ids.stdout, '1000\n1000\n');
        // Each call's result says it saw its workspace as its own.
        assert.ok(ids.layers.includes('idmap'), ids.layers.join());
        await alice.sh('home', 'git init -q && git config user.email a@example.org && git config user.name A '
                       + '&& echo one > a.txt && git add -A && git commit -qm one');
        const log = await alice.sh('home', 'echo two >> a.txt && git commit -qam two && git log --format=%s && stat -c %u a.txt .git/HEAD');
        assert.equal(log, 'two\none\n1000\n1000\n');
        // On the host everything belongs to the workspace's uid, never to a pool uid.
        const onDisk = statSync(join(namedWorkspace(aliceHome), '.git', 'HEAD'));
        assert.equal(onDisk.uid, WORKSPACE_UID);
    }));

    test('a file the file tools wrote is the job\'s to chmod; a 0600 file outlives its call', t => withDiagnostics(daemon, async () => {
        if (skipUnlessIdmapped(t))
            return;
        const alice = await session('alice');
        await alice.ok('file_write', { workspace: 'home', path: 'calc.py', content: 'print(6 * 7)\n' });
        assert.equal(await alice.sh('home', 'chmod 755 calc.py && stat -c "%a %u" calc.py'), '755 1000\n');
        await alice.sh('home', 'umask 077; echo secret > key && chmod 600 key');
        assert.equal(await alice.sh('home', 'cat key; stat -c "%a %u" key'), 'secret\n600 1000\n');
        await alice.sh('home', 'echo edited >> calc.py');
        const read = await alice.ok('file_read', { workspace: 'home', path: 'calc.py' });
        assert.match(JSON.stringify(read), /edited/);
    }));

    test('within the workspace a job cannot give a file away nor make one set-user-ID', t => withDiagnostics(daemon, async () => {
        if (skipUnlessIdmapped(t))
            return;
        const alice = await session('alice');
        const chown = await alice.ok('system_run_command', { workspace: 'home', command: 'touch mine; chown 0 mine' });
        assert.notEqual(chown.exit_code, 0, 'chown to root succeeded');
        const other = await alice.ok('system_run_command', { workspace: 'home', command: 'chown 1001 mine' });
        assert.notEqual(other.exit_code, 0, 'chown to another uid succeeded');
        await alice.sh('home', 'cp /usr/bin/id ./myid; chmod u+s ./myid 2>/dev/null; true');
        const stored = statSync(join(namedWorkspace(aliceHome), 'myid'));
        assert.equal(stored.mode & 0o4000, 0, 'a set-user-ID file of the workspace uid is on the host');
        assert.equal(stored.uid, WORKSPACE_UID);
    }));

    test('a tree written before, by root and pool uids, becomes the job\'s at its next use', t => withDiagnostics(daemon, async () => {
        if (skipUnlessIdmapped(t))
            return;
        const alice = await session('alice');
        const old = (await alice.ok('workspace_create', { name: 'old' })).workspace_id;
        const top = namedWorkspace(old);
        // As the tools and jobs of a daemon before left it: root's files, pool uids' files.
        mkdirSync(join(top, 'src'));
        writeFileSync(join(top, 'src', 'main.c'), 'int main(){}\n', { mode: 0o600 });
        chownSync(join(top, 'src', 'main.c'), UID_BASE + 3, UID_BASE);
        writeFileSync(join(top, 'README'), 'root wrote this\n', { mode: 0o644 });
        chownSync(top, 0, UID_BASE);
        const seen = await alice.sh('old', 'cat src/main.c >/dev/null && stat -c %u src/main.c src README .');
        assert.equal(seen, '1000\n1000\n1000\n1000\n');
        assert.equal(statSync(join(top, 'src', 'main.c')).uid, WORKSPACE_UID);
    }));

    test('two principals working at once reach nothing of each other\'s', t => withDiagnostics(daemon, async () => {
        if (skipUnlessIdmapped(t))
            return;
        const [alice, bob] = [await session('alice'), await session('bob')];
        await bob.ok('workspace_create', { name: 'home' });
        await alice.sh('home', 'echo alice-only > private && chmod 600 private');
        const sleeper = await alice.ok('system_run_command', { workspace: 'home', command: 'sleep 30', background: true });
        try {
            // Bob's job: his own home, where alice's file is not; no process of hers to signal.
            const probe = await bob.sh('home', 'ls -a; ls /proc | grep -c "^[0-9]" ; kill -9 -1 2>/dev/null; echo done');
            assert.doesNotMatch(probe, /private/);
            assert.match(probe, /done/);
            const aliceFileFromBob = await bob.call('file_read', { workspace: aliceHome, path: 'private' });
            assert.equal(aliceFileFromBob.isError, true);
            const status = await alice.ok('job_status', { job_id: sleeper.job_id });
            assert.equal(status.state, 'running', 'bob\'s job signalled alice\'s');
            assert.equal(await alice.sh('home', 'cat private'), 'alice-only\n');
        } finally {
            await alice.call('job_kill', { job_id: sleeper.job_id }).catch(() => {});
        }
    }));
});
