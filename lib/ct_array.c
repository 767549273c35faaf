/*
 * ct_array.c - see ct_array.h.
 */
#include "ct_array.h"
#include "ct_err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ct_array_grow(void *arr, size_t *cap, size_t n, size_t elsize, size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first;
	void *v;

	if (n < *cap)
		return 0;
	if (ncap < *cap || ncap > SIZE_MAX / elsize)
		return CT_ENOMEM;
	memcpy(&v, arr, sizeof(v));	/* arr is a T **, not a void ** */
	v = realloc(v, ncap * elsize);
	if (v == NULL)
		return CT_ENOMEM;
	memcpy(arr, &v, sizeof(v));
	*cap = ncap;
	return 0;
}

void *ct_array_add_zeroed(void *arr, size_t n, size_t elsize)
{
	char *v;

	if (n >= SIZE_MAX / elsize - 1)
		return NULL;
	memcpy(&v, arr, sizeof(v));
	v = realloc(v, (n + 1) * elsize);
	if (v == NULL)
		return NULL;
	memcpy(arr, &v, sizeof(v));
	return memset(v + n * elsize, 0, elsize);
}
