// The client snippets work: every sh, js, json and python block of README.md, docs/clients.md
// and docs/protocol.md is run against a daemon this test starts (its own working directory,
// SANDBOX_ROOT, audit log, admin socket and uid pool; daemon.mjs), with the daemon's port for
// 8000. A block that cannot run here says why in a comment before it
// (<!-- docs-test: skip REASON -->); its addresses are still checked. JSON blocks are MCP host
// configurations: each server's URL must answer MCP initialize, and a server started as cmcpd is
// started with its arguments and must answer it over stdio. The Python block runs where python3
// has the official SDK (`import mcp`) and skips, saying so, elsewhere. A comment at the end of a
// line that prints (`// hello`, `# 42`) is output the block must print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, cmcpdPath, scratchDir, startDaemon } from '../integration/lib/daemon.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
// The pages whose snippets a newcomer copies: the README, the clients' page and the protocol's.
const pages = ['README.md', 'docs/clients.md', 'docs/protocol.md'];
const clientModules = join(root, 'tests/clients/node_modules');
const documentedBase = 'http://127.0.0.1:8000';
const languages = new Set(['sh', 'bash', 'js', 'json', 'python']);

// The fenced blocks of `text`: language, body, first line, and the skip reason of a
// <!-- docs-test: skip REASON --> line just before the fence.
function fencedBlocks(text) {
    const lines = text.split('\n');
    const blocks = [];
    for (let i = 0; i < lines.length; i++) {
        const fence = /^```(\S*)\s*$/.exec(lines[i]);
        if (!fence)
            continue;
        const start = i;
        const body = [];
        for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++)
            body.push(lines[i]);
        const before = lines.slice(0, start).reverse().find(line => line.trim() !== '') ?? '';
        const skip = /^<!--\s*docs-test:\s*skip\s+(.*?)\s*-->$/.exec(before.trim());
        blocks.push({ language: fence[1], body: body.join('\n') + '\n', line: start + 1, skip: skip?.[1] });
    }
    return blocks.filter(block => languages.has(block.language));
}

const blocks = pages.flatMap(page => fencedBlocks(readFileSync(join(root, page), 'utf8')).map(block => ({ ...block, page })));
const name = block => `${block.page}:${block.line} (${block.language})`;

// The output the block promises: the text of `// X` or `# X` after a print on the same line.
function promisedOutput(block) {
    const comment = block.language === 'js' ? /console\.log\(.*\);?\s*\/\/\s*(.+)$/ : /print\(.*\)\s*#\s*(.+)$/;
    return block.body.split('\n').map(line => comment.exec(line)?.[1]).filter(Boolean);
}

// Runs `command` with `args`, `input` on stdin; resolves with its exit code and output, failing
// after `timeoutMs`.
function run(command, args, { cwd, env, input = '', timeoutMs = 60_000 }) {
    return new Promise((resolve, reject) => {
        const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`${command} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
        }, timeoutMs);
        child.stdout.on('data', chunk => { stdout += chunk; });
        child.stderr.on('data', chunk => { stderr += chunk; });
        child.on('error', error => { clearTimeout(timer); reject(error); });
        child.on('exit', code => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
        child.stdin.end(input);
    });
}

const initializeRequest = {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'docs-test', version: '1.0' } },
};

// The documented address `url` (…:8000/path), asked at the daemon's port: /mcp must answer
// initialize, /sse must send its endpoint event, /health must say ok.
async function checkAddress(daemon, url) {
    const path = new URL(url).pathname;
    const actual = daemon.base + path;
    if (path === '/mcp') {
        const response = await fetch(actual, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
            body: JSON.stringify(initializeRequest),
        });
        assert.equal(response.status, 200, `${url}: initialize answered ${response.status}`);
        assert.ok(response.headers.get('mcp-session-id'), `${url}: no Mcp-Session-Id`);
        const body = await response.text();
        assert.match(body, /"serverInfo"/, `${url}: ${body}`);
    } else if (path === '/sse') {
        const controller = new AbortController();
        const response = await fetch(actual, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
        assert.equal(response.status, 200, `${url}: ${response.status}`);
        const reader = response.body.getReader();
        let text = '';
        while (!/event: endpoint/.test(text)) {
            const { value, done } = await reader.read();
            assert.ok(!done, `${url}: the stream ended without an endpoint event: ${text}`);
            text += new TextDecoder().decode(value);
        }
        controller.abort();
    } else if (path === '/health') {
        const response = await fetch(actual);
        assert.equal(response.status, 200);
        assert.equal((await response.json()).status, 'ok');
    } else {
        assert.fail(`${url}: the daemon serves no such address`);
    }
}

const localhostUrl = /http:\/\/127\.0\.0\.1:8000[^\s'"`)<>]*/g;
const localUrls = text => [...new Set(text.match(localhostUrl) ?? [])];

// Settings that keep a daemon a snippet starts to itself: a uid pool no other test uses (the
// test daemons take 130000 up to 181200) and every path under `dir`.
function ownSettings(dir) {
    return {
        SANDBOX_ROOT: join(dir, 'sandbox'),
        AUDIT_LOG: join(dir, 'audit.jsonl'),
        ADMIN_SOCKET: join(dir, 'admin.sock'),
        SANDBOX_UID_BASE: String(190000 + (process.pid % 50) * 128),
        SANDBOX_UID_COUNT: '64',
    };
}

test('client snippets', { timeout: 240_000 }, async t => {
    // The jobs' uids must reach the workspace: its parent is 0755, not mkdtemp's 0700.
    const sandboxParent = scratchDir();
    chmodSync(sandboxParent, 0o755);
    const daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: join(sandboxParent, 'sandbox') } });
    const rewrite = text => text.replaceAll(documentedBase, daemon.base)
        .replace(/(^|[\s'"])(?:\.\/)?build\/server\/cmcpd\b/g, `$1${cmcpdPath()}`);
    try {
        // What a newcomer is promised: a shell check, host configurations, a TypeScript and a
        // Python client, each in the README itself.
        for (const language of ['sh', 'json', 'js', 'python'])
            assert.ok(blocks.some(block => block.page === 'README.md' && block.language === language), `README.md has no ${language} block`);

        await t.test('every documented address answers', async () => {
            const urls = new Set(blocks.flatMap(block => localUrls(block.body)));
            for (const required of [`${documentedBase}/mcp`, `${documentedBase}/sse`])
                assert.ok(urls.has(required), `no snippet uses ${required}`);
            for (const url of urls)
                await checkAddress(daemon, url);
        });

        for (const block of blocks) {
            await t.test(name(block), async t => {
                if (block.skip) {
                    t.skip(`not run: ${block.skip} (its addresses are checked above)`);
                    return;
                }
                const dir = scratchDir();
                const env = { ...cleanEnv(), ...ownSettings(dir) };
                try {
                    if (block.language === 'sh' || block.language === 'bash') {
                        const result = await run('bash', ['-euo', 'pipefail', '-c', rewrite(block.body)], { cwd: dir, env });
                        assert.equal(result.code, 0, `${name(block)} failed:\n${result.stdout}\n${result.stderr}`);
                    } else if (block.language === 'js') {
                        // Where `import '@modelcontextprotocol/sdk/…'` finds the SDK of tests/clients.
                        symlinkSync(clientModules, join(dir, 'node_modules'));
                        writeFileSync(join(dir, 'client.mjs'), rewrite(block.body));
                        const result = await run(process.execPath, ['client.mjs'], { cwd: dir, env });
                        assert.equal(result.code, 0, `${name(block)} failed:\n${result.stdout}\n${result.stderr}`);
                        for (const expected of promisedOutput(block))
                            assert.ok(result.stdout.includes(expected), `${name(block)} did not print ${expected}:\n${result.stdout}`);
                    } else if (block.language === 'python') {
                        const probe = spawnSync('python3', ['-c', 'import mcp'], { encoding: 'utf8' });
                        if (probe.status !== 0) {
                            t.skip(`not run: python3 cannot import mcp, the official Python SDK (pip install mcp): ${probe.stderr.trim().split('\n').pop()}`);
                            return;
                        }
                        writeFileSync(join(dir, 'client.py'), rewrite(block.body));
                        const result = await run('python3', ['client.py'], { cwd: dir, env });
                        assert.equal(result.code, 0, `${name(block)} failed:\n${result.stdout}\n${result.stderr}`);
                        for (const expected of promisedOutput(block))
                            assert.ok(result.stdout.includes(expected), `${name(block)} did not print ${expected}:\n${result.stdout}`);
                    } else if (block.language === 'json') {
                        await checkHostConfiguration(daemon, block, dir, env);
                    }
                } finally {
                    rmSync(dir, { recursive: true, force: true });
                }
            });
        }
    } finally {
        await daemon.stop();
        rmSync(sandboxParent, { recursive: true, force: true });
    }
});

// A host's MCP configuration: VS Code's "servers", or the "mcpServers" of Claude Desktop and
// Cursor. Each entry has a URL (checked above, and here that it is one) or a command.
async function checkHostConfiguration(daemon, block, dir, env) {
    const config = JSON.parse(block.body);
    const servers = config.servers ?? config.mcpServers;
    assert.ok(servers && Object.keys(servers).length, `${name(block)}: no servers or mcpServers`);
    for (const [serverName, server] of Object.entries(servers)) {
        if (server.url) {
            await checkAddress(daemon, server.url);
            assert.ok(!server.type || server.type === 'http', `${serverName}: type ${server.type}`);
            continue;
        }
        assert.ok(server.command, `${serverName}: neither url nor command`);
        assert.ok(Array.isArray(server.args ?? []), `${serverName}: args is not a list`);
        if (basename(server.command) === 'cmcpd') {
            // Started as the host starts it, but from this build, and with the absolute paths
            // the snippet gives moved beneath this test's own directory.
            const args = server.args.map(arg => arg.replace(/^([A-Z_]+=)\//, `$1${dir}/`));
            // The uid pool and any path the arguments leave out come from `env`.
            const result = await run(cmcpdPath(), args, { cwd: dir, env, input: JSON.stringify(initializeRequest) + '\n', timeoutMs: 30_000 });
            const answer = result.stdout.split('\n').find(line => line.includes('"id":1'));
            assert.ok(answer, `${serverName}: no answer to initialize on stdout (exit ${result.code}):\n${result.stderr}`);
            assert.ok(JSON.parse(answer).result?.serverInfo, `${serverName}: ${answer}`);
            assert.equal(result.code, 0, `${serverName}: exit ${result.code} after stdin closed:\n${result.stderr}`);
        } else {
            // A bridge (npx mcp-remote): not started, since npx would download it; the address it
            // is given must be the daemon's.
            const urls = server.args.filter(arg => arg.startsWith('http'));
            assert.ok(urls.length, `${serverName}: ${server.command} is given no URL`);
            for (const url of urls)
                await checkAddress(daemon, url);
        }
    }
}
