"""What the IndexNow tests share: a local HTTPS site serving `hosts`
(tests/fakes/site_server.py; files put there at run time), a fake IndexNow
upstream (tests/fakes/fake_indexnow.py), and a stack whose fetcher and
SEO_INDEXNOW_URL reach them."""

import json
import ssl
import tempfile
import urllib.parse
import urllib.request

import harness as h


class Env:
    """`closed_hosts` resolve to a port nobody listens on."""

    def __init__(self, label, hosts, closed_hosts=()):
        self.tmp = tempfile.mkdtemp(prefix="seo-it-%s-" % label)
        self.cert, key = h.tls_cert(self.tmp, hosts)
        self.tls = h.Fake("site_server.py", "--tls", self.cert, key)
        self.upstream = h.Fake("fake_indexnow.py")
        closed = h.closed_port()
        connect_to = (["%s:443:127.0.0.1:%d" % (n, self.tls.port) for n in hosts] +
                      ["%s:443:127.0.0.1:%d" % (n, closed) for n in closed_hosts])
        self.stack = h.Stack(label, env={
            "SEO_FETCH_ALLOW_NETS": "127.0.0.0/8",
            "SEO_FETCH_CONNECT_TO": ",".join(connect_to),
            "SEO_FETCH_CA_FILE": self.cert,
            "SEO_INDEXNOW_URL": self.upstream.url + "/indexnow",
            "SEO_RATE_LIMIT_PER_MIN": "100000",
        })

    def close(self):
        problem = self.stack.close()
        self.tls.close()
        self.upstream.close()
        return problem

    def site_call(self, method, host, path, body=None, status=200):
        """The test site's /_hosted control: a file at https://host/path."""
        q = urllib.parse.urlencode({"host": host, "path": path, "status": status})
        req = urllib.request.Request("https://127.0.0.1:%d/_hosted?%s" % (self.tls.port, q),
                                     data=body, method=method)
        ctx = ssl.create_default_context(cafile=None)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def upstream_call(self, path, body=None):
        """The fake upstream's control routes (/_control, /_requests)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.upstream.url + path, data=data,
                                     method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())
