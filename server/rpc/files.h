/*
 * files.h - the upload and download routes (POST /upload/<result>,
 * GET /download/<sha256>); see doc/protocol.md.
 */
#ifndef CT_FILES_H
#define CT_FILES_H

#include "http.h"

extern const struct ct_http_route ct_files_routes[];

#endif
