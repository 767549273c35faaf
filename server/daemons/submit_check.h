/*
 * submit_check.h - `job submit`'s checks of inputs that parse but cannot
 * give a good model: text that is compressed or binary, shards so small
 * that each WU goes over its shard many times, a base model that looks
 * untrained (a loss near log V: random weights), and, once rounds are done,
 * an eval loss that rises round after round. Each says in one line what is
 * wrong and what to pass instead. Pure functions of their arguments (no
 * database), called by cmd/text_submit.c (text) and wg.c (shards) before anything
 * is stored, and by `job show` and the job page (the loss).
 */
#ifndef CT_SUBMIT_CHECK_H
#define CT_SUBMIT_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Refuse --train-text/--eval-text input that is not text: the first bytes
 * of a gzip, zstd, xz, bzip2 or zip file (say how to decompress it), or a
 * NUL byte anywhere in data[0..len) (binary: say where). opt is the
 * option's name ("--train-text"), name the file as the user gave it.
 * Returns 0, or CT_EFORMAT with that line as the detail. */
int ct_submit_check_text(const char *opt, const char *name, const void *data, size_t len);

/* How many times a WU of steps x batch x seq tokens goes over a shard of
 * shard_tokens tokens (the engine wraps around): 0 when shard_tokens is 0. */
double ct_submit_passes(int64_t shard_tokens, int steps, int batch, int seq);

/* Warn (ct_log_warn, one line) when each WU goes over its shard more than
 * once: the passes, the shard and WU sizes, and the largest --shards (or
 * the --steps) that keep one pass. train_tokens is the whole training set.
 * Returns 1 when it warned, else 0. */
int ct_submit_warn_shards(int64_t train_tokens, int shards, int steps, int batch, int seq);

struct ct_tokens;

/* The loss under which a base model counts as trained: a fraction of
 * log V, the loss of a model that predicts every token alike. A fresh
 * `ctune model init` scores log V to 1%; any pretraining, far below. */
#define CT_SUBMIT_UNTRAINED_FRACTION 0.95

/* Refuse a base model that looks untrained: its mean loss on the first
 * (up to 4) sequences of seq tokens of eval is at least
 * CT_SUBMIT_UNTRAINED_FRACTION x log V. Loads the model from model_path
 * (CPU reference; freed before returning). Returns 0 (and logs the loss),
 * CT_EINVAL with a line naming the loss, log V and --allow-random-base, or
 * the model's load / evaluation error. */
int ct_submit_check_base(const char *model_path, const struct ct_tokens *eval, int V, int seq);

/* ct_submit_check_base on the files `job submit` names: the checkpoint's
 * header for V, the eval token file. Files that do not open, or a seq the
 * model cannot take, return 0: ct_wg_submit refuses them by name. */
int ct_submit_check_base_file(const char *model_path, const char *eval_path, int seq);

/* Whether a job's eval loss rose two rounds in a row: loss[0] is the base
 * model's, loss[r] round r's averaged model's (NaN: not evaluated yet, ends
 * a run). Returns the first round r >= 2 with loss[r-2] < loss[r-1] <
 * loss[r] and writes one line saying so into note (cap bytes, always
 * terminated), or returns -1 and leaves note "". */
int ct_submit_loss_rises(const double *loss, size_t n, char *note, size_t cap);

#endif
