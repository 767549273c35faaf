/*
 * fuzz_jinja.c - chat templates (lib/ct_jinja*, through lib/ct_chat.c):
 * the input is a template as an operator's tokenizer_config.json would
 * carry it. It must parse or be refused; a template that parses is
 * rendered on a fixed multi-turn conversation with and without the
 * generation prompt, and every render ends in output or an error code
 * within the interpreter's caps (no fault, no leak, no endless loop).
 */
#include "config.h"
#include "fuzz.h"
#include "ct_chat.h"

#include <string.h>

static const char conv_line[] =
	"{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
	"{\"role\": \"user\", \"content\": \"H\\u00e9llo \\u4e16\"}, "
	"{\"role\": \"assistant\", \"content\": \"Hi.\"}, "
	"{\"role\": \"user\", \"content\": \"\"}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_chat *c = NULL;
	struct ct_jv *conv = NULL;
	int rc;

	rc = ct_chat_open_template((const char *)data, size, "<s>", "</s>", &c);
	CT_FUZZ_CHECK(rc <= 0);
	CT_FUZZ_CHECK((rc == 0) == (c != NULL));
	if (rc == 0) {
		CT_FUZZ_CHECK(ct_chat_parse_line(conv_line, sizeof(conv_line) - 1, "fuzz", 1,
						 &conv) == 0);
		for (int gen = 0; gen < 2; gen++) {
			struct ct_buf out = CT_BUF_INIT(1 << 24);
			rc = ct_chat_render(c, conv, gen, &out);
			CT_FUZZ_CHECK(rc <= 0 && out.len <= (1u << 24));
			ct_buf_free(&out);
		}
	}
	ct_jv_free(conv);
	ct_chat_free(c);
	return 0;
}
