// file_edit, file_search and the paginated resources/list through the official TypeScript SDK
// client over Streamable HTTP: the diff a model gets back, what stays on disk (line endings, a
// dry run, a refused edit), search limits and refusals, and walking resources/list by cursor.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport, McpError } from './lib/sdk.mjs';
import { toolCalls } from './lib/tools.mjs';
import { startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';

describe('file_edit, file_search and resources/list pages', () => {
    let daemon;
    let client;
    let sandbox;
    let workspace;

    const { ok, refused, invalidArguments } = toolCalls(() => client);
    const onDisk = path => readFileSync(join(workspace, path), 'utf8');

    before(async () => {
        sandbox = mkdtempSync(join(tmpdir(), 'cmcp-files-edit-'));
        mkdirSync(join(sandbox, 'outside'));
        writeFileSync(join(sandbox, 'outside', 'secret.txt'), 'needle outside\n');
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox, FILE_MAX_SIZE_MB: 1 } });
        workspace = hostWorkspace(sandbox);
        client = new Client({ name: 'files-edit-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(sandbox, { recursive: true, force: true });
    });

    test('file_edit returns a unified diff and keeps the file\'s CRLF', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'src/app.py', content: 'def main():  \r\n    return 1\r\n\r\nmain()\r\n' });
        const { sha256 } = await ok('file_read', { path: 'src/app.py' });
        const edited = await ok('file_edit', {
            path: 'src/app.py',
            if_match: sha256,
            edits: [{ old_text: 'def main():\n    return 1\n', new_text: 'def main():\n    return 2\n' },
                    { old_text: 'return 2', new_text: 'return 2  # two' }],
        });
        assert.equal(edited.written, true);
        assert.deepEqual(edited.edits, [{ line: 1, match: 'whitespace' }, { line: 2, match: 'exact' }]);
        assert.ok(edited.diff.startsWith('--- a/src/app.py\n+++ b/src/app.py\n@@ -1,4 +1,4 @@\n'), edited.diff);
        for (const line of ['-def main():  ', '-    return 1', '+def main():', '+    return 2  # two', ' main()'])
            assert.ok(edited.diff.split('\n').includes(line), `diff has ${JSON.stringify(line)}:\n${edited.diff}`);
        assert.ok(!edited.diff.includes('\r'), 'line endings are not shown in the diff');
        assert.equal(onDisk('src/app.py'), 'def main():\r\n    return 2  # two\r\n\r\nmain()\r\n');
        assert.equal((await ok('file_read', { path: 'src/app.py' })).sha256, edited.sha256);
        // The old hash no longer matches.
        await refused('file_edit', { path: 'src/app.py', if_match: sha256, edits: [{ old_text: 'main', new_text: 'x' }] }, /if_match mismatch/);
    }));

    test('dry_run and refused edits leave the file as it was', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'notes.md', content: 'x = 1\ny = 2\nx = 1\n' });
        const dry = await ok('file_edit', { path: 'notes.md', dry_run: true, edits: [{ old_text: 'y = 2', new_text: 'y = 3' }] });
        assert.equal(dry.written, false);
        assert.match(dry.diff, /^-y = 2\n\+y = 3$/m);
        assert.equal(onDisk('notes.md'), 'x = 1\ny = 2\nx = 1\n');
        await refused('file_edit', { path: 'notes.md', edits: [{ old_text: 'y = 2', new_text: 'y = 3' }, { old_text: 'x = 1', new_text: 'x = 0' }] },
                      /edits\[1\]: old_text occurs 2 times \(first at lines 1 and 3\)/);
        await refused('file_edit', { path: 'notes.md', edits: [{ old_text: 'z = 9', new_text: '' }] }, /edits\[0\]: old_text was not found/);
        await invalidArguments('file_edit', { path: 'notes.md', edits: [{ old_text: '', new_text: 'a' }] }, /edits\[0\]\.old_text|edits\[0\]: old_text is empty/);
        await refused('file_edit', { path: '../outside/secret.txt', edits: [{ old_text: 'needle', new_text: 'pin' }] }, /escape|outside|\.\./);
        await refused('file_edit', { path: 'run.sh', edits: [{ old_text: 'a', new_text: 'b' }] }, /extension/);
        assert.equal(onDisk('notes.md'), 'x = 1\ny = 2\nx = 1\n');
        assert.equal(readFileSync(join(sandbox, 'outside', 'secret.txt'), 'utf8'), 'needle outside\n');
    }));

    test('file_search: literal by default, regex on request, limits and refusals', () => withDiagnostics(daemon, async () => {
        await ok('file_write', { path: 'find/a.py', content: 'def f(x):\n    return f(x)\n' });
        await ok('file_write', { path: 'find/deep/b.txt', content: 'f(x) again\n' });
        writeFileSync(join(workspace, 'find', 'blob.txt'), Buffer.from('f(x)\0binary'));
        symlinkSync(join(sandbox, 'outside'), join(workspace, 'find', 'out'));
        symlinkSync(join(sandbox, 'outside', 'secret.txt'), join(workspace, 'find', 'secret.txt'));

        const literal = await ok('file_search', { pattern: 'f(x)', path: 'find' });
        assert.deepEqual(literal.matches.map(m => `${m.path}:${m.line}:${m.column}:${m.text}`),
                         ['find/a.py:1:5:def f(x):', 'find/a.py:2:12:    return f(x)', 'find/deep/b.txt:1:1:f(x) again']);
        assert.equal(literal.truncated, false);
        assert.equal(literal.skipped_binary, 1);
        assert.equal(literal.files_scanned, 3);

        const regex = await ok('file_search', { pattern: '^def \\w+\\(', path: '/find', regex: true, glob: '*.py' });
        assert.deepEqual(regex.matches.map(m => m.path), ['find/a.py']);

        const capped = await ok('file_search', { pattern: 'f(x)', path: 'find', max_results: 2 });
        assert.equal(capped.matches.length, 2);
        assert.equal(capped.truncated, true);
        assert.equal(capped.truncated_by, 'max_results');

        const outside = await ok('file_search', { pattern: 'needle' });
        assert.deepEqual(outside.matches, [], 'no symbolic link is followed to the outside');

        await refused('file_search', { pattern: 'f(x', regex: true }, /pattern is not a valid regular expression: .* at offset 3/);
        await refused('file_search', { pattern: 'x', path: 'find/out' }, /escape|outside|link/);
    }));

    test('resources/list pages through the workspace by cursor', () => withDiagnostics(daemon, async () => {
        mkdirSync(join(workspace, 'many'));
        for (let i = 0; i < 230; ++i)
            writeFileSync(join(workspace, 'many', `f${String(i).padStart(3, '0')}.txt`), 'x');
        const seen = [];
        let cursor;
        let pages = 0;
        do {
            const page = await client.listResources(cursor ? { cursor } : {});
            assert.ok(page.resources.length > 0 && page.resources.length <= 100, `page of ${page.resources.length}`);
            seen.push(...page.resources.map(r => r.uri));
            cursor = page.nextCursor;
            ++pages;
        } while (cursor && pages < 20);
        assert.equal(cursor, undefined, 'the last page has no nextCursor');
        assert.ok(pages >= 3, `${pages} pages`);
        assert.equal(new Set(seen).size, seen.length, 'no resource is listed twice');
        for (let i = 0; i < 230; ++i)
            assert.ok(seen.includes(`file:///many/f${String(i).padStart(3, '0')}.txt`), `f${i} listed`);
        await assert.rejects(client.listResources({ cursor: 'not-a-cursor' }), error => error instanceof McpError && /cursor/.test(error.message));
    }));
});
