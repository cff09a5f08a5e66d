// Helpers of the published-ports tests: a background job serving lib/published_server.py on a
// port of its own network, published with port_publish; and raw HTTP over a plain socket, for
// what fetch would not send or would hide.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

import { eventually } from './daemon.mjs';

const SERVER = readFileSync(new URL('./published_server.py', import.meta.url), 'utf8');

// Starts the test server in a background Python job of the session behind `call` (callTool's
// result), listening on `port`; resolves with its job id.
export async function startServerJob(call, port) {
    const result = await call('system_run_python', {
        code: SERVER.replace('PORT = 8000', `PORT = ${port}`),
        background: true,
    });
    assert.ok(!result.isError, `system_run_python: ${result.content?.[0]?.text}`);
    return result.structuredContent.job_id;
}

// Publishes `port` of `jobId` once the job's process has started, and waits until its server
// answers through the URL; resolves with port_publish's answer.
export async function publishWhenListening(call, jobId, port, options = {}, headers = {}) {
    let published;
    let refusal = '';
    const publishedInTime = await eventually(async () => {
        const result = await call('port_publish', { job_id: jobId, port, ...options });
        if (result.isError) {
            refusal = result.structuredContent.error;
            assert.match(refusal, /not started its program yet/);
            return false;
        }
        published = result.structuredContent;
        return true;
    }, { timeoutMs: 15_000, intervalMs: 100 });
    assert.ok(publishedInTime, `port_publish kept refusing: ${refusal}`);
    const answering = await eventually(
        async () => (await fetch(`${published.url}hello.txt`, { headers })).status !== 502,
        { timeoutMs: 15_000, intervalMs: 100 });
    assert.ok(answering, `the job's server never answered through ${published.url}`);
    return published;
}

// Sends `bytes` on a fresh connection to `base` ("http://127.0.0.1:PORT") and resolves with
// everything received until the daemon closes (or `timeoutMs`), as latin1 text.
export function rawExchange(base, bytes, { timeoutMs = 10_000 } = {}) {
    return new Promise(resolve => {
        const { hostname, port } = new URL(base);
        const socket = connect(Number(port), hostname);
        let received = '';
        const timer = setTimeout(() => { socket.destroy(); resolve(received); }, timeoutMs);
        socket.on('data', chunk => { received += chunk.toString('latin1'); });
        socket.on('error', () => {});
        socket.on('close', () => { clearTimeout(timer); resolve(received); });
        socket.on('connect', () => socket.write(bytes));
    });
}

// The status of a raw answer.
export const statusOf = answer => Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
