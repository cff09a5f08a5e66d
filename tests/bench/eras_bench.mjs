// Daemon CPU per trivial tools/call in the modern era (2026-07-28, stateless: every request
// carries its _meta and mirrored headers) against the 2025 era (one initialized session), in
// one run against one daemon, rounds interleaved. CPU is the daemon's utime+stime from
// /proc/PID/stat around each round of sequential calls over one keep-alive connection.
//
// Usage: node tests/bench/eras_bench.mjs [--cmcpd PATH] [--calls N] [--rounds R]
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { resolve } from 'node:path';

import { startDaemon } from '../integration/lib/daemon.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : fallback;
};
const cmcpd = resolve(option('cmcpd', 'build/server/cmcpd-conformance'));
const calls = Number(option('calls', 2000));
const rounds = Number(option('rounds', 7));
const ticksPerSecond = 100; // USER_HZ on Linux

// A daemon of its own: scratch working directory (sandbox root, audit log, admin socket), uid pool.
const daemon = await startDaemon({ program: cmcpd });
const { port } = daemon;

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(headers, body) {
    return new Promise((done, fail) => {
        const request = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent,
            headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers } },
        response => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', chunk => { text += chunk; });
            response.on('end', () => response.statusCode === 200 ? done({ headers: response.headers, text })
                : fail(new Error(`HTTP ${response.statusCode}: ${text}`)));
        });
        request.setTimeout(5000, () => request.destroy(new Error('no answer within 5 s')));
        request.on('error', fail);
        request.end(JSON.stringify(body));
    });
}

const cpuTicks = () => {
    const fields = readFileSync(`/proc/${daemon.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
};

const init = await post({}, { jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'eras-bench', version: '0' } } });
const session = init.headers['mcp-session-id'];
await post({ 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, { jsonrpc: '2.0', method: 'notifications/initialized' })
    .catch(() => {});

const eras = {
    '2025-11-25 (session)': id => post({ 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }),
    '2026-07-28 (stateless)': id => post({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_simple_text' },
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {}, _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'eras-bench', version: '0' } } } }),
};

const perCall = Object.fromEntries(Object.keys(eras).map(name => [name, []]));
for (const call of Object.values(eras))
    for (let i = 0; i < 200; ++i) await call(i); // warm-up
for (let round = 0; round < rounds; ++round) {
    for (const [name, call] of Object.entries(eras)) {
        const before = cpuTicks();
        for (let i = 0; i < calls; ++i)
            await call(i + 1);
        perCall[name].push(((cpuTicks() - before) / ticksPerSecond) * 1e6 / calls);
    }
}
const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const legacy = median(perCall['2025-11-25 (session)']);
console.log(`cmcpd ${cmcpd}, ${rounds} rounds x ${calls} sequential calls per era, one keep-alive connection`);
for (const [name, values] of Object.entries(perCall))
    console.log(`${name.padEnd(24)} daemon CPU per call: median ${median(values).toFixed(1)} µs (rounds: ${values.map(v => v.toFixed(1)).join(', ')})`);
console.log(`ratio stateless / session: ${(median(perCall['2026-07-28 (stateless)']) / legacy).toFixed(2)}`);
agent.destroy();
await daemon.stop();
