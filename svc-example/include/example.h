/*
 * example.h: svc-example's methods (seo.example.v1.Example), the example
 * of docs/NEW-SERVICE.md: a library of handlers, unit-testable without
 * sockets, behind a thin main.c.
 */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#include <stddef.h>

#include "seo/rpc.h"
#include "seo/rpc_peer.h"

/* The service's state: the peers it calls, opened at start. */
typedef struct ex_service {
	rpc_peer *account;
} ex_service;

/* Opens the peers. Returns 0, or the rpc_peer_open() failure (logged). */
int ex_service_init(ex_service *s);

/* Frees the peers (the struct itself is the caller's). */
void ex_service_free(ex_service *s);

/* The methods, for rpc_service_main() with an ex_service as `service`. */
extern const rpc_method ex_methods[];
extern const size_t ex_n_methods;

#endif
