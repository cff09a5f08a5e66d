// The URLs of file_transfer, attacked with plain HTTP: another principal's bearer token, no
// token, a guessed token, a disallowed Origin, the wrong method, a spent upload URL replayed, an
// expired URL; and the file they reach: paths above the workspace, symbolic links to a host file (there when the URL
// is asked for, or swapped in afterwards), an upload through a linked directory. The host file
// must be neither read nor written. Runs without root (no job starts).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { hostWorkspace, sleep, startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';

const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-9876543210' };
const digest = text => createHash('sha256').update(text).digest('hex');
const SECRET = 'the host file, which no URL may reach\n';

describe('file transfer URLs', () => {
    let scratch;
    let daemon;
    let workspace;
    let outside;
    const clients = [];

    const session = async principal => {
        const client = new Client({ name: `${principal}-transfer`, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url),
            { requestInit: { headers: { authorization: `Bearer ${tokens[principal]}` } } }));
        clients.push(client);
        return async (name, args) => client.callTool({ name, arguments: args });
    };
    const as = principal => ({ authorization: `Bearer ${tokens[principal]}` });
    const urlOf = async (call, path, direction) => {
        const result = await call('file_transfer', { path, direction });
        assert.ok(!result.isError, result.content?.[0]?.text);
        return result.structuredContent.url;
    };

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-transfer-urls-'));
        outside = join(scratch, 'outside');
        mkdirSync(outside);
        writeFileSync(join(outside, 'secret.txt'), SECRET);
        const principals = join(scratch, 'principals');
        writeFileSync(principals, `alice ${digest(tokens.alice)}\nbob ${digest(tokens.bob)}\n`);
        const sandbox = join(scratch, 'sandbox');
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, MCP_PRINCIPALS_FILE: principals, TRANSFER_URL_SECONDS: 2 } });
        workspace = hostWorkspace(sandbox);
    });
    after(async () => {
        for (const client of clients)
            await client.close().catch(() => {});
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test("another principal's token, no token and a guessed token reach nothing", () => withDiagnostics(daemon, async () => {
        const alice = await session('alice');
        writeFileSync(join(workspace, 'mine.txt'), 'alice only\n');
        const url = await urlOf(alice, 'mine.txt', 'download');
        assert.equal(await (await fetch(url, { headers: as('alice') })).text(), 'alice only\n');
        const bobs = await fetch(url, { headers: as('bob') });
        const guessed = await fetch(url.replace(/tr_[0-9a-f]{32}$/, `tr_${'0'.repeat(32)}`), { headers: as('bob') });
        assert.equal(bobs.status, 404);
        assert.equal(guessed.status, 404);
        assert.equal(await bobs.text(), await guessed.text(), "another principal's URL answers as a guessed one");
        assert.equal((await fetch(url)).status, 401);
        // Nor may Bob upload through Alice's upload URL.
        const upload = await urlOf(alice, 'mine.txt', 'upload');
        assert.equal((await fetch(upload, { method: 'PUT', headers: as('bob'), body: 'bob was here' })).status, 404);
        // Nor anyone without a token, or through a Host or Origin the door does not allow: an
        // upload's body is streamed past Qt's parser, and the same checks come before it.
        assert.equal((await fetch(upload, { method: 'PUT', body: 'no token' })).status, 401);
        assert.equal((await fetch(upload, { method: 'PUT', headers: { ...as('alice'), origin: 'http://evil.example' }, body: 'rebound' })).status, 403);
        assert.equal((await fetch(upload, { method: 'PUT', headers: as('bob'), body: 'x'.repeat(4 * 1024 * 1024) })).status, 404);
        assert.equal(readFileSync(join(workspace, 'mine.txt'), 'utf8'), 'alice only\n');
        assert.deepEqual(readdirSync(workspace).filter(name => name.startsWith('.cmcp-upload-')), [], 'a refused upload left a temporary file');
    }));

    test('each URL does its one thing once it is spent, and nothing after it expires', () => withDiagnostics(daemon, async () => {
        const alice = await session('alice');
        const download = await urlOf(alice, 'mine.txt', 'download');
        assert.equal((await fetch(download, { method: 'PUT', headers: as('alice'), body: 'x' })).status, 405);
        const upload = await urlOf(alice, 'fresh.txt', 'upload');
        assert.equal((await fetch(upload, { headers: as('alice') })).status, 405);
        assert.equal((await fetch(upload, { method: 'PUT', headers: as('alice'), body: 'first\n' })).status, 201);
        const replay = await fetch(upload, { method: 'PUT', headers: as('alice'), body: 'replayed\n' });
        assert.equal(replay.status, 410);
        assert.equal(readFileSync(join(workspace, 'fresh.txt'), 'utf8'), 'first\n');
        // TRANSFER_URL_SECONDS is 2 here.
        const later = await urlOf(alice, 'mine.txt', 'download');
        await sleep(2200);
        assert.equal((await fetch(later, { headers: as('alice') })).status, 404);
        assert.equal((await fetch(download, { headers: as('alice') })).status, 404);
    }));

    test('no URL reaches a file outside the workspace', () => withDiagnostics(daemon, async () => {
        const alice = await session('alice');
        for (const path of ['../outside/secret.txt', '../../outside/secret.txt', `../${'../'.repeat(8)}${join(outside, 'secret.txt')}`]) {
            for (const direction of ['download', 'upload']) {
                const refused = await alice('file_transfer', { path, direction });
                assert.equal(refused.isError, true, `${direction} ${path}`);
            }
        }
        // A link to the host file, there when the URL is asked for.
        symlinkSync(join(outside, 'secret.txt'), join(workspace, 'link.txt'));
        assert.equal((await alice('file_transfer', { path: 'link.txt', direction: 'download' })).isError, true);
        assert.equal((await alice('file_transfer', { path: 'link.txt', direction: 'upload' })).isError, true);
        // A file swapped for such a link after the URL was given.
        writeFileSync(join(workspace, 'swap.txt'), 'harmless\n');
        const swapped = await urlOf(alice, 'swap.txt', 'download');
        unlinkSync(join(workspace, 'swap.txt'));
        symlinkSync(join(outside, 'secret.txt'), join(workspace, 'swap.txt'));
        const read = await fetch(swapped, { headers: as('alice') });
        assert.notEqual(read.status, 200);
        assert.doesNotMatch(await read.text(), /no URL may reach/);
        // An upload through a linked directory.
        symlinkSync(outside, join(workspace, 'dirlink'));
        assert.equal((await alice('file_transfer', { path: 'dirlink/secret.txt', direction: 'upload' })).isError, true);
        assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), SECRET);
    }));
});
