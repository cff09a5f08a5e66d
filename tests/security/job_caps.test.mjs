// One client cannot take the limits every client shares. A principal opens several sessions and
// fills them with calls' jobs and background jobs: past each session's and each principal's cap
// it is refused with the setting named, and another principal still runs its jobs. Jobs switch to
// host uids, so this needs root (CI runs as root); without it the suite skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool (CI runs as root)' };
const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };

describe('per-session and per-principal job caps', needsRoot, () => {
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
            return { isError: result.isError === true, text: JSON.stringify(result.structuredContent ?? result.content) };
        };
    }

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-job-caps-'));
        const principals = join(scratch, 'principals');
        const digest = text => createHash('sha256').update(text).digest('hex');
        writeFileSync(principals, `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_PRINCIPALS_FILE: principals,
                JOB_FOREGROUND_MAX_PER_SESSION: 2, JOB_FOREGROUND_MAX_PER_PRINCIPAL: 3,
                JOB_MAX_PER_SESSION: 2, JOB_MAX_PER_PRINCIPAL: 3, JOB_MAX_TOTAL: 20,
                BASH_ALLOWED_COMMANDS: 'ls,cat,echo,sleep,test,[',
            },
        });
    });

    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test("calls' own jobs: a session and a principal are capped, another principal is not", { timeout: 90_000 }, () => withDiagnostics(daemon, async () => {
        const [alice1, alice2, bob] = [await session('alice'), await session('alice'), await session('bob')];
        // Each call's job waits until the test writes gate.txt in Alice's workspace (its time limit
        // bounds the wait), so all of them overlap.
        const held = { command: 'while [ ! -e gate.txt ]; do sleep 0.1; done; echo done', timeout: 30 };
        const first = [alice1('system_run_command', held), alice1('system_run_command', held)];
        await new Promise(resolve => setTimeout(resolve, 1000));
        const overSession = await alice1('system_run_command', held);
        assert.ok(overSession.isError && overSession.text.includes('JOB_FOREGROUND_MAX_PER_SESSION'), overSession.text);
        const third = alice2('system_run_command', held);
        await new Promise(resolve => setTimeout(resolve, 1000));
        const overPrincipal = await alice2('system_run_command', held);
        assert.ok(overPrincipal.isError && overPrincipal.text.includes('JOB_FOREGROUND_MAX_PER_PRINCIPAL'), overPrincipal.text);
        assert.match(overPrincipal.text, /principal 'alice'/);
        // Bob is not held up by Alice's jobs.
        const bobResult = await bob('system_run_command', { command: 'echo bob' });
        assert.ok(!bobResult.isError, bobResult.text);
        const opened = await alice1('file_write', { path: 'gate.txt', content: 'go' });
        assert.ok(!opened.isError, opened.text);
        for (const result of await Promise.all([...first, third]))
            assert.ok(!result.isError, result.text);
        // Their places are free again.
        const again = await alice1('system_run_command', { command: 'echo again' });
        assert.ok(!again.isError, again.text);
    }));

    test('background jobs: more sessions do not give a principal more jobs', { timeout: 90_000 }, () => withDiagnostics(daemon, async () => {
        const [alice1, alice2, bob] = [await session('alice'), await session('alice'), await session('bob')];
        const long = { command: 'sleep 60', background: true };
        for (let i = 0; i < 2; ++i) {
            const started = await alice1('system_run_command', long);
            assert.ok(!started.isError, started.text);
        }
        const overSession = await alice1('system_run_command', long);
        assert.ok(overSession.isError && overSession.text.includes('JOB_MAX_PER_SESSION'), overSession.text);
        const third = await alice2('system_run_command', long);
        assert.ok(!third.isError, third.text);
        const overPrincipal = await alice2('system_run_command', long);
        assert.ok(overPrincipal.isError && overPrincipal.text.includes('JOB_MAX_PER_PRINCIPAL'), overPrincipal.text);
        const bobs = await bob('system_run_command', long);
        assert.ok(!bobs.isError, bobs.text);
    }));
});
