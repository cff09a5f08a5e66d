// The modern era (protocol revision 2026-07-28) on /mcp, driven with raw HTTP: every request
// carries its version and capabilities in _meta and is served without a session, beside the
// 2025 revisions' sessions on the same endpoint.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { eventually, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { processesOf } from './lib/processes.mjs';
import { BOTH, openSession, post, rawHttp } from './lib/http.mjs';

const MODERN = '2026-07-28';
const meta = (extra = {}) => ({
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw-modern-test', version: '0' },
    ...extra,
});

// The headers a conforming client mirrors from the body.
function mirrored(method, params = {}) {
    const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': method };
    const name = method === 'resources/read' ? params.uri
        : method === 'tools/call' || method === 'prompts/get' ? params.name
            : method.startsWith('tasks/') ? params.taskId : undefined;
    if (name !== undefined)
        headers['mcp-name'] = name;
    // The job and output tools mark their handle argument with x-mcp-header: Handle.
    const handle = method === 'tools/call' ? params.arguments?.job_id ?? params.arguments?.handle : undefined;
    if (typeof handle === 'string')
        headers['mcp-param-handle'] = handle;
    return headers;
}

// POSTs one modern request; `headers` replace the mirrored ones (undefined drops one).
async function modern(d, method, params = {}, { id = 1, headers = {}, signal } = {}) {
    const all = { ...mirrored(method, params), ...headers };
    for (const [name, value] of Object.entries(all))
        if (value === undefined) delete all[name];
    const response = await post(d.url, { jsonrpc: '2.0', id, method, params }, { headers: all, signal });
    return { status: response.status, headers: response.headers, text: await response.text() };
}

// The JSON-RPC messages of a response, JSON or SSE.
function messages(reply) {
    if (!reply.headers.get('content-type')?.includes('text/event-stream'))
        return [JSON.parse(reply.text)];
    return reply.text.split('\n').filter(line => line.startsWith('data:') && line.length > 5)
        .map(line => JSON.parse(line.slice(5)));
}
const final = reply => messages(reply).at(-1);
// One modern request's final JSON-RPC message.
const ask = async (d, method, params, options) => final(await modern(d, method, params, options));

// A principals file in `dir` for `tokens` (name: token); its path.
async function writePrincipals(dir, tokens) {
    const file = join(dir, 'principals');
    const digest = text => createHash('sha256').update(text).digest('hex');
    await writeFile(file, Object.entries(tokens).map(([name, token]) => `${name} ${digest(token)}\n`).join(''));
    return file;
}

// The Tasks extension, as a request's _meta declares it.
const TASKS = 'io.modelcontextprotocol/tasks';
const withTasks = () => meta({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } });

// A subscriptions/listen stream: its frames as they arrive, until closed.
function listen(d, notifications, id, headers = {}, _meta = meta()) {
    const controller = new AbortController();
    const frames = [];
    const params = { notifications, _meta };
    const done = post(d.url, { jsonrpc: '2.0', id, method: 'subscriptions/listen', params },
        { headers: { ...mirrored('subscriptions/listen', params), ...headers }, signal: controller.signal })
        .then(async response => {
            assert.equal(response.status, 200);
            assert.match(response.headers.get('content-type'), /text\/event-stream/);
            const decoder = new TextDecoder();
            let buffer = '';
            for await (const chunk of response.body) {
                buffer += decoder.decode(chunk, { stream: true });
                const lines = buffer.split('\n');
                buffer = lines.pop();
                for (const line of lines)
                    if (line.startsWith('data:') && line.length > 5)
                        frames.push(JSON.parse(line.slice(5)));
            }
        }).catch(error => { if (error.name !== 'AbortError') throw error; });
    const until = async (predicate, what) => {
        assert.ok(await eventually(() => frames.some(predicate), { timeoutMs: 5000, intervalMs: 20 }), `${what}: ${JSON.stringify(frames)}`);
        return frames.find(predicate);
    };
    return { frames, until, close: async () => { controller.abort(); await done; }, done };
}

describe('the modern era on Streamable HTTP', { timeout: 90_000 }, () => {
    let daemon;
    before(async () => { daemon = await startDaemon(); });
    after(async () => { await daemon?.stop(); });
    const it = (name, body) => test(name, () => withDiagnostics(daemon, () => body(daemon)));

    it('server/discover lists both eras, the capabilities and who serves, with caching hints and no session', async d => {
        const reply = await modern(d, 'server/discover', { _meta: meta() });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('mcp-session-id'), null);
        const { id, result } = final(reply);
        assert.equal(id, 1);
        assert.equal(result.resultType, 'complete');
        assert.deepEqual(result.supportedVersions.slice(0, 2), [MODERN, '2025-11-25']);
        assert.ok(result.capabilities.tools && result.capabilities.resources && result.capabilities.prompts);
        assert.equal(result.capabilities.resources.subscribe, true, 'resource updates come on subscriptions/listen');
        assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'container-mcp');
        assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0);
        assert.equal(result.cacheScope, 'private');
    });

    it('a request without _meta, or without its version or client capabilities, is 400 with -32602 and its id', async d => {
        const withoutVersion = meta();
        delete withoutVersion['io.modelcontextprotocol/protocolVersion'];
        const withoutCapabilities = meta();
        delete withoutCapabilities['io.modelcontextprotocol/clientCapabilities'];
        for (const [id, params] of [[11, {}], [12, { _meta: withoutVersion }], [13, { _meta: withoutCapabilities }]]) {
            const reply = await modern(d, 'tools/list', params, { id });
            assert.equal(reply.status, 400, reply.text);
            const body = JSON.parse(reply.text);
            assert.equal(body.id, id);
            assert.equal(body.error.code, -32602);
        }
        const withoutClientInfo = meta();
        delete withoutClientInfo['io.modelcontextprotocol/clientInfo'];
        assert.equal((await modern(d, 'tools/list', { _meta: withoutClientInfo })).status, 200);
    });

    it('an unsupported version is 400 with -32022 listing what is supported', async d => {
        const reply = await modern(d, 'server/discover', { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
            { id: 'v', headers: { 'mcp-protocol-version': '2099-01-01' } });
        assert.equal(reply.status, 400);
        const body = JSON.parse(reply.text);
        assert.equal(body.id, 'v');
        assert.equal(body.error.code, -32022);
        assert.equal(body.error.data.requested, '2099-01-01');
        assert.ok(body.error.data.supported.includes(MODERN) && body.error.data.supported.includes('2025-11-25'));
    });

    it('headers that contradict the body are 400 with -32020', async d => {
        const call = { name: 'test_simple_text', arguments: {}, _meta: meta() };
        const cases = [
            { 'mcp-protocol-version': '2025-11-25' },
            { 'mcp-protocol-version': undefined },
            { 'mcp-method': undefined },
            { 'mcp-method': 'tools/list' },
            { 'mcp-name': undefined },
            { 'mcp-name': 'test_error_handling' },
            { 'mcp-name': '=?base64?not base64!?=' },
        ];
        for (const headers of cases) {
            const reply = await modern(d, 'tools/call', call, { id: 7, headers });
            assert.equal(reply.status, 400, `${JSON.stringify(headers)}: ${reply.text}`);
            const body = JSON.parse(reply.text);
            assert.equal(body.id, 7);
            assert.equal(body.error.code, -32020, JSON.stringify(headers));
        }
    });

    it('arguments a tool marks with x-mcp-header must be mirrored in Mcp-Param-* headers that match the body', async d => {
        const { result: listed } = await ask(d, 'tools/list', { _meta: meta() });
        assert.equal(listed.tools.find(t => t.name === 'test_header_parameters').inputSchema.properties.region['x-mcp-header'], 'Region');
        const call = (args, headers) => modern(d, 'tools/call', { name: 'test_header_parameters', arguments: args, _meta: meta() }, { headers });
        const accepted = [
            [{ region: 'eu', shard: 7 }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '7.0' }],
            [{ region: 'Hello, 世界' }, { 'mcp-param-region': `=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=` }],
            [{ region: 'eu', shard: null }, { 'Mcp-Param-Region': ' eu ' }],
        ];
        for (const [args, headers] of accepted) {
            const reply = await call(args, headers);
            assert.equal(reply.status, 200, `${JSON.stringify(args)}: ${reply.text}`);
            assert.equal(final(reply).result.resultType, 'complete');
        }
        const refused = [
            [{ region: 'eu' }, {}, /Mcp-Param-Region header is missing, and params\.arguments\.region is in the body/],
            [{ region: 'eu' }, { 'mcp-param-region': 'us' }, /Mcp-Param-Region header value 'us' does not match/],
            [{ region: 'eu', shard: 7 }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '8' }, /Mcp-Param-Shard header value '8'/],
            [{ region: 'eu' }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '1' }, /Mcp-Param-Shard header is sent, but params\.arguments\.shard is not in the body/],
            [{ region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }, /not valid padded base64|not valid base64/],
        ];
        for (const [args, headers, message] of refused) {
            const reply = await call(args, headers);
            assert.equal(reply.status, 400, `${JSON.stringify(headers)}: ${reply.text}`);
            const { error } = final(reply);
            assert.equal(error.code, -32020);
            assert.match(error.message, message);
        }
    });

    it('an Mcp-Param-* header must carry the value of an argument of the call, or the call is 400 with -32020', async d => {
        const call = { name: 'output_read', arguments: { handle: 'out_0123.alpha', length: 10 }, _meta: meta() };
        for (const value of ['out_other.beta', `=?base64?${Buffer.from('out_other.beta').toString('base64')}?=`, '=?base64?not base64!?=']) {
            const reply = await modern(d, 'tools/call', call, { id: 8, headers: { 'mcp-param-handle': value } });
            assert.equal(reply.status, 400, `${value}: ${reply.text}`);
            const body = JSON.parse(reply.text);
            assert.equal(body.id, 8);
            assert.equal(body.error.code, -32020, value);
        }
        // The header the tool's schema declares (x-mcp-header), with the argument's value: served
        // (the handle is unknown here, which the tool says).
        const { result: listed } = final(await modern(d, 'tools/list', { _meta: meta() }));
        assert.equal(listed.tools.find(t => t.name === 'output_read').inputSchema.properties.handle['x-mcp-header'], 'Handle');
        const reply = await modern(d, 'tools/call', call, { id: 9, headers: { 'mcp-param-handle': 'out_0123.alpha' } });
        assert.equal(reply.status, 200, reply.text);
        assert.equal(final(reply).result.isError, true);
    });

    it('header names are case-insensitive, values trimmed, and Mcp-Name may be base64', async d => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call',
            params: { name: 'test_simple_text', arguments: {}, _meta: meta() } });
        for (const name of ['  test_simple_text ', `=?base64?${Buffer.from('test_simple_text').toString('base64')}?=`]) {
            const reply = await rawHttp({ port: d.port, method: 'POST', path: '/mcp', body, headers: {
                Accept: BOTH, 'Content-Type': 'application/json', 'MCP-PROTOCOL-VERSION': MODERN,
                'MCP-METHOD': ' tools/call', 'mcp-NAME': name } });
            assert.equal(reply.status, 200, reply.text);
            const message = reply.text.startsWith('{') ? JSON.parse(reply.text)
                : JSON.parse(reply.text.split('\n').filter(l => l.startsWith('data:')).at(-1).slice(5));
            assert.equal(message.result.content[0].text, 'This is a simple text response for testing.');
        }
    });

    it('removed and unknown methods are 404 with -32601', async d => {
        for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'no/such/method']) {
            const params = { _meta: meta(), ...(method.startsWith('resources/') ? { uri: 'test://watched-resource' } : {}),
                ...(method === 'logging/setLevel' ? { level: 'debug' } : {}) };
            const reply = await modern(d, method, params, { id: method });
            assert.equal(reply.status, 404, `${method}: ${reply.text}`);
            const body = JSON.parse(reply.text);
            assert.equal(body.id, method);
            assert.equal(body.error.code, -32601);
        }
    });

    it('GET and DELETE are 405; a session id is ignored', async d => {
        for (const method of ['GET', 'DELETE']) {
            const response = await fetch(d.url, { method, headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN } });
            assert.equal(response.status, 405);
            assert.match(response.headers.get('allow'), /POST/);
            await response.arrayBuffer();
        }
        const reply = await modern(d, 'tools/list', { _meta: meta() }, { headers: { 'mcp-session-id': 'made-up' } });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.get('mcp-session-id'), null);
    });

    it('every result says resultType complete; lists and reads carry ttlMs and cacheScope; tools keep their order', async d => {
        const call = final(await modern(d, 'tools/call', { name: 'test_simple_text', arguments: {}, _meta: meta() }));
        assert.equal(call.result.resultType, 'complete');
        const structured = final(await modern(d, 'tools/call', { name: 'test_wait', arguments: { ms: 1 }, _meta: meta() }));
        assert.equal(structured.result.resultType, 'complete');
        assert.deepEqual(structured.result.structuredContent, { waited_ms: 1 });
        const lists = [];
        for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
            const { result } = final(await modern(d, method, { _meta: meta() }));
            assert.equal(result.resultType, 'complete', method);
            assert.ok(Number.isInteger(result.ttlMs), method);
            assert.ok(['public', 'private'].includes(result.cacheScope), method);
            lists.push(result);
        }
        const again = final(await modern(d, 'tools/list', { _meta: meta() })).result;
        assert.deepEqual(again.tools.map(t => t.name), lists[0].tools.map(t => t.name));
        const read = final(await modern(d, 'resources/read', { uri: 'test://static-text', _meta: meta() }));
        assert.equal(read.result.resultType, 'complete');
        assert.equal(read.result.cacheScope, 'private');
    });

    it('a missing resource is -32602 in this era, -32002 in a 2025 session', async d => {
        const reply = await modern(d, 'resources/read', { uri: 'test://nothing-here', _meta: meta() }, { id: 'r' });
        const body = final(reply);
        assert.equal(body.id, 'r');
        assert.equal(body.error.code, -32602);
        assert.equal(body.error.data.uri, 'test://nothing-here');
        const { session } = await openSession(d.url);
        const legacy = await post(d.url, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'test://nothing-here' } },
            { session, protocolVersion: '2025-11-25' });
        assert.equal((await legacy.json()).error.code, -32002);
    });

    it('log messages only for a request that names a level, on its own stream', async d => {
        const silent = await modern(d, 'tools/call', { name: 'test_tool_with_logging', arguments: {}, _meta: meta() });
        assert.equal(messages(silent).filter(m => m.method === 'notifications/message').length, 0);
        const chatty = await modern(d, 'tools/call', { name: 'test_tool_with_logging', arguments: {},
            _meta: meta({ 'io.modelcontextprotocol/logLevel': 'debug' }) });
        const logged = messages(chatty).filter(m => m.method === 'notifications/message');
        assert.ok(logged.length >= 3, chatty.text);
        assert.equal(final(chatty).result.resultType, 'complete');
        const warningsOnly = await modern(d, 'tools/call', { name: 'test_tool_with_logging', arguments: {},
            _meta: meta({ 'io.modelcontextprotocol/logLevel': 'warning' }) });
        assert.equal(messages(warningsOnly).filter(m => m.method === 'notifications/message').length, 0);
    });

    it('progress goes on the request\'s own stream', async d => {
        const reply = await modern(d, 'tools/call', { name: 'test_wait', arguments: { ms: 350 },
            _meta: meta({ progressToken: 'p1' }) });
        const progress = messages(reply).filter(m => m.method === 'notifications/progress');
        assert.ok(progress.length >= 2, reply.text);
        assert.ok(progress.every(m => m.params.progressToken === 'p1'));
    });

    it('closing the response stream cancels the call', async d => {
        const cancelledCount = async () => Number(final(await modern(d, 'resources/read',
            { uri: 'test://cancelled-calls', _meta: meta() })).result.contents[0].text);
        const before = await cancelledCount();
        const controller = new AbortController();
        const call = modern(d, 'tools/call', { name: 'test_wait', arguments: { ms: 30_000 }, _meta: meta() },
            { signal: controller.signal }).catch(error => error);
        await sleep(300);
        controller.abort();
        assert.equal((await call).name, 'AbortError');
        assert.ok(await eventually(async () => await cancelledCount() === before + 1, { timeoutMs: 5000 }),
            'the daemon saw the closed stream as a cancellation');
    });

    const settled = async (d, taskId) => {
        let task;
        assert.ok(await eventually(async () => {
            task = (await ask(d, 'tasks/get', { taskId, _meta: withTasks() })).result;
            return task.status !== 'working';
        }, { timeoutMs: 10_000, intervalMs: 100 }), `task ${taskId} still working`);
        return task;
    };

    it('discover advertises the Tasks extension; a task-supporting call of a client with it becomes a task whose result tasks/get inlines', async d => {
        const { result: discovered } = await ask(d, 'server/discover', { _meta: meta() });
        assert.deepEqual(discovered.capabilities.extensions, { [TASKS]: {} });
        const { result: listed } = await ask(d, 'tools/list', { _meta: meta() });
        assert.deepEqual(listed.tools.find(t => t.name === 'slow_compute').execution, { taskSupport: 'optional' });
        assert.deepEqual(listed.tools.find(t => t.name === 'failing_job').execution, { taskSupport: 'required' });
        assert.equal(listed.tools.find(t => t.name === 'greet').execution, undefined);

        const { result: created } = await ask(d, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'L' }, _meta: withTasks() });
        assert.equal(created.resultType, 'task');
        assert.equal(created.status, 'working');
        assert.ok(created.taskId && Number.isInteger(created.ttlMs) && Number.isInteger(created.pollIntervalMs));
        assert.ok(!('result' in created) && !('content' in created));
        const working = (await ask(d, 'tasks/get', { taskId: created.taskId, _meta: withTasks() })).result;
        assert.equal(working.status, 'working');
        assert.equal(working.resultType, 'complete');
        const done = await settled(d, created.taskId);
        assert.equal(done.status, 'completed');
        assert.equal(done.result.content[0].text, 'L: computed in 1 s');

        // Without the extension the same tool answers at once, and a tool error stays a result.
        const { result: plain } = await ask(d, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'P' }, _meta: meta() });
        assert.equal(plain.resultType, 'complete');
        assert.equal(plain.taskId, undefined);
        const { result: failing } = await ask(d, 'tools/call', { name: 'failing_job', arguments: {}, _meta: withTasks() });
        const failed = await settled(d, failing.taskId);
        assert.equal(failed.status, 'completed', JSON.stringify(failed));
        assert.equal(failed.result.isError, true);
        const { result: broken } = await ask(d, 'tools/call', { name: 'protocol_error_job', arguments: {}, _meta: withTasks() });
        const crashed = await settled(d, broken.taskId);
        assert.equal(crashed.status, 'failed');
        assert.equal(crashed.error.code, -32603);
        assert.equal(crashed.result, undefined);
    });

    it('tasks/cancel ends a working task as cancelled; a client without the extension gets -32021 and unknown ids -32602', async d => {
        const { result: created } = await ask(d, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, _meta: withTasks() });
        const ack = (await ask(d, 'tasks/cancel', { taskId: created.taskId, _meta: withTasks() })).result;
        assert.deepEqual(ack, { resultType: 'complete' });
        assert.equal((await ask(d, 'tasks/get', { taskId: created.taskId, _meta: withTasks() })).result.status, 'cancelled');
        assert.deepEqual((await ask(d, 'tasks/cancel', { taskId: created.taskId, _meta: withTasks() })).result, { resultType: 'complete' },
            'cancelling a terminal task is acknowledged again');

        for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
            const { error } = await ask(d, method, { taskId: created.taskId, _meta: meta() });
            assert.equal(error.code, -32021, method);
            assert.deepEqual(error.data.requiredCapabilities.extensions, { [TASKS]: {} });
        }
        const { error: required } = await ask(d, 'tools/call', { name: 'failing_job', arguments: {}, _meta: meta() });
        assert.equal(required.code, -32021);
        const { error: unknown } = await ask(d, 'tasks/get', { taskId: 'task-made-up', _meta: withTasks() });
        assert.equal(unknown.code, -32602);
    });

    // Multi round-trip requests: what a call asks its client comes back as an input_required
    // result; the client retries with the answers and the signed requestState it was handed.
    const asking = (capabilities = { elicitation: {}, sampling: {}, roots: {} }) =>
        meta({ 'io.modelcontextprotocol/clientCapabilities': capabilities });
    const accept = content => ({ action: 'accept', content });

    it('a tool that asks its client answers input_required, and its retry with the answers completes', async d => {
        const params = { name: 'test_elicitation', arguments: { message: 'Who are you?' }, _meta: asking() };
        const { result: first } = await ask(d, 'tools/call', params);
        assert.equal(first.resultType, 'input_required', JSON.stringify(first));
        const [key, ...others] = Object.keys(first.inputRequests);
        assert.deepEqual(others, []);
        assert.equal(first.inputRequests[key].method, 'elicitation/create');
        assert.equal(first.inputRequests[key].params.message, 'Who are you?');
        assert.equal(typeof first.requestState, 'string');
        const { result: done } = await ask(d, 'tools/call', { ...params, requestState: first.requestState,
            inputResponses: { [key]: accept({ username: 'ada', email: 'ada@example.com' }) } });
        assert.equal(done.resultType, 'complete');
        assert.match(done.content[0].text, /^User response: .*"username":"ada"/);

        // Three rounds: the last brings only the second answer, the first is in the state.
        const rounds = { name: 'test_input_required_result_multi_round', arguments: {}, _meta: asking() };
        const { result: r1 } = await ask(d, 'tools/call', rounds);
        assert.deepEqual(Object.keys(r1.inputRequests), ['step1']);
        const { result: r2 } = await ask(d, 'tools/call', { ...rounds, requestState: r1.requestState, inputResponses: { step1: accept({ name: 'Ada' }) } });
        assert.deepEqual(Object.keys(r2.inputRequests), ['step2']);
        assert.notEqual(r2.requestState, r1.requestState);
        const { result: r3 } = await ask(d, 'tools/call', { ...rounds, requestState: r2.requestState, inputResponses: { step2: accept({ color: 'teal' }) } });
        assert.equal(r3.content[0].text, 'Ada likes teal');

        // Only what the request's _meta declares is asked; a tool that needs it is refused.
        const { result: narrowed } = await ask(d, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {}, _meta: asking({ sampling: {} }) });
        assert.deepEqual(Object.values(narrowed.inputRequests).map(r => r.method), ['sampling/createMessage']);
        const { error: undeclared } = await ask(d, 'tools/call', { ...params, _meta: asking({ sampling: {} }) });
        assert.equal(undeclared.code, -32021);

        // An answer that is not one (a number, an elicitation without action) is refused.
        const { error: notAnObject } = await ask(d, 'tools/call', { ...params, inputResponses: { [key]: 12345 } });
        assert.equal(notAnObject.code, -32602);
        const { result: malformed } = await ask(d, 'tools/call', { ...params, inputResponses: { [key]: { content: {} } } });
        assert.equal(malformed.isError, true);
        assert.match(malformed.content[0].text, /answer to input-1 is not valid/);
    });

    it('an altered requestState, or one issued for another tool, other arguments or a prompt, is refused with -32602', async d => {
        const params = { name: 'test_elicitation', arguments: { message: 'Who are you?' }, _meta: asking() };
        const { result: first } = await ask(d, 'tools/call', params);
        const state = first.requestState;
        const [body, signature] = state.split('.');
        const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
        // The payload is only base64: a client that edits it (to add an answer) breaks the signature.
        const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
        payload.answers = { 'input-1': accept({ username: 'forged', email: 'x' }) };
        const forged = Buffer.from(JSON.stringify(payload)).toString('base64url') + '.' + signature;
        for (const altered of [state + '-TAMPERED', `${body}.${flipped}`, forged, 'no-dot', '', `.${signature}`]) {
            const { error } = await ask(d, 'tools/call', { ...params, requestState: altered, inputResponses: {} });
            assert.equal(error?.code, -32602, altered);
            assert.match(error.message, /requestState is not one this server issued, or it was altered/);
        }
        const elsewhere = [
            ['tools/call', { name: 'test_input_required_result_elicitation', arguments: {} }],
            ['tools/call', { name: 'test_elicitation', arguments: { message: 'Someone else?' } }],
            ['prompts/get', { name: 'test_input_required_result_prompt' }],
        ];
        for (const [method, other] of elsewhere) {
            const { error } = await ask(d, method, { ...other, _meta: asking(), requestState: state });
            assert.equal(error?.code, -32602, JSON.stringify(other));
            assert.match(error.message, /requestState was issued for another request/);
        }
    });

    it('a prompt asks before it renders; a task waits for tasks/update with its questions on tasks/get', async d => {
        const prompt = { name: 'test_input_required_result_prompt', _meta: asking() };
        const { result: asked } = await ask(d, 'prompts/get', prompt);
        assert.equal(asked.resultType, 'input_required');
        assert.deepEqual(Object.keys(asked.inputRequests), ['user_context']);
        const { result: rendered } = await ask(d, 'prompts/get', { ...prompt, requestState: asked.requestState, inputResponses: { user_context: accept({ context: 'tests' }) } });
        assert.equal(rendered.messages[0].content.text, 'Answer in this context: tests');

        const tasking = meta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } } });
        const { result: created } = await ask(d, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' }, _meta: tasking });
        assert.equal(created.resultType, 'task');
        let waiting;
        assert.ok(await eventually(async () => {
            waiting = (await ask(d, 'tasks/get', { taskId: created.taskId, _meta: tasking })).result;
            return waiting.status === 'input_required';
        }, { timeoutMs: 5000, intervalMs: 50 }), JSON.stringify(waiting));
        const [key] = Object.keys(waiting.inputRequests);
        assert.equal(waiting.inputRequests[key].params.message, 'Delete a.txt?');
        const { error: invalid } = await ask(d, 'tasks/update', { taskId: created.taskId, inputResponses: { [key]: { content: {} } }, _meta: tasking });
        assert.equal(invalid.code, -32602);
        assert.equal((await ask(d, 'tasks/get', { taskId: created.taskId, _meta: tasking })).result.status, 'input_required');
        const { result: ack } = await ask(d, 'tasks/update', { taskId: created.taskId, inputResponses: { [key]: accept({ confirm: true }), unknown: accept({}) }, _meta: tasking });
        assert.deepEqual(ack, { resultType: 'complete' });
        const done = await settled(d, created.taskId);
        assert.equal(done.result.content[0].text, 'a.txt: deletion confirmed');
    });

    it('subscriptions/listen acknowledges first, then sends only what its filter asked for, each with its subscriptionId', async d => {
        const tools = listen(d, { toolsListChanged: true, resourceSubscriptions: ['file:///listened.txt'] }, 'tools-stream');
        const prompts = listen(d, { promptsListChanged: true }, 77);
        try {
            const ack = await tools.until(f => f.method, 'the acknowledgement');
            assert.deepEqual(ack, { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {
                _meta: { 'io.modelcontextprotocol/subscriptionId': 'tools-stream' },
                notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///listened.txt'] } } });
            await prompts.until(f => f.method === 'notifications/subscriptions/acknowledged', 'the second acknowledgement');
            assert.equal(tools.frames[0], ack, 'the acknowledgement comes first');

            await ask(d, 'tools/call', { name: 'test_trigger_tool_change', arguments: {}, _meta: meta() });
            const changed = await tools.until(f => f.method === 'notifications/tools/list_changed', 'tools/list_changed');
            assert.deepEqual(changed.params._meta, { 'io.modelcontextprotocol/subscriptionId': 'tools-stream' });
            await ask(d, 'tools/call', { name: 'test_trigger_prompt_change', arguments: {}, _meta: meta() });
            const promptChange = await prompts.until(f => f.method === 'notifications/prompts/list_changed', 'prompts/list_changed');
            assert.equal(promptChange.params._meta['io.modelcontextprotocol/subscriptionId'], 77);

            const { result: written } = await ask(d, 'tools/call', { name: 'file_write', arguments: { path: 'listened.txt', content: 'x' }, _meta: meta() });
            assert.ok(!written.isError, JSON.stringify(written));
            const updated = await tools.until(f => f.method === 'notifications/resources/updated', 'resources/updated');
            assert.deepEqual(updated.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'tools-stream' }, uri: 'file:///listened.txt' });
            await sleep(200);
            assert.deepEqual(tools.frames.map(f => f.method).filter(m => m !== 'notifications/resources/updated'),
                ['notifications/subscriptions/acknowledged', 'notifications/tools/list_changed']);
            assert.deepEqual(prompts.frames.map(f => f.method), ['notifications/subscriptions/acknowledged', 'notifications/prompts/list_changed']);
        } finally {
            await tools.close();
            await prompts.close();
        }
        // The streams are gone once closed: a further change reaches no one, and nothing fails.
        await ask(d, 'tools/call', { name: 'test_trigger_tool_change', arguments: {}, _meta: meta() });
    });

    it('subscriptions/listen with taskIds pushes each status change of the own task as notifications/tasks, what tasks/get would answer', async d => {
        const { result: created } = await ask(d, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'N' }, _meta: withTasks() });
        const made_up = 'task-0123456789abcdef0123456789abcdef';
        const stream = listen(d, { taskIds: [created.taskId, made_up] }, 'tasks-stream', {}, withTasks());
        try {
            const ack = await stream.until(f => f.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
            assert.deepEqual(ack.params.notifications, { taskIds: [created.taskId] }, 'only a known task of the principal is agreed to');
            const now = await stream.until(f => f.method === 'notifications/tasks', 'the task as it is');
            assert.equal(now.params.taskId, created.taskId);
            assert.equal(now.params._meta['io.modelcontextprotocol/subscriptionId'], 'tasks-stream');
            const done = await stream.until(f => f.method === 'notifications/tasks' && f.params.status === 'completed', 'the completed task');
            assert.equal(done.params.result.content[0].text, 'N: computed in 1 s');
            const polled = (await ask(d, 'tasks/get', { taskId: created.taskId, _meta: withTasks() })).result;
            const { _meta, ...pushed } = done.params;
            const { resultType, ...got } = polled;
            assert.deepEqual(pushed, got, 'the notification carries what tasks/get answers');
        } finally {
            await stream.close();
        }
        // Task notifications need the extension declared.
        const params = { notifications: { taskIds: [created.taskId] }, _meta: meta() };
        const refused = await modern(d, 'subscriptions/listen', params);
        const { error } = final(refused);
        assert.equal(error.code, -32021, refused.text);
        assert.ok(error.data.requiredCapabilities.extensions[TASKS]);
    });

    it('a 2025 session keeps working beside stateless requests', async d => {
        const { session } = await openSession(d.url);
        await modern(d, 'server/discover', { _meta: meta() });
        const ping = await post(d.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { session, protocolVersion: '2025-11-25' });
        assert.deepEqual(await ping.json(), { jsonrpc: '2.0', id: 9, result: {} });
    });
});

describe('a daemon that shuts down', { timeout: 30_000 }, () => {
    test('ends its subscriptions/listen streams with their graceful response', async () => {
        const daemon = await startDaemon();
        const stream = listen(daemon, { toolsListChanged: true }, 'until-shutdown');
        try {
            await stream.until(f => f.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
            await daemon.stop();
            await stream.done;
            assert.deepEqual(stream.frames.at(-1), { jsonrpc: '2.0', id: 'until-shutdown', result: {
                resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'until-shutdown' } } });
        } finally {
            await stream.close();
            await daemon.stop();
        }
    });
});

// With a workspace per session (SANDBOX_WORKSPACE=session), a file's change is news only for the
// session whose workspace it is: a stateless request's workspace is its principal's.
describe('resource updates of a workspace of its own', { timeout: 30_000 }, () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
    let dir;
    let daemon;
    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'cmcp-own-workspace-'));
        daemon = await startDaemon({ settings: { MCP_PRINCIPALS_FILE: await writePrincipals(dir, tokens), SANDBOX_WORKSPACE: 'session' } });
    });
    after(async () => {
        await daemon?.stop();
        if (dir)
            await rm(dir, { recursive: true, force: true });
    });

    test("reach the principal whose workspace changed, not another principal subscribed to the same URI", () => withDiagnostics(daemon, async () => {
        const as = who => ({ authorization: `Bearer ${tokens[who]}` });
        const filter = { resourceSubscriptions: ['file:///shared-name.txt'] };
        const alice = listen(daemon, filter, 'alice-stream', as('alice'));
        const bob = listen(daemon, filter, 'bob-stream', as('bob'));
        try {
            await alice.until(f => f.method === 'notifications/subscriptions/acknowledged', 'alice acknowledged');
            await bob.until(f => f.method === 'notifications/subscriptions/acknowledged', 'bob acknowledged');
            const { result } = await ask(daemon, 'tools/call', { name: 'file_write', arguments: { path: 'shared-name.txt', content: 'alice' }, _meta: meta() },
                { headers: as('alice') });
            assert.ok(!result.isError, JSON.stringify(result));
            await alice.until(f => f.method === 'notifications/resources/updated', "alice's update");
            await sleep(300);
            assert.deepEqual(bob.frames.map(f => f.method), ['notifications/subscriptions/acknowledged'], 'bob hears nothing of it');
        } finally {
            await alice.close();
            await bob.close();
        }
    }));
});

// Tasks are recorded in TASKS_DIR before their client learns of them: a daemon killed and
// started again answers for the tasks that finished, and says of one that was running that it
// was lost with the daemon.
describe('tasks across a daemon restart', { timeout: 60_000 }, () => {
    let dir;
    before(async () => { dir = await mkdtemp(join(tmpdir(), 'cmcp-tasks-dir-')); });
    after(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

    test('finished tasks are still answered, a running one is reported lost', async () => {
        const settings = { TASKS_DIR: dir };
        const first = await startDaemon({ settings });
        let finished, running;
        try {
            const start = async args => (await ask(first, 'tools/call', { name: 'slow_compute', arguments: args, _meta: withTasks() })).result;
            finished = await start({ seconds: 0, label: 'before the restart' });
            running = await start({ seconds: 60 });
            assert.ok(existsSync(join(dir, `${running.taskId}.json`)), 'the task is on disk when its client learns of it');
            assert.ok(await eventually(async () => (await ask(first, 'tasks/get', { taskId: finished.taskId, _meta: withTasks() })).result.status === 'completed',
                { timeoutMs: 5000, intervalMs: 50 }));
        } finally {
            process.kill(first.pid, 'SIGKILL');
            await first.stop();
        }
        const second = await startDaemon({ settings });
        try {
            const done = (await ask(second, 'tasks/get', { taskId: finished.taskId, _meta: withTasks() })).result;
            assert.equal(done.status, 'completed');
            assert.equal(done.result.content[0].text, 'before the restart: computed in 0 s');
            const lost = (await ask(second, 'tasks/get', { taskId: running.taskId, _meta: withTasks() })).result;
            assert.equal(lost.status, 'failed');
            assert.equal(lost.error.code, -32603);
            assert.match(lost.error.message, /the task was lost: the daemon stopped while its call ran/);
            const { error } = await ask(second, 'tasks/get', { taskId: 'task-0123456789abcdef0123456789abcdef', _meta: withTasks() });
            assert.equal(error.code, -32602, 'an id never issued is still unknown');
        } finally {
            await second.stop();
        }
    });
});

// The requestState of multi round-trip requests is signed under the daemon's key: replicas that
// share MCP_REQUEST_STATE_KEY_FILE accept each other's, a daemon with a key of its own refuses
// them, and a state answers only for the principal it was issued to.
describe('requestState across replicas and principals', { timeout: 60_000 }, () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
    let dir;
    let replicas = [];
    let stranger;
    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'cmcp-request-state-'));
        const principals = await writePrincipals(dir, tokens);
        const key = join(dir, 'state.key');
        await writeFile(key, randomBytes(32));
        replicas = await Promise.all([0, 1].map(() => startDaemon({ settings: { MCP_PRINCIPALS_FILE: principals, MCP_REQUEST_STATE_KEY_FILE: key } })));
        stranger = await startDaemon({ settings: { MCP_PRINCIPALS_FILE: principals } });
    });
    after(async () => {
        await Promise.all([...replicas, stranger].map(d => d?.stop()));
        if (dir)
            await rm(dir, { recursive: true, force: true });
    });
    const params = { name: 'test_input_required_result_multi_round', arguments: {}, _meta: meta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }) };
    const round = async (d, who, extra = {}) => {
        const reply = await modern(d, 'tools/call', { ...params, ...extra }, { headers: { authorization: `Bearer ${tokens[who]}` } });
        return final(reply);
    };

    test('a replica sharing the key accepts the state; a daemon of another key, or another principal, is refused', async () => {
        const [a, b] = replicas;
        const { result: first } = await round(a, 'alice');
        const answered = { requestState: first.requestState, inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } } };
        const { result: onB } = await round(b, 'alice', answered);
        assert.deepEqual(Object.keys(onB.inputRequests ?? {}), ['step2'], JSON.stringify(onB));
        const { error: foreignKey } = await round(stranger, 'alice', answered);
        assert.equal(foreignKey?.code, -32602);
        assert.match(foreignKey.message, /not one this server issued/);
        const { error: otherPrincipal } = await round(b, 'bob', answered);
        assert.equal(otherPrincipal?.code, -32602);
        assert.match(otherPrincipal.message, /issued for another request/);
    });

    test('a key file too short, or missing, stops the daemon with the reason', async () => {
        const short = join(dir, 'short.key');
        await writeFile(short, 'too short');
        await assert.rejects(startDaemon({ settings: { MCP_REQUEST_STATE_KEY_FILE: short } }),
            /MCP_REQUEST_STATE_KEY_FILE .*short\.key holds 9 bytes: a key needs at least 32/);
        await assert.rejects(startDaemon({ settings: { MCP_REQUEST_STATE_KEY_FILE: join(dir, 'absent.key') } }),
            /MCP_REQUEST_STATE_KEY_FILE .*absent\.key: /);
    });
});

// Stateless requests that run jailed jobs. What such a request leaves behind (a background job,
// an output handle) belongs to its principal: that principal's later stateless requests reach
// it, another principal's do not, and for them a real id answers exactly as a made-up one does.
// And a client that closes a call's response stream has cancelled it: its job is killed.
const root = process.getuid() === 0;
describe('stateless requests with jailed jobs', root ? {} : { skip: 'needs root: jobs switch to host uids of the pool' }, () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
    let daemon;
    let dir;
    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'cmcp-stateless-principals-'));
        const file = await writePrincipals(dir, tokens);
        daemon = await startDaemon({ settings: { MCP_PRINCIPALS_FILE: file, SANDBOX_OUTPUT_CAP_KB: 1 } });
    });
    after(async () => {
        await daemon?.stop();
        if (dir)
            await rm(dir, { recursive: true, force: true });
    });
    const it = (name, body) => test(name, { timeout: 30_000 }, () => withDiagnostics(daemon, () => body(daemon)));
    // One stateless tools/call as `who`; the tool's structured result.
    async function call(d, who, name, args) {
        const params = { name, arguments: args, _meta: meta() };
        const reply = await modern(d, 'tools/call', params, { headers: { authorization: `Bearer ${tokens[who]}` } });
        assert.equal(reply.status, 200, reply.text);
        const { result } = final(reply);
        assert.equal(result.resultType, 'complete');
        return result.structuredContent;
    }
    const made_up = () => randomBytes(16).toString('hex');

    it("another principal's job id is unknown to job_status, job_output, job_kill and job_list", async d => {
        const started = await call(d, 'alice', 'system_run_python', { code: 'import time\ntime.sleep(20)', background: true });
        const job = started.job_id;
        assert.ok(job, JSON.stringify(started));
        try {
            const own = await call(d, 'alice', 'job_status', { job_id: job });
            assert.equal(own.success, true, JSON.stringify(own));
            assert.ok((await call(d, 'alice', 'job_list', {})).jobs.some(j => j.job_id === job));

            for (const tool of ['job_status', 'job_output', 'job_kill']) {
                const stolen = await call(d, 'bob', tool, { job_id: job });
                const unknownId = `job_${made_up()}`;
                const unknown = await call(d, 'bob', tool, { job_id: unknownId });
                assert.equal(stolen.success, false, `${tool}: ${JSON.stringify(stolen)}`);
                assert.equal(JSON.stringify(stolen).replaceAll(job, 'ID'), JSON.stringify(unknown).replaceAll(unknownId, 'ID'),
                    `${tool} tells a foreign job from a made-up id`);
            }
            assert.ok(!(await call(d, 'bob', 'job_list', {})).jobs.some(j => j.job_id === job));
            assert.equal((await call(d, 'alice', 'job_status', { job_id: job })).state, 'running', 'bob could not kill it');
        } finally {
            await call(d, 'alice', 'job_kill', { job_id: job });
        }
    });

    it('closing the response stream kills the jailed job of a stateless call', async d => {
        const controller = new AbortController();
        const params = { name: 'system_run_python', _meta: meta({ progressToken: 'uid' }),
            arguments: { code: "print('host-uid', open('/proc/self/uid_map').read().split()[1], flush=True)\nimport time\ntime.sleep(30)" } };
        const response = await post(d.url, { jsonrpc: '2.0', id: 'k', method: 'tools/call', params },
            { headers: { ...mirrored('tools/call', params), authorization: `Bearer ${tokens.alice}` }, signal: controller.signal });
        assert.match(response.headers.get('content-type'), /text\/event-stream/);
        // The job's output streams as progress; its first line names the job's host uid.
        const reader = response.body.getReader();
        let seen = '';
        let uid;
        while (!uid) {
            const { value, done } = await reader.read();
            assert.ok(!done, `the stream ended before the uid: ${seen}`);
            seen += Buffer.from(value).toString();
            uid = Number(/host-uid (\d+)/.exec(seen)?.[1]) || undefined;
        }
        assert.ok(processesOf(uid).length > 0, `job uid ${uid}`);
        controller.abort();
        assert.ok(await eventually(() => processesOf(uid).length === 0, { timeoutMs: 3000, intervalMs: 10 }),
            `job processes still alive: ${processesOf(uid)}`);
    });

    // One modern request as `who` with the Tasks extension; its final message.
    async function taskRequest(d, who, method, params) {
        const reply = await modern(d, method, { ...params, _meta: withTasks() }, { headers: { authorization: `Bearer ${tokens[who]}` } });
        return final(reply);
    }

    it("a task of system_run_python is its principal's jailed job: another principal's task id is unknown, tasks/cancel kills the job", async d => {
        const code = "open('task-uid.txt', 'w').write(open('/proc/self/uid_map').read().split()[1])\nimport time\ntime.sleep(30)";
        const { result: created } = await taskRequest(d, 'alice', 'tools/call', { name: 'system_run_python', arguments: { code } });
        assert.equal(created.resultType, 'task', JSON.stringify(created));
        const taskId = created.taskId;
        // The task's call runs in alice's workspace, which her plain calls see.
        let uid;
        assert.ok(await eventually(async () => {
            const read = await call(d, 'alice', 'file_read', { path: 'task-uid.txt' });
            uid = read.success && Number(read.content) || undefined;
            return uid !== undefined;
        }, { timeoutMs: 10_000, intervalMs: 100 }), 'the task wrote its uid');
        assert.ok(processesOf(uid).length > 0, `job uid ${uid}`);

        for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
            const stolen = await taskRequest(d, 'bob', method, { taskId });
            const madeUp = `task-${made_up()}`;
            const unknown = await taskRequest(d, 'bob', method, { taskId: madeUp });
            assert.equal(stolen.error?.code, -32602, `${method}: ${JSON.stringify(stolen)}`);
            assert.equal(JSON.stringify(stolen).replaceAll(taskId, 'ID'), JSON.stringify(unknown).replaceAll(madeUp, 'ID'),
                `${method} tells a foreign task from a made-up id`);
        }
        assert.equal((await taskRequest(d, 'alice', 'tasks/get', { taskId })).result.status, 'working', 'bob could not cancel it');
        assert.ok(processesOf(uid).length > 0, 'the job still runs');

        assert.deepEqual((await taskRequest(d, 'alice', 'tasks/cancel', { taskId })).result, { resultType: 'complete' });
        assert.ok(await eventually(() => processesOf(uid).length === 0, { timeoutMs: 3000, intervalMs: 10 }),
            `job processes still alive: ${processesOf(uid)}`);
        assert.equal((await taskRequest(d, 'alice', 'tasks/get', { taskId })).result.status, 'cancelled');
    });

    it("another principal's output handle is unknown to output_read", async d => {
        const ran = await call(d, 'alice', 'system_run_python', { code: "print('x' * 5000)" });
        const handle = ran.stdout_handle;
        assert.ok(handle, JSON.stringify(ran));
        const own = await call(d, 'alice', 'output_read', { handle, offset: 0, length: 10 });
        assert.equal(own.success, true, JSON.stringify(own));
        const stolen = await call(d, 'bob', 'output_read', { handle, offset: 0, length: 10 });
        const unknownHandle = `out_${made_up()}`;
        const unknown = await call(d, 'bob', 'output_read', { handle: unknownHandle, offset: 0, length: 10 });
        assert.equal(stolen.success, false);
        assert.equal(JSON.stringify(stolen).replaceAll(handle, 'H'), JSON.stringify(unknown).replaceAll(unknownHandle, 'H'));
    });
});
