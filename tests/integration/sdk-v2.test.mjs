// The TypeScript SDK v2 client (@modelcontextprotocol/client, which speaks 2026-07-28) against
// cmcpd in each of its version-negotiation modes, over Streamable HTTP and stdio: 'legacy' (the
// 2025 initialize), 'auto' (server/discover first, then the modern era it finds) and pinned
// 2026-07-28. Each runs a jailed command, Python and a file read.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '../clients/node_modules/@modelcontextprotocol/client/dist/index.mjs';
import { StdioClientTransport } from '../clients/node_modules/@modelcontextprotocol/client/dist/stdio.mjs';
import { cleanEnv, conformanceDaemonPath, eventually, removeStdioScratch, scratchDir, settingArgs, startDaemon, withDiagnostics } from './lib/daemon.mjs';

// label, the client's mode, the era and version it must end up in.
const modes = [
    ['legacy', 'legacy', 'legacy', '2025-11-25'],
    ['auto', 'auto', 'modern', '2026-07-28'],
    ['pinned 2026-07-28', { pin: '2026-07-28' }, 'modern', '2026-07-28'],
];
const root = process.getuid() === 0;

// What every mode must be able to do: the structured results of three tools.
async function exercise(client, label, era, version) {
    assert.equal(client.getProtocolEra(), era, label);
    assert.equal(client.getNegotiatedProtocolVersion(), version, label);
    const ok = async (name, args) => {
        const result = await client.callTool({ name, arguments: args });
        assert.ok(!result.isError, `${label} ${name}: ${JSON.stringify(result)}`);
        return result.structuredContent;
    };
    const command = await ok('system_run_command', { command: 'echo jailed' });
    assert.equal(command.stdout.trim(), 'jailed');
    const python = await ok('system_run_python', { code: 'print(6 * 7)' });
    assert.equal(python.output.trim(), '42');
    const path = `notes-${label.replace(/\W+/g, '-')}.txt`;
    await ok('file_write', { path, content: `written by ${label}\n` });
    const read = await ok('file_read', { path });
    assert.match(JSON.stringify(read), new RegExp(`written by ${label}`));
    // This client has no Tasks extension: a background job goes through the job tools, whose
    // handle it mirrors in Mcp-Param-Handle in the modern era.
    const started = await ok('system_run_command', { command: `echo background ${label}`, background: true });
    let output = '';
    let offset = 0;
    const complete = await eventually(async () => {
        const window = await ok('job_output', { job_id: started.job_id, offset, limit: 4096 });
        output += window.output;
        offset = window.next_offset;
        return window.complete;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    assert.ok(complete, `${label}: the background job did not complete: ${JSON.stringify(output)}`);
    assert.equal(output, `background ${label}\n`);
}

// A client that answers elicitations. The tool asks the same way in both eras: a request to
// the client in a 2025 session, an input_required result the SDK fulfils and retries in 2026.
function eliciting(label, mode) {
    const client = new Client({ name: `sdk-v2-${label}`, version: '0' },
        { versionNegotiation: { mode }, capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async request => {
        assert.equal(request.params.message, `who is ${label}?`);
        return { action: 'accept', content: { username: `user of ${label}`, email: 'a@example.com' } };
    });
    return client;
}
async function elicit(client, label) {
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: `who is ${label}?` } });
    assert.ok(!result.isError, `${label}: ${JSON.stringify(result)}`);
    assert.match(result.content[0].text, new RegExp(`^User response: .*"username":"user of ${label}"`));
}

describe('SDK v2 client over Streamable HTTP', root ? {} : { skip: 'needs root: jobs switch to host uids of the pool' }, () => {
    let daemon;
    before(async () => { daemon = await startDaemon(); });
    after(async () => { await daemon?.stop(); });
    for (const [label, mode, era, version] of modes) {
        test(label, { timeout: 30_000 }, () => withDiagnostics(daemon, async () => {
            const client = eliciting(`http ${label}`, mode);
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            try {
                assert.equal(client.getServerVersion()?.name, 'container-mcp');
                await exercise(client, `http ${label}`, era, version);
                await elicit(client, `http ${label}`);
            } finally {
                await client.close();
            }
        }));
    }
});

describe('SDK v2 client over stdio', root ? {} : { skip: 'needs root: jobs switch to host uids of the pool' }, () => {
    for (const [label, mode, era, version] of modes) {
        test(label, { timeout: 30_000 }, async () => {
            const cwd = scratchDir();
            const client = eliciting(`stdio ${label}`, mode);
            const transport = new StdioClientTransport({ command: conformanceDaemonPath(), cwd, env: cleanEnv(), stderr: 'pipe',
                args: ['--stdio', ...settingArgs()] });
            let stderr = '';
            transport.stderr?.on('data', chunk => { stderr += chunk; });
            try {
                await client.connect(transport);
                await exercise(client, `stdio ${label}`, era, version);
                await elicit(client, `stdio ${label}`);
            } catch (error) {
                console.error(`--- cmcpd --stdio stderr ---\n${stderr.split('\n').slice(-30).join('\n')}`);
                throw error;
            } finally {
                // Read before the close, which makes the transport forget its process.
                const pid = transport.pid;
                await client.close();
                await removeStdioScratch(pid, cwd);
            }
        });
    }
});
