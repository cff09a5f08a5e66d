// Checkpoint, restore and fork (a named workspace from a checkpoint) of a workspace of 10,000 files and 200 MB through the official SDK
// client, beside copies of the same tree made by `cp -a` (within the same volume) in the same run: the time of each
// (median of --rounds), and the disk a checkpoint adds until files change. Needs root, btrfs,
// loop devices and btrfs-progs (the daemon's workspace volume). From the repository root:
//
//   node tests/bench/checkpoint_bench.mjs [--cmcpd build/server/cmcpd] [--rounds 5]
//
// Prints a Markdown table; see docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
    options: { cmcpd: { type: 'string', default: 'build/server/cmcpd' }, rounds: { type: 'string', default: '5' } },
});
process.env.CMCPD = resolve(options.cmcpd);
const rounds = Number(options.rounds);

const { quotaSession, quotaUnavailableReason, startQuotaDaemon } = await import('../integration/lib/quota.mjs');
if (quotaUnavailableReason()) {
    console.error(`cannot run: ${quotaUnavailableReason()}`);
    process.exit(77);
}

const FILES = 10_000;
const TOTAL_MB = 200;
const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const timed = async body => {
    const started = process.hrtime.bigint();
    await body();
    return Number(process.hrtime.bigint() - started) / 1e6;
};
// Bytes in use on the volume, after a sync (btrfs counts at commit).
const usedBytes = mount => {
    execFileSync('sync', ['-f', mount]);
    const line = execFileSync('df', ['-B1', '--output=used', mount], { encoding: 'utf8' }).trim().split('\n')[1];
    return Number(line);
};

const { daemon, sandbox } = await startQuotaDaemon({ quotaMb: 1024, settings: { SANDBOX_WORKSPACE_VOLUME_GB: 8, PYTHON_TIMEOUT_MAX: 300, PYTHON_TIMEOUT_DEFAULT: 300 } });
const s = await quotaSession(daemon, 'bench');
try {
    const made = await s.ok('system_run_python', {
        code: [
            'import os',
            `files, total = ${FILES}, ${TOTAL_MB} << 20`,
            'big = total // 2 // 10',
            'for i in range(10):',
            '    with open(f"big{i}.bin", "wb") as f: f.write(os.urandom(big))',
            'small = (total - 10 * big) // (files - 10)',
            'for i in range(files - 10):',
            '    d = f"src/d{i // 100:03d}"',
            '    os.makedirs(d, exist_ok=True)',
            '    with open(f"{d}/f{i}.txt", "wb") as f: f.write(os.urandom(small))',
            'print(sum(len(fs) for _, _, fs in os.walk(".")))',
        ].join('\n'),
    });
    if (Number(made.output.trim()) !== FILES)
        throw new Error(`the tree has ${made.output.trim()} files, not ${FILES}`);
    const mount = join(sandbox, 'volume');
    const workspace = join(mount, 'workspace');
    const figures = { checkpoint: [], checkpointServer: [], restore: [], restoreServer: [], fork: [], forkServer: [], cpSame: [], cpSameReflink: [] };

    // The disk one checkpoint adds before anything changes.
    const before = usedBytes(mount);
    const first = await s.ok('workspace_checkpoint', { label: 'disk' });
    const added = usedBytes(mount) - before;

    // The calls first, back to back: the daemon closes an idle keep-alive connection, and a
    // call after a long copy could meet a socket that is closing. Then cp -a of the same tree
    // within the volume, without and with reflinks.
    for (let round = 0; round < rounds; ++round) {
        let checkpoint;
        figures.checkpoint.push(await timed(async () => { checkpoint = await s.ok('workspace_checkpoint', {}); }));
        figures.checkpointServer.push(checkpoint.elapsed_ms);
        let restored;
        figures.restore.push(await timed(async () => { restored = await s.ok('workspace_restore', { checkpoint_id: checkpoint.checkpoint_id }); }));
        figures.restoreServer.push(restored.elapsed_ms);
        let fork;
        figures.fork.push(await timed(async () => { fork = await s.ok('workspace_fork', { checkpoint_id: checkpoint.checkpoint_id, name: `fork${round}` }); }));
        figures.forkServer.push(fork.elapsed_ms);
        await s.ok('workspace_delete', { workspace: fork.name });
        await s.ok('workspace_checkpoint_delete', { checkpoint_id: checkpoint.checkpoint_id });
    }
    await s.ok('workspace_checkpoint_delete', { checkpoint_id: first.checkpoint_id });
    for (let round = 0; round < rounds; ++round) {
        figures.cpSame.push(await timed(async () => execFileSync('cp', ['-a', '--reflink=never', workspace, join(mount, `copy${round}`)])));
        figures.cpSameReflink.push(await timed(async () => execFileSync('cp', ['-a', '--reflink=always', workspace, join(mount, `reflink${round}`)])));
        rmSync(join(mount, `copy${round}`), { recursive: true, force: true });
        rmSync(join(mount, `reflink${round}`), { recursive: true, force: true });
    }

    const cp = median(figures.cpSame);
    const row = (what, values, note = '') =>
        `| ${what} | ${median(values).toFixed(2)} | ${Math.min(...values).toFixed(2)} | ${(100 * median(values) / cp).toFixed(2)} % | ${note} |`;
    console.log(`## Workspace checkpoints: ${FILES} files, ${TOTAL_MB} MB, ${rounds} rounds (${new Date().toISOString()})\n`);
    console.log('| operation | median ms | best ms | of cp -a (same volume) | note |');
    console.log('|---|---|---|---|---|');
    console.log(row('workspace_checkpoint (round trip)', figures.checkpoint, 'SDK call over Streamable HTTP'));
    console.log(row('workspace_checkpoint (in the server)', figures.checkpointServer, 'elapsed_ms'));
    console.log(row('workspace_restore (round trip)', figures.restore));
    console.log(row('workspace_restore (in the server)', figures.restoreServer, 'elapsed_ms'));
    console.log(row('workspace_fork (round trip)', figures.fork, 'a named workspace from the checkpoint'));
    console.log(row('workspace_fork (in the server)', figures.forkServer, 'elapsed_ms'));
    console.log(row('cp -a --reflink=never, within the volume', figures.cpSame, 'the reference'));
    console.log(row('cp -a --reflink=always, within the volume', figures.cpSameReflink));
    console.log(`\nDisk a checkpoint adds before files change: ${(added / 1024).toFixed(0)} KiB (df, after sync)`);
} finally {
    await s.close();
    await daemon.stop();
    rmSync(sandbox, { recursive: true, force: true });
}
