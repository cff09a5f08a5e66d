# A web server for the published-ports tests, run as a background job's Python code: files of
# the workspace, a server-sent event stream, a WebSocket echo, the request's headers as JSON, and
# the misbehaviours the forwarder must bound (a redirect to an internal address, a response head
# far over 64 KiB, a body that never ends). PORT is set by the test before the code is sent.
import base64
import hashlib
import json
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

PORT = 8000
WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'


class Handler(SimpleHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, status, body, kind='application/json', extra=()):
        self.send_response(status)
        self.send_header('Content-Type', kind)
        self.send_header('Content-Length', str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == '/headers':
            seen = {name.lower(): value for name, value in self.headers.items()}
            seen['request-target'] = self.path
            return self.reply(200, json.dumps(seen).encode())
        if self.path == '/events':
            return self.events()
        if self.path == '/ws':
            return self.websocket()
        if self.path == '/internal-redirect':
            return self.reply(302, b'', extra=[('Location', 'http://169.254.169.254/latest/meta-data/')])
        if self.path == '/own-redirect':
            return self.reply(302, b'', extra=[('Location', f'http://127.0.0.1:{PORT}/hello.txt')])
        if self.path == '/huge-headers':
            self.send_response(200)
            for n in range(100):
                self.send_header(f'X-Filler-{n}', 'x' * 1000)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        if self.path == '/forever':
            self.send_response(200)
            self.send_header('Content-Type', 'application/octet-stream')
            self.end_headers()
            chunk = b'z' * 65536
            try:
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        return super().do_GET()

    def do_POST(self):
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        self.reply(200, json.dumps({'length': len(body), 'sha256': hashlib.sha256(body).hexdigest()}).encode())

    def events(self):
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Cache-Control', 'no-cache')
        self.end_headers()
        for n in range(3):
            self.wfile.write(f'data: tick {n}\n\n'.encode())
            self.wfile.flush()
            time.sleep(0.3)
        self.close_connection = True

    def websocket(self):
        key = self.headers['Sec-WebSocket-Key']
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header('Upgrade', 'websocket')
        self.send_header('Connection', 'Upgrade')
        self.send_header('Sec-WebSocket-Accept', accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                break
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(self.rfile.read(2), 'big')
            elif length == 127:
                length = int.from_bytes(self.rfile.read(8), 'big')
            mask = self.rfile.read(4) if head[1] & 0x80 else b'\0\0\0\0'
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                self.wfile.write(b'\x88\x00')
                self.wfile.flush()
                break
            if opcode in (1, 2):
                size = bytes([len(data)]) if len(data) < 126 else bytes([126]) + len(data).to_bytes(2, 'big')
                self.wfile.write(bytes([0x80 | opcode]) + size + data)
                self.wfile.flush()
        self.close_connection = True


ThreadingHTTPServer(('127.0.0.1', PORT), Handler).serve_forever()
