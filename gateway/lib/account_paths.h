/*
 * account_paths.h: the svc-account methods the gateway calls of its own
 * (not as a route's service call), each path written once. Internal to
 * the gateway.
 */
#ifndef GW_ACCOUNT_PATHS_H
#define GW_ACCOUNT_PATHS_H

#define GW_ACCOUNT_PATH(method) "/seo.account.v1.Account/" method

#define GW_AUTHORIZE_PATH GW_ACCOUNT_PATH("Authorize")
#define GW_REFUND_PATH GW_ACCOUNT_PATH("Refund")
#define GW_CHARGE_PATH GW_ACCOUNT_PATH("Charge")
#define GW_WATCH_PATH GW_ACCOUNT_PATH("Watch")
#define GW_LEASE_PATH GW_ACCOUNT_PATH("Lease")
#define GW_LEASE_BATCH_PATH GW_ACCOUNT_PATH("LeaseBatch")
#define GW_LEASE_COLUMNS_PATH GW_ACCOUNT_PATH("LeaseBatchColumns")

#endif
