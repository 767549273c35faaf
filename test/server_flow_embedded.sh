#!/bin/sh
# The server flow test (test/server_flow.sh) on the embedded database.
exec sh "${top_srcdir:-.}/test/server_flow.sh" embedded
