// 1,000 idle SSE streams: legacy `GET /sse` streams and Streamable HTTP `GET /mcp`
// streams, opened on raw sockets and held while keep-alive comments arrive, with an SDK client
// calling at normal latency meanwhile; once they close, the daemon's descriptors come back to
// the baseline and its memory near it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { eventually, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { openSession } from './lib/http.mjs';
import { sanitizerBuild } from './lib/resources.mjs';

const legacyStreams = 1000;
const streamableStreams = 100;
const keepAliveS = 1;

const openFds = pid => readdirSync(`/proc/${pid}/fd`).length;
const rssMb = pid => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

// A raw GET that keeps what arrives; resolves once the response head is in.
function openStream(port, path, headers = {}) {
    const socket = net.connect({ host: '127.0.0.1', port });
    const stream = { socket, received: '', closed: false, error: null };
    socket.setEncoding('latin1');
    socket.on('error', error => { stream.error = error; }); // counted as closed below
    socket.on('close', () => { stream.closed = true; });
    const head = Object.entries({ host: '127.0.0.1', accept: 'text/event-stream', ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`).join('');
    stream.ready = new Promise((resolve, reject) => {
        socket.on('data', chunk => {
            stream.received += chunk;
            if (stream.received.includes('\r\n\r\n'))
                resolve();
        });
        socket.on('close', () => reject(new Error(`${path} closed before answering (${stream.error?.code ?? 'no error'}): `
                                                  + stream.received.slice(0, 200))));
        socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\n${head}\r\n`));
    });
    return stream;
}

describe('1,000 idle SSE streams', { timeout: 120_000 }, () => {
    let daemon;
    before(async () => {
        daemon = await startDaemon({ settings: { MCP_SSE_KEEPALIVE_SECONDS: keepAliveS, MCP_IDLE_TIMEOUT_SECONDS: 3 } });
    });
    after(async () => { await daemon?.stop(); });

    test('are held with keep-alives while an SDK client calls; resources come back', { timeout: 90_000 },
         () => withDiagnostics(daemon, async () => {
        const { pid, port } = daemon;
        const client = new Client({ name: 'idlestreams-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        const timeCall = async () => {
            const started = Date.now();
            const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
            assert.equal(result.isError, undefined, JSON.stringify(result));
            return Date.now() - started;
        };
        const quiet = [];
        for (let i = 0; i < 20; ++i)
            quiet.push(await timeCall());
        const baseline = { fds: openFds(pid), rssMb: rssMb(pid) };

        const started = Date.now();
        const sessions = [];
        for (let i = 0; i < streamableStreams; ++i)
            sessions.push((await openSession(daemon.url)).session);
        // Opened in waves, as clients arrive, not in one burst of SYNs.
        const streams = [];
        const wave = async opening => {
            const opened = opening.map(open => open());
            await Promise.all(opened.map(s => s.ready));
            streams.push(...opened);
        };
        const waveSize = 100;
        for (let first = 0; first < legacyStreams; first += waveSize)
            await wave(Array.from({ length: Math.min(waveSize, legacyStreams - first) }, () => () => openStream(port, '/sse')));
        await wave(sessions.map(session => () => openStream(port, '/mcp',
            { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' })));
        const openedMs = Date.now() - started;
        for (const s of streams)
            assert.match(s.received, /^HTTP\/1\.1 200 /, s.received.slice(0, 200));
        const held = { fds: openFds(pid), rssMb: rssMb(pid) };
        // Every stream holds a socket. Not measured from the baseline: that one may include the
        // SDK client's keep-alive connections, closed meanwhile (seen under AddressSanitizer).
        assert.ok(held.fds >= streams.length, `${held.fds} descriptors while holding ${streams.length} streams`);

        // Held for longer than the idle deadline: streams are not idle connections.
        const loaded = [];
        const holdUntil = Date.now() + (keepAliveS * 2 + 1) * 1000;
        while (Date.now() < holdUntil) {
            loaded.push(await timeCall());
            await sleep(50);
        }
        const cut = streams.filter(s => s.closed).length;
        assert.equal(cut, 0, `${cut} streams were closed by the daemon`);
        const starved = streams.filter(s => (s.received.match(/: keep-alive/g) ?? []).length < 2).length;
        assert.equal(starved, 0, `${starved} streams got fewer than 2 keep-alives in ${keepAliveS * 2 + 1} s`);
        const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
        assert.ok(median(loaded) < Math.max(50, median(quiet) * 5),
                  `median call ${median(loaded)} ms with the streams open, ${median(quiet)} ms without`);
        assert.ok(Math.max(...loaded) < 1000, `slowest call ${Math.max(...loaded)} ms with the streams open`);

        for (const s of streams)
            s.socket.destroy();
        await Promise.all(sessions.map(session => fetch(daemon.url, { method: 'DELETE',
            headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } }).then(r => r.arrayBuffer())));
        const back = await eventually(() => openFds(pid) <= baseline.fds + 2, { timeoutMs: 8000, intervalMs: 100 });
        const after = { fds: openFds(pid), rssMb: rssMb(pid) };
        await client.close();
        console.log(`${streams.length} streams opened in ${openedMs} ms; calls: median ${median(quiet)} ms quiet, `
                    + `${median(loaded)} ms (max ${Math.max(...loaded)}) loaded; fds ${baseline.fds} → ${held.fds} → ${after.fds}; `
                    + `RSS ${baseline.rssMb.toFixed(1)} → ${held.rssMb.toFixed(1)} → ${after.rssMb.toFixed(1)} MB`);
        assert.ok(back, `the daemon holds ${after.fds} descriptors, ${baseline.fds} before the streams`);
        // Freed memory is not all returned to the system (malloc keeps arenas); bound the rest.
        // Under AddressSanitizer freed memory stays in its quarantine: RSS says nothing there.
        if (!sanitizerBuild)
            assert.ok(after.rssMb < baseline.rssMb + 0.5 * (held.rssMb - baseline.rssMb) + 10,
                      `RSS ${after.rssMb.toFixed(1)} MB after, ${baseline.rssMb.toFixed(1)} before, ${held.rssMb.toFixed(1)} held`);
    }));
});
