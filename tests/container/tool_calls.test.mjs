// A real tool call through the official MCP TypeScript SDK client against cmcpd running in the
// container (container_test.sh starts it and passes its URL in CMCP_URL). The workspace is shared
// by the file tools (the daemon, through openat2) and the jobs (cmcp-jail, in the container),
// so each direction is checked, and the jobs must report the jail layers the container allows.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';

const url = process.env.CMCP_URL;
// The layers container/README.md documents for a non-root daemon in Podman with the shipped
// seccomp profile; identity and cgroup need root and a writable cgroup tree, which it has not.
const expectedLayers = (process.env.CMCP_EXPECT_LAYERS ?? 'rlimits,namespaces,landlock,seccomp').split(',');

describe('cmcpd in the container', () => {
    let client;
    const call = async (name, args) => {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
        assert.ok(!result.isError, `${name} failed: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };

    before(async () => {
        assert.ok(url, 'set CMCP_URL to the containerised daemon (container_test.sh does)');
        client = new Client({ name: 'container-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    });
    after(async () => { await client?.close(); });

    test('lists the tools', async () => {
        const { tools } = await client.listTools();
        const names = tools.map(tool => tool.name);
        for (const name of ['system_run_command', 'system_run_python', 'file_write', 'file_read'])
            assert.ok(names.includes(name), `${name} missing from ${names.join()}`);
    });

    test('a file written through file_write is read by a jailed command', async () => {
        const written = await call('file_write', { path: 'from-client.txt', content: 'hello from the host\n' });
        assert.equal(written.success, true);
        const run = await call('system_run_command', { command: 'cat from-client.txt' });
        assert.equal(run.exit_code, 0, run.stderr);
        assert.equal(run.stdout, 'hello from the host\n');
        for (const layer of expectedLayers)
            assert.ok(run.layers.includes(layer), `layer ${layer} missing: ${run.layers.join()}`);
        assert.equal(run.insecure, false);
    });

    test('a file a jailed Python job writes is read through file_read', async () => {
        const run = await call('system_run_python', { code: "open('from-job.txt', 'w').write('written in the jail')\n_ = 42" });
        assert.equal(run.success, true, run.error);
        assert.equal(run.result, 42);
        const read = await call('file_read', { path: 'from-job.txt' });
        assert.equal(read.content, 'written in the jail');
    });

    test('jobs see their minimal root, not the container\'s files', async () => {
        const run = await call('system_run_command', { command: 'ls /' });
        assert.equal(run.exit_code, 0, run.stderr);
        const entries = run.stdout.split('\n').filter(Boolean);
        assert.ok(entries.includes('workspace'), entries.join());
        for (const hidden of ['app', 'home', 'root', 'var'])
            assert.ok(!entries.includes(hidden), `/${hidden} is visible in the job: ${entries.join()}`);
    });

    test('jobs cannot reach the daemon\'s port: no network but their own loopback', async () => {
        // The daemon listens on 0.0.0.0:8000 in the container; a job sharing the container's
        // network would connect to it on 127.0.0.1.
        const run = await call('system_run_python', {
            code: "import errno, socket\ntry:\n    socket.create_connection(('127.0.0.1', 8000), timeout=2)\n    _ = 'connected'\nexcept OSError as e:\n    _ = errno.errorcode.get(e.errno, str(e))",
        });
        // seccomp refuses internet sockets (EAFNOSUPPORT); were it gone, Landlock would refuse
        // the connect (EACCES), and the job's own loopback has nothing listening (ECONNREFUSED).
        assert.ok(['EAFNOSUPPORT', 'EACCES', 'ECONNREFUSED'].includes(run.result), run.result);
    });
});
