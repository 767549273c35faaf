#!/bin/sh
# The crafted-results test (test/server_crafted.sh) on the embedded database.
exec sh "${top_srcdir:-.}/test/server_crafted.sh" embedded
