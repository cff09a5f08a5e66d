// cmcpd's HTTP door and the Streamable HTTP / legacy SSE rules, driven with raw HTTP.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport, SSEClientTransport } from './lib/sdk.mjs';
import { eventually, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { BOTH, SseReader, initializeRequest, openSession, post, postLegacy, rawHttp } from './lib/http.mjs';

const ping = (id = 1) => ({ jsonrpc: '2.0', id, method: 'ping' });

async function health(daemon) {
    const response = await fetch(`${daemon.base}/health`, { signal: AbortSignal.timeout(5000) });
    assert.equal(response.status, 200);
    return response.json();
}

async function readCancelled(daemon, session) {
    const response = await post(daemon.url, { jsonrpc: '2.0', id: 'count', method: 'resources/read',
        params: { uri: 'test://cancelled-calls' } }, { session });
    return Number((await response.json()).result.contents[0].text);
}

function openGetStream(daemon, session, protocolVersion = '2025-11-25') {
    const controller = new AbortController();
    const response = fetch(daemon.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': protocolVersion },
        signal: controller.signal,
    });
    return { response, close: () => controller.abort() };
}

// Every test runs against a daemon and prints its log when it fails.
function daemonTest(getDaemon, name, body, options = {}) {
    test(name, { timeout: 15_000, ...options }, () => withDiagnostics(getDaemon(), () => body(getDaemon())));
}

describe('HTTP door (default settings)', { timeout: 90_000 }, () => {
    let daemon;
    before(async () => { daemon = await startDaemon(); });
    after(async () => { await daemon?.stop(); });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);

    it('/health answers JSON with the status and the version', async d => {
        const response = await fetch(`${d.base}/health`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type'), /^application\/json/);
        const body = await response.json();
        assert.equal(body.status, 'ok');
        assert.match(body.version, /^\d+\.\d+\.\d+/);
        assert.equal(typeof body.sessions, 'number');
    });

    it('an unknown path is 404 with a JSON-RPC error body', async d => {
        const response = await fetch(`${d.base}/nope`);
        assert.equal(response.status, 404);
        const body = await response.json();
        assert.equal(body.jsonrpc, '2.0');
        assert.ok(!('id' in body), 'no request was read, so no id is echoed');
        assert.match(body.error.message, /\/nope/);
    });

    it('a Host header that is not allowed is 403 (DNS rebinding); allowed names pass', async d => {
        for (const host of ['evil.example', `evil.example:${d.port}`, `127.0.0.1.nip.io:${d.port}`, `localhost.evil.example`]) {
            const refused = await rawHttp({ port: d.port, path: '/mcp', method: 'POST', headers: {
                host, accept: BOTH, 'content-type': 'application/json',
            }, body: JSON.stringify(initializeRequest()) });
            assert.equal(refused.status, 403, `Host ${host}`);
            assert.match(JSON.parse(refused.text).error.message, /Host/);
            assert.equal(refused.headers['mcp-session-id'], undefined, 'no session may be opened');
        }
        for (const host of [`127.0.0.1:${d.port}`, `localhost:${d.port}`, `LOCALHOST:${d.port}`, `[::1]:${d.port}`, 'localhost']) {
            const allowed = await rawHttp({ port: d.port, headers: { host } });
            assert.equal(allowed.status, 200, `Host ${host}`);
        }
    });

    it('an Origin that is not the server\'s own is 403; the own origin passes', async d => {
        for (const origin of ['http://evil.example', `http://evil.example:${d.port}`, 'null', 'file://']) {
            const refused = await post(d.url, initializeRequest(), { headers: { origin } });
            assert.equal(refused.status, 403, `Origin ${origin}`);
            assert.match((await refused.json()).error.message, /Origin/);
            const sse = await fetch(d.sseUrl, { headers: { origin, accept: 'text/event-stream' } });
            assert.equal(sse.status, 403, `GET /sse with Origin ${origin}`);
            await sse.arrayBuffer();
        }
        const own = await post(d.url, initializeRequest(), { headers: { origin: `http://localhost:${d.port}` } });
        assert.equal(own.status, 200);
        assert.ok(own.headers.get('mcp-session-id'));
        await own.arrayBuffer();
    });

    it('initialize returns a fresh, unguessable Mcp-Session-Id', async d => {
        const first = await openSession(d.url);
        const second = await openSession(d.url);
        assert.match(first.session, /^[0-9a-f]{32,}$/);
        assert.notEqual(first.session, second.session);
        assert.equal(first.initialized, 202, 'notifications/initialized is accepted with 202');
    });

    it('POST without both media types in Accept is 406', async d => {
        for (const accept of ['application/json', 'text/event-stream', 'text/html']) {
            const response = await post(d.url, initializeRequest(), { accept });
            assert.equal(response.status, 406, `Accept: ${accept}`);
            assert.equal((await response.json()).error.code, -32600);
        }
        const { session } = await openSession(d.url);
        const get = await fetch(d.url, { headers: { accept: 'application/json', 'mcp-session-id': session } });
        assert.equal(get.status, 406, 'GET /mcp needs Accept: text/event-stream');
        await get.arrayBuffer();
    });

    it('POST with a Content-Type other than application/json is 415', async d => {
        for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
            const response = await post(d.url, initializeRequest(), { contentType });
            assert.equal(response.status, 415, contentType);
            await response.arrayBuffer();
        }
        const charset = await post(d.url, initializeRequest(), { contentType: 'application/json; charset=utf-8' });
        assert.equal(charset.status, 200, 'parameters after application/json are fine');
        await charset.arrayBuffer();
    });

    it('a request without Mcp-Session-Id is 400, with an unknown one 404', async d => {
        const missing = await post(d.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        assert.equal(missing.status, 400);
        assert.match((await missing.json()).error.message, /Mcp-Session-Id/);
        const unknown = await post(d.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: 'f'.repeat(32) });
        assert.equal(unknown.status, 404);
        await unknown.arrayBuffer();
        const unknownGet = await fetch(d.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
        assert.equal(unknownGet.status, 404);
        await unknownGet.arrayBuffer();
    });

    it('initialize with an Mcp-Session-Id header is 400', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, initializeRequest(), { session });
        assert.equal(response.status, 400);
        await response.arrayBuffer();
    });

    it('an unsupported MCP-Protocol-Version header is 400', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, ping(), { session, protocolVersion: '1999-01-01' });
        assert.equal(response.status, 400);
        assert.match((await response.json()).error.message, /1999-01-01/);
        const ok = await post(d.url, ping(), { session, protocolVersion: '2025-11-25' });
        assert.equal(ok.status, 200);
        assert.deepEqual(await ok.json(), { jsonrpc: '2.0', id: 1, result: {} });
    });

    it('PUT /mcp is 405 with an Allow header; GET /messages is 405', async d => {
        const put = await fetch(d.url, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
        assert.equal(put.status, 405);
        assert.match(put.headers.get('allow'), /POST/);
        await put.arrayBuffer();
        const messages = await fetch(`${d.base}/messages`);
        assert.equal(messages.status, 405);
        await messages.arrayBuffer();
    });

    it('a second GET stream on one session is 409; after the first closes a new one opens', async d => {
        const { session } = await openSession(d.url);
        const first = openGetStream(d, session);
        try {
            const response = await first.response;
            assert.equal(response.status, 200);
            assert.match(response.headers.get('content-type'), /^text\/event-stream/);
            const second = openGetStream(d, session);
            const conflict = await second.response;
            assert.equal(conflict.status, 409);
            await conflict.arrayBuffer();
        } finally {
            first.close();
        }
        // The server notices the client left; a reconnect must then be accepted.
        const reopened = await eventually(async () => {
            const again = openGetStream(d, session);
            const response = await again.response;
            if (response.status === 200) {
                again.close();
                return true;
            }
            await response.arrayBuffer();
            return false;
        }, { timeoutMs: 3000, intervalMs: 100 });
        assert.ok(reopened, 'a GET stream could not be reopened after the first one closed');
    });

    it('DELETE ends the session: later requests on it are 404', async d => {
        const before = (await health(d)).sessions;
        const { session } = await openSession(d.url);
        assert.equal((await health(d)).sessions, before + 1);
        const deleted = await fetch(d.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
        assert.equal(deleted.status, 200);
        await deleted.arrayBuffer();
        const after = await post(d.url, ping(), { session });
        assert.equal(after.status, 404);
        await after.arrayBuffer();
        const again = await fetch(d.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
        assert.equal(again.status, 404);
        await again.arrayBuffer();
        assert.equal((await health(d)).sessions, before);
    });

    it('DELETE stops the session\'s running tool calls', async d => {
        const { session } = await openSession(d.url);
        const readCount = async () => {
            const response = await post(d.url, { jsonrpc: '2.0', id: 'c', method: 'resources/read',
                params: { uri: 'test://cancelled-calls' } }, { session: other });
            return Number((await response.json()).result.contents[0].text);
        };
        const { session: other } = await openSession(d.url);
        const before = await readCount();
        const call = post(d.url, { jsonrpc: '2.0', id: 1, method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 5000 } } }, { session }).catch(error => error);
        await sleep(200);
        const deleted = await fetch(d.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
        assert.equal(deleted.status, 200);
        await deleted.arrayBuffer();
        assert.equal(await eventually(async () => (await readCount()) === before + 1), true,
            'the running test_wait was not stopped when its session ended');
        const settled = await Promise.race([call.then(() => 'settled'), sleep(2000).then(() => 'hanging')]);
        assert.equal(settled, 'settled', 'the POST of a call whose session ended must not hang');
        // Nothing is owed for a cancelled request, but a POST holding one is still answered
        // with JSON or a stream (here: an empty stream), never a bare 202.
        const response = await call;
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
        assert.equal(await response.text(), '');
    });

    it('invalid JSON is -32700 with id null and HTTP 400', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, '{"jsonrpc": "2.0", "id": 1, "method": ', { session });
        assert.equal(response.status, 400);
        const body = await response.json();
        assert.equal(body.id, null);
        assert.equal(body.error.code, -32700);
        // The session survives a garbled message.
        const ok = await post(d.url, ping(2), { session });
        assert.deepEqual(await ok.json(), { jsonrpc: '2.0', id: 2, result: {} });
    });

    it('an invalid JSON-RPC message is -32600', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, { jsonrpc: '1.0', id: 5, method: 'ping' }, { session });
        const body = await response.json();
        assert.equal(body.error.code, -32600);
        assert.equal(body.id, 5);
        const unknownMethod = await post(d.url, { jsonrpc: '2.0', id: 6, method: 'no/such/method' }, { session });
        assert.equal((await unknownMethod.json()).error.code, -32601);
    });

    it('a batch is answered as an array on a 2025-03-26 session', async d => {
        const { session } = await openSession(d.url, '2025-03-26');
        const response = await post(d.url, [
            ping(1),
            { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'x', progress: 1 } },
            { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } },
            { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
        ], { session });
        assert.equal(response.status, 200);
        const body = await response.json();
        assert.ok(Array.isArray(body), `a batch gets an array: ${JSON.stringify(body)}`);
        const byId = Object.fromEntries(body.map(r => [r.id, r]));
        assert.deepEqual(Object.keys(byId).sort(), ['1', '2', '3'], 'one response per request, none for the notification');
        assert.deepEqual(byId[1].result, {});
        assert.equal(byId[2].result.content[0].text, 'This is a simple text response for testing.');
        assert.equal(byId[3].error.code, -32601);
    });

    it('a batch is refused with -32600 on a 2025-06-18 session', async d => {
        const { session } = await openSession(d.url, '2025-06-18');
        const response = await post(d.url, [ping(1), ping(2)], { session, protocolVersion: '2025-06-18' });
        const body = await response.json();
        assert.ok(!Array.isArray(body));
        assert.equal(body.error.code, -32600);
        assert.equal(body.id, null);
        assert.match(body.error.message, /batch/i);
    });

    it('older revisions get only what they define (no structured output before 2025-06-18, no annotations before 2025-03-26)', async d => {
        const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_wait', arguments: { ms: 5 } } };
        const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
        const expectations = {
            '2024-11-05': { structured: false, annotations: false },
            '2025-03-26': { structured: false, annotations: true },
            '2025-06-18': { structured: true, annotations: true },
        };
        for (const [version, expected] of Object.entries(expectations)) {
            const { session } = await openSession(d.url, version);
            const protocolVersion = version >= '2025-06-18' ? version : undefined;
            const result = (await (await post(d.url, call, { session, protocolVersion })).json()).result;
            assert.deepEqual(result.content, [{ type: 'text', text: '{"waited_ms":5}' }], version);
            assert.equal('structuredContent' in result, expected.structured, `${version}: structuredContent`);
            const tool = (await (await post(d.url, list, { session, protocolVersion })).json())
                .result.tools.find(t => t.name === 'test_wait');
            assert.equal('outputSchema' in tool, expected.structured, `${version}: outputSchema`);
            assert.equal('annotations' in tool, expected.annotations, `${version}: annotations`);
            // Before 2025-11-25, invalid arguments are a JSON-RPC error, not a tool result.
            const bad = await (await post(d.url, { ...call, params: { name: 'test_wait', arguments: { ms: 'x' } } },
                { session, protocolVersion })).json();
            assert.equal(bad.error?.code, -32602, `${version}: ${JSON.stringify(bad)}`);
        }
    });

    it('a POST of only notifications is 202 with no body', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { session });
        assert.equal(response.status, 202);
        assert.equal(await response.text(), '');
    });

    it('a request id reused while the first is in flight is refused; the first still completes', async d => {
        const { session } = await openSession(d.url);
        const first = post(d.url, { jsonrpc: '2.0', id: 7, method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 500 } } }, { session });
        await sleep(100);
        const dup = await post(d.url, ping(7), { session });
        const dupBody = await dup.json();
        assert.equal(dupBody.id, 7);
        assert.equal(dupBody.error?.code, -32600, JSON.stringify(dupBody));
        assert.match(dupBody.error.message, /in use|in flight/);
        const firstBody = await (await first).json();
        assert.deepEqual(firstBody.result.structuredContent, { waited_ms: 500 });
        // Once answered, the id may be used again.
        const reuse = await post(d.url, ping(7), { session });
        assert.deepEqual(await reuse.json(), { jsonrpc: '2.0', id: 7, result: {} });
    });

    it('a call with a progress token is answered as an SSE stream: progress, then the result, then the end', async d => {
        const { session } = await openSession(d.url);
        const response = await post(d.url, { jsonrpc: '2.0', id: 9, method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 350 }, _meta: { progressToken: 'tok' } } }, { session });
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type'), /^text\/event-stream/);
        assert.equal(response.headers.get('mcp-session-id'), session);
        const reader = new SseReader(response);
        const events = [];
        for (let event; (event = await reader.nextEvent(3000));)
            events.push(event);
        // 2025-11-25 (SEP-1699): a priming event with an id and no data comes first, and a retry delay.
        assert.equal(events[0].data, '');
        assert.match(events[0].id, /^\d+_0$/);
        assert.ok(reader.retry > 0, 'a retry field tells the client when to come back');
        const messages = events.slice(1).map(event => JSON.parse(event.data));
        const progress = messages.filter(m => m.method === 'notifications/progress');
        assert.deepEqual(progress.map(m => m.params.progress), [100, 200, 300]);
        assert.ok(progress.every(m => m.params.progressToken === 'tok'));
        assert.deepEqual(messages.at(-1), { jsonrpc: '2.0', id: 9,
            result: { content: [{ type: 'text', text: '{"waited_ms":350}' }], structuredContent: { waited_ms: 350 } } });
        assert.equal(messages.length, progress.length + 1, 'nothing but progress and the result');
        const seqs = events.map(event => Number(event.id.split('_')[1]));
        assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'event ids increase');
        assert.equal(new Set(events.map(event => event.id.split('_')[0])).size, 1, 'one stream id');
    });

    it('a lost answer stream is resumed with GET and Last-Event-ID; the call was not cancelled', async d => {
        const { session } = await openSession(d.url);
        const before = await readCancelled(d, session);
        const controller = new AbortController();
        const response = await post(d.url, { jsonrpc: '2.0', id: 'r', method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 700 }, _meta: { progressToken: 'r' } } },
            { session, signal: controller.signal });
        const reader = new SseReader(response);
        assert.equal((await reader.nextEvent()).data, '', 'priming event');
        const first = await reader.nextEvent();
        assert.equal(JSON.parse(first.data).params.progress, 100);
        controller.abort(); // the network drops
        await sleep(250);   // events 200 and 300 happen while nobody listens

        const resumed = await fetch(d.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session,
            'mcp-protocol-version': '2025-11-25', 'last-event-id': first.id }, signal: AbortSignal.timeout(5000) });
        assert.equal(resumed.status, 200);
        const rest = [];
        const resumedReader = new SseReader(resumed);
        for (let event; (event = await resumedReader.nextEvent(3000));)
            rest.push(JSON.parse(event.data));
        assert.deepEqual(rest.filter(m => m.method).map(m => m.params.progress), [200, 300, 400, 500, 600],
            'every event after the last one seen, none twice');
        assert.deepEqual(rest.at(-1).result.structuredContent, { waited_ms: 700 });
        assert.equal(await readCancelled(d, session), before, 'a dropped connection is not a cancellation');

        const bogus = await fetch(d.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session,
            'last-event-id': '999_1' } });
        assert.equal(bogus.status, 404, 'resuming an unknown stream is refused');
        await bogus.arrayBuffer();
    });

    it('legacy SSE: the endpoint event comes first, POSTs get 202 and replies arrive on the stream', async d => {
        const before = (await health(d)).sessions;
        const controller = new AbortController();
        const stream = await fetch(d.sseUrl, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
        try {
            assert.equal(stream.status, 200);
            assert.match(stream.headers.get('content-type'), /^text\/event-stream/);
            const reader = new SseReader(stream);
            const endpoint = await reader.nextEvent();
            assert.equal(endpoint.event, 'endpoint');
            assert.match(endpoint.data, /^\/messages\?session_id=[0-9a-f]{32,}$/);
            const postUrl = new URL(endpoint.data, d.sseUrl);

            const send = message => postLegacy(postUrl, message);
            await send(initializeRequest('2024-11-05', 1));
            const init = await reader.nextEvent();
            assert.equal(init.event, 'message');
            const initBody = JSON.parse(init.data);
            assert.equal(initBody.id, 1);
            assert.equal(initBody.result.protocolVersion, '2024-11-05');
            await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
            await send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
            const call = JSON.parse((await reader.nextEvent()).data);
            assert.equal(call.id, 2, 'the notification got no reply; the call did');
            assert.equal(call.result.content[0].text, 'This is a simple text response for testing.');
            assert.equal((await health(d)).sessions, before + 1);

            const garbled = await fetch(postUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
            assert.equal(garbled.status, 400);
            assert.equal((await garbled.json()).error.code, -32700);
        } finally {
            controller.abort();
        }
        // The stream is the session: closing it ends the session.
        assert.ok(await eventually(async () => (await health(d)).sessions === before),
            'the legacy SSE session outlived its stream');
    });

    it('legacy SSE: POST /messages without or with an unknown session_id is 400 / 404', async d => {
        const missing = await fetch(`${d.base}/messages`, { method: 'POST', body: JSON.stringify(ping()),
            headers: { 'content-type': 'application/json' } });
        assert.equal(missing.status, 400);
        await missing.arrayBuffer();
        const unknown = await fetch(`${d.base}/messages?session_id=abc`, { method: 'POST', body: JSON.stringify(ping()),
            headers: { 'content-type': 'application/json' } });
        assert.equal(unknown.status, 404);
        await unknown.arrayBuffer();
    });
});

describe('HTTP limits (MCP_MAX_BODY_MB=2, MCP_SSE_KEEPALIVE_SECONDS=1)', { timeout: 60_000 }, () => {
    let daemon;
    // MCP_MAX_BODY_MB must exceed FILE_MAX_SIZE_MB (at least 1), so 2 MiB is the smallest body limit.
    before(async () => {
        daemon = await startDaemon({ settings: { MCP_MAX_BODY_MB: 2, FILE_MAX_SIZE_MB: 1, MCP_SSE_KEEPALIVE_SECONDS: 1 } });
    });
    after(async () => { await daemon?.stop(); });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);

    const paddedPing = (bytes, id) => {
        const skeleton = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: '' } });
        return JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: 'x'.repeat(bytes - skeleton.length) } });
    };

    it('a body over MCP_MAX_BODY_MB is 413; 1.9 MiB is accepted; the server keeps serving', async d => {
        const { session } = await openSession(d.url);
        const big = paddedPing(2 * 1024 * 1024 + 100, 1);
        const refused = await post(d.url, big, { session });
        assert.equal(refused.status, 413);
        assert.match((await refused.json()).error.message, /MCP_MAX_BODY_MB/);

        const fits = paddedPing(1900 * 1024, 2);
        assert.equal(fits.length, 1900 * 1024);
        const accepted = await post(d.url, fits, { session });
        assert.equal(accepted.status, 200);
        assert.deepEqual(await accepted.json(), { jsonrpc: '2.0', id: 2, result: {} });

        const after = await post(d.url, ping(3), { session });
        assert.deepEqual(await after.json(), { jsonrpc: '2.0', id: 3, result: {} });
    });

    it('a declared Content-Length over the limit is refused before the body is sent', async d => {
        const response = await rawHttp({ port: d.port, method: 'POST', path: '/mcp', headers: {
            host: `127.0.0.1:${d.port}`, accept: BOTH, 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024),
        }, body: undefined, timeoutMs: 3000 }).catch(error => error);
        // The server answers at once without waiting for 50 MB that never come.
        assert.ok(!(response instanceof Error), `no answer: ${response}`);
        assert.equal(response.status, 413);
    });

    it('a chunked request body is refused with 411', async d => {
        const body = new ReadableStream({
            start(controller) {
                controller.enqueue(new TextEncoder().encode(JSON.stringify(initializeRequest())));
                controller.close();
            },
        });
        const response = await fetch(d.url, { method: 'POST', body, duplex: 'half',
            headers: { accept: BOTH, 'content-type': 'application/json' } });
        assert.equal(response.status, 411);
        await response.arrayBuffer();
    });

    it('idle SSE streams (legacy and GET /mcp) get keep-alive comments', async d => {
        const { session } = await openSession(d.url);
        const controller = new AbortController();
        try {
            const legacy = await fetch(d.sseUrl, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
            const get = await fetch(d.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session },
                signal: controller.signal });
            assert.equal(get.status, 200);
            const legacyReader = new SseReader(legacy);
            const getReader = new SseReader(get);
            assert.equal((await legacyReader.next()).event, 'endpoint');
            // About one a second: at least one in 2.3 s, and no flood.
            const [a, b] = await Promise.all([legacyReader.collectFor(2300), getReader.collectFor(2300)]);
            for (const [name, items] of [['/sse', a], ['GET /mcp', b]]) {
                assert.ok(items.length >= 1 && items.length <= 3, `${name}: ${JSON.stringify(items)}`);
                assert.ok(items.every(item => item.comment === 'keep-alive'), `${name}: ${JSON.stringify(items)}`);
            }
        } finally {
            controller.abort();
        }
    });
});

describe('slow readers (MCP_SSE_MAX_BUFFER_KB=64)', { timeout: 60_000 }, () => {
    let daemon;
    before(async () => { daemon = await startDaemon({ settings: { MCP_SSE_MAX_BUFFER_KB: 64 } }); });
    after(async () => { await daemon?.stop(); });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);

    it('an SSE reader that stops reading is dropped instead of growing the daemon\'s memory', async d => {
        const before = (await health(d)).sessions;
        // A raw socket, so that the test can stop reading while the server keeps writing.
        const socket = net.connect(d.port, '127.0.0.1');
        let received = '';
        const endpoint = await new Promise((resolve, reject) => {
            socket.on('error', reject);
            socket.on('data', chunk => {
                received += chunk.toString('latin1');
                const found = received.match(/event: endpoint\ndata: (\S+)\n/);
                if (found)
                    resolve(found[1]);
            });
            socket.write('GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
        });
        socket.pause();
        let closed = false;
        socket.on('close', () => { closed = true; });
        socket.on('error', () => {});
        const postUrl = new URL(endpoint, d.sseUrl);
        const send = message => postLegacy(postUrl, message);
        await send(initializeRequest('2024-11-05', 1));
        await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        assert.equal((await health(d)).sessions, before + 1);
        // Each answer echoes 1 MiB; 24 of them outgrow what the kernel's socket buffers hold.
        const megabyte = 'x'.repeat(1024 * 1024);
        // An answer leaves once its audit record is synced, after its POST has had its 202: the
        // session may be dropped between the check and the next POST, which then finds it gone.
        for (let id = 2; id < 26 && (await health(d)).sessions > before; ++id) {
            try {
                await send({ jsonrpc: '2.0', id, method: 'tools/call',
                    params: { name: 'json_schema_2020_12_tool', arguments: { name: megabyte, email: 'a@b' } } });
            } catch (error) {
                if (!/answered 404/.test(error.message))
                    throw error;
                break;
            }
        }
        assert.ok(await eventually(async () => (await health(d)).sessions === before),
            'the session of a reader that stopped reading was not dropped');
        assert.match(d.stderr(), /dropping an SSE reader/);
        socket.resume();
        assert.ok(await eventually(async () => closed), 'the dropped reader\'s connection stayed open');
        socket.destroy();
    });
});

describe('session limits (MCP_MAX_SESSIONS=2, MCP_SESSION_IDLE_SECONDS=1)', { timeout: 60_000 }, () => {
    let daemon;
    before(async () => { daemon = await startDaemon({ settings: { MCP_MAX_SESSIONS: 2, MCP_SESSION_IDLE_SECONDS: 1 } }); });
    after(async () => { await daemon?.stop(); });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);

    it('beyond MCP_MAX_SESSIONS initialize is 503; idle sessions are closed, streaming and busy ones are not', async d => {
        const idle = await openSession(d.url);
        const streaming = await openSession(d.url);
        const stream = openGetStream(d, streaming.session);
        try {
            assert.equal((await stream.response).status, 200);
            const refused = await post(d.url, initializeRequest());
            assert.equal(refused.status, 503);
            assert.match((await refused.json()).error.message, /MCP_MAX_SESSIONS/);

            // The idle session goes after about a second without requests (/health touches none).
            assert.equal((await health(d)).sessions, 2);
            const reaped = await eventually(async () => (await health(d)).sessions === 1, { timeoutMs: 4000, intervalMs: 100 });
            assert.ok(reaped, 'an idle session was not closed after MCP_SESSION_IDLE_SECONDS');
            const gone = await post(d.url, ping(1), { session: idle.session });
            assert.equal(gone.status, 404);
            await gone.arrayBuffer();
            const alive = await post(d.url, ping(1), { session: streaming.session });
            assert.equal(alive.status, 200, 'a session with an open GET stream must not be reaped');
            await alive.arrayBuffer();

            // A session whose call runs longer than the idle limit keeps it and gets the answer.
            const busy = await openSession(d.url);
            const response = await post(d.url, { jsonrpc: '2.0', id: 1, method: 'tools/call',
                params: { name: 'test_wait', arguments: { ms: 2200 } } }, { session: busy.session });
            assert.equal(response.status, 200);
            assert.deepEqual((await response.json()).result.structuredContent, { waited_ms: 2200 });
        } finally {
            stream.close();
        }
    });
});

describe('HTTP authentication and allowed origins', { timeout: 60_000 }, () => {
    const token = 'integration-s3cret-token';
    let daemon;
    before(async () => {
        daemon = await startDaemon({ settings: { MCP_AUTH_TOKEN: token, MCP_ALLOWED_ORIGINS: 'https://app.example' } });
    });
    after(async () => { await daemon?.stop(); });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);

    it('without the bearer token /mcp and /sse are 401 with WWW-Authenticate; /health stays open', async d => {
        for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: token },
            { authorization: `Basic ${token}` }, { authorization: `Bearer ${token}x` }]) {
            const response = await post(d.url, initializeRequest(), { headers });
            assert.equal(response.status, 401, JSON.stringify(headers));
            assert.match(response.headers.get('www-authenticate'), /^Bearer/);
            assert.equal(response.headers.get('mcp-session-id'), null);
            await response.arrayBuffer();
        }
        const sse = await fetch(d.sseUrl, { headers: { accept: 'text/event-stream' } });
        assert.equal(sse.status, 401);
        await sse.arrayBuffer();
        assert.equal((await health(d)).status, 'ok');
    });

    it('the SDK client works with the right token over Streamable HTTP and SSE', async d => {
        const requestInit = { headers: { Authorization: `Bearer ${token}` } };
        for (const transport of [
            new StreamableHTTPClientTransport(new URL(d.url), { requestInit }),
            new SSEClientTransport(new URL(d.sseUrl), { requestInit }),
        ]) {
            const client = new Client({ name: 'auth-test', version: '0' });
            await client.connect(transport, { timeout: 5000 });
            try {
                const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
                assert.equal(result.content[0].text, 'This is a simple text response for testing.');
            } finally {
                await client.close();
            }
        }
    });

    it('the SDK client without a token fails to connect', async d => {
        const client = new Client({ name: 'auth-test', version: '0' });
        await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(d.url)), { timeout: 5000 }));
        await client.close();
    });

    it('MCP_ALLOWED_ORIGINS replaces the default: only listed origins pass', async d => {
        const authorization = `Bearer ${token}`;
        const listed = await post(d.url, initializeRequest(), { headers: { authorization, origin: 'https://app.example' } });
        assert.equal(listed.status, 200);
        await listed.arrayBuffer();
        for (const origin of [`http://localhost:${d.port}`, 'https://app.example.evil', 'http://app.example']) {
            const refused = await post(d.url, initializeRequest(), { headers: { authorization, origin } });
            assert.equal(refused.status, 403, origin);
            await refused.arrayBuffer();
        }
    });
});

describe('principals', { timeout: 60_000 }, () => {
    // Two principals from MCP_PRINCIPALS_FILE and the default one from MCP_AUTH_TOKEN.
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
    const defaultToken = 'default-token-555';
    let daemon;
    let dir;
    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'cmcp-principals-'));
        const file = join(dir, 'principals');
        const digest = text => createHash('sha256').update(text).digest('hex');
        await writeFile(file, `# operators' principals\nalice ${digest(tokens.alice)}\n\nbob   ${digest(tokens.bob)}\n`);
        daemon = await startDaemon({ settings: { MCP_AUTH_TOKEN: defaultToken, MCP_PRINCIPALS_FILE: file } });
    });
    after(async () => {
        await daemon?.stop();
        if (dir)
            await rm(dir, { recursive: true, force: true });
    });
    const it = (name, body, options) => daemonTest(() => daemon, name, body, options);
    const as = name => ({ authorization: `Bearer ${tokens[name] ?? defaultToken}` });

    it('each token opens sessions; an unknown token is 401', async d => {
        for (const name of ['alice', 'bob', 'default'])
            assert.ok((await openSession(d.url, '2025-11-25', as(name))).session, name);
        const refused = await post(d.url, initializeRequest(), { headers: { authorization: 'Bearer carol' } });
        assert.equal(refused.status, 401);
        await refused.arrayBuffer();
    });

    it("one principal's session id is unknown to another, on /mcp and /messages", async d => {
        const { session } = await openSession(d.url, '2025-11-25', as('alice'));
        for (const intruder of ['bob', 'default']) {
            const call = await post(d.url, ping(), { session, protocolVersion: '2025-11-25', headers: as(intruder) });
            assert.equal(call.status, 404, intruder);
            assert.match(await call.text(), /session not found/);
        }
        const own = await post(d.url, ping(), { session, protocolVersion: '2025-11-25', headers: as('alice') });
        assert.equal(own.status, 200);
        await own.arrayBuffer();

        const controller = new AbortController();
        try {
            const stream = await fetch(d.sseUrl, { headers: { accept: 'text/event-stream', ...as('alice') }, signal: controller.signal });
            const endpoint = await new SseReader(stream).next();
            const messages = new URL(endpoint.data, d.sseUrl);
            const intruded = await fetch(messages, { method: 'POST', headers: { 'content-type': 'application/json', ...as('bob') },
                body: JSON.stringify(ping()), signal: AbortSignal.timeout(10_000) });
            assert.equal(intruded.status, 404);
            await intruded.arrayBuffer();
        } finally {
            controller.abort();
        }
    });
});

describe('a principals file that cannot be used', { timeout: 30_000 }, () => {
    test('stops start-up with one line naming the file, the line and the problem', async () => {
        const dir = await mkdtemp(join(tmpdir(), 'cmcp-principals-'));
        const file = join(dir, 'principals');
        try {
            await writeFile(file, 'alice 1234\n');
            await assert.rejects(startDaemon({ settings: { MCP_PRINCIPALS_FILE: file } }),
                error => /MCP_PRINCIPALS_FILE .*principals line 1: the digest of 'alice' is not 64 hex digits/.test(error.message));
        } finally {
            await rm(dir, { recursive: true, force: true });
        }
    });
});

describe('shutdown', { timeout: 30_000 }, () => {
    // stop() sends a second SIGTERM after a second: the drain's way out for a call that will not end.
    test('a second SIGTERM ends the daemon with status 0 promptly, even with open streams and running calls', async () => {
        const daemon = await startDaemon();
        const controller = new AbortController();
        try {
            await withDiagnostics(daemon, async () => {
                const { session } = await openSession(daemon.url);
                const stream = await fetch(daemon.sseUrl, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
                assert.equal((await new SseReader(stream).next()).event, 'endpoint');
                const call = post(daemon.url, { jsonrpc: '2.0', id: 1, method: 'tools/call',
                    params: { name: 'test_wait', arguments: { ms: 20_000 } } }, { session, signal: controller.signal })
                    .then(r => r.arrayBuffer()).catch(() => {});
                await sleep(150);
                const started = Date.now();
                const exit = await daemon.stop(5000);
                assert.deepEqual(exit, { code: 0, signal: null });
                assert.ok(Date.now() - started < 2000, `shutdown took ${Date.now() - started} ms`);
                assert.match(daemon.stderr(), /signal 15 received/);
                await call;
            });
        } finally {
            controller.abort();
            await daemon.stop();
        }
    });
});
