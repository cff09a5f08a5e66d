// What the workspace quota needs from the machine, and a daemon that has it: tests of the
// quota exit 77 (ctest's skip) with the reason when this machine cannot have one, instead of
// passing without having tested anything.
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './sdk.mjs';
import { startDaemon } from './daemon.mjs';

// Why this machine cannot give workspaces a quota; null when it can.
export function quotaUnavailableReason() {
    if (process.getuid() !== 0)
        return 'needs root: the workspace volume is loop-mounted, and jobs switch to the uid pool';
    if (!readFileSync('/proc/filesystems', 'utf8').split('\n').some(line => line.trim() === 'btrfs'))
        return 'the kernel has no btrfs';
    if (!existsSync('/dev/loop-control'))
        return 'no /dev/loop-control';
    if (!['/usr/sbin/mkfs.btrfs', '/sbin/mkfs.btrfs', '/usr/bin/mkfs.btrfs'].some(existsSync))
        return 'mkfs.btrfs not found (apt-get install btrfs-progs)';
    return null;
}

// Ends the test file as skipped (exit 77) when the quota cannot be had here.
export function skipWithoutQuota() {
    const reason = quotaUnavailableReason();
    if (reason) {
        console.log(`SKIP: ${reason}`);
        process.exit(77);
    }
}

// A daemon whose workspaces hold at most `quotaMb`, on a small volume in a fresh SANDBOX_ROOT.
// `sandbox`: an existing SANDBOX_ROOT (a restart) instead of a fresh one.
export async function startQuotaDaemon({ quotaMb, settings = {}, sandbox = mkdtempSync(join(tmpdir(), 'cmcp-quota-')) }) {
    chmodSync(sandbox, 0o755);
    const daemon = await startDaemon({
        fixtures: false,
        settings: {
            SANDBOX_ROOT: sandbox, SANDBOX_WORKSPACE_QUOTA_MB: quotaMb, SANDBOX_WORKSPACE_VOLUME_GB: 2,
            BASH_TIMEOUT_DEFAULT: 30, BASH_TIMEOUT_MAX: 30, PYTHON_TIMEOUT_DEFAULT: 30, PYTHON_TIMEOUT_MAX: 30,
            ...settings,
        },
    });
    return { daemon, sandbox };
}

// An SDK client session: call (the whole result), ok (structuredContent of a success).
// `token`: the bearer token of a principal (MCP_PRINCIPALS_FILE).
export async function quotaSession(daemon, name = 'quota', { token } = {}) {
    const client = new Client({ name, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url),
        token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined);
    await client.connect(transport);
    await client.listTools();
    const call = (tool, args) => client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
    const ok = async (tool, args) => {
        const result = await call(tool, args);
        if (result.isError)
            throw new Error(`${tool} ${JSON.stringify(args).slice(0, 200)} failed: ${result.content?.[0]?.text}`);
        return result.structuredContent;
    };
    return { client, transport, call, ok, close: () => client.close().catch(() => {}) };
}
