/*
 * seo/pb.h: the presence rule of our proto2 messages (docs/decisions.md).
 *
 * No field is `required`, so that a field can be added or retired without
 * breaking a peer that does not know it. A scalar, enum, string or bytes
 * field the interface always shows declares a [default] in its .proto.
 * Such an "always" field is written by every sender (the RPC layer calls
 * seo_pb_fill() before packing), is present in JSON (its default when a
 * peer left it out), and is a parameter a client must give in a request.
 * Any other field is absent (null in JSON) until set; a message-typed field
 * (proto2 gives those no default) is absent while its pointer is NULL.
 */
#ifndef SEO_PB_H
#define SEO_PB_H

#include <protobuf-c/protobuf-c.h>

/* 1 when non-repeated field `f` is an "always" field (not a oneof member),
 * else 0. A field still labelled required counts too. */
int seo_pb_always(const ProtobufCFieldDescriptor *f);

/*
 * Marks every "always" field of `msg` and of the messages in it as set
 * (has_ flags; a string left at its default or NULL points at a static ""),
 * so that packing writes them as proto2 `required` fields were written: the
 * wire is unchanged. `msg` must be writable. No allocation, no failure.
 */
void seo_pb_fill(ProtobufCMessage *msg);

#endif
