#!/bin/bash
# The Windows installer under Wine (a fresh prefix), in three rounds:
#  1. crowdtune-setup.exe /S installs ctune.exe, ctunew.exe, ctune.scr and
#     the DLLs into Program Files; the installed ctune.exe --version runs;
#     the autostart (Run key, through the console-less ctunew.exe, which
#     passes arguments and exit status through) and the screensaver
#     setting are there; uninstall.exe /S removes the files and both
#     settings and keeps the volunteer's data (%LOCALAPPDATA%\crowdtune).
#  2. /S /STARTUP: a Startup folder shortcut instead of the Run key;
#     uninstall.exe /S /REMOVEDATA removes it and the data too.
#  3. /S /SERVICE: the Windows service (ctune service install + start) on
#     %ProgramData%\crowdtune, running under Wine's service manager and
#     answering `ctune status`; the uninstaller stops and removes it.
# Environment: CT_WIN_BUILD (default $top_srcdir/build-win).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
B=${CT_WIN_BUILD:-$top_srcdir/build-win}
[ -f "$B/crowdtune-setup.exe" ] || { echo "SKIP: $B/crowdtune-setup.exe not built"; exit 77; }
export WINEPREFIX=$(mktemp -d "${TMPDIR:-/tmp}/ctune-wine-inst.XXXXXX") WINEDEBUG=-all
trap 'wineserver -k >/dev/null 2>&1; rm -rf "$WINEPREFIX"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
DIR="$WINEPREFIX/drive_c/Program Files/crowdtune"
EXE='C:\Program Files\crowdtune\ctune.exe'
RUN='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'
DESK='HKCU\Control Panel\Desktop'
SVC='HKLM\SYSTEM\CurrentControlSet\Services\crowdtune'

install() { wine "$B/crowdtune-setup.exe" /S "$@" >/dev/null 2>&1 || fail "silent install $*"; }
uninstall() {
	wine 'C:\Program Files\crowdtune\uninstall.exe' /S "$@" >/dev/null 2>&1 ||
		fail "silent uninstall $*"
	for _ in $(seq 150); do [ -e "$DIR" ] || break; sleep 0.2; done	# it runs from a copy
	[ -e "$DIR" ] && fail "install folder left: $(ls "$DIR")"
}
# winpath VAR: the Unix path of %VAR% in this prefix
winpath() { winepath -u "$(wine cmd /c echo "%$1%" 2>/dev/null | tr -d '\r')" 2>/dev/null; }

# --- 1: defaults --------------------------------------------------------
install
for f in ctune.exe ctunew.exe ctune.scr uninstall.exe libxml2-2.dll; do
	[ -f "$DIR/$f" ] || fail "$f not installed"
done
v=$(wine "$EXE" --version 2>/dev/null)
case $v in "ctune (crowdtune) "*) ;; *) fail "installed ctune.exe --version: '$v'" ;; esac
wine reg query "$RUN" /v crowdtune 2>/dev/null | grep -q 'ctunew.exe" run' ||
	fail "no autostart through ctunew.exe"
wine 'C:\Program Files\crowdtune\ctunew.exe' --version >/dev/null 2>&1 ||
	fail "ctunew.exe --version exited $?"
wine 'C:\Program Files\crowdtune\ctunew.exe' no-such-command >/dev/null 2>&1
[ $? = 2 ] || fail "ctunew.exe does not pass the client's exit status (2 for a usage error)"
wine reg query "$DESK" /v SCRNSAVE.EXE 2>/dev/null | grep -q 'ctune.scr' || fail "screensaver not set"
data=$(winpath LOCALAPPDATA)/crowdtune
mkdir -p "$data" && echo "always = on" >"$data/prefs.conf"
uninstall
wine reg query "$RUN" /v crowdtune >/dev/null 2>&1 && fail "autostart left"
wine reg query "$DESK" /v SCRNSAVE.EXE >/dev/null 2>&1 && fail "screensaver setting left"
[ -f "$data/prefs.conf" ] || fail "the silent uninstall removed the volunteer's data"
echo "ok - /S: installed ($(du -k "$B/crowdtune-setup.exe" | cut -f1) KiB installer)," \
	"Run key through ctunew.exe, screensaver; uninstalled, data kept"

# --- 2: the Startup folder, then remove the data too --------------------
install /STARTUP /NOSAVER
# (Wine spells the folder StartUp)
lnk=$(find "$(winpath APPDATA)/Microsoft/Windows/Start Menu/Programs" -ipath '*/startup/crowdtune.lnk')
[ -n "$lnk" ] && [ -f "$lnk" ] || fail "/STARTUP: no crowdtune.lnk in the Startup folder"
wine reg query "$RUN" /v crowdtune >/dev/null 2>&1 && fail "/STARTUP also wrote the Run key"
wine reg query "$DESK" /v SCRNSAVE.EXE >/dev/null 2>&1 && fail "/NOSAVER set the screensaver"
uninstall /REMOVEDATA
[ -e "$lnk" ] && fail "Startup shortcut left"
[ -e "$data" ] && fail "/REMOVEDATA left $data"
echo "ok - /STARTUP: shortcut in the Startup folder; /REMOVEDATA removed it and the data"

# --- 3: the Windows service ---------------------------------------------
install /SERVICE
wine reg query "$SVC" /v ImagePath 2>/dev/null | grep -q '"service" "run"' ||
	fail "/SERVICE: service not registered"
wine reg query "$RUN" /v crowdtune >/dev/null 2>&1 && fail "/SERVICE also wrote the Run key"
sdir=$(winpath ProgramData)/crowdtune
st=""
for _ in $(seq 120); do	# after its OpenCL self-test
	st=$(wine "$EXE" --dir 'C:\ProgramData\crowdtune' status 2>&1) && break
	sleep 0.5
done
case $st in *"no daemon"*|"") fail "the service's daemon does not answer: $st" ;; esac
wine "$EXE" service stop >/dev/null 2>&1 || fail "ctune service stop"
wine "$EXE" --dir 'C:\ProgramData\crowdtune' status >/dev/null 2>&1 &&
	fail "the service still answers after service stop"
grep -q . "$sdir/ctune.log" || fail "the service wrote no $sdir/ctune.log"
wine "$EXE" service start >/dev/null 2>&1 || fail "ctune service start"
uninstall
wine reg query "$SVC" >/dev/null 2>&1 && fail "service left after uninstall"
[ -d "$sdir" ] || fail "the uninstall removed the service's data"
echo "ok - /SERVICE: the service ran, answered status, stopped, started; uninstalled"
echo "PASS: $v: three installs and uninstalls"
