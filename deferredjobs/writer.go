package deferredjobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	weekly Weekly
	now    func() time.Time
}

// NewWriter returns a writer to table with the weekly time w.
func NewWriter(api PutAPI, table string, w Weekly) (*Writer, error) {
	if api == nil || table == "" {
		return nil, fmt.Errorf("%w: a DynamoDB client and the marker table's name (%s) are required", ErrInvalid, EnvTable)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return &Writer{api: api, table: table, weekly: w, now: time.Now}, nil
}

// WriterFromEnv is NewWriter with the table and weekly time the
// construct's ConfigureWriter set.
func WriterFromEnv(api PutAPI) (*Writer, error) {
	w, err := ParseWeekly(os.Getenv(EnvWeekly))
	if err != nil {
		return nil, err
	}
	return NewWriter(api, os.Getenv(EnvTable), w)
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
func (w *Writer) MarkActivity(ctx context.Context, tenant string) (Marker, error) {
	m, err := MarkerFor(tenant, w.now(), w.weekly)
	if err != nil {
		return Marker{}, err
	}
	_, err = w.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(w.table),
		Item: map[string]types.AttributeValue{
			TenantAttr:  &types.AttributeValueMemberS{Value: m.Tenant},
			WindowAttr:  &types.AttributeValueMemberS{Value: m.WindowKey()},
			ExpiresAttr: &types.AttributeValueMemberN{Value: strconv.FormatInt(m.ExpiresAt(), 10)},
		},
	})
	if err != nil {
		return Marker{}, fmt.Errorf("deferredjobs: mark %s: %w", tenant, err)
	}
	return m, nil
}

// errNoKeys is a stream record without the marker's keys.
var errNoKeys = errors.New("not a marker")

// JobFromKeys is the job of a deleted marker, from its keys as a stream
// record carries them (string attributes).
func JobFromKeys(tenant, window string) (Job, error) {
	if tenant == "" || window == "" {
		return Job{}, fmt.Errorf("%w: %w: keys %q, %q", ErrInvalid, errNoKeys, tenant, window)
	}
	t, err := time.Parse(time.RFC3339, window)
	if err != nil {
		return Job{}, fmt.Errorf("%w: window %q: %w", ErrInvalid, window, err)
	}
	return Job{Tenant: tenant, Window: t.UTC()}, nil
}
