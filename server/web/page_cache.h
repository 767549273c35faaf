/*
 * page_cache.h - single flight for the web content cache (web.c): when a
 * cached page expires, the first request to miss it builds it and the
 * others asking for the same key meanwhile wait for that build instead of
 * running the same queries at once (a thundering herd at the moment each
 * popular page expires). A build that fails or stalls does not hold the
 * others for long: its flight ends when the builder says so
 * (ct_web_cache_abandon) or after CT_PAGE_FLIGHT_WAIT_S, whichever first.
 * Thread-safe.
 */
#ifndef CT_SERVER_PAGE_CACHE_H
#define CT_SERVER_PAGE_CACHE_H

/* Seconds a request waits for another's build of the same key. */
#define CT_PAGE_FLIGHT_WAIT_S 5

/* After a cache miss for key: 1 if the caller must build it (it now owns
 * the flight and ends it with ct_page_flight_end); 0 if another request
 * was building it and has ended its flight meanwhile (look in the cache
 * again: the page is there unless that build failed). */
int ct_page_flight_begin(const char *key);

/* End the caller's flight for key (built and cached, or failed), waking
 * the requests that wait for it. A key with no flight is a no-op. */
void ct_page_flight_end(const char *key);

#endif
