// Slow-loris clients: sockets that trickle their headers or their body are answered
// 408 and closed at the deadline, an idle keep-alive connection is closed, and an SSE stream
// and a call longer than every deadline are left alone, while an SDK client keeps its normal
// latency.
// The deadlines are set to a few seconds so that the whole test takes about ten.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import net from 'node:net';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { BOTH, initializeRequest, openSession, rawHttp } from './lib/http.mjs';

const headerTimeoutS = 3;
const bodyTimeoutS = 3;
const idleTimeoutS = 4;
const tricklers = 50;
const trickleIntervalMs = 250;

const openFds = pid => readdirSync(`/proc/${pid}/fd`).length;
// The deadlines are Qt coarse timers, which may fire up to 5 % early.
const earliest = seconds => seconds * 950 - 50;

// A raw connection that records what it received and when the server closed it.
function rawSocket(port) {
    const socket = net.connect({ host: '127.0.0.1', port });
    const state = { socket, received: '', openedAt: Date.now(), closedAt: null };
    socket.setEncoding('latin1');
    socket.on('data', chunk => { state.received += chunk; });
    socket.on('error', () => { /* a reset after the close is expected */ });
    socket.on('close', () => { state.closedAt ??= Date.now(); });
    state.connected = new Promise(resolve => socket.once('connect', resolve));
    return state;
}

// Sends `prefix` at once, then one byte of `drip` every interval until the socket closes.
function trickle(port, prefix, drip) {
    const state = rawSocket(port);
    state.connected.then(() => {
        state.socket.write(prefix);
        let at = 0;
        const timer = setInterval(() => {
            if (state.closedAt !== null || state.socket.destroyed) {
                clearInterval(timer);
                return;
            }
            state.socket.write(drip[at++ % drip.length]);
        }, trickleIntervalMs);
        state.socket.on('close', () => clearInterval(timer));
    });
    return state;
}

describe('slow clients', { timeout: 60_000 }, () => {
    let daemon;
    before(async () => {
        daemon = await startDaemon({ settings: {
            MCP_HEADER_TIMEOUT_SECONDS: headerTimeoutS,
            MCP_BODY_TIMEOUT_SECONDS: bodyTimeoutS,
            MCP_BODY_MIN_RATE_KB: 1024, // the 10 kB declared below adds 10 ms to the body deadline
            MCP_IDLE_TIMEOUT_SECONDS: idleTimeoutS,
            MCP_SSE_KEEPALIVE_SECONDS: 1,
        } });
    });
    after(async () => { await daemon?.stop(); });

    test('tricklers get 408 at the deadline; others keep their latency; descriptors come back',
         { timeout: 40_000 }, () => withDiagnostics(daemon, async () => {
        const { port } = daemon;
        const baseline = openFds(daemon.pid);

        const client = new Client({ name: 'slowclients-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));

        // A call that takes longer than the idle deadline, answered on a connection that says
        // nothing meanwhile: waiting for an answer is not idleness.
        const { session, protocolVersion } = await openSession(daemon.url);
        const longCallMs = (idleTimeoutS + 2) * 1000;
        const longCall = rawHttp({ port, method: 'POST', path: '/mcp', timeoutMs: longCallMs + 5000, headers: {
            host: '127.0.0.1', accept: BOTH, 'content-type': 'application/json',
            'mcp-session-id': session, 'mcp-protocol-version': protocolVersion,
        }, body: JSON.stringify({ jsonrpc: '2.0', id: 'long', method: 'tools/call',
                                  params: { name: 'test_wait', arguments: { ms: longCallMs } } }) });

        const started = Date.now();
        const headerTricklers = Array.from({ length: tricklers }, () =>
            trickle(port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: abcdefghijklmnopqrstuvwxyz\r\n'));
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }).padEnd(10_000, ' ');
        const bodyTricklers = Array.from({ length: tricklers }, () =>
            trickle(port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'
                          + `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n`, body));
        // A connection that asks once and then says nothing: closed after the idle deadline.
        const idle = rawSocket(port);
        await idle.connected;
        idle.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        const idleAnsweredAt = await eventually(() => idle.received.includes('"status":"ok"') && Date.now(), { timeoutMs: 3000 });
        assert.ok(idleAnsweredAt, `no answer to GET /health: ${idle.received}`);
        // The same after a session's handshake, whose answers leave another way than /health's.
        const handshake = rawSocket(port);
        await handshake.connected;
        const mcpPost = (message, session = '') => {
            const body = JSON.stringify(message);
            handshake.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'
                                   + `Accept: ${BOTH}\r\nContent-Length: ${body.length}\r\n`
                                   + (session ? `Mcp-Session-Id: ${session}\r\n` : '') + `\r\n${body}`);
        };
        mcpPost(initializeRequest());
        const handshakeSession = await eventually(() => /mcp-session-id: (\S+)/i.exec(handshake.received)?.[1],
                                                  { timeoutMs: 3000 });
        assert.ok(handshakeSession, `initialize was not answered: ${handshake.received}`);
        mcpPost({ jsonrpc: '2.0', method: 'notifications/initialized' }, handshakeSession);
        const handshakeAnsweredAt = await eventually(() => /HTTP\/1\.1 202 /.test(handshake.received) && Date.now(),
                                                     { timeoutMs: 3000 });
        assert.ok(handshakeAnsweredAt, `notifications/initialized was not answered 202: ${handshake.received}`);
        // A legacy SSE stream, silent from the client's side for longer than every deadline.
        const stream = rawSocket(port);
        await stream.connected;
        stream.socket.write('GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');

        // The SDK client calls all through the attack.
        const latencies = [];
        const all = [...headerTricklers, ...bodyTricklers];
        while (all.some(s => s.closedAt === null) && Date.now() - started < 15_000) {
            const before = Date.now();
            const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
            latencies.push(Date.now() - before);
            assert.equal(result.isError, undefined, JSON.stringify(result));
            await sleep(20);
        }

        for (const [name, group, deadlineS] of [['headers', headerTricklers, headerTimeoutS], ['body', bodyTricklers, bodyTimeoutS]]) {
            for (const s of group) {
                assert.notEqual(s.closedAt, null, `a ${name} trickler is still open after 15 s`);
                const heldMs = s.closedAt - s.openedAt;
                assert.ok(heldMs >= earliest(deadlineS) && heldMs < deadlineS * 1000 + 2500,
                          `a ${name} trickler was closed after ${heldMs} ms (deadline ${deadlineS} s)`);
                assert.match(s.received, /^HTTP\/1\.1 408 /, `${name} trickler got: ${s.received.slice(0, 200)}`);
                assert.match(s.received, new RegExp(name === 'headers' ? 'MCP_HEADER_TIMEOUT_SECONDS' : 'MCP_BODY_TIMEOUT_SECONDS'));
            }
        }
        assert.ok(latencies.length >= 10, `only ${latencies.length} calls during the attack`);
        const slowest = Math.max(...latencies);
        assert.ok(slowest < 1000, `a call took ${slowest} ms during the attack (deadline ${headerTimeoutS} s)`);

        // The idle connection goes at its deadline; the stream stays and keeps getting keep-alives.
        await eventually(() => idle.closedAt !== null, { timeoutMs: (idleTimeoutS + 3) * 1000 });
        const idleHeldMs = idle.closedAt - idleAnsweredAt;
        assert.ok(idleHeldMs >= earliest(idleTimeoutS) - 100 && idleHeldMs < idleTimeoutS * 1000 + 2500,
                  `the idle connection was closed after ${idleHeldMs} ms (deadline ${idleTimeoutS} s)`);
        await eventually(() => handshake.closedAt !== null, { timeoutMs: (idleTimeoutS + 3) * 1000 });
        assert.notEqual(handshake.closedAt, null, 'the connection idle after a handshake is still open');
        const handshakeHeldMs = handshake.closedAt - handshakeAnsweredAt;
        assert.ok(handshakeHeldMs >= earliest(idleTimeoutS) - 100 && handshakeHeldMs < idleTimeoutS * 1000 + 2500,
                  `the connection idle after a handshake was closed after ${handshakeHeldMs} ms (deadline ${idleTimeoutS} s)`);
        await sleep(Math.max(0, (idleTimeoutS + 1) * 1000 - (Date.now() - stream.openedAt)));
        assert.equal(stream.closedAt, null, 'the SSE stream was cut');
        assert.match(stream.received, /event: endpoint/);
        assert.ok((stream.received.match(/: keep-alive/g) ?? []).length >= idleTimeoutS,
                  `too few keep-alives on the SSE stream: ${stream.received}`);

        const long = await longCall;
        assert.equal(long.status, 200, long.text);
        assert.match(long.text, new RegExp(`"waited_ms":${longCallMs}`));

        stream.socket.destroy();
        await client.close();
        const back = await eventually(() => openFds(daemon.pid) <= baseline, { timeoutMs: (idleTimeoutS + 3) * 1000 });
        assert.ok(back, `the daemon holds ${openFds(daemon.pid)} descriptors, ${baseline} before the attack`);
        console.log(`calls during the attack: ${latencies.length}, slowest ${slowest} ms; descriptors ${baseline} → ${openFds(daemon.pid)}`);
    }));
});
