// Checkpoints of a workspace through the official SDK client: a checkpoint, then a job changes
// the tree (a file changed in place, an append, a deletion, a rename, a new symbolic link), the
// diff names each change (a unified diff for text), and the restore gives back the very tree
// (a hash of every path, type, mode, size, content and link target); the file tools see the
// restored tree at once. A restore is refused while a job runs in the workspace (its jail holds
// the tree it started in), and a workspace keeps a bounded number of them. Checkpoints survive a restart of the daemon, and what a crash left
// half-made is removed at start. Needs root, btrfs and loop devices; exits 77 otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { withDiagnostics } from './lib/daemon.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from './lib/quota.mjs';

skipWithoutQuota();

const QUOTA_MB = 64;
const TREE_HASH = [
    'import hashlib, os, stat',
    'h = hashlib.sha256()',
    'for top, dirs, files in os.walk(".", followlinks=False):',
    '    dirs.sort()',
    '    for name in sorted(dirs + files):',
    '        path = os.path.join(top, name)',
    '        st = os.lstat(path)',
    '        h.update(f"{path}\\0{st.st_mode:o}\\0{st.st_size}\\0".encode())',
    '        if stat.S_ISLNK(st.st_mode):',
    '            h.update(os.readlink(path).encode())',
    '        elif stat.S_ISREG(st.st_mode):',
    '            with open(path, "rb") as f:',
    '                h.update(hashlib.sha256(f.read()).digest())',
    'print(h.hexdigest())',
].join('\n');

describe('workspace checkpoints', () => {
    let daemon;
    let sandbox;
    let s;

    const start = async () => {
        ({ daemon, sandbox } = await startQuotaDaemon({ quotaMb: QUOTA_MB, sandbox, settings: { BASH_ALLOWED_COMMANDS: 'dd,sleep,cat', SANDBOX_WORKSPACE_CHECKPOINTS_MAX: 2 } }));
        s = await quotaSession(daemon);
    };
    const stop = async () => {
        await s?.close();
        await daemon?.stop();
    };
    const treeHash = async () => (await s.ok('system_run_python', { code: TREE_HASH })).output.trim();

    before(start);
    after(async () => {
        await stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    let checkpointId;
    let original;

    test('a checkpoint of a workspace with text, a directory and 20 MB of binary', () => withDiagnostics(daemon, async () => {
        const names = (await s.client.listTools()).tools.map(tool => tool.name).filter(name => name.startsWith('workspace_'));
        assert.deepEqual(names.sort(), ['workspace_checkpoint', 'workspace_checkpoint_delete', 'workspace_checkpoints', 'workspace_create', 'workspace_delete', 'workspace_diff', 'workspace_fork', 'workspace_list', 'workspace_open', 'workspace_restore']);
        await s.ok('file_write', { path: 'notes.txt', content: 'one\ntwo\nthree\n' });
        await s.ok('file_write', { path: 'log.txt', content: 'start\n' });
        await s.ok('file_write', { path: 'doomed.txt', content: 'to be deleted\n' });
        await s.ok('file_write', { path: 'dir/moved.txt', content: 'moving\n' });
        const dd = await s.ok('system_run_command', { command: 'dd if=/dev/urandom of=blob.bin bs=1M count=20' });
        assert.equal(dd.exit_code, 0, JSON.stringify(dd));
        original = await treeHash();
        const made = await s.ok('workspace_checkpoint', { label: 'before the job' });
        assert.match(made.checkpoint_id, /^cp_[0-9a-f]{32}$/);
        assert.equal(made.label, 'before the job');
        checkpointId = made.checkpoint_id;
        const listed = await s.ok('workspace_checkpoints', {});
        assert.deepEqual(listed.checkpoints.map(each => each.checkpoint_id), [checkpointId]);
    }));

    test('a job changes the tree in place, by appending, deleting, renaming and linking; the diff names each change', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_python', {
            code: [
                'import os',
                'with open("notes.txt", "r+b") as f: f.seek(4); f.write(b"TWO")',
                'with open("blob.bin", "r+b") as f: f.seek(1 << 20); f.write(b"changed in place")',
                'with open("log.txt", "a") as f: f.write("appended\\n")',
                'os.remove("doomed.txt")',
                'os.rename("dir/moved.txt", "dir/renamed.txt")',
                'os.symlink("notes.txt", "link")',
                'print("done")',
            ].join('\n'),
        });
        assert.equal(job.output.trim(), 'done', JSON.stringify(job));
        assert.notEqual(await treeHash(), original);
        const { changes, truncated } = await s.ok('workspace_diff', { checkpoint_id: checkpointId });
        assert.equal(truncated, false);
        const byPath = Object.fromEntries(changes.map(change => [change.path, change]));
        assert.equal(byPath['notes.txt'].change, 'modified');
        assert.match(byPath['notes.txt'].diff, /^-two$/m);
        assert.match(byPath['notes.txt'].diff, /^\+TWO$/m);
        assert.match(byPath['log.txt'].diff, /^\+appended$/m);
        assert.equal(byPath['blob.bin'].change, 'modified');
        assert.equal(byPath['blob.bin'].diff, undefined);
        assert.equal(byPath['doomed.txt'].change, 'removed');
        assert.equal(byPath['dir/moved.txt'].change, 'removed');
        assert.equal(byPath['dir/renamed.txt'].change, 'added');
        assert.equal(byPath.link.change, 'added');
        assert.equal(changes.length, 7, JSON.stringify(changes.map(change => [change.path, change.change])));
    }));

    test('a restore is refused while a job runs in the workspace', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', { command: 'sleep 30', background: true });
        const refused = await s.call('workspace_restore', { checkpoint_id: checkpointId });
        assert.equal(refused.isError, true);
        assert.match(refused.structuredContent.error, /1 job\(s\) are running in this workspace/);
        await s.ok('job_kill', { job_id: job.job_id });
        await s.ok('job_status', { job_id: job.job_id });
    }));

    test('the restore gives back the very tree, and the file tools see it at once', () => withDiagnostics(daemon, async () => {
        // The killed job may take a moment to let go of the workspace.
        let restored;
        for (let attempt = 0; attempt < 50; ++attempt) {
            restored = await s.call('workspace_restore', { checkpoint_id: checkpointId });
            if (!restored.isError)
                break;
            await new Promise(resolve => setTimeout(resolve, 100));
        }
        assert.ok(!restored.isError, restored.structuredContent?.error);
        assert.equal(await treeHash(), original);
        assert.equal((await s.ok('file_read', { path: 'notes.txt' })).content, 'one\ntwo\nthree\n');
        assert.equal((await s.ok('file_read', { path: 'doomed.txt' })).content, 'to be deleted\n');
        const diff = await s.ok('workspace_diff', { checkpoint_id: checkpointId });
        assert.deepEqual(diff.changes, []);
        // The workspace keeps its quota after the restore.
        const full = await s.ok('system_run_command', { command: `dd if=/dev/zero of=fill bs=1M count=${QUOTA_MB * 2}` });
        assert.equal(full.workspace_quota_mb, QUOTA_MB, JSON.stringify(full));
        await s.ok('file_delete', { path: 'fill' });
    }));

    test('a workspace keeps at most SANDBOX_WORKSPACE_CHECKPOINTS_MAX checkpoints', () => withDiagnostics(daemon, async () => {
        const second = await s.ok('workspace_checkpoint', { label: 'second' });
        const refused = await s.call('workspace_checkpoint', { label: 'third' });
        assert.equal(refused.isError, true);
        assert.match(refused.structuredContent.error, /has 2 checkpoints, as many as SANDBOX_WORKSPACE_CHECKPOINTS_MAX allows/);
        await s.ok('workspace_checkpoint_delete', { checkpoint_id: second.checkpoint_id });
        assert.deepEqual((await s.ok('workspace_checkpoints', {})).checkpoints.map(each => each.checkpoint_id), [checkpointId]);
    }));

    test('checkpoints survive a restart, and what a crash left half-made goes at start', () => withDiagnostics(daemon, async () => {
        await stop();
        // As a crash would leave them: a snapshot not yet named, and a restore not swapped in.
        const image = join(sandbox, 'workspaces.btrfs');
        const mount = join(sandbox, 'volume');
        execFileSync('mount', ['-o', 'loop', image, mount]);
        try {
            execFileSync('btrfs', ['subvolume', 'snapshot', '-r', join(mount, 'workspace'), join(mount, '.checkpoints', 'workspace', 'cp_00000000000000000000000000000000.partial')]);
            execFileSync('btrfs', ['subvolume', 'snapshot', join(mount, 'workspace'), join(mount, 'workspace.restoring')]);
            writeFileSync(join(mount, '.checkpoints', 'workspace', 'cp_11111111111111111111111111111111.json'), '{}');
        } finally {
            execFileSync('umount', [mount]);
        }
        await start();
        const listed = await s.ok('workspace_checkpoints', {});
        assert.deepEqual(listed.checkpoints.map(each => each.checkpoint_id), [checkpointId]);
        assert.equal(await treeHash(), original);
        assert.ok(!existsSync(join(mount, 'workspace.restoring')));
        assert.ok(!existsSync(join(mount, '.checkpoints', 'workspace', 'cp_00000000000000000000000000000000.partial')));
        assert.ok(!existsSync(join(mount, '.checkpoints', 'workspace', 'cp_11111111111111111111111111111111.json')));
        await s.ok('workspace_checkpoint_delete', { checkpoint_id: checkpointId });
        assert.deepEqual((await s.ok('workspace_checkpoints', {})).checkpoints, []);
        const gone = await s.call('workspace_diff', { checkpoint_id: checkpointId });
        assert.match(gone.structuredContent.error, /no such checkpoint/);
    }));
});
