/*
 * rpc_echo_server: a tiny gRPC service for the interoperability test
 * (tests/integration/test_grpc_interop.py), run through rpc_service_main().
 *
 *   rpc_echo_server [host:port]     (default 127.0.0.1:0; the chosen port
 *                                    is in the "listening on" log line)
 *
 * Methods, all on grpc.health.v1 messages besides the built-in Check:
 *   /seo.test.Echo/Echo  HealthCheckRequest -> HealthCheckRequest: echoes
 *                        `service`; "meta:NAME" answers metadata NAME;
 *                        "status:N" also answers with response metadata
 *                        seo-http-status N and retry-after 30.
 *   /seo.test.Echo/Fail  fails with insufficient_credits, a message with
 *                        '%' and non-ASCII bytes, extra fields and response
 *                        metadata retry-after 12.
 *   /seo.test.Echo/Slow  logs "slow call began", sleeps `service`
 *                        milliseconds (default 1000), then answers SERVING.
 */
#include "seo/log.h"
#include "seo/rpc.h"

#include "grpc/health/v1/health.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int echo(rpc_ctx *ctx, const ProtobufCMessage *req,
		ProtobufCMessage **resp)
{
	const Grpc__Health__V1__HealthCheckRequest *in = (const void *)req;
	Grpc__Health__V1__HealthCheckRequest *out;
	const char *s = in->service != NULL ? in->service : "";

	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL)
		return -1;
	grpc__health__v1__health_check_request__init(out);
	if (strncmp(s, "meta:", 5) == 0) {
		s = rpc_ctx_meta(ctx, s + 5);
		if (s == NULL)
			s = "";
	} else if (strncmp(s, "status:", 7) == 0 &&
		   (rpc_ctx_set_http_status(ctx, atoi(s + 7)) != 0 ||
		    rpc_ctx_set_meta(ctx, "retry-after", "30") != 0)) {
		return -1;
	}
	out->service = (char *)s;
	*resp = &out->base;
	return 0;
}

static int fail(rpc_ctx *ctx, const ProtobufCMessage *req,
		ProtobufCMessage **resp)
{
	(void)req;
	(void)resp;
	rpc_ctx_fail_extra(ctx, "{\"retry_after\": 12}");
	if (rpc_ctx_set_meta(ctx, "retry-after", "12") != 0)
		return -1;
	return rpc_ctx_fail(ctx, "insufficient_credits",
			    "balance too low: 100%% caf\xc3\xa9");
}

static int slow(rpc_ctx *ctx, const ProtobufCMessage *req,
		ProtobufCMessage **resp)
{
	const Grpc__Health__V1__HealthCheckRequest *in = (const void *)req;
	Grpc__Health__V1__HealthCheckResponse *out;
	long ms = in->service != NULL && in->service[0] ? atol(in->service)
							 : 1000;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	/* the test's cue that a call is in flight */
	log_info("slow call began (%ld ms)", ms);
	nanosleep(&ts, NULL);
	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL)
		return -1;
	grpc__health__v1__health_check_response__init(out);
	out->has_status = 1;
	out->status = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
	*resp = &out->base;
	return 0;
}

static const rpc_method methods[] = {
	{"/seo.test.Echo/Echo",
	 &grpc__health__v1__health_check_request__descriptor,
	 &grpc__health__v1__health_check_request__descriptor, echo},
	{"/seo.test.Echo/Fail",
	 &grpc__health__v1__health_check_request__descriptor,
	 &grpc__health__v1__health_check_request__descriptor, fail},
	{"/seo.test.Echo/Slow",
	 &grpc__health__v1__health_check_request__descriptor,
	 &grpc__health__v1__health_check_response__descriptor, slow},
};

int main(int argc, char **argv)
{
	return rpc_service_main("rpc-echo", argc > 1 ? argv[1] : "127.0.0.1:0",
				methods, sizeof(methods) / sizeof(methods[0]),
				NULL, 4, NULL);
}
