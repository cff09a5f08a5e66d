// The tools reference, docs/tools.md, is what the daemon's own tools/list says, and what a
// model is handed of that list stays within a budget. Starts the cmcpd of $CMCPD (a daemon of
// its own: scratch directory, uid pool, no call templates) and asks it for tools/list.
//
//   node tools-reference.mjs markdown         prints docs/tools.md as it must be
//   node tools-reference.mjs check FILE       fails when FILE differs from that
//   node tools-reference.mjs budget BYTES     fails when the names, descriptions and input
//                                             schemas of tools/list (compact JSON, what clients
//                                             hand a model) pass BYTES; prints each tool's share
//
// Where the daemon cannot offer every tool (the checkpoint tools need the workspace volume: root,
// btrfs, loop devices), check and budget skip (exit 77), saying which tools are missing and why.
import { readFileSync } from 'node:fs';
import { startDaemon } from '../integration/lib/daemon.mjs';

const skipCode = 77;

// The tools the daemon offers only on the workspace volume.
const volumeTools = ['workspace_checkpoint', 'workspace_checkpoints', 'workspace_restore', 'workspace_diff',
    'workspace_checkpoint_delete', 'workspace_fork'];

async function rpc(daemon, sessionId, id, method, params) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (sessionId)
        headers['Mcp-Session-Id'] = sessionId;
    const response = await fetch(daemon.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
    if (response.status !== 200)
        throw new Error(`${method}: HTTP ${response.status}: ${await response.text()}`);
    const text = await response.text();
    // A JSON body, or one SSE event whose data is the answer.
    const json = text.trimStart().startsWith('{') ? text : text.split('\n').filter(line => line.startsWith('data:')).map(line => line.slice(5)).join('');
    const answer = JSON.parse(json);
    if (answer.error)
        throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return { result: answer.result, sessionId: response.headers.get('mcp-session-id') ?? sessionId };
}

// Every tool of tools/list (all pages) and the daemon's /health, from a daemon of our own.
async function listTools() {
    // Making the workspace volume on a busy machine can take a while.
    const daemon = await startDaemon({
        fixtures: false,
        timeoutMs: 60_000,
        settings: { JOB_CALL_TEMPLATES: 'false', BASH_WARM_JOBS: '0', PYTHON_WARM_JOBS: '0' },
    });
    try {
        const init = await rpc(daemon, null, 1, 'initialize', {
            protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'tools-reference', version: '1.0' },
        });
        const tools = [];
        let cursor;
        for (let id = 2; ; id++) {
            const { result } = await rpc(daemon, init.sessionId, id, 'tools/list', cursor ? { cursor } : {});
            tools.push(...result.tools);
            cursor = result.nextCursor;
            if (!cursor)
                break;
        }
        const health = await (await fetch(`${daemon.base}/health`)).json();
        return { tools, health };
    } finally {
        await daemon.stop();
    }
}

// What a client hands the model of one tool, as compact JSON.
const modelVisible = tool => JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });

const cell = text => String(text ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');

function typeOf(schema) {
    if (!schema || typeof schema !== 'object')
        return '';
    if ('const' in schema)
        return `\`${JSON.stringify(schema.const)}\``;
    if (schema.enum)
        return schema.enum.map(value => `\`${JSON.stringify(value)}\``).join(', ');
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives)
        return alternatives.map(typeOf).join(' or ');
    const types = [schema.type ?? 'any'].flat();
    return types.map(type => type === 'array' && schema.items ? `array of ${typeOf(schema.items)}` : type).join(' or ');
}

function bounds(schema) {
    const said = [];
    if (schema.minimum !== undefined)
        said.push(`≥ ${schema.minimum}`);
    if (schema.maximum !== undefined)
        said.push(`≤ ${schema.maximum}`);
    if (schema.default !== undefined)
        said.push(`default \`${JSON.stringify(schema.default)}\``);
    return said.length ? ` (${said.join(', ')})` : '';
}

// The top-level fields of a successful result (the first alternative of an anyOf that is not
// a failure).
function resultFields(schema) {
    if (!schema)
        return [];
    const alternatives = schema.anyOf ?? [schema];
    const fields = new Set();
    for (const alternative of alternatives)
        for (const name of Object.keys(alternative.properties ?? {}))
            fields.add(name);
    return [...fields];
}

function hints(tool) {
    const annotations = tool.annotations ?? {};
    const said = [];
    said.push(annotations.readOnlyHint ? 'read-only' : 'writes');
    if (annotations.destructiveHint)
        said.push('destructive');
    if (annotations.idempotentHint)
        said.push('idempotent');
    if (annotations.openWorldHint)
        said.push('reaches the outside world');
    if (tool.execution?.taskSupport && tool.execution.taskSupport !== 'forbidden')
        said.push(`may run as a task (${tool.execution.taskSupport})`);
    return said.join(', ');
}

function markdown(tools) {
    const total = tools.reduce((sum, tool) => sum + Buffer.byteLength(modelVisible(tool)), 0);
    const lines = [
        '# Tools',
        '',
        '<!-- Generated from the daemon\'s tools/list by `node tests/docs/tools-reference.mjs markdown`',
        '     (CMCPD=build/server/cmcpd); the docs.tools-reference test checks that it matches. -->',
        '',
        'What `cmcpd` tells a model about each tool, as its `tools/list` gives it: the description, the',
        'arguments and the fields of a successful result. The limits a call runs under are settings',
        '([configuration](configuration.md)), named by the error that enforces them; how the tools',
        'work is in [system tools](system-tools.md), [jobs and workspaces](jobs-and-workspaces.md) and',
        '[web tools](web-tools.md).',
        '',
        `${tools.length} tools; their names, descriptions and input schemas, what clients hand the`,
        `model, are ${(total / 1024).toFixed(1)} KB of compact JSON (the docs.tools-budget test keeps it within 20 KB).`,
        '',
        '| Tool | Title |',
        '|---|---|',
        ...tools.map(tool => `| [\`${tool.name}\`](#${tool.name}) | ${cell(tool.title ?? tool.annotations?.title)} |`),
    ];
    for (const tool of tools) {
        lines.push('', `## ${tool.name}`, '');
        lines.push(`*${cell(tool.title ?? tool.annotations?.title)}*: ${hints(tool)}.`, '');
        lines.push(tool.description.trim(), '');
        const properties = Object.entries(tool.inputSchema?.properties ?? {});
        const required = new Set(tool.inputSchema?.required ?? []);
        if (properties.length) {
            lines.push('| Argument | Type | Description |', '|---|---|---|');
            for (const [name, schema] of properties)
                lines.push(`| \`${name}\`${required.has(name) ? ' (required)' : ''} | ${cell(typeOf(schema))}${cell(bounds(schema))} | ${cell(schema.description)} |`);
        } else {
            lines.push('No arguments.');
        }
        const fields = resultFields(tool.outputSchema);
        if (fields.length)
            lines.push('', `Result: ${fields.map(field => `\`${field}\``).join(', ')}.`);
    }
    return lines.join('\n') + '\n';
}

// Exits with skipCode, saying why, when the daemon could not offer every tool.
function requireEveryTool(tools, health) {
    const offered = new Set(tools.map(tool => tool.name));
    const missing = volumeTools.filter(name => !offered.has(name));
    if (missing.length) {
        const quota = JSON.stringify(health.workspace_quota ?? health.status?.workspace_quota ?? 'unknown');
        console.log(`SKIP: this daemon offers no ${missing.join(', ')}: they need the workspace volume (root, btrfs, loop devices); workspace_quota: ${quota}`);
        process.exit(skipCode);
    }
}

const [mode, argument] = process.argv.slice(2);
if (!['markdown', 'check', 'budget'].includes(mode) || (mode !== 'markdown' && !argument)) {
    console.error('usage: tools-reference.mjs markdown | check FILE | budget BYTES');
    process.exit(2);
}
const { tools, health } = await listTools();
if (mode === 'markdown') {
    process.stdout.write(markdown(tools));
} else if (mode === 'check') {
    requireEveryTool(tools, health);
    const documented = readFileSync(argument, 'utf8');
    const generated = markdown(tools);
    if (documented !== generated) {
        const a = documented.split('\n');
        const b = generated.split('\n');
        const first = a.findIndex((line, i) => line !== b[i]);
        console.error(`${argument} differs from tools/list (regenerate: CMCPD=build/server/cmcpd node tests/docs/tools-reference.mjs markdown > ${argument}).`);
        console.error(`First difference at line ${first + 1}:\n  documented: ${a[first]}\n  generated:  ${b[first]}`);
        process.exit(1);
    }
    console.log(`${argument} matches tools/list (${tools.length} tools)`);
} else {
    requireEveryTool(tools, health);
    const limit = Number(argument);
    const sizes = tools.map(tool => [tool.name, Buffer.byteLength(modelVisible(tool))]).sort((x, y) => y[1] - x[1]);
    const total = sizes.reduce((sum, [, size]) => sum + size, 0);
    for (const [name, size] of sizes)
        console.log(`${String(size).padStart(6)}  ${name}`);
    console.log(`${String(total).padStart(6)}  all ${tools.length} tools (limit ${limit})`);
    if (total > limit) {
        console.error(`tools/list's names, descriptions and input schemas are ${total} bytes, over the budget of ${limit}`);
        process.exit(1);
    }
}
