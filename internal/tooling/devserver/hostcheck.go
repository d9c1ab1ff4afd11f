package devserver

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// LoopbackHost reports whether host (no port, no brackets) names this
// machine only: "localhost" or a loopback address (127.0.0.0/8, ::1).
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly is the host of a Host header, without its port or the brackets
// of an IPv6 literal, in lower case.
func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
}

// guardHost answers 421 to every request whose Host is not a loopback
// name or address (any port) or one of allowed: DNS rebinding
// (cmd/dev/README.md, "Host check").
func guardHost(allowed []string, next http.Handler) http.Handler {
	ok := map[string]bool{}
	for _, h := range allowed {
		ok[hostOnly(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		if host != "" && (LoopbackHost(host) || ok[host]) {
			next.ServeHTTP(w, r)
			return
		}
		if len(host) > 100 {
			host = host[:100] + "..."
		}
		writeError(w, http.StatusMisdirectedRequest, "misdirected_request", fmt.Sprintf(
			"This dev server answers only to localhost, 127.0.0.1 and [::1] (the request named %q), so that no other web site can read it through DNS rebinding. "+
				"Open it at http://127.0.0.1:<port>, or start it with -allow-remote -addr <host>:<port> to answer to that host too.", host))
	})
}
