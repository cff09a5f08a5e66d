// Named workspaces through the official SDK client: a principal creates one by name, works in it
// with any file or job tool's `workspace` argument or by opening it for the session, and finds it
// again from another session and after a restart of the daemon (what a crash left half-made goes
// at start). Another principal reaches it by no name, id, host path or call, and may use the same name for
// its own. The count and size are bounded, each refusal naming its setting; the quota holds.
// A fork from a checkpoint is another tree: changes on either side stay there. Deleting a
// workspace kills its jobs. Needs root, btrfs and loop devices; exits 77 otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { eventually, withDiagnostics } from './lib/daemon.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from './lib/quota.mjs';
import { McpError } from './lib/sdk.mjs';

skipWithoutQuota();

const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
const digest = text => createHash('sha256').update(text).digest('hex');
const HALF_MADE = 'ws_00000000000000000000000000000000';
const UNDESCRIBED = 'ws_11111111111111111111111111111111';

describe('named workspaces', () => {
    let daemon;
    let sandbox;
    let alice;
    let bob;
    const sessions = [];

    const open = async principal => {
        const s = await quotaSession(daemon, principal, { token: tokens[principal] });
        sessions.push(s);
        return s;
    };
    const start = async () => {
        ({ daemon, sandbox } = await startQuotaDaemon({
            quotaMb: 64, sandbox,
            settings: {
                MCP_PRINCIPALS_FILE: join(sandbox, 'principals'), BASH_ALLOWED_COMMANDS: 'dd,sleep,cat,ls,rm',
                SANDBOX_WORKSPACE_NAMED_MAX: 3, SANDBOX_WORKSPACE_NAMED_MAX_MB: 128,
            },
        }));
        alice = await open('alice');
        bob = await open('bob');
    };
    const stop = async () => {
        while (sessions.length)
            await sessions.pop().close();
        await daemon?.stop();
    };

    before(async () => {
        // The principals file lives in the SANDBOX_ROOT the daemon is given.
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-named-'));
        writeFileSync(join(sandbox, 'principals'), `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        await start();
    });
    after(async () => {
        await stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    let projectId;
    let forkPoint;

    test('a named workspace is created, and file and job tools work in it by name', () => withDiagnostics(daemon, async () => {
        const made = await alice.ok('workspace_create', { name: 'project' });
        assert.equal(made.name, 'project');
        assert.match(made.workspace_id, /^ws_[0-9a-f]{32}$/);
        assert.equal(made.quota_mb, 64);
        projectId = made.workspace_id;
        // Its description is root's alone.
        assert.equal(statSync(join(sandbox, 'volume', 'named', `${projectId}.json`)).mode & 0o777, 0o600);
        await alice.ok('file_write', { workspace: 'project', path: 'notes.txt', content: 'in the project\n' });
        await alice.ok('file_write', { path: 'notes.txt', content: 'in the shared workspace\n' });
        const job = await alice.ok('system_run_command', { workspace: 'project', command: 'cat notes.txt' });
        assert.equal(job.stdout, 'in the project\n', JSON.stringify(job));
        assert.equal((await alice.ok('system_run_command', { command: 'cat notes.txt' })).stdout, 'in the shared workspace\n');
        assert.equal((await alice.ok('file_read', { workspace: projectId, path: 'notes.txt' })).content, 'in the project\n');
        const listed = await alice.ok('workspace_list', {});
        assert.deepEqual(listed.workspaces.map(each => each.name), ['project']);
        assert.equal(listed.open, null);
    }));

    test('a session opens it: calls without `workspace` work there until it is closed', () => withDiagnostics(daemon, async () => {
        assert.equal((await alice.ok('workspace_open', { workspace: 'project' })).open, 'project');
        assert.equal((await alice.ok('file_read', { path: 'notes.txt' })).content, 'in the project\n');
        assert.equal((await alice.ok('system_run_python', { code: 'print(open("notes.txt").read(), end="")' })).output, 'in the project\n');
        assert.equal((await alice.ok('workspace_list', {})).open, 'project');
        // Another session of the same principal still works in its own.
        const other = await open('alice');
        assert.equal((await other.ok('file_read', { path: 'notes.txt' })).content, 'in the shared workspace\n');
        assert.equal((await alice.ok('workspace_open', {})).open, null);
        assert.equal((await alice.ok('file_read', { path: 'notes.txt' })).content, 'in the shared workspace\n');
    }));

    test('another principal reaches it by no name, id, path or tool, and has names of its own', () => withDiagnostics(daemon, async () => {
        const unknown = /no such workspace: /;
        for (const workspace of ['project', projectId]) {
            for (const [tool, args] of [
                ['file_read', { path: 'notes.txt' }], ['file_list', { path: '.' }], ['file_write', { path: 'planted.txt', content: 'x' }],
                ['system_run_command', { command: 'cat notes.txt' }], ['workspace_checkpoint', {}],
            ]) {
                const refused = await bob.call(tool, { ...args, workspace });
                assert.equal(refused.isError, true, `${tool} in ${workspace}`);
                assert.match(refused.structuredContent.error, unknown, `${tool} in ${workspace}`);
            }
            assert.match((await bob.call('workspace_open', { workspace })).structuredContent.error, unknown);
            assert.match((await bob.call('workspace_delete', { workspace })).structuredContent.error, unknown);
        }
        // Exactly as a name nobody has.
        assert.equal((await bob.call('file_read', { workspace: 'nothing', path: 'x' })).structuredContent.error,
            'no such workspace: nothing (workspace_list lists yours)');
        assert.deepEqual((await bob.ok('workspace_list', {})).workspaces, []);
        const own = await bob.ok('workspace_create', { name: 'project' });
        assert.notEqual(own.workspace_id, projectId);
        assert.deepEqual((await bob.ok('file_list', { workspace: 'project', path: '.' })).entries, []);
        // Paths: a relative escape from Bob's workspace, and the host path of Alice's, which the
        // attacker is assumed to know, from a file tool and from jobs.
        const hostPath = join(sandbox, 'volume', 'named', projectId, 'notes.txt');
        for (const path of [`../named/${projectId}/notes.txt`, `../../named/${projectId}/notes.txt`, hostPath]) {
            const read = await bob.call('file_read', { path });
            assert.equal(read.isError, true, path);
            assert.doesNotMatch(JSON.stringify(read), /in the project/, path);
        }
        const cat = await bob.call('system_run_command', { command: `cat ${hostPath}` });
        assert.doesNotMatch(JSON.stringify(cat), /in the project/);
        const python = await bob.call('system_run_python', { code: `print(open(${JSON.stringify(hostPath)}).read())` });
        assert.doesNotMatch(JSON.stringify(python), /in the project/);
        // A job of Bob's sees its own workspace only: not the directory of the others.
        const look = await bob.call('system_run_command', { workspace: 'project', command: 'ls -a /workspace/..' });
        assert.doesNotMatch(JSON.stringify(look.structuredContent), /ws_[0-9a-f]{32}/);
        assert.equal((await alice.ok('file_read', { workspace: 'project', path: 'notes.txt' })).content, 'in the project\n');
        await bob.ok('workspace_delete', { workspace: 'project' });
    }));

    test('its files are resources of its owner only, as workspace://<workspace_id>/<path>', () => withDiagnostics(daemon, async () => {
        const everyResource = async session => {
            const uris = [];
            let cursor;
            for (let pages = 0; pages < 50; ++pages) {
                const page = await session.client.listResources(cursor ? { cursor } : {});
                uris.push(...page.resources);
                cursor = page.nextCursor;
                if (!cursor)
                    break;
            }
            assert.equal(cursor, undefined, 'the listing ends');
            return uris;
        };
        await alice.ok('system_run_command', { workspace: 'project', command: 'dd if=/dev/zero of=data.bin bs=1k count=1' });
        await alice.ok('system_run_command', { workspace: 'project', command: 'dd if=/dev/zero of=large.txt bs=1M count=11' });
        const notes = `workspace://${projectId}/notes.txt`;
        const listed = await everyResource(alice);
        const entry = listed.find(resource => resource.uri === notes);
        assert.ok(entry, JSON.stringify(listed.map(resource => resource.uri)));
        assert.equal(entry.name, 'project/notes.txt');
        assert.equal(entry.mimeType, 'text/plain');
        // The extension policy of the file tools: a .bin is neither listed nor read.
        assert.ok(!listed.some(resource => resource.uri.endsWith('/data.bin')));
        await assert.rejects(alice.client.readResource({ uri: `workspace://${projectId}/data.bin` }), McpError);
        // Nor is a file above FILE_MAX_SIZE_MB read.
        await assert.rejects(alice.client.readResource({ uri: `workspace://${projectId}/large.txt` }),
            error => error instanceof McpError && /FILE_MAX_SIZE_MB|too large|MB/i.test(error.message));
        const read = await alice.client.readResource({ uri: notes });
        assert.equal(read.contents[0].text, 'in the project\n');
        assert.equal((await alice.client.readResource({ uri: 'workspace://project/notes.txt' })).contents[0].text, 'in the project\n');
        // Contained as the file tools are: no way up out of the workspace.
        for (const escape of ['..%2F..%2Fworkspace%2Fnotes.txt', '../../workspace/notes.txt', `..%2F${projectId}%2Fnotes.txt`]) {
            const refused = await alice.client.readResource({ uri: `workspace://${projectId}/${escape}` }).then(
                result => JSON.stringify(result), error => error.message);
            assert.doesNotMatch(refused, /in the shared workspace/, escape);
            assert.ok(!refused.startsWith('{'), `${escape} was read: ${refused}`);
        }
        // Another principal lists none of it, and reading it answers as a workspace nobody has.
        assert.ok(!(await everyResource(bob)).some(resource => resource.uri.includes(projectId)));
        const refusal = async uri => bob.client.readResource({ uri }).then(
            () => assert.fail(`${uri} was read`), error => ({ code: error.code, message: error.message }));
        const nobodys = 'ws_22222222222222222222222222222222';
        const stolen = await refusal(notes);
        const missing = await refusal(`workspace://${nobodys}/notes.txt`);
        assert.equal(stolen.code, missing.code);
        assert.equal(stolen.message, missing.message.replaceAll(nobodys, projectId));
        assert.match(stolen.message, /no such workspace/);
        assert.deepEqual(await refusal('workspace://project/notes.txt'), await refusal('workspace://nothing/notes.txt').then(
            ({ code, message }) => ({ code, message: message.replaceAll('nothing', 'project') })));
        await alice.ok('system_run_command', { workspace: 'project', command: 'rm data.bin large.txt' });
    }));

    test('the count and size are bounded, each refusal naming its setting; the quota holds', () => withDiagnostics(daemon, async () => {
        const tooLarge = await alice.call('workspace_create', { name: 'large', size_mb: 129 });
        assert.match(tooLarge.structuredContent.error, /SANDBOX_WORKSPACE_NAMED_MAX_MB/);
        const small = await alice.ok('workspace_create', { name: 'small', size_mb: 8 });
        assert.equal(small.quota_mb, 8);
        const full = await alice.ok('system_run_command', { workspace: 'small', command: 'dd if=/dev/zero of=fill bs=1M count=16' });
        assert.notEqual(full.exit_code, 0);
        assert.equal(full.workspace_quota_mb, 8, JSON.stringify(full));
        await alice.ok('workspace_create', { name: 'third' });
        const fourth = await alice.call('workspace_create', { name: 'fourth' });
        assert.match(fourth.structuredContent.error, /has 3 named workspaces, as many as SANDBOX_WORKSPACE_NAMED_MAX allows/);
        const twice = await alice.call('workspace_create', { name: 'project' });
        assert.match(twice.structuredContent.error, /already have a workspace named 'project'/);
        const badName = await alice.call('workspace_create', { name: '../escape' });
        assert.equal(badName.isError, true);
        await alice.ok('workspace_delete', { workspace: 'small' });
        await alice.ok('workspace_delete', { workspace: 'third' });
    }));

    test('a fork from a checkpoint is independent of its origin', () => withDiagnostics(daemon, async () => {
        const checkpoint = await alice.ok('workspace_checkpoint', { workspace: 'project', label: 'fork point' });
        forkPoint = checkpoint.checkpoint_id;
        await alice.ok('file_write', { workspace: 'project', path: 'later.txt', content: 'after the checkpoint\n' });
        const fork = await alice.ok('workspace_fork', { workspace: 'project', checkpoint_id: checkpoint.checkpoint_id, name: 'fork' });
        assert.equal(fork.name, 'fork');
        assert.equal(fork.quota_mb, 64);
        assert.equal((await alice.ok('file_read', { workspace: 'fork', path: 'notes.txt' })).content, 'in the project\n');
        assert.equal((await alice.call('file_read', { workspace: 'fork', path: 'later.txt' })).isError, true);
        await alice.ok('file_write', { workspace: 'fork', path: 'notes.txt', content: 'changed in the fork\n' });
        await alice.ok('system_run_command', { workspace: 'fork', command: 'dd if=/dev/zero of=forked.bin bs=1k count=4' });
        await alice.ok('file_write', { workspace: 'project', path: 'notes.txt', content: 'changed in the origin\n' });
        assert.equal((await alice.ok('file_read', { workspace: 'fork', path: 'notes.txt' })).content, 'changed in the fork\n');
        assert.equal((await alice.ok('file_read', { workspace: 'project', path: 'notes.txt' })).content, 'changed in the origin\n');
        assert.equal((await alice.call('file_read', { workspace: 'project', path: 'forked.bin' })).isError, true);
        // The checkpoint itself is untouched by both.
        const diff = await alice.ok('workspace_diff', { workspace: 'project', checkpoint_id: checkpoint.checkpoint_id });
        assert.deepEqual(diff.changes.map(change => change.path).sort(), ['later.txt', 'notes.txt']);
        // Bob cannot fork Alice's checkpoint into a workspace of his.
        const stolen = await bob.call('workspace_fork', { checkpoint_id: checkpoint.checkpoint_id, name: 'stolen' });
        assert.match(stolen.structuredContent.error, /no such checkpoint/);
        await alice.ok('workspace_delete', { workspace: 'fork' });
    }));

    test('deleting a workspace kills its jobs; it is gone for every session', () => withDiagnostics(daemon, async () => {
        const doomed = await alice.ok('workspace_create', { name: 'doomed' });
        await alice.ok('workspace_open', { workspace: 'doomed' });
        const job = await alice.ok('system_run_command', { command: 'sleep 30', background: true });
        const deleted = await alice.ok('workspace_delete', { workspace: 'doomed' });
        assert.equal(deleted.jobs_killed, 1);
        await eventually(async () => (await alice.ok('job_status', { job_id: job.job_id })).state === 'killed', { timeoutMs: 10_000 });
        // Its files go once the job has let go of them.
        await eventually(() => !existsSync(join(sandbox, 'volume', 'named', doomed.workspace_id)), { timeoutMs: 10_000 });
        const gone = await alice.call('file_list', { path: '.' });
        assert.equal(gone.isError, true);
        assert.match(gone.content[0].text, /no such workspace/);
        await alice.ok('workspace_open', {});
        assert.deepEqual((await alice.ok('workspace_list', {})).workspaces.map(each => each.name), ['project']);
    }));

    test('named workspaces and their checkpoints survive a restart; half-made ones go at start', () => withDiagnostics(daemon, async () => {
        const checkpoint = await alice.ok('workspace_checkpoint', { workspace: 'project' });
        await stop();
        const image = join(sandbox, 'workspaces.btrfs');
        const mount = join(sandbox, 'volume');
        execFileSync('mount', ['-o', 'loop', image, mount]);
        try {
            // As a crash would leave them: a workspace made but never described, and a
            // description whose workspace is gone.
            execFileSync('btrfs', ['subvolume', 'create', join(mount, 'named', HALF_MADE)]);
            writeFileSync(join(mount, 'named', `${UNDESCRIBED}.json`), JSON.stringify({ name: 'ghost', owner: 'alice' }));
        } finally {
            execFileSync('umount', [mount]);
        }
        await start();
        const listed = await alice.ok('workspace_list', {});
        assert.deepEqual(listed.workspaces.map(each => [each.name, each.workspace_id]), [['project', projectId]]);
        assert.equal((await alice.ok('file_read', { workspace: 'project', path: 'notes.txt' })).content, 'changed in the origin\n');
        assert.deepEqual((await alice.ok('workspace_checkpoints', { workspace: 'project' })).checkpoints.map(each => each.checkpoint_id),
            [forkPoint, checkpoint.checkpoint_id]);
        assert.ok(!existsSync(join(mount, 'named', HALF_MADE)));
        assert.ok(!existsSync(join(mount, 'named', `${UNDESCRIBED}.json`)));
        assert.match((await bob.call('file_read', { workspace: 'project', path: 'notes.txt' })).content[0].text, /no such workspace/);
        await alice.ok('workspace_delete', { workspace: 'project' });
        assert.deepEqual((await alice.ok('workspace_list', {})).workspaces, []);
    }));
});
