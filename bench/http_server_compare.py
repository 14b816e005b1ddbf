#!/usr/bin/python3
"""Measures four minimal GET /metrics servers (bench/http_servers/) the same way, in one run:
Boost.Beast on Asio, libevent 2.1's evhttp, libmicrohttpd, each with one event-loop thread, and
civetweb 1.15 configured as the agent configures it today (a worker thread per connection it
may hold) as the baseline. Plain HTTP and TLS (civetweb: plain only; Debian's civetweb 1.15
crashes on TLS with OpenSSL 3).

For each server: threads and RSS at idle; scrape latency with no load; then, while IDLE idle
TCP connections and SLOW slowloris clients (one header byte a second) are held, and reopened
whenever the server closes them (the closures are counted), threads, RSS, sockets and SCRAPES
scrapes on new connections; last, requests/s from a few keep-alive client threads. Servers are
interleaved per round, in a rotated order, so that all see the same machine noise. A ceiling
check then opens more idle connections than --max-connections allows and counts the sockets
the server holds.

Prints a markdown table and findings; --json FILE keeps the raw figures. No performance target
is asserted: the exit status is non-zero only when a server fails to build, start or stay up.
"""

import argparse
import http.client
import json
import os
import random
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from held_connections import SLOW_BYTE, IdleConnections, Slowloris  # noqa: E402
import proc_status  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOURCES = os.path.join(HERE, "http_servers")
BUILD = os.path.join(REPO, "build-bench", "http_servers")
SERVERS = ["beast", "beast_lazy", "evhttp", "mhd", "civetweb"]
TLS_CAPABLE = {"beast", "beast_lazy", "evhttp", "mhd"}  # civetweb 1.15 + OpenSSL 3: see civetweb_server.cc
SCRAPE_TIMEOUT = 20.0  # seconds; a scrape stalled behind held connections takes 10-20 s
CEILING = 100  # --max-connections for the ceiling check
CEILING_IDLE = 300  # idle connections opened against it


class ServerDied(Exception):
    pass


def build():
    subprocess.run(["cmake", "-S", SOURCES, "-B", BUILD, "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", BUILD, "-j2"], check=True)


def make_body(path, size):
    """Prometheus text of about `size` bytes: families of labelled per-port samples, the shape
    of the agent's exposition (whose hgx-8gpu fixture gives 57 KB; a bigger fleet node more)."""
    rng = random.Random(1)
    lines, total, family = [], 0, 0
    while total < size:
        name = "rail_bench_family_%d_%s" % (family, "total" if family % 3 else "bytes")
        kind = "counter" if family % 3 else "gauge"
        block = ["# HELP %s A benchmark family shaped like a rail metric." % name,
                 "# TYPE %s %s" % (name, kind)]
        for device in range(8):
            for port in (1, 2):
                block.append('%s{device="mlx5_%d",port="%d",rail="%d",node="hgx-%02d"} %s' % (
                    name, device, port, device, family % 16, repr(rng.random() * 1e12)))
        text = "\n".join(block) + "\n"
        lines.append(text)
        total += len(text)
        family += 1
    with open(path, "w") as f:
        f.write("".join(lines))


def make_cert(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def raise_open_files():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_figures(pid):
    """(threads, VmRSS MiB, open sockets) of a running process."""
    try:
        values = proc_status.status(pid, ("Threads", "VmRSS"))
        threads, rss = values["Threads"], values["VmRSS"] / 1024.0
        sockets = 0
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                sockets += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
            except OSError:
                pass
    except OSError:
        raise ServerDied("pid %d is gone" % pid)
    return threads, rss, sockets


class Server:
    def __init__(self, name, tls, args):
        self.name, self.tls, self.args = name, tls, args
        self.port = free_port()
        cmd = [os.path.join(BUILD, name + "_server"), "--port", str(self.port),
               "--body", args.body, "--header-timeout-ms", str(args.header_timeout_ms)]
        if tls:
            cmd += ["--cert", args.cert, "--key", args.key]
        self.cmd = cmd

    def start(self, extra=()):
        self.proc = subprocess.Popen(self.cmd + list(extra), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.check_alive()
            if scrape(self.port, self.context(), len(self.args.body_bytes))[0] == 200:
                return self
            time.sleep(0.1)
        raise ServerDied("%s did not answer within 10 s" % self.label())

    def context(self):
        if not self.tls:
            return None
        context = ssl.create_default_context()
        context.check_hostname = False  # a throwaway self-signed certificate
        context.verify_mode = ssl.CERT_NONE
        return context

    def label(self):
        return "%s %s" % (self.name, "TLS" if self.tls else "HTTP")

    def check_alive(self):
        if self.proc.poll() is not None:
            raise ServerDied("%s exited with %s: %s" % (
                self.label(), self.proc.returncode, self.proc.stderr.read().decode()[-500:]))

    def figures(self):
        self.check_alive()
        return proc_figures(self.proc.pid)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stderr.close()


def connection(port, context, timeout=SCRAPE_TIMEOUT):
    if context:
        return http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context)
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)


def scrape(port, context, size):
    """One GET /metrics on a new connection: (status or error, seconds)."""
    start = time.monotonic()
    conn = connection(port, context)
    try:
        conn.request("GET", "/metrics", headers={"Connection": "close"})
        response = conn.getresponse()
        body = response.read()
        status = response.status if len(body) == size else "short body %d" % len(body)
    except Exception as error:  # refused, reset or timed out: a failed scrape
        status = type(error).__name__
    finally:
        conn.close()
    return status, time.monotonic() - start


def requests_per_second(port, context, size, threads, seconds):
    """Keep-alive GET /metrics from `threads` client threads for `seconds`: (req/s, failures)."""
    counts = [[0, 0] for _ in range(threads)]
    deadline = time.monotonic() + seconds

    def client(tally):
        conn = connection(port, context)
        while time.monotonic() < deadline:
            try:
                conn.request("GET", "/metrics")
                response = conn.getresponse()
                tally[0 if response.status == 200 and len(response.read()) == size else 1] += 1
            except Exception:
                tally[1] += 1
                conn.close()  # http.client reconnects on the next request
        conn.close()

    workers = [threading.Thread(target=client, args=(tally,)) for tally in counts]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(c[0] for c in counts) / seconds, sum(c[1] for c in counts)


def measure(server, args):
    """One round's figures for one server."""
    size, context = len(args.body_bytes), server.context()
    server.start()
    try:
        time.sleep(0.5)
        threads, rss, _ = server.figures()
        out = {"idle_threads": threads, "idle_rss_mib": rss}
        out["unloaded_s"] = [scrape(server.port, context, size)[1] for _ in range(args.unloaded)]

        idle = IdleConnections(server.port, args.idle).start()
        slow = Slowloris(server.port, args.slow, context).start()
        started = time.monotonic()
        try:
            while idle.established < args.idle and time.monotonic() < started + 20:
                time.sleep(0.1)
            out["held"] = idle.established
            time.sleep(2 * SLOW_BYTE)  # the slowloris clients are mid-header now
            samples, results = [server.figures()], []
            # Hold at least two header timeouts, so that closures (or their absence) show.
            hold_until = started + 2.5 * args.header_timeout_ms / 1000.0
            while len(results) < args.scrapes or time.monotonic() < hold_until:
                if len(results) < args.scrapes:
                    results.append(scrape(server.port, context, size))
                time.sleep(args.scrape_pause)
                samples.append(server.figures())
            out["hold_s"] = time.monotonic() - started
        finally:
            idle.stop()
            slow.stop()
        out["loaded_threads"] = max(s[0] for s in samples)
        out["loaded_rss_mib"] = max(s[1] for s in samples)
        out["loaded_sockets"] = max(s[2] for s in samples)
        out["loaded_s"] = [r[1] for r in results]
        out["failures"] = [str(r[0]) for r in results if r[0] != 200]
        out["closed_idle"] = idle.closed_by_server
        out["closed_slowloris"] = slow.closed_by_server
        time.sleep(1)
        out["rps"], out["rps_failures"] = requests_per_second(
            server.port, context, size, args.rps_threads, args.rps_seconds)
        server.check_alive()
    finally:
        server.stop()
    return out


def ceiling_check(server, args):
    """Sockets the server holds with CEILING_IDLE idle connections and --max-connections
    CEILING, and whether a scrape still answers then."""
    server.start(["--max-connections", str(CEILING)])
    try:
        idle = IdleConnections(server.port, CEILING_IDLE).start()
        try:
            time.sleep(2)
            sockets = server.figures()[2]
            status, seconds = scrape(server.port, server.context(), len(args.body_bytes))
        finally:
            idle.stop()
    finally:
        server.stop()
    return {"sockets": sockets, "scrape": str(status), "scrape_s": seconds}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def lines_of_code(name):
    """Lines that are neither blank nor comments in the server's own file (beast_lazy is
    beast_server.cc built with WAIT_FOR_FIRST_BYTE)."""
    source = {"beast_lazy": "beast"}.get(name, name)
    with open(os.path.join(SOURCES, source + "_server.cc")) as f:
        return sum(1 for line in f if line.strip() and not line.strip().startswith("//"))


def summarise(rounds):
    pooled = [s for r in rounds for s in r["loaded_s"]]
    return {
        "idle_threads": statistics.median(r["idle_threads"] for r in rounds),
        "idle_rss_mib": statistics.median(r["idle_rss_mib"] for r in rounds),
        "loaded_threads": statistics.median(r["loaded_threads"] for r in rounds),
        "loaded_rss_mib": statistics.median(r["loaded_rss_mib"] for r in rounds),
        "loaded_sockets": statistics.median(r["loaded_sockets"] for r in rounds),
        "held": min(r["held"] for r in rounds),
        "median_ms": 1000 * statistics.median(pooled),
        "p90_ms": 1000 * percentile(pooled, 0.9),
        "max_ms": 1000 * max(pooled),
        "unloaded_median_ms": 1000 * statistics.median(
            s for r in rounds for s in r["unloaded_s"]),
        "closed_idle": statistics.median(r["closed_idle"] for r in rounds),
        "closed_slowloris": statistics.median(r["closed_slowloris"] for r in rounds),
        "hold_s": statistics.median(r["hold_s"] for r in rounds),
        "failures": sum(len(r["failures"]) for r in rounds),
        "scrapes": len(pooled),
        "rps": statistics.median(r["rps"] for r in rounds),
        "rps_failures": sum(r["rps_failures"] for r in rounds),
    }


CAPABILITIES = {
    "beast_lazy": "beast, with each session (and its TLS engine) made at the client's first byte, "
                  "as the agent does: an idle connection is a socket and a timer",
    "beast": "connection ceiling: the accept loop is ours (stop accepting at N, resume on close); "
             "absolute deadline: tcp_stream::expires_after() set once before the handshake "
             "covers handshake + headers; TLS: asio::ssl::context::native_handle() is an "
             "SSL_CTX, so OpenSSL cipher lists, min version, client CA and verify mode map 1:1",
    "evhttp": "connection ceiling: none in 2.1 (evhttp_set_max_connections is 2.2, unreleased); "
              "timeout: evhttp_set_timeout_tv is a bufferevent read/write inactivity timeout, "
              "re-armed by every byte, so a slowloris client is never closed; TLS: our SSL_CTX "
              "via evhttp_set_bevcb + bufferevent_openssl, so OpenSSL options map 1:1",
    "mhd": "connection ceiling: MHD_OPTION_CONNECTION_LIMIT; timeout: "
           "MHD_OPTION_CONNECTION_TIMEOUT, whole seconds of inactivity (re-armed by every byte), "
           "no absolute header deadline; TLS is GnuTLS: web-config cipher_suites/min_version "
           "must be rewritten as a GnuTLS priority string (MHD_OPTION_HTTPS_PRIORITIES), the "
           "client CA is MHD_OPTION_HTTPS_MEM_TRUST, and checking the client certificate is the "
           "handler's job (gnutls_certificate_verify_peers2 on the connection's session); "
           "answering a GET on the first callback closes the connection (no keep-alive)",
    "civetweb": "connection ceiling: num_threads (a thread per connection), the listen backlog "
                "holds the rest; request_timeout_ms; TLS not measured (Debian's 1.15 calls "
                "SSL_get_peer_certificate, gone from OpenSSL 3); keep-alive off as in the agent",
}


def findings(summary, ceilings, args):
    out = []
    for name in SERVERS:
        out.append("%s (%d lines): %s." % (name, lines_of_code(name), CAPABILITIES[name]))
    for key, s in summary.items():
        if s["closed_slowloris"] == 0:
            out.append("%s: no slowloris client closed in %.0f s of hold (header timeout %d ms)."
                       % (key, s["hold_s"], args.header_timeout_ms))
        if s["failures"]:
            out.append("%s: %d of %d scrapes under load failed." % (key, s["failures"],
                                                                     s["scrapes"]))
        if s["held"] < args.idle:
            out.append("%s: only %d of %d idle connections were established at once." % (
                key, s["held"], args.idle))
    for key, c in ceilings.items():
        out.append("%s ceiling check (--max-connections %d, %d idle connections): the server "
                   "held %d sockets (listener included); a scrape then gave %s in %.2f s." % (
                       key, CEILING, CEILING_IDLE, c["sockets"], c["scrape"], c["scrape_s"]))
    return out


def table(summary):
    rows = ["| server | TLS | idle threads | idle RSS MiB | loaded threads | loaded RSS MiB | "
            "sockets held | median / p90 / max ms under load | median ms unloaded | "
            "closures idle / slowloris | failures | req/s (keep-alive) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, s in summary.items():
        name, tls = key.split()
        rows.append("| %s | %s | %d | %.1f | %d | %.1f | %d | %.1f / %.1f / %.1f | %.1f | "
                    "%d / %d (in %.0f s) | %d/%d | %.0f |" % (
                        name, "yes" if tls == "TLS" else "no", s["idle_threads"],
                        s["idle_rss_mib"], s["loaded_threads"], s["loaded_rss_mib"],
                        s["loaded_sockets"], s["median_ms"], s["p90_ms"], s["max_ms"],
                        s["unloaded_median_ms"], s["closed_idle"], s["closed_slowloris"],
                        s["hold_s"], s["failures"], s["scrapes"], s["rps"]))
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--body", help="exposition to serve (default: ~BODY_KB of generated "
                        "Prometheus text)")
    parser.add_argument("--body-kb", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scrapes", type=int, default=50, help="per server and round, under load")
    parser.add_argument("--scrape-pause", type=float, default=0.1)
    parser.add_argument("--unloaded", type=int, default=10, help="scrapes with no load")
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument("--header-timeout-ms", type=int, default=5000)
    parser.add_argument("--rps-threads", type=int, default=4)
    parser.add_argument("--rps-seconds", type=float, default=5)
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--no-tls", action="store_true")
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="write the raw figures there")
    args = parser.parse_args()

    raise_open_files()
    if not args.no_build:
        try:
            build()
        except subprocess.CalledProcessError as error:
            sys.exit("build failed: %s" % error)
    with tempfile.TemporaryDirectory(prefix="http-servers-") as tmp:
        if not args.body:
            args.body = os.path.join(tmp, "body.txt")
            make_body(args.body, args.body_kb * 1000)
        with open(args.body, "rb") as f:
            args.body_bytes = f.read()
        args.cert, args.key = make_cert(tmp)
        configs = []
        for name in args.servers.split(","):
            configs.append((name, False))
            if name in TLS_CAPABLE and not args.no_tls:
                configs.append((name, True))
        raw = {Server(n, t, args).label(): [] for n, t in configs}
        ceilings = {}
        try:
            for round_index in range(args.rounds):
                shift = round_index % len(configs)
                for name, tls in configs[shift:] + configs[:shift]:
                    server = Server(name, tls, args)
                    print("round %d: %s" % (round_index + 1, server.label()), file=sys.stderr)
                    raw[server.label()].append(measure(server, args))
            for name, tls in configs:
                if not tls:
                    server = Server(name, tls, args)
                    ceilings[server.label()] = ceiling_check(server, args)
        except ServerDied as error:
            sys.exit("server failed: %s" % error)
    summary = {key: summarise(rounds) for key, rounds in raw.items()}
    print("body: %d bytes; %d rounds; %d idle + %d slowloris connections held; header timeout "
          "%d ms; req/s from %d keep-alive client threads for %.0f s\n" % (
              len(args.body_bytes), args.rounds, args.idle, args.slow, args.header_timeout_ms,
              args.rps_threads, args.rps_seconds))
    print(table(summary))
    print()
    for finding in findings(summary, ceilings, args):
        print("- " + finding)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": raw, "summary": summary, "ceiling": ceilings,
                       "body_bytes": len(args.body_bytes)}, f, indent=1)


if __name__ == "__main__":
    main()
