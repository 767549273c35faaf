/*
 * job_hf.h - Hugging Face model directories at the job commands:
 * `job submit --model HF_DIR` imports the directory (ct_llama_hf.h) into a
 * temporary crowdtune checkpoint that the work generator stores like any
 * model file; `job export ID --out DIR --hf` writes the job's model as a
 * Hugging Face directory.
 */
#ifndef CT_SERVER_JOB_HF_H
#define CT_SERVER_JOB_HF_H

#include <stddef.h>

/* If *path names a directory, import it into a new temporary checkpoint
 * ($TMPDIR or /tmp), replace *path (malloc'd, freed here) with that
 * file's path and set *tmp to it as well (the caller unlinks and frees
 * *tmp after the submit; NULL when nothing was imported). Returns 0 or a
 * CT_E* code naming the directory and the problem. */
int ct_job_hf_import(char **path, char **tmp);

/* Write the checkpoint at model_path (a Llama model) to directory dir as
 * config.json + model.safetensors. Returns 0 or a CT_E* code. */
int ct_job_hf_export(const char *model_path, const char *dir);

/* Give the exported directory dir the input model's special token ids:
 * bos_token_id and eos_token_id (a number or an array of numbers) of the
 * input's config.json at input_config go into dir/config.json, and, when
 * dir has no generation_config.json (the input had none), one is written
 * with them. An input without them changes nothing. Returns 0 or a CT_E*
 * code (CT_EFORMAT: a config.json that does not parse). */
int ct_job_hf_special_ids(const char *dir, const char *input_config);

/* The input's _name_or_path (the name transformers loaded it by) of the
 * config.json at input_config into out (cap bytes): 1, 0 when it has none
 * (or it does not fit), or a CT_E* code. */
int ct_job_hf_input_name(const char *input_config, char *out, size_t cap);

#endif
