// file_transfer of 1 GiB: the daemon's peak resident memory (VmHWM, reset before each step
// through /proc/<pid>/clear_refs) while a client downloads the file from its URL, while it
// uploads it in one PUT (streamed from the file on disk) and while it uploads it in parts of
// --part-mb, with the time of each. Needs root (the workspace
// volume holds the file under a quota above it); from the repository root:
//
//   node tests/bench/transfer_bench.mjs [--cmcpd build/server/cmcpd] [--mb 1024] [--part-mb 32]
//
// Prints a Markdown table; see docs/benchmarks.md.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Readable } from 'node:stream';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
    options: { cmcpd: { type: 'string', default: 'build/server/cmcpd' }, mb: { type: 'string', default: '1024' }, 'part-mb': { type: 'string', default: '32' } },
});
process.env.CMCPD = resolve(options.cmcpd);
const { hostWorkspace, startDaemon } = await import('../integration/lib/daemon.mjs');
const { Client, StreamableHTTPClientTransport } = await import('../integration/lib/sdk.mjs');

const MiB = 1024 * 1024;
const total = Number(options.mb) * MiB;
const partBytes = Number(options['part-mb']) * MiB;
const status = (pid, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const resetPeak = pid => writeFileSync(`/proc/${pid}/clear_refs`, '5');

const sandbox = join('/tmp', `cmcp-transfer-bench-${process.pid}`);
const daemon = await startDaemon({
    fixtures: false,
    settings: { SANDBOX_ROOT: sandbox, FILE_ALLOWED_EXTENSIONS: 'bin', SANDBOX_WORKSPACE_QUOTA_MB: 3 * Number(options.mb) + 64, SANDBOX_WORKSPACE_VOLUME_GB: 8 },
});
const client = new Client({ name: 'transfer-bench', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
const issue = async (path, direction) => {
    const result = await client.callTool({ name: 'file_transfer', arguments: { path, direction } });
    if (result.isError)
        throw new Error(result.content?.[0]?.text);
    return result.structuredContent.url;
};
try {
    // The file, written on the host in 1 MiB blocks of random bytes.
    const file = join(hostWorkspace(sandbox), 'big.bin');
    const fd = openSync(file, 'w');
    const block = randomBytes(MiB);
    const expected = createHash('sha256');
    for (let written = 0; written < total; written += MiB) {
        writeSync(fd, block);
        expected.update(block);
    }
    closeSync(fd);
    const digest = expected.digest('hex');
    const idle = status(daemon.pid, 'VmRSS');

    const url = await issue('big.bin', 'download');
    resetPeak(daemon.pid);
    let started = process.hrtime.bigint();
    const response = await fetch(url);
    const got = createHash('sha256');
    for await (const chunk of response.body)
        got.update(chunk);
    const downloadMs = Number(process.hrtime.bigint() - started) / 1e6;
    const downloadPeak = status(daemon.pid, 'VmHWM');
    if (got.digest('hex') !== digest)
        throw new Error('the download is not the file');

    // The whole file in one PUT, read from disk as the socket drains.
    const single = await issue('single.bin', 'upload');
    resetPeak(daemon.pid);
    started = process.hrtime.bigint();
    const whole = await fetch(single, {
        method: 'PUT', duplex: 'half', headers: { 'content-length': String(total) }, body: Readable.toWeb(createReadStream(file)),
    });
    if (whole.status !== 201)
        throw new Error(`one PUT: ${whole.status} ${await whole.text()}`);
    const singleMs = Number(process.hrtime.bigint() - started) / 1e6;
    const singlePeak = status(daemon.pid, 'VmHWM');
    rmSync(join(hostWorkspace(sandbox), 'single.bin'));

    // The same bytes as the file: its 1 MiB block over and over.
    const partBody = Buffer.concat(Array(partBytes / MiB).fill(block));
    const upload = await issue('copy.bin', 'upload');
    resetPeak(daemon.pid);
    started = process.hrtime.bigint();
    for (let first = 0; first < total; first += partBytes) {
        const last = Math.min(first + partBytes, total) - 1;
        const answer = await fetch(upload, {
            method: 'PUT',
            headers: { 'content-range': `bytes ${first}-${last}/${total}` },
            body: partBody.subarray(0, last - first + 1),
        });
        if (answer.status !== (last === total - 1 ? 201 : 202))
            throw new Error(`part at ${first}: ${answer.status} ${await answer.text()}`);
    }
    const uploadMs = Number(process.hrtime.bigint() - started) / 1e6;
    const uploadPeak = status(daemon.pid, 'VmHWM');

    const mb = bytes => (bytes / MiB).toFixed(1);
    console.log(`## file_transfer of ${options.mb} MiB (${new Date().toISOString()})\n`);
    console.log('| step | daemon peak RSS MiB | above idle MiB | seconds | MiB/s |');
    console.log('|---|---|---|---|---|');
    console.log(`| idle, after start | ${mb(idle)} | 0 | | |`);
    console.log(`| download (GET, streamed from disk) | ${mb(downloadPeak)} | ${mb(downloadPeak - idle)} | ${(downloadMs / 1000).toFixed(2)} | ${(total / MiB / (downloadMs / 1000)).toFixed(0)} |`);
    console.log(`| upload (one PUT of the whole file) | ${mb(singlePeak)} | ${mb(singlePeak - idle)} | ${(singleMs / 1000).toFixed(2)} | ${(total / MiB / (singleMs / 1000)).toFixed(0)} |`);
    console.log(`| upload (PUT in parts of ${partBytes / MiB} MiB) | ${mb(uploadPeak)} | ${mb(uploadPeak - idle)} | ${(uploadMs / 1000).toFixed(2)} | ${(total / MiB / (uploadMs / 1000)).toFixed(0)} |`);
} finally {
    await client.close().catch(() => {});
    await daemon.stop();
    rmSync(sandbox, { recursive: true, force: true });
}
