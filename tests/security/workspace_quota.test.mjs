// The workspace quota cannot be escaped from inside a job. Through tool calls only, a job tries
// every way to hold more than SANDBOX_WORKSPACE_QUOTA_MB: hard links to one file, sparse files
// written far apart, fallocate, a flood of small files (no inode limit exists on btrfs: their
// metadata counts against the same byte limit), and a subvolume or snapshot of its own inside
// the workspace, which would be a qgroup outside the limit (the jail's seccomp filter refuses
// those ioctls, also with garbage in the upper half of the request). After each, the kernel's
// own count (btrfs qgroup show) of what the workspace refers to is within the quota. Needs root,
// btrfs and loop devices; exits 77 (skipped) otherwise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { eventually, withDiagnostics } from '../integration/lib/daemon.mjs';
import { quotaSession, skipWithoutQuota, startQuotaDaemon } from '../integration/lib/quota.mjs';

skipWithoutQuota();

const QUOTA_MB = 32;
const QUOTA_BYTES = QUOTA_MB * 1024 * 1024;

describe('the workspace quota cannot be escaped', () => {
    let daemon;
    let sandbox;
    let s;
    let auditDir;
    let auditLog;

    // What the kernel counts for the workspace, after a sync (qgroups count at commit).
    const referencedBytes = () => {
        const workspace = join(sandbox, 'volume', 'workspace');
        execFileSync('sync', ['-f', workspace]);
        const table = execFileSync('btrfs', ['qgroup', 'show', '-r', '--raw', workspace], { encoding: 'utf8' });
        const row = table.split('\n').find(line => /^0\/\d+\s/.test(line) && line.trim().endsWith('workspace'));
        assert.ok(row, `no qgroup row for the workspace in:\n${table}`);
        return Number(row.trim().split(/\s+/)[1]);
    };
    // The quota in sandbox_refusals, as it would be listed beside an egress or seccomp refusal.
    const assertQuotaRefusal = job => {
        const quota = (job.sandbox_refusals ?? []).filter(x => x.layer === 'quota');
        assert.equal(quota.length, 1, JSON.stringify(job.sandbox_refusals));
        assert.equal(quota[0].rule, 'SANDBOX_WORKSPACE_QUOTA_MB');
        assert.match(quota[0].message, new RegExp(`the sandbox's workspace quota of ${QUOTA_MB} MiB was reached: writes failed with EDQUOT/ENOSPC`));
    };
    const assertWithinQuota = () => {
        const used = referencedBytes();
        assert.ok(used <= QUOTA_BYTES, `the workspace refers to ${used} bytes, more than the quota of ${QUOTA_BYTES}`);
    };
    const python = async code => (await s.ok('system_run_python', { code })).output;
    const clean = () => s.ok('system_run_command', { command: 'rm -rf -- * .[!.]*' });

    before(async () => {
        auditDir = mkdtempSync(join(tmpdir(), 'cmcp-quota-audit-'));
        auditLog = join(auditDir, 'audit.jsonl');
        ({ daemon, sandbox } = await startQuotaDaemon({
            quotaMb: QUOTA_MB, settings: { BASH_ALLOWED_COMMANDS: 'dd,rm,ln,truncate,fallocate,ls,cat', AUDIT_LOG: auditLog },
        }));
        s = await quotaSession(daemon);
    });
    after(async () => {
        await s?.close();
        await daemon?.stop();
        if (sandbox)
            rmSync(sandbox, { recursive: true, force: true });
        if (auditDir)
            rmSync(auditDir, { recursive: true, force: true });
    });

    const links = Array.from({ length: 9 }, (_, i) => `link${i}`);
    test('hard links to one file are one file: writing through them stops at the quota', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', {
            command: ['dd if=/dev/zero of=f bs=1M count=8',
                ...links.map(link => `ln f ${link}`),
                ...links.map(link => `dd if=/dev/zero of=${link} bs=1M count=8 oflag=append conv=notrunc`)].join(' && '),
        });
        assert.notEqual(job.exit_code, 0, JSON.stringify(job));
        assert.match(job.stderr, /Disk quota exceeded/);
        assert.equal(job.workspace_quota_mb, QUOTA_MB);
        assertQuotaRefusal(job);
        assert.match(job.message, new RegExp(`workspace full: it holds the ${QUOTA_MB} MB that SANDBOX_WORKSPACE_QUOTA_MB allows`));
        assert.ok(await eventually(() => readFileSync(auditLog, 'utf8').includes(
            '{"layer":"quota","rule":"SANDBOX_WORKSPACE_QUOTA_MB"}')), 'the audit record lists the quota refusal');
        assertWithinQuota();
        await clean();
    }));

    test('a job killed at its time limit after filling its workspace is told both', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', {
            command: `dd if=/dev/zero of=f bs=1M count=${QUOTA_MB * 2}; cat /dev/zero > /dev/null`, timeout: 2,
        });
        assert.equal(job.timed_out, true, JSON.stringify(job));
        assert.deepEqual(job.sandbox_refusals.filter(x => x.layer === 'time').map(x => x.message),
            ['the sandbox ended the job at its time limit of 2000 ms']);
        assertQuotaRefusal(job);
        assert.match(job.message, /time limit of 2 s.*; the sandbox's workspace quota of \d+ MiB was reached/, job.message);
        await clean();
    }));

    test('a job that fails with room left in its workspace lists no quota refusal', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', { command: 'dd if=/dev/zero of=f bs=1M count=1 && cat missing' });
        assert.notEqual(job.exit_code, 0, JSON.stringify(job));
        assert.equal(job.workspace_quota_mb, undefined, JSON.stringify(job));
        assert.deepEqual((job.sandbox_refusals ?? []).filter(x => x.layer === 'quota'), []);
        await clean();
    }));

    test('a sparse file (up to RLIMIT_FSIZE, 1 GiB) holds only what is written, and writing it far apart stops at the quota', () => withDiagnostics(daemon, async () => {
        const job = await s.ok('system_run_command', {
            command: ['truncate -s 1000M sparse',
                ...Array.from({ length: 10 }, (_, i) => `dd if=/dev/urandom of=sparse bs=1M count=8 seek=${(i + 1) * 90} conv=notrunc`)].join(' && '),
        });
        assert.notEqual(job.exit_code, 0, JSON.stringify(job));
        assert.match(job.stderr, /Disk quota exceeded/, JSON.stringify(job));
        assertWithinQuota();
        await clean();
    }));

    test('fallocate past the quota is refused, with and without keeping the size', () => withDiagnostics(daemon, async () => {
        for (const command of [`fallocate -l ${QUOTA_MB * 2}M big`, `fallocate -n -l ${QUOTA_MB * 2}M big`]) {
            const job = await s.ok('system_run_command', { command });
            assert.notEqual(job.exit_code, 0, `${command}: ${JSON.stringify(job)}`);
            assert.match(job.stderr, /Disk quota exceeded/);
            assertWithinQuota();
        }
        await clean();
    }));

    test('a flood of small files stops at the quota (their metadata counts)', () => withDiagnostics(daemon, async () => {
        // Most of the quota taken first, so that the flood needs thousands of files, not tens.
        await s.ok('system_run_command', { command: `dd if=/dev/zero of=filler bs=1M count=${QUOTA_MB - 2}` });
        const output = await python([
            'import errno, os',
            'os.makedirs("many", exist_ok=True)',
            'count = 0',
            'try:',
            '    while count < 2_000_000:',
            '        with open(f"many/{count}", "wb") as f: f.write(b"x" * 64)',
            '        count += 1',
            'except OSError as e:',
            '    print("stopped", count, errno.errorcode[e.errno])',
        ].join('\n'));
        assert.match(output, /stopped \d+ EDQUOT/);
        assertWithinQuota();
        await clean();
    }));

    test('no job makes a subvolume or snapshot of its own in the workspace', () => withDiagnostics(daemon, async () => {
        const output = await python([
            'import errno, fcntl, os',
            'def args(name, source=0):',
            '    buf = bytearray(4096)',
            '    buf[0:8] = source.to_bytes(8, "little")',
            '    buf[8:8 + len(name)] = name',
            '    return buf',
            'def args_v2(name, source=0):',
            '    buf = bytearray(4096)',
            '    buf[0:8] = source.to_bytes(8, "little")',
            '    buf[56:56 + len(name)] = name',
            '    return buf',
            'top = os.open(".", os.O_RDONLY | os.O_DIRECTORY)',
            'tries = [("SUBVOL_CREATE", 0x5000940e, args(b"sub1")), ("SUBVOL_CREATE_V2", 0x50009418, args_v2(b"sub2")),',
            '         ("SNAP_CREATE", 0x50009401, args(b"snap1", top)), ("SNAP_CREATE_V2", 0x50009417, args_v2(b"snap2", top)),',
            '         ("SUBVOL_CREATE high bits", (1 << 32) | 0x5000940e, args(b"sub3"))]',
            'for name, request, buf in tries:',
            '    try:',
            '        fcntl.ioctl(top, request, buf)',
            '        print(name, "made")',
            '    except OSError as e:',
            '        print(name, errno.errorcode[e.errno])',
            'print(sorted(os.listdir(".")))',
        ].join('\n'));
        for (const name of ['SUBVOL_CREATE', 'SUBVOL_CREATE_V2', 'SNAP_CREATE', 'SNAP_CREATE_V2', 'SUBVOL_CREATE high bits'])
            assert.match(output, new RegExp(`^${name} EPERM$`, 'm'), output);
        assert.match(output, /^\[\]$/m, output);
    }));
});
