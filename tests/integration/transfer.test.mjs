// file_transfer through the official SDK client and plain HTTP: a file larger than
// FILE_MAX_SIZE_MB (and than MCP_MAX_BODY_MB) is downloaded from a URL of the daemon's HTTP port,
// the download is broken off and resumed with a Range, and the bytes are the file's; an upload
// in parts with Content-Range appears under its name only once the last part is in, atomically,
// a part out of order is answered 409 with what has arrived, and the spent URL is refused. On the
// workspace volume, an upload past a named workspace's quota is refused and leaves nothing.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { hostWorkspace, startDaemon, withDiagnostics } from './lib/daemon.mjs';

const MiB = 1024 * 1024;
const sha256 = bytes => createHash('sha256').update(bytes).digest('hex');

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
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, FILE_MAX_SIZE_MB: 1, MCP_MAX_BODY_MB: 2 } });
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

    test('a whole small file in one PUT, replacing an existing file in place', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'small.txt', content: 'old\n' });
        const issued = await ok('file_transfer', { path: 'small.txt', direction: 'upload' });
        const put = await fetch(issued.url, { method: 'PUT', body: 'new content\n' });
        assert.equal(put.status, 201);
        assert.equal((await ok('file_read', { path: 'small.txt' })).content, 'new content\n');
    }));
});
