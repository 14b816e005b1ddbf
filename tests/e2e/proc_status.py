"""Fields of /proc/<pid>/status as numbers, for the tests and benchmarks that watch a process's
threads and memory (the memory fields are in KiB, as the kernel writes them)."""


def status(pid, fields):
    """{field: int} for each of `fields` ("Threads", "VmRSS", "VmHWM", "RssAnon", ...). OSError
    when the process is gone; LookupError naming the fields the file lacks."""
    wanted = set(fields)
    values = {}
    with open("/proc/%d/status" % pid, encoding="ascii") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in wanted:
                values[key] = int(rest.split()[0])
    missing = wanted - values.keys()
    if missing:
        raise LookupError("/proc/%d/status has no %s" % (pid, ", ".join(sorted(missing))))
    return values
