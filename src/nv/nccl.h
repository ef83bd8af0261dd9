/*
 * nccl.h - the NCCL library (libnccl.so.2), loaded at run time.
 *
 * The inventory needs only the version; bench nccl the collective API,
 * declared here with our own types (no NCCL or CUDA header at build time;
 * tests/abi/check-abi.c compares them with the real nccl.h).
 */
#ifndef SPARKCTL_NCCL_H
#define SPARKCTL_NCCL_H

#include "sparkctl.h"

#include <limits.h>

#include "lib/strbuf.h"
#include "nv/cuda.h"

#define NCCL_SONAME "libnccl.so.2"

#define NCCL_UNIQUE_ID_BYTES 128

typedef int nccl_result;
typedef struct ncclComm *nccl_comm;
/* Passed by value, as nccl.h's ncclUniqueId: an aggregate of 128 bytes. */
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} nccl_unique_id;

enum {
	NCCL_SUCCESS = 0,
	NCCL_IN_PROGRESS = 7,
	NCCL_CONFIG_UNDEF_INT = INT_MIN, /* a field of ncclConfig_t left to NCCL */
};

#define NCCL_CONFIG_MAGIC 0xcafebeefu

/*
 * ncclConfig_t as NCCL 2.28 declares it (ncclConfig_v22800).  NCCL copies
 * at most its own size of it and resets every field newer than .version,
 * so each NCCL from 2.28 on reads this layout alike.
 */
struct nccl_config_v22800 {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
	int cga_cluster_size;
	int min_ctas;
	int max_ctas;
	const char *net_name;
	int split_share;
	int traffic_class;
	const char *comm_name;
	int collnet_enable;
	int cta_policy;
	int shrink_share;
	int nvls_ctas;
	int n_channels_per_net_peer;
	int nvlink_centric_sched;
};

/* NCCL_CONFIG_INITIALIZER of 2.28: every field left to NCCL. */
void nccl_config_init(struct nccl_config_v22800 *config);

/* The collective API, for bench nccl.  A NULL member is absent from this version. */
struct nccl {
	void *handle;
	int version;
	nccl_result (*get_version)(int *version);
	nccl_result (*get_unique_id)(nccl_unique_id *id);
	nccl_result (*comm_init_rank)(nccl_comm *comm, int nranks, nccl_unique_id id, int rank);
	/* 2.14; called only with NCCL 2.28 or later, which reads our layout */
	nccl_result (*comm_init_rank_config)(nccl_comm *comm, int nranks, nccl_unique_id id,
					     int rank, struct nccl_config_v22800 *config);
	nccl_result (*mem_alloc)(void **ptr, size_t size); /* 2.19 */
	nccl_result (*mem_free)(void *ptr);		   /* 2.19 */
	nccl_result (*comm_destroy)(nccl_comm comm);
	nccl_result (*comm_abort)(nccl_comm comm);
	nccl_result (*comm_finalize)(nccl_comm comm); /* 2.14 */
	nccl_result (*comm_get_async_error)(nccl_comm comm, nccl_result *error);
	const char *(*get_error_string)(nccl_result r);
	const char *(*get_last_error)(nccl_comm comm); /* 2.13 */
	nccl_result (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op,
				  nccl_comm comm, cu_stream stream);
	nccl_result (*all_gather)(const void *send, void *recv, size_t send_count, int dtype,
				  nccl_comm comm, cu_stream stream);
	nccl_result (*reduce_scatter)(const void *send, void *recv, size_t recv_count, int dtype,
				      int op, nccl_comm comm, cu_stream stream);
	nccl_result (*broadcast)(const void *send, void *recv, size_t count, int dtype, int root,
				 nccl_comm comm, cu_stream stream);
	nccl_result (*reduce)(const void *send, void *recv, size_t count, int dtype, int op,
			      int root, nccl_comm comm, cu_stream stream);
	nccl_result (*alltoall)(const void *send, void *recv, size_t count, int dtype,
				nccl_comm comm, cu_stream stream); /* 2.28 */
	nccl_result (*send)(const void *send, size_t count, int dtype, int peer, nccl_comm comm,
			    cu_stream stream);
	nccl_result (*recv)(void *recv, size_t count, int dtype, int peer, nccl_comm comm,
			    cu_stream stream);
	nccl_result (*group_start)(void);
	nccl_result (*group_end)(void);
};

/*
 * Load libnccl.so.2 with the collective API.  -ENOENT with the reason in
 * err when the library or a required function is missing.
 */
int nccl_open(struct nccl *nccl, struct strbuf *err);
void nccl_close(struct nccl *nccl);
/* The message of a result code, and NCCL's last error when it has one. */
void nccl_describe(const struct nccl *nccl, nccl_comm comm, nccl_result r, struct strbuf *out);

/*
 * NCCL's version code as ncclGetVersion() returns it: X*1000+Y*100+Z up to
 * 2.8, X*10000+Y*100+Z since 2.9.  Writes "X.Y.Z" to out.
 */
void nccl_version_string(int code, struct strbuf *out);

/*
 * Load libnccl.so.2 and ask its version.  On success writes the code and
 * the path of the library (allocated).  -ENOENT with the reason in err.
 */
int nccl_probe_version(int *ret_code, char **ret_path, struct strbuf *err);

#endif
