#!/usr/bin/env python3
"""HTTP(S) requests for the exporter tests (loopback only, no proxies).

  http_client.py [--cacert FILE] [--user NAME:PASSWORD] get URL
  http_client.py [--cacert FILE] [--user NAME:PASSWORD] request METHOD URL

GET, or one request of any method; https:// URLs are verified against the
CA certificate FILE (the system's without --cacert), and --user sends
basic authentication.  Prints the status code, the headers as "name:
value" (name lower-case), an empty line and the body; exit 1 when no
response came.
"""
import base64
import http.client
import ssl
import sys
import urllib.parse


def main():
    args = sys.argv[1:]
    cacert = user = None
    while len(args) >= 2 and args[0] in ("--cacert", "--user"):
        if args[0] == "--cacert":
            cacert = args[1]
        else:
            user = args[1]
        args = args[2:]
    if len(args) == 2 and args[0] == "get":
        method, url = "GET", args[1]
    elif len(args) == 3 and args[0] == "request":
        method, url = args[1], args[2]
    else:
        sys.exit(__doc__)
    u = urllib.parse.urlsplit(url)
    if u.hostname not in ("127.0.0.1", "::1"):
        sys.exit("http_client.py: loopback addresses only")
    if u.scheme == "https":
        context = ssl.create_default_context(cafile=cacert)
        conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=20, context=context)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(user.encode()).decode()
    try:
        conn.request(method, u.path or "/", headers=headers)
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
