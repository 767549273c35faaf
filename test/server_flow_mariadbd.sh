#!/bin/sh
# The server flow test (test/server_flow.sh) on a private mariadbd.
exec sh "${top_srcdir:-.}/test/server_flow.sh" mariadbd
