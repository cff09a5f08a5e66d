// What every principal needs, one principal cannot take: a principal flooding the server with
// long calls leaves pool uids for another principal's call; a configuration under which one
// principal could run every background job while others are named is refused at start-up; and
// a principal's stored tasks are capped while another principal's are not. Jobs switch to host
// uids, so the pool suite needs root (CI runs as root); without it that suite skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { post } from '../integration/lib/http.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };

// A principals file naming alice and bob in a new scratch directory; its path.
function principalsFile(scratch) {
    const file = join(scratch, 'principals');
    const digest = text => createHash('sha256').update(text).digest('hex');
    writeFileSync(file, `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
    return file;
}

describe('the uid pool keeps a share for a principal that holds none', needsRoot, () => {
    // Below what one principal's caps allow (JOB_FOREGROUND_MAX_PER_SESSION 16 and
    // JOB_FOREGROUND_MAX_PER_PRINCIPAL 64 by default), so only the pool's own share stops it.
    const UID_COUNT = 10;
    const FLOOD = 14;
    let scratch;
    let daemon;
    const clients = [];

    async function session(principal) {
        const client = new Client({ name: `${principal}-client`, version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: { authorization: `Bearer ${tokens[principal]}` } } });
        await client.connect(transport);
        clients.push(client);
        return async (tool, args) => {
            const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
            return { isError: result.isError === true, value: result.structuredContent, text: JSON.stringify(result.structuredContent ?? result.content) };
        };
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-principal-shares-'));
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: principalsFile(scratch),
                SANDBOX_UID_COUNT: UID_COUNT, BASH_ALLOWED_COMMANDS: 'echo,sleep',
            },
        });
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test(`alice's ${FLOOD} long calls at once leave bob's call a uid`, { timeout: 90_000 }, () => withDiagnostics(daemon, async () => {
        const [alice, bob] = [await session('alice'), await session('bob')];
        // Alice's calls sleep until the daemon stops; those the pool refuses answer at once.
        const answered = [];
        const flood = Array.from({ length: FLOOD }, () =>
            alice('system_run_command', { command: 'sleep 60' }).then(result => { answered.push(result); return result; }));
        try {
            // Alice has taken all the pool lets her once some of her calls are refused.
            assert.ok(await eventually(() => answered.length > 0, { timeoutMs: 20_000, intervalMs: 50 }),
                      `none of alice's ${FLOOD} calls was refused: the pool is larger than this test assumes`);
            assert.ok(answered.every(result => result.isError && /sandbox uids/.test(result.text)),
                      `alice's calls that ended were not refused a uid: ${answered.map(r => r.text).join('\n')}`);
            const running = FLOOD - answered.length;
            assert.ok(running >= UID_COUNT / 2, `alice runs only ${running} calls: she did not take the pool`);

            const call = await bob('system_run_command', { command: 'echo bob runs' });
            assert.equal(call.isError, false, `bob was refused while alice floods: ${call.text}`);
            assert.equal(call.value.stdout, 'bob runs\n', call.text);
            // Alice's refusals name the share kept for others and the setting it comes from.
            assert.match(answered[0].text, /principal 'alice' already holds \d+ of the 10 sandbox uids.*SANDBOX_UID_COUNT/);
        } finally {
            // Her sleeping calls end with the daemon and her client, whatever the outcome.
            await daemon.stop();
            await Promise.all(clients.map(client => client.close().catch(() => {})));
            await Promise.allSettled(flood);
        }
    }));
});

describe('background job slots with several principals', () => {
    let scratch;
    before(() => { scratch = mkdtempSync(join(tmpdir(), 'cmcp-principal-slots-')); });
    after(() => rmSync(scratch, { recursive: true, force: true }));

    test('one principal allowed every background slot is refused at start-up, naming the settings', async () => {
        // A daemon that starts all the same is stopped, so that the failure ends the test.
        await assert.rejects(
            startDaemon({
                fixtures: false,
                settings: {
                    SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: principalsFile(scratch),
                    JOB_MAX_PER_PRINCIPAL: 32, JOB_MAX_TOTAL: 32,
                },
            }).then(async daemon => { await daemon.stop(); return daemon; }),
            error => {
                assert.match(error.message, /exited before listening/);
                assert.match(error.message, /JOB_MAX_PER_PRINCIPAL=32 is not below JOB_MAX_TOTAL=32.*MCP_PRINCIPALS_FILE/);
                return true;
            });
    });

    test('one below the total starts', async () => {
        const daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: principalsFile(scratch),
                JOB_MAX_PER_PRINCIPAL: 31, JOB_MAX_TOTAL: 32,
            },
        });
        await daemon.stop();
    });
});

describe('stored tasks per principal', () => {
    const CAP = 3;
    const MODERN = '2026-07-28';
    const TASKS = 'io.modelcontextprotocol/tasks';
    let scratch;
    let daemon;

    // One modern-era request of `principal` declaring the Tasks extension; its JSON-RPC answer.
    async function ask(principal, method, params, id) {
        const _meta = {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
            'io.modelcontextprotocol/clientInfo': { name: `${principal}-tasks`, version: '0' },
        };
        const headers = {
            authorization: `Bearer ${tokens[principal]}`, 'mcp-protocol-version': MODERN, 'mcp-method': method,
            'mcp-name': method === 'tools/call' ? params.name : params.taskId,
        };
        const response = await post(daemon.url, { jsonrpc: '2.0', id, method, params: { ...params, _meta } }, { headers });
        const text = await response.text();
        if (!response.headers.get('content-type')?.includes('text/event-stream'))
            return JSON.parse(text);
        return text.split('\n').filter(line => line.startsWith('data:') && line.length > 5).map(line => JSON.parse(line.slice(5))).at(-1);
    }
    const newTask = (principal, id) => ask(principal, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: `${principal}-${id}` } }, id);

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-principal-tasks-'));
        daemon = await startDaemon({
            settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: principalsFile(scratch), TASKS_MAX_PER_PRINCIPAL: CAP },
        });
    });

    after(async () => {
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test(`a principal's task past ${CAP} is refused, naming the setting; another principal's is not`, () => withDiagnostics(daemon, async () => {
        const made = [];
        for (let i = 0; i < CAP; ++i) {
            const { result, error } = await newTask('alice', i + 1);
            assert.equal(error, undefined, JSON.stringify(error));
            assert.equal(result.resultType, 'task');
            made.push(result.taskId);
        }
        // Finished tasks are kept for their time to live, and count until it has passed.
        for (const taskId of made)
            assert.ok(await eventually(async () => (await ask('alice', 'tasks/get', { taskId }, 'get')).result?.status === 'completed',
                                       { timeoutMs: 10_000, intervalMs: 50 }), `task ${taskId} did not complete`);
        const { result: over, error } = await newTask('alice', 'over');
        assert.equal(over, undefined, `alice's task past the cap was made: ${JSON.stringify(over)}`);
        assert.equal(error.code, -32000);
        assert.match(error.message, new RegExp(`principal 'alice' already has ${CAP} tasks stored.*TASKS_MAX_PER_PRINCIPAL`));

        const { result: bobs, error: bobError } = await newTask('bob', 'bob');
        assert.equal(bobError, undefined, `bob was refused a task while alice is at her cap: ${JSON.stringify(bobError)}`);
        assert.equal(bobs.resultType, 'task');
        // Alice's own tasks are still there for her to read.
        assert.equal((await ask('alice', 'tasks/get', { taskId: made[0] }, 'again')).result?.status, 'completed');
    }));
});
