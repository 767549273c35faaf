#!/bin/bash
# The Windows installer under Wine (a fresh prefix): crowdtune-setup.exe /S
# installs ctune.exe, ctune.scr and the DLLs into Program Files, the
# installed ctune.exe --version runs, the autostart (Run key) and the
# screensaver setting are there; uninstall.exe /S removes the files and
# both settings. Environment: CT_WIN_BUILD (default $top_srcdir/build-win).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
B=${CT_WIN_BUILD:-$top_srcdir/build-win}
[ -f "$B/crowdtune-setup.exe" ] || { echo "SKIP: $B/crowdtune-setup.exe not built"; exit 77; }
export WINEPREFIX=$(mktemp -d "${TMPDIR:-/tmp}/ctune-wine-inst.XXXXXX") WINEDEBUG=-all
trap 'rm -rf "$WINEPREFIX"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
DIR="$WINEPREFIX/drive_c/Program Files/crowdtune"
RUN='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'
DESK='HKCU\Control Panel\Desktop'

wine "$B/crowdtune-setup.exe" /S >/dev/null 2>&1 || fail "silent install"
for f in ctune.exe ctune.scr uninstall.exe libcurl-4.dll; do
	[ -f "$DIR/$f" ] || fail "$f not installed"
done
v=$(wine 'C:\Program Files\crowdtune\ctune.exe' --version 2>/dev/null)
case $v in "ctune (crowdtune) "*) ;; *) fail "installed ctune.exe --version: '$v'" ;; esac
wine reg query "$RUN" /v crowdtune 2>/dev/null | grep -q 'ctune.exe" run' || fail "no autostart"
wine reg query "$DESK" /v SCRNSAVE.EXE 2>/dev/null | grep -q 'ctune.scr' || fail "screensaver not set"

wine 'C:\Program Files\crowdtune\uninstall.exe' /S >/dev/null 2>&1 || fail "silent uninstall"
for i in $(seq 100); do [ -e "$DIR" ] || break; sleep 0.2; done	# it runs from a copy
[ -e "$DIR" ] && fail "install folder left: $(ls "$DIR")"
wine reg query "$RUN" /v crowdtune >/dev/null 2>&1 && fail "autostart left"
wine reg query "$DESK" /v SCRNSAVE.EXE >/dev/null 2>&1 && fail "screensaver setting left"
echo "PASS: $v installed silently ($(du -k "$B/crowdtune-setup.exe" | cut -f1) KiB installer), autostart and screensaver set, uninstalled"
