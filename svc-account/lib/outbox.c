/*
 * svc-account's outbox: the table its migrations create, drained by the
 * shared mailer (seo/mail.h).
 */
#include "acct.h"

const seo_outbox acct_outbox = {"outbox", "acct_outbox"};
