// Jailed calls against an unsandboxed exec server, through the same official SDK client over
// Streamable HTTP, in one interleaved run: cmcpd with JOB_CALL_TEMPLATES=true (calls forked
// from a template's cells), cmcpd with JOB_CALL_TEMPLATES=false (a jail per call, started ahead
// by BASH_WARM_JOBS / PYTHON_WARM_JOBS) and tests/bench/unsandboxed_exec_server.mjs (bash -c /
// python3 -c, no isolation). Prints the p50/p99 of `echo hi` and `print(1)` per server, the CPU
// one `echo hi` costs every process of the server (the daemon, its jails, templates, cells and
// jobs; the client's excluded), the calls per second of 8 sessions at once calling `echo hi`
// (after a warm-up round), every ratio to the unsandboxed server, and two floors measured in
// the same run: a subshell forked from a running bash, and `bash -c 'echo hi'` started cold.
//
//   node tests/bench/exec_vs_unsandboxed.mjs [--cmcpd PATH] [--n N] [--warmup W]
//                                            [--seconds S] [--rounds R] [--load L]
//
// --load L keeps L processes spinning on the CPU throughout (L = 2 keeps both cores of these
// machines busy), for the figures under load.
//
// Runs as root (cmcpd's jobs switch to host uids of its pool). Each daemon gets a SANDBOX_ROOT
// of its own under /tmp, removed afterwards, and a uid pool of its own (as cmcp-system-bench).
// Not part of ctest. All traffic goes to 127.0.0.1; every wait is bounded.

import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTimeout } from './measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const sdk = resolve(here, '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client');
const { Client } = await import(`${sdk}/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/streamableHttp.js`);

function parseArgs(argv) {
    const options = { cmcpd: process.env.CMCPD ?? '', n: 200, warmup: 20, seconds: 5, rounds: 2, load: 0 };
    for (let i = 0; i < argv.length; ++i) {
        const name = argv[i];
        if (name === '--help' || name === '-h') {
            console.log('usage: node tests/bench/exec_vs_unsandboxed.mjs [--cmcpd PATH] [--n N] [--warmup W] '
                        + '[--seconds S] [--rounds R] [--load L]');
            process.exit(0);
        }
        const value = argv[++i];
        if (value === undefined)
            throw new Error(`${name} needs a value`);
        switch (name) {
        case '--cmcpd': options.cmcpd = value; break;
        case '--n': options.n = Math.max(1, parseInt(value, 10)); break;
        case '--warmup': options.warmup = Math.max(0, parseInt(value, 10)); break;
        case '--seconds': options.seconds = Math.min(60, Math.max(1, Number(value))); break;
        case '--rounds': options.rounds = Math.min(10, Math.max(1, parseInt(value, 10))); break;
        case '--load': options.load = Math.min(16, Math.max(0, parseInt(value, 10))); break;
        default: throw new Error(`unknown option ${name}`);
        }
    }
    if (!options.cmcpd)
        options.cmcpd = resolve(here, '../../build/server/cmcpd-conformance');
    if (!existsSync(options.cmcpd))
        throw new Error(`no cmcpd at ${options.cmcpd} (build it, or pass --cmcpd)`);
    return options;
}

function freePort() {
    return new Promise((resolvePort, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolvePort(port));
        });
    });
}

// A server process and its MCP URL, once it accepts an initialize.
async function startCmcpd(cmcpd, name, uidBase, settings) {
    const root = mkdtempSync(join(tmpdir(), 'cmcp-exec-bench-'));
    chmodSync(root, 0o755);
    const port = await freePort();
    const all = { SANDBOX_ROOT: root, SANDBOX_UID_BASE: uidBase, SANDBOX_UID_COUNT: 16, LOG_LEVEL: 'warning', ...settings };
    const args = ['--host', '127.0.0.1', '--port', String(port),
                  ...Object.entries(all).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
    const child = spawn(cmcpd, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    return { name, child, root, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

async function startUnsandboxed() {
    const child = spawn(process.execPath, [join(here, 'unsandboxed_exec_server.mjs'), '--port', '0'],
                        { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await withTimeout(new Promise((resolvePort, reject) => {
        let text = '';
        child.stdout.on('data', (chunk) => {
            text += chunk;
            const match = /listening (\d+)/.exec(text);
            if (match)
                resolvePort(Number(match[1]));
        });
        child.once('exit', (code) => reject(new Error(`the unsandboxed server exited (${code})`)));
    }), 20_000, 'the unsandboxed server');
    return { name: 'unsandboxed', child, root: null, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

async function connect(server) {
    const deadline = Date.now() + 30_000;
    for (;;) {
        const client = new Client({ name: 'exec-vs-unsandboxed', version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(server.url));
            return client;
        } catch (error) {
            await client.close().catch(() => {});
            if (Date.now() > deadline)
                throw new Error(`${server.name}: no session within 30 s: ${error.message}`);
            await new Promise((r) => setTimeout(r, 100));
        }
    }
}

const calls = {
    echo: { tool: 'system_run_command', args: { command: 'echo hi' }, expect: 'hi\n' },
    python: { tool: 'system_run_python', args: { code: 'print(1)' }, expect: '1\n' },
    // A call that runs no job (cmcpd's conformance fixtures): what the client and the daemon
    // cost a call, audit record included.
    nojob: { tool: 'test_simple_text', args: {}, expect: undefined },
};

// The call's result (its structuredContent, where cmcpd says how long its job ran: wall_ms).
async function callOnce(client, server, kind) {
    const { tool, args, expect } = calls[kind];
    const result = await withTimeout(client.callTool({ name: tool, arguments: args }), 60_000, `${server.name} ${tool}`);
    // cmcpd's system_run_python names its standard output `output`.
    const stdout = result.structuredContent?.stdout ?? result.structuredContent?.output;
    if (result.isError || (expect !== undefined && stdout !== expect))
        throw new Error(`${server.name} ${tool}: unexpected answer ${JSON.stringify(result).slice(0, 400)}`);
    return result.structuredContent ?? {};
}

// Milliseconds the call took at the client, and the job's own wall_ms where cmcpd reports it.
async function timed(client, server, kind) {
    const start = process.hrtime.bigint();
    const result = await callOnce(client, server, kind);
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, jobMs: result.wall_ms };
}

function quantile(sorted, q) {
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// Calls per second of `sessions` clients calling `echo hi` back to back for `seconds`.
async function throughput(server, sessions, seconds) {
    const clients = await Promise.all(Array.from({ length: sessions }, () => connect(server)));
    let done = 0;
    const end = Date.now() + seconds * 1000;
    const start = process.hrtime.bigint();
    await Promise.all(clients.map(async (client) => {
        while (Date.now() < end) {
            await callOnce(client, server, 'echo');
            ++done;
        }
    }));
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    return done / elapsed;
}

// CPU time, in ms, of process `root` and every process below it (those reaped included, through
// their parents' children times), from /proc/<pid>/stat.
function treeCpuMs(root) {
    const parents = new Map();
    const times = new Map();
    for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name))
            continue;
        try {
            const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            parents.set(Number(name), Number(fields[1]));
            // utime, stime, cutime, cstime: fields 14 to 17 of stat(5), in clock ticks.
            times.set(Number(name), fields.slice(11, 15).reduce((sum, v) => sum + Number(v), 0));
        } catch { /* gone meanwhile */ }
    }
    let ticks = 0;
    const pending = [root];
    while (pending.length) {
        const pid = pending.pop();
        ticks += times.get(pid) ?? 0;
        for (const [child, parent] of parents)
            if (parent === pid)
                pending.push(child);
    }
    return ticks * 1000 / clockTicks;
}

// A process that spins on the CPU until killed.
function spin() {
    return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

// The floors: a subshell forked from a running bash, and a cold `bash -c 'echo hi'`.
async function measureFloors(n) {
    const subshell = execFileSync('/usr/bin/bash', ['--norc', '--noprofile', '-c',
        `for ((i = 0; i < ${n}; ++i)); do s=$EPOCHREALTIME; (:); e=$EPOCHREALTIME; echo "$s $e"; done`],
    { encoding: 'utf8' }).trim().split('\n').map((line) => {
        const [start, end] = line.split(' ').map(Number);
        return (end - start) * 1000;
    }).sort((a, b) => a - b);
    const spawned = [];
    for (let i = 0; i < n; ++i) {
        const start = process.hrtime.bigint();
        execFileSync('/usr/bin/bash', ['-c', 'echo hi'], { stdio: 'ignore' });
        spawned.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    spawned.sort((a, b) => a - b);
    return { subshell: quantile(subshell, 0.5), spawn: quantile(spawned, 0.5) };
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    if (process.getuid() !== 0)
        throw new Error('run as root: cmcpd\'s jobs switch to host uids of its pool');
    const servers = [];
    let spinners = [];
    const stopAll = () => {
        for (const s of servers) {
            s.child.kill('SIGTERM');
        }
        for (const spinner of spinners)
            spinner.kill('SIGKILL');
    };
    process.on('exit', stopAll);
    try {
        servers.push(await startCmcpd(options.cmcpd, 'cmcpd (templates)', 120420, { JOB_CALL_TEMPLATES: 'true' }));
        servers.push(await startCmcpd(options.cmcpd, 'cmcpd (jail per call)', 120400, { JOB_CALL_TEMPLATES: 'false' }));
        servers.push(await startUnsandboxed());
        spinners = Array.from({ length: options.load }, () => spin());
        const clients = [];
        for (const s of servers)
            clients.push(await connect(s));

        const samples = servers.map(() => ({ echo: [], python: [], nojob: [], jobMs: [] }));
        for (const kind of ['echo', 'python', 'nojob']) {
            for (let i = 0; i < options.warmup + options.n; ++i) {
                // Each round calls every server once, in an order that rotates: a change of
                // load hits all three alike.
                for (let k = 0; k < servers.length; ++k) {
                    const j = (i + k) % servers.length;
                    if (kind === 'nojob' && !servers[j].root)
                        continue; // the unsandboxed server has no such tool
                    const { ms, jobMs } = await timed(clients[j], servers[j], kind);
                    if (i < options.warmup)
                        continue;
                    samples[j][kind].push(ms);
                    if (kind === 'echo' && jobMs !== undefined)
                        samples[j].jobMs.push(jobMs);
                }
            }
        }
        await Promise.all(clients.map((c) => c.close().catch(() => {})));

        // CPU per `echo hi`: every process of the server, before and after a series of calls.
        const cpu = [];
        for (const [j, server] of servers.entries()) {
            const client = await connect(server);
            const before = treeCpuMs(server.child.pid);
            for (let i = 0; i < options.n; ++i)
                await callOnce(client, server, 'echo');
            cpu[j] = (treeCpuMs(server.child.pid) - before) / options.n;
            await client.close().catch(() => {});
        }

        // Cells and the like made for 8 sessions at once before the rounds that count.
        for (const server of servers)
            await throughput(server, 8, 1);
        const rates = servers.map(() => []);
        for (let round = 0; round < options.rounds; ++round) {
            for (let k = 0; k < servers.length; ++k) {
                const j = (round + k) % servers.length;
                rates[j].push(await throughput(servers[j], 8, options.seconds));
            }
        }

        const stats = samples.map((s) => Object.fromEntries(Object.entries(s).map(([kind, values]) => {
            const sorted = [...values].sort((a, b) => a - b);
            return [kind, { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }];
        })));
        const rate = rates.map((r) => [...r].sort((a, b) => a - b)[Math.floor(r.length / 2)]);
        const base = servers.length - 1;
        console.log(`n=${options.n} per call and server (after ${options.warmup} warm-up), `
                    + `throughput ${options.rounds} x ${options.seconds} s per server, 8 sessions`);
        const floors = await measureFloors(options.n);
        for (const spinner of spinners)
            spinner.kill('SIGKILL');
        console.log(`load: ${options.load} spinning process(es); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
        console.log('| server | `echo hi` p50 / p99 ms | ÷ unsandboxed p50 | `print(1)` p50 / p99 ms | ÷ unsandboxed p50 | CPU per `echo hi`, ms | 8 sessions `echo hi` calls/s (median of rounds) | ÷ unsandboxed |');
        console.log('|---|---|---:|---|---:|---:|---|---:|');
        servers.forEach((s, j) => {
            const e = stats[j].echo;
            const p = stats[j].python;
            console.log(`| ${s.name} | ${e.p50.toFixed(2)} / ${e.p99.toFixed(2)} | ${(e.p50 / stats[base].echo.p50).toFixed(2)} `
                        + `| ${p.p50.toFixed(2)} / ${p.p99.toFixed(2)} | ${(p.p50 / stats[base].python.p50).toFixed(2)} `
                        + `| ${cpu[j].toFixed(2)} `
                        + `| ${rate[j].toFixed(1)} (${rates[j].map((r) => r.toFixed(1)).join(', ')}) | ${(rate[j] / rate[base]).toFixed(2)} |`);
        });
        console.log(`floors, same run: a subshell forked from a running bash ${floors.subshell.toFixed(2)} ms; `
                    + `\`bash -c 'echo hi'\` spawned ${floors.spawn.toFixed(2)} ms (medians)`);
        // Where a cmcpd `echo hi` goes (medians): the client and the daemon for a call with no
        // job (its audit record included), the job as the daemon timed it, and the rest (the
        // job's plumbing in the daemon: its jail or cell, pipes, result).
        servers.forEach((s, j) => {
            if (!s.root)
                return;
            const median = values => quantile([...values].sort((a, b) => a - b), 0.5);
            const total = stats[j].echo.p50;
            const noJob = median(samples[j].nojob);
            const job = median(samples[j].jobMs);
            console.log(`${s.name}: \`echo hi\` ${total.toFixed(2)} ms = a call with no job ${noJob.toFixed(2)} ms `
                        + `+ the job (wall_ms) ${job} ms + the rest ${(total - noJob - job).toFixed(2)} ms`);
        });
    } finally {
        stopAll();
        await Promise.all(servers.map((s) => new Promise((r) => {
            if (s.child.exitCode !== null || s.child.signalCode !== null)
                return r();
            const timer = setTimeout(() => { s.child.kill('SIGKILL'); r(); }, 10_000);
            s.child.once('exit', () => { clearTimeout(timer); r(); });
        })));
        for (const s of servers)
            if (s.root)
                rmSync(s.root, { recursive: true, force: true });
    }
}

await main();
