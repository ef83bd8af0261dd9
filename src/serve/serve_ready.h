/*
 * serve_ready.h - whether the head's engine answers: an HTTP GET with a
 * time limit, from this host, of the engine's /health.
 */
#ifndef SPARKCTL_SERVE_READY_H
#define SPARKCTL_SERVE_READY_H

#include "sparkctl.h"

/* The path every engine answers 200 on once its model is loaded (vLLM, SGLang, trtllm-serve,
 * llama-server: 503 while loading). */
#define SERVE_READY_PATH "/health"

/*
 * GET path from addr:port (an IPv4 address) over HTTP/1.0, the whole
 * exchange in at most timeout_ms: the status code of the answer, or -errno
 * (-ETIMEDOUT, -ECONNREFUSED, -EPROTO for an answer that is not HTTP).
 */
int serve_http_status(const char *addr, unsigned port, const char *path, int timeout_ms);

#endif
