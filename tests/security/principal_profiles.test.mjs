// A profile per principal (MCP_POLICY_FILE): two principals with different profiles on one daemon,
// through the real client. Alice's profile offers three tools, one call's job at a time and one
// named workspace; Carol's allows a call a second; Bob has the default profile (the global
// settings). Each refusal names the profile and the rule. A reload on SIGHUP changes what Alice
// may do while her session stays open, and a reload of a broken file keeps the policy in force;
// the audit log records both. Jobs switch to host uids, so this needs root (CI runs as root).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210', carol: 'carol-token-5555555555' };
const digest = text => createHash('sha256').update(text).digest('hex');

function policy({ aliceTools }) {
    return `# profiles of the test
[profile narrow]
tools = ${aliceTools.join(', ')}
max_foreground_jobs = 1
max_background_jobs = 1
named_workspaces = 1

[profile slow]
call_rate = 1, 2

[principal alice]
token_sha256 = ${digest(tokens.alice)}
profile = narrow

[principal bob]
token_sha256 = ${digest(tokens.bob)}

[principal carol]
token_file = carol.token
profile = slow
`;
}

// One request on the admin channel (JSON lines), as the console sends it: its reply's result, or
// the error ({code, message}).
async function adminRequest(socketPath, method, params = {}) {
    const socket = createConnection(socketPath);
    socket.setEncoding('utf8');
    try {
        await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
        socket.write(`${JSON.stringify({ type: 'hello', version: 1, program: 'cmcp-console', programVersion: 'test' })}\n`);
        socket.write(`${JSON.stringify({ type: 'request', id: 1, method, params })}\n`);
        let buffer = '';
        return await new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`${method}: no answer within 10 s`)), 10_000);
            socket.on('data', chunk => {
                buffer += chunk;
                for (const line of buffer.split('\n').slice(0, -1)) {
                    const message = JSON.parse(line);
                    if ((message.type === 'reply' || message.type === 'error') && message.id === 1) {
                        clearTimeout(timer);
                        resolve(message.type === 'reply' ? { result: message.result } : { code: message.code, message: message.message });
                    }
                }
                buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
            });
        });
    } finally {
        socket.destroy();
    }
}

const narrowTools = ['file_read', 'file_write', 'system_run_command', 'workspace_create'];

describe('a profile per principal', needsRoot, () => {
    let scratch;
    let policyFile;
    let auditLog;
    let daemon;
    const clients = [];

    async function connect(principal) {
        const client = new Client({ name: `${principal}-client`, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: { authorization: `Bearer ${tokens[principal]}` } } });
        await client.connect(transport);
        clients.push(client);
        const call = async (tool, args) => {
            const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
            return { isError: result.isError === true, text: JSON.stringify(result.structuredContent ?? result.content) };
        };
        const tools = async () => (await client.listTools()).tools.map(tool => tool.name).sort();
        return { client, transport, call, tools };
    }

    const auditEvents = () => readFileSync(auditLog, 'utf8').trim().split('\n').map(line => JSON.parse(line));

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-profiles-'));
        policyFile = join(scratch, 'policy');
        auditLog = join(scratch, 'audit.log');
        writeFileSync(join(scratch, 'carol.token'), `${tokens.carol}\n`);
        writeFileSync(policyFile, policy({ aliceTools: narrowTools }));
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_POLICY_FILE: policyFile, AUDIT_LOG: auditLog,
                ADMIN_SOCKET: join(scratch, 'admin.sock'),
                JOB_FOREGROUND_MAX_PER_PRINCIPAL: 8, BASH_ALLOWED_COMMANDS: 'ls,cat,echo,sleep,test,[',
            },
        });
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test('tools/list differs per principal, and a tool outside the profile is refused as unknown', () => withDiagnostics(daemon, async () => {
        const [alice, bob] = [await connect('alice'), await connect('bob')];
        assert.deepEqual(await alice.tools(), [...narrowTools].sort());
        const bobs = await bob.tools();
        assert.ok(bobs.includes('file_list') && bobs.includes('system_run_python'), bobs.join(','));
        await assert.rejects(alice.call('file_list', { path: '.' }), error =>
            error.code === -32602 && /unknown tool: file_list/.test(error.message)
            && /profile 'narrow'/.test(error.message) && /tools/.test(error.message));
        const listed = await bob.call('file_list', { path: '.' });
        assert.ok(!listed.isError, listed.text);
        // The refusal is in the audit log, with the profile named.
        const refused = auditEvents().filter(event => event.event === 'call_finished' && event.tool === 'file_list'
            && event.outcome === 'unknown_tool');
        assert.equal(refused.length, 1, JSON.stringify(refused));
        assert.match(refused[0].detail, /profile 'narrow' does not offer it: tools/);
    }));

    test("a call's job cap of the profile, while another principal is not held", { timeout: 90_000 }, () => withDiagnostics(daemon, async () => {
        const [alice, bob] = [await connect('alice'), await connect('bob')];
        const held = { command: 'while [ ! -e gate.txt ]; do sleep 0.1; done; echo done', timeout: 30 };
        const first = alice.call('system_run_command', held);
        await new Promise(resolve => setTimeout(resolve, 1000));
        const over = await alice.call('system_run_command', held);
        assert.ok(over.isError, over.text);
        assert.match(over.text, /profile 'narrow'/);
        assert.match(over.text, /max_foreground_jobs/);
        const bobs = await Promise.all([bob.call('system_run_command', { command: 'echo one' }), bob.call('system_run_command', { command: 'echo two' })]);
        for (const result of bobs)
            assert.ok(!result.isError, result.text);
        const opened = await alice.call('file_write', { path: 'gate.txt', content: 'go' });
        assert.ok(!opened.isError, opened.text);
        const done = await first;
        assert.ok(!done.isError, done.text);
    }));

    test('background jobs: the cap of the profile, over all sessions of the principal', { timeout: 90_000 }, () => withDiagnostics(daemon, async () => {
        const [alice1, alice2, bob] = [await connect('alice'), await connect('alice'), await connect('bob')];
        const long = { command: 'sleep 60', background: true };
        const started = await alice1.call('system_run_command', long);
        assert.ok(!started.isError, started.text);
        const over = await alice2.call('system_run_command', long);
        assert.ok(over.isError, over.text);
        assert.match(over.text, /profile 'narrow'/);
        assert.match(over.text, /max_background_jobs/);
        // Bob has the global JOB_MAX_PER_PRINCIPAL.
        for (let i = 0; i < 2; ++i) {
            const bobs = await bob.call('system_run_command', long);
            assert.ok(!bobs.isError, bobs.text);
        }
        for (const client of [alice1, alice2, bob])
            await client.client.close();
    }));

    test('named workspaces: the count of the profile', () => withDiagnostics(daemon, async () => {
        const alice = await connect('alice');
        const made = await alice.call('workspace_create', { name: 'one' });
        assert.ok(!made.isError, made.text);
        const second = await alice.call('workspace_create', { name: 'two' });
        assert.ok(second.isError, second.text);
        assert.match(second.text, /profile 'narrow'/);
        assert.match(second.text, /named_workspaces/);
    }));

    test('the call rate: -32029 with the wait, HTTP 429 with Retry-After, and another principal is not slowed', () => withDiagnostics(daemon, async () => {
        const [carol, bob] = [await connect('carol'), await connect('bob')];
        // A burst of two, then a call a second.
        for (let call = 0; call < 2; ++call) {
            const result = await carol.call('file_write', { path: `carol-${call}.txt`, content: 'x' });
            assert.ok(!result.isError, result.text);
        }
        await assert.rejects(carol.call('file_write', { path: 'carol-2.txt', content: 'x' }), error => {
            assert.equal(error.code, 429, error.message);
            assert.match(error.message, /-32029/);
            assert.match(error.message, /profile 'slow'/);
            assert.match(error.message, /call_rate/);
            return true;
        });
        // The raw answer: 429, Retry-After in whole seconds, and the JSON-RPC error's data.
        const response = await fetch(daemon.url, {
            method: 'POST',
            headers: {
                authorization: `Bearer ${tokens.carol}`, 'content-type': 'application/json',
                accept: 'application/json, text/event-stream', 'mcp-session-id': carol.transport.sessionId,
                'mcp-protocol-version': carol.transport.protocolVersion ?? '2025-11-25',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'file_read', arguments: { path: 'carol-0.txt' } } }),
        });
        assert.equal(response.status, 429);
        assert.ok(Number(response.headers.get('retry-after')) >= 1, response.headers.get('retry-after'));
        const body = await response.json();
        assert.equal(body.error.code, -32029);
        assert.equal(body.error.data.profile, 'slow');
        assert.equal(body.error.data.rule, 'call_rate');
        assert.ok(body.error.data.retryAfterMs > 0 && body.error.data.retryAfterMs <= 1000, JSON.stringify(body));
        for (let call = 0; call < 10; ++call) {
            const result = await bob.call('file_write', { path: `bob-${call}.txt`, content: 'x' });
            assert.ok(!result.isError, result.text);
        }
        const overRate = auditEvents().filter(event => event.event === 'call_finished' && /call_rate/.test(event.detail ?? ''));
        assert.ok(overRate.length >= 2 && overRate.every(event => /profile 'slow'/.test(event.detail)), JSON.stringify(overRate));
        // The bucket refills.
        await new Promise(resolve => setTimeout(resolve, body.error.data.retryAfterMs + 50));
        const later = await carol.call('file_read', { path: 'carol-0.txt' });
        assert.ok(!later.isError, later.text);
    }));

    test('SIGHUP reloads the policy for open sessions; a broken file keeps the policy in force', () => withDiagnostics(daemon, async () => {
        const alice = await connect('alice');
        writeFileSync(policyFile, policy({ aliceTools: [...narrowTools, 'file_list'] }));
        process.kill(daemon.pid, 'SIGHUP');
        assert.ok(await eventually(async () => (await alice.tools()).includes('file_list'), { timeoutMs: 5000 }), 'the reload did not offer file_list');
        const listed = await alice.call('file_list', { path: '.' });
        assert.ok(!listed.isError, listed.text);
        assert.ok(auditEvents().some(event => event.event === 'policy_reloaded' && event.file === policyFile));

        writeFileSync(policyFile, `${policy({ aliceTools: narrowTools })}\n[profile extra]\ncolour = red\n`);
        process.kill(daemon.pid, 'SIGHUP');
        assert.ok(await eventually(() => auditEvents().some(event => event.event === 'policy_reload_failed'), { timeoutMs: 5000 }), 'no policy_reload_failed record');
        const failed = auditEvents().find(event => event.event === 'policy_reload_failed');
        assert.match(failed.error, new RegExp(`MCP_POLICY_FILE ${policyFile} line \\d+: colour: unknown key`));
        assert.ok(await eventually(() => /reload failed, the policy in force stays/.test(daemon.stderr())), 'no error logged');
        // The policy of the last good file is still in force: file_list stays offered.
        assert.ok((await alice.tools()).includes('file_list'));
        const still = await alice.call('file_list', { path: '.' });
        assert.ok(!still.isError, still.text);
        // A principal of a failed reload's file is never let in.
        const stranger = await fetch(daemon.url, { method: 'POST', headers: { authorization: 'Bearer nobody-at-all-000000', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
        assert.equal(stranger.status, 401);

        // The console's reloadPolicy: refused with the error while the file is broken, then the
        // fixed file is in force at once.
        const refused = await adminRequest(join(scratch, 'admin.sock'), 'reloadPolicy');
        assert.equal(refused.code, 'failed', JSON.stringify(refused));
        assert.match(refused.message, /colour: unknown key/);
        writeFileSync(policyFile, policy({ aliceTools: narrowTools }));
        const reloaded = await adminRequest(join(scratch, 'admin.sock'), 'reloadPolicy');
        assert.deepEqual(reloaded.result, { profiles: 2, principals: 3 });
        assert.deepEqual(await alice.tools(), [...narrowTools].sort());
        await assert.rejects(alice.call('file_list', { path: '.' }), /profile 'narrow' does not offer it/);
    }));

    test('a policy that does not validate stops start-up, naming file, line and field', async () => {
        const broken = join(scratch, 'broken-policy');
        writeFileSync(broken, '[profile p]\ntools = file_read, no_such_tool\n');
        await assert.rejects(startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: join(scratch, 'sandbox2'), MCP_POLICY_FILE: broken } }),
            error => /MCP_POLICY_FILE .*broken-policy: \[profile p\] tools: no tool 'no_such_tool'/.test(error.message));
        writeFileSync(broken, '[profile p]\n\nmax_background_jobs = many\n');
        await assert.rejects(startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: join(scratch, 'sandbox2'), MCP_POLICY_FILE: broken } }),
            error => /MCP_POLICY_FILE .*broken-policy line 3: max_background_jobs: 'many' is not a whole number/.test(error.message));
    });
});
