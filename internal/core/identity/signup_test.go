package identity

import (
	"errors"
	"reflect"
	"testing"
)

func TestSignUpPolicyCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		domains []string
		email   string
		want    error
	}{
		{"open: anyone", nil, "ada@anywhere.io", nil},
		{"open: no email", nil, "", ErrNoEmail},
		{"open: blank email", nil, "  ", ErrNoEmail},
		{"listed domain", []string{"example.com"}, "ada@example.com", nil},
		{"case-insensitive", []string{"Example.COM"}, "ADA@EXAMPLE.com", nil},
		{"second domain", []string{"example.com", "example.org"}, "ada@example.org", nil},
		{"unlisted domain", []string{"example.com"}, "ada@example.net", ErrSignUpRestricted},
		{"subdomain is not its parent", []string{"example.com"}, "ada@mail.example.com", ErrSignUpRestricted},
		{"parent is not its subdomain", []string{"mail.example.com"}, "ada@example.com", ErrSignUpRestricted},
		{"suffix trick", []string{"example.com"}, "ada@evilexample.com", ErrSignUpRestricted},
		{"last @ decides", []string{"example.com"}, "ada@example.com@evil.io", ErrSignUpRestricted},
		{"no @", []string{"example.com"}, "example.com", ErrSignUpRestricted},
		{"restricted: no email", []string{"example.com"}, "", ErrNoEmail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewSignUpPolicy(tc.domains).Check(tc.email); !errors.Is(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("Check(%q) = %v, want %v", tc.email, got, tc.want)
			}
		})
	}
}

func TestParseDomains(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{" , ", nil, false},
		{"example.com", []string{"example.com"}, false},
		{" example.com ,example.org,", []string{"example.com", "example.org"}, false},
		{"@example.com", nil, true},
		{"ada@example.com", nil, true},
		{".example.com", nil, true},
		{"example.com.", nil, true},
		{"example .com", nil, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDomains(tc.in)
			if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseDomains(%q) = %v, %v; want %v, error %t", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestEmailDomain(t *testing.T) {
	for in, want := range map[string]string{"ada@Example.COM": "example.com", "nobody": "", "a@b@c.io": "c.io"} {
		if got := EmailDomain(in); got != want {
			t.Errorf("EmailDomain(%q) = %q, want %q", in, got, want)
		}
	}
}
