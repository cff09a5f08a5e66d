// Load: many concurrent MCP sessions doing real tool calls against one cmcpd, through
// the official TypeScript SDK client (with --transport stdio, one cmcpd --stdio per session, as
// stdio clients run it; the daemons share the workspace, each has its own audit log). Each session writes, reads and lists files in the shared
// workspace (file_write, file_read, file_list; optionally system_run_command). Every call must
// succeed; the script prints the calls held, failures, p50/p90/p99 latency, and the daemon's
// descriptors, threads, children and RSS before and after (they must come back to the baseline).
//
//   node tests/bench/load.mjs --cmcpd build/server/cmcpd [--sessions 200] [--calls 10]
//                             [--transport http|sse|stdio] [--command] [--no-audit]
//
// Exit status 1 when a call failed or a resource did not come back. All traffic is on 127.0.0.1.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';

import { Client } from '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { SSEClientTransport } from '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/sse.js';
import { StdioClientTransport } from '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { withTimeout } from './measure.mjs';

const { values: options } = parseArgs({
    options: {
        cmcpd: { type: 'string', default: 'build/server/cmcpd' },
        sessions: { type: 'string', default: '200' },
        calls: { type: 'string', default: '10' },
        transport: { type: 'string', default: 'http' },
        command: { type: 'boolean', default: false },
        'no-audit': { type: 'boolean', default: false },
    },
});
const sessions = Number(options.sessions);
const callsPerSession = Number(options.calls);

// The settings every daemon gets; `auditName` names its audit log in the scratch directory.
function daemonSettings(scratch, auditName) {
    return ['--set', `SANDBOX_ROOT=${join(scratch, 'sandbox')}`,
            '--set', `AUDIT_LOG=${options['no-audit'] ? '' : join(scratch, auditName)}`];
}

function startDaemon(scratch) {
    return new Promise((resolve, reject) => {
        const child = spawn(resolvePath(options.cmcpd), ['--host', '127.0.0.1', '--port', '0',
                                            ...daemonSettings(scratch, 'audit.jsonl'),
                                            '--set', 'MCP_MAX_SESSIONS=5000'],
                            { stdio: ['ignore', 'ignore', 'pipe'], cwd: scratch });
        let log = '';
        let port = 0;
        const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no port in 15 s:\n${log}`)); }, 15000);
        const exited = new Promise(done => child.once('exit', (code, signal) => done({ code, signal })));
        exited.then(status => { clearTimeout(timer); if (!port) reject(new Error(`cmcpd exited ${JSON.stringify(status)}:\n${log}`)); });
        child.stderr.on('data', chunk => {
            if (port)
                return;
            log += chunk;
            const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(log);
            if (match) {
                clearTimeout(timer);
                port = Number(match[1]);
                resolve({ child, port, exited });
            }
        });
    });
}

// What the daemon holds: descriptors, threads, live children, RSS.
function resources(pid) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = name => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const children = readdirSync('/proc').filter(name => /^\d+$/.test(name)).filter(name => {
        try {
            return readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1] === String(pid);
        } catch {
            return false;
        }
    }).length;
    return { fds: readdirSync(`/proc/${pid}/fd`).length, threads: field('Threads'), children, rssMb: field('VmRSS') / 1024 };
}

const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

function clientTransport(daemon, index) {
    if (options.transport === 'stdio')
        return new StdioClientTransport({ command: resolvePath(options.cmcpd), cwd: daemon.scratch, stderr: 'ignore',
                                          args: ['--stdio', ...daemonSettings(daemon.scratch, `audit-${index}.jsonl`)] });
    const url = new URL(`http://127.0.0.1:${daemon.port}/${options.transport === 'sse' ? 'sse' : 'mcp'}`);
    return options.transport === 'sse' ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
}

// stdio: what each session's own daemon holds once its calls are done.
const stdioDaemons = [];

async function session(daemon, index, latencies, failures) {
    const client = new Client({ name: `load-${index}`, version: '1.0.0' });
    const transport = clientTransport(daemon, index);
    await withTimeout(client.connect(transport), 30000, `session ${index} connect`);
    try {
        for (let i = 0; i < callsPerSession; ++i) {
            const path = `s${index}/f${i}.txt`;
            const content = `session ${index} call ${i}\n`.repeat(20);
            const steps = [
                ['file_write', { path, content }, r => r.structuredContent?.success === true],
                ['file_read', { path }, r => r.structuredContent?.content === content],
                ['file_list', { path: `s${index}` }, r => r.structuredContent?.success === true],
            ];
            if (options.command)
                steps.push(['system_run_command', { command: `cat ${path}` }, r => r.structuredContent?.stdout === content]);
            for (const [name, args, check] of steps) {
                const start = process.hrtime.bigint();
                try {
                    const result = await withTimeout(client.callTool({ name, arguments: args }), 60000, name);
                    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
                    if (result.isError || !check(result))
                        failures.push(`${name} ${path}: ${result.content?.[0]?.text?.slice(0, 200)}`);
                } catch (error) {
                    failures.push(`${name} ${path}: ${error.message}`);
                }
            }
        }
        if (transport.pid)
            stdioDaemons.push(resources(transport.pid));
    } finally {
        // A Streamable HTTP session lives until DELETE or its idle timeout: end it as a client should.
        if (transport.terminateSession)
            await transport.terminateSession().catch(error => failures.push(`session ${index} DELETE: ${error.message}`));
        await client.close();
    }
}

// The cmcpd processes this script started that are still alive (stdio: must be none at the end).
function liveDaemons() {
    return readdirSync('/proc').filter(name => /^\d+$/.test(name)).filter(name => {
        try {
            return readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1] === String(process.pid)
                && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--stdio');
        } catch {
            return false;
        }
    }).length;
}

// Jobs run as uids of their own, which must be able to reach the workspace inside (mkdtemp: 0700).
function scratchDir() {
    const scratch = mkdtempSync(join(tmpdir(), 'cmcp-load-'));
    chmodSync(scratch, 0o755);
    return scratch;
}

async function mainStdio() {
    const scratch = scratchDir();
    const daemon = { scratch };
    try {
        const latencies = [];
        const failures = [];
        const started = Date.now();
        await Promise.all(Array.from({ length: sessions }, (_, i) => session(daemon, i, latencies, failures)));
        const seconds = (Date.now() - started) / 1000;
        let left = liveDaemons();
        for (let waited = 0; waited < 10000 && left > 0; waited += 250) {
            await new Promise(resolve => setTimeout(resolve, 250));
            left = liveDaemons();
        }
        printLatencies(latencies, failures, seconds);
        const median = key => [...stdioDaemons.map(d => d[key])].sort((a, b) => a - b)[Math.floor(stdioDaemons.length / 2)];
        console.log(`\neach daemon after its calls (median of ${stdioDaemons.length}): fds ${median('fds')}, `
                    + `threads ${median('threads')}, children ${median('children')}, RSS ${median('rssMb').toFixed(1)} MB`);
        console.log(`cmcpd --stdio processes left 10 s after the clients closed: ${left}`);
        process.exitCode = failures.length || left ? 1 : 0;
    } finally {
        rmSync(scratch, { recursive: true, force: true });
    }
}

function printLatencies(latencies, failures, seconds) {
    latencies.sort((a, b) => a - b);
    console.log(`| transport | sessions | calls | failed | calls/s | p50 ms | p90 ms | p99 ms | max ms |`);
    console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|`);
    console.log(`| ${options.transport} | ${sessions} | ${latencies.length + failures.length} | ${failures.length} | `
                + `${(latencies.length / seconds).toFixed(0)} | ${percentile(latencies, 0.5).toFixed(1)} | `
                + `${percentile(latencies, 0.9).toFixed(1)} | ${percentile(latencies, 0.99).toFixed(1)} | `
                + `${latencies.at(-1).toFixed(1)} |`);
    for (const failure of failures.slice(0, 10))
        console.log(`FAILED: ${failure}`);
}

async function main() {
    const scratch = scratchDir();
    const daemon = await startDaemon(scratch);
    const pid = daemon.child.pid;
    try {
        // Warm up once, so the baseline includes what the first call starts (thread pools).
        await session(daemon, 'warmup', [], []);
        const before = resources(pid);
        const latencies = [];
        const failures = [];
        const started = Date.now();
        await Promise.all(Array.from({ length: sessions }, (_, i) => session(daemon, i, latencies, failures)));
        const seconds = (Date.now() - started) / 1000;
        // Idle keep-alive connections of the client's pool close after a few seconds; give the
        // daemon up to 20 s to be back at its baseline.
        let after = resources(pid);
        for (let waited = 0; waited < 20000 && (after.fds > before.fds + 2 || after.children > before.children); waited += 500) {
            await new Promise(resolve => setTimeout(resolve, 500));
            after = resources(pid);
        }
        printLatencies(latencies, failures, seconds);
        console.log(`\ndaemon before: ${JSON.stringify(before)}\ndaemon after:  ${JSON.stringify(after)}`);
        const leaked = after.fds > before.fds + 2 || after.children > before.children;
        if (leaked)
            console.log('LEAK: descriptors or children did not come back to the baseline');
        process.exitCode = failures.length || leaked ? 1 : 0;
    } finally {
        daemon.child.kill('SIGTERM');
        await daemon.exited;
        rmSync(scratch, { recursive: true, force: true });
    }
}

await (options.transport === 'stdio' ? mainStdio() : main());
