#!/bin/bash
# Install locations: the XDG autostart entry goes where desktops read it
# (/etc/xdg/autostart for the default prefix, not /usr/local/etc/xdg) and
# starts the installed binary by its absolute path, not through PATH; the
# systemd user unit likewise. Installs only those two files, into DESTDIR.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make -s -C "$B" install-autostartDATA install-systemduserunitDATA DESTDIR="$T" >"$T/make.log" 2>&1 ||
	fail "install: $(cat "$T/make.log")"
prefix=$(sed -n 's/^prefix = //p' "$B/Makefile")
bindir=$(sed -n 's/^bindir = //p' "$B/Makefile" | sed "s|\${exec_prefix}|$prefix|")
dir=$(sed -n 's/^CT_AUTOSTARTDIR = //p' "$B/Makefile")
case $prefix in
/usr/local | /usr) [ "$dir" = /etc/xdg/autostart ] || fail "autostart dir $dir for prefix $prefix" ;;
esac
f=$(find "$T" -name ctune.desktop)
[ -n "$f" ] || fail "no ctune.desktop installed"
case $prefix in
/usr/local | /usr) [ "$f" = "$T/etc/xdg/autostart/ctune.desktop" ] || fail "installed as $f" ;;
esac
grep -qx "Exec=$bindir/ctune run" "$f" || fail "Exec line: $(grep Exec "$f")"
case $bindir in /*) ;; *) fail "bindir '$bindir' is not absolute" ;; esac
u=$(find "$T" -name ctune.service)
grep -qx "ExecStart=$bindir/ctune run" "$u" || fail "ExecStart line: $(grep ExecStart "$u")"
echo "PASS: autostart entry in ${f#"$T"} with Exec=$bindir/ctune run; unit in ${u#"$T"}"
