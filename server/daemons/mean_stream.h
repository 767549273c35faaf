/*
 * mean_stream.h - the assimilator's mean of a round's K full-weight
 * results, streamed: the results are decoded a chunk at a time straight
 * into the sum, the base weights they are deltas against are read from
 * the base model's file a chunk at a time too, so the only model-sized
 * array is the caller's output. Several results are decoded at once (one
 * pass over the sum for a group of them, their inflating spread over
 * threads), and each coordinate still gets the float operations of
 * ct_avg's mean in its order (result 0, 1, ..., K-1, then one division
 * by K), so the bits are ct_avg's whatever the threads and groups.
 */
#ifndef CT_SERVER_MEAN_STREAM_H
#define CT_SERVER_MEAN_STREAM_H

#include <stddef.h>

/* Results decoded in one pass over the sum (their readers are open at
 * once, and each has a buffer of 4 chunks: about 1.4 MiB each). */
#define CT_MEAN_GROUP 16

/* out[i] = mean over k of result k's weight i, for the k result files at
 * paths[0..k) (ct_delta files of full weights, n weights each, against
 * the checkpoint at base_path, whose weights are n floats after its
 * header). threads: decoding threads (1..CT_MEAN_GROUP; more are
 * lowered). Every result's hash is checked as ct_delta_decode checks it.
 * out: n floats, caller-owned. Returns 0; CT_EINVAL (k < 1 or over
 * CT_AVG_MAX_INPUTS); CT_EFORMAT (base file too short); CT_ENOMEM;
 * CT_EIO; or a ct_delta_reader error of a result (its path is logged).
 * On failure out holds garbage. */
int ct_mean_stream(const char *base_path, size_t n, const char *const *paths, int k,
		   int threads, float *out);

#endif
