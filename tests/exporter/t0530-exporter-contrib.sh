#!/usr/bin/env bash
. "$SRCDIR/tests/lib.sh"
skip todo
