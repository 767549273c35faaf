; crowdtune.nsi - the Windows installer of the volunteer client, built on
; Debian by tools/build-windows with NSIS's makensis:
;   makensis -DSRCDIR=build-win -DOUTFILE=build-win/crowdtune-setup.exe \
;            -DVERSION=0.1.0 client/win/crowdtune.nsi
; Installs ctune.exe, the screensaver ctune.scr and their DLLs into
; Program Files, starts `ctune run` at the user's login (the Run key),
; offers the screensaver (on by default), registers an uninstaller that removes
; both and keeps the volunteer's data (%LOCALAPPDATA%\crowdtune). /S
; installs and uninstalls silently (fleets).
; a 64-bit installer: runs where ctune.exe runs (and under wine64 alone)
Target amd64-unicode
SetCompressor /SOLID lzma
Name "crowdtune ${VERSION}"
OutFile "${OUTFILE}"
InstallDir "$PROGRAMFILES64\crowdtune"
RequestExecutionLevel admin

!define RUNKEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define UNKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\crowdtune"

Page components
Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Section "crowdtune"
	SetOutPath "$INSTDIR"
	SectionIn RO
	File "${SRCDIR}\ctune.exe"
	File "${SRCDIR}\ctune.scr"
	File "${SRCDIR}\*.dll"
	WriteUninstaller "$INSTDIR\uninstall.exe"
	; per-user autostart: the client computes only when the machine is idle
	WriteRegStr HKCU "${RUNKEY}" "crowdtune" '"$INSTDIR\ctune.exe" run'
	WriteRegStr HKLM "${UNKEY}" "DisplayName" "crowdtune volunteer client"
	WriteRegStr HKLM "${UNKEY}" "DisplayVersion" "${VERSION}"
	WriteRegStr HKLM "${UNKEY}" "Publisher" "crowdtune"
	WriteRegStr HKLM "${UNKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
	WriteRegStr HKLM "${UNKEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
	WriteRegDWORD HKLM "${UNKEY}" "NoModify" 1
	WriteRegDWORD HKLM "${UNKEY}" "NoRepair" 1
SectionEnd

; Offered, on by default: the saver view as this user's screensaver.
Section "Use the crowdtune screensaver"
	WriteRegStr HKCU "Control Panel\Desktop" "SCRNSAVE.EXE" "$INSTDIR\ctune.scr"
	WriteRegStr HKCU "Control Panel\Desktop" "ScreenSaveActive" "1"
SectionEnd

; The volunteer's state, account key and checkpoints stay in
; %LOCALAPPDATA%\crowdtune (delete that folder to remove them too).
Section "Uninstall"
	DeleteRegValue HKCU "${RUNKEY}" "crowdtune"
	DeleteRegKey HKLM "${UNKEY}"
	ReadRegStr $0 HKCU "Control Panel\Desktop" "SCRNSAVE.EXE"
	StrCmp $0 "$INSTDIR\ctune.scr" 0 +2
	DeleteRegValue HKCU "Control Panel\Desktop" "SCRNSAVE.EXE"
	Delete "$INSTDIR\ctune.exe"
	Delete "$INSTDIR\ctune.scr"
	Delete "$INSTDIR\*.dll"
	Delete "$INSTDIR\uninstall.exe"
	RMDir "$INSTDIR"
SectionEnd
