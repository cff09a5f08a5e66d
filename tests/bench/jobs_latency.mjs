// Background jobs and output handles with the official MCP TypeScript SDK client over Streamable
// HTTP, against a cmcpd this script spawns (as root: jobs switch to the uid pool):
//  - a foreground `echo` call, the same command started with background: true (time to the
//    job_id), and background start + job_output polling until complete (every 5 ms);
//  - reading a job's 8 MiB output in 1 MiB job_output windows, and a truncated 8 MiB output in
//    1 MiB output_read windows (per window).
// Prints medians and 90th percentiles in milliseconds.
//
//   node tests/bench/jobs_latency.mjs [--cmcpd PATH] [--n N]
//
// All traffic goes to 127.0.0.1; every loop is bounded.

import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTimeout } from './measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = resolve(here, '../clients/node_modules/@modelcontextprotocol/sdk/dist/esm/client');
const { Client } = await import(`${sdk}/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/streamableHttp.js`);

const args = process.argv.slice(2);
const option = (name, fallback) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const cmcpd = resolve(option('--cmcpd', process.env.CMCPD ?? resolve(here, '../../build/server/cmcpd')));
const n = Math.max(1, Math.min(1000, parseInt(option('--n', '30'), 10)));
if (!existsSync(cmcpd))
    throw new Error(`no cmcpd at ${cmcpd}`);
if (process.getuid() !== 0)
    throw new Error('needs root: jobs switch to host uids of the pool');

const sandbox = mkdtempSync(join(tmpdir(), 'cmcp-jobs-bench-'));
chmodSync(sandbox, 0o755);
const settings = { SANDBOX_ROOT: sandbox, SANDBOX_UID_BASE: 124000, SANDBOX_UID_COUNT: 16, JOB_MAX_PER_SESSION: 8 };
const daemon = spawn(cmcpd, ['--host', '127.0.0.1', '--port', '0',
                             ...Object.entries(settings).flatMap(([k, v]) => ['--set', `${k}=${v}`])],
                     { cwd: sandbox, stdio: ['ignore', 'ignore', 'pipe'] });
const port = await withTimeout(new Promise((resolvePort, reject) => {
    let stderr = '';
    daemon.stderr.setEncoding('utf8');
    daemon.stderr.on('data', chunk => {
        stderr += chunk;
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
        if (match)
            resolvePort(Number(match[1]));
    });
    daemon.on('exit', code => reject(new Error(`cmcpd exited (${code}): ${stderr}`)));
}), 20_000, 'cmcpd start');

const client = new Client({ name: 'jobs-bench', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
const call = async (name, args) => {
    const result = await withTimeout(client.callTool({ name, arguments: args }), 30_000, name);
    if (result.isError)
        throw new Error(`${name}: ${result.content?.[0]?.text}`);
    return result.structuredContent;
};
const sleep = ms => new Promise(r => setTimeout(r, ms));
const percentile = (values, p) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const report = (what, values) =>
    console.log(`${what.padEnd(58)} median ${percentile(values, 0.5).toFixed(1).padStart(7)} ms   p90 ${percentile(values, 0.9).toFixed(1).padStart(7)} ms   (n=${values.length})`);
const timed = async body => { const start = performance.now(); await body(); return performance.now() - start; };

async function untilComplete(jobId, limit = 65536) {
    let offset = 0;
    for (let i = 0; i < 10_000; ++i) {
        const window = await call('job_output', { job_id: jobId, offset, limit });
        offset = window.next_offset;
        if (window.complete)
            return;
        if (window.next_offset === window.total_bytes)
            await sleep(5);
    }
    throw new Error('job did not complete');
}

try {
    const foreground = [], started = [], roundTrip = [];
    for (let i = 0; i < n; ++i) {
        foreground.push(await timed(() => call('system_run_command', { command: 'echo hi' })));
        let id;
        started.push(await timed(async () => { id = (await call('system_run_command', { command: 'echo hi', background: true })).job_id; }));
        await untilComplete(id);
        roundTrip.push(await timed(async () => {
            const job = await call('system_run_command', { command: 'echo hi', background: true });
            await untilComplete(job.job_id);
        }));
    }
    report('system_run_command echo, foreground', foreground);
    report('system_run_command echo, background: time to job_id', started);
    report('background echo: start + job_output until complete', roundTrip);

    const big = 'import sys\nsys.stdout.write("x" * (8 << 20))';
    const job = await call('system_run_python', { code: big, background: true });
    await untilComplete(job.job_id, 1 << 20);
    const jobWindows = [];
    for (let offset = 0; offset < 8 << 20; offset += 1 << 20)
        jobWindows.push(await timed(() => call('job_output', { job_id: job.job_id, offset, limit: 1 << 20 })));
    report('job_output, 1 MiB window of an 8 MiB output', jobWindows);

    const truncated = await call('system_run_python', { code: big });
    const handleWindows = [];
    for (let offset = 0; offset < 8 << 20; offset += 1 << 20)
        handleWindows.push(await timed(() => call('output_read', { handle: truncated.stdout_handle, offset, length: 1 << 20 })));
    report('output_read, 1 MiB window of an 8 MiB output', handleWindows);
} finally {
    await client.close().catch(() => {});
    daemon.kill('SIGTERM');
    await sleep(500);
    rmSync(sandbox, { recursive: true, force: true });
}
