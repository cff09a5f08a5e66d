"""The pages the container test's web tools fetch, served inside the container on 127.0.0.1.

Usage: page_server.py PORT. /page.html has a script that changes the page (web_browse runs it,
web_scrape does not); /searxng/search answers as a SearXNG back end does with format=json.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PAGE = b"""<!doctype html><html><head><title>Container page</title></head><body>
<p id="answer">forty-two</p><div id="state">as served</div>
<script>document.getElementById('state').textContent = 'changed by script';</script>
</body></html>"""


class Pages(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/page.html":
            return self.send(200, PAGE, "text/html; charset=utf-8")
        if url.path == "/searxng/search":
            query = parse_qs(url.query)
            if query.get("format") != ["json"]:
                return self.send(403, b"Forbidden", "text/plain")
            results = [{"title": "Container", "url": "https://example.org/container",
                        "content": "about " + query.get("q", [""])[0]}]
            return self.send(200, json.dumps({"results": results}).encode(), "application/json")
        return self.send(404, b"not found", "text/plain")

    def send(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Pages).serve_forever()
