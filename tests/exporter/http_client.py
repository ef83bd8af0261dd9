#!/usr/bin/env python3
"""HTTP requests for the exporter tests (loopback only, no proxies).

  http_client.py get URL            GET
  http_client.py request METHOD URL one request of any method

Prints the status code, the headers as "name: value" (name lower-case), an
empty line and the body; exit 1 when no response came.
"""
import http.client
import sys
import urllib.parse


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "get":
        method, url = "GET", sys.argv[2]
    elif len(sys.argv) == 4 and sys.argv[1] == "request":
        method, url = sys.argv[2], sys.argv[3]
    else:
        sys.exit(__doc__)
    u = urllib.parse.urlsplit(url)
    if u.hostname not in ("127.0.0.1", "::1"):
        sys.exit("http_client.py: loopback addresses only")
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    try:
        conn.request(method, u.path or "/")
        resp = conn.getresponse()
        body = resp.read()
    except (OSError, http.client.HTTPException) as e:
        print("http_client.py: %s %s: %s" % (method, url, e), file=sys.stderr)
        sys.exit(1)
    out = sys.stdout.buffer
    out.write(b"%d\n" % resp.status)
    for name, value in resp.getheaders():
        out.write(("%s: %s\n" % (name.lower(), value)).encode())
    out.write(b"\n")
    out.write(body)


main()
