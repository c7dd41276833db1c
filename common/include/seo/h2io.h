/*
 * seo/h2io.h: drives one nghttp2 session over one libevent bufferevent.
 *
 * The one HTTP/2 engine of the project: the gRPC server and client and the
 * gateway's HTTP/2 front end all move bytes between a socket and nghttp2
 * through this pump. It feeds what the bufferevent reads to
 * nghttp2_session_mem_recv() and writes what nghttp2_session_mem_send()
 * produces, with back-pressure (it stops asking nghttp2 for output while the
 * output buffer holds more than a high-water mark, and resumes on drain).
 *
 * Threading: everything runs on the event_base thread of the bufferevent.
 */
#ifndef SEO_H2IO_H
#define SEO_H2IO_H

#include <event2/bufferevent.h>
#include <nghttp2/nghttp2.h>

typedef struct seo_h2io seo_h2io;

/*
 * Called once when the connection ends: the peer closed, a socket error, a
 * protocol error, or both sides have nothing more to say (GOAWAY sent and
 * no stream left). After it returns the pump may be freed; it has not freed
 * itself.
 */
typedef void (*seo_h2io_close_fn)(seo_h2io *io, void *ud);

/*
 * Flags of seo_h2io_new(). SEO_H2IO_CLEARTEXT: `bev` is a plain socket
 * bufferevent (no TLS filter) whose socket is set, so frames are written to
 * the socket when a send runs (seo_bev_write_now()) instead of on the
 * loop's next writable event, and the pump reads the socket itself with
 * recv() into 64 KiB (the bufferevent asks the kernel how much waits
 * before each read and takes at most 4 KiB): a unary call costs at most
 * three system calls on each side.
 */
#define SEO_H2IO_CLEARTEXT 1u

/*
 * Creates a pump. It takes ownership of `bev` (freed, with its socket, by
 * seo_h2io_free()) but not of `session`, which the caller created with its
 * own callbacks and frees after seo_h2io_free(). Bytes already waiting in
 * the bufferevent's input (for example a peeked client preface) are
 * processed at once.
 *
 * Returns 0 and sets *out, or SEO_ENOMEM.
 */
int seo_h2io_new(struct bufferevent *bev, nghttp2_session *session,
		 unsigned flags, seo_h2io_close_fn on_close, void *ud,
		 seo_h2io **out);

/*
 * Writes what waits in the output of a cleartext socket bufferevent
 * straight to its socket, if its write event is disabled: arming that
 * event per answer would cost two epoll_ctl calls and a loop turn. What the
 * socket does not take enables the write event; the owner's write callback
 * disables it again once called. Socket errors are left for the
 * bufferevent to meet and report. Never use it on a TLS bufferevent.
 */
void seo_bev_write_now(struct bufferevent *bev);

/*
 * Sends whatever nghttp2 has queued (call after any nghttp2_submit_*() or
 * nghttp2_session_resume_data()) once the loop has called back the other
 * events ready now, so that what several of them submit leaves in one
 * write. Returns 0, or SEO_EIO when the pump is closed already; a send
 * that fails later closes it (on_close follows from the loop).
 */
int seo_h2io_flush(seo_h2io *io);

/*
 * Submits GOAWAY (NO_ERROR, last stream id as nghttp2 knows it) and lets
 * open streams finish; on_close follows when none remain.
 */
void seo_h2io_shutdown(seo_h2io *io);

/* The bufferevent, for the peer address or TLS state. Owned by the pump. */
struct bufferevent *seo_h2io_bev(seo_h2io *io);

/* Frees the pump and its bufferevent. NULL is allowed. Never calls
 * on_close. */
void seo_h2io_free(seo_h2io *io);

#endif
