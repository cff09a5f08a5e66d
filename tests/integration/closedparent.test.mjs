// Jobs run wherever the daemon's SANDBOX_ROOT is, also below a directory the jobs' uids cannot
// search: a checkout under /root (0700), a mktemp directory. The jail opens the workspace while
// it is still privileged, so a job never needs to pass through the directories above it. Here
// SANDBOX_ROOT sits below a fresh 0700 directory, and a command, Python and a background job
// (read back with the job tools) run through the official SDK client, with the shared workspace
// and with a workspace per session. Jobs switch to the uid pool, so this needs root.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { sleep, startDaemon, withDiagnostics, hostWorkspace } from './lib/daemon.mjs';

const needsRoot = process.getuid() === 0 ? {} : { skip: 'needs root: jobs switch to host uids of the pool' };
const REQUEST_TIMEOUT_MS = 30_000;

for (const workspaceMode of ['shared', 'session']) {
    describe(`jobs below a 0700 directory (SANDBOX_WORKSPACE=${workspaceMode})`, needsRoot, () => {
        let closed;
        let daemon;
        let client;

        const ok = async (tool, args) => {
            const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
            assert.ok(!result.isError, `${tool} ${JSON.stringify(args)} failed: ${result.content?.[0]?.text}`);
            assert.equal(result.structuredContent.success, true, `${tool}: ${JSON.stringify(result.structuredContent)}`);
            return result.structuredContent;
        };

        before(async () => {
            closed = mkdtempSync(join(tmpdir(), 'cmcp-closed-'));
            chmodSync(closed, 0o700);
            daemon = await startDaemon({
                fixtures: false,
                settings: {
                    SANDBOX_ROOT: join(closed, 'volume', 'sandbox'), SANDBOX_WORKSPACE: workspaceMode,
                    BASH_ALLOWED_COMMANDS: 'echo,cat,pwd,sleep',
                    BASH_TIMEOUT_DEFAULT: 10, BASH_TIMEOUT_MAX: 10, PYTHON_TIMEOUT_DEFAULT: 10, PYTHON_TIMEOUT_MAX: 10,
                },
            });
            client = new Client({ name: 'closed-parent-test', version: '1.0.0' });
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            await client.listTools();
        });

        after(async () => {
            await client?.close();
            await daemon?.stop();
            if (closed)
                rmSync(closed, { recursive: true, force: true });
        });

        test('the directory above SANDBOX_ROOT stays 0700', () => {
            assert.equal(statSync(closed).mode & 0o777, 0o700);
        });

        test('a command runs in the workspace and writes to it', () => withDiagnostics(daemon, async () => {
            const result = await ok('system_run_command', { command: 'echo written > made.txt; cat made.txt; pwd' });
            assert.equal(result.exit_code, 0, JSON.stringify(result));
            assert.equal(result.stdout, 'written\n/workspace\n');
            if (workspaceMode === 'shared')
                assert.equal(readFileSync(join(hostWorkspace(join(closed, 'volume', 'sandbox')), 'made.txt'), 'utf8'), 'written\n');
        }));

        test('Python runs and reads what the command wrote', () => withDiagnostics(daemon, async () => {
            const result = await ok('system_run_python', { code: "import os\nprint(open('made.txt').read().strip(), os.getcwd())\n_ = 6 * 7" });
            assert.equal(result.error, '', JSON.stringify(result));
            assert.equal(result.output, 'written /workspace\n');
            assert.equal(result.result, 42);
        }));

        test('a background job runs and the job tools read its end', () => withDiagnostics(daemon, async () => {
            const job = await ok('system_run_command', { command: 'sleep 1; echo background done; cat made.txt', background: true });
            assert.match(job.job_id, /^job_[0-9a-f]{32}$/);
            const deadline = Date.now() + 20_000;
            let status;
            for (;;) {
                status = await ok('job_status', { job_id: job.job_id });
                if (status.state !== 'running' || Date.now() > deadline)
                    break;
                await sleep(200);
            }
            assert.equal(status.state, 'exited', JSON.stringify(status));
            assert.equal(status.result.exit_code, 0, JSON.stringify(status));
            const output = await ok('job_output', { job_id: job.job_id, offset: 0, limit: 4096 });
            assert.equal(output.output, 'background done\nwritten\n');
            assert.equal(output.complete, true);
        }));
    });
}
