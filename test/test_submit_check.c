/*
 * Unit tests for server/daemons/submit_check.c: which bytes are refused as not
 * text, the passes a WU makes over its shard, and when a job's eval loss
 * counts as rising two rounds in a row.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "daemons/submit_check.h"

#include <math.h>
#include <string.h>

static void test_text(void **state)
{
	static const unsigned char gz[] = { 0x1f, 0x8b, 8, 0 }, zst[] = { 0x28, 0xb5, 0x2f, 0xfd, 1 },
		xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0, 0 };
	const char *utf8 = "caf\xc3\xa9 and \xe2\x82\xac, tabs\tand\r\nnewlines\n";

	(void)state;
	assert_int_equal(ct_submit_check_text("--train-text", "a", utf8, strlen(utf8)), 0);
	assert_int_equal(ct_submit_check_text("--train-text", "a", "", 0), 0);
	assert_int_equal(ct_submit_check_text("--train-text", "a.gz", gz, sizeof(gz)), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "gzip-compressed"));
	assert_int_equal(ct_submit_check_text("--eval-text", "b", zst, sizeof(zst)), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "zstdcat b > FILE; --eval-text FILE"));
	assert_int_equal(ct_submit_check_text("--train-text", "c", xz, sizeof(xz)), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "xz-compressed"));
	/* gzip's first byte alone is text (0x1f is a control, not a NUL) */
	assert_int_equal(ct_submit_check_text("--train-text", "d", gz, 1), 0);
	assert_int_equal(ct_submit_check_text("--eval-text", "e", "ab\0c", 4), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "NUL byte at offset 2"));
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "goes with --eval"));
}

static void test_passes(void **state)
{
	(void)state;
	/* the issue's job: ~1.7k-token shards, 51k tokens a WU: 30 passes */
	assert_true(fabs(ct_submit_passes(1700, 100, 8, 64) - 51200.0 / 1700) < 1e-9);
	assert_true(ct_submit_passes(0, 1, 1, 1) == 0);
	assert_int_equal(ct_submit_warn_shards(64 * 1700, 64, 100, 8, 64), 1);
	assert_int_equal(ct_submit_warn_shards(51200, 1, 100, 8, 64), 0);	/* one pass */
	assert_int_equal(ct_submit_warn_shards(1000000, 4, 10, 8, 64), 0);
}

static void test_loss_rises(void **state)
{
	const double issue[] = { 2.75, 2.759, 2.791, 2.816 }, down[] = { 3, 2.9, 2.95, 2.8, 2.85 },
		nan_gap[] = { 3, 3.1, NAN, 3.2, 3.3 }, late[] = { 3, 2.5, 2.6, 2.7 };
	char note[256];

	(void)state;
	assert_int_equal(ct_submit_loss_rises(issue, 4, note, sizeof(note)), 2);
	assert_non_null(strstr(note, "rose two rounds in a row (round 0 2.7500, 1 2.7590, 2 2.7910"));
	assert_int_equal(ct_submit_loss_rises(down, 5, note, sizeof(note)), -1);
	assert_string_equal(note, "");
	assert_int_equal(ct_submit_loss_rises(nan_gap, 5, note, sizeof(note)), -1);
	assert_int_equal(ct_submit_loss_rises(late, 4, note, sizeof(note)), 3);
	assert_int_equal(ct_submit_loss_rises(issue, 2, note, sizeof(note)), -1);
	assert_int_equal(ct_submit_loss_rises(issue, 4, note, 8), 2);	/* cut, terminated */
	assert_int_equal((int)strlen(note), 7);
}

CT_TEST_MAIN(test_text, test_passes, test_loss_rises)
