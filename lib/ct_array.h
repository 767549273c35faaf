/*
 * ct_array.h - growing a malloc'd array one element at a time.
 *
 * The push functions of the tokenizers' vectors, the BPE merge heap and the
 * config reader's entry list all keep (v, n, cap) and double cap when n
 * reaches it; this is that step, once:
 *
 *   rc = ct_array_grow(&c->v, &c->cap, c->n, sizeof(*c->v), 64);
 *   if (rc < 0) return rc;
 *   c->v[c->n++] = x;
 */
#ifndef CT_ARRAY_H
#define CT_ARRAY_H

#include <stddef.h>

/* arr is the address of the array pointer (T **), holding n of *cap
 * elements of elsize bytes. When n == *cap, realloc it to 2 * *cap
 * elements (first when *cap is 0); otherwise do nothing. Returns 0, or
 * CT_ENOMEM (no message) with *arr and *cap as they were. */
int ct_array_grow(void *arr, size_t *cap, size_t n, size_t elsize, size_t first);

/* For arrays that grow by exactly one (no cap kept): realloc *arr (a T **)
 * from n to n + 1 elements and zero the new one. Returns it (the caller
 * counts it), or NULL (out of memory) with *arr as it was. */
void *ct_array_add_zeroed(void *arr, size_t n, size_t elsize);

#endif
