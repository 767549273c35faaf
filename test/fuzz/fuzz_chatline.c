/*
 * fuzz_chatline.c - chat JSONL (lib/ct_chat.c): the input is one line of
 * an operator's training file. It must be read as a conversation or be
 * refused (with its line named); a conversation that is read is rendered
 * by a ChatML template with loops, filters and a raise_exception, and the
 * render ends in text or an error code.
 */
#include "config.h"
#include "fuzz.h"
#include "ct_chat.h"

#include <string.h>

static const char tmpl[] =
	"{%- for m in messages -%}"
	"{%- if m.role not in ['system', 'user', 'assistant', 'tool'] -%}"
	"{{ raise_exception('bad role ' ~ m.role) }}{%- endif -%}"
	"{{ '<|im_start|>' + m.role + '\\n' }}{{ (m.content or '') | trim }}"
	"{%- if m.tool_calls is defined %}{{ m.tool_calls | tojson }}{% endif -%}"
	"{{ '<|im_end|>\\n' }}{%- endfor -%}"
	"{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_chat *c = NULL;
	struct ct_jv *conv = NULL;
	int rc;

	CT_FUZZ_CHECK(ct_chat_open_template(tmpl, sizeof(tmpl) - 1, NULL, "<|im_end|>", &c) == 0);
	rc = ct_chat_parse_line((const char *)data, size, "fuzz.jsonl", 7, &conv);
	CT_FUZZ_CHECK(rc <= 0);
	CT_FUZZ_CHECK((rc == 0) == (conv != NULL));
	if (rc == 0) {
		struct ct_buf out = CT_BUF_INIT(1 << 24);
		rc = ct_chat_render(c, conv, 1, &out);
		CT_FUZZ_CHECK(rc <= 0);
		ct_buf_free(&out);
	}
	ct_jv_free(conv);
	ct_chat_free(c);
	return 0;
}
