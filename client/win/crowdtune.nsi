; crowdtune.nsi - the Windows installer of the volunteer client, built on
; Debian by tools/build-windows with NSIS's makensis:
;   makensis -DSRCDIR=build-win -DOUTFILE=build-win/crowdtune-setup.exe \
;            -DVERSION=0.1.0 client/win/crowdtune.nsi
; Installs ctune.exe, its console-less launcher ctunew.exe, the screensaver
; ctune.scr and their DLLs into Program Files. Start with Windows, one of:
; `ctunew.exe run` at the user's login from the Run key (the default) or
; from a shortcut in the Startup folder, or the Windows service
; (`ctune service install`: at boot, without a login, on
; %ProgramData%\crowdtune). Offers the screensaver (on by default).
; The uninstaller removes all of them and asks whether to keep the
; volunteer's data (%LOCALAPPDATA%\crowdtune, and the service's folder):
; kept unless the answer is no.
;
; Silent (fleets): /S installs with the defaults; /STARTUP uses the Startup
; folder instead of the Run key, /SERVICE the service instead of both,
; /NOSAVER leaves the screensaver alone. uninstall.exe /S keeps the data;
; uninstall.exe /S /REMOVEDATA removes it too.
; a 64-bit installer: runs where ctune.exe runs (and under wine64 alone)
Target amd64-unicode
SetCompressor /SOLID lzma
Name "crowdtune ${VERSION}"
OutFile "${OUTFILE}"
InstallDir "$PROGRAMFILES64\crowdtune"
RequestExecutionLevel admin

!include "Sections.nsh"
!include "FileFunc.nsh"
!include "LogicLib.nsh"

!define RUNKEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define UNKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\crowdtune"
!define SVCKEY "SYSTEM\CurrentControlSet\Services\crowdtune"

Var autostart	; the selected "start with Windows" section (radio group)

Page components
Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Section "crowdtune" sec_main
	SetOutPath "$INSTDIR"
	SectionIn RO
	File "${SRCDIR}\ctune.exe"
	File "${SRCDIR}\ctunew.exe"
	File "${SRCDIR}\ctune.scr"
	File "${SRCDIR}\*.dll"
	WriteUninstaller "$INSTDIR\uninstall.exe"
	WriteRegStr HKLM "${UNKEY}" "DisplayName" "crowdtune volunteer client"
	WriteRegStr HKLM "${UNKEY}" "DisplayVersion" "${VERSION}"
	WriteRegStr HKLM "${UNKEY}" "Publisher" "crowdtune"
	WriteRegStr HKLM "${UNKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
	WriteRegStr HKLM "${UNKEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
	WriteRegDWORD HKLM "${UNKEY}" "NoModify" 1
	WriteRegDWORD HKLM "${UNKEY}" "NoRepair" 1
SectionEnd

; Start with Windows: one of three. The client computes only when the
; machine is idle (prefs.conf); ctunew.exe starts it without a console.
SectionGroup /e "Start with Windows"
Section "At login, from the Run key" sec_run
	WriteRegStr HKCU "${RUNKEY}" "crowdtune" '"$INSTDIR\ctunew.exe" run'
SectionEnd

Section /o "At login, from a Startup folder shortcut" sec_startup
	SetShellVarContext current
	CreateShortCut "$SMSTARTUP\crowdtune.lnk" "$INSTDIR\ctunew.exe" "run"
SectionEnd

Section /o "At boot, as a Windows service (no login needed)" sec_service
	ExecWait '"$INSTDIR\ctune.exe" service install' $0
	${If} $0 == 0
		ExecWait '"$INSTDIR\ctune.exe" service start' $0
	${Else}
		DetailPrint "ctune service install failed ($0)"
	${EndIf}
SectionEnd
SectionGroupEnd

; Offered, on by default: the saver view as this user's screensaver.
Section "Use the crowdtune screensaver" sec_saver
	WriteRegStr HKCU "Control Panel\Desktop" "SCRNSAVE.EXE" "$INSTDIR\ctune.scr"
	WriteRegStr HKCU "Control Panel\Desktop" "ScreenSaveActive" "1"
SectionEnd

Function .onInit
	StrCpy $autostart ${sec_run}
	${GetParameters} $R0
	ClearErrors
	${GetOptions} $R0 "/STARTUP" $R1
	${IfNot} ${Errors}
		!insertmacro UnselectSection ${sec_run}
		!insertmacro SelectSection ${sec_startup}
		StrCpy $autostart ${sec_startup}
	${EndIf}
	ClearErrors
	${GetOptions} $R0 "/SERVICE" $R1
	${IfNot} ${Errors}
		!insertmacro UnselectSection ${sec_run}
		!insertmacro UnselectSection ${sec_startup}
		!insertmacro SelectSection ${sec_service}
		StrCpy $autostart ${sec_service}
	${EndIf}
	ClearErrors
	${GetOptions} $R0 "/NOSAVER" $R1
	${IfNot} ${Errors}
		!insertmacro UnselectSection ${sec_saver}
	${EndIf}
FunctionEnd

Function .onSelChange
	!insertmacro StartRadioButtons $autostart
		!insertmacro RadioButton ${sec_run}
		!insertmacro RadioButton ${sec_startup}
		!insertmacro RadioButton ${sec_service}
	!insertmacro EndRadioButtons
FunctionEnd

Section "Uninstall"
	; a running client first: the user's daemon, then the service
	; (each checkpoints; the pause lets the process end before its files go)
	ExecWait '"$INSTDIR\ctune.exe" quit' $0
	${If} $0 == 0
		Sleep 2000
	${EndIf}
	ClearErrors
	ReadRegStr $0 HKLM "${SVCKEY}" "ImagePath"
	${IfNot} ${Errors}
		ExecWait '"$INSTDIR\ctune.exe" service uninstall' $0
		Sleep 2000
	${EndIf}
	DeleteRegValue HKCU "${RUNKEY}" "crowdtune"
	SetShellVarContext current
	Delete "$SMSTARTUP\crowdtune.lnk"
	DeleteRegKey HKLM "${UNKEY}"
	ReadRegStr $0 HKCU "Control Panel\Desktop" "SCRNSAVE.EXE"
	StrCmp $0 "$INSTDIR\ctune.scr" 0 +2
	DeleteRegValue HKCU "Control Panel\Desktop" "SCRNSAVE.EXE"

	; the volunteer's data: account key, state, checkpoints, input cache
	${GetParameters} $R0
	ClearErrors
	${GetOptions} $R0 "/REMOVEDATA" $R1
	${If} ${Errors}
		MessageBox MB_YESNO|MB_ICONQUESTION|MB_DEFBUTTON2 \
			"Also remove your crowdtune data (account key, progress and cache in $LOCALAPPDATA\crowdtune)?$\n$\nNo keeps it for a later install." \
			/SD IDNO IDYES remove_data
		Goto done
	${EndIf}
remove_data:
	RMDir /r "$LOCALAPPDATA\crowdtune"
	SetShellVarContext all
	RMDir /r "$APPDATA\crowdtune"
	SetShellVarContext current
done:
	; the program files last: the install folder's going marks the end
	; (this runs from a copy, and the caller of /S sees nothing else)
	Delete "$INSTDIR\ctune.exe"
	Delete "$INSTDIR\ctunew.exe"
	Delete "$INSTDIR\ctune.scr"
	Delete "$INSTDIR\*.dll"
	Delete "$INSTDIR\uninstall.exe"
	RMDir "$INSTDIR"
SectionEnd
