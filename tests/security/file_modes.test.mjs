// file_write, run by the root daemon, never leaves a setuid, setgid or sticky file on the host.
// A job owns its files and may mark one setuid (or the file is planted there some other way);
// replacing its content through file_write must not hand the host a setuid file whose content
// the model chose. Ownership is kept, so this needs root to be meaningful; without root the
// suite skips, saying so.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics, hostWorkspace } from '../integration/lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: the daemon keeps the owner of a file it replaces only as root' };

describe('file_write and special permission bits', needsRoot, () => {
    let scratch;
    let daemon;
    let client;
    let workspace;

    before(async () => {
        scratch = mkdtempSync(join(tmpdir(), 'cmcp-modes-'));
        const sandbox = join(scratch, 'sandbox');
        daemon = await startDaemon({ fixtures: false, settings: { SANDBOX_ROOT: sandbox } });
        workspace = hostWorkspace(sandbox);
        client = new Client({ name: 'modes', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        rmSync(scratch, { recursive: true, force: true });
    });

    test('a setuid, setgid, sticky file loses those bits and keeps the rest', () => withDiagnostics(daemon, async () => {
        mkdirSync(workspace, { recursive: true });
        const planted = join(workspace, 'helper.py');
        writeFileSync(planted, '#!/bin/sh\n');
        chownSync(planted, 100123, 100123);
        chmodSync(planted, 0o7755);
        assert.equal(statSync(planted).mode & 0o7777, 0o7755, 'the test could not plant a setuid file');

        const written = await client.callTool({ name: 'file_write', arguments: { path: 'helper.py', content: '#!/bin/sh\nid\n' } });
        assert.ok(!written.isError, JSON.stringify(written));
        const after = statSync(planted);
        assert.equal(after.mode & 0o7777, 0o755, `mode ${(after.mode & 0o7777).toString(8)} after file_write`);
        assert.equal(after.uid, 100123, 'the owner is kept');
    }));
});
