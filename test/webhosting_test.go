package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsamplify"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/webhosting"
	"github.com/unschedule/unschedule/internal/todo/webheaders"
	"github.com/unschedule/unschedule/todoapp"
)

// webStack is a small stack with only the hosting, synthesized once
// per mode.
type webStack struct {
	*synthed
	web *webhosting.WebHosting
	// configJSON is the config.json source the deployment uploads (read
	// from the cloud assembly, which is removed with the first test).
	configJSON map[string]string
}

var (
	webStacksMu sync.Mutex
	webStacks   = map[string]*webStack{}
)

// webBackendConfig is what the todo stack passes: the API's URL, the
// user pool's ids and the campaign keys (parameters stand in for them; the
// campaign API's URL is one token, unlike the task API's) and the region.
func webBackendConfig(stack awscdk.Stack, api awsapigateway.RestApi) map[string]string {
	param := func(name string) string {
		return *awscdk.NewCfnParameter(stack, jsii.String(name), &awscdk.CfnParameterProps{Type: jsii.String("String")}).ValueAsString()
	}
	return map[string]string{
		"apiUrl":                 *api.Url(),
		"userPoolId":             param("UserPoolId"),
		"userPoolClientId":       param("UserPoolClientId"),
		"region":                 *stack.Region(),
		"campaignsApiUrl":        param("CampaignsApiUrl"),
		"campaignEventsHttp":     param("CampaignEventsHttp"),
		"campaignEventsRealtime": param("CampaignEventsRealtime"),
	}
}

// webApi is the wiring the todo stack needs: an API created before the
// site, whose CORS origins name the site's Url through webhosting.Later.
func webApi(stack awscdk.Stack, web **webhosting.WebHosting) awsapigateway.RestApi {
	api := awsapigateway.NewRestApi(stack, jsii.String("Api"), &awsapigateway.RestApiProps{
		DefaultCorsPreflightOptions: &awsapigateway.CorsOptions{
			AllowOrigins: &[]*string{webhosting.Later(func() *string { return (*web).Url }), jsii.String("http://localhost:5173")},
		},
	})
	api.Root().AddMethod(jsii.String("GET"), awsapigateway.NewMockIntegration(nil), nil)
	return api
}

// webHosting synthesizes the hosting in mode "bucket" (no repository) or
// "git".
func webHosting(t *testing.T, mode string) *webStack {
	t.Helper()
	webStacksMu.Lock()
	defer webStacksMu.Unlock()
	if h, ok := webStacks[mode]; ok {
		return h
	}
	h := &webStack{}
	Check(t, func() {
		app := NewApp(t, nil)
		stack := awscdk.NewStack(app, jsii.String("Web-"+mode), nil)
		api := webApi(stack, &h.web)
		props := &webhosting.WebHostingProps{
			BackendConfig: webBackendConfig(stack, api),
			// An empty folder: tests need no web build.
			DistPath:             t.TempDir(),
			PlaceholderIfMissing: true,
			RemovalPolicy:        awscdk.RemovalPolicy_DESTROY,
		}
		if mode == "git" {
			props.DistPath, props.PlaceholderIfMissing = "", false
			props.Repository = "https://github.com/unschedule/unschedule"
			props.AccessTokenSecret = awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("Token"), jsii.String("unschedule/github-token"))
		}
		h.web = webhosting.NewWebHosting(stack, jsii.String("Web"), props)
		awscdk.NewCfnOutput(stack, jsii.String("WebUrl"), &awscdk.CfnOutputProps{Value: h.web.Url})
		outdir := *app.Synth(nil).Directory()
		if mode == "bucket" {
			h.configJSON = webConfigAsset(t, outdir)
		}
		tpl := assertions.Template_FromStack(stack, nil)
		h.synthed = &synthed{tpl: tpl, json: *tpl.ToJSON()}
	})
	webStacks[mode] = h
	return h
}

// webOnly returns the only resource of typ.
func webOnly(t *testing.T, s *synthed, typ string) (string, map[string]any) {
	t.Helper()
	rs := s.Resources(typ)
	if len(rs) != 1 {
		t.Fatalf("want one %s, got %d", typ, len(rs))
	}
	for id, r := range rs {
		return id, Props(r)
	}
	return "", nil
}

// webID is the id of the only resource of typ.
func webID(t *testing.T, s *synthed, typ string) string {
	t.Helper()
	id, _ := webOnly(t, s, typ)
	return id
}

// webApiRef is how the template refers to the API (its URL starts with
// the API's id).
func webApiRef(t *testing.T, s *synthed) string {
	t.Helper()
	return `"Ref": "` + webID(t, s, "AWS::ApiGateway::RestApi") + `"`
}

// webCycle returns a cycle of resources that refer to one another (Ref,
// Fn::GetAtt, DependsOn), which CloudFormation rejects, or nil.
func webCycle(s *synthed) []string {
	resources := s.json["Resources"].(map[string]any)
	edges := map[string][]string{}
	var refs func(v any, from string)
	refs = func(v any, from string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Ref":
					if id, ok := x.(string); ok && resources[id] != nil {
						edges[from] = append(edges[from], id)
					}
				case "Fn::GetAtt":
					if l, ok := x.([]any); ok && len(l) > 0 && resources[l[0].(string)] != nil {
						edges[from] = append(edges[from], l[0].(string))
					}
				}
				refs(x, from)
			}
		case []any:
			for _, x := range v {
				refs(x, from)
			}
		}
	}
	for id, r := range resources {
		r := r.(map[string]any)
		refs(r["Properties"], id)
		switch d := r["DependsOn"].(type) {
		case string:
			edges[id] = append(edges[id], d)
		case []any:
			for _, x := range d {
				edges[id] = append(edges[id], x.(string))
			}
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = onPath
		path = append(path, id)
		for _, next := range edges[id] {
			switch state[next] {
			case onPath:
				for i, p := range path {
					if p == next {
						return append(append([]string{}, path[i:]...), next)
					}
				}
			case unseen:
				if c := visit(next); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for id := range resources {
		if state[id] == unseen {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// webPolicies returns the IAM policy statements that allow action.
func webPolicies(s *synthed, action string) []map[string]any {
	var out []map[string]any
	for _, r := range s.Resources("AWS::IAM::Policy") {
		doc := Props(r)["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			st := st.(map[string]any)
			if strings.Contains(JSON(st["Action"]), `"`+action+`"`) {
				out = append(out, st)
			}
		}
	}
	return out
}

func TestWebHostingAppAndBranch(t *testing.T) {
	rewrite := map[string]any{"Source": webhosting.SpaRewriteSource, "Target": "/index.html", "Status": "200"}
	for _, tc := range []struct {
		mode      string
		app       map[string]any
		autoBuild bool
	}{
		{mode: "bucket", app: map[string]any{"Platform": "WEB", "CustomRules": []any{rewrite}, "Repository": assertions.Match_Absent()}},
		{mode: "git", app: map[string]any{
			"Platform": "WEB", "CustomRules": []any{rewrite},
			"Repository":           "https://github.com/unschedule/unschedule",
			"EnvironmentVariables": []any{map[string]any{"Name": "AMPLIFY_MONOREPO_APP_ROOT", "Value": "web"}},
			"BuildSpec":            assertions.Match_StringLikeRegexp(jsii.String(`applications:\n  - appRoot: "web"`)),
		}, autoBuild: true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := webHosting(t, tc.mode)
			appID, app := webOnly(t, h.synthed, "AWS::Amplify::App")
			// The token is a dynamic reference, resolved by CloudFormation.
			if token := JSON(app["AccessToken"]); (tc.mode == "git") != strings.Contains(token, "{{resolve:secretsmanager:") {
				t.Errorf("AccessToken = %s", token)
			}
			Check(t, func() {
				h.tpl.HasResourceProperties(jsii.String("AWS::Amplify::App"), tc.app)
				h.tpl.HasResourceProperties(jsii.String("AWS::Amplify::Branch"), map[string]any{
					"AppId":           map[string]any{"Fn::GetAtt": []any{appID, "AppId"}},
					"BranchName":      "main",
					"Stage":           "PRODUCTION",
					"EnableAutoBuild": tc.autoBuild,
				})
				// The Url is https://<branch>.<default domain>.
				h.tpl.HasOutput(jsii.String("WebUrl"), map[string]any{"Value": map[string]any{"Fn::Join": []any{"", []any{
					"https://main.", map[string]any{"Fn::GetAtt": []any{appID, "DefaultDomain"}},
				}}}})
			})
		})
	}
}

// TestWebHostingApiCorsWiring: the todo stack's wiring (the API's CORS
// origins name the site's Url, the site's config names the API's URL)
// makes no dependency cycle, in both modes.
func TestWebHostingApiCorsWiring(t *testing.T) {
	for _, mode := range []string{"bucket", "git"} {
		t.Run(mode, func(t *testing.T) {
			h := webHosting(t, mode)
			if c := webCycle(h.synthed); c != nil {
				t.Fatalf("dependency cycle: %s", strings.Join(c, " -> "))
			}
			app := webID(t, h.synthed, "AWS::Amplify::App")
			found := false
			for _, r := range h.Resources("AWS::ApiGateway::Method") {
				if Props(r)["HttpMethod"] == "OPTIONS" && strings.Contains(JSON(r), `"`+app+`",`) && strings.Contains(JSON(r), `"DefaultDomain"`) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no OPTIONS method allows the site's origin (Fn::GetAtt %s.DefaultDomain)", app)
			}
		})
	}
	t.Run("the check finds a cycle", func(t *testing.T) {
		s := &synthed{json: map[string]any{"Resources": map[string]any{
			"A": map[string]any{"Properties": map[string]any{"X": map[string]any{"Fn::GetAtt": []any{"B", "Arn"}}}},
			"B": map[string]any{"DependsOn": "A"},
		}}}
		if webCycle(s) == nil {
			t.Fatal("webCycle missed A -> B -> A")
		}
	})
}

// TestWebHostingBucketDeploysConfig: without a repository the build and a
// deploy-time config.json go to a private bucket prefix, and Amplify
// deploys that prefix.
func TestWebHostingBucketDeploysConfig(t *testing.T) {
	h := webHosting(t, "bucket")
	_, deploy := webOnly(t, h.synthed, "Custom::CDKBucketDeployment")
	t.Run("bucket is private, encrypted, TLS only", func(t *testing.T) {
		Check(t, func() {
			h.tpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
				"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
					map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
				}},
				"PublicAccessBlockConfiguration": map[string]any{
					"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
				},
			})
			h.tpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Effect": "Deny", "Action": "s3:*",
					"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				})})},
			})
		})
	})
	t.Run("build and config.json go to the site prefix", func(t *testing.T) {
		if deploy["DestinationBucketKeyPrefix"] != webhosting.SitePrefix+"/" {
			t.Fatalf("DestinationBucketKeyPrefix = %v, want %q", deploy["DestinationBucketKeyPrefix"], webhosting.SitePrefix+"/")
		}
		if n := len(deploy["SourceObjectKeys"].([]any)); n != 2 {
			t.Fatalf("want 2 sources (the build and config.json), got %d: %s", n, JSON(deploy["SourceObjectKeys"]))
		}
		// The config.json source is a JSON file with markers that the
		// deployment replaces with the stack's values.
		markers := JSON(deploy["SourceMarkers"])
		for _, ref := range []string{webApiRef(t, h.synthed), `"Ref": "UserPoolId"`, `"Ref": "UserPoolClientId"`, `"Ref": "AWS::Region"`} {
			if !strings.Contains(markers, ref) {
				t.Errorf("config.json markers lack %s: %s", ref, markers)
			}
		}
		cfg := h.configJSON
		for _, key := range []string{"apiUrl", "userPoolId", "userPoolClientId", "region"} {
			if !strings.Contains(cfg[key], "<<marker:") {
				t.Errorf("config.json %s = %q, want a deploy-time marker", key, cfg[key])
			}
		}
		if cfg["mode"] != "cognito" {
			t.Errorf("config.json mode = %q, want cognito", cfg["mode"])
		}
	})
	t.Run("StartDeployment of the bucket prefix after the upload", func(t *testing.T) {
		id, cr := webOnly(t, h.synthed, "Custom::AmplifyStartDeployment")
		create := JSON(cr["Create"])
		for _, want := range []string{"StartDeploymentCommand", "@aws-sdk/client-amplify", `\"sourceUrlType\":\"BUCKET_PREFIX\"`, `\"branchName\":\"main\"`, `/` + webhosting.SitePrefix + `/\"`, "jobSummary.jobId"} {
			if !strings.Contains(create, want) {
				t.Errorf("Create lacks %s: %s", want, create)
			}
		}
		if JSON(cr["Update"]) != create {
			t.Errorf("Update differs from Create: a redeploy must make the same call")
		}
		rerun := cr["RerunOnChange"].(map[string]any)
		if s, _ := rerun["Content"].(string); len(s) != 64 {
			t.Errorf("RerunOnChange.Content = %v, want the build's asset hash", rerun["Content"])
		}
		if !strings.Contains(JSON(rerun["Config"]), webApiRef(t, h.synthed)) {
			t.Errorf("RerunOnChange.Config does not follow the config: %s", JSON(rerun["Config"]))
		}
		deps := JSON(h.json["Resources"].(map[string]any)[id].(map[string]any)["DependsOn"])
		for _, dep := range []string{webID(t, h.synthed, "Custom::CDKBucketDeployment"), webID(t, h.synthed, "AWS::S3::BucketPolicy"), webID(t, h.synthed, "AWS::Amplify::Branch")} {
			if !strings.Contains(deps, dep) {
				t.Errorf("StartDeployment does not depend on %s: %s", dep, deps)
			}
		}
	})
}

// webConfigAsset reads the config.json source that the deployment
// uploads: the only asset that is a zip holding config.json alone.
func webConfigAsset(t *testing.T, outdir string) map[string]string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(outdir, "asset.*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, webhosting.ConfigFile))
		if err != nil {
			continue
		}
		entries, _ := os.ReadDir(d)
		if len(entries) != 1 {
			continue
		}
		var cfg map[string]string
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("config.json asset is not a JSON object of strings: %v: %s", err, b)
		}
		return cfg
	}
	t.Fatalf("no config.json asset in %s", outdir)
	return nil
}

// webFlatten writes a template value as text: Fn::Join joined, a Ref as
// <name>, Fn::Select and Fn::Split spelled out; anything else as JSON.
func webFlatten(v any) string {
	m, ok := v.(map[string]any)
	if s, isStr := v.(string); isStr {
		return s
	}
	switch {
	case !ok:
	case m["Ref"] != nil:
		return "<" + m["Ref"].(string) + ">"
	case m["Fn::Join"] != nil:
		args := m["Fn::Join"].([]any)
		var parts []string
		for _, p := range args[1].([]any) {
			parts = append(parts, webFlatten(p))
		}
		return strings.Join(parts, args[0].(string))
	case m["Fn::Select"] != nil:
		args := m["Fn::Select"].([]any)
		return fmt.Sprintf("<select %v of %s>", args[0], webFlatten(args[1]))
	case m["Fn::Split"] != nil:
		args := m["Fn::Split"].([]any)
		return fmt.Sprintf("split %s %s", args[0], webFlatten(args[1]))
	}
	return JSON(v)
}

// TestWebHostingSecurityHeaders: the Amplify app sends the security
// headers of internal/todo/webheaders on every path, in the YAML form of its
// mode, with connect-src naming the task API's origin, Cognito's endpoint
// in the stack's region and partition, the campaign API's origin (cut at
// deploy time: its URL is one token) and the AppSync Events hosts; a
// change of headers starts a new deployment.
func TestWebHostingSecurityHeaders(t *testing.T) {
	for _, tc := range []struct {
		mode, head, indent, release string
	}{
		{mode: "bucket", head: "customHeaders:\n  - pattern: \"**/*\"\n    headers:\n", indent: "      ", release: "Custom::AmplifyStartDeployment"},
		{mode: "git", head: "applications:\n  - appRoot: \"web\"\n    customHeaders:\n      - pattern: \"**/*\"\n        headers:\n", indent: "          ", release: "Custom::AmplifyStartJob"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := webHosting(t, tc.mode)
			_, app := webOnly(t, h.synthed, "AWS::Amplify::App")
			yaml := webFlatten(app["CustomHeaders"])
			if !strings.HasPrefix(yaml, tc.head) {
				t.Fatalf("CustomHeaders does not start with %q:\n%s", tc.head, yaml)
			}
			api := "<" + webID(t, h.synthed, "AWS::ApiGateway::RestApi") + ">"
			split := "split / <CampaignsApiUrl>"
			connect := []string{
				"https://" + api + ".execute-api.<AWS::Region>.<AWS::URLSuffix>",
				"<select 0 of " + split + ">//<select 2 of " + split + ">",
				"https://cognito-idp.<AWS::Region>.<AWS::URLSuffix>",
				"https://<CampaignEventsHttp>",
				"wss://<CampaignEventsRealtime>",
			}
			headers := webheaders.For(connect)
			for _, hd := range headers {
				want := fmt.Sprintf("%s- key: %q\n%s  value: %q\n", tc.indent, hd.Name, tc.indent, hd.Value)
				if !strings.Contains(yaml, want) {
					t.Errorf("CustomHeaders lacks\n%s\nin\n%s", want, yaml)
				}
			}
			if n := strings.Count(yaml, "- key: "); n != len(headers) {
				t.Errorf("CustomHeaders has %d headers, want %d:\n%s", n, len(headers), yaml)
			}
			_, cr := webOnly(t, h.synthed, tc.release)
			if got := JSON(cr["RerunOnChange"].(map[string]any)["Headers"]); got != JSON(app["CustomHeaders"]) {
				t.Errorf("RerunOnChange.Headers = %s, want the app's CustomHeaders", got)
			}
		})
	}
}

// TestWebHostingLeastPrivilege: the custom resource may start a
// deployment (or a job) on this branch only, and Amplify may read the
// bucket only for this app's branch.
func TestWebHostingLeastPrivilege(t *testing.T) {
	for _, tc := range []struct {
		mode, action, resourceSuffix string
	}{
		{"bucket", "amplify:StartDeployment", ""},
		{"git", "amplify:StartJob", "/jobs/*"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := webHosting(t, tc.mode)
			branch := webID(t, h.synthed, "AWS::Amplify::Branch")
			sts := webPolicies(h.synthed, tc.action)
			if len(sts) != 1 {
				t.Fatalf("want one statement granting %s, got %d", tc.action, len(sts))
			}
			res := JSON(sts[0]["Resource"])
			if strings.Contains(res, `"*"`) || !strings.Contains(res, `"`+branch+`"`) || !strings.Contains(res, `"Arn"`) {
				t.Fatalf("%s is not scoped to the branch ARN: %s", tc.action, res)
			}
			if tc.resourceSuffix != "" && !strings.Contains(res, tc.resourceSuffix) {
				t.Fatalf("%s resource lacks %s: %s", tc.action, tc.resourceSuffix, res)
			}
			if strings.Contains(JSON(sts[0]["Action"]), "amplify:*") {
				t.Fatalf("wildcard action: %s", JSON(sts[0]))
			}
		})
	}
	t.Run("functions log to their own group, no managed policies", func(t *testing.T) {
		for _, mode := range []string{"bucket", "git"} {
			h := webHosting(t, mode)
			for id, role := range h.Resources("AWS::IAM::Role") {
				if arns, ok := Props(role)["ManagedPolicyArns"]; ok {
					t.Errorf("%s: role %s uses AWS managed policies %v", mode, id, arns)
				}
			}
			for id, fn := range h.Resources("AWS::Lambda::Function") {
				if lc, _ := Props(fn)["LoggingConfig"].(map[string]any); lc == nil || lc["LogGroup"] == nil {
					t.Errorf("%s: function %s has no log group of its own: %v", mode, id, Props(fn)["LoggingConfig"])
				}
			}
			for _, st := range webPolicies(h.synthed, "logs:PutLogEvents") {
				if !strings.Contains(JSON(st["Resource"]), "Logs") {
					t.Errorf("%s: logs granted beyond the function's group: %s", mode, JSON(st["Resource"]))
				}
			}
		}
	})
	t.Run("bucket policy for Amplify", func(t *testing.T) {
		h := webHosting(t, "bucket")
		app := webID(t, h.synthed, "AWS::Amplify::App")
		_, policy := webOnly(t, h.synthed, "AWS::S3::BucketPolicy")
		var amplify []map[string]any
		for _, st := range policy["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := st.(map[string]any)
			if JSON(st["Principal"]) == JSON(map[string]any{"Service": "amplify.amazonaws.com"}) {
				amplify = append(amplify, st)
			}
		}
		if len(amplify) != 2 {
			t.Fatalf("want 2 statements for amplify.amazonaws.com (list, read), got %d: %s", len(amplify), JSON(policy))
		}
		for _, st := range amplify {
			cond := JSON(st["Condition"])
			for _, want := range []string{`"aws:SourceAccount"`, `"aws:SourceArn"`, `%3Aapps%2F`, `"` + app + `"`, `%2Fbranches%2Fmain`} {
				if !strings.Contains(cond, want) {
					t.Errorf("%v: condition lacks %s: %s", st["Action"], want, cond)
				}
			}
			if st["Action"] == "s3:GetObject" && !strings.Contains(JSON(st["Resource"]), "/"+webhosting.SitePrefix+"/*") {
				t.Errorf("GetObject is not limited to the site prefix: %s", JSON(st["Resource"]))
			}
		}
	})
}

// TestWebHostingRepositoryBuilds: with a repository, Amplify builds the
// app with the config as VITE_* variables on the branch, and the stack
// starts the first build.
func TestWebHostingRepositoryBuilds(t *testing.T) {
	h := webHosting(t, "git")
	t.Run("no bucket", func(t *testing.T) {
		for _, typ := range []string{"AWS::S3::Bucket", "Custom::CDKBucketDeployment", "Custom::AmplifyStartDeployment"} {
			if n := len(h.Resources(typ)); n != 0 {
				t.Errorf("want no %s with a repository, got %d", typ, n)
			}
		}
	})
	t.Run("config as build variables", func(t *testing.T) {
		_, branch := webOnly(t, h.synthed, "AWS::Amplify::Branch")
		vars := map[string]string{}
		for _, v := range branch["EnvironmentVariables"].([]any) {
			v := v.(map[string]any)
			vars[v["Name"].(string)] = JSON(v["Value"])
		}
		for name, want := range map[string]string{
			"VITE_API_URL": webApiRef(t, h.synthed), "VITE_USER_POOL_ID": `"Ref": "UserPoolId"`,
			"VITE_USER_POOL_CLIENT_ID": `"Ref": "UserPoolClientId"`, "VITE_REGION": `"Ref": "AWS::Region"`, "VITE_MODE": `"cognito"`,
		} {
			if !strings.Contains(vars[name], want) {
				t.Errorf("branch variable %s = %s, want %s", name, vars[name], want)
			}
		}
		_, app := webOnly(t, h.synthed, "AWS::Amplify::App")
		spec := app["BuildSpec"].(string)
		if !strings.Contains(spec, `writeFileSync(\"dist/config.json\"`) || !strings.Contains(spec, `e.VITE_USER_POOL_CLIENT_ID`) {
			t.Errorf("build spec does not write dist/config.json from the VITE_ variables:\n%s", spec)
		}
	})
	t.Run("first build started by the stack", func(t *testing.T) {
		id, cr := webOnly(t, h.synthed, "Custom::AmplifyStartJob")
		create := JSON(cr["Create"])
		for _, want := range []string{"StartJobCommand", `\"jobType\":\"RELEASE\"`, `\"branchName\":\"main\"`} {
			if !strings.Contains(create, want) {
				t.Errorf("Create lacks %s: %s", want, create)
			}
		}
		if JSON(cr["Update"]) != create {
			t.Errorf("Update differs from Create: a config change must start a build")
		}
		if !strings.Contains(JSON(cr["RerunOnChange"]), webApiRef(t, h.synthed)) {
			t.Errorf("RerunOnChange does not follow the config: %s", JSON(cr["RerunOnChange"]))
		}
		deps := JSON(h.json["Resources"].(map[string]any)[id].(map[string]any)["DependsOn"])
		if !strings.Contains(deps, webID(t, h.synthed, "AWS::Amplify::Branch")) {
			t.Errorf("StartJob does not wait for the branch: %s", deps)
		}
	})
}

// TestWebHostingNagClean: the AwsSolutions pack finds nothing in the
// hosting that is not suppressed with a reason, in both modes (the todo
// stack's nag test then holds once the hosting is in it).
func TestWebHostingNagClean(t *testing.T) {
	for _, mode := range []string{"bucket", "git"} {
		t.Run(mode, func(t *testing.T) {
			var findings []string
			Check(t, func() {
				app := NewApp(t, nil)
				stack := awscdk.NewStack(app, jsii.String("Nag-"+mode), nil)
				apiUrl := awscdk.NewCfnParameter(stack, jsii.String("ApiUrl"), &awscdk.CfnParameterProps{Type: jsii.String("String")}).ValueAsString()
				props := &webhosting.WebHostingProps{
					BackendConfig: map[string]string{"apiUrl": *apiUrl, "region": *stack.Region(), "userPoolId": "p", "userPoolClientId": "c"},
					DistPath:      t.TempDir(), PlaceholderIfMissing: true,
				}
				if mode == "git" {
					props.DistPath, props.PlaceholderIfMissing = "", false
					props.Repository = "https://github.com/o/r"
					props.AccessTokenSecret = awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("Token"), jsii.String("t"))
				}
				webhosting.NewWebHosting(stack, jsii.String("Web"), props)
				todoapp.AddChecks(app)
				findings = append(findings, NagFindings(stack)...)
			})
			if len(findings) > 0 {
				t.Fatalf("%d unsuppressed cdk-nag findings:\n%s", len(findings), strings.Join(findings, "\n"))
			}
		})
	}
}

func TestWebHostingValidation(t *testing.T) {
	empty := t.TempDir()
	notBuilt := filepath.Join(t.TempDir(), "dist")
	cfg := func(drop string, extra ...string) map[string]string {
		m := map[string]string{"apiUrl": "https://api.example.com/api", "region": "eu-west-1", "userPoolId": "eu-west-1_x", "userPoolClientId": "c"}
		delete(m, drop)
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	withSecret := func(p *webhosting.WebHostingProps, s awscdk.Stack) {
		p.AccessTokenSecret = awssecretsmanager.Secret_FromSecretNameV2(s, jsii.String("T"), jsii.String("t"))
	}
	for _, tc := range []struct {
		name  string
		props webhosting.WebHostingProps
		setup func(*webhosting.WebHostingProps, awscdk.Stack)
		want  string
	}{
		{name: "no config", props: webhosting.WebHostingProps{DistPath: empty, PlaceholderIfMissing: true}, want: "BackendConfig is required"},
		{name: "no apiUrl", props: webhosting.WebHostingProps{BackendConfig: cfg("apiUrl"), PlaceholderIfMissing: true}, want: "BackendConfig has no apiUrl"},
		{name: "cognito without pool", props: webhosting.WebHostingProps{BackendConfig: cfg("userPoolId"), PlaceholderIfMissing: true}, want: `has no userPoolId, which mode "cognito" needs`},
		{name: "bad mode", props: webhosting.WebHostingProps{BackendConfig: cfg("", "mode", "aws"), PlaceholderIfMissing: true}, want: `mode must be "cognito" or "local" (given "aws")`},
		{name: "bad key", props: webhosting.WebHostingProps{BackendConfig: cfg("", "api-url", "x"), PlaceholderIfMissing: true}, want: `key "api-url" is not a plain identifier`},
		{name: "build missing", props: webhosting.WebHostingProps{BackendConfig: cfg(""), DistPath: notBuilt}, want: "does not exist: run `make web` (or `cd web && npm ci && npm run build`)"},
		{name: "folder is not a build", props: webhosting.WebHostingProps{BackendConfig: cfg(""), DistPath: empty}, want: "has no index.html"},
		{name: "branch not a host name", props: webhosting.WebHostingProps{BackendConfig: cfg(""), PlaceholderIfMissing: true, Branch: "feature/X"}, want: `(given "feature/X")`},
		{name: "repository without token", props: webhosting.WebHostingProps{BackendConfig: cfg(""), Repository: "https://github.com/o/r"}, want: "Repository is set but AccessTokenSecret is not"},
		{name: "token without repository", props: webhosting.WebHostingProps{BackendConfig: cfg(""), PlaceholderIfMissing: true}, setup: withSecret, want: "AccessTokenSecret is set but Repository is not"},
		{name: "ssh repository", props: webhosting.WebHostingProps{BackendConfig: cfg(""), Repository: "git@github.com:o/r.git"}, setup: withSecret, want: `must be an https:// clone URL such as https://github.com/owner/repo (given "git@github.com:o/r.git")`},
		{name: "dist with repository", props: webhosting.WebHostingProps{BackendConfig: cfg(""), Repository: "https://github.com/o/r", DistPath: "web/dist"}, setup: withSecret, want: "DistPath (\"web/dist\") is only used without a Repository"},
		{name: "repository in app props", props: webhosting.WebHostingProps{BackendConfig: cfg(""), PlaceholderIfMissing: true, AppProps: &awsamplify.CfnAppProps{Repository: jsii.String("https://github.com/o/r")}}, want: "AppProps may not set Name, Repository"},
		{name: "app root outside", props: webhosting.WebHostingProps{BackendConfig: cfg(""), Repository: "https://github.com/o/r", AppRoot: "../web"}, setup: withSecret, want: `AppRoot must be a folder relative to the repository root`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := NewApp(t, nil)
			stack := awscdk.NewStack(app, jsii.String("V"), nil)
			props := tc.props
			if tc.setup != nil {
				tc.setup(&props, stack)
			}
			msg := func() (msg string) {
				defer func() { msg = webPanicMessage(recover()) }()
				webhosting.NewWebHosting(stack, jsii.String("Web"), &props)
				return ""
			}()
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("want a panic with %q, got %q", tc.want, msg)
			}
			if !strings.HasPrefix(msg, "webhosting Web: ") {
				t.Fatalf("message does not name the construct: %q", msg)
			}
		})
	}
	t.Run("tokens are not validated", func(t *testing.T) {
		app := NewApp(t, nil)
		stack := awscdk.NewStack(app, jsii.String("V"), nil)
		Check(t, func() {
			webhosting.NewWebHosting(stack, jsii.String("Web"), &webhosting.WebHostingProps{
				BackendConfig:        map[string]string{"apiUrl": *stack.StackName(), "mode": *stack.Region()},
				DistPath:             empty,
				PlaceholderIfMissing: true,
			})
		})
	})
}

func webPanicMessage(r any) string {
	switch v := r.(type) {
	case nil:
		return ""
	case error:
		return v.Error()
	case string:
		return v
	default:
		return JSON(v)
	}
}
