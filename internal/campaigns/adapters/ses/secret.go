package ses

import (
	"context"

	"github.com/unschedule/unschedule/internal/core/adapters/secretstring"
)

// SecretReader is the part of the Secrets Manager client that reads the
// unsubscribe secret.
type SecretReader = secretstring.Reader

// SecretLoader reads the unsubscribe tokens' signing secret (a string
// secret, constructs/campaigns generates it): the loader of
// unsubscribe.LoadKeys.
func SecretLoader(sm SecretReader, arn string) func(context.Context) ([]byte, error) {
	return secretstring.Loader(sm, arn, "the unsubscribe secret")
}
