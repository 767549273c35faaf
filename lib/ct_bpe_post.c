/*
 * ct_bpe_post.c - a tokenizer.json's post_processor: the special tokens
 * Hugging Face's encode(text) (add_special_tokens, the default) puts
 * around the text of one sequence, e.g. Llama 3's <|begin_of_text|>.
 *
 * Accepted: null or absent, "ByteLevel" (it only moves offsets: no ids),
 * "TemplateProcessing" (its "single" template: SpecialToken items before
 * and after the one Sequence item, each expanded to the "ids" listed for
 * it in "special_tokens"), and "Sequence" of these (at most one template).
 * Any other type is refused by name (CT_EUNSUPP). At most CT_BPE_TPL_MAX
 * ids on each side; every id must be < V.
 */
#include "config.h"
#include "ct_bpe.h"
#include "ct_bpe_int.h"
#include "ct_err.h"
#include "ct_jv.h"

#include <string.h>

static int bad(const struct ct_bpe *b, const char *what)
{
	return ct_error(CT_EFORMAT, "%s: post_processor: %s", b->file, what);
}

static const char *type_of(const struct ct_jv *o)
{
	const struct ct_jv *t = o != NULL && o->type == CT_JV_OBJ ? ct_jv_get(o, "type") : NULL;

	return t != NULL && t->type == CT_JV_STR ? t->str : NULL;
}

/* Append the ids of special token `name` (from special_tokens) to one side. */
static int add_special(struct ct_bpe *b, const struct ct_jv *specials, const char *name,
		       uint32_t *side, int *n)
{
	const struct ct_jv *sp = specials ? ct_jv_get(specials, name) : NULL;
	const struct ct_jv *ids = sp && sp->type == CT_JV_OBJ ? ct_jv_get(sp, "ids") : NULL;

	if (ids == NULL || ids->type != CT_JV_ARR)
		return bad(b, "a SpecialToken of the template has no ids in special_tokens");
	for (size_t i = 0; i < ids->n; i++) {
		int64_t id;
		int rc = ct_jv_int(&ids->items[i], 0, (int64_t)b->V - 1, "special token id", &id);

		if (rc < 0)
			return ct_error(rc, "%s: post_processor: %s", b->file, ct_errmsg(rc));
		if (*n >= CT_BPE_TPL_MAX)
			return bad(b, "too many special tokens in the template");
		side[(*n)++] = (uint32_t)id;
	}
	return 0;
}

/* TemplateProcessing: its "single" template into b->tpl_pre / tpl_post. */
static int template(struct ct_bpe *b, const struct ct_jv *pp)
{
	const struct ct_jv *single = ct_jv_get(pp, "single");
	const struct ct_jv *specials = ct_jv_get(pp, "special_tokens");
	int seen = 0, rc = 0;

	if (b->templated)
		return ct_error(CT_EUNSUPP, "%s: post_processor: two templates are not "
				"supported", b->file);
	if (single == NULL || single->type != CT_JV_ARR)
		return bad(b, "TemplateProcessing without a \"single\" template");
	for (size_t i = 0; rc == 0 && i < single->n; i++) {
		const struct ct_jv *it = &single->items[i];
		const struct ct_jv *sp = it->type == CT_JV_OBJ ? ct_jv_get(it, "SpecialToken") : NULL;
		const struct ct_jv *name = sp && sp->type == CT_JV_OBJ ? ct_jv_get(sp, "id") : NULL;

		if (it->type == CT_JV_OBJ && ct_jv_get(it, "Sequence") != NULL) {
			if (seen++)
				return bad(b, "the single template has two sequences");
		} else if (name != NULL && name->type == CT_JV_STR) {
			rc = seen ? add_special(b, specials, name->str, b->tpl_post, &b->ntpl_post)
				  : add_special(b, specials, name->str, b->tpl_pre, &b->ntpl_pre);
		} else {
			return bad(b, "an item of the single template is neither SpecialToken "
				   "nor Sequence");
		}
	}
	if (rc == 0 && !seen)
		return bad(b, "the single template has no sequence");
	b->templated = rc == 0;
	return rc;
}

static int processor(struct ct_bpe *b, const struct ct_jv *pp, int depth)
{
	const char *type = type_of(pp);
	const struct ct_jv *list;
	int rc = 0;

	if (pp == NULL || pp->type == CT_JV_NULL)
		return 0;
	if (type == NULL)
		return bad(b, "not an object with a \"type\"");
	if (strcmp(type, "ByteLevel") == 0)
		return 0;
	if (strcmp(type, "TemplateProcessing") == 0)
		return template(b, pp);
	if (strcmp(type, "Sequence") != 0 || depth > 0)
		return ct_error(CT_EUNSUPP, "%s: post_processor '%s' is not supported (known: "
				"ByteLevel, TemplateProcessing, a Sequence of them)", b->file, type);
	list = ct_jv_get(pp, "processors");
	if (list == NULL || list->type != CT_JV_ARR)
		return bad(b, "a Sequence without \"processors\"");
	for (size_t i = 0; rc == 0 && i < list->n; i++)
		rc = processor(b, &list->items[i], depth + 1);
	return rc;
}

int ct_bpe_post_processor(struct ct_bpe *b, const struct ct_jv *root)
{
	b->templated = 0;
	b->ntpl_pre = b->ntpl_post = 0;
	return processor(b, ct_jv_get(root, "post_processor"), 0);
}

int ct_bpe_template(const struct ct_bpe *b, const uint32_t **pre, int *npre,
		    const uint32_t **post, int *npost)
{
	*pre = b->tpl_pre;
	*npre = b->templated ? b->ntpl_pre : 0;
	*post = b->tpl_post;
	*npost = b->templated ? b->ntpl_post : 0;
	return b->templated;
}
