#!/bin/sh
# test/ctune_devices.sh - `ctune devices` lists the OpenCL devices with
# their properties and reports the first one conforming (on PoCL here);
# bad options are usage errors (exit 2), an unknown device a failure.
# Skips (77) without any OpenCL device.
set -u
ctune="${top_builddir:-.}/ctune"
CTUNE_KERNEL_CACHE=""	# no kernel cache in $HOME from tests
export CTUNE_KERNEL_CACHE
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$ctune" ] || fail "no $ctune"
out=$("$ctune" devices --no-selftest) || fail "devices --no-selftest exited $?"
case "$out" in
*"opencl:0 "*) ;;
*) echo "SKIP: no OpenCL device"; exit 77 ;;
esac
for field in "platform:" "type:" "compute units:" "global memory:" "max work-group:"; do
	echo "$out" | grep -q "$field" || fail "no '$field' in: $out"
done
echo "$out" | grep -q "self-test" && fail "--no-selftest ran the self-test"

out=$("$ctune" devices --device opencl:0) || fail "self-test failed: $out"
echo "$out" | grep -q "self-test: *conforming" || fail "not conforming: $out"

"$ctune" devices --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "--bogus is not a usage error"
"$ctune" devices --device cuda >/dev/null 2>&1
[ $? -eq 2 ] || fail "--device cuda is not a usage error"
"$ctune" devices --device opencl:63 >/dev/null 2>&1
[ $? -eq 1 ] || fail "--device opencl:63 did not fail"
echo "PASS"
