// Published ports attacked over plain HTTP, by other principals and by the job's own server:
// guessed tokens, another principal's bearer token on a private port, port_list and port_revoke
// from another principal, paths that try to leave the port for the daemon's /mcp, a job that
// tries to reach the daemon, request smuggling (Content-Length with Transfer-Encoding, a bare CR
// in a header), and a server that answers with huge headers, a body that never ends or a
// redirect to an internal address (relayed, never followed). Public ports forbidden by the
// operator stay private.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { hostWorkspace, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { publishWhenListening, rawExchange, startServerJob, statusOf } from '../integration/lib/ports.mjs';

const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
const as = principal => ({ authorization: `Bearer ${tokens[principal]}` });
const digest = text => createHash('sha256').update(text).digest('hex');
const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: "needs root: the daemon enters the jobs' network namespaces" };
const MAX_MB = 4;

describe('published ports under attack', needsRoot, () => {
    let scratch;
    let daemon;
    const clients = [];
    let alice;
    let bob;
    let aliceJob;
    let privatePort;
    let publicPort;

    const session = async principal => {
        const client = new Client({ name: `${principal}-ports`, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: as(principal) } }));
        clients.push(client);
        return (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
    };
    const pathOf = url => new URL(url).pathname;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-published-ports-'));
        chmodSync(scratch, 0o755);
        const principals = join(scratch, 'principals');
        writeFileSync(principals, `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        const sandbox = join(scratch, 'sandbox');
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: sandbox, MCP_PRINCIPALS_FILE: principals, PYTHON_NETWORK: 'true', PORTS_MAX_MB: MAX_MB },
        });
        writeFileSync(join(hostWorkspace(sandbox), 'hello.txt'), 'hello\n');
        alice = await session('alice');
        bob = await session('bob');
        aliceJob = await startServerJob(alice, 8101);
        privatePort = await publishWhenListening(alice, aliceJob, 8101, {}, as('alice'));
        publicPort = (await alice('port_publish', { job_id: aliceJob, port: 8101, public: true })).structuredContent;
    });
    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test("guessed tokens and another principal's bearer token reach nothing", () => withDiagnostics(daemon, async () => {
        const url = `${privatePort.url}hello.txt`;
        assert.equal((await fetch(url, { headers: as('alice') })).status, 200);
        const bobs = await fetch(url, { headers: as('bob') });
        const guessed = await fetch(url.replace(/pt_[0-9a-f]{32}/, `pt_${'0'.repeat(32)}`), { headers: as('bob') });
        assert.equal(bobs.status, 404);
        assert.equal(guessed.status, 404);
        assert.equal(await bobs.text(), await guessed.text(), "another principal's port answers as an unknown one");
        assert.equal((await fetch(url)).status, 401);
        assert.equal((await fetch(url, { headers: { authorization: 'Bearer not-a-token' } })).status, 401);
        // A guessed public token is no better.
        assert.equal((await fetch(`${publicPort.url.replace(/pt_[0-9a-f]{32}/, `pt_${'f'.repeat(32)}`)}hello.txt`)).status, 404);
    }));

    test("another principal can neither list nor revoke a port, nor publish another's job", () => withDiagnostics(daemon, async () => {
        const listed = await bob('port_list', {});
        assert.deepEqual(listed.structuredContent.ports, []);
        const revoke = await bob('port_revoke', { token: privatePort.token });
        assert.equal(revoke.isError, true);
        const publish = await bob('port_publish', { job_id: aliceJob, port: 8101, public: true });
        assert.equal(publish.isError, true);
        assert.match(publish.structuredContent.error, /no such job|unknown/i);
        assert.equal((await fetch(`${privatePort.url}hello.txt`, { headers: as('alice') })).status, 200, 'still published');
    }));

    test("no path through the forwarder leads to the daemon's own endpoints", () => withDiagnostics(daemon, async () => {
        const prefix = pathOf(publicPort.url);
        for (const path of [`${prefix}mcp`, `${prefix}../../mcp`, `${prefix}%2e%2e/%2e%2e/mcp`, `${prefix}/mcp`]) {
            const answer = await rawExchange(daemon.base,
                `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\n${'Authorization'}: Bearer ${tokens.alice}\r\n\r\n`);
            // The job's server answers (a file server's 404 page), never the daemon's JSON-RPC.
            assert.doesNotMatch(answer, /jsonrpc/, `${path}: ${answer.slice(0, 300)}`);
            assert.match(answer, /^HTTP\/1\.[01] 404/, `${path}: ${answer.slice(0, 300)}`);
        }
        // "/ports/../mcp" names no port.
        const escape = await rawExchange(daemon.base, `GET /ports/../mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\n\r\n`);
        assert.equal(statusOf(escape), 404);
        // The job's own network has no way to the daemon's port.
        const probe = await alice('system_run_python', {
            code: `import socket\ntry:\n    socket.create_connection(('127.0.0.1', ${daemon.port}), timeout=3)\n    print('reached')\nexcept OSError as error:\n    print('refused', error)\n`,
        });
        assert.match(probe.structuredContent.output ?? probe.structuredContent.stdout, /^refused/);
    }));

    test('smuggling is refused at the door', () => withDiagnostics(daemon, async () => {
        const prefix = pathOf(publicPort.url);
        const hidden = `GET ${prefix}hello.txt HTTP/1.1\r\nHost: 127.0.0.1:8101\r\n\r\n`;
        const both = await rawExchange(daemon.base,
            `POST ${prefix}upload HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nContent-Length: ${hidden.length + 5}\r\n`
            + `Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n${hidden}`);
        assert.equal(statusOf(both), 400, both.slice(0, 300));
        assert.match(both, /both Content-Length and Transfer-Encoding/);
        assert.equal((both.match(/^HTTP\/1\.1 /gm) ?? []).length, 1, 'one answer, no smuggled second request');
        // The same rule holds on the daemon's other routes.
        const onMcp = await rawExchange(daemon.base,
            `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
        assert.equal(statusOf(onMcp), 400);
        const bareReturn = await rawExchange(daemon.base,
            `GET ${prefix}hello.txt HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nX-Note: a\rContent-Length: 5\r\n\r\n`);
        assert.equal(statusOf(bareReturn), 400, bareReturn.slice(0, 300));
    }));

    test("the server's huge headers, endless body and internal redirect are bounded and relayed, never followed", () => withDiagnostics(daemon, async () => {
        const huge = await fetch(`${publicPort.url}huge-headers`);
        assert.equal(huge.status, 502);
        assert.match(await huge.text(), /64 KiB/);

        const endless = await fetch(`${publicPort.url}forever`);
        let received = 0;
        try {
            for await (const chunk of endless.body)
                received += chunk.length;
        } catch {
            // cut off: the point
        }
        assert.ok(received <= MAX_MB * 1024 * 1024 && received > 0, `received ${received} bytes`);

        const redirect = await fetch(`${publicPort.url}internal-redirect`, { redirect: 'manual' });
        assert.equal(redirect.status, 302);
        assert.equal(redirect.headers.get('location'), 'http://169.254.169.254/latest/meta-data/');
        // Still serving after all of it.
        assert.equal((await fetch(`${publicPort.url}hello.txt`)).status, 200);
    }));
});

describe('published ports when the operator forbids public ones', needsRoot, () => {
    test('port_publish refuses public: true', async () => {
        const scratch = mkdtempSync(join(tmpdir(), 'cmcp-published-ports-'));
        chmodSync(scratch, 0o755);
        const daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), PYTHON_NETWORK: 'true', PORTS_ALLOW_PUBLIC: 'false' },
        });
        const client = new Client({ name: 'no-public', version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            const call = (name, args) => client.callTool({ name, arguments: args });
            const job = await startServerJob(call, 8201);
            const refused = await call('port_publish', { job_id: job, port: 8201, public: true });
            assert.equal(refused.isError, true);
            assert.match(refused.structuredContent.error, /PORTS_ALLOW_PUBLIC/);
            await call('job_kill', { job_id: job });
        } finally {
            await client.close().catch(() => {});
            await daemon.stop();
            rmSync(scratch, { recursive: true, force: true });
        }
    });
});
