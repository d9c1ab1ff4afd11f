package resource

import (
	"encoding/json"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
)

// TableInfo is what synth can read of a table: for a Table or TableV2
// construct of this app, its key schema, stream view and global indexes
// (Known; a field that could not be read is ""); for a table imported
// with attributes, nothing (Known false): the props that name its keys
// are then trusted.
type TableInfo struct {
	Known              bool
	PartitionKey       string
	SortKey            string
	StreamView         string
	GlobalIndexes      []string
	HasStreamAttribute bool
	// TTLAttribute is the attribute TTL is enabled on ("" when TTL is off
	// or could not be read).
	TTLAttribute string
}

// InspectTable reads table's level-1 resource (CfnTable or
// CfnGlobalTable), resolved, when it has one.
func InspectTable(table awsdynamodb.ITable) TableInfo {
	info := TableInfo{HasStreamAttribute: table.TableStreamArn() != nil}
	// get reads one property; one that does not cross jsii as its Go
	// type (TableV2's stream specification) is left unknown.
	get := func(f func() any) (v any) {
		defer func() {
			if recover() != nil {
				v = nil
			}
		}()
		return f()
	}
	var keys, stream, gsis, ttl any
	switch cfn := table.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		keys, stream, gsis, ttl = get(cfn.KeySchema), get(func() any { return cfn.StreamSpecification() }), get(cfn.GlobalSecondaryIndexes), get(cfn.TimeToLiveSpecification)
	case awsdynamodb.CfnGlobalTable:
		keys, stream, gsis, ttl = get(cfn.KeySchema), get(func() any { return cfn.StreamSpecification() }), get(cfn.GlobalSecondaryIndexes), get(cfn.TimeToLiveSpecification)
	default:
		return info
	}
	info.Known = true
	// A value that does not resolve (TableV2's lazy stream specification
	// does not cross jsii as its struct) is left unknown.
	resolve := func(v any, into any) {
		defer func() { _ = recover() }()
		if v == nil {
			return
		}
		b, err := json.Marshal(awscdk.Stack_Of(table).Resolve(v))
		if err == nil {
			_ = json.Unmarshal(b, into) // field names match case-insensitively
		}
	}
	var ks []struct{ AttributeName, KeyType string }
	resolve(keys, &ks)
	for _, k := range ks {
		switch k.KeyType {
		case "HASH":
			info.PartitionKey = k.AttributeName
		case "RANGE":
			info.SortKey = k.AttributeName
		}
	}
	var sv struct{ StreamViewType string }
	resolve(stream, &sv)
	info.StreamView = sv.StreamViewType
	var tl struct {
		AttributeName string
		Enabled       bool
	}
	resolve(ttl, &tl)
	if tl.Enabled {
		info.TTLAttribute = tl.AttributeName
	}
	var gs []struct{ IndexName string }
	resolve(gsis, &gs)
	for _, g := range gs {
		info.GlobalIndexes = append(info.GlobalIndexes, g.IndexName)
	}
	return info
}

// Protected is the rule of deletion protection for a table a construct
// creates for an adopter (futureevents, deferredjobs): the prop when it is
// set, else on exactly when the stack retains the table (RemovalPolicy
// RETAIN, their default), so a table kept on stack deletion cannot be
// deleted by mistake either, and a disposable (DESTROY) one is not in the
// way.
func Protected(removal awscdk.RemovalPolicy, deletionProtection *bool) bool {
	if deletionProtection != nil {
		return *deletionProtection
	}
	return removal == awscdk.RemovalPolicy_RETAIN
}
