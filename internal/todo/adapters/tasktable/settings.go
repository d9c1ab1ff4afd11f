package tasktable

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

var _ notify.SettingsStore = (*Store)(nil)

// LoadSettings implements notify.SettingsStore: the item (sub,
// tableschema.SettingsSortKey), read consistently.
func (s *Store) LoadSettings(ctx context.Context, userID string) (notify.Settings, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(userID, tableschema.SettingsSortKey), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return notify.Settings{}, fmt.Errorf("load notification settings: %w", err)
	}
	st := notify.Settings{UserID: userID}
	if len(out.Item) == 0 {
		return st, nil
	}
	m := dynamo.FromAttrs(out.Item)
	v, err := strconv.ParseInt(m[tableschema.AttrSettingsVersion], 10, 64)
	if err != nil || v < 1 {
		return notify.Settings{}, fmt.Errorf("notification settings of %s: bad version %q", userID, m[tableschema.AttrSettingsVersion])
	}
	updated, err := task.ParseTime(m[tableschema.AttrUpdatedAt])
	if err != nil {
		return notify.Settings{}, fmt.Errorf("notification settings of %s: %w", userID, err)
	}
	st.Version, st.UpdatedAt = v, updated
	st.Enabled = m[tableschema.AttrNotifyEnabled] == "true"
	st.SubscriptionArn, st.Email = m[tableschema.AttrNotifySubscriptionArn], m[tableschema.AttrNotifyEmail]
	st.TimeZone = m[tableschema.AttrTimeZone]
	return st, nil
}

// SaveSettings implements notify.SettingsStore: one PutItem conditioned on
// the version read. The item has no status and no pendingShard, so it is
// in no index; its key is reserved, so it is never listed as a task and
// never reaches the stream processor.
func (s *Store) SaveSettings(ctx context.Context, st notify.Settings) (notify.Settings, error) {
	next := st
	next.Version++
	item := map[string]string{
		tableschema.PartitionKey:        st.UserID,
		tableschema.SortKey:             tableschema.SettingsSortKey,
		tableschema.AttrNotifyEnabled:   strconv.FormatBool(st.Enabled),
		tableschema.AttrSettingsVersion: strconv.FormatInt(next.Version, 10),
	}
	if !st.UpdatedAt.IsZero() {
		item[tableschema.AttrUpdatedAt] = task.FormatTime(st.UpdatedAt)
	}
	if st.SubscriptionArn != "" {
		item[tableschema.AttrNotifySubscriptionArn] = st.SubscriptionArn
	}
	if st.Email != "" {
		item[tableschema.AttrNotifyEmail] = st.Email
	}
	if st.TimeZone != "" {
		item[tableschema.AttrTimeZone] = st.TimeZone
	}
	e := dynamo.NewExpr()
	var cond string
	if st.Version > 0 {
		cond = e.Name(tableschema.AttrSettingsVersion) + " = " + e.Value(strconv.FormatInt(st.Version, 10))
	} else {
		cond = "attribute_not_exists(" + e.Name(tableschema.SortKey) + ")"
	}
	in := &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: dynamo.ToAttrs(item),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: e.Names,
		ExpressionAttributeValues: e.AttrValues(),
	}
	_, err := s.api.PutItem(ctx, in)
	if dynamo.IsConditionFailed(err) {
		return notify.Settings{}, fmt.Errorf("save notification settings of %s: %w", st.UserID, notify.ErrSettingsConflict)
	}
	if err != nil {
		return notify.Settings{}, fmt.Errorf("save notification settings of %s: %w", st.UserID, err)
	}
	next.UpdatedAt, _ = task.ParseTime(task.FormatTime(st.UpdatedAt)) // as stored: UTC, whole seconds
	return next, nil
}
