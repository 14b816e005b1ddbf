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

A route with "generate" instead of "file" answers a Service of many endpoints as the API server
does, from a list it makes up: {"endpoints": 10000, "per_slice": 100, "port": 9841,
"expire_at_page": 3, "expire_times": 1, "expire_after_lists": 0, "change_at_page": 2,
"change_times": 1, "first_octet": 10}. The slices (per_slice endpoints each, addresses in
<first_octet>.0.0.0/8: 10 by default, 127 for a benchmark on loopback) come in pages
of the request's `limit`, joined by `continue` tokens that name the list's resourceVersion and the
next slice; every page carries the list's resourceVersion. Optional faults, each counted per
route: the request for page expire_at_page (1 is the first) is answered 410 Gone (an expired
continue token), expire_times times (-1: always) once expire_after_lists whole lists were
served; and before page change_at_page is served, change_times times, the Service changes (its
first endpoint is replaced by a new one, the resourceVersion grows) and the page is served from
the changed list, as a server that does not keep one revision across pages would.

The server prints the port it listens on, one line on stdout, once it accepts connections, and
exits when its stdin closes (the test that started it ended) or on SIGTERM. With --log, every
request's path and query is appended to that file, one line each.
"""

import argparse
import base64
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
    return "continue" in wanted or "continue" not in query or "generate" in route


EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You "
           "can start a new list without the continue parameter.")


class GeneratedService:
    """The endpoints of one "generate" route, and the faults it still has to inject."""

    def __init__(self, spec):
        self.spec = spec
        self.lock = threading.Lock()
        self.resource_version = 1000
        self.replaced = 0  # endpoints replaced by changes so far
        self.expired = 0
        self.changed = 0
        self.lists = 0  # whole lists served

    def address(self, index):
        if index < self.replaced:
            index += self.spec["endpoints"]  # the replacement, a new address
        return "%d.%d.%d.%d" % (self.spec.get("first_octet", 10), 1 + index // 62500,
                                index // 250 % 250, index % 250 + 1)

    def slice_(self, number, first, count):
        name = "rail-exporter-gen-%05d" % number
        return {
            "metadata": {"name": name, "namespace": "monitoring",
                         "labels": {"kubernetes.io/service-name": "generated"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [self.address(i)], "conditions": {"ready": True},
                           "nodeName": "node-%05d" % i,
                           "targetRef": {"kind": "Pod", "namespace": "monitoring",
                                         "name": "rail-exporter-%05d" % i}}
                          for i in range(first, first + count)],
            "ports": [{"name": "responder", "port": self.spec.get("port", 9841),
                       "protocol": "TCP"}],
        }

    def fault(self, page):
        """None, or (status, body) of the fault this page gets; changes the list when due."""
        spec = self.spec
        times = spec.get("expire_times", 0)
        if (page == spec.get("expire_at_page") and self.lists >= spec.get("expire_after_lists", 0)
                and (times < 0 or self.expired < times)):
            self.expired += 1
            return 410, status_object(410, "Expired", EXPIRED)
        if page == spec.get("change_at_page") and self.changed < spec.get("change_times", 1):
            self.changed += 1
            self.replaced += 1
            self.resource_version += 1
        return None

    def page(self, query):
        limit = int(query.get("limit", ["500"])[0])
        token = query.get("continue", [None])[0]
        start = json.loads(base64.b64decode(token))["start"] if token else 0
        per_slice = self.spec.get("per_slice", 100)
        slices = -(-self.spec["endpoints"] // per_slice)
        with self.lock:
            fault = self.fault(start // limit + 1)
            if fault:
                return fault
            items = [self.slice_(n, n * per_slice,
                                 min(per_slice, self.spec["endpoints"] - n * per_slice))
                     for n in range(start, min(start + limit, slices))]
            metadata = {"resourceVersion": str(self.resource_version)}
            if start + limit < slices:
                metadata["continue"] = base64.b64encode(json.dumps(
                    {"rv": self.resource_version, "start": start + limit}).encode()).decode()
            else:
                self.lists += 1
        return 200, json.dumps({"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1",
                                "metadata": metadata, "items": items}).encode()


def make_handler(args, routes):
    generated = {id(route): GeneratedService(route["generate"])
                 for route in routes if "generate" in route}

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
                    if "generate" in route:
                        self.answer(*generated[id(route)].page(query))
                        return
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
