// The AI SDK's MCP client (@ai-sdk/mcp) against cmcpd over Streamable HTTP and stdio, with its
// server/discover probe (which finds the 2026-07-28 era; on stdio the client gives the probe one
// second, after which it initializes instead) and without it (the 2025 initialize).
// Each runs a jailed command, Python and a file read.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { createMCPClient } from '../clients/node_modules/@ai-sdk/mcp/dist/index.js';
import { Experimental_StdioMCPTransport } from '../clients/node_modules/@ai-sdk/mcp/dist/mcp-stdio/index.js';
import { cleanEnv, conformanceDaemonPath, removeStdioScratch, scratchDir, settingArgs, startDaemon, withDiagnostics } from './lib/daemon.mjs';

const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: 'needs root: jobs switch to host uids of the pool' };
const probes = [['with the server/discover probe', true], ['without the probe', false]];

async function exercise(client, label) {
    const ok = async (name, args) => {
        const result = await client.callTool({ name, arguments: args });
        assert.ok(!result.isError, `${label} ${name}: ${JSON.stringify(result)}`);
        return result.structuredContent;
    };
    assert.equal((await ok('system_run_command', { command: 'echo jailed' })).stdout, 'jailed\n');
    assert.equal((await ok('system_run_python', { code: 'print(6 * 7)' })).output, '42\n');
    const path = `ai-sdk-${label.replace(/\W+/g, '-')}.txt`;
    await ok('file_write', { path, content: `written by ${label}\n` });
    assert.match(JSON.stringify(await ok('file_read', { path })), new RegExp(`written by ${label}`));
    const tools = await client.tools();
    assert.ok('system_run_command' in tools, 'the tool set offers the jailed command');
}

describe('AI SDK MCP client over Streamable HTTP', needsRoot, () => {
    let daemon;
    before(async () => { daemon = await startDaemon(); });
    after(async () => { await daemon?.stop(); });
    for (const [label, protocolVersionDiscovery] of probes) {
        test(label, { timeout: 30_000 }, () => withDiagnostics(daemon, async () => {
            const sessions = () => (daemon.stderr().match(/client ai-sdk-mcp-client \S+ speaks/g) ?? []).length;
            const before = sessions();
            const client = await createMCPClient({ transport: { type: 'http', url: daemon.url }, protocolVersionDiscovery });
            try {
                await exercise(client, `http ${label}`);
                // The probe finds the modern era, which needs no session; without it the client
                // initializes one.
                assert.equal(sessions() - before, protocolVersionDiscovery ? 0 : 1);
            } finally {
                await client.close();
            }
        }));
    }
});

describe('AI SDK MCP client over stdio', needsRoot, () => {
    for (const [label, protocolVersionDiscovery] of probes) {
        test(label, { timeout: 30_000 }, async () => {
            const cwd = scratchDir();
            const transport = new Experimental_StdioMCPTransport({ command: conformanceDaemonPath(), cwd, env: cleanEnv(),
                args: ['--stdio', ...settingArgs()], stderr: 'ignore' });
            let client;
            try {
                client = await createMCPClient({ transport, protocolVersionDiscovery });
                await exercise(client, `stdio ${label}`);
            } finally {
                // Read before the close, which makes the transport forget its process.
                const pid = transport.process?.pid;
                await client?.close();
                await removeStdioScratch(pid, cwd);
            }
        });
    }
});
