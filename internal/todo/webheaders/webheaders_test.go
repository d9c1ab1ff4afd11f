package webheaders

import (
	"strings"
	"testing"
)

// directives splits a policy into directive name -> source list.
func directives(t *testing.T, csp string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) == 0 {
			t.Fatalf("empty directive in %q", csp)
		}
		if _, dup := out[f[0]]; dup {
			t.Fatalf("directive %s twice in %q", f[0], csp)
		}
		out[f[0]] = f[1:]
	}
	return out
}

func TestContentSecurityPolicy(t *testing.T) {
	cases := []struct {
		name    string
		connect []string
		want    map[string]string // directive -> its sources, space-separated
	}{
		{name: "dev server: itself only", connect: nil, want: map[string]string{
			"default-src": "'self'", "script-src": "'self'", "style-src": "'self'", "img-src": "'self' data:",
			"connect-src": "'self'", "frame-ancestors": "'none'", "object-src": "'none'", "base-uri": "'none'", "form-action": "'self'",
		}},
		{name: "cloud: APIs, Cognito, AppSync Events", connect: []string{
			"https://abc.execute-api.eu-west-1.amazonaws.com", "https://cognito-idp.eu-west-1.amazonaws.com",
			"https://x.appsync-api.eu-west-1.amazonaws.com", "wss://x.appsync-realtime-api.eu-west-1.amazonaws.com",
		}, want: map[string]string{
			"default-src": "'self'", "frame-ancestors": "'none'",
			"connect-src": "'self' https://abc.execute-api.eu-west-1.amazonaws.com https://cognito-idp.eu-west-1.amazonaws.com " +
				"https://x.appsync-api.eu-west-1.amazonaws.com wss://x.appsync-realtime-api.eu-west-1.amazonaws.com",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			csp := ContentSecurityPolicy(c.connect)
			got := directives(t, csp)
			for d, want := range c.want {
				if strings.Join(got[d], " ") != want {
					t.Errorf("%s = %q, want %q (policy %q)", d, strings.Join(got[d], " "), want, csp)
				}
			}
			for _, unsafe := range []string{"'unsafe-inline'", "'unsafe-eval'", "*"} {
				for d, srcs := range got {
					for _, s := range srcs {
						if s == unsafe {
							t.Errorf("%s allows %s: %q", d, unsafe, csp)
						}
					}
				}
			}
		})
	}
}

func TestFor(t *testing.T) {
	got := map[string]string{}
	for _, h := range For([]string{"https://api.example.com"}) {
		got[h.Name] = h.Value
	}
	want := map[string]string{
		"Content-Security-Policy":   ContentSecurityPolicy([]string{"https://api.example.com"}),
		"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
		"X-Content-Type-Options":    "nosniff",
		"X-Frame-Options":           "DENY",
		"Referrer-Policy":           "no-referrer",
	}
	if len(got) != len(want) {
		t.Errorf("got %d headers, want %d: %v", len(got), len(want), got)
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %q, want %q", name, got[name], v)
		}
	}
}
