#!/bin/sh
# The crafted-results test (test/server_crafted.sh) on a private mariadbd.
exec sh "${top_srcdir:-.}/test/server_crafted.sh" mariadbd
