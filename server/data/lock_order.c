/*
 * lock_order.c - the order transactions lock WU rows in (lock_order.h).
 */
#include "lock_order.h"

int ct_lock_order_cmp(int64_t wu_a, int64_t id_a, int64_t wu_b, int64_t id_b)
{
	if (wu_a != wu_b)
		return wu_a < wu_b ? -1 : 1;
	return id_a < id_b ? -1 : id_a > id_b;
}
