package webhosting

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/unschedule/unschedule/internal/todo/webheaders"
)

// Defaults of WebHostingProps, in one place.
const (
	// DefaultBranch is the Amplify branch (and, with a repository, the Git
	// branch) that serves the app.
	DefaultBranch = "main"
	// DefaultAppRoot is the web app's folder in the repository.
	DefaultAppRoot = "web"
	// DefaultDist is DistPath's default: the build folder, relative to the
	// module root.
	DefaultDist = "web/dist"
)

// Fixed names: no prop changes them.
const (
	// SitePrefix is the key prefix of the build in the hosting bucket
	// (no repository). Amplify deploys exactly this prefix.
	SitePrefix = "site"
	// ConfigFile is the runtime config the web app fetches at start
	// (web/src/config.ts).
	ConfigFile = "config.json"
	// EnvPrefix starts the build-time environment variable of each
	// BackendConfig key (with a repository): apiUrl is VITE_API_URL.
	EnvPrefix = "VITE_"
)

// SpaRewriteSource matches every path that is not a file with one of the
// listed extensions; those paths are answered with /index.html (200), so
// client-side routes survive a reload. The list includes json, so
// /config.json is served as a file.
const SpaRewriteSource = `</^[^.]+$|\.(?!(css|gif|ico|jpg|js|png|txt|svg|woff|woff2|ttf|map|json|webp)$)([^.]+$)/>`

// EnvName is the build-time environment variable that carries a
// BackendConfig key: "VITE_" and the key in upper snake case
// (userPoolClientId is VITE_USER_POOL_CLIENT_ID).
func EnvName(key string) string {
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for i, r := range key {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// sortedKeys returns m's keys in order, so the synthesized template does
// not change from one synth to the next.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// configScript is a Node one-liner that writes dist/config.json from the
// VITE_* variables of keys, and fails the build when one is empty, so a
// missing variable shows in the Amplify build log rather than as a broken
// app. Keys are identifiers (validated), so they need no escaping.
func configScript(keys []string) string {
	fields := make([]string, len(keys))
	for i, k := range keys {
		fields[i] = fmt.Sprintf("%q:e.%s", k, EnvName(k))
	}
	return "node -e 'const e=process.env,c={" + strings.Join(fields, ",") + "};" +
		`for(const k in c)if(!c[k]){console.error("config.json: "+k+" is empty: set its VITE_ variable on the Amplify branch");process.exit(1)}` +
		`require("fs").writeFileSync("dist/` + ConfigFile + `",JSON.stringify(c))'`
}

// BuildSpec is the Amplify build specification of a monorepo whose web
// app lives in appRoot: install, build, then write dist/config.json from
// the branch's VITE_* variables, so the app reads its config the same way
// in every mode. Every scalar is written as a JSON string, which is also a
// valid YAML double-quoted scalar, so no command needs hand escaping.
func BuildSpec(appRoot string, keys []string) string {
	q := yamlString
	lines := []string{
		"version: 1",
		"applications:",
		"  - appRoot: " + q(appRoot),
		"    frontend:",
		"      phases:",
		"        preBuild:",
		"          commands:",
		"            - " + q("npm ci"),
		"        build:",
		"          commands:",
		"            - " + q("npm run build"),
		"            - " + q(configScript(keys)),
		"      artifacts:",
		"        baseDirectory: " + q("dist"),
		"        files:",
		"          - " + q("**/*"),
		"      cache:",
		"        paths:",
		"          - " + q("node_modules/**/*"),
	}
	return strings.Join(lines, "\n") + "\n"
}

// yamlString writes s as a JSON string, which YAML reads as the same
// double-quoted scalar: no value needs hand escaping.
func yamlString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// HeaderPattern is the path pattern of the site's custom headers: every
// path, so the page, its assets, config.json and every client-side route
// get them.
const HeaderPattern = "**/*"

// customHeaders is the Amplify app's CustomHeaders: headers on every path
// (HeaderPattern), in the customHttp.yml format of "Custom header YAML
// reference"
// (https://docs.aws.amazon.com/amplify/latest/userguide/custom-header-YAML-format.html).
// With appRoot (a monorepo app: the Repository mode builds appRoot) it is
// the monorepo form, which names the app root ("Monorepo custom header
// requirements",
// https://docs.aws.amazon.com/amplify/latest/userguide/monorepo-custom-headers.html).
// Scalars are JSON strings (yamlString).
func customHeaders(appRoot string, headers []webheaders.Header) string {
	indent := "  "
	lines := []string{"customHeaders:"}
	if appRoot != "" {
		indent = "      "
		lines = []string{"applications:", "  - appRoot: " + yamlString(appRoot), "    customHeaders:"}
	}
	lines = append(lines, indent+"- pattern: "+yamlString(HeaderPattern), indent+"  headers:")
	for _, h := range headers {
		lines = append(lines, indent+"    - key: "+yamlString(h.Name), indent+"      value: "+yamlString(h.Value))
	}
	return strings.Join(lines, "\n") + "\n"
}

// Keys of BackendConfig that name what the page connects to
// (web/src/config.ts).
const (
	keyAPIURL          = "apiUrl"
	keyCampaignsAPIURL = "campaignsApiUrl"
	keyEventsHTTP      = "campaignEventsHttp"
	keyEventsRealtime  = "campaignEventsRealtime"
)

// urlOrigin is the scheme and host of an absolute URL (the text up to the
// first slash after "://"), or "" for a relative one, which is the page's
// own origin. Unresolved tokens hold no slash, so a URL built around
// tokens (https://${Token[…]}.execute-api.…/prod/) is cut right; ok is
// false when u has no literal "://" (a URL that is one token).
func urlOrigin(u string) (origin string, ok bool) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", false
	}
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j], true
	}
	return u, true
}

// hostOf is a DNS name given with or without a scheme and path, as
// web/src/config.ts reads the AppSync Events names.
func hostOf(v string) string {
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	h, _, _ := strings.Cut(v, "/")
	return h
}
