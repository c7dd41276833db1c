#include "seo/pb.h"

#include <stddef.h>

#define MEMBER(msg, f) ((char *)(msg) + (f)->offset)
#define QUANT(msg, f) ((char *)(msg) + (f)->quantifier_offset)

int seo_pb_always(const ProtobufCFieldDescriptor *f)
{
	if (f->label == PROTOBUF_C_LABEL_REPEATED ||
	    (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
		return 0;
	return f->label == PROTOBUF_C_LABEL_REQUIRED || f->default_value != NULL;
}

/* Distinct from every default, so that protobuf-c packs it. */
static char empty_string[] = "";

static void fill_field(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
	char **s;

	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		if (*(ProtobufCMessage **)MEMBER(msg, f) != NULL)
			seo_pb_fill(*(ProtobufCMessage **)MEMBER(msg, f));
		return;
	case PROTOBUF_C_TYPE_STRING:
		s = (char **)MEMBER(msg, f);
		if (seo_pb_always(f) && (*s == NULL || *s == f->default_value))
			*s = empty_string;
		return;
	default:
		if (seo_pb_always(f) && f->label == PROTOBUF_C_LABEL_OPTIONAL)
			*(protobuf_c_boolean *)QUANT(msg, f) = 1;
	}
}

void seo_pb_fill(ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	unsigned i;
	size_t j;

	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			ProtobufCMessage **m = *(ProtobufCMessage ***)MEMBER(msg, f);
			if (f->type != PROTOBUF_C_TYPE_MESSAGE)
				continue;
			for (j = 0; j < *(size_t *)QUANT(msg, f); j++)
				seo_pb_fill(m[j]);
		} else if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
			   *(uint32_t *)QUANT(msg, f) == f->id) {
			fill_field(msg, f);
		}
	}
}
