/*
 * cl_disk.h - the volunteer's disk limits, as BOINC has them:
 * disk_max_gb (the most the client's directory may hold) and
 * disk_min_free_gb (free space to leave on its file system). Before a
 * download starts, the sizes the server announced are checked against
 * both (cl_net.c), so a project cannot fill a volunteer's disk by
 * announcing a large file; the download itself never writes past the
 * announced size (cl_http.c).
 */
#ifndef CT_CL_DISK_H
#define CT_CL_DISK_H

#include <stdint.h>

/* Whether need more bytes fit when the client's directory holds used
 * bytes and its file system has avail bytes free (for this user): used +
 * need <= max_gb and avail - need >= min_free_gb (GB = 10^9 bytes, as
 * BOINC and disk vendors count). Returns 0 when it fits (need 0 always
 * does), else CT_ENOSPC with a message giving the numbers and the pref to
 * change; *never (may be NULL) is set to 1 when it could not fit even with the client's
 * directory empty (need alone over max_gb, or over avail + used less
 * min_free_gb), else 0. A pure decision, for the tests. */
int ct_disk_fits(uint64_t used, uint64_t avail, uint64_t need, double max_gb,
		 double min_free_gb, int *never);

/* Bytes of the regular files under dir (its subdirectories to a depth of
 * 8, symbolic links not followed) into *bytes. 0 or CT_EIO. */
int ct_disk_usage(const char *dir, uint64_t *bytes);

/* Bytes free for an unprivileged user on the file system of dir. 0 or
 * the statvfs error. */
int ct_disk_avail(const char *dir, uint64_t *bytes);

/* ct_disk_fits for need more bytes under dir, measuring both. */
int ct_disk_check(const char *dir, uint64_t need, double max_gb, double min_free_gb,
		  int *never);

#endif
