/*
 * page_cache.h - the web pages' short-lived content cache, with single
 * flight: key -> bytes for ttl seconds (config web.cache_ttl, default 5;
 * 0 disables it). When a cached page expires, the first request to miss it
 * builds it and the others asking for the same key meanwhile wait for that
 * build instead of running the same queries at once (a thundering herd at
 * the moment each popular page expires). A build that fails or stalls does
 * not hold the others for long: its flight ends when the builder says so
 * (ct_page_cache_abandon) or after CT_PAGE_FLIGHT_WAIT_S, whichever first.
 *
 * One cache per server (struct ct_server.pages, made by ct_server_load);
 * every function is thread-safe.
 */
#ifndef CT_SERVER_PAGE_CACHE_H
#define CT_SERVER_PAGE_CACHE_H

#include "ct_buf.h"

struct ct_clock;
struct ct_page_cache;

/* Seconds a request waits for another's build of the same key. */
#define CT_PAGE_FLIGHT_WAIT_S 5

/* A new, empty cache whose entries expire on clock's monotonic time (not
 * owned; NULL: the system clock). Free with ct_page_cache_free(). Returns
 * 0 or CT_ENOMEM (*out = NULL). */
int ct_page_cache_new(struct ct_page_cache **out, const struct ct_clock *clock);
void ct_page_cache_free(struct ct_page_cache *pc);

/* Seconds a put entry lives (clamped to 0..3600; 0 turns caching off). */
void ct_page_cache_set_ttl(struct ct_page_cache *pc, int ttl_s);

/* Append key's cached bytes to out and return 1 on a hit; 0 on a miss,
 * which makes the caller the key's builder: it must end with
 * ct_page_cache_put, or ct_page_cache_abandon when the build failed, or
 * the others asking for the key wait CT_PAGE_FLIGHT_WAIT_S seconds. */
int ct_page_cache_get(struct ct_page_cache *pc, const char *key, struct ct_buf *out);
void ct_page_cache_put(struct ct_page_cache *pc, const char *key, const struct ct_buf *data);
void ct_page_cache_abandon(struct ct_page_cache *pc, const char *key);

/* Single flight alone (what get/put/abandon use). After a cache miss for
 * key: 1 if the caller must build it (it now owns the flight and ends it
 * with ct_page_flight_end); 0 if another request was building it and has
 * ended its flight meanwhile (look in the cache again: the page is there
 * unless that build failed). */
int ct_page_flight_begin(struct ct_page_cache *pc, const char *key);

/* End the caller's flight for key (built and cached, or failed), waking
 * the requests that wait for it. A key with no flight is a no-op. */
void ct_page_flight_end(struct ct_page_cache *pc, const char *key);

#endif
