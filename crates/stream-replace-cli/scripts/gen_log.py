#!/usr/bin/env python3
"""Writes a deterministic application log of about SIZE_MB megabytes to stdout.

Lines look like a web service's access log; some carry e-mail addresses,
IPv4 addresses, API keys, SSNs and passwords, the values the rules in
vs_sed.sh redact.
"""
import random
import sys

size = int(sys.argv[1]) if len(sys.argv) > 1 else 100
target = size * 1000 * 1000
rng = random.Random(11)
alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
names = ["ann", "bob", "chen", "dana", "eve", "farid", "gita", "hugo", "ivy", "jon"]
domains = ["example.org", "mail.test", "corp.example", "acme.io"]
paths = ["/api/v1/items", "/api/v1/users", "/login", "/health", "/api/v2/orders/search"]
words = ("request handled cache miss retry upstream latency ok queue drained "
         "worker started config reloaded slow query timeout user session").split()

out = sys.stdout
written = 0
n = 0
buf = []
while written < target:
    n += 1
    ts = "2026-03-%02dT%02d:%02d:%02d.%03dZ" % (
        1 + n // 3000000 % 28, n // 60000 % 24, n // 1000 % 60, n // 17 % 60, n % 1000)
    level = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"])
    parts = [ts, level, "req=%d" % n, "path=" + rng.choice(paths),
             "status=%d" % rng.choice([200, 200, 200, 201, 304, 404, 500]),
             "dur=%dms" % rng.randint(1, 900)]
    r = rng.random()
    if r < 0.25:
        parts.append("user=%s.%s%d@%s" % (rng.choice(names), rng.choice(names),
                                          rng.randint(1, 99), rng.choice(domains)))
    if r < 0.30:
        parts.append("ip=%d.%d.%d.%d" % (10, rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254)))
    if 0.30 <= r < 0.33:
        parts.append("auth=sk-" + "".join(rng.choice(alnum) for _ in range(20)))
    if 0.33 <= r < 0.34:
        parts.append("ssn=%03d-%02d-%04d" % (rng.randint(100, 899), rng.randint(1, 99), rng.randint(1, 9999)))
    if 0.34 <= r < 0.35:
        parts.append("password=" + "".join(rng.choice(alnum) for _ in range(12)))
    parts.append('msg="%s"' % " ".join(rng.choice(words) for _ in range(rng.randint(3, 12))))
    line = " ".join(parts) + "\n"
    buf.append(line)
    written += len(line)
    if len(buf) >= 10000:
        out.write("".join(buf))
        buf = []
out.write("".join(buf))
