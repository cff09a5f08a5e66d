// The web tools through the official TypeScript SDK client over Streamable HTTP, against a
// loopback fixture (lib/webfixture.mjs) that counts every request it gets. The daemon allows
// 127.0.0.1 (WEB_ALLOWED_DOMAINS) and private addresses (WEB_ALLOW_PRIVATE=true, needed for a
// loopback fixture); 127.0.0.2, on the same port, plays the refused host and must never be
// contacted. One suite runs without WEB_ALLOW_PRIVATE and shows loopback refused.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from './lib/sdk.mjs';
import { browserWorkers } from './lib/processes.mjs';
import { toolCalls } from './lib/tools.mjs';
import { cleanEnv, cmcpdPath, eventually, scratchDir, settingArgs, startDaemon, withDiagnostics } from './lib/daemon.mjs';
import { ALLOWED, REFUSED, startWebFixture } from './lib/webfixture.mjs';

async function connect(daemon, name) {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    return client;
}

// Every process below `pid`, whichever of its threads started it.
function descendants(pid) {
    const parents = new Map();
    for (const name of readdirSync('/proc').filter(entry => /^\d+$/.test(entry))) {
        try {
            parents.set(Number(name), Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))[1]));
        } catch { /* gone meanwhile */ }
    }
    const below = [];
    for (let frontier = [pid]; frontier.length;) {
        frontier = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
        below.push(...frontier);
    }
    return below;
}

function commandLine(pid) {
    try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
        return '';
    }
}

describe('web tools', () => {
    let fixture;
    let daemon;
    let client;
    const { call, ok, refused } = toolCalls(() => client);
    const noRefusedHits = () => assert.deepEqual(fixture.hits(REFUSED).map(hit => hit.path), [],
        'the refused host was contacted');

    before(async () => {
        fixture = await startWebFixture();
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                WEB_ALLOW_PRIVATE: 'true',
                WEB_ALLOWED_DOMAINS: ALLOWED,
                WEB_MAX_BYTES: 1024 * 1024,
                WEB_TIMEOUT_DEFAULT: 4,
                WEB_SEARCH_URL: fixture.url('/searxng'),
                WEB_BROWSER_PAGES_PER_WORKER: 3,
                // The browser's account is the first uid after the job pool: 200050 here.
                SANDBOX_UID_BASE: 200000,
                SANDBOX_UID_COUNT: 50,
            },
            args: ['--set', 'LOG_LEVEL=debug'],
        });
        client = await connect(daemon, 'web-test');
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        await fixture?.stop();
    });

    test('the web tools are listed with input and output schemas', () => withDiagnostics(daemon, async () => {
        const tools = (await client.listTools()).tools.filter(tool => tool.name.startsWith('web_'));
        assert.deepEqual(tools.map(tool => tool.name).sort(), ['web_browse', 'web_scrape', 'web_search']);
        for (const tool of tools) {
            assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
            assert.equal(tool.annotations.openWorldHint, true);
        }
        const scrape = tools.find(tool => tool.name === 'web_scrape');
        assert.match(scrape.inputSchema.properties.selector.description, /:nth-child\(An\+B\)/);
    }));

    test('web_scrape returns the readable text, title and final URL', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_scrape', { url: fixture.url('/static.html') });
        assert.equal(page.title, 'Static fixture');
        assert.equal(page.url, fixture.url('/static.html'));
        assert.equal(page.status, 200);
        assert.equal(page.content, 'Hello fixture\n\nFirst bold paragraph with a link.\n\n- one\n- two\n- three');
        assert.doesNotMatch(page.content, /SCRIPT-TEXT|color: red|NAVIGATION|FOOTER/);
    }));

    test('web_scrape picks elements with a CSS selector', () => withDiagnostics(daemon, async () => {
        const second = await ok('web_scrape', { url: fixture.url('/selectors.html'), selector: '#list li:nth-child(2)' });
        assert.equal(second.content, 'two');
        assert.equal(second.matches, 1);
        const several = await ok('web_scrape', { url: fixture.url('/selectors.html'), selector: 'h1 + p, li.last, [data-kind=docs i]' });
        assert.equal(several.content, 'Docs\n\nFirst bold paragraph.\n\nfive');
        assert.equal(several.matches, 3);
        const none = await ok('web_scrape', { url: fixture.url('/selectors.html'), selector: 'table' });
        assert.equal(none.content, '');
        assert.equal(none.matches, 0);
    }));

    test('web_scrape refuses an unsupported selector before fetching', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        await refused('web_scrape', { url: fixture.url('/static.html'), selector: 'a:hover' },
            /^unsupported selector at character 2: pseudo-class ':hover' \(supported: /);
        await refused('web_scrape', { url: fixture.url('/static.html'), selector: 'p >' }, /^invalid selector/);
        assert.equal(fixture.allHits().length, 0);
    }));

    test('web_scrape writes Markdown with absolute links', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_scrape', { url: fixture.url('/static.html'), format: 'markdown' });
        assert.equal(page.format, 'markdown');
        assert.equal(page.content, `# Hello fixture\n\nFirst **bold** paragraph with [a link](${fixture.url('/next')}).\n\n- one\n- two\n- three`);
    }));

    test('web_scrape decodes the declared charset', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_scrape', { url: fixture.url('/latin1.html') });
        assert.equal(page.title, 'café');
        assert.equal(page.content, 'naïve €');
    }));

    test('web_scrape follows allowed redirects and reports the final URL', () => withDiagnostics(daemon, async () => {
        const target = fixture.url('/static.html');
        const page = await ok('web_scrape', { url: fixture.url(`/redirect?to=${encodeURIComponent(target)}`) });
        assert.equal(page.url, target);
        assert.equal(page.title, 'Static fixture');
    }));

    test('web_scrape refuses a redirect to a refused host without contacting it', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        const error = await refused('web_scrape',
            { url: fixture.url(`/redirect?to=${encodeURIComponent(fixture.url('/secret', REFUSED))}`) },
            /^refused \(WEB_ALLOWED_DOMAINS\): 127\.0\.0\.2:\d+ is not an allowed domain \(allowed: 127\.0\.0\.1\) \(redirected to /);
        assert.match(error, /\/secret/);
        noRefusedHits();
        // And to a scheme that is not the web.
        await refused('web_scrape', { url: fixture.url('/redirect?to=file:///etc/passwd') }, /^refused \(scheme\)/);
    }));

    test('web_scrape refuses hosts, schemes and address forms the gate does not allow', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        await refused('web_scrape', { url: fixture.url('/x', REFUSED) }, /^refused \(WEB_ALLOWED_DOMAINS\)/);
        await refused('web_scrape', { url: `http://2130706434:${fixture.port}/x` }, /^refused \(WEB_ALLOWED_DOMAINS\): 127\.0\.0\.2:/);
        await refused('web_scrape', { url: `http://localhost:${fixture.port}/x` }, /^refused \(WEB_ALLOWED_DOMAINS\)/);
        await refused('web_scrape', { url: 'file:///etc/passwd' }, /^refused \(scheme\): only http and https/);
        await refused('web_scrape', { url: 'example.com' }, /^refused \(scheme\)/);
        noRefusedHits();
    }));

    test('web_scrape stops a body larger than WEB_MAX_BYTES', () => withDiagnostics(daemon, async () => {
        await refused('web_scrape', { url: fixture.url('/huge') },
            /larger than WEB_MAX_BYTES \(1048576 bytes\); the download was stopped/);
    }));

    test('web_scrape gives up on a slow body after WEB_TIMEOUT_DEFAULT', () => withDiagnostics(daemon, async () => {
        const started = Date.now();
        await refused('web_scrape', { url: fixture.url('/slow') }, /within 4 s \(WEB_TIMEOUT_DEFAULT\)/);
        const elapsed = Date.now() - started;
        assert.ok(elapsed >= 3900 && elapsed < 8000, `took ${elapsed} ms`);
    }));

    test('web_scrape reports HTTP errors and pages that are not text', () => withDiagnostics(daemon, async () => {
        await refused('web_scrape', { url: fixture.url('/missing') }, /^HTTP 404 Not Found from /);
        await refused('web_scrape', { url: fixture.url('/image.png') }, /is not a text page \(Content-Type: image\/png\)/);
    }));

    test('a page that crashes the HTML parser fails its call; the daemon goes on', () => withDiagnostics(daemon, async () => {
        await refused('web_scrape', { url: fixture.url('/gumbo-assertion.html') },
            /^the HTML parser failed on this page \(an assertion in gumbo\)$/);
        const page = await ok('web_scrape', { url: fixture.url('/static.html') });
        assert.equal(page.title, 'Static fixture');
    }));

    test('web_search asks SearXNG through the gate and cleans the snippets', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        const found = await ok('web_search', { query: 'qt egress' });
        assert.equal(found.query, 'qt egress');
        assert.equal(found.backend, 'searxng');
        assert.deepEqual(found.results, [
            { title: 'First & best about qt egress', url: 'https://example.org/one', snippet: 'A highlighted snippet' },
            { title: 'Second', url: 'https://example.org/two', snippet: 'Plain snippet' },
        ]);
        const [hit] = fixture.hits(ALLOWED, '/searxng/search');
        assert.ok(hit, 'the fake SearXNG was asked');
        const limited = await ok('web_search', { query: 'x', max_results: 1 });
        assert.equal(limited.results.length, 1);
    }));

    test('web_browse returns the rendered HTML after scripts ran', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_browse', { url: fixture.url('/scripted.html') });
        assert.equal(page.format, 'html');
        assert.equal(page.url, fixture.url('/scripted.html'));
        assert.match(page.content, /<div id="state">changed by script<\/div>/);
        assert.deepEqual(page.blocked, []);
    }));

    test('web_browse waits for a selector and returns the visible text', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_browse', { url: fixture.url('/scripted.html'), wait_for: '#late', text: true });
        assert.equal(page.format, 'text');
        assert.match(page.content, /changed by script/);
        assert.match(page.content, /late content/);
        assert.equal(page.title, 'Scripted fixture (done)');
    }));

    test('web_browse can wait for a quiet DOM', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_browse', { url: fixture.url('/scripted.html'), wait_for: 'quiet' });
        assert.match(page.content, /late content/);
    }));

    test('web_browse blocks subresources on a refused host; the host is never contacted', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        const page = await ok('web_browse', { url: fixture.url('/subresources.html'), wait_for: 'quiet' });
        assert.match(page.content, /own content/);
        const blockedPaths = page.blocked.map(entry => new URL(entry.url).pathname).sort();
        for (const path of ['/evil.js', '/style.css', '/tracker.png'])
            assert.ok(blockedPaths.includes(path), `${path} reported blocked: ${JSON.stringify(page.blocked)}`);
        for (const entry of page.blocked)
            assert.match(entry.reason, /^refused \(WEB_ALLOWED_DOMAINS\)/);
        // The page's own image did load, through the gate.
        assert.ok(fixture.hits(ALLOWED, '/local.png').length >= 1);
        noRefusedHits();
    }));

    test('WebRTC sends no UDP past the proxy', () => withDiagnostics(daemon, async () => {
        const page = await ok('web_browse', { url: fixture.url('/webrtc.html'), wait_for: '#rtc', text: true });
        assert.match(page.content, /gathered|timeout/, 'WebRTC is there to be tried');
        assert.deepEqual(fixture.datagrams(), [], `UDP reached the refused host; the page said: ${page.content}`);
        noRefusedHits();
    }));

    test('web_browse refuses a redirect to a refused host', () => withDiagnostics(daemon, async () => {
        fixture.reset();
        await refused('web_browse', { url: fixture.url(`/redirect?to=${encodeURIComponent(fixture.url('/secret', REFUSED))}`) },
            /refused \(WEB_ALLOWED_DOMAINS\): 127\.0\.0\.2:\d+/);
        noRefusedHits();
        await refused('web_browse', { url: 'file:///etc/passwd' }, /^refused \(scheme\)/);
    }));

    test('web_browse adds a screenshot as an image content item', () => withDiagnostics(daemon, async () => {
        const result = await call('web_browse', { url: fixture.url('/static.html'), screenshot: true });
        assert.ok(!result.isError, result.content?.[0]?.text);
        assert.equal(result.structuredContent.screenshot, true);
        const image = result.content.find(block => block.type === 'image');
        assert.ok(image, 'an image content item');
        assert.equal(image.mimeType, 'image/png');
        assert.equal(Buffer.from(image.data, 'base64').subarray(0, 8).toString('hex'), '89504e470d0a1a0a');
    }));

    test('a screenshot\'s window closing does not end the worker', () => withDiagnostics(daemon, async () => {
        await ok('web_browse', { url: fixture.url('/static.html'), screenshot: true });
        await ok('web_browse', { url: fixture.url('/static.html') });
        await ok('web_browse', { url: fixture.url('/static.html'), screenshot: true });
        await ok('web_browse', { url: fixture.url('/static.html') });
        // Workers leave when WEB_BROWSER_PAGES_PER_WORKER says so, and that is not logged.
        assert.doesNotMatch(daemon.stderr(), /web_browse: the browser worker exited/);
    }));

    test('web_browse replaces a worker after WEB_BROWSER_PAGES_PER_WORKER pages', () => withDiagnostics(daemon, async () => {
        const pidsSeen = new Set();
        for (let i = 0; i < 4; ++i) {
            await ok('web_browse', { url: fixture.url('/static.html') });
            for (const pid of browserWorkers(daemon.pid))
                pidsSeen.add(pid);
        }
        assert.ok(pidsSeen.size >= 2, `workers seen: ${[...pidsSeen]}`);
        // Old workers leave; one is kept warm.
        const settled = await eventually(() => browserWorkers(daemon.pid).length === 1, { timeoutMs: 10_000 });
        assert.ok(settled, `workers now: ${browserWorkers(daemon.pid)}`);
    }));

    // The workers while one is busy with a page that never finishes (the busy one stays until
    // the page's call ends; the one kept warm beside it, and one that served its last page,
    // may be there too), and that call's result.
    const loadingWorkers = async () => {
        const slowHits = fixture.hits(ALLOWED, '/slow').length;
        const result = call('web_browse', { url: fixture.url('/slow') });
        assert.ok(await eventually(() => fixture.hits(ALLOWED, '/slow').length > slowHits, { timeoutMs: 10_000 }));
        const workers = browserWorkers(daemon.pid);
        assert.ok(workers.length > 0, 'a worker is running');
        return { workers, result };
    };
    // Runs `check` on each worker; a worker that left meanwhile (its /proc entry gone with it)
    // is not held against the check. At least one must have been checked.
    const checkEachWorker = (workers, check) => {
        let checked = 0;
        for (const worker of workers) {
            try {
                check(worker);
                ++checked;
            } catch (error) {
                if (browserWorkers(daemon.pid).includes(worker))
                    throw error;
            }
        }
        assert.ok(checked > 0, `every worker left while it was looked at: ${workers}`);
    };

    test('the browser runs as its own user, in namespaces of its own under cmcp-jail', (context) => withDiagnostics(daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon jails the browser; run as root');
        // A page that never finishes keeps its renderer alive while it is looked at.
        const loading = call('web_browse', { url: fixture.url('/slow') });
        assert.ok(await eventually(() => fixture.hits(ALLOWED, '/slow').length > 0, { timeoutMs: 10_000 }));
        const [worker] = browserWorkers(daemon.pid);
        assert.ok(worker, 'a worker is running');
        const status = pid => readFileSync(`/proc/${pid}/status`, 'utf8');
        assert.match(status(worker), /^Uid:\s+200050\s+200050\s+200050\s+200050$/m);
        assert.match(status(worker), /^Gid:\s+200050\s+200050\s+200050\s+200050$/m);
        assert.match(status(worker), /^Groups:\s*$/m);
        // Under cmcp-jail: no_new_privs, and a memory cgroup of its own.
        assert.match(status(worker), /^NoNewPrivs:\s+1$/m);
        assert.match(readFileSync(`/proc/${worker}/cgroup`, 'utf8'), /:memory:\/cmcp\/job-\d+$/m);
        // Its own network, mount and pid namespaces, not the daemon's.
        for (const kind of ['net', 'mnt', 'pid', 'user'])
            assert.notEqual(readlinkSync(`/proc/${worker}/ns/${kind}`), readlinkSync(`/proc/${daemon.pid}/ns/${kind}`),
                `the worker shares the daemon's ${kind} namespace`);
        // Chromium's processes are all inside it; its own sandbox is off there (it needs user
        // namespaces, which the jail forbids below its own), and the daemon says why.
        const chromium = descendants(worker).filter(pid => /QtWebEngineProcess/.test(commandLine(pid)));
        assert.ok(chromium.length > 0, 'Chromium runs');
        for (const pid of chromium)
            assert.equal(readlinkSync(`/proc/${pid}/ns/net`), readlinkSync(`/proc/${worker}/ns/net`));
        assert.match(daemon.stderr(), /Chromium's sandbox is off in the browser workers \(.*\); cmcp-jail contains each whole worker instead/);
        assert.equal((await loading).isError, true, 'the endless page ends at WEB_TIMEOUT_DEFAULT');
    }));

    // The reason the daemon gave for leaving a jail layer out of the browser's (this kernel
    // lacks it), or null when the browser has it.
    const layerMissing = name => new RegExp(`web_browse: the browser workers run without the ${name} layer: (.*)`)
        .exec(daemon.stderr())?.[1] ?? null;

    test('the jailed browser and every Chromium process run under seccomp with no_new_privs', (context) => withDiagnostics(daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon jails the browser; run as root');
        if (layerMissing('seccomp') !== null)
            return context.skip(`the kernel lacks the seccomp layer: ${layerMissing('seccomp')}`);
        const loading = await loadingWorkers();
        // The busy worker runs Chromium; the warm one beside it may not have started it yet.
        let chromiumSeen = 0;
        checkEachWorker(loading.workers, worker => {
            const chromium = descendants(worker).filter(pid => /QtWebEngineProcess/.test(commandLine(pid)));
            chromiumSeen += chromium.length;
            // Mode 2: a filter; it is inherited and cannot be lifted, so the renderers have it.
            for (const pid of [worker, ...chromium]) {
                const status = readFileSync(`/proc/${pid}/status`, 'utf8');
                assert.match(status, /^Seccomp:\s+2$/m, `process ${pid} (${commandLine(pid)}) has no seccomp filter`);
                assert.match(status, /^NoNewPrivs:\s+1$/m, `process ${pid} may gain privileges`);
            }
        });
        assert.ok(chromiumSeen > 0, 'Chromium runs in the worker loading the page');
        assert.equal((await loading.result).isError, true, 'the endless page ends at WEB_TIMEOUT_DEFAULT');
        assert.match(daemon.stderr(), /cmcp-jail contains each whole worker instead \(.*, seccomp\)/);
        // Chromium needs nothing the filter refuses: the workers that served their pages
        // before (the replacement test's) ended with no refused call in the jail's report.
        assert.match(daemon.stderr(), /a browser worker ended after its last page/);
        assert.doesNotMatch(daemon.stderr(), /the browser worker's seccomp filter refused it/);
        if (layerMissing('landlock') === null)
            assert.match(daemon.stderr(), /cmcp-jail contains each whole worker instead \(.*, Landlock, seccomp\)/);
    }));

    test('the jailed browser sees nothing of the host\'s /tmp, /root or this tree', (context) => withDiagnostics(daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon jails the browser; run as root');
        const planted = mkdtempSync('/tmp/cmcp-planted-');
        writeFileSync(join(planted, 'secret.txt'), 'host secret\n', { mode: 0o644 });
        chmodSync(planted, 0o755);
        try {
            // Looked at while it loads a page: a worker that just served its last page may be
            // leaving, and its /proc/<pid>/root with it.
            const loading = await loadingWorkers();
            checkEachWorker(loading.workers, worker => {
                // The worker's root, as the kernel resolves it for the worker: its minimal root.
                const inWorker = path => `/proc/${worker}/root${path}`;
                assert.ok(existsSync(inWorker('/usr/bin')), 'the worker\'s root is readable here');
                assert.equal(existsSync(inWorker(join(planted, 'secret.txt'))), false, 'the host\'s /tmp is visible to the browser');
                assert.deepEqual(readdirSync(inWorker('/tmp')), [], 'the browser\'s /tmp is not its own');
                assert.equal(existsSync(inWorker('/root')), false, 'the host\'s /root is visible to the browser');
                assert.equal(existsSync(inWorker(process.cwd())), false, 'this tree is visible to the browser');
            });
            assert.equal((await loading.result).isError, true, 'the endless page ends at WEB_TIMEOUT_DEFAULT');
        } finally {
            rmSync(planted, { recursive: true, force: true });
        }
    }));

    test('the jailed browser reaches the host\'s loopback only through the daemon\'s gate', (context) => withDiagnostics(daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon jails the browser; run as root');
        const loading = await loadingWorkers();
        checkEachWorker(loading.workers, worker => {
            // A TCP connection from inside the worker's network namespace, as code of a page
            // that escaped the renderer would make it.
            const connects = port => spawnSync('timeout', ['5', 'nsenter', `--net=/proc/${worker}/ns/net`, 'bash', '-c',
                `exec 3<>/dev/tcp/127.0.0.1/${port}`], { encoding: 'utf8' }).status === 0;
            assert.equal(connects(3128), true, 'the gate\'s listener is reachable in the namespace');
            const before = fixture.allHits().length;
            assert.equal(connects(fixture.port), false, 'the host\'s loopback listener is reachable past the gate');
            assert.equal(fixture.allHits().length, before, 'the fixture was contacted past the gate');
        });
        assert.equal((await loading.result).isError, true, 'the endless page ends at WEB_TIMEOUT_DEFAULT');
    }));

    test('a crashed worker fails its call clearly and is replaced', () => withDiagnostics(daemon, async () => {
        // Once the page is loading, every worker is killed: the one loading it is among them,
        // beside the one kept warm.
        const { workers, result: slow } = await loadingWorkers();
        for (const worker of workers) {
            try {
                process.kill(worker, 'SIGKILL');
            } catch (error) {
                if (error.code !== 'ESRCH') // it left meanwhile
                    throw error;
            }
        }
        const result = await slow;
        assert.equal(result.isError, true);
        assert.match(result.structuredContent.error, /^the browser worker crashed \(signal 9\) while loading this page; a new worker is being started/);
        // A call the daemon took before it saw the warm worker die may fail with it, as its
        // error says; a new worker serves the calls after.
        const failures = [];
        const page = await eventually(async () => {
            const attempt = await call('web_browse', { url: fixture.url('/static.html') });
            if (!attempt.isError)
                return attempt.structuredContent;
            failures.push(attempt.structuredContent?.error);
            return null;
        }, { timeoutMs: 15_000, intervalMs: 200 });
        assert.equal(page?.title, 'Static fixture', `no page served after the crash: ${failures.join('; ')}`);
        assert.ok(failures.length <= 1, `more than one call failed after the crash: ${failures.join('; ')}`);
    }));
});

describe('web tools without WEB_ALLOW_PRIVATE', () => {
    let fixture;
    let daemon;
    let client;
    const { refused } = toolCalls(() => client);

    before(async () => {
        fixture = await startWebFixture();
        daemon = await startDaemon({ fixtures: false, settings: { WEB_TIMEOUT_DEFAULT: 5 } });
        client = await connect(daemon, 'web-private-test');
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        await fixture?.stop();
    });

    test('loopback is refused in every form, and nothing is contacted', () => withDiagnostics(daemon, async () => {
        for (const url of [fixture.url('/static.html'), `http://localhost:${fixture.port}/`, `http://2130706433:${fixture.port}/`,
            `http://0x7f.0.0.1:${fixture.port}/`, `http://[::ffff:127.0.0.1]:${fixture.port}/`, `http://0.0.0.0:${fixture.port}/`])
            await refused('web_scrape', { url }, /^refused \(WEB_ALLOW_PRIVATE\): .*; set WEB_ALLOW_PRIVATE=true/);
        await refused('web_browse', { url: fixture.url('/static.html') }, /^refused \(WEB_ALLOW_PRIVATE\)/);
        await refused('web_browse', { url: `http://localhost:${fixture.port}/` }, /^refused \(WEB_ALLOW_PRIVATE\): localhost resolves to/);
        assert.deepEqual(fixture.allHits(), []);
    }));

    test('web_search says plainly that no back end is configured', () => withDiagnostics(daemon, async () => {
        await refused('web_search', { query: 'anything' },
            /^web_search has no search back end: set WEB_SEARCH_URL \(a SearXNG instance with its JSON format enabled\) or BRAVE_SEARCH_API_KEY/);
    }));
});

describe('web_search with Brave', () => {
    let fixture;
    let daemon;
    let client;
    const { ok, refused } = toolCalls(() => client);

    before(async () => {
        fixture = await startWebFixture();
        daemon = await startDaemon({
            fixtures: false,
            settings: {
                BRAVE_SEARCH_API_KEY: 'test-brave-key',
                BRAVE_SEARCH_URL: fixture.url('/brave/res/v1/web/search'),
                // The fixture is on loopback: the operator says the back end may be.
                WEB_SEARCH_ALLOW_PRIVATE: 'true',
                WEB_ALLOWED_DOMAINS: 'example.com',
            },
        });
        client = await connect(daemon, 'web-brave-test');
    });

    after(async () => {
        await client?.close();
        await daemon?.stop();
        await fixture?.stop();
    });

    test('the Brave API is asked with the key, through the gate, as a trusted endpoint', () => withDiagnostics(daemon, async () => {
        const found = await ok('web_search', { query: 'egress', max_results: 5 });
        assert.equal(found.backend, 'brave');
        assert.deepEqual(found.results, [
            { title: 'Brave egress', url: 'https://brave.example/1', snippet: 'Brave snippet & more' },
            { title: 'Brave two', url: 'https://brave.example/2', snippet: '' },
        ]);
        const [hit] = fixture.hits(ALLOWED, '/brave/res/v1/web/search');
        assert.equal(hit.headers['x-subscription-token'], 'test-brave-key');
        assert.equal(hit.headers.accept, 'application/json');
        // Trust covers the endpoint's origin (scheme, host, port) and nothing else of loopback.
        await refused('web_scrape', { url: fixture.url('/static.html', '127.0.0.2') }, /^refused \(WEB_ALLOWED_DOMAINS\)/);
        await refused('web_scrape', { url: `http://127.0.0.1:${fixture.port === 1 ? 2 : 1}/` }, /^refused \(WEB_ALLOWED_DOMAINS\)/);
    }));
});

test('a WEB_ALLOWED_DOMAINS entry or search URL that cannot be read stops start-up with one line', () => {
    const cases = [
        [{ WEB_ALLOWED_DOMAINS: 'example.com,https://docs.python.org' },
            "cmcpd: WEB_ALLOWED_DOMAINS: 'https://docs.python.org' is not *, a host name or *.domain, with an optional :port (no scheme, no path)"],
        [{ WEB_ALLOWED_DOMAINS: 'example.com:99999' },
            "cmcpd: WEB_ALLOWED_DOMAINS: 'example.com:99999' is not *, a host name or *.domain, with an optional :port (no scheme, no path)"],
        [{ WEB_SEARCH_URL: 'ftp://searx.local' }, "cmcpd: WEB_SEARCH_URL: 'ftp://searx.local' is not an http or https URL"],
    ];
    for (const [settings, line] of cases) {
        // A working directory of its own: the tools set up before the web tools refuse create
        // the relative SANDBOX_ROOT there.
        const cwd = scratchDir();
        try {
            const result = spawnSync(cmcpdPath(), ['--stdio', ...settingArgs(settings)],
                { cwd, env: cleanEnv(), input: '', timeout: 20_000, encoding: 'utf8' });
            assert.equal(result.status, 1, result.stderr);
            assert.deepEqual(result.stderr.split('\n').filter(text => text.startsWith('cmcpd:')), [line]);
        } finally {
            rmSync(cwd, { recursive: true, force: true });
        }
    }
});

// The setup of a suite about one browser setting: the web fixture, allowed, and a daemon with
// `settings`; the suite's tests read `fixture` and `daemon` from the object returned.
function browserSuite(clientName, settings) {
    const suite = {};
    Object.assign(suite, toolCalls(() => suite.client));
    before(async () => {
        suite.fixture = await startWebFixture();
        suite.daemon = await startDaemon({
            fixtures: false,
            settings: { WEB_ALLOW_PRIVATE: 'true', WEB_ALLOWED_DOMAINS: ALLOWED, WEB_TIMEOUT_DEFAULT: 20, ...settings },
        });
        suite.client = await connect(suite.daemon, clientName);
    });
    after(async () => {
        await suite.client?.close().catch(() => {});
        await suite.daemon?.stop();
        await suite.fixture?.stop();
    });
    return suite;
}

describe('a root daemon\'s browser worker under its memory cgroup', () => {
    const suite = browserSuite('web-memory-test', { WEB_BROWSER_MEMORY_MB: 512 });
    const { call, ok } = suite;

    test('a page that allocates gigabytes is stopped by the cgroup, with a clear error', { timeout: 60_000 }, (context) => withDiagnostics(suite.daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon starts the browser under cmcp-jail; run as root');
        const result = await call('web_browse', { url: suite.fixture.url('/memory-bomb.html') });
        assert.equal(result.isError, true, JSON.stringify(result.structuredContent));
        assert.match(result.structuredContent.error, /memory limit \(WEB_BROWSER_MEMORY_MB(=512)?\)?/);
        // The next page loads (in the same worker, or a fresh one).
        assert.equal((await ok('web_browse', { url: suite.fixture.url('/static.html') })).title, 'Static fixture');
    }));
});

describe('a root daemon\'s browser worker retired by its memory', () => {
    // 1 % of 512 MB: any Chromium holds more than that after a page.
    const suite = browserSuite('web-retire-test', { WEB_BROWSER_MEMORY_MB: 512, WEB_BROWSER_RETIRE_PERCENT: 1 });
    const { ok } = suite;

    test('a worker holding WEB_BROWSER_RETIRE_PERCENT of its limit after a page serves no more pages', { timeout: 60_000 }, (context) => withDiagnostics(suite.daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon starts the browser under cmcp-jail; run as root');
        const retired = () => [...suite.daemon.stderr().matchAll(/browser worker (\d+) holds \d+ MiB after (\d+) page\(s\), at least WEB_BROWSER_RETIRE_PERCENT/g)]
            .map(match => ({ pid: Number(match[1]), pages: Number(match[2]) }));
        assert.equal((await ok('web_browse', { url: suite.fixture.url('/static.html') })).title, 'Static fixture');
        assert.ok(await eventually(() => retired().length === 1, { timeoutMs: 10_000 }), suite.daemon.stderr());
        const [first] = retired();
        assert.equal(first.pages, 1);
        // The next page goes to a fresh worker, which is retired in turn; the first one leaves.
        assert.equal((await ok('web_browse', { url: suite.fixture.url('/static.html') })).title, 'Static fixture');
        assert.ok(await eventually(() => retired().length === 2, { timeoutMs: 10_000 }), suite.daemon.stderr());
        assert.notEqual(retired()[1].pid, first.pid);
        assert.ok(await eventually(() => !browserWorkers(suite.daemon.pid).includes(first.pid), { timeoutMs: 10_000 }),
                  `the retired worker ${first.pid} is still there: ${browserWorkers(suite.daemon.pid)}`);
    }));
});

describe('a browser worker outside the jail serves its proxy to its own uid only', () => {
    // WEB_BROWSER_MEMORY_MB=0: the worker runs outside cmcp-jail, its proxy on the host's
    // loopback, where every local user can connect.
    const suite = browserSuite('web-unjailed-test', { WEB_BROWSER_MEMORY_MB: 0 });
    const { ok } = suite;

    test('another local user\'s connection to the worker\'s proxy is closed unanswered', { timeout: 60_000 }, (context) => withDiagnostics(suite.daemon, async () => {
        if (process.getuid() !== 0)
            return context.skip('only a root daemon runs the worker as a user of its own; run as root');
        // The worker's pages go through its proxy.
        assert.equal((await ok('web_browse', { url: suite.fixture.url('/static.html') })).title, 'Static fixture');
        const [worker] = browserWorkers(suite.daemon.pid);
        assert.ok(worker, 'a worker is running');
        // Its proxy: the worker's one listening TCP socket.
        const listening = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' }).split('\n')
            .filter(line => line.includes(`pid=${worker},`));
        const port = Number(/127\.0\.0\.1:(\d+)/.exec(listening.join('\n'))?.[1]);
        assert.ok(port > 0, `the worker's proxy port: ${listening}`);
        // This process is another user than the worker (root, or whoever runs the tests).
        const hits = suite.fixture.hits(ALLOWED, '/static.html').length;
        const answer = await new Promise(resolve => {
            let received = '';
            const socket = net.connect(port, '127.0.0.1', () =>
                socket.write(`GET ${suite.fixture.url('/static.html')} HTTP/1.1\r\nHost: 127.0.0.1:${suite.fixture.port}\r\n\r\n`));
            socket.on('data', chunk => { received += chunk.toString('latin1'); });
            socket.on('close', () => resolve(received));
            socket.on('error', () => {});
            socket.setTimeout(10_000, () => socket.destroy());
        });
        assert.equal(answer, '', 'the proxy answered another user');
        assert.equal(suite.fixture.hits(ALLOWED, '/static.html').length, hits, 'the fixture was reached through the worker\'s proxy');
        // The worker's own pages still load.
        assert.equal((await ok('web_browse', { url: suite.fixture.url('/static.html') })).title, 'Static fixture');
    }));
});
