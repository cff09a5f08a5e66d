#!/usr/bin/python3
# Stands in for cmcp-browser in tst_browserpool: the same JSON-lines protocol, no browser. A
# request's URL says what to do: http://ok/... answers at once with the URL as content,
# http://slow/N answers after N ms, http://crash/ kills the worker with SIGSEGV, http://hang/
# never answers. The title is the worker's own arguments, so that a test sees which rules the
# worker was started with.
import json
import os
import signal
import sys
import threading
import time

lock = threading.Lock()


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + '\n')
        sys.stdout.flush()


def answer(request):
    url = request['url']
    if url.startswith('http://slow/'):
        time.sleep(int(url.rsplit('/', 1)[1]) / 1000)
    send({'id': request['id'], 'ok': True, 'url': url, 'title': ' '.join(sys.argv[1:]), 'content': url,
          'format': 'html', 'blocked': []})


send({'ready': True})
for line in sys.stdin:
    request = json.loads(line)
    if 'cancel' in request:
        continue
    url = request['url']
    if url.startswith('http://crash/'):
        os.kill(os.getpid(), signal.SIGSEGV)
    if url.startswith('http://hang/'):
        continue
    threading.Thread(target=answer, args=(request,)).start()
