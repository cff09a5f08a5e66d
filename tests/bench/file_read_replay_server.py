#!/usr/bin/env python3
# A trivial stdio MCP server that measures the client's floor for file_read_vs_official.mjs. It
# answers file_read with a response built once per file and then replayed, so its own CPU per
# call is little more than a write. Run as file_read_replay_server.py, it sends cmcpd's shape
# (the text block holds the structured JSON). Run through the symlink
# file_read_replay_official.py, it sends the official server's shape (the text block holds the
# file). The shape comes from the file name because the SDK's stdio transport passes the child
# only a few environment variables.
#
#   node tests/bench/file_read_vs_official.mjs --cmcpd tests/bench/file_read_replay_server.py
import hashlib, json, os, sys
mode = 'official' if 'official' in os.path.basename(sys.argv[0]) else 'cmcpd'
root = '.'
for a in sys.argv[1:]:
    if a.startswith('SANDBOX_ROOT='):
        root = a.split('=', 1)[1]
cache = {}
def result_for(path):
    if path not in cache:
        full = os.path.join(root, 'workspace', path.lstrip('/'))
        data = open(full, 'rb').read()
        text = data.decode('utf-8')
        if mode == 'cmcpd':
            st = os.stat(full)
            structured = {'content': text, 'modified': st.st_mtime, 'path': path,
                          'sha256': hashlib.sha256(data).hexdigest(), 'size': len(data), 'success': True}
            s = json.dumps(structured, separators=(',', ':'), ensure_ascii=False)
            result = {'content': [{'text': s, 'type': 'text'}], 'structuredContent': structured}
        else:
            result = {'content': [{'type': 'text', 'text': text}], 'structuredContent': {'content': text}}
        cache[path] = json.dumps(result, separators=(',', ':'), ensure_ascii=False).encode()
    return cache[path]
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if 'id' not in msg or 'method' not in msg:
        continue
    mid = json.dumps(msg['id']).encode()
    m = msg['method']
    if m == 'initialize':
        res = json.dumps({'protocolVersion': msg['params']['protocolVersion'], 'capabilities': {'tools': {}},
                          'serverInfo': {'name': 'fake', 'version': '1'}}).encode()
    elif m == 'tools/call':
        res = result_for(msg['params']['arguments']['path'])
    else:
        res = b'{}'
    out.write(b'{"id":' + mid + b',"jsonrpc":"2.0","result":' + res + b'}\n')
    out.flush()
