// cmcpd --stdio driven raw: newline-delimited JSON-RPC on stdin/stdout, logs on stderr only.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

import { cleanEnv, conformanceDaemonPath, scratchDir, settingArgs } from './lib/daemon.mjs';

const live = new Set();
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

// One cmcpd --stdio process; every stdout line is kept (raw and parsed).
class StdioServer {
    constructor({ settings = {} } = {}) {
        this.cwd = scratchDir();
        this.child = spawn(conformanceDaemonPath(), ['--stdio', ...settingArgs(settings)],
            { cwd: this.cwd, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
        live.add(this.child);
        this.lines = [];
        this.messages = [];
        this.stderr = '';
        this.waiters = [];
        let partial = '';
        this.child.stdout.setEncoding('utf8');
        this.child.stdout.on('data', chunk => {
            partial += chunk;
            let newline;
            while ((newline = partial.indexOf('\n')) >= 0) {
                const line = partial.slice(0, newline);
                partial = partial.slice(newline + 1);
                this.lines.push(line);
                let message;
                try { message = JSON.parse(line); } catch { message = { unparsable: line }; }
                this.messages.push(message);
                this.wake();
            }
        });
        this.child.stdout.on('end', () => { if (partial) this.lines.push(partial); });
        this.child.stderr.setEncoding('utf8');
        this.child.stderr.on('data', chunk => { this.stderr += chunk; });
        this.child.stdin.on('error', () => {}); // EPIPE when the server is gone is the test's business
        this.exited = new Promise(resolve => {
            const gone = result => {
                live.delete(this.child);
                this.gone = true;
                this.wake();
                resolve(result);
            };
            this.child.on('exit', (code, signal) => gone({ code, signal }));
            // A binary that cannot be started emits 'error' and never 'exit'.
            this.child.on('error', error => { if (this.child.pid === undefined) gone({ code: null, signal: null, error: error.message }); });
        });
    }

    wake() {
        for (const waiter of [...this.waiters])
            waiter();
    }

    write(text) { this.child.stdin.write(text); }
    send(message) { this.write(`${JSON.stringify(message)}\n`); }

    // Resolves with the first message (from index `from`) matching `predicate`.
    waitFor(predicate, { timeoutMs = 5000, from = 0 } = {}) {
        return new Promise((resolve, reject) => {
            const check = () => {
                const found = this.messages.slice(from).find(predicate);
                if (found) {
                    done();
                    resolve(found);
                } else if (this.gone || this.child.exitCode !== null || this.child.signalCode !== null) {
                    done();
                    reject(new Error(`cmcpd exited before the expected message; stdout so far:\n${this.lines.join('\n')}`));
                }
            };
            const timer = setTimeout(() => {
                done();
                reject(new Error(`no matching message within ${timeoutMs} ms; stdout so far:\n${this.lines.join('\n')}`));
            }, timeoutMs);
            const done = () => {
                clearTimeout(timer);
                this.waiters = this.waiters.filter(w => w !== check);
            };
            this.waiters.push(check);
            check();
        });
    }

    response(id, options) {
        return this.waitFor(m => m.id === id && !('method' in m), options);
    }

    async request(id, method, params) {
        this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
        return this.response(id);
    }

    async initialize(protocolVersion = '2025-11-25') {
        const init = await this.request('init', 'initialize', {
            protocolVersion, capabilities: {}, clientInfo: { name: 'raw-stdio-test', version: '0' },
        });
        assert.equal(init.result?.protocolVersion, protocolVersion, JSON.stringify(init));
        this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        return init;
    }

    // Ends stdin and waits (bounded) for the exit; kills the process if it does not go.
    async close(timeoutMs = 3000) {
        this.child.stdin.end();
        const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
        const exit = await this.exited;
        clearTimeout(timer);
        rmSync(this.cwd, { recursive: true, force: true });
        return exit;
    }
}

const servers = [];
function server(options) {
    const s = new StdioServer(options);
    servers.push(s);
    return s;
}

// Runs `body` with a fresh server; prints its stderr when the test fails.
function it(name, body, { settings, timeout = 15_000 } = {}) {
    test(name, { timeout }, async () => {
        const s = server({ settings });
        try {
            await body(s);
        } catch (error) {
            console.error(`--- cmcpd --stdio stderr ---\n${s.stderr.split('\n').slice(-40).join('\n')}\n---`);
            throw error;
        } finally {
            await s.close();
        }
    });
}

describe('stdio transport', { timeout: 60_000 }, () => {
    after(async () => { await Promise.all(servers.map(s => s.close())); });

    it('every stdout line is one JSON-RPC message, even at LOG_LEVEL=debug; logs go to stderr', async s => {
        await s.initialize();
        s.send({ jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'debug' } });
        s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
        s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
            params: { name: 'test_tool_with_logging', arguments: {}, _meta: { progressToken: 'p' } } });
        s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 250 }, _meta: { progressToken: 7 } } });
        s.write('this is not json\n');
        s.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope' } });
        await s.response(2);
        await s.response(3);
        await s.response(4);
        const exit = await s.close();
        assert.deepEqual(exit, { code: 0, signal: null });

        assert.ok(s.lines.length >= 10, `expected a busy session, got ${s.lines.length} lines`);
        for (const line of s.lines) {
            const message = JSON.parse(line); // throws on a stray log line
            assert.equal(message.jsonrpc, '2.0', line);
            assert.ok(!line.includes('\n'));
        }
        const progress = s.messages.filter(m => m.method === 'notifications/progress' && m.params.progressToken === 7);
        assert.deepEqual(progress.map(m => m.params.progress), [100, 200]);
        const logs = s.messages.filter(m => m.method === 'notifications/message');
        assert.equal(logs.length, 3);
        // The daemon did log at debug level: on stderr.
        assert.match(s.stderr, /debug/);
        assert.match(s.stderr, /session [0-9a-f]+ (opened|initialized)/);
    }, { settings: { LOG_LEVEL: 'debug' } });

    it('an unparsable line gets -32700 with id null, and the session goes on', async s => {
        await s.initialize();
        s.write('{"jsonrpc":"2.0","id":1,"method":\n');
        const error = await s.waitFor(m => m.error?.code === -32700);
        assert.equal(error.id, null);
        assert.deepEqual(await s.request(2, 'ping'), { jsonrpc: '2.0', id: 2, result: {} });
    });

    it('requests before initialize are refused (ping excepted)', async s => {
        const early = await s.request(1, 'tools/list');
        assert.equal(early.error?.code, -32600, JSON.stringify(early));
        assert.match(early.error.message, /initialize/);
        const call = await s.request(2, 'tools/call', { name: 'test_simple_text', arguments: {} });
        assert.ok(call.error, 'tools/call before initialize must fail');
        assert.deepEqual(await s.request(3, 'ping'), { jsonrpc: '2.0', id: 3, result: {} });
        await s.initialize();
        const later = await s.request(4, 'tools/list');
        assert.ok(later.result.tools.length > 0);
        const twice = await s.request(5, 'initialize', {
            protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'again' } });
        assert.equal(twice.error?.code, -32600, 'a second initialize is refused');
    });

    it('notifications are never answered, whatever they are', async s => {
        await s.initialize();
        s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        s.send({ jsonrpc: '2.0', method: 'notifications/no-such-thing', params: { x: 1 } });
        s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } });
        s.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
        s.send({ jsonrpc: '2.0', method: 'tools/list' }); // a notification by JSON-RPC rules: no id
        const from = s.messages.length;
        s.send({ jsonrpc: '2.0', id: 'last', method: 'ping' });
        await s.response('last');
        // stdout is ordered: had any notification been answered, it would come before the ping's reply.
        assert.deepEqual(s.messages.slice(from), [{ jsonrpc: '2.0', id: 'last', result: {} }]);
    });

    it('cancellation stops a running call and sends no response for it', async s => {
        await s.initialize();
        s.send({ jsonrpc: '2.0', id: 'w', method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 5000 }, _meta: { progressToken: 'w' } } });
        await s.waitFor(m => m.method === 'notifications/progress' && m.params.progressToken === 'w');
        s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w', reason: 'stop' } });
        const read = await s.request('r', 'resources/read', { uri: 'test://cancelled-calls' });
        assert.equal(read.result.contents[0].text, '1');
        const mark = s.messages.length;
        await new Promise(resolve => setTimeout(resolve, 300));
        assert.deepEqual(s.messages.slice(mark), [], 'nothing more about the cancelled call, not even progress');
        assert.equal(s.messages.find(m => m.id === 'w' && !('method' in m)), undefined, 'a cancelled call is not answered');
    });

    it('several messages in one write and one message split across writes are read correctly', async s => {
        await s.initialize();
        s.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
        const split = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
        s.write(split.slice(0, 20));
        await new Promise(resolve => setTimeout(resolve, 50));
        s.write(`${split.slice(20)}\r\n`); // a CRLF client works too
        const three = await s.response(3);
        assert.equal(three.result.content[0].text, 'This is a simple text response for testing.');
        assert.deepEqual(await s.response(1), { jsonrpc: '2.0', id: 1, result: {} });
        assert.deepEqual(await s.response(2), { jsonrpc: '2.0', id: 2, result: {} });
    });

    it('a line over 64 MiB is refused without killing the session', async s => {
        await s.initialize();
        const chunk = 'x'.repeat(1024 * 1024);
        for (let i = 0; i < 65; ++i)
            s.write(chunk);
        s.write('\n');
        const refused = await s.waitFor(m => m.error?.message === 'message too large', { timeoutMs: 10_000 });
        assert.equal(refused.id, null);
        assert.deepEqual(await s.request('after', 'ping'), { jsonrpc: '2.0', id: 'after', result: {} });
    }, { timeout: 30_000 });

    it('EOF on stdin makes cmcpd exit 0 promptly, also with a call running', async s => {
        await s.initialize();
        s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_wait', arguments: { ms: 10_000 } } });
        await new Promise(resolve => setTimeout(resolve, 100));
        const started = Date.now();
        s.child.stdin.end();
        const exit = await Promise.race([s.exited, new Promise(resolve => setTimeout(() => resolve('still running'), 2000))]);
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.ok(Date.now() - started < 1000, `exit took ${Date.now() - started} ms`);
    });

    it('a last message without a newline before EOF is still answered', async s => {
        s.write(JSON.stringify({ jsonrpc: '2.0', id: 'tail', method: 'ping' }));
        s.child.stdin.end();
        const exit = await s.exited;
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.deepEqual(s.messages, [{ jsonrpc: '2.0', id: 'tail', result: {} }]);
    });

    it('a batch works on a 2025-03-26 session and is refused on 2025-11-25', async s => {
        await s.initialize('2025-03-26');
        s.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
        const batch = await s.waitFor(Array.isArray);
        assert.deepEqual(batch.map(r => r.id).sort(), [1, 2]);

        const other = server();
        try {
            await other.initialize('2025-11-25');
            other.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
            const refused = await other.waitFor(m => m.error);
            assert.equal(refused.error.code, -32600);
        } finally {
            await other.close();
        }
    });
});

describe('stdio in the modern era (2026-07-28)', { timeout: 60_000 }, () => {
    const meta = (extra = {}) => ({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        ...extra,
    });

    it('server/discover answers before (and without) initialize; requests are served statelessly', async s => {
        const discover = await s.request('d', 'server/discover', { _meta: meta() });
        assert.equal(discover.result.resultType, 'complete');
        assert.ok(discover.result.supportedVersions.includes('2026-07-28'));
        assert.ok(discover.result.supportedVersions.includes('2025-11-25'));
        const call = await s.request('c', 'tools/call', { name: 'test_simple_text', arguments: {}, _meta: meta() });
        assert.equal(call.result.resultType, 'complete');
        assert.equal(call.result.content[0].text, 'This is a simple text response for testing.');
        // The 2025 handshake still works on the same process afterwards.
        await s.initialize();
        const ping = await s.request('p', 'ping');
        assert.deepEqual(ping.result, {});
    });

    it('missing _meta is -32602, an unknown version -32022, a removed method -32601', async s => {
        const bare = await s.request(1, 'server/discover', {});
        assert.equal(bare.error.code, -32602);
        const unknown = await s.request(2, 'tools/list', { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) });
        assert.equal(unknown.error.code, -32022);
        assert.equal(unknown.error.data.requested, '2099-01-01');
        const removed = await s.request(3, 'ping', { _meta: meta() });
        assert.equal(removed.error.code, -32601);
    });

    it('log messages only with a log level in _meta', async s => {
        const from = s.messages.length;
        await s.request('quiet', 'tools/call', { name: 'test_tool_with_logging', arguments: {}, _meta: meta() });
        assert.equal(s.messages.slice(from).filter(m => m.method === 'notifications/message').length, 0);
        const next = s.messages.length;
        await s.request('loud', 'tools/call', { name: 'test_tool_with_logging', arguments: {},
            _meta: meta({ 'io.modelcontextprotocol/logLevel': 'info' }) });
        assert.ok(s.messages.slice(next).filter(m => m.method === 'notifications/message').length >= 3);
    });

    it('notifications/cancelled stops a stateless call, which then gets no answer', async s => {
        s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call',
            params: { name: 'test_wait', arguments: { ms: 30_000 }, _meta: meta() } });
        await new Promise(resolve => setTimeout(resolve, 200));
        s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
        const count = await s.request('n', 'resources/read', { uri: 'test://cancelled-calls', _meta: meta() });
        assert.equal(count.result.contents[0].text, '1');
        await new Promise(resolve => setTimeout(resolve, 200));
        assert.equal(s.messages.filter(m => m.id === 'long').length, 0);
    });
});
