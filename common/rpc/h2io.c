/*
 * h2io.c: the nghttp2 <-> bufferevent pump (see seo/h2io.h).
 *
 * Nothing is called back from inside seo_h2io_new(): the first read and
 * write run from the loop, so that the caller has stored the pump before
 * its nghttp2 callbacks can see any traffic.
 *
 * A flush asked for while the pump is inside nghttp2 (from a callback) is
 * not run there: the frames are picked up when nghttp2 returns, because the
 * receive path always ends with a send and the send loop runs until nghttp2
 * has nothing left. A flush asked for from outside runs once the loop has
 * called back every event that was ready with it (flush_ev, made active):
 * the requests a gateway submits for the clients of one wake-up, or the
 * answers a server's workers finished together, then leave in one write
 * instead of one each (a loopback TCP segment costs both kernels more than
 * the bytes in it).
 *
 * On a cleartext socket the pump reads the socket itself, with an event of
 * its own: the bufferevent's reads ask the kernel how much is waiting
 * first (one more system call per read) and take at most 4 KiB each, a
 * wake-up per 4 KiB of a large answer. Bytes the bufferevent already holds
 * (a peeked preface) are fed before that event is added.
 *
 * When nghttp2 wants neither to read nor to write and every byte has been
 * handed to the kernel, the pump half-closes the socket and waits briefly
 * for the peer's FIN before reporting the close: closing with unread input
 * would send a TCP reset, which can destroy our last frames (GOAWAY,
 * trailers) on their way to the peer.
 */
#include "seo/h2io.h"

#include "seo/errors.h"
#include "seo/log.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>

/* Stop asking nghttp2 for frames while this many bytes wait to be sent. */
#define H2IO_HIGH_WATER (256 * 1024)
/* How long a finished connection waits for the peer to close its side. */
#define H2IO_LINGER_MS 1000
/* Cleartext reads: bytes per recv() (on the stack), and recv() calls per
 * wake-up before other connections get their turn. */
#define H2IO_READ_CHUNK (64 * 1024)
#define H2IO_READS_MAX 16

enum h2io_state {
	H2IO_OPEN,
	H2IO_LINGER,  /* done, write side shut, waiting for the peer's FIN */
	H2IO_CLOSED,  /* on_close scheduled or delivered */
};

struct seo_h2io {
	struct bufferevent *bev;
	nghttp2_session *session;
	seo_h2io_close_fn on_close;
	void *ud;
	struct event *close_ev; /* delivers on_close; also the linger timer */
	struct event *read_ev;  /* cleartext: reads the socket itself */
	struct event *flush_ev; /* a flush asked for, made active once */
	enum h2io_state state;
	int busy; /* inside nghttp2_session_mem_recv() or _mem_send() */
	int cleartext; /* SEO_H2IO_CLEARTEXT: frames written straight out,
			* the socket read by read_ev */
};

/* No more reading or writing on the socket. */
static void h2io_stop(seo_h2io *io)
{
	io->state = H2IO_CLOSED;
	bufferevent_disable(io->bev, EV_READ | EV_WRITE);
	if (io->read_ev != NULL)
		event_del(io->read_ev);
}

static void h2io_fail(seo_h2io *io)
{
	if (io->state == H2IO_CLOSED)
		return;
	h2io_stop(io);
	event_del(io->close_ev);
	event_active(io->close_ev, EV_TIMEOUT, 1);
}

static void h2io_close_cb(evutil_socket_t fd, short what, void *arg)
{
	seo_h2io *io = arg;

	(void)fd;
	(void)what;
	/* Not closed yet: the linger timer ran out. */
	if (io->state != H2IO_CLOSED)
		h2io_stop(io);
	/* Last statement: on_close may free the pump. */
	io->on_close(io, io->ud);
}

static void h2io_finish_if_done(seo_h2io *io)
{
	struct timeval tv = {H2IO_LINGER_MS / 1000,
			     (H2IO_LINGER_MS % 1000) * 1000};
	evutil_socket_t fd;

	if (io->state != H2IO_OPEN ||
	    nghttp2_session_want_read(io->session) ||
	    nghttp2_session_want_write(io->session) ||
	    evbuffer_get_length(bufferevent_get_output(io->bev)) > 0)
		return;
	fd = bufferevent_getfd(io->bev);
	if (fd < 0 || shutdown(fd, SHUT_WR) != 0) {
		h2io_fail(io);
		return;
	}
	io->state = H2IO_LINGER;
	bufferevent_disable(io->bev, EV_WRITE);
	evtimer_add(io->close_ev, &tv);
}

/* Moves nghttp2's frames into `out` until it has none or `out` holds the
 * high-water mark; *more says the mark stopped it. */
static int h2io_fill(seo_h2io *io, struct evbuffer *out, int *more)
{
	int rc = 0;

	*more = 0;
	io->busy = 1;
	while (!(*more = evbuffer_get_length(out) >= H2IO_HIGH_WATER)) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(io->session, &data);

		if (n < 0) {
			log_debug("http/2 send failed: %s",
				  nghttp2_strerror((int)n));
			rc = SEO_EIO;
			break;
		}
		if (n == 0)
			break;
		if (evbuffer_add(out, data, (size_t)n) != 0) {
			rc = SEO_EIO;
			break;
		}
	}
	io->busy = 0;
	return rc;
}

static int h2io_send(seo_h2io *io)
{
	struct evbuffer *out;
	int rc, more;

	if (io->state == H2IO_CLOSED)
		return SEO_EIO;
	if (io->state == H2IO_LINGER || io->busy)
		return 0;
	out = bufferevent_get_output(io->bev);
	/* Written straight out, a full buffer may empty at once; no write
	 * event will then ask for the rest. */
	do {
		rc = h2io_fill(io, out, &more);
		if (rc != 0 || !io->cleartext)
			break;
		seo_bev_write_now(io->bev);
	} while (more && evbuffer_get_length(out) == 0);
	if (rc != 0)
		h2io_fail(io);
	else
		h2io_finish_if_done(io);
	return rc;
}

/* Feeds `len` received bytes to nghttp2 (dropped while lingering).
 * Returns 0, or SEO_EIO when the session failed (the pump is closing). */
static int h2io_recv(seo_h2io *io, const uint8_t *data, size_t len)
{
	ssize_t rv;

	if (io->state != H2IO_OPEN)
		return io->state == H2IO_LINGER ? 0 : SEO_EIO;
	io->busy = 1;
	rv = nghttp2_session_mem_recv(io->session, data, len);
	io->busy = 0;
	if (rv < 0) {
		log_debug("http/2 receive failed: %s",
			  nghttp2_strerror((int)rv));
		h2io_fail(io);
		return SEO_EIO;
	}
	return 0;
}

/* What the bufferevent read: everything on TLS, the bytes it held when
 * the pump started on cleartext. */
static void h2io_read_cb(struct bufferevent *bev, void *arg)
{
	seo_h2io *io = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;

	/* Feed the buffer chunk by chunk: pulling up a contiguous chunk does
	 * not copy. */
	while ((len = evbuffer_get_contiguous_space(in)) > 0) {
		if (h2io_recv(io, evbuffer_pullup(in, (ev_ssize_t)len), len) !=
		    0)
			return;
		evbuffer_drain(in, len);
	}
	if (io->cleartext && io->state != H2IO_CLOSED)
		event_add(io->read_ev, NULL);
	h2io_send(io);
}

/* Cleartext: reads the socket straight into nghttp2. A short read means
 * the socket is empty, which saves the recv() that would say so. */
static void h2io_sock_read_cb(evutil_socket_t fd, short what, void *arg)
{
	seo_h2io *io = arg;
	uint8_t buf[H2IO_READ_CHUNK];
	ssize_t n = sizeof(buf);

	(void)what;
	for (int i = 0; i < H2IO_READS_MAX && n == (ssize_t)sizeof(buf); i++) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR))
			break;
		if (n <= 0) {
			if (n < 0 && io->state == H2IO_OPEN)
				log_debug("http/2 connection error: %s",
					  strerror(errno));
			h2io_fail(io);
			return;
		}
		if (h2io_recv(io, buf, (size_t)n) != 0)
			return;
	}
	h2io_send(io);
}

static void h2io_write_cb(struct bufferevent *bev, void *arg)
{
	seo_h2io *io = arg;

	/* Back to writing straight out (see seo_bev_write_now()). */
	if (io->cleartext)
		bufferevent_disable(bev, EV_WRITE);
	h2io_send(io);
}

static void h2io_event_cb(struct bufferevent *bev, short what, void *arg)
{
	seo_h2io *io = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		h2io_send(io);
		return;
	}
	if (what & BEV_EVENT_ERROR && io->state == H2IO_OPEN)
		log_debug("http/2 connection error: %s",
			  evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	h2io_fail(io);
}

static void h2io_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	h2io_send(arg);
}

int seo_h2io_new(struct bufferevent *bev, nghttp2_session *session,
		 unsigned flags, seo_h2io_close_fn on_close, void *ud,
		 seo_h2io **out)
{
	struct event_base *base = bufferevent_get_base(bev);
	evutil_socket_t fd = bufferevent_getfd(bev);
	seo_h2io *io = calloc(1, sizeof(*io));
	int one = 1;

	if (io == NULL)
		return SEO_ENOMEM;
	io->cleartext = (flags & SEO_H2IO_CLEARTEXT) != 0;
	io->close_ev = evtimer_new(base, h2io_close_cb, io);
	io->flush_ev = event_new(base, -1, 0, h2io_flush_cb, io);
	if (io->cleartext)
		io->read_ev = event_new(base, fd, EV_READ | EV_PERSIST,
					h2io_sock_read_cb, io);
	if (io->close_ev == NULL || io->flush_ev == NULL ||
	    (io->cleartext && io->read_ev == NULL)) {
		if (io->close_ev != NULL)
			event_free(io->close_ev);
		if (io->flush_ev != NULL)
			event_free(io->flush_ev);
		if (io->read_ev != NULL)
			event_free(io->read_ev);
		free(io);
		return SEO_ENOMEM;
	}
	io->bev = bev;
	io->session = session;
	io->on_close = on_close;
	io->ud = ud;
	io->state = H2IO_OPEN;

	/* Small frames must leave at once; fails harmlessly on non-TCP
	 * sockets. */
	if (fd >= 0)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Every byte is a frame to feed (a read watermark left from peeking
	 * at the preface would stall small frames); refill the output from
	 * nghttp2 before it runs dry. */
	bufferevent_setwatermark(bev, EV_READ, 0, 0);
	bufferevent_setwatermark(bev, EV_WRITE, H2IO_HIGH_WATER / 2, 0);
	bufferevent_setcb(bev, h2io_read_cb, h2io_write_cb, h2io_event_cb, io);
	if (io->cleartext)
		bufferevent_disable(bev, EV_READ);
	bufferevent_enable(bev, io->cleartext ? EV_WRITE : EV_READ | EV_WRITE);
	/* The first read takes what the bufferevent holds. */
	bufferevent_trigger(bev, EV_READ | EV_WRITE,
			    BEV_TRIG_IGNORE_WATERMARKS |
				    BEV_TRIG_DEFER_CALLBACKS);
	*out = io;
	return 0;
}

void seo_bev_write_now(struct bufferevent *bev)
{
	struct evbuffer *out = bufferevent_get_output(bev);

	if (evbuffer_get_length(out) == 0 ||
	    (bufferevent_get_enabled(bev) & EV_WRITE))
		return;
	/* The bufferevent keeps its output's front frozen against outside
	 * draining, as it does itself around its own writes. */
	evbuffer_unfreeze(out, 1);
	evbuffer_write(out, bufferevent_getfd(bev));
	evbuffer_freeze(out, 1);
	/* Errors too: the bufferevent meets them again and reports them. */
	if (evbuffer_get_length(out) > 0)
		bufferevent_enable(bev, EV_WRITE);
}

int seo_h2io_flush(seo_h2io *io)
{
	if (io->state == H2IO_CLOSED)
		return SEO_EIO;
	/* Made active again while it is, it still runs once. */
	event_active(io->flush_ev, EV_TIMEOUT, 1);
	return 0;
}

void seo_h2io_shutdown(seo_h2io *io)
{
	if (io->state != H2IO_OPEN)
		return;
	if (nghttp2_submit_goaway(
		    io->session, NGHTTP2_FLAG_NONE,
		    nghttp2_session_get_last_proc_stream_id(io->session),
		    NGHTTP2_NO_ERROR, NULL, 0) != 0) {
		h2io_fail(io);
		return;
	}
	h2io_send(io);
}

struct bufferevent *seo_h2io_bev(seo_h2io *io)
{
	return io->bev;
}

void seo_h2io_free(seo_h2io *io)
{
	if (io == NULL)
		return;
	event_free(io->close_ev);
	event_free(io->flush_ev);
	if (io->read_ev != NULL)
		event_free(io->read_ev);
	bufferevent_free(io->bev);
	free(io);
}
