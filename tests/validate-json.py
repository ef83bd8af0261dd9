#!/usr/bin/python3
"""Validate sparkctl's JSON outputs against docs/schemas/NAME.schema.json.

usage: validate-json.py [--lines] NAME FILE...

FILE "-" is standard input.  --lines: every line of FILE is one document
(NDJSON).  Each error is printed as "FILE: path: message"; the exit status is
0 when every document is valid, 1 when one is not, 2 on a usage error.
"""
import json
import os
import urllib.parse
import sys

import jsonschema

BASE = "https://sparkctl.invalid/schemas/"
SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schemas")


def load_schema(name):
    # Every schema by its $id: status refers to agent-status, which refers to doctor.
    store = {}
    for entry in sorted(os.listdir(SCHEMAS)):
        if entry.endswith(".schema.json"):
            with open(os.path.join(SCHEMAS, entry), encoding="utf-8") as f:
                other = json.load(f)
            jsonschema.validators.validator_for(other).check_schema(other)
            store[other["$id"]] = other
    schema = store[urllib.parse.urljoin(BASE, name + ".schema.json")]
    cls = jsonschema.validators.validator_for(schema)
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    return cls(schema, resolver=resolver, format_checker=jsonschema.FormatChecker())


def documents(path, lines):
    f = sys.stdin if path == "-" else open(path, encoding="utf-8")
    with f:
        text = f.read()
    if not lines:
        yield path, json.loads(text)
        return
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield "%s:%d" % (path, n), json.loads(line)


def main(argv):
    lines = False
    if argv[:1] == ["--lines"]:
        lines, argv = True, argv[1:]
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    validator = load_schema(argv[0])
    bad = 0
    for path in argv[1:]:
        try:
            docs = list(documents(path, lines))
        except (OSError, ValueError) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            bad += 1
            continue
        if not docs:
            print("%s: no JSON document" % path, file=sys.stderr)
            bad += 1
        for where, doc in docs:
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
                path_text = "/".join(str(p) for p in e.absolute_path) or "(top)"
                print("%s: %s: %s" % (where, path_text, e.message), file=sys.stderr)
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
