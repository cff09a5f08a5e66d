// The search back ends' endpoints are the only origins the operator trusts past the web tools'
// domain list, and they cannot be turned into a way around it: BRAVE_SEARCH_URL is trusted only
// while a Brave key makes it a back end, and a trusted origin on a loopback or private address
// is still refused (every path of a SearXNG beside the daemon would otherwise be open to
// web_scrape) unless WEB_SEARCH_ALLOW_PRIVATE says so. Nothing refused is contacted.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';

import { Client, StreamableHTTPClientTransport } from '../integration/lib/sdk.mjs';
import { startDaemon, withDiagnostics } from '../integration/lib/daemon.mjs';
import { toolCalls } from '../integration/lib/tools.mjs';

describe('trusted search origins', () => {
    let server;
    let port;
    const hits = [];

    before(async () => {
        server = http.createServer((request, response) => {
            hits.push(request.url);
            response.setHeader('content-type', 'text/html');
            response.end('<html><body><p>internal admin page</p></body></html>');
        });
        await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
        port = server.address().port;
    });

    after(async () => { await new Promise(resolve => server.close(resolve)); });

    async function withDaemon(settings, body) {
        const daemon = await startDaemon({ fixtures: false, settings: { WEB_ALLOWED_DOMAINS: 'example.com', WEB_TIMEOUT_DEFAULT: 5, ...settings } });
        const client = new Client({ name: 'egress-trust', version: '1.0.0' });
        try {
            await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
            await withDiagnostics(daemon, () => body(toolCalls(() => client)));
        } finally {
            await client.close().catch(() => {});
            await daemon.stop();
        }
    }

    test('BRAVE_SEARCH_URL without a key is no trusted origin', () => withDaemon(
        { BRAVE_SEARCH_URL: `http://127.0.0.1:${port}/res/v1/web/search`, WEB_SEARCH_ALLOW_PRIVATE: 'true' },
        async ({ refused }) => {
            await refused('web_scrape', { url: `http://127.0.0.1:${port}/admin` }, /^refused \(WEB_ALLOWED_DOMAINS\)/);
            assert.deepEqual(hits, []);
        }));

    test('a trusted origin on loopback keeps the private-address rule', () => withDaemon(
        { WEB_SEARCH_URL: `http://127.0.0.1:${port}/` },
        async ({ refused }) => {
            await refused('web_scrape', { url: `http://127.0.0.1:${port}/admin` },
                /^refused \(WEB_SEARCH_ALLOW_PRIVATE\): .*set WEB_SEARCH_ALLOW_PRIVATE=true/);
            assert.deepEqual(hits, []);
        }));
});
