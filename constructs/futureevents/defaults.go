package futureevents

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/futureevents/futureevent"
)

// DefaultHandlerTimeoutSec is HandlerTimeout's default.
const DefaultHandlerTimeoutSec = 60

// FireMarginSec is how much longer than the handler the core's expiry
// function may run: it invokes the handler synchronously, after its
// claim, and records the delivery after it.
const FireMarginSec = 10

// MaxHandlerTimeoutSec keeps the expiry function (HandlerTimeout plus
// FireMarginSec) within Lambda's 15 minutes.
const MaxHandlerTimeoutSec = 900 - FireMarginSec

func withDefaults(props *FutureEventsProps) FutureEventsProps {
	var p FutureEventsProps
	if props != nil {
		p = *props
	}
	p.HandlerTimeout = propcheck.SecondsOr(p.HandlerTimeout, DefaultHandlerTimeoutSec)
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	return p
}

// tableProps is the new table's props: the core's well-architected
// defaults (on-demand, point-in-time recovery, encrypted, streamed with
// both images, deletion-protected as resource.Protected says) keyed by the event's
// name, with TableProps merged on top.
func tableProps(p FutureEventsProps) *awsdynamodb.TableProps {
	t := propcheck.Merge(*scheduleonwrite.TableProps(futureevent.Schema(), p.RemovalPolicy, resource.Protected(p.RemovalPolicy, p.DeletionProtection)), p.TableProps)
	return &t
}

func validate(id string, p FutureEventsProps) {
	propcheck.CheckSeconds(id, "HandlerTimeout", p.HandlerTimeout, 1, MaxHandlerTimeoutSec,
		fmt.Sprintf("one target invoke; the core's expiry function gets %d s more, within Lambda's 15 minutes", FireMarginSec))
	propcheck.Exclusive(id, "ExistingTable", p.ExistingTable != nil, "TableProps", p.TableProps != nil)
	if p.ExistingTable != nil && p.DeletionProtection != nil {
		panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
	}
	if t := p.TableProps; t != nil {
		for prop, set := range map[string]bool{"PartitionKey": t.PartitionKey != nil, "SortKey": t.SortKey != nil, "Stream": t.Stream != ""} {
			if set {
				panic(fmt.Sprintf("%s: TableProps.%s is set: the construct keys the table by %q (a string, no sort key) with a NEW_AND_OLD_IMAGES stream, "+
					"which the scheduling core reads; leave TableProps.%s unset", id, prop, futureevent.NameAttr, prop))
			}
		}
	}
	if p.ExistingTable != nil {
		info := resource.InspectTable(p.ExistingTable)
		if info.Known && info.PartitionKey != "" && (info.PartitionKey != futureevent.NameAttr || info.SortKey != "") {
			panic(fmt.Sprintf("%s: ExistingTable %s is keyed %s/%s: future events need a table keyed by %q (a string) alone, "+
				"with a NEW_AND_OLD_IMAGES stream: pass such a table, or leave ExistingTable out for a new one",
				id, *p.ExistingTable.Node().Path(), info.PartitionKey, info.SortKey, futureevent.NameAttr))
		}
	}
}

// expiryTimeout is the core's FireTimeout for a handler timeout.
func expiryTimeout(handler awscdk.Duration) awscdk.Duration {
	if *handler.IsUnresolved() {
		return awscdk.Duration_Minutes(jsii.Number(15))
	}
	return awscdk.Duration_Seconds(jsii.Number(*handler.ToSeconds(nil) + FireMarginSec))
}
