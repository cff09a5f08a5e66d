// web_browse and web_scrape of one local page (the fixture's article.html, about 20 KB), through
// the official MCP TypeScript SDK client over stdio, against a cmcpd this script spawns.
//
//   cold browse   a fresh daemon per sample: the first web_browse starts cmcp-browser (QtWebEngine)
//   warm browse   later calls on one daemon: the worker is running
//   scrape        web_scrape of the same page (fetch through the gate, parse in cmcp-html)
//
// Each figure is the client's round trip; beside it the CPU per call of the daemon (all its
// threads, from schedstat) and of the processes below it (cmcp-browser with QtWebEngine's
// renderers, cmcp-html), which a loaded machine does not inflate the way it inflates wall time.
// Targets: warm browse p50 < 150 ms, scrape < 10 ms.
//
//   node tests/bench/web_bench.mjs [--cmcpd PATH] [--cold N] [--warm N] [--scrape N]
//
// Needs `npm ci` in tests/clients. All traffic stays on 127.0.0.1; every wait is bounded.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNs, withTimeout } from './measure.mjs';
import { startWebFixture } from '../integration/lib/webfixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = resolve(here, '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client');
const { Client } = await import(`${sdk}/index.js`);
const { StdioClientTransport } = await import(`${sdk}/stdio.js`);

function parseArgs(argv) {
    const options = { cmcpd: process.env.CMCPD ?? '', cold: 5, warm: 40, scrape: 300 };
    for (let i = 0; i < argv.length; ++i) {
        const name = argv[i];
        const value = argv[++i];
        if (value === undefined)
            throw new Error(`${name} needs a value`);
        switch (name) {
        case '--cmcpd': options.cmcpd = resolve(value); break;
        case '--cold': options.cold = Math.max(1, parseInt(value, 10)); break;
        case '--warm': options.warm = Math.max(1, parseInt(value, 10)); break;
        case '--scrape': options.scrape = Math.max(1, parseInt(value, 10)); break;
        default: throw new Error(`unknown option ${name}`);
        }
    }
    if (!options.cmcpd)
        options.cmcpd = resolve(here, '../../build/server/cmcpd');
    if (!existsSync(options.cmcpd))
        throw new Error(`no cmcpd at ${options.cmcpd} (build first, or pass --cmcpd)`);
    return options;
}

// CPU time of every process below `pid` (cmcp-browser, QtWebEngine's renderer and utility
// processes, cmcp-html): the work the daemon hands to other processes.
function descendantsCpuNs(pid) {
    const parents = new Map();
    for (const entry of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
        try {
            const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
            parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
        } catch { /* gone meanwhile */ }
    }
    let total = 0;
    for (const [child] of parents) {
        for (let up = parents.get(child); up !== undefined && up > 1; up = parents.get(up)) {
            if (up === pid) {
                try { total += cpuNs(child); } catch { /* gone meanwhile */ }
                break;
            }
        }
    }
    return total;
}

function percentile(sorted, q) {
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summary(samples) {
    const sorted = [...samples].sort((a, b) => a - b);
    return { n: sorted.length, p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), max: sorted.at(-1) };
}

async function startClient(options) {
    const settings = {
        WEB_ALLOW_PRIVATE: 'true',
        WEB_ALLOWED_DOMAINS: '127.0.0.1',
        LOG_LEVEL: 'warning',
        // No jobs wait for system tools: their start-up would share the CPU with the figures.
        BASH_WARM_JOBS: '0',
        PYTHON_WARM_JOBS: '0',
        ...(process.getuid() === 0 ? {} : { SANDBOX_REQUIRE: '' }),
    };
    const args = ['--stdio', ...Object.entries(settings).flatMap(([name, value]) => ['--set', `${name}=${value}`])];
    const transport = new StdioClientTransport({ command: options.cmcpd, args, stderr: 'ignore', cwd: os.tmpdir() });
    const client = new Client({ name: 'web-bench', version: '1.0.0' });
    await withTimeout(client.connect(transport), 30_000, 'connect');
    return { client, pid: transport.pid };
}

async function timedCall(client, pid, name, args) {
    const cpuBefore = cpuNs(pid);
    const helpersBefore = descendantsCpuNs(pid);
    const started = process.hrtime.bigint();
    const result = await withTimeout(client.callTool({ name, arguments: args }), 60_000, name);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const cpuMs = (cpuNs(pid) - cpuBefore) / 1e6;
    const helpersMs = Math.max(0, descendantsCpuNs(pid) - helpersBefore) / 1e6;
    if (result.isError)
        throw new Error(`${name} failed: ${result.content?.[0]?.text}`);
    return { ms, cpuMs, helpersMs };
}

function row(label, timings) {
    const wall = summary(timings.map(t => t.ms));
    const cpu = summary(timings.map(t => t.cpuMs));
    const helpers = summary(timings.map(t => t.helpersMs));
    const f = v => v.toFixed(1);
    return `| ${label} | ${wall.n} | ${f(wall.p50)} | ${f(wall.p90)} | ${f(wall.max)} | ${f(cpu.p50)} | ${f(helpers.p50)} |`;
}

const options = parseArgs(process.argv.slice(2));
const fixture = await startWebFixture();
const page = fixture.url('/article.html');
const rows = [];
try {
    // Cold: a daemon per sample, its first web_browse.
    const cold = [];
    for (let i = 0; i < options.cold; ++i) {
        const { client, pid } = await startClient(options);
        try {
            cold.push(await timedCall(client, pid, 'web_browse', { url: page }));
        } finally {
            await client.close();
        }
    }
    rows.push(row('web_browse, cold (new worker)', cold));

    const { client, pid } = await startClient(options);
    try {
        for (let i = 0; i < 3; ++i)
            await timedCall(client, pid, 'web_browse', { url: page });
        const warm = [];
        for (let i = 0; i < options.warm; ++i)
            warm.push(await timedCall(client, pid, 'web_browse', { url: page }));
        rows.push(row('web_browse, warm', warm));
        const warmText = [];
        for (let i = 0; i < Math.min(options.warm, 20); ++i)
            warmText.push(await timedCall(client, pid, 'web_browse', { url: page, text: true }));
        rows.push(row('web_browse, warm, text: true', warmText));

        for (let i = 0; i < 10; ++i)
            await timedCall(client, pid, 'web_scrape', { url: page });
        const scrape = [];
        for (let i = 0; i < options.scrape; ++i)
            scrape.push(await timedCall(client, pid, 'web_scrape', { url: page }));
        rows.push(row('web_scrape', scrape));
        const markdown = [];
        for (let i = 0; i < Math.min(options.scrape, 100); ++i)
            markdown.push(await timedCall(client, pid, 'web_scrape', { url: page, format: 'markdown', selector: 'article p' }));
        rows.push(row('web_scrape, markdown, selector', markdown));
    } finally {
        await client.close();
    }
} finally {
    await fixture.stop();
}

console.log(`web tools on ${os.cpus().length} CPU(s), ${os.cpus()[0]?.model ?? 'unknown CPU'}, load ${os.loadavg().map(v => v.toFixed(1)).join(' ')}; page ${page}\n`);
console.log('| call | n | p50 ms | p90 ms | max ms | daemon CPU p50 ms | helper processes CPU p50 ms |');
console.log('|---|---|---|---|---|---|---|');
for (const line of rows)
    console.log(line);
