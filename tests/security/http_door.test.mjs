// The HTTP door attacked from outside. A daemon told to listen off loopback without a token
// refuses to start (before any socket is bound, so this test binds nothing but loopback). Host
// and Origin are read strictly: forms another parser would read as a different host are refused.
// The legacy /messages endpoint wants JSON. Slow bodies cannot pin memory: a body that stalls
// one byte short of its end after a fast start is cut off, the bytes all incomplete requests
// hold together are bounded, and one peer cannot open every connection.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { eventually, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { rawHttp, SseReader } from '../integration/lib/http.mjs';

// A raw connection that sends `head` and `body` bytes and collects whatever comes back.
function rawConnection(port) {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const closed = new Promise(resolve => socket.on('close', resolve));
    socket.on('data', chunk => { received += chunk.toString('latin1'); });
    socket.on('error', () => {});
    return {
        socket,
        closed,
        received: () => received,
        // Resolves with what arrived once `pattern` shows; rejects after `safetyMs` (a net
        // against hanging, far above the daemon's own deadline).
        async answer(pattern, safetyMs = 20_000) {
            const deadline = Date.now() + safetyMs;
            while (!pattern.test(received)) {
                if (Date.now() > deadline)
                    throw new Error(`no ${pattern} within ${safetyMs} ms; got ${JSON.stringify(received.slice(0, 200))}`);
                await new Promise(resolve => setTimeout(resolve, 50));
            }
            return received;
        },
    };
}

function postHead(port, length) {
    return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`
        + `Accept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;
}

describe('the HTTP door', () => {
    test('a non-loopback host without authentication is refused at start, naming the fix', async () => {
        for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
            await assert.rejects(startDaemon({ fixtures: false, args: ['--host', host] }), error => {
                assert.match(error.message, /exited before listening \(code 2/);
                assert.match(error.message, /MCP_AUTH_TOKEN/);
                assert.match(error.message, /MCP_ALLOW_UNAUTHENTICATED_REMOTE=true/);
                return true;
            }, `cmcpd started on ${host} without authentication`);
        }
    });

    describe('Host, Origin and Content-Type', () => {
        let daemon;
        before(async () => { daemon = await startDaemon({ fixtures: false }); });
        after(async () => { await daemon?.stop(); });

        test('non-canonical Host and Origin forms are refused', () => withDiagnostics(daemon, async () => {
            const port = daemon.port;
            const status = async headers => (await rawHttp({ port, headers: { host: `127.0.0.1:${port}`, ...headers } })).status;
            assert.equal(await status({}), 200);
            assert.equal(await status({ origin: `http://127.0.0.1:${port}` }), 200);
            assert.equal(await status({ origin: 'http://[::1]:8000' }), 200);
            for (const host of [`127.0.0.1:${port}:80`, `evil.com:80@127.0.0.1`, `127.0.0.1 evil.com`, `127.0.0.1:${port}/x`])
                assert.equal(await status({ host }), 403, `Host ${host} was accepted`);
            for (const origin of ['http://evil.com:80@127.0.0.1', 'http://127.1', `http://127.0.0.1:${port}/path`,
                'http://127.0.0.1:80:81', 'http://127.0.0.1@evil.com', 'null', 'ftp://127.0.0.1'])
                assert.equal(await status({ origin }), 403, `Origin ${origin} was accepted`);
        }));

        test('legacy /messages wants Content-Type application/json', () => withDiagnostics(daemon, async () => {
            const stream = await fetch(daemon.sseUrl, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(10_000) });
            const reader = new SseReader(stream);
            const endpoint = await reader.nextEvent();
            assert.equal(endpoint.event, 'endpoint');
            const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
            const refused = await fetch(new URL(endpoint.data, daemon.base), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: message });
            assert.equal(refused.status, 415);
            assert.match(await refused.text(), /Content-Type must be application\/json/);
            const accepted = await fetch(new URL(endpoint.data, daemon.base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: message });
            assert.equal(accepted.status, 202);
            await accepted.arrayBuffer();
            await reader.cancel();
        }));
    });

    describe('slow bodies', () => {
        let daemon;
        before(async () => {
            daemon = await startDaemon({
                fixtures: false,
                settings: {
                    // The overall body deadline is far away: only the stall rule can end it soon.
                    MCP_BODY_TIMEOUT_SECONDS: 300, MCP_BODY_STALL_SECONDS: 1,
                    MCP_MAX_BODY_MB: 4, FILE_MAX_SIZE_MB: 2, MCP_INCOMPLETE_REQUESTS_MAX_MB: 2, MCP_MAX_CONNECTIONS_PER_PEER: 6,
                },
            });
        });
        after(async () => { await daemon?.stop(); });

        test('a body that stalls one byte short after a fast start gets 408', () => withDiagnostics(daemon, async () => {
            const length = 512 * 1024;
            const connection = rawConnection(daemon.port);
            connection.socket.write(postHead(daemon.port, length));
            connection.socket.write(Buffer.alloc(length - 1, 0x20));
            const answer = await connection.answer(/MCP_BODY_STALL_SECONDS/);
            assert.match(answer, /^HTTP\/1\.1 408/);
            await connection.closed;
        }));

        test('incomplete requests together hold a bounded number of bytes', () => withDiagnostics(daemon, async () => {
            // Two requests that each fit MCP_MAX_BODY_MB, stalled one byte short: together over
            // MCP_INCOMPLETE_REQUESTS_MAX_MB, so whichever comes second is refused at once.
            const length = 1536 * 1024;
            const connections = [rawConnection(daemon.port), rawConnection(daemon.port)];
            for (const connection of connections) {
                connection.socket.write(postHead(daemon.port, length));
                connection.socket.write(Buffer.alloc(length - 1, 0x20));
            }
            const answer = await Promise.any(connections.map(connection => connection.answer(/MCP_INCOMPLETE_REQUESTS_MAX_MB/, 5000)));
            assert.match(answer, /^HTTP\/1\.1 503/);
            for (const connection of connections)
                connection.socket.destroy();
            // The bytes are released: a whole request goes through again.
            assert.equal((await rawHttp({ port: daemon.port, headers: { host: `127.0.0.1:${daemon.port}` } })).status, 200);
        }));

        test('one peer cannot hold every connection', () => withDiagnostics(daemon, async () => {
            // Nine connections against a cap of six: three at least are answered 503 at once
            // (more if sockets of the tests before are still closing).
            const connections = Array.from({ length: 9 }, () => rawConnection(daemon.port));
            const refusedNow = () => connections.filter(connection => /^HTTP\/1\.1 503[^]*MCP_MAX_CONNECTIONS_PER_PEER/.test(connection.received()));
            const refused = await eventually(() => refusedNow().length >= 3 && refusedNow(), { timeoutMs: 10_000 }) || refusedNow();
            assert.ok(refused.length >= 3, `${refused.length} of 9 connections refused with a cap of 6`);
            for (const connection of connections)
                connection.socket.destroy();
        }));
    });
});
