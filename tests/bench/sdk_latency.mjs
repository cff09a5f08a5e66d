// End-to-end tools/call latency of a trivial tool (test_simple_text) with the official MCP
// TypeScript SDK client, over Streamable HTTP, legacy SSE and stdio, against a cmcpd this script
// spawns. Shows the SDK-bound figures beside cmcp-bench's lean-client ones (see docs/benchmarks.md).
//
//   node tests/bench/sdk_latency.mjs [--cmcpd PATH] [--n N] [--warmup W] [--repeat R]
//                                    [--transports http,sse,stdio]
//
// Needs `npm ci` in tests/clients. All traffic goes to 127.0.0.1; every loop is bounded.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNs, withTimeout } from './measure.mjs';
import os from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = resolve(here, '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client');
const { Client } = await import(`${sdk}/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/streamableHttp.js`);
const { SSEClientTransport } = await import(`${sdk}/sse.js`);
const { StdioClientTransport } = await import(`${sdk}/stdio.js`);

// ------------------------------------------------------------------ options

function parseArgs(argv) {
    const options = {
        cmcpd: process.env.CMCPD ?? '',
        n: 1000,
        warmup: 50,
        repeat: 3,
        transports: ['http', 'sse', 'stdio'],
        maxSeconds: 300,
    };
    for (let i = 0; i < argv.length; ++i) {
        let [name, value] = argv[i].split('=', 2);
        if (name === '--help' || name === '-h') {
            console.log('usage: node tests/bench/sdk_latency.mjs [--cmcpd PATH] [--n N] [--warmup W] [--repeat R] '
                        + '[--transports http,sse,stdio] [--max-seconds S]');
            process.exit(0);
        }
        if (value === undefined)
            value = argv[++i];
        if (value === undefined)
            throw new Error(`${name} needs a value`);
        switch (name) {
        case '--cmcpd': options.cmcpd = value; break;
        case '--n': options.n = Math.max(1, parseInt(value, 10)); break;
        case '--warmup': options.warmup = Math.max(0, parseInt(value, 10)); break;
        case '--repeat': options.repeat = Math.min(50, Math.max(1, parseInt(value, 10))); break;
        case '--transports': options.transports = value.split(',').filter(Boolean); break;
        case '--max-seconds': options.maxSeconds = Math.max(1, Number(value)); break;
        default: throw new Error(`unknown option ${name}`);
        }
    }
    if (!options.cmcpd) {
        // The build directories docs/benchmarks/history.md names, newest binary first.
        const candidates = ['build', 'build-bench'].map((dir) => resolve(here, '../..', dir, 'server/cmcpd-conformance'));
        options.cmcpd = candidates.find((path) => existsSync(path)) ?? candidates[0];
    }
    return options;
}

// ------------------------------------------------------------------ helpers

function percentile(sorted, q) {
    const rank = Math.ceil(q * sorted.length);
    return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

function stats(samples) {
    const sorted = [...samples].sort((a, b) => a - b);
    const mean = sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
    return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), mean };
}

function median(values) {
    const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
    if (sorted.length === 0)
        return NaN;
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// Starts `cmcpd --port 0` and resolves with { child, port, exited } once it logs its address.
function startHttpDaemon(cmcpd) {
    return new Promise((resolvePromise, reject) => {
        const child = spawn(cmcpd, ['--host', '127.0.0.1', '--port', '0'],
                            { stdio: ['ignore', 'ignore', 'pipe'] });
        const exited = new Promise((done) => child.once('exit', done));
        let log = '';
        let port = 0;
        const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`cmcpd gave no port in 15 s:\n${log}`)); }, 15000);
        child.on('error', (error) => { clearTimeout(timer); reject(error); });
        exited.then((code) => { clearTimeout(timer); if (!port) reject(new Error(`cmcpd exited (${code}):\n${log}`)); });
        child.stderr.on('data', (chunk) => {
            if (port)
                return; // keep draining, so the daemon never blocks on a full pipe
            log += chunk;
            const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(log);
            if (match) {
                clearTimeout(timer);
                port = Number(match[1]);
                resolvePromise({ child, port, exited });
            }
        });
    });
}

async function stopDaemon(daemon) {
    if (daemon.child.exitCode !== null || daemon.child.signalCode !== null)
        return;
    const timer = setTimeout(() => daemon.child.kill('SIGKILL'), 5000);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    clearTimeout(timer);
}

const expectedText = 'This is a simple text response for testing.';

// One run: connect, warm up, then N sequential calls; returns samples (µs) and daemon CPU per call.
async function measure(transport, daemonPid, options, deadline) {
    const client = new Client({ name: 'cmcp-sdk-bench', version: '1.0.0' });
    await withTimeout(client.connect(transport), 15000, 'connect');
    const pid = daemonPid ?? transport.pid;
    const samples = [];
    let cpu0 = 0;
    try {
        for (let i = 0; i < options.warmup + options.n && Date.now() < deadline; ++i) {
            if (i === options.warmup)
                cpu0 = cpuNs(pid);
            const t0 = process.hrtime.bigint();
            const result = await withTimeout(client.callTool({ name: 'test_simple_text', arguments: {} }), 10000, 'tools/call');
            const t1 = process.hrtime.bigint();
            if (result.isError || result.content?.[0]?.text !== expectedText)
                throw new Error(`unexpected result: ${JSON.stringify(result)}`);
            if (i >= options.warmup)
                samples.push(Number(t1 - t0) / 1000);
        }
        const cpuUs = samples.length ? (cpuNs(pid) - cpu0) / 1000 / samples.length : NaN;
        return { samples, cpuUs };
    } finally {
        await withTimeout(client.close(), 10000, 'close').catch(() => {});
    }
}

// ------------------------------------------------------------------ main

const options = parseArgs(process.argv.slice(2));
if (!existsSync(options.cmcpd)) {
    console.error(`sdk_latency: no daemon at ${options.cmcpd} (build it, or pass --cmcpd PATH)`);
    process.exit(2);
}
const sdkVersion = JSON.parse(readFileSync(resolve(sdk, '../../../package.json'), 'utf8')).version;
const deadline = Date.now() + options.maxSeconds * 1000;

const rows = {
    http: { name: 'cmcpd Streamable HTTP', runs: [], cpu: [], errors: [] },
    sse: { name: 'cmcpd legacy SSE', runs: [], cpu: [], errors: [] },
    stdio: { name: 'cmcpd stdio', runs: [], cpu: [], errors: [] },
};

const http = options.transports.some((t) => t === 'http' || t === 'sse') ? await startHttpDaemon(options.cmcpd) : null;
try {
    for (let rep = 1; rep <= options.repeat && Date.now() < deadline; ++rep) {
        console.error(`[sdk_latency] run ${rep}/${options.repeat}`);
        for (const kind of options.transports) {
            const row = rows[kind];
            if (!row)
                throw new Error(`unknown transport ${kind}`);
            let transport;
            if (kind === 'http')
                transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${http.port}/mcp`));
            else if (kind === 'sse')
                transport = new SSEClientTransport(new URL(`http://127.0.0.1:${http.port}/sse`));
            else
                transport = new StdioClientTransport({ command: options.cmcpd, args: ['--stdio'], stderr: 'ignore' });
            try {
                const { samples, cpuUs } = await measure(transport, kind === 'stdio' ? null : http.child.pid, options, deadline);
                row.runs.push(stats(samples));
                row.cpu.push(cpuUs);
            } catch (error) {
                row.errors.push(String(error?.message ?? error));
            }
        }
    }
} finally {
    if (http)
        await stopDaemon(http);
}

const fmt = (v) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '–');
console.log(`# sdk_latency\n`);
console.log(`Machine: ${os.cpus().length} CPUs, kernel ${os.release()}, Node ${process.version}, `
            + `@modelcontextprotocol/sdk ${sdkVersion}, ${new Date().toISOString()}. Daemon: ${options.cmcpd}.\n`);
console.log('## Latency of one tools/call (test_simple_text) through the official TypeScript SDK client, sequential\n');
console.log('| path | client | calls/run | p50 µs | p99 µs | mean µs | daemon CPU µs/call | p50 of each run |');
console.log('|---|---|---:|---:|---:|---:|---:|---|');
let failed = false;
for (const kind of options.transports) {
    const row = rows[kind];
    if (row.runs.length === 0) {
        console.log(`| ${row.name} | TS SDK ${sdkVersion} | – | – | – | – | – | FAILED: ${row.errors[0] ?? 'not run'} |`);
        failed = true;
        continue;
    }
    const pick = (field) => median(row.runs.map((s) => s[field]));
    console.log(`| ${row.name} | TS SDK ${sdkVersion} | ${row.runs[0].n} | ${fmt(pick('p50'))} | ${fmt(pick('p99'))} | `
                + `${fmt(pick('mean'))} | ${fmt(median(row.cpu))} | ${row.runs.map((s) => fmt(s.p50)).join(' / ')} |`);
    if (row.errors.length) {
        console.log(`|   ↳ ${row.errors.length} of ${options.repeat} runs failed: ${row.errors[0]} | | | | | | | |`);
        failed = true;
    }
}
console.log(`\nMedians over ${options.repeat} run(s); "daemon CPU" is cmcpd's own CPU time (schedstat, all threads) `
            + 'divided by the calls: the server-side share of each round trip.\n');
process.exit(failed ? 1 : 0);
