/*
 * sched_req.h - a scheduler request parsed and bounds-checked (internal to
 * the scheduler; see doc/protocol.md for the XML).
 */
#ifndef CT_SCHED_REQ_H
#define CT_SCHED_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "sched_rpc.h"

struct sched_device {
	char *name, *vendor, *type;
	int64_t global_mem;
	long compute_units;
	long conforming;
};

struct sched_report {
	char *name;
	int success;
	char *sha256;		/* success only */
	int64_t size;
	long error_code;
	char *error_message;
	double elapsed_s;
	double final_loss;
	int has_final_loss;
	long conforming;
	char *chain;		/* success only: the hash chain (ct_chain.h), or NULL */
};

struct sched_req {
	char *authenticator;
	int64_t host_id;
	char *host_cpid;
	char *client_version;
	char *hostname, *os, *cpu_model;
	long ncpus;
	int64_t ram_bytes;
	int64_t work_mem;	/* host/work_mem: bytes a WU may take on the
				 * device it computes on; 0 = not said */
	char *work_backend;	/* host/work_backend: what work_mem is for
				 * ("cpu", "opencl"); "" = not said */
	struct sched_device dev[CT_SCHED_MAX_DEVICES];
	int ndev;
	struct sched_report rep[CT_SCHED_MAX_REPORTS];
	int nrep;
	char *other[CT_SCHED_MAX_OTHER];
	int nother;
	int has_other;		/* <other_results> was present */
	long want;
	long lora;		/* work_req/lora: 1 if the client runs LoRA WUs */
};

/* Parse n bytes. Returns 0 with *req filled (free with sched_req_free),
 * CT_EXML (not XML), CT_ETOOBIG, or CT_EPROTO (detail names the element). */
int sched_req_parse(const void *body, size_t n, size_t max_bytes, struct sched_req *req);

void sched_req_free(struct sched_req *req);

#endif
