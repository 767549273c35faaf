/*
 * web_receipt.h - round receipts on the web (doc/receipts.md): the file
 * itself at /job/N/round/R/receipt (text, never changes), their list in
 * the JSON API (/api/v1/job/N/receipts) and on the job page, and the
 * project's public key on the home page, each with the paragraph that
 * tells a volunteer what a receipt is and how to check one.
 */
#ifndef CT_WEB_RECEIPT_H
#define CT_WEB_RECEIPT_H

#include <stdint.h>

#include "ct_buf.h"
#include "web.h"
#include "web_json.h"

/* 1 if path is /job/N/round/R/receipt (N, R decimal, >= 1), else 0. */
int ct_web_receipt_match(const char *path);

/* GET /job/N/round/R/receipt. */
int ct_web_page_receipt(struct ct_web_req *req, struct ct_web_resp *resp);

/* what (after /api/v1/) is job/N/receipts: N, else 0. */
int64_t ct_web_receipt_api_match(const char *what);

/* The API's {"job", "key", "receipts": [{"round", "sha256", "size",
 * "url"}]}. */
int ct_web_api_receipts(struct ct_web_req *req, struct ct_json *j, int64_t jobid);

/* The home page's paragraph: the public key and what it signs. */
int ct_web_receipt_home_html(struct ct_web_req *req, struct ct_buf *c);

/* The job page's section: its receipts by round and how to check them. */
int ct_web_receipt_job_html(struct ct_web_req *req, struct ct_buf *c, int64_t jobid);

#endif
