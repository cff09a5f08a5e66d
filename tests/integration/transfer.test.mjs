// file_transfer through the official SDK client and plain HTTP: a file larger than
// FILE_MAX_SIZE_MB (and than MCP_MAX_BODY_MB) is downloaded from a URL of the daemon's HTTP port,
// the download is broken off and resumed with a Range, and the bytes are the file's; an upload
// in parts with Content-Range appears under its name only once the last part is in, atomically,
// a part out of order is answered 409 with what has arrived, and the spent URL is refused. One
// PUT of a whole file far larger than MCP_MAX_BODY_MB is streamed to disk with the daemon's
// resident memory growing by a small part of it; a body cut off mid-way leaves nothing under the
// final name and resumes from what reached the disk; a file over TRANSFER_MAX_MB is refused
// before its body is sent; a head that arrives in pieces is streamed still, and a request that only
// began like a PUT to a transfer URL reaches Qt's parser whole. On the workspace volume, an upload
// past a named workspace's quota is refused and leaves nothing. A daemon started after a crash
// removes the temporary file of an unfinished upload.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { hostWorkspace, sleep, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { sanitizerBuild } from './lib/resources.mjs';

const MiB = 1024 * 1024;
const sha256 = bytes => createHash('sha256').update(bytes).digest('hex');
const memory = (pid, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

// Sends `head` and then `body` (a Buffer, or nothing) over a plain socket; resolves with the
// first complete answer (after any 100 Continue), or with what arrived when the daemon closed.
// With `cutAfter`, the client ends the connection once that many body bytes are written.
const rawPut = (url, head, body, { cutAfter, cuts = [] } = {}) => new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    let received = '';
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no answer; got: ${received}`)); }, 20_000);
    const finished = () => {
        const answer = received.replace(/^(HTTP\/1\.1 1\d\d [^\r]*\r\n\r\n)+/, '');
        const end = answer.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *(\d+)/i.exec(answer.slice(0, end));
        return end >= 0 && length && answer.length >= end + 4 + Number(length[1]);
    };
    socket.on('data', chunk => {
        received += chunk.toString('latin1');
        if (finished()) {
            clearTimeout(timer);
            socket.destroy();
            resolve(received);
        }
    });
    socket.on('error', () => {});
    socket.on('close', () => { clearTimeout(timer); resolve(received); });
    socket.on('connect', async () => {
        // The head in pieces cut at `cuts`, written apart in time, as TCP may deliver them.
        const ends = [...cuts, head.length];
        for (let piece = 0, at = 0; piece < ends.length; at = ends[piece++]) {
            socket.write(head.slice(at, ends[piece]));
            if (piece + 1 < ends.length)
                await new Promise(wait => setTimeout(wait, 50));
        }
        if (!body)
            return;
        const until = cutAfter ?? body.length;
        for (let at = 0; at < until; at += 256 * 1024)
            if (!socket.write(body.subarray(at, Math.min(at + 256 * 1024, until))))
                await new Promise(drained => socket.once('drain', drained));
        if (cutAfter !== undefined)
            socket.end();
    });
});

describe('file transfers', () => {
    let sandbox;
    let daemon;
    let client;
    let workspace;

    const ok = async (name, args) => {
        const result = await client.callTool({ name, arguments: args });
        assert.ok(!result.isError, `${name}: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-transfer-'));
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, FILE_MAX_SIZE_MB: 1, MCP_MAX_BODY_MB: 2, FILE_ALLOWED_EXTENSIONS: 'bin,txt' } });
        workspace = hostWorkspace(sandbox);
        client = new Client({ name: 'transfer-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    });
    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('a download larger than FILE_MAX_SIZE_MB, broken off and resumed with a Range', () => withDiagnostics(daemon, async () => {
        const original = randomBytes(12 * MiB);
        writeFileSync(join(workspace, 'big.bin'), original);
        const tooLarge = await client.callTool({ name: 'file_read', arguments: { path: 'big.bin', encoding: 'base64' } });
        assert.equal(tooLarge.isError, true);
        assert.match(tooLarge.structuredContent.error, /FILE_MAX_SIZE_MB/, JSON.stringify(tooLarge.structuredContent));
        // The file tools' extension rule holds for transfers too, both ways.
        for (const direction of ['download', 'upload']) {
            const refused = await client.callTool({ name: 'file_transfer', arguments: { path: 'tool.exe', direction } });
            assert.equal(refused.isError, true, JSON.stringify(refused.structuredContent));
            assert.match(refused.structuredContent.error, /'\.exe' is not in FILE_ALLOWED_EXTENSIONS/);
        }
        const issued = await ok('file_transfer', { path: 'big.bin', direction: 'download' });
        assert.equal(issued.method, 'GET');
        assert.match(issued.url, /^http:\/\/127\.0\.0\.1:\d+\/transfer\/tr_[0-9a-f]{32}$/);

        // The first attempt stops after about 3 MiB, as a connection that breaks.
        const controller = new AbortController();
        const first = await fetch(issued.url, { signal: controller.signal });
        assert.equal(first.status, 200);
        assert.equal(first.headers.get('content-length'), String(original.length));
        assert.equal(first.headers.get('accept-ranges'), 'bytes');
        const received = [];
        let length = 0;
        const reader = first.body.getReader();
        while (length < 3 * MiB) {
            const { value, done } = await reader.read();
            assert.ok(!done, 'the download ended early');
            received.push(value);
            length += value.length;
        }
        controller.abort();
        await reader.cancel().catch(() => {});

        const rest = await fetch(issued.url, { headers: { range: `bytes=${length}-` } });
        assert.equal(rest.status, 206);
        assert.equal(rest.headers.get('content-range'), `bytes ${length}-${original.length - 1}/${original.length}`);
        const whole = Buffer.concat([...received.map(chunk => Buffer.from(chunk)), Buffer.from(await rest.arrayBuffer())]);
        assert.equal(whole.length, original.length);
        assert.equal(sha256(whole), sha256(original));

        // A closed range, and one past the end.
        const window = await fetch(issued.url, { headers: { range: 'bytes=100-199' } });
        assert.equal(window.status, 206);
        assert.deepEqual(Buffer.from(await window.arrayBuffer()), original.subarray(100, 200));
        const beyond = await fetch(issued.url, { headers: { range: `bytes=${original.length}-` } });
        assert.equal(beyond.status, 416);
        assert.equal(beyond.headers.get('content-range'), `bytes */${original.length}`);
    }));

    test('an upload in parts appears whole and only at its end; a part out of order is told where to resume', () => withDiagnostics(daemon, async () => {
        const original = randomBytes(5 * MiB + 12345);
        const issued = await ok('file_transfer', { path: 'up/loaded.bin', direction: 'upload' });
        assert.equal(issued.method, 'PUT');
        const part = (first, last) => fetch(issued.url, {
            method: 'PUT',
            headers: { 'content-range': `bytes ${first}-${last}/${original.length}`, 'content-type': 'application/octet-stream' },
            body: original.subarray(first, last + 1),
        });
        const size = MiB + MiB / 2;
        let first = 0;
        const accepted = await part(0, size - 1);
        assert.equal(accepted.status, 202, await accepted.clone().text());
        assert.deepEqual(await accepted.json(), { success: true, received: size, total: original.length });
        first = size;
        assert.ok(!existsSync(join(workspace, 'up', 'loaded.bin')), 'the target has a name before its last part');

        const skipped = await part(first + size, first + 2 * size - 1);
        assert.equal(skipped.status, 409);
        assert.equal(skipped.headers.get('range'), `bytes=0-${first - 1}`);
        assert.equal((await skipped.json()).received, first);

        while (first < original.length) {
            const last = Math.min(first + size, original.length) - 1;
            const answer = await part(first, last);
            assert.equal(answer.status, last === original.length - 1 ? 201 : 202, await answer.clone().text());
            first = last + 1;
        }
        const onDisk = readFileSync(join(workspace, 'up', 'loaded.bin'));
        assert.equal(sha256(onDisk), sha256(original));
        assert.deepEqual(readdirSync(join(workspace, 'up')), ['loaded.bin'], 'a temporary file was left');
        // The URL is spent.
        const again = await part(0, 9);
        assert.equal(again.status, 410);
        // The file tools see it.
        const listed = await ok('file_list', { path: 'up' });
        assert.equal(listed.entries[0].size, original.length);
    }));

    test('an upload past the quota is refused with the reason, and leaves nothing behind', t => withDiagnostics(daemon, async () => {
        if (!existsSync(join(sandbox, 'volume', 'workspace'))) {
            t.skip('no workspace volume here (needs root, btrfs and loop devices): no quota to meet');
            return;
        }
        const small = await ok('workspace_create', { name: 'small', size_mb: 4 });
        const issued = await (async () => {
            const result = await client.callTool({ name: 'file_transfer', arguments: { workspace: 'small', path: 'full.bin', direction: 'upload' } });
            assert.ok(!result.isError, result.content?.[0]?.text);
            return result.structuredContent;
        })();
        const original = randomBytes(8 * MiB);
        const size = MiB + MiB / 2;
        let refused;
        for (let first = 0; first < original.length && !refused; first += size) {
            const last = Math.min(first + size, original.length) - 1;
            const answer = await fetch(issued.url, {
                method: 'PUT', headers: { 'content-range': `bytes ${first}-${last}/${original.length}` }, body: original.subarray(first, last + 1),
            });
            if (answer.status !== 202)
                refused = { status: answer.status, body: await answer.json() };
        }
        assert.equal(refused?.status, 507, JSON.stringify(refused));
        assert.match(refused.body.error, /disk quota exceeded/);
        const root = join(sandbox, 'volume', 'named', small.workspace_id);
        assert.deepEqual(readdirSync(root), [], 'the refused upload left a file');
        await ok('workspace_delete', { workspace: 'small' });
    }));

    test('one PUT of a whole 64 MiB file is streamed to disk: the daemon holds a small part of it', () => withDiagnostics(daemon, async () => {
        // MCP_MAX_BODY_MB is 2 here: a body Qt's parser held would be refused, and the daemon's
        // memory would grow by the body at least.
        const original = randomBytes(64 * MiB);
        const issued = await ok('file_transfer', { path: 'whole/large.bin', direction: 'upload' });
        const idle = memory(daemon.pid, 'VmRSS');
        writeFileSync(`/proc/${daemon.pid}/clear_refs`, '5'); // VmHWM starts again from VmRSS
        const put = await fetch(issued.url, { method: 'PUT', body: original });
        assert.equal(put.status, 201, await put.clone().text());
        assert.deepEqual(await put.json(), { success: true, path: 'whole/large.bin', size: original.length });
        const grown = memory(daemon.pid, 'VmHWM') - idle;
        // ASan keeps freed chunks in its quarantine (256 MB), so there memory is not a measure.
        assert.ok(sanitizerBuild || grown < original.length / 4, `the daemon's peak resident memory grew by ${(grown / MiB).toFixed(1)} MiB for a body of 64 MiB`);
        assert.equal(sha256(readFileSync(join(workspace, 'whole', 'large.bin'))), sha256(original));
        assert.deepEqual(readdirSync(join(workspace, 'whole')), ['large.bin'], 'a temporary file was left');
    }));

    test('a body cut off mid-way leaves nothing under the name and resumes from what reached the disk', () => withDiagnostics(daemon, async () => {
        const original = randomBytes(8 * MiB);
        const issued = await ok('file_transfer', { path: 'cut/off.bin', direction: 'upload' });
        const { pathname, host } = new URL(issued.url);
        await rawPut(issued.url, `PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${original.length}\r\n\r\n`, original, { cutAfter: 3 * MiB });
        // The daemon sees the connection end once it has written what it read.
        let resume;
        for (let attempt = 0; attempt < 50 && !resume; ++attempt) {
            const probe = await fetch(issued.url, { method: 'PUT', headers: { 'content-range': `bytes ${original.length - 1}-${original.length - 1}/${original.length}` }, body: original.subarray(-1) });
            assert.equal(probe.status, 409, await probe.clone().text());
            const received = (await probe.json()).received;
            if (received > 0)
                resume = received;
            else
                await new Promise(wait => setTimeout(wait, 100));
        }
        assert.ok(resume > 0 && resume <= 3 * MiB, `resumes at ${resume}`);
        assert.ok(!existsSync(join(workspace, 'cut', 'off.bin')), 'the cut-off upload has the name');
        const rest = await fetch(issued.url, {
            method: 'PUT', headers: { 'content-range': `bytes ${resume}-${original.length - 1}/${original.length}` }, body: original.subarray(resume),
        });
        assert.equal(rest.status, 201, await rest.clone().text());
        assert.equal(sha256(readFileSync(join(workspace, 'cut', 'off.bin'))), sha256(original));
        assert.deepEqual(readdirSync(join(workspace, 'cut')), ['off.bin']);
    }));

    test('a file over TRANSFER_MAX_MB is refused from its headers, before the body is sent', () => withDiagnostics(daemon, async () => {
        const issued = await ok('file_transfer', { path: 'huge.bin', direction: 'upload' });
        const { pathname, host } = new URL(issued.url);
        // 5 GiB announced, nothing sent: the answer comes without the body (and no 100 Continue).
        const answer = await rawPut(issued.url, `PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${5 * 1024 * MiB}\r\nExpect: 100-continue\r\n\r\n`);
        assert.match(answer, /^HTTP\/1\.1 413 /);
        assert.match(answer, /larger than TRANSFER_MAX_MB/);
        assert.ok(!existsSync(join(workspace, 'huge.bin')));
        assert.deepEqual(readdirSync(workspace).filter(name => name.startsWith('.cmcp-upload-')), []);
    }));

    test('a head that arrives in pieces: a PUT is still streamed, and a request that only began like one reaches the parser whole', () => withDiagnostics(daemon, async () => {
        const issued = await ok('file_transfer', { path: 'pieces.txt', direction: 'upload' });
        const { pathname, host } = new URL(issued.url);
        const put = await rawPut(issued.url, `PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 6\r\n\r\n`, Buffer.from('piece\n'), { cuts: [1, 5, 20, 52, 70] });
        assert.match(put, /^HTTP\/1\.1 201 /);
        assert.equal(readFileSync(join(workspace, 'pieces.txt'), 'utf8'), 'piece\n');
        // "P" and "PUT /" may begin a streamed PUT: held back until they do not, then the parser
        // has them all.
        const asked = [
            [`POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n{}`, /^HTTP\/1\.1 400 [^]*jsonrpc/],
            [`PUT /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\n\r\n`, /^HTTP\/1\.1 405 [^]*Allow: GET, POST, DELETE/],
        ];
        for (const [request, expected] of asked)
            assert.match(await rawPut(issued.url, request, null, { cuts: [1, 5, 30] }), expected);
    }));

    test('a whole small file in one PUT, replacing an existing file in place', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'small.txt', content: 'old\n' });
        const issued = await ok('file_transfer', { path: 'small.txt', direction: 'upload' });
        const put = await fetch(issued.url, { method: 'PUT', body: 'new content\n' });
        assert.equal(put.status, 201);
        assert.equal((await ok('file_read', { path: 'small.txt' })).content, 'new content\n');
    }));
});

describe('file transfers across a crash', () => {
    let sandbox;
    let daemon;
    after(async () => {
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('a daemon started after a crash removes the temporary file of an unfinished upload; its URL is gone', async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-transfer-crash-'));
        const settings = { SANDBOX_ROOT: sandbox, FILE_ALLOWED_EXTENSIONS: 'bin' };
        daemon = await startDaemon({ fixtures: false, settings });
        const workspace = hostWorkspace(sandbox);
        const client = new Client({ name: 'transfer-crash-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        const result = await client.callTool({ name: 'file_transfer', arguments: { path: 'crash/left.bin', direction: 'upload' } });
        assert.ok(!result.isError, result.content?.[0]?.text);
        const { url } = result.structuredContent;
        await client.close();
        const { pathname, host } = new URL(url);
        const body = randomBytes(4 * MiB);
        await rawPut(url, `PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${body.length}\r\n\r\n`, body, { cutAfter: 2 * MiB });
        const temporary = () => (existsSync(join(workspace, 'crash')) ? readdirSync(join(workspace, 'crash')) : []).filter(name => name.startsWith('.cmcp-upload-'));
        assert.equal(temporary().length, 1, 'the cut-off upload has a temporary file');
        await sleep(200); // the daemon has seen the connection end (no matter if not)

        process.kill(daemon.pid, 'SIGKILL');
        await daemon.stop();
        // (The workspace volume, where there is one, is unmounted now: nothing to look at.)
        daemon = await withDiagnostics(daemon, () => startDaemon({ fixtures: false, settings }));
        await withDiagnostics(daemon, async () => {
            assert.deepEqual(temporary(), [], 'the restarted daemon left the half-made upload');
            assert.ok(!existsSync(join(workspace, 'crash', 'left.bin')));
            const again = await fetch(new URL(pathname, `http://127.0.0.1:${daemon.port}`), { method: 'PUT', body: 'x' });
            assert.equal(again.status, 404);
        });
    });
});
