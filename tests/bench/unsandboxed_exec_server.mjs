// An exec server with no isolation at all, written with the official MCP TypeScript SDK: the
// baseline cmcpd's jailed calls are compared with (tests/bench/exec_vs_unsandboxed.mjs).
// Its two tools spawn `bash -c COMMAND` and `python3 -c CODE` as the server's own user, in the
// server's own directory, with its environment: what an MCP exec server without a sandbox does.
// Both are looked up along /usr/bin:/bin, so that they are the distribution's, the programs
// cmcpd's jobs run (not a version manager's shim earlier in the caller's PATH).
// Never expose it: it runs whatever a client sends. It listens on 127.0.0.1 only.
//
//   node tests/bench/unsandboxed_exec_server.mjs [--port N]   (0: any free port)
//
// Prints "listening <port>" on standard output once it accepts connections. One SDK server and
// Streamable HTTP transport per session, as the SDK's own examples do.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = resolve(here, '../clients/node_modules');
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm`;
const { McpServer } = await import(`${sdk}/server/mcp.js`);
const { StreamableHTTPServerTransport } = await import(`${sdk}/server/streamableHttp.js`);
const { isInitializeRequest } = await import(`${sdk}/types.js`);
const { z } = await import(`${modules}/zod/index.js`);

let port = 0;
for (let i = 2; i < process.argv.length; ++i) {
    if (process.argv[i] === '--port' && i + 1 < process.argv.length)
        port = Number(process.argv[++i]);
    else {
        console.error(`usage: node unsandboxed_exec_server.mjs [--port N]; unknown ${process.argv[i]}`);
        process.exit(2);
    }
}

// The program's exit code, standard output and standard error, as text.
function run(file, args, timeoutMs) {
    return new Promise((resolveRun) => {
        const child = spawn(file, args, {
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: timeoutMs,
            env: { ...process.env, PATH: '/usr/bin:/bin' },
        });
        const stdout = [];
        const stderr = [];
        child.stdout.on('data', (chunk) => stdout.push(chunk));
        child.stderr.on('data', (chunk) => stderr.push(chunk));
        child.on('error', (error) => resolveRun({ exit_code: null, stdout: '', stderr: String(error) }));
        child.on('close', (code, signal) => resolveRun({
            exit_code: code,
            signal: signal ?? undefined,
            stdout: Buffer.concat(stdout).toString('utf8'),
            stderr: Buffer.concat(stderr).toString('utf8'),
        }));
    });
}

function result(outcome) {
    return {
        content: [{ type: 'text', text: outcome.stdout + outcome.stderr }],
        structuredContent: outcome,
        isError: outcome.exit_code !== 0,
    };
}

function newServer() {
    const server = new McpServer({ name: 'unsandboxed-exec', version: '1.0.0' });
    server.registerTool('system_run_command', {
        description: 'Runs a bash command, unsandboxed',
        inputSchema: { command: z.string(), timeout_seconds: z.number().optional() },
    }, async ({ command, timeout_seconds }) =>
        result(await run('bash', ['-c', command], (timeout_seconds ?? 30) * 1000)));
    server.registerTool('system_run_python', {
        description: 'Runs Python code, unsandboxed',
        inputSchema: { code: z.string(), timeout_seconds: z.number().optional() },
    }, async ({ code, timeout_seconds }) =>
        result(await run('python3', ['-c', code], (timeout_seconds ?? 30) * 1000)));
    return server;
}

const transports = new Map(); // session id -> transport

function readBody(request) {
    return new Promise((resolveBody, reject) => {
        const chunks = [];
        request.on('data', (chunk) => chunks.push(chunk));
        request.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
                resolveBody(text ? JSON.parse(text) : undefined);
            } catch (error) {
                reject(error);
            }
        });
        request.on('error', reject);
    });
}

const http = createServer(async (request, response) => {
    try {
        if (!request.url?.startsWith('/mcp')) {
            response.writeHead(404).end();
            return;
        }
        const sessionId = request.headers['mcp-session-id'];
        const body = request.method === 'POST' ? await readBody(request) : undefined;
        let transport = sessionId ? transports.get(sessionId) : undefined;
        if (!transport) {
            if (sessionId || request.method !== 'POST' || !isInitializeRequest(body)) {
                response.writeHead(400, { 'content-type': 'application/json' })
                    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: (id) => transports.set(id, transport),
            });
            transport.onclose = () => {
                if (transport.sessionId)
                    transports.delete(transport.sessionId);
            };
            await newServer().connect(transport);
        }
        await transport.handleRequest(request, response, body);
    } catch (error) {
        if (!response.headersSent)
            response.writeHead(500).end(String(error));
    }
});

http.listen(port, '127.0.0.1', () => {
    console.log(`listening ${http.address().port}`);
});
for (const signal of ['SIGTERM', 'SIGINT'])
    process.on(signal, () => { http.close(); process.exit(0); });
