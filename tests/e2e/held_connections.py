"""Clients that hold an HTTP server's connections without asking anything of it, for the
connection load test (connection_load_test.py) and the HTTP server benchmark
(bench/http_server_compare.py): idle TCP connections, and slowloris clients that send a request
header one byte at a time and never end it. A connection the server closes is counted and
opened again, as an attacker would."""

import selectors
import socket
import threading
import time

SLOW_BYTE = 1.0  # seconds between a slowloris client's header bytes
CONNECT_TIMEOUT = 20.0  # seconds for a slowloris client's connect and TLS handshake


class IdleConnections:
    """`count` TCP connections that send nothing, opened without blocking."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.closed_by_server = 0
        self.established = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        for _ in range(self.count):
            self._open()
        self._thread.start()
        return self

    def _open(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", self.port))
        self._selector.register(sock, selectors.EVENT_WRITE, "connecting")

    def _run(self):
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.2):
                self._event(key.fileobj, key.data)

    def _event(self, sock, state):
        if state == "connecting":
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                self._selector.modify(sock, selectors.EVENT_READ, "open")
                with self._lock:
                    self.established += 1
                return
            self._selector.unregister(sock)
            sock.close()
            time.sleep(0.01)
            self._open()
            return
        try:  # readable: the server closed it (or answered, which also ends it)
            sock.recv(4096)
        except OSError:
            pass
        self._selector.unregister(sock)
        sock.close()
        with self._lock:
            self.established -= 1
            self.closed_by_server += 1
        self._open()

    def held(self):
        with self._lock:
            return self.established

    def closed(self):
        with self._lock:
            return self.closed_by_server

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()
        self._selector.close()


class Slowloris:
    """`count` clients, each sending a request header one byte per SLOW_BYTE seconds and never
    ending it (after the TLS handshake when `context` is given)."""

    def __init__(self, port, count, context):
        self.port, self.context = port, context
        self.closed_by_server = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client, daemon=True)
                         for _ in range(count)]

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def _connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=CONNECT_TIMEOUT)
        if self.context:
            sock = self.context.wrap_socket(sock, server_hostname="127.0.0.1")
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        return sock

    def _client(self):
        while not self._stop.is_set():
            try:
                sock = self._connect()
            except OSError:
                self._stop.wait(SLOW_BYTE)
                continue
            with sock:
                while not self._stop.wait(SLOW_BYTE):
                    try:
                        sock.sendall(b"a")
                    except OSError:
                        break
            if not self._stop.is_set():
                with self._lock:
                    self.closed_by_server += 1

    def closed(self):
        with self._lock:
            return self.closed_by_server

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=CONNECT_TIMEOUT + 5)
