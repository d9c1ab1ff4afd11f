package awsenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// lambdaEnv is what Lambda sets for every function: the region and the
// execution role's temporary credentials.
var lambdaEnv = map[string]string{
	"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET", "AWS_SESSION_TOKEN": "TOKEN",
}

// isolate clears every AWS_ variable and points the shared config files at
// an empty folder, so only the variables a case sets count.
func isolate(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	return dir
}

// Every setting the SDKs document as an environment variable reaches the
// clients a main builds from Config: a function configured for another
// endpoint, FIPS, dual-stack or other retries gets it.
func TestConfigHonoursTheSDKVariables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, cfg aws.Config, ddb dynamodb.Options, q sqs.Options)
	}{
		{"region and credentials from Lambda", nil, func(t *testing.T, cfg aws.Config, _ dynamodb.Options, _ sqs.Options) {
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Region != "eu-west-1" || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "SECRET" || creds.SessionToken != "TOKEN" {
				t.Errorf("region %q, credentials %+v", cfg.Region, creds)
			}
		}},
		{"AWS_ENDPOINT_URL for every service", map[string]string{"AWS_ENDPOINT_URL": "http://localhost:4566"},
			func(t *testing.T, _ aws.Config, ddb dynamodb.Options, q sqs.Options) {
				if aws.ToString(ddb.BaseEndpoint) != "http://localhost:4566" || aws.ToString(q.BaseEndpoint) != "http://localhost:4566" {
					t.Errorf("endpoints: dynamodb %q, sqs %q", aws.ToString(ddb.BaseEndpoint), aws.ToString(q.BaseEndpoint))
				}
			}},
		{"AWS_ENDPOINT_URL_DYNAMODB over AWS_ENDPOINT_URL, for DynamoDB only",
			map[string]string{"AWS_ENDPOINT_URL": "http://localhost:4566", "AWS_ENDPOINT_URL_DYNAMODB": "http://localhost:8000"},
			func(t *testing.T, _ aws.Config, ddb dynamodb.Options, q sqs.Options) {
				if aws.ToString(ddb.BaseEndpoint) != "http://localhost:8000" || aws.ToString(q.BaseEndpoint) != "http://localhost:4566" {
					t.Errorf("endpoints: dynamodb %q, sqs %q", aws.ToString(ddb.BaseEndpoint), aws.ToString(q.BaseEndpoint))
				}
			}},
		{"AWS_USE_FIPS_ENDPOINT", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"},
			func(t *testing.T, _ aws.Config, ddb dynamodb.Options, _ sqs.Options) {
				if ddb.EndpointOptions.UseFIPSEndpoint != aws.FIPSEndpointStateEnabled {
					t.Errorf("UseFIPSEndpoint = %v", ddb.EndpointOptions.UseFIPSEndpoint)
				}
			}},
		{"AWS_USE_DUALSTACK_ENDPOINT", map[string]string{"AWS_USE_DUALSTACK_ENDPOINT": "true"},
			func(t *testing.T, _ aws.Config, ddb dynamodb.Options, _ sqs.Options) {
				if ddb.EndpointOptions.UseDualStackEndpoint != aws.DualStackEndpointStateEnabled {
					t.Errorf("UseDualStackEndpoint = %v", ddb.EndpointOptions.UseDualStackEndpoint)
				}
			}},
		{"AWS_MAX_ATTEMPTS and AWS_RETRY_MODE", map[string]string{"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"},
			func(t *testing.T, cfg aws.Config, ddb dynamodb.Options, _ sqs.Options) {
				if cfg.RetryMode != aws.RetryModeAdaptive || ddb.Retryer.MaxAttempts() != 7 {
					t.Errorf("retry mode %q, max attempts %d", cfg.RetryMode, ddb.Retryer.MaxAttempts())
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			for k, v := range lambdaEnv {
				t.Setenv(k, v)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := Config(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg, dynamodb.NewFromConfig(cfg).Options(), sqs.NewFromConfig(cfg).Options())
		})
	}
}

// Outside Lambda (a local run, a smoke test from a laptop) the shared
// config files count, as for any SDK user.
func TestConfigReadsSharedConfig(t *testing.T) {
	dir := isolate(t)
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[default]\nregion = ap-south-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "ap-south-1" {
		t.Errorf("Region = %q, want the shared config's ap-south-1", cfg.Region)
	}
}
