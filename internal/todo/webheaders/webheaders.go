// Package webheaders is the one source of the web app's security headers.
// The hosted app (constructs/webhosting, through Amplify's custom headers)
// and the dev server (internal/tooling/devserver) both send For's headers, so the
// policy a browser enforces locally is the one it enforces in the cloud.
package webheaders

import (
	"strconv"
	"strings"
)

// Header is one response header.
type Header struct {
	Name, Value string
}

// HSTSMaxAgeSec is how long a browser keeps to HTTPS for the site after
// one answer: two years. Browsers ignore the header over plain HTTP (the
// dev server), so it only acts on the hosted app.
const HSTSMaxAgeSec = 63072000

// ContentSecurityPolicy is the policy of a page that loads only its own
// scripts, styles, fonts and images, connects (fetch, WebSocket) to its
// own origin and to connect, and may not be framed:
//
//   - script-src and style-src are 'self' only, with no 'unsafe-inline':
//     the Vite build links its script and stylesheet from files, and React
//     sets style properties through the DOM, which a policy does not block;
//   - img-src also allows data: URLs, for the page's empty favicon
//     (web/index.html: <link rel="icon" href="data:,">);
//   - frame-ancestors 'none' keeps the page out of every frame, so no other
//     site can overlay its buttons (clickjacking);
//   - object-src 'none', base-uri 'none' and form-action 'self' close what
//     default-src leaves open.
//
// connect holds CSP source expressions: origins such as
// https://api.example.com, or scheme-and-host such as wss://host.
func ContentSecurityPolicy(connect []string) string {
	directives := []string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data:",
		"font-src 'self'",
		strings.Join(append([]string{"connect-src 'self'"}, connect...), " "),
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}
	return strings.Join(directives, "; ")
}

// For returns the headers of every response of the web app, whose page
// may connect to connect besides its own origin (see
// ContentSecurityPolicy). The order is fixed, so a template that holds
// them does not change from one synth to the next.
func For(connect []string) []Header {
	return []Header{
		{"Content-Security-Policy", ContentSecurityPolicy(connect)},
		{"Strict-Transport-Security", "max-age=" + strconv.Itoa(HSTSMaxAgeSec) + "; includeSubDomains"},
		{"X-Content-Type-Options", "nosniff"},
		// For browsers without frame-ancestors.
		{"X-Frame-Options", "DENY"},
		// No Referer on any request: the APIs check Origin (CORS), not
		// Referer, and no other site needs to learn the app's paths.
		{"Referrer-Policy", "no-referrer"},
	}
}
