// Published ports through the official SDK client and plain HTTP: a background Python job
// serves files, server-sent events and a WebSocket echo on its own loopback; port_publish makes
// it reachable at /ports/<token>/ of the daemon's listener. A file is fetched, a body posted,
// the server sees its own Host and none of the daemon's Authorization, its redirects stay under
// the URL; events stream and a WebSocket echoes through the URL; port_list shows the traffic;
// revoking, expiry and the job's end each turn the URL into a 404; the audit log holds the
// publication and the revocation with its traffic.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, hostWorkspace, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { publishWhenListening, startServerJob } from './lib/ports.mjs';

const TOKEN = 'ports-test-token-0123456789';
const bearer = { authorization: `Bearer ${TOKEN}` };
const root = process.getuid() === 0;
const needsRoot = root ? {} : { skip: "needs root: the daemon enters the jobs' network namespaces" };

describe('published ports', needsRoot, () => {
    let scratch;
    let daemon;
    let client;
    let auditLog;

    const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
    const ok = async (name, args) => {
        const result = await call(name, args);
        assert.ok(!result.isError, `${name}: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-ports-'));
        chmodSync(scratch, 0o755);
        auditLog = join(scratch, 'audit.jsonl');
        const sandbox = join(scratch, 'sandbox');
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: sandbox, MCP_AUTH_TOKEN: TOKEN, PYTHON_NETWORK: 'true', AUDIT_LOG: auditLog },
        });
        writeFileSync(join(hostWorkspace(sandbox), 'hello.txt'), 'hello through a published port\n');
        client = new Client({ name: 'ports-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: bearer } }));
        await client.listTools(); // the SDK checks every structuredContent against its schema from here
    });
    after(async () => {
        await client?.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test('a private port: a file, a posted body, rewritten headers and redirects, then revoked', () => withDiagnostics(daemon, async () => {
        const job = await startServerJob(call, 8001);
        const published = await publishWhenListening(call, job, 8001, {}, bearer);
        assert.match(published.url, /^http:\/\/127\.0\.0\.1:\d+\/ports\/pt_[0-9a-f]{32}\/$/);
        assert.equal(published.public, false);
        assert.equal(published.job_id, job);

        const file = await fetch(`${published.url}hello.txt`, { headers: bearer });
        assert.equal(file.status, 200);
        assert.equal(await file.text(), 'hello through a published port\n');
        // Private: the bearer token of the principal is the key.
        const bare = await fetch(`${published.url}hello.txt`);
        assert.equal(bare.status, 401);

        const body = randomBytes(3 * 1024 * 1024);
        const posted = await (await fetch(`${published.url}upload`, { method: 'POST', headers: bearer, body })).json();
        assert.equal(posted.length, body.length);
        assert.equal(posted.sha256, createHash('sha256').update(body).digest('hex'));

        const seen = await (await fetch(`${published.url}headers`, { headers: { ...bearer, 'x-forwarded-for': '6.6.6.6' } })).json();
        assert.equal(seen.host, '127.0.0.1:8001');
        assert.equal(seen.authorization, undefined, "the daemon's Authorization is never forwarded");
        assert.equal(seen['x-forwarded-for'], undefined, "a client's X-Forwarded-For is not believed");
        assert.equal(seen['x-forwarded-prefix'], new URL(published.url).pathname.replace(/\/$/, ''));
        assert.equal(seen['request-target'], '/headers');

        // The server's redirect to its own address stays under the published URL.
        const redirect = await fetch(`${published.url}own-redirect`, { headers: bearer, redirect: 'manual' });
        assert.equal(redirect.status, 302);
        assert.equal(redirect.headers.get('location'), `${new URL(published.url).pathname}hello.txt`);
        // The URL without its slash is sent to it, so that relative links resolve.
        const slashless = await fetch(published.url.replace(/\/$/, ''), { headers: bearer, redirect: 'manual' });
        assert.equal(slashless.status, 308);
        assert.equal(slashless.headers.get('location'), new URL(published.url).pathname);

        const listed = (await ok('port_list', {})).ports.find(port => port.token === published.token);
        assert.ok(listed, 'port_list shows the port');
        assert.ok(listed.connections >= 5, JSON.stringify(listed));
        assert.ok(listed.bytes_in >= body.length, JSON.stringify(listed));
        assert.ok(listed.bytes_out > 0, JSON.stringify(listed));

        // /health counts the ports and their traffic, naming none.
        const health = await (await fetch(`${daemon.base}/health`)).json();
        assert.ok(health.published_ports.ports >= 1 && health.published_ports.bytes_in >= body.length, JSON.stringify(health.published_ports));
        assert.ok(!JSON.stringify(health).includes(published.token));

        await ok('port_revoke', { token: published.token });
        assert.equal((await fetch(`${published.url}hello.txt`, { headers: bearer })).status, 404);
        assert.equal((await ok('port_list', {})).ports.some(port => port.token === published.token), false);

        const records = readFileSync(auditLog, 'utf8').trim().split('\n').map(line => JSON.parse(line));
        const publishedRecord = records.find(record => record.event === 'port_published' && record.job_id === job);
        const revokedRecord = records.find(record => record.event === 'port_revoked' && record.job_id === job);
        assert.ok(publishedRecord, 'the publication is audited');
        assert.equal(publishedRecord.port, 8001);
        assert.equal(revokedRecord?.reason, 'revoked');
        assert.ok(revokedRecord.bytes_in >= body.length && revokedRecord.bytes_out > 0, JSON.stringify(revokedRecord));
        assert.ok(!JSON.stringify(records).includes(published.token), 'the audit log does not hold the URL secret');
        await ok('job_kill', { job_id: job });
    }));

    test('a public port streams server-sent events and relays a WebSocket', () => withDiagnostics(daemon, async () => {
        const job = await startServerJob(call, 8002);
        const published = await publishWhenListening(call, job, 8002, { public: true });
        assert.equal(published.public, true);
        assert.equal((await fetch(`${published.url}hello.txt`)).status, 200, 'a public port needs no bearer token');

        const events = await fetch(`${published.url}events`);
        assert.equal(events.headers.get('content-type'), 'text/event-stream');
        const reader = events.body.getReader();
        const arrivals = [];
        let text = '';
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                break;
            text += Buffer.from(value).toString();
            arrivals.push(Date.now());
        }
        assert.equal(text, 'data: tick 0\n\ndata: tick 1\n\ndata: tick 2\n\n');
        assert.ok(arrivals.length >= 3 && arrivals.at(-1) - arrivals[0] >= 400,
                  'the events arrived as they were sent, not all at the end');

        const socket = new WebSocket(`${published.url.replace(/^http/, 'ws')}ws`);
        const echoed = await new Promise((resolve, reject) => {
            const received = [];
            socket.onerror = () => reject(new Error('the WebSocket failed'));
            socket.onopen = () => { socket.send('first'); socket.send('x'.repeat(5000)); };
            socket.onmessage = message => {
                received.push(message.data);
                if (received.length === 2)
                    resolve(received);
            };
        });
        assert.deepEqual(echoed, ['first', 'x'.repeat(5000)]);
        socket.close();
        await ok('job_kill', { job_id: job });
    }));

    test('a port expires, and one whose job ended answers 404', () => withDiagnostics(daemon, async () => {
        const job = await startServerJob(call, 8003);
        const expiring = await publishWhenListening(call, job, 8003, { public: true, expires_in_seconds: 2 });
        const lasting = await ok('port_publish', { job_id: job, port: 8003, public: true });
        await sleep(2500);
        assert.equal((await fetch(`${expiring.url}hello.txt`)).status, 404, 'expired');
        assert.equal((await fetch(`${lasting.url}hello.txt`)).status, 200);

        await ok('job_kill', { job_id: job });
        assert.ok(await eventually(async () => (await fetch(`${lasting.url}hello.txt`)).status === 404, { timeoutMs: 5000 }),
                  "the port died with its job");
        const refused = await call('port_publish', { job_id: job, port: 8003 });
        assert.equal(refused.isError, true);
        assert.match(refused.structuredContent.error, /has ended/);
        const records = readFileSync(auditLog, 'utf8').trim().split('\n').map(line => JSON.parse(line));
        const reasons = records.filter(record => record.event === 'port_revoked' && record.job_id === job).map(record => record.reason);
        assert.deepEqual(reasons.sort(), ['expired', 'job_ended']);
    }));
});
