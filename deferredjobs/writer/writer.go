// Package writer creates deferred-job items in the construct's table (one
// conditional PutItem per activity); package deferredjobs/job holds the
// SDK-free rules (next occurrence, the item, the job message).
package writer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs/job"
)

// PutAPI is the part of the DynamoDB client the writer uses.
type PutAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ PutAPI = (*dynamodb.Client)(nil)

// Writer creates items in the construct's table.
type Writer struct {
	api    PutAPI
	table  string
	weekly job.Weekly
	now    func() time.Time
}

// New returns a writer to table with the weekly time w.
func New(api PutAPI, table string, w job.Weekly) (*Writer, error) {
	if api == nil || table == "" {
		return nil, fmt.Errorf("%w: a DynamoDB client and the deferred-jobs table's name (%s) are required", job.ErrInvalid, job.EnvTable)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return &Writer{api: api, table: table, weekly: w, now: time.Now}, nil
}

// FromEnv is New with the table and weekly time the
// construct's ConfigureWriter set.
func FromEnv(api PutAPI) (*Writer, error) {
	w, err := job.ParseWeekly(os.Getenv(job.EnvWeekly))
	if err != nil {
		return nil, err
	}
	return New(api, os.Getenv(job.EnvTable), w)
}

// WithClock returns a copy of w that reads the time from now (tests).
func (w *Writer) WithClock(now func() time.Time) *Writer {
	cp := *w
	cp.now = now
	return &cp
}

// MarkActivity records that tenant was active: it creates the tenant's
// item for the coming window, armed at the window's moment, unless it
// exists (one PutItem with attribute_not_exists; an existing item is a
// success). Call it on every write of activity; a tenant never marked gets
// no job. The condition also keeps a late write from re-arming an item
// the core already fired, so a window gives one job.
func (w *Writer) MarkActivity(ctx context.Context, tenant string) (job.Item, error) {
	it, err := job.ItemFor(tenant, w.now(), w.weekly)
	if err != nil {
		return job.Item{}, err
	}
	item := map[string]types.AttributeValue{}
	for k, v := range it.Attrs() {
		item[k] = &types.AttributeValueMemberS{Value: v}
	}
	_, err = w.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(w.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#t)"),
		ExpressionAttributeNames: map[string]string{"#t": job.TenantAttr},
	})
	var exists *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &exists) {
		return job.Item{}, fmt.Errorf("deferred jobs: mark %s: %w", tenant, err)
	}
	return it, nil
}
