// A new user's first minutes: the repository cloned below a 0700 directory (as under /root),
// the daemon started from the clone with the defaults, and jailed calls answer. With the defaults
// SANDBOX_ROOT, the audit log and the admin socket land inside the clone, below the closed
// directory; only the uid pool is the test's own, as every test daemon's is. The daemon and the
// jail are this build's, copied where `./bin/cmcp run` puts them. Jobs switch to the uid pool, so
// this needs root; it needs the repository to be a git checkout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { cmcpdPath, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';

const repository = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const skip = process.getuid() !== 0 ? 'needs root: jobs switch to host uids of the pool'
    : !existsSync(join(repository, '.git')) ? `${repository} is not a git checkout to clone`
    : spawnSync('git', ['--version']).status !== 0 ? 'git is not installed'
    : false;

test('a clone below a 0700 directory serves jailed calls with the defaults', { skip, timeout: 120_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'cmcp-home-'));
    chmodSync(home, 0o700);
    let daemon;
    try {
        const clone = join(home, 'container-mcp');
        const cloned = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', repository, clone], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(cloned.status, 0, `git clone: ${cloned.stderr}`);
        const built = join(clone, 'build', 'server');
        mkdirSync(join(built, 'jail'), { recursive: true });
        copyFileSync(cmcpdPath(), join(built, 'cmcpd'));
        copyFileSync(join(dirname(cmcpdPath()), 'jail', 'cmcp-jail'), join(built, 'jail', 'cmcp-jail'));
        chmodSync(join(built, 'cmcpd'), 0o755);
        chmodSync(join(built, 'jail', 'cmcp-jail'), 0o755);

        daemon = await startDaemon({ cwd: clone, program: join(built, 'cmcpd'), fixtures: false });
        await withDiagnostics(daemon, async () => {
            assert.ok(existsSync(hostWorkspace(join(clone, 'volume', 'sandbox'))), 'the default SANDBOX_ROOT is not in the clone');
            const client = new Client({ name: 'freshclone-test', version: '1.0.0' });
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            try {
                const command = await client.callTool({ name: 'system_run_command', arguments: { command: 'echo hello from the jail' } });
                assert.ok(!command.isError, JSON.stringify(command.content));
                assert.equal(command.structuredContent.stdout, 'hello from the jail\n');
                const python = await client.callTool({ name: 'system_run_python', arguments: { code: 'print(6 * 7)' } });
                assert.ok(!python.isError, JSON.stringify(python.content));
                assert.equal(python.structuredContent.output, '42\n');
            } finally {
                await client.close();
            }
        });
    } finally {
        await daemon?.stop();
        rmSync(home, { recursive: true, force: true });
    }
});
