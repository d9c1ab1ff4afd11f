// Package webhosting hosts the React web app on Amplify Hosting (L1
// CfnApp/CfnBranch), with the backend config the app reads from
// /config.json written from the stack's real values.
//
// Two modes:
//
//   - No repository (the default): the local build (web/dist) is uploaded to
//     a private bucket with a config.json written at deploy time, and a
//     custom resource starts an Amplify deployment of that bucket prefix
//     (StartDeployment, sourceUrlType BUCKET_PREFIX). A new build or a new
//     config starts a new deployment.
//   - A Git repository: Amplify builds the monorepo app root (web) itself,
//     with the config as VITE_* build variables that the build spec also
//     writes to dist/config.json. CloudFormation does not start the first
//     build, so a custom resource does (StartJob RELEASE), and again when
//     the config changes.
package webhosting

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsamplify"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3deployment"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/internal/todo/webheaders"
)

// WebHostingProps configures the hosting.
type WebHostingProps struct {
	// BackendConfig is the web app's runtime config (/config.json, see
	// web/README.md): apiUrl, region, userPoolId and userPoolClientId.
	// Values may be tokens (they are resolved at deploy time). Keys are
	// identifiers. Required.
	// Default for the "mode" key: "cognito".
	BackendConfig map[string]string

	// DistPath is the built web app (the folder holding index.html),
	// absolute or relative to this module's root. Used without a
	// Repository; synth fails when it holds no build, unless
	// PlaceholderIfMissing is set.
	// Default: web/dist.
	DistPath string
	// PlaceholderIfMissing publishes a one-page placeholder (with a
	// warning at synth) when DistPath holds no build, instead of failing.
	// Meant for tests and for synth on machines without Node; a deploy
	// should always ship the real build.
	// Default: false: a missing build fails synth with how to build it.
	PlaceholderIfMissing bool
	// RemovalPolicy of the bucket that holds the build (no Repository).
	// With DESTROY the deployment deletes the site's objects and the
	// bucket goes with the stack.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of the functions that publish (the upload and the Amplify
	// call).
	// Default: one month, retained.
	Logs gofn.LogOptions

	// Repository is the https clone URL of a GitHub repository holding the
	// web app; Amplify then builds and deploys every push to Branch.
	// Default: none: the local build is deployed (see DistPath).
	Repository string
	// AccessTokenSecret holds, as plain text, a GitHub personal access
	// token that lets Amplify read Repository and add its webhook.
	// Required with Repository; not allowed without.
	AccessTokenSecret awssecretsmanager.ISecret
	// AppRoot is the web app's folder in Repository (a monorepo app root).
	// Only with Repository.
	// Default: "web".
	AppRoot string

	// Branch is the Amplify branch (and, with a Repository, the Git
	// branch) that serves the site at https://<Branch>.<default domain>.
	// Default: "main".
	Branch string
	// AppName is the Amplify app's name.
	// Default: a name unique in the account, from the stack and this
	// construct's path.
	AppName string
	// AppProps override the defaults of the Amplify app (description,
	// platform WEB, the single-page-app rewrite rule, CustomHeaders: the
	// security headers on every path, see README.md), field by field, for
	// example BasicAuthConfig or Tags. A CustomHeaders of your own replaces
	// the security headers whole: start from them. What the construct
	// derives stays its own: Name (AppName), Repository, AccessToken,
	// OauthToken, BuildSpec and EnvironmentVariables fail.
	// Default: the defaults above.
	AppProps *awsamplify.CfnAppProps
}

// WebHosting is an Amplify app serving the web app.
type WebHosting struct {
	constructs.Construct
	// App is the Amplify app ("Resource").
	App awsamplify.CfnApp
	// Branch is the production branch that serves Url.
	Branch awsamplify.CfnBranch
	// BranchName is Branch's name.
	BranchName string
	// Url is the site's address, https://<branch>.<app default domain>,
	// without a trailing slash: a browser origin, fit for CORS.
	Url *string
	// Bucket holds the build under SitePrefix. Nil with a Repository.
	Bucket awss3.Bucket
	// Deployment uploads the build and config.json to Bucket. Nil with a
	// Repository.
	Deployment awss3deployment.BucketDeployment
	// Release is the custom resource that publishes: StartDeployment
	// without a Repository, StartJob (the first build) with one.
	Release customresources.AwsCustomResource
}

// NewWebHosting creates the Amplify app and publishes the web app.
func NewWebHosting(scope constructs.Construct, id *string, props *WebHostingProps) *WebHosting {
	p := withDefaults(*id, props)
	c := constructs.NewConstruct(scope, id)
	w := &WebHosting{Construct: c, BranchName: p.Branch}
	git := p.Repository != ""

	name := p.AppName
	if name == "" {
		name = *awscdk.Names_UniqueResourceName(c, &awscdk.UniqueResourceNameOptions{MaxLength: jsii.Number(255)})
	}
	headerRoot := ""
	if git {
		headerRoot = p.AppRoot
	}
	// The security headers of every path (internal/todo/webheaders), with the
	// page's connect-src read from its config.
	headers := customHeaders(headerRoot, webheaders.For(connectSources(awscdk.Stack_Of(c), p.BackendConfig)))
	merged := propcheck.Merge(awsamplify.CfnAppProps{
		Description:   jsii.String("Unschedule web app"),
		Platform:      jsii.String("WEB"),
		CustomHeaders: jsii.String(headers),
		CustomRules: &[]*awsamplify.CfnApp_CustomRuleProperty{{
			Source: jsii.String(SpaRewriteSource), Target: jsii.String("/index.html"), Status: jsii.String("200"),
		}},
	}, p.AppProps)
	appProps := &merged
	appProps.Name = jsii.String(name)
	if git {
		appProps.Repository = jsii.String(p.Repository)
		appProps.AccessToken = p.AccessTokenSecret.SecretValue().UnsafeUnwrap()
		appProps.BuildSpec = jsii.String(BuildSpec(p.AppRoot, sortedKeys(p.BackendConfig)))
		appProps.EnvironmentVariables = &[]*awsamplify.CfnApp_EnvironmentVariableProperty{{
			Name: jsii.String("AMPLIFY_MONOREPO_APP_ROOT"), Value: jsii.String(p.AppRoot),
		}}
	}
	w.App = awsamplify.NewCfnApp(c, jsii.String("Resource"), appProps)

	// The config goes on the branch, not the app: the API's CORS origins
	// name the app's domain, so config on the app would be a cycle.
	branchProps := &awsamplify.CfnBranchProps{
		AppId:           w.App.AttrAppId(),
		BranchName:      jsii.String(p.Branch),
		Stage:           jsii.String("PRODUCTION"),
		EnableAutoBuild: jsii.Bool(git),
	}
	if git {
		vars := []*awsamplify.CfnBranch_EnvironmentVariableProperty{}
		for _, k := range sortedKeys(p.BackendConfig) {
			vars = append(vars, &awsamplify.CfnBranch_EnvironmentVariableProperty{
				Name: jsii.String(EnvName(k)), Value: jsii.String(p.BackendConfig[k]),
			})
		}
		branchProps.EnvironmentVariables = &vars
	}
	w.Branch = awsamplify.NewCfnBranch(c, jsii.String("Branch"), branchProps)
	w.Url = awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("https://" + p.Branch + "."), w.App.AttrDefaultDomain(),
	})

	if git {
		w.startFirstBuild(p)
	} else {
		w.deployLocalBuild(p)
	}
	return w
}

// deployLocalBuild uploads the build with config.json and starts an
// Amplify deployment of it.
func (w *WebHosting) deployLocalBuild(p WebHostingProps) {
	c, stack := w.Construct, awscdk.Stack_Of(w.Construct)
	if p.DistPath == placeholderDir() {
		awscdk.Annotations_Of(c).AddWarningV2(jsii.String("webhosting:placeholder"),
			jsii.String("the web app is not built: publishing a placeholder page; run `make web` before deploying"), nil)
	}
	w.Bucket = awss3.NewBucket(c, jsii.String("Bucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED, // Amplify reads it without a KMS grant
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     p.RemovalPolicy,
	})
	// The build is an asset of its own, so its hash (the content) can
	// start a new deployment; a config.json in the build is replaced by
	// the deploy-time one.
	dist := awss3assets.NewAsset(c, jsii.String("Dist"), &awss3assets.AssetProps{
		Path:    jsii.String(p.DistPath),
		Exclude: jsii.Strings(ConfigFile),
	})
	cfg := map[string]*string{}
	for k, v := range p.BackendConfig {
		cfg[k] = jsii.String(v)
	}
	uploadRole, uploadLogs := functionRole(c, "Upload", p)
	w.Deployment = awss3deployment.NewBucketDeployment(c, jsii.String("Deploy"), &awss3deployment.BucketDeploymentProps{
		Role:     uploadRole,
		LogGroup: uploadLogs,
		// With DESTROY, deleting the deployment empties the prefix, so the
		// bucket can go (no auto-delete function needed).
		RetainOnDelete: jsii.Bool(p.RemovalPolicy != awscdk.RemovalPolicy_DESTROY),
		Sources: &[]awss3deployment.ISource{
			awss3deployment.Source_Bucket(dist.Bucket(), dist.S3ObjectKey()),
			awss3deployment.Source_JsonData(jsii.String(ConfigFile), cfg, nil),
		},
		DestinationBucket:    w.Bucket,
		DestinationKeyPrefix: jsii.String(SitePrefix + "/"),
		Prune:                jsii.Bool(true),
	})

	// Amplify reads the prefix as its service principal, only on behalf of
	// this branch. aws:SourceArn is the URL-encoded branch ARN (Amplify
	// Hosting guide, "Creating a bucket policy to deploy a static website
	// from S3 using the AWS SDKs"). ListBucket is granted on the bucket:
	// it is a bucket action, and the bucket holds nothing but the site.
	sourceArn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn%3A"), stack.Partition(), jsii.String("%3Aamplify%3A"), stack.Region(),
		jsii.String("%3A"), stack.Account(), jsii.String("%3Aapps%2F"), w.App.AttrAppId(),
		jsii.String("%2Fbranches%2F" + url.QueryEscape(p.Branch)),
	})
	onlyThisBranch := &map[string]any{"StringEquals": map[string]any{
		"aws:SourceAccount": stack.Account(), "aws:SourceArn": sourceArn,
	}}
	amplify := awsiam.NewServicePrincipal(jsii.String("amplify.amazonaws.com"), nil)
	w.Bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AmplifyListSite"),
		Principals: &[]awsiam.IPrincipal{amplify},
		Actions:    jsii.Strings("s3:ListBucket"),
		Resources:  &[]*string{w.Bucket.BucketArn()},
		Conditions: onlyThisBranch,
	}))
	w.Bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AmplifyReadSite"),
		Principals: &[]awsiam.IPrincipal{amplify},
		Actions:    jsii.Strings("s3:GetObject"),
		Resources:  &[]*string{w.Bucket.ArnForObjects(jsii.String(SitePrefix + "/*"))},
		Conditions: onlyThisBranch,
	}))

	// StartDeployment's resource is the branch (Service Authorization
	// Reference); the deployments under it are included in case the check
	// names the deployment.
	w.Release = w.amplifyCall(p, "StartDeployment", "Custom::AmplifyStartDeployment", "StartDeploymentCommand", map[string]any{
		"appId":      w.App.AttrAppId(),
		"branchName": p.Branch,
		// A BUCKET_PREFIX source URL ends with a slash.
		"sourceUrl":     awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3://"), w.Bucket.BucketName(), jsii.String("/" + SitePrefix + "/")}),
		"sourceUrlType": "BUCKET_PREFIX",
	}, "amplify:StartDeployment", w.Branch.AttrArn(), jsii.String(*w.Branch.AttrArn()+"/deployments/*"))
	suppress(w.Bucket, "AwsSolutions-S1", "the bucket only stages the site for Amplify: Amplify reads it as its service principal for this branch only, the deployment writes it; CloudTrail records both")
	suppress(uploadRole, "AwsSolutions-IAM5", "BucketDeployment's own grants: read of this stack's asset objects and write of this bucket's objects (the object key is the wildcard)",
		"Action::s3:GetBucket*", "Action::s3:GetObject*", "Action::s3:List*", "Action::s3:Abort*", "Action::s3:DeleteObject*",
		nag.Regex(`/^Resource::arn:<AWS::Partition>:s3:::cdk-[a-z0-9]+-assets-<AWS::AccountId>-<AWS::Region>\/\*$/`),
		nag.Regex(`/^Resource::<[A-Za-z0-9]+\.Arn>\/\*$/`))
	suppressRuntimes(stack)
	suppress(w.Release, "AwsSolutions-IAM5", "StartDeployment on this branch and the deployments under it only",
		nag.Regex(`/^Resource::<[A-Za-z0-9]+\.Arn>\/deployments\/\*$/`))

	// Deploy only once the files and Amplify's read access are in place.
	w.Release.Node().AddDependency(w.Branch, w.Deployment, w.Bucket)
	// A new build, a new config or new headers (Amplify applies headers
	// with the next deployment) start a new deployment.
	rerunOnChange(w.Release, map[string]any{"Content": dist.AssetHash(), "Config": cfg, "Headers": w.App.CustomHeaders()})
}

// startFirstBuild starts the branch's first build, and a new one when
// the config, the build spec or the headers change (a push starts the
// others).
func (w *WebHosting) startFirstBuild(p WebHostingProps) {
	// StartJob's resource is the job (Service Authorization Reference).
	w.Release = w.amplifyCall(p, "StartBuild", "Custom::AmplifyStartJob", "StartJobCommand", map[string]any{
		"appId":      w.App.AttrAppId(),
		"branchName": p.Branch,
		"jobType":    "RELEASE",
		"jobReason":  "CloudFormation: first build, or new backend config",
	}, "amplify:StartJob", jsii.String(*w.Branch.AttrArn()+"/jobs/*"))
	w.Release.Node().AddDependency(w.Branch)
	suppressRuntimes(awscdk.Stack_Of(w.Construct))
	suppress(w.Release, "AwsSolutions-IAM5", "StartJob on the jobs of this branch only (a job id is not known before the call)",
		nag.Regex(`/^Resource::<[A-Za-z0-9]+\.Arn>\/jobs\/\*$/`))
	cfg := map[string]*string{}
	for k, v := range p.BackendConfig {
		cfg[k] = jsii.String(v)
	}
	spec := sha256.Sum256([]byte(*w.App.BuildSpec()))
	rerunOnChange(w.Release, map[string]any{"Config": cfg, "BuildSpec": hex.EncodeToString(spec[:]), "Headers": w.App.CustomHeaders()})
}

// amplifyCall is a custom resource that calls the Amplify API action
// (@aws-sdk/client-amplify command) with params on create and update, as
// its own role (functionRole) allowed only iamAction on resources. The
// call's physical id is the job it starts.
func (w *WebHosting) amplifyCall(p WebHostingProps, id, resourceType, command string, params map[string]any, iamAction string, resources ...*string) customresources.AwsCustomResource {
	call := &customresources.AwsSdkCall{
		Service:            jsii.String("@aws-sdk/client-amplify"),
		Action:             jsii.String(command),
		Parameters:         params,
		PhysicalResourceId: customresources.PhysicalResourceId_FromResponse(jsii.String("jobSummary.jobId")),
	}
	role, logs := functionRole(w.Construct, "Release", p)
	return customresources.NewAwsCustomResource(w.Construct, jsii.String(id), &customresources.AwsCustomResourceProps{
		ResourceType: jsii.String(resourceType),
		Role:         role,
		LogGroup:     logs,
		OnCreate:     call,
		OnUpdate:     call,
		Policy: customresources.AwsCustomResourcePolicy_FromStatements(&[]awsiam.PolicyStatement{
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(iamAction), Resources: &resources}),
		}),
		InstallLatestAwsSdk: jsii.Bool(false),
	})
}

// functionRole is the role and log group of a CDK-provided function: it
// may write to its own log group and nothing else until granted more (no
// AWS managed policy).
func functionRole(scope constructs.Construct, id string, p WebHostingProps) (awsiam.Role, awslogs.LogGroup) {
	logs := p.Logs.NewLogGroup(scope, id+"Logs")
	role := awsiam.NewRole(scope, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: &[]*string{logs.LogGroupArn()},
	}))
	return role, logs
}

// suppress records why a cdk-nag finding on scope (and its children) is
// accepted; appliesTo narrows a granular rule to those findings.
func suppress(scope constructs.IConstruct, id, reason string, appliesTo ...any) {
	nag.Suppress(scope, nag.Rule{ID: id, Reason: reason, AppliesTo: appliesTo})
}

// suppressRuntimes accepts the runtimes of CDK's own singleton functions
// (BucketDeployment, AwsCustomResource): they move with the CDK version.
func suppressRuntimes(stack awscdk.Stack) {
	for _, id := range []string{"Custom::CDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C", "AWS679f53fac002430cb0da5b7982bd2287"} {
		if fn := stack.Node().TryFindChild(jsii.String(id)); fn != nil {
			suppress(fn, "AwsSolutions-L1", "a function of CDK's own (custom resource provider): its runtime is the one its CDK version ships and tests")
		}
	}
}

// rerunOnChange adds values to the custom resource's properties, which
// the provider ignores: when one changes, CloudFormation updates the
// resource, and the provider makes its onUpdate call again.
func rerunOnChange(cr customresources.AwsCustomResource, values map[string]any) {
	res := cr.Node().FindChild(jsii.String("Resource")).Node().DefaultChild().(awscdk.CfnResource)
	res.AddPropertyOverride(jsii.String("RerunOnChange"), values)
}

// connectSources are the CSP sources the page connects to besides its own
// origin, read from its config as web/src/config.ts reads it: the
// origins of the task and campaign APIs, Cognito's endpoint in cognito
// mode (https://cognito-idp.<region>.<URL suffix>, which aws-amplify
// calls), and the AppSync Events API's HTTP host (https) and realtime
// host (wss, where the page subscribes).
func connectSources(stack awscdk.Stack, cfg map[string]string) []string {
	var out []string
	for _, k := range []string{keyAPIURL, keyCampaignsAPIURL} {
		if o := deployedOrigin(cfg[k]); o != "" {
			out = append(out, o)
		}
	}
	if cfg["region"] != "" && cfg["mode"] != "local" {
		out = append(out, "https://cognito-idp."+cfg["region"]+"."+*stack.UrlSuffix())
	}
	if h := hostOf(cfg[keyEventsHTTP]); h != "" {
		out = append(out, "https://"+h)
	}
	if h := hostOf(cfg[keyEventsRealtime]); h != "" {
		out = append(out, "wss://"+h)
	}
	return out
}

// deployedOrigin is urlOrigin, also for a URL that is one token (an
// import, a parameter): its scheme and host are then cut at deploy time
// (Fn::Split on "/", elements 0 and 2, joined by "//").
func deployedOrigin(u string) string {
	if o, ok := urlOrigin(u); ok || !isToken(u) {
		return o
	}
	parts := awscdk.Fn_Split(jsii.String("/"), jsii.String(u), nil)
	return *awscdk.Fn_Join(jsii.String("//"), &[]*string{awscdk.Fn_Select(jsii.Number(0), parts), awscdk.Fn_Select(jsii.Number(2), parts)})
}

// Later is a token for a value that exists only after this construct is
// created, resolved at synth. It breaks the construction-order loop
// between the site and the API: the API's CORS origins name Url, and the
// site's config names the API's URL. Create the API first with
//
//	webhosting.Later(func() *string { return web.Url })
//
// among its origins, then the site with the API's URL. (The reverse, a
// Later API URL in BackendConfig, fails: the deployment resolves
// config.json when it is created.)
func Later(value func() *string) *string {
	return awscdk.Lazy_String(&producer{value: value}, nil)
}

// producer must be a pointer to a struct: jsii cannot marshal a func.
type producer struct{ value func() *string }

// Produce implements awscdk.IStableStringProducer.
func (p *producer) Produce() *string { return p.value() }

// MetricRequests counts the viewer requests the site served (Amplify
// Hosting's Requests in AWS/AmplifyHosting, dimension App:
// https://docs.aws.amazon.com/amplify/latest/userguide/monitoring-with-cloudwatch.html),
// Sum over 5 minutes unless opts say otherwise.
func (w *WebHosting) MetricRequests(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	o := alarms.SumOptions(opts)
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String("AWS/AmplifyHosting"), MetricName: jsii.String("Requests"),
		DimensionsMap: &map[string]*string{"App": w.App.AttrAppId()},
		Statistic:     o.Statistic, Period: o.Period, Label: o.Label, Color: o.Color, Unit: o.Unit,
	})
}
