// One scenario table, run with the official TypeScript SDK client over each of cmcpd's three
// transports: Streamable HTTP (/mcp), legacy SSE (/sse) and stdio (cmcpd --stdio).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

import {
    Client, StreamableHTTPClientTransport, SSEClientTransport, StdioClientTransport, McpError, ErrorCode,
    LATEST_PROTOCOL_VERSION, CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, Ajv,
} from './lib/sdk.mjs';
import { cmcpdPath, conformanceDaemonPath, eventually, removeStdioScratch, scratchDir, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';

const FIXTURE_TOOLS = [
    'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
    'test_multiple_content_types', 'test_error_handling', 'test_tool_with_logging', 'test_tool_with_progress',
    'test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums',
    'json_schema_2020_12_tool', 'test_reconnection', 'test_wait',
];

const daemonVersion = execFileSync(cmcpdPath(), ['--version'], { encoding: 'utf8' }).trim().replace(/^cmcpd /, '');

// Passes every message through and keeps a copy, so tests can see the wire as well as the SDK's view.
class RecordingTransport {
    constructor(inner) {
        this.inner = inner;
        this.sent = [];
        this.received = [];
        inner.onmessage = (message, extra) => {
            this.received.push(message);
            this.onmessage?.(message, extra);
        };
        inner.onclose = () => this.onclose?.();
        inner.onerror = error => this.onerror?.(error);
    }
    start() { return this.inner.start(); }
    send(message, options) {
        this.sent.push(message);
        return this.inner.send(message, options);
    }
    close() { return this.inner.close(); }
    get sessionId() { return this.inner.sessionId; }
    setProtocolVersion(version) { this.inner.setProtocolVersion?.(version); }
}

// Each transport: how to get a server and a client transport to it, and how to clean up.
const transports = {
    'streamable-http': async () => {
        const daemon = await startDaemon();
        return {
            diagnostics: daemon,
            transport: new StreamableHTTPClientTransport(new URL(daemon.url)),
            stop: () => daemon.stop(),
        };
    },
    'sse': async () => {
        const daemon = await startDaemon();
        return {
            diagnostics: daemon,
            transport: new SSEClientTransport(new URL(daemon.sseUrl)),
            stop: () => daemon.stop(),
        };
    },
    'stdio': async () => {
        const cwd = scratchDir();
        const transport = new StdioClientTransport({
            command: conformanceDaemonPath(),
            args: ['--stdio'],
            cwd,
            stderr: 'pipe',
        });
        let stderr = '';
        transport.stderr.setEncoding('utf8');
        transport.stderr.on('data', chunk => { stderr += chunk; });
        return {
            diagnostics: { stderrTail: () => stderr.split('\n').slice(-40).join('\n') },
            transport,
            stop: async () => {
                const pid = transport.pid;
                await transport.close();
                // The SDK ends stdin; cmcpd must be gone afterwards, not left running.
                assert.ok(await removeStdioScratch(pid, cwd, { timeoutMs: 3000 }),
                    `cmcpd --stdio (pid ${pid}) still runs after the client closed`);
            },
        };
    },
};

function textOf(result) {
    return result.content.filter(block => block.type === 'text').map(block => block.text).join('\n');
}

// The scenarios, each given {client, recorder, ctx}; ctx.samplingPrompts etc. are filled by the handlers.
const scenarios = [
    ['initialize: server identity, capabilities and the negotiated revision', ({ client, recorder }) => {
        const info = client.getServerVersion();
        assert.equal(info.name, 'container-mcp');
        assert.equal(info.version, daemonVersion);
        assert.equal(info.title, 'Container-MCP');
        const caps = client.getServerCapabilities();
        assert.deepEqual(caps.tools, { listChanged: true });
        assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
        assert.deepEqual(caps.prompts, { listChanged: true });
        assert.ok(caps.logging, 'logging capability');
        assert.ok(caps.completions, 'completions capability');
        const init = recorder.received.find(m => m.id === recorder.sent[0].id);
        assert.equal(recorder.sent[0].method, 'initialize');
        assert.equal(recorder.sent[0].params.protocolVersion, LATEST_PROTOCOL_VERSION);
        assert.equal(init.result.protocolVersion, LATEST_PROTOCOL_VERSION, 'the server accepts the SDK\'s newest revision');
    }],

    ['ping', async ({ client }) => {
        assert.deepEqual(await client.ping(), {});
    }],

    ['tools/list: every fixture tool, each with an input schema and annotations', async ({ client }) => {
        const { tools, nextCursor } = await client.listTools();
        assert.equal(nextCursor, undefined);
        const names = tools.map(tool => tool.name);
        for (const name of FIXTURE_TOOLS)
            assert.ok(names.includes(name), `tools/list lacks ${name}`);
        for (const tool of tools) {
            assert.equal(tool.inputSchema?.type, 'object', `${tool.name}: inputSchema.type`);
            assert.equal(typeof tool.description, 'string', `${tool.name}: description`);
            assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name}: annotations.readOnlyHint`);
            assert.equal(typeof tool.annotations?.destructiveHint, 'boolean', `${tool.name}: annotations.destructiveHint`);
        }
        const wait = tools.find(tool => tool.name === 'test_wait');
        assert.equal(wait.title, 'Wait');
        assert.deepEqual(wait.outputSchema.required, ['waited_ms']);
    }],

    ['tools/call: simple text', async ({ client }) => {
        const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
        assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
        assert.ok(!result.isError);
    }],

    ['tools/call: image and audio content', async ({ client }) => {
        const image = await client.callTool({ name: 'test_image_content', arguments: {} });
        assert.equal(image.content[0].type, 'image');
        assert.equal(image.content[0].mimeType, 'image/png');
        assert.ok(Buffer.from(image.content[0].data, 'base64').subarray(1, 4).equals(Buffer.from('PNG')));
        const audio = await client.callTool({ name: 'test_audio_content', arguments: {} });
        assert.equal(audio.content[0].type, 'audio');
        assert.equal(Buffer.from(audio.content[0].data, 'base64').subarray(0, 4).toString(), 'RIFF');
    }],

    ['tools/call: structuredContent of test_wait matches its outputSchema', async ({ client }) => {
        const { tools } = await client.listTools();
        const schema = tools.find(tool => tool.name === 'test_wait').outputSchema;
        const result = await client.callTool({ name: 'test_wait', arguments: { ms: 30 } });
        assert.deepEqual(result.structuredContent, { waited_ms: 30 });
        const validate = new Ajv({ strict: false }).compile(schema);
        assert.ok(validate(result.structuredContent), JSON.stringify(validate.errors));
        // Structured output comes with a text rendering for clients that ignore it.
        assert.deepEqual(JSON.parse(textOf(result)), { waited_ms: 30 });
    }],

    ['tools/call: a tool error is a result with isError, not a protocol error', async ({ client }) => {
        const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /intentionally returns an error/);
    }],

    ['tools/call: an unknown tool is JSON-RPC error -32602', async ({ client }) => {
        await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), error => {
            assert.ok(error instanceof McpError, `an McpError, got ${error}`);
            assert.equal(error.code, ErrorCode.InvalidParams);
            assert.match(error.message, /no_such_tool/);
            return true;
        });
    }],

    ['tools/call: invalid arguments are an isError result naming the argument (2025-11-25)', async ({ client }) => {
        const result = await client.callTool({ name: 'test_wait', arguments: { ms: 'x' } });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /arguments\.ms/);
        const missing = await client.callTool({ name: 'test_sampling', arguments: {} });
        assert.equal(missing.isError, true);
        assert.match(textOf(missing), /prompt/);
    }],

    ['tools/call: JSON Schema 2020-12 arguments ($ref, $defs, allOf/anyOf, if/then/else) are accepted and checked', async ({ client }) => {
        const args = { name: 'Ada', address: { street: '1 Main St', city: 'London' }, email: 'ada@example.org' };
        const ok = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
        assert.ok(!ok.isError, textOf(ok));
        assert.deepEqual(JSON.parse(textOf(ok).replace(/^Received: /, '')), args);
        const bad = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { address: { city: 7 }, email: 'a@b' } });
        assert.equal(bad.isError, true);
        assert.match(textOf(bad), /arguments\.address\.city/);
        // contactMethod phone makes phone required (if/then), whatever else is given.
        const unmet = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { contactMethod: 'phone', email: 'a@b' } });
        assert.equal(unmet.isError, true);
        assert.match(textOf(unmet), /phone/);
    }],

    ['progress notifications arrive while a tool runs, increasing', async ({ client }) => {
        const seen = [];
        const result = await client.callTool({ name: 'test_wait', arguments: { ms: 450 } }, undefined, {
            onprogress: progress => seen.push(progress),
        });
        assert.deepEqual(result.structuredContent, { waited_ms: 450 });
        assert.ok(seen.length >= 3, `expected ≥3 progress notifications, got ${JSON.stringify(seen)}`);
        for (let i = 1; i < seen.length; ++i)
            assert.ok(seen[i].progress > seen[i - 1].progress, `progress must increase: ${JSON.stringify(seen)}`);
        assert.ok(seen.every(p => p.total === 450 && p.progress <= 450), JSON.stringify(seen));

        const fixed = [];
        await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
            onprogress: progress => fixed.push(progress.progress),
        });
        assert.deepEqual(fixed, [0, 50, 100]);
    }],

    ['cancellation: an aborted call rejects promptly and the server stops the work', async ({ client }) => {
        const readCount = async () =>
            (await client.readResource({ uri: 'test://cancelled-calls' })).contents[0].text;
        assert.equal(await readCount(), '0');
        const controller = new AbortController();
        const progress = [];
        const started = Date.now();
        const call = client.callTool({ name: 'test_wait', arguments: { ms: 5000 } }, undefined, {
            signal: controller.signal,
            onprogress: p => progress.push(p.progress),
        });
        await sleep(300);
        const abortedAt = Date.now();
        controller.abort('the user pressed stop');
        await assert.rejects(call, /the user pressed stop/);
        assert.ok(Date.now() - abortedAt < 500, 'the call must reject promptly after the abort');
        assert.ok(progress.length >= 1, 'the call was running (progress arrived) before it was aborted');
        // The notifications/cancelled may travel on another connection than the next request: poll.
        const count = await eventually(async () => (await readCount()) === '1' && '1', { timeoutMs: 3000 });
        assert.equal(count, '1', 'test://cancelled-calls: the server did not stop the cancelled call');
        assert.ok(Date.now() - started < 2500, 'cancellation took too long');
        // The session still works after a cancellation.
        assert.deepEqual((await client.callTool({ name: 'test_wait', arguments: { ms: 10 } })).structuredContent, { waited_ms: 10 });
        assert.equal(await readCount(), '1', 'a completed call must not count as cancelled');
    }],

    ['logging: setLevel, then a tool logs messages to the client', async ({ client, ctx }) => {
        ctx.logs.length = 0;
        await client.setLoggingLevel('info');
        const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
        assert.match(textOf(result), /executed successfully/);
        await eventually(() => ctx.logs.length >= 3, { timeoutMs: 1000 });
        assert.deepEqual(ctx.logs.map(l => l.data),
            ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
        assert.ok(ctx.logs.every(l => l.level === 'info'));

        // Above the messages' level, nothing is sent.
        ctx.logs.length = 0;
        await client.setLoggingLevel('error');
        await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
        await sleep(50);
        assert.deepEqual(ctx.logs, [], 'messages below the session\'s level must not be sent');
        await client.setLoggingLevel('info');
    }],

    ['sampling: the server asks the client\'s model, the answer comes back', async ({ client, ctx }) => {
        ctx.samplingRequests.length = 0;
        const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2+2?' } });
        assert.equal(ctx.samplingRequests.length, 1);
        assert.equal(ctx.samplingRequests[0].messages[0].content.text, 'What is 2+2?');
        assert.equal(textOf(result), 'LLM response: model says: What is 2+2?');
        assert.ok(!result.isError);
    }],

    ['elicitation: the server asks the user, the answer comes back', async ({ client, ctx }) => {
        ctx.elicitRequests.length = 0;
        const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
        assert.equal(ctx.elicitRequests.length, 1);
        assert.equal(ctx.elicitRequests[0].message, 'Who are you?');
        assert.deepEqual(ctx.elicitRequests[0].requestedSchema.required, ['username', 'email']);
        assert.ok(!result.isError, textOf(result));
        const answer = JSON.parse(textOf(result).replace(/^User response: /, ''));
        assert.deepEqual(answer, { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } });
    }],

    ['a prompt that needs the user\'s answer asks for it before it renders', async ({ client, ctx }) => {
        ctx.elicitRequests.length = 0;
        const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
        assert.equal(ctx.elicitRequests.length, 1);
        assert.equal(ctx.elicitRequests[0].message, 'What context should the prompt use?');
        assert.match(prompt.messages[0].content.text, /^Answer in this context: .*"username":"ada"/);
    }],

    ['resources: list, read text and binary, templates, unknown uri', async ({ client }) => {
        const { resources } = await client.listResources();
        const uris = resources.map(r => r.uri);
        for (const uri of ['test://static-text', 'test://static-binary', 'test://cancelled-calls'])
            assert.ok(uris.includes(uri), `resources/list lacks ${uri}`);
        const text = await client.readResource({ uri: 'test://static-text' });
        assert.deepEqual(text.contents, [{ uri: 'test://static-text', mimeType: 'text/plain',
            text: 'This is the content of the static text resource.' }]);
        const binary = await client.readResource({ uri: 'test://static-binary' });
        assert.equal(binary.contents[0].mimeType, 'image/png');
        assert.ok(Buffer.from(binary.contents[0].blob, 'base64').subarray(1, 4).equals(Buffer.from('PNG')));

        const { resourceTemplates } = await client.listResourceTemplates();
        assert.ok(resourceTemplates.some(t => t.uriTemplate === 'test://template/{id}/data'));
        const data = await client.readResource({ uri: 'test://template/42/data' });
        assert.equal(data.contents[0].uri, 'test://template/42/data');
        assert.deepEqual(JSON.parse(data.contents[0].text), { id: '42', templateTest: true, data: 'Data for ID: 42' });

        await assert.rejects(client.readResource({ uri: 'test://nothing-here' }), error => {
            assert.ok(error instanceof McpError);
            assert.equal(error.code, -32002);
            return true;
        });
    }],

    ['prompts: list and get, with and without arguments', async ({ client }) => {
        const { prompts } = await client.listPrompts();
        const withArgs = prompts.find(p => p.name === 'test_prompt_with_arguments');
        assert.ok(prompts.some(p => p.name === 'test_simple_prompt'));
        assert.deepEqual(withArgs.arguments.map(a => [a.name, a.required]), [['arg1', true], ['arg2', true]]);
        const simple = await client.getPrompt({ name: 'test_simple_prompt' });
        assert.deepEqual(simple.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]);
        const filled = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
        assert.equal(filled.messages[0].content.text, "Prompt with arguments: arg1='a', arg2='b'");
        await assert.rejects(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a' } }),
            error => error instanceof McpError && error.code === ErrorCode.InvalidParams && /arg2/.test(error.message));
    }],

    ['completion: prompt argument values', async ({ client }) => {
        const { completion } = await client.complete({
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
            argument: { name: 'arg1', value: 'test' },
        });
        assert.deepEqual(completion.values, ['test', 'testing', 'tested']);
    }],

    ['a tool that asks the client to reconnect still gets its answer through', async ({ client }) => {
        // Over Streamable HTTP the server closes the answer stream and the client resumes it
        // with Last-Event-ID; the other transports have nothing to close.
        const result = await client.callTool({ name: 'test_reconnection', arguments: {} }, undefined, { timeout: 5000 });
        assert.equal(textOf(result), 'Reconnection test completed');
    }],

    ['concurrent calls on one session are answered independently', async ({ client }) => {
        // Each call takes about 500 ms (progress ticks every 100 ms): one after another would take 2 s.
        const started = Date.now();
        const results = await Promise.all([420, 400, 380, 410].map(ms =>
            client.callTool({ name: 'test_wait', arguments: { ms } })));
        assert.deepEqual(results.map(r => r.structuredContent.waited_ms), [420, 400, 380, 410]);
        const elapsed = Date.now() - started;
        assert.ok(elapsed < 1200, `calls must run concurrently, not one after another (took ${elapsed} ms)`);
    }],
];

for (const [name, setUp] of Object.entries(transports)) {
    describe(name, { timeout: 60_000 }, () => {
        let server;
        let client;
        let recorder;
        const ctx = { logs: [], samplingRequests: [], elicitRequests: [] };

        before(async () => {
            server = await setUp();
            client = new Client({ name: 'cmcp-integration', version: '1.0.0' },
                { capabilities: { sampling: {}, elicitation: {} } });
            client.setNotificationHandler(LoggingMessageNotificationSchema, n => { ctx.logs.push(n.params); });
            client.setRequestHandler(CreateMessageRequestSchema, async request => {
                ctx.samplingRequests.push(request.params);
                return {
                    model: 'integration-test-model',
                    role: 'assistant',
                    content: { type: 'text', text: `model says: ${request.params.messages[0].content.text}` },
                };
            });
            client.setRequestHandler(ElicitRequestSchema, async request => {
                ctx.elicitRequests.push(request.params);
                return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
            });
            recorder = new RecordingTransport(server.transport);
            await withDiagnostics(server.diagnostics, () => client.connect(recorder, { timeout: 10_000 }));
        });

        after(async () => {
            try {
                await client?.close();
            } finally {
                await server?.stop();
            }
        });

        for (const [title, scenario] of scenarios) {
            test(title, { timeout: 15_000 }, () =>
                withDiagnostics(server.diagnostics, () => scenario({ client, recorder, ctx })));
        }

        test('every message the server sent is well-formed JSON-RPC 2.0', () => {
            assert.ok(recorder.received.length > 20);
            for (const message of recorder.received) {
                assert.equal(message.jsonrpc, '2.0');
                const kinds = ['method' in message, 'result' in message, 'error' in message].filter(Boolean).length;
                assert.equal(kinds, 1, `exactly one of method/result/error: ${JSON.stringify(message)}`);
            }
            // Every request the client sent got exactly one response (aborted ones excepted).
            const answered = new Map();
            for (const m of recorder.received.filter(m => 'id' in m && !('method' in m)))
                answered.set(m.id, (answered.get(m.id) ?? 0) + 1);
            assert.ok([...answered.values()].every(n => n === 1), 'a request was answered twice');
        });
    });
}
