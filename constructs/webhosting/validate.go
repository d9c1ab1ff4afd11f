package webhosting

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
)

var (
	// configKey is a JavaScript identifier, so it can name a JSON field
	// and a VITE_ variable without escaping.
	configKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	// branchName becomes the first label of the app's host name
	// (https://<branch>.<default domain>), so it must be a DNS label.
	branchName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	// appRoot is a relative folder of the repository.
	appRoot = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
)

func isToken(s string) bool { return *awscdk.Token_IsUnresolved(jsii.String(s)) }

// withDefaults checks props and fills defaults. It panics with a message
// that says how to fix a bad prop, as CDK constructs do.
func withDefaults(id string, props *WebHostingProps) WebHostingProps {
	if props == nil {
		panic(fmt.Sprintf("webhosting %s: props are required: set at least BackendConfig", id))
	}
	p := *props
	p.BackendConfig = checkConfig(id, p.BackendConfig)

	p.Branch = propcheck.Or(p.Branch, DefaultBranch)
	if !branchName.MatchString(p.Branch) {
		panic(fmt.Sprintf("webhosting %s: Branch must be lower-case letters, digits and dashes, 63 at most, as it becomes the site's host name (given %q): rename the branch or serve another one", id, p.Branch))
	}
	p.RemovalPolicy = propcheck.Or(p.RemovalPolicy, awscdk.RemovalPolicy_RETAIN)
	if a := p.AppProps; a != nil && (a.Name != nil || a.Repository != nil || a.AccessToken != nil || a.OauthToken != nil || a.BuildSpec != nil || a.EnvironmentVariables != nil) {
		panic(fmt.Sprintf("webhosting %s: AppProps may not set Name, Repository, AccessToken, OauthToken, BuildSpec or EnvironmentVariables: the construct derives them; set AppName, Repository and AccessTokenSecret instead", id))
	}

	if p.Repository == "" {
		if p.AccessTokenSecret != nil {
			panic(fmt.Sprintf("webhosting %s: AccessTokenSecret is set but Repository is not: set Repository to the Git URL, or remove AccessTokenSecret to deploy the local build", id))
		}
		if p.AppRoot != "" {
			panic(fmt.Sprintf("webhosting %s: AppRoot (%q) is only used with a Repository: remove it, or set Repository", id, p.AppRoot))
		}
		p.DistPath = checkDist(id, p.DistPath, p.PlaceholderIfMissing)
		return p
	}

	if !isToken(p.Repository) && !strings.HasPrefix(p.Repository, "https://") {
		panic(fmt.Sprintf("webhosting %s: Repository must be an https:// clone URL such as https://github.com/owner/repo (given %q)", id, p.Repository))
	}
	if p.AccessTokenSecret == nil {
		panic(fmt.Sprintf("webhosting %s: Repository is set but AccessTokenSecret is not: store a personal access token in Secrets Manager (plain text) and pass the secret", id))
	}
	if p.DistPath != "" {
		panic(fmt.Sprintf("webhosting %s: DistPath (%q) is only used without a Repository (Amplify builds the app from the repository): remove one of them", id, p.DistPath))
	}
	p.AppRoot = propcheck.Or(p.AppRoot, DefaultAppRoot)
	if !appRoot.MatchString(p.AppRoot) || strings.Contains(p.AppRoot, "..") {
		panic(fmt.Sprintf("webhosting %s: AppRoot must be a folder relative to the repository root, such as \"web\" (given %q)", id, p.AppRoot))
	}
	return p
}

// checkConfig checks the web app's runtime config against the contract
// of web/src/config.ts and returns a copy with mode filled in.
func checkConfig(id string, in map[string]string) map[string]string {
	if len(in) == 0 {
		panic(fmt.Sprintf("webhosting %s: BackendConfig is required: give apiUrl, region, userPoolId and userPoolClientId (see web/README.md)", id))
	}
	cfg := make(map[string]string, len(in)+1)
	for k, v := range in {
		if !configKey.MatchString(k) {
			panic(fmt.Sprintf("webhosting %s: BackendConfig key %q is not a plain identifier: use names such as apiUrl or userPoolId", id, k))
		}
		cfg[k] = v
	}
	if _, ok := cfg["mode"]; !ok {
		cfg["mode"] = "cognito"
	}
	if _, ok := cfg["apiUrl"]; !ok {
		panic(fmt.Sprintf("webhosting %s: BackendConfig has no apiUrl: set it to the task API's base URL", id))
	}
	mode := cfg["mode"]
	switch {
	case isToken(mode) || mode == "local":
	case mode == "cognito":
		for _, k := range []string{"region", "userPoolId", "userPoolClientId"} {
			if cfg[k] == "" {
				panic(fmt.Sprintf("webhosting %s: BackendConfig has no %s, which mode \"cognito\" needs: set it from the stack (user pool, client, region)", id, k))
			}
		}
	default:
		panic(fmt.Sprintf("webhosting %s: BackendConfig mode must be \"cognito\" or \"local\" (given %q)", id, mode))
	}
	return cfg
}

// placeholderDir is the page published by PlaceholderIfMissing.
func placeholderDir() string {
	return filepath.Join(gofn.ModuleRoot(), "constructs", "webhosting", "placeholder")
}

// checkDist resolves the build folder (relative paths are relative to the
// module root) and checks that it holds a build. A missing build is a
// placeholder page when placeholder is set, and an error otherwise.
func checkDist(id, dist string, placeholder bool) string {
	root := gofn.ModuleRoot()
	if dist == "" {
		dist = DefaultDist
	}
	if !filepath.IsAbs(dist) {
		dist = filepath.Join(root, dist)
	}
	if _, err := os.Stat(filepath.Join(dist, "index.html")); err == nil {
		return dist
	}
	if placeholder {
		return placeholderDir()
	}
	if st, err := os.Stat(dist); err == nil && st.IsDir() {
		panic(fmt.Sprintf("webhosting %s: %s has no index.html, so it is not a web build: run `make web` (or `cd web && npm ci && npm run build`) and synth again", id, dist))
	}
	panic(fmt.Sprintf("webhosting %s: the web build %s does not exist: run `make web` (or `cd web && npm ci && npm run build`) before synth or deploy, or set PlaceholderIfMissing to publish a placeholder page", id, dist))
}
