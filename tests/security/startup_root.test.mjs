// Start-up cannot be turned against the host by whoever can write SANDBOX_ROOT. Before each
// daemon starts, its SANDBOX_ROOT is planted with what a start-up acts on by path: the spill
// directory (emptied at every start) as a symbolic link to a victim directory, upload records
// naming a temporary file in a victim directory, the templates directory and the shared
// workspace (both given a mode at start-up) as links to victim directories. Each victim lives
// outside SANDBOX_ROOT, and every one of its files must survive with its mode, the victim's own
// mode and group unchanged. The daemon either refuses to start with an error naming the planted
// path, or starts and says it refused it. Needs root (the daemon's start-up as in production:
// call templates, the sandbox group); without it the suite skips, saying so.
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startDaemon } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: start-up runs as root in production and gives the workspace to the sandbox group' };

// No workspace volume: the shared workspace is SANDBOX_ROOT/workspace itself, and no loop
// device is needed.
const plainWorkspace = { SANDBOX_WORKSPACE_QUOTA_MB: 0 };

describe('start-up is no deletion or chmod primitive', needsRoot, () => {
    let scratch;
    let sandbox;
    let daemon;

    beforeEach(() => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-startup-root-'));
        sandbox = join(scratch, 'sandbox');
        mkdirSync(sandbox, { mode: 0o755 });
        daemon = undefined;
    });

    afterEach(async () => {
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    // A root-owned directory outside SANDBOX_ROOT with `names` in it, 0644 and 0600 in turn.
    function victim(name, names) {
        const directory = join(scratch, name);
        mkdirSync(directory);
        chmodSync(directory, 0o755);
        names.forEach((file, i) => {
            writeFileSync(join(directory, file), `${file} must survive\n`);
            chmodSync(join(directory, file), i % 2 ? 0o600 : 0o644);
        });
        return directory;
    }

    // The directory and each of its files as they are now: the kind, the mode, the group.
    function snapshot(directory) {
        const of = path => { const s = statSync(path); return { mode: s.mode, gid: s.gid }; };
        const files = Object.fromEntries(readdirSync(directory).sort().map(file => [file, of(join(directory, file))]));
        return { self: of(directory), files };
    }

    // The daemon with SANDBOX_ROOT `sandbox`: { daemon } once it listens, or { refusal } with what
    // it printed when it would not start.
    async function start(settings = {}) {
        try {
            daemon = await startDaemon({ cwd: scratch, settings: { SANDBOX_ROOT: sandbox, AUDIT_LOG: '', ...plainWorkspace, ...settings } });
            return { log: daemon.stderr() };
        } catch (error) {
            return { refusal: error.message };
        }
    }

    test('a spill directory planted as a link is refused, and its target keeps every file', async () => {
        const files = ['a.log', 'b.log', 'c.spill', 'd.spill', '.hidden', 'e'];
        const target = victim('spill-victim', files);
        const before = snapshot(target);
        symlinkSync(target, join(sandbox, 'spill'));

        const { log, refusal } = await start();
        assert.deepEqual(snapshot(target), before, 'start-up changed the directory the spill link names');
        const said = log ?? refusal;
        assert.match(said, new RegExp(`${join(sandbox, 'spill').replaceAll('/', '\\/')} is a symbolic link: refused`), said);
        if (log) {
            const health = await (await fetch(`${daemon.base}/health`)).json();
            assert.ok(JSON.stringify(health).includes(`spill directory ${join(sandbox, 'spill')}`),
                      `/health does not report the refused spill directory: ${JSON.stringify(health)}`);
        }
    });

    test('upload records naming a file outside SANDBOX_ROOT, or reached through a link, are dropped unacted', async () => {
        const tokens = ['0', '1', '2'].map(digit => `tr_${digit.repeat(32)}`);
        const target = victim('upload-victim', [...tokens.map(token => `.cmcp-upload-${token}`), 'keep.txt']);
        const before = snapshot(target);
        // The workspace named by its absolute path outside SANDBOX_ROOT; by "..", out of it; by
        // a link planted inside it.
        symlinkSync(target, join(sandbox, 'linked'));
        const records = [`${target}\nkeep.txt\n`, `../upload-victim\nkeep.txt\n`, `${join(sandbox, 'linked')}\nkeep.txt\n`];
        mkdirSync(join(sandbox, 'transfers'), { mode: 0o700 });
        tokens.forEach((token, i) => writeFileSync(join(sandbox, 'transfers', token), records[i], { mode: 0o600 }));

        const { log, refusal } = await start();
        assert.deepEqual(snapshot(target), before, 'start-up removed a file an upload record named outside the workspaces');
        assert.equal(refusal, undefined, `the daemon would not start: ${refusal}`);
        for (const token of tokens)
            assert.match(log, new RegExp(`dropped the upload record ${join(sandbox, 'transfers', token).replaceAll('/', '\\/')} without acting on it`), log);
        assert.deepEqual(readdirSync(join(sandbox, 'transfers')), [], 'the dropped records stay');
    });

    test('a templates directory planted as a link is refused, and its target keeps its mode', async t => {
        const target = victim('templates-victim', ['keep.sock.txt', 'keep.txt']);
        const before = snapshot(target);
        symlinkSync(target, join(sandbox, 'templates'));

        const { log, refusal } = await start({ JOB_CALL_TEMPLATES: true });
        assert.deepEqual(snapshot(target), before, 'start-up changed the directory the templates link names');
        assert.equal(refusal, undefined, `the daemon would not start: ${refusal}`);
        const health = await (await fetch(`${daemon.base}/health`)).json();
        const templates = health.call_templates ?? health.status?.call_templates;
        if (!templates?.enabled) {
            t.skip(`call templates are unavailable here (${JSON.stringify(templates)}): start-up never makes their directory`);
            return;
        }
        assert.match(log, new RegExp(`${join(sandbox, 'templates').replaceAll('/', '\\/')} is a symbolic link: refused`), log);
    });

    test('a shared workspace planted as a link is refused, and its target keeps its mode and group', async () => {
        const target = victim('workspace-victim', ['keep.txt', 'secret.txt']);
        const before = snapshot(target);
        symlinkSync(target, join(sandbox, 'workspace'));

        const { log, refusal } = await start();
        assert.deepEqual(snapshot(target), before, 'start-up gave the directory the workspace link names to the jobs');
        const said = log ?? refusal;
        assert.match(said, new RegExp(`the workspace ${join(sandbox, 'workspace').replaceAll('/', '\\/')} is a symbolic link: refused`), said);
        assert.ok(existsSync(join(target, 'secret.txt')));
    });

    test('a tasks directory planted as a link is refused, and its target keeps its mode and its old records', async () => {
        const target = victim('tasks-victim', ['task-old.json', 'keep.txt']);
        const before = snapshot(target);
        const tasks = join(scratch, 'tasks');
        symlinkSync(target, tasks);

        const { log, refusal } = await start({ TASKS_DIR: tasks });
        assert.deepEqual(snapshot(target), before, 'start-up made the directory the tasks link names private, or emptied it');
        const said = log ?? refusal;
        assert.match(said, new RegExp(`${tasks.replaceAll('/', '\\/')} is a symbolic link: refused`), said);
    });
});
