// The audit log and the daemon's log cannot be turned against the operator by what a client
// sends: an absurd client name is refused at initialize (and cannot forge a line of the text
// log), a call's record stays small whatever the size and shape of its arguments, and the
// secrets a model handles (passwords in URLs and flags, auth headers, secrets assigned in a
// command or in Python code, a private key or a .env file written with file_write) never reach
// the log, whose records still identify what was written by its length and sha256.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { BOTH, initializeRequest, openSession, post, rawHttp } from '../integration/lib/http.mjs';

const auditLines = path => readFileSync(path, 'utf8').split('\n').filter(Boolean);

// One JSON-RPC answer, whether the daemon sent it as JSON or as one server-sent event.
async function answer(response) {
    const text = await response.text();
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream'))
        return JSON.parse(text);
    const data = text.split('\n').filter(line => line.startsWith('data:')).map(line => line.slice(5).trim());
    return JSON.parse(data.at(-1));
}

// An initialize on a connection of its own: the daemon ends a session whose initialize failed,
// and the connection with it, which a pooled connection would meet on its next request.
async function initializeAs(port, name) {
    const request = initializeRequest();
    request.params.clientInfo.name = name;
    const response = await rawHttp({ port, method: 'POST', path: '/mcp', timeoutMs: 30_000, body: JSON.stringify(request),
        headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', accept: BOTH } });
    const text = response.text;
    if (!(response.headers['content-type'] ?? '').includes('text/event-stream'))
        return JSON.parse(text);
    return JSON.parse(text.split('\n').filter(line => line.startsWith('data:')).at(-1).slice(5));
}

describe('audit log and daemon log under hostile input', () => {
    let scratch;
    let daemon;
    let auditLog;
    let session;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-audit-attack-'));
        auditLog = join(scratch, 'audit.jsonl');
        daemon = await startDaemon({
            fixtures: false,
            settings: { SANDBOX_ROOT: join(scratch, 'sandbox'), AUDIT_LOG: auditLog, LOG_FORMAT: 'text' },
        });
        session = await openSession(daemon.url);
    });

    after(async () => {
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    async function call(name, args, id = name) {
        const response = await post(daemon.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
            { session: session.session, protocolVersion: session.protocolVersion, signal: AbortSignal.timeout(60_000) });
        return answer(response);
    }

    function startedRecords(tool) {
        return auditLines(auditLog).map(line => ({ line, record: JSON.parse(line) }))
            .filter(({ record }) => record.event === 'call_started' && record.tool === tool);
    }

    test('a huge client name is refused at initialize, naming the field', () => withDiagnostics(daemon, async () => {
        const body = await initializeAs(daemon.port, 'n'.repeat(1024 * 1024));
        assert.ok(body.error, `initialize with a 1 MiB name was accepted: ${JSON.stringify(body).slice(0, 300)}`);
        assert.match(body.error.message, /clientInfo\.name.*at most 256 characters/);
        assert.ok(!auditLines(auditLog).some(line => line.length > 64 * 1024), 'an audit record of more than 64 KiB');
        assert.ok(daemon.stderr().length < 256 * 1024, `the daemon log grew by ${daemon.stderr().length} bytes`);
    }));

    test('a client name with a newline is refused and forges no line of the text log', () => withDiagnostics(daemon, async () => {
        const forged = 'FORGED-LINE 2026-01-01 00:00:00.000 info [cmcp] admin logged in';
        const body = await initializeAs(daemon.port, `innocent\n${forged}`);
        assert.ok(body.error, 'a client name with a newline was accepted');
        assert.match(body.error.message, /clientInfo\.name/);
        const escape = await initializeAs(daemon.port, 'bell\x07\x1b[2Jclear');
        assert.ok(escape.error, 'a client name with terminal escapes was accepted');
        // Whatever reached the log, no line of it starts with the client's text.
        assert.ok(!daemon.stderr().split('\n').some(line => line.startsWith('FORGED-LINE')), 'the client forged a log line');
        assert.ok(!daemon.stderr().includes('\x1b[2J'), 'a terminal escape reached the log');
    }));

    test('100,000 argument keys and deep nesting leave a small record', () => withDiagnostics(daemon, async () => {
        const wide = { path: 'wide.txt', content: 'x' };
        for (let i = 0; i < 100_000; ++i)
            wide[`extra_${i}`] = `value ${i}`;
        await call('file_write', wide, 'wide');
        // Nested as deep as the JSON parser takes, written out (JSON.stringify would recurse).
        const depth = 1000;
        const deep = `${'['.repeat(depth)}"bottom"${']'.repeat(depth)}`;
        const long = JSON.stringify('y'.repeat(4 * 1024 * 1024));
        await answer(await post(daemon.url,
            `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"file_read","arguments":{"path":"wide.txt","deep":${deep},"long":${long}}}}`,
            { session: session.session, protocolVersion: session.protocolVersion, signal: AbortSignal.timeout(60_000) }));
        const records = [...startedRecords('file_write'), ...startedRecords('file_read')];
        assert.equal(records.length, 2, 'both calls are in the audit log');
        for (const { line } of records)
            assert.ok(line.length < 64 * 1024, `an audit record of ${line.length} bytes`);
        const [wideRecord] = startedRecords('file_write');
        assert.match(wideRecord.record.arguments['[omitted]'], /^\d+ more keys$/);
    }));

    test('secrets in commands and files written never reach the log', () => withDiagnostics(daemon, async () => {
        const command = [
            'echo curl -u bob:hunter2 https://alice:urlpass1@example.com/x',
            '-H "Authorization: Token tok_abcdefgh123" -H "X-Auth: xauthsecret9"',
            '-H "X-Api-Auth-Key: headerkey7"; echo mysql -u root -pdbpass5 db; echo sshpass -p sshpw6 ssh host',
        ].join(' ');
        const client = new Client({ name: 'secrets', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        const ran = await client.callTool({ name: 'system_run_command', arguments: { command } });
        assert.equal(ran.structuredContent?.exit_code, 0, JSON.stringify(ran).slice(0, 500));
        await client.close();
        const privateKey = ['-----BEGIN OPENSSH PRIVATE KEY-----',
            'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
            'QyNTUxOQAAACBkZXZpY2Uta2V5LW1hdGVyaWFsLW5vdC1yZWFsLWF0LWFsbAAAAJg=',
            '-----END OPENSSH PRIVATE KEY-----', ''].join('\n');
        const dotEnv = 'DATABASE_URL=postgres://app:dbsecret8@db:5432/app\nSTRIPE_KEY=sk_live_stripe4\nDEBUG=1\n';
        await call('file_write', { path: 'id_ed25519', content: privateKey }, 'key');
        await call('file_write', { path: '.env', content: dotEnv }, 'env');

        const log = readFileSync(auditLog, 'utf8') + daemon.stderr();
        for (const secret of ['hunter2', 'urlpass1', 'tok_abcdefgh123', 'xauthsecret9', 'headerkey7', 'dbpass5', 'sshpw6',
            'b3BlbnNzaC1rZXkt', 'dbsecret8', 'sk_live_stripe4'])
            assert.ok(!log.includes(secret), `the log holds the secret ${secret}`);

        const [{ record: commandRecord }] = startedRecords('system_run_command');
        // What is not secret stays readable.
        assert.match(commandRecord.arguments.command, /curl -u bob:\[redacted\] https:\/\/alice:\[redacted\]@example\.com\/x/);
        const written = Object.fromEntries(startedRecords('file_write').map(({ record }) => [record.arguments.path, record.arguments.content]));
        for (const [path, content] of [['id_ed25519', privateKey], ['.env', dotEnv]]) {
            const sha = createHash('sha256').update(content).digest('hex');
            assert.equal(written[path], `[${Buffer.byteLength(content)} bytes in all, sha256 ${sha}]`);
        }
    }));

    test('secrets assigned in a command and in Python code never reach the log', () => withDiagnostics(daemon, async () => {
        // An assignment before a command, as a deployment script writes it; the Python code uses
        // its secrets, so that the call shows they reached the program.
        const command = 'DB_PASS=hunter2 echo connected';
        const code = [
            'password = "hunter2"',
            'secret_token: str = "hunter2"',
            'settings = {"db_pass": \'hunter2\'}',
            'def connect(host, password): return password',
            'print(connect("db", password="hunter2") == settings["db_pass"] == secret_token == password)',
        ].join('\n');
        const ranCommand = await call('system_run_command', { command }, 'assigned-command');
        assert.equal(ranCommand.result?.structuredContent?.stdout, 'connected\n', JSON.stringify(ranCommand).slice(0, 500));
        const ranPython = await call('system_run_python', { code }, 'assigned-python');
        assert.equal(ranPython.result?.structuredContent?.output, 'True\n', JSON.stringify(ranPython).slice(0, 500));

        const commandRecords = startedRecords('system_run_command').filter(({ record }) => record.arguments.command.includes('DB_PASS='));
        const [{ record: pythonRecord }] = startedRecords('system_run_python');
        assert.equal(commandRecords.length, 1, 'the command is in the audit log');
        const leaks = [['command', commandRecords[0].record.arguments.command], ['code', pythonRecord.arguments.code]]
            .filter(([, text]) => text.includes('hunter2'));
        assert.deepEqual(leaks, [], `the audit log holds secrets: ${JSON.stringify(leaks)}`);
        assert.ok(!(readFileSync(auditLog, 'utf8') + daemon.stderr()).includes('hunter2'), 'the log holds the secret hunter2');
        // What is not secret stays readable.
        assert.equal(commandRecords[0].record.arguments.command, 'DB_PASS=[redacted] echo connected');
        assert.match(pythonRecord.arguments.code, /^password = \[redacted\]\nsecret_token: str = \[redacted\]\nsettings = \{"db_pass": \[redacted\]\}\n/);
        assert.match(pythonRecord.arguments.code, /print\(connect\("db", password=\[redacted\]\) == /);
    }));
});
