#!/bin/sh
# test/ctune_devices.sh - `ctune devices` lists the OpenCL devices with
# their properties and reports the first one conforming (on PoCL here),
# check by check, and not conforming when its kernels are built to
# contract multiply-adds or flush subnormals;
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

echo "$out" | grep -q "no contraction.* ok" || fail "no per-check report: $out"

# deliberately wrong builds of the same kernels (PoCL honours both): the
# self-test must say NOT conforming and name the failing check
case "$out" in
*"Portable Computing Language"*)
	out=$(CT_OCL_TEST_OPTIONS=-DCT_TEST_CONTRACT "$ctune" devices --device opencl:0)
	[ $? -eq 1 ] || fail "contracting build: exit status not 1"
	echo "$out" | grep -q "NOT conforming" || fail "contracting build conforms: $out"
	echo "$out" | grep -q "attention.*FAILED: attention" || fail "no failed check named: $out"
	out=$(CT_OCL_TEST_OPTIONS=-cl-denorms-are-zero "$ctune" devices --device opencl:0)
	[ $? -eq 1 ] || fail "flushing build: exit status not 1"
	echo "$out" | grep -q "subnormal softmax.*FAILED" || fail "flushing not caught: $out"
	;;
esac

"$ctune" devices --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "--bogus is not a usage error"
"$ctune" devices --device cuda >/dev/null 2>&1
[ $? -eq 2 ] || fail "--device cuda is not a usage error"
"$ctune" devices --device opencl:63 >/dev/null 2>&1
[ $? -eq 1 ] || fail "--device opencl:63 did not fail"
echo "PASS"
