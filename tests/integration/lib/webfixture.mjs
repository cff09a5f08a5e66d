// A loopback web server for the web tools' tests. It listens on two addresses with one port:
// 127.0.0.1 is the site the tests allow, 127.0.0.2 the "refused host" (left out of
// WEB_ALLOWED_DOMAINS). Every request is counted by address and path, so a test can show that a
// refused host was never contacted. It serves static pages, pages that change their DOM with
// JavaScript, redirects, huge and slow bodies, a page whose subresources are on the refused host,
// and fake SearXNG and Brave Search endpoints.
import dgram from 'node:dgram';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const selectorsPage = readFileSync(join(here, '../../unit/support/data/selectors.html'));
// Markup that makes Debian's gumbo abort on an assertion.
const gumboAssertion = readFileSync(join(here, '../../unit/support/data/gumbo-assertion.html'));

export const ALLOWED = '127.0.0.1';
export const REFUSED = '127.0.0.2';

// A page of typical size and shape (about 20 KB): the benchmarks scrape and browse it.
export function articlePage(paragraphs = 40) {
    const body = [];
    for (let i = 1; i <= paragraphs; ++i)
        body.push(`<h2 id="s${i}">Section ${i}</h2><p class="para">Paragraph ${i} has <a href="/link/${i}">a link</a>, <b>bold</b> and <em>emphasis</em>; `
            + 'the quick brown fox jumps over the lazy dog. '.repeat(8) + '</p>');
    return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Article fixture</title>
<style>body { font-family: sans-serif; } .hidden { display: none; }</style>
<script>window.analytics = { track() {} };</script></head>
<body><header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><article><h1>The article</h1>${body.join('\n')}</article></main>
<footer>Fixture footer</footer></body></html>`;
}

const staticPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Static fixture</title>
<style>p { color: red; }</style><script>var secretFromScript = 'SCRIPT-TEXT';</script></head>
<body><nav>NAVIGATION</nav><main><h1>Hello fixture</h1><p>First <b>bold</b> paragraph with <a href="/next">a link</a>.</p>
<ul id="list"><li>one</li><li>two</li><li>three</li></ul></main><footer>FOOTER</footer></body></html>`;

// The DOM the server sends says "before"; scripts change it at once and again after 300 ms.
const scriptedPage = `<!DOCTYPE html><html><head><title>Scripted fixture</title></head>
<body><div id="state">before</div><script>
document.getElementById('state').textContent = 'changed by script';
setTimeout(() => {
  const late = document.createElement('div');
  late.id = 'late';
  late.textContent = 'late content';
  document.body.appendChild(late);
  document.title = 'Scripted fixture (done)';
}, 300);
</script></body></html>`;

function subresourcePage(port) {
    const refused = `http://${REFUSED}:${port}`;
    return `<!DOCTYPE html><html><head><title>Subresource fixture</title>
<link rel="stylesheet" href="${refused}/style.css">
<script src="${refused}/evil.js"></script></head>
<body><p id="own">own content</p><img src="${refused}/tracker.png">
<iframe src="${refused}/frame.html"></iframe>
<script>fetch('${refused}/api').catch(() => {}); new Image().src = '${refused}/beacon';</script>
<img src="/local.png"></body></html>`;
}

// A page that asks a STUN server on the refused host for its address over UDP (WebRTC's ICE):
// UDP outside the browser's proxy must not leave. It says what it saw in #rtc once gathering
// is over or a second has passed.
function webrtcPage(port) {
    return `<!DOCTYPE html><html><head><title>WebRTC fixture</title></head><body><div id="state">start</div><script>
const done = text => { if (!document.getElementById('rtc')) { const d = document.createElement('div'); d.id = 'rtc'; d.textContent = text; document.body.appendChild(d); } };
if (typeof RTCPeerConnection === 'undefined') {
  done('no RTCPeerConnection');
} else {
  const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:${REFUSED}:${port}' }] });
  const candidates = [];
  pc.onicecandidate = event => { if (event.candidate) candidates.push(event.candidate.candidate); else done('gathered: ' + candidates.join(' | ')); };
  pc.createDataChannel('x');
  pc.createOffer().then(offer => pc.setLocalDescription(offer));
  setTimeout(() => done('timeout: ' + candidates.join(' | ')), 1000);
}
</script></body></html>`;
}

export async function startWebFixture() {
    const hits = [];
    let port = 0;
    const handler = (request, response) => {
        const url = new URL(request.url, `http://${request.headers.host ?? 'fixture'}`);
        hits.push({ address: request.socket.localAddress, path: url.pathname, host: request.headers.host, headers: request.headers });
        const send = (status, body, type = 'text/html; charset=utf-8', headers = {}) => {
            response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
            response.end(body);
        };
        switch (url.pathname) {
        case '/static.html':
            return send(200, staticPage);
        case '/selectors.html':
            return send(200, selectorsPage);
        case '/gumbo-assertion.html':
            return send(200, gumboAssertion);
        case '/article.html':
            return send(200, articlePage());
        case '/scripted.html':
            return send(200, scriptedPage);
        case '/subresources.html':
            return send(200, subresourcePage(port));
        case '/webrtc.html':
            return send(200, webrtcPage(port));
        case '/local.png':
        case '/image.png':
            return send(200, Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201d3a0a8a40000000049454e44ae426082', 'hex'), 'image/png');
        case '/latin1.html':
            response.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
            return response.end(Buffer.from('<title>caf\xe9</title><p>na\xefve \x80</p>', 'latin1'));
        case '/redirect': {
            response.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') });
            return response.end();
        }
        case '/missing':
            return send(404, '<h1>Not here</h1>');
        case '/huge': {
            // 64 MB, sent as fast as the client reads; the client must stop it early.
            response.writeHead(200, { 'content-type': 'text/html' });
            const chunk = Buffer.alloc(64 * 1024, 'x');
            let sent = 0;
            const pump = () => {
                while (sent < 1024 && !response.destroyed) {
                    ++sent;
                    if (!response.write(chunk))
                        return response.once('drain', pump);
                }
                response.end();
            };
            return pump();
        }
        case '/memory-bomb.html':
            // Two gigabytes, written to so that they are really used, 64 MB at a time.
            return send(200, `<!DOCTYPE html><html><head><title>Memory bomb</title></head><body><script>
const kept = [];
for (let i = 0; i < 32; ++i) { const block = new Uint8Array(64 << 20); block.fill(i + 1); kept.push(block); }
document.title = 'survived ' + kept.length;
</script></body></html>`);
        case '/slow': {
            // Headers at once, then a byte every 200 ms, forever (until the client goes).
            response.writeHead(200, { 'content-type': 'text/html' });
            response.write('<html><body>');
            const timer = setInterval(() => response.write('.'), 200);
            response.on('close', () => clearInterval(timer));
            return;
        }
        case '/searxng/search': {
            if (url.searchParams.get('format') !== 'json')
                return send(403, 'Forbidden');
            const q = url.searchParams.get('q');
            return send(200, JSON.stringify({
                query: q,
                results: [
                    { title: `First &amp; best about ${q}`, url: 'https://example.org/one', content: 'A <b>highlighted</b> snippet' },
                    { title: 'Second', url: 'https://example.org/two', content: 'Plain snippet' },
                    { title: 'No URL', content: 'dropped' },
                ],
            }), 'application/json');
        }
        case '/searxng-json-off/search':
            return send(403, 'Forbidden');
        case '/brave/res/v1/web/search': {
            if (request.headers['x-subscription-token'] !== 'test-brave-key')
                return send(401, JSON.stringify({ error: 'bad key' }), 'application/json');
            const q = url.searchParams.get('q');
            return send(200, JSON.stringify({
                web: { results: [
                    { title: `Brave <strong>${q}</strong>`, url: 'https://brave.example/1', description: 'Brave <strong>snippet</strong> &amp; more' },
                    { title: 'Brave two', url: 'https://brave.example/2', description: '' },
                ] },
            }), 'application/json');
        }
        default:
            return send(200, `<html><head><title>${url.pathname}</title></head><body>${url.pathname}</body></html>`);
        }
    };
    const servers = [http.createServer(handler), http.createServer(handler)];
    await new Promise((resolve, reject) => {
        servers[0].once('error', reject);
        servers[0].listen(0, ALLOWED, resolve);
    });
    port = servers[0].address().port;
    await new Promise((resolve, reject) => {
        servers[1].once('error', reject);
        servers[1].listen(port, REFUSED, resolve);
    });
    // UDP on the refused host's port: a STUN request from a page would arrive here.
    const datagrams = [];
    const udp = dgram.createSocket('udp4');
    udp.on('message', (message, from) => datagrams.push({ bytes: message.length, from: from.address }));
    await new Promise((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, REFUSED, resolve);
    });
    const sockets = new Set();
    for (const server of servers)
        server.on('connection', socket => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
    return {
        port,
        url: (path, host = ALLOWED) => `http://${host}:${port}${path}`,
        hits: (address, path) => hits.filter(hit => hit.address === address && (path === undefined || hit.path === path)),
        allHits: () => hits,
        datagrams: () => datagrams,
        reset: () => { hits.length = 0; },
        async stop() {
            for (const socket of sockets)
                socket.destroy();
            await Promise.all(servers.map(server => new Promise(resolve => server.close(resolve))));
            await new Promise(resolve => udp.close(resolve));
        },
    };
}
