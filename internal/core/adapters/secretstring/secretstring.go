// Package secretstring reads the string value of a Secrets Manager
// secret that a construct generated (an HMAC or cursor key): one
// GetSecretValue, at a function's cold start or on first use.
package secretstring

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Reader is the part of the Secrets Manager client read here.
type Reader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ Reader = (*secretsmanager.Client)(nil)

// Read returns the string value of the secret arn; what names the secret
// in errors (such as "the unsubscribe secret").
func Read(ctx context.Context, sm Reader, arn, what string) ([]byte, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("%s has no string value: %w", what, errNoString)
	}
	return []byte(aws.ToString(out.SecretString)), nil
}

var errNoString = errors.New("a binary or empty secret")

// Loader is Read of arn as a loader, for the keys that read their secret
// on first use (pagecursor.Lazy, unsubscribe.LoadKeys).
func Loader(sm Reader, arn, what string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) { return Read(ctx, sm, arn, what) }
}
