// Command target is the jobs example's own logic at the due time: the
// expiry function invokes it (synchronously) once the claim moved the
// job to Done, with the payload {"tenantId","jobId","runAt"}. A real
// target would start the job here; returning an error makes the expiry
// function retry the delivery.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/unschedule/unschedule/examples/jobs/jobschema"
)

func handle(ctx context.Context, raw json.RawMessage) error {
	p, err := jobschema.Schema.DecodePayload(raw)
	if err != nil {
		return fmt.Errorf("job payload: %w", err)
	}
	slog.InfoContext(ctx, "job due", "tenant", p.Key.Partition, "job", p.Key.Sort, "runAt", p.Due)
	return nil
}

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stdout, nil)))
	lambda.Start(handle)
}
