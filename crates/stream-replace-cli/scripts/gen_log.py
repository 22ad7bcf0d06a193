#!/usr/bin/env python3
"""Writes a deterministic application log of about SIZE_MB megabytes to stdout.

Lines look like a web service's access log; some carry e-mail addresses,
IPv4 addresses, API keys, SSNs, passwords, `Authorization:` headers and
trace ids, the values the rules in vs_sed.sh redact. The log has what line
rules must get right: about one line in eight ends in CRLF, some lines are
long (50 to 200 kB), some end in spaces or tabs, a password can be the last
field of its line, and the last line has no newline.
"""
import random
import sys

size = int(sys.argv[1]) if len(sys.argv) > 1 else 100
target = size * 1000 * 1000
rng = random.Random(11)
alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
hexd = "0123456789abcdef"
names = ["ann", "bob", "chen", "dana", "eve", "farid", "gita", "hugo", "ivy", "jon"]
domains = ["example.org", "mail.test", "corp.example.org", "acme.io"]
paths = ["/api/v1/items", "/api/v1/users", "/login", "/health", "/api/v2/orders/search"]
words = ("request handled cache miss retry upstream latency ok queue drained "
         "worker started config reloaded slow query timeout user session").split()


def token(n, chars=alnum):
    return "".join(rng.choice(chars) for _ in range(n))


out = sys.stdout
written = 0
n = 0
buf = []
while written < target:
    n += 1
    ts = "2026-03-%02dT%02d:%02d:%02d.%03dZ" % (
        1 + n // 3000000 % 28, n // 60000 % 24, n // 1000 % 60, n // 17 % 60, n % 1000)
    r = rng.random()
    if r < 0.02:
        # A header dumped at the start of a line.
        line = "Authorization: Bearer sk-" + token(20)
    else:
        level = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"])
        parts = [ts, level, "req=%d" % n, "path=" + rng.choice(paths),
                 "status=%d" % rng.choice([200, 200, 200, 201, 304, 404, 500]),
                 "dur=%dms" % rng.randint(1, 900)]
        if r < 0.25:
            parts.append("user=%s.%s%d@%s" % (rng.choice(names), rng.choice(names),
                                              rng.randint(1, 99), rng.choice(domains)))
        if r < 0.30:
            parts.append("ip=%d.%d.%d.%d" % (10, rng.randint(0, 255), rng.randint(0, 255),
                                             rng.randint(1, 254)))
        if 0.30 <= r < 0.33:
            parts.append("auth=sk-" + token(20))
        if 0.33 <= r < 0.34:
            parts.append("ssn=%03d-%02d-%04d" % (rng.randint(100, 899), rng.randint(1, 99),
                                                 rng.randint(1, 9999)))
        if 0.34 <= r < 0.35:
            parts.append("password=" + token(12))
        msg = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        if n % 2000 == 0:
            # A long line: a payload of space-separated blobs, values inside.
            blobs = []
            length = rng.randint(50000, 200000)
            while sum(len(b) + 1 for b in blobs) < length:
                k = rng.random()
                if k < 0.01:
                    blobs.append("password=" + token(16))
                elif k < 0.02:
                    blobs.append("%s@%s" % (rng.choice(names), rng.choice(domains)))
                else:
                    blobs.append(token(rng.randint(20, 400)))
            msg += " " + " ".join(blobs)
        parts.append('msg="%s"' % msg)
        k = rng.random()
        if k < 0.20:
            parts.append("trace=" + token(16, hexd))
        elif k < 0.22:
            # A password as the last field: [^ ]+ must stop at the line end.
            parts.append("password=" + token(10))
        line = " ".join(parts)
    if rng.random() < 0.05:
        line += rng.choice([" ", "  ", "\t", " \t "])
    line += "\r\n" if rng.random() < 0.125 else "\n"
    buf.append(line)
    written += len(line)
    if len(buf) > 10000:
        # The last line stays in `buf`: it loses its newline at the end.
        out.write("".join(buf[:-1]))
        buf = buf[-1:]
buf[-1] = buf[-1].rstrip("\r\n")
out.write("".join(buf))
