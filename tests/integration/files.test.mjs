// The file tools and the workspace resources through the official TypeScript SDK client over
// Streamable HTTP: every tool's happy path and its refusals, a traversal battery that must touch
// nothing outside the workspace, resources/list and resources/read, subscriptions, and two
// writers racing with if_match.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport, McpError } from './lib/sdk.mjs';
import { toolCalls } from './lib/tools.mjs';
import { eventually, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';

const sha256 = text => createHash('sha256').update(text).digest('hex');

describe('file tools', () => {
    let daemon;
    let client;
    let sandbox;
    let workspace;
    let outside;
    const updates = [];

    const connect = async () => {
        const c = new Client({ name: 'files-test', version: '1.0.0' });
        await c.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
        return c;
    };
    const { call, ok, refused } = toolCalls(() => client);
    const outsideIntact = () => {
        assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'SECRET');
        assert.deepEqual(readdirSync(outside).sort(), ['secret.txt']);
    };

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-files-'));
        // A sibling whose name starts like the workspace's.
        outside = join(sandbox, 'workspace-outside');
        mkdirSync(outside);
        writeFileSync(join(outside, 'secret.txt'), 'SECRET');
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, FILE_MAX_SIZE_MB: 1 } });
        workspace = hostWorkspace(sandbox);
        client = await connect();
        client.fallbackNotificationHandler = async notification => { updates.push(notification); };
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('the file tools are listed with input and output schemas', () => withDiagnostics(daemon, async () => {
        const tools = (await client.listTools()).tools.filter(tool => tool.name.startsWith('file_'));
        const names = tools.map(tool => tool.name).sort();
        assert.deepEqual(names, ['file_delete', 'file_edit', 'file_list', 'file_move', 'file_read', 'file_search', 'file_transfer', 'file_write']);
        for (const tool of tools) {
            assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
            assert.equal(tool.inputSchema.type, 'object');
        }
    }));

    test('write, read, list, move and delete', () => withDiagnostics(daemon, async () => {
        const written = await ok('file_write', { path: 'data/notes.md', content: 'one\ntwo\nthree\n' });
        assert.equal(written.path, 'data/notes.md');
        assert.equal(written.sha256, sha256('one\ntwo\nthree\n'));
        assert.equal(readFileSync(join(workspace, 'data/notes.md'), 'utf8'), 'one\ntwo\nthree\n');

        const read = await ok('file_read', { path: '/data/notes.md' });
        assert.equal(read.content, 'one\ntwo\nthree\n');
        assert.equal(read.size, 14);
        assert.equal(typeof read.modified, 'number');
        const window = await ok('file_read', { path: 'data/notes.md', offset: 1, limit: 1 });
        assert.equal(window.content, 'two\n');
        assert.equal(window.total_lines, 3);
        assert.equal(window.end_of_file, false);

        const binary = Buffer.from([0, 255, 1, 254]).toString('base64');
        await ok('file_write', { path: 'data/blob.txt', content: binary, encoding: 'base64' });
        assert.equal((await ok('file_read', { path: 'data/blob.txt', encoding: 'base64' })).content, binary);

        const listing = await ok('file_list', { path: 'data' });
        assert.equal(listing.path, 'data');
        assert.deepEqual(listing.entries.map(entry => entry.name), ['blob.txt', 'notes.md']);
        const notes = listing.entries[1];
        assert.deepEqual({ ...notes, modified: 0 }, { name: 'notes.md', path: 'data/notes.md', is_directory: false, is_symlink: false, size: 14, modified: 0 });
        const root = await ok('file_list', {});
        assert.equal(root.path, '/');
        assert.deepEqual(root.entries.map(entry => [entry.name, entry.is_directory, entry.size]), [['data', true, null]]);
        const globbed = await ok('file_list', { pattern: '*.md', recursive: true });
        assert.deepEqual(globbed.entries.map(entry => entry.path), ['data/notes.md']);

        const moved = await ok('file_move', { source: 'data/notes.md', destination: 'archive/notes.txt' });
        assert.deepEqual({ source: moved.source, destination: moved.destination }, { source: 'data/notes.md', destination: 'archive/notes.txt' });
        assert.ok(existsSync(join(workspace, 'archive/notes.txt')));
        await ok('file_write', { path: 'archive/other.txt', content: 'x' });
        await refused('file_move', { source: 'archive/other.txt', destination: 'archive/notes.txt' }, /already exists; pass overwrite/);
        await ok('file_move', { source: 'archive/other.txt', destination: 'archive/notes.txt', overwrite: true });
        assert.equal(readFileSync(join(workspace, 'archive/notes.txt'), 'utf8'), 'x');

        assert.equal((await ok('file_delete', { path: 'archive/notes.txt' })).path, 'archive/notes.txt');
        assert.ok(!existsSync(join(workspace, 'archive/notes.txt')));
        await refused('file_delete', { path: 'archive/notes.txt' }, /no such file/);
        await refused('file_delete', { path: 'data' }, /not empty/);
    }));

    test('refusals name the problem', () => withDiagnostics(daemon, async () => {
        await refused('file_read', { path: 'missing.txt' }, /missing\.txt: no such file/);
        await refused('file_write', { path: 'run.sh', content: 'x' }, /extension '\.sh' is not in FILE_ALLOWED_EXTENSIONS/);
        await refused('file_write', { path: 'Makefile', content: 'x' }, /no extension/);
        await refused('file_write', { path: 'a\u0000.txt', content: 'x' }, /NUL/);
        await refused('file_write', { path: '\ud800.txt', content: 'x' }, /not valid Unicode/);
        await refused('file_write', { path: `${'x'.repeat(300)}.txt`, content: 'x' }, /too long/);
        await refused('file_write', { path: 'a/'.repeat(2100) + 'b.txt', content: 'x' }, /path is too long/);
        await refused('file_write', { path: 'big.txt', content: 'x'.repeat(1024 * 1024 + 1) }, /too large/);
        await refused('file_write', { path: 'bad.txt', content: '!!', encoding: 'base64' }, /not valid base64/);
        await refused('file_write', { path: 'bad.txt', content: 'x', encoding: 'klingon' }, /unknown encoding/);
        mkdirSync(join(workspace, 'folder.txt'));
        await refused('file_read', { path: 'folder.txt' }, /not a regular file: it is a directory/);
        await refused('file_list', { path: 'data/blob.txt' }, /not a directory/);
        await refused('file_move', { source: 'data/blob.txt', destination: 'data/blob.exe' }, /extension '\.exe'/);
        await refused('file_move', { source: 'data/blob.txt', destination: 'data/blob.txt' }, /same path/);
        writeFileSync(join(workspace, 'data/invalid.txt'), Buffer.from([0xff, 0xfe]));
        await refused('file_read', { path: 'data/invalid.txt' }, /not valid utf-8; read it with encoding "base64"/);
        // Schema violations are tool errors too (protocol 2025-11-25).
        const missing = await call('file_read', {});
        assert.equal(missing.isError, true);
        assert.match(missing.content[0].text, /path/);
        assert.deepEqual(readdirSync(workspace).filter(name => name.startsWith('.')), [], 'no temporary file is left');
    }));

    test('traversal battery: nothing outside the workspace is touched', () => withDiagnostics(daemon, async () => {
        mkdirSync(join(workspace, 'links'), { recursive: true });
        symlinkSync(join(outside, 'secret.txt'), join(workspace, 'links/absolute.txt'));
        symlinkSync('../../workspace-outside/secret.txt', join(workspace, 'links/relative.txt'));
        symlinkSync('..', join(workspace, 'links/parent'));
        symlinkSync('/proc/self/root', join(workspace, 'links/procroot'));
        symlinkSync(outside, join(workspace, 'links/outdir'));
        await refused('file_write', { path: 'links/outdir/new.txt', content: 'x' }, /escapes the workspace/);
        await refused('file_list', { path: 'links/outdir' }, /escapes the workspace/);
        await refused('file_read', { path: 'links/absolute.txt' }, /escapes the workspace/);
        const links = await ok('file_list', { path: 'links', recursive: true });
        assert.ok(links.entries.every(entry => entry.is_symlink && !entry.path.includes('secret')), 'links are listed, not followed');
        // Then every form through every tool; file_delete may remove a link itself, never its target.
        const paths = [
            '../workspace-outside/secret.txt', '/../workspace-outside/secret.txt', 'data/../../workspace-outside/secret.txt',
            `${outside}/secret.txt`, '..%2fworkspace-outside%2fsecret.txt', '%2e%2e/workspace-outside/secret.txt',
            '%252e%252e/workspace-outside/secret.txt', '..\\workspace-outside\\secret.txt',
            '../workspace/../workspace-outside/secret.txt', 'links/absolute.txt', 'links/relative.txt',
            'links/parent/../workspace-outside/secret.txt', 'links/parent/parent.txt',
            `links/procroot${outside}/secret.txt`, 'links/outdir/secret.txt', '/proc/self/root/etc/hostname.txt',
        ];
        for (const path of paths) {
            const read = await call('file_read', { path });
            assert.equal(read.isError, true, `file_read ${path} must fail`);
            assert.ok(!JSON.stringify(read).includes('SECRET'), `file_read ${path} leaked`);
            const write = await call('file_write', { path, content: 'PWNED' });
            // Encoded forms are plain names inside the workspace and may be created there.
            if (!write.isError)
                assert.ok(existsSync(join(workspace, write.structuredContent.path)), `${path} landed inside`);
            await call('file_delete', { path });
            await call('file_move', { source: path, destination: 'stolen.txt' });
            await call('file_move', { source: 'data/blob.txt', destination: path }).then(() =>
                existsSync(join(workspace, 'data/blob.txt')) || call('file_move', { source: path, destination: 'data/blob.txt' }));
            outsideIntact();
        }
        outsideIntact();
    }));

    test('FIFOs and devices are refused at once', () => withDiagnostics(daemon, async () => {
        execFileSync('mkfifo', [join(workspace, 'pipe.txt')]);
        const started = Date.now();
        await refused('file_read', { path: 'pipe.txt' }, /FIFO/);
        await refused('file_write', { path: 'pipe.txt', content: 'x' }, /FIFO/);
        assert.ok(Date.now() - started < 2000);
        if (process.getuid() === 0) {
            execFileSync('mknod', [join(workspace, 'zero.txt'), 'c', '1', '5']);
            await refused('file_read', { path: 'zero.txt' }, /character device/);
        }
    }));

    test('concurrent writers: if_match lets exactly one win', () => withDiagnostics(daemon, async () => {
        const base = await ok('file_write', { path: 'shared.json', content: '{"v":0}' });
        const other = await connect();
        try {
            const attempts = [];
            for (let i = 0; i < 8; ++i) {
                const writer = i % 2 ? other : client;
                attempts.push(writer.callTool({ name: 'file_write', arguments: { path: 'shared.json', content: `{"v":${i + 1}}`, if_match: base.sha256 } }));
            }
            const results = await Promise.all(attempts);
            const winners = results.filter(result => !result.isError);
            assert.equal(winners.length, 1, 'exactly one writer wins');
            for (const loser of results.filter(result => result.isError))
                assert.match(loser.structuredContent.error, /if_match mismatch/);
            const final = await ok('file_read', { path: 'shared.json' });
            assert.equal(final.sha256, winners[0].structuredContent.sha256);
            await refused('file_write', { path: 'shared.json', content: 'x', if_match: '' }, /exists/);
            await ok('file_write', { path: 'fresh.json', content: '{}', if_match: '' });
        } finally {
            await other.close();
        }
    }));

    test('the workspace as resources: list, read, template, subscribe', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'res/hello world.txt', content: 'hello' });
        const { resourceTemplates } = await client.listResourceTemplates();
        assert.ok(resourceTemplates.some(t => t.uriTemplate === 'file:///{+path}'));
        const { resources } = await client.listResources();
        const hello = resources.find(resource => resource.name === 'res/hello world.txt');
        assert.ok(hello, `listed: ${resources.map(r => r.uri).join(', ')}`);
        assert.equal(hello.uri, 'file:///res/hello%20world.txt');
        assert.equal(hello.mimeType, 'text/plain');
        assert.equal(hello.size, 5);
        assert.ok(!resources.some(resource => resource.uri.includes('links')), 'symbolic links are not listed');
        const read = await client.readResource({ uri: hello.uri });
        assert.deepEqual(read.contents, [{ uri: hello.uri, mimeType: 'text/plain', text: 'hello' }]);
        const blob = await client.readResource({ uri: 'file:///data/blob.txt' });
        assert.equal(blob.contents[0].blob, Buffer.from([0, 255, 1, 254]).toString('base64'));
        await assert.rejects(client.readResource({ uri: 'file:///../workspace-outside/secret.txt' }), error => error instanceof McpError && /escapes/.test(error.message));
        await assert.rejects(client.readResource({ uri: 'file:///links/absolute.txt' }), McpError);

        await client.subscribeResource({ uri: hello.uri });
        await ok('file_write', { path: 'res/hello world.txt', content: 'changed' });
        const updated = await eventually(() => updates.find(n => n.method === 'notifications/resources/updated' && n.params.uri === hello.uri));
        assert.ok(updated, 'a subscriber hears of the change');
        assert.equal((await client.readResource({ uri: hello.uri })).contents[0].text, 'changed');
    }));
});
