/*
 * svc-agent's outbox: the table its migrations create (agent_004), drained
 * by the shared mailer (seo/mail.h) its process runs.
 */
#include "agent_store.h"

const seo_outbox agent_outbox = {"agent_outbox", "agent_outbox"};
