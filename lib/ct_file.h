/*
 * ct_file.h - file helpers: atomic writes (whole buffer or streamed),
 * capped whole-file reads, read-only mmap, mkdir -p, path joining.
 *
 * Atomic write = write a temp file in the same directory, fsync it, rename
 * it over the target, fsync the directory. A crash or a failed write leaves
 * either the old file or the new one, never a torn mix, and no temp file.
 *
 * Errors carry a detail naming the path (ct_errmsg(rc)): an unwritable
 * directory gives CT_EPERM with the directory named, a full disk
 * CT_ENOSPC, a missing file CT_ENOENT.
 */
#ifndef CT_FILE_H
#define CT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Replace path with the n bytes at data, atomically; the file gets exactly
 * the permissions `mode` (e.g. 0644; umask is not applied). Returns 0 or a CT_E*
 * code; on failure the old file (if any) is untouched and no temp file is
 * left behind. */
int ct_file_write_atomic(const char *path, const void *data, size_t n, int mode);

/* A streaming atomic write: open, write any number of times, then commit
 * (rename into place) or abort (unlink the temp file). Fields are private
 * to ct_file.c; tmp_path and path are owned by the struct. */
struct ct_afile {
	int fd;
	char *tmp_path;
	char *path;
	int mode;
};

/* Create the temp file for path. Returns 0 or a CT_E* code (af then needs
 * no abort, but ct_afile_abort() on it is harmless). */
int ct_afile_open(struct ct_afile *af, const char *path, int mode);

/* Write all n bytes of p to fd, again after EINTR and short writes.
 * Returns 0, or -1 with errno set (EIO for a write() that returned 0); the
 * caller words the error (ct_error_errno). */
int ct_fd_write_all(int fd, const void *p, size_t n);

/* Append n bytes. Returns 0 or a CT_E* code (ENOSPC -> CT_ENOSPC); after a
 * failure the caller must still ct_afile_abort(). */
int ct_afile_write(struct ct_afile *af, const void *p, size_t n);

/* fsync, rename over path, fsync the directory, free the struct's memory.
 * Returns 0 or a CT_E* code; on failure the temp file is removed and the
 * old file kept (except when only the final directory fsync fails: the new
 * file is then in place but may not survive a crash). Either way af is
 * finished (abort after it is a no-op). */
int ct_afile_commit(struct ct_afile *af);

/* Give up: close and unlink the temp file, free memory. Safe to call on a
 * finished, failed-to-open or zeroed struct. */
void ct_afile_abort(struct ct_afile *af);

/* One read(2) of up to n bytes from fd into buf, retried when a signal
 * interrupts it: the byte count (0 at end of file), or CT_E* naming path. */
ssize_t ct_file_read_some(int fd, const char *path, void *buf, size_t n);

/* Read the whole file at path into a malloc'd buffer (NUL-terminated one
 * byte past *len, not counted) that the caller free()s. Files over max bytes
 * -> CT_ETOOBIG (max 0: no limit). On failure *data = NULL, *len = 0. */
int ct_file_read_all(const char *path, size_t max, unsigned char **data, size_t *len);

/* Read-only private mapping of a whole file. An empty file maps to
 * addr = NULL, len = 0 (and unmap is still fine). */
struct ct_mmap {
	void *addr;
	size_t len;
};

/* Map path. Returns 0 or a CT_E* code (m zeroed on failure). */
int ct_file_map(const char *path, struct ct_mmap *m);

/* Unmap and zero m; a zeroed m is a no-op. */
void ct_file_unmap(struct ct_mmap *m);

/* mkdir -p with mode for the directories it creates. An existing directory
 * is success; an existing non-directory is CT_EEXISTS. */
int ct_mkdir_p(const char *path, int mode);

/* 1 if path exists (any type, following symlinks), else 0. */
int ct_file_exists(const char *path);

/* Size in bytes of the file at path. Returns 0 or a CT_E* code. */
int ct_file_size(const char *path, uint64_t *out);

/* out = a + "/" + b (no doubled slash; b absolute -> b alone; a empty ->
 * b). CT_ETOOBIG if the result plus NUL does not fit in cap (out then
 * holds ""). */
int ct_path_join(char *out, size_t cap, const char *a, const char *b);

/* fsync the directory containing path (after a rename/unlink there).
 * Returns 0 or a CT_E* code. */
int ct_file_fsync_dir(const char *path);

#endif
