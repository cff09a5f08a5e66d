// The admin channel's view of workspaces, against a daemon whose principal made a named
// workspace through the MCP tools, with a checkpoint and a running job: listWorkspaces gives its
// owner, usage against quota, checkpoints, last use and jobs (and the shared workspace beside it),
// bad requests get errors naming the problem, and deleteWorkspace removes it and kills its job as
// workspace_delete does. Needs root, btrfs and loop devices; exits 77 otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { eventually, withDiagnostics } from './lib/daemon.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from './lib/quota.mjs';

skipWithoutQuota();

const token = 'carol-token-0123456789';

// The console's side of the admin channel, JSON lines: request() resolves with the reply's
// result or the error line ({code, message}).
async function adminClient(socketPath) {
    const socket = createConnection(socketPath);
    socket.setEncoding('utf8');
    const pending = new Map();
    let buffer = '';
    let nextId = 1;
    let greeted;
    const hello = new Promise(resolve => { greeted = resolve; });
    socket.on('data', chunk => {
        buffer += chunk;
        let newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
            const message = JSON.parse(buffer.slice(0, newline));
            buffer = buffer.slice(newline + 1);
            if (message.type === 'hello')
                greeted(message);
            else if ((message.type === 'reply' || message.type === 'error') && pending.has(message.id)) {
                pending.get(message.id)(message.type === 'reply' ? { result: message.result } : { code: message.code, message: message.message });
                pending.delete(message.id);
            }
        }
    });
    await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
    socket.write(`${JSON.stringify({ type: 'hello', version: 1, program: 'cmcp-console', programVersion: 'test' })}\n`);
    await hello;
    return {
        request(method, params = {}) {
            const id = nextId++;
            return new Promise((resolve, reject) => {
                const timer = setTimeout(() => reject(new Error(`${method}: no answer within 10 s`)), 10_000);
                pending.set(id, answer => { clearTimeout(timer); resolve(answer); });
                socket.write(`${JSON.stringify({ type: 'request', id, method, params })}\n`);
            });
        },
        close: () => socket.destroy(),
    };
}

describe('workspaces on the admin channel', () => {
    let daemon;
    let sandbox;
    let carol;
    let admin;

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-adminws-'));
        writeFileSync(join(sandbox, 'principals'), `carol ${createHash('sha256').update(token).digest('hex')}\n`);
        ({ daemon } = await startQuotaDaemon({
            quotaMb: 64, sandbox,
            settings: {
                MCP_PRINCIPALS_FILE: join(sandbox, 'principals'), BASH_ALLOWED_COMMANDS: 'dd,sleep',
                ADMIN_SOCKET: join(sandbox, 'admin.sock'),
            },
        }));
        carol = await quotaSession(daemon, 'carol', { token });
        admin = await adminClient(join(sandbox, 'admin.sock'));
    });
    after(async () => {
        admin?.close();
        await carol?.close();
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
    });

    test('listWorkspaces describes a named workspace; deleteWorkspace removes it and kills its job', () => withDiagnostics(daemon, async () => {
        const made = await carol.ok('workspace_create', { name: 'build', size_mb: 32 });
        await carol.ok('system_run_command', { workspace: 'build', command: 'dd if=/dev/zero of=blob bs=1M count=3' });
        await carol.ok('workspace_checkpoint', { workspace: 'build', label: 'before' });
        const job = await carol.ok('system_run_command', { workspace: 'build', command: 'sleep 60', background: true });

        const { result } = await admin.request('listWorkspaces');
        assert.ok(result, 'listWorkspaces replied');
        const named = result.workspaces.find(each => each.workspaceId === made.workspace_id);
        assert.ok(named, JSON.stringify(result));
        assert.equal(named.kind, 'named');
        assert.equal(named.name, 'build');
        assert.equal(named.owner, 'carol');
        assert.equal(named.quotaBytes, 32 * 1024 * 1024);
        assert.ok(named.usedBytes >= 3 * 1024 * 1024 && named.usedBytes < 32 * 1024 * 1024, `usedBytes ${named.usedBytes}`);
        assert.equal(named.checkpoints, 1);
        assert.equal(named.jobsRunning, 1);
        assert.ok(Date.now() - Date.parse(named.lastUsed) < 60_000, named.lastUsed);
        assert.ok(Date.parse(named.created) <= Date.parse(named.lastUsed));
        const shared = result.workspaces.find(each => each.kind === 'shared');
        assert.ok(shared, 'the shared workspace is listed');
        assert.equal(shared.owner, '');

        // Bad input: each error names the problem.
        assert.equal((await admin.request('deleteWorkspace', {})).code, 'bad_params');
        assert.equal((await admin.request('deleteWorkspace', { workspaceId: 7 })).code, 'bad_params');
        const unknown = await admin.request('deleteWorkspace', { workspaceId: 'ws_33333333333333333333333333333333' });
        assert.equal(unknown.code, 'not_found');
        assert.match(unknown.message, /no named workspace ws_3{32}/);
        const sharedDelete = await admin.request('deleteWorkspace', { workspaceId: shared.workspaceId });
        assert.equal(sharedDelete.code, 'invalid_value');
        assert.match(sharedDelete.message, /not a named workspace/);

        const deleted = await admin.request('deleteWorkspace', { workspaceId: made.workspace_id });
        assert.deepEqual(deleted.result, { workspaceId: made.workspace_id, name: 'build', owner: 'carol', jobsKilled: 1 });
        await eventually(async () => (await carol.ok('job_status', { job_id: job.job_id })).state === 'killed', { timeoutMs: 10_000 });
        await eventually(() => !existsSync(join(sandbox, 'volume', 'named', made.workspace_id)), { timeoutMs: 10_000 });
        assert.deepEqual((await carol.ok('workspace_list', {})).workspaces, []);
        const after = (await admin.request('listWorkspaces')).result;
        assert.ok(!after.workspaces.some(each => each.workspaceId === made.workspace_id));
        assert.equal((await admin.request('deleteWorkspace', { workspaceId: made.workspace_id })).code, 'not_found');
    }));
});
