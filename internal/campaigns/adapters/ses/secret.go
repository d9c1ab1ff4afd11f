package ses

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SecretReader is the part of the Secrets Manager client that reads the
// unsubscribe secret.
type SecretReader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ SecretReader = (*secretsmanager.Client)(nil)

// SecretLoader reads the unsubscribe tokens' signing secret (a string
// secret, constructs/campaigns generates it): the loader of
// unsubscribe.LoadKeys.
func SecretLoader(sm SecretReader, arn string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, fmt.Errorf("read the unsubscribe secret: %w", err)
		}
		if out.SecretString == nil {
			return nil, errors.New("the unsubscribe secret has no string value")
		}
		return []byte(aws.ToString(out.SecretString)), nil
	}
}
