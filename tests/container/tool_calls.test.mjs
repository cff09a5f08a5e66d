// Real tool calls through the official MCP TypeScript SDK client against cmcpd running in the
// container (container_test.sh starts it and passes its URL in CMCP_URL): every tool family the
// image ships. The workspace is shared by the file tools (the daemon, through openat2) and the
// jobs (cmcp-jail, in the container), so each direction is checked, and the jobs must report the
// jail layers the container allows. The web tools fetch from a page server that
// container_test.sh starts inside the container on 127.0.0.1 (CMCP_PAGES_URL), allowed by the
// daemon's WEB_ALLOWED_DOMAINS and WEB_ALLOW_PRIVATE.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { eventually } from '../integration/lib/daemon.mjs';

const url = process.env.CMCP_URL;
const pages = process.env.CMCP_PAGES_URL;
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
        for (const name of ['system_run_command', 'system_run_python', 'system_env_var', 'file_write',
            'file_read', 'file_list', 'file_edit', 'file_search', 'file_move', 'file_delete', 'job_status',
            'job_output', 'job_kill', 'job_list', 'web_scrape', 'web_browse', 'web_search'])
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
    test('the file tools list, edit, search, move and delete in the workspace', async () => {
        await call('file_write', { path: 'family/notes.md', content: 'x = 1\ny = 2\n' });
        const listing = await call('file_list', { path: 'family' });
        assert.deepEqual(listing.entries.map(entry => entry.name), ['notes.md']);
        const edited = await call('file_edit', { path: 'family/notes.md', edits: [{ old_text: 'y = 2', new_text: 'y = 3' }] });
        assert.match(edited.diff, /-y = 2\n\+y = 3/);
        const found = await call('file_search', { pattern: 'y = 3', path: 'family' });
        assert.deepEqual(found.matches.map(match => `${match.path}:${match.line}`), ['family/notes.md:2']);
        await call('file_move', { source: 'family/notes.md', destination: 'family/moved.md' });
        assert.equal((await call('file_read', { path: 'family/moved.md' })).content, 'x = 1\ny = 3\n');
        await call('file_delete', { path: 'family/moved.md' });
        assert.deepEqual((await call('file_list', { path: 'family' })).entries, []);
    });

    test('a background job runs in the jail; its status and output are read by id', async () => {
        const job = await call('system_run_command', { command: 'echo started; echo finished', background: true });
        assert.match(job.job_id, /^job_[0-9a-f]{32}$/);
        let status;
        await eventually(async () => (status = await call('job_status', { job_id: job.job_id })).state !== 'running',
                         { timeoutMs: 20_000, intervalMs: 200 });
        assert.equal(status.state, 'exited', JSON.stringify(status));
        assert.equal(status.result.exit_code, 0);
        const output = await call('job_output', { job_id: job.job_id, offset: 0, limit: 4096 });
        assert.equal(output.output, 'started\nfinished\n');
        assert.ok((await call('job_list', {})).jobs.some(listed => listed.job_id === job.job_id));
    });

    test('system_env_var tells the environment jobs see', async () => {
        const env = await call('system_env_var', { var_name: 'PATH' });
        assert.ok(env.requested_var?.length > 0, JSON.stringify(env));
        const run = await call('system_run_python', { code: "import os\n_ = os.environ.get('PATH')" });
        assert.equal(run.result, env.requested_var);
    });

    test('web_scrape parses a page in the HTML worker', async () => {
        assert.ok(pages, 'set CMCP_PAGES_URL to the page server in the container (container_test.sh does)');
        const page = await call('web_scrape', { url: `${pages}/page.html`, selector: '#answer' });
        assert.match(JSON.stringify(page), /forty-two/);
    });

    test('web_browse renders a page with scripts in the browser worker', async () => {
        const page = await call('web_browse', { url: `${pages}/page.html`, text: true });
        assert.match(page.content, /changed by script/);
    });

    test('web_search asks the configured SearXNG back end', async () => {
        const found = await call('web_search', { query: 'container' });
        assert.equal(found.backend, 'searxng');
        assert.deepEqual(found.results.map(result => result.url), ['https://example.org/container']);
    });
});
