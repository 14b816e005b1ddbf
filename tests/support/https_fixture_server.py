#!/usr/bin/env python3
"""An HTTPS server that answers recorded API responses, for tests of clients that speak to one
(the Kubernetes discovery source).

It serves the routes of a JSON file: [{"path": "/apis/...", "query": {"name": "value", ...},
"file": "page1.json", "status": 200}, ...]. A request matches a route when its path is the route's
and every query parameter the route names has that value, and no `continue` parameter is present
that the route does not name (so that a first page and a later page are told apart). Every
request must carry "Authorization: Bearer <token>", the token read from --token-file on each
request (tests rotate it). A request that matches no route is answered 404, a wrong token 401,
both as Kubernetes Status objects.

The server prints the port it listens on, one line on stdout, once it accepts connections, and
exits when its stdin closes (the test that started it ended) or on SIGTERM. With --log, every
request's path and query is appended to that file, one line each.
"""

import argparse
import http.server
import json
import os
import ssl
import sys
import threading
import urllib.parse


def status_object(code, reason, message):
    return json.dumps({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }).encode()


def route_matches(route, path, query):
    if route["path"] != path:
        return False
    wanted = route.get("query", {})
    for name, value in wanted.items():
        if query.get(name) != [value]:
            return False
    return "continue" in wanted or "continue" not in query


def make_handler(args, routes):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *values):  # quiet: the test reads --log instead
            pass

        def answer(self, code, body):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            if args.log:
                with open(args.log, "a", encoding="utf-8") as log:
                    log.write(self.path + "\n")
            with open(args.token_file, encoding="utf-8") as token_file:
                token = token_file.read().strip()
            if self.headers.get("Authorization") != "Bearer " + token:
                self.answer(401, status_object(401, "Unauthorized", "Unauthorized"))
                return
            for route in routes:
                if route_matches(route, url.path, query):
                    with open(os.path.join(args.fixtures, route["file"]), "rb") as fixture:
                        self.answer(route.get("status", 200), fixture.read())
                    return
            self.answer(404, status_object(404, "NotFound", "no fixture for " + self.path))

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--routes", required=True, help="the routes' JSON file")
    parser.add_argument("--fixtures", required=True, help="the folder of the routes' files")
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--log")
    args = parser.parse_args()
    with open(args.routes, encoding="utf-8") as routes_file:
        routes = json.load(routes_file)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(args, routes))
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)

    def stop_when_stdin_closes():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
