/*
 * seo/errors.h: the one table of public error codes.
 *
 * Every failure a client can see is a row here: the stable machine code of
 * the interface specification, its HTTP status and the gRPC status a service
 * uses when it fails with that code. Services fail with a code (carried in
 * the `seo-error-code` trailer); the gateway turns it back into the HTTP
 * status and the error object {error, code, message}.
 *
 * Functions returning int return 0 or a negative SEO_E* value.
 */
#ifndef SEO_ERRORS_H
#define SEO_ERRORS_H

/* Internal result codes (negative errno style). */
enum {
	SEO_OK = 0,
	SEO_ENOMEM = -1,     /* out of memory */
	SEO_EINVAL = -2,     /* bad argument or malformed input */
	SEO_EIO = -3,        /* system call or network failure */
	SEO_ENOTFOUND = -4,  /* no such row, key, file */
	SEO_EEXIST = -5,     /* already exists */
	SEO_EDB = -6,        /* database failure */
	SEO_ETIMEDOUT = -7,  /* deadline passed */
	SEO_ECLOSED = -8,    /* peer or object already closed */
	SEO_ETOOBIG = -9,    /* over a size limit */
	SEO_EDENIED = -10,   /* refused by a rule (credits, role, rate) */
	SEO_EUPSTREAM = -11, /* an external provider failed */
};

/* Returns a short lowercase description of an SEO_E* code. */
const char *seo_strerror(int err);

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum seo_grpc_status {
	SEO_GRPC_OK = 0,
	SEO_GRPC_CANCELLED = 1,
	SEO_GRPC_UNKNOWN = 2,
	SEO_GRPC_INVALID_ARGUMENT = 3,
	SEO_GRPC_DEADLINE_EXCEEDED = 4,
	SEO_GRPC_NOT_FOUND = 5,
	SEO_GRPC_ALREADY_EXISTS = 6,
	SEO_GRPC_PERMISSION_DENIED = 7,
	SEO_GRPC_RESOURCE_EXHAUSTED = 8,
	SEO_GRPC_FAILED_PRECONDITION = 9,
	SEO_GRPC_ABORTED = 10,
	SEO_GRPC_OUT_OF_RANGE = 11,
	SEO_GRPC_UNIMPLEMENTED = 12,
	SEO_GRPC_INTERNAL = 13,
	SEO_GRPC_UNAVAILABLE = 14,
	SEO_GRPC_DATA_LOSS = 15,
	SEO_GRPC_UNAUTHENTICATED = 16,
};

typedef struct seo_error_def {
	const char *code;   /* stable machine code, e.g. "invalid_api_key" */
	int http_status;    /* e.g. 401 */
	int grpc_status;    /* enum seo_grpc_status */
	const char *summary; /* when it happens, for docs and OpenAPI */
} seo_error_def;

/* Returns the row for `code`, or NULL when the code is not in the table. */
const seo_error_def *seo_error_lookup(const char *code);

/* The code used when a service fails with a bare gRPC status and no
 * seo-error-code trailer (e.g. "service_unavailable" for UNAVAILABLE). */
const seo_error_def *seo_error_for_grpc(int grpc_status);

/* The whole table, for OpenAPI generation and tests. */
const seo_error_def *seo_error_table(unsigned *count);

/* Returns the HTTP reason phrase for `status` ("Not Found"), "Unknown" when
 * the status is not one we send. */
const char *seo_http_reason(int status);

/* The gRPC status name, e.g. "UNAVAILABLE". */
const char *seo_grpc_status_name(int grpc_status);

#endif
