/*
 * fake_nccl.c - a stand-in libnccl.so.2 for the tests.
 *
 * ncclGetVersion answers SPARKCTL_FAKE_NCCL_VERSION, a version code as
 * NCCL_VERSION_CODE writes it (22809 for 2.28.9, 2708 for 2.7.8 in the
 * encoding before 2.9), 22809 when unset.  A value that is not a whole
 * number makes it fail with ncclInvalidUsage.
 *
 * The rest is enough for sparkctl bench nccl on one rank, with the stand-in
 * libcuda.so.1 (fake_cuda.c), whose device pointers are host addresses:
 *
 *   - ncclMemAlloc and ncclMemFree are the stand-in libcuda's cuMemAlloc_v2
 *     and cuMemFree_v2 (NCCL's use cuMem* on the current device).
 *   - ncclCommInitRankConfig reads its config as NCCL 2.28 does (see there)
 *     and is otherwise ncclCommInitRank.
 *   - ncclGetUniqueId writes a recognisable id, and ncclCommInitRank takes
 *     no other (ncclInvalidArgument).  Only one rank: nranks 1, rank 0; any
 *     other valid pair fails with ncclInvalidUsage, and ncclGetLastError
 *     says "the stand-in libnccl supports one rank".
 *   - a collective checks its arguments as NCCL does (ncclInvalidArgument
 *     for a NULL or unknown comm, a bad datatype, reduction operation, root
 *     or peer), and that its buffers lie within cuMemAlloc_v2 allocations.
 *     It is done when it is called, by copying the input to the output
 *     (memmove: in place is allowed), since with one rank a sum, product,
 *     minimum, maximum or average of one element is that element.
 *   - ncclSend and ncclRecv wait for the end of their group, which pairs
 *     them in order per communicator and peer; one left without a partner
 *     makes ncclGroupEnd fail with ncclInvalidUsage.  Outside a group, each
 *     call is a group of its own, so that it fails.
 *   - ncclCommAbort and ncclCommDestroy of NULL succeed.  ncclCommFinalize and
 *     ncclCommDestroy of a communicator with a hung collective fail with
 *     ncclInvalidUsage instead of waiting forever.
 *   - with NCCL_DEBUG=INFO (any case) and NCCL_DEBUG_FILE set,
 *     ncclCommInitRank writes a few of NCCL's INFO lines to that file, which
 *     NCCL names as it does (%h: the host name up to its first dot, %p: the
 *     pid, %%: a %): "NCCL version", the NET/Socket (or NET/IB) and "Using
 *     network" lines, "comm 0x... rank 0 nRanks 1 ...", two "Channel" lines,
 *     with IB "GPU Direct RDMA Disabled for HCA 0", and "Comm config
 *     nvlinkCentricSched set to N" when a config set it.  Without either
 *     variable nothing is written.
 *   - ncclGetLastError is the process's last error, whatever the comm, as
 *     in NCCL.
 *
 * The size of a collective below is the larger of its input and output in
 * bytes (the size column of nccl-tests): count * size of the datatype for
 * ncclAllReduce, ncclBroadcast, ncclReduce, ncclSend/ncclRecv; times the
 * number of ranks for ncclAllGather, ncclReduceScatter, ncclAlltoAll.  The
 * test hooks, from the environment:
 *
 *   SPARKCTL_FAKE_NCCL_HANG_BYTES=N  a collective of N bytes or more leaves
 *                      its stream hung: cuStreamQuery answers
 *                      CUDA_ERROR_NOT_READY until ncclCommAbort of its
 *                      communicator, which releases it.
 *                      ncclCommGetAsyncError reports ncclSuccess meanwhile.
 *   SPARKCTL_FAKE_NCCL_HANG_AFTER=N  every collective of a communicator
 *                      after its Nth hangs likewise, whatever its size.
 *   SPARKCTL_FAKE_NCCL_CORRUPT=N     a collective of N bytes or more adds 1
 *                      to the first byte of its output, so that a check of
 *                      the result finds it wrong.
 *   SPARKCTL_FAKE_NCCL_ASYNC_ERROR=1 after the first collective of a
 *                      communicator, ncclCommGetAsyncError reports
 *                      ncclSystemError, ncclGetLastError "fake: remote peer
 *                      closed connection", and its stream hangs as above
 *                      (the kernel waits for the lost peer); later calls on
 *                      the communicator fail with ncclSystemError.
 *   SPARKCTL_FAKE_NCCL_BUSY_US=N     every collective keeps its stream busy
 *                      for N microseconds (cuStreamQuery: not ready;
 *                      cuStreamSynchronize waits), so that times are not 0.
 *   SPARKCTL_FAKE_NCCL_NET=Socket|IB the network the log names (Socket when
 *                      unset).
 *   SPARKCTL_FAKE_NCCL_MEMALLOC_FAIL=1 ncclMemAlloc fails with
 *                      ncclUnhandledCudaError, as when device memory is short.
 *   SPARKCTL_FAKE_NCCL_TRACE=FILE    ncclCommDestroy and ncclCommAbort of a
 *                      communicator append their names to FILE, a line each,
 *                      and the library's exit handler appends "exit
 *                      handler: N live", so that a test can tell how a
 *                      process ended its communicators, and whether it ran
 *                      its libraries' exit handlers at all.
 *
 * A hook whose value is not as above makes the call that reads it fail with
 * ncclInvalidUsage.  The streams are the stand-in libcuda's: this library
 * reaches them through the hooks of fake_gpu.h, and the hang hook needs
 * them (ncclSystemError without).  Communicators not destroyed or aborted
 * when the library is unloaded are reported on stderr, which the tests
 * require to be empty.
 *
 * Built with FAKE_BROKEN, it lacks ncclGetVersion, which sparkctl requires.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fake_gpu.h"

#ifdef HAVE_NCCL_H
/* The real declarations: the compiler checks the definitions below against them. */
#include <nccl.h>
#else
/* The subset of nccl.h defined here, with its names. */
typedef struct CUstream_st *cudaStream_t;

typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES  128
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
} ncclResult_t;

typedef enum {
	ncclSum = 0,
	ncclProd = 1,
	ncclMax = 2,
	ncclMin = 3,
	ncclAvg = 4,
	ncclNumOps = 5,
	ncclMaxRedOp = 0x7fffffff,
} ncclRedOp_t;

typedef enum {
	ncclInt8 = 0,
	ncclChar = 0,
	ncclUint8 = 1,
	ncclInt32 = 2,
	ncclInt = 2,
	ncclUint32 = 3,
	ncclInt64 = 4,
	ncclUint64 = 5,
	ncclFloat16 = 6,
	ncclHalf = 6,
	ncclFloat32 = 7,
	ncclFloat = 7,
	ncclFloat64 = 8,
	ncclDouble = 8,
	ncclBfloat16 = 9,
	ncclFloat8e4m3 = 10,
	ncclFloat8e5m2 = 11,
	ncclNumTypes = 12,
} ncclDataType_t;

/* ncclConfig_t of NCCL 2.28, the version this library stands in for by default. */
#define NCCL_CONFIG_UNDEF_INT INT_MIN
typedef struct ncclConfig_v22800 {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
	int cgaClusterSize;
	int minCTAs;
	int maxCTAs;
	const char *netName;
	int splitShare;
	int trafficClass;
	const char *commName;
	int collnetEnable;
	int CTAPolicy;
	int shrinkShare;
	int nvlsCTAs;
	int nChannelsPerNetPeer;
	int nvlinkCentricSched;
} ncclConfig_t;

ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclMemAlloc(void **ptr, size_t size);
ncclResult_t ncclMemFree(void *ptr);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
				    ncclConfig_t *config);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			   cudaStream_t stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
			       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			       cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
			  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);
#endif

/* Prototypes: nccl.h declares these two with () (no prototype, in C). */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

#define DEFAULT_VERSION_CODE 22809

/* The CUresult values the hooks of fake_gpu.h return that matter here. */
#define FAKE_CUDA_SUCCESS	      0
#define FAKE_CUDA_ERROR_INVALID_VALUE 1

/* ncclGetUniqueId's ids begin with these bytes, the NUL included. */
static const char id_magic[] = "sparkctl fake NCCL unique id";

#define COMM_MAGIC 0x6e63636cU

struct ncclComm {
	unsigned magic;
	int rank, nranks;
	ncclResult_t async_error;
	bool finalized;
	unsigned long long collectives;
	void **hung; /* the streams its collectives left hung */
	size_t nr_hung, hung_cap;
	struct ncclComm *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm *comms; /* the live ones, under lock */
static char last_error[1024];  /* under lock, as ncclGetLastError returns it */

/* A ncclSend or ncclRecv waiting for the end of its group. */
struct p2p {
	bool send;
	struct ncclComm *comm;
	int peer;
	void *buf;
	size_t bytes;
	void *stream;
	bool done;
};

/* Groups are per thread, as in NCCL. */
static _Thread_local int group_depth;
static _Thread_local ncclResult_t group_error;
static _Thread_local struct p2p *p2ps;
static _Thread_local size_t nr_p2ps, p2ps_cap;

__attribute__((format(printf, 1, 2))) static void set_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&lock);
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&lock);
}

#ifndef FAKE_BROKEN
FAKE_EXPORT ncclResult_t ncclGetVersion(int *version)
{
	const char *s = getenv("SPARKCTL_FAKE_NCCL_VERSION");
	char *end;
	long v;

	if (!version)
		return ncclInvalidArgument;
	if (!s) {
		*version = DEFAULT_VERSION_CODE;
		return ncclSuccess;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT_MAX)
		return ncclInvalidUsage;
	*version = (int)v;
	return ncclSuccess;
}
#endif

/* Also in the broken library, which would otherwise be empty. */
FAKE_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclUnhandledCudaError:
		return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError:
		return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError:
		return "remote process exited or there was a network error";
	case ncclInProgress:
		return "NCCL operation in progress";
	default:
		return "unknown result code";
	}
}

/* As NCCL: the last error of the process, whatever comm; "" if none. */
FAKE_EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return last_error;
}

/* ---- The stand-in libcuda's hooks ---- */

static fake_cuda_stream_enqueue_fn *stream_enqueue;
static fake_cuda_stream_release_fn *stream_release;
static fake_cuda_check_range_fn *check_range;
/* libcuda's own, for ncclMemAlloc: CUresult (CUdeviceptr *, size_t) and (CUdeviceptr). */
static int (*cuda_mem_alloc)(unsigned long long *ptr, size_t size);
static int (*cuda_mem_free)(unsigned long long ptr);

/*
 * Finds the hooks of the stand-in libcuda.so.1 if it is loaded; false if
 * not (none of a real one).  The handle stays open: the hooks must outlive
 * sparkctl's own.
 */
static bool have_cuda_hooks(void)
{
	static void *h;
	bool ok;

	pthread_mutex_lock(&lock);
	if (!h) {
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			/* POSIX's way from void * to a function pointer. */
			*(void **)&stream_enqueue = dlsym(h, "fake_cuda_stream_enqueue");
			*(void **)&stream_release = dlsym(h, "fake_cuda_stream_release");
			*(void **)&check_range = dlsym(h, "fake_cuda_check_range");
			*(void **)&cuda_mem_alloc = dlsym(h, "cuMemAlloc_v2");
			*(void **)&cuda_mem_free = dlsym(h, "cuMemFree_v2");
		}
	}
	ok = stream_enqueue && stream_release && check_range && cuda_mem_alloc && cuda_mem_free;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* ---- Hooks of the environment ---- */

/*
 * The whole number in variable name: 1 with it in *value, 0 if unset, -1
 * (ncclGetLastError says why) if it is not one.
 */
static int env_number(const char *name, unsigned long long *value)
{
	const char *s = getenv(name);
	char *end;

	if (!s)
		return 0;
	errno = 0;
	if (*s >= '0' && *s <= '9') {
		*value = strtoull(s, &end, 10);
		if (!errno && !*end)
			return 1;
	}
	set_error("fake: %s=%s is not a whole number", name, s);
	return -1;
}

struct hooks {
	bool hang, corrupt, async_error;
	unsigned long long busy_us;
	unsigned long long hang_after; /* 0: none */
};

/* The hooks that apply to a collective of size bytes; false if one is malformed. */
static bool read_hooks(size_t bytes, struct hooks *h)
{
	unsigned long long v = 0;
	int r;

	memset(h, 0, sizeof(*h));
	r = env_number("SPARKCTL_FAKE_NCCL_HANG_BYTES", &v);
	if (r < 0)
		return false;
	h->hang = r > 0 && bytes >= v;
	r = env_number("SPARKCTL_FAKE_NCCL_HANG_AFTER", &v);
	if (r < 0)
		return false;
	h->hang_after = r > 0 ? v : 0;
	r = env_number("SPARKCTL_FAKE_NCCL_CORRUPT", &v);
	if (r < 0)
		return false;
	h->corrupt = r > 0 && bytes >= v;
	r = env_number("SPARKCTL_FAKE_NCCL_ASYNC_ERROR", &v);
	if (r < 0)
		return false;
	h->async_error = r > 0 && v != 0;
	r = env_number("SPARKCTL_FAKE_NCCL_BUSY_US", &v);
	if (r < 0)
		return false;
	if (r > 0)
		h->busy_us = v > LLONG_MAX ? LLONG_MAX : v;
	return true;
}

/* ---- Communicators ---- */

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	static unsigned serial;
	unsigned n;
	int pid = getpid();

	if (!uniqueId) {
		set_error("ncclGetUniqueId : uniqueId argument is NULL");
		return ncclInvalidArgument;
	}
	pthread_mutex_lock(&lock);
	n = ++serial;
	pthread_mutex_unlock(&lock);
	memset(uniqueId, 0, sizeof(*uniqueId));
	memcpy(uniqueId->internal, id_magic, sizeof(id_magic));
	memcpy(uniqueId->internal + 64, &pid, sizeof(pid));
	memcpy(uniqueId->internal + 68, &n, sizeof(n));
	return ncclSuccess;
}

/* The host name as NCCL writes it: up to the first dot. */
static void host_name(char *buf, size_t size)
{
	if (gethostname(buf, size) != 0)
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* NCCL_DEBUG_FILE with its %h, %p and %% expanded, as NCCL does. */
static void debug_file_name(const char *pattern, char *buf, size_t size)
{
	char host[256];
	size_t n = 0;

	host_name(host, sizeof(host));
	for (const char *p = pattern; *p && n + 1 < size; p++) {
		int w = 0;

		if (*p != '%') {
			buf[n++] = *p;
			continue;
		}
		switch (*++p) {
		case 'h':
			w = snprintf(buf + n, size - n, "%s", host);
			break;
		case 'p':
			w = snprintf(buf + n, size - n, "%d", (int)getpid());
			break;
		case '%':
			buf[n++] = '%';
			break;
		case '\0':
			buf[n++] = '%';
			p--;
			break;
		default: /* echoed */
			buf[n++] = '%';
			if (n + 1 < size)
				buf[n++] = *p;
			break;
		}
		if (w > 0)
			n = (size_t)w >= size - n ? size - 1 : n + (size_t)w;
	}
	buf[n] = '\0';
}

/*
 * NCCL's debug file at NCCL_DEBUG=INFO, opened ("w") the first time as
 * NCCL does; NULL when nothing is to be logged.
 */
static FILE *debug_file(void)
{
	static FILE *f;
	static bool tried;
	const char *level = getenv("NCCL_DEBUG"), *pattern = getenv("NCCL_DEBUG_FILE");
	char name[PATH_MAX];

	if (!level || strcasecmp(level, "INFO") != 0 || !pattern)
		return NULL;
	pthread_mutex_lock(&lock);
	if (!tried) {
		tried = true;
		debug_file_name(pattern, name, sizeof(name));
		if (name[0])
			f = fopen(name, "w");
		if (f)
			setlinebuf(f);
	}
	pthread_mutex_unlock(&lock);
	return f;
}

__attribute__((format(printf, 2, 3))) static void info(FILE *f, const char *fmt, ...)
{
	char host[256];
	va_list ap;

	host_name(host, sizeof(host));
	/* The [0] is the CUDA device; one rank has device 0 here. */
	fprintf(f, "%s:%d:%d [0] NCCL INFO ", host, (int)getpid(), (int)syscall(SYS_gettid));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static void log_init(FILE *f, const struct ncclComm *comm, bool ib)
{
	static bool version_shown;
	int code = DEFAULT_VERSION_CODE, major, minor, patch;
	const char *s = getenv("SPARKCTL_FAKE_NCCL_VERSION");

	if (s && *s >= '0' && *s <= '9')
		code = atoi(s);
	major = code >= 20900 ? code / 10000 : code / 1000;
	minor = code >= 20900 ? code / 100 % 100 : code / 100 % 10;
	patch = code % 100;
	/* Once a process, as NCCL. */
	if (!version_shown)
		info(f, "NCCL version %d.%d.%d+cuda13.0", major, minor, patch);
	version_shown = true;
	if (ib) {
		info(f, "NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB "
			"enP2p1s0f1:10.10.10.1<0>");
		info(f, "Using network IB");
	} else {
		info(f, "NET/Socket : Using [0]lo:127.0.0.1<0>");
		info(f, "Using network Socket");
	}
	info(f, "comm %p rank %d nRanks %d nNodes 1 localRanks %d localRank %d MNNVL 0",
	     (const void *)comm, comm->rank, comm->nranks, comm->nranks, comm->rank);
	info(f, "Channel 00/02 : 0");
	info(f, "Channel 01/02 : 0");
	if (ib)
		info(f, "GPU Direct RDMA Disabled for HCA 0 'rocep1s0f1'");
}

/* nvlink_sched: the config's nvlinkCentricSched, NCCL_CONFIG_UNDEF_INT when not set. */
static ncclResult_t comm_init(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
			      int nvlink_sched)
{
	const char *net = getenv("SPARKCTL_FAKE_NCCL_NET");
	struct ncclComm *c;
	FILE *f;

	if (!comm) {
		set_error("CommInitRank : comm argument is NULL");
		return ncclInvalidArgument;
	}
	*comm = NULL;
	if (nranks < 1 || rank < 0 || rank >= nranks) {
		set_error("Invalid rank requested : %d/%d", rank, nranks);
		return ncclInvalidArgument;
	}
	if (nranks != 1) {
		set_error("the stand-in libnccl supports one rank");
		return ncclInvalidUsage;
	}
	if (memcmp(commId.internal, id_magic, sizeof(id_magic)) != 0) {
		set_error("fake: the unique id does not come from ncclGetUniqueId");
		return ncclInvalidArgument;
	}
	if (net && strcmp(net, "Socket") != 0 && strcmp(net, "IB") != 0) {
		set_error("fake: SPARKCTL_FAKE_NCCL_NET=%s is neither Socket nor IB", net);
		return ncclInvalidUsage;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		set_error("fake: out of memory");
		return ncclSystemError;
	}
	c->magic = COMM_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	pthread_mutex_lock(&lock);
	c->next = comms;
	comms = c;
	pthread_mutex_unlock(&lock);
	f = debug_file();
	if (f)
		log_init(f, c, net && strcmp(net, "IB") == 0);
	/* NCCL logs each field a config sets (NCCL_CONFIG_DEFAULT in init.cc). */
	if (f && nvlink_sched != NCCL_CONFIG_UNDEF_INT)
		info(f, "Comm config nvlinkCentricSched set to %d", nvlink_sched);
	*comm = c;
	return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
					  int rank)
{
	return comm_init(comm, nranks, commId, rank, NCCL_CONFIG_UNDEF_INT);
}

/*
 * The config read as NCCL's parseCommConfig reads it: at most its own
 * size of it (the first field), the magic of NCCL_CONFIG_INITIALIZER, the
 * fields newer than its version left to NCCL; nvlinkCentricSched is 0, 1
 * or left to NCCL.  A NULL config is NCCL's defaults.
 */
FAKE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
						int rank, ncclConfig_t *config)
{
	ncclConfig_t c;
	size_t size;

	memset(&c, 0, sizeof(c));
	c.nvlinkCentricSched = NCCL_CONFIG_UNDEF_INT;
	if (config) {
		memcpy(&size, config, sizeof(size));
		memcpy(&c, config, size < sizeof(c) ? size : sizeof(c));
		if (c.magic != 0xcafebeef) {
			set_error("ncclConfig_t argument not initialized via "
				  "NCCL_CONFIG_INITIALIZER");
			return ncclInvalidArgument;
		}
		if (c.version < 22800 ||
		    size < offsetof(ncclConfig_t, nvlinkCentricSched) + sizeof(int))
			c.nvlinkCentricSched = NCCL_CONFIG_UNDEF_INT;
	}
	if (c.nvlinkCentricSched != NCCL_CONFIG_UNDEF_INT && c.nvlinkCentricSched != 0 &&
	    c.nvlinkCentricSched != 1) {
		set_error("Invalid config nvlinkCentricSched attribute value %d",
			  c.nvlinkCentricSched);
		return ncclInvalidArgument;
	}
	return comm_init(comm, nranks, commId, rank, c.nvlinkCentricSched);
}

/* ---- Memory ---- */

FAKE_EXPORT ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
	unsigned long long fail = 0, dptr = 0;
	int r = env_number("SPARKCTL_FAKE_NCCL_MEMALLOC_FAIL", &fail);

	if (r < 0)
		return ncclInvalidUsage;
	if (!ptr) {
		set_error("ncclMemAlloc : ptr argument is NULL");
		return ncclInvalidArgument;
	}
	if (r > 0 && fail) {
		set_error("Cuda failure 2 'out of memory'");
		return ncclUnhandledCudaError;
	}
	if (!have_cuda_hooks()) {
		set_error("fake: ncclMemAlloc needs the stand-in libcuda.so.1");
		return ncclUnhandledCudaError;
	}
	r = cuda_mem_alloc(&dptr, size);
	if (r != FAKE_CUDA_SUCCESS) {
		set_error("Cuda failure %d from cuMemAlloc_v2", r);
		return ncclUnhandledCudaError;
	}
	*ptr = (void *)(uintptr_t)dptr;
	return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclMemFree(void *ptr)
{
	int r;

	if (!ptr)
		return ncclSuccess;
	if (!have_cuda_hooks()) {
		set_error("fake: ncclMemFree needs the stand-in libcuda.so.1");
		return ncclUnhandledCudaError;
	}
	r = cuda_mem_free((unsigned long long)(uintptr_t)ptr);
	if (r != FAKE_CUDA_SUCCESS) {
		set_error("Cuda failure %d from cuMemFree_v2", r);
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

/* comm, if it is a live communicator; else NULL, with the reason set for ncclGetLastError. */
static struct ncclComm *comm_of(ncclComm_t comm, const char *op)
{
	struct ncclComm *c;

	if (!comm) {
		set_error("%s : comm argument is NULL", op);
		return NULL;
	}
	pthread_mutex_lock(&lock);
	for (c = comms; c && c != comm; c = c->next)
		;
	pthread_mutex_unlock(&lock);
	if (!c)
		set_error("%s : comm %p is not a live communicator", op, (void *)comm);
	return c;
}

/* Takes c out of the live ones and frees it. */
/* A line for SPARKCTL_FAKE_NCCL_TRACE, when it is set. */
__attribute__((format(printf, 1, 2))) static void trace(const char *fmt, ...)
{
	const char *path = getenv("SPARKCTL_FAKE_NCCL_TRACE");
	FILE *f;
	va_list ap;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static void comm_free(struct ncclComm *c)
{
	struct ncclComm **pp;

	pthread_mutex_lock(&lock);
	for (pp = &comms; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	pthread_mutex_unlock(&lock);
	c->magic = 0;
	free(c->hung);
	free(c);
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
	struct ncclComm *c = comm_of(comm, "ncclCommGetAsyncError");

	if (!c)
		return ncclInvalidArgument;
	if (!asyncError) {
		set_error("ncclCommGetAsyncError : asyncError argument is NULL");
		return ncclInvalidArgument;
	}
	*asyncError = c->async_error;
	return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	struct ncclComm *c = comm_of(comm, "ncclCommFinalize");

	if (!c)
		return ncclInvalidArgument;
	if (c->finalized) {
		set_error("ncclCommFinalize : comm %p is already finalized", (void *)c);
		return ncclInvalidUsage;
	}
	if (c->nr_hung) {
		set_error("fake: ncclCommFinalize would wait forever for the hung collectives; "
			  "abort the communicator");
		return ncclInvalidUsage;
	}
	if (c->async_error != ncclSuccess)
		return c->async_error;
	c->finalized = true;
	return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	struct ncclComm *c;

	if (!comm)
		return ncclSuccess;
	c = comm_of(comm, "ncclCommDestroy");
	if (!c)
		return ncclInvalidArgument;
	if (c->nr_hung) {
		set_error("fake: ncclCommDestroy would wait forever for the hung collectives; "
			  "abort the communicator");
		return ncclInvalidUsage;
	}
	trace("ncclCommDestroy");
	comm_free(c);
	return ncclSuccess;
}

/* Releases the streams the collectives of comm left hung. */
FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	struct ncclComm *c;

	if (!comm)
		return ncclSuccess;
	c = comm_of(comm, "ncclCommAbort");
	if (!c)
		return ncclInvalidArgument;
	if (c->nr_hung && have_cuda_hooks())
		for (size_t i = 0; i < c->nr_hung; i++)
			stream_release(c->hung[i]);
	trace("ncclCommAbort");
	comm_free(c);
	return ncclSuccess;
}

/* ---- Collectives ---- */

static const size_t type_size[ncclNumTypes] = {
	[ncclInt8] = 1,	   [ncclUint8] = 1,    [ncclInt32] = 4,	     [ncclUint32] = 4,
	[ncclInt64] = 8,   [ncclUint64] = 8,   [ncclFloat16] = 2,    [ncclFloat32] = 4,
	[ncclFloat64] = 8, [ncclBfloat16] = 2, [ncclFloat8e4m3] = 1, [ncclFloat8e5m2] = 1,
};

/* One collective, or one side of a send/receive pair. */
struct coll {
	const char *name; /* as NCCL's messages name it */
	struct ncclComm *comm;
	const void *send;
	void *recv;
	size_t count; /* the count argument */
	size_t send_bytes, recv_bytes;
	void *stream;
};

/* Remembers that a collective of c left stream hung. */
static bool add_hung(struct ncclComm *c, void *stream)
{
	for (size_t i = 0; i < c->nr_hung; i++)
		if (c->hung[i] == stream)
			return true;
	if (c->nr_hung == c->hung_cap) {
		size_t cap = c->hung_cap ? 2 * c->hung_cap : 4;
		void **p = realloc(c->hung, cap * sizeof(*p));

		if (!p)
			return false;
		c->hung = p;
		c->hung_cap = cap;
	}
	c->hung[c->nr_hung++] = stream;
	return true;
}

/* As a multiple of count, the size of the gathered or scattered side. */
#define ALL_RANKS SIZE_MAX

/*
 * The checks of a collective; send_mult and recv_mult are the buffers'
 * sizes in counts (0: no buffer, ALL_RANKS: the number of ranks).
 */
static ncclResult_t check(struct coll *op, ncclComm_t comm, ncclDataType_t datatype,
			  size_t send_mult, size_t recv_mult)
{
	size_t elem, mult;

	op->comm = comm_of(comm, op->name);
	if (!op->comm)
		return ncclInvalidArgument;
	if (op->comm->async_error != ncclSuccess)
		return op->comm->async_error;
	if (op->comm->finalized) {
		set_error("%s : comm %p is finalized", op->name, (void *)op->comm);
		return ncclInvalidUsage;
	}
	if ((int)datatype < 0 || (int)datatype >= ncclNumTypes) {
		set_error("%s : invalid type %d", op->name, (int)datatype);
		return ncclInvalidArgument;
	}
	if (send_mult == ALL_RANKS)
		send_mult = (size_t)op->comm->nranks;
	if (recv_mult == ALL_RANKS)
		recv_mult = (size_t)op->comm->nranks;
	elem = type_size[datatype];
	mult = send_mult > recv_mult ? send_mult : recv_mult;
	if (mult && op->count > SIZE_MAX / elem / mult) {
		set_error("%s : count %zu is too large", op->name, op->count);
		return ncclInvalidArgument;
	}
	op->send_bytes = op->count * elem * send_mult;
	op->recv_bytes = op->count * elem * recv_mult;
	return ncclSuccess;
}

static ncclResult_t check_op(const struct coll *op, ncclRedOp_t redop)
{
	if ((int)redop < 0 || (int)redop >= ncclNumOps) {
		set_error("%s : invalid reduction operation %d", op->name, (int)redop);
		return ncclInvalidArgument;
	}
	return ncclSuccess;
}

static ncclResult_t check_root(const struct coll *op, int root, const char *what)
{
	if (root < 0 || root >= op->comm->nranks) {
		set_error("%s : invalid %s %d (%s should be in the 0..%d range)", op->name, what,
			  root, what, op->comm->nranks - 1);
		return ncclInvalidArgument;
	}
	return ncclSuccess;
}

/* The buffers lie within the stand-in libcuda's allocations, the stream is one of its. */
static ncclResult_t check_cuda(const struct coll *op)
{
	int r;

	if ((op->send_bytes && !op->send) || (op->recv_bytes && !op->recv)) {
		set_error("%s : invalid %s NULL", op->name,
			  op->send_bytes && !op->send ? "sendbuff" : "recvbuff");
		return ncclInvalidArgument;
	}
	if (!have_cuda_hooks())
		return ncclSuccess;
	if (op->send_bytes && check_range(op->send, op->send_bytes) != FAKE_CUDA_SUCCESS) {
		set_error("%s : sendbuff %p of %zu bytes is not within one cuMemAlloc_v2 "
			  "allocation",
			  op->name, op->send, op->send_bytes);
		return ncclInvalidArgument;
	}
	if (op->recv_bytes && check_range(op->recv, op->recv_bytes) != FAKE_CUDA_SUCCESS) {
		set_error("%s : recvbuff %p of %zu bytes is not within one cuMemAlloc_v2 "
			  "allocation",
			  op->name, op->recv, op->recv_bytes);
		return ncclInvalidArgument;
	}
	r = stream_enqueue(op->stream, 0);
	if (r != FAKE_CUDA_SUCCESS) {
		set_error("Cuda failure %d on stream %p", r, op->stream);
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

/*
 * After the data has moved: the test hooks.  out is the output of
 * out_bytes; bytes is the collective's size.  A send/receive pair has a
 * second stream, stream2, or NULL.
 */
static ncclResult_t finish(const struct coll *op, void *stream2, unsigned char *out,
			   size_t out_bytes, size_t bytes)
{
	struct ncclComm *c = op->comm;
	struct hooks h;
	bool hang;

	if (!read_hooks(bytes, &h))
		return ncclInvalidUsage;
	if (h.corrupt && out_bytes)
		out[0] = (unsigned char)(out[0] + 1);
	c->collectives++;
	hang = h.hang || (h.hang_after && c->collectives > h.hang_after) ||
	       (h.async_error && c->collectives == 1);
	if (hang || h.busy_us) {
		if (!have_cuda_hooks()) {
			set_error("fake: the test hooks need the stand-in libcuda.so.1");
			return ncclSystemError;
		}
		if (hang && (!add_hung(c, op->stream) || (stream2 && !add_hung(c, stream2)))) {
			set_error("fake: out of memory");
			return ncclSystemError;
		}
		stream_enqueue(op->stream, hang ? -1 : (long long)h.busy_us);
		if (stream2)
			stream_enqueue(stream2, hang ? -1 : (long long)h.busy_us);
	}
	if (h.async_error && c->collectives == 1) {
		c->async_error = ncclSystemError;
		set_error("fake: remote peer closed connection");
	}
	return ncclSuccess;
}

/* The one-rank collective: out = in, after the checks. */
static ncclResult_t run(struct coll *op, const void *in, void *out, size_t bytes)
{
	ncclResult_t r = check_cuda(op);

	if (r != ncclSuccess)
		return r;
	if (bytes && in != out)
		memmove(out, in, bytes);
	return finish(op, NULL, out, bytes,
		      op->send_bytes > op->recv_bytes ? op->send_bytes : op->recv_bytes);
}

/* Inside a group, the first error is also ncclGroupEnd's. */
static ncclResult_t grouped(ncclResult_t r)
{
	if (group_depth && r != ncclSuccess && group_error == ncclSuccess)
		group_error = r;
	return r;
}

FAKE_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
				       cudaStream_t stream)
{
	struct coll c = { "AllReduce", NULL, sendbuff, recvbuff, count, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, 1, 1);

	if (r == ncclSuccess)
		r = check_op(&c, op);
	if (r == ncclSuccess)
		r = run(&c, sendbuff, recvbuff, c.recv_bytes);
	return grouped(r);
}

/* Rank r's part of the output is its input. */
FAKE_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				       ncclDataType_t datatype, ncclComm_t comm,
				       cudaStream_t stream)
{
	struct coll c = { "AllGather", NULL, sendbuff, recvbuff, sendcount, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, 1, ALL_RANKS);

	if (r == ncclSuccess)
		r = run(&c, sendbuff, (char *)recvbuff + (size_t)c.comm->rank * c.send_bytes,
			c.send_bytes);
	return grouped(r);
}

/* The output is rank r's part of the input. */
FAKE_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
					   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
					   cudaStream_t stream)
{
	struct coll c = { "ReduceScatter", NULL, sendbuff, recvbuff, recvcount, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, ALL_RANKS, 1);

	if (r == ncclSuccess)
		r = check_op(&c, op);
	if (r == ncclSuccess)
		r = run(&c, (const char *)sendbuff + (size_t)c.comm->rank * c.recv_bytes, recvbuff,
			c.recv_bytes);
	return grouped(r);
}

FAKE_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				       ncclDataType_t datatype, int root, ncclComm_t comm,
				       cudaStream_t stream)
{
	struct coll c = { "Broadcast", NULL, sendbuff, recvbuff, count, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, 1, 1);

	if (r == ncclSuccess)
		r = check_root(&c, root, "root");
	if (r == ncclSuccess)
		r = run(&c, sendbuff, recvbuff, c.recv_bytes);
	return grouped(r);
}

FAKE_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
				    ncclDataType_t datatype, ncclRedOp_t op, int root,
				    ncclComm_t comm, cudaStream_t stream)
{
	struct coll c = { "Reduce", NULL, sendbuff, recvbuff, count, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, 1, 1);

	if (r == ncclSuccess)
		r = check_op(&c, op);
	if (r == ncclSuccess)
		r = check_root(&c, root, "root");
	if (r == ncclSuccess)
		r = run(&c, sendbuff, recvbuff, c.recv_bytes);
	return grouped(r);
}

/* With one rank, the block for rank 0 is all there is. */
FAKE_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
				      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	struct coll c = { "AlltoAll", NULL, sendbuff, recvbuff, count, 0, 0, stream };
	ncclResult_t r = check(&c, comm, datatype, ALL_RANKS, ALL_RANKS);

	if (r == ncclSuccess)
		r = run(&c, sendbuff, recvbuff, c.recv_bytes);
	return grouped(r);
}

/* ---- Point to point, and groups ---- */

/* Queues a send or a receive for the end of its group. */
static ncclResult_t p2p_add(struct coll *op, bool send, void *buf, ncclDataType_t datatype,
			    int peer, ncclComm_t comm)
{
	ncclResult_t r = check(op, comm, datatype, send, !send);

	if (r == ncclSuccess)
		r = check_root(op, peer, "peer");
	if (r == ncclSuccess)
		r = check_cuda(op);
	if (r != ncclSuccess)
		return r;
	if (nr_p2ps == p2ps_cap) {
		size_t cap = p2ps_cap ? 2 * p2ps_cap : 16;
		struct p2p *p = realloc(p2ps, cap * sizeof(*p));

		if (!p) {
			set_error("fake: out of memory");
			return ncclSystemError;
		}
		p2ps = p;
		p2ps_cap = cap;
	}
	p2ps[nr_p2ps++] = (struct p2p){
		.send = send,
		.comm = op->comm,
		.peer = peer,
		.buf = buf,
		.bytes = send ? op->send_bytes : op->recv_bytes,
		.stream = op->stream,
	};
	return ncclSuccess;
}

/*
 * Pairs each queued send with the first receive of its communicator from
 * the same rank (with one rank: itself), and moves the data.
 */
static ncclResult_t p2p_run(void)
{
	ncclResult_t r = ncclSuccess;

	for (size_t i = 0; i < nr_p2ps && r == ncclSuccess; i++) {
		struct p2p *s = &p2ps[i], *v = NULL;
		struct coll op = { "Recv", s->comm, NULL, NULL, 0, 0, 0, NULL };

		if (!s->send)
			continue;
		for (size_t j = 0; j < nr_p2ps && !v; j++)
			if (!p2ps[j].send && !p2ps[j].done && p2ps[j].comm == s->comm &&
			    p2ps[j].peer == s->comm->rank && s->peer == s->comm->rank)
				v = &p2ps[j];
		if (!v) {
			set_error("fake: ncclSend to peer %d without a matching ncclRecv in its "
				  "group",
				  s->peer);
			r = ncclInvalidUsage;
		} else if (s->bytes > v->bytes) {
			set_error("fake: ncclSend of %zu bytes to a ncclRecv of %zu bytes",
				  s->bytes, v->bytes);
			r = ncclInvalidUsage;
		} else if (!comm_of(s->comm, "ncclGroupEnd")) {
			r = ncclInvalidArgument;
		} else {
			s->done = v->done = true;
			if (s->bytes && s->buf != v->buf)
				memmove(v->buf, s->buf, s->bytes);
			op.stream = v->stream;
			r = finish(&op, s->stream != v->stream ? s->stream : NULL, v->buf, s->bytes,
				   s->bytes);
		}
	}
	for (size_t i = 0; i < nr_p2ps && r == ncclSuccess; i++)
		if (!p2ps[i].done) {
			set_error("fake: ncclRecv from peer %d without a matching ncclSend in its "
				  "group",
				  p2ps[i].peer);
			r = ncclInvalidUsage;
		}
	nr_p2ps = 0;
	return r;
}

FAKE_EXPORT ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGroupEnd(void)
{
	ncclResult_t r;

	if (group_depth == 0) {
		set_error("ncclGroupEnd: not in a group call.");
		return ncclInvalidUsage;
	}
	if (--group_depth)
		return ncclSuccess;
	r = p2p_run();
	if (group_error != ncclSuccess)
		r = group_error;
	group_error = ncclSuccess;
	return r;
}

FAKE_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
				  int peer, ncclComm_t comm, cudaStream_t stream)
{
	struct coll c = { "Send", NULL, sendbuff, NULL, count, 0, 0, stream };
	ncclResult_t r;

	ncclGroupStart();
	/* Read only: the buffer is the output of no one. */
	r = grouped(p2p_add(&c, true, (void *)(uintptr_t)sendbuff, datatype, peer, comm));
	return r == ncclSuccess ? ncclGroupEnd() : (ncclGroupEnd(), r);
}

FAKE_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
				  ncclComm_t comm, cudaStream_t stream)
{
	struct coll c = { "Recv", NULL, NULL, recvbuff, count, 0, 0, stream };
	ncclResult_t r;

	ncclGroupStart();
	r = grouped(p2p_add(&c, false, recvbuff, datatype, peer, comm));
	return r == ncclSuccess ? ncclGroupEnd() : (ncclGroupEnd(), r);
}

__attribute__((destructor)) static void check_leaks(void)
{
	size_t n = 0;

	for (const struct ncclComm *c = comms; c; c = c->next)
		n++;
	trace("exit handler: %zu live", n);
	if (n)
		fprintf(stderr,
			"libnccl.so.2 (sparkctl test stand-in): unloaded with %zu communicator(s) "
			"neither destroyed nor aborted\n",
			n);
}
