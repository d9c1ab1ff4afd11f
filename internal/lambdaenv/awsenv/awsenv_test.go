package awsenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFromEnv(t *testing.T) {
	full := map[string]string{
		EnvRegion: "eu-west-1", EnvAccessKeyID: "AKID", EnvSecretKey: "SECRET", EnvSessionToken: "TOKEN",
	}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range full {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		ok     bool
		region string
		token  string
	}{
		{"lambda environment", full, true, "eu-west-1", "TOKEN"},
		{"no session token (long-lived keys)", without(EnvSessionToken), true, "eu-west-1", ""},
		{"no region", without(EnvRegion), false, "", ""},
		{"no access key id", without(EnvAccessKeyID), false, "", ""},
		{"no secret key", without(EnvSecretKey), false, "", ""},
		{"nothing", map[string]string{}, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok := FromEnv(func(k string) string { return tc.env[k] })
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if cfg.Region != tc.region {
				t.Errorf("Region = %q, want %q", cfg.Region, tc.region)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "SECRET" || creds.SessionToken != tc.token {
				t.Errorf("credentials = %+v", creds)
			}
		})
	}
}

// Without the Lambda variables Config falls back to LoadDefaultConfig,
// which reads the shared config files.
func TestConfigFallsBackToSharedConfig(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{EnvRegion, "AWS_DEFAULT_REGION", EnvAccessKeyID, EnvSecretKey, EnvSessionToken, "AWS_PROFILE", "AWS_DEFAULT_PROFILE"} {
		t.Setenv(k, "")
	}
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte("[default]\nregion = ap-south-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", cfgFile)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	cfg, err := Config(context.Background(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "ap-south-1" {
		t.Errorf("Region = %q, want the shared config's ap-south-1", cfg.Region)
	}
}
