// What a browser worker of one principal each costs: the time of a principal's first web_browse
// against its later ones, and the memory of each worker. One daemon over Streamable HTTP with
// principals from MCP_PRINCIPALS_FILE (a bearer token each), the loopback fixture's article.html.
//
//   first, warm one waiting   a new principal's first page after the daemon had time to start
//                             the warm (unbound) worker, which the page takes
//   first, at the limit       a new principal's first page while WEB_BROWSER_WORKERS run: the
//                             idlest worker of another principal ends and a fresh one starts
//   warm                      a principal's later pages, in its own worker
//
// Memory: each worker's process tree (cmcp-jail, cmcp-browser and QtWebEngine's processes below
// it, or cmcp-browser and its processes for a daemon that is not root), RSS summed and PSS summed
// (PSS shares the pages the processes share, RSS counts them in each).
//
//   node tests/bench/browser_principals_bench.mjs [--cmcpd PATH] [--principals N] [--warm N]
//
// Needs `npm ci` in tests/clients. All traffic stays on 127.0.0.1; every wait is bounded.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTimeout } from './measure.mjs';
import { startDaemon } from '../integration/lib/daemon.mjs';
import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startWebFixture } from '../integration/lib/webfixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
    const options = { cmcpd: process.env.CMCPD ?? '', principals: 6, warm: 20 };
    for (let i = 0; i < argv.length; ++i) {
        const name = argv[i];
        const value = argv[++i];
        if (value === undefined)
            throw new Error(`${name} needs a value`);
        switch (name) {
        case '--cmcpd': options.cmcpd = resolve(value); break;
        case '--principals': options.principals = Math.max(2, parseInt(value, 10)); break;
        case '--warm': options.warm = Math.max(1, parseInt(value, 10)); break;
        default: throw new Error(`unknown option ${name}`);
        }
    }
    process.env.CMCPD = options.cmcpd || resolve(here, '../../build/server/cmcpd');
    return options;
}

const sleep = ms => new Promise(done => setTimeout(done, ms));

function children(pid) {
    try {
        return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    } catch {
        return [];
    }
}

function tree(pid) {
    return [pid, ...children(pid).flatMap(tree)];
}

const comm = pid => {
    try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
        return '';
    }
};

// The roots of the daemon's browser workers: its children that are cmcp-browser, or (a root
// daemon's) the cmcp-jail children with a cmcp-browser below them (cmcp-html runs jailed too).
function workerRoots(daemonPid) {
    return children(daemonPid).filter(pid => comm(pid) === 'cmcp-browser'
        || (comm(pid) === 'cmcp-jail' && tree(pid).some(member => comm(member) === 'cmcp-browser')));
}

function memoryKiB(pid) {
    let rss = 0;
    let pss = 0;
    for (const member of tree(pid)) {
        try {
            const rollup = readFileSync(`/proc/${member}/smaps_rollup`, 'utf8');
            rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)[1]);
            pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)[1]);
        } catch { /* gone meanwhile, or a kernel thread */ }
    }
    return { rss, pss, processes: tree(pid).length };
}

function median(values) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)];
}

const options = parseArgs(process.argv.slice(2));
const scratch = mkdtempSync(join(os.tmpdir(), 'cmcp-browser-principals-bench-'));
const tokens = Array.from({ length: options.principals * 2 }, (_, i) => [`p${i}`, `principal-token-${i}-0123456789`]);
const digest = text => createHash('sha256').update(text).digest('hex');
writeFileSync(join(scratch, 'principals'), tokens.map(([name, token]) => `${name} ${digest(token)}\n`).join(''));
const fixture = await startWebFixture();
const page = fixture.url('/article.html');
const daemon = await startDaemon({
    fixtures: false,
    settings: {
        SANDBOX_ROOT: join(scratch, 'sandbox'), MCP_AUTH_TOKEN: 'default-token-0123456789', MCP_PRINCIPALS_FILE: join(scratch, 'principals'),
        WEB_ALLOW_PRIVATE: 'true', WEB_ALLOWED_DOMAINS: '127.0.0.1',
        BASH_WARM_JOBS: '0', PYTHON_WARM_JOBS: '0',
        // Room for the first round's principals and the warm one; the second round's end theirs.
        WEB_BROWSER_WORKERS: String(options.principals + 1), WEB_BROWSER_IDLE_SECONDS: '3600',
    },
});
const clients = [];
async function clientOf(token) {
    const client = new Client({ name: 'browser-principals-bench', version: '1.0.0' });
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
        { requestInit: { headers: { Authorization: `Bearer ${token}` } } })), 30_000, 'connect');
    clients.push(client);
    return client;
}
async function timedBrowse(client) {
    const started = process.hrtime.bigint();
    const result = await withTimeout(client.callTool({ name: 'web_browse', arguments: { url: page } }), 60_000, 'web_browse');
    if (result.isError)
        throw new Error(`web_browse failed: ${result.content?.[0]?.text}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
}

const rows = [];
try {
    const waiting = [];
    const atLimit = [];
    const warm = [];
    const round = tokens.slice(0, options.principals);
    const secondRound = tokens.slice(options.principals);
    // The first principal starts the pool; its page is the daemon's first and not counted.
    const first = await clientOf(round[0][1]);
    await timedBrowse(first);
    for (const [, token] of round.slice(1)) {
        await sleep(4000); // the warm worker is ready
        waiting.push(await timedBrowse(await clientOf(token)));
    }
    for (let i = 0; i < options.warm; ++i)
        warm.push(await timedBrowse(clients[i % clients.length]));
    const memory = workerRoots(daemon.pid).map(memoryKiB);
    // A second round of principals: the first takes the warm worker (not counted), and then every
    // worker runs: each of the others' first pages ends one.
    await timedBrowse(await clientOf(secondRound[0][1]));
    for (const [, token] of secondRound.slice(1, 1 + Math.max(1, Math.floor(options.principals / 2))))
        atLimit.push(await timedBrowse(await clientOf(token)));

    const f = v => v.toFixed(1);
    rows.push(`| first page of a principal, the warm worker ready | ${waiting.length} | ${f(median(waiting))} | ${f(Math.min(...waiting))} | ${f(Math.max(...waiting))} |`);
    rows.push(`| first page of a principal, all WEB_BROWSER_WORKERS running (one ends, a fresh one starts) | ${atLimit.length} | ${f(median(atLimit))} | ${f(Math.min(...atLimit))} | ${f(Math.max(...atLimit))} |`);
    rows.push(`| later page of a principal (its own worker, warm) | ${warm.length} | ${f(median(warm))} | ${f(Math.min(...warm))} | ${f(Math.max(...warm))} |`);
    console.log(`browser workers of one principal each, on ${os.cpus().length} CPU(s), ${os.cpus()[0]?.model ?? 'unknown CPU'}, `
        + `load ${os.loadavg().map(v => v.toFixed(1)).join(' ')}, ${process.getuid() === 0 ? 'root daemon (workers under cmcp-jail)' : 'daemon not root'}; page ${page}\n`);
    console.log('| web_browse | n | median ms | min ms | max ms |');
    console.log('|---|---|---|---|---|');
    for (const line of rows)
        console.log(line);
    console.log('\n| memory per worker tree, after its pages | workers | median RSS MiB | median PSS MiB | processes each |');
    console.log('|---|---|---|---|---|');
    console.log(`| after ${options.principals} principals' pages | ${memory.length} | `
        + `${f(median(memory.map(m => m.rss)) / 1024)} | ${f(median(memory.map(m => m.pss)) / 1024)} | ${median(memory.map(m => m.processes))} |`);
} finally {
    for (const client of clients)
        await client.close().catch(() => {});
    await daemon.stop();
    await fixture.stop();
    rmSync(scratch, { recursive: true, force: true });
}
