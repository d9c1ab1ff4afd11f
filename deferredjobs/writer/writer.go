// Package writer upserts deferred-job markers in the construct's table
// (one PutItem per activity); package deferredjobs holds the SDK-free
// rules (next occurrence, marker keys, job messages).
package writer

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs"
)

// PutAPI is the part of the DynamoDB client the writer uses.
type PutAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ PutAPI = (*dynamodb.Client)(nil)

// Writer upserts markers in the construct's table.
type Writer struct {
	api    PutAPI
	table  string
	weekly deferredjobs.Weekly
	now    func() time.Time
}

// New returns a writer to table with the weekly time w.
func New(api PutAPI, table string, w deferredjobs.Weekly) (*Writer, error) {
	if api == nil || table == "" {
		return nil, fmt.Errorf("%w: a DynamoDB client and the marker table's name (%s) are required", deferredjobs.ErrInvalid, deferredjobs.EnvTable)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return &Writer{api: api, table: table, weekly: w, now: time.Now}, nil
}

// FromEnv is New with the table and weekly time the
// construct's ConfigureWriter set.
func FromEnv(api PutAPI) (*Writer, error) {
	w, err := deferredjobs.ParseWeekly(os.Getenv(deferredjobs.EnvWeekly))
	if err != nil {
		return nil, err
	}
	return New(api, os.Getenv(deferredjobs.EnvTable), w)
}

// WithClock returns a copy of w that reads the time from now (tests).
func (w *Writer) WithClock(now func() time.Time) *Writer {
	cp := *w
	cp.now = now
	return &cp
}

// MarkActivity records that tenant was active: it upserts the tenant's
// marker for the coming window (one PutItem, idempotent). Call it on
// every write of activity; a tenant never marked gets no job.
func (w *Writer) MarkActivity(ctx context.Context, tenant string) (deferredjobs.Marker, error) {
	m, err := deferredjobs.MarkerFor(tenant, w.now(), w.weekly)
	if err != nil {
		return deferredjobs.Marker{}, err
	}
	_, err = w.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(w.table),
		Item: map[string]types.AttributeValue{
			deferredjobs.TenantAttr:  &types.AttributeValueMemberS{Value: m.Tenant},
			deferredjobs.WindowAttr:  &types.AttributeValueMemberS{Value: m.WindowKey()},
			deferredjobs.ExpiresAttr: &types.AttributeValueMemberN{Value: strconv.FormatInt(m.ExpiresAt(), 10)},
		},
	})
	if err != nil {
		return deferredjobs.Marker{}, fmt.Errorf("deferredjobs: mark %s: %w", tenant, err)
	}
	return m, nil
}
