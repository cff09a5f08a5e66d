// Raw HTTP helpers for driving cmcpd's HTTP door without an MCP SDK in between.
import http from 'node:http';

export const BOTH = 'application/json, text/event-stream';

// A request with full control of the headers (fetch will not send a custom Host header).
export function rawHttp({ port, method = 'GET', path = '/health', headers = {}, body, timeoutMs = 5000 }) {
    return new Promise((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, response => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', chunk => { text += chunk; });
            response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, text }));
            response.on('error', reject);
        });
        request.setTimeout(timeoutMs, () => request.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
        request.on('error', reject);
        request.end(body);
    });
}

// POSTs one message to a legacy SSE session's endpoint URL; the reply travels on the stream,
// so the POST itself must be accepted with 202.
export async function postLegacy(postUrl, message) {
    const response = await fetch(postUrl, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message), signal: AbortSignal.timeout(10_000) });
    if (response.status !== 202)
        throw new Error(`POST ${postUrl} answered ${response.status}, not 202`);
    await response.arrayBuffer();
}

// POSTs one JSON-RPC payload (object, array or raw string) to /mcp.
export function post(url, payload, { session, protocolVersion, accept = BOTH, contentType = 'application/json', headers = {}, signal } = {}) {
    const all = { accept, 'content-type': contentType, ...headers };
    if (session)
        all['mcp-session-id'] = session;
    if (protocolVersion)
        all['mcp-protocol-version'] = protocolVersion;
    return fetch(url, {
        method: 'POST',
        headers: all,
        body: typeof payload === 'string' ? payload : JSON.stringify(payload),
        signal: signal ?? AbortSignal.timeout(10_000),
    });
}

export function initializeRequest(protocolVersion = '2025-11-25', id = 'init') {
    return {
        jsonrpc: '2.0', id, method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-http-test', version: '0' } },
    };
}

// Opens a session the way a client does: initialize, then notifications/initialized.
export async function openSession(url, protocolVersion = '2025-11-25', headers = {}) {
    const response = await post(url, initializeRequest(protocolVersion), { headers });
    if (response.status !== 200)
        throw new Error(`initialize: HTTP ${response.status}: ${await response.text()}`);
    const session = response.headers.get('mcp-session-id');
    const body = await response.json();
    if (body.result?.protocolVersion !== protocolVersion)
        throw new Error(`initialize negotiated ${JSON.stringify(body)}`);
    const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' },
        { session, protocolVersion, headers });
    await initialized.arrayBuffer();
    return { session, protocolVersion, initialized: initialized.status };
}

// Reads server-sent events from a fetch Response body. Comments come back as {comment}.
export class SseReader {
    constructor(response) {
        this.reader = response.body.getReader();
        this.decoder = new TextDecoder();
        this.buffer = '';
        this.queue = [];
        this.done = false;
    }

    // Dispatches as the EventSource algorithm does: a block with data lines is an event, a block
    // of only a comment is {comment}; `retry:` and `id:` are remembered on the reader.
    parseBlocks() {
        let end;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
            const block = this.buffer.slice(0, end);
            this.buffer = this.buffer.slice(end + 2);
            const event = { event: 'message', data: [] };
            let comment = null;
            for (const line of block.split('\n')) {
                if (line.startsWith(':'))
                    comment = line.slice(1).trim();
                else if (line.startsWith('event:'))
                    event.event = line.slice(6).trim();
                else if (line.startsWith('data:'))
                    event.data.push(line.slice(5).replace(/^ /, ''));
                else if (line.startsWith('id:'))
                    event.id = this.lastEventId = line.slice(3).trim();
                else if (line.startsWith('retry:'))
                    this.retry = Number(line.slice(6));
            }
            if (event.data.length > 0)
                this.queue.push({ ...event, data: event.data.join('\n') });
            else if (comment !== null)
                this.queue.push({ comment });
        }
    }

    // The next event or comment; null when the stream ended. Rejects after timeoutMs.
    async next(timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        while (this.queue.length === 0) {
            if (this.done)
                return null;
            const left = deadline - Date.now();
            if (left <= 0)
                throw new Error(`no server-sent event within ${timeoutMs} ms`);
            let timer;
            const chunk = await Promise.race([
                this.reader.read(),
                new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no server-sent event within ${timeoutMs} ms`)), left); }),
            ]).finally(() => clearTimeout(timer));
            if (chunk.done) {
                this.done = true;
                this.buffer += this.decoder.decode();
            } else {
                this.buffer += this.decoder.decode(chunk.value, { stream: true });
            }
            this.parseBlocks();
        }
        return this.queue.shift();
    }

    // The next event that is not a comment.
    async nextEvent(timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const item = await this.next(Math.max(1, deadline - Date.now()));
            if (!item || !('comment' in item))
                return item;
        }
    }

    // Everything that arrives within `ms`, then stops reading (the stream stays open).
    async collectFor(ms) {
        const deadline = Date.now() + ms;
        const items = [];
        for (;;) {
            const left = deadline - Date.now();
            if (left <= 0)
                return items;
            try {
                const item = await this.next(left);
                if (!item)
                    return items;
                items.push(item);
            } catch {
                return items; // nothing more within the window
            }
        }
    }

    async cancel() {
        try { await this.reader.cancel(); } catch { /* already closed */ }
    }
}
