/*
 * ct_test_tokenizer.h - what the tokenizer unit tests share: encoding a
 * text as a stream would, in parts of `step` more bytes at a time, each
 * call passing again what the last one left (ct_tokenizer_encode_part),
 * the way `ctune tokens encode` reads its 1 MiB blocks.
 */
#ifndef CT_TEST_TOKENIZER_H
#define CT_TEST_TOKENIZER_H

#include "ct_test.h"
#include "ct_tokenizer.h"

/* Encode text[0..n) in parts; the ids must equal whole's. */
static inline void ct_test_parts_equal_whole(const struct ct_tokenizer *tk,
					     const char *text, size_t n, size_t step,
					     const struct ct_tokvec *whole)
{
	struct ct_tokvec parts = { 0 };
	size_t start = 0, have = 0, used;

	while (start < n) {
		int final;

		have = have + step < n - start ? have + step : n - start;
		final = start + have == n;
		assert_int_equal(ct_tokenizer_encode_part(tk, text + start, have, final,
							  &parts, &used), 0);
		assert_true(used <= have);
		if (final)
			assert_int_equal(used, have);
		start += used;
		have -= used;
	}
	assert_int_equal(parts.n, whole->n);
	assert_memory_equal(parts.v, whole->v, whole->n * sizeof(uint32_t));
	ct_tokvec_free(&parts);
}

#endif
